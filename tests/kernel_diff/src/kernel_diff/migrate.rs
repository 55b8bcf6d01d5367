//! Whether the balancer may move a task (kernel/sched/fair.c of linux 6.12.y:
//! `can_migrate_task()` with `task_hot()`) against src/sched/balance/migrate.rs: affinity
//! (`LBF_SOME_PINNED`, `LBF_DST_PINNED` and `new_dst_cpu` from the local group's balance
//! mask ∩ `env->cpus`), `LBF_ALL_PINNED`, the running task, `LBF_ACTIVE_LB`, the NUMA
//! locality answer on SD_NUMA domains, cache hotness (SMT domains, CACHE_HOT_BUDDY,
//! SCHED_IDLE, `exec_start` against `sysctl_sched_migration_cost`) and `cache_nice_tries`;
//! the answer, `p->sched_task_hot`, `env->flags`, `env->new_dst_cpu` and the schedstats.
//!
//! The mirror's later filters (a delayed-dequeue task only with `migrate_load`, ineligible
//! tasks while `nr_balance_failed == 0`) are not in 6.12.118: the tasks generated are
//! neither delayed nor ineligible.

use super::lb::{IDLE_TYPES, MACHINES, Setup, V61, idle_for, sd_flags, setups_at};
use crate::ffi::{KdCmtIn, KdCmtOut, KdMask, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::DomainId;
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::balance::{BalanceEnv, LbEnv, MigrationType, lbf};
use schedlab::sched::types::MigrationReason;
use schedlab::task::TaskId;
use std::cell::RefCell;
use std::collections::BTreeMap;

const V: &str = "6.12";

/// The task and runqueue state both sides read.
struct Env {
    allowed: CpuMask,
    running: bool,
    clock_task: u64,
    exec_start: u64,
    dst_nr_running: u32,
    next_buddy: bool,
    idle_policy: bool,
    /// The kernel's migrate_degrades_locality() answer: 1, 0 or -1.
    mdl: i32,
}

impl LbEnv for Env {
    fn nr_running(&self, _cpu: usize) -> u32 {
        self.dst_nr_running
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
        self.clock_task
    }
    fn curr_task(&self, _cpu: usize) -> Option<TaskId> {
        None
    }
    fn cfs_tasks(&self, _cpu: usize, _out: &mut Vec<TaskId>) {}
    fn cfs_tasks_rotate(&mut self, _cpu: usize, _p: TaskId) {}
    fn sched_rng(&mut self, _cpu: usize) -> u32 {
        0
    }
    fn task_h_load(&self, _p: TaskId) -> u64 {
        0
    }
    fn task_util_est(&self, _p: TaskId) -> u64 {
        0
    }
    fn task_running(&self, _cpu: usize, _p: TaskId) -> bool {
        self.running
    }
    fn cpus_allowed(&self, _p: TaskId) -> CpuMask {
        self.allowed
    }
    fn exec_start(&self, _p: TaskId) -> u64 {
        self.exec_start
    }
    fn is_next_buddy(&self, _p: TaskId) -> bool {
        self.next_buddy
    }
    fn has_idle_policy(&self, _p: TaskId) -> bool {
        self.idle_policy
    }
    fn migrate_degrades_locality(&self, _p: TaskId, _s: usize, _d: usize, _idle: bool) -> i32 {
        // The mirror's encoding: > 0 degrades, < 0 improves, 0 unaffected.
        match self.mdl {
            1 => 1,
            0 => -1,
            _ => 0,
        }
    }
    fn detach_task(&mut self, _p: TaskId, _from: usize, _to: usize) {}
    fn attach_task(&mut self, _p: TaskId, _to: usize) {}
}

/// The pass: machine, domain, source CPU, idle type, `env->flags`, `nr_balance_failed`,
/// CPUs dropped from `env->cpus`, CACHE_HOT_BUDDY, `sysctl_sched_migration_cost`.
type Pass = (
    usize,
    usize,
    usize,
    usize,
    u32,
    u32,
    Option<KdMask>,
    bool,
    u32,
);
/// The task: affinity (None: every CPU; else a random mask, the destination cleared
/// half the time), running, `exec_start` before the clock, next buddy, SCHED_IDLE,
/// destination nr_running, NUMA locality answer.
type Task = (Option<(KdMask, bool)>, bool, u64, bool, bool, u32, i32);

fn pass() -> impl Strategy<Value = Pass> {
    let flags = prop_oneof![
        Just(lbf::LBF_ALL_PINNED),
        (0u32..32).prop_map(|f| f & !lbf::LBF_NEED_BREAK),
    ];
    (
        0..MACHINES.len(),
        any::<usize>(),
        any::<usize>(),
        0usize..3,
        flags,
        prop_oneof![Just(0u32), 0u32..5],
        prop_oneof![3 => Just(None), 1 => any::<KdMask>().prop_map(Some)],
        any::<bool>(),
        prop_oneof![Just(500_000u32), Just(0), 0u32..10_000_000],
    )
}

fn task() -> impl Strategy<Value = Task> {
    (
        prop_oneof![1 => Just(None), 2 => (any::<KdMask>(), any::<bool>()).prop_map(Some)],
        prop::bool::weighted(0.2),
        prop_oneof![0u64..1_000_000, 0u64..20_000_000],
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
        0u32..3,
        -1i32..=1,
    )
}

fn mask_of(online: &CpuMask, bits: &KdMask) -> CpuMask {
    let mut m = CpuMask::default();
    for cpu in online.iter().filter(|&c| bits[c / 64] >> (c % 64) & 1 == 1) {
        m.set(cpu);
    }
    m
}

#[test]
fn can_migrate_task_matches() {
    can_migrate_task_on(V, Features::defaults());
    can_migrate_task_on(V61, Features::at_version(KernelVersion::new(6, 1)));
}

/// 6.1's `can_migrate_task()` is 6.12's; its `task_hot()` also treats the last buddy as
/// cache hot under CACHE_HOT_BUDDY (the shim's `cfs_rq->last` stays NULL: not generated).
fn can_migrate_task_on(v: &str, features: Features) {
    if !available("balance", v) {
        return;
    }
    let setups = RefCell::new(setups_at(features));
    let verdicts = RefCell::new(BTreeMap::new());
    assert_no_mismatch(
        "balance::can_migrate_task+task_hot",
        v,
        cases(5000),
        (pass(), task()),
        |(p, t)| {
            check(
                v,
                &mut setups.borrow_mut(),
                p,
                t,
                &mut verdicts.borrow_mut(),
            )
        },
    );
    println!(
        "kernel_diff balance::can_migrate_task (linux {}): verdicts {:?}",
        crate::release(v),
        verdicts.borrow()
    );
}

fn check(
    v: &str,
    setups: &mut [Setup],
    p: &Pass,
    t: &Task,
    verdicts: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    let &(mi, sd, src, it, flags, failed, ref drop, buddy_feat, cost) = p;
    let s = &mut setups[mi];
    let sd = DomainId(sd % s.d.domains.len());
    let dom = s.d.domain(sd);
    let src = dom
        .span
        .iter()
        .nth(src % dom.span.weight())
        .unwrap_or(dom.cpu);
    let mut bal = BalanceEnv::new(
        &s.lb,
        sd,
        dom.cpu,
        IDLE_TYPES[it],
        MigrationReason::LoadBalance,
    );
    bal.src_cpu = src;
    bal.flags = flags;
    bal.migration_type = MigrationType::Load;
    if let Some(d) = drop {
        bal.cpus = bal.cpus.andnot(&mask_of(&s.m.online, d));
    }
    let mut e = env(s, t, dom.cpu);
    // Active balancing runs in the source's stopper thread, which preempted the task:
    // task_on_cpu() is false then (the mirror skips the test under LBF_ACTIVE_LB).
    e.running &= flags & lbf::LBF_ACTIVE_LB == 0;
    let inp = KdCmtIn {
        grpmask: kd_mask(&bal.dst_grpmask),
        cpus: kd_mask(&bal.cpus),
        allowed: kd_mask(&e.allowed),
        clock_task: e.clock_task,
        exec_start: e.exec_start,
        migration_cost: cost,
        src_cpu: src as u32,
        dst_cpu: dom.cpu as u32,
        idle: idle_for(v, it),
        flags,
        nr_balance_failed: failed,
        cache_nice_tries: dom.cache_nice_tries,
        sd_flags: sd_flags(dom.flags),
        dst_nr_running: e.dst_nr_running,
        running: u32::from(e.running),
        idle_policy: u32::from(e.idle_policy),
        next_buddy: u32::from(e.next_buddy),
        cache_hot_buddy: u32::from(buddy_feat),
        mdl: e.mdl,
    };
    let mut k = KdCmtOut::default();
    // SAFETY: reads `inp`, writes `k`.
    unsafe {
        if v == V61 {
            crate::ffi::kd61_can_migrate_task(&inp, &mut k)
        } else {
            crate::ffi::kd612_can_migrate_task(&inp, &mut k)
        }
    };
    s.lb.features.set(Feature::CACHE_HOT_BUDDY, buddy_feat);
    s.lb.tunables.migration_cost_ns = u64::from(cost);
    s.lb.sd[sd.0].nr_balance_failed = failed;
    s.lb.task_stats.clear();
    let r = s.lb.can_migrate_task(&e, &mut bal, TaskId(0));
    let st = s.lb.task_stats.get(&TaskId(0)).copied().unwrap_or_default();
    let pinned = if bal.flags & lbf::LBF_DST_PINNED != flags & lbf::LBF_DST_PINNED {
        " (new dst)"
    } else {
        ""
    };
    *verdicts
        .entry(format!("{:?}{pinned}", r.verdict))
        .or_default() += 1;
    let rout = KdCmtOut {
        affine: st.nr_failed_migrations_affine,
        running: st.nr_failed_migrations_running,
        hot: st.nr_failed_migrations_hot,
        forced: st.nr_forced_migrations,
        ret: u32::from(r.ok),
        flags: bal.flags,
        new_dst_cpu: bal.new_dst_cpu as u32,
        sched_task_hot: u32::from(r.ok && r.hot),
    };
    compare("can_migrate_task", &k, &rout)
}

fn env(s: &Setup, t: &Task, dst: usize) -> Env {
    let &(ref aff, running, before, next_buddy, idle_policy, dst_nr, mdl) = t;
    let mut allowed = s.m.online;
    if let Some((bits, clear_dst)) = aff {
        allowed = mask_of(&s.m.online, bits);
        if *clear_dst {
            allowed.clear(dst);
        }
    }
    let clock_task = 10_000_000_000;
    Env {
        allowed,
        running,
        clock_task,
        exec_start: clock_task - before,
        dst_nr_running: dst_nr,
        next_buddy,
        idle_policy,
        mdl,
    }
}
