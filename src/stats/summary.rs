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

/// Per metric (dotted path), its values over runs in run order — a run without the metric
/// adds nothing to its column: what summaries and comparisons over runs are computed from,
/// kept as runs finish instead of the runs themselves (8 bytes per metric and run; issue 14,
/// results memory flat in `--runs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricColumns {
    runs: usize,
    columns: std::collections::BTreeMap<String, Vec<f64>>,
}

impl MetricColumns {
    /// The columns of `runs`' metrics (each run's `(path, value)` list), in order.
    pub fn of(runs: impl IntoIterator<Item = Vec<(String, f64)>>) -> MetricColumns {
        let mut c = MetricColumns::default();
        for r in runs {
            c.push_run(r);
        }
        c
    }

    /// Add one run's metrics.
    pub fn push_run(&mut self, metrics: Vec<(String, f64)>) {
        self.runs += 1;
        for (k, v) in metrics {
            self.columns.entry(k).or_default().push(v);
        }
    }

    /// How many runs were added.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// The summary of every metric over the runs that have it.
    pub fn summaries(&self) -> std::collections::BTreeMap<String, Summary> {
        (self.columns.iter())
            .map(|(k, values)| (k.clone(), Summary::of(values)))
            .collect()
    }

    /// The metrics `keep` accepts: their values over every run, `None` for a metric some
    /// run lacks.
    pub fn complete(
        &self,
        keep: impl Fn(&str) -> bool,
    ) -> std::collections::BTreeMap<String, Option<Vec<f64>>> {
        (self.columns.iter())
            .filter(|(k, _)| keep(k))
            .map(|(k, v)| (k.clone(), (v.len() == self.runs).then(|| v.clone())))
            .collect()
    }

    /// One metric's values, if every run has it.
    pub fn column(&self, key: &str) -> Option<&[f64]> {
        (self.columns.get(key))
            .filter(|v| v.len() == self.runs)
            .map(Vec::as_slice)
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
