//! Statistics over repeated runs: what `perf stat -r N` and LKML tables compute.

/// Mean, sample standard deviation and friends of one metric over runs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
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

/// The `q` quantile of `sorted` (ascending, not empty) by nearest rank: the smallest value
/// with at least a `q` share of the values at or below it.
pub fn nearest_rank<T>(sorted: &[T], q: f64) -> &T {
    assert!(!sorted.is_empty(), "nearest_rank of nothing");
    let n = sorted.len();
    &sorted[crate::units::count_ceil(q * n as f64).clamp(1, n) - 1]
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
            p90: *nearest_rank(&sorted, 0.9),
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

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (two-sided 95 %
/// intervals use `p = 0.975`): the `t` with `P(T <= t) = p`, found by bisection on the exact
/// distribution function ([`student_t_cdf`]) to 1e-12. Infinite for `df = 0` (no interval
/// from one value). The project's only t quantile: report, compare, bisect, sweep and
/// validate all use it, so their intervals agree at every run count.
pub fn t_quantile(p: f64, df: usize) -> f64 {
    assert!(
        (0.5..1.0).contains(&p),
        "t_quantile: p {p} outside [0.5, 1)"
    );
    if df == 0 {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    while hi - lo > 1e-12 * hi.max(1.0) {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// `t_quantile(0.975, df)`: the multiplier of a two-sided 95 % confidence interval.
pub fn t975(df: usize) -> f64 {
    t_quantile(0.975, df)
}

/// `P(T <= t)` for Student's t with `df` degrees of freedom, `t >= 0`:
/// `1 - I_x(df/2, 1/2) / 2` with `x = df / (df + t^2)` (the regularized incomplete beta).
pub fn student_t_cdf(t: f64, df: usize) -> f64 {
    debug_assert!(t >= 0.0);
    let v = df as f64;
    let x = v / (v + t * t);
    1.0 - 0.5 * incomplete_beta(0.5 * v, 0.5, x)
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued fraction
/// (modified Lentz), using the symmetry `I_x(a, b) = 1 - I_{1-x}(b, a)` where the fraction
/// converges slowly.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const ITERATIONS_MAX: u32 = 10_000;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=ITERATIONS_MAX {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for num in [
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, 9 terms: about 15 significant
/// digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, &c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod t_tests {
    use super::*;

    /// Known 0.975 quantiles (any table of Student's t; R's `qt(0.975, df)`).
    #[test]
    fn t975_matches_published_quantiles() {
        for (df, want) in [
            (1, 12.7062),
            (2, 4.3027),
            (5, 2.5706),
            (10, 2.2281),
            (30, 2.0423),
            (40, 2.0211),
            (60, 2.0003),
            (120, 1.9799),
            (100_000, 1.9600),
        ] {
            let got = t975(df);
            assert!((got - want).abs() < 5e-4, "t975({df}) = {got}, want {want}");
        }
        assert!(t975(0).is_infinite());
        assert!((t_quantile(0.95, 10) - 1.8125).abs() < 5e-4);
    }

    #[test]
    fn t_cdf_is_monotone_and_symmetric_at_zero() {
        assert!((student_t_cdf(0.0, 7) - 0.5).abs() < 1e-12);
        let mut last = 0.5;
        for i in 1..200 {
            let c = student_t_cdf(f64::from(i) * 0.05, 7);
            assert!(c > last && c < 1.0);
            last = c;
        }
    }
}
