//! Outside control of a running simulation: a stop request (SIGINT/SIGTERM) and progress
//! reporting (simulated time), both through shared atomics the event loop polls every
//! [`POLL_EVERY_EVENTS`] events. Polling is an observation only: a run that is never asked
//! to stop is byte-identical with or without a control attached.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The event loop polls its control every this many events (a power of two).
pub const POLL_EVERY_EVENTS: u64 = 1 << 12;

/// Shared between the runs of one command and whoever watches them.
#[derive(Debug, Default)]
pub struct Shared {
    /// Set by the first SIGINT/SIGTERM: running simulations stop at their next poll. (An
    /// `Arc` so that a signal handler can hold it.)
    pub stop: Arc<AtomicBool>,
    /// Simulated nanoseconds advanced so far, summed over every run polled.
    pub progress_ns: AtomicU64,
}

/// One run's handle on [`Shared`].
#[derive(Debug)]
pub struct RunControl {
    shared: Arc<Shared>,
    /// Simulated time already added to `progress_ns` by this run.
    reported_ns: u64,
    /// Whether this run stopped because of a stop request.
    stopped: bool,
}

impl RunControl {
    pub fn new(shared: Arc<Shared>) -> Self {
        RunControl {
            shared,
            reported_ns: 0,
            stopped: false,
        }
    }

    /// Report progress up to `now_ns`; true when the run must stop.
    pub fn poll(&mut self, now_ns: u64) -> bool {
        let delta = now_ns.saturating_sub(self.reported_ns);
        if delta > 0 {
            self.shared.progress_ns.fetch_add(delta, Ordering::Relaxed);
            self.reported_ns = now_ns;
        }
        if self.shared.stop.load(Ordering::Relaxed) {
            self.stopped = true;
        }
        self.stopped
    }

    /// Report the run's last stretch (at its end), without looking at the stop flag: a run
    /// that reached its end is complete even if a stop was requested meanwhile.
    pub fn finish(&mut self, end_ns: u64) {
        let delta = end_ns.saturating_sub(self.reported_ns);
        self.shared.progress_ns.fetch_add(delta, Ordering::Relaxed);
        self.reported_ns = end_ns.max(self.reported_ns);
    }

    /// Whether the run was cut short by a stop request.
    pub fn stopped(&self) -> bool {
        self.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_sums_over_runs_and_stop_is_seen() {
        let shared = Arc::new(Shared::default());
        let mut a = RunControl::new(shared.clone());
        let mut b = RunControl::new(shared.clone());
        assert!(!a.poll(1_000));
        assert!(!b.poll(500));
        assert!(!a.poll(1_500));
        assert_eq!(shared.progress_ns.load(Ordering::Relaxed), 2_000);
        shared.stop.store(true, Ordering::Relaxed);
        assert!(b.poll(600));
        assert!(b.stopped() && !a.stopped());
    }
}
