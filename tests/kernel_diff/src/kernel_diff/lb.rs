//! Who balances and which group is busiest (kernel/sched/fair.c of linux 6.12.y) against
//! src/sched/balance/trigger.rs and stats.rs: `should_we_balance()` (the first idle CPU of a
//! fully idle core, then the first idle CPU with busy siblings, then `group_balance_cpu()`;
//! NEWLY_IDLE; `env->cpus`) and `update_sd_pick_busiest()`, on the domains of presets with
//! SMT and non-SMT cores, asymmetric capacity, ITMT priorities and NUMA levels.

use crate::ffi::{KdMask, KdPickIn, KdSg, KdSgsFull, KdSwbIn, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{DomainId, SchedDomains, SdFlags, build_sched_domains};
use schedlab::kconfig::features::Features;
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::balance::stats::{SdLbStats, SgLbStats};
use schedlab::sched::balance::{BalanceCosts, BalanceEnv, LbEnv, LbTunables, LoadBalancer};
use schedlab::sched::types::GroupType;
use schedlab::sched::types::{IdleType, MigrationReason};
use schedlab::task::TaskId;
use schedlab::topology::{Machine, presets};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const V: &str = "6.12";
/// 6.1: should_we_balance() without the idle-core preference (SHOULD_WE_BALANCE_IDLE_CORE,
/// v6.6), can_migrate_task() as in 6.12; the mirror runs with 6.1's features.
pub(super) const V61: &str = "6.1";

/// `enum cpu_idle_type` of kernel `v` for the mirror's [`IDLE_TYPES`] index: 6.12 has
/// `__CPU_NOT_IDLE = 0, CPU_IDLE, CPU_NEWLY_IDLE` (v6.9 order), 6.1
/// `CPU_IDLE = 0, CPU_NOT_IDLE, CPU_NEWLY_IDLE`.
pub(super) fn idle_for(v: &str, it: usize) -> u32 {
    if v == V61 { [1, 0, 2][it] } else { it as u32 }
}

/// SMT2+single-thread cores (one LLC), hybrid with asymmetric capacity and ITMT, SMT4/8
/// POWER10, two and four NUMA nodes.
pub(super) const MACHINES: [&str; 5] =
    ["hybrid-10", "adl-i9", "power10-96", "skl-2s", "haswell-4s"];

pub(super) struct Setup {
    pub(super) m: Machine,
    pub(super) d: Arc<SchedDomains>,
    pub(super) lb: LoadBalancer,
}

/// The presets' domains and load balancers with the given features (6.12 runs: the
/// registry defaults; 6.1 runs: 6.1's).
pub(super) fn setups_at(features: Features) -> Vec<Setup> {
    MACHINES
        .iter()
        .map(|name| {
            let m = presets::by_name(name).expect("preset");
            let mut d = build_sched_domains(&m);
            // sg->asym_prefer_cpu as SD_ASYM_PACKING would set it (none of the presets
            // has that flag): the last CPU of the span, so that update_sd_pick_busiest()'s
            // group_asym_packing case compares two CPUs' random priorities.
            for g in d.groups.iter_mut() {
                g.asym_prefer_cpu = g.span.iter().last();
            }
            let d = Arc::new(d);
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
            let lb = LoadBalancer::new(d.clone(), features, t, c, 0);
            Setup { m, d, lb }
        })
        .collect()
}

/// The per-CPU state both sides read.
struct Env {
    idle: Vec<bool>,
    capacity: Vec<u64>,
    prio: Vec<i64>,
    nr_running: u32,
    ttwu_pending: bool,
}

impl LbEnv for Env {
    fn nr_running(&self, _cpu: usize) -> u32 {
        self.nr_running
    }
    fn h_nr_runnable(&self, _cpu: usize) -> u32 {
        0
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.idle[cpu]
    }
    fn ttwu_pending(&self, _cpu: usize) -> bool {
        self.ttwu_pending
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
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.capacity[cpu]
    }
    fn arch_scale_cpu_capacity(&self, _cpu: usize) -> u64 {
        1024
    }
    fn arch_asym_cpu_priority(&self, cpu: usize) -> i64 {
        self.prio[cpu]
    }
    fn rq_clock_task(&self, _cpu: usize) -> u64 {
        0
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
        false
    }
    fn cpus_allowed(&self, _p: TaskId) -> CpuMask {
        CpuMask::default()
    }
    fn exec_start(&self, _p: TaskId) -> u64 {
        0
    }
    fn detach_task(&mut self, _p: TaskId, _from: usize, _to: usize) {}
    fn attach_task(&mut self, _p: TaskId, _to: usize) {}
}

/// Random per-CPU bits with a density: sparse (a & b), half (a), dense (a | b), all but
/// a few (!(a & b & c)).
fn bits() -> impl Strategy<Value = (KdMask, KdMask, KdMask, u8)> {
    (any::<KdMask>(), any::<KdMask>(), any::<KdMask>(), 0u8..4)
}

fn bit(b: &(KdMask, KdMask, KdMask, u8), cpu: usize) -> bool {
    let (w, s) = (cpu / 64, cpu % 64);
    let (a, b2, c) = (b.0[w] >> s & 1, b.1[w] >> s & 1, b.2[w] >> s & 1);
    match b.3 {
        0 => a & b2 == 1,
        1 => a == 1,
        2 => a | b2 == 1,
        _ => a & b2 & c == 0,
    }
}

/// The per-CPU state of one case (set on the kernel side too, in the unit of kernel `v`):
/// idle bits, a capacity (1024, 512, 480 or any, for capacity_greater()'s margin), an
/// ITMT-like priority.
fn env_on(
    v: &str,
    s: &Setup,
    idle: &(KdMask, KdMask, KdMask, u8),
    caps: &[u16],
    nr: u32,
    ttwu: bool,
) -> Env {
    let n = s.m.nr_cpus();
    let e = Env {
        idle: (0..n).map(|c| bit(idle, c)).collect(),
        capacity: (0..n)
            .map(|c| u64::from(caps[c % caps.len()] % 1025).max(1))
            .collect(),
        prio: (0..n)
            .map(|c| i64::from(caps[(c * 7 + 3) % caps.len()] % 64))
            .collect(),
        nr_running: nr,
        ttwu_pending: ttwu,
    };
    for cpu in 0..n {
        let smt = kd_mask(&s.m.smt_mask(cpu).and(&s.m.online));
        // SAFETY: cpu < 512 (the shim's arrays); `smt` outlives the call.
        let (c, idle, prio, cap) = (
            cpu as i32,
            i32::from(e.idle[cpu]),
            e.prio[cpu] as i32,
            e.capacity[cpu],
        );
        unsafe {
            if v == V61 {
                crate::ffi::kd61_lb_set_cpu(c, idle, prio, cap, smt.as_ptr())
            } else {
                crate::ffi::kd612_lb_set_cpu(c, idle, prio, cap, smt.as_ptr())
            }
        };
    }
    e
}

pub(super) fn sd_flags(f: SdFlags) -> u32 {
    let mut flags = 0;
    for (flag, bit) in [
        (SdFlags::SD_ASYM_CPUCAPACITY, 1),
        (SdFlags::SD_SHARE_LLC, 2),
        (SdFlags::SD_NUMA, 4),
        (SdFlags::SD_SHARE_CPUCAPACITY, 8),
    ] {
        if f.contains(flag) {
            flags |= bit;
        }
    }
    flags
}

pub(super) const IDLE_TYPES: [IdleType; 3] =
    [IdleType::NotIdle, IdleType::Idle, IdleType::NewlyIdle];

/// (machine, domain, idle bits, capacities, idle type, dst nr_running, ttwu_pending,
/// CPUs dropped from env->cpus (mostly none)).
type SwbCase = (
    usize,
    usize,
    (KdMask, KdMask, KdMask, u8),
    Vec<u16>,
    usize,
    u32,
    bool,
    Option<KdMask>,
);

fn swb_case() -> impl Strategy<Value = SwbCase> {
    (
        0..MACHINES.len(),
        any::<usize>(),
        bits(),
        prop::collection::vec(any::<u16>(), 16),
        0usize..3,
        prop_oneof![3 => Just(0u32), 1 => 1u32..4],
        prop::bool::weighted(0.2),
        prop_oneof![
            3 => Just(None),
            1 => (any::<KdMask>(), any::<KdMask>())
                .prop_map(|(a, b)| Some(std::array::from_fn(|i| a[i] & b[i]))),
        ],
    )
}

#[test]
fn should_we_balance_matches() {
    should_we_balance_on(V, Features::defaults());
    should_we_balance_on(V61, Features::at_version(KernelVersion::new(6, 1)));
}

fn should_we_balance_on(v: &str, features: Features) {
    if !available("balance", v) {
        return;
    }
    let setups = setups_at(features);
    assert_no_mismatch(
        "balance::should_we_balance",
        v,
        cases(5000),
        swb_case(),
        |(mi, sd, idle, caps, it, nr, ttwu, drop)| {
            let s = &setups[*mi];
            let sd = DomainId(sd % s.d.domains.len());
            let dom = s.d.domain(sd);
            let e = env_on(v, s, idle, caps, *nr, *ttwu);
            let mut bal = BalanceEnv::new(
                &s.lb,
                sd,
                dom.cpu,
                IDLE_TYPES[*it],
                MigrationReason::LoadBalance,
            );
            if let Some(drop) = drop {
                // env->cpus without some CPUs (busiest CPUs that pinned every task; the
                // destination itself in the hotplug race).
                let cpus = bal.cpus;
                for cpu in cpus.iter().filter(|&c| drop[c / 64] >> (c % 64) & 1 == 1) {
                    bal.cpus.clear(cpu);
                }
            }
            let sg = s.d.group(dom.groups[0]);
            let inp = KdSwbIn {
                balance_mask: kd_mask(&sg.balance_mask),
                cpus: kd_mask(&bal.cpus),
                dst_cpu: dom.cpu as u32,
                idle: idle_for(v, *it),
                sd_flags: sd_flags(dom.flags),
                nr_running: *nr,
                ttwu_pending: u32::from(*ttwu),
            };
            // SAFETY: reads `inp` and the per-CPU arrays set by env_on().
            let k = unsafe {
                if v == V61 {
                    crate::ffi::kd61_should_we_balance(&inp)
                } else {
                    crate::ffi::kd612_should_we_balance(&inp)
                }
            } != 0;
            compare("should_we_balance", &k, &s.lb.should_we_balance(&e, &bal))
        },
    );
}

const TYPES: [GroupType; 7] = [
    GroupType::HasSpare,
    GroupType::FullyBusy,
    GroupType::MisfitTask,
    GroupType::SmtBalance,
    GroupType::AsymPacking,
    GroupType::Imbalanced,
    GroupType::Overloaded,
];

/// Group statistics update_sd_pick_busiest() reads; few distinct values so that ties
/// (equal avg_load, idle_cpus, nr_running, misfit load) are common.
fn pick_sgs() -> impl Strategy<Value = KdSgsFull> {
    (
        prop_oneof![Just(0u32), 1u32..4, 0u32..64],
        0u32..4,
        prop_oneof![0u64..4, 0u64..4096],
        prop_oneof![0u64..3, 0u64..2048],
        0u32..7,
        0u32..4,
    )
        .prop_map(|(h_nr, idle, avg, misfit, ty, extra)| KdSgsFull {
            avg_load: avg,
            group_misfit_task_load: misfit,
            sum_nr_running: h_nr + extra,
            sum_h_nr_running: h_nr,
            idle_cpus: idle,
            group_type: ty,
            ..KdSgsFull::default()
        })
}

fn rust_sgs(k: &KdSgsFull) -> SgLbStats {
    SgLbStats {
        avg_load: k.avg_load,
        group_load: 0,
        group_capacity: 0,
        group_util: 0,
        group_runnable: 0,
        sum_nr_running: k.sum_nr_running,
        sum_h_nr_running: k.sum_h_nr_running,
        idle_cpus: k.idle_cpus,
        group_weight: 0,
        group_type: TYPES[k.group_type as usize],
        group_asym_packing: false,
        group_smt_balance: false,
        group_misfit_task_load: k.group_misfit_task_load,
        nr_numa_running: 0,
        nr_preferred_running: 0,
    }
}

/// (machine, domain, candidate group, busiest group (None: the first candidate), the two
/// statistics, local group type, per-CPU state).
type PickCase = (
    usize,
    usize,
    usize,
    Option<usize>,
    KdSgsFull,
    KdSgsFull,
    u32,
    (KdMask, KdMask, KdMask, u8),
    Vec<u16>,
);

fn pick_case() -> impl Strategy<Value = PickCase> {
    (
        // adl-i9 (asymmetric capacity with SMT: the misfit rules) more often.
        prop_oneof![1 => Just(1usize), 2 => 0..MACHINES.len()],
        any::<usize>(),
        any::<usize>(),
        prop_oneof![1 => Just(None), 3 => any::<usize>().prop_map(Some)],
        pick_sgs(),
        pick_sgs(),
        prop_oneof![3 => Just(0u32), 1 => 0u32..7],
        bits(),
        prop::collection::vec(
            prop_oneof![Just(1024u16), Just(512), Just(480), 1u16..=1024],
            16,
        ),
    )
}

fn kd_sg(s: &Setup, g: schedlab::domains::GroupId) -> KdSg {
    let grp = s.d.group(g);
    let sgc = &s.lb.sgc[grp.sgc];
    KdSg {
        min_capacity: sgc.min_capacity,
        max_capacity: sgc.max_capacity,
        asym_prefer_cpu: grp.asym_prefer_cpu.unwrap_or(0) as i32,
        flags: sd_flags(grp.flags) as i32,
    }
}

/// group_smt_balance only for SMT groups, as smt_balance() classifies.
fn valid(g: &schedlab::domains::SchedGroup, k: &mut KdSgsFull) {
    if k.group_type == 3 && !g.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY) {
        k.group_type = 1;
    }
}

#[test]
fn update_sd_pick_busiest_matches() {
    update_sd_pick_busiest_on(V, Features::defaults());
    update_sd_pick_busiest_on(V61, Features::at_version(KernelVersion::new(6, 1)));
}

/// 6.1 has no group_smt_balance type (its `enum group_type` numbers the rest one lower
/// from group_asym_packing on) and no SMT-vs-non-SMT rules: the mirror runs with 6.1's
/// features (GROUP_SMT_BALANCE, SMT_VS_NONSMT_SPARE off) and no group gets that type.
fn update_sd_pick_busiest_on(v: &str, features: Features) {
    if !available("balance", v) {
        return;
    }
    let setups = setups_at(features);
    let core_busy = AtomicU64::new(0);
    assert_no_mismatch(
        "balance::update_sd_pick_busiest",
        v,
        cases(5000),
        pick_case(),
        |c| pick_one(v, &setups, c, &core_busy),
    );
    println!(
        "kernel_diff balance::update_sd_pick_busiest (linux {}): env->dst_core_idle false changes the kernel's answer in {} cases (not in the mirror)",
        crate::release(v),
        core_busy.load(Ordering::Relaxed)
    );
}

/// A group type index of [`TYPES`] as kernel `v` numbers it (6.1: no group_smt_balance).
fn group_type_for(v: &str, ty: u32) -> u32 {
    if v == V61 && ty > 3 { ty - 1 } else { ty }
}

/// One case. The ties 6.1 breaks otherwise are the mirror's version switches: 6.1's
/// features have FULLY_BUSY_TIE_LATER (v6.5) and PICK_BUSIEST_TIE_FIRST (v6.9) off.
fn pick_one(v: &str, setups: &[Setup], c: &PickCase, core_busy: &AtomicU64) -> Result<(), String> {
    let (mi, sd, gi, bi, sgs, bst, local_ty, idle, caps) = c;
    let kernel = |inp: &KdPickIn| {
        let mut k = *inp;
        k.sgs.group_type = group_type_for(v, k.sgs.group_type);
        k.busiest_stat.group_type = group_type_for(v, k.busiest_stat.group_type);
        k.local_group_type = group_type_for(v, k.local_group_type);
        // SAFETY: reads `k` and the per-CPU arrays set by env_on().
        unsafe {
            if v == V61 {
                crate::ffi::kd61_update_sd_pick_busiest(&k) != 0
            } else {
                crate::ffi::kd612_update_sd_pick_busiest(&k) != 0
            }
        }
    };
    let s = &setups[*mi];
    let sd = DomainId(sd % s.d.domains.len());
    let dom = s.d.domain(sd);
    if dom.groups.len() < 2 {
        return Ok(());
    }
    let n = dom.groups.len() - 1;
    let g = dom.groups[1 + gi % n];
    let b = bi.map(|i| dom.groups[1 + i % n]);
    let (mut sgs, mut bst) = (*sgs, *bst);
    let mut local_ty = *local_ty;
    if v == V61 {
        // No group_smt_balance before v6.6.
        for k in [&mut sgs, &mut bst] {
            if k.group_type == 3 {
                k.group_type = 1;
            }
        }
        if local_ty == 3 {
            local_ty = 1;
        }
    }
    valid(s.d.group(g), &mut sgs);
    match b {
        Some(b) => valid(s.d.group(b), &mut bst),
        None => {
            bst = KdSgsFull {
                idle_cpus: u32::MAX,
                ..KdSgsFull::default()
            }
        }
    }
    let e = env_on(v, s, idle, caps, 0, false);
    let mut inp = KdPickIn {
        sgs,
        busiest_stat: bst,
        sg: kd_sg(s, g),
        busiest: b.map(|b| kd_sg(s, b)).unwrap_or_default(),
        has_busiest: u32::from(b.is_some()),
        local_group_type: local_ty,
        sd_flags: sd_flags(dom.flags),
        dst_cpu: dom.cpu as u32,
        dst_core_idle: 1,
    };
    let k = kernel(&inp);
    // 6.12.y's env->dst_core_idle (!sched_smt_active() || is_core_idle(dst_cpu)): count
    // where it changes the answer; the mirror is compared with it true.
    let dst_core_idle =
        s.m.smt_mask(dom.cpu)
            .iter()
            .all(|c| c == dom.cpu || e.idle[c]);
    if !dst_core_idle {
        inp.dst_core_idle = 0;
        if kernel(&inp) != k {
            core_busy.fetch_add(1, Ordering::Relaxed);
        }
    }
    let bal = BalanceEnv::new(
        &s.lb,
        sd,
        dom.cpu,
        IdleType::Idle,
        MigrationReason::LoadBalance,
    );
    let mut sds = SdLbStats::new();
    sds.busiest = b;
    sds.busiest_stat = rust_sgs(&bst);
    sds.local = Some(dom.groups[0]);
    sds.local_stat.group_type = TYPES[local_ty as usize];
    let r =
        s.lb.update_sd_pick_busiest(&e, &bal, &sds, g, &rust_sgs(&sgs));
    compare("update_sd_pick_busiest", &k, &r)
}
