//! The placement slow path, taken for fork and exec (and for wakeups when a domain has
//! `SD_BALANCE_WAKE`): `sched_balance_find_dst_cpu()` (was `find_idlest_cpu()`) descends
//! from the highest domain with the balance flag, choosing at each level the idlest group
//! (`sched_balance_find_dst_group()`, was `find_idlest_group()`) and inside it the idlest
//! CPU (`sched_balance_find_dst_group_cpu()`, was `find_idlest_group_cpu()`).
//!
//! Group statistics follow `update_sg_wakeup_stats()` and `group_classify()` (the v5.5
//! rework, 57abff067a08 "sched/fair: Rework find_idlest_group()"); from v6.19 (model switch
//! `WAKEUP_STATS_ALLOWED`, 82d6e01a0699) they add up only the group's CPUs the task may run
//! on, the group's capacity staying `sgc->capacity` (every CPU); kernels before v5.5
//! compare the groups' capacity-scaled load with half the domain's imbalance margin, in
//! the v3.x form (the v4.x `runnable_load`/spare-capacity refinements are approximated
//! by it). CPUs inside a group: shallowest idle state, then most recently idle, else the
//! least loaded (from v3.19, 83a0a96a5f26); earlier kernels took the least loaded CPU.
//!
//! Left out: `group_asym_packing` and `group_smt_balance` (no preset has
//! `SD_ASYM_PACKING`; `group_smt_balance` is never set on the wakeup path in the kernel
//! either), core-scheduling cookies.

use super::{
    Call, GroupWakeSums, NICE_0_LOAD_DOWN, NUMA_IMBALANCE_MIN, SCHED_CAPACITY_SCALE, Topo, Wakeup,
    WakeupEnv,
};
use crate::cpumask::CpuMask;
use crate::domains::{DomainId, GroupId, SdFlags};
use crate::kconfig::features::Feature;
use crate::task::TaskId;
use crate::units::cpu_count_u32;

use crate::sched::types::GroupType;

/// `struct sg_lb_stats` as `update_sg_wakeup_stats()` fills it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgWakeupStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub group_capacity: u64,
    /// Max `capacity_of()` in the group (`sgc->max_capacity`).
    pub max_capacity: u64,
    pub sum_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_misfit_task_load: u64,
    pub group_type: GroupType,
}

/// `group_is_overloaded()`.
pub fn group_is_overloaded(imbalance_pct: u64, sgs: &SgWakeupStats) -> bool {
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    sgs.group_capacity * 100 < sgs.group_util * imbalance_pct
        || sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100
}

/// `group_has_capacity()`.
pub fn group_has_capacity(imbalance_pct: u64, sgs: &SgWakeupStats) -> bool {
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100 {
        return false;
    }
    sgs.group_capacity * 100 > sgs.group_util * imbalance_pct
}

/// `group_classify()` without the asym-packing and SMT-balance types (never set here).
pub fn group_classify(imbalance_pct: u64, sg_imbalanced: bool, sgs: &SgWakeupStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        GroupType::Overloaded
    } else if sg_imbalanced {
        GroupType::Imbalanced
    } else if sgs.group_misfit_task_load != 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(imbalance_pct, sgs) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `adjust_numa_imbalance()`: a small imbalance is allowed while the destination runs at
/// most `imb_numa_nr` tasks.
pub fn adjust_numa_imbalance(imbalance: u64, dst_running: u64, imb_numa_nr: u64) -> u64 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    imbalance
}

/// `update_pick_idlest()`: is `sgs` idler than the current `idlest`?
fn update_pick_idlest(idlest: &SgWakeupStats, sgs: &SgWakeupStats) -> bool {
    if sgs.group_type < idlest.group_type {
        return true;
    }
    if sgs.group_type > idlest.group_type {
        return false;
    }
    match sgs.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => idlest.avg_load > sgs.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
        GroupType::MisfitTask => idlest.max_capacity < sgs.max_capacity,
        GroupType::HasSpare => {
            idlest.idle_cpus < sgs.idle_cpus
                || (idlest.idle_cpus == sgs.idle_cpus && idlest.group_util > sgs.group_util)
        }
    }
}

impl Wakeup {
    /// `sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sched_balance_find_dst_cpu(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        cpu: usize,
        prev_cpu: usize,
        sd_flag: SdFlags,
        call: &mut Call,
    ) -> usize {
        let allowed = env.cpus_allowed(p);
        if !topo.domains.domain(sd).span.intersects(allowed) {
            return prev_cpu;
        }
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let mut sd = Some(sd);
        while let Some(id) = sd {
            let d = topo.domains.domain(id);
            if !d.flags.intersects(sd_flag) {
                sd = d.child;
                continue;
            }
            let Some(group) = self.sched_balance_find_dst_group(topo, env, id, p, cpu, call) else {
                sd = d.child;
                continue;
            };
            new_cpu = self.sched_balance_find_dst_group_cpu(topo, env, group, p, cpu, call);
            if new_cpu == cpu {
                sd = d.child;
                continue;
            }
            cpu = new_cpu;
            call.explain.slow_moves = call.explain.slow_moves.saturating_add(1);
            let weight = d.span_weight;
            sd = None;
            for &t in topo.domains.cpu_domains(cpu) {
                let td = topo.domains.domain(t);
                if weight <= td.span_weight {
                    break;
                }
                if td.flags.intersects(sd_flag) {
                    sd = Some(t);
                }
            }
        }
        new_cpu
    }

    /// `update_sg_wakeup_stats(sd, group, sgs, p)`: the group's load, util, runnable and
    /// task counts without `p`, its idle CPUs, and its type.
    pub(crate) fn update_sg_wakeup_stats(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        group: GroupId,
        p: TaskId,
        call: &mut Call,
    ) -> SgWakeupStats {
        let d = topo.domains.domain(sd);
        let sg = topo.domains.group(group);
        let asym = d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY);
        let task_util = if asym { env.task_util_est(p) } else { 0 };
        let mut sgs = SgWakeupStats {
            avg_load: 0,
            group_load: 0,
            group_util: 0,
            group_runnable: 0,
            group_capacity: 0,
            max_capacity: 0,
            sum_nr_running: 0,
            idle_cpus: 0,
            group_weight: cpu_count_u32(sg.group_weight),
            group_misfit_task_load: u64::from(asym),
            group_type: GroupType::HasSpare,
        };
        #[cfg(debug_assertions)]
        let unfilled = sgs;
        // From v6.19 (WAKEUP_STATS_ALLOWED) only the CPUs `p` may run on are added up
        // (`for_each_cpu_and(i, sched_group_span(group), p->cpus_ptr)`); the group's sums
        // hold every CPU, so a task that may not use the whole group walks it.
        let allowed = self
            .params
            .feat(Feature::WAKEUP_STATS_ALLOWED)
            .then(|| env.cpus_allowed(p))
            .filter(|a| !sg.span.andnot(a).is_empty());
        let from_sums = if asym || allowed.is_some() {
            None
        } else {
            Self::sg_wakeup_sums(env, sg, p)
        };
        let capacity_sum = match from_sums {
            Some(sums) => {
                sgs.group_load = sums.load;
                sgs.group_util = sums.util;
                sgs.group_runnable = sums.runnable;
                sgs.sum_nr_running = sums.nr_running;
                sgs.idle_cpus = sums.idle_cpus;
                // (`max_capacity` stays 0: it is read only for misfit groups, which need
                // asymmetry, and asymmetric domains walk.)
                #[cfg(debug_assertions)]
                {
                    let mut walked = unfilled;
                    let cap = Self::sg_wakeup_walk(env, sg, None, p, task_util, &mut walked);
                    walked.max_capacity = 0;
                    assert_eq!(
                        (walked, cap),
                        (sgs, sums.capacity),
                        "group sums differ from the walk"
                    );
                }
                sums.capacity
            }
            None => Self::sg_wakeup_walk(env, sg, allowed, p, task_util, &mut sgs),
        };
        call.cost.cpus += match allowed {
            Some(a) => cpu_count_u32(sg.span.and(a).weight()),
            None => cpu_count_u32(sg.group_weight),
        };
        sgs.group_capacity = env.group_capacity(&sg.span).unwrap_or(capacity_sum).max(1);
        let pct = u64::from(d.imbalance_pct);
        sgs.group_type = group_classify(pct, env.sg_imbalanced(sg.sgc), &sgs);
        if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        }
        sgs
    }

    /// The per-CPU part of `update_sg_wakeup_stats()`: add every CPU of the group's span
    /// (only those in `allowed` when given) into `sgs` (without `p`); returns the sum of
    /// the capacities of the whole span, which with `max_capacity` stands for the group's
    /// `sgc->capacity` and `sgc->max_capacity` (never limited to the allowed CPUs).
    fn sg_wakeup_walk(
        env: &impl WakeupEnv,
        sg: &crate::domains::SchedGroup,
        allowed: Option<&CpuMask>,
        p: TaskId,
        task_util: u64,
        sgs: &mut SgWakeupStats,
    ) -> u64 {
        let mut capacity_sum = 0;
        for i in sg.span.iter() {
            let capacity = env.capacity_of(i);
            capacity_sum += capacity;
            sgs.max_capacity = sgs.max_capacity.max(capacity);
            if allowed.is_some_and(|a| !a.test(i)) {
                continue;
            }
            sgs.group_load += env.cpu_load_without(i, p);
            sgs.group_util += env.cpu_util_without(i, p);
            sgs.group_runnable += env.cpu_runnable_without(i, p);
            let local = usize::from(env.task_running_on_cpu(i, p));
            let nr_running = env.nr_running(i).saturating_sub(local);
            sgs.sum_nr_running += u32::try_from(nr_running)
                .expect("nr_running above u32::MAX: beyond the task limit");
            if nr_running == 0 && env.idle_cpu_without(i, p) {
                sgs.idle_cpus += 1;
            }
            // (`group_misfit_task_load` starts non-zero only on asymmetric domains.)
            if sgs.group_misfit_task_load != 0 && Self::util_fits_cpu(env, task_util, i) {
                sgs.group_misfit_task_load = 0;
            }
        }
        capacity_sum
    }

    /// `update_sg_wakeup_stats()`'s per-CPU sums from the environment's group sums, with
    /// the CPU `p` is queued on (if in the group) counted without `p`, as the walk counts
    /// it. `None` when the environment keeps no sums.
    fn sg_wakeup_sums(
        env: &impl WakeupEnv,
        sg: &crate::domains::SchedGroup,
        p: TaskId,
    ) -> Option<GroupWakeSums> {
        let mut s = env.group_sums(sg)?;
        if let Some(c) = env.task_queued_cpu(p).filter(|&c| sg.span.test(c)) {
            s.load = s.load - env.cpu_load(c) + env.cpu_load_without(c, p);
            s.util = s.util - env.cpu_util(c) + env.cpu_util_without(c, p);
            s.runnable = s.runnable - env.cpu_runnable(c) + env.cpu_runnable_without(c, p);
            // `p` is queued there, so the CPU did not count as idle and runs ≥ 1 task.
            let nr_running = env.nr_running(c) - 1;
            s.nr_running -= 1;
            if nr_running == 0 && env.idle_cpu_without(c, p) {
                s.idle_cpus += 1;
            }
        }
        Some(s)
    }

    /// `sched_balance_find_dst_group(sd, p, this_cpu)`: the idlest allowed non-local
    /// group, if moving there beats staying in the local group.
    fn sched_balance_find_dst_group(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        this_cpu: usize,
        call: &mut Call,
    ) -> Option<GroupId> {
        if !self.params.at_least(5, 5) {
            return self.find_idlest_group_legacy(topo, env, sd, p, this_cpu, call);
        }
        let d = topo.domains.domain(sd);
        let allowed = env.cpus_allowed(p);
        let mut idlest: Option<(GroupId, SgWakeupStats)> = None;
        let mut local: Option<(GroupId, SgWakeupStats)> = None;
        for &g in &d.groups {
            let sg = topo.domains.group(g);
            if !sg.span.intersects(allowed) {
                continue;
            }
            call.cost.groups += 1;
            let sgs = self.update_sg_wakeup_stats(topo, env, sd, g, p, call);
            if sg.span.test(this_cpu) {
                local = Some((g, sgs));
            } else {
                // The kernel seeds `idlest_sgs` as {overloaded, avg_load = UINT_MAX}.
                let better = match &idlest {
                    None => {
                        let seed = SgWakeupStats {
                            avg_load: u64::from(u32::MAX),
                            group_type: GroupType::Overloaded,
                            ..sgs
                        };
                        update_pick_idlest(&seed, &sgs)
                    }
                    Some((_, best)) => update_pick_idlest(best, &sgs),
                };
                if better {
                    idlest = Some((g, sgs));
                }
            }
        }
        let (idlest_g, idlest_sgs) = idlest?;
        let Some((local_g, local_sgs)) = local else {
            return Some(idlest_g);
        };
        if local_sgs.group_type < idlest_sgs.group_type {
            return None;
        }
        if local_sgs.group_type > idlest_sgs.group_type {
            return Some(idlest_g);
        }
        let pct = u64::from(d.imbalance_pct);
        match local_sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = NICE_0_LOAD_DOWN * (pct - 100) / 100;
                if d.flags.contains(SdFlags::SD_NUMA)
                    && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load
                {
                    return None;
                }
                if idlest_sgs.avg_load >= local_sgs.avg_load + imbalance {
                    return None;
                }
                if 100 * local_sgs.avg_load <= pct * idlest_sgs.avg_load {
                    return None;
                }
            }
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => return None,
            GroupType::MisfitTask => {
                if local_sgs.max_capacity >= idlest_sgs.max_capacity {
                    return None;
                }
            }
            GroupType::HasSpare => {
                if d.flags.contains(SdFlags::SD_NUMA) {
                    if let Some(nid) = env.numa_preferred_nid(p) {
                        if topo.cpu_to_node(this_cpu) == nid {
                            return None;
                        }
                        let first = topo.domains.group(idlest_g).span.first();
                        if first.is_some_and(|c| topo.cpu_to_node(c) == nid) {
                            return Some(idlest_g);
                        }
                    }
                    // `p->nr_cpus_allowed != NR_CPUS` holds on every real system (NR_CPUS
                    // is the compile-time maximum), so the pinned-task cap always applies.
                    let local_allowed =
                        topo.domains.group(local_g).span.and(allowed).weight() as u64;
                    let imb_numa_nr = local_allowed.min(u64::from(d.imb_numa_nr));
                    let imbalance = u64::from(local_sgs.idle_cpus.abs_diff(idlest_sgs.idle_cpus));
                    let dst_running = u64::from(local_sgs.sum_nr_running) + 1;
                    if adjust_numa_imbalance(imbalance, dst_running, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    return None;
                }
            }
        }
        Some(idlest_g)
    }

    /// Before v5.5: the allowed group with the least capacity-scaled load, taken only if
    /// the local group's load exceeds it by more than half the domain's imbalance margin
    /// (`100 * this_load >= (100 + (imbalance_pct - 100) / 2) * min_load`).
    fn find_idlest_group_legacy(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        this_cpu: usize,
        call: &mut Call,
    ) -> Option<GroupId> {
        let d = topo.domains.domain(sd);
        let allowed = env.cpus_allowed(p);
        let imbalance = 100 + (u64::from(d.imbalance_pct) - 100) / 2;
        let mut this_load = 0;
        let mut idlest: Option<(GroupId, u64)> = None;
        for &g in &d.groups {
            let sg = topo.domains.group(g);
            if !sg.span.intersects(allowed) {
                continue;
            }
            call.cost.groups += 1;
            let mut load = 0;
            let mut capacity_sum = 0;
            for i in sg.span.iter() {
                call.cost.cpus += 1;
                load += env.cpu_load(i);
                capacity_sum += env.capacity_of(i);
            }
            let capacity = env.group_capacity(&sg.span).unwrap_or(capacity_sum);
            let avg_load = load * SCHED_CAPACITY_SCALE / capacity.max(1);
            if sg.span.test(this_cpu) {
                this_load = avg_load;
            } else if idlest.is_none_or(|(_, min)| avg_load < min) {
                idlest = Some((g, avg_load));
            }
        }
        let (g, min_load) = idlest?;
        if 100 * this_load < imbalance * min_load {
            return None;
        }
        Some(g)
    }

    /// `Wakeup::sched_balance_find_dst_group` alone (no placement call, its cost not
    /// kept): the kernel differential tests compare it with the kernel's.
    pub fn find_dst_group(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        p: TaskId,
        this_cpu: usize,
    ) -> Option<GroupId> {
        let mut call = Call::bare(this_cpu);
        self.sched_balance_find_dst_group(topo, env, sd, p, this_cpu, &mut call)
    }

    /// `Wakeup::update_sg_wakeup_stats` alone (its cost not kept): the kernel
    /// differential tests compare it with the kernel's.
    pub fn sg_wakeup_stats(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        sd: DomainId,
        group: GroupId,
        p: TaskId,
    ) -> SgWakeupStats {
        let mut call = Call::bare(0);
        self.update_sg_wakeup_stats(topo, env, sd, group, p, &mut call)
    }

    /// `Wakeup::sched_balance_find_dst_group_cpu` alone (no placement call, its cost
    /// not kept): the kernel differential tests compare it with the kernel's.
    pub fn find_dst_group_cpu(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        group: GroupId,
        p: TaskId,
        this_cpu: usize,
    ) -> usize {
        let mut call = Call::bare(this_cpu);
        self.sched_balance_find_dst_group_cpu(topo, env, group, p, this_cpu, &mut call)
    }

    /// `sched_balance_find_dst_group_cpu(group, p, this_cpu)`: a SCHED_IDLE-only CPU at
    /// once; else the idle CPU in the shallowest idle state (ties: most recently idle);
    /// else the least loaded allowed CPU (`this_cpu` if none is less loaded than
    /// `u64::MAX`).
    fn sched_balance_find_dst_group_cpu(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        group: GroupId,
        p: TaskId,
        this_cpu: usize,
        call: &mut Call,
    ) -> usize {
        let sg = topo.domains.group(group);
        if sg.group_weight == 1 {
            return sg.span.first().unwrap_or(this_cpu);
        }
        let legacy = !self.params.at_least(3, 19);
        let mut min_exit_latency = u64::MAX;
        let mut latest_idle_timestamp = 0;
        let mut shallowest = None;
        let mut min_load = u64::MAX;
        let mut least_loaded = this_cpu;
        for i in sg.span.and(env.cpus_allowed(p)).iter() {
            call.cost.cpus += 1;
            if legacy {
                let load = env.cpu_load(i);
                if load < min_load || (load == min_load && i == this_cpu) {
                    min_load = load;
                    least_loaded = i;
                }
                continue;
            }
            if env.sched_idle_cpu(i) {
                return i;
            }
            if env.available_idle_cpu(i) {
                let exit = env.idle_exit_latency_ns(i);
                let stamp = env.idle_stamp_ns(i);
                match exit {
                    Some(lat) if lat < min_exit_latency => {
                        min_exit_latency = lat;
                        latest_idle_timestamp = stamp;
                        shallowest = Some(i);
                    }
                    _ if (exit.is_none() || exit == Some(min_exit_latency))
                        && stamp > latest_idle_timestamp =>
                    {
                        latest_idle_timestamp = stamp;
                        shallowest = Some(i);
                    }
                    _ => {}
                }
                // The kernel's first idle CPU without a known state and a zero idle
                // stamp is never taken by the rules above; take it so an idle CPU
                // still beats the busy ones (`shallowest_idle_cpu` starts at -1 and
                // `idle_stamp > 0` always holds for a CPU that went idle in the kernel).
                if shallowest.is_none() {
                    shallowest = Some(i);
                }
            } else if shallowest.is_none() {
                let load = env.cpu_load(i);
                if load < min_load {
                    min_load = load;
                    least_loaded = i;
                }
            }
        }
        shallowest.unwrap_or(least_loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sgs(nr: u32, weight: u32, util: u64, runnable: u64, capacity: u64) -> SgWakeupStats {
        SgWakeupStats {
            avg_load: 0,
            group_load: 0,
            group_util: util,
            group_runnable: runnable,
            group_capacity: capacity,
            max_capacity: 1024,
            sum_nr_running: nr,
            idle_cpus: 0,
            group_weight: weight,
            group_misfit_task_load: 0,
            group_type: GroupType::HasSpare,
        }
    }

    #[test]
    fn group_classify_thresholds() {
        // Fewer tasks than CPUs: spare capacity whatever the util.
        assert_eq!(
            group_classify(117, false, &sgs(1, 2, 2048, 2048, 2048)),
            GroupType::HasSpare
        );
        // As many tasks as CPUs: fully busy once util * 117% reaches capacity.
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 1750, 1750, 2048)),
            GroupType::HasSpare
        );
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 1751, 1751, 2048)),
            GroupType::FullyBusy
        );
        // More tasks than CPUs and util or runnable over the margin: overloaded.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 1751, 0, 2048)),
            GroupType::Overloaded
        );
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 0, 2397, 2048)),
            GroupType::Overloaded
        );
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 0, 2396, 2048)),
            GroupType::HasSpare
        );
        // sgc->imbalance ranks above misfit and below overloaded.
        assert_eq!(
            group_classify(117, true, &sgs(1, 2, 0, 0, 2048)),
            GroupType::Imbalanced
        );
        assert!(GroupType::HasSpare < GroupType::FullyBusy);
        assert!(GroupType::Imbalanced < GroupType::Overloaded);
    }

    #[test]
    fn numa_imbalance_allowance() {
        // Up to NUMA_IMBALANCE_MIN idle CPUs of difference are ignored while the
        // destination runs at most imb_numa_nr tasks.
        assert_eq!(adjust_numa_imbalance(2, 3, 4), 0);
        assert_eq!(adjust_numa_imbalance(3, 3, 4), 3);
        assert_eq!(adjust_numa_imbalance(2, 5, 4), 2);
    }
}
