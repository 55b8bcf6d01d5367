//! The scheduling-policy boundary, shaped like the kernel's `struct sched_class` (and
//! sched_ext's ops): the engine (one layer up) owns time, CPUs and task programs and calls
//! a policy only at the kernel's scheduling points; the policy owns its runqueues and returns
//! decisions. The Linux fair class is one implementation; [`fifo::GlobalFifo`] is a trivial
//! second one that keeps this trait honest and gives users a baseline.
//!
//! Everything a policy may read about the machine and the tasks is in [`CoreView`]; everything
//! it asks the engine to do (charge scheduler work, migrate, kick an idle CPU) goes into
//! [`Actions`], whose buffers the engine reuses so the event loop does not allocate.

// Lossy integer casts are refused here: convert with `try_from` or a named helper of
// `crate::units` that states why the value fits (docs/architecture.md, "Conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

pub mod cfs_tasks;
pub mod fifo;
pub mod linux_fair;
pub mod linux_rt;
pub mod numa_balancing;
pub mod numa_view;

use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::task::{TaskId, TaskPolicy};
use crate::topology::Machine;

use crate::sched::types::{
    IdleType, Migration, NumaMigrateDecision, Placement, PlacementPath, WakeCtx, WakeFlags,
};
use numa_balancing::NumaBalancing;

/// What the engine lets a policy see: the clock, the machine, the cost model, and read-only
/// accessors for the engine's per-task and per-CPU state. The engine implements it over its
/// own `Task`/`CpuCore` vectors, so policies never name engine types; a test can implement it
/// over a handful of plain values.
///
/// Every accessor is a plain field read on the engine's side (no allocation); the engine
/// builds a fresh view for every policy call.
pub trait CoreView {
    /// Current virtual time (`rq_clock()`), ns.
    fn now_ns(&self) -> u64;
    /// The machine being simulated (online CPUs, capacities, topology).
    fn machine(&self) -> &Machine;
    /// The machine cost model.
    fn cost(&self) -> &CostModel;

    /// `task_cpu(p)`: the CPU `p` is on (or last ran on).
    fn task_cpu(&self, p: TaskId) -> usize;
    /// `p->cpus_ptr`.
    fn task_cpus_allowed(&self, p: TaskId) -> &CpuMask;
    /// `task_nice(p)`.
    fn task_nice(&self, p: TaskId) -> i8;
    /// `p->policy`.
    fn task_policy(&self, p: TaskId) -> TaskPolicy;

    /// `rq->curr` of `cpu`, `None` when it runs its idle task.
    fn cpu_curr(&self, cpu: usize) -> Option<TaskId>;
    /// Whether `cpu` has queued remote wakeups not yet processed (`rq->ttwu_pending`).
    fn cpu_ttwu_pending(&self, cpu: usize) -> bool;
    /// `rq->avg_idle`, ns.
    fn cpu_avg_idle_ns(&self, cpu: usize) -> u64;
    /// `rq->idle_stamp`, ns.
    fn cpu_idle_stamp_ns(&self, cpu: usize) -> u64;
    /// The C-state `cpu` is in (index into the cost model's `idle_states`; 0 = polling).
    fn cpu_idle_state(&self, cpu: usize) -> usize;

    /// `rq->curr == rq->idle && !rq->ttwu_pending`: the engine's half of `idle_cpu()`; a
    /// policy adds its own runqueue count.
    #[inline]
    fn cpu_is_idle_task(&self, cpu: usize) -> bool {
        self.cpu_curr(cpu).is_none() && !self.cpu_ttwu_pending(cpu)
    }

    /// `rq->ttwu_pending` of `cpu` as a lockless read on CPU `reader` sees it: an engine may
    /// hide a wake-list entry whose waker on another CPU has not yet published it (the
    /// placement race, `engine::wakeup`'s module docs). `reader` = [`PUBLISHED_ONLY`] for
    /// reads that see only published entries, whoever queued them (the load balancer's and
    /// the fork/exec slow path's); the default sees every entry at once.
    #[inline]
    fn cpu_ttwu_pending_seen(&self, cpu: usize, _reader: usize) -> bool {
        self.cpu_ttwu_pending(cpu)
    }

    /// [`CoreView::cpu_is_idle_task`] with [`CoreView::cpu_ttwu_pending_seen`].
    #[inline]
    fn cpu_is_idle_task_seen(&self, cpu: usize, reader: usize) -> bool {
        self.cpu_curr(cpu).is_none() && !self.cpu_ttwu_pending_seen(cpu, reader)
    }
}

/// The reader of [`CoreView::cpu_ttwu_pending_seen`] that sees only published wake-list
/// entries: the load balancer's reads, whose cached group sums the engine updates when an
/// entry is published, whichever CPU balances.
pub const PUBLISHED_ONLY: usize = usize::MAX;

/// Requests from a policy to the engine, collected in reusable buffers.
#[derive(Debug, Default)]
pub struct Actions {
    /// Scheduler work to charge to the CPU making the call (scans, balance passes).
    pub cost_ns: u64,
    /// Migrations done by balancing.
    pub migrations: Vec<Migration>,
    /// Idle CPUs to kick for NOHZ idle balancing.
    pub kicks: Vec<usize>,
    /// CPUs whose current task should be preempted (`resched_curr`), e.g. after a pull.
    pub resched: Vec<usize>,
    /// CPUs whose stopper must run active balancing (`stop_one_cpu_nowait`).
    pub stop_cpus: Vec<usize>,
}

impl Actions {
    pub fn clear(&mut self) {
        self.cost_ns = 0;
        self.migrations.clear();
        self.kicks.clear();
        self.resched.clear();
        self.stop_cpus.clear();
    }
}

/// Enqueue flags (`ENQUEUE_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnqueueFlags {
    pub wakeup: bool,
    pub migrated: bool,
    /// ENQUEUE_INITIAL: first enqueue of a forked task.
    pub initial: bool,
    /// ENQUEUE_DELAYED: re-queue of a task whose dequeue was delayed.
    pub delayed: bool,
}

/// A scheduling policy (the kernel's `sched_class`).
pub trait SchedPolicy: Send {
    /// Name as a scenario selects it (`[kernel] policy = ...`).
    fn name(&self) -> &'static str;

    /// `sched_fork()`: set up per-task state for a new task.
    fn task_fork(&mut self, core: &dyn CoreView, p: TaskId);

    /// `select_task_rq()`: the CPU a waking or forked task should run on. Scan cost goes into
    /// `act.cost_ns` (charged to `ctx.this_cpu`).
    fn select_task_rq(
        &mut self,
        core: &dyn CoreView,
        p: TaskId,
        prev_cpu: usize,
        ctx: WakeCtx,
        act: &mut Actions,
    ) -> Placement;

    /// `migrate_task_rq()`: `p` (not queued) moves from `from` to `to`.
    fn migrate_task_rq(&mut self, core: &dyn CoreView, p: TaskId, from: usize, to: usize);

    /// `ttwu_stat()`'s domain counter: a wakeup done on `this_cpu` activated its task on
    /// another CPU, `cpu` (schedstat `ttwu_wake_remote` of `this_cpu`'s lowest domain
    /// spanning `cpu`). Policies without sched domains ignore it.
    fn ttwu_wake_remote(&mut self, _core: &dyn CoreView, _this_cpu: usize, _cpu: usize) {}

    /// `enqueue_task()` on `cpu`.
    fn enqueue_task(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId, flags: EnqueueFlags);

    /// `dequeue_task()` for a task going to sleep. Returns false when the policy kept the
    /// task queued (DELAY_DEQUEUE): the engine then treats it as still on the runqueue.
    fn dequeue_sleep(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) -> bool;

    /// Dequeue an exiting task (never delayed).
    fn dequeue_exit(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId);

    /// Complete the delayed dequeue of a sleeping task still queued on `cpu`
    /// (`DEQUEUE_SLEEP | DEQUEUE_DELAYED`), before waking it through the normal path. Only
    /// called for tasks for which [`SchedPolicy::task_on_rq`] is true.
    fn dequeue_delayed(&mut self, _core: &dyn CoreView, _cpu: usize, _p: TaskId) {}

    /// `wakeup_preempt()`: should the newly queued `p` preempt `cpu`'s current task?
    fn wakeup_preempt(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        p: TaskId,
        flags: WakeFlags,
    ) -> bool;

    /// Under `preempt=lazy`, whether a wakeup preemption by `p` only sets
    /// TIF_NEED_RESCHED_LAZY (`resched_curr_lazy`, the fair class) rather than preempting at
    /// once (`resched_curr`, e.g. an RT wakee). Default: lazy.
    fn wakeup_preempt_lazy(&self, _p: TaskId) -> bool {
        true
    }

    /// `pick_next_task()` including `put_prev_task` of `prev` (still queued when it was
    /// preempted). `None`: go idle.
    fn pick_next_task(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        prev: Option<TaskId>,
    ) -> Option<TaskId>;

    /// `put_prev_task()`: `cpu`'s current task `p` stops running but stays queued (the
    /// stopper preempting it). Default: nothing to do.
    fn put_prev_task(&mut self, _core: &dyn CoreView, _cpu: usize, _p: TaskId) {}

    /// `move_queued_task()`: the queued, not running `p` moves from `from`'s runqueue to
    /// `to`'s (the migration stopper after an affinity change): dequeue, `set_task_cpu()`,
    /// enqueue. Returns whether `to`'s current task should be preempted by `p`
    /// (`wakeup_preempt()`). Default: a sleep dequeue, `migrate_task_rq()`, a migrated
    /// enqueue and `wakeup_preempt()` — right for simple policies; a policy that delays
    /// dequeues or keeps per-entity state across a move overrides it.
    fn move_queued_task(&mut self, core: &dyn CoreView, p: TaskId, from: usize, to: usize) -> bool {
        self.dequeue_sleep(core, from, p);
        self.migrate_task_rq(core, p, from, to);
        let flags = EnqueueFlags {
            migrated: true,
            ..EnqueueFlags::default()
        };
        self.enqueue_task(core, to, p, flags);
        self.wakeup_preempt(core, to, p, WakeFlags::default())
    }

    /// `task_numa_migrate(p)` (NUMA balancing asks after a hinting fault): where `p` should
    /// move or whom it should swap with, read from the policy's runqueues and its
    /// [`SchedPolicy::numa_balancing`] state. The engine has the decision taken
    /// ([`NumaBalancing::take_decision`]) and applies the move through its migration
    /// stopper. Default `None`: the policy has no NUMA mover.
    fn task_numa_migrate(
        &mut self,
        _core: &dyn CoreView,
        _p: TaskId,
    ) -> Option<NumaMigrateDecision> {
        None
    }

    /// The run's NUMA-balancing state ([`numa_balancing`]: task statistics, groups,
    /// topology, variant, vmstat), when the policy keeps one (a run with a page-group
    /// memory model gives it through [`SchedPolicy::set_numa_balancing`]). Default `None`:
    /// no NUMA balancing (no scanning, no hinting faults, memory stays where first touch
    /// put it; every NUMA hook of the load balancer keeps the kernel's answer without it).
    fn numa_balancing(&self) -> Option<&NumaBalancing> {
        None
    }

    /// The NUMA-balancing state, for the engine to report a memory-model task's tick, its
    /// hinting faults and the NUMA moves it carried out.
    fn numa_balancing_mut(&mut self) -> Option<&mut NumaBalancing> {
        None
    }

    /// A run with a memory model hands the policy its NUMA-balancing state (before the
    /// first event). Default: dropped (the policy balances no NUMA).
    fn set_numa_balancing(&mut self, _numa: Box<NumaBalancing>) {}

    /// Whether `p` is still on a runqueue (a delayed-dequeue sleeper not yet dequeued).
    /// The engine asks at wakeup, since a policy may complete a delayed dequeue on its own
    /// (at pick time). Default: the engine's own record holds.
    fn task_on_rq(&self, _p: TaskId) -> bool {
        true
    }

    /// `cpu` enters the idle loop (idle-core hints, NOHZ bookkeeping).
    fn idle_enter(&mut self, _core: &dyn CoreView, _cpu: usize) {}

    /// `ttwu_do_activate()` woke `cpu` from idle and updated its `rq->avg_idle` to
    /// `avg_idle_ns` at `now_ns`: state derived from it (SIS_PROP's `wake_avg_idle`, v5.14+).
    /// Default: none.
    fn avg_idle_updated(&mut self, _cpu: usize, _avg_idle_ns: u64, _now_ns: u64) {}

    /// `ns` of hard or soft interrupt work ran on `cpu` (reported only under
    /// `CONFIG_IRQ_TIME_ACCOUNTING`): `irqtime_account_irq()`, which `update_rq_clock_task()`
    /// keeps out of the task clock. Default: no task clock.
    fn account_irq_time(&mut self, _cpu: usize, _ns: u64) {}

    /// The engine changed `cpu`'s current task or its wake list (`idle_cpu()` may have
    /// changed); no policy work, only bookkeeping (the load balancer's running sums).
    fn cpu_state_changed(&mut self, _cpu: usize) {}

    /// `sched_setnuma(p, nid)`: NUMA balancing set `p->numa_preferred_nid` to `nid`
    /// (`None` = NUMA_NO_NODE); a queued task is re-accounted in its runqueue's NUMA
    /// counters (`account_numa_dequeue()` with the old node, `account_numa_enqueue()` with
    /// the new). Default: no counters.
    fn numa_preferred_nid_changed(&mut self, _p: TaskId, _nid: Option<usize>) {}

    /// The idle `cpu` stopped its tick (`tick_nohz_stop_tick()` in an idle period, the
    /// first time): `nohz_balance_enter_idle()`.
    fn nohz_tick_stopped(&mut self, _core: &dyn CoreView, _cpu: usize) {}

    /// `nohz.idle_cpus_mask`, for policies that keep one (tests and checks).
    fn nohz_idle_cpus(&self) -> Option<CpuMask> {
        None
    }

    /// The largest balance interval of an idle CPU, in ms: the largest `sd->max_interval`
    /// of the policy's sched domains (`sd_init()`: 2 × the domain's weight), which
    /// `get_sd_balance_interval()` reaches when balancing keeps failing. `None`: the policy
    /// balances no domains. The engine's scheduling watchdog waits at least this long.
    fn max_balance_interval_ms(&self) -> Option<u64> {
        None
    }

    /// The stopper on `cpu` runs active balancing (`active_load_balance_cpu_stop`).
    fn active_balance(&mut self, _core: &dyn CoreView, _cpu: usize, _act: &mut Actions) {}

    /// `hrtick_start_fair()`: with HRTICK, how long `cpu`'s current task may run before its
    /// slice expires (the engine arms a high-resolution tick then). `None`: no hrtick.
    fn hrtick_delay_ns(&self, _cpu: usize) -> Option<u64> {
        None
    }

    /// Scheduler work done inside the last enqueue/dequeue calls (e.g. the fair dl_server's
    /// start/stop), to be charged to the CPU that made them. Default: none.
    fn take_cost_ns(&mut self) -> u64 {
        0
    }

    /// The policy's own hrtimers (the RT period timer, the fair dl_server's timer): append
    /// the CPUs whose timer expiry may have changed since the last call. The engine asks
    /// after every event and re-arms from [`SchedPolicy::next_timer_ns`]. Default: none.
    fn take_timer_changes(&mut self, _out: &mut Vec<usize>) {}

    /// The earliest expiry of the policy timers pinned to `cpu`.
    fn next_timer_ns(&self, _cpu: usize) -> Option<u64> {
        None
    }

    /// A policy timer pinned to `cpu` expired: run its handler. CPUs whose current task
    /// must be preempted go into `act.resched`.
    fn timer_expired(&mut self, _core: &dyn CoreView, _cpu: usize, _act: &mut Actions) {}

    /// `task_tick()` for `cpu`'s current task; true = reschedule.
    fn task_tick(&mut self, core: &dyn CoreView, cpu: usize, curr: TaskId) -> bool;

    /// `sched_yield()`.
    fn yield_task(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId);

    /// `set_user_nice()` on a task (queued or not).
    fn set_nice(&mut self, core: &dyn CoreView, p: TaskId, nice: i8);

    /// Tasks queued on `cpu` including the current one (`rq->nr_running`).
    fn nr_running(&self, cpu: usize) -> usize;

    /// The policy's invariants (runqueue counters and sums; with `structure`, also its
    /// static structures such as the domain hierarchy): one line per violation appended
    /// to `out`. Called by the engine's run-time checker. Default: nothing to check.
    fn check_invariants(&self, _structure: bool, _out: &mut Vec<String>) {}

    /// `sched_balance_newidle()`: `cpu` is about to go idle; pull work if worthwhile.
    fn balance_newidle(&mut self, _core: &dyn CoreView, _cpu: usize, _act: &mut Actions) {}

    /// `sched_balance_trigger()` from the tick on `cpu` (periodic balancing, NOHZ kicks).
    fn balance_tick(&mut self, _core: &dyn CoreView, _cpu: usize, _act: &mut Actions) {}

    /// `nohz_idle_balance()` on a kicked idle `cpu`.
    fn nohz_idle_balance(&mut self, _core: &dyn CoreView, _cpu: usize, _act: &mut Actions) {}

    /// `/proc/schedstat` (version 17) text, given the engine's per-CPU counters and the
    /// jiffies timestamp; `None` when the policy keeps no schedstats.
    fn schedstat_text(
        &self,
        _rq_stats: &[crate::sched::types::RqSchedstat],
        _jiffies: u64,
    ) -> Option<String> {
        None
    }

    /// Policy-specific per-task counters (e.g. `/proc/PID/sched`'s
    /// `nr_failed_migrations_*`), merged into the task's entry of the results.
    fn task_report(&self, _p: TaskId) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// Policy-specific counters for the results (schedstat), as JSON.
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
