//! The discrete-event engine: virtual time, the event queue, CPUs, tasks and their programs.
//!
//! The engine plays the part of the kernel's core (`kernel/sched/core.c`) and of the
//! hardware: it keeps each CPU's state (running a task, idle in some idle state, or busy with
//! kernel work), interprets task programs, and calls the scheduling policy
//! ([`crate::policy::SchedPolicy`]) only at the kernel's scheduling points — wakeup
//! (`try_to_wake_up`), block and preemption (`__schedule`), the tick (`sched_tick`), fork
//! (`wake_up_new_task`) and exit. Its scheduling-point logic lives in [`core`].
//!
//! Time is virtual, in nanoseconds (`u64`). Progress is lazy, like the kernel's
//! `update_curr()`: a running task's remaining work is advanced only when something happens
//! on its CPU, at its current speed (capacity × SMT contention), and its completion event is
//! re-planned when the speed changes. Kernel work (a context switch, a wakeup scan, an IPI
//! handler, a balance pass) is charged by pushing the CPU's `busy_until_ns` horizon: no task
//! progresses on that CPU until it passes. Superseded events are not deleted; they carry a
//! generation number and are dropped when popped.

pub mod affinity;
pub mod control;
pub mod core;
pub mod invariants;
pub mod mempolicy;
pub mod noise;
pub mod numa;
pub mod numa_series;
pub mod observer;
pub mod pingpong;
pub mod queue;
mod view;
pub mod watchdog;

use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::hist::Histogram;
use crate::kconfig::sysctl::PreemptModel;
use crate::policy::{Actions, SchedPolicy};
use crate::rng::{RngStream, StreamKind};
use crate::sched::types::MigrationReason;
use crate::task::{Op, Program, SemId, TaskId, TaskPolicy, TaskSpec, TaskState};
use crate::topology::Machine;
use observer::{IntervalHook, Observer};
use pingpong::PingPong;
use queue::EventQueue;

/// Engine parameters that come from the kernel configuration and the run settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub hz: u32,
    /// The preemption model. Under `lazy` a fair-class wakeup preemption only sets
    /// TIF_NEED_RESCHED_LAZY, acted on at the next tick; under the others a remote CPU is sent
    /// a reschedule IPI and the task is preempted on return from it (user code is always
    /// preemptible there, so none/voluntary/full behave alike for the user-mode work modelled).
    pub preempt: PreemptModel,
    /// `sched_feat(TTWU_QUEUE)`.
    pub ttwu_queue: bool,
    /// `TTWU_QUEUE_DEFAULT`: queue same-LLC wakeups to busy CPUs too.
    pub ttwu_queue_default: bool,
    /// `TTWU_QUEUE_ON_CPU`: a wakeup of a task still switching out (`p->on_cpu`) may be
    /// queued to its CPU's wake list instead of spinning until the switch is over (v5.8+).
    pub ttwu_queue_on_cpu: bool,
    /// `TTWU_QUEUE_DELAYED` (2025 proposal): a delayed-dequeue task is woken through its
    /// CPU's wake list, where the dequeue completes and its CPU is selected again.
    pub ttwu_queue_delayed: bool,
    /// Which same-LLC wakeups `ttwu_queue_cond()` queues, by kernel release.
    pub ttwu_queue_rule: TtwuQueueRule,
    /// hrtimer slack of normal tasks (`current->timer_slack_ns`, 50 µs); RT tasks get none.
    pub timer_slack_ns: u64,
    /// `sysctl_sched_migration_cost`: caps `avg_idle` at twice it.
    pub migration_cost_ns: u64,
    /// Simulated-time cap.
    pub duration_ns: u64,
    /// Counters reset at this time (statistics cover `[warmup, end]`).
    pub warmup_ns: u64,
    pub seed: u64,
    /// Check invariants after every event (slow; on in tests).
    pub check_invariants: bool,
    /// A scheduling-watchdog finding ([`watchdog`]) panics instead of being recorded. On
    /// by default in builds with debug assertions (the test suite), so every test and soak
    /// run checks it; a test of the watchdog itself turns it off.
    pub watchdog_panics: bool,
    /// Window of the migration ping-pong detector (`[run] pingpong_window_ms`).
    pub pingpong_window_ns: u64,
    /// Run-to-run variation sources ([`noise`]); off by default here, on by default in
    /// scenarios (`[run] noise_*`).
    pub noise: noise::NoiseParams,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            hz: 250,
            preempt: PreemptModel::Voluntary,
            ttwu_queue: true,
            ttwu_queue_default: false,
            ttwu_queue_on_cpu: true,
            ttwu_queue_delayed: false,
            ttwu_queue_rule: TtwuQueueRule::IdleTarget,
            timer_slack_ns: 50_000,
            migration_cost_ns: 500_000,
            duration_ns: 10_000_000_000,
            warmup_ns: 0,
            seed: 1,
            check_invariants: false,
            watchdog_panics: cfg!(debug_assertions),
            pingpong_window_ns: pingpong::DEFAULT_WINDOW_NS,
            noise: noise::NoiseParams::OFF,
        }
    }
}

/// `ttwu_queue_cond()`'s rule for wakeups inside the waker's LLC, as it changed over
/// releases (wakeups to another LLC are queued by every rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtwuQueueRule {
    /// Before v5.8: only cross-LLC wakeups are queued (`rq->wake_list`).
    CrossLlcOnly,
    /// v5.8 – v5.19 (c6e7bd7afaeb "Optimize ttwu() spinning on p->on_cpu"): also a wakee
    /// still descheduling (`WF_ON_CPU`) when its CPU runs at most one task.
    OnCpuNrRunningLe1,
    /// v6.0+ (Tianchen Ding's "Queue task on wakelist in the same llc if the wakee cpu is
    /// idle"): any remote CPU with nothing running (`nr_running == 0`), never this CPU; with
    /// TTWU_QUEUE_DEFAULT every remote CPU.
    IdleTarget,
}

impl TtwuQueueRule {
    /// The rule of a kernel release.
    pub fn for_version(v: crate::kconfig::version::KernelVersion) -> Self {
        use crate::kconfig::version::KernelVersion as V;
        if v < V::new(5, 8) {
            TtwuQueueRule::CrossLlcOnly
        } else if v < V::new(6, 0) {
            TtwuQueueRule::OnCpuNrRunningLe1
        } else {
            TtwuQueueRule::IdleTarget
        }
    }
}

/// What a workload hands the engine: programs, tasks, semaphores, barriers, metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadPlan {
    pub programs: Vec<Program>,
    pub tasks: Vec<TaskSpec>,
    /// Initial count of each semaphore.
    pub sems: Vec<u64>,
    pub nr_barriers: usize,
    /// Names of latency metrics recorded by `Op::Sample`.
    pub metrics: Vec<String>,
    /// CPU masks named by `Op::SetAffinity` (by index).
    pub cpumasks: Vec<CpuMask>,
    /// Placement group of each task (same order as `tasks`; `None` = in no group, e.g. a
    /// benchmark's main thread), for per-group placement (`[workload] group_cpus`). Empty =
    /// no groups. Left to the generators, which know their benchmark's structure.
    pub task_groups: Vec<Option<u32>>,
    /// Number of user-space spin locks (`Op::SpinLock`).
    pub nr_spinlocks: usize,
}

/// Per-task statistics, named as `/proc/PID/sched` names them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TaskStats {
    pub sum_exec_runtime_ns: u64,
    pub wait_sum_ns: u64,
    pub wait_count: u64,
    pub nr_switches: u64,
    pub nr_voluntary_switches: u64,
    pub nr_involuntary_switches: u64,
    pub nr_wakeups: u64,
    pub nr_wakeups_sync: u64,
    pub nr_wakeups_migrate: u64,
    pub nr_wakeups_local: u64,
    pub nr_wakeups_remote: u64,
    pub nr_migrations: u64,
    /// Migrations by [`MigrationReason`] (index = position in `MigrationReason::ALL`).
    pub migrations_by_reason: [u64; MigrationReason::COUNT],
}

/// A simulated task: its scheduling-visible state plus its program position.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: TaskId,
    pub comm: String,
    pub state: TaskState,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// On a runqueue (includes a delayed-dequeue sleeper).
    pub on_rq: bool,
    pub cpus_allowed: CpuMask,
    /// `cpuset_cpus_allowed()`: bounds every affinity the task sets (online CPUs ∩ the
    /// spec's `cpuset`).
    pub cpuset: CpuMask,
    pub nice: i8,
    /// `p->policy` (and RT priority): which class the policy runs it in.
    pub policy: TaskPolicy,
    pub mempolicy: crate::task::MemPolicy,
    /// See `TaskSpec::mem_intensity_permille`.
    pub mem_intensity_permille: u16,
    /// Share of the task's pages on each node (index = node id, in units of the vector's
    /// sum); empty until the task first runs and touches its memory. Kept per node so page
    /// migration (NUMA balancing) can move shares later.
    pub numa_pages: Vec<u32>,
    pub footprint_kib: u32,
    /// CPU it last ran on (where its cache is warm).
    pub last_ran_cpu: Option<usize>,
    pub stats: TaskStats,
    /// Index of the program's first op in [`Engine::ops`] (the interpreter reads
    /// `ops[op_base + pc]`: one lookup per op instead of two, issue 14).
    pub(crate) op_base: u32,
    pub(crate) pc: u32,
    pub(crate) loop_counts: [u32; 4],
    pub(crate) marks_ns: [u64; 4],
    /// Work left in the current `Run` op (ns at speed 1024), valid while `in_run`.
    pub(crate) remaining_work: u64,
    pub(crate) in_run: bool,
    /// Cache-refill work owed since the last migration.
    pub(crate) refill_debt: u64,
    /// Time up to which progress has been accounted.
    pub(crate) progress_mark_ns: u64,
    /// When the task last became current (for runtime accounting).
    pub(crate) exec_start_ns: u64,
    /// When the task last became runnable (for wait time).
    pub(crate) runnable_since_ns: u64,
    /// When the pending wakeup started (`sched_waking`), for wakeup latency.
    pub(crate) woken_at_ns: Option<u64>,
    /// perf's `sched_migrated`: counted as a cpu-migration at the next switch-in.
    pub(crate) perf_migrated: bool,
    pub(crate) timer_gen: u32,
    /// The armed hrtimer of this task: (CPU it is queued on, expiry incl. slack), for the
    /// idle governor's next-timer lookup (`tick_nohz_get_sleep_length()`).
    pub(crate) timer_armed: Option<(u32, u64)>,
    /// A wasted-core violation was reported for this wait (once per run).
    pub(crate) wasted_core_reported: bool,
    pub(crate) rng: RngStream,
    /// stress-ng load-slice controller state (`Op::DutyStart`/`Op::DutyCall`).
    pub(crate) duty: DutyState,
    /// The last migration, for the ping-pong detector.
    pub(crate) last_move: Option<pingpong::LastMove>,
    /// `p->on_cpu` after blocking: the task stays on its CPU until the switch away from it
    /// (and the scheduler work before it, such as newidle balancing) is over.
    pub(crate) on_cpu_until_ns: u64,
    /// On a wake list as a delayed-dequeue wakeup (`sched_remote_delayed`), with the waker's
    /// CPU (`p->wake_cpu`), for TTWU_QUEUE_DELAYED.
    pub(crate) wake_delayed_from: Option<usize>,
    /// Spinning on a spin lock (`Op::SpinLock` not yet acquired): burning CPU, no progress.
    pub(crate) spinning: bool,
    /// The lock it spins on while `spinning`.
    pub(crate) spin_lock_id: u32,
    /// The per-CPU lock it holds (`Op::PerCpuSpinLock` taken, not yet released).
    pub(crate) held_percpu_lock: Option<u32>,
    /// Forked (by its start time or by `Op::Fork`).
    pub(crate) forked: bool,
}

/// Per-task state of stress-ng's load-slice controller (`Op::DutyStart`/`Op::DutyCall`):
/// slice start (wall and CPU time), the slice's CPU-time length (`--cpu-load-slice` ≥ 0) and
/// calls so far, all calls of the task, the oversleep `bias`, and the sleep in progress.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DutyState {
    pub wall_start_ns: u64,
    pub cpu_start_ns: u64,
    pub slice_cpu_ns: u64,
    pub slice_calls: u32,
    pub calls: u64,
    pub bias_ns: i64,
    /// Set while a `DutyCall` sleep is in progress: (sleep start, requested delay).
    pub sleeping: Option<(u64, i64)>,
}

/// A snapshot taken by `Op::Snapshot`.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub time_ns: u64,
    /// Every `Op::CountOp` since the start (never reset by warm-up).
    pub ops_total: u64,
    /// With `full`: the metric histograms at that time (same order as `metrics()`).
    pub metrics: Vec<Histogram>,
    /// With `full`: each task's (`wait_sum_ns`, `wait_count`).
    pub task_waits: Vec<(u64, u64)>,
}

/// One CPU as the engine sees it (the core.c half of `struct rq`).
#[derive(Debug, Clone)]
pub struct CpuCore {
    pub cpu: usize,
    /// `rq->curr` (None = the idle task).
    pub curr: Option<TaskId>,
    /// Wakeups queued on this CPU's wake list, waiting for its IPI (`rq->ttwu_pending`).
    pub wake_list: Vec<TaskId>,
    /// TIF_NEED_RESCHED.
    pub need_resched: bool,
    /// TIF_NEED_RESCHED_LAZY (preempt=lazy).
    pub need_resched_lazy: bool,
    /// `rq->idle_stamp`: when the CPU went idle (valid while idle; cleared by the first
    /// wakeup that enqueues here, for `avg_idle`).
    pub idle_stamp_ns: u64,
    /// When the CPU last entered the idle loop (kept while idle; for the watchdog).
    pub idle_since_ns: u64,
    /// `rq->avg_idle`.
    pub avg_idle_ns: u64,
    /// Index into the cost model's idle states while idle.
    pub idle_state: usize,
    /// The state `idle_state` polls (`CPUIDLE_FLAG_POLLING`): a wakeup needs no IPI.
    pub idle_polling: bool,
    /// `tick_nohz_tick_stopped()`: the tick was stopped in this idle period.
    pub tick_stopped: bool,
    /// The cpuidle governor's per-CPU state.
    pub cpuidle: crate::cpuidle::CpuIdleDev,
    /// When the current idle-loop iteration entered its state; `None` once reflected.
    pub(crate) idle_iter_start_ns: Option<u64>,
    /// Kernel-work horizon: tasks make no progress on this CPU before it.
    pub busy_until_ns: u64,
    /// When the runqueue lock is next free (for contention of remote activations).
    pub rq_lock_free_at_ns: u64,
    /// Current task speed, 1024 = full capacity with idle siblings.
    pub speed: u64,
    /// Cached [`smt_speed_base`] of this CPU for the current busy state of its SMT siblings
    /// (the CPU itself counted busy): recomputed when a sibling goes busy or idle
    /// (`update_sibling_speeds`), instead of walking the SMT mask on every switch.
    pub(crate) smt_speed_base: u64,
    pub(crate) ipi_pending: bool,
    pub(crate) resched_ipi_pending: bool,
    pub(crate) done_gen: u32,
    /// When the current task's next program step is due.
    pub(crate) continue_at_ns: u64,
    /// Time of the live `Continue` event of generation `done_gen`, if one is queued. A
    /// later re-plan does not push a new event while this one fires no later: the event
    /// re-queues itself when it pops early (keeps the heap free of stale entries).
    pub(crate) continue_queued_at: Option<u64>,
    pub(crate) tick_gen: u32,
    pub(crate) hrtick_gen: u32,
    pub(crate) tick_armed: bool,
    /// Time of the live queued `Tick` event, if one is queued.
    pub(crate) tick_queued_at: Option<u64>,
    /// The policy's own timer pinned to this CPU (RT period timer, dl_server timer): its
    /// armed expiry; and the live queued event (time, generation). As for `Continue`, a
    /// later expiry or a cancel pushes nothing: the queued event re-checks when it pops, so
    /// a server started and stopped thousands of times a second leaves no stale events.
    pub(crate) policy_timer_at: Option<u64>,
    pub(crate) policy_timer_queued: Option<(u64, u32)>,
    pub(crate) policy_timer_gen: u32,
    pub(crate) busy_since_ns: u64,
    /// `distribute_cpu_mask_prev`: the last CPU `cpumask_any_and_distribute()` returned on
    /// this CPU (starts at 0, so the first pick skips CPU 0, as the kernel's does).
    pub(crate) distribute_cpu_mask_prev: usize,
    pub stats: CpuStats,
}

impl CpuCore {
    /// `rq->ttwu_pending`.
    pub fn ttwu_pending(&self) -> bool {
        !self.wake_list.is_empty()
    }

    /// True when the idle task is polling (idle state 0): a wakeup needs no IPI.
    pub fn polling(&self) -> bool {
        self.curr.is_none() && self.idle_polling
    }
}

/// Per-CPU counters.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CpuStats {
    /// Time with a task current (`rq->curr != idle`).
    pub busy_ns: u64,
    /// Kernel work charged to this CPU (scans, switches, IPIs, balancing).
    pub kernel_work_ns: u64,
    /// `rq->nr_switches`.
    pub nr_switches: u64,
    pub ipis_received: u64,
    pub ipis_sent: u64,
    /// Idle exits from a non-polling idle state.
    pub idle_exits: u64,
    /// `ttwu_count`, `ttwu_local` of /proc/schedstat's cpu line.
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    /// Wakeups this CPU queued on other CPUs' wake lists / activated under a remote lock.
    pub ttwu_queued: u64,
    pub ttwu_remote_locked: u64,
    pub remote_lock_wait_ns: u64,
    /// Wakeups of a task still descheduling on its CPU (`p->on_cpu`): queued to that CPU's
    /// wake list (TTWU_QUEUE_ON_CPU), or waited out by spinning (time in `on_cpu_spin_ns`).
    pub ttwu_on_cpu_queued: u64,
    pub on_cpu_spins: u64,
    pub on_cpu_spin_ns: u64,
    /// Delayed-dequeue wakees this CPU queued to their CPU's wake list (TTWU_QUEUE_DELAYED),
    /// and those it completed there and sent on to another CPU.
    pub ttwu_delayed_queued: u64,
    pub ttwu_delayed_forwarded: u64,
    /// Blocks on this CPU whose dequeue was delayed (DELAY_DEQUEUE: the task stays queued,
    /// `sched_delayed`), and wakeups this CPU made of such a still-queued task
    /// (`ttwu_runnable()` → `requeue_delayed_entity()`).
    pub delayed_dequeues: u64,
    pub delayed_requeues: u64,
    /// `schedule()` calls, of which left the CPU idle (`sched_count`, `sched_goidle`).
    pub sched_count: u64,
    pub sched_goidle: u64,
    /// Idle-loop iterations that stopped the tick (`tick_nohz_idle_stop_tick()` taking
    /// effect; each puts the CPU in the nohz idle mask) and that kept it.
    pub idle_tick_stops: u64,
    pub idle_tick_retains: u64,
    /// Ticks taken by an idle CPU that kept its tick (each runs `sched_balance_trigger()`).
    pub idle_ticks: u64,
    /// `sched_yield()` calls (`yld_count`).
    pub yld_count: u64,
    /// Time tasks waited runnable on this CPU before running (`run_delay`), and the number
    /// of timeslices run (`pcount`).
    pub run_delay_ns: u64,
    pub pcount: u64,
}

/// Events of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A task is forked.
    Fork { task: TaskId },
    /// `cpu`'s current task reaches its next program step (a `Run` completes, or kernel work
    /// it waited behind is over).
    Continue { cpu: u32, generation: u32 },
    /// Scheduler tick on a busy CPU.
    Tick { cpu: u32, generation: u32 },
    /// High-resolution tick at the current task's slice end (HRTICK).
    HrTick { cpu: u32, generation: u32 },
    /// hrtimer expiry of a sleeping task, on the CPU that armed it.
    Timer {
        task: TaskId,
        cpu: u32,
        generation: u32,
    },
    /// A sleeping task's timer fired on an idle CPU that had to leave its idle state first.
    TimerWake {
        task: TaskId,
        cpu: u32,
        generation: u32,
    },
    /// Call-function IPI: process the wake list.
    WakeListIpi { cpu: u32 },
    /// Reschedule IPI (or a polling idle CPU noticing need_resched).
    ReschedIpi { cpu: u32 },
    /// NOHZ idle-balance kick.
    KickIpi { cpu: u32 },
    /// The stopper of `cpu` runs active balancing.
    Stopper { cpu: u32 },
    /// A policy hrtimer pinned to `cpu` expires (`SchedPolicy::timer_expired`).
    PolicyTimer { cpu: u32, generation: u32 },
    /// End of warm-up: reset counters.
    WarmupEnd,
    /// End of the run (duration cap).
    End,
}

/// Counters of a run (perf-stat view and migrations).
#[derive(Debug, Clone, Default)]
pub struct RunCounters {
    pub context_switches: u64,
    pub cpu_migrations: u64,
    pub migrations_by_reason: [u64; MigrationReason::COUNT],
    pub wakeups: u64,
}

/// The engine: one simulation run.
pub struct Engine {
    pub(crate) now_ns: u64,
    pub(crate) machine: Machine,
    pub(crate) cost: CostModel,
    pub(crate) cfg: EngineConfig,
    pub(crate) tasks: Vec<Task>,
    pub(crate) cpus: Vec<CpuCore>,
    /// Per CPU: its SMT siblings, itself included (the SMT mask as a list, walked on each
    /// busy/idle transition).
    pub(crate) smt_siblings: Vec<Box<[u32]>>,
    /// [`smt_speed_base`] of every CPU for every count of busy SMT siblings (itself
    /// included), `smt_speed_table[cpu * smt_speed_stride + busy - 1]`: the machine and
    /// the cost model do not change during a run, and the switch path asked for these
    /// values on every busy/idle transition of a sibling (two divisions and three lookups
    /// each; issue 14).
    pub(crate) smt_speed_table: Vec<u64>,
    pub(crate) smt_speed_stride: usize,
    /// Machine noise streams ([`noise`]).
    pub(crate) noise: noise::Noise,
    /// Every program's ops, one after another, each program followed by an `Exit` (a
    /// thread function that returns exits); a task's ops start at its `op_base`.
    pub(crate) ops: Vec<Op>,
    pub(crate) sems: Vec<Semaphore>,
    pub(crate) barriers: Vec<Barrier>,
    pub(crate) spinlocks: Vec<SpinLockState>,
    pub(crate) queue: EventQueue<Event>,
    /// The task hrtimers armed per CPU (their earliest expiry, for the idle governor).
    pub(crate) task_timers: queue::CpuTimers,
    pub(crate) policy: Box<dyn SchedPolicy>,
    pub(crate) act: Actions,
    pub(crate) counters: RunCounters,
    pub(crate) wakeup_latency: Histogram,
    /// Each run-queue wait, runnable to running (the distribution of schedstat's
    /// `run_delay` / `pcount`: one sample per switch-in).
    pub(crate) schedule_delay: Histogram,
    pub(crate) metrics: Vec<Histogram>,
    pub(crate) metric_names: Vec<String>,
    pub(crate) ops_done: u64,
    /// `ops_done` without warm-up resets.
    pub(crate) ops_total: u64,
    /// Periodic timers (`Op::TimerStart`/`Op::TimerWait`): next expiry, once started.
    pub(crate) timers: Vec<Option<u64>>,
    /// The plan's CPU-mask table (`Op::SetAffinity`).
    pub(crate) cpumasks: Vec<CpuMask>,
    pub(crate) snapshots: Vec<Snapshot>,
    /// Set by `Op::Stop`.
    pub(crate) stop_requested: bool,
    /// Stop requests and progress from outside ([`control`]), polled every few events.
    pub(crate) control: Option<control::RunControl>,
    pub(crate) events: u64,
    /// Popped queue entries that did nothing (superseded by a later re-plan: a stale
    /// generation, or an early entry re-queued at its new time). Counted in `events` too
    /// (the JSON's count); `schedlab bench` reports them apart.
    pub(crate) superseded: u64,
    pub(crate) live_tasks: usize,
    pub(crate) stats_start_ns: u64,
    pub(crate) end_ns: Option<u64>,
    pub(crate) migration_log: Vec<MigrationRecord>,
    pub(crate) migration_log_dropped: u64,
    pub(crate) invariant_violations: invariants::ViolationLog,
    /// The scheduling watchdog's findings ([`watchdog`]), kept in every run.
    pub(crate) warnings: invariants::ViolationLog,
    /// When the watchdog runs next.
    pub(crate) watchdog_next_ns: u64,
    /// Migration ping-pongs (every migration, not only the logged ones).
    pub(crate) ping_pong: PingPong,
    /// Trace / `--explain` observer; `None` costs one branch per scheduling point.
    pub(crate) observer: Option<Box<dyn Observer>>,
    /// A benchmark's interval output, called at each snapshot (see [`IntervalHook`]).
    pub(crate) interval_hook: Option<Box<dyn IntervalHook>>,
    /// Reused buffer: CPUs whose policy timer changed during the last event.
    pub(crate) timer_changes: Vec<usize>,
    /// Dynamic memory and NUMA balancing ([`numa`]); `None` when no task has a working set.
    pub(crate) numa: Option<Box<numa::EngineNuma>>,
    /// NUMA pages per node over time ([`numa_series`]); `None` unless the run qualifies.
    pub(crate) numa_series: Option<Box<numa_series::NumaPagesSeries>>,
    /// When the series takes its next sample (`u64::MAX`: never).
    pub(crate) numa_series_next_ns: u64,
}

/// One migration, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MigrationRecord {
    pub time_ns: u64,
    pub task: TaskId,
    pub from: usize,
    pub to: usize,
    pub reason: MigrationReason,
}

/// A counting semaphore with a FIFO wait list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Semaphore {
    pub count: u64,
    pub waiters: std::collections::VecDeque<TaskId>,
    /// Timestamps handed along with units posted by `Op::UpStamped` and not yet taken:
    /// (mark slot, time).
    pub stamps: std::collections::VecDeque<(u8, u64)>,
}

/// A barrier: releases everyone when `count` tasks have arrived.
#[derive(Debug, Clone, Default)]
pub(crate) struct Barrier {
    pub waiters: Vec<TaskId>,
}

/// A user-space spin lock: its holder and the tasks spinning on it, in arrival order.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpinLockState {
    pub owner: Option<TaskId>,
    pub spinners: std::collections::VecDeque<TaskId>,
}

/// Why a workload plan cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("task {task} ('{comm}') names program {program}, but only {nr} exist")]
    NoProgram {
        task: usize,
        comm: String,
        program: u32,
        nr: usize,
    },
    #[error("task {task} ('{comm}') may run on no online CPU")]
    NoAllowedCpu { task: usize, comm: String },
    #[error("program '{name}' op {op} refers to {what} {id}, which does not exist")]
    BadReference {
        name: String,
        op: usize,
        what: &'static str,
        id: u32,
    },
    #[error("program '{0}' is empty")]
    EmptyProgram(String),
    #[error(
        "task {task} ('{comm}') sets its affinity to CPUs '{mask}', none of which is online \
         in its cpuset ('{cpuset}'): sched_setaffinity() would fail with EINVAL"
    )]
    EmptyAffinity {
        task: usize,
        comm: String,
        mask: String,
        cpuset: String,
    },
}

impl Engine {
    /// Set up a run: validate the plan and create tasks and CPUs. Nothing happens until
    /// [`Engine::run`].
    pub fn new(
        machine: Machine,
        cost: CostModel,
        cfg: EngineConfig,
        policy: Box<dyn SchedPolicy>,
        plan: WorkloadPlan,
    ) -> Result<Engine, PlanError> {
        validate_plan(&machine, &plan)?;
        let online = machine.online;
        let (ops, op_bases) = flatten_programs(&plan.programs);
        let tasks = (plan.tasks.iter().enumerate())
            .map(|(i, spec)| {
                let mut t = new_task(i, spec, &online, cfg.seed);
                t.op_base = op_bases[spec.program as usize];
                t
            })
            .collect::<Vec<_>>();
        let cpus = (0..machine.nr_cpus())
            .map(|cpu| {
                let mut c = new_cpu(cpu, &cfg, &cost);
                // Every CPU starts idle: only itself counts as busy.
                c.smt_speed_base = smt_speed_base(&machine, &cost, cpu, 1);
                c
            })
            .collect();
        let (smt_speed_table, smt_speed_stride) = smt_speed_table(&machine, &cost);
        let queue = initial_queue(&plan, &cfg);
        let metrics = plan.metrics.iter().map(|_| Histogram::new()).collect();
        let nr_timers = nr_timers(&plan.programs);
        let noise = noise::Noise::new(cfg.noise, cfg.seed, tasks.len(), machine.nr_cpus());
        Ok(Engine {
            now_ns: 0,
            noise,
            live_tasks: tasks.len(),
            tasks,
            cpus,
            smt_siblings: (0..machine.nr_cpus())
                .map(|cpu| machine.smt_mask(cpu).iter().map(|s| s as u32).collect())
                .collect(),
            smt_speed_table,
            smt_speed_stride,
            ops,
            sems: plan
                .sems
                .iter()
                .map(|&count| Semaphore {
                    count,
                    waiters: Default::default(),
                    stamps: Default::default(),
                })
                .collect(),
            barriers: vec![Barrier::default(); plan.nr_barriers],
            spinlocks: vec![SpinLockState::default(); plan.nr_spinlocks],
            queue,
            task_timers: queue::CpuTimers::new(machine.nr_cpus()),
            policy,
            act: Actions::default(),
            counters: RunCounters::default(),
            wakeup_latency: Histogram::new(),
            schedule_delay: Histogram::new(),
            metrics,
            metric_names: plan.metrics,
            ops_done: 0,
            ops_total: 0,
            timers: vec![None; nr_timers],
            cpumasks: plan.cpumasks,
            snapshots: Vec::new(),
            stop_requested: false,
            control: None,
            events: 0,
            superseded: 0,
            stats_start_ns: 0,
            end_ns: None,
            migration_log: Vec::new(),
            migration_log_dropped: 0,
            invariant_violations: invariants::ViolationLog::new(),
            warnings: invariants::ViolationLog::new(),
            watchdog_next_ns: watchdog::WATCHDOG_PERIOD_NS,
            ping_pong: PingPong::new(cfg.pingpong_window_ns),
            observer: None,
            interval_hook: None,
            timer_changes: Vec::new(),
            numa: numa::EngineNuma::from_plan(
                &machine,
                &plan.tasks,
                cfg.seed,
                cost.llc_kib_per_cpu,
                cost.mem_bw_mib_s_per_node as f64,
            ),
            numa_series: None,
            numa_series_next_ns: u64::MAX,
            machine,
            cost,
            cfg,
        })
    }

    /// Run until every task has exited or the duration cap is reached.
    pub fn run(&mut self) -> &mut Self {
        if self.events == 0 {
            // Every online CPU starts in the idle loop.
            let online = self.machine.online;
            for cpu in online.iter() {
                self.enter_idle(cpu);
            }
            self.numa_series_start();
        }
        while let Some((time_ns, event)) = self.queue.pop() {
            assert!(
                time_ns >= self.now_ns,
                "virtual time went backwards: {time_ns} < {}",
                self.now_ns
            );
            if time_ns >= self.numa_series_next_ns {
                self.numa_series_sample(time_ns);
            }
            self.now_ns = time_ns;
            if time_ns >= self.watchdog_next_ns {
                self.watchdog();
            }
            self.events += 1;
            if self.dispatch(event) || self.stop_requested {
                break;
            }
            self.sync_policy_timers();
            if self.cfg.check_invariants {
                self.check_invariants();
                self.check_engine_invariants();
            }
            self.debug_check_engine();
            if self.live_tasks == 0 {
                break;
            }
            if self.events.is_multiple_of(control::POLL_EVERY_EVENTS)
                && let Some(c) = self.control.as_mut()
                && c.poll(self.now_ns)
            {
                break;
            }
        }
        if let Some(c) = self.control.as_mut() {
            c.finish(self.now_ns);
        }
        self.numa_series_end();
        self.finish();
        if self.cfg.check_invariants {
            self.check_end_invariants();
        }
        self
    }

    /// Handle one event; true = stop.
    fn dispatch(&mut self, event: Event) -> bool {
        match event {
            Event::Fork { task } => self.wake_up_new_task(task),
            Event::Continue { cpu, generation } => {
                let c = &mut self.cpus[cpu as usize];
                if c.done_gen == generation {
                    c.continue_queued_at = None;
                    if self.now_ns < c.continue_at_ns {
                        // Re-planned later since this event was queued.
                        let at = c.continue_at_ns;
                        c.continue_queued_at = Some(at);
                        self.queue.push(at, Event::Continue { cpu, generation });
                        self.superseded += 1;
                    } else {
                        self.continue_curr(cpu as usize);
                    }
                } else {
                    self.superseded += 1;
                }
            }
            Event::Tick { cpu, generation } => {
                let c = &mut self.cpus[cpu as usize];
                if c.tick_gen == generation {
                    c.tick_queued_at = None;
                    if c.tick_armed {
                        self.sched_tick(cpu as usize);
                    } else {
                        self.superseded += 1;
                    }
                } else {
                    self.superseded += 1;
                }
            }
            Event::HrTick { cpu, generation } => {
                if self.cpus[cpu as usize].hrtick_gen == generation {
                    self.hrtick(cpu as usize);
                } else {
                    self.superseded += 1;
                }
            }
            Event::Timer {
                task,
                cpu,
                generation,
            } => {
                if self.tasks[task.idx()].timer_gen == generation {
                    self.timer_fired(task);
                    self.hrtimer_expire(task, cpu as usize, generation);
                } else {
                    self.superseded += 1;
                }
            }
            Event::TimerWake {
                task,
                cpu,
                generation,
            } => {
                if self.tasks[task.idx()].timer_gen == generation {
                    self.timer_wakeup(task, cpu as usize);
                } else {
                    self.superseded += 1;
                }
            }
            Event::WakeListIpi { cpu } => self.handle_wake_list_ipi(cpu as usize),
            Event::ReschedIpi { cpu } => self.handle_resched_ipi(cpu as usize),
            Event::KickIpi { cpu } => self.handle_kick_ipi(cpu as usize),
            Event::Stopper { cpu } => self.handle_stopper(cpu as usize),
            Event::PolicyTimer { cpu, generation } => {
                let c = &mut self.cpus[cpu as usize];
                if c.policy_timer_gen == generation {
                    c.policy_timer_queued = None;
                    match c.policy_timer_at {
                        Some(at) if at > self.now_ns => {
                            c.policy_timer_queued = Some((at, generation));
                            self.queue.push(at, Event::PolicyTimer { cpu, generation });
                            self.superseded += 1;
                        }
                        Some(_) => self.policy_timer(cpu as usize),
                        None => self.superseded += 1,
                    }
                } else {
                    self.superseded += 1;
                }
            }
            Event::WarmupEnd => self.reset_counters(),
            Event::End => return true,
        }
        false
    }

    /// Simulated time now.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// Of [`Self::events`], the popped entries that did nothing (superseded).
    pub fn superseded_events(&self) -> u64 {
        self.superseded
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub fn cpus(&self) -> &[CpuCore] {
        &self.cpus
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    pub fn counters(&self) -> &RunCounters {
        &self.counters
    }

    pub fn wakeup_latency(&self) -> &Histogram {
        &self.wakeup_latency
    }

    /// Each run-queue wait since the statistics started (one sample per switch-in).
    pub fn schedule_delay(&self) -> &Histogram {
        &self.schedule_delay
    }

    /// Latency histograms of the workload's metrics, with their names.
    pub fn metrics(&self) -> impl Iterator<Item = (&str, &Histogram)> {
        self.metric_names
            .iter()
            .map(String::as_str)
            .zip(self.metrics.iter())
    }

    /// Completed workload operations (`Op::CountOp`).
    pub fn ops_done(&self) -> u64 {
        self.ops_done
    }

    /// Every `Op::CountOp` since the start, warm-up included.
    pub fn ops_total(&self) -> u64 {
        self.ops_total
    }

    /// Snapshots taken by `Op::Snapshot`, in time order.
    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    /// Units currently held by semaphore `sem` (a per-task counter when only posted).
    pub fn sem_count(&self, sem: SemId) -> u64 {
        self.sems[sem as usize].count
    }

    /// Attach a stop/progress control before [`Engine::run`] (it only observes unless a stop
    /// is requested).
    pub fn set_control(&mut self, c: control::RunControl) {
        self.control = Some(c);
    }

    /// Whether a stop request (SIGINT/SIGTERM) cut the run short.
    pub fn interrupted(&self) -> bool {
        self.control
            .as_ref()
            .is_some_and(control::RunControl::stopped)
    }

    /// Whether an `Op::Stop` ended the run.
    pub fn stopped(&self) -> bool {
        self.stop_requested
    }

    pub fn migration_log(&self) -> &[MigrationRecord] {
        &self.migration_log
    }

    /// Migration ping-pongs of the measured interval.
    pub fn ping_pong(&self) -> &PingPong {
        &self.ping_pong
    }

    /// Attach an observer (a trace / `--explain` recorder) before [`Engine::run`]; the
    /// caller has called its [`Observer::start`]. It only observes: the run's decisions are
    /// the same with or without it.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        self.observer = Some(observer);
    }

    /// Attach a benchmark's interval output (e.g. schbench's periodic reports) before
    /// [`Engine::run`]; it is called at each snapshot a task program takes.
    pub fn set_interval_hook(&mut self, hook: Box<dyn IntervalHook>) {
        self.interval_hook = Some(hook);
    }

    /// Detach the observer after the run (for a recorder: its trace is complete and flushed).
    pub fn take_observer(&mut self) -> Option<Box<dyn Observer>> {
        self.observer.take()
    }

    /// The recorded invariant violations (the first
    /// [`invariants::VIOLATIONS_KEPT`]; see [`Engine::invariant_violations_dropped`]).
    pub fn invariant_violations(&self) -> &[String] {
        self.invariant_violations.kept()
    }

    /// Violations beyond the kept ones (only counted, so memory stays bounded).
    pub fn invariant_violations_dropped(&self) -> u64 {
        self.invariant_violations.dropped()
    }

    /// `/proc/schedstat` version 17 text of the run so far (None for policies without
    /// schedstats).
    pub fn schedstat_text(&self) -> Option<String> {
        use crate::sched::balance::schedstat::RqSchedstat;
        let rq: Vec<RqSchedstat> = self
            .cpus
            .iter()
            .map(|c| RqSchedstat {
                yld_count: c.stats.yld_count,
                sched_count: c.stats.sched_count,
                sched_goidle: c.stats.sched_goidle,
                ttwu_count: c.stats.ttwu_count,
                ttwu_local: c.stats.ttwu_local,
                rq_cpu_time: c.stats.busy_ns,
                run_delay: c.stats.run_delay_ns,
                pcount: c.stats.pcount,
            })
            .collect();
        let jiffies = self.now_ns / (1_000_000_000 / self.cfg.hz as u64);
        self.policy.schedstat_text(&rq, jiffies)
    }

    pub fn policy(&self) -> &dyn SchedPolicy {
        self.policy.as_ref()
    }

    /// Start of the measured interval (end of warm-up).
    pub fn stats_start_ns(&self) -> u64 {
        self.stats_start_ns
    }

    /// When the run ended (all tasks exited, or the duration cap).
    pub fn end_ns(&self) -> u64 {
        self.end_ns.unwrap_or(self.now_ns)
    }

    /// Whether every task exited before the cap.
    pub fn all_exited(&self) -> bool {
        self.live_tasks == 0
    }
}

/// Check a workload plan against the machine as [`Engine::new`] does (`Engine::new` runs it
/// first), so that a scenario can be checked before any run.
pub fn validate_plan(machine: &Machine, plan: &WorkloadPlan) -> Result<(), PlanError> {
    for p in &plan.programs {
        if p.ops.is_empty() {
            return Err(PlanError::EmptyProgram(p.name.clone()));
        }
        for (i, op) in p.ops.iter().enumerate() {
            let bad = |what, id| PlanError::BadReference {
                name: p.name.clone(),
                op: i,
                what,
                id,
            };
            match *op {
                Op::Down { sem }
                | Op::Up { sem, .. }
                | Op::UpMany { sem, .. }
                | Op::TryDown { sem, .. }
                | Op::UpStamped { sem, .. }
                | Op::UpThreshold { sem, .. }
                | Op::Wake { sem, .. }
                    if sem as usize >= plan.sems.len() =>
                {
                    return Err(bad("semaphore", sem as SemId));
                }
                Op::DownAll { sem, into }
                    if sem as usize >= plan.sems.len() || into as usize >= plan.sems.len() =>
                {
                    return Err(bad("semaphore", sem.max(into) as SemId));
                }
                Op::TryDown { else_to: to, .. } if to as usize >= p.ops.len() => {
                    return Err(bad("op", to));
                }
                Op::UpStamped { slot, .. } if slot >= 4 => {
                    return Err(bad("mark slot", slot as u32));
                }
                Op::DutyCall { load_pct, .. } if load_pct == 0 || load_pct >= 100 => {
                    return Err(bad("load percentage (1-99)", load_pct as u32));
                }
                Op::DutyCall { exit_to, .. } if exit_to as usize >= p.ops.len() => {
                    return Err(bad("op", exit_to));
                }
                Op::SpinLock { lock } | Op::SpinUnlock { lock }
                    if lock as usize >= plan.nr_spinlocks =>
                {
                    return Err(bad("spin lock", lock));
                }
                Op::PerCpuSpinLock { base }
                    if base as usize + machine.nr_cpus() > plan.nr_spinlocks =>
                {
                    return Err(bad("per-CPU spin lock base", base));
                }
                Op::Fork { task }
                    if plan.tasks.get(task as usize).map(|t| t.start_ns)
                        != Some(TaskSpec::START_ON_FORK_OP) =>
                {
                    return Err(bad(
                        "task forked by an op (start_ns = START_ON_FORK_OP)",
                        task,
                    ));
                }
                Op::Barrier { id, .. } if id as usize >= plan.nr_barriers => {
                    return Err(bad("barrier", id));
                }
                Op::Loop { to, .. } | Op::Jump { to } if to as usize >= p.ops.len() => {
                    return Err(bad("op", to));
                }
                Op::Loop { slot, .. } if slot >= 4 => return Err(bad("loop slot", slot as u32)),
                Op::Mark { slot } | Op::Sample { slot, .. } if slot >= 4 => {
                    return Err(bad("mark slot", slot as u32));
                }
                Op::Sample { metric, .. } if metric as usize >= plan.metrics.len() => {
                    return Err(bad("metric", metric as u32));
                }
                _ => {}
            }
        }
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        if t.program as usize >= plan.programs.len() {
            return Err(PlanError::NoProgram {
                task: i,
                comm: t.comm.clone(),
                program: t.program,
                nr: plan.programs.len(),
            });
        }
        let cpuset = task_cpuset(t, &machine.online);
        let allowed = t.cpus_allowed.unwrap_or(machine.online).and(&cpuset);
        if allowed.is_empty() {
            return Err(PlanError::NoAllowedCpu {
                task: i,
                comm: t.comm.clone(),
            });
        }
        validate_affinities(plan, i, &cpuset)?;
    }
    Ok(())
}

/// Online CPUs of a task's cpuset.
fn task_cpuset(spec: &TaskSpec, online: &CpuMask) -> CpuMask {
    spec.cpuset.unwrap_or(*online).and(online)
}

/// Every `SetAffinity` of task `i`'s program names an existing mask that leaves it an
/// online CPU of its cpuset (else the real `sched_setaffinity()` fails with EINVAL, and the
/// benchmarks exit on that error).
fn validate_affinities(plan: &WorkloadPlan, i: usize, cpuset: &CpuMask) -> Result<(), PlanError> {
    let t = &plan.tasks[i];
    let prog = &plan.programs[t.program as usize];
    for (op_i, op) in prog.ops.iter().enumerate() {
        let Op::SetAffinity { mask } = *op else {
            continue;
        };
        let Some(m) = plan.cpumasks.get(mask as usize) else {
            return Err(PlanError::BadReference {
                name: prog.name.clone(),
                op: op_i,
                what: "CPU mask",
                id: mask,
            });
        };
        if m.and(cpuset).is_empty() {
            return Err(PlanError::EmptyAffinity {
                task: i,
                comm: t.comm.clone(),
                mask: m.to_string(),
                cpuset: cpuset.to_string(),
            });
        }
    }
    Ok(())
}

/// The task `i` of a plan, as it is before its fork: `TaskState::New`, its cpuset and
/// affinity resolved against the `online` CPUs, its own random stream.
fn new_task(i: usize, spec: &TaskSpec, online: &CpuMask, seed: u64) -> Task {
    Task {
        id: TaskId(i as u32),
        comm: spec.comm.clone(),
        state: TaskState::New,
        cpu: spec.parent_cpu,
        on_rq: false,
        cpus_allowed: task_cpuset(spec, online).and(&spec.cpus_allowed.unwrap_or(*online)),
        cpuset: task_cpuset(spec, online),
        nice: spec.nice,
        policy: spec.policy,
        mempolicy: spec.mempolicy,
        mem_intensity_permille: spec.mem_intensity_permille.min(1000),
        numa_pages: Vec::new(),
        footprint_kib: spec.footprint_kib,
        last_ran_cpu: None,
        stats: TaskStats::default(),
        op_base: 0,
        pc: 0,
        loop_counts: [0; 4],
        marks_ns: [0; 4],
        remaining_work: 0,
        in_run: false,
        refill_debt: 0,
        progress_mark_ns: 0,
        exec_start_ns: 0,
        runnable_since_ns: 0,
        woken_at_ns: None,
        perf_migrated: false,
        timer_gen: 0,
        timer_armed: None,
        wasted_core_reported: false,
        rng: RngStream::new(seed, StreamKind::Task, i as u64),
        duty: DutyState::default(),
        last_move: None,
        on_cpu_until_ns: 0,
        wake_delayed_from: None,
        spinning: false,
        spin_lock_id: 0,
        held_percpu_lock: None,
        forked: false,
    }
}

/// [`smt_speed_base`] for every CPU and every busy count from 1 to the widest SMT mask:
/// the table and its stride (see `Engine::smt_speed_table`).
fn smt_speed_table(machine: &Machine, cost: &CostModel) -> (Vec<u64>, usize) {
    let nr_cpus = machine.nr_cpus();
    let stride = (0..nr_cpus)
        .map(|cpu| machine.smt_mask(cpu).weight())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut table = Vec::with_capacity(nr_cpus * stride);
    for cpu in 0..nr_cpus {
        table.extend((1..=stride).map(|busy| smt_speed_base(machine, cost, cpu, busy)));
    }
    (table, stride)
}

/// A task's speed on `cpu` in 1/1024 before memory effects, with `busy` busy SMT
/// siblings (itself included): capacity × SMT contention × the machine's `speed_pct` ×
/// the share left by non-task work.
pub(crate) fn smt_speed_base(machine: &Machine, cost: &CostModel, cpu: usize, busy: usize) -> u64 {
    machine.cpus[cpu].capacity as u64 * cost.smt_speed(busy) / 1024 * u64::from(cost.speed_pct)
        / 100
        * u64::from(100 - cost.nontask_pct_of(cpu))
        / 100
}

/// CPU `cpu` at the start of a run: idle, no tick, no timers.
fn new_cpu(cpu: usize, cfg: &EngineConfig, cost: &CostModel) -> CpuCore {
    CpuCore {
        cpu,
        curr: None,
        wake_list: Vec::with_capacity(16),
        need_resched: false,
        need_resched_lazy: false,
        idle_stamp_ns: 0,
        idle_since_ns: 0,
        avg_idle_ns: 2 * cfg.migration_cost_ns,
        idle_state: 0,
        idle_polling: false,
        tick_stopped: false,
        cpuidle: crate::cpuidle::CpuIdleDev::new(cost.cpuidle_governor, cost.haltpoll),
        idle_iter_start_ns: None,
        busy_until_ns: 0,
        rq_lock_free_at_ns: 0,
        speed: 1024,
        smt_speed_base: 0,
        ipi_pending: false,
        resched_ipi_pending: false,
        done_gen: 0,
        continue_at_ns: 0,
        continue_queued_at: None,
        tick_gen: 0,
        hrtick_gen: 0,
        tick_armed: false,
        tick_queued_at: None,
        policy_timer_at: None,
        policy_timer_queued: None,
        policy_timer_gen: 0,
        busy_since_ns: 0,
        distribute_cpu_mask_prev: 0,
        stats: CpuStats::default(),
    }
}

/// The events a run starts with: each task's fork (except those a `Fork` op starts), the
/// end, and the end of the warm-up.
fn initial_queue(plan: &WorkloadPlan, cfg: &EngineConfig) -> EventQueue<Event> {
    let mut queue = EventQueue::new();
    for (i, spec) in plan.tasks.iter().enumerate() {
        if spec.start_ns == TaskSpec::START_ON_FORK_OP {
            continue;
        }
        queue.push(
            spec.start_ns,
            Event::Fork {
                task: TaskId(i as u32),
            },
        );
    }
    queue.push(cfg.duration_ns, Event::End);
    if cfg.warmup_ns > 0 && cfg.warmup_ns < cfg.duration_ns {
        queue.push(cfg.warmup_ns, Event::WarmupEnd);
    }
    queue
}

/// How many program timers a plan uses (one past the highest `TimerStart`/`TimerWait` id).
/// All programs' ops in one table, each followed by an `Exit`, and each program's first
/// index. `validate_plan()` has kept every jump inside its program.
fn flatten_programs(programs: &[Program]) -> (Vec<Op>, Vec<u32>) {
    let total: usize = programs.iter().map(|p| p.ops.len() + 1).sum();
    assert!(
        u32::try_from(total).is_ok(),
        "{total} ops do not fit the interpreter's u32 index"
    );
    let mut ops = Vec::with_capacity(total);
    let mut bases = Vec::with_capacity(programs.len());
    for p in programs {
        bases.push(ops.len() as u32);
        ops.extend_from_slice(&p.ops);
        ops.push(Op::Exit);
    }
    (ops, bases)
}

fn nr_timers(programs: &[Program]) -> usize {
    programs
        .iter()
        .flat_map(|p| p.ops.iter())
        .filter_map(|op| match *op {
            Op::TimerStart { timer } | Op::TimerWait { timer, .. } => Some(timer as usize + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
