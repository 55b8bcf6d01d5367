//! Deciding whether and how much to balance: `sched_balance_find_src_group()` (was
//! `find_busiest_group()`), `calculate_imbalance()`, `sibling_imbalance()`,
//! `adjust_numa_imbalance()`, and `sched_balance_find_src_rq()` (was
//! `find_busiest_queue()`) with `fbq_classify_rq()` (kernel/sched/fair.c, v6.17).
//!
//! One deliberate difference: `calculate_imbalance()` evens out idle CPUs with
//! `max(0, local.idle_cpus − busiest.idle_cpus)`. The kernel computes the difference in
//! `unsigned int` before `max_t(long, 0, …)`, so it wraps to `UINT_MAX` when the local group
//! has fewer idle CPUs; Pierre Gondois' fix (`lsub_positive()`, reviewed by Vincent
//! Guittot, queued for stable in 2026) makes it the clamp modelled here — the intended
//! behaviour.
//!
//! Left out: the energy-aware early exit (`rd->pd` and not overutilized) — no energy model.

use super::stats::SdLbStats;
use super::sums::CpuContrib;
use super::{
    BalanceEnv, FbqType, GroupType, LbEnv, LbOutput, LoadBalancer, MigrationType,
    NUMA_IMBALANCE_MIN, SCHED_CAPACITY_SCALE, capacity_greater,
};
use crate::cpumask::CpuMask;
use crate::domains::{GroupId, SdFlags};
use crate::kconfig::features::Feature;

/// Result of [`LoadBalancer::sched_balance_find_src_group`]: the busiest group (if the
/// domain is worth balancing) and the statistics behind the decision. The imbalance and
/// its type are in the pass's [`BalanceEnv`].
#[derive(Clone, Copy, Debug)]
pub struct SrcGroup {
    pub busiest: Option<GroupId>,
    pub sds: SdLbStats,
}

/// `adjust_numa_imbalance()`: while the destination node runs no more than
/// `imb_numa_nr` tasks, an imbalance of up to [`NUMA_IMBALANCE_MIN`] tasks is left alone so
/// communicating pairs stay on one node.
pub fn adjust_numa_imbalance(imbalance: i64, dst_running: i64, imb_numa_nr: i64) -> i64 {
    // allow_numa_imbalance(): running <= imb_numa_nr.
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    imbalance
}

/// `fbq_classify_rq()` (CONFIG_NUMA_BALANCING=y).
pub fn fbq_classify_rq<E: LbEnv + ?Sized>(env: &E, cpu: usize) -> FbqType {
    let (numa, preferred) = env.numa_counts(cpu);
    fbq_classify_counts(env.nr_running(cpu), numa, preferred)
}

/// `fbq_classify_rq()` of `cpu`, from its balance-sum contribution `c` when the sums are
/// fresh (equal to the runqueue's counters; checked under `debug_assertions`).
fn rq_fbq_type<E: LbEnv + ?Sized>(env: &E, c: Option<&CpuContrib>, cpu: usize) -> FbqType {
    match c {
        Some(c) => {
            let class =
                fbq_classify_counts(c.nr_running, c.nr_numa_running, c.nr_preferred_running);
            debug_assert_eq!(class, fbq_classify_rq(env, cpu), "CPU {cpu}");
            class
        }
        None => fbq_classify_rq(env, cpu),
    }
}

/// `fbq_classify_rq()` from a runqueue's `nr_running`, `nr_numa_running` and
/// `nr_preferred_running`.
pub fn fbq_classify_counts(nr: u32, numa: u32, preferred: u32) -> FbqType {
    if nr > numa {
        FbqType::Regular
    } else if nr > preferred {
        FbqType::Remote
    } else {
        FbqType::All
    }
}

impl LoadBalancer {
    /// `sibling_imbalance()` (v6.6+): tasks to move so both groups run the same number of
    /// tasks per core (pre-multiplied by 2 since the caller halves it).
    pub fn sibling_imbalance(&self, bal: &BalanceEnv, sds: &SdLbStats) -> i64 {
        let busiest = &sds.busiest_stat;
        let local = &sds.local_stat;
        if !bal.dst_idle() || busiest.sum_nr_running == 0 {
            return 0;
        }
        let ncores_busiest = sds
            .busiest
            .map(|g| self.domains.group(g).cores)
            .unwrap_or(1) as i64;
        let ncores_local = sds.local.map(|g| self.domains.group(g).cores).unwrap_or(1) as i64;
        let b_nr = i64::from(busiest.sum_nr_running);
        let l_nr = i64::from(local.sum_nr_running);
        if ncores_busiest == ncores_local {
            return (b_nr - l_nr).max(0);
        }
        // Balance such that nr_running/ncores is the same on both groups, with rounding.
        let mut imbalance = (ncores_local * b_nr - ncores_busiest * l_nr).max(0);
        imbalance =
            (2 * imbalance + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
        // Take advantage of resources in an empty group.
        if imbalance <= 1 && l_nr == 0 && b_nr > 1 {
            imbalance = 2;
        }
        imbalance
    }

    /// The prefer-sibling spread: `sibling_imbalance()` from v6.6; before it
    /// (`SIBLING_IMBALANCE` off) the plain `busiest->sum_nr_running - local->sum_nr_running`
    /// (`lsub_positive()`), whatever the destination's idle state and the groups' cores.
    fn prefer_sibling_imbalance(&self, bal: &BalanceEnv, sds: &SdLbStats) -> i64 {
        if self.feat(Feature::SIBLING_IMBALANCE) {
            return self.sibling_imbalance(bal, sds);
        }
        i64::from(
            sds.busiest_stat
                .sum_nr_running
                .saturating_sub(sds.local_stat.sum_nr_running),
        )
    }

    /// `calculate_imbalance()`: set `bal.migration_type` and `bal.imbalance`.
    pub fn calculate_imbalance(&self, bal: &mut BalanceEnv, sds: &mut SdLbStats) {
        let d = self.domains.domain(bal.sd);
        let busiest = sds.busiest_stat;
        match busiest.group_type {
            GroupType::MisfitTask => {
                if d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY) {
                    // Set imbalance to allow a misfit task to be balanced.
                    bal.migration_type = MigrationType::Misfit;
                    bal.imbalance = 1;
                } else {
                    // A task on a CPU with reduced capacity: migrate its load.
                    bal.migration_type = MigrationType::Load;
                    bal.imbalance = busiest.group_misfit_task_load as i64;
                }
                return;
            }
            GroupType::AsymPacking => {
                // Move all runnable tasks to the preferred CPU.
                bal.migration_type = MigrationType::Task;
                bal.imbalance = i64::from(busiest.sum_h_nr_running);
                return;
            }
            GroupType::SmtBalance | GroupType::Imbalanced => {
                // One task off the SMT core / out of the affinity-constrained group.
                bal.migration_type = MigrationType::Task;
                bal.imbalance = 1;
                return;
            }
            _ => {}
        }
        let local = sds.local_stat;
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !d.flags.contains(SdFlags::SD_SHARE_LLC)
            {
                // Busiest overloaded, outside an LLC: fill the local spare capacity. This
                // may leave busiest overloaded, but there is no simple way to compute the
                // load to move.
                bal.migration_type = MigrationType::Util;
                bal.imbalance =
                    (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                // Util-based balancing may not find a task when everything is tiny: at
                // least move one task to the idle CPU.
                if bal.dst_idle() && bal.imbalance == 0 {
                    bal.migration_type = MigrationType::Task;
                    bal.imbalance = 1;
                }
                return;
            }
            bal.migration_type = MigrationType::Task;
            if busiest.group_weight == 1 || sds.prefer_sibling {
                // Spread running tasks evenly across the groups.
                bal.imbalance = self.prefer_sibling_imbalance(bal, sds);
            } else {
                // No overload: even out the number of idle CPUs. Both counts are
                // `unsigned int` in every released kernel, so when the local group has
                // fewer idle CPUs the difference wraps to a huge value (which
                // `max_t(long, 0, ...)` keeps positive) instead of clamping at 0.
                bal.imbalance = i64::from(local.idle_cpus.wrapping_sub(busiest.idle_cpus));
            }
            if d.flags.contains(SdFlags::SD_NUMA) {
                // Allow a small imbalance between NUMA groups.
                bal.imbalance = adjust_numa_imbalance(
                    bal.imbalance,
                    i64::from(local.sum_nr_running) + 1,
                    i64::from(d.imb_numa_nr),
                );
            }
            // Number of tasks to move to restore balance.
            bal.imbalance >>= 1;
            return;
        }
        // Local is fully busy (or worse) but must take load to relieve an overloaded busiest.
        if local.group_type < GroupType::Overloaded {
            sds.local_stat.avg_load =
                local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity.max(1);
            if sds.local_stat.avg_load >= busiest.avg_load {
                bal.imbalance = 0;
                return;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            // If the local group is above the domain average, avoid moving more load here.
            if sds.local_stat.avg_load >= sds.avg_load {
                bal.imbalance = 0;
                return;
            }
        }
        // Both groups are (or will be) overloaded: move load so neither goes beyond the
        // domain average.
        let local_avg = sds.local_stat.avg_load;
        bal.migration_type = MigrationType::Load;
        // Unsigned long arithmetic, as the kernel computes it: when the busiest group's
        // avg_load is below the domain average (an overloaded group of light tasks beside
        // a busy group of heavy ones), the first difference wraps to a huge value and the
        // local group's deficit decides. (Found by tests/kernel_diff; this was a
        // saturating subtraction that made the imbalance 0 there.)
        let from_busiest = busiest
            .avg_load
            .wrapping_sub(sds.avg_load)
            .wrapping_mul(busiest.group_capacity);
        let to_local = sds
            .avg_load
            .wrapping_sub(local_avg)
            .wrapping_mul(local.group_capacity);
        bal.imbalance = (from_busiest.min(to_local) / SCHED_CAPACITY_SCALE) as i64;
    }

    /// `sched_balance_find_src_group()`: gather statistics, decide whether the domain is
    /// imbalanced and, if so, compute the imbalance. Returns the busiest group only when
    /// there is something to move (`env->imbalance != 0`).
    pub fn sched_balance_find_src_group<E: LbEnv + ?Sized>(
        &mut self,
        env: &E,
        bal: &mut BalanceEnv,
        out: &mut LbOutput,
    ) -> SrcGroup {
        let sds = self.update_sd_lb_stats(env, bal, out);
        self.find_src_group_decide(bal, sds)
    }

    /// The decision of `sched_balance_find_src_group()` on the statistics
    /// `update_sd_lb_stats()` gathered: balanced (no busiest group, `env->imbalance = 0`) or
    /// `calculate_imbalance()` (the `force_balance` label), with the busiest group when there
    /// is something to move. Public for the differential tests (tests/kernel_diff).
    pub fn find_src_group_decide(&self, bal: &mut BalanceEnv, mut sds: SdLbStats) -> SrcGroup {
        let balanced = |bal: &mut BalanceEnv, sds: SdLbStats| {
            bal.imbalance = 0;
            SrcGroup { busiest: None, sds }
        };
        if sds.busiest.is_none() {
            return balanced(bal, sds);
        }
        let d = self.domains.domain(bal.sd);
        let busiest = sds.busiest_stat;
        let local = sds.local_stat;
        let force = match busiest.group_type {
            // Misfit tasks should be dealt with regardless of the avg load.
            GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced => true,
            _ => false,
        };
        if !force {
            // The local group is busier than the selected busiest group: don't pull.
            if local.group_type > busiest.group_type {
                return balanced(bal, sds);
            }
            if local.group_type == GroupType::Overloaded {
                // Only pull if the local group is less loaded than busiest and the domain
                // average, and the difference exceeds imbalance_pct.
                if local.avg_load >= busiest.avg_load {
                    return balanced(bal, sds);
                }
                sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
                if local.avg_load >= sds.avg_load {
                    return balanced(bal, sds);
                }
                if 100 * busiest.avg_load <= u64::from(d.imbalance_pct) * local.avg_load {
                    return balanced(bal, sds);
                }
            }
            // Try to move all excess tasks to a sibling domain of the busiest group's child.
            // Before v6.6: busiest->sum_nr_running > local->sum_nr_running + 1, the same
            // as the plain difference being above 1.
            let prefer = sds.prefer_sibling
                && local.group_type == GroupType::HasSpare
                && self.prefer_sibling_imbalance(bal, &sds) > 1;
            if !prefer && busiest.group_type != GroupType::Overloaded {
                if !bal.dst_idle() {
                    // A busy destination lets an idle CPU pull instead.
                    return balanced(bal, sds);
                }
                let smt_vs_nonsmt = match (sds.local, sds.busiest) {
                    (Some(l), Some(b)) => {
                        (self.domains.group(l).flags.0 ^ self.domains.group(b).flags.0)
                            & SdFlags::SD_SHARE_CPUCAPACITY.0
                            != 0
                    }
                    _ => false,
                };
                if !(busiest.group_type == GroupType::SmtBalance && smt_vs_nonsmt) {
                    // Balanced if the idle-CPU difference is at most 1.
                    if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                        return balanced(bal, sds);
                    }
                    if busiest.sum_h_nr_running == 1 {
                        return balanced(bal, sds);
                    }
                }
            }
        }
        // force_balance:
        self.calculate_imbalance(bal, &mut sds);
        if bal.imbalance != 0 {
            SrcGroup {
                busiest: sds.busiest,
                sds,
            }
        } else {
            SrcGroup { busiest: None, sds }
        }
    }

    /// The CPUs `sched_balance_find_src_rq()` visits in `group` (`span ∩ env->cpus`),
    /// counting each as visited. With fresh balance sums the visit skips the CPUs without
    /// CFS tasks, which the search would skip first thing. When the pass found every group
    /// inside env->cpus (`cover_all`), `span ∩ env->cpus` is the span, whose weight the
    /// sums keep: one mask operation instead of three and a popcount.
    fn src_rq_visit(&self, bal: &BalanceEnv, group: GroupId, out: &mut LbOutput) -> CpuMask {
        let g = self.domains.group(group);
        if self.sums.fresh && self.sums.cover_all {
            out.work.cpus += u64::from(self.sums.group(g.sgc).weight);
            return g.span.and(self.sums.cfs_cpus());
        }
        let cpus = g.span.and(&bal.cpus);
        out.work.cpus += cpus.weight() as u64;
        if self.sums.fresh {
            cpus.and(self.sums.cfs_cpus())
        } else {
            cpus
        }
    }

    /// `sched_balance_find_src_rq()`: the busiest runqueue of `group` for the pass's
    /// migration type. Ties keep the lower CPU.
    ///
    /// With fresh balance sums a task- or util-type search looks first at the CPUs running
    /// more than one CFS task (the sums keep that set): a util search takes only those, and
    /// a task search finds its maximum among them whenever one qualifies, else the first
    /// qualifying CPU (all left run one task). The same CPU as the full walk — checked
    /// against it under `debug_assertions` — for a fraction of the visits on a machine
    /// with a task or less per CPU (every CPU of a 256-CPU NUMA group was read per pass).
    pub fn sched_balance_find_src_rq<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        group: GroupId,
        out: &mut LbOutput,
    ) -> Option<usize> {
        let visit = self.src_rq_visit(bal, group, out);
        if self.sums.fresh
            && matches!(
                bal.migration_type,
                MigrationType::Task | MigrationType::Util
            )
        {
            let found = self.find_src_rq_multi(env, bal, &visit);
            debug_assert_eq!(
                found,
                self.find_src_rq_walk(env, bal, &visit),
                "busiest-queue search from the multi-task CPUs differs from the walk"
            );
            return found;
        }
        self.find_src_rq_walk(env, bal, &visit)
    }

    /// The per-CPU exclusions of the busiest-queue search for a CPU running `nr_running`
    /// (> 0) CFS tasks: a NUMA class above the pass's, a single task that would not land on
    /// a noticeably bigger CPU (asymmetric capacity), or a single task on a lower-priority
    /// CPU when packing.
    fn src_rq_excluded<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        flags: SdFlags,
        c: Option<&CpuContrib>,
        i: usize,
        nr_running: u32,
    ) -> bool {
        // No rq is classified above `All`: the NUMA counts are read only when they can
        // exclude it.
        if bal.fbq_type != FbqType::All && rq_fbq_type(env, c, i) > bal.fbq_type {
            return true;
        }
        if flags.contains(SdFlags::SD_ASYM_CPUCAPACITY)
            && nr_running == 1
            && !capacity_greater(env.capacity_of(bal.dst_cpu), env.capacity_of(i))
        {
            return true;
        }
        flags.contains(SdFlags::SD_ASYM_PACKING)
            && nr_running == 1
            && self.sched_asym(env, bal.sd, i, bal.dst_cpu)
    }

    /// The task- and util-type search over the CPUs with more than one CFS task first
    /// (fresh sums only; see [`LoadBalancer::sched_balance_find_src_rq`]).
    fn find_src_rq_multi<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        visit: &CpuMask,
    ) -> Option<usize> {
        let flags = self.domains.domain(bal.sd).flags;
        let mut busiest = None;
        let (mut busiest_nr, mut busiest_util) = (0u32, 0u64);
        for i in visit.and(self.sums.multi_cpus()).iter() {
            let c = self.sums.contrib(i);
            let nr_running = c.h_nr_runnable;
            if self.src_rq_excluded(env, bal, flags, Some(c), i, nr_running) {
                continue;
            }
            if bal.migration_type == MigrationType::Task {
                if busiest_nr < nr_running {
                    busiest_nr = nr_running;
                    busiest = Some(i);
                }
            } else {
                let util = env.cpu_util_boost(i);
                if busiest_util < util {
                    busiest_util = util;
                    busiest = Some(i);
                }
            }
        }
        if busiest.is_some() || bal.migration_type != MigrationType::Task {
            return busiest;
        }
        // Every qualifying CPU runs one task: the walk keeps the first.
        visit.iter().find(|&i| {
            let c = self.sums.contrib(i);
            !self.src_rq_excluded(env, bal, flags, Some(c), i, c.h_nr_runnable)
        })
    }

    /// The search as the kernel walks it: every CPU of `visit` in order.
    fn find_src_rq_walk<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        visit: &CpuMask,
    ) -> Option<usize> {
        let flags = self.domains.domain(bal.sd).flags;
        let mut busiest = None;
        let (mut busiest_load, mut busiest_capacity) = (0u64, 1u64);
        let (mut busiest_util, mut busiest_nr) = (0u64, 0u32);
        // With fresh sums a CPU's counters and load are read from its contribution, which
        // the refresh at the start of this pass made equal to its runqueue's (every CPU of a
        // group of this domain is re-read if marked): one compact array instead of the fair,
        // RT and NUMA runqueue structures per CPU visited (checked under debug_assertions).
        let fresh = self.sums.fresh;
        for i in visit.iter() {
            let c = fresh.then(|| self.sums.contrib(i));
            #[cfg(debug_assertions)]
            if let Some(c) = c {
                assert_eq!(
                    c.h_nr_runnable,
                    env.h_nr_runnable(i),
                    "CPU {i}: stale contrib"
                );
                assert_eq!(c.load, env.cpu_load(i), "CPU {i}: stale contrib load");
            }
            let nr_running = c.map_or_else(|| env.h_nr_runnable(i), |c| c.h_nr_runnable);
            if nr_running == 0 || self.src_rq_excluded(env, bal, flags, c, i, nr_running) {
                continue;
            }
            match bal.migration_type {
                MigrationType::Load => {
                    // (`capacity_of()` is read only where it is used: a pure read.)
                    let capacity = env.capacity_of(i);
                    let load = c.map_or_else(|| env.cpu_load(i), |c| c.load);
                    // A single task whose load exceeds the imbalance would just move the
                    // imbalance, unless its CPU's capacity is reduced.
                    if nr_running == 1
                        && load as i64 > bal.imbalance
                        && !self.check_cpu_capacity(env, i, bal.sd)
                    {
                        continue;
                    }
                    // Compare load/capacity ratios by cross-multiplication.
                    if load * busiest_capacity > busiest_load * capacity {
                        busiest_load = load;
                        busiest_capacity = capacity;
                        busiest = Some(i);
                    }
                }
                MigrationType::Util => {
                    let util = env.cpu_util_boost(i);
                    // Don't try to pull utilization from a CPU with one running task:
                    // whatever its utilization, we would end up with only one task anyway.
                    if nr_running <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        busiest = Some(i);
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr_running {
                        busiest_nr = nr_running;
                        busiest = Some(i);
                    }
                }
                MigrationType::Misfit => {
                    let misfit = env.misfit_task_load(i);
                    if misfit > busiest_load {
                        busiest_load = misfit;
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }
}
