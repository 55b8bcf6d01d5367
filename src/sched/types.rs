//! Scheduler-level types shared by the mechanisms in [`crate::sched`] and the policies above
//! them: why a task moved (`MigrationReason`), a balancing migration, the wake flags
//! (`WF_*`) and wakeup context, the placement result of `select_task_rq()`, and the balance
//! idle type (`enum cpu_idle_type`). They live here, at the bottom of the scheduler layer, so
//! that `sched` never imports from `policy`; `policy` re-exports them.

use crate::task::TaskId;

/// Why a task changed CPU (the contract's `migrations.by_reason` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MigrationReason {
    Wakeup,
    Fork,
    LoadBalance,
    NewidleBalance,
    NohzIdleBalance,
    ActiveBalance,
    Numa,
    NumaSwap,
    /// A non-Linux policy dispatched a queued task to another CPU.
    Dispatch,
    /// The task's affinity changed and excluded its CPU: the migration stopper moved it
    /// (`__set_cpus_allowed_ptr()` → `affine_move_task()` → `migration_cpu_stop()`).
    Affinity,
    /// `sched_exec()` placed the task on another CPU at `execve()` (SD_BALANCE_EXEC); the
    /// migration stopper moved it.
    Exec,
}

impl MigrationReason {
    pub const ALL: [MigrationReason; MigrationReason::COUNT] = [
        MigrationReason::Wakeup,
        MigrationReason::Fork,
        MigrationReason::LoadBalance,
        MigrationReason::NewidleBalance,
        MigrationReason::NohzIdleBalance,
        MigrationReason::ActiveBalance,
        MigrationReason::Numa,
        MigrationReason::NumaSwap,
        MigrationReason::Dispatch,
        MigrationReason::Affinity,
        MigrationReason::Exec,
    ];

    /// Number of reasons (length of per-reason counter arrays).
    pub const COUNT: usize = 11;

    pub fn name(self) -> &'static str {
        match self {
            MigrationReason::Wakeup => "wakeup",
            MigrationReason::Fork => "fork",
            MigrationReason::LoadBalance => "load_balance",
            MigrationReason::NewidleBalance => "newidle_balance",
            MigrationReason::NohzIdleBalance => "nohz_idle_balance",
            MigrationReason::ActiveBalance => "active_balance",
            MigrationReason::Numa => "numa",
            MigrationReason::NumaSwap => "numa_swap",
            MigrationReason::Dispatch => "dispatch",
            MigrationReason::Affinity => "affinity",
            MigrationReason::Exec => "exec",
        }
    }
}

/// A migration decided by the policy outside the wakeup path (balancing). The policy has
/// already moved the task between its runqueues; the engine updates `task_cpu` and counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub task: TaskId,
    pub from: usize,
    pub to: usize,
    pub reason: MigrationReason,
}

/// Wake flags (`WF_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeFlags {
    /// WF_SYNC: the waker is about to sleep.
    pub sync: bool,
    /// WF_FORK: placement of a new task.
    pub fork: bool,
    /// WF_TTWU: an ordinary wakeup.
    pub ttwu: bool,
    /// WF_EXEC: balancing at `execve()` (`sched_exec()`).
    pub exec: bool,
}

/// Context of a wakeup placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeCtx {
    /// The CPU doing the wakeup (`smp_processor_id()`).
    pub this_cpu: usize,
    /// The task running on `this_cpu`, when the waker is a task (not an interrupt).
    pub waker: Option<TaskId>,
    pub flags: WakeFlags,
}

/// Which path placed a task, for explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPath {
    /// The task may run on one CPU only.
    Pinned,
    /// `select_idle_sibling()` (fast path).
    SelectIdleSibling,
    /// `sched_balance_find_dst_cpu()` / `find_idlest_cpu()` (slow path).
    FindIdlest,
    /// A policy-specific path.
    Other,
}

/// Result of `select_task_rq()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub cpu: usize,
    pub path: PlacementPath,
}

/// Idle type of a balance pass (`enum cpu_idle_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleType {
    /// CPU_IDLE: periodic balance on an idle CPU (or on behalf of one, NOHZ).
    Idle,
    /// CPU_NOT_IDLE: periodic balance on a busy CPU.
    NotIdle,
    /// CPU_NEWLY_IDLE: the CPU is about to go idle.
    NewlyIdle,
}

/// `enum group_type`, in the kernel's order (= pull priority, lowest first; least busy first
/// for the wakeup slow path). One type for load balancing and `find_idlest_group()`, as in
/// the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupType {
    HasSpare,
    FullyBusy,
    MisfitTask,
    SmtBalance,
    AsymPacking,
    Imbalanced,
    Overloaded,
}

impl GroupType {
    /// The kernel's enumerator name.
    pub fn name(self) -> &'static str {
        match self {
            GroupType::HasSpare => "group_has_spare",
            GroupType::FullyBusy => "group_fully_busy",
            GroupType::MisfitTask => "group_misfit_task",
            GroupType::SmtBalance => "group_smt_balance",
            GroupType::AsymPacking => "group_asym_packing",
            GroupType::Imbalanced => "group_imbalanced",
            GroupType::Overloaded => "group_overloaded",
        }
    }
}

/// The per-CPU counters of `/proc/schedstat`'s `cpu<N>` line: kept by the engine, printed by
/// the policy's writer (`sched::balance::schedstat`). Plain data here, so the engine need not
/// reach into `sched::balance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqSchedstat {
    /// `sched_yield()` calls.
    pub yld_count: u64,
    /// `schedule()` calls.
    pub sched_count: u64,
    /// `schedule()` calls that left the CPU idle.
    pub sched_goidle: u64,
    /// `try_to_wake_up()` calls made on this CPU.
    pub ttwu_count: u64,
    /// … of which woke a task onto this CPU.
    pub ttwu_local: u64,
    /// Time tasks ran on this CPU, ns.
    pub rq_cpu_time: u64,
    /// Time tasks waited on this runqueue, ns.
    pub run_delay: u64,
    /// Timeslices run on this CPU.
    pub pcount: u64,
}
