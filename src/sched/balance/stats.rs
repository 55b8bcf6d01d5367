//! Group and domain statistics of a balance pass: `update_sg_lb_stats()`,
//! `update_sd_lb_stats()`, `group_classify()`, `update_sd_pick_busiest()`,
//! `update_group_capacity()` and `update_idle_cpu_scan()` (kernel/sched/fair.c, v6.17).
//!
//! Left out: `cpu_overutilized()` / `sg_overutilized` (only read by energy-aware
//! scheduling, which is not modelled).

use super::sums::CpuContrib;
use super::{
    BalanceEnv, FbqType, GroupType, LbEnv, LbOutput, LoadBalancer, SCHED_CAPACITY_SCALE,
    capacity_greater,
};
use crate::domains::{DomainId, GroupId, SchedDomain, SchedGroup, SdFlags};
use crate::kconfig::features::Feature;
use crate::sched::types::IdleType;

/// `struct sg_lb_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgLbStats {
    /// `avg_load = group_load × 1024 / group_capacity`, computed only for overloaded
    /// groups (and for the local group by `calculate_imbalance()`).
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    /// Σ `nr_running` (all classes).
    pub sum_nr_running: u32,
    /// Σ `cfs.h_nr_runnable`.
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
    pub group_asym_packing: bool,
    pub group_smt_balance: bool,
    pub group_misfit_task_load: u64,
    pub nr_numa_running: u32,
    pub nr_preferred_running: u32,
}

impl SgLbStats {
    fn zero() -> SgLbStats {
        SgLbStats {
            avg_load: 0,
            group_load: 0,
            group_capacity: 0,
            group_util: 0,
            group_runnable: 0,
            sum_nr_running: 0,
            sum_h_nr_running: 0,
            idle_cpus: 0,
            group_weight: 0,
            group_type: GroupType::HasSpare,
            group_asym_packing: false,
            group_smt_balance: false,
            group_misfit_task_load: 0,
            nr_numa_running: 0,
            nr_preferred_running: 0,
        }
    }
}

/// `struct sd_lb_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdLbStats {
    pub busiest: Option<GroupId>,
    pub local: Option<GroupId>,
    pub total_load: u64,
    pub total_capacity: u64,
    /// Domain average load (computed on demand by the imbalance code).
    pub avg_load: u64,
    pub busiest_stat: SgLbStats,
    pub local_stat: SgLbStats,
    /// The busiest group's child domain has `SD_PREFER_SIBLING`.
    pub prefer_sibling: bool,
}

impl SdLbStats {
    /// `init_sd_lb_stats()`: the busiest candidate starts as `{has_spare, idle_cpus =
    /// UINT_MAX}` so the first group with runnable CFS tasks is always taken.
    pub fn new() -> SdLbStats {
        let mut busiest_stat = SgLbStats::zero();
        busiest_stat.idle_cpus = u32::MAX;
        SdLbStats {
            busiest: None,
            local: None,
            total_load: 0,
            total_capacity: 0,
            avg_load: 0,
            busiest_stat,
            local_stat: SgLbStats::zero(),
            prefer_sibling: false,
        }
    }
}

impl Default for SdLbStats {
    fn default() -> Self {
        SdLbStats::new()
    }
}

/// `group_has_capacity()`.
pub fn group_has_capacity(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * pct < sgs.group_runnable * 100 {
        return false;
    }
    sgs.group_capacity * 100 > sgs.group_util * pct
}

/// `group_is_overloaded()`.
pub fn group_is_overloaded(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    if sgs.group_capacity * 100 < sgs.group_util * pct {
        return true;
    }
    sgs.group_capacity * pct < sgs.group_runnable * 100
}

/// `group_classify()`: first match wins, in the kernel's order.
pub fn group_classify(imbalance_pct: u32, sg_imbalanced: bool, sgs: &SgLbStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        GroupType::Overloaded
    } else if sg_imbalanced {
        GroupType::Imbalanced
    } else if sgs.group_asym_packing {
        GroupType::AsymPacking
    } else if sgs.group_smt_balance {
        GroupType::SmtBalance
    } else if sgs.group_misfit_task_load != 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(imbalance_pct, sgs) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `fbq_classify_group()` (CONFIG_NUMA_BALANCING=y, as distribution kernels build).
pub fn fbq_classify_group(sgs: &SgLbStats) -> FbqType {
    if sgs.sum_h_nr_running > sgs.nr_numa_running {
        FbqType::Regular
    } else if sgs.sum_h_nr_running > sgs.nr_preferred_running {
        FbqType::Remote
    } else {
        FbqType::All
    }
}

impl LoadBalancer {
    /// `update_group_capacity(sd, cpu)`: refresh the capacity of `cpu`'s local group at
    /// domain `sd` and schedule the next refresh.
    pub fn update_group_capacity<E: LbEnv + ?Sized>(&mut self, env: &E, sd: DomainId, cpu: usize) {
        let dom = self.domains.clone();
        let d = dom.domain(sd);
        let sgc_id = dom.group(d.groups[0]).sgc;
        let interval = self
            .msecs_to_jiffies(u64::from(self.sd[sd.0].balance_interval_ms))
            .clamp(1, self.max_load_balance_interval.max(1));
        self.sgc[sgc_id].next_update = self.jiffies + interval;
        let (mut capacity, mut min_cap, mut max_cap) = (0u64, u64::MAX, 0u64);
        match d.child {
            None => {
                // update_cpu_capacity(): the CPU's CFS capacity (scale_rt_capacity() is
                // the environment's capacity_of()).
                let c = env.capacity_of(cpu).max(1);
                (capacity, min_cap, max_cap) = (c, c, c);
            }
            Some(child) if dom.domain(child).flags.contains(SdFlags::SD_OVERLAP) => {
                // SD_OVERLAP children cannot be assumed to span the group.
                for c in dom.group(d.groups[0]).span.iter() {
                    let cap = env.capacity_of(c);
                    capacity += cap;
                    min_cap = min_cap.min(cap);
                    max_cap = max_cap.max(cap);
                }
            }
            Some(child) => {
                for g in dom.groups_of(child) {
                    let s = &self.sgc[g.sgc];
                    capacity += s.capacity;
                    min_cap = min_cap.min(s.min_capacity);
                    max_cap = max_cap.max(s.max_capacity);
                }
            }
        }
        let s = &mut self.sgc[sgc_id];
        s.capacity = capacity;
        s.min_capacity = if min_cap == u64::MAX { 0 } else { min_cap };
        s.max_capacity = max_cap;
    }

    /// `smt_balance()`: an idle destination and an SMT source group running more than one
    /// CFS task.
    fn smt_balance(bal: &BalanceEnv, sgs: &SgLbStats, group_flags: SdFlags) -> bool {
        bal.dst_idle()
            && group_flags.contains(SdFlags::SD_SHARE_CPUCAPACITY)
            && sgs.sum_h_nr_running > 1
    }

    /// `sched_group_asym()`.
    fn sched_group_asym<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        sgs: &SgLbStats,
        g: &SchedGroup,
    ) -> bool {
        if g.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY) && sgs.group_weight - sgs.idle_cpus != 1
        {
            return false;
        }
        match g.asym_prefer_cpu {
            Some(prefer) => self.sched_asym(env, bal.sd, bal.dst_cpu, prefer),
            None => false,
        }
    }

    /// `update_sg_lb_stats()`: statistics of one group over `group span ∩ env->cpus`.
    /// `sg_overloaded` is set when, at the root domain, some CPU runs more than one task
    /// (or, on asymmetric-capacity domains, has a misfit task). Answered from the running
    /// sums ([`super::sums`]) when they are fresh and cover the group, else by visiting
    /// every CPU; both give the same statistics (checked under `debug_assertions`).
    pub fn update_sg_lb_stats<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        group: GroupId,
        sg_overloaded: &mut bool,
        out: &mut LbOutput,
    ) -> SgLbStats {
        let dom = &self.domains;
        let (d, g) = (dom.domain(bal.sd), dom.group(group));
        self.update_sg_lb_stats_in(env, bal, d, group, g, sg_overloaded, out)
    }

    /// [`LoadBalancer::update_sg_lb_stats`] with the pass's domain `d` and the group `g`
    /// (id `group`) already looked up: the pass's loop passes them down instead of every
    /// helper indexing the hierarchy again (~9 lookups per group).
    #[allow(clippy::too_many_arguments)]
    fn update_sg_lb_stats_in<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        d: &SchedDomain,
        group: GroupId,
        g: &SchedGroup,
        sg_overloaded: &mut bool,
        out: &mut LbOutput,
    ) -> SgLbStats {
        let local_group = g.span.test(bal.dst_cpu);
        let mut sgs = SgLbStats::zero();
        if self.sums_cover(bal, d, g) {
            let over = self.sg_from_sums(env, bal, d, g, &mut sgs);
            out.work.cpus += u64::from(self.sums.group(g.sgc).weight);
            #[cfg(debug_assertions)]
            self.check_sums(env, bal, group, &sgs, over);
            *sg_overloaded |= over;
        } else {
            out.work.cpus += self.sg_walk(env, bal, group, &mut sgs, sg_overloaded);
        }
        sgs.group_capacity = self.sgc[g.sgc].capacity.max(1);
        sgs.group_weight = crate::units::cpu_count_u32(g.group_weight);
        if !local_group
            && bal.dst_idle()
            && sgs.sum_h_nr_running > 0
            && self.sched_group_asym(env, bal, &sgs, g)
        {
            sgs.group_asym_packing = true;
        }
        if !local_group
            && self.feat(Feature::GROUP_SMT_BALANCE)
            && Self::smt_balance(bal, &sgs, g.flags)
        {
            sgs.group_smt_balance = true;
        }
        sgs.group_type = group_classify(d.imbalance_pct, self.sgc[g.sgc].imbalance, &sgs);
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        }
        sgs
    }

    /// The per-CPU part of `update_sg_lb_stats()`: visit every CPU of `span ∩ env->cpus`.
    /// Returns the number of CPUs visited.
    fn sg_walk<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        group: GroupId,
        sgs: &mut SgLbStats,
        sg_overloaded: &mut bool,
    ) -> u64 {
        let d = self.domains.domain(bal.sd);
        let g = self.domains.group(group);
        let local_group = g.span.test(bal.dst_cpu);
        let balancing_at_rd = d.parent.is_none();
        let mut visited = 0;
        for i in g.span.and(&bal.cpus).iter() {
            visited += 1;
            let (load, util, runnable, h_nr_runnable, nr_running) = env.sg_cpu_stats(i);
            sgs.group_load += load;
            sgs.group_util += util;
            sgs.group_runnable += runnable;
            sgs.sum_h_nr_running += h_nr_runnable;
            sgs.sum_nr_running += nr_running;
            if nr_running == 0 && env.idle_cpu(i) {
                sgs.idle_cpus += 1;
                // An idle CPU cannot have a misfit task.
                continue;
            }
            if balancing_at_rd && nr_running > 1 {
                *sg_overloaded = true;
            }
            if d.flags.contains(SdFlags::SD_NUMA) {
                let (numa, preferred) = env.numa_counts(i);
                sgs.nr_numa_running += numa;
                sgs.nr_preferred_running += preferred;
            }
            if local_group {
                continue;
            }
            if d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY) {
                let misfit = env.misfit_task_load(i);
                if sgs.group_misfit_task_load < misfit {
                    sgs.group_misfit_task_load = misfit;
                    *sg_overloaded = true;
                }
            } else if bal.dst_idle()
                && h_nr_runnable == 1
                && self.check_cpu_capacity(env, i, bal.sd)
            {
                // sched_reduced_capacity(): a single task on a CPU whose capacity is
                // eaten by RT/IRQ/thermal pressure.
                sgs.group_misfit_task_load = sgs.group_misfit_task_load.max(load);
            }
        }
        visited
    }

    /// The running sums answer for `group` in this pass: they were refreshed at its start,
    /// the group lies wholly inside `env->cpus`, and the domain needs no per-CPU misfit
    /// maximum (`SD_ASYM_CPUCAPACITY`).
    fn sums_cover(&self, bal: &BalanceEnv, d: &SchedDomain, g: &SchedGroup) -> bool {
        if self.sums.fresh && self.sums.cover_all {
            return true;
        }
        self.sums.fresh
            && !d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY)
            && g.span.is_subset_of(&bal.cpus)
    }

    /// [`LoadBalancer::sg_walk`] from the running sums: the sums, idle CPUs, the root
    /// overload test (returned) and the reduced-capacity misfit maximum, which visits
    /// CPUs only when some CPU of the group is capacity-reduced. The NUMA counts are
    /// summed like the rest (the environment keeps them per CPU).
    fn sg_from_sums<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        d: &SchedDomain,
        g: &SchedGroup,
        sgs: &mut SgLbStats,
    ) -> bool {
        let s = self.sums.group(g.sgc);
        sgs.group_load = s.load;
        sgs.group_util = s.util;
        sgs.group_runnable = s.runnable;
        sgs.sum_h_nr_running = s.h_nr_runnable;
        sgs.sum_nr_running = s.nr_running;
        sgs.idle_cpus = s.idle_cpus;
        if d.flags.contains(SdFlags::SD_NUMA) {
            sgs.nr_numa_running = s.nr_numa_running;
            sgs.nr_preferred_running = s.nr_preferred_running;
        }
        // Cheapest test first (pure reads): few groups hold a capacity-reduced CPU.
        if s.nr_single_reduced > 0 && bal.dst_idle() && !g.span.test(bal.dst_cpu) {
            for i in g.span.iter() {
                let c = self.sums.contrib(i);
                if c.single_reduced && self.check_cpu_capacity(env, i, bal.sd) {
                    sgs.group_misfit_task_load = sgs.group_misfit_task_load.max(c.load);
                }
            }
        }
        d.parent.is_none() && s.nr_overloaded > 0
    }

    /// A non-local group without CFS tasks, answered from the sums: `update_sd_pick_busiest()`
    /// refuses it first thing ("at least one task to pull"), so of its statistics only the
    /// domain totals (`group_load`, `group_capacity`, `group_util`) and the root overload
    /// flag are read, and its classification (`group_classify()`, asym/SMT tests) can be
    /// skipped. Returns those three totals, or `None` when the group needs the full
    /// `update_sg_lb_stats()` (tasks queued, or the sums do not cover it). The work charged
    /// is the same as the full path's. Debug builds compare with the full statistics.
    #[allow(clippy::too_many_arguments)]
    fn empty_group_from_sums<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        d: &SchedDomain,
        group: GroupId,
        g: &SchedGroup,
        sg_overloaded: &mut bool,
        out: &mut LbOutput,
    ) -> Option<(u64, u64, u64)> {
        let s = self.sums.group(g.sgc);
        if s.h_nr_runnable != 0 || !self.sums_cover(bal, d, g) {
            return None;
        }
        let capacity = self.sgc[g.sgc].capacity.max(1);
        let over = d.parent.is_none() && s.nr_overloaded > 0;
        #[cfg(debug_assertions)]
        {
            let mut full_over = false;
            let mut scratch = LbOutput::default();
            let full = self.update_sg_lb_stats(env, bal, group, &mut full_over, &mut scratch);
            assert_eq!(
                (full.sum_h_nr_running, full.group_load, full.group_capacity),
                (0, s.load, capacity)
            );
            assert_eq!((full.group_util, full_over), (s.util, over));
            assert_eq!(scratch.work.cpus, u64::from(s.weight));
        }
        #[cfg(not(debug_assertions))]
        let _ = (env, group);
        out.work.cpus += u64::from(s.weight);
        *sg_overloaded |= over;
        Some((s.load, capacity, s.util))
    }

    /// Invariant check: the statistics from the sums equal the per-CPU walk's.
    #[cfg(debug_assertions)]
    fn check_sums<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        group: GroupId,
        sgs: &SgLbStats,
        overloaded: bool,
    ) {
        let mut walked = SgLbStats::zero();
        let mut walked_over = false;
        self.sg_walk(env, bal, group, &mut walked, &mut walked_over);
        assert_eq!(
            (walked, walked_over),
            (*sgs, overloaded),
            "balance sums of group {group:?} differ from the per-CPU walk (a runqueue \
             change was not reported by take_changed_cpus)"
        );
    }

    /// Re-read the CPUs the environment reports as changed, within the groups of domain
    /// `sd`, into the running sums ([`super::sums`]); they then answer the pass's group
    /// statistics until it moves a task. Without change tracking in the environment the
    /// sums stay unused.
    pub fn refresh_lb_sums<E: LbEnv + ?Sized>(&mut self, env: &mut E, sd: DomainId) {
        self.sums.fresh = false;
        self.sums.cover_all = false;
        // The changed CPUs are ORed straight into the set to re-read (no scratch mask).
        if !self.sums.enabled() || !env.take_changed_cpus(self.sums.dirty_mut()) {
            return;
        }
        let within = *self.sums.within(&self.domains, sd);
        let pct_min = u64::from(self.sums.pct_min);
        for cpu in self.sums.take_dirty_in(&within).iter() {
            let (load, util, runnable, h_nr_runnable, nr_running) = env.sg_cpu_stats(cpu);
            let idle = nr_running == 0 && env.idle_cpu(cpu);
            let single_reduced = !idle
                && h_nr_runnable == 1
                && env.capacity_of(cpu) * pct_min < env.arch_scale_cpu_capacity(cpu) * 100;
            let (nr_numa_running, nr_preferred_running) =
                if idle { (0, 0) } else { env.numa_counts(cpu) };
            let c = CpuContrib {
                load,
                util,
                runnable,
                h_nr_runnable,
                nr_running,
                idle,
                overloaded: nr_running > 1,
                single_reduced,
                nr_numa_running,
                nr_preferred_running,
            };
            self.sums.update(cpu, c);
        }
        self.sums.fresh = true;
    }

    /// `update_sd_pick_busiest()`: should non-local group `sg` (stats `sgs`) replace the
    /// current busiest candidate?
    pub fn update_sd_pick_busiest<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        sds: &SdLbStats,
        sg: GroupId,
        sgs: &SgLbStats,
    ) -> bool {
        let dom = &self.domains;
        self.update_sd_pick_busiest_in(env, bal, dom.domain(bal.sd), sds, dom.group(sg), sgs)
    }

    /// [`LoadBalancer::update_sd_pick_busiest`] with the domain and group looked up.
    fn update_sd_pick_busiest_in<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        bal: &BalanceEnv,
        d: &SchedDomain,
        sds: &SdLbStats,
        g: &SchedGroup,
        sgs: &SgLbStats,
    ) -> bool {
        let busiest = &sds.busiest_stat;
        let asym_cap = d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY);
        // Make sure that there is at least one task to pull.
        if sgs.sum_h_nr_running == 0 {
            return false;
        }
        // Do not pull misfit tasks we cannot help.
        if asym_cap
            && sgs.group_type == GroupType::MisfitTask
            && (!capacity_greater(env.capacity_of(bal.dst_cpu), self.sgc[g.sgc].max_capacity)
                || sds.local_stat.group_type != GroupType::HasSpare)
        {
            return false;
        }
        // A group with no more than one task per CPU and bigger CPUs: moving its tasks to
        // smaller CPUs would only hurt throughput. (Checked before the group types are
        // compared, as the kernel does, so it also vetoes a first, higher-type candidate.)
        if asym_cap
            && sgs.group_type <= GroupType::FullyBusy
            && capacity_greater(self.sgc[g.sgc].min_capacity, env.capacity_of(bal.dst_cpu))
        {
            return false;
        }
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        let busiest_flags = sds
            .busiest
            .map(|b| self.domains.group(b).flags)
            .unwrap_or(SdFlags::EMPTY);
        // The SMT-vs-non-SMT rule arrived with group_smt_balance (v6.6).
        let smt_vs_nonsmt = self.feat(Feature::SMT_VS_NONSMT_SPARE)
            && sds.busiest.is_some()
            && (busiest_flags.0 ^ g.flags.0) & SdFlags::SD_SHARE_CPUCAPACITY.0 != 0;
        let has_spare_cmp = || -> bool {
            // Do not pick an SMT group over a group of pure CPUs: pulling the single task
            // off an SMT core would leave the core idle.
            if smt_vs_nonsmt {
                return !(g.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY)
                    && sgs.sum_h_nr_running <= 1);
            }
            if sgs.idle_cpus > busiest.idle_cpus {
                return false;
            }
            !(sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running)
        };
        match sgs.group_type {
            // Select the overloaded group with the highest avg_load.
            GroupType::Overloaded => sgs.avg_load > busiest.avg_load,
            // The first imbalanced group is kept: no way to prefer another.
            GroupType::Imbalanced => false,
            // Pull from the lowest-priority group (before v6.9 an equal priority takes the
            // later group: `!sched_asym_prefer(sg, busiest)`).
            GroupType::AsymPacking => {
                let cur = sds
                    .busiest
                    .and_then(|b| self.domains.group(b).asym_prefer_cpu)
                    .unwrap_or(0);
                let cand = g.asym_prefer_cpu.unwrap_or(0);
                let (cur, cand) = (
                    env.arch_asym_cpu_priority(cur),
                    env.arch_asym_cpu_priority(cand),
                );
                if self.feat(Feature::PICK_BUSIEST_TIE_FIRST) {
                    cur > cand
                } else {
                    cand <= cur
                }
            }
            // The largest misfit load (before v6.9 an equal load takes the later group).
            GroupType::MisfitTask => {
                if self.feat(Feature::PICK_BUSIEST_TIE_FIRST) {
                    sgs.group_misfit_task_load > busiest.group_misfit_task_load
                } else {
                    sgs.group_misfit_task_load >= busiest.group_misfit_task_load
                }
            }
            GroupType::SmtBalance if sgs.idle_cpus != 0 || busiest.idle_cpus != 0 => {
                has_spare_cmp()
            }
            GroupType::SmtBalance | GroupType::FullyBusy => {
                if sgs.avg_load != busiest.avg_load {
                    sgs.avg_load > busiest.avg_load
                } else if self.feat(Feature::FULLY_BUSY_TIE_LATER) {
                    // On equal avg_load an SMT busiest group (more tasks per core) is kept.
                    !busiest_flags.contains(SdFlags::SD_SHARE_CPUCAPACITY)
                } else {
                    // Before v6.5 the first of equals stays.
                    false
                }
            }
            GroupType::HasSpare => has_spare_cmp(),
        }
    }

    /// `update_sd_lb_stats()`: gather the statistics of every group of `bal.sd` (local
    /// group first), pick the busiest, and update the root domain's overload flag.
    pub fn update_sd_lb_stats<E: LbEnv + ?Sized>(
        &mut self,
        env: &E,
        bal: &mut BalanceEnv,
        out: &mut LbOutput,
    ) -> SdLbStats {
        let dom = self.domains.clone();
        let d = dom.domain(bal.sd);
        let mut sds = SdLbStats::new();
        let mut sg_overloaded = false;
        let mut sum_util = 0u64;
        // One subset test per pass instead of one per group (`sums_cover()`): with every
        // group inside env->cpus the sums answer for all of them.
        self.sums.cover_all = self.sums.fresh
            && !d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY)
            && self.sums.within(&dom, bal.sd).is_subset_of(&bal.cpus);
        for &gid in &d.groups {
            out.work.groups += 1;
            let g = dom.group(gid);
            let local_group = g.span.test(bal.dst_cpu);
            if local_group
                && (bal.idle != IdleType::NewlyIdle || self.jiffies >= self.sgc[g.sgc].next_update)
            {
                self.update_group_capacity(env, bal.sd, bal.dst_cpu);
            }
            if !local_group
                && let Some((load, capacity, util)) =
                    self.empty_group_from_sums(env, bal, d, gid, g, &mut sg_overloaded, out)
            {
                sds.total_load += load;
                sds.total_capacity += capacity;
                sum_util += util;
                continue;
            }
            let sgs = self.update_sg_lb_stats_in(env, bal, d, gid, g, &mut sg_overloaded, out);
            if local_group {
                sds.local = Some(gid);
                sds.local_stat = sgs;
            } else if self.update_sd_pick_busiest_in(env, bal, d, &sds, g, &sgs) {
                sds.busiest = Some(gid);
                sds.busiest_stat = sgs;
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            sum_util += sgs.group_util;
        }
        if let Some(b) = sds.busiest {
            sds.prefer_sibling = dom.group(b).flags.contains(SdFlags::SD_PREFER_SIBLING);
        }
        if d.flags.contains(SdFlags::SD_NUMA) {
            bal.fbq_type = fbq_classify_group(&sds.busiest_stat);
        }
        if d.parent.is_none() {
            self.rd_overloaded = sg_overloaded;
        }
        self.update_idle_cpu_scan(bal, sum_util);
        sds
    }

    /// `update_idle_cpu_scan()` (SIS_UTIL): at the LLC-sized domain, outside newidle
    /// balancing, publish how many CPUs `select_idle_cpu()` may scan:
    /// `llc_weight × (1 − min(1, x²·pct² / (10⁴·1024²)))` with `x = sum_util /
    /// llc_weight`. Read it with [`LoadBalancer::nr_idle_scan`].
    fn update_idle_cpu_scan(&mut self, bal: &BalanceEnv, sum_util: u64) {
        if !self.feat(Feature::SIS_UTIL) || bal.idle == IdleType::NewlyIdle {
            return;
        }
        let llc_weight = self.domains.llc_size(bal.dst_cpu) as u64;
        let d = self.domains.domain(bal.sd);
        if d.span_weight as u64 != llc_weight || self.domains.sd_llc(bal.dst_cpu).is_none() {
            return;
        }
        let x = sum_util / llc_weight.max(1);
        let pct = u64::from(d.imbalance_pct);
        let tmp = (x * x * pct * pct / (10_000 * SCHED_CAPACITY_SCALE)).min(SCHED_CAPACITY_SCALE);
        let y = (SCHED_CAPACITY_SCALE - tmp) * llc_weight / SCHED_CAPACITY_SCALE;
        let id = self.domains.llc_id(bal.dst_cpu);
        // y <= llc_weight <= NR_CPUS_MAX (the kernel stores it as an int).
        self.llc_nr_idle_scan[id] = Some(u32::try_from(y).expect("nr_idle_scan <= the LLC's size"));
    }

    /// `sd_llc_shared->nr_idle_scan` of `cpu`'s LLC, once a periodic balance computed it.
    pub fn nr_idle_scan(&self, cpu: usize) -> Option<u32> {
        self.llc_nr_idle_scan[self.domains.llc_id(cpu)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sgs(nr: u32, weight: u32, cap: u64, util: u64, runnable: u64) -> SgLbStats {
        let mut s = SgLbStats::zero();
        s.sum_nr_running = nr;
        s.group_weight = weight;
        s.group_capacity = cap;
        s.group_util = util;
        s.group_runnable = runnable;
        s
    }

    #[test]
    fn classify_follows_kernel_thresholds() {
        // 3 tasks on 2 CPUs, util 2048 of 2048: 2048*100 < 2048*117 -> overloaded.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 2048, 2048, 3072)),
            GroupType::Overloaded
        );
        // 3 tasks on 2 CPUs but tiny util and runnable: not overloaded, has capacity.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 2048, 200, 300)),
            GroupType::HasSpare
        );
        // One task per CPU, util 1800/2048: 2048*100 > 1800*117 is false -> fully busy.
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 2048, 1800, 1800)),
            GroupType::FullyBusy
        );
        // Same with util 1700: 204800 > 198900 -> has spare.
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 2048, 1700, 1700)),
            GroupType::HasSpare
        );
        // Runnable pressure alone (2048*117 < 2500*100) makes a group with one task per
        // CPU fully busy.
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 2048, 1000, 2500)),
            GroupType::FullyBusy
        );
        // The affinity flag outranks everything but overload.
        assert_eq!(
            group_classify(117, true, &sgs(1, 2, 2048, 100, 100)),
            GroupType::Imbalanced
        );
        let mut misfit = sgs(1, 2, 2048, 100, 100);
        misfit.group_misfit_task_load = 700;
        assert_eq!(group_classify(117, false, &misfit), GroupType::MisfitTask);
        misfit.group_smt_balance = true;
        assert_eq!(group_classify(117, false, &misfit), GroupType::SmtBalance);
    }

    #[test]
    fn group_type_order_is_pull_priority() {
        assert!(GroupType::HasSpare < GroupType::FullyBusy);
        assert!(GroupType::FullyBusy < GroupType::MisfitTask);
        assert!(GroupType::MisfitTask < GroupType::SmtBalance);
        assert!(GroupType::SmtBalance < GroupType::AsymPacking);
        assert!(GroupType::AsymPacking < GroupType::Imbalanced);
        assert!(GroupType::Imbalanced < GroupType::Overloaded);
    }
}
