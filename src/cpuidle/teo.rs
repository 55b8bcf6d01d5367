//! The timer events oriented governor (`drivers/cpuidle/governors/teo.c`, v6.12): per
//! state "bins" count, with exponential decay, idle periods that ended where the next
//! timer said ("hits") and earlier ("intercepts", a non-timer wakeup). A state is chosen
//! from the deepest one that fits, moved shallower when intercepts dominate; the sleep
//! length (`tick_nohz_get_sleep_length()`) is looked up only when the candidate is deep
//! enough to need it. The tick is kept unless the chosen state is a physical one and the
//! expected duration reaches a tick (or the tick is already stopped).

use super::{IdleInputs, IdleState, RESIDENCY_THRESHOLD_NS, Selection};

pub const PULSE: u64 = 1024;
pub const DECAY_SHIFT: u32 = 3;
/// Enough bins for any table here (`CPUIDLE_STATE_MAX` is 10).
pub const MAX_STATES: usize = 10;

/// `struct teo_bin`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeoBin {
    pub intercepts: u64,
    pub hits: u64,
}

/// `struct teo_cpu`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeoCpu {
    /// At selection: the clock; after reflect: the measured idle span.
    pub time_span_ns: u64,
    pub sleep_length_ns: u64,
    pub state_bins: [TeoBin; MAX_STATES],
    pub total: u64,
    pub tick_hits: u64,
}

/// `teo_update()`: classify the last idle period as a hit or an intercept of the bin its
/// duration falls in.
pub fn teo_update(
    cpu: &mut TeoCpu,
    states: &[IdleState],
    last_idx: usize,
    last_residency_ns: u64,
    tick_nsec: u64,
) {
    let measured_ns = if cpu.time_span_ns >= cpu.sleep_length_ns {
        // The tick or the expected timer ended it: a timer wakeup.
        u64::MAX
    } else {
        let lat = states[last_idx].exit_latency_ns;
        if last_residency_ns >= lat {
            last_residency_ns - lat / 2
        } else {
            last_residency_ns / 2
        }
    };
    cpu.total = 0;
    let mut idx_timer = 0;
    let mut idx_duration = 0;
    let mut target_residency_ns = 0;
    for (i, s) in states.iter().enumerate().take(MAX_STATES) {
        let bin = &mut cpu.state_bins[i];
        bin.hits -= bin.hits >> DECAY_SHIFT;
        bin.intercepts -= bin.intercepts >> DECAY_SHIFT;
        cpu.total += bin.hits + bin.intercepts;
        target_residency_ns = s.target_residency_ns;
        if target_residency_ns <= cpu.sleep_length_ns {
            idx_timer = i;
            if target_residency_ns <= measured_ns {
                idx_duration = i;
            }
        }
    }
    // The deepest state is shallower than a tick: track tick hits separately.
    if target_residency_ns < tick_nsec {
        cpu.tick_hits -= cpu.tick_hits >> DECAY_SHIFT;
        cpu.total += cpu.tick_hits;
        if tick_nsec <= cpu.sleep_length_ns {
            idx_timer = states.len();
            if tick_nsec <= measured_ns {
                cpu.tick_hits += PULSE;
                cpu.total += PULSE;
                return;
            }
        }
    }
    if idx_timer == idx_duration {
        cpu.state_bins[idx_timer].hits += PULSE;
    } else {
        cpu.state_bins[idx_duration].intercepts += PULSE;
    }
    cpu.total += PULSE;
}

fn teo_state_ok(s: &IdleState, inp: &IdleInputs) -> bool {
    !inp.tick_stopped || s.target_residency_ns >= inp.tick_nsec
}

/// `teo_find_shallower_state()` (no disabled states).
fn find_shallower(states: &[IdleState], mut idx: usize, duration_ns: u64) -> usize {
    for i in (0..idx).rev() {
        idx = i;
        if states[i].target_residency_ns <= duration_ns {
            break;
        }
    }
    idx
}

/// `teo_select()`.
pub fn teo_select(
    cpu: &mut TeoCpu,
    states: &[IdleState],
    inp: &IdleInputs,
    last_state_idx: &mut Option<usize>,
    last_residency_ns: u64,
    now_ns: u64,
) -> Selection {
    let n = states.len().min(MAX_STATES);
    let states = &states[..n];
    if let Some(last) = last_state_idx.take() {
        teo_update(cpu, states, last, last_residency_ns, inp.tick_nsec);
    }
    cpu.time_span_ns = now_ns;
    cpu.sleep_length_ns = u64::MAX;
    let keep = |state| Selection {
        state,
        stop_tick: false,
    };
    let mut intercept_sum = 0u64;
    let mut hit_sum = 0u64;
    let mut idx_intercept_sum = 0;
    let mut idx_hit_sum = 0;
    let idx0 = 0usize;
    let mut idx = 0usize;
    for i in 1..n {
        intercept_sum += cpu.state_bins[i - 1].intercepts;
        hit_sum += cpu.state_bins[i - 1].hits;
        idx = i;
        idx_intercept_sum = intercept_sum;
        idx_hit_sum = hit_sum;
    }
    let mut duration_ns;
    let mut delta_tick = inp.tick_nsec / 2;
    if idx == idx0 {
        duration_ns = states[idx].target_residency_ns;
    } else {
        let tick_intercept_sum = intercept_sum + cpu.state_bins[n - 1].intercepts;
        let prev_intercept_idx = idx;
        // Intercepts dominate: find the deepest shallower state that covers over half of
        // the intercepts seen at the candidate.
        if 2 * idx_intercept_sum > cpu.total.saturating_sub(idx_hit_sum) {
            let mut first_suitable_idx = idx;
            let mut sum = 0;
            for i in (0..idx).rev() {
                sum += cpu.state_bins[i].intercepts;
                if 2 * sum > idx_intercept_sum {
                    idx = if teo_state_ok(&states[i], inp) {
                        i
                    } else {
                        first_suitable_idx
                    };
                    break;
                }
                if !teo_state_ok(&states[i], inp) {
                    if first_suitable_idx != idx {
                        continue;
                    }
                    break;
                }
                first_suitable_idx = i;
            }
        }
        if idx == 0 && prev_intercept_idx != 0 {
            // Intercepts say state 0: get the sleep length for the next update, keep tick.
            cpu.sleep_length_ns = inp.sleep_length_ns;
            return keep(0);
        }
        // (No latency constraint: constraint_idx is the deepest state.)
        if idx == 0 {
            return keep(0);
        }
        if states[0].polling && states[idx].target_residency_ns < RESIDENCY_THRESHOLD_NS {
            return keep(idx);
        }
        duration_ns = inp.sleep_length_ns;
        delta_tick = inp.delta_tick_ns;
        cpu.sleep_length_ns = duration_ns;
        if states[idx].target_residency_ns > duration_ns {
            idx = find_shallower(states, idx, duration_ns);
        }
        // Most recent wakeups were before a tick: treat the tick as unstoppable.
        if states[idx].target_residency_ns < inp.tick_nsec
            && tick_intercept_sum > cpu.total / 2 + cpu.total / 8
        {
            duration_ns = inp.tick_nsec / 2;
        }
    }
    // end:
    if (!states[idx].polling && duration_ns >= inp.tick_nsec) || inp.tick_stopped {
        return Selection {
            state: idx,
            stop_tick: true,
        };
    }
    if idx > idx0 && states[idx].target_residency_ns > delta_tick {
        idx = find_shallower(states, idx, delta_tick);
    }
    keep(idx)
}

/// `teo_reflect()`: the idle span, or the sleep length when the tick woke a CPU whose
/// next timer was farther than a tick (so the update counts it as a timer wakeup).
pub fn teo_reflect(cpu: &mut TeoCpu, got_tick: bool, tick_nsec: u64, now_ns: u64) {
    if got_tick && cpu.sleep_length_ns > tick_nsec {
        cpu.time_span_ns = cpu.sleep_length_ns;
    } else {
        cpu.time_span_ns = now_ns.saturating_sub(cpu.time_span_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::states;

    const TICK: u64 = 4_000_000;

    fn inputs(sleep_ns: u64) -> IdleInputs {
        IdleInputs {
            tick_nsec: TICK,
            tick_stopped: false,
            sleep_length_ns: sleep_ns,
            delta_tick_ns: TICK.min(sleep_ns),
        }
    }

    /// Run `n` idle periods that each last `idle_ns` with the next timer `sleep_ns` away.
    fn run(cpu: &mut TeoCpu, s: &[IdleState], n: usize, idle_ns: u64, sleep_ns: u64) -> Selection {
        let mut now = 1_000_000_000;
        let mut last = None;
        let mut res = 0;
        let mut sel = Selection {
            state: 0,
            stop_tick: false,
        };
        for _ in 0..n {
            sel = teo_select(cpu, s, &inputs(sleep_ns), &mut last, res, now);
            now += idle_ns;
            teo_reflect(cpu, false, TICK, now);
            last = Some(sel.state);
            res = idle_ns;
        }
        sel
    }

    #[test]
    fn timer_wakeups_are_hits_and_stop_the_tick() {
        // Every idle period lasts until the timer 20 ms away: timer hits — counted as tick
        // hits, since Skylake-SP's deepest state (C6, 600 µs) is shallower than a tick —,
        // C6 chosen, tick stopped.
        let s = states::skx();
        let mut cpu = TeoCpu::default();
        let sel = run(&mut cpu, &s, 40, 20_000_000, 20_000_000);
        assert_eq!(s[sel.state].name, "C6");
        assert!(sel.stop_tick);
        assert!(cpu.tick_hits > 0);
        assert_eq!(cpu.state_bins.iter().map(|b| b.intercepts).sum::<u64>(), 0);
    }

    #[test]
    fn early_wakeups_are_intercepts_and_keep_the_tick() {
        // Timer 20 ms away, but every idle period ends after 50 µs (a wakeup from
        // another CPU): intercepts in the C1E bin (20 µs ≤ 50 µs < 600 µs) dominate, teo
        // picks C1E and keeps the tick.
        let s = states::skx();
        let mut cpu = TeoCpu::default();
        let sel = run(&mut cpu, &s, 40, 50_000, 20_000_000);
        assert!(cpu.state_bins[2].intercepts > cpu.state_bins[3].hits);
        assert_eq!(s[sel.state].name, "C1E");
        assert!(!sel.stop_tick);
    }

    #[test]
    fn update_classifies_hit_and_intercept() {
        let s = states::skx();
        let mut cpu = TeoCpu {
            sleep_length_ns: 1_000_000,
            time_span_ns: 1_000_000,
            ..Default::default()
        };
        teo_update(&mut cpu, &s, 3, 1_000_000, TICK);
        assert_eq!(cpu.state_bins[3].hits, PULSE);
        cpu.time_span_ns = 30_000;
        teo_update(&mut cpu, &s, 2, 30_000, TICK);
        assert_eq!(cpu.state_bins[2].intercepts, PULSE);
        assert_eq!(cpu.state_bins[3].hits, PULSE - (PULSE >> DECAY_SHIFT));
    }
}
