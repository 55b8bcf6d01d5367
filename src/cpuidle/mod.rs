//! cpuidle: which idle state an idle CPU enters and whether it stops its tick
//! (`kernel/sched/idle.c` `cpuidle_idle_call()`, `drivers/cpuidle/governors/{menu,teo}.c`,
//! `kernel/time/tick-sched.c`), v6.12.
//!
//! Each iteration of the idle loop asks the governor ([`CpuIdleDev::select`]) for a state
//! and a stop-tick verdict; the caller then stops the tick (`tick_nohz_idle_stop_tick()`,
//! which calls `nohz_balance_enter_idle()` the first time in an idle period) or keeps it
//! (`tick_nohz_idle_retain_tick()`), and on wake-up reports what happened
//! ([`CpuIdleDev::reflect`]: entered state, measured residency, whether the tick woke the
//! CPU). A CPU that kept its tick and is woken by it runs the loop again, so the governor
//! re-evaluates then — as the kernel does.
//!
//! Inputs as the kernel computes them: `sleep_length_ns` is `tick_nohz_get_sleep_length()`
//! (time to the next timer event other than the tick), `delta_tick_ns` its `delta_next`
//! (time to the next tick, or an earlier timer), `tick_stopped` `tick_nohz_tick_stopped()`.
//! Left out: PM QoS latency limits (`latency_req` is unbounded), disabled states, the
//! `poll_time_limit` of the polling state (a polling CPU polls until work arrives),
//! s2idle and forced idle, and v6.1's iowait performance multiplier in menu.

pub mod menu;
pub mod states;
pub mod teo;

use serde::{Deserialize, Serialize};

pub use states::IdleState;

/// `RESIDENCY_THRESHOLD_NS` (`drivers/cpuidle/governors/gov.h`): 15 µs.
pub const RESIDENCY_THRESHOLD_NS: u64 = 15_000;

/// The cpuidle governor (`cpuidle.governor=`, `/sys/devices/system/cpu/cpuidle/current_governor`).
///
/// Kernel default: the registered governor with the highest rating — menu (20) over teo
/// (19) — on every architecture whose kernel is tickless (x86, arm64 and powerpc
/// defconfigs), so `Menu` is the default here for every preset. teo is selected with
/// `cpuidle.governor=teo` (common on Android/arm64 and some distributions); haltpoll is
/// what KVM guests with `cpuidle-haltpoll` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Governor {
    #[default]
    Menu,
    Teo,
    /// `drivers/cpuidle/governors/haltpoll.c`, simplified: poll while the adaptive poll
    /// limit is non-zero and the last idle period was polled, else the halt state; the
    /// tick is always stopped (haltpoll never clears `stop_tick`).
    Haltpoll,
}

impl Governor {
    /// Names accepted in scenarios and sysfs.
    pub const NAMES: [&'static str; 3] = ["menu", "teo", "haltpoll"];

    pub fn from_name(name: &str) -> Option<Governor> {
        match name.trim() {
            "menu" => Some(Governor::Menu),
            "teo" => Some(Governor::Teo),
            "haltpoll" => Some(Governor::Haltpoll),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Governor::Menu => "menu",
            Governor::Teo => "teo",
            Governor::Haltpoll => "haltpoll",
        }
    }
}

/// What the governor sees on one idle-loop iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleInputs {
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// `tick_nohz_tick_stopped()`: the tick was already stopped in this idle period.
    pub tick_stopped: bool,
    /// `tick_nohz_get_sleep_length()` return value.
    pub sleep_length_ns: u64,
    /// Its `delta_next`: time until the next tick (or an earlier timer).
    pub delta_tick_ns: u64,
}

/// The governor's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    /// Index into the state table.
    pub state: usize,
    /// `*stop_tick` after `cpuidle_select()`.
    pub stop_tick: bool,
}

/// Per-CPU governor state (`struct cpuidle_device` plus the governor's per-CPU data).
#[derive(Debug, Clone)]
pub struct CpuIdleDev {
    pub governor: Governor,
    /// `dev->last_state_idx` (None = -1).
    pub last_state_idx: Option<usize>,
    /// `dev->last_residency_ns`.
    pub last_residency_ns: u64,
    pub menu: menu::MenuDevice,
    pub teo: teo::TeoCpu,
    /// haltpoll's `dev->poll_limit_ns`.
    pub poll_limit_ns: u64,
}

impl CpuIdleDev {
    /// The device as `*_enable_device()` leaves it.
    pub fn new(governor: Governor) -> CpuIdleDev {
        CpuIdleDev {
            governor,
            last_state_idx: None,
            last_residency_ns: 0,
            menu: menu::MenuDevice::new(),
            teo: teo::TeoCpu::default(),
            poll_limit_ns: 0,
        }
    }

    /// `cpuidle_select()` (with the `state_count > 1` guard of `cpuidle_idle_call()`: a
    /// table with one state skips the governor, state 0, tick stopped).
    pub fn select(&mut self, states: &[IdleState], inp: &IdleInputs, now_ns: u64) -> Selection {
        if states.len() <= 1 {
            return Selection {
                state: 0,
                stop_tick: true,
            };
        }
        match self.governor {
            Governor::Menu => menu::menu_select(
                &mut self.menu,
                states,
                inp,
                self.last_state_idx,
                self.last_residency_ns,
            ),
            Governor::Teo => teo::teo_select(
                &mut self.teo,
                states,
                inp,
                &mut self.last_state_idx,
                self.last_residency_ns,
                now_ns,
            ),
            Governor::Haltpoll => Selection {
                // haltpoll_select(): poll while the poll limit is non-zero (the poll time
                // limit itself is not modelled), else state 1; stop_tick left true.
                state: if self.poll_limit_ns == 0 { 1 } else { 0 },
                stop_tick: true,
            },
        }
    }

    /// `cpuidle_reflect()` after `call_cpuidle()` returned: `state` was entered for
    /// `residency_ns`; `got_tick` = `tick_nohz_idle_got_tick()` (the tick woke the CPU).
    pub fn reflect(
        &mut self,
        state: usize,
        residency_ns: u64,
        got_tick: bool,
        inp_tick_nsec: u64,
        now_ns: u64,
    ) {
        self.last_residency_ns = residency_ns;
        self.last_state_idx = Some(state);
        match self.governor {
            Governor::Menu => {
                self.menu.needs_update = true;
                self.menu.tick_wakeup = got_tick;
            }
            Governor::Teo => teo::teo_reflect(&mut self.teo, got_tick, inp_tick_nsec, now_ns),
            Governor::Haltpoll => self.adjust_poll_limit(residency_ns),
        }
    }

    /// haltpoll `adjust_poll_limit()` with the module defaults (`guest_halt_poll_ns` 200 µs,
    /// grow ×2 from 50 µs, shrink ÷2).
    fn adjust_poll_limit(&mut self, block_ns: u64) {
        const GUEST_HALT_POLL_NS: u64 = 200_000;
        const GROW_START: u64 = 50_000;
        if block_ns > self.poll_limit_ns && block_ns <= GUEST_HALT_POLL_NS {
            self.poll_limit_ns = (self.poll_limit_ns * 2).clamp(GROW_START, GUEST_HALT_POLL_NS);
        } else if block_ns > GUEST_HALT_POLL_NS {
            let v = self.poll_limit_ns / 2;
            self.poll_limit_ns = if v < GROW_START { 0 } else { v };
        }
    }
}
