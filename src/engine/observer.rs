//! The engine's observation points: an [`Observer`] sees every scheduling event the engine
//! produces (`sched_switch`, `sched_waking`, `sched_wakeup(_new)`, `sched_migrate_task` with
//! its [`MigrationReason`], `sched_process_exit`, wakeup placements and queued wakeups) in
//! virtual-time order, like a tracepoint probe. The trace writer and the `--explain`
//! history in the stats layer's trace module implement it; the engine never names them.
//!
//! Rules: an observer only reads (it gets shared references, and nothing it returns reaches
//! a decision), so a run's results are the same with or without one; the engine calls it
//! through one `Option<Box<dyn Observer>>` (one branch per point when absent) and passes
//! borrowed data only, so observing allocates nothing per event on the engine's side.
//! Counters the results need (migrations by reason, ping-pongs, latency histograms) stay in
//! the engine's own accounting; they are not observers.
//!
//! [`IntervalHook`] is the other probe: a benchmark's interval output (schbench's periodic
//! reports) computed from the snapshots its statistics thread takes, as simulated time passes.
//!
//! Left out: balance-pass events (`sched_balance_rq` outcomes) — the policy keeps them in its
//! schedstats, and no observer needs them yet.

use std::any::Any;

use super::{Snapshot, Task};
use crate::sched::types::{MigrationReason, Placement};

/// The state a task leaves the CPU in (`prev_state` of `sched_switch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable, gave the CPU up itself (`sched_yield()`): `R`.
    Runnable,
    /// Preempted: `R+`.
    Preempted,
    /// Blocked (TASK_INTERRUPTIBLE: futex, pipe, sleep): `S`.
    Sleeping,
    /// Exiting: `X`.
    Dead,
}

impl PrevState {
    /// The value `__trace_sched_switch_state()` gives on kernels >= 4.14.
    pub fn bits(self) -> i64 {
        match self {
            PrevState::Runnable => 0,
            PrevState::Preempted => 0x100,
            PrevState::Sleeping => 0x1,
            PrevState::Dead => 0x10,
        }
    }

    /// How the `sched_switch` format prints it.
    pub fn letters(self) -> &'static str {
        match self {
            PrevState::Runnable => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Dead => "X",
        }
    }
}

/// A probe on the engine's scheduling points. Every method has an empty default.
pub trait Observer: Send + Any {
    /// Before the first event: the tasks that exist at start and the number of CPUs.
    fn start(&mut self, _tasks: &[Task], _nr_cpus: usize) {}

    /// `sched_switch` on `cpu` (`None` = the idle task).
    fn switch(
        &mut self,
        _ts_ns: u64,
        _cpu: usize,
        _prev: Option<&Task>,
        _prev_state: PrevState,
        _next: Option<&Task>,
    ) {
    }

    /// `sched_waking`, on the waker's CPU (`curr` runs there).
    fn waking(&mut self, _ts_ns: u64, _cpu: usize, _curr: Option<&Task>, _p: &Task) {}

    /// `sched_wakeup` / `sched_wakeup_new` (`new`), once `p` is queued on `p.cpu`.
    fn wakeup(&mut self, _ts_ns: u64, _cpu: usize, _curr: Option<&Task>, _p: &Task, _new: bool) {}

    /// `sched_migrate_task` with the reason of the move.
    fn migrate(&mut self, _ev: &MigrateEvent<'_>) {}

    /// `sched_process_exit`, on the exiting task's CPU.
    fn exit(&mut self, _ts_ns: u64, _cpu: usize, _p: &Task) {}

    /// A placement by `select_task_rq()` (wakeup or fork) and the CPU it resulted in.
    fn placement(&mut self, _ev: &PlacementEvent<'_>) {}

    /// A wakeup queued on a remote CPU's wake list (TTWU_QUEUE) instead of placed now.
    fn wakeup_queued(&mut self, _ts_ns: u64, _p: &Task, _this_cpu: usize, _waker: Option<&Task>) {}

    /// End of the run: the tasks still running, per CPU.
    fn finish(&mut self, _ts_ns: u64, _running: &[(usize, &Task)]) {}

    /// The observer back as its own type, after the run (`Box<dyn Any>::downcast`).
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// `sched_migrate_task`: `p` moved from CPU `from` to `to` for `reason`, done on `cpu`
/// (running `curr`) at `ts_ns`.
pub struct MigrateEvent<'a> {
    pub ts_ns: u64,
    pub cpu: usize,
    pub curr: Option<&'a Task>,
    pub p: &'a Task,
    pub from: usize,
    pub to: usize,
    pub reason: MigrationReason,
}

/// A placement by `select_task_rq()` at `ts_ns`: `p` (forked, or woken by `waker`, a sync
/// wakeup or not) from `prev_cpu`, decided on `this_cpu`, went to `cpu` by `placement`.
pub struct PlacementEvent<'a> {
    pub ts_ns: u64,
    pub p: &'a Task,
    pub fork: bool,
    pub this_cpu: usize,
    pub prev_cpu: usize,
    pub waker: Option<&'a Task>,
    pub sync: bool,
    pub placement: Placement,
    pub cpu: usize,
}

/// A benchmark's interval output as simulated time passes: the engine calls it each time a task
/// program records a [`Snapshot`] (`Op::Snapshot`: a benchmark's statistics pass, such as
/// schbench's once-a-second loop), right after recording it, so whatever the hook prints comes
/// out at the simulated time the real program would print it. The workload layer implements
/// it; like an [`Observer`] it only reads (nothing it does reaches the simulation).
pub trait IntervalHook: Send {
    /// Snapshot number `index` (0-based, in time order) was just taken.
    fn snapshot(&mut self, index: usize, snap: &Snapshot);
}
