//! The menu governor (`drivers/cpuidle/governors/menu.c`, v6.12): the predicted idle
//! duration is the smaller of (a) the time to the next timer event scaled by a per-bucket
//! correction factor (a decaying average of measured/expected ratios) and (b) the typical
//! interval of the last 8 idle periods when they are regular (`get_typical_interval()`);
//! the state is the deepest whose target residency fits the prediction; the tick is kept
//! when the chosen state polls or the prediction is shorter than a tick.

use super::{IdleInputs, IdleState, RESIDENCY_THRESHOLD_NS, Selection};

pub const BUCKETS: usize = 6;
pub const INTERVAL_SHIFT: u32 = 3;
pub const INTERVALS: usize = 1 << INTERVAL_SHIFT;
pub const RESOLUTION: u64 = 1024;
pub const DECAY: u64 = 8;
/// `MAX_INTERESTING`: 50 ms.
pub const MAX_INTERESTING: u64 = 50_000_000;
const UINT_MAX: u64 = u32::MAX as u64;
/// `KTIME_MAX` stand-in for "no timer": large, but small enough that `next_timer_ns ×
/// correction_factor` cannot overflow u64.
pub const NO_TIMER_NS: u64 = 1 << 40;

/// `struct menu_device`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuDevice {
    pub needs_update: bool,
    pub tick_wakeup: bool,
    pub next_timer_ns: u64,
    pub bucket: usize,
    pub correction_factor: [u64; BUCKETS],
    /// Recent idle durations in µs.
    pub intervals: [u64; INTERVALS],
    pub interval_ptr: usize,
}

impl MenuDevice {
    /// `menu_enable_device()`.
    pub fn new() -> MenuDevice {
        MenuDevice {
            needs_update: false,
            tick_wakeup: false,
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
        }
    }
}

impl Default for MenuDevice {
    fn default() -> Self {
        Self::new()
    }
}

/// `which_bucket()`: decades from 10 µs.
pub fn which_bucket(duration_ns: u64) -> usize {
    match duration_ns {
        d if d < 10_000 => 0,
        d if d < 100_000 => 1,
        d if d < 1_000_000 => 2,
        d if d < 10_000_000 => 3,
        d if d < 100_000_000 => 4,
        _ => 5,
    }
}

/// `menu_update_intervals()`.
pub fn menu_update_intervals(data: &mut MenuDevice, interval_us: u64) {
    data.intervals[data.interval_ptr] = interval_us;
    data.interval_ptr = (data.interval_ptr + 1) % INTERVALS;
}

/// `get_typical_interval()`: the average of the recent intervals when their standard
/// deviation is small (avg² > 36·variance, with at least 3/4 of them kept, or variance ≤
/// 400 µs²), discarding the largest outlier and retrying otherwise; `UINT_MAX` (µs) when
/// there is no regular pattern.
///
/// One pass over the intervals per try instead of the kernel's two: the variance comes
/// from the sum of squares, Σ(v − avg)² = Σv² − 2·avg·Σv + n·avg², an integer identity,
/// so it equals the kernel's sum of squared differences (modulo 2⁶⁴, as the kernel's u64
/// sum wraps). Checked against the two-pass form by a property test. The menu governor
/// runs at every idle entry: this was 3-4 % of a stress-ng run's instructions (issue 14).
pub fn get_typical_interval(data: &MenuDevice) -> u64 {
    let mut thresh = i32::MAX as u64;
    loop {
        let mut max = 0u64;
        let mut sum = 0u64;
        let mut sum_sq = 0u128;
        let mut divisor = 0u64;
        for &v in &data.intervals {
            if v <= thresh {
                sum += v;
                sum_sq += u128::from(v) * u128::from(v);
                divisor += 1;
                max = max.max(v);
            }
        }
        if max == 0 {
            return UINT_MAX;
        }
        let avg = if divisor == INTERVALS as u64 {
            sum >> INTERVAL_SHIFT
        } else {
            sum / divisor
        };
        let (avg_w, sum_w) = (u128::from(avg), u128::from(sum));
        // Σv² + n·avg² ≥ 2·avg·Σv (the difference is a sum of squares).
        let mut variance =
            (sum_sq + u128::from(divisor) * avg_w * avg_w - 2 * avg_w * sum_w) as u64;
        if divisor == INTERVALS as u64 {
            variance >>= INTERVAL_SHIFT;
        } else {
            variance /= divisor;
        }
        if variance <= u64::MAX / 36
            && ((avg * avg > variance * 36 && divisor * 4 >= INTERVALS as u64 * 3)
                || variance <= 400)
        {
            return avg;
        }
        if divisor * 4 <= INTERVALS as u64 * 3 {
            return UINT_MAX;
        }
        thresh = max - 1;
    }
}

/// `menu_update()`: fold the last idle period into the correction factor of its bucket
/// and the interval history.
pub fn menu_update(
    data: &mut MenuDevice,
    states: &[IdleState],
    last_idx: usize,
    last_residency_ns: u64,
    tick_nsec: u64,
) {
    let target = &states[last_idx];
    let mut measured_ns = if data.tick_wakeup && data.next_timer_ns > tick_nsec {
        // The nohz code said no timer was due before the tick, yet the tick woke us: the
        // idle period would have been long. Treat it as a long sleep.
        9 * MAX_INTERESTING / 10
    } else {
        // (The polling state's poll_time_limit case is not modelled.)
        let m = last_residency_ns;
        if m > 2 * target.exit_latency_ns {
            m - target.exit_latency_ns
        } else {
            m / 2
        }
    };
    measured_ns = measured_ns.min(data.next_timer_ns);
    let mut new_factor = data.correction_factor[data.bucket];
    new_factor -= new_factor / DECAY;
    if data.next_timer_ns > 0 && measured_ns < MAX_INTERESTING {
        new_factor += RESOLUTION * measured_ns / data.next_timer_ns;
    } else {
        new_factor += RESOLUTION;
    }
    data.correction_factor[data.bucket] = new_factor;
    menu_update_intervals(data, measured_ns / 1000);
}

/// `menu_select()`.
pub fn menu_select(
    data: &mut MenuDevice,
    states: &[IdleState],
    inp: &IdleInputs,
    last_state_idx: Option<usize>,
    last_residency_ns: u64,
) -> Selection {
    let tick = inp.tick_nsec;
    if data.needs_update {
        menu_update(
            data,
            states,
            last_state_idx.unwrap_or(0),
            last_residency_ns,
            tick,
        );
        data.needs_update = false;
    } else if last_residency_ns == 0 {
        menu_update_intervals(data, UINT_MAX);
    }
    let mut predicted_ns = get_typical_interval(data).saturating_mul(1000);
    let delta_tick;
    if predicted_ns > RESIDENCY_THRESHOLD_NS || inp.tick_stopped {
        delta_tick = inp.delta_tick_ns;
        data.next_timer_ns = inp.sleep_length_ns.min(NO_TIMER_NS);
        data.bucket = which_bucket(data.next_timer_ns);
        let timer_us = (RESOLUTION * DECAY * 1000 / 2
            + data.next_timer_ns * data.correction_factor[data.bucket])
            / (RESOLUTION * DECAY * 1000);
        predicted_ns = predicted_ns.min(timer_us * 1000);
        if inp.tick_stopped && predicted_ns < tick {
            predicted_ns = data.next_timer_ns;
        }
    } else {
        // The next timer is not looked up: assume it is far and the tick half a period away.
        data.next_timer_ns = NO_TIMER_NS;
        delta_tick = tick / 2;
        data.bucket = which_bucket(NO_TIMER_NS);
    }
    if data.next_timer_ns < states[1].target_residency_ns {
        // State 0 whatever the rest says; keep the tick if it is a polling state.
        return Selection {
            state: 0,
            stop_tick: !states[0].polling,
        };
    }
    let mut idx = 0usize;
    let mut stop_tick = true;
    for (i, s) in states.iter().enumerate() {
        if s.target_residency_ns <= predicted_ns {
            idx = i;
            continue;
        }
        // A physical state instead of polling when its residency is short, the next
        // timer is not soon and its exit latency fits the prediction.
        if states[idx].polling
            && s.target_residency_ns < RESIDENCY_THRESHOLD_NS
            && s.target_residency_ns <= data.next_timer_ns
            && s.exit_latency_ns <= predicted_ns
        {
            predicted_ns = s.target_residency_ns;
            idx = i;
            break;
        }
        if predicted_ns < tick {
            break;
        }
        if !inp.tick_stopped {
            // The state so far is shallow: keep the tick and let the governor run again
            // on the next idle-loop iteration.
            predicted_ns = states[idx].target_residency_ns;
            break;
        }
        // Tick already stopped: don't get stuck in a shallow state until the timer.
        if states[idx].target_residency_ns < tick && s.target_residency_ns <= delta_tick {
            idx = i;
        }
        return Selection {
            state: idx,
            stop_tick,
        };
    }
    // Keep the tick when the state polls or the predicted idle is shorter than a tick.
    if (states[idx].polling || predicted_ns < tick) && !inp.tick_stopped {
        stop_tick = false;
        if idx > 0 && states[idx].target_residency_ns > delta_tick {
            // The tick will come first: pick a state that fits before it.
            for i in (0..idx).rev() {
                idx = i;
                if states[i].target_residency_ns <= delta_tick {
                    break;
                }
            }
        }
    }
    Selection {
        state: idx,
        stop_tick,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The kernel's two-pass form (sum, then the sum of squared differences), the oracle
    /// for [`get_typical_interval`].
    fn get_typical_interval_two_pass(data: &MenuDevice) -> u64 {
        let mut thresh = i32::MAX as u64;
        loop {
            let (mut max, mut sum, mut divisor) = (0u64, 0u64, 0u64);
            for &v in &data.intervals {
                if v <= thresh {
                    sum += v;
                    divisor += 1;
                    max = max.max(v);
                }
            }
            if max == 0 {
                return UINT_MAX;
            }
            let avg = sum / divisor;
            let mut variance = 0u64;
            for &v in &data.intervals {
                if v <= thresh {
                    let diff = v as i64 - avg as i64;
                    variance = variance.wrapping_add(diff.wrapping_mul(diff) as u64);
                }
            }
            variance /= divisor;
            if variance <= u64::MAX / 36
                && ((avg * avg > variance * 36 && divisor * 4 >= INTERVALS as u64 * 3)
                    || variance <= 400)
            {
                return avg;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return UINT_MAX;
            }
            thresh = max - 1;
        }
    }

    fn interval_us() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..50,
            0u64..2_000,
            0u64..100_000,
            Just(i32::MAX as u64),
            Just(i32::MAX as u64 + 1),
            Just(UINT_MAX),
        ]
    }

    proptest! {
        /// The one-pass variance gives the two-pass result for any history, including
        /// ties at the maximum, entries above `INT_MAX` and all-zero histories.
        #[test]
        fn typical_interval_equals_two_pass_form(
            v in proptest::collection::vec(interval_us(), INTERVALS),
            repeat in 0usize..INTERVALS,
        ) {
            let mut d = MenuDevice::new();
            d.intervals.copy_from_slice(&v);
            prop_assert_eq!(get_typical_interval(&d), get_typical_interval_two_pass(&d));
            // Ties: the first value repeated over a prefix.
            for i in 0..repeat {
                d.intervals[i] = v[0];
            }
            prop_assert_eq!(get_typical_interval(&d), get_typical_interval_two_pass(&d));
        }
    }

    use super::*;
    use crate::cpuidle::states;

    const TICK: u64 = 4_000_000; // HZ=250

    fn inputs(sleep_ns: u64, stopped: bool) -> IdleInputs {
        IdleInputs {
            tick_nsec: TICK,
            tick_stopped: stopped,
            sleep_length_ns: sleep_ns,
            delta_tick_ns: TICK.min(sleep_ns),
        }
    }

    fn with_history(us: u64) -> MenuDevice {
        let mut d = MenuDevice::new();
        d.intervals = [us; INTERVALS];
        d
    }

    #[test]
    fn buckets_are_decades_from_10us() {
        assert_eq!(which_bucket(9_999), 0);
        assert_eq!(which_bucket(10_000), 1);
        assert_eq!(which_bucket(999_999), 2);
        assert_eq!(which_bucket(5_000_000), 3);
        assert_eq!(which_bucket(200_000_000), 5);
    }

    #[test]
    fn typical_interval_regular_history_is_its_average() {
        let d = with_history(300);
        assert_eq!(get_typical_interval(&d), 300);
        // One outlier among eight is discarded: 7 × 100 µs + 1 × 10 ms → 100.
        let mut d = with_history(100);
        d.intervals[3] = 10_000;
        assert_eq!(get_typical_interval(&d), 100);
        // Irregular history (spread over decades): no typical interval.
        let mut d = MenuDevice::new();
        d.intervals = [10, 5_000, 40, 20_000, 300, 9_000, 70, 1_500];
        assert_eq!(get_typical_interval(&d), UINT_MAX);
        // Empty history.
        assert_eq!(get_typical_interval(&MenuDevice::new()), UINT_MAX);
    }

    #[test]
    fn short_typical_interval_keeps_the_tick() {
        // Idle periods of 200 µs, next timer 100 ms away: predicted 200 µs < TICK_NSEC →
        // C1E (20 µs residency ≤ 200 µs < C6's 600 µs), tick kept.
        let s = states::skx();
        let mut d = with_history(200);
        let sel = menu_select(&mut d, &s, &inputs(100_000_000, false), None, 200_000);
        assert_eq!(s[sel.state].name, "C1E");
        assert!(!sel.stop_tick);
    }

    #[test]
    fn long_prediction_stops_the_tick() {
        // 20 ms idle periods, next timer 50 ms: predicted 20 ms > TICK → C6, tick stopped.
        let s = states::skx();
        let mut d = with_history(20_000);
        let sel = menu_select(&mut d, &s, &inputs(50_000_000, false), None, 20_000_000);
        assert_eq!(s[sel.state].name, "C6");
        assert!(sel.stop_tick);
    }

    #[test]
    fn next_timer_closer_than_c1_polls_with_tick_kept() {
        let s = states::skx();
        let mut d = MenuDevice::new();
        let sel = menu_select(&mut d, &s, &inputs(1_000, false), None, 0);
        assert_eq!(
            sel,
            Selection {
                state: 0,
                stop_tick: false
            }
        );
        // pseries: snooze polls too.
        let p = states::pseries_dedicated();
        let sel = menu_select(&mut MenuDevice::new(), &p, &inputs(50_000, false), None, 0);
        assert_eq!(
            sel,
            Selection {
                state: 0,
                stop_tick: false
            }
        );
    }

    #[test]
    fn correction_factor_learns_early_wakeups() {
        // Every idle period ends at a quarter of the time to the next timer (2 ms of 8 ms):
        // the bucket-3 factor converges from 8192 to 2048 (RESOLUTION·DECAY·ratio).
        let s = states::skx();
        let mut d = MenuDevice::new();
        for _ in 0..200 {
            d.next_timer_ns = 8_000_000;
            d.bucket = which_bucket(8_000_000);
            d.tick_wakeup = false;
            menu_update(&mut d, &s, 3, 2_000_000 + 133_000, TICK);
        }
        let f = d.correction_factor[3];
        assert!((2040..=2056).contains(&f), "factor {f}");
        // Irregular history so only the timer path predicts: 8 ms × 1/4 = 2 ms < tick →
        // tick kept although the timer is two ticks away.
        d.intervals = [10, 5_000, 40, 20_000, 300, 9_000, 70, 1_500];
        let sel = menu_select(&mut d, &s, &inputs(8_000_000, false), None, 1);
        assert!(!sel.stop_tick);
        assert_eq!(s[sel.state].name, "C6");
    }

    #[test]
    fn tick_wakeup_with_far_timer_counts_as_long_sleep() {
        // A kept tick woke the CPU although no timer was due for 50 ms: measured = 45 ms,
        // so the history moves towards long idle and the re-evaluation stops the tick.
        let s = states::skx();
        let mut d = with_history(200);
        let first = menu_select(&mut d, &s, &inputs(50_000_000, false), None, 200_000);
        assert!(!first.stop_tick);
        let mut last = first;
        for _ in 0..8 {
            d.needs_update = true;
            d.tick_wakeup = true;
            last = menu_select(
                &mut d,
                &s,
                &inputs(50_000_000, false),
                Some(last.state),
                TICK,
            );
            if last.stop_tick {
                break;
            }
        }
        assert!(last.stop_tick);
        assert_eq!(s[last.state].name, "C6");
    }

    #[test]
    fn stopped_tick_uses_next_timer_for_short_predictions() {
        // Tick already stopped, history says 200 µs but the next timer is 30 ms away:
        // predicted becomes the timer distance → C6.
        let s = states::skx();
        let mut d = with_history(200);
        let sel = menu_select(&mut d, &s, &inputs(30_000_000, true), None, 200_000);
        assert_eq!(s[sel.state].name, "C6");
        assert!(sel.stop_tick);
    }
}
