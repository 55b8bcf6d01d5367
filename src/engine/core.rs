//! Scheduling points, as `kernel/sched/core.c` has them: `try_to_wake_up()` with the
//! wake-list / remote-lock choice (`ttwu_queue_cond`), `wake_up_new_task()`,
//! `resched_curr()`, `__schedule()` with newidle balancing, `sched_tick()`, and the task
//! program interpreter that drives them.
//!
//! Approximations (each deliberate):
//! - The runqueue lock is modelled only where it is contended across CPUs: a waker doing a
//!   direct remote activation waits for the target's lock if another remote activation holds
//!   it. A CPU's own `__schedule()` does not take it in the model.
//! - The tick itself costs no time; its effect is what the policy does in it.
//! - Timer interrupts fire exactly at expiry + slack (the hrtimer slack range's upper end,
//!   where an otherwise quiet CPU's timer lands).
//! - perf's `context-switches` counts switches out of workload tasks (what `perf stat CMD`
//!   counts); switches from the idle task to a task are not counted, as with a per-task
//!   counter.

use super::view::EngineView;
use super::{Engine, Event, MigrationRecord, TtwuQueueRule};
use crate::policy::EnqueueFlags;
use crate::sched::types::{Migration, MigrationReason, WakeCtx, WakeFlags};
use crate::task::{Op, SemId, TaskId, TaskState};

/// Call a policy method with a fresh read-only view of the engine.
macro_rules! policy {
    ($self:ident . $method:ident ( $($arg:expr),* $(,)? )) => {{
        let view = EngineView {
            now_ns: $self.now_ns,
            machine: &$self.machine,
            cost: &$self.cost,
            tasks: &$self.tasks,
            cpus: &$self.cpus,
            numa: $self.numa.as_deref().map(|n| &n.sched),
        };
        $self.policy.$method(&view, $($arg),*)
    }};
}

/// `SchedPolicy::task_numa_migrate` with the engine's view (for [`super::numa`]).
pub(crate) fn policy_task_numa_migrate(
    e: &mut Engine,
    p: TaskId,
) -> Option<crate::sched::numa::migrate::NumaMigrateDecision> {
    policy!(e.task_numa_migrate(p))
}

/// `SchedPolicy::move_queued_task` with the engine's view (for [`super::numa`]).
pub(crate) fn policy_move_queued_task(e: &mut Engine, p: TaskId, from: usize, to: usize) -> bool {
    policy!(e.move_queued_task(p, from, to))
}

/// Migrations kept in the log (the first ones of the measured interval; later ones are only
/// counted), so memory stays bounded on long runs.
pub const MIGRATION_LOG_MAX: usize = 100_000;

/// Invariant violations kept per run (the first ones; later ones are not recorded).
pub const INVARIANT_VIOLATIONS_MAX: usize = 1000;

/// Zero-time ops one task may run back to back before the engine declares a livelock.
const ZERO_TIME_OPS_MAX: u32 = 1_000_000;

/// `MAX_SLACK` of fs/select.c: the largest slack `select_estimate_accuracy()` gives (100 ms).
const SELECT_MAX_SLACK_NS: u64 = 100_000_000;

/// What the interpreter's loop in `run_ops` does after one op (returned by the op-family
/// helpers; the loop keeps every exit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Go on with the task's next op.
    Next,
    /// Go on with the task's next op; this one changed nothing the interpreter's
    /// preemption and kernel-work checks read (it woke no task, charged no kernel work,
    /// requested no reschedule), so they need not run again before the next op.
    Pure,
    /// The op may have woken a task: reschedule if that set `need_resched`, else go on.
    Resched,
    /// Reschedule now (`sched_yield()`).
    Schedule,
    /// The task blocks on this op (its wait or timer is already queued).
    Block,
    /// The task exits.
    Exit,
    /// The CPU's next event is already planned (the task computes, spins, or was moved).
    Planned,
}

fn reason_index(reason: MigrationReason) -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&r| r == reason)
        .expect("every reason is listed")
}

impl Engine {
    // ----- fork, wakeup -------------------------------------------------------------

    /// `wake_up_new_task()`: place a forked task with the fork path of `select_task_rq()`.
    pub(crate) fn wake_up_new_task(&mut self, p: TaskId) {
        self.tasks[p.idx()].forked = true;
        let parent_cpu = {
            let t = &self.tasks[p.idx()];
            if self.machine.online.test(t.cpu) {
                t.cpu
            } else {
                self.machine.online.first().expect("some CPU is online")
            }
        };
        policy!(self.task_fork(p));
        let ctx = WakeCtx {
            this_cpu: parent_cpu,
            waker: None,
            flags: WakeFlags {
                fork: true,
                ..WakeFlags::default()
            },
        };
        let (placement, cpu) = self.select_task_rq(p, parent_cpu, parent_cpu, ctx);
        {
            let t = &mut self.tasks[p.idx()];
            t.cpu = cpu;
            t.state = TaskState::Runnable;
            t.on_rq = true;
            t.runnable_since_ns = self.now_ns;
            t.progress_mark_ns = self.now_ns;
        }
        if let Some(rec) = self.observer.as_deref_mut() {
            let t = &self.tasks[p.idx()];
            rec.placement(
                self.now_ns,
                t,
                true,
                parent_cpu,
                parent_cpu,
                None,
                false,
                placement,
                cpu,
            );
        }
        if cpu != parent_cpu {
            self.count_migration(parent_cpu, p, parent_cpu, cpu, MigrationReason::Fork);
        }
        let flags = EnqueueFlags {
            initial: true,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, flags));
        self.charge_enqueue(parent_cpu, cpu);
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[parent_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.wakeup(self.now_ns, parent_cpu, curr, &self.tasks[p.idx()], true);
        }
        self.check_preempt(cpu, p, parent_cpu, ctx.flags);
        self.preempt_point(parent_cpu);
    }

    /// `try_to_wake_up()` of a blocked task `p`, done on `this_cpu`.
    pub(crate) fn try_to_wake_up(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) {
        debug_assert_eq!(self.tasks[p.idx()].state, TaskState::Blocked);
        let flags = WakeFlags {
            sync,
            ttwu: true,
            ..WakeFlags::default()
        };
        {
            let t = &mut self.tasks[p.idx()];
            t.woken_at_ns = Some(self.now_ns);
            t.stats.nr_wakeups += 1;
            t.stats.nr_wakeups_sync += sync as u64;
        }
        self.counters.wakeups += 1;
        self.cpus[this_cpu].stats.ttwu_count += 1;
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.waking(self.now_ns, this_cpu, curr, &self.tasks[p.idx()]);
        }

        if self.tasks[p.idx()].on_rq {
            if self.policy.task_on_rq(p) {
                if let Some(rec) = self.observer.as_deref_mut() {
                    let w = waker.map(|w| &self.tasks[w.idx()]);
                    rec.wakeup_queued(self.now_ns, &self.tasks[p.idx()], this_cpu, w);
                }
                if !self.cfg.ttwu_queue_delayed {
                    self.ttwu_runnable(p, this_cpu, flags);
                    return;
                }
                if self.ttwu_queue_delayed(p, this_cpu) {
                    return;
                }
                // "Change ttwu_runnable() vs sched_delayed" (the companion of
                // TTWU_QUEUE_DELAYED): complete the delayed dequeue under the task's runqueue
                // lock and continue down the normal path, CPU selection included.
                let cpu = self.tasks[p.idx()].cpu;
                self.lock_remote_rq(this_cpu, cpu);
                self.complete_delayed_dequeue(this_cpu, cpu, p);
            } else {
                // The policy completed the delayed dequeue on its own (at a pick).
                self.tasks[p.idx()].on_rq = false;
            }
        }
        if self.ttwu_on_cpu(p, this_cpu) {
            return;
        }
        let ctx = WakeCtx {
            this_cpu,
            waker,
            flags,
        };
        let (cpu, migrated) = self.select_wakeup_cpu(p, this_cpu, ctx);
        if self.cfg.ttwu_queue && self.ttwu_queue_cond(p, cpu, this_cpu, false) {
            self.ttwu_queue_wakelist(p, cpu, this_cpu);
        } else {
            self.lock_remote_rq(this_cpu, cpu);
            self.ttwu_do_activate(cpu, p, this_cpu, flags, migrated);
        }
    }

    /// core.c's `select_task_rq()`: the policy's choice for `p` (previous CPU `prev_cpu`),
    /// its scan work charged to `run_cpu`, then `select_fallback_rq()` if the choice is not
    /// allowed. Returns the policy's placement (for traces) and the CPU to use.
    fn select_task_rq(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        run_cpu: usize,
        ctx: WakeCtx,
    ) -> (crate::sched::types::Placement, usize) {
        self.act.clear();
        let placement = policy!(self.select_task_rq(p, prev_cpu, ctx, &mut self.act));
        let cost = self.act.cost_ns;
        self.charge(run_cpu, cost);
        (placement, self.allowed_or_fallback(p, placement.cpu))
    }

    /// `select_task_rq()` + `set_task_cpu()` of a wakeup, run on `run_cpu` (which pays for the
    /// scan) on behalf of the waker described by `ctx`. Returns the CPU and whether it
    /// differs from the task's previous one.
    fn select_wakeup_cpu(&mut self, p: TaskId, run_cpu: usize, ctx: WakeCtx) -> (usize, bool) {
        // select_task_rq(p, p->wake_cpu, ...): a NUMA swap may have redirected a sleeper.
        let task_cpu = self.tasks[p.idx()].cpu;
        let prev_cpu = self.numa_take_wake_cpu(p).unwrap_or(task_cpu);
        let (placement, cpu) = self.select_task_rq(p, prev_cpu, run_cpu, ctx);
        if let Some(rec) = self.observer.as_deref_mut() {
            let w = ctx.waker.map(|w| &self.tasks[w.idx()]);
            let t = &self.tasks[p.idx()];
            rec.placement(
                self.now_ns,
                t,
                false,
                ctx.this_cpu,
                prev_cpu,
                w,
                ctx.flags.sync,
                placement,
                cpu,
            );
        }
        let migrated = cpu != task_cpu;
        if migrated {
            policy!(self.migrate_task_rq(p, task_cpu, cpu));
            self.count_migration(run_cpu, p, task_cpu, cpu, MigrationReason::Wakeup);
            self.tasks[p.idx()].cpu = cpu;
            self.tasks[p.idx()].stats.nr_wakeups_migrate += 1;
        }
        if cpu == ctx.this_cpu {
            self.tasks[p.idx()].stats.nr_wakeups_local += 1;
            self.cpus[ctx.this_cpu].stats.ttwu_local += 1;
        } else {
            self.tasks[p.idx()].stats.nr_wakeups_remote += 1;
        }
        (cpu, migrated)
    }

    /// The `p->on_cpu` step of `try_to_wake_up()`: if `p` is still switching out on its CPU
    /// at the waker's time, either queue it to that CPU's wake list (TTWU_QUEUE_ON_CPU, when
    /// `ttwu_queue_cond()` allows; no CPU selection) and return true, or spin until the
    /// switch is over (`smp_cond_load_acquire(&p->on_cpu, !VAL)`), charged to the waker.
    fn ttwu_on_cpu(&mut self, p: TaskId, this_cpu: usize) -> bool {
        let cpu = self.tasks[p.idx()].cpu;
        let waker_at = self.now_ns.max(self.cpus[this_cpu].busy_until_ns);
        let on_cpu_until = self.tasks[p.idx()].on_cpu_until_ns;
        if cpu == this_cpu || on_cpu_until <= waker_at {
            return false;
        }
        if self.cfg.ttwu_queue
            && self.cfg.ttwu_queue_on_cpu
            && self.ttwu_queue_cond(p, cpu, this_cpu, true)
        {
            self.cpus[this_cpu].stats.ttwu_on_cpu_queued += 1;
            self.tasks[p.idx()].stats.nr_wakeups_remote += 1;
            self.ttwu_queue_wakelist(p, cpu, this_cpu);
            return true;
        }
        let spin_ns = self.on_cpu_spin_ns(this_cpu, cpu, waker_at, on_cpu_until);
        self.cpus[this_cpu].stats.on_cpu_spins += 1;
        self.cpus[this_cpu].stats.on_cpu_spin_ns += spin_ns;
        self.charge(this_cpu, spin_ns);
        false
    }

    /// How long a waker on `this_cpu` spins in `smp_cond_load_acquire(&p->on_cpu, !VAL)`
    /// when it starts at `waker_at` and `cpu` clears `p->on_cpu` at `on_cpu_until`. The
    /// line holding `p->on_cpu` lives in `cpu`'s cache: the first load misses to it (one
    /// cache-line transfer `t` at the pair's distance); the clearing store must invalidate
    /// the spinner's shared copy (another `t` before it is visible), and the spinner's
    /// next load misses again (`t`). So the spin ends at
    /// `max(waker_at + t, on_cpu_until + t) + t`: within an LLC this adds a few tens of ns
    /// to the remaining switch time, across a socket interconnect the interconnect's round
    /// trips. Not modelled: several wakers spinning on the same line (each store then
    /// invalidates every copy), and x86's `cpu_relax()` pacing of the polls.
    pub(crate) fn on_cpu_spin_ns(
        &self,
        this_cpu: usize,
        cpu: usize,
        waker_at: u64,
        on_cpu_until: u64,
    ) -> u64 {
        let t = self.cost.cacheline_ns(&self.machine, this_cpu, cpu);
        (waker_at + t).max(on_cpu_until + t) + t - waker_at
    }

    /// TTWU_QUEUE_DELAYED: queue a delayed-dequeue wakee to its own CPU's wake list
    /// (`WF_DELAYED` forces the queue unless that CPU is this one or not allowed); the dequeue
    /// completes and the CPU is chosen there ([`Engine::ttwu_delayed`]). False when the
    /// wakeup must be done here.
    fn ttwu_queue_delayed(&mut self, p: TaskId, this_cpu: usize) -> bool {
        let cpu = self.tasks[p.idx()].cpu;
        if !self.cfg.ttwu_queue || cpu == this_cpu || !self.tasks[p.idx()].cpus_allowed.test(cpu) {
            return false;
        }
        self.tasks[p.idx()].wake_delayed_from = Some(this_cpu);
        self.cpus[this_cpu].stats.ttwu_delayed_queued += 1;
        self.ttwu_queue_wakelist(p, cpu, this_cpu);
        true
    }

    /// `ttwu_delayed()` on `cpu`, from its wake list: complete the delayed dequeue (taking
    /// the task's runqueue lock if a balancer moved it meanwhile), select a CPU as the waker
    /// on `waker_cpu` would, then activate here or forward to the chosen CPU's wake list.
    fn ttwu_delayed(&mut self, cpu: usize, p: TaskId, waker_cpu: usize) {
        let task_cpu = self.tasks[p.idx()].cpu;
        if task_cpu != cpu {
            self.lock_remote_rq(cpu, task_cpu);
        }
        if self.policy.task_on_rq(p) {
            self.complete_delayed_dequeue(cpu, task_cpu, p);
        } else {
            self.tasks[p.idx()].on_rq = false;
        }
        let flags = WakeFlags {
            ttwu: true,
            ..WakeFlags::default()
        };
        let ctx = WakeCtx {
            this_cpu: waker_cpu,
            waker: None,
            flags,
        };
        let (dest, migrated) = self.select_wakeup_cpu(p, cpu, ctx);
        if dest == cpu {
            self.ttwu_do_activate(cpu, p, cpu, flags, migrated);
        } else {
            self.cpus[cpu].stats.ttwu_delayed_forwarded += 1;
            self.ttwu_queue_wakelist(p, dest, cpu);
        }
    }

    /// `dequeue_task(DEQUEUE_SLEEP | DEQUEUE_DELAYED)` of `p` on `rq_cpu`, done by `this_cpu`:
    /// the task is off every runqueue afterwards.
    fn complete_delayed_dequeue(&mut self, this_cpu: usize, rq_cpu: usize, p: TaskId) {
        policy!(self.dequeue_delayed(rq_cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(this_cpu, rq_cpu, work);
        self.tasks[p.idx()].on_rq = false;
    }

    /// `ttwu_runnable()`: `p` is still queued (its dequeue was delayed): requeue it in place
    /// on its CPU, under that CPU's lock. No CPU selection, no migration.
    fn ttwu_runnable(&mut self, p: TaskId, this_cpu: usize, flags: WakeFlags) {
        let cpu = self.tasks[p.idx()].cpu;
        self.cpus[this_cpu].stats.delayed_requeues += 1;
        self.lock_remote_rq(this_cpu, cpu);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Runnable;
        t.runnable_since_ns = self.now_ns;
        let flags_enq = EnqueueFlags {
            delayed: true,
            wakeup: true,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, flags_enq));
        self.charge_enqueue(this_cpu, cpu);
        self.trace_wakeup(this_cpu, p);
        if cpu == this_cpu {
            self.tasks[p.idx()].stats.nr_wakeups_local += 1;
            self.cpus[this_cpu].stats.ttwu_local += 1;
        } else {
            self.tasks[p.idx()].stats.nr_wakeups_remote += 1;
        }
        self.check_preempt(cpu, p, this_cpu, flags);
    }

    /// `sched_wakeup` (`ttwu_do_wakeup()`), on the CPU doing the activation.
    fn trace_wakeup(&mut self, this_cpu: usize, p: TaskId) {
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.wakeup(self.now_ns, this_cpu, curr, &self.tasks[p.idx()], false);
        }
    }

    /// `ttwu_queue_cond()`: queue the wakeup of `p` to `cpu`'s wake list rather than take its
    /// runqueue lock? Cross-LLC wakeups always are; inside the LLC it depends on the release
    /// ([`TtwuQueueRule`]); `on_cpu` marks the `p->on_cpu` shortcut (`WF_ON_CPU`).
    fn ttwu_queue_cond(&self, p: TaskId, cpu: usize, this_cpu: usize, on_cpu: bool) -> bool {
        if !self.tasks[p.idx()].cpus_allowed.test(cpu) {
            return false;
        }
        if self.machine.cpus[cpu].llc != self.machine.cpus[this_cpu].llc {
            return true;
        }
        match self.cfg.ttwu_queue_rule {
            TtwuQueueRule::CrossLlcOnly => false,
            TtwuQueueRule::OnCpuNrRunningLe1 => on_cpu && self.policy.nr_running(cpu) <= 1,
            TtwuQueueRule::IdleTarget => {
                if cpu == this_cpu {
                    return false;
                }
                self.policy.nr_running(cpu) == 0 || self.cfg.ttwu_queue_default
            }
        }
    }

    /// `__ttwu_queue_wakelist()`: add `p` to `cpu`'s wake list; the first entry sends the IPI
    /// (or, for a polling idle CPU, just sets need_resched).
    fn ttwu_queue_wakelist(&mut self, p: TaskId, cpu: usize, this_cpu: usize) {
        self.tasks[p.idx()].state = TaskState::Waking;
        self.cpus[this_cpu].stats.ttwu_queued += 1;
        let was_empty = self.cpus[cpu].wake_list.is_empty();
        self.cpus[cpu].wake_list.push(p);
        self.policy.cpu_state_changed(cpu);
        if was_empty && !self.cpus[cpu].ipi_pending {
            self.cpus[cpu].ipi_pending = true;
            let at = self.send_ipi(this_cpu, cpu);
            self.queue.push(at, Event::WakeListIpi { cpu: cpu as u32 });
        }
    }

    /// Sending an IPI from `from` to `to`: the sender pays `ipi_send_ns`; the handler runs
    /// after the delivery latency plus the target's idle-exit latency. A polling idle target
    /// needs no IPI and reacts at once. Returns when the handler runs.
    fn send_ipi(&mut self, from: usize, to: usize) -> u64 {
        if self.cpus[to].polling() {
            return self.now_ns;
        }
        self.charge(from, self.cost.ipi_send_ns);
        self.cpus[from].stats.ipis_sent += 1;
        let mut latency = self.cost.ipi_latency(&self.machine, from, to);
        if self.cpus[to].curr.is_none() {
            latency += self.cost.idle_states[self.cpus[to].idle_state].exit_latency_ns;
        }
        self.now_ns + latency
    }

    /// The receiving side of any IPI: interrupt cost, idle exit counted.
    fn take_ipi(&mut self, cpu: usize) {
        let polling = self.cpus[cpu].polling();
        if !polling {
            self.cpus[cpu].stats.ipis_received += 1;
            if self.cpus[cpu].curr.is_none() {
                self.cpus[cpu].stats.idle_exits += 1;
            }
            self.charge(cpu, self.cost.ipi_handle_ns);
        }
    }

    /// `sched_ttwu_pending()`: activate everything on the wake list.
    pub(crate) fn handle_wake_list_ipi(&mut self, cpu: usize) {
        self.cpus[cpu].ipi_pending = false;
        self.take_ipi(cpu);
        let mut list = std::mem::take(&mut self.cpus[cpu].wake_list);
        self.policy.cpu_state_changed(cpu);
        for &p in &list {
            if let Some(waker_cpu) = self.tasks[p.idx()].wake_delayed_from.take() {
                self.ttwu_delayed(cpu, p, waker_cpu);
                continue;
            }
            // The wake list forgets WF_SYNC: only "migrated" survives (sched_remote_wakeup).
            let flags = WakeFlags {
                ttwu: true,
                ..WakeFlags::default()
            };
            let migrated = self.tasks[p.idx()].perf_migrated;
            self.ttwu_do_activate(cpu, p, cpu, flags, migrated);
        }
        list.clear();
        if self.cpus[cpu].wake_list.is_empty() {
            self.cpus[cpu].wake_list = list;
        }
        self.preempt_point(cpu);
    }

    /// Direct remote activation: the waker takes `cpu`'s runqueue lock, waiting if another
    /// remote activation holds it.
    fn lock_remote_rq(&mut self, this_cpu: usize, cpu: usize) {
        if cpu == this_cpu {
            return;
        }
        let base = self.cost.remote_lock_ns(&self.machine, this_cpu, cpu);
        let start = self.now_ns.max(self.cpus[this_cpu].busy_until_ns);
        let wait = self.cpus[cpu].rq_lock_free_at_ns.saturating_sub(start);
        self.cpus[cpu].rq_lock_free_at_ns = start + wait + self.cost.rq_lock_hold_ns;
        self.cpus[this_cpu].stats.ttwu_remote_locked += 1;
        self.cpus[this_cpu].stats.remote_lock_wait_ns += wait;
        self.charge(this_cpu, base + wait);
    }

    /// Charge `ns` of work done on `rq_cpu`'s runqueue under its lock to `this_cpu` (the CPU
    /// doing it): it also holds that lock for as long, so a remote activation that wants the
    /// lock meanwhile waits ([`Engine::lock_remote_rq`]).
    pub(crate) fn charge_under_rq_lock(&mut self, this_cpu: usize, rq_cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        let start = self.now_ns.max(self.cpus[this_cpu].busy_until_ns);
        let c = &mut self.cpus[rq_cpu];
        c.rq_lock_free_at_ns = c.rq_lock_free_at_ns.max(start) + ns;
        self.charge(this_cpu, ns);
    }

    /// The work of the `enqueue_task()` just made on `rq_cpu` by `this_cpu`:
    /// `enqueue_task_ns` plus what the policy did inside it (the fair dl_server's start),
    /// charged to `this_cpu` inside `rq_cpu`'s lock window.
    fn charge_enqueue(&mut self, this_cpu: usize, rq_cpu: usize) {
        let work = self.cost.enqueue_task_ns + self.policy.take_cost_ns();
        self.charge_under_rq_lock(this_cpu, rq_cpu, work);
    }

    /// `ttwu_do_activate()`: enqueue on `cpu`, update `avg_idle`, check preemption.
    fn ttwu_do_activate(
        &mut self,
        cpu: usize,
        p: TaskId,
        this_cpu: usize,
        flags: WakeFlags,
        migrated: bool,
    ) {
        {
            let t = &mut self.tasks[p.idx()];
            t.state = TaskState::Runnable;
            t.on_rq = true;
            t.runnable_since_ns = self.now_ns;
        }
        let enq = EnqueueFlags {
            wakeup: true,
            migrated,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, enq));
        self.charge_enqueue(this_cpu, cpu);
        self.trace_wakeup(this_cpu, p);
        self.update_avg_idle(cpu);
        self.check_preempt(cpu, p, this_cpu, flags);
    }

    /// `rq->avg_idle` update in `ttwu_do_activate()`: a running average (1/8 weight) of idle
    /// durations, capped at twice the migration cost (`2 * rq->max_idle_balance_cost`, whose
    /// starting value is sysctl_sched_migration_cost).
    fn update_avg_idle(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        if c.curr.is_some() || c.idle_stamp_ns == 0 {
            return;
        }
        let sample = self.now_ns - c.idle_stamp_ns;
        let avg = c.avg_idle_ns as i64;
        let next = avg + (sample as i64 - avg) / 8;
        c.avg_idle_ns = (next.max(0) as u64).min(2 * self.cfg.migration_cost_ns);
        c.idle_stamp_ns = 0;
    }

    /// `wakeup_preempt()` plus waking an idle CPU.
    fn check_preempt(&mut self, cpu: usize, p: TaskId, this_cpu: usize, flags: WakeFlags) {
        if self.cpus[cpu].curr.is_none() {
            self.resched_curr(cpu, this_cpu);
            return;
        }
        if self.cpus[cpu].curr == Some(p) {
            return;
        }
        if policy!(self.wakeup_preempt(cpu, p, flags)) {
            if self.cfg.preempt == crate::kconfig::sysctl::PreemptModel::Lazy
                && self.policy.wakeup_preempt_lazy(p)
            {
                self.cpus[cpu].need_resched_lazy = true;
            } else {
                self.resched_curr(cpu, this_cpu);
            }
        }
    }

    /// `resched_curr()`: set need_resched on `cpu`; a remote CPU gets a reschedule IPI (none
    /// if it is polling idle). The local CPU reschedules at its next preemption point.
    pub(crate) fn resched_curr(&mut self, cpu: usize, this_cpu: usize) {
        if self.cpus[cpu].need_resched {
            return;
        }
        self.cpus[cpu].need_resched = true;
        if cpu == this_cpu {
            return;
        }
        if !self.cpus[cpu].resched_ipi_pending {
            self.cpus[cpu].resched_ipi_pending = true;
            let at = self.send_ipi(this_cpu, cpu);
            self.queue.push(at, Event::ReschedIpi { cpu: cpu as u32 });
        }
    }

    pub(crate) fn handle_resched_ipi(&mut self, cpu: usize) {
        self.cpus[cpu].resched_ipi_pending = false;
        if !self.cpus[cpu].need_resched {
            return;
        }
        self.take_ipi(cpu);
        self.preempt_point(cpu);
    }

    pub(crate) fn handle_kick_ipi(&mut self, cpu: usize) {
        self.take_ipi(cpu);
        if self.cpus[cpu].curr.is_some() {
            return;
        }
        self.act.clear();
        policy!(self.nohz_idle_balance(cpu, &mut self.act));
        self.apply_actions(cpu);
        if self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
        }
        self.preempt_point(cpu);
    }

    /// The stopper (highest class) preempts `cpu`'s task, runs active balancing, and the
    /// CPU then schedules as after any preemption.
    pub(crate) fn handle_stopper(&mut self, cpu: usize) {
        self.take_ipi(cpu);
        self.stopper_preempt_curr(cpu);
        self.act.clear();
        policy!(self.active_balance(cpu, &mut self.act));
        self.apply_actions(cpu);
        self.schedule(cpu);
        if self.cpus[cpu].curr.is_none() {
            self.enter_idle(cpu);
        }
    }

    /// `migration_cpu_stop()` on `cpu` for its current task `p` (after an affinity change
    /// that excludes `cpu`): the stopper preempts `p`, `move_queued_task()` moves it to
    /// `dest` (waking or preempting `dest` as needed), and `cpu` schedules.
    pub(crate) fn migration_cpu_stop(
        &mut self,
        cpu: usize,
        p: TaskId,
        dest: usize,
        reason: MigrationReason,
    ) {
        // Switching to the stopper thread and running it.
        self.charge(cpu, self.cost.context_switch_ns);
        self.stopper_preempt_curr(cpu);
        let preempt = policy!(self.move_queued_task(p, cpu, dest));
        self.tasks[p.idx()].cpu = dest;
        self.count_migration(cpu, p, cpu, dest, reason);
        if preempt || self.cpus[dest].curr.is_none() {
            self.resched_curr(dest, cpu);
        }
        self.schedule(cpu);
        if self.cpus[cpu].curr.is_none() {
            self.enter_idle(cpu);
        }
    }

    /// The stop class preempts `cpu`'s current task: it stays runnable and queued
    /// (`put_prev_task()`), the CPU is the stopper's until it schedules again.
    pub(crate) fn stopper_preempt_curr(&mut self, cpu: usize) {
        if let Some(p) = self.cpus[cpu].curr {
            self.sync_progress(cpu);
            let now = self.now_ns;
            let t = &mut self.tasks[p.idx()];
            t.stats.sum_exec_runtime_ns += now - t.exec_start_ns;
            t.exec_start_ns = now;
            t.state = TaskState::Runnable;
            t.runnable_since_ns = now;
            self.count_switch_out(cpu, p);
            policy!(self.put_prev_task(cpu, p));
            self.policy.cpu_state_changed(cpu);
            let c = &mut self.cpus[cpu];
            c.curr = None;
            c.stats.busy_ns += now - c.busy_since_ns;
            c.busy_since_ns = now;
            c.done_gen = c.done_gen.wrapping_add(1);
            c.continue_queued_at = None;
            self.stop_tick(cpu);
            self.update_sibling_speeds(cpu);
            self.numa_running_changed(Some(p), None);
        }
    }

    /// A policy hrtimer pinned to `cpu` fired (RT period timer, dl_server timer): run the
    /// policy's handler, then reschedule wherever it asked. Approximation: an idle CPU runs
    /// the handler without paying its idle-exit latency (these timers fire about once a
    /// second; the latency is microseconds).
    pub(crate) fn policy_timer(&mut self, cpu: usize) {
        self.cpus[cpu].policy_timer_at = None;
        // The handler re-arms through take_timer_changes (it marks `cpu` changed).
        self.act.clear();
        policy!(self.timer_expired(cpu, &mut self.act));
        self.apply_actions(cpu);
        if self.cpus[cpu].curr.is_none() && self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
        }
        self.preempt_point(cpu);
    }

    /// Arm (or re-arm, or cancel) the policy timers whose expiry changed during the last
    /// event. Done once per event: expiries are absolute, so arming at the end of the
    /// event's handling is the same as arming where the policy decided it.
    pub(crate) fn sync_policy_timers(&mut self) {
        // Nearly every event changes no policy timer: read the list in place and leave it
        // at once when it is empty (no take/put-back of the Vec per event).
        self.policy.take_timer_changes(&mut self.timer_changes);
        if self.timer_changes.is_empty() {
            return;
        }
        let changed = std::mem::take(&mut self.timer_changes);
        for &cpu in &changed {
            let want = self.policy.next_timer_ns(cpu).map(|at| at.max(self.now_ns));
            let c = &mut self.cpus[cpu];
            c.policy_timer_at = want;
            let Some(at) = want else { continue };
            if matches!(c.policy_timer_queued, Some((queued, _)) if queued <= at) {
                continue;
            }
            c.policy_timer_gen = c.policy_timer_gen.wrapping_add(1);
            let generation = c.policy_timer_gen;
            c.policy_timer_queued = Some((at, generation));
            self.queue.push(
                at,
                Event::PolicyTimer {
                    cpu: cpu as u32,
                    generation,
                },
            );
        }
        self.timer_changes = changed;
        self.timer_changes.clear();
    }

    /// Reschedule `cpu` if it was asked to.
    pub(crate) fn preempt_point(&mut self, cpu: usize) {
        if self.cpus[cpu].need_resched {
            self.schedule(cpu);
        }
    }

    // ----- timers ---------------------------------------------------------------------

    /// An hrtimer of a sleeping task fires on `cpu`. An idle CPU must leave its idle state
    /// before the handler runs.
    pub(crate) fn hrtimer_expire(&mut self, p: TaskId, cpu: usize, generation: u32) {
        let c = &self.cpus[cpu];
        if c.curr.is_none() && !c.polling() {
            let exit = self.cost.idle_states[c.idle_state].exit_latency_ns;
            self.cpus[cpu].stats.idle_exits += 1;
            self.queue.push(
                self.now_ns + exit,
                Event::TimerWake {
                    task: p,
                    cpu: cpu as u32,
                    generation,
                },
            );
            return;
        }
        self.timer_wakeup(p, cpu);
    }

    pub(crate) fn timer_wakeup(&mut self, p: TaskId, cpu: usize) {
        // hrtimer_interrupt(): interrupt entry, the timerqueue, the reprogram.
        self.charge(cpu, self.cost.hrtimer_expire_ns);
        self.tasks[p.idx()].timer_gen += 1;
        self.try_to_wake_up(p, cpu, None, false);
        self.preempt_point(cpu);
    }

    // ----- the tick ---------------------------------------------------------------------

    fn tick_period_ns(&self) -> u64 {
        1_000_000_000 / self.cfg.hz as u64
    }

    /// Arm the tick of a CPU that just became busy, at the next jiffy boundary (ticks of all
    /// CPUs are aligned, as without `skew_tick`). A tick event still queued for that boundary
    /// (the CPU idled briefly inside the jiffy) is reused rather than queued again, so short
    /// idle periods do not fill the queue with stale ticks.
    fn arm_tick(&mut self, cpu: usize) {
        let period = self.tick_period_ns();
        let next = (self.now_ns / period + 1) * period;
        let c = &mut self.cpus[cpu];
        c.tick_armed = true;
        if c.tick_queued_at == Some(next) {
            return;
        }
        c.tick_gen = c.tick_gen.wrapping_add(1);
        c.tick_queued_at = Some(next);
        let generation = c.tick_gen;
        self.queue.push(
            next,
            Event::Tick {
                cpu: cpu as u32,
                generation,
            },
        );
    }

    /// NOHZ: an idle CPU does not tick. Its queued tick, if any, is dropped when it fires
    /// unless the CPU is busy again by then.
    fn stop_tick(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.hrtick_gen = c.hrtick_gen.wrapping_add(1);
        c.tick_armed = false;
    }

    /// `hrtick_start_fair()`: arm (or re-arm) the high-resolution tick at the current
    /// task's slice end, when the policy asks for one (HRTICK).
    fn arm_hrtick(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.hrtick_gen = c.hrtick_gen.wrapping_add(1);
        let generation = c.hrtick_gen;
        if let Some(delay) = self.policy.hrtick_delay_ns(cpu) {
            self.queue.push(
                self.now_ns + delay,
                Event::HrTick {
                    cpu: cpu as u32,
                    generation,
                },
            );
        }
    }

    /// `hrtick()`: the slice-end timer fired; `task_tick(queued = 1)`.
    pub(crate) fn hrtick(&mut self, cpu: usize) {
        let Some(curr) = self.cpus[cpu].curr else {
            return;
        };
        self.sync_progress(cpu);
        if policy!(self.task_tick(cpu, curr)) {
            self.cpus[cpu].need_resched = true;
            self.preempt_point(cpu);
        } else {
            self.arm_hrtick(cpu);
        }
    }

    /// `sched_tick()`: the policy's `task_tick`, lazy-preemption promotion, balancing.
    pub(crate) fn sched_tick(&mut self, cpu: usize) {
        let Some(curr) = self.cpus[cpu].curr else {
            self.cpus[cpu].tick_armed = false;
            if !self.cpus[cpu].tick_stopped && self.cpus[cpu].idle_iter_start_ns.is_some() {
                self.idle_tick(cpu);
            }
            return;
        };
        self.sync_progress(cpu);
        let irq_ns = self.noise.tick_irq_ns(cpu, self.cfg.hz);
        self.charge(cpu, irq_ns);
        let mut resched = policy!(self.task_tick(cpu, curr));
        let numa_move = self.numa_tick(cpu, curr);
        if self.cpus[cpu].need_resched_lazy {
            resched = true;
        }
        self.act.clear();
        policy!(self.balance_tick(cpu, &mut self.act));
        self.apply_actions(cpu);
        self.arm_tick(cpu);
        if resched {
            self.cpus[cpu].need_resched = true;
        } else {
            self.arm_hrtick(cpu);
        }
        self.preempt_point(cpu);
        self.numa_apply_move(cpu, numa_move);
    }

    // ----- applying policy actions -------------------------------------------------------

    /// Charge the policy's work to `cpu`, record its migrations, send its kicks.
    pub(crate) fn apply_actions(&mut self, cpu: usize) {
        // Each migration is a detach_task() (dequeue) and an attach_task() (enqueue) done by
        // this CPU, plus what the policy did inside them (dl_server start/stop).
        let moves = self.act.migrations.len() as u64;
        let cost = self.act.cost_ns
            + moves * (self.cost.dequeue_task_ns + self.cost.enqueue_task_ns)
            + self.policy.take_cost_ns();
        self.act.cost_ns = 0;
        self.charge(cpu, cost);
        for i in 0..self.act.migrations.len() {
            let m: Migration = self.act.migrations[i];
            self.tasks[m.task.idx()].cpu = m.to;
            self.count_migration(cpu, m.task, m.from, m.to, m.reason);
            if self.cpus[m.to].curr.is_none() && m.to != cpu {
                self.resched_curr(m.to, cpu);
            }
        }
        for i in 0..self.act.kicks.len() {
            let target = self.act.kicks[i];
            let at = self.send_ipi(cpu, target);
            self.queue.push(at, Event::KickIpi { cpu: target as u32 });
        }
        for i in 0..self.act.resched.len() {
            let target = self.act.resched[i];
            self.resched_curr(target, cpu);
        }
        for i in 0..self.act.stop_cpus.len() {
            let target = self.act.stop_cpus[i];
            // stop_one_cpu_nowait(): the stopper is queued by IPI on the busiest CPU.
            let at = self.send_ipi(cpu, target);
            self.queue.push(at, Event::Stopper { cpu: target as u32 });
        }
        self.act.clear();
    }

    /// Bookkeeping of `set_task_cpu()`, done on `this_cpu`: counters, perf's migrated flag,
    /// the ping-pong detector, the trace, the log.
    pub(crate) fn count_migration(
        &mut self,
        this_cpu: usize,
        p: TaskId,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) {
        let i = reason_index(reason);
        let t = &mut self.tasks[p.idx()];
        t.stats.nr_migrations += 1;
        t.stats.migrations_by_reason[i] += 1;
        t.perf_migrated = true;
        self.counters.migrations_by_reason[i] += 1;
        self.ping_pong
            .record(&mut t.last_move, self.now_ns, from, to, reason);
        self.numa_record_move(p, from, to, reason);
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            let t = &self.tasks[p.idx()];
            rec.migrate(self.now_ns, this_cpu, curr, t, from, to, reason);
        }
        if self.migration_log.len() >= MIGRATION_LOG_MAX {
            self.migration_log_dropped += 1;
            return;
        }
        self.migration_log.push(MigrationRecord {
            time_ns: self.now_ns,
            task: p,
            from,
            to,
            reason,
        });
    }

    /// `select_fallback_rq()` when a policy returns a CPU the task may not use.
    fn allowed_or_fallback(&self, p: TaskId, cpu: usize) -> usize {
        let allowed = &self.tasks[p.idx()].cpus_allowed;
        if allowed.test(cpu) {
            return cpu;
        }
        let node = self.machine.cpus[cpu].node;
        allowed
            .and(self.machine.node_mask(node))
            .first()
            .or_else(|| allowed.first())
            .expect("validated: every task has an allowed online CPU")
    }

    // ----- __schedule() ------------------------------------------------------------------

    /// `__schedule()` on `cpu`: put back or drop the current task, pick the next one (newidle
    /// balancing first when nothing is queued), switch.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        // Asked to reschedule (a preemption), as opposed to blocking, exiting or yielding.
        let preempt = self.cpus[cpu].need_resched || self.cpus[cpu].need_resched_lazy;
        self.cpus[cpu].stats.sched_count += 1;
        self.cpus[cpu].need_resched = false;
        self.cpus[cpu].need_resched_lazy = false;
        let prev = self.cpus[cpu].curr;
        let mut prev_queued = None;
        if let Some(p) = prev {
            self.sync_progress(cpu);
            let t = &mut self.tasks[p.idx()];
            t.stats.sum_exec_runtime_ns += self.now_ns - t.exec_start_ns;
            t.exec_start_ns = self.now_ns;
            if t.state == TaskState::Running {
                t.state = TaskState::Runnable;
                t.runnable_since_ns = self.now_ns;
                prev_queued = Some(p);
            }
        }
        let mut next = policy!(self.pick_next_task(cpu, prev_queued));
        let work = self.policy.take_cost_ns();
        self.charge(cpu, work);
        if next.is_none() {
            self.act.clear();
            policy!(self.balance_newidle(cpu, &mut self.act));
            self.apply_actions(cpu);
            next = policy!(self.pick_next_task(cpu, None));
            let work = self.policy.take_cost_ns();
            self.charge(cpu, work);
        }
        // clear_tsk_need_resched(prev), after the pick: a resched set while picking (an
        // attach_task() of newly-idle balancing preempting the outgoing task) belongs to
        // `prev` and dies with this switch. Left set, it would make the next
        // resched_curr() of an idle CPU believe a reschedule is already on its way.
        self.cpus[cpu].need_resched = false;
        self.cpus[cpu].need_resched_lazy = false;
        match next {
            Some(n) => self.switch_to(cpu, prev, n),
            None => self.go_idle(cpu, prev),
        }
        if self.observer.is_some() && prev != next {
            self.trace_switch(cpu, prev, next, preempt);
        }
    }

    /// `sched_switch`: `prev_state` from the state `prev` left the CPU in.
    fn trace_switch(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
        next: Option<TaskId>,
        preempt: bool,
    ) {
        use super::observer::PrevState;
        let Some(rec) = self.observer.as_deref_mut() else {
            return;
        };
        let prev = prev.map(|p| &self.tasks[p.idx()]);
        let state = match prev.map(|t| t.state) {
            Some(TaskState::Blocked) => PrevState::Sleeping,
            Some(TaskState::Dead) => PrevState::Dead,
            _ if preempt => PrevState::Preempted,
            _ => PrevState::Runnable,
        };
        let next = next.map(|n| &self.tasks[n.idx()]);
        rec.switch(self.now_ns, cpu, prev, state, next);
    }

    fn count_switch_out(&mut self, cpu: usize, prev: TaskId) {
        self.cpus[cpu].stats.nr_switches += 1;
        self.counters.context_switches += 1;
        let t = &mut self.tasks[prev.idx()];
        t.stats.nr_switches += 1;
        if t.state == TaskState::Runnable {
            t.stats.nr_involuntary_switches += 1;
        } else {
            t.stats.nr_voluntary_switches += 1;
        }
    }

    fn switch_to(&mut self, cpu: usize, prev: Option<TaskId>, next: TaskId) {
        if prev == Some(next) {
            self.tasks[next.idx()].state = TaskState::Running;
            self.plan_continue(cpu);
            return;
        }
        if let Some(p) = prev {
            self.count_switch_out(cpu, p);
        } else {
            self.cpus[cpu].stats.nr_switches += 1;
        }
        let from_cpu = self.tasks[next.idx()].cpu;
        if from_cpu != cpu {
            // A policy dispatched a task queued for another CPU (global-queue policies).
            self.count_migration(cpu, next, from_cpu, cpu, MigrationReason::Dispatch);
            self.tasks[next.idx()].cpu = cpu;
        }
        let pick_ns = self.cost.set_next_entity_ns
            + if prev.is_some() {
                self.cost.put_prev_entity_ns
            } else {
                0
            };
        self.charge(cpu, self.cost.context_switch_ns + pick_ns);
        let now = self.now_ns;
        let refill = {
            let t = &self.tasks[next.idx()];
            match t.last_ran_cpu {
                Some(last) if last != cpu => self.cost.refill_ns(
                    crate::cost::CostModel::distance(&self.machine, last, cpu),
                    t.footprint_kib,
                ),
                _ => 0,
            }
        };
        {
            let t = &mut self.tasks[next.idx()];
            t.state = TaskState::Running;
            t.exec_start_ns = now;
            t.progress_mark_ns = now;
            t.stats.wait_sum_ns += now - t.runnable_since_ns;
            t.stats.wait_count += 1;
            self.cpus[cpu].stats.run_delay_ns += now - t.runnable_since_ns;
            self.schedule_delay.record(now - t.runnable_since_ns);
            self.cpus[cpu].stats.pcount += 1;
            if let Some(woken) = t.woken_at_ns.take() {
                // Runnable → running: until the task's own code runs again, i.e. after the
                // context switch and any kernel work queued on this CPU (what schbench's
                // user-space timestamps see).
                let running_at = self.cpus[cpu].busy_until_ns.max(now);
                self.wakeup_latency.record(running_at - woken);
            }
            if t.perf_migrated {
                t.perf_migrated = false;
                self.counters.cpu_migrations += 1;
            }
            t.refill_debt += refill;
            if t.in_run {
                t.remaining_work += t.refill_debt;
                t.refill_debt = 0;
            }
            t.last_ran_cpu = Some(cpu);
            if t.numa_pages.is_empty() {
                // First run: the task touches its memory (mm/mempolicy.c placement).
                let node = self.machine.cpus[cpu].node;
                t.numa_pages =
                    super::mempolicy::first_touch_pages(t.mempolicy, node, &self.machine);
            }
        }
        self.numa_first_touch(cpu, next);
        let was_idle = prev.is_none();
        self.cpus[cpu].curr = Some(next);
        self.policy.cpu_state_changed(cpu);
        if was_idle {
            // Leaving the idle loop: the governor reflects, tick_nohz_idle_exit()
            // restarts the tick.
            self.cpuidle_reflect(cpu, false);
            self.cpus[cpu].tick_stopped = false;
            self.cpus[cpu].busy_since_ns = now;
            self.cpus[cpu].idle_stamp_ns = 0;
            self.arm_tick(cpu);
            self.update_sibling_speeds(cpu);
        }
        self.cpus[cpu].speed = self.speed_of(cpu);
        self.numa_running_changed(prev, Some(next));
        self.arm_hrtick(cpu);
        self.plan_continue(cpu);
    }

    fn go_idle(&mut self, cpu: usize, prev: Option<TaskId>) {
        let now = self.now_ns;
        let Some(p) = prev else {
            return;
        };
        self.count_switch_out(cpu, p);
        self.policy.cpu_state_changed(cpu);
        self.charge(cpu, self.cost.put_prev_entity_ns);
        let c = &mut self.cpus[cpu];
        c.stats.sched_goidle += 1;
        c.curr = None;
        c.stats.busy_ns += now - c.busy_since_ns;
        c.done_gen = c.done_gen.wrapping_add(1);
        c.continue_queued_at = None;
        self.stop_tick(cpu);
        self.update_sibling_speeds(cpu);
        self.numa_running_changed(Some(p), None);
        self.enter_idle(cpu);
    }

    /// `do_idle()` entry: stamp, the policy's idle hooks, then the first idle-loop
    /// iteration.
    pub(crate) fn enter_idle(&mut self, cpu: usize) {
        self.cpus[cpu].idle_stamp_ns = self.now_ns.max(1);
        self.cpus[cpu].idle_since_ns = self.now_ns;
        policy!(self.idle_enter(cpu));
        self.cpuidle_idle_call(cpu);
    }

    /// One iteration of the idle loop, `cpuidle_idle_call()`: the governor picks a state
    /// and says whether to stop the tick; `tick_nohz_idle_stop_tick()` stops it (and, the
    /// first time in this idle period, `nohz_balance_enter_idle()` puts the CPU in the
    /// nohz idle mask), `tick_nohz_idle_retain_tick()` keeps it (the per-CPU tick event is
    /// re-armed at the next jiffy, reusing a still-queued one).
    pub(crate) fn cpuidle_idle_call(&mut self, cpu: usize) {
        let inp = self.idle_inputs(cpu);
        let now = self.now_ns;
        let c = &mut self.cpus[cpu];
        let sel = c.cpuidle.select(&self.cost.idle_states, &inp, now);
        c.idle_state = sel.state;
        c.idle_polling = self.cost.idle_states[sel.state].polling;
        c.idle_iter_start_ns = Some(now);
        if sel.stop_tick || c.tick_stopped {
            c.tick_armed = false;
            if !c.tick_stopped {
                c.tick_stopped = true;
                c.stats.idle_tick_stops += 1;
                policy!(self.nohz_tick_stopped(cpu));
            }
        } else {
            c.stats.idle_tick_retains += 1;
            self.arm_tick(cpu);
        }
    }

    /// `cpuidle_reflect()` when the idle-loop iteration on `cpu` ends (`got_tick`: the
    /// tick woke it).
    fn cpuidle_reflect(&mut self, cpu: usize, got_tick: bool) {
        let tick = self.tick_period_ns();
        let now = self.now_ns;
        let c = &mut self.cpus[cpu];
        if let Some(start) = c.idle_iter_start_ns.take() {
            c.cpuidle
                .reflect(c.idle_state, now - start, got_tick, tick, now);
        }
    }

    /// The kept tick fires on idle `cpu`: `sched_tick()` → `sched_balance_trigger()` →
    /// `sched_balance_domains(CPU_IDLE)` with the idle interval; if nothing was pulled the
    /// idle loop runs again and the governor re-evaluates (`tick_nohz_idle_stop_tick()`
    /// on this iteration, if it now says so). Approximation: the tick's own idle-exit
    /// latency is not charged.
    fn idle_tick(&mut self, cpu: usize) {
        self.cpus[cpu].stats.idle_ticks += 1;
        self.cpuidle_reflect(cpu, true);
        self.act.clear();
        policy!(self.balance_tick(cpu, &mut self.act));
        self.apply_actions(cpu);
        if self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
            self.preempt_point(cpu);
        }
        if self.cpus[cpu].curr.is_none() {
            self.cpuidle_idle_call(cpu);
        }
    }

    /// The governor's inputs on `cpu` now: `tick_nohz_get_sleep_length()` (the next task
    /// hrtimer or policy timer on this CPU; none → [`crate::cpuidle::menu::NO_TIMER_NS`])
    /// and its `delta_next` (the next jiffy boundary while the tick runs).
    fn idle_inputs(&self, cpu: usize) -> crate::cpuidle::IdleInputs {
        let now = self.now_ns;
        let period = self.tick_period_ns();
        let c = &self.cpus[cpu];
        let mut next = c.policy_timer_at.unwrap_or(u64::MAX);
        if let Some(at) = self.task_timers.earliest(cpu) {
            next = next.min(at);
        }
        let sleep_length_ns = if next == u64::MAX {
            crate::cpuidle::menu::NO_TIMER_NS
        } else {
            next.saturating_sub(now)
        };
        let to_tick = (now / period + 1) * period - now;
        crate::cpuidle::IdleInputs {
            tick_nsec: period,
            tick_stopped: c.tick_stopped,
            sleep_length_ns,
            delta_tick_ns: if c.tick_stopped {
                sleep_length_ns
            } else {
                to_tick.min(sleep_length_ns)
            },
        }
    }

    // ----- progress ------------------------------------------------------------------------

    /// Current speed of `cpu`'s task in 1/1024: capacity × SMT contention × the machine's
    /// `speed_pct` ÷ the memory locality time scale of the task's pages seen from this CPU's
    /// node.
    pub(crate) fn speed_of(&self, cpu: usize) -> u64 {
        let speed = self.cpus[cpu].smt_speed_base;
        debug_assert_eq!(
            speed,
            self.smt_speed_base_now(cpu),
            "stale SMT speed of CPU {cpu}"
        );
        if let Some(s) = self.numa_scaled_speed(cpu, speed) {
            return s;
        }
        match self.cpus[cpu].curr {
            Some(p) if self.tasks[p.idx()].mem_intensity_permille > 0 => {
                crate::cost::mem_scaled_speed(speed, self.mem_time_scale_ppm(cpu, p))
            }
            _ => speed,
        }
    }

    /// [`crate::cost::mem_time_scale_ppm`] of task `p` running on `cpu`.
    fn mem_time_scale_ppm(&self, cpu: usize, p: TaskId) -> u64 {
        let t = &self.tasks[p.idx()];
        let node = self.machine.cpus[cpu].node;
        let rows = t
            .numa_pages
            .iter()
            .enumerate()
            .map(|(n, &pages)| (pages, self.machine.distance(node, n)));
        crate::cost::mem_time_scale_ppm(t.mem_intensity_permille, rows)
    }

    /// [`super::smt_speed_base`] of `cpu` for its siblings' busy state now (walks the SMT
    /// mask; the cached value is [`super::CpuCore::smt_speed_base`]).
    fn smt_speed_base_now(&self, cpu: usize) -> u64 {
        let busy = self
            .machine
            .smt_mask(cpu)
            .iter()
            .filter(|&s| s == cpu || self.cpus[s].curr.is_some())
            .count();
        self.smt_speed_base_of(cpu, busy)
    }

    /// [`super::smt_speed_base`] of `cpu` with `busy` busy siblings (itself included),
    /// from the table built with the engine.
    #[inline]
    fn smt_speed_base_of(&self, cpu: usize, busy: usize) -> u64 {
        debug_assert!((1..=self.smt_speed_stride).contains(&busy), "busy {busy}");
        let v = self.smt_speed_table[cpu * self.smt_speed_stride + busy - 1];
        debug_assert_eq!(
            v,
            super::smt_speed_base(&self.machine, &self.cost, cpu, busy)
        );
        v
    }

    /// A CPU went busy or idle: its SMT siblings' speeds changed (and their cached SMT
    /// speed, busy or idle).
    fn update_sibling_speeds(&mut self, cpu: usize) {
        let nr = self.smt_siblings[cpu].len();
        let nr_busy = (0..nr)
            .filter(|&k| self.cpus[self.smt_siblings[cpu][k] as usize].curr.is_some())
            .count();
        for k in 0..nr {
            let s = self.smt_siblings[cpu][k] as usize;
            if s == cpu {
                continue;
            }
            // `s` counts itself busy.
            let busy = nr_busy + usize::from(self.cpus[s].curr.is_none());
            self.cpus[s].smt_speed_base = self.smt_speed_base_of(s, busy);
            if self.cpus[s].curr.is_none() {
                continue;
            }
            self.sync_progress(s);
            self.cpus[s].speed = self.speed_of(s);
            if self.tasks[self.cpus[s].curr.expect("checked").idx()].in_run {
                self.plan_continue(s);
            }
        }
    }

    /// Account the current task's progress up to now (`update_curr()`'s role for work).
    pub(crate) fn sync_progress(&mut self, cpu: usize) {
        let Some(p) = self.cpus[cpu].curr else {
            return;
        };
        let now = self.now_ns;
        let busy_until = self.cpus[cpu].busy_until_ns;
        let speed = self.cpus[cpu].speed;
        let t = &mut self.tasks[p.idx()];
        if t.in_run {
            let from = t.progress_mark_ns.max(busy_until);
            if now > from {
                t.remaining_work = t
                    .remaining_work
                    .saturating_sub(work_done(now - from, speed));
            }
        }
        t.progress_mark_ns = now;
    }

    /// Charge `ns` of kernel work to `cpu`: no task progresses there until it is done.
    pub(crate) fn charge(&mut self, cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        self.sync_progress(cpu);
        let c = &mut self.cpus[cpu];
        c.busy_until_ns = c.busy_until_ns.max(self.now_ns) + ns;
        c.stats.kernel_work_ns += ns;
        if c.curr.is_some() {
            self.plan_continue(cpu);
        }
    }

    /// (Re)plan the next program step of `cpu`'s current task.
    pub(crate) fn plan_continue(&mut self, cpu: usize) {
        let Some(p) = self.cpus[cpu].curr else {
            return;
        };
        let start = self.now_ns.max(self.cpus[cpu].busy_until_ns);
        let t = &self.tasks[p.idx()];
        let at = if t.in_run {
            start + work_to_ns(t.remaining_work, self.cpus[cpu].speed.max(1))
        } else {
            start
        };
        let c = &mut self.cpus[cpu];
        c.continue_at_ns = at;
        if matches!(c.continue_queued_at, Some(queued) if queued <= at) {
            return;
        }
        c.done_gen = c.done_gen.wrapping_add(1);
        c.continue_queued_at = Some(at);
        let generation = c.done_gen;
        self.queue.push(
            at,
            Event::Continue {
                cpu: cpu as u32,
                generation,
            },
        );
    }

    /// The current task of `cpu` reached its planned step.
    pub(crate) fn continue_curr(&mut self, cpu: usize) {
        let p = self.cpus[cpu]
            .curr
            .expect("Continue only planned for busy CPUs");
        self.sync_progress(cpu);
        let t = &mut self.tasks[p.idx()];
        if t.in_run {
            if t.remaining_work > 0 {
                self.plan_continue(cpu);
                return;
            }
            t.in_run = false;
            t.pc += 1;
        }
        self.run_ops(cpu);
    }

    // ----- the program interpreter ----------------------------------------------------------

    /// Run `cpu`'s current task's program until it computes, blocks or exits. The loop and
    /// its exits live here; each op family is interpreted by one helper returning a [`Step`].
    fn run_ops(&mut self, cpu: usize) {
        let p = self.cpus[cpu].curr.expect("run_ops on a busy CPU");
        let mut steps = 0u32;
        // Whether the checks below must run before this op: false only after a `Pure`
        // op that followed a full check (the first op's lazy test is skipped, so a pure
        // first op does not count).
        let mut check = true;
        loop {
            if check {
                if steps > 0 && self.cpus[cpu].need_resched_lazy {
                    // Return to user space after a system call acts on
                    // TIF_NEED_RESCHED_LAZY (preempt=lazy): the task is preempted before
                    // its next action.
                    self.schedule(cpu);
                    return;
                }
                if self.cpus[cpu].busy_until_ns > self.now_ns {
                    // Kernel work (a wakeup it just did, a switch) delays the next action.
                    self.plan_continue(cpu);
                    return;
                }
            } else {
                debug_assert!(
                    !self.cpus[cpu].need_resched_lazy
                        && self.cpus[cpu].busy_until_ns <= self.now_ns,
                    "a Pure op changed the interpreter's checks"
                );
            }
            steps += 1;
            if steps > ZERO_TIME_OPS_MAX {
                let t = &self.tasks[p.idx()];
                self.invariant_violations.push(format!(
                    "t={} task {} ('{}'): {ZERO_TIME_OPS_MAX} actions without computing or \
                     blocking; task stopped",
                    self.now_ns, p.0, t.comm
                ));
                self.exit_task(cpu, p);
                return;
            }
            let t = &self.tasks[p.idx()];
            let op = self.ops[(t.op_base + t.pc) as usize];
            // The frequent ops dispatch straight to their handler: one indirect jump per
            // op instead of a family jump and then the family's own (the interpreter's
            // jumps were most of hackbench's indirect-branch mispredicts, issue 14).
            let step = match op {
                Op::Run { work_ns } => self.op_run(cpu, p, work_ns),
                Op::Down { sem } => self.op_down(p, sem),
                Op::Up { sem, sync } => self.op_up(cpu, p, sem, sync),
                Op::UpThreshold {
                    sem,
                    sync,
                    min_count,
                } => self.op_up_threshold(cpu, p, sem, sync, min_count),
                Op::Loop { to, times, slot } => self.op_loop(p, to, times, slot),
                Op::CountOp => self.op_count(p),
                Op::Mark { slot } => self.op_mark(p, slot),
                Op::Sample { slot, metric } => self.op_sample(p, slot, metric),
                Op::RunExp { .. }
                | Op::Sleep { .. }
                | Op::TimerStart { .. }
                | Op::TimerWait { .. }
                | Op::DutyStart { .. }
                | Op::DutyCall { .. } => self.op_time(cpu, p, op),
                Op::TryDown { .. }
                | Op::DownAll { .. }
                | Op::UpMany { .. }
                | Op::UpStamped { .. }
                | Op::Wake { .. }
                | Op::Barrier { .. } => self.op_sync(cpu, p, op),
                Op::Jump { .. } | Op::Snapshot { .. } => self.op_flow(p, op),
                Op::Yield
                | Op::SetNice { .. }
                | Op::SetAffinity { .. }
                | Op::Fork { .. }
                | Op::Exec
                | Op::SpinLock { .. }
                | Op::SpinUnlock { .. }
                | Op::PerCpuSpinLock { .. }
                | Op::PerCpuSpinUnlock => self.op_task(cpu, p, op),
                Op::Exit => Step::Exit,
                Op::Stop => {
                    self.stop_requested = true;
                    Step::Exit
                }
            };
            check = true;
            match step {
                Step::Pure => check = steps == 1,
                Step::Next => {}
                Step::Resched => {
                    if self.cpus[cpu].need_resched {
                        self.schedule(cpu);
                        return;
                    }
                }
                Step::Schedule => {
                    self.schedule(cpu);
                    return;
                }
                Step::Block => {
                    self.block(cpu, p);
                    return;
                }
                Step::Exit => {
                    self.exit_task(cpu, p);
                    return;
                }
                Step::Planned => return,
            }
        }
    }

    /// `Run`: compute `work_ns` (stretched by the run's noise).
    fn op_run(&mut self, cpu: usize, p: TaskId, work_ns: u64) -> Step {
        let work_ns = self.noise.run_work_ns(p.idx(), work_ns);
        self.start_run(cpu, p, work_ns);
        Step::Planned
    }

    /// `Down`: take a unit of `sem` or block on it.
    fn op_down(&mut self, p: TaskId, sem: SemId) -> Step {
        if self.sem_try_down(p, sem) {
            return Step::Pure;
        }
        self.sems[sem as usize].waiters.push_back(p);
        Step::Block
    }

    /// `Up`: post a unit of `sem`, waking its first waiter.
    fn op_up(&mut self, cpu: usize, p: TaskId, sem: SemId, sync: bool) -> Step {
        self.tasks[p.idx()].pc += 1;
        self.sem_up(cpu, p, sem, sync);
        Step::Resched
    }

    /// `UpThreshold`: post a unit of `sem`; wake waiters only once `min_count` units are
    /// there (then as many as there are units).
    fn op_up_threshold(
        &mut self,
        cpu: usize,
        p: TaskId,
        sem: SemId,
        sync: bool,
        min_count: u32,
    ) -> Step {
        self.tasks[p.idx()].pc += 1;
        let s = &mut self.sems[sem as usize];
        s.count += 1;
        if s.count >= u64::from(min_count) {
            while self.sems[sem as usize].count > 0 {
                let s = &mut self.sems[sem as usize];
                let Some(w) = s.waiters.pop_front() else {
                    break;
                };
                s.count -= 1;
                self.tasks[w.idx()].pc += 1;
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
        }
        Step::Resched
    }

    /// `Loop`: jump back to `to` until this op has been passed `times` times.
    fn op_loop(&mut self, p: TaskId, to: u32, times: u32, slot: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        let n = t.loop_counts[slot as usize] + 1;
        if n < times {
            t.loop_counts[slot as usize] = n;
            t.pc = to;
        } else {
            t.loop_counts[slot as usize] = 0;
            t.pc += 1;
        }
        Step::Pure
    }

    /// `CountOp`: one completed operation of the workload.
    fn op_count(&mut self, p: TaskId) -> Step {
        self.tasks[p.idx()].pc += 1;
        self.ops_done += 1;
        self.ops_total += 1;
        Step::Pure
    }

    /// `Mark`: record now in mark `slot`.
    fn op_mark(&mut self, p: TaskId, slot: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        t.marks_ns[slot as usize] = self.now_ns;
        t.pc += 1;
        Step::Pure
    }

    /// `Sample`: record now minus mark `slot` into workload metric `metric` (from the
    /// start of the measured interval on).
    fn op_sample(&mut self, p: TaskId, slot: u8, metric: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        let start = t.marks_ns[slot as usize];
        t.pc += 1;
        if start >= self.stats_start_ns {
            self.metrics[metric as usize].record(self.now_ns - start);
        }
        Step::Pure
    }

    /// Sleep and timer ops other than `Run` (`RunExp`, `Sleep`, `TimerStart`, `TimerWait`,
    /// `DutyStart`, `DutyCall`) of task `p` on `cpu`.
    fn op_time(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::RunExp { mean_work_ns } => {
                let u = self.tasks[p.idx()].rng.next_f64();
                let work = (-(1.0 - u).ln() * mean_work_ns as f64) as u64;
                self.start_run(cpu, p, work.max(1));
                Step::Planned
            }
            Op::Sleep { ns } => {
                self.tasks[p.idx()].pc += 1;
                self.arm_sleep_timer(p, cpu, ns);
                Step::Block
            }
            Op::TimerStart { timer } => {
                self.tasks[p.idx()].pc += 1;
                let t = &mut self.timers[timer as usize];
                if t.is_none() {
                    *t = Some(self.now_ns);
                }
                Step::Next
            }
            Op::TimerWait {
                timer,
                period_ns,
                absolute,
            } => {
                self.tasks[p.idx()].pc += 1;
                let now = self.now_ns;
                let next = self.timers[timer as usize].unwrap_or(now) + period_ns;
                if now < next {
                    self.timers[timer as usize] = Some(next);
                    self.arm_timer_at(p, cpu, next);
                    return Step::Block;
                }
                self.timers[timer as usize] = Some(if absolute { next } else { now });
                Step::Next
            }
            Op::DutyStart { slice_ms } => {
                self.tasks[p.idx()].pc += 1;
                self.duty_slice_start(p, slice_ms);
                Step::Next
            }
            Op::DutyCall {
                load_pct,
                slice_ms,
                exit_to,
                stop_calls,
            } => self.duty_call(cpu, p, load_pct, slice_ms, exit_to, stop_calls),
            _ => unreachable!("op_time: {op:?}"),
        }
    }

    /// The less frequent semaphore, pipe-wakeup and barrier ops (`TryDown`, `DownAll`,
    /// `UpMany`, `UpStamped`, `Wake`, `Barrier`) of task `p` on `cpu`.
    fn op_sync(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::TryDown { sem, else_to } => {
                if !self.sem_try_down(p, sem) {
                    self.tasks[p.idx()].pc = else_to;
                }
                Step::Next
            }
            Op::DownAll { sem, into } => {
                self.tasks[p.idx()].pc += 1;
                let s = &mut self.sems[sem as usize];
                let n = std::mem::take(&mut s.count);
                let mut stamps = std::mem::take(&mut s.stamps);
                for _ in 0..n {
                    let stamp = stamps.pop_front();
                    self.post(cpu, p, into, false, stamp);
                }
                Step::Resched
            }
            Op::UpMany { sem, n } => {
                self.tasks[p.idx()].pc += 1;
                for _ in 0..n {
                    self.sem_up(cpu, p, sem, false);
                }
                Step::Resched
            }
            Op::UpStamped { sem, sync, slot } => {
                let t = &mut self.tasks[p.idx()];
                t.pc += 1;
                let at = t.marks_ns[slot as usize];
                self.post(cpu, p, sem, sync, Some((slot, at)));
                Step::Resched
            }
            Op::Wake { sem, all } => {
                self.tasks[p.idx()].pc += 1;
                while let Some(w) = self.sems[sem as usize].waiters.pop_front() {
                    self.tasks[w.idx()].pc += 1;
                    self.try_to_wake_up(w, cpu, Some(p), false);
                    if !all {
                        break;
                    }
                }
                Step::Resched
            }
            Op::Barrier { id, count } => {
                let b = &mut self.barriers[id as usize];
                if (b.waiters.len() as u32 + 1) < count {
                    b.waiters.push(p);
                    return Step::Block;
                }
                let waiters = std::mem::take(&mut b.waiters);
                self.tasks[p.idx()].pc += 1;
                for &w in &waiters {
                    self.tasks[w.idx()].pc += 1;
                    self.try_to_wake_up(w, cpu, Some(p), false);
                }
                Step::Resched
            }
            _ => unreachable!("op_sync: {op:?}"),
        }
    }

    /// Take one unit of semaphore `sem` for `p` if it has one (advancing `p` past the op and
    /// taking over the unit's time stamp); false when the count is zero.
    #[inline]
    fn sem_try_down(&mut self, p: TaskId, sem: u32) -> bool {
        let s = &mut self.sems[sem as usize];
        if s.count == 0 {
            return false;
        }
        s.count -= 1;
        let stamp = s.stamps.pop_front();
        let t = &mut self.tasks[p.idx()];
        if let Some((slot, at)) = stamp {
            t.marks_ns[slot as usize] = at;
        }
        t.pc += 1;
        true
    }

    /// The less frequent control-flow ops that take no time (`Jump`, `Snapshot`) of task `p`.
    fn op_flow(&mut self, p: TaskId, op: Op) -> Step {
        match op {
            Op::Jump { to } => self.tasks[p.idx()].pc = to,
            Op::Snapshot { full } => {
                self.tasks[p.idx()].pc += 1;
                self.take_snapshot(full);
            }
            _ => unreachable!("op_flow: {op:?}"),
        }
        Step::Next
    }

    /// Record a [`super::Snapshot`] of the run's counters (and, when `full`, its metrics and
    /// per-task waits) for a benchmark's interval report.
    fn take_snapshot(&mut self, full: bool) {
        let snap = super::Snapshot {
            time_ns: self.now_ns,
            ops_total: self.ops_total,
            metrics: if full {
                self.metrics.clone()
            } else {
                Vec::new()
            },
            task_waits: if full {
                self.tasks
                    .iter()
                    .map(|t| (t.stats.wait_sum_ns, t.stats.wait_count))
                    .collect()
            } else {
                Vec::new()
            },
        };
        self.snapshots.push(snap);
        if let Some(hook) = self.interval_hook.as_deref_mut() {
            let index = self.snapshots.len() - 1;
            hook.snapshot(index, &self.snapshots[index]);
        }
    }

    /// Scheduler-facing task ops (`Yield`, `SetNice`, `SetAffinity`, `Fork`, `Exec`,
    /// `SpinLock`, `SpinUnlock`) of task `p` on `cpu`.
    fn op_task(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::Yield => {
                self.tasks[p.idx()].pc += 1;
                self.cpus[cpu].stats.yld_count += 1;
                policy!(self.yield_task(cpu, p));
                Step::Schedule
            }
            Op::SetNice { nice } => {
                self.tasks[p.idx()].pc += 1;
                self.tasks[p.idx()].nice = nice;
                policy!(self.set_nice(p, nice));
                Step::Next
            }
            Op::SetAffinity { mask } => {
                self.tasks[p.idx()].pc += 1;
                if self.sched_setaffinity(cpu, p, mask) {
                    return Step::Planned;
                }
                Step::Next
            }
            Op::Fork { task } => {
                self.tasks[p.idx()].pc += 1;
                let child = TaskId(task);
                if !self.tasks[child.idx()].forked {
                    self.tasks[child.idx()].cpu = cpu;
                    self.wake_up_new_task(child);
                }
                Step::Resched
            }
            Op::Exec => {
                self.tasks[p.idx()].pc += 1;
                if self.sched_exec(cpu, p) {
                    return Step::Planned;
                }
                Step::Next
            }
            Op::SpinLock { lock } => {
                if self.spin_lock(p, lock) {
                    return Step::Next;
                }
                // Spinning: the CPU stays busy with this task until the lock is handed over
                // (spin_unlock) or the task is preempted.
                Step::Planned
            }
            Op::SpinUnlock { lock } => {
                let t = &mut self.tasks[p.idx()];
                t.pc += 1;
                if t.held_percpu_lock == Some(lock) {
                    t.held_percpu_lock = None;
                }
                self.spin_unlock(p, lock);
                Step::Next
            }
            Op::PerCpuSpinLock { base } => {
                // This CPU's lock; a spinner moved here stops waiting for its old CPU's.
                let lock = base + cpu as u32;
                self.leave_spin_queue_unless(p, lock);
                if self.spin_lock(p, lock) {
                    return Step::Next;
                }
                Step::Planned
            }
            Op::PerCpuSpinUnlock => {
                self.tasks[p.idx()].pc += 1;
                let lock = self.tasks[p.idx()].held_percpu_lock.take();
                let lock = lock.expect("validated: PerCpuSpinUnlock follows PerCpuSpinLock");
                self.spin_unlock(p, lock);
                Step::Next
            }
            _ => unreachable!("op_task: {op:?}"),
        }
    }

    /// `sched_exec()` at `execve()` of the running task `p`: `select_task_rq(WF_EXEC)` from
    /// its CPU (the fork/exec slow path where a domain has SD_BALANCE_EXEC); when that is
    /// another CPU, the migration stopper moves `p` there (true: `cpu` rescheduled).
    fn sched_exec(&mut self, cpu: usize, p: TaskId) -> bool {
        let ctx = WakeCtx {
            this_cpu: cpu,
            waker: None,
            flags: WakeFlags {
                exec: true,
                ..WakeFlags::default()
            },
        };
        let (_, dest) = self.select_task_rq(p, cpu, cpu, ctx);
        if dest == cpu || !self.machine.online.test(dest) {
            return false;
        }
        self.migration_cpu_stop(cpu, p, dest, MigrationReason::Exec);
        true
    }

    /// `Op::SpinLock` by the running task `p`: take the lock if it is free (true), else spin
    /// (queue as a spinner once; false). A spinner switched back in retries here.
    fn spin_lock(&mut self, p: TaskId, lock: u32) -> bool {
        let l = &mut self.spinlocks[lock as usize];
        if l.owner.is_none() {
            l.owner = Some(p);
            if let Some(i) = l.spinners.iter().position(|&s| s == p) {
                l.spinners.remove(i);
            }
            let t = &mut self.tasks[p.idx()];
            t.spinning = false;
            t.held_percpu_lock = Some(lock);
            t.pc += 1;
            return true;
        }
        debug_assert_ne!(
            l.owner,
            Some(p),
            "spin lock {lock} taken twice by task {}",
            p.0
        );
        if !self.tasks[p.idx()].spinning {
            l.spinners.push_back(p);
            self.tasks[p.idx()].spinning = true;
            self.tasks[p.idx()].spin_lock_id = lock;
        }
        false
    }

    /// A spinner of another lock than `lock` (a per-CPU lock's spinner moved to another
    /// CPU) leaves that lock's queue.
    fn leave_spin_queue_unless(&mut self, p: TaskId, lock: u32) {
        let t = &mut self.tasks[p.idx()];
        if !t.spinning || t.spin_lock_id == lock {
            return;
        }
        t.spinning = false;
        let old = &mut self.spinlocks[t.spin_lock_id as usize];
        if let Some(i) = old.spinners.iter().position(|&s| s == p) {
            old.spinners.remove(i);
        }
    }

    /// `Op::SpinUnlock`: hand the lock to the longest-waiting spinner that is running (it
    /// sees the release at once and goes on); with none running, leave it free.
    fn spin_unlock(&mut self, p: TaskId, lock: u32) {
        let l = &mut self.spinlocks[lock as usize];
        debug_assert_eq!(l.owner, Some(p), "spin lock {lock} released by a non-owner");
        l.owner = None;
        let running = l
            .spinners
            .iter()
            .position(|&s| self.tasks[s.idx()].state == TaskState::Running);
        let Some(i) = running else {
            return;
        };
        let w = l.spinners.remove(i).expect("index found");
        l.owner = Some(w);
        let t = &mut self.tasks[w.idx()];
        t.spinning = false;
        t.held_percpu_lock = Some(lock);
        t.pc += 1;
        let cpu = t.cpu;
        self.plan_continue(cpu);
    }

    fn start_run(&mut self, cpu: usize, p: TaskId, work_ns: u64) {
        let t = &mut self.tasks[p.idx()];
        t.in_run = true;
        t.remaining_work = work_ns + t.refill_debt;
        t.refill_debt = 0;
        t.progress_mark_ns = self.now_ns;
        self.plan_continue(cpu);
    }

    /// CPU time `p` has consumed (`CLOCK_THREAD_CPUTIME_ID`), including its current run.
    fn task_cpu_time(&self, p: TaskId) -> u64 {
        let t = &self.tasks[p.idx()];
        let running = if t.state == TaskState::Running {
            self.now_ns - t.exec_start_ns
        } else {
            0
        };
        t.stats.sum_exec_runtime_ns + running
    }

    /// stress-ng's load-slice loop top: `t1_wall_clock`, `t1_cpu_clock`, and for
    /// `--cpu-load-slice` ≥ 0 the slice's CPU-time length (0: `stress_mwc16() / 131072` s).
    fn duty_slice_start(&mut self, p: TaskId, slice_ms: i16) {
        let now = self.now_ns;
        let cpu_time = self.task_cpu_time(p);
        let t = &mut self.tasks[p.idx()];
        t.duty.wall_start_ns = now;
        t.duty.cpu_start_ns = cpu_time;
        t.duty.slice_calls = 0;
        t.duty.slice_cpu_ns = match slice_ms {
            0 => (t.rng.next_u64() & 0xffff) * 1_000_000_000 / 131_072,
            ms if ms > 0 => ms as u64 * 1_000_000,
            _ => 0,
        };
    }

    /// `Op::DutyCall`: one method call done; end the slice when its rule says so (sleep, or
    /// after the sleep check `stress_continue()` and start the next). Returns `Step::Block`
    /// when the task sleeps in select().
    fn duty_call(
        &mut self,
        cpu: usize,
        p: TaskId,
        load_pct: u8,
        slice_ms: i16,
        exit_to: u32,
        stop_calls: u64,
    ) -> Step {
        let now = self.now_ns;
        let cpu_time = self.task_cpu_time(p);
        let t = &mut self.tasks[p.idx()];
        if let Some((start, requested)) = t.duty.sleeping.take() {
            // Back from select(): bias = (t3 − t2) − delay.
            t.duty.bias_ns = (now - start) as i64 - requested;
        } else {
            t.duty.calls += 1;
            t.duty.slice_calls += 1;
            let busy_cpu = cpu_time.saturating_sub(t.duty.cpu_start_ns);
            let over = if slice_ms < 0 {
                t.duty.slice_calls >= u32::from(slice_ms.unsigned_abs())
            } else {
                busy_cpu >= t.duty.slice_cpu_ns
            };
            if !over {
                t.pc += 1;
                return Step::Next;
            }
            let busy_cpu = busy_cpu as i64;
            let busy_wall = (now - t.duty.wall_start_ns) as i64;
            let pct = i64::from(load_pct);
            let delay = busy_cpu * (100 - pct) / pct + (busy_cpu - busy_wall) - t.duty.bias_ns;
            if delay < 0 {
                t.duty.bias_ns = 0;
            } else {
                t.duty.sleeping = Some((now, delay));
                // select() takes a timeval (whole µs) and sleeps with the slack
                // select_estimate_accuracy() gives: delay/1000, at least timer_slack_ns.
                let sleep_ns = delay as u64 / 1000 * 1000;
                let extra_slack = if self.tasks[p.idx()].policy.is_rt() {
                    0
                } else {
                    (sleep_ns / 1000)
                        .min(SELECT_MAX_SLACK_NS)
                        .saturating_sub(self.cfg.timer_slack_ns)
                };
                self.arm_timer_at(p, cpu, now + sleep_ns + extra_slack);
                return Step::Block;
            }
        }
        let t = &mut self.tasks[p.idx()];
        if stop_calls > 0 && t.duty.calls >= stop_calls {
            t.pc = exit_to;
        } else {
            t.pc += 1;
            self.duty_slice_start(p, slice_ms);
        }
        Step::Next
    }

    /// Post one unit of `sem`, optionally with a timestamp for the receiver's mark.
    fn post(&mut self, cpu: usize, p: TaskId, sem: u32, sync: bool, stamp: Option<(u8, u64)>) {
        let s = &mut self.sems[sem as usize];
        match s.waiters.pop_front() {
            Some(w) => {
                let t = &mut self.tasks[w.idx()];
                t.pc += 1;
                if let Some((slot, at)) = stamp {
                    t.marks_ns[slot as usize] = at;
                }
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
            None => {
                s.count += 1;
                if let Some(st) = stamp {
                    s.stamps.push_back(st);
                }
            }
        }
    }

    fn sem_up(&mut self, cpu: usize, p: TaskId, sem: u32, sync: bool) {
        let s = &mut self.sems[sem as usize];
        match s.waiters.pop_front() {
            Some(w) => {
                // The waiter's Down completes with this unit.
                self.tasks[w.idx()].pc += 1;
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
            None => s.count += 1,
        }
    }

    /// `p`'s armed hrtimer fired or is replaced: it no longer counts for its CPU's next
    /// timer event.
    pub(crate) fn timer_fired(&mut self, p: TaskId) {
        if self.tasks[p.idx()].timer_armed.take().is_some() {
            self.task_timers.disarm(p.idx());
        }
    }

    /// A relative sleep (`nanosleep`): `hrtimer_start_range_ns()` is paid by `cpu` before
    /// the task blocks, and the expiry counts from the call.
    fn arm_sleep_timer(&mut self, p: TaskId, cpu: usize, ns: u64) {
        self.arm_timer_at(p, cpu, self.now_ns + ns);
    }

    /// Arm `p`'s hrtimer to expire at `at` (plus the timer slack: none for an RT task, as
    /// `hrtimer_nanosleep()` and `select_estimate_accuracy()` give them).
    fn arm_timer_at(&mut self, p: TaskId, cpu: usize, at: u64) {
        self.charge(cpu, self.cost.hrtimer_start_ns);
        self.timer_fired(p);
        let slack_ns = if self.tasks[p.idx()].policy.is_rt() {
            0
        } else {
            self.cfg.timer_slack_ns
        };
        let expires_ns = at + slack_ns + self.noise.timer_jitter_ns(p.idx());
        let t = &mut self.tasks[p.idx()];
        t.timer_gen = t.timer_gen.wrapping_add(1);
        let generation = t.timer_gen;
        t.timer_armed = Some((cpu as u32, expires_ns));
        self.task_timers.arm(cpu, p.idx(), expires_ns);
        self.queue.push(
            expires_ns,
            Event::Timer {
                task: p,
                cpu: cpu as u32,
                generation,
            },
        );
    }

    /// The current task blocks: dequeue (perhaps delayed) and reschedule.
    fn block(&mut self, cpu: usize, p: TaskId) {
        let dequeued = policy!(self.dequeue_sleep(cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(cpu, cpu, work);
        self.cpus[cpu].stats.delayed_dequeues += u64::from(!dequeued);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Blocked;
        t.on_rq = !dequeued;
        self.schedule(cpu);
        // p->on_cpu is cleared by finish_task() once the switch away from p is over: after
        // the scheduler work charged to this CPU by the schedule() just done.
        self.tasks[p.idx()].on_cpu_until_ns = self.now_ns.max(self.cpus[cpu].busy_until_ns);
    }

    fn exit_task(&mut self, cpu: usize, p: TaskId) {
        if let Some(rec) = self.observer.as_deref_mut() {
            rec.exit(self.now_ns, cpu, &self.tasks[p.idx()]);
        }
        policy!(self.dequeue_exit(cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(cpu, cpu, work);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Dead;
        t.on_rq = false;
        t.in_run = false;
        self.live_tasks -= 1;
        self.schedule(cpu);
    }

    // ----- end of run, warm-up, invariants -------------------------------------------------

    /// Close the books at the end: account running tasks and busy CPUs up to now.
    pub(crate) fn finish(&mut self) {
        let now = self.now_ns;
        self.end_ns = Some(now);
        for cpu in 0..self.cpus.len() {
            if let Some(p) = self.cpus[cpu].curr {
                let t = &mut self.tasks[p.idx()];
                t.stats.sum_exec_runtime_ns += now - t.exec_start_ns;
                t.exec_start_ns = now;
                let c = &mut self.cpus[cpu];
                c.stats.busy_ns += now - c.busy_since_ns;
                c.busy_since_ns = now;
            }
        }
        if let Some(rec) = self.observer.as_deref_mut() {
            let running: Vec<(usize, &super::Task)> = self
                .cpus
                .iter()
                .filter_map(|c| c.curr.map(|p| (c.cpu, &self.tasks[p.idx()])))
                .collect();
            rec.finish(now, &running);
        }
    }

    /// End of warm-up: statistics restart from now.
    pub(crate) fn reset_counters(&mut self) {
        self.numa_series_warmup();
        self.numa_reset_counters();
        let now = self.now_ns;
        self.stats_start_ns = now;
        self.counters = Default::default();
        self.wakeup_latency = Default::default();
        self.schedule_delay = Default::default();
        for h in &mut self.metrics {
            *h = Default::default();
        }
        self.ops_done = 0;
        self.migration_log.clear();
        self.migration_log_dropped = 0;
        self.ping_pong.reset_counts();
        for t in &mut self.tasks {
            t.stats = Default::default();
            t.exec_start_ns = now;
        }
        for c in &mut self.cpus {
            c.stats = Default::default();
            c.busy_since_ns = now;
        }
    }

    /// The invariants of ARCHITECTURE.md §6 that can be checked at any instant.
    pub(crate) fn check_invariants(&mut self) {
        for (i, t) in self.tasks.iter().enumerate() {
            let is_curr = self.cpus[t.cpu].curr == Some(t.id);
            let bad = match t.state {
                TaskState::Running => !is_curr,
                TaskState::Runnable => is_curr || !t.on_rq,
                // A delayed wakee may be moved by a balancer while on its old CPU's list.
                TaskState::Waking => !self.cpus.iter().any(|c| c.wake_list.contains(&t.id)),
                TaskState::Blocked | TaskState::Dead | TaskState::New => is_curr,
            };
            if bad {
                self.invariant_violations.push(format!(
                    "t={} task {i} ('{}') in state {:?} on CPU {} (curr {:?})",
                    self.now_ns, t.comm, t.state, t.cpu, self.cpus[t.cpu].curr
                ));
            }
        }
        for c in &self.cpus {
            if let Some(p) = c.curr
                && self.tasks[p.idx()].state != TaskState::Running
            {
                self.invariant_violations.push(format!(
                    "t={} CPU {} runs task {} in state {:?}",
                    self.now_ns,
                    c.cpu,
                    p.0,
                    self.tasks[p.idx()].state
                ));
            }
        }
    }
}

/// Time to do `work` (ns at speed 1024) at `speed`: `ceil(work × 1024 / speed)`. In `u64`
/// when `work × 1024` fits (every realistic case), else in `u128`: the same value either
/// way, without the 128-bit division call on the hot path.
#[inline]
fn work_to_ns(work: u64, speed: u64) -> u64 {
    if work < 1 << 54 {
        (work << 10).div_ceil(speed)
    } else {
        ((work as u128) << 10).div_ceil(speed as u128) as u64
    }
}

/// Work done in `ns` at `speed` (ns at speed 1024): `floor(ns × speed / 1024)`, in `u64`
/// when the product fits, else in `u128` (the same value).
#[inline]
fn work_done(ns: u64, speed: u64) -> u64 {
    match ns.checked_mul(speed) {
        Some(x) => x >> 10,
        None => ((ns as u128 * speed as u128) >> 10) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::{work_done, work_to_ns};
    use proptest::prelude::*;

    proptest! {
        /// The `u64` fast paths give the former `u128` formulas' values, small and huge.
        #[test]
        fn progress_arithmetic_matches_u128(
            work in prop_oneof![0u64..1 << 40, any::<u64>()],
            ns in prop_oneof![0u64..1 << 40, any::<u64>()],
            speed in 1u64..4096,
        ) {
            let want_ns = (work as u128 * 1024).div_ceil(speed as u128) as u64;
            prop_assert_eq!(work_to_ns(work, speed), want_ns);
            let want_done = (ns as u128 * speed as u128 / 1024) as u64;
            prop_assert_eq!(work_done(ns, speed), want_done);
        }
    }
}
