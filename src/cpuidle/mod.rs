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
    /// The haltpoll module parameters (`/sys/module/haltpoll/parameters/`).
    pub haltpoll: HaltpollParams,
}

/// The cpuidle-haltpoll governor's module parameters (`drivers/cpuidle/governors/haltpoll.c`,
/// `/sys/module/haltpoll/parameters/`): how long an idle CPU may poll before it halts, and how
/// that limit grows and shrinks. A guest whose `guest_halt_poll_ns` is 0 never polls: every
/// idle period halts, and a wakeup needs an IPI and a VM exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HaltpollParams {
    /// `guest_halt_poll_ns`: the largest poll limit (module default 200 µs).
    pub guest_halt_poll_ns: u64,
    /// `guest_halt_poll_grow`: the limit's growth factor (default 2).
    pub grow: u64,
    /// `guest_halt_poll_grow_start`: the first non-zero limit (default 50 µs).
    pub grow_start_ns: u64,
    /// `guest_halt_poll_shrink`: the limit's shrink divisor (default 2; 0 resets to 0).
    pub shrink: u64,
    /// `guest_halt_poll_allow_shrink` (default true).
    pub allow_shrink: bool,
}

impl Default for HaltpollParams {
    fn default() -> Self {
        HaltpollParams {
            guest_halt_poll_ns: 200_000,
            grow: 2,
            grow_start_ns: 50_000,
            shrink: 2,
            allow_shrink: true,
        }
    }
}

impl HaltpollParams {
    /// The running kernel's module parameters under `dir` (`/sys/module/haltpoll/parameters`);
    /// the defaults for any that cannot be read (the module not loaded: `None`).
    pub fn read_host(dir: &std::path::Path) -> Option<HaltpollParams> {
        let read = |name: &str| -> Option<String> {
            std::fs::read_to_string(dir.join(name))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let num =
            |name: &str, default: u64| read(name).and_then(|s| s.parse().ok()).unwrap_or(default);
        read("guest_halt_poll_ns")?;
        let d = HaltpollParams::default();
        Some(HaltpollParams {
            guest_halt_poll_ns: num("guest_halt_poll_ns", d.guest_halt_poll_ns),
            grow: num("guest_halt_poll_grow", d.grow),
            grow_start_ns: num("guest_halt_poll_grow_start", d.grow_start_ns),
            shrink: num("guest_halt_poll_shrink", d.shrink),
            allow_shrink: read("guest_halt_poll_allow_shrink")
                .map_or(d.allow_shrink, |s| s == "Y" || s == "1"),
        })
    }
}

impl CpuIdleDev {
    /// The device as `*_enable_device()` leaves it.
    pub fn new(governor: Governor, haltpoll: HaltpollParams) -> CpuIdleDev {
        CpuIdleDev {
            governor,
            last_state_idx: None,
            last_residency_ns: 0,
            menu: menu::MenuDevice::new(),
            teo: teo::TeoCpu::default(),
            poll_limit_ns: 0,
            haltpoll,
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
            // haltpoll_select(): halt (state 1, the tick may stop) while the poll limit is
            // 0, else poll (state 0) with the tick kept. Approximation: the poll's own time
            // limit (`poll_time_limit`: halt after a poll window without an event) is not
            // modelled; a polling CPU polls until its next event.
            Governor::Haltpoll if self.poll_limit_ns == 0 => Selection {
                state: 1,
                stop_tick: true,
            },
            Governor::Haltpoll => Selection {
                state: 0,
                stop_tick: false,
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

    /// haltpoll `adjust_poll_limit()` with the machine's module parameters: grow the limit
    /// (by `grow`, at least `grow_start`, at most `guest_halt_poll_ns`) when the CPU blocked
    /// longer than it but within `guest_halt_poll_ns`; shrink it (by `shrink`; below
    /// `grow_start` to 0) when it blocked longer than `guest_halt_poll_ns`.
    fn adjust_poll_limit(&mut self, block_ns: u64) {
        let p = self.haltpoll;
        if block_ns > self.poll_limit_ns && block_ns <= p.guest_halt_poll_ns {
            let grown = self.poll_limit_ns.saturating_mul(p.grow);
            self.poll_limit_ns = grown.max(p.grow_start_ns).min(p.guest_halt_poll_ns);
        } else if block_ns > p.guest_halt_poll_ns && p.allow_shrink {
            let v = match p.shrink {
                0 => 0,
                shrink => self.poll_limit_ns / shrink,
            };
            self.poll_limit_ns = if v < p.grow_start_ns { 0 } else { v };
        }
    }
}

#[cfg(test)]
mod haltpoll_tests {
    use super::*;

    fn dev(p: HaltpollParams) -> CpuIdleDev {
        CpuIdleDev::new(Governor::Haltpoll, p)
    }

    /// The module defaults: a short block grows the limit to grow_start, then doubles it up
    /// to guest_halt_poll_ns; a long block halves it, below grow_start to 0.
    #[test]
    fn poll_limit_grows_and_shrinks_as_the_module_parameters_say() {
        let mut d = dev(HaltpollParams::default());
        d.adjust_poll_limit(10_000);
        assert_eq!(d.poll_limit_ns, 50_000);
        d.adjust_poll_limit(60_000);
        assert_eq!(d.poll_limit_ns, 100_000);
        d.adjust_poll_limit(150_000);
        assert_eq!(d.poll_limit_ns, 200_000);
        d.adjust_poll_limit(300_000);
        assert_eq!(d.poll_limit_ns, 100_000);
        d.adjust_poll_limit(300_000);
        assert_eq!(d.poll_limit_ns, 50_000);
        d.adjust_poll_limit(300_000);
        assert_eq!(d.poll_limit_ns, 0);
    }

    /// `guest_halt_poll_ns = 0` (this VM's setting): the limit never grows, every idle period
    /// halts (state 1) and may stop the tick; a polling CPU keeps its tick.
    #[test]
    fn a_zero_guest_halt_poll_ns_never_polls() {
        let p = HaltpollParams {
            guest_halt_poll_ns: 0,
            ..HaltpollParams::default()
        };
        let mut d = dev(p);
        for block in [1_000, 40_000, 10_000_000] {
            d.adjust_poll_limit(block);
            assert_eq!(d.poll_limit_ns, 0);
        }
        let mut polling = dev(HaltpollParams::default());
        polling.poll_limit_ns = 50_000;
        let states = states::skx();
        let inp = IdleInputs {
            tick_nsec: 4_000_000,
            tick_stopped: false,
            sleep_length_ns: 10_000_000,
            delta_tick_ns: 4_000_000,
        };
        let sel = d.select(&states, &inp, 0);
        assert_eq!((sel.state, sel.stop_tick), (1, true));
        let sel = polling.select(&states, &inp, 0);
        assert_eq!((sel.state, sel.stop_tick), (0, false));
    }

    #[test]
    fn host_parameters_are_read_from_sysfs() {
        let dir = std::env::temp_dir().join(format!("schedlab-haltpoll-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(HaltpollParams::read_host(&dir), None, "module not loaded");
        std::fs::write(dir.join("guest_halt_poll_ns"), "0\n").unwrap();
        std::fs::write(dir.join("guest_halt_poll_allow_shrink"), "N\n").unwrap();
        let p = HaltpollParams::read_host(&dir).unwrap();
        assert_eq!(p.guest_halt_poll_ns, 0);
        assert!(!p.allow_shrink);
        assert_eq!(p.grow, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
