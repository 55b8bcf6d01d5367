//! Scheduler-level types shared by the mechanisms in [`crate::sched`] and the policies above
//! them: why a task moved (`MigrationReason`), a balancing migration, the wake flags
//! (`WF_*`) and wakeup context, the placement result of `select_task_rq()`, the balance
//! idle type (`enum cpu_idle_type`), and the plain data NUMA balancing hands across the
//! policy boundary (a `task_numa_migrate()` decision, the `/proc/vmstat` counters). They live
//! here, at the bottom of the scheduler layer, so that `sched` never imports from `policy`,
//! and so that the engine reaches `sched` only through this module (scripts/check-layers).

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

/// What `task_numa_migrate()` (`sched::numa::migrate`) decided, for the engine's migration
/// stopper to carry out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaMove {
    /// `migrate_task_to(p, cpu)` (`sched_move_numa`).
    Move { dst_cpu: usize },
    /// `migrate_swap(p, other, cpu, src_cpu)` (`sched_swap_numa`).
    Swap { dst_cpu: usize, other: TaskId },
    /// No candidate (`-EAGAIN`, `sched_stick_numa`).
    Stay,
    /// No SD_NUMA domain above the task's CPU (`-EINVAL`): the preferred node becomes the
    /// current one.
    NoNumaDomain,
}

/// The full outcome of `task_numa_migrate()`: the move plus its side effects (applied to the
/// NUMA-balancing state by the policy's `NumaBalancing`, the move by the engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaMigrateDecision {
    pub action: NumaMove,
    /// `sched_setnuma(p, nid)` to apply (re-account the rq NUMA counters).
    pub set_preferred: Option<usize>,
    /// `p->numa_scan_period = task_scan_min(p)` (≤ v4.18, on success).
    pub reset_scan_period: bool,
    /// The rq whose `numa_migrate_on` is held until the migration is done (v4.19+).
    pub claimed_cpu: Option<usize>,
    /// Score of the chosen candidate.
    pub best_imp: i64,
}

/// The NUMA balancing `/proc/vmstat` counters (base pages / events).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub struct Vmstat {
    pub numa_pte_updates: u64,
    pub numa_hint_faults: u64,
    pub numa_hint_faults_local: u64,
    pub numa_pages_migrated: u64,
    pub pgmigrate_success: u64,
    pub pgmigrate_fail: u64,
    /// `numa_task_migrated` / `numa_task_swapped` (v6.16+ vm events, "sched/numa: add
    /// statistics of numa balance task"): NUMA task moves (`migrate_task_to()`) and swaps
    /// (`migrate_swap()`) applied, one per decision (counted for every release here).
    #[serde(default)]
    pub numa_task_migrated: u64,
    #[serde(default)]
    pub numa_task_swapped: u64,
}

impl Vmstat {
    /// `/proc/vmstat` lines (`name value`), in the kernel's `vmstat_text[]` order.
    pub fn proc_text(&self) -> String {
        let rows = [
            ("numa_pte_updates", self.numa_pte_updates),
            (
                "numa_huge_pte_updates",
                self.numa_pte_updates / crate::memory::PAGES_PER_GROUP,
            ),
            ("numa_hint_faults", self.numa_hint_faults),
            ("numa_hint_faults_local", self.numa_hint_faults_local),
            ("numa_pages_migrated", self.numa_pages_migrated),
            ("pgmigrate_success", self.pgmigrate_success),
            ("pgmigrate_fail", self.pgmigrate_fail),
            ("numa_task_migrated", self.numa_task_migrated),
            ("numa_task_swapped", self.numa_task_swapped),
        ];
        rows.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }
}
