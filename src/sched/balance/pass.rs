//! One balance pass at one domain: `sched_balance_rq()` (was `load_balance()`) with its
//! redo loops, the `nr_balance_failed` / `balance_interval` back-off and the
//! active-balance decision (`need_active_balance()`), and the active-balance stopper
//! `active_load_balance_cpu_stop()` (kernel/sched/fair.c, v6.17).
//!
//! The stopper: the kernel queues `active_load_balance_cpu_stop` on the busiest CPU's
//! stopper thread, which preempts whatever runs there. Here the pass sets
//! `rq->active_balance`/`push_cpu` and reports the CPU in [`LbOutput::active_balance`]; the
//! caller runs [`LoadBalancer::active_load_balance_cpu_stop`] on it as that CPU's next,
//! highest-priority work. Because the simulated stopper is not a task on the runqueue, its
//! "is there any task to move" test reads `nr_running == 0` where the kernel, counting the
//! stopper itself, reads `nr_running <= 1`.
//!
//! Left out: the rq locking and `LBF_NEED_BREAK` lock breaks (a pass is atomic in virtual
//! time; the loop counters still behave as the kernel's).

use super::{
    BalanceEnv, LbEnv, LbOutput, LoadBalancer, MAX_PINNED_INTERVAL_MS, MigrationType,
    SCHED_NR_MIGRATE_BREAK, idle_index, lbf,
};
use crate::domains::DomainId;
use crate::sched::types::{IdleType, MigrationReason};

impl LoadBalancer {
    /// `asym_active_balance()`.
    fn asym_active_balance<E: LbEnv + ?Sized>(&self, env: &E, bal: &BalanceEnv) -> bool {
        // ASYM_PACKING needs to force-migrate tasks from busy but lower-priority CPUs, or
        // from SMT cores with busy siblings.
        bal.dst_idle()
            && self.sched_use_asym_prio(env, bal.sd, bal.dst_cpu)
            && (env.arch_asym_cpu_priority(bal.dst_cpu) > env.arch_asym_cpu_priority(bal.src_cpu)
                || !self.sched_use_asym_prio(env, bal.sd, bal.src_cpu))
    }

    /// `need_active_balance()`: should a failed pass push the busiest CPU's running task?
    pub fn need_active_balance<E: LbEnv + ?Sized>(&self, env: &E, bal: &BalanceEnv) -> bool {
        let d = self.domains.domain(bal.sd);
        if self.asym_active_balance(env, bal) {
            return true;
        }
        // imbalanced_active_balance(): the imbalance persists over several attempts.
        if bal.migration_type == MigrationType::Task
            && self.sd[bal.sd.0].nr_balance_failed > d.cache_nice_tries + 2
        {
            return true;
        }
        // The source CPU's capacity is noticeably reduced (RT/IRQ pressure) and its single
        // task would run faster on the idle destination.
        if bal.idle != IdleType::NotIdle
            && env.h_nr_runnable(bal.src_cpu) == 1
            && self.check_cpu_capacity(env, bal.src_cpu, bal.sd)
            && env.capacity_of(bal.src_cpu) * u64::from(d.imbalance_pct)
                < env.capacity_of(bal.dst_cpu) * 100
        {
            return true;
        }
        bal.migration_type == MigrationType::Misfit
    }

    /// `sched_balance_rq()`: check that `this_cpu` is balanced within domain `sd`, and pull
    /// tasks if not. Returns the number of tasks moved (`ld_moved`). Clears
    /// `*continue_balancing` when another CPU of the local group is the one to balance.
    #[allow(clippy::too_many_arguments)]
    pub fn sched_balance_rq<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        this_cpu: usize,
        sd: DomainId,
        idle: IdleType,
        reason: MigrationReason,
        continue_balancing: &mut bool,
        out: &mut LbOutput,
    ) -> u32 {
        let dom = self.domains.clone();
        let d = dom.domain(sd);
        let sd_parent = d.parent;
        let it = idle_index(idle);
        let mut bal = BalanceEnv::new(self, sd, this_cpu, idle, reason);
        out.work.passes += 1;
        self.sd[sd.0].stats.lb_count[it] += 1;
        let mut ld_moved = 0u32;
        let mut active_balance = false;
        // Outcome labels of the kernel's gotos.
        enum Exit {
            Balanced,
            AllPinned,
            OnePinned,
            Done,
        }
        let exit = 'redo: loop {
            if !self.should_we_balance(&*env, &bal) {
                *continue_balancing = false;
                break 'redo Exit::Balanced;
            }
            self.refresh_lb_sums(env, sd);
            let src = self.sched_balance_find_src_group(&*env, &mut bal, out);
            let Some(group) = src.busiest else {
                self.sums.fresh = false;
                self.sums.cover_all = false;
                self.sd[sd.0].stats.lb_nobusyg[it] += 1;
                break 'redo Exit::Balanced;
            };
            let busiest_rq = self.sched_balance_find_src_rq(&*env, &bal, group, out);
            // The sums hold until the pass moves a task.
            self.sums.fresh = false;
            self.sums.cover_all = false;
            let Some(busiest) = busiest_rq else {
                self.sd[sd.0].stats.lb_nobusyq[it] += 1;
                break 'redo Exit::Balanced;
            };
            debug_assert_ne!(busiest, bal.dst_cpu, "busiest queue is the destination");
            self.sd[sd.0]
                .stats
                .add_imbalance(it, bal.migration_type, bal.imbalance);
            bal.src_cpu = busiest;
            ld_moved = 0;
            // Cleared as soon as a pullable task is found.
            bal.flags |= lbf::LBF_ALL_PINNED;
            let busiest_nr = env.nr_running(busiest);
            if busiest_nr > 1 {
                // Attempt to move tasks. If the busiest group's statistics were
                // out of date, busiest may be balanced by now and nothing moves.
                bal.loop_max = self.tunables.nr_migrate.min(busiest_nr);
                loop {
                    // more_balance:
                    let cur = self.detach_tasks(env, &mut bal, out);
                    if cur > 0 {
                        self.attach_tasks(env, &mut bal, out);
                        ld_moved += cur;
                    }
                    if bal.flags & lbf::LBF_NEED_BREAK != 0 {
                        bal.flags &= !lbf::LBF_NEED_BREAK;
                        continue;
                    }
                    // Some tasks could not go to dst_cpu because of affinity but can go to
                    // another CPU of the local group: retry with that CPU as destination.
                    if bal.flags & lbf::LBF_DST_PINNED != 0 && bal.imbalance > 0 {
                        bal.cpus.clear(bal.dst_cpu);
                        bal.dst_cpu = bal.new_dst_cpu;
                        bal.flags &= !lbf::LBF_DST_PINNED;
                        bal.loop_count = 0;
                        bal.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    break;
                }
                // Tasks pinned out of this group: mark the parent's local group
                // imbalanced so the parent level sees group_imbalanced.
                if let Some(parent) = sd_parent
                    && bal.flags & lbf::LBF_SOME_PINNED != 0
                    && bal.imbalance > 0
                {
                    let sgc = dom.group(dom.domain(parent).groups[0]).sgc;
                    self.sgc[sgc].imbalance = true;
                }
                // All tasks on this runqueue were pinned by CPU affinity.
                if bal.flags & lbf::LBF_ALL_PINNED != 0 {
                    bal.cpus.clear(busiest);
                    // Try the other CPUs of the domain if some are outside the local group.
                    if !bal.cpus.is_subset_of(&bal.dst_grpmask) {
                        bal.loop_count = 0;
                        bal.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue 'redo;
                    }
                    break 'redo Exit::AllPinned;
                }
            }
            if ld_moved == 0 {
                self.sd[sd.0].stats.lb_failed[it] += 1;
                // Newidle and misfit failures do not push towards active balancing.
                if idle != IdleType::NewlyIdle && bal.migration_type != MigrationType::Misfit {
                    self.sd[sd.0].nr_balance_failed += 1;
                }
                if self.need_active_balance(&*env, &bal) {
                    // Don't kick the stopper if the current task cannot move to this CPU.
                    let curr_ok = env
                        .curr_task(busiest)
                        .is_some_and(|c| env.cpus_allowed(c).test(this_cpu));
                    if !curr_ok {
                        break 'redo Exit::OnePinned;
                    }
                    bal.flags &= !lbf::LBF_ALL_PINNED;
                    if !self.rq[busiest].active_balance {
                        self.rq[busiest].active_balance = true;
                        self.rq[busiest].push_cpu = this_cpu;
                        active_balance = true;
                        out.active_balance.push(busiest);
                    }
                }
            } else {
                self.sd[sd.0].nr_balance_failed = 0;
            }
            if !active_balance || self.need_active_balance(&*env, &bal) {
                // We were unbalanced: reset the balancing interval.
                self.sd[sd.0].balance_interval_ms = d.min_interval_ms;
            }
            break 'redo Exit::Done;
        };
        match exit {
            Exit::Done => return ld_moved,
            Exit::Balanced => {
                if let Some(parent) = sd_parent
                    && bal.flags & lbf::LBF_ALL_PINNED == 0
                {
                    let sgc = dom.group(dom.domain(parent).groups[0]).sgc;
                    self.sgc[sgc].imbalance = false;
                }
                self.out_all_pinned(sd, it);
            }
            Exit::AllPinned => self.out_all_pinned(sd, it),
            Exit::OnePinned => {}
        }
        // out_one_pinned:
        if bal.idle == IdleType::NewlyIdle || bal.migration_type == MigrationType::Misfit {
            return 0;
        }
        let st = &mut self.sd[sd.0];
        if (bal.flags & lbf::LBF_ALL_PINNED != 0 && st.balance_interval_ms < MAX_PINNED_INTERVAL_MS)
            || st.balance_interval_ms < d.max_interval_ms
        {
            st.balance_interval_ms *= 2;
        }
        0
    }

    fn out_all_pinned(&mut self, sd: DomainId, it: usize) {
        let st = &mut self.sd[sd.0];
        st.stats.lb_balanced[it] += 1;
        st.nr_balance_failed = 0;
    }

    /// `active_load_balance_cpu_stop()`: runs on `busiest_cpu` (the stopper) and pushes one
    /// task to `rq->push_cpu`, ignoring cache hotness. Returns the task moved.
    pub fn active_load_balance_cpu_stop<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        busiest_cpu: usize,
        now_ns: u64,
        out: &mut LbOutput,
    ) -> Option<crate::task::TaskId> {
        self.set_now(now_ns);
        let target_cpu = self.rq[busiest_cpu].push_cpu;
        let active = self.domains.span.test(busiest_cpu) && self.domains.span.test(target_cpu);
        let mut moved = None;
        // Is there any task to move? (The kernel's `nr_running <= 1` counts the stopper.)
        if active
            && self.rq[busiest_cpu].active_balance
            && env.nr_running(busiest_cpu) > 0
            && busiest_cpu != target_cpu
        {
            // The lowest domain of the target spanning the busiest CPU.
            let sd = self.domains.lowest_spanning(target_cpu, busiest_cpu);
            if let Some(sd) = sd {
                let mut bal = BalanceEnv::new(
                    self,
                    sd,
                    target_cpu,
                    IdleType::Idle,
                    MigrationReason::ActiveBalance,
                );
                bal.src_cpu = busiest_cpu;
                bal.flags = lbf::LBF_ACTIVE_LB;
                self.sd[sd.0].stats.alb_count += 1;
                moved = self.detach_one_task(env, &mut bal, out);
                if moved.is_some() {
                    self.sd[sd.0].stats.alb_pushed += 1;
                    // Active balancing done: reset the failure counter.
                    self.sd[sd.0].nr_balance_failed = 0;
                } else {
                    self.sd[sd.0].stats.alb_failed += 1;
                }
            }
        }
        self.rq[busiest_cpu].active_balance = false;
        if let Some(p) = moved {
            env.attach_task(p, target_cpu);
            self.record_migration(
                out,
                p,
                busiest_cpu,
                target_cpu,
                MigrationReason::ActiveBalance,
            );
        }
        moved
    }
}
