//! Load-balance group classification (kernel/sched/fair.c of linux 6.12.y) against
//! src/sched/balance/stats.rs (the balance path) and src/sched/wakeup/idlest.rs (the
//! wakeup path's copy for `update_sg_wakeup_stats()`).

use crate::ffi::KdSgs;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::balance::stats::{
    SgLbStats, fbq_classify_group, group_classify, group_has_capacity, group_is_overloaded,
};
use schedlab::sched::balance::{FbqType, GroupType};
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
