//! One workload's share of a finished run: the engine's tasks, operations, metrics,
//! semaphores and snapshots restricted to what that workload owns ([`super::merge::PlanPart`]),
//! so that each benchmark's report is made from its own state when several run together, and
//! from the whole run when one runs alone (then the view is the engine itself).
//!
//! Run-wide facts stay run-wide: the end of the run, the end of the warm-up (one for the run).

use std::borrow::Cow;

use crate::engine::{Engine, Snapshot, Task};
use crate::hist::Histogram;

use super::merge::PlanPart;

/// A workload's view of a run ([`RunView::whole`] for a run of one workload).
pub struct RunView<'a> {
    engine: &'a Engine,
    part: PlanPart,
    prefix: String,
    snapshots: Cow<'a, [Snapshot]>,
}

impl<'a> RunView<'a> {
    /// The whole run, for a run of one workload (its own tasks: not the system tasks of
    /// [`Engine::set_system_tasks`]).
    pub fn whole(engine: &'a Engine) -> RunView<'a> {
        let part = PlanPart {
            index: 0,
            tasks: 0..engine.workload_tasks().len(),
            metrics: 0..engine.metrics().count(),
            sem_base: 0,
        };
        let snapshots = match engine.system_tasks().is_empty() {
            true => Cow::Borrowed(engine.snapshots()),
            false => Cow::Owned(restricted(engine.snapshots(), &part)),
        };
        RunView {
            engine,
            part,
            prefix: String::new(),
            snapshots,
        }
    }

    /// The share of workload `part` of a run of several.
    pub fn part(engine: &'a Engine, part: &PlanPart) -> RunView<'a> {
        RunView {
            engine,
            part: part.clone(),
            prefix: part.metric_prefix(),
            snapshots: Cow::Owned(restricted(engine.snapshots(), part)),
        }
    }

    /// The workload's completed operations (`Op::CountOp`) since the warm-up.
    pub fn ops_done(&self) -> u64 {
        self.engine.workload_ops(self.part.index).0
    }

    /// The workload's operations since the start, warm-up included.
    pub fn ops_total(&self) -> u64 {
        self.engine.workload_ops(self.part.index).1
    }

    /// The workload's metrics by their own names (without the run's `w<N>.` prefix).
    pub fn metrics(&self) -> impl Iterator<Item = (&str, &Histogram)> {
        let range = self.part.metrics.clone();
        (self.engine.metrics().skip(range.start))
            .take(range.len())
            .map(|(n, h)| (n.strip_prefix(self.prefix.as_str()).unwrap_or(n), h))
    }

    /// The snapshots the workload's tasks took, with the workload's metrics and tasks only.
    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    /// Units held by the workload's semaphore `sem` (its own numbering).
    pub fn sem_count(&self, sem: u32) -> u64 {
        self.engine.sem_count(sem + self.part.sem_base)
    }

    /// The workload's tasks, in its own order.
    pub fn tasks(&self) -> &[Task] {
        &self.engine.tasks()[self.part.tasks.clone()]
    }

    /// When the run ended.
    pub fn end_ns(&self) -> u64 {
        self.engine.end_ns()
    }

    /// When the run's statistics started (the end of the warm-up).
    pub fn stats_start_ns(&self) -> u64 {
        self.engine.stats_start_ns()
    }
}

/// The snapshots of workload `part`, with its metrics and tasks only.
fn restricted(snapshots: &[Snapshot], part: &PlanPart) -> Vec<Snapshot> {
    (snapshots.iter())
        .filter(|s| s.workload == part.index)
        .map(|s| Snapshot {
            metrics: slice_or_empty(&s.metrics, &part.metrics),
            task_waits: slice_or_empty(&s.task_waits, &part.tasks),
            ..s.clone()
        })
        .collect()
}

/// `v[range]`, or empty when `v` is (a snapshot without the full statistics).
fn slice_or_empty<T: Clone>(v: &[T], range: &std::ops::Range<usize>) -> Vec<T> {
    match v.is_empty() {
        true => Vec::new(),
        false => v[range.clone()].to_vec(),
    }
}
