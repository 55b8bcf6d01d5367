//! The scheduling watchdog: a cheap check that runs in every run, like the kernel's
//! `WARN_ON_ONCE()`s, for the two ways a scheduler model can silently lose time:
//!
//! - **a stalled wakeup**: a task waits runnable on a CPU that has been idle (no current
//!   task, nothing on its way through a wake list) for longer than the bound. The kernel
//!   reschedules an idle CPU at every enqueue on it (`wakeup_preempt()` →
//!   `resched_curr()`), so this is never a scheduling decision: it is a lost reschedule.
//! - **a wasted core** (Lozi et al., EuroSys'16): a CPU of the task's LLC that the task may
//!   use has been idle, with nothing queued, for that long while the task waits.
//!
//! **The bound** ([`stall_bound_ns`], computed once per run): the largest balance interval
//! of the machine's sched domains, and at least [`STALL_BOUND_MIN_NS`] (100 ms). An idle
//! CPU balances each domain every `sd->balance_interval`, which doubles while balancing
//! fails up to `sd->max_interval` = 2 ms × the domain's weight (`sd_init()`; the busy
//! factor stretches only a busy CPU's interval, and `max_load_balance_interval`, HZ ×
//! CPUs / 10 jiffies, is always above it). So on a 2-socket machine the NUMA level's is
//! the largest: 160 ms on skl-2s (80 CPUs), 448 ms on spr-2s (224), 512 ms on milan-2s
//! (256), 1024 ms on turin-2s (512). A wait beyond that is not one the balancer was still
//! entitled to. The floor keeps small machines' bound far above the kernel's usual
//! reaction time (a busy CPU's tick kicks NOHZ idle balancing within a tick; idle balancing
//! at the LLC runs every few ms). A policy without domains (`fifo`) gets the floor.
//!
//! The check runs every [`WATCHDOG_PERIOD_NS`] of simulated time, from the event loop (no
//! events of its own, so turning it on or off cannot change a result): O(CPUs) per period
//! to find the CPUs idle beyond the bound, and only when there is one, O(tasks) with a
//! mask intersection per long-waiting task. Each task's wait is reported once. Findings go to
//! the run's results (`warnings`; and `invariant_violations` when the invariant checker is
//! on), and the front end prints the first one; builds with debug assertions (the test
//! suite) panic on the first ([`super::EngineConfig::watchdog_panics`]), so every test and
//! soak scenario checks it.

use super::Engine;
use crate::cpumask::CpuMask;
use crate::task::TaskState;

/// The least bound on a runnable task's wait, and an idle CPU's idle time, beyond which
/// the watchdog reports (see [`stall_bound_ns`]).
pub const STALL_BOUND_MIN_NS: u64 = 100_000_000;

/// The watchdog's bound for a policy whose largest balance interval of an idle CPU is
/// `max_balance_interval_ms` (`None`: no domains): that interval, at least
/// [`STALL_BOUND_MIN_NS`].
pub fn stall_bound_ns(max_balance_interval_ms: Option<u64>) -> u64 {
    let interval_ns = max_balance_interval_ms
        .unwrap_or(0)
        .saturating_mul(1_000_000);
    interval_ns.max(STALL_BOUND_MIN_NS)
}

/// Simulated time between two watchdog passes.
pub const WATCHDOG_PERIOD_NS: u64 = 10_000_000;

/// The CPUs a pass can name, computed once per pass (O(CPUs)).
struct LongIdle {
    /// Idle beyond the bound with no wakeup on its way (`ttwu_pending`): a task waiting on
    /// such a CPU is a stalled wakeup.
    cpus: CpuMask,
    /// Of those, the ones with nothing queued: a wasted core for a task of their LLC.
    empty: CpuMask,
}

impl Engine {
    /// One watchdog pass at `now_ns` (the event loop calls it when the period is due).
    pub(crate) fn watchdog(&mut self) {
        self.watchdog_next_ns = self.clock.now().saturating_add(WATCHDOG_PERIOD_NS);
        let now = self.clock.now();
        let bound = self.watchdog_bound_ns;
        let idle = self.long_idle_cpus();
        // No CPU idle beyond the bound: no wait can be a stall (an overloaded machine's
        // long waits are skipped without a look at each task).
        if idle.cpus.is_empty() {
            return;
        }
        for i in 0..self.tasks.len() {
            let t = &self.tasks[i];
            if t.state != TaskState::Runnable
                || t.wasted_core_reported
                || now - t.runnable_since_ns <= bound
            {
                continue;
            }
            let Some(msg) = self.stalled_wait(i, &idle) else {
                continue;
            };
            self.tasks[i].wasted_core_reported = true;
            assert!(!self.cfg.watchdog_panics, "scheduling watchdog: {msg}");
            if self.cfg.check_invariants {
                self.invariant_violations.push(msg.clone());
            }
            self.warnings.push(msg);
        }
    }

    /// The online CPUs idle beyond the bound (see [`LongIdle`]).
    fn long_idle_cpus(&self) -> LongIdle {
        let mut idle = LongIdle {
            cpus: CpuMask::new(),
            empty: CpuMask::new(),
        };
        for c in self.machine.online.iter() {
            if self.cpu_idle_beyond_bound(c) && !self.cpus[c].ttwu_pending() {
                idle.cpus.set(c);
                if self.policy.nr_running(c) == 0 {
                    idle.empty.set(c);
                }
            }
        }
        idle
    }

    /// What is wrong with task `i`'s long runnable wait, if anything: its own CPU idle
    /// (a lost reschedule), or another CPU of its LLC idle (a wasted core).
    fn stalled_wait(&self, i: usize, idle: &LongIdle) -> Option<String> {
        let now = self.clock.now();
        let t = &self.tasks[i];
        let waited_us = (now - t.runnable_since_ns) / 1000;
        let own = &self.cpus[t.cpu];
        if idle.cpus.test(t.cpu) {
            return Some(format!(
                "t={now} stalled wakeup: task {} ('{}') waits runnable on CPU {} for {waited_us} us \
                 while that CPU has been idle for {} us",
                t.id.0,
                t.comm,
                t.cpu,
                (now - own.idle_since_ns) / 1000
            ));
        }
        let idle_cpu = self
            .machine
            .llc_mask(t.cpu)
            .and(&t.cpus_allowed)
            .and(&idle.empty)
            .iter()
            .find(|&c| c != t.cpu)?;
        Some(format!(
            "t={now} wasted core: CPU {idle_cpu} idle for {} us while task {} ('{}') \
             waits runnable on CPU {} of the same LLC for {waited_us} us",
            (now - self.cpus[idle_cpu].idle_since_ns) / 1000,
            t.id.0,
            t.comm,
            t.cpu,
        ))
    }

    /// `cpu` runs nothing and has been idle for longer than the bound.
    fn cpu_idle_beyond_bound(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.curr.is_none() && self.clock.now() - c.idle_since_ns > self.watchdog_bound_ns
    }

    /// The watchdog's bound in this run ([`stall_bound_ns`]).
    pub fn watchdog_bound_ns(&self) -> u64 {
        self.watchdog_bound_ns
    }

    /// The watchdog's findings (the first [`super::invariants::VIOLATIONS_KEPT`]).
    pub fn warnings(&self) -> &[String] {
        self.warnings.kept()
    }

    /// Findings beyond the kept ones.
    pub fn warnings_dropped(&self) -> u64 {
        self.warnings.dropped()
    }
}
