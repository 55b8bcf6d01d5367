//! The harness catches a one-line change in a Rust mirror: the same comparison the
//! properties use ([`crate::diff`] + [`crate::compare`]) is run against a mutant of the
//! mirror and must report a (shrunk) mismatch, while the unchanged mirror reports none.

use super::pelt::{delta_ns, sched_avg, step, to_kd};
use crate::{available, compare, diff};
use proptest::prelude::*;
use schedlab::sched::fair::weights::{LoadWeight, calc_delta};
use schedlab::sched::pelt::{LOAD_AVG_MAX, SchedAvg};

const V: &str = "6.12";

/// `___update_load_sum` + `___update_load_avg`, with `mutant` = the pre-v5.8 divider
/// (`LOAD_AVG_MAX` instead of `get_pelt_divider()`, one line of `update_load_avg`).
fn rust_update(
    sa: &SchedAvg,
    now: u64,
    load: u64,
    nr: u64,
    running: bool,
    mutant: bool,
) -> (bool, SchedAvg) {
    let mut r = *sa;
    let decayed = r.update_load_sum(now, load, nr, running);
    if decayed {
        r.update_load_avg(1);
        if mutant {
            let divider = LOAD_AVG_MAX; // was: r.pelt_divider()
            r.load_avg = r.load_sum / divider;
            r.runnable_avg = r.runnable_sum / divider;
            r.util_avg = r.util_sum / divider;
        }
    }
    (decayed, r)
}

fn pelt_outcome(mutant: bool) -> crate::Outcome {
    let s = (
        sched_avg(88761, 8),
        delta_ns(),
        0u64..=88761,
        0u64..=8,
        any::<bool>(),
    );
    diff("inject::pelt", 2000, s, |(sa, d, load, nr, running)| {
        let now = step(sa.last_update_time, *d);
        let mut k = to_kd(sa);
        // SAFETY: `k` is a valid, exclusively borrowed struct for the call.
        let kr =
            unsafe { crate::ffi::kd612_update_load(now, &mut k, *load, *nr, *running as i32, 1) };
        let (rr, r) = rust_update(sa, now, *load, *nr, *running, mutant);
        compare("returned", &(kr != 0), &rr)?;
        compare("struct sched_avg", &k, &to_kd(&r))
    })
}

#[test]
fn injected_pelt_divider_change_is_caught() {
    if !available("pelt", V) {
        return;
    }
    assert!(
        pelt_outcome(false).mismatch.is_none(),
        "the unchanged mirror must agree"
    );
    let m = pelt_outcome(true)
        .mismatch
        .expect("the mutant must be caught");
    println!("caught as expected:\n{m}");
    assert!(
        m.contains("struct sched_avg") && m.contains("minimal input"),
        "{m}"
    );
}

/// `__update_inv_weight` with `mutant` = `WMULT_CONST / w + 1`.
fn calc_outcome(mutant: bool) -> crate::Outcome {
    let s = (0u64..1 << 30, 2u64..1 << 20);
    diff("inject::calc_delta", 2000, s, |&(delta, w)| {
        let mut inv = 0u32;
        // SAFETY: `inv` is a valid u32 for the call.
        let k = unsafe { crate::ffi::kd612_calc_delta(delta, 1024, w, &mut inv) };
        let mut lw = LoadWeight::new(w);
        if mutant {
            lw.inv_weight = (u64::from(u32::MAX) / w + 1) as u32;
        }
        compare("__calc_delta", &k, &calc_delta(delta, 1024, &lw))
    })
}

#[test]
fn injected_inverse_weight_change_is_caught() {
    if !available("weights", V) {
        return;
    }
    assert!(
        calc_outcome(false).mismatch.is_none(),
        "the unchanged mirror must agree"
    );
    let m = calc_outcome(true)
        .mismatch
        .expect("the mutant must be caught");
    println!("caught as expected:\n{m}");
    assert!(m.contains("__calc_delta"), "{m}");
}
