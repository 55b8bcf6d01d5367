//! The migration ping-pong detector: a task moved A→B and then back B→A within a window
//! (default [`DEFAULT_WINDOW_NS`], `[run] pingpong_window_ms`) by a *different* mechanism —
//! the signature of two balancers undoing each other's work (the wakeup path pulling a task
//! next to its waker, then load balancing pushing it back; NUMA balancing against the load
//! balancer). There is no kernel counterpart; it is computed from every `set_task_cpu()`.
//!
//! Rules, each deliberate:
//! - Only the task's immediately preceding migration is compared (a per-task
//!   [`LastMove`], no allocation per event), so A→B, B→C, C→A is not a ping-pong.
//! - A reversal by the *same* mechanism (two wakeups) is not counted: that is one mechanism
//!   changing its mind, not two fighting.
//! - Each reversal counts, so A→B (wakeup), B→A (load_balance), A→B (wakeup) within windows
//!   counts two: `wakeup->load_balance` and `load_balance->wakeup`.
//! - The window is inclusive: a return exactly `window_ns` later still counts.
//! - Pairs are named `first->second` in the order the moves happened, with the
//!   [`MigrationReason`] names of the results.

use serde_json::{Value, json};

use crate::sched::types::MigrationReason;
use crate::units::cpu_u32;

/// Default window: 10 ms.
pub const DEFAULT_WINDOW_NS: u64 = 10_000_000;

const NR_REASONS: usize = MigrationReason::ALL.len();

fn reason_index(reason: MigrationReason) -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&r| r == reason)
        .expect("every reason is listed")
}

/// A task's last migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastMove {
    pub time_ns: u64,
    pub from: u32,
    pub to: u32,
    pub reason: MigrationReason,
}

/// Ping-pong counts of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PingPong {
    pub window_ns: u64,
    pub total: u64,
    /// `[first reason][second reason]`, indices of `MigrationReason::ALL`.
    pub by_pair: [[u64; NR_REASONS]; NR_REASONS],
}

impl Default for PingPong {
    fn default() -> Self {
        PingPong::new(DEFAULT_WINDOW_NS)
    }
}

impl PingPong {
    pub fn new(window_ns: u64) -> PingPong {
        PingPong {
            window_ns,
            total: 0,
            by_pair: [[0; NR_REASONS]; NR_REASONS],
        }
    }

    /// Record a migration of a task whose previous one is `last` (updated here). Returns the
    /// (first, second) mechanisms when this move is a ping-pong.
    pub fn record(
        &mut self,
        last: &mut Option<LastMove>,
        now_ns: u64,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) -> Option<(MigrationReason, MigrationReason)> {
        let hit = match *last {
            Some(prev)
                if prev.from as usize == to
                    && prev.to as usize == from
                    && prev.reason != reason
                    && now_ns.saturating_sub(prev.time_ns) <= self.window_ns =>
            {
                self.total += 1;
                self.by_pair[reason_index(prev.reason)][reason_index(reason)] += 1;
                Some((prev.reason, reason))
            }
            _ => None,
        };
        *last = Some(LastMove {
            time_ns: now_ns,
            from: cpu_u32(from),
            to: cpu_u32(to),
            reason,
        });
        hit
    }

    /// Forget the counts (end of warm-up); the window stays.
    pub fn reset_counts(&mut self) {
        *self = PingPong::new(self.window_ns);
    }

    /// The non-zero pairs, `"first->second"`, in `MigrationReason::ALL` order.
    pub fn pairs(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (i, a) in MigrationReason::ALL.iter().enumerate() {
            for (j, b) in MigrationReason::ALL.iter().enumerate() {
                let n = self.by_pair[i][j];
                if n > 0 {
                    out.push((format!("{}->{}", a.name(), b.name()), n));
                }
            }
        }
        out
    }

    /// `migrations.ping_pong_by_pair`: the non-zero pairs as a JSON object.
    pub fn by_pair_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        for (k, n) in self.pairs() {
            map.insert(k, json!(n));
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MigrationReason::*;

    const MS: u64 = 1_000_000;

    fn run(pp: &mut PingPong, moves: &[(u64, usize, usize, MigrationReason)]) -> Vec<bool> {
        let mut last = None;
        moves
            .iter()
            .map(|&(t, a, b, r)| pp.record(&mut last, t, a, b, r).is_some())
            .collect()
    }

    #[test]
    fn wakeup_then_load_balance_back_is_one_ping_pong() {
        let mut pp = PingPong::default();
        let hits = run(&mut pp, &[(0, 0, 4, Wakeup), (3 * MS, 4, 0, LoadBalance)]);
        assert_eq!(hits, [false, true]);
        assert_eq!(pp.total, 1);
        assert_eq!(pp.pairs(), vec![("wakeup->load_balance".to_string(), 1)]);
        assert_eq!(pp.by_pair_json(), json!({"wakeup->load_balance": 1}));
    }

    #[test]
    fn same_mechanism_outside_window_or_elsewhere_does_not_count() {
        let mut pp = PingPong::default();
        // Same mechanism both ways.
        assert_eq!(
            run(&mut pp, &[(0, 1, 2, Wakeup), (MS, 2, 1, Wakeup)]),
            [false, false]
        );
        // Back after 10 ms + 1 ns: outside the window.
        assert_eq!(
            run(
                &mut pp,
                &[(0, 1, 2, Wakeup), (10 * MS + 1, 2, 1, NewidleBalance)]
            ),
            [false, false]
        );
        // Not back to where it came from (A→B, B→C).
        assert_eq!(
            run(&mut pp, &[(0, 1, 2, Wakeup), (MS, 2, 3, LoadBalance)]),
            [false, false]
        );
        // A→B, B→C, C→A: only the previous move is compared.
        assert_eq!(
            run(
                &mut pp,
                &[(0, 1, 2, Wakeup), (MS, 2, 3, Wakeup), (2 * MS, 3, 1, Numa)]
            ),
            [false, false, false]
        );
        assert_eq!(pp.total, 0);
        assert!(pp.pairs().is_empty());
    }

    #[test]
    fn window_is_inclusive_and_configurable() {
        let mut pp = PingPong::default();
        assert_eq!(
            run(
                &mut pp,
                &[(5, 1, 2, Wakeup), (5 + 10 * MS, 2, 1, ActiveBalance)]
            ),
            [false, true]
        );
        let mut pp = PingPong::new(MS);
        assert_eq!(
            run(&mut pp, &[(0, 1, 2, Wakeup), (2 * MS, 2, 1, LoadBalance)]),
            [false, false]
        );
    }

    #[test]
    fn each_reversal_counts_with_its_own_pair() {
        let mut pp = PingPong::default();
        let hits = run(
            &mut pp,
            &[
                (0, 0, 6, Wakeup),
                (MS, 6, 0, LoadBalance),
                (2 * MS, 0, 6, Wakeup),
                (3 * MS, 6, 0, Numa),
            ],
        );
        assert_eq!(hits, [false, true, true, true]);
        assert_eq!(pp.total, 3);
        assert_eq!(
            pp.pairs(),
            vec![
                ("wakeup->load_balance".to_string(), 1),
                ("wakeup->numa".to_string(), 1),
                ("load_balance->wakeup".to_string(), 1),
            ]
        );
        pp.reset_counts();
        assert_eq!((pp.total, pp.window_ns), (0, DEFAULT_WINDOW_NS));
    }
}
