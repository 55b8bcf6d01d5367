//! cpuidle teo governor (drivers/cpuidle/governors/teo.c of linux 6.12) against
//! src/cpuidle/teo.rs: teo_select (with teo_update, teo_state_ok,
//! teo_find_shallower_state), then teo_reflect.

use super::menu::{idle_states, timer_ns};
use crate::ffi::{KdTeo, KdTeoIn};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpuidle::teo::{MAX_STATES, TeoBin, TeoCpu, teo_reflect, teo_select};
use schedlab::cpuidle::{IdleInputs, IdleState};

const V: &str = "6.12";
/// `KTIME_MAX`: the kernel's "sleep length not looked up"; the mirror's is `u64::MAX`.
const KTIME_MAX: i64 = i64::MAX;

#[derive(Debug, Clone)]
struct Call {
    cpu: TeoCpu,
    states: Vec<IdleState>,
    inp: IdleInputs,
    last: Option<prop::sample::Index>,
    last_residency_ns: u64,
    now_ns: u64,
    idle_ns: u64,
    got_tick: bool,
}

/// The governor's state as teo_reflect() leaves it: bins in their decayed range
/// (≤ 8 PULSEs), `total` their sum (with the tick hits when the deepest state is shorter
/// than a tick), as teo_update() computes it; the measured span or the sleep length.
fn call() -> impl Strategy<Value = Call> {
    let bin = prop_oneof![1 => Just(0u64), 3 => 0u64..=8192];
    let tick = prop_oneof![Just(4_000_000u64), Just(1_000_000), Just(10_000_000)];
    (
        idle_states(),
        proptest::array::uniform10((bin.clone(), bin.clone())),
        bin,
        tick,
        (any::<bool>(), timer_ns(), 0u64..=1_000),
        (
            prop_oneof![1 => Just(None), 4 => any::<prop::sample::Index>().prop_map(Some)],
            0u64..30_000_000,
            prop_oneof![1 => Just(u64::MAX), 3 => timer_ns()],
            prop_oneof![2 => 0u64..30_000_000, 1 => timer_ns()],
        ),
        (0u64..1 << 50, timer_ns(), any::<bool>()),
    )
        .prop_map(
            |(states, bins, tick_hits, tick, (stopped, sleep, dt), rest, (now, idle, got))| {
                let (last, res, prev_sleep, span) = rest;
                let n = states.len();
                let mut cpu = TeoCpu::default();
                for (i, (ic, h)) in bins.iter().enumerate().take(n.min(MAX_STATES)) {
                    cpu.state_bins[i] = TeoBin {
                        intercepts: *ic,
                        hits: *h,
                    };
                    cpu.total += ic + h;
                }
                if states[n - 1].target_residency_ns < tick {
                    cpu.tick_hits = tick_hits;
                    cpu.total += tick_hits;
                }
                cpu.sleep_length_ns = prev_sleep;
                cpu.time_span_ns = span;
                Call {
                    cpu,
                    states,
                    inp: IdleInputs {
                        tick_nsec: tick,
                        tick_stopped: stopped,
                        sleep_length_ns: sleep,
                        delta_tick_ns: tick * dt / 1_000,
                    },
                    last,
                    last_residency_ns: res,
                    now_ns: now,
                    idle_ns: idle,
                    got_tick: got,
                }
            },
        )
}

fn ktime(v: u64) -> i64 {
    if v == u64::MAX { KTIME_MAX } else { v as i64 }
}

fn to_kd(c: &TeoCpu) -> KdTeo {
    let mut k = KdTeo {
        time_span_ns: ktime(c.time_span_ns),
        sleep_length_ns: ktime(c.sleep_length_ns),
        total: c.total,
        tick_hits: c.tick_hits,
        ..KdTeo::default()
    };
    for (kb, b) in k.bins.iter_mut().zip(&c.state_bins) {
        *kb = [b.intercepts, b.hits];
    }
    k
}

/// teo_select() with every state enabled and no PM QoS latency limit (the mirror's
/// assumptions), then teo_reflect() after an idle period in the chosen state
/// (`poll_time_limit` clear): the state, `stop_tick` and every teo_cpu field after each.
/// The kernel's `KTIME_MAX` is the mirror's `u64::MAX`.
#[test]
fn teo_select_reflect_match() {
    if !available("teo", V) {
        return;
    }
    assert_no_mismatch("teo::teo_select+teo_reflect", V, cases(5000), call(), |c| {
        let n = c.states.len();
        let last = c.last.map(|ix| ix.index(n));
        let table: Vec<[u64; 3]> = c
            .states
            .iter()
            .map(|s| {
                [
                    s.exit_latency_ns,
                    s.target_residency_ns,
                    u64::from(s.polling),
                ]
            })
            .collect();
        let mut kin = KdTeoIn {
            tick_nsec: c.inp.tick_nsec,
            tick_stopped: u64::from(c.inp.tick_stopped),
            sleep_length_ns: c.inp.sleep_length_ns,
            delta_tick_ns: c.inp.delta_tick_ns,
            latency_req_ns: i64::from(i32::MAX) * 1000,
            last_state_idx: last.map_or(-1, |l| l as i64),
            last_residency_ns: c.last_residency_ns,
            now_ns: c.now_ns,
            got_tick: u64::from(c.got_tick),
        };
        let mut kc = to_kd(&c.cpu);
        let mut kstop = 0i32;
        // SAFETY: `table` holds `n` (≤ 8) rows, the other pointers are to locals.
        let kidx = unsafe {
            crate::ffi::kd612_teo_select(&mut kc, table.as_ptr(), n as i32, &kin, &mut kstop)
        };
        let mut rc = c.cpu.clone();
        let mut rlast = last;
        let sel = teo_select(
            &mut rc,
            &c.states,
            &c.inp,
            &mut rlast,
            c.last_residency_ns,
            c.now_ns,
        );
        compare(
            "select: (state, stop_tick)",
            &(kidx as i64, kstop != 0),
            &(sel.state as i64, sel.stop_tick),
        )?;
        compare("select: teo_cpu", &kc, &to_kd(&rc))?;
        kin.now_ns = c.now_ns + c.idle_ns;
        // SAFETY: pointers to locals.
        unsafe { crate::ffi::kd612_teo_reflect(&mut kc, &kin, kidx) };
        teo_reflect(&mut rc, c.got_tick, c.inp.tick_nsec, kin.now_ns);
        compare("reflect: teo_cpu", &kc, &to_kd(&rc))
    });
}
