//! The engine's tasks: their scheduling-visible state, program position and statistics
//! (`struct task_struct` as far as the scheduler reads it).

use super::pingpong;
use super::plan::task_cpuset;
use crate::cpumask::CpuMask;
use crate::rng::{RngStream, StreamKind};
use crate::sched::types::MigrationReason;
use crate::task::{TaskId, TaskPolicy, TaskSpec, TaskState};

/// The per-task counters the results report as they are (`runs[].tasks[]`: the results'
/// `TaskResult` flattens them), named as `/proc/PID/sched` names them; one home for their
/// names.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct TaskCounters {
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
}

/// Per-task statistics: the reported counters and the migrations by reason.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TaskStats {
    #[serde(flatten)]
    pub counters: TaskCounters,
    /// Migrations by [`MigrationReason`] (index = position in `MigrationReason::ALL`).
    pub migrations_by_reason: [u64; MigrationReason::COUNT],
}

/// A simulated task: its scheduling-visible state plus its program position.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: TaskId,
    pub comm: String,
    /// A system task (a background kernel thread or daemon, [`Engine::set_system_tasks`]):
    /// scheduled as every task, counted apart from the workloads.
    ///
    /// [`Engine::set_system_tasks`]: super::Engine::set_system_tasks
    pub system: bool,
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
    ///
    /// [`Engine::ops`]: super::Engine::ops
    pub(crate) op_base: u32,
    pub(crate) pc: u32,
    pub(crate) loop_counts: [u32; 4],
    pub(crate) marks_ns: [u64; 4],
    /// The semaphore this task last blocked on in a `Down`, until an `Op::WakeNext` of it
    /// reads it (`pipe_write()`'s `wake_next_writer`: only a writer that waited wakes the
    /// next one).
    pub(crate) waited_on: Option<u32>,
    /// Work left in the current `Run` op (ns at speed 1024), valid while `in_run`.
    pub(crate) remaining_work: u64,
    /// `Op::SpinWall` in progress: the wall-clock time its spin ends (its run ends at the
    /// first moment the task is on a CPU at or after it).
    pub(crate) spin_deadline_ns: Option<u64>,
    pub(crate) in_run: bool,
    /// Cache-refill work owed since the last migration.
    pub(crate) refill_debt: u64,
    /// Hand-off cache lines owed from the semaphore units taken since the last `Run`: the
    /// poster's CPU (the latest, when several) and the lines (`Semaphore::handoff_lines`).
    pub(crate) handoff: Option<(u32, u16)>,
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
    /// Units of the `Op::UpMany` in progress still to post (0: none in progress).
    pub(crate) ups_left: u32,
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

/// The plan's tasks before their forks, each starting at its program's first op
/// (`op_bases`, by program).
pub(super) fn new_tasks(
    specs: &[TaskSpec],
    op_bases: &[u32],
    online: &CpuMask,
    seed: u64,
) -> Vec<Task> {
    (specs.iter().enumerate())
        .map(|(i, spec)| {
            let mut t = new_task(i, spec, online, seed);
            t.op_base = op_bases[spec.program as usize];
            t
        })
        .collect()
}

/// The task `i` of a plan, as it is before its fork: `TaskState::New`, its cpuset and
/// affinity resolved against the `online` CPUs, its own random stream.
fn new_task(i: usize, spec: &TaskSpec, online: &CpuMask, seed: u64) -> Task {
    Task {
        id: TaskId::from_index(i),
        comm: spec.comm.clone(),
        system: false,
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
        waited_on: None,
        remaining_work: 0,
        spin_deadline_ns: None,
        in_run: false,
        refill_debt: 0,
        handoff: None,
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
        ups_left: 0,
    }
}
