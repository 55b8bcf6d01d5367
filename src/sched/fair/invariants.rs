//! Invariants of a [`CfsRq`] against its entities, checked where the runqueue changes.
//!
//! What must hold between operations (the kernel keeps them by construction and checks a
//! few with `WARN_ON_ONCE`/`SCHED_WARN_ON`):
//! - the tree holds distinct queued entities and never `curr`; its links, key order,
//!   heap priorities, subtree aggregates and cached leftmost are consistent
//!   (`CfsRq::tree_check`);
//! - `nr_queued` = `h_nr_queued` = tree + queued `curr` (no cgroups); `h_nr_runnable`
//!   counts the queued entities that are not `sched_delayed`; `h_nr_idle` the queued
//!   `SCHED_IDLE` ones; `load` is the sum of queued weights;
//! - the EEVDF running sums equal their definition: `avg_vruntime` = Σ w·(v − v0) and
//!   `avg_load` = Σ w over the tree, v0 = `min_vruntime` (both modes keep them);
//! - zero lag: with V = `avg_vruntime()` (floored), Σ w·(V − v) over the queued
//!   entities lies in (−W, 0];
//! - EEVDF: with something queued, `pick_eevdf()` finds an entity (one is always
//!   eligible), the same one as the linear-scan oracle `pick_eevdf_linear()` (with and
//!   without protection), and `cfs_rq_min_slice()` equals its scan.
//!
//! `min_vruntime` monotonicity is asserted where it moves (`update_min_vruntime`), the
//! lag clamp where lag is computed (`update_entity_lag`).
//!
//! [`CfsRq::check_invariants`] is O(queue length); [`CfsRq::debug_check`] runs it at the
//! end of every public mutating operation in builds with debug assertions, and compiles
//! to nothing in release. The engine's run-time checker (`[run] invariants = true`)
//! calls `check_invariants` after every event through the policy.

use super::{CfsRq, FairMode, FairParams, SchedEntity, SchedPolicy};

impl CfsRq {
    /// Every invariant of the module doc, or the first violation as one line.
    pub fn check_invariants(
        &self,
        ents: &[SchedEntity],
        params: &FairParams,
    ) -> Result<(), String> {
        let key = |id: usize| ents[id].vruntime.wrapping_sub(self.min_vruntime) as i64 as i128;
        let mut sum = 0i128;
        let mut load = 0u64;
        self.tree_check(ents)?;
        for id in self.queued(ents) {
            if !ents[id].on_rq {
                return Err(format!("tree entity {id} is not on_rq"));
            }
            if Some(id) == self.curr {
                return Err(format!("curr {id} is in the tree"));
            }
            sum += key(id) * ents[id].load.weight as i128;
            load += ents[id].load.weight;
        }
        if self.avg_vruntime != sum || self.avg_load != load {
            return Err(format!(
                "avg_vruntime/avg_load = {}/{} but the tree sums to {sum}/{load}",
                self.avg_vruntime, self.avg_load
            ));
        }
        let curr_q = self.curr.filter(|&c| ents[c].on_rq);
        let total = load + curr_q.map_or(0, |c| ents[c].load.weight);
        if self.load.weight != total {
            return Err(format!(
                "load.weight = {} but the queued weights sum to {total}",
                self.load.weight
            ));
        }
        self.check_counts(ents, curr_q)?;
        let queued = || self.queued(ents).chain(curr_q);
        if total > 0 {
            let v = self.avg_vruntime(ents);
            let lag_sum: i128 = queued()
                .map(|id| {
                    ents[id].load.weight as i128
                        * (v.wrapping_sub(ents[id].vruntime) as i64 as i128)
                })
                .sum();
            if !(lag_sum <= 0 && lag_sum > -(total as i128)) {
                return Err(format!(
                    "sum of w*lag = {lag_sum}, outside (-W, 0] with W = {total}"
                ));
            }
            if self.mode == FairMode::Eevdf {
                self.check_picks(ents, params)?;
            }
        }
        Ok(())
    }

    /// The queue counts (`nr_queued`, `h_nr_queued`, `h_nr_runnable`, `h_nr_idle`) match
    /// the tree plus the queued `curr_q`.
    fn check_counts(&self, ents: &[SchedEntity], curr_q: Option<usize>) -> Result<(), String> {
        let queued = || self.queued(ents).chain(curr_q);
        // Entity indices are below u32::MAX (the tree's links are u32), so are the counts.
        let count_u32 = |n: usize| u32::try_from(n).expect("entity count fits in u32");
        let n = count_u32(queued().count());
        let runnable = count_u32(queued().filter(|&id| !ents[id].sched_delayed).count());
        let idle = count_u32(
            queued()
                .filter(|&id| ents[id].policy == SchedPolicy::Idle)
                .count(),
        );
        if (
            self.nr_queued,
            self.h_nr_queued,
            self.h_nr_runnable,
            self.h_nr_idle,
        ) != (n, n, runnable, idle)
        {
            return Err(format!(
                "nr_queued/h_nr_queued/h_nr_runnable/h_nr_idle = {}/{}/{}/{} but the queue \
                 holds {n}/{n}/{runnable}/{idle}",
                self.nr_queued, self.h_nr_queued, self.h_nr_runnable, self.h_nr_idle
            ));
        }
        Ok(())
    }

    /// The EEVDF tree searches agree with their linear-scan oracles.
    fn check_picks(&self, ents: &[SchedEntity], params: &FairParams) -> Result<(), String> {
        if self.pick_eevdf(ents, params, false).is_none() {
            return Err("no eligible entity although the queue is not empty".to_string());
        }
        for protect in [false, true] {
            let (tree, scan) = (
                self.pick_eevdf(ents, params, protect),
                self.pick_eevdf_linear(ents, params, protect),
            );
            if tree != scan {
                return Err(format!(
                    "pick_eevdf(protect={protect}) = {tree:?} but the linear scan picks {scan:?}"
                ));
            }
        }
        let (tree, scan) = (
            self.cfs_rq_min_slice(ents),
            self.cfs_rq_min_slice_linear(ents),
        );
        if tree != scan {
            return Err(format!(
                "cfs_rq_min_slice = {tree} but the linear scan finds {scan}"
            ));
        }
        Ok(())
    }

    /// [`CfsRq::check_invariants`] as a debug assertion: panics on a violation when
    /// debug assertions are on, nothing in release.
    #[inline]
    pub(super) fn debug_check(&self, ents: &[SchedEntity], params: &FairParams) {
        if cfg!(debug_assertions)
            && let Err(e) = self.check_invariants(ents, params)
        {
            panic!("cfs_rq invariant violated: {e}");
        }
    }
}
