//! Load-balance group classification (kernel/sched/fair.c of linux 6.12.y) against
//! src/sched/balance/stats.rs (the balance path) and src/sched/wakeup/idlest.rs (the
//! wakeup path's copy for `update_sg_wakeup_stats()`).

use crate::ffi::KdSgs;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::balance::FbqType;
use schedlab::sched::balance::stats::{
    SgLbStats, fbq_classify_group, group_classify, group_has_capacity, group_is_overloaded,
};
use schedlab::sched::types::GroupType;
use schedlab::sched::wakeup::{SgWakeupStats, wakeup_group_classify};

const V: &str = "6.12";

/// A group's statistics: 1–64 CPUs of capacity 1–1024 each, util and runnable around
/// the capacity (where the imbalance_pct thresholds are), task counts around the weight.
fn sgs() -> impl Strategy<Value = (KdSgs, u32)> {
    (
        1u32..=64,
        1u64..=1024,
        prop_oneof![Just(110u32), Just(117), Just(125), 100u32..=200],
    )
        .prop_flat_map(|(w, cap, pct)| {
            let gcap = u64::from(w) * cap;
            (
                Just(w),
                Just(gcap),
                0..=gcap * 2,
                0..=gcap * 2,
                0..=w * 3,
                0..=w * 3,
                prop_oneof![3 => Just(0u64), 1 => 1u64..=1024],
                any::<[bool; 3]>(),
                0..=w * 3,
                0..=w * 3,
                Just(pct),
            )
        })
        .prop_map(
            |(w, gcap, util, runnable, nr, h_nr, misfit, flags, numa, pref, pct)| {
                (
                    KdSgs {
                        group_capacity: gcap,
                        group_util: util,
                        group_runnable: runnable,
                        group_misfit_task_load: misfit,
                        sum_nr_running: nr,
                        sum_h_nr_running: h_nr.min(nr),
                        group_weight: w,
                        group_asym_packing: u32::from(flags[0]),
                        group_smt_balance: u32::from(flags[1]),
                        nr_numa_running: numa,
                        nr_preferred_running: pref.min(numa),
                        sg_imbalanced: u32::from(flags[2]),
                    },
                    pct,
                )
            },
        )
}

fn kernel_group_type(v: u32) -> GroupType {
    [
        GroupType::HasSpare,
        GroupType::FullyBusy,
        GroupType::MisfitTask,
        GroupType::SmtBalance,
        GroupType::AsymPacking,
        GroupType::Imbalanced,
        GroupType::Overloaded,
    ][v as usize]
}

#[test]
fn group_classify_matches() {
    if !available("balance", V) {
        return;
    }
    assert_no_mismatch(
        "balance::group_classify+group_is_overloaded+group_has_capacity+fbq_classify_group",
        V,
        cases(5000),
        sgs(),
        |(k, pct)| {
            // SAFETY: reads one struct.
            let out = unsafe { crate::ffi::kd612_group_classify(k, *pct) };
            let s = SgLbStats {
                group_capacity: k.group_capacity,
                group_util: k.group_util,
                group_runnable: k.group_runnable,
                group_misfit_task_load: k.group_misfit_task_load,
                sum_nr_running: k.sum_nr_running,
                sum_h_nr_running: k.sum_h_nr_running,
                group_weight: k.group_weight,
                group_asym_packing: k.group_asym_packing != 0,
                group_smt_balance: k.group_smt_balance != 0,
                nr_numa_running: k.nr_numa_running,
                nr_preferred_running: k.nr_preferred_running,
                avg_load: 0,
                group_load: 0,
                idle_cpus: 0,
                group_type: GroupType::HasSpare,
            };
            let imb = k.sg_imbalanced != 0;
            compare(
                "group_classify",
                &kernel_group_type(out & 0xff),
                &group_classify(*pct, imb, &s),
            )?;
            compare(
                "group_is_overloaded",
                &(out >> 8 & 1 == 1),
                &group_is_overloaded(*pct, &s),
            )?;
            compare(
                "group_has_capacity",
                &(out >> 9 & 1 == 1),
                &group_has_capacity(*pct, &s),
            )?;
            let fbq = [FbqType::Regular, FbqType::Remote, FbqType::All][(out >> 10) as usize];
            compare("fbq_classify_group", &fbq, &fbq_classify_group(&s))?;
            // The wakeup path's copy (update_sg_wakeup_stats() calls the same
            // group_classify(); it never sets asym_packing or smt_balance).
            if k.group_asym_packing == 0 && k.group_smt_balance == 0 {
                let w = SgWakeupStats {
                    avg_load: 0,
                    group_load: 0,
                    group_util: k.group_util,
                    group_runnable: k.group_runnable,
                    group_capacity: k.group_capacity,
                    max_capacity: 0,
                    sum_nr_running: k.sum_nr_running,
                    idle_cpus: 0,
                    group_weight: k.group_weight,
                    group_misfit_task_load: k.group_misfit_task_load,
                    group_type: GroupType::HasSpare,
                };
                compare(
                    "group_classify (wakeup path)",
                    &kernel_group_type(out & 0xff),
                    &wakeup_group_classify(u64::from(*pct), imb, &w),
                )?;
            }
            Ok(())
        },
    );
}

mod imbalance {
    use super::V;
    use crate::ffi::{KdFbgIn, KdImbIn, KdImbOut, KdSgsFull};
    use crate::{assert_no_mismatch, available, cases, compare};
    use proptest::prelude::*;
    use schedlab::domains::{DomainId, SchedDomains, SdFlags, build_sched_domains};
    use schedlab::kconfig::features::Features;
    use schedlab::sched::balance::stats::{SdLbStats, SgLbStats};
    use schedlab::sched::balance::{
        BalanceCosts, BalanceEnv, LbTunables, LoadBalancer, MigrationType,
    };
    use schedlab::sched::types::{GroupType, IdleType, MigrationReason};
    use schedlab::topology::presets;
    use std::sync::Arc;

    /// group_type values below group_overloaded.
    const TYPES_NOT_OVERLOADED: [u32; 6] = [0, 1, 2, 3, 4, 5];

    const TYPES: [GroupType; 7] = [
        GroupType::HasSpare,
        GroupType::FullyBusy,
        GroupType::MisfitTask,
        GroupType::SmtBalance,
        GroupType::AsymPacking,
        GroupType::Imbalanced,
        GroupType::Overloaded,
    ];

    fn group() -> impl Strategy<Value = KdSgsFull> {
        (1u32..=64, 1u64..=1024).prop_flat_map(|(w, cap)| {
            let c = u64::from(w) * cap;
            (
                0..=c * 3,
                0..=c * 2,
                0..=w * 3,
                0..=w,
                0u32..7,
                prop_oneof![3 => Just(0u64), 1 => 1u64..=2048],
                0u64..=4096,
            )
                .prop_map(move |(load, util, nr, idle, ty, misfit, avg)| KdSgsFull {
                    avg_load: avg,
                    group_load: load,
                    group_capacity: c,
                    group_util: util,
                    group_misfit_task_load: misfit,
                    sum_nr_running: nr,
                    sum_h_nr_running: nr,
                    idle_cpus: idle,
                    group_weight: w,
                    group_type: ty,
                })
        })
    }

    fn rust_sgs(k: &KdSgsFull) -> SgLbStats {
        SgLbStats {
            avg_load: k.avg_load,
            group_load: k.group_load,
            group_capacity: k.group_capacity,
            group_util: k.group_util,
            group_runnable: 0,
            sum_nr_running: k.sum_nr_running,
            sum_h_nr_running: k.sum_h_nr_running,
            idle_cpus: k.idle_cpus,
            group_weight: k.group_weight,
            group_type: TYPES[k.group_type as usize],
            group_asym_packing: false,
            group_smt_balance: false,
            group_misfit_task_load: k.group_misfit_task_load,
            nr_numa_running: 0,
            nr_preferred_running: 0,
        }
    }

    fn lb() -> (LoadBalancer, Arc<SchedDomains>) {
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
        (
            LoadBalancer::new(d.clone(), Features::defaults(), t, c, 0),
            d,
        )
    }

    /// `calculate_imbalance()` on the skl-2s domains (SMT, MC, NUMA levels: flags,
    /// imb_numa_nr and group cores from the model), with random group statistics.
    #[test]
    fn calculate_imbalance_matches() {
        if !available("balance", V) {
            return;
        }
        let (lb, d) = lb();
        let s = (
            group(),
            group(),
            0..d.domains.len(),
            0u32..3,
            any::<bool>(),
            0u64..=1 << 20,
            1u64..=1 << 16,
        );
        assert_no_mismatch(
            "balance::calculate_imbalance+sibling_imbalance+adjust_numa_imbalance",
            V,
            cases(5000),
            s,
            |(b, l, sd, idle, pref, extra_load, extra_cap)| {
                let dom = d.domain(DomainId(*sd));
                if dom.groups.len() < 2 {
                    return Ok(());
                }
                let (lg, bg) = (dom.groups[0], dom.groups[1]);
                // find_busiest_group() reaches calculate_imbalance() with a busiest group that is
                // not overloaded only when the local group has more than one idle CPU more
                // (group_weight > 1): the unsigned idle_cpus difference never wraps there. (It
                // may wrap with an overloaded busiest, then only on an LLC domain, where the
                // mirror wraps as the kernel does; on a NUMA domain adjust_numa_imbalance()'s
                // int parameter would truncate the wrapped value — not reachable.)
                let mut l = *l;
                if TYPES_NOT_OVERLOADED.contains(&b.group_type) && b.group_weight > 1 && !*pref {
                    l.idle_cpus = l.idle_cpus.max(b.idle_cpus + 2);
                }
                let l = &l;
                let total_load = b.group_load + l.group_load + extra_load;
                let total_capacity = b.group_capacity + l.group_capacity + extra_cap;
                let avg_load = total_load * 1024 / total_capacity;
                let mut flags = 0;
                for (f, bit) in [
                    (SdFlags::SD_ASYM_CPUCAPACITY, 1),
                    (SdFlags::SD_SHARE_LLC, 2),
                    (SdFlags::SD_NUMA, 4),
                ] {
                    if dom.flags.contains(f) {
                        flags |= bit;
                    }
                }
                let inp = KdImbIn {
                    busiest: *b,
                    local: *l,
                    total_load,
                    total_capacity,
                    busiest_cores: d.group(bg).cores as u32,
                    local_cores: d.group(lg).cores as u32,
                    prefer_sibling: u32::from(*pref),
                    sd_flags: flags,
                    imb_numa_nr: dom.imb_numa_nr,
                    idle: *idle,
                    avg_load,
                };
                let mut kout = KdImbOut::default();
                // SAFETY: reads `inp`, writes `kout`.
                unsafe { crate::ffi::kd612_calculate_imbalance(&inp, &mut kout) };
                let it = [IdleType::NotIdle, IdleType::Idle, IdleType::NewlyIdle][*idle as usize];
                let mut bal = BalanceEnv::new(
                    &lb,
                    DomainId(*sd),
                    dom.cpu,
                    it,
                    MigrationReason::LoadBalance,
                );
                bal.migration_type = MigrationType::Load;
                let mut sds = SdLbStats::new();
                sds.busiest = Some(bg);
                sds.local = Some(lg);
                sds.total_load = total_load;
                sds.total_capacity = total_capacity;
                sds.avg_load = avg_load;
                sds.prefer_sibling = *pref;
                sds.busiest_stat = rust_sgs(b);
                sds.local_stat = rust_sgs(l);
                lb.calculate_imbalance(&mut bal, &mut sds);
                let mt = [
                    MigrationType::Load,
                    MigrationType::Util,
                    MigrationType::Task,
                    MigrationType::Misfit,
                ]
                .iter()
                .position(|m| *m == bal.migration_type)
                .unwrap() as u32;
                let rout = KdImbOut {
                    imbalance: bal.imbalance,
                    local_avg_load: sds.local_stat.avg_load,
                    sds_avg_load: sds.avg_load,
                    migration_type: mt,
                };
                compare("calculate_imbalance", &kout, &rout)
            },
        );
    }

    /// `sched_balance_find_src_group()`'s decision after `update_sd_lb_stats()` (the
    /// shim's hands over the generated statistics): the misfit/asym/imbalanced
    /// `force_balance` gotos, the local-busier and overloaded-local `out_balanced` tests
    /// (`imbalance_pct`, the domain average), prefer_sibling with `sibling_imbalance()`,
    /// the idle destination, SMT vs non-SMT groups, the idle-CPU and single-task tests;
    /// then `calculate_imbalance()`. No busiest group in 1 case of 16. No energy model.
    /// Compared: whether the busiest group is returned, `env->imbalance`,
    /// `env->migration_type`.
    #[test]
    fn find_src_group_decision_matches() {
        if !available("balance", V) {
            return;
        }
        let (lb, d) = lb();
        let s = (
            (group(), group(), 0..d.domains.len(), 0u32..3, any::<bool>()),
            (0u64..=1 << 20, 1u64..=1 << 16, any::<bool>(), 0u32..16),
        );
        assert_no_mismatch(
            "balance::sched_balance_find_src_group (decision)",
            V,
            cases(5000),
            s,
            |((b, l, sd, idle, pref), (extra_load, extra_cap, fix_idle, nob))| {
                let dom = d.domain(DomainId(*sd));
                if dom.groups.len() < 2 {
                    return Ok(());
                }
                let (lg, bg) = (dom.groups[0], dom.groups[1]);
                // As in calculate_imbalance_matches: half the cases keep the local group
                // two idle CPUs ahead of a non-overloaded busiest one (no wrapped difference
                // reaches adjust_numa_imbalance()); the others test the idle-CPU veto.
                let mut l = *l;
                if *fix_idle
                    && TYPES_NOT_OVERLOADED.contains(&b.group_type)
                    && b.group_weight > 1
                    && !*pref
                {
                    l.idle_cpus = l.idle_cpus.max(b.idle_cpus + 2);
                }
                let l = &l;
                let has_busiest = *nob != 0;
                let total_load = b.group_load + l.group_load + extra_load;
                let total_capacity = b.group_capacity + l.group_capacity + extra_cap;
                let mut flags = 0;
                for (f, bit) in [
                    (SdFlags::SD_ASYM_CPUCAPACITY, 1),
                    (SdFlags::SD_SHARE_LLC, 2),
                    (SdFlags::SD_NUMA, 4),
                ] {
                    if dom.flags.contains(f) {
                        flags |= bit;
                    }
                }
                let smt = |g| {
                    if d.group(g).flags.contains(SdFlags::SD_SHARE_CPUCAPACITY) {
                        8
                    } else {
                        0
                    }
                };
                let inp = KdFbgIn {
                    imb: KdImbIn {
                        busiest: *b,
                        local: *l,
                        total_load,
                        total_capacity,
                        busiest_cores: d.group(bg).cores as u32,
                        local_cores: d.group(lg).cores as u32,
                        prefer_sibling: u32::from(*pref),
                        sd_flags: flags,
                        imb_numa_nr: dom.imb_numa_nr,
                        idle: *idle,
                        avg_load: 0,
                    },
                    has_busiest: u32::from(has_busiest),
                    busiest_flags: smt(bg),
                    local_flags: smt(lg),
                    imbalance_pct: dom.imbalance_pct,
                };
                let mut kout = KdImbOut::default();
                // SAFETY: reads `inp`, writes `kout`.
                let kret = unsafe { crate::ffi::kd612_find_src_group(&inp, &mut kout) };
                let it = [IdleType::NotIdle, IdleType::Idle, IdleType::NewlyIdle][*idle as usize];
                let mut bal = BalanceEnv::new(
                    &lb,
                    DomainId(*sd),
                    dom.cpu,
                    it,
                    MigrationReason::LoadBalance,
                );
                bal.migration_type = MigrationType::Load;
                let mut sds = SdLbStats::new();
                sds.busiest = has_busiest.then_some(bg);
                sds.local = Some(lg);
                sds.total_load = total_load;
                sds.total_capacity = total_capacity;
                sds.prefer_sibling = *pref;
                if has_busiest {
                    sds.busiest_stat = rust_sgs(b);
                }
                sds.local_stat = rust_sgs(l);
                let res = lb.find_src_group_decide(&mut bal, sds);
                let mt = [
                    MigrationType::Load,
                    MigrationType::Util,
                    MigrationType::Task,
                    MigrationType::Misfit,
                ]
                .iter()
                .position(|m| *m == bal.migration_type)
                .unwrap() as u32;
                compare(
                    "(busiest returned, imbalance, migration_type)",
                    &(kret == 1, kout.imbalance, kout.migration_type),
                    &(res.busiest == Some(bg), bal.imbalance, mt),
                )
            },
        );
    }
}
