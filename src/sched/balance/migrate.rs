//! Choosing and moving tasks: `can_migrate_task()`, `task_hot()`, `detach_tasks()`,
//! `detach_one_task()`, `detach_task()` and `attach_tasks()` (kernel/sched/fair.c, v6.17).
//!
//! `cfs_tasks` is walked as the kernel walks it: from the least recently run end, a
//! skipped task being rotated to the most-recently-run end ([`LbEnv::cfs_tasks_rotate`]),
//! so repeated passes see the same order the kernel would.
//!
//! Left out: `throttled_lb_pair()` (no CFS bandwidth), per-CPU kthreads, proxy-execution
//! blocked tasks and core-scheduling cookies (none modelled); `sysctl_sched_migration_cost
//! == -1` (the tunable is unsigned here).

use std::collections::VecDeque;

use super::{
    BalanceEnv, LbEnv, LbOutput, LoadBalancer, MigrationType, SCHED_NR_MIGRATE_BREAK, TaskDecision,
    TaskVerdict, idle_index, lbf,
};
use crate::domains::SdFlags;
use crate::kconfig::features::Feature;
use crate::sched::types::IdleType;
use crate::task::TaskId;

/// Answer of `can_migrate_task()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanMigrate {
    pub ok: bool,
    /// `p->sched_task_hot`: accepted although cache hot.
    pub hot: bool,
    /// Why it was refused (or [`TaskVerdict::Moved`] / [`TaskVerdict::MovedHot`]).
    pub verdict: TaskVerdict,
}

impl LoadBalancer {
    /// `task_hot()`: is `p` cache hot on the source CPU for this pass?
    pub fn task_hot<E: LbEnv + ?Sized>(&self, env: &E, bal: &BalanceEnv, p: TaskId) -> bool {
        if env.has_idle_policy(p) {
            return false;
        }
        // SMT siblings share caches.
        if self
            .domains
            .domain(bal.sd)
            .flags
            .contains(SdFlags::SD_SHARE_CPUCAPACITY)
        {
            return false;
        }
        // Buddy candidates are cache hot.
        if self.feat(Feature::CACHE_HOT_BUDDY)
            && env.nr_running(bal.dst_cpu) > 0
            && env.is_next_buddy(p)
        {
            return true;
        }
        let cost = self.tunables.migration_cost_ns;
        if cost == 0 {
            return false;
        }
        let delta = env.rq_clock_task(bal.src_cpu) as i128 - env.exec_start(p) as i128;
        delta < cost as i128
    }

    /// `can_migrate_task()`: may `p` move from `bal.src_cpu` to `bal.dst_cpu` in this pass?
    /// Updates `bal.flags` (`LBF_SOME_PINNED`, `LBF_DST_PINNED`/`new_dst_cpu`,
    /// `LBF_ALL_PINNED`) and the task's failure counters as the kernel does.
    pub fn can_migrate_task<E: LbEnv + ?Sized>(
        &mut self,
        env: &E,
        bal: &mut BalanceEnv,
        p: TaskId,
    ) -> CanMigrate {
        let no = |verdict| CanMigrate {
            ok: false,
            hot: false,
            verdict,
        };
        let nr_balance_failed = self.sd[bal.sd.0].nr_balance_failed;
        let cache_nice_tries = self.domains.domain(bal.sd).cache_nice_tries;
        // Delayed-dequeue tasks only move with load (their load still counts): v6.14+,
        // 61b82dfb6b7e (LB_SKIP_DELAYED; 6.12 moves them like any queued task).
        if self.feat(Feature::LB_SKIP_DELAYED)
            && env.is_delayed(p)
            && bal.migration_type != MigrationType::Load
        {
            return no(TaskVerdict::Delayed);
        }
        // Prefer eligible tasks: ineligible ones only move after a failure (v6.14+,
        // 873199d27bb2, LB_SKIP_INELIGIBLE).
        if nr_balance_failed == 0
            && self.feat(Feature::LB_SKIP_INELIGIBLE)
            && self.feat(Feature::PLACE_LAG)
            && env.task_ineligible_on_dst(p, bal.dst_cpu)
        {
            return no(TaskVerdict::Ineligible);
        }
        let allowed = env.cpus_allowed(p);
        if !allowed.test(bal.dst_cpu) {
            self.task_stats
                .entry(p)
                .or_default()
                .nr_failed_migrations_affine += 1;
            bal.flags |= lbf::LBF_SOME_PINNED;
            // Remember a CPU of the local group the task could go to, to retry with it if
            // the goals are not met (not for newidle, not twice, not for active balance).
            if bal.idle == IdleType::NewlyIdle
                || bal.flags & (lbf::LBF_DST_PINNED | lbf::LBF_ACTIVE_LB) != 0
            {
                return no(TaskVerdict::Affine);
            }
            if let Some(cpu) = bal.dst_grpmask.and(&bal.cpus).and(&allowed).first() {
                bal.flags |= lbf::LBF_DST_PINNED;
                bal.new_dst_cpu = cpu;
            }
            return no(TaskVerdict::Affine);
        }
        // Record that we found at least one task that could run on dst_cpu.
        bal.flags &= !lbf::LBF_ALL_PINNED;
        // The running task cannot be pulled; during active balancing the stopper has
        // preempted it, so it is movable then.
        if bal.flags & lbf::LBF_ACTIVE_LB == 0 && env.task_running(bal.src_cpu, p) {
            self.task_stats
                .entry(p)
                .or_default()
                .nr_failed_migrations_running += 1;
            return no(TaskVerdict::Running);
        }
        // Aggressive migration for active balance, NUMA-preferred destinations, cold
        // tasks, or after too many failures.
        if bal.flags & lbf::LBF_ACTIVE_LB != 0 {
            return CanMigrate {
                ok: true,
                hot: false,
                verdict: TaskVerdict::Moved,
            };
        }
        let degrades = if self.domains.domain(bal.sd).flags.contains(SdFlags::SD_NUMA) {
            env.migrate_degrades_locality(p, bal.src_cpu, bal.dst_cpu, bal.idle == IdleType::Idle)
        } else {
            0
        };
        let hot = if degrades == 0 {
            self.task_hot(env, bal, p)
        } else {
            degrades > 0
        };
        if !hot || nr_balance_failed > cache_nice_tries {
            return CanMigrate {
                ok: true,
                hot,
                verdict: if hot {
                    TaskVerdict::MovedHot
                } else {
                    TaskVerdict::Moved
                },
            };
        }
        self.task_stats
            .entry(p)
            .or_default()
            .nr_failed_migrations_hot += 1;
        no(TaskVerdict::Hot)
    }

    /// `detach_task()`: count a forced hot migration, then dequeue from the source and
    /// `set_task_cpu()` to the destination (the environment does both).
    fn detach_task<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        bal: &BalanceEnv,
        p: TaskId,
        hot: bool,
    ) {
        if hot {
            self.sd[bal.sd.0].stats.lb_hot_gained[idle_index(bal.idle)] += 1;
            self.task_stats.entry(p).or_default().nr_forced_migrations += 1;
        }
        env.detach_task(p, bal.src_cpu, bal.dst_cpu);
    }

    /// `detach_tasks()`: detach up to `bal.imbalance` worth of tasks from `bal.src_cpu`,
    /// examining at most `loop_max` tasks (least recently run first). Returns how many were
    /// detached; they are appended to `bal.tasks`.
    pub fn detach_tasks<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        bal: &mut BalanceEnv,
        out: &mut LbOutput,
    ) -> u32 {
        let src = bal.src_cpu;
        // The source was emptied by another CPU: no task will be tested.
        if env.nr_running(src) <= 1 {
            bal.flags &= !lbf::LBF_ALL_PINNED;
            return 0;
        }
        if bal.imbalance <= 0 {
            return 0;
        }
        let mut list = std::mem::take(&mut self.scratch_tasks);
        list.clear();
        env.cfs_tasks(src, &mut list);
        let mut tasks: VecDeque<TaskId> = std::mem::take(&mut self.scratch_deque);
        tasks.clear();
        tasks.extend(list.drain(..));
        self.scratch_tasks = list;
        let nr_balance_failed = self.sd[bal.sd.0].nr_balance_failed;
        let shift = nr_balance_failed.min(63);
        let mut detached = 0u32;
        while let Some(&p) = tasks.front() {
            // Never steal the last task when pulling to an idle CPU (livelock).
            if bal.dst_idle() && env.nr_running(src) <= 1 {
                break;
            }
            bal.loop_count += 1;
            // We've more or less seen every task there is, call it quits.
            if bal.loop_count > bal.loop_max {
                break;
            }
            // Take a breather every nr_migrate tasks.
            if bal.loop_count > bal.loop_break {
                bal.loop_break += SCHED_NR_MIGRATE_BREAK;
                bal.flags |= lbf::LBF_NEED_BREAK;
                break;
            }
            out.work.tasks += 1;
            let can = self.can_migrate_task(&*env, bal, p);
            let mut verdict = can.verdict;
            if can.ok {
                match bal.migration_type {
                    MigrationType::Load => {
                        let load = env.task_h_load(p).max(1);
                        if self.feat(Feature::LB_MIN) && load < 16 && nr_balance_failed == 0 {
                            verdict = TaskVerdict::LbMin;
                        } else if (load >> shift) as i64 > bal.imbalance {
                            // Do not migrate too much load; the bound relaxes (doubles)
                            // with each failed attempt.
                            verdict = TaskVerdict::TooBig;
                        } else {
                            bal.imbalance -= load as i64;
                        }
                    }
                    MigrationType::Util => {
                        let util = env.task_util_est(p);
                        if (util >> shift) as i64 > bal.imbalance {
                            verdict = TaskVerdict::TooBig;
                        } else {
                            bal.imbalance -= util as i64;
                        }
                    }
                    MigrationType::Task => bal.imbalance -= 1,
                    MigrationType::Misfit => {
                        // Only a task that does not fit its source CPU.
                        if env.task_fits_cpu(p, src) {
                            verdict = TaskVerdict::NotMisfit;
                        } else {
                            bal.imbalance = 0;
                        }
                    }
                }
            }
            out.decisions.push(TaskDecision {
                task: p,
                src_cpu: src,
                dst_cpu: bal.dst_cpu,
                verdict,
            });
            if matches!(verdict, TaskVerdict::Moved | TaskVerdict::MovedHot) {
                tasks.pop_front();
                self.detach_task(env, bal, p, can.hot);
                bal.tasks.push(p);
                detached += 1;
                // NEWIDLE balancing is a source of latency: preemptible kernels stop after
                // the first detached task.
                if self.tunables.preemption && bal.idle == IdleType::NewlyIdle {
                    break;
                }
                // Only steal up to the prescribed amount.
                if bal.imbalance <= 0 {
                    break;
                }
                continue;
            }
            // next: a hot task accepted by can_migrate_task() but skipped here still counts
            // as a hot failure.
            if can.hot {
                self.task_stats
                    .entry(p)
                    .or_default()
                    .nr_failed_migrations_hot += 1;
            }
            tasks.pop_front();
            tasks.push_back(p);
            env.cfs_tasks_rotate(src, p);
        }
        self.sd[bal.sd.0].stats.lb_gained[idle_index(bal.idle)] += u64::from(detached);
        self.scratch_deque = tasks;
        detached
    }

    /// `attach_tasks()`: enqueue the detached tasks on the destination, in the kernel's
    /// order (the detach list is LIFO), and record the migrations.
    pub fn attach_tasks<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        bal: &mut BalanceEnv,
        out: &mut LbOutput,
    ) {
        while let Some(p) = bal.tasks.pop() {
            env.attach_task(p, bal.dst_cpu);
            self.record_migration(out, p, bal.src_cpu, bal.dst_cpu, bal.reason);
        }
    }

    /// `detach_one_task()` (active balancing): the first task from the least recently run
    /// end that `can_migrate_task()` accepts.
    pub fn detach_one_task<E: LbEnv + ?Sized>(
        &mut self,
        env: &mut E,
        bal: &mut BalanceEnv,
        out: &mut LbOutput,
    ) -> Option<TaskId> {
        let mut list = std::mem::take(&mut self.scratch_tasks);
        list.clear();
        env.cfs_tasks(bal.src_cpu, &mut list);
        let mut found = None;
        for &p in &list {
            out.work.tasks += 1;
            let can = self.can_migrate_task(&*env, bal, p);
            out.decisions.push(TaskDecision {
                task: p,
                src_cpu: bal.src_cpu,
                dst_cpu: bal.dst_cpu,
                verdict: can.verdict,
            });
            if can.ok {
                found = Some((p, can.hot));
                break;
            }
        }
        self.scratch_tasks = list;
        let (p, hot) = found?;
        self.detach_task(env, bal, p, hot);
        self.sd[bal.sd.0].stats.lb_gained[idle_index(bal.idle)] += 1;
        Some(p)
    }
}
