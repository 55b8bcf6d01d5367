//! When and where balancing runs: `should_we_balance()`, `get_sd_balance_interval()`,
//! `sched_balance_domains()` (the periodic walk), `sched_balance_trigger()` /
//! `sched_balance_softirq()`, `update_newidle_cost()`, `sched_balance_newidle()` with its
//! gates, and the NOHZ idle load balancer (`nohz_balance_enter_idle()`,
//! `nohz_balance_exit_idle()`, `nohz_balancer_kick()`, `kick_ilb()`, `find_new_ilb()`,
//! `nohz_csd_func()`, `nohz_idle_balance()`, `_nohz_idle_balance()`,
//! `nohz_newidle_balance()`) — kernel/sched/fair.c, v6.17 plus the v6.18 NI_RANDOM scheme.
//!
//! Version switches (features):
//! - `SHOULD_WE_BALANCE_IDLE_CORE` (v6.6, b1bfeab9b002 + the 2023 "first idle CPU with busy
//!   siblings" fix and the sibling-skipping mask): prefer an idle CPU on a fully idle core;
//!   off = v6.0–v6.5 (first idle CPU of the balance mask).
//! - `NEWIDLE_MIGRATION_COST_GATE` (≤ v5.15): skip newidle balancing when `avg_idle <
//!   sysctl_sched_migration_cost`; it replaces the v5.16+ `avg_idle < base_sd->
//!   max_newidle_lb_cost` test, as reverting c5b0a7eefc70 does.
//! - `NEWIDLE_FAIL_BUMP` (v6.17, 155213a2aed4): a newidle pass that pulls nothing charges
//!   `3/2 × max_newidle_lb_cost`, and `max_newidle_lb_cost` is capped at `migration_cost +
//!   200` ns.
//! - `NI_RANDOM` (v6.18/v6.19 33cf66d88306, "proportional newidle balance"): each domain's
//!   newidle pass runs with probability `(1 + newidle_ratio)/1024` (a 1024-sided die from
//!   `sched_rng()`); a success is then weighted `round(1024 / (1 + ratio))`. Per domain,
//!   `newidle_call`/`newidle_success` count calls and weighted successes; every 1024 calls
//!   `newidle_ratio = newidle_success` and both counters halve. Initial state: 512 calls,
//!   256 successes, ratio 512.
//!
//! Left out: `sched_balance_update_blocked_averages()` is delegated to the environment and
//! its cost is not charged (the kernel charges it to the first newidle domain); NOHZ
//! housekeeping masks (every CPU is a housekeeping CPU).

use super::{
    BalanceEnv, IdleType, LOAD_AVG_PERIOD_MS, LbEnv, LbOutput, LoadBalancer, nohz_flags::*,
};
use crate::cpumask::CpuMask;
use crate::domains::{DomainId, SdFlags};
use crate::kconfig::features::Feature;
use crate::sched::types::MigrationReason;

/// `should_we_balance()` applied to a candidate set: which CPU of `candidates` (the local
/// group's balance mask ∩ `env->cpus`, ascending) balances on the group's behalf in a
/// periodic/idle pass. `idle_cpu(c)` and `smt_mask(c)` describe the CPUs; `smt_domain`
/// says whether the domain is an SMT level (`SD_SHARE_CPUCAPACITY`); `idle_core` selects
/// the v6.6+ rule. The newly-idle case (every newly idle CPU balances) is handled by the
/// caller.
pub fn should_we_balance_pick(
    candidates: &CpuMask,
    group_balance_cpu: usize,
    smt_domain: bool,
    idle_core: bool,
    idle_cpu: &dyn Fn(usize) -> bool,
    smt_mask: &dyn Fn(usize) -> CpuMask,
) -> usize {
    let mut swb = *candidates;
    let mut idle_smt: Option<usize> = None;
    let mut next = swb.first();
    while let Some(cpu) = next {
        next = swb.next_from(cpu + 1);
        if !idle_cpu(cpu) {
            continue;
        }
        if idle_core && !smt_domain {
            let core_idle = smt_mask(cpu).iter().all(|s| s == cpu || idle_cpu(s));
            if !core_idle {
                // Don't balance to an idle SMT sibling of a busy core right away; remember
                // the first one and skip its siblings.
                idle_smt.get_or_insert(cpu);
                swb = swb.andnot(&smt_mask(cpu));
                next = swb.next_from(cpu + 1);
                continue;
            }
        }
        // The first idle core (non-SMT domain) or the first idle CPU (SMT domain).
        return cpu;
    }
    // The first idle CPU with busy siblings, else the first CPU of the group.
    idle_smt.unwrap_or(group_balance_cpu)
}

impl LoadBalancer {
    /// `should_we_balance()`: is `bal.dst_cpu` the CPU of its local group that balances
    /// at this level?
    pub fn should_we_balance<E: LbEnv + ?Sized>(&self, env: &E, bal: &BalanceEnv) -> bool {
        // Hotplug race: the destination left env->cpus.
        if !bal.cpus.test(bal.dst_cpu) {
            return false;
        }
        // Every newly idle CPU may balance, unless work arrived meanwhile (v6.0+).
        if bal.idle == IdleType::NewlyIdle {
            return env.nr_running(bal.dst_cpu) == 0 && !env.ttwu_pending(bal.dst_cpu);
        }
        let d = self.domains.domain(bal.sd);
        let sg = self.domains.group(d.groups[0]);
        let pick = should_we_balance_pick(
            &sg.balance_mask.and(&bal.cpus),
            sg.balance_cpu(),
            d.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY),
            self.feat(Feature::SHOULD_WE_BALANCE_IDLE_CORE),
            &|c| env.idle_cpu(c),
            &|c| self.smt_mask[c],
        );
        pick == bal.dst_cpu
    }

    /// `should_we_balance()` for `cpu` at domain `sd` with idle type `idle`, outside a pass.
    pub fn should_we_balance_cpu<E: LbEnv + ?Sized>(
        &self,
        env: &E,
        sd: DomainId,
        cpu: usize,
        idle: IdleType,
    ) -> bool {
        let bal = BalanceEnv::new(self, sd, cpu, idle, MigrationReason::LoadBalance);
        self.should_we_balance(env, &bal)
    }

    /// `get_sd_balance_interval()`, jiffies: `balance_interval` (× `busy_factor` and − 1
    /// jiffy when busy, to de-synchronise levels), clamped to `[1,
    /// max_load_balance_interval]`.
    pub fn get_sd_balance_interval(&self, sd: DomainId, cpu_busy: bool) -> u64 {
        let d = self.domains.domain(sd);
        let mut ms = u64::from(self.sd[sd.0].balance_interval_ms);
        if cpu_busy {
            ms *= u64::from(d.busy_factor);
        }
        let mut j = self.msecs_to_jiffies(ms);
        if cpu_busy {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.max_load_balance_interval.max(1))
    }

    /// `update_next_balance()` (used by idle balancing: the not-busy interval).
    fn update_next_balance(&self, sd: DomainId, next_balance: &mut u64) {
        let next = self.sd[sd.0].last_balance + self.get_sd_balance_interval(sd, false);
        if *next_balance > next {
            *next_balance = next;
        }
    }

    /// `update_newidle_stats()` (NI_RANDOM bookkeeping).
    fn update_newidle_stats(&mut self, sd: DomainId, success: u32) {
        let st = &mut self.sd[sd.0];
        st.newidle_call += 1;
        st.newidle_success += success;
        if st.newidle_call >= 1024 {
            st.newidle_ratio = st.newidle_success;
            st.newidle_call /= 2;
            st.newidle_success /= 2;
        }
    }

    /// `update_newidle_cost(sd, cost, success)`: raise `max_newidle_lb_cost` to `cost_ns`
    /// (capped with NEWIDLE_FAIL_BUMP), or decay it by 253/256 when more than a second
    /// (HZ jiffies) passed since the last raise/decay. Returns whether it decayed.
    pub fn update_newidle_cost(&mut self, sd: DomainId, cost_ns: u64, success: u32) -> bool {
        if cost_ns != 0 {
            self.update_newidle_stats(sd, success);
        }
        let jiffies = self.jiffies;
        let hz = u64::from(self.tunables.hz);
        let cap = self.tunables.migration_cost_ns + 200;
        let bump = self.feat(Feature::NEWIDLE_FAIL_BUMP);
        let st = &mut self.sd[sd.0];
        if cost_ns > st.max_newidle_lb_cost {
            // Track the max cost of a domain so the next wakeup is not delayed.
            st.max_newidle_lb_cost = if bump { cost_ns.min(cap) } else { cost_ns };
            st.last_decay_max_lb_cost = jiffies;
            false
        } else if jiffies > st.last_decay_max_lb_cost + hz {
            // Decay ~1% per second so the max does not stay stale.
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay_max_lb_cost = jiffies;
            true
        } else {
            false
        }
    }

    /// `sched_balance_domains()`: the periodic walk of `cpu`'s domains bottom-up, balancing
    /// each level whose interval has elapsed (× `busy_factor` when busy), stopping when
    /// `should_we_balance()` hands the level to another CPU.
    pub fn sched_balance_domains<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        mut idle: IdleType,
        reason: MigrationReason,
        out: &mut LbOutput,
    ) {
        let dom = self.domains.clone();
        let mut continue_balancing = true;
        let mut busy = idle != IdleType::Idle && !env.sched_idle_cpu(cpu);
        let mut next_balance = self.jiffies + 60 * u64::from(self.tunables.hz);
        let mut update_next_balance = false;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        for &sd in dom.cpu_domains(cpu) {
            // Decay the newidle max times here: this is a regular visit to all domains.
            need_decay = self.update_newidle_cost(sd, 0, 0);
            max_cost += self.sd[sd.0].max_newidle_lb_cost;
            // Another CPU of our group balances this level more actively.
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.get_sd_balance_interval(sd, busy);
            let need_serialize = dom.domain(sd).flags.contains(SdFlags::SD_SERIALIZE);
            let mut skip = false;
            if need_serialize {
                if self.sched_balance_running {
                    skip = true;
                } else {
                    self.sched_balance_running = true;
                }
            }
            if !skip {
                if self.jiffies >= self.sd[sd.0].last_balance + interval {
                    if self.sched_balance_rq(
                        env,
                        cpu,
                        sd,
                        idle,
                        reason,
                        &mut continue_balancing,
                        out,
                    ) > 0
                    {
                        // LBF_DST_PINNED may have changed the destination: re-read.
                        idle = if env.idle_cpu(cpu) {
                            IdleType::Idle
                        } else {
                            IdleType::NotIdle
                        };
                        busy = idle != IdleType::Idle && !env.sched_idle_cpu(cpu);
                    }
                    self.sd[sd.0].last_balance = self.jiffies;
                    interval = self.get_sd_balance_interval(sd, busy);
                }
                if need_serialize {
                    self.sched_balance_running = false;
                }
            }
            let next = self.sd[sd.0].last_balance + interval;
            if next_balance > next {
                next_balance = next;
                update_next_balance = true;
            }
        }
        if need_decay {
            // The rq-wide value decays too, with a floor to avoid funnies with avg_idle.
            self.rq[cpu].max_idle_balance_cost = max_cost.max(self.tunables.migration_cost_ns);
        }
        if update_next_balance {
            self.rq[cpu].next_balance = next_balance;
        }
    }

    /// The balancing part of `sched_tick()` on `cpu` at `now_ns`: record the idle type
    /// (`rq->idle_balance`), then `sched_balance_trigger()`: run the periodic balance
    /// (the SCHED_SOFTIRQ, executed right away since it runs at the end of the tick
    /// interrupt) when `rq->next_balance` is due, and `nohz_balancer_kick()`.
    pub fn sched_tick<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        now_ns: u64,
        out: &mut LbOutput,
    ) {
        self.set_now(now_ns);
        self.rq[cpu].idle_balance = if env.idle_cpu(cpu) {
            IdleType::Idle
        } else {
            IdleType::NotIdle
        };
        // No domain (isolated or offline CPU): nothing to balance.
        if self.domains.sd(cpu).is_none() {
            return;
        }
        let raise = self.jiffies >= self.rq[cpu].next_balance;
        self.nohz_balancer_kick(env, cpu, out);
        if raise {
            self.sched_balance_softirq(env, cpu, out);
        }
    }

    /// `sched_balance_softirq()`: a pending NOHZ kick on an idle CPU balances for all idle
    /// CPUs; otherwise refresh blocked load and balance this CPU's domains.
    pub fn sched_balance_softirq<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        out: &mut LbOutput,
    ) {
        let idle = self.rq[cpu].idle_balance;
        if self.nohz_idle_balance(env, cpu, idle, out) {
            return;
        }
        let still = env.update_blocked_averages(cpu);
        self.rq[cpu].has_blocked_load = still;
        self.rq[cpu].last_blocked_load_update_tick = self.jiffies;
        self.sched_balance_domains(env, cpu, idle, MigrationReason::LoadBalance, out);
    }

    /// `sched_balance_newidle()`: `cpu` found no CFS task to run at `now_ns`. Returns > 0
    /// if tasks are now runnable (pulled, or enqueued meanwhile), −1 if a higher-class task
    /// appeared, 0 to go idle.
    pub fn sched_balance_newidle<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        now_ns: u64,
        out: &mut LbOutput,
    ) -> i32 {
        self.set_now(now_ns);
        let dom = self.domains.clone();
        let mut next_balance = self.jiffies + u64::from(self.tunables.hz);
        let mut continue_balancing = true;
        let mut curr_cost = 0u64;
        let mut pulled_task: i32 = 0;
        // A wakeup is queued for this CPU: no need to search.
        if env.ttwu_pending(cpu) {
            self.newidle_entry.ttwu_pending += 1;
            return 0;
        }
        // Set idle_stamp before balancing so its duration counts as idle time.
        self.rq[cpu].idle_stamp = now_ns.max(1);
        if !dom.span.test(cpu) {
            self.newidle_entry.inactive += 1;
            return 0;
        }
        let base = dom.sd(cpu);
        let avg_idle = self.rq[cpu].avg_idle;
        let gate = if self.feat(Feature::NEWIDLE_MIGRATION_COST_GATE) {
            // ≤ v5.15: the CPU will be woken too soon for a pull to pay off.
            avg_idle < self.tunables.migration_cost_ns
        } else {
            base.is_some_and(|sd| avg_idle < self.sd[sd.0].max_newidle_lb_cost)
        };
        if !self.rd_overloaded || gate {
            if self.rd_overloaded {
                self.newidle_entry.avg_idle_gate += 1;
            } else {
                self.newidle_entry.rd_not_overloaded += 1;
            }
            if let Some(sd) = base {
                self.update_next_balance(sd, &mut next_balance);
            }
        } else {
            self.newidle_entry.walked += 1;
            let still = env.update_blocked_averages(cpu);
            self.rq[cpu].has_blocked_load = still;
            self.rq[cpu].last_blocked_load_update_tick = self.jiffies;
            let mut t0 = out.work;
            for &sd in dom.cpu_domains(cpu) {
                self.update_next_balance(sd, &mut next_balance);
                if avg_idle < curr_cost + self.sd[sd.0].max_newidle_lb_cost {
                    break;
                }
                if dom.domain(sd).flags.contains(SdFlags::SD_BALANCE_NEWIDLE) {
                    let mut weight = 1u32;
                    if self.feat(Feature::NI_RANDOM) {
                        // Throw a 1024-sided die; run according to the success rate.
                        let d1k = env.sched_rng(cpu) % 1024;
                        weight = 1 + self.sd[sd.0].newidle_ratio;
                        if d1k > weight {
                            self.update_newidle_stats(sd, 0);
                            continue;
                        }
                        weight = (1024 + weight / 2) / weight;
                    }
                    let moved = self.sched_balance_rq(
                        env,
                        cpu,
                        sd,
                        IdleType::NewlyIdle,
                        MigrationReason::NewidleBalance,
                        &mut continue_balancing,
                        out,
                    );
                    pulled_task = moved as i32;
                    let t1 = out.work;
                    let mut domain_cost = t1.since(&t0).cost_ns(&self.costs);
                    curr_cost += domain_cost;
                    t0 = t1;
                    // Failing newidle is not effective: bump the cost so it runs less.
                    if self.feat(Feature::NEWIDLE_FAIL_BUMP) && pulled_task == 0 {
                        domain_cost = 3 * self.sd[sd.0].max_newidle_lb_cost / 2;
                    }
                    self.update_newidle_cost(sd, domain_cost, weight * u32::from(pulled_task > 0));
                }
                // Stop when there is now something to run.
                if pulled_task != 0 || !continue_balancing {
                    break;
                }
            }
            if curr_cost > self.rq[cpu].max_idle_balance_cost {
                self.rq[cpu].max_idle_balance_cost = curr_cost;
            }
            // A task may have been enqueued meanwhile: not going idle then.
            if env.h_nr_queued(cpu) > 0 && pulled_task == 0 {
                pulled_task = 1;
            }
            // A higher-class task is queued.
            if env.nr_running(cpu) != env.h_nr_queued(cpu) {
                pulled_task = -1;
            }
        }
        if self.rq[cpu].next_balance > next_balance {
            self.rq[cpu].next_balance = next_balance;
        }
        if pulled_task != 0 {
            self.rq[cpu].idle_stamp = 0;
        } else {
            self.nohz_newidle_balance(cpu);
        }
        pulled_task
    }

    /// `nohz_newidle_balance()`: before idling with nothing pulled, ask for a local
    /// blocked-load refresh (NOHZ_NEWILB_KICK) if this CPU expects to stay idle long
    /// enough and idle CPUs' blocked load is due.
    fn nohz_newidle_balance(&mut self, cpu: usize) {
        if self.rq[cpu].avg_idle < self.tunables.migration_cost_ns {
            return;
        }
        if !self.nohz.has_blocked || self.jiffies < self.nohz.next_blocked {
            return;
        }
        self.rq[cpu].nohz_flags |= NOHZ_NEWILB_KICK;
    }

    /// `nohz_run_idle_balance()`: the idle loop on `cpu` runs a pending NEWILB refresh of
    /// idle CPUs' blocked load (only when it is the sole pending flag), without moving
    /// tasks.
    pub fn nohz_run_idle_balance<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        now_ns: u64,
        out: &mut LbOutput,
    ) {
        self.set_now(now_ns);
        let flags = self.rq[cpu].nohz_flags;
        self.rq[cpu].nohz_flags &= !NOHZ_NEWILB_KICK;
        if flags == NOHZ_NEWILB_KICK && env.idle_cpu(cpu) {
            self.nohz_idle_balance_inner(env, cpu, NOHZ_STATS_KICK, out);
        }
    }

    /// `nohz_balance_enter_idle()`: the tick of `cpu` is being stopped (tickless idle).
    pub fn nohz_balance_enter_idle(&mut self, cpu: usize, now_ns: u64) {
        self.set_now(now_ns);
        if !self.domains.span.test(cpu) {
            return;
        }
        self.rq[cpu].has_blocked_load = true;
        if !self.rq[cpu].nohz_tick_stopped {
            if self.domains.sd(cpu).is_none() {
                return;
            }
            self.rq[cpu].nohz_tick_stopped = true;
            self.nohz.idle_cpus_mask.set(cpu);
            self.nohz.nr_cpus += 1;
            // set_cpu_sd_state_idle(): one busy CPU fewer in the LLC.
            if self.domains.sd_llc(cpu).is_some() {
                self.llc_nr_busy_cpus[self.domains.llc_id(cpu)] -= 1;
            }
            self.nohz.needs_update = true;
        }
        // Each CPU entering idle may hold blocked load: enable its periodic refresh.
        self.nohz.has_blocked = true;
    }

    /// `nohz_balance_exit_idle()`: first busy tick after tickless idle.
    pub fn nohz_balance_exit_idle(&mut self, cpu: usize) {
        if !self.rq[cpu].nohz_tick_stopped {
            return;
        }
        self.rq[cpu].nohz_tick_stopped = false;
        self.nohz.idle_cpus_mask.clear(cpu);
        self.nohz.nr_cpus -= 1;
        // set_cpu_sd_state_busy().
        if self.domains.sd_llc(cpu).is_some() {
            self.llc_nr_busy_cpus[self.domains.llc_id(cpu)] += 1;
        }
    }

    /// `nohz_balancer_kick()`: on a busy tick of `cpu`, decide whether an idle CPU should
    /// balance on behalf of the tickless idle CPUs, and kick it.
    pub fn nohz_balancer_kick<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        out: &mut LbOutput,
    ) {
        if self.rq[cpu].idle_balance == IdleType::Idle {
            return;
        }
        // First busy tick after returning from idle: update the busy statistics.
        self.nohz_balance_exit_idle(cpu);
        // Nobody is tickless: no NOHZ idle balancing needed.
        if self.nohz.nr_cpus == 0 {
            return;
        }
        let now = self.jiffies;
        let mut flags = 0;
        if self.nohz.has_blocked && now > self.nohz.next_blocked {
            flags = NOHZ_STATS_KICK;
        }
        if now >= self.nohz.next_balance {
            flags = self.nohz_kick_reason(env, cpu).unwrap_or(flags);
        }
        if self.nohz.needs_update {
            flags |= NOHZ_NEXT_KICK;
        }
        if flags != 0 {
            self.kick_ilb(env, cpu, flags, out);
        }
    }

    /// The balance-worthy conditions of `nohz_balancer_kick()`; `Some(STATS|BALANCE)` when
    /// one holds.
    fn nohz_kick_reason<E: LbEnv + ?Sized>(&self, env: &E, cpu: usize) -> Option<u32> {
        let kick = Some(NOHZ_STATS_KICK | NOHZ_BALANCE_KICK);
        if env.nr_running(cpu) >= 2 {
            return kick;
        }
        if let Some(sd) = self.domains.sd(cpu) {
            // A runnable CFS task on a CPU with reduced capacity: look for a better CPU.
            if env.h_nr_runnable(cpu) >= 1 && self.check_cpu_capacity(env, cpu, sd) {
                return kick;
            }
        }
        if let Some(sd) = self.domains.sd_asym_packing(cpu) {
            // A more preferred CPU is idle (whole core idle when balancing between cores).
            let span = self.domains.domain(sd).span.and(&self.nohz.idle_cpus_mask);
            if span.iter().any(|i| self.sched_asym(env, sd, i, cpu)) {
                return kick;
            }
        }
        if self.domains.sd_asym_cpucapacity(cpu).is_some() {
            // Asymmetric systems only balance for capacity, not for cache use.
            return (env.misfit_task_load(cpu) != 0).then_some(NOHZ_STATS_KICK | NOHZ_BALANCE_KICK);
        }
        if self.domains.sd_llc(cpu).is_some() && self.llc_nr_busy_cpus[self.domains.llc_id(cpu)] > 1
        {
            // This LLC has tasks another LLC (or idle CPUs of this one) could take.
            return kick;
        }
        None
    }

    /// `find_new_ilb()`: the first tickless idle CPU other than `this_cpu` that is idle.
    pub fn find_new_ilb<E: LbEnv + ?Sized>(&self, env: &E, this_cpu: usize) -> Option<usize> {
        self.nohz
            .idle_cpus_mask
            .iter()
            .find(|&c| c != this_cpu && env.idle_cpu(c))
    }

    /// `kick_ilb()`: pick the idle load balancer and send it the kick flags (an IPI unless
    /// one is already pending).
    fn kick_ilb<E: LbEnv + ?Sized>(
        &mut self,
        env: &E,
        this_cpu: usize,
        flags: u32,
        out: &mut LbOutput,
    ) {
        // Push nohz.next_balance only for a full balance, not a stats refresh.
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.nohz.next_balance = self.jiffies + 1;
        }
        let Some(ilb) = self.find_new_ilb(env, this_cpu) else {
            return;
        };
        // Nothing new for the ILB.
        if self.rq[ilb].nohz_flags & flags == flags {
            return;
        }
        let prev = self.rq[ilb].nohz_flags;
        self.rq[ilb].nohz_flags |= flags;
        // Whoever set the first kick bit owns the IPI.
        if prev & NOHZ_KICK_MASK != 0 {
            return;
        }
        out.kick_ilb = Some(ilb);
    }

    /// `nohz_csd_func()` + `sched_balance_softirq()` on the kicked CPU `cpu` at `now_ns`:
    /// take the kick flags and, if still idle, balance for the idle CPUs.
    pub fn nohz_csd_func<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        now_ns: u64,
        out: &mut LbOutput,
    ) {
        self.set_now(now_ns);
        let flags = self.rq[cpu].nohz_flags;
        self.rq[cpu].nohz_flags &= !(NOHZ_KICK_MASK | NOHZ_NEWILB_KICK);
        let idle = env.idle_cpu(cpu);
        self.rq[cpu].idle_balance = if idle {
            IdleType::Idle
        } else {
            IdleType::NotIdle
        };
        if idle && flags & NOHZ_KICK_MASK != 0 {
            self.rq[cpu].nohz_idle_balance = flags & NOHZ_KICK_MASK;
            self.sched_balance_softirq(env, cpu, out);
        }
    }

    /// `nohz_idle_balance()`: run pending kick work if this CPU is still idle.
    fn nohz_idle_balance<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        cpu: usize,
        idle: IdleType,
        out: &mut LbOutput,
    ) -> bool {
        let flags = self.rq[cpu].nohz_idle_balance;
        if flags == 0 {
            return false;
        }
        self.rq[cpu].nohz_idle_balance = 0;
        if idle != IdleType::Idle {
            return false;
        }
        self.nohz_idle_balance_inner(env, cpu, flags, out);
        true
    }

    /// `update_nohz_stats()`: refresh an idle CPU's blocked load if it has some and it was
    /// not refreshed this jiffy. Returns whether blocked load remains.
    fn update_nohz_stats<E: LbEnv + ?Sized>(&mut self, env: &mut E, cpu: usize) -> bool {
        if !self.rq[cpu].has_blocked_load || !self.nohz.idle_cpus_mask.test(cpu) {
            return false;
        }
        if self.jiffies <= self.rq[cpu].last_blocked_load_update_tick {
            return true;
        }
        let still = env.update_blocked_averages(cpu);
        self.rq[cpu].has_blocked_load = still;
        self.rq[cpu].last_blocked_load_update_tick = self.jiffies;
        still
    }

    /// `_nohz_idle_balance()`: for every tickless idle CPU, starting after `this_cpu` and
    /// wrapping (so `this_cpu` comes last), refresh blocked load (STATS) and run its due
    /// periodic balance on its behalf (BALANCE).
    fn nohz_idle_balance_inner<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        this_cpu: usize,
        flags: u32,
        out: &mut LbOutput,
    ) {
        let now = self.jiffies;
        let mut next_balance = now + 60 * u64::from(self.tunables.hz);
        let mut has_blocked_load = false;
        let mut update_next_balance = false;
        if flags & NOHZ_STATS_KICK != 0 {
            self.nohz.has_blocked = false;
        }
        if flags & NOHZ_NEXT_KICK != 0 {
            self.nohz.needs_update = false;
        }
        let order: Vec<usize> = self.nohz.idle_cpus_mask.iter_wrap(this_cpu + 1).collect();
        let mut aborted = false;
        for balance_cpu in order {
            if !env.idle_cpu(balance_cpu) {
                continue;
            }
            // This CPU got work: leave the rest to the next ILB.
            if !env.idle_cpu(this_cpu) {
                if flags & NOHZ_STATS_KICK != 0 {
                    has_blocked_load = true;
                }
                if flags & NOHZ_NEXT_KICK != 0 {
                    self.nohz.needs_update = true;
                }
                aborted = true;
                break;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                has_blocked_load |= self.update_nohz_stats(env, balance_cpu);
            }
            if self.jiffies >= self.rq[balance_cpu].next_balance && flags & NOHZ_BALANCE_KICK != 0 {
                let reason = if balance_cpu == this_cpu {
                    MigrationReason::LoadBalance
                } else {
                    MigrationReason::NohzIdleBalance
                };
                self.sched_balance_domains(env, balance_cpu, IdleType::Idle, reason, out);
            }
            if next_balance > self.rq[balance_cpu].next_balance {
                next_balance = self.rq[balance_cpu].next_balance;
                update_next_balance = true;
            }
        }
        if !aborted {
            if update_next_balance {
                self.nohz.next_balance = next_balance;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                self.nohz.next_blocked = now + self.msecs_to_jiffies(LOAD_AVG_PERIOD_MS);
            }
        }
        if has_blocked_load {
            self.nohz.has_blocked = true;
        }
    }
}
