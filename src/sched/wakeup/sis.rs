//! The wakeup fast path: `select_idle_sibling()` and its scans (`select_idle_capacity()`,
//! `select_idle_smt()`, `select_idle_core()`, `select_idle_cpu()`, `__select_idle_cpu()`),
//! plus the per-LLC hints they read: `has_idle_cores` (`set_idle_cores()`,
//! `test_idle_cores()`, `__update_idle_core()`) and `nr_idle_scan` (`update_idle_cpu_scan()`,
//! SIS_UTIL).
//!
//! Version shapes (commits in `docs/fidelity.md`): before v4.9 the pre-rewrite scan for a
//! fully idle group below the LLC; v4.9–v5.11 `select_idle_core()` (whole LLC),
//! `select_idle_cpu()` (SIS_PROP-limited), `select_idle_smt(target)` in sequence; v5.12+
//! one merged `select_idle_cpu()` (idle-core mode without a limit); v5.16+
//! `select_idle_smt(prev)` when no idle core is hinted; v6.8+ cluster-first scan and the
//! `prev_aff` candidate; `recent_used_cpu` from v4.16 (updated unconditionally to prev from
//! v5.13); the asymmetric-capacity scan from v5.7 (first, before the shortcuts, until
//! v5.10; after them, with `asym_fits_cpu()` on every shortcut, from v5.10).
//!
//! SIS_PROP's idle estimate by version: v4.13–v5.13 `avg_idle / 512` of the waking CPU;
//! v5.14 (94aafc3ee31d, "sched/fair: Age the average idle time") to v6.7 its
//! `wake_avg_idle`, halved per jiffy since its last wakeup from idle and reduced by each
//! complete scan's time ([`super::WakeAvgIdle`]); both against the LLC's `avg_scan_cost`,
//! floor 4. Approximation: the scan time both forms average is the number of examined CPUs
//! times [`super::WakeupParams::idle_scan_step_ns`], because the simulator charges that cost
//! rather than measuring a clock.

use super::{Call, SCHED_CAPACITY_SCALE, Topo, Wakeup, WakeupEnv};
use crate::cpumask::{CpuMask, WrapCursor};
use crate::domains::{DomainId, SdFlags};
use crate::kconfig::features::Feature;
use crate::sched::types::IdleType;
use crate::task::TaskId;

/// Where `select_idle_sibling()` found its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SisStep {
    /// The target itself is idle (and fits).
    Target,
    /// The previous CPU is idle and shares the LLC (and cluster) with the target.
    Prev,
    /// `p->recent_used_cpu` is idle and shares the LLC (and cluster) with the target.
    RecentUsed,
    /// `select_idle_capacity()` (asymmetric capacity) found an idle CPU.
    IdleCapacity,
    /// `select_idle_capacity()` found nothing: the target.
    IdleCapacityNone,
    /// The target has no LLC domain: the target.
    NoLlc,
    /// `select_idle_smt()`: an idle SMT sibling.
    IdleSmt,
    /// `select_idle_core()`: a core whose siblings are all idle.
    IdleCore,
    /// `select_idle_cpu()`: an idle CPU (CPU mode, or a sibling remembered in core mode).
    IdleCpu,
    /// Scan failed: the idle prev CPU outside the target's cluster (v6.8+).
    PrevAff,
    /// Scan failed: the idle recent_used_cpu outside the target's cluster (v6.8+).
    RecentFallback,
    /// Nothing idle found: the target.
    TargetFallback,
    /// Pre-v4.9: first allowed CPU of a fully idle group below the LLC.
    LegacyGroup,
}

impl SisStep {
    /// Every step, in declaration order ([`SisStep::index`]).
    pub const ALL: [SisStep; 13] = [
        SisStep::Target,
        SisStep::Prev,
        SisStep::RecentUsed,
        SisStep::IdleCapacity,
        SisStep::IdleCapacityNone,
        SisStep::NoLlc,
        SisStep::IdleSmt,
        SisStep::IdleCore,
        SisStep::IdleCpu,
        SisStep::PrevAff,
        SisStep::RecentFallback,
        SisStep::TargetFallback,
        SisStep::LegacyGroup,
    ];

    /// Position in [`SisStep::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// `fits_capacity(cap, max)`: `cap` fits in 80% of `max` (the 1280/1024 margin).
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

impl Wakeup {
    fn idleish(env: &impl WakeupEnv, cpu: usize) -> bool {
        env.available_idle_cpu(cpu) || env.sched_idle_cpu(cpu)
    }

    /// `util_fits_cpu(util, 0, 1024, cpu) > 0`: without uclamp, `fits_capacity(util,
    /// capacity_of(cpu))`.
    pub fn util_fits_cpu(env: &impl WakeupEnv, util: u64, cpu: usize) -> bool {
        fits_capacity(util, env.capacity_of(cpu))
    }

    /// `select_idle_sibling(p, prev, target)`: the fast path's idle-CPU search around
    /// `target` (the waker's CPU if `wake_affine()` chose it, else `prev`).
    pub(crate) fn select_idle_sibling(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev: usize,
        target: usize,
        call: &mut Call,
    ) -> usize {
        if !self.params.at_least(4, 9) {
            return self.select_idle_sibling_legacy(topo, env, p, prev, target, call);
        }
        let allowed = env.cpus_allowed(p);
        let asym = topo.domains.sched_asym_cpucapacity && self.params.at_least(5, 7);
        let asym_shortcuts = asym && self.params.at_least(5, 10);
        let task_util = if asym { env.task_util_est(p) } else { 0 };
        let fits = |c: usize| !asym_shortcuts || Self::util_fits_cpu(env, task_util, c);
        let step = |s: SisStep, cpu: usize, call: &mut Call| {
            call.explain.sis = Some(s);
            cpu
        };

        if asym && !asym_shortcuts {
            // v5.7–v5.9: the capacity scan replaced the whole function on such systems.
            if let Some(sd) = topo.domains.sd_asym_cpucapacity(target) {
                return match self.select_idle_capacity(topo, env, p, sd, target, task_util, call) {
                    Some(c) => step(SisStep::IdleCapacity, c, call),
                    None => step(SisStep::IdleCapacityNone, target, call),
                };
            }
        }

        if Self::idleish(env, target) && fits(target) {
            return step(SisStep::Target, target, call);
        }

        let cluster = topo.domains.sched_cluster_active && self.params.at_least(6, 8);
        let mut prev_aff = None;
        if prev != target
            && topo.domains.cpus_share_cache(prev, target)
            && Self::idleish(env, prev)
            && fits(prev)
        {
            if !cluster || topo.domains.cpus_share_resources(prev, target) {
                return step(SisStep::Prev, prev, call);
            }
            prev_aff = Some(prev);
        }

        // (The per-CPU kthread shortcut is not modelled: no kthreads.)

        let mut recent = None;
        if self.params.at_least(4, 16) {
            let r = self.task(p).recent_used_cpu;
            let unconditional = self.params.at_least(5, 13);
            if unconditional {
                self.task_mut(p).recent_used_cpu = Some(prev);
            }
            if let Some(r) = r
                && r != prev
                && r != target
                && topo.domains.cpus_share_cache(r, target)
                && Self::idleish(env, r)
                && allowed.test(r)
                && fits(r)
            {
                if !unconditional {
                    // v4.16–v5.12: replaced by prev only when it is used.
                    self.task_mut(p).recent_used_cpu = Some(prev);
                }
                if !cluster || topo.domains.cpus_share_resources(r, target) {
                    return step(SisStep::RecentUsed, r, call);
                }
                recent = Some(r);
            }
        }

        if asym_shortcuts && let Some(sd) = topo.domains.sd_asym_cpucapacity(target) {
            return match self.select_idle_capacity(topo, env, p, sd, target, task_util, call) {
                Some(c) => step(SisStep::IdleCapacity, c, call),
                None => step(SisStep::IdleCapacityNone, target, call),
            };
        }

        let Some(sd) = topo.domains.sd_llc(target) else {
            return step(SisStep::NoLlc, target, call);
        };

        if !self.params.at_least(5, 12) {
            return self.select_idle_split(topo, env, p, sd, target, call);
        }

        let mut has_idle_core = false;
        if self.smt_active {
            has_idle_core = self.test_idle_cores(topo, target);
            if self.params.at_least(5, 16)
                && !has_idle_core
                && topo.domains.cpus_share_cache(prev, target)
                && let Some(c) = self.select_idle_smt(topo, env, p, sd, prev, call)
            {
                return step(SisStep::IdleSmt, c, call);
            }
        }

        if let Some((c, core)) = self.select_idle_cpu(topo, env, p, sd, has_idle_core, target, call)
        {
            let s = if core {
                SisStep::IdleCore
            } else {
                SisStep::IdleCpu
            };
            return step(s, c, call);
        }
        if let Some(c) = prev_aff {
            return step(SisStep::PrevAff, c, call);
        }
        if let Some(c) = recent {
            return step(SisStep::RecentFallback, c, call);
        }
        step(SisStep::TargetFallback, target, call)
    }

    /// `select_idle_capacity()`: on asymmetric-capacity systems, the first idle CPU (from
    /// `target`, wrapping) where the task fits, else the idle CPU with the largest
    /// capacity.
    #[allow(clippy::too_many_arguments)]
    fn select_idle_capacity(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        target: usize,
        task_util: u64,
        call: &mut Call,
    ) -> Option<usize> {
        let cpus = topo.domains.domain(sd).span.and(env.cpus_allowed(p));
        let mut best: Option<(usize, u64)> = None;
        for cpu in cpus.iter_wrap(target) {
            call.cost.cpus += 1;
            if !Self::idleish(env, cpu) {
                continue;
            }
            let cap = env.capacity_of(cpu);
            if Self::util_fits_cpu(env, task_util, cpu) {
                return Some(cpu);
            }
            if best.is_none_or(|(_, best_cap)| cap > best_cap) {
                best = Some((cpu, cap));
            }
        }
        best.map(|(c, _)| c)
    }

    /// `Wakeup::select_idle_cpu` alone (no placement call, its cost not kept; the
    /// waking CPU is `target`): the kernel differential tests compare it with the kernel's.
    pub fn scan_idle_cpu(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        has_idle_core: bool,
        target: usize,
    ) -> Option<(usize, bool)> {
        let mut call = Call::bare(target);
        self.select_idle_cpu(topo, env, p, sd, has_idle_core, target, &mut call)
    }

    /// `Wakeup::select_idle_sibling` alone, as [`Wakeup::scan_idle_cpu`] (it updates the
    /// task's `recent_used_cpu` as the kernel does).
    pub fn scan_idle_sibling(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev: usize,
        target: usize,
    ) -> usize {
        let mut call = Call::bare(target);
        self.select_idle_sibling(topo, env, p, prev, target, &mut call)
    }

    /// `Wakeup::select_idle_smt` alone, as [`Wakeup::scan_idle_cpu`].
    pub fn scan_idle_smt(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        target: usize,
    ) -> Option<usize> {
        self.select_idle_smt(topo, env, p, sd, target, &mut Call::bare(target))
    }

    /// `select_idle_smt(p, sd, target)`: an idle, allowed SMT sibling of `target` inside
    /// `sd`.
    fn select_idle_smt(
        &self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        target: usize,
        call: &mut Call,
    ) -> Option<usize> {
        let allowed = env.cpus_allowed(p);
        let span = &topo.domains.domain(sd).span;
        for &cpu in self.smt_siblings(target) {
            let cpu = cpu as usize;
            if cpu == target || !allowed.test(cpu) || !span.test(cpu) {
                continue;
            }
            call.cost.cpus += 1;
            if Self::idleish(env, cpu) {
                return Some(cpu);
            }
        }
        None
    }

    /// `select_idle_core(p, core, cpus, &idle_cpu)` (v5.12+): `core` if all its SMT
    /// siblings are idle; on the way remember the first idle (or SCHED_IDLE-only) allowed
    /// sibling in `idle_cpu`; a busy core's siblings leave `cpus`. Inlined: it runs once
    /// per core visited, and the call's entry and exit were an eighth of its work.
    #[inline]
    fn select_idle_core(
        &self,
        env: &impl WakeupEnv,
        core: usize,
        cpus: &mut CpuMask,
        idle_cpu: &mut Option<usize>,
        call: &mut Call,
    ) -> Option<usize> {
        let smt = self.smt_siblings(core);
        let mut idle = true;
        for &cpu in smt {
            let cpu = cpu as usize;
            call.cost.cpus += 1;
            if !env.available_idle_cpu(cpu) {
                idle = false;
                if idle_cpu.is_none() {
                    if env.sched_idle_cpu(cpu) && cpus.test(cpu) {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && cpus.test(cpu) {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        for &cpu in smt {
            cpus.clear(cpu as usize);
        }
        None
    }

    /// One CPU of the CPU-mode scan: `__select_idle_cpu()`.
    fn select_idle_one(env: &impl WakeupEnv, cpu: usize, call: &mut Call) -> Option<usize> {
        call.cost.cpus += 1;
        Self::idleish(env, cpu).then_some(cpu)
    }

    /// SIS_PROP's scan limit: `nr = llc_weight * avg_idle / (avg_scan_cost + 1)`, 4 when
    /// that is not above 4 × the cost, with the waking CPU's idle estimate
    /// ([`Wakeup::sis_prop_avg_idle`]) and its LLC's `avg_scan_cost`.
    fn sis_prop_nr(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        span_weight: usize,
        this_cpu: usize,
    ) -> i64 {
        let Some(avg_scan_cost_ns) = self.llc_shared(topo, this_cpu).map(|s| s.avg_scan_cost_ns)
        else {
            return i64::MAX;
        };
        let avg_idle = self.sis_prop_avg_idle(env, this_cpu);
        let avg_cost = avg_scan_cost_ns + 1;
        let span_avg = span_weight as u64 * avg_idle;
        if span_avg > 4 * avg_cost {
            i64::try_from(span_avg / avg_cost).unwrap_or(i64::MAX)
        } else {
            4
        }
    }

    /// SIS_PROP's idle estimate of the waking CPU. v5.14+: `wake_avg_idle` after ageing
    /// (halved once per jiffy since `wake_stamp`, the stamp advancing with it; the loop
    /// stops at 0 and leaves the stamp behind). Before: `avg_idle / 512`.
    fn sis_prop_avg_idle(&mut self, env: &impl WakeupEnv, this_cpu: usize) -> u64 {
        if !self.params.at_least(5, 14) {
            return env.avg_idle_ns(this_cpu) / 512;
        }
        let now = self.jiffies(env.now_ns());
        let w = &mut self.wake_idle[this_cpu];
        while w.stamp_jiffy < now && w.avg_ns != 0 {
            w.stamp_jiffy += 1;
            w.avg_ns >>= 1;
        }
        w.avg_ns
    }

    /// After a complete SIS_PROP scan of `examined` CPUs: `update_avg(&this_sd->avg_scan_cost,
    /// time)`, and from v5.14 `this_rq->wake_avg_idle -= min(wake_avg_idle, time)`.
    fn sis_prop_account(&mut self, topo: &Topo, this_cpu: usize, examined: u32) {
        let time = i128::from(examined) * i128::from(self.params.idle_scan_step_ns);
        if self.params.at_least(5, 14) {
            let w = &mut self.wake_idle[this_cpu];
            w.avg_ns -= w.avg_ns.min(u64::try_from(time).unwrap_or(u64::MAX));
        }
        if let Some(s) = self.llc_shared_mut(topo, this_cpu) {
            let avg = i128::from(s.avg_scan_cost_ns);
            s.avg_scan_cost_ns = u64::try_from(avg + (time - avg) / 8).unwrap_or(0);
        }
    }

    /// `select_idle_cpu(p, sd, has_idle_core, target)` (v5.12+): scan the LLC from
    /// `target + 1` for an idle core (`has_idle_core`, no limit) or an idle CPU (limited
    /// by SIS_PROP / SIS_UTIL), target's cluster first on cluster machines (v6.8+). Clears
    /// `has_idle_cores` after a failed core scan. Returns the CPU and whether it is a
    /// whole idle core.
    #[allow(clippy::too_many_arguments)]
    fn select_idle_cpu(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        has_idle_core: bool,
        target: usize,
        call: &mut Call,
    ) -> Option<(usize, bool)> {
        let dom = topo.domains.domain(sd);
        let mut cpus = dom.span.and(env.cpus_allowed(p));
        let mut nr = i64::MAX;
        let this_cpu = call.this_cpu;
        let sis_prop = self.params.feat(Feature::SIS_PROP) && !has_idle_core;
        if sis_prop {
            nr = self.sis_prop_nr(topo, env, dom.span_weight, this_cpu);
        }
        if self.params.feat(Feature::SIS_UTIL)
            && let Some(s) = self.llc_shared(topo, target)
        {
            nr = i64::from(s.nr_idle_scan) + 1;
            if nr == 1 {
                return None;
            }
        }
        let start_cost = call.cost.cpus;
        let mut idle_cpu = None;

        if topo.domains.sched_cluster_active
            && self.params.at_least(6, 8)
            && let Some(&g) = dom.groups.first()
        {
            let sg = topo.domains.group(g);
            if sg.flags.contains(SdFlags::SD_CLUSTER) {
                let span = &sg.span;
                for cpu in span.iter_wrap(target + 1) {
                    if !cpus.test(cpu) {
                        continue;
                    }
                    if has_idle_core {
                        if let Some(c) =
                            self.select_idle_core(env, cpu, &mut cpus, &mut idle_cpu, call)
                        {
                            return Some((c, true));
                        }
                    } else {
                        nr -= 1;
                        if nr <= 0 {
                            return None;
                        }
                        if let Some(c) = Self::select_idle_one(env, cpu, call) {
                            return Some((c, false));
                        }
                    }
                }
                cpus.andnot_assign(span);
            }
        }

        // `for_each_cpu_wrap(cpu, cpus, target + 1)` over the live mask: a busy core's
        // siblings cleared by `select_idle_core()` are not visited (WrapCursor).
        let mut walk = WrapCursor::new(target + 1);
        while let Some(cpu) = walk.next(&cpus) {
            if has_idle_core {
                if let Some(c) = self.select_idle_core(env, cpu, &mut cpus, &mut idle_cpu, call) {
                    return Some((c, true));
                }
            } else {
                nr -= 1;
                if nr <= 0 {
                    return None;
                }
                idle_cpu = Self::select_idle_one(env, cpu, call);
                if idle_cpu.is_some() {
                    break;
                }
            }
        }
        if has_idle_core {
            self.set_idle_cores(topo, target, false);
        }
        if sis_prop {
            self.sis_prop_account(topo, this_cpu, call.cost.cpus - start_cost);
        }
        idle_cpu.map(|c| (c, false))
    }

    /// v4.9–v5.11: `select_idle_core()` over the whole LLC (when `has_idle_cores`), then
    /// `select_idle_cpu()` limited by SIS_PROP, then `select_idle_smt(target)`.
    fn select_idle_split(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        sd: DomainId,
        target: usize,
        call: &mut Call,
    ) -> usize {
        let allowed = env.cpus_allowed(p);
        let dom = topo.domains.domain(sd);
        if self.smt_active && self.test_idle_cores(topo, target) {
            if let Some(core) =
                Self::split_idle_core(topo, env, dom.span.and(allowed), target, call)
            {
                call.explain.sis = Some(SisStep::IdleCore);
                return core;
            }
            self.set_idle_cores(topo, target, false);
        }

        let mut nr = i64::MAX;
        let this_cpu = call.this_cpu;
        let sis_prop = self.params.feat(Feature::SIS_PROP);
        if sis_prop {
            nr = self.sis_prop_nr(topo, env, dom.span_weight, this_cpu);
        }
        let start_cost = call.cost.cpus;
        let mut found = None;
        for cpu in dom.span.and(allowed).iter_wrap(target) {
            nr -= 1;
            if nr <= 0 {
                break;
            }
            if let Some(c) = Self::select_idle_one(env, cpu, call) {
                found = Some(c);
                break;
            }
        }
        if nr > 0 && sis_prop {
            self.sis_prop_account(topo, this_cpu, call.cost.cpus - start_cost);
        }
        if let Some(c) = found {
            call.explain.sis = Some(SisStep::IdleCpu);
            return c;
        }

        if self.smt_active {
            for cpu in topo.smt_mask(target).and(allowed).iter() {
                call.cost.cpus += 1;
                if Self::idleish(env, cpu) {
                    call.explain.sis = Some(SisStep::IdleSmt);
                    return cpu;
                }
            }
        }
        call.explain.sis = Some(SisStep::TargetFallback);
        target
    }

    /// v4.9–v5.11's `select_idle_core()`: the first core of `cpus` (from `target` on) whose
    /// SMT siblings are all idle.
    fn split_idle_core(
        topo: &Topo,
        env: &impl WakeupEnv,
        mut cpus: CpuMask,
        target: usize,
        call: &mut Call,
    ) -> Option<usize> {
        let order = cpus;
        for core in order.iter_wrap(target) {
            if !cpus.test(core) {
                continue;
            }
            let mut idle = true;
            for cpu in topo.smt_mask(core).iter() {
                cpus.clear(cpu);
                call.cost.cpus += 1;
                if !env.available_idle_cpu(cpu) {
                    idle = false;
                }
            }
            if idle {
                return Some(core);
            }
        }
        None
    }

    /// Before v4.9: target if idle, prev if idle and cache-affine, else the first allowed
    /// CPU of a group (LLC domain and each lower domain of `target`, local group first)
    /// whose CPUs are all idle and which does not contain the target.
    fn select_idle_sibling_legacy(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev: usize,
        target: usize,
        call: &mut Call,
    ) -> usize {
        if env.idle_cpu(target) {
            call.explain.sis = Some(SisStep::Target);
            return target;
        }
        if prev != target && topo.domains.cpus_share_cache(prev, target) && env.idle_cpu(prev) {
            call.explain.sis = Some(SisStep::Prev);
            return prev;
        }
        let allowed = env.cpus_allowed(p);
        call.explain.sis = Some(SisStep::TargetFallback);
        let Some(llc) = topo.domains.sd_llc(target) else {
            return target;
        };
        let doms = topo.domains.cpu_domains(target);
        let Some(top) = doms.iter().position(|&d| d == llc) else {
            return target;
        };
        for &d in doms[..=top].iter().rev() {
            for sg in topo.domains.groups_of(d) {
                if !sg.span.intersects(allowed) {
                    continue;
                }
                call.cost.groups += 1;
                let mut all_idle = true;
                for cpu in sg.span.iter() {
                    call.cost.cpus += 1;
                    if cpu == target || !env.idle_cpu(cpu) {
                        all_idle = false;
                        break;
                    }
                }
                if all_idle && let Some(c) = sg.span.and(allowed).first() {
                    call.explain.sis = Some(SisStep::LegacyGroup);
                    return c;
                }
            }
        }
        target
    }

    /// `test_idle_cores(cpu)`: the LLC's `has_idle_cores` hint (false without an LLC).
    pub fn test_idle_cores(&self, topo: &Topo, cpu: usize) -> bool {
        self.llc_shared(topo, cpu).is_some_and(|s| s.has_idle_cores)
    }

    /// `set_idle_cores(cpu, val)`.
    pub fn set_idle_cores(&mut self, topo: &Topo, cpu: usize, val: bool) {
        if let Some(s) = self.llc_shared_mut(topo, cpu) {
            s.has_idle_cores = val;
        }
    }

    /// `update_idle_core(rq)` → `__update_idle_core()`: called when `cpu` switches to
    /// the idle task (the policy's idle entry). With SMT active, if every other SMT
    /// sibling of `cpu` is idle too, set the LLC's `has_idle_cores`. A single-thread core
    /// (no online sibling) therefore always sets it when it goes idle. No effect before
    /// v4.9 (no idle-core tracking).
    pub fn update_idle_core(&mut self, topo: &Topo, env: &impl WakeupEnv, cpu: usize) {
        if !self.smt_active || !self.params.at_least(4, 9) || self.test_idle_cores(topo, cpu) {
            return;
        }
        let all_idle = self
            .smt_siblings(cpu)
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| c != cpu)
            .all(|c| env.available_idle_cpu(c));
        if all_idle {
            self.set_idle_cores(topo, cpu, true);
        }
    }

    /// `update_idle_cpu_scan(env, sum_util)` (SIS_UTIL), called by periodic load
    /// balancing at `sd` for `dst_cpu` with `sum_util` = Σ `cpu_util_cfs` over the
    /// domain's groups: only for periodic (not newly idle) balancing, only at the domain
    /// whose span equals the LLC, `nr_idle_scan = llc_weight * (1024 - min(x² · pct² /
    /// (10000 · 1024), 1024)) / 1024` with `x = sum_util / llc_weight`.
    pub fn update_idle_cpu_scan(
        &mut self,
        topo: &Topo,
        dst_cpu: usize,
        sd: DomainId,
        idle: IdleType,
        sum_util: u64,
    ) {
        if !self.params.feat(Feature::SIS_UTIL) || idle == IdleType::NewlyIdle {
            return;
        }
        let llc_weight = topo.domains.llc_size(dst_cpu) as u64;
        let dom = topo.domains.domain(sd);
        if dom.span_weight as u64 != llc_weight || llc_weight == 0 {
            return;
        }
        let x = sum_util / llc_weight;
        let pct = u64::from(dom.imbalance_pct);
        let tmp = (x.saturating_mul(x).saturating_mul(pct * pct) / (10000 * SCHED_CAPACITY_SCALE))
            .min(SCHED_CAPACITY_SCALE);
        let y = (SCHED_CAPACITY_SCALE - tmp) * llc_weight / SCHED_CAPACITY_SCALE;
        if let Some(s) = self.llc_shared_mut(topo, dst_cpu) {
            // y <= llc_weight <= NR_CPUS_MAX (the kernel stores it as an int).
            s.nr_idle_scan = u32::try_from(y).expect("nr_idle_scan <= the LLC's size");
        }
    }
}

#[cfg(test)]
mod step_names {
    use super::SisStep;

    #[test]
    fn every_step_is_listed_once_at_its_index() {
        for (i, s) in SisStep::ALL.iter().enumerate() {
            assert_eq!(s.index(), i, "{s:?}");
        }
    }
}
