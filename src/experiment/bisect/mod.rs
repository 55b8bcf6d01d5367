//! `schedlab bisect`: which kernel changes cause a difference between two configurations,
//! and why (issue 15). What a regression hunt does by hand on borrowed machines — toggling
//! features and tunables one at a time between two kernels — done on common random numbers.
//!
//! - [`diff`]: the difference between a *good* and a *bad* side, as atomic [`Change`]s
//!   (each feature, tunable, the release-keyed model code, scenario keys), grouped by the
//!   [`crate::kconfig::features::CHANGE_GROUPS`] table and tagged with the release that
//!   introduced them; and every configuration "good plus some changes" ([`Config`]).
//! - [`search`]: the two searches over those configurations. *History order* bisects the
//!   kernel profiles between good and bad like `git bisect`, then the first bad release's
//!   changes in release order. *Attribution* applies each change alone to good and removes
//!   it alone from bad, then selects greedily the smallest set of changes explaining the
//!   total, and reports interactions. Every decision is a paired comparison on common seeds
//!   with a 95 % confidence interval (Student t), never a single run; seeds are added only
//!   where an interval still straddles zero, the midpoint or a neighbour, within a run budget.
//!   Runs are cached by resolved configuration and seed.
//! - [`runner`]: the real runner (the experiment's parallel pool, as `compare` uses).
//! - [`report`]: the LKML-style table, the mechanism counters, the JSON.
//!
//! What is left out: the intermediate releases are represented by the changes between good
//! and bad only (a feature that came and went between them stays at the common value), and
//! model code without a feature bit moves as one "release code" change.

pub mod diff;
pub mod report;
pub mod runner;
pub mod search;

use std::collections::BTreeMap;

use serde::Serialize;

pub use diff::{Change, Config, Difference, Member};
pub use search::{Bisection, Bisector, Halt, Limits, Runner};

/// The numeric metrics of one run (`RunResult::metrics`), by dotted path.
pub type Metrics = BTreeMap<String, f64>;

/// A mean with its 95 % confidence half-width: `mean ± ci95`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Number of paired seeds.
    pub n: usize,
    pub mean: f64,
    /// Half-width of the 95 % interval, `t(0.975, n-1) × s / √n` (infinite for one seed;
    /// written as null in JSON).
    pub ci95: f64,
}

impl Estimate {
    /// From per-seed values (paired differences, usually).
    pub fn of(values: &[f64]) -> Estimate {
        let s = crate::stats::summary::Summary::of(values);
        let n = values.len();
        let ci95 = if n < 2 {
            f64::INFINITY
        } else {
            crate::stats::summary::t975(n - 1) * s.stdev / (n as f64).sqrt()
        };
        Estimate {
            n,
            mean: s.mean,
            ci95,
        }
    }

    pub fn lo(&self) -> f64 {
        self.mean - self.ci95
    }

    pub fn hi(&self) -> f64 {
        self.mean + self.ci95
    }

    /// Whether the interval excludes zero (the difference is significant).
    pub fn significant(&self) -> bool {
        self.lo() > 0.0 || self.hi() < 0.0
    }

    /// Whether the two intervals overlap.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        self.lo() <= other.hi() && other.lo() <= self.hi()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_interval_by_hand() {
        // d = 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303 → ±2.484.
        let e = Estimate::of(&[1.0, 2.0, 3.0]);
        assert_eq!(e.n, 3);
        assert!((e.mean - 2.0).abs() < 1e-12);
        assert!((e.ci95 - 4.3027 / 3f64.sqrt()).abs() < 1e-4);
        assert!(!e.significant(), "2 ± 2.48 straddles zero");
        let tight = Estimate::of(&[1.9, 2.0, 2.1]);
        assert!(tight.significant());
        assert!(e.overlaps(&tight));
        assert!(Estimate::of(&[5.0]).ci95.is_infinite());
    }
}
