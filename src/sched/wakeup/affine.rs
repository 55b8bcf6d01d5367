//! `wake_affine()`: may the wakee be pulled to the waker's CPU (`this_cpu`) instead of
//! staying near `prev_cpu`? Mirrors `wake_affine_idle()` (WA_IDLE) and
//! `wake_affine_weight()` (WA_WEIGHT, WA_BIAS) of `kernel/sched/fair.c`.
//!
//! Before v4.13 `wake_affine()` compared `effective_load()` figures of the two CPUs with
//! an `imbalance_pct` bias; the model uses `wake_affine_weight()` for those kernels
//! (their WA_WEIGHT/WA_BIAS values are on): the same comparison without the group
//! scheduling `effective_load()` terms, which do not exist without cgroups.

use super::{Topo, Wakeup, WakeupEnv};
use crate::domains::DomainId;
use crate::kconfig::features::Feature;
use crate::task::TaskId;

/// Which rule of `wake_affine()` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AffineOutcome {
    /// `wake_affine_idle()`: the waker's CPU is idle (interrupt wakeup) and shares the
    /// cache with prev: prev if idle, else this CPU.
    IdleThisSharesCache,
    /// `wake_affine_idle()`: sync wakeup and the waker is this CPU's only task.
    SyncOnlyTask,
    /// `wake_affine_idle()`: prev is idle, keep it.
    PrevIdle,
    /// `wake_affine_weight()`: this CPU's load (with the wakee) is lower.
    WeightThis,
    /// No rule picked this CPU: stay with prev.
    KeepPrev,
}

impl Wakeup {
    /// `wake_affine(sd, p, this_cpu, prev_cpu, sync)`: returns the target CPU for
    /// `select_idle_sibling()` (`this_cpu` or `prev_cpu`) and the rule that decided.
    #[allow(clippy::too_many_arguments)]
    pub fn wake_affine(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        current: Option<TaskId>,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> (usize, AffineOutcome) {
        let mut target = None;
        if self.params.feat(Feature::WA_IDLE) {
            target = self.wake_affine_idle(topo, env, this_cpu, prev_cpu, sync);
        }
        if target.is_none() && self.params.feat(Feature::WA_WEIGHT) {
            target = self
                .wake_affine_weight(topo, env, sd, p, current, this_cpu, prev_cpu, sync)
                .map(|c| (c, AffineOutcome::WeightThis));
        }
        match target {
            Some((c, outcome)) if c == this_cpu => (this_cpu, outcome),
            Some((_, outcome)) => (prev_cpu, outcome),
            None => (prev_cpu, AffineOutcome::KeepPrev),
        }
    }

    /// `wake_affine_idle()`. The sync rule counts `nr_running - cfs_h_nr_delayed` from
    /// v6.14 (delayed-dequeue tasks are not real competitors); before that the plain
    /// `nr_running == 1`.
    pub fn wake_affine_idle(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<(usize, AffineOutcome)> {
        if env.available_idle_cpu(this_cpu) && topo.domains.cpus_share_cache(this_cpu, prev_cpu) {
            let c = if env.available_idle_cpu(prev_cpu) {
                prev_cpu
            } else {
                this_cpu
            };
            return Some((c, AffineOutcome::IdleThisSharesCache));
        }
        if sync {
            let mut nr = env.nr_running(this_cpu);
            if self.params.at_least(6, 14) {
                nr = nr.saturating_sub(env.cfs_h_nr_delayed(this_cpu));
            }
            if nr == 1 {
                return Some((this_cpu, AffineOutcome::SyncOnlyTask));
            }
        }
        if env.available_idle_cpu(prev_cpu) {
            return Some((prev_cpu, AffineOutcome::PrevIdle));
        }
        None
    }

    /// `wake_affine_weight()`: `this_cpu` if its load plus the wakee's (minus the sync
    /// waker's), scaled by prev's capacity, is below prev's load minus the wakee's
    /// (biased toward prev by half the domain's imbalance under WA_BIAS), scaled by
    /// this CPU's capacity.
    #[allow(clippy::too_many_arguments)]
    pub fn wake_affine_weight(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        current: Option<TaskId>,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<usize> {
        let imbalance_pct = i128::from(topo.domains.domain(sd).imbalance_pct);
        let mut this_eff = i128::from(env.cpu_load(this_cpu));
        if sync {
            let current_load = current.map_or(0, |c| i128::from(env.task_h_load(c)));
            if current_load > this_eff {
                return Some(this_cpu);
            }
            this_eff -= current_load;
        }
        let task_load = i128::from(env.task_h_load(p));
        this_eff += task_load;
        if self.params.feat(Feature::WA_BIAS) {
            this_eff *= 100;
        }
        this_eff *= i128::from(env.capacity_of(prev_cpu));

        let mut prev_eff = i128::from(env.cpu_load(prev_cpu)) - task_load;
        if self.params.feat(Feature::WA_BIAS) {
            prev_eff *= 100 + (imbalance_pct - 100) / 2;
        }
        prev_eff *= i128::from(env.capacity_of(this_cpu));
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this_cpu)
    }
}
