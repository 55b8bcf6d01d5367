//! NUMA balancing (kernel/sched/fair.c of linux 6.12.y) against src/sched/numa/migrate.rs:
//! `numa_classify` and the v5.7+ `load_too_imbalanced`.

use crate::ffi::KdNs;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::numa::NumaForm;
use schedlab::sched::numa::migrate::{
    NodeType, NumaStats, TaskNumaEnv, load_too_imbalanced, numa_classify,
};
use schedlab::task::TaskId;

const V: &str = "6.12";

/// A node: 1–256 CPUs of capacity 1–1024, load, util and runnable around the capacity.
fn node() -> impl Strategy<Value = KdNs> {
    (1u32..=256, 1u64..=1024).prop_flat_map(|(w, cap)| {
        let c = u64::from(w) * cap;
        (0..=c * 3, 0..=c * 2, 0..=c * 2, 0..=w * 3).prop_map(move |(load, util, runnable, nr)| {
            KdNs {
                load,
                runnable,
                util,
                compute_capacity: c,
                nr_running: nr,
                weight: w,
            }
        })
    })
}

fn rust(ns: &KdNs) -> NumaStats {
    NumaStats {
        load: ns.load as i64,
        runnable: ns.runnable as i64,
        util: ns.util as i64,
        compute_capacity: ns.compute_capacity as i64,
        nr_running: i64::from(ns.nr_running),
        weight: i64::from(ns.weight),
        task_capacity: 0,
        has_free_capacity: false,
        node_type: NodeType::HasSpare,
        idle_cpu: None,
    }
}

#[test]
fn numa_classify_matches() {
    if !available("numa", V) {
        return;
    }
    let s = (node(), prop_oneof![Just(117u32), Just(125), 100u32..=200]);
    assert_no_mismatch("numa::numa_classify", V, cases(5000), s, |(ns, pct)| {
        // SAFETY: reads one struct.
        let k = unsafe { crate::ffi::kd612_numa_classify(*pct, ns) };
        let k = [
            NodeType::HasSpare,
            NodeType::FullyBusy,
            NodeType::Overloaded,
        ][k as usize];
        compare(
            "numa_classify",
            &k,
            &numa_classify(i64::from(*pct), &rust(ns)),
        )
    });
}

#[test]
fn load_too_imbalanced_matches() {
    if !available("numa", V) {
        return;
    }
    // The loads after a move (task load l from src to dst) or a swap.
    let s = (node(), node(), 0u64..=88761 * 4, 0u64..=88761 * 4);
    assert_no_mismatch(
        "numa::load_too_imbalanced (v5.7+)",
        V,
        cases(5000),
        s,
        |(src, dst, l, l2)| {
            let src_load = src.load as i64 - *l as i64 + *l2 as i64;
            let dst_load = dst.load as i64 + *l as i64 - *l2 as i64;
            // SAFETY: reads two structs.
            let k = unsafe { crate::ffi::kd612_load_too_imbalanced(src_load, dst_load, src, dst) };
            let env = TaskNumaEnv {
                p: TaskId(0),
                src_cpu: 0,
                src_nid: 0,
                dst_cpu: 1,
                dst_nid: 1,
                imb_numa_nr: 0,
                src_stats: rust(src),
                dst_stats: rust(dst),
                imbalance_pct: 117,
                dist: 20,
                best_task: None,
                best_imp: 0,
                best_cpu: None,
                claimed: None,
            };
            compare(
                "load_too_imbalanced",
                &(k != 0),
                &load_too_imbalanced(src_load, dst_load, &env, NumaForm::V5_7),
            )
        },
    );
}
