//! Statistics over repeated runs: what `perf stat -r N` and LKML tables compute.

/// Mean, sample standard deviation and friends of one metric over runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1 denominator; 0 for one run).
    pub stdev: f64,
    /// Coefficient of variation, 100 × stdev / mean.
    pub cv_pct: f64,
    pub min: f64,
    pub max: f64,
    /// 90th percentile of the runs (nearest rank).
    pub p90: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Summary {
        let n = values.len();
        if n == 0 {
            return Summary {
                n,
                mean: 0.0,
                stdev: 0.0,
                cv_pct: 0.0,
                min: 0.0,
                max: 0.0,
                p90: 0.0,
            };
        }
        // Welford, as perf's update_stats() does.
        let (mut mean, mut m2) = (0.0f64, 0.0f64);
        for (i, &v) in values.iter().enumerate() {
            let delta = v - mean;
            mean += delta / (i + 1) as f64;
            m2 += delta * (v - mean);
        }
        let stdev = if n > 1 {
            (m2 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = ((0.9 * n as f64).ceil() as usize).clamp(1, n);
        Summary {
            n,
            mean,
            stdev,
            cv_pct: if mean != 0.0 {
                100.0 * stdev / mean.abs()
            } else {
                0.0
            },
            min: sorted[0],
            max: sorted[n - 1],
            p90: sorted[rank - 1],
        }
    }

    /// Standard error of the mean, `sqrt(s² / n)` (perf's `stddev_stats()`).
    pub fn stderr_mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.stdev / (self.n as f64).sqrt()
        }
    }

    /// perf's noise figure: 100 × standard error / mean (`rel_stddev_stats()`).
    pub fn noise_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.stderr_mean() / self.mean
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert!((s.stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv_pct - 100.0 * (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-9);
        // perf: +- = 100 * sqrt(s²/n) / mean = 100 * sqrt(32/7/8) / 5 = 15.118...%
        assert!((s.noise_pct() - 15.118578920369089).abs() < 1e-9);
        assert_eq!((s.min, s.max, s.p90), (2.0, 9.0, 9.0));
        let one = Summary::of(&[3.0]);
        assert_eq!((one.stdev, one.noise_pct()), (0.0, 0.0));
    }
}
