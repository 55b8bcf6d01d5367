//! cpuidle menu governor (drivers/cpuidle/governors/menu.c of linux 6.12) against
//! src/cpuidle/menu.rs: get_typical_interval, menu_select (with menu_update).

use crate::ffi::{KdIdleIn, KdMenu};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpuidle::menu::{
    INTERVALS, MenuDevice, NO_TIMER_NS, get_typical_interval, menu_select, which_bucket,
};
use schedlab::cpuidle::{IdleInputs, IdleState};

const V: &str = "6.12";

/// Eight recent idle intervals (µs) as `menu_update_intervals()` stores them (unsigned
/// int): regular patterns with small noise (where a typical interval is found), patterns
/// with outliers (the threshold loop), zeros, and anything up to UINT_MAX (above INT_MAX
/// a value is never kept).
pub(crate) fn intervals() -> impl Strategy<Value = [u32; INTERVALS]> {
    let noisy = (1u32..5_000_000, 0u32..64).prop_flat_map(|(base, noise)| {
        proptest::array::uniform8(prop_oneof![
            6 => (0..=2 * noise).prop_map(move |n| (base + n).saturating_sub(noise)),
            1 => any::<u32>(),
            1 => 0u32..100,
        ])
    });
    prop_oneof![
        4 => noisy,
        1 => proptest::array::uniform8(0u32..1000),
        1 => proptest::array::uniform8(any::<u32>()),
        1 => proptest::array::uniform8(prop_oneof![Just(0u32), Just(i32::MAX as u32), Just(u32::MAX), Just(i32::MAX as u32 + 1)]),
    ]
}

pub(crate) fn rust_typical(iv: &[u32; INTERVALS]) -> u64 {
    let mut d = MenuDevice::new();
    d.intervals = iv.map(u64::from);
    get_typical_interval(&d)
}

#[test]
fn get_typical_interval_matches() {
    if !available("menu", V) {
        return;
    }
    assert_no_mismatch(
        "menu::get_typical_interval",
        V,
        cases(5000),
        intervals(),
        |iv| {
            // SAFETY: reads eight u32.
            let k = unsafe { crate::ffi::kd612_get_typical_interval(iv.as_ptr()) };
            compare("get_typical_interval", &u64::from(k), &rust_typical(iv))
        },
    );
}

/// `KTIME_MAX`: the kernel's "no timer"; the mirror's is [`NO_TIMER_NS`].
const KTIME_MAX: u64 = i64::MAX as u64;

/// A valid state table: 2–8 states, exit latency and target residency (≥ exit latency)
/// growing with the index; state 0 a polling state or a shallow C1.
pub(crate) fn idle_states() -> impl Strategy<Value = Vec<IdleState>> {
    let first = prop_oneof![
        Just((0u64, 0u64, true)),
        (0u64..=2_000, 0u64..=20_000).prop_map(|(e, r)| (e, e + r, false)),
    ];
    let steps = proptest::collection::vec(
        (
            prop_oneof![1u64..=20_000, 1u64..=400_000],
            prop_oneof![0u64..=20_000, 0u64..=2_000_000],
        ),
        1..8,
    );
    (first, steps).prop_map(|((e0, r0, poll), steps)| {
        let mut v = vec![IdleState {
            name: "S0".into(),
            exit_latency_ns: e0,
            target_residency_ns: r0,
            polling: poll,
            mwait: false,
            core_exit_latency_ns: None,
        }];
        for (i, (de, dr)) in steps.into_iter().enumerate() {
            let last = v.last().unwrap();
            let exit = last.exit_latency_ns + de;
            let res = (last.target_residency_ns + 1).max(exit) + dr;
            v.push(IdleState {
                name: format!("S{}", i + 1),
                exit_latency_ns: exit,
                target_residency_ns: res,
                polling: false,
                mwait: false,
                core_exit_latency_ns: None,
            });
        }
        v
    })
}

pub(crate) fn timer_ns() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..200_000,
        3 => 0u64..20_000_000,
        1 => 0u64..=NO_TIMER_NS,
        1 => Just(NO_TIMER_NS),
    ]
}

/// The governor's state as earlier calls leave it.
fn menu_device() -> impl Strategy<Value = MenuDevice> {
    (
        any::<bool>(),
        any::<bool>(),
        timer_ns(),
        proptest::array::uniform6(0u64..=8 * 1024),
        intervals(),
        0usize..INTERVALS,
    )
        .prop_map(|(nu, tw, next, cf, iv, ptr)| {
            let mut d = MenuDevice::new();
            d.needs_update = nu;
            d.tick_wakeup = tw;
            d.next_timer_ns = next;
            d.bucket = which_bucket(next);
            d.correction_factor = cf;
            d.intervals = iv.map(u64::from);
            d.interval_ptr = ptr;
            d
        })
}

#[derive(Debug, Clone)]
struct Call {
    dev: MenuDevice,
    states: Vec<IdleState>,
    inp: IdleInputs,
    last_idx: prop::sample::Index,
    last_residency_ns: u64,
}

fn call() -> impl Strategy<Value = Call> {
    let tick = prop_oneof![Just(4_000_000u64), Just(1_000_000), Just(10_000_000)];
    (
        menu_device(),
        idle_states(),
        tick,
        any::<bool>(),
        timer_ns(),
        0u64..=1_000,
        any::<prop::sample::Index>(),
        prop_oneof![1 => Just(0u64), 4 => 0u64..30_000_000],
    )
        .prop_map(
            |(dev, states, tick, stopped, sleep, dt, last_idx, res)| Call {
                dev,
                states,
                inp: IdleInputs {
                    tick_nsec: tick,
                    tick_stopped: stopped,
                    sleep_length_ns: sleep,
                    delta_tick_ns: tick * dt / 1_000,
                },
                last_idx,
                last_residency_ns: res,
            },
        )
}

/// The mirror's device on the kernel's terms; `no_timer`: its "no timer" value.
fn to_kd(d: &MenuDevice, no_timer: u64) -> KdMenu {
    KdMenu {
        needs_update: u64::from(d.needs_update),
        tick_wakeup: u64::from(d.tick_wakeup),
        next_timer_ns: if d.next_timer_ns == NO_TIMER_NS {
            no_timer
        } else {
            d.next_timer_ns
        },
        bucket: d.bucket as u64,
        correction_factor: d.correction_factor,
        intervals: d.intervals,
        interval_ptr: d.interval_ptr as u64,
    }
}

/// menu_select() with the driver's every state enabled, no PM QoS latency limit
/// (`PM_QOS_RESUME_LATENCY_NO_CONSTRAINT`: S32_MAX µs) and `poll_time_limit` clear, as the
/// mirror assumes; the device state before the call, the answer (state, stop_tick) and
/// every menu_device field after it compared. "No timer" is `KTIME_MAX` in the kernel,
/// [`NO_TIMER_NS`] (2^40 ns) in the mirror: mapped both ways, sleep lengths up to 2^40.
#[test]
fn menu_select_matches() {
    if !available("menu", V) {
        return;
    }
    assert_no_mismatch("menu::menu_select", V, cases(5000), call(), |c| {
        let n = c.states.len();
        let last = c.last_idx.index(n);
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
        let kin = KdIdleIn {
            tick_nsec: c.inp.tick_nsec,
            tick_stopped: u64::from(c.inp.tick_stopped),
            sleep_length_ns: c.inp.sleep_length_ns,
            delta_tick_ns: c.inp.delta_tick_ns,
            latency_req_ns: i64::from(i32::MAX) * 1000,
            last_state_idx: last as i64,
            last_residency_ns: c.last_residency_ns,
        };
        let mut km = to_kd(&c.dev, KTIME_MAX);
        let mut kstop = 0i32;
        // SAFETY: `table` holds `n` (≤ 8) rows, the other pointers are to locals.
        let kidx = unsafe {
            crate::ffi::kd612_menu_select(&mut km, table.as_ptr(), n as i32, &kin, &mut kstop)
        };
        let mut rd = c.dev.clone();
        let sel = menu_select(&mut rd, &c.states, &c.inp, Some(last), c.last_residency_ns);
        compare(
            "(state, stop_tick)",
            &(kidx as i64, kstop != 0),
            &(sel.state as i64, sel.stop_tick),
        )?;
        // The kernel's KTIME_MAX (the tick-kept branch) is the mirror's NO_TIMER_NS.
        if km.next_timer_ns == KTIME_MAX {
            km.next_timer_ns = NO_TIMER_NS;
        }
        compare("menu_device", &km, &to_kd(&rd, NO_TIMER_NS))
    });
}
