//! Load weights (kernel/sched/core.c tables, fair.c `__calc_delta`/`__update_inv_weight`
//! of linux 6.12) against src/sched/fair/weights.rs.

use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::fair::weights::{
    LoadWeight, SCHED_PRIO_TO_WEIGHT, SCHED_PRIO_TO_WMULT, calc_delta, calc_delta_fair,
};

const V: &str = "6.12";

#[test]
fn nice_tables_match() {
    if !available("weights", V) {
        return;
    }
    for i in 0..40 {
        // SAFETY: index within the 40-entry tables.
        let (w, m) = unsafe {
            (
                crate::ffi::kd612_prio_to_weight(i),
                crate::ffi::kd612_prio_to_wmult(i),
            )
        };
        assert_eq!(
            w as u64, SCHED_PRIO_TO_WEIGHT[i as usize] as u64,
            "sched_prio_to_weight[{i}]"
        );
        assert_eq!(
            m, SCHED_PRIO_TO_WMULT[i as usize],
            "sched_prio_to_wmult[{i}]"
        );
    }
    println!(
        "kernel_diff weights::sched_prio_to_weight/wmult (linux {V}): 40 entries, 0 mismatches"
    );
}

/// A load weight as the model builds them: a nice level's table pair, or a runqueue sum
/// whose inverse `LoadWeight::new` computes as `__update_inv_weight` would (the kernel
/// computes it lazily from inv_weight = 0: the C side is given 0 and must agree).
fn load_weight() -> impl Strategy<Value = (LoadWeight, bool)> {
    prop_oneof![
        (-20i32..=19).prop_map(|n| (LoadWeight::from_nice(n), true)),
        prop_oneof![0u64..=1 << 20, 0u64..=1 << 40, any::<u64>()]
            .prop_map(|w| (LoadWeight::new(w), false)),
    ]
}

#[test]
fn calc_delta_matches() {
    if !available("weights", V) {
        return;
    }
    let s = (
        prop_oneof![0u64..=1 << 24, 0u64..=1 << 40, any::<u64>()],
        prop_oneof![Just(1024u64), 1u64..=88761 * 64, 1u64..=u32::MAX as u64],
        load_weight(),
    );
    assert_no_mismatch(
        "fair::__calc_delta/__update_inv_weight",
        V,
        cases(5000),
        s,
        |&(delta, weight, (lw, table))| {
            // The table entries are passed with their inverse, the others with 0.
            let mut inv = if table { lw.inv_weight } else { 0 };
            // SAFETY: `inv` is a valid u32 for the call.
            let k = unsafe { crate::ffi::kd612_calc_delta(delta, weight, lw.weight, &mut inv) };
            compare("inv_weight", &inv, &lw.inv_weight)?;
            compare("__calc_delta", &k, &calc_delta(delta, weight, &lw))?;
            if weight == 1024 {
                // calc_delta_fair(): unchanged at NICE_0_LOAD, else __calc_delta(delta, NICE_0_LOAD).
                let kf = if lw.weight == 1024 { delta } else { k };
                compare("calc_delta_fair", &kf, &calc_delta_fair(delta, &lw))?;
            }
            Ok(())
        },
    );
}
