//! Engine-state invariants and the bounded log of violations.
//!
//! Checked after every event when the run-time checker is on (`[run] invariants = true`,
//! or the `SCHEDLAB_CHECK_INVARIANTS=1` environment variable for any run, release
//! builds included), in addition to the task-state and wasted-core checks of
//! `core.rs`:
//! - every task is current on at most one CPU, queued on at most one wake list, and a
//!   task that is current is the one its `task_cpu()` names;
//! - virtual time never goes backwards between checks;
//! - the policy's own invariants ([`crate::policy::SchedPolicy::check_invariants`]: for
//!   `linux_fair` the cfs_rq counters, load and EEVDF sums of every CPU);
//!   and, once at the first check, its static structures (`linux_fair`: the domain
//!   hierarchy, `sched_domain_debug_one()`'s checks);
//! - at the end of a run: the CPUs' busy time equals the tasks' summed runtimes (both
//!   are accounted at the same switch points, from the same instant after warm-up).
//!
//! In builds with debug assertions the state checks (not the wasted-core rule, which is
//! a performance property, not a state invariant) also run every
//! [`DEBUG_CHECK_EVERY`] events without the switch, and a violation panics.
//!
//! Violations are recorded in a [`ViolationLog`]: the first [`VIOLATIONS_KEPT`] are
//! kept as text, later ones only counted, so a run that goes wrong cannot grow memory
//! without bound.

use super::Engine;
use crate::task::TaskState;

/// Violations kept as text per run; later ones are only counted.
pub const VIOLATIONS_KEPT: usize = 64;

/// Events between two debug-build state checks (the checks are O(tasks + CPUs)).
pub const DEBUG_CHECK_EVERY: u64 = 256;

/// The environment variable that turns the run-time checker on for every run.
pub const CHECK_ENV: &str = "SCHEDLAB_CHECK_INVARIANTS";

/// Whether [`CHECK_ENV`] asks for the checker (`1`, `true`, `yes`).
pub fn env_requests_checks() -> bool {
    std::env::var(CHECK_ENV)
        .map(|v| matches!(v.trim(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// A bounded record of invariant violations: the first [`VIOLATIONS_KEPT`] messages and
/// the count of the rest.
#[derive(Debug, Clone, Default)]
pub struct ViolationLog {
    kept: Vec<String>,
    dropped: u64,
    /// Simulated time of the last check (monotonicity).
    last_check_ns: u64,
    domains_checked: bool,
}

impl ViolationLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record one violation (kept if fewer than [`VIOLATIONS_KEPT`] are, else counted).
    pub fn push(&mut self, msg: String) {
        if self.kept.len() < VIOLATIONS_KEPT {
            self.kept.push(msg);
        } else {
            self.dropped += 1;
        }
    }

    /// Violations recorded so far, kept or not.
    pub fn len(&self) -> usize {
        self.kept.len() + crate::units::usize_from_u64(self.dropped)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kept messages (the first [`VIOLATIONS_KEPT`]).
    pub fn kept(&self) -> &[String] {
        &self.kept
    }

    /// Violations beyond the kept ones.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Engine {
    /// The state invariants of the module doc (everything but the end-of-run one),
    /// each violation recorded in the log.
    pub(crate) fn check_engine_invariants(&mut self) {
        let mut found = Vec::new();
        // The static structures (domains) once, at the first check.
        let structure = !self.invariant_violations.domains_checked;
        self.invariant_violations.domains_checked = true;
        self.state_violations(structure, &mut found);
        for msg in found {
            self.invariant_violations.push(msg);
        }
    }

    /// Debug builds: run the state checks every [`DEBUG_CHECK_EVERY`] events and panic on
    /// a violation. Nothing in release.
    #[inline]
    pub(crate) fn debug_check_engine(&mut self) {
        if cfg!(debug_assertions) && self.clock.events().is_multiple_of(DEBUG_CHECK_EVERY) {
            let mut found = Vec::new();
            self.state_violations(false, &mut found);
            assert!(
                found.is_empty(),
                "engine invariants violated:\n{}",
                found.join("\n")
            );
        }
    }

    fn state_violations(&mut self, structure: bool, out: &mut Vec<String>) {
        let now = self.clock.now();
        let log = &mut self.invariant_violations;
        if now < log.last_check_ns {
            out.push(format!(
                "t={now} virtual time went backwards (last check at {})",
                log.last_check_ns
            ));
        }
        log.last_check_ns = now;
        for c in &self.cpus {
            let Some(p) = c.curr else { continue };
            let t = &self.tasks[p.idx()];
            if t.cpu != c.cpu {
                out.push(format!(
                    "t={now} CPU {} runs task {} ('{}') whose task_cpu is {}",
                    c.cpu, p.0, t.comm, t.cpu
                ));
            }
            if self.cpus.iter().filter(|o| o.curr == Some(p)).count() > 1 {
                out.push(format!("t={now} task {} is current on several CPUs", p.0));
            }
        }
        for t in &self.tasks {
            let lists = self
                .cpus
                .iter()
                .map(|c| c.wake_list.iter().filter(|&&w| w == t.id).count())
                .sum::<usize>();
            if lists > 1 {
                out.push(format!(
                    "t={now} task {} ('{}') is on {lists} wake lists",
                    t.id.0, t.comm
                ));
            }
            if t.state == TaskState::Running && !t.on_rq {
                out.push(format!(
                    "t={now} task {} ('{}') runs but is not on a runqueue",
                    t.id.0, t.comm
                ));
            }
        }
        let before = out.len();
        self.policy.check_invariants(structure, out);
        for msg in &mut out[before..] {
            *msg = format!("t={now} {} policy: {msg}", self.policy.name());
        }
    }

    /// End of a run (after `finish()`): Σ CPU busy time = Σ task runtime.
    pub(crate) fn check_end_invariants(&mut self) {
        let busy: u64 = self.cpus.iter().map(|c| c.stats.counters.busy_ns).sum();
        let runtime: u64 = self
            .tasks
            .iter()
            .map(|t| t.stats.counters.sum_exec_runtime_ns)
            .sum();
        if busy != runtime {
            self.invariant_violations.push(format!(
                "t={} CPU busy time {busy} ns differs from the tasks' summed runtime {runtime} ns",
                self.clock.now()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_the_first_and_counts_the_rest() {
        let mut log = ViolationLog::new();
        for i in 0..1000 {
            log.push(format!("v{i}"));
        }
        assert_eq!(log.kept().len(), VIOLATIONS_KEPT);
        assert_eq!(log.kept()[0], "v0");
        assert_eq!(log.dropped(), 1000 - VIOLATIONS_KEPT as u64);
        assert_eq!(log.len(), 1000);
    }
}
