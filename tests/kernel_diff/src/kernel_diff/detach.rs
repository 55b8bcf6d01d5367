//! `detach_tasks()` (kernel/sched/fair.c of linux 6.12) against
//! `LoadBalancer::detach_tasks` (src/sched/balance/migrate.rs): the limits (`loop_max`,
//! `loop_break` and `LBF_NEED_BREAK`), the load/util bounds relaxed by
//! `nr_balance_failed` (`shr_bound()`), LB_MIN, migrate_task and migrate_misfit, the
//! last-task rule of an idle destination, the list rotation of skipped tasks; with
//! `can_migrate_task()` deciding each task (movable, or pinned to the source CPU).
//! No CONFIG_PREEMPTION (the mirror's `preemption: false`).

use super::lb::{IDLE_TYPES, V61, idle_for, sd_flags};
use crate::ffi::{KdDtIn, KdDtOut, KdDtTask, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{DomainId, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::balance::{
    BalanceCosts, BalanceEnv, LbEnv, LbOutput, LbTunables, LoadBalancer, MigrationType, lbf,
};
use schedlab::sched::types::MigrationReason;
use schedlab::task::TaskId;
use schedlab::topology::presets;
use std::cell::RefCell;
use std::sync::Arc;

const V: &str = "6.12";

/// The source runqueue's CFS tasks, least recently run first.
struct Env {
    src: usize,
    online: CpuMask,
    nr_running: u32,
    tasks: Vec<KdDtTask>,
    order: Vec<u32>,
}

impl LbEnv for Env {
    fn nr_running(&self, cpu: usize) -> u32 {
        if cpu == self.src { self.nr_running } else { 0 }
    }
    fn h_nr_runnable(&self, _cpu: usize) -> u32 {
        0
    }
    fn idle_cpu(&self, _cpu: usize) -> bool {
        false
    }
    fn cpu_load(&self, _cpu: usize) -> u64 {
        0
    }
    fn cpu_runnable(&self, _cpu: usize) -> u64 {
        0
    }
    fn cpu_util(&self, _cpu: usize) -> u64 {
        0
    }
    fn capacity_of(&self, _cpu: usize) -> u64 {
        1024
    }
    fn arch_scale_cpu_capacity(&self, _cpu: usize) -> u64 {
        1024
    }
    fn rq_clock_task(&self, _cpu: usize) -> u64 {
        10_000_000_000
    }
    fn curr_task(&self, _cpu: usize) -> Option<TaskId> {
        None
    }
    fn cfs_tasks(&self, _cpu: usize, out: &mut Vec<TaskId>) {
        out.extend(self.order.iter().map(|&i| TaskId(i)));
    }
    fn cfs_tasks_rotate(&mut self, _cpu: usize, p: TaskId) {
        self.order.retain(|&i| i != p.0);
        self.order.push(p.0);
    }
    fn sched_rng(&mut self, _cpu: usize) -> u32 {
        0
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.tasks[p.0 as usize].h_load
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        self.tasks[p.0 as usize].util
    }
    fn task_running(&self, _cpu: usize, _p: TaskId) -> bool {
        false
    }
    fn cpus_allowed(&self, p: TaskId) -> CpuMask {
        if self.tasks[p.0 as usize].pinned != 0 {
            let mut m = CpuMask::default();
            m.set(self.src);
            m
        } else {
            self.online
        }
    }
    fn exec_start(&self, _p: TaskId) -> u64 {
        0
    }
    fn task_fits_cpu(&self, p: TaskId, _cpu: usize) -> bool {
        self.tasks[p.0 as usize].fits != 0
    }
    fn migrate_degrades_locality(&self, _p: TaskId, _s: usize, _d: usize, _idle: bool) -> i32 {
        0
    }
    fn detach_task(&mut self, p: TaskId, _from: usize, _to: usize) {
        self.nr_running -= 1;
        self.tasks[p.0 as usize].detached = 1;
        self.order.retain(|&i| i != p.0);
    }
    fn attach_task(&mut self, _p: TaskId, _to: usize) {}
}

/// (domain, source CPU, idle type, env->flags, nr_balance_failed, LB_MIN, migration
/// type, imbalance, loop_max, loop_break, extra nr_running, tasks).
type Case = (
    (usize, usize, usize, u32, u32, bool),
    (u32, i64, u32, u32, u32),
    Vec<KdDtTask>,
);

fn case() -> impl Strategy<Value = Case> {
    let flags = prop_oneof![
        Just(lbf::LBF_ALL_PINNED),
        (0u32..32).prop_map(|f| f & !lbf::LBF_NEED_BREAK),
    ];
    let task = (
        prop_oneof![1 => 0u64..16, 3 => 0u64..4096],
        0u64..=1024,
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(h_load, util, fits, pinned)| KdDtTask {
            h_load,
            util,
            fits: u32::from(fits),
            pinned: u32::from(pinned),
            detached: 0,
            failed_hot: 0,
        });
    (
        (
            any::<usize>(),
            any::<usize>(),
            0usize..3,
            flags,
            prop_oneof![3 => 0u32..4, 1 => 0u32..80],
            any::<bool>(),
        ),
        (
            0u32..4,
            prop_oneof![1 => -3i64..=3, 3 => 0i64..20_000, 1 => 0i64..1 << 40],
            prop_oneof![Just(32u32), 1u32..=80],
            prop_oneof![Just(32u32), Just(64), 1u32..=80],
            0u32..3,
        ),
        proptest::collection::vec(task, 0..48),
    )
}

#[test]
fn detach_tasks_matches() {
    detach_tasks_on(V, Features::defaults());
    detach_tasks_on(V61, Features::at_version(KernelVersion::new(6, 1)));
}

/// 6.1's `detach_tasks()` is 6.12's (its `env->idle != CPU_NOT_IDLE` is 6.12's `env->idle`
/// under the v6.9 enum order).
fn detach_tasks_on(v: &str, features: Features) {
    if !available("balance", v) {
        return;
    }
    let m = presets::by_name("skl-2s").expect("preset");
    let d = Arc::new(build_sched_domains(&m));
    let t = LbTunables {
        migration_cost_ns: 500_000,
        nr_migrate: 32,
        hz: 250,
        preemption: false,
    };
    let c = BalanceCosts {
        pass_ns: 0,
        per_cpu_ns: 0,
        per_task_ns: 0,
    };
    let lb = RefCell::new(LoadBalancer::new(d.clone(), features, t, c, 0));
    assert_no_mismatch("balance::detach_tasks", v, cases(5000), case(), |c| {
        let &(
            (sd, src, it, flags, failed, lb_min),
            (mt, imb, loop_max, loop_break, extra),
            ref tasks,
        ) = c;
        let sd = DomainId(sd % d.domains.len());
        let dom = d.domain(sd);
        let src = dom
            .span
            .iter()
            .filter(|&c| c != dom.cpu)
            .nth(src % dom.span.weight().saturating_sub(1).max(1))
            .unwrap_or(dom.cpu);
        let mut lb = lb.borrow_mut();
        lb.features.set(Feature::LB_MIN, lb_min);
        lb.features.set(Feature::CACHE_HOT_BUDDY, false);
        lb.sd[sd.0].nr_balance_failed = failed;
        lb.task_stats.clear();
        let mut bal = BalanceEnv::new(
            &lb,
            sd,
            dom.cpu,
            IDLE_TYPES[it],
            MigrationReason::LoadBalance,
        );
        bal.src_cpu = src;
        bal.flags = flags;
        bal.imbalance = imb;
        bal.migration_type = [
            MigrationType::Load,
            MigrationType::Util,
            MigrationType::Task,
            MigrationType::Misfit,
        ][mt as usize];
        bal.loop_max = loop_max;
        bal.loop_break = loop_break;
        let n = tasks.len() as u32;
        let mut only = CpuMask::default();
        only.set(src);
        let inp = KdDtIn {
            grpmask: kd_mask(&bal.dst_grpmask),
            cpus: kd_mask(&bal.cpus),
            onlysrc: kd_mask(&only),
            imbalance: imb,
            src_cpu: src as u32,
            dst_cpu: dom.cpu as u32,
            idle: idle_for(v, it),
            flags,
            nr_balance_failed: failed,
            sd_flags: sd_flags(dom.flags),
            src_nr_running: n + extra,
            migration_type: mt,
            loop_max,
            loop_break,
            lb_min: u32::from(lb_min),
            n,
        };
        let mut kt = tasks.clone();
        let mut kout = KdDtOut {
            imbalance: 0,
            detached: 0,
            flags: 0,
            loop_: 0,
            loop_break: 0,
            src_nr_running: 0,
            new_dst_cpu: 0,
            order: [0; 64],
        };
        // SAFETY: `kt` holds `n` (< 64) tasks, the other pointers are to locals.
        let rc = unsafe {
            if v == V61 {
                crate::ffi::kd61_detach_tasks(&inp, kt.as_mut_ptr(), &mut kout)
            } else {
                crate::ffi::kd612_detach_tasks(&inp, kt.as_mut_ptr(), &mut kout)
            }
        };
        assert_eq!(rc, 0);
        let mut env = Env {
            src,
            online: m.online,
            nr_running: n + extra,
            tasks: tasks.clone(),
            order: (0..n).collect(),
        };
        let mut out = LbOutput::default();
        let detached = lb.detach_tasks(&mut env, &mut bal, &mut out);
        for (i, t) in env.tasks.iter_mut().enumerate() {
            t.failed_hot = lb
                .task_stats
                .get(&TaskId(i as u32))
                .map_or(0, |s| s.nr_failed_migrations_hot as u32);
        }
        let mut order = [u32::MAX; 64];
        order[..env.order.len()].copy_from_slice(&env.order);
        let rout = KdDtOut {
            imbalance: bal.imbalance,
            detached,
            flags: bal.flags,
            loop_: bal.loop_count,
            loop_break: bal.loop_break,
            src_nr_running: env.nr_running,
            new_dst_cpu: bal.new_dst_cpu as u32,
            order,
        };
        compare("detach_tasks", &kout, &rout)?;
        compare("tasks", &kt, &env.tasks)
    });
}
