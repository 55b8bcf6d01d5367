//! PELT (kernel/sched/pelt.c of linux 6.12) against src/sched/pelt.rs.

use crate::ffi::KdSchedAvg;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::pelt::{
    LOAD_AVG_MAX, PELT_MIN_DIVIDER, SchedAvg, UTIL_AVG_UNCHANGED, accumulate_pelt_segments,
    decay_load, update_load_avg_se, util_est_update,
};

const V: &str = "6.12";

pub(crate) fn to_kd(s: &SchedAvg) -> KdSchedAvg {
    KdSchedAvg {
        last_update_time: s.last_update_time,
        load_sum: s.load_sum,
        runnable_sum: s.runnable_sum,
        util_sum: s.util_sum,
        period_contrib: s.period_contrib,
        load_avg: s.load_avg,
        runnable_avg: s.runnable_avg,
        util_avg: s.util_avg,
        util_est: u64::from(s.util_est),
    }
}

/// A time step: mostly sub-period and few-period deltas (where the segment arithmetic
/// is), some long sleeps (decay to 0), a few backwards steps (the resync path).
pub(crate) fn delta_ns() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0i64..4096,
        6 => 0i64..(64 << 20),
        2 => 0i64..(1 << 40),
        1 => -(1i64 << 20)..0,
    ]
}

/// A valid entity or cfs_rq state: period_contrib < 1024 and sums within their bounds
/// for that position in the period (`*_sum <= divider << shift`), scaled by `nr` entities
/// for a cfs_rq (runnable) and by its weight (load).
pub(crate) fn sched_avg(max_weight: u64, max_nr: u64) -> impl Strategy<Value = SchedAvg> {
    (0u64..1 << 50, 0u64..1024, 1..=max_nr)
        .prop_flat_map(move |(last, pc, nr)| {
            let div = PELT_MIN_DIVIDER + pc;
            (
                Just(last),
                Just(pc),
                0..=div * max_weight,
                0..=(div * nr) << 10,
                0..=div << 10,
                0..=max_weight,
                any::<u32>(),
            )
        })
        .prop_map(
            |(last, pc, load_sum, runnable_sum, util_sum, weight, util_est)| {
                let div = PELT_MIN_DIVIDER + pc;
                SchedAvg {
                    last_update_time: last,
                    load_sum,
                    runnable_sum,
                    util_sum,
                    period_contrib: pc,
                    load_avg: weight * load_sum.min(div) / div,
                    runnable_avg: runnable_sum / div,
                    util_avg: util_sum / div,
                    util_est,
                }
            },
        )
}

pub(crate) fn step(now: u64, d: i64) -> u64 {
    now.saturating_add_signed(d)
}

#[test]
fn decay_load_matches() {
    if !available("pelt", V) {
        return;
    }
    let s = (
        prop_oneof![any::<u64>(), 0u64..=LOAD_AVG_MAX << 10],
        prop_oneof![0u64..=2100, any::<u64>()],
    );
    assert_no_mismatch("pelt::decay_load", V, cases(5000), s, |&(val, n)| {
        // SAFETY: a pure function of its arguments.
        let k = unsafe { crate::ffi::kd612_decay_load(val, n) };
        compare("decay_load", &k, &decay_load(val, n))
    });
}

#[test]
fn accumulate_pelt_segments_matches() {
    if !available("pelt", V) {
        return;
    }
    // accumulate_sum() calls it with periods >= 1, d1 = 1024 - period_contrib in 1..=1024
    // and d3 = the new period_contrib < 1024.
    let s = (
        prop_oneof![1u64..=2100, 1u64..u64::MAX],
        1u32..=1024,
        0u32..1024,
    );
    assert_no_mismatch(
        "pelt::__accumulate_pelt_segments",
        V,
        cases(5000),
        s,
        |&(p, d1, d3)| {
            // SAFETY: a pure function of its arguments.
            let k = unsafe { crate::ffi::kd612_accumulate_pelt_segments(p, d1, d3) };
            compare(
                "__accumulate_pelt_segments",
                &u64::from(k),
                &accumulate_pelt_segments(p, u64::from(d1), u64::from(d3)),
            )
        },
    );
}

/// Both sides of `___update_load_sum` + `___update_load_avg` (a cfs_rq: `load` = its
/// weight, `runnable` = h_nr_runnable, averaged with load 1; an entity: load 0/1, averaged
/// with its weight): the return value and every field.
fn update_load_both(
    sa: &SchedAvg,
    now: u64,
    load: u64,
    runnable: u64,
    running: bool,
    avg_load: u64,
) -> Result<SchedAvg, String> {
    let mut k = to_kd(sa);
    // SAFETY: `k` is a valid, exclusively borrowed struct for the call.
    let kr = unsafe {
        crate::ffi::kd612_update_load(now, &mut k, load, runnable, running as i32, avg_load)
    };
    let mut r = *sa;
    let rr = r.update_load_sum(now, load, runnable, running);
    if rr {
        r.update_load_avg(avg_load);
    }
    compare("returned (decayed)", &(kr != 0), &rr)?;
    compare("struct sched_avg", &k, &to_kd(&r))?;
    Ok(r)
}

#[test]
fn update_load_sum_avg_cfs_rq_matches() {
    if !available("pelt", V) {
        return;
    }
    let s = (
        sched_avg(88761 * 8, 16),
        delta_ns(),
        0u64..=88761 * 8,
        0u64..=16,
        any::<bool>(),
    );
    assert_no_mismatch(
        "pelt::___update_load_sum+___update_load_avg (cfs_rq)",
        V,
        cases(5000),
        s,
        |(sa, d, load, nr, running)| {
            update_load_both(sa, step(sa.last_update_time, *d), *load, *nr, *running, 1).map(drop)
        },
    );
}

/// A task entity through a sequence of steps, as `__update_load_avg_se` drives it
/// (on_rq, runnable = on_rq and not delayed, running = curr), with util_est's
/// UTIL_AVG_UNCHANGED flag cleared by `cfs_se_util_change` when UTIL_EST is on.
#[test]
fn update_load_avg_se_sequences_match() {
    if !available("pelt", V) {
        return;
    }
    let steps = proptest::collection::vec((delta_ns(), 0u8..4), 1..40);
    let weight = prop_oneof![Just(1024u64), 15u64..=88761];
    let s = (sched_avg(1, 1), weight, steps, any::<bool>(), any::<bool>());
    assert_no_mismatch(
        "pelt::__update_load_avg_se (sequences, util_est)",
        V,
        cases(3000),
        s,
        |(sa0, w, steps, util_est, flag)| {
            let (mut r, mut k) = (*sa0, to_kd(sa0));
            // Start from an entity state: load_avg within its weight, the flag set or not.
            let div = r.pelt_divider();
            r.load_avg = w * r.load_sum.min(div) / div;
            r.util_est =
                (r.util_est & !UTIL_AVG_UNCHANGED) | if *flag { UTIL_AVG_UNCHANGED } else { 0 };
            k = KdSchedAvg {
                load_avg: r.load_avg,
                util_est: u64::from(r.util_est),
                ..k
            };
            let mut now = r.last_update_time;
            for (i, (d, mode)) in steps.iter().enumerate() {
                now = step(now, *d);
                // mode: 0 sleeping, 1 queued, 2 running, 3 delayed (on_rq, not runnable)
                let (on_rq, runnable, running) = match mode {
                    0 => (false, false, false),
                    1 => (true, true, false),
                    2 => (true, true, true),
                    _ => (true, false, false),
                };
                // SAFETY: `k` is a valid, exclusively borrowed struct for the call.
                let kr = unsafe {
                    crate::ffi::kd612_update_load_se(
                        now,
                        &mut k,
                        *w,
                        on_rq as i32,
                        runnable as i32,
                        running as i32,
                        *util_est as i32,
                    )
                };
                let rr = update_load_avg_se(now, &mut r, *w, on_rq, runnable, running, *util_est);
                compare(&format!("step {i}: returned"), &(kr != 0), &rr)?;
                compare(&format!("step {i}: struct sched_avg"), &k, &to_kd(&r))?;
            }
            Ok(())
        },
    );
}

/// `util_est_update()` at a task's dequeue (UTIL_EST on): the ewma follows util_avg up at
/// once, down by 1/4 of the difference beyond the 1 % margin, unless util_avg was not
/// recomputed (UTIL_AVG_UNCHANGED), exceeds the CPU's capacity, or the task waited.
#[test]
fn util_est_update_matches() {
    if !available("pelt", V) {
        return;
    }
    let s = (
        0u64..=1024,
        0u64..=1024,
        0u32..=1100,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(1024u64), 100u64..=1024],
    );
    assert_no_mismatch(
        "pelt::util_est_update",
        V,
        cases(5000),
        s,
        |&(util, runnable, ewma, flag, sleep, cap)| {
            let util_est = ewma | if flag { UTIL_AVG_UNCHANGED } else { 0 };
            // SAFETY: a pure function of its arguments.
            let k = unsafe {
                crate::ffi::kd612_util_est_update(util, runnable, util_est, sleep as i32, cap)
            };
            let mut r = SchedAvg {
                util_avg: util,
                runnable_avg: runnable,
                util_est,
                ..SchedAvg::default()
            };
            util_est_update(&mut r, sleep, cap);
            compare("util_est", &k, &r.util_est)
        },
    );
}
