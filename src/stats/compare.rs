//! A/B comparison of kernel variants: the arithmetic and the text of the tables that
//! `schedlab compare` prints (ARCHITECTURE.md §3), in the layout scheduler patch reports on
//! LKML use (e.g. AMD's test reports: a `Test / Units / Interpretation / Statistic` header,
//! then cells `1.00 [ -0.00]( 2.39)` = mean normalized to the baseline, `[pct imp]` with the
//! sign chosen so that positive is better, and `(CV)` of the runs).
//!
//! What is computed, per metric and variant, over the runs of that variant:
//! - mean, sample stdev, CV = 100 × stdev / |mean| ([`Summary`]);
//! - normalized = mean / baseline mean;
//! - pct imp = ±100 × (normalized − 1), `+` for higher-is-better metrics, `−` for
//!   lower-is-better ones (so the baseline prints `-0.00` for lower-is-better metrics, as the
//!   posted reports do), and the plain change for informational counters;
//! - the paired delta: every variant runs on the same seeds as the baseline (common random
//!   numbers), so `d_i = variant_i − baseline_i` is the effect of the variant on the same
//!   random draws; its mean and sample stdev are reported. The stdev of the paired deltas is
//!   usually far below the runs' own spread, which is the point of common random numbers.
//!
//! Plus a perf-stat diff (perf's `( +- x% )` noise = 100 × stderr / mean, [`Summary::noise_pct`])
//! and a count diff (migrations by reason), each with the change against the baseline.
//!
//! Left out: significance tests (Welch / Mann-Whitney) and mmtests' per-sample geometric
//! means; the JSON carries every run's values for anyone who wants them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::perf::{PerfStat, thousands};
use super::report::RunResult;
use super::summary::{MetricColumns, Summary};
use crate::sched::types::MigrationReason;
use crate::units::{count_round, decimal_exponent};

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
    /// A count whose value depends on how much work got done (context switches in a
    /// fixed-time run grow with throughput), so neither direction is "better": `[pct imp]`
    /// shows the plain change.
    Informational,
}

impl Direction {
    /// The header's `Interpretation:` text.
    pub fn interpretation(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "Lower is better",
            Direction::HigherIsBetter => "Higher is better",
            Direction::Informational => "Informational ([pct imp] = plain change, no judgement)",
        }
    }

    fn sign(self) -> f64 {
        match self {
            Direction::LowerIsBetter => -1.0,
            Direction::HigherIsBetter | Direction::Informational => 1.0,
        }
    }
}

/// `mean / base_mean`, or `None` when the baseline mean is 0 (or not finite).
pub fn normalized(base_mean: f64, mean: f64) -> Option<f64> {
    let n = mean / base_mean;
    (base_mean != 0.0 && n.is_finite()).then_some(n)
}

/// Percent improvement from a normalized value: positive = better.
pub fn pct_imp(direction: Direction, normalized: f64) -> f64 {
    direction.sign() * (normalized - 1.0) * 100.0
}

/// Statistics of the per-seed differences `variant_i − baseline_i`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairedDelta {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation of the differences (n − 1; 0 for one pair).
    pub stdev: f64,
    /// 100 × mean difference / baseline mean (0 when the baseline mean is 0).
    pub pct_of_baseline: f64,
}

/// The paired delta of `variant` against `baseline` (same seeds, same order); `None` when
/// the lengths differ or there is no pair.
pub fn paired_delta(baseline: &[f64], variant: &[f64]) -> Option<PairedDelta> {
    if baseline.len() != variant.len() || baseline.is_empty() {
        return None;
    }
    let diffs: Vec<f64> = variant.iter().zip(baseline).map(|(v, b)| v - b).collect();
    let d = Summary::of(&diffs);
    let base = Summary::of(baseline);
    Some(PairedDelta {
        n: d.n,
        mean: d.mean,
        stdev: d.stdev,
        pct_of_baseline: if base.mean != 0.0 {
            100.0 * d.mean / base.mean
        } else {
            0.0
        },
    })
}

/// One variant's row of a metric table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub variant: String,
    /// `None`: the variant's runs do not have this metric.
    pub summary: Option<Summary>,
    pub normalized: Option<f64>,
    pub pct_imp: Option<f64>,
    /// `None` for the baseline itself and when the runs cannot be paired.
    pub paired_delta: Option<PairedDelta>,
    /// The per-run values, in seed order.
    pub values: Vec<f64>,
    /// Of those, the runs whose benchmark did not finish, when the metric is its own time
    /// or throughput ([`whole_run_metric`]): the row then says `not finished`, not a mean
    /// of capped values ([`Comparison::mark_unfinished`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub unfinished: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Whether `metric` is the benchmark's own time or throughput (`workload.time_s`, the
/// higher-is-better rates and totals): what a run cut short cannot measure (its time is the
/// cap, its rate the cut's), unlike a latency percentile over the part that ran.
pub fn whole_run_metric(metric: &str) -> bool {
    metric == "workload.time_s"
        || (metric.starts_with("workload.")
            && matches!(classify(metric), Some((Direction::HigherIsBetter, _))))
}

/// One metric across variants.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricTable {
    /// Dotted path in a run's results (`workload.time_s`).
    pub metric: String,
    /// The `Test:` line (the benchmark, or `perf stat`, ...).
    pub test: String,
    /// What the value is (`time in seconds`).
    pub units: String,
    pub interpretation: Direction,
    pub rows: Vec<Row>,
}

impl MetricTable {
    /// Build the table from per-variant run values; the first column is the baseline. `None`
    /// when the baseline lacks the metric.
    pub fn build(
        metric: &str,
        test: &str,
        units: &str,
        direction: Direction,
        columns: &[(String, Option<Vec<f64>>)],
    ) -> Option<MetricTable> {
        let base_values = columns.first()?.1.as_ref()?;
        let base = Summary::of(base_values);
        let rows = columns
            .iter()
            .enumerate()
            .map(|(i, (name, values))| match values {
                None => Row {
                    variant: name.clone(),
                    summary: None,
                    normalized: None,
                    pct_imp: None,
                    paired_delta: None,
                    values: Vec::new(),
                    unfinished: 0,
                },
                Some(v) => {
                    let s = Summary::of(v);
                    let norm = normalized(base.mean, s.mean);
                    Row {
                        variant: name.clone(),
                        summary: Some(s),
                        normalized: norm,
                        pct_imp: norm.map(|n| pct_imp(direction, n)),
                        paired_delta: if i == 0 {
                            None
                        } else {
                            paired_delta(base_values, v)
                        },
                        values: v.clone(),
                        unfinished: 0,
                    }
                }
            })
            .collect();
        Some(MetricTable {
            metric: metric.to_string(),
            test: test.to_string(),
            units: units.to_string(),
            interpretation: direction,
            rows,
        })
    }

    /// The table with `cut[v]` runs of variant `v` unfinished, for the benchmark's own
    /// time or throughput ([`whole_run_metric`]; other tables unchanged): those rows say `not
    /// finished`, and nothing is normalized to, or paired with, an unfinished baseline.
    fn mark_unfinished(&mut self, cut: &[usize]) {
        if !whole_run_metric(&self.metric) {
            return;
        }
        let base_cut = cut.first().is_some_and(|&n| n > 0);
        for (r, &n) in self.rows.iter_mut().zip(cut) {
            r.unfinished = n;
            if n > 0 || base_cut {
                r.normalized = None;
                r.pct_imp = None;
                r.paired_delta = None;
            }
        }
    }

    fn baseline_mean(&self) -> f64 {
        self.rows
            .first()
            .and_then(|r| r.summary)
            .map_or(0.0, |s| s.mean)
    }

    /// The table's header block: test, metric, units (with the baseline mean, or that the
    /// baseline did not finish), interpretation and statistic, between rules.
    fn render_header(&self, dec: usize) -> String {
        let rule = "=".repeat(66);
        let base_cut = self.rows.first().is_some_and(|r| r.unfinished > 0);
        let runs = self.rows.first().and_then(|r| r.summary).map_or(0, |s| s.n);
        let mut out = format!("{rule}\n");
        out.push_str(&format!("Test          : {}\n", self.test));
        out.push_str(&format!("Metric        : {}\n", self.metric));
        out.push_str(&match base_cut {
            true => format!("Units         : {} (baseline not finished)\n", self.units),
            false => format!(
                "Units         : Normalized {} (baseline mean {:.*})\n",
                self.units,
                dec,
                self.baseline_mean()
            ),
        });
        out.push_str(&format!(
            "Interpretation: {}\n",
            self.interpretation.interpretation()
        ));
        out.push_str(&format!(
            "Statistic     : AMean of {runs} run{}; paired delta = variant - baseline on the same seeds\n",
            if runs == 1 { "" } else { "s" }
        ));
        out.push_str(&rule);
        out.push('\n');
        out
    }

    /// The table as text.
    pub fn render(&self) -> String {
        let dec = decimals_for(self.baseline_mean());
        let mut out = self.render_header(dec);
        let name_w = self
            .rows
            .iter()
            .map(|r| r.variant.len())
            .chain(std::iter::once("Variant:".len()))
            .max()
            .unwrap_or(8);
        out.push_str(&format!(
            "{:<name_w$}  {:>20}  {:>14}  {}\n",
            "Variant:", "norm[pct imp](CV)", "mean", "paired delta (mean +- stdev)"
        ));
        for r in &self.rows {
            if r.unfinished > 0 {
                out.push_str(&format!(
                    "{:<name_w$}  not finished ({} of {} runs cut short)\n",
                    r.variant,
                    r.unfinished,
                    r.values.len()
                ));
                continue;
            }
            let Some(s) = r.summary else {
                out.push_str(&format!("{:<name_w$}  {:>20}\n", r.variant, "n/a"));
                continue;
            };
            let cell = lkml_cell(r.normalized, r.pct_imp, s.cv_pct);
            let delta = match r.paired_delta {
                None => "-".to_string(),
                Some(d) => format!(
                    "{:+.*} +- {:.*} ({:+.2}%)",
                    dec, d.mean, dec, d.stdev, d.pct_of_baseline
                ),
            };
            out.push_str(
                format!(
                    "{:<name_w$}  {cell:>20}  {:>14.*}  {delta}\n",
                    r.variant, dec, s.mean
                )
                .as_str(),
            );
        }
        out.push('\n');
        out
    }
}

/// The LKML cell `1.00 [ -0.00]( 2.39)`: normalized mean, `[pct imp]`, `(CV)`.
pub fn lkml_cell(normalized: Option<f64>, pct_imp: Option<f64>, cv_pct: f64) -> String {
    let norm = normalized.map_or_else(|| "   -".to_string(), |n| format!("{n:.2}"));
    let imp = pct_imp.map_or_else(|| format!("{:>6}", "-"), |p| format!("{p:6.2}"));
    format!("{norm} [{imp}]({cv_pct:5.2})")
}

/// Decimals that show about four significant digits of `v` (at most 6).
pub fn decimals_for(v: f64) -> usize {
    if v == 0.0 || !v.is_finite() {
        return 2;
    }
    let d = (3 - decimal_exponent(v)).clamp(0, 6);
    usize::try_from(d).expect("clamped to 0..=6")
}

/// How the table for a metric path is labelled, or `None` when the path is not a metric
/// `compare` tabulates. Directions follow the benchmarks' own documentation (time and
/// latency lower, throughput higher); counters are [`Direction::Informational`].
pub fn classify(metric: &str) -> Option<(Direction, &'static str)> {
    use Direction::*;
    if let Some(w) = metric.strip_prefix("workload.") {
        let leaf = w.rsplit('.').next().unwrap_or(w);
        let class = match w {
            "time_s" => (LowerIsBetter, "time in seconds"),
            "rps_avg" => (HigherIsBetter, "requests per second"),
            "throughput" | "throughput_rps" => (HigherIsBetter, "throughput"),
            "bogo_ops" => (HigherIsBetter, "bogo ops"),
            "bogo_ops_per_s" | "bogo_ops_per_s_cpu" => (HigherIsBetter, "bogo ops/s"),
            "round_trips" | "loop_count" | "transactions" => (HigherIsBetter, "operations"),
            "max_latency_ms" => (LowerIsBetter, "latency in ms"),
            // The NUMA-balancing workloads (web, jbb, stream, linpack).
            "requests_per_s" => (HigherIsBetter, "requests per second"),
            "bops" => (HigherIsBetter, "business operations per second"),
            "gflops" => (HigherIsBetter, "GFLOPS"),
            "bandwidth_mb_s" => (HigherIsBetter, "memory bandwidth in MB/s"),
            _ if w.starts_with("kernel_bandwidth_mb_s.") => {
                (HigherIsBetter, "memory bandwidth in MB/s")
            }
            _ if w.starts_with("response_ms_") => (LowerIsBetter, "response time in ms"),
            "gc_pause_ms_avg" => (LowerIsBetter, "GC pause in ms"),
            _ if w.starts_with("sched_delay_") => (LowerIsBetter, "sched delay in us"),
            _ if w.contains("latency_us.") => (LowerIsBetter, "latency in us"),
            _ if w.starts_with("response_time_ms.") => (LowerIsBetter, "response time in ms"),
            _ if leaf.ends_with("_s") => (Informational, "seconds"),
            _ => (Informational, "value"),
        };
        return Some(class);
    }
    match metric {
        "latency_us.wakeup.p50" | "latency_us.wakeup.p99" => {
            Some((LowerIsBetter, "wakeup latency in us"))
        }
        "perf_stat.task_clock_ms" => Some((Informational, "task-clock in msec")),
        "perf_stat.context_switches" => Some((Informational, "context switches")),
        "perf_stat.cpu_migrations" => Some((Informational, "cpu migrations")),
        "migrations.total" => Some((Informational, "migrations")),
        _ if metric.starts_with("schedstat.by_idle_type.newly_idle.") => {
            Some((Informational, "newly-idle balance count"))
        }
        _ => None,
    }
}

/// Whether a metric is always tabulated, even when no variant changes it: the benchmark's
/// directional (headline) numbers, wakeup latency, perf counters and the migration total.
/// Informational workload keys and the schedstat counters (dozens of them) only when some
/// run of some variant differs.
fn headline(metric: &str) -> bool {
    if metric.starts_with("workload.") {
        !matches!(classify(metric), Some((Direction::Informational, _)) | None)
    } else {
        !metric.starts_with("schedstat.")
    }
}

/// The `Test:` line for a metric.
fn test_name(metric: &str, workload_kind: &str) -> String {
    match metric.split('.').next().unwrap_or_default() {
        "workload" => workload_kind.to_string(),
        "latency_us" => "wakeup latency (enqueue to run)".to_string(),
        "perf_stat" => "perf stat".to_string(),
        "migrations" => "migrations".to_string(),
        "schedstat" => "schedstat (newly idle balancing)".to_string(),
        other => other.to_string(),
    }
}

/// The tabulated metrics of one run: every numeric metric of `workload`, wakeup latency
/// P50/P99, the perf counters, the migration total, and the newly-idle schedstat counters
/// when the policy reports them (see [`classify`]).
pub fn metric_values(run: &RunResult) -> BTreeMap<String, f64> {
    run.metrics()
        .into_iter()
        .filter(|(k, _)| classify(k).is_some())
        .collect()
}

/// One row of a diff block (perf stat, migrations by reason).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    pub label: String,
    /// Per variant (baseline first): the summary over its runs.
    pub variants: Vec<DiffCell>,
}

/// One variant's value in a [`DiffRow`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffCell {
    pub variant: String,
    pub mean: f64,
    /// perf's `+-`: 100 × standard error / mean.
    pub noise_pct: f64,
    /// 100 × (mean − baseline mean) / baseline mean; `None` for the baseline or a 0 baseline.
    pub change_pct: Option<f64>,
}

impl DiffRow {
    /// Build from per-variant run values (baseline first).
    pub fn build(label: &str, names: &[String], values: &[Vec<f64>]) -> DiffRow {
        let base = Summary::of(values.first().map_or(&[][..], |v| v.as_slice()));
        DiffRow {
            label: label.to_string(),
            variants: names
                .iter()
                .zip(values)
                .enumerate()
                .map(|(i, (name, v))| {
                    let s = Summary::of(v);
                    DiffCell {
                        variant: name.clone(),
                        mean: s.mean,
                        noise_pct: s.noise_pct(),
                        change_pct: (i > 0 && base.mean != 0.0)
                            .then(|| 100.0 * (s.mean - base.mean) / base.mean),
                    }
                })
                .collect(),
        }
    }
}

/// How a diff block prints its values.
#[derive(Clone, Copy, Debug)]
enum ValueFmt {
    /// Fixed decimals.
    Fixed(usize),
    /// Integer counts with thousands separators.
    Count,
}

fn fmt_value(v: f64, f: ValueFmt) -> String {
    match f {
        ValueFmt::Fixed(d) => format!("{v:.d$}"),
        // Whole counts below 2^64 get thousands separators; anything else prints as a float.
        ValueFmt::Count if (0.0..1.8e19).contains(&v) && v.fract() == 0.0 => {
            thousands(count_round(v))
        }
        // A mean over runs need not be whole: one decimal.
        ValueFmt::Count => format!("{v:.1}"),
    }
}

fn change_cell(c: &DiffCell, base_mean: f64) -> String {
    match c.change_pct {
        Some(p) => format!("[{p:+7.2}%]"),
        None if c.mean == base_mean => format!("[{:>8}]", "="),
        None => format!("[{:>8}]", "new"),
    }
}

fn render_diff(
    title: &str,
    rows: &[(DiffRow, ValueFmt)],
    with_noise: bool,
    label_w: usize,
) -> String {
    let mut out = String::new();
    out.push_str(title);
    out.push('\n');
    let Some((first, _)) = rows.first() else {
        return out;
    };
    let value_w = 14;
    let noise_w = if with_noise { 14 } else { 0 };
    // baseline: value [+ noise]; others: value [+ noise] + change (11).
    out.push_str(&format!("{:<label_w$}", ""));
    for (i, c) in first.variants.iter().enumerate() {
        let w = value_w + noise_w + if i > 0 { 11 } else { 0 };
        out.push_str(&format!(" {:>w$}", c.variant));
    }
    out.push('\n');
    for (row, f) in rows {
        let base_mean = row.variants.first().map_or(0.0, |c| c.mean);
        let mut line = format!("{:<label_w$}", row.label);
        for (i, c) in row.variants.iter().enumerate() {
            line.push_str(&format!(" {:>value_w$}", fmt_value(c.mean, *f)));
            if with_noise {
                line.push_str(&format!(" ( +-{:6.2}% )", c.noise_pct));
            }
            if i > 0 {
                line.push(' ');
                line.push_str(&change_cell(c, base_mean));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The perf-stat diff rows: task-clock, context-switches, cpu-migrations, CPUs utilized,
/// elapsed, per variant over its runs.
pub fn perf_diff(names: &[String], perfs: &[Vec<PerfStat>]) -> Vec<DiffRow> {
    let col = |f: fn(&PerfStat) -> f64| -> Vec<Vec<f64>> {
        perfs
            .iter()
            .map(|runs| runs.iter().map(f).collect())
            .collect()
    };
    vec![
        DiffRow::build("task-clock (msec)", names, &col(|p| p.task_clock_ms)),
        DiffRow::build(
            "context-switches",
            names,
            &col(|p| p.context_switches as f64),
        ),
        DiffRow::build("cpu-migrations", names, &col(|p| p.cpu_migrations as f64)),
        DiffRow::build("CPUs utilized", names, &col(|p| p.cpus_utilized)),
        DiffRow::build("seconds time elapsed", names, &col(|p| p.elapsed_s)),
    ]
}

/// Render the perf-stat diff.
pub fn render_perf_diff(rows: &[DiffRow], runs: usize) -> String {
    let fmts = [
        ValueFmt::Fixed(2),
        ValueFmt::Count,
        ValueFmt::Count,
        ValueFmt::Fixed(3),
        ValueFmt::Fixed(6),
    ];
    let rows: Vec<(DiffRow, ValueFmt)> = rows.iter().cloned().zip(fmts).collect();
    render_diff(
        &format!(
            "perf stat diff (mean of {runs} run{} per variant; ( +- x% ) is perf's noise, \
             100 x stderr / mean; [x%] is the change vs the baseline)",
            if runs == 1 { "" } else { "s" }
        ),
        &rows,
        true,
        22,
    )
}

/// Migrations by reason (kernel order, reasons no variant ever used left out), the total
/// and the ping-pong count, per variant over its runs.
pub fn migration_diff(names: &[String], runs: &[Vec<&RunResult>]) -> Vec<DiffRow> {
    let get = |f: &dyn Fn(&RunResult) -> u64| -> Vec<Vec<f64>> {
        runs.iter()
            .map(|rs| rs.iter().map(|r| f(r) as f64).collect())
            .collect()
    };
    let mut rows = Vec::new();
    for reason in MigrationReason::ALL {
        let values = get(&|r| r.migrations.reason(reason));
        if values.iter().flatten().any(|&v| v != 0.0) {
            rows.push(DiffRow::build(reason.name(), names, &values));
        }
    }
    rows.push(DiffRow::build(
        "total",
        names,
        &get(&|r| r.migrations.total),
    ));
    rows.push(DiffRow::build(
        "ping_pong",
        names,
        &get(&|r| r.migrations.ping_pong),
    ));
    rows
}

/// [`migration_diff`] from each variant's metric columns (`migrations.by_reason.*`,
/// `migrations.total`, `migrations.ping_pong`; 0 for a count a run lacks, as
/// [`crate::stats::report::Migrations::reason`] gives).
pub fn migration_diff_of_columns(names: &[String], columns: &[MetricColumns]) -> Vec<DiffRow> {
    let get = |key: &str| -> Vec<Vec<f64>> {
        columns
            .iter()
            .map(|c| {
                c.column(key)
                    .map_or_else(|| vec![0.0; c.runs()], <[f64]>::to_vec)
            })
            .collect()
    };
    let mut rows = Vec::new();
    for reason in MigrationReason::ALL {
        let values = get(&format!("migrations.by_reason.{}", reason.name()));
        if values.iter().flatten().any(|&v| v != 0.0) {
            rows.push(DiffRow::build(reason.name(), names, &values));
        }
    }
    rows.push(DiffRow::build("total", names, &get("migrations.total")));
    rows.push(DiffRow::build(
        "ping_pong",
        names,
        &get("migrations.ping_pong"),
    ));
    rows
}

/// Render the migrations-by-reason diff.
pub fn render_migration_diff(rows: &[DiffRow]) -> String {
    let rows: Vec<(DiffRow, ValueFmt)> = rows
        .iter()
        .map(|r| (r.clone(), ValueFmt::Fixed(1)))
        .collect();
    render_diff(
        "migrations by reason (mean per run; reasons no variant used are left out; \
         [x%] is the change vs the baseline)",
        &rows,
        false,
        22,
    )
}

/// Everything `compare` reports, as data (the `comparison` object of its JSON).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Variant names, baseline first.
    pub variants: Vec<String>,
    /// The seeds every variant ran with, in run order.
    pub seeds: Vec<u64>,
    pub metrics: Vec<MetricTable>,
    pub perf_stat: Vec<DiffRow>,
    pub migrations_by_reason: Vec<DiffRow>,
}

impl Comparison {
    /// Compare runs: `runs[v]` are variant `v`'s results (seed order),
    /// `perfs[v]` its perf counters; index 0 is the baseline. `workload_kind` names the
    /// `Test:` of workload metrics.
    pub fn build(
        names: &[String],
        seeds: &[u64],
        runs: &[Vec<&RunResult>],
        perfs: &[Vec<PerfStat>],
        workload_kind: &str,
    ) -> Comparison {
        let columns: Vec<MetricColumns> = runs
            .iter()
            .map(|rs| MetricColumns::of(rs.iter().map(|r| r.metrics())))
            .collect();
        let migrations = migration_diff(names, runs);
        Self::from_columns(names, seeds, &columns, perfs, migrations, workload_kind)
    }

    /// [`Comparison::build`] from each variant's metric columns (its runs' metrics in seed
    /// order, [`MetricColumns`]) and the migrations-by-reason rows ([`migration_diff`],
    /// [`migration_diff_of_columns`]): the runs themselves need not be kept.
    pub fn from_columns(
        names: &[String],
        seeds: &[u64],
        columns: &[MetricColumns],
        perfs: &[Vec<PerfStat>],
        migrations_by_reason: Vec<DiffRow>,
        workload_kind: &str,
    ) -> Comparison {
        // Per variant, per metric: the values of every run (None if any run lacks it).
        let per_variant: Vec<BTreeMap<String, Option<Vec<f64>>>> = columns
            .iter()
            .map(|c| c.complete(|k| classify(k).is_some()))
            .collect();
        let mut metrics = Vec::new();
        if let Some(base) = per_variant.first() {
            for (key, base_col) in ordered(base) {
                let Some(_) = base_col else { continue };
                let Some((direction, units)) = classify(key) else {
                    continue;
                };
                let columns: Vec<(String, Option<Vec<f64>>)> = names
                    .iter()
                    .zip(&per_variant)
                    .map(|(n, m)| (n.clone(), m.get(key).cloned().flatten()))
                    .collect();
                let varies = columns
                    .iter()
                    .flat_map(|(_, c)| c.iter().flatten())
                    .any(|&v| Some(v) != base_col.as_ref().and_then(|b| b.first().copied()));
                if !headline(key) && !varies {
                    continue;
                }
                if let Some(t) = MetricTable::build(
                    key,
                    &test_name(key, workload_kind),
                    units,
                    direction,
                    &columns,
                ) {
                    metrics.push(t);
                }
            }
        }
        let perf_stat = perf_diff(names, perfs);
        Comparison {
            variants: names.to_vec(),
            seeds: seeds.to_vec(),
            metrics,
            perf_stat,
            migrations_by_reason,
        }
    }

    /// Mark the benchmark's own time and throughput tables for runs that did not finish:
    /// `cut[v]` of variant `v`'s runs (`MetricTable::mark_unfinished`).
    pub fn mark_unfinished(&mut self, cut: &[usize]) {
        for t in &mut self.metrics {
            t.mark_unfinished(cut);
        }
    }

    /// All tables as text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for t in &self.metrics {
            out.push_str(&t.render());
        }
        out.push_str(&render_perf_diff(&self.perf_stat, self.seeds.len()));
        out.push_str(&render_migration_diff(&self.migrations_by_reason));
        out
    }
}

/// Metrics in report order: the benchmark's own first, then wakeup latency, perf counters,
/// migrations, schedstat (each group in key order).
fn ordered<T>(m: &BTreeMap<String, T>) -> Vec<(&String, &T)> {
    let group = |k: &str| match k.split('.').next().unwrap_or_default() {
        "workload" => 0,
        "latency_us" => 1,
        "perf_stat" => 2,
        "migrations" => 3,
        _ => 4,
    };
    let mut v: Vec<(&String, &T)> = m.iter().collect();
    v.sort_by_key(|(k, _)| group(k));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn pct_imp_signs_follow_the_direction() {
        // hackbench time 2.0 s → 1.9 s: normalized 0.95, a 5 % improvement.
        let n = normalized(2.0, 1.9).unwrap();
        assert!(close(n, 0.95));
        assert!(close(pct_imp(Direction::LowerIsBetter, n), 5.0));
        // schbench RPS 1000 → 1100: normalized 1.10, a 10 % improvement.
        let n = normalized(1000.0, 1100.0).unwrap();
        assert!(close(pct_imp(Direction::HigherIsBetter, n), 10.0));
        // The same ratio is a regression when lower is better.
        assert!(close(pct_imp(Direction::LowerIsBetter, n), -10.0));
        // Informational: the plain change.
        assert!(close(pct_imp(Direction::Informational, 0.8), -20.0));
        // Baseline: -0.00 for lower-is-better (as in the posted reports), 0.00 otherwise.
        assert_eq!(
            format!("{:.2}", pct_imp(Direction::LowerIsBetter, 1.0)),
            "-0.00"
        );
        assert_eq!(
            format!("{:.2}", pct_imp(Direction::HigherIsBetter, 1.0)),
            "0.00"
        );
        assert_eq!(normalized(0.0, 3.0), None);
    }

    #[test]
    fn paired_delta_by_hand() {
        // baseline 10, 12, 14; variant 11, 12.5, 15.5 → d = 1, 0.5, 1.5: mean 1, s = 0.5.
        let d = paired_delta(&[10.0, 12.0, 14.0], &[11.0, 12.5, 15.5]).unwrap();
        assert_eq!(d.n, 3);
        assert!(close(d.mean, 1.0));
        assert!(close(d.stdev, 0.5));
        // 100 × 1 / 12.
        assert!(close(d.pct_of_baseline, 100.0 / 12.0));
        assert_eq!(paired_delta(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(paired_delta(&[], &[]), None);
        // One pair: stdev 0.
        let one = paired_delta(&[4.0], &[5.0]).unwrap();
        assert_eq!((one.mean, one.stdev), (1.0, 0.0));
    }

    #[test]
    fn table_arithmetic_by_hand() {
        // Lower is better. baseline: 2, 4 (mean 3, s = √2, CV = 47.14 %);
        // v: 1.5, 3.0 (mean 2.25, s = 1.06066, CV = 47.14 %): norm 0.75, imp +25 %.
        let cols = vec![
            ("base".to_string(), Some(vec![2.0, 4.0])),
            ("v".to_string(), Some(vec![1.5, 3.0])),
            ("gone".to_string(), None),
        ];
        let t = MetricTable::build(
            "workload.time_s",
            "hackbench",
            "time in seconds",
            Direction::LowerIsBetter,
            &cols,
        )
        .unwrap();
        let b = &t.rows[0];
        assert_eq!(b.normalized, Some(1.0));
        assert!(close(b.summary.unwrap().cv_pct, 100.0 * 2f64.sqrt() / 3.0));
        assert_eq!(b.paired_delta, None);
        let v = &t.rows[1];
        assert!(close(v.normalized.unwrap(), 0.75));
        assert!(close(v.pct_imp.unwrap(), 25.0));
        assert!(close(
            v.summary.unwrap().cv_pct,
            100.0 * 1.125f64.sqrt() / 2.25
        ));
        // d = -0.5, -1.0: mean -0.75, s = 0.353553.
        let d = v.paired_delta.unwrap();
        assert!(close(d.mean, -0.75));
        assert!(close(d.stdev, 0.5f64.sqrt() / 2.0));
        assert!(close(d.pct_of_baseline, -25.0));
        assert_eq!(t.rows[2].summary, None);
        // No baseline values: no table.
        let none = MetricTable::build(
            "x",
            "t",
            "u",
            Direction::LowerIsBetter,
            &[("base".to_string(), None)],
        );
        assert!(none.is_none());
    }

    #[test]
    fn golden_table() {
        let cols = vec![
            ("baseline".to_string(), Some(vec![2.0, 4.0])),
            ("fast".to_string(), Some(vec![1.5, 3.0])),
            ("missing".to_string(), None),
        ];
        let t = MetricTable::build(
            "workload.time_s",
            "hackbench",
            "time in seconds",
            Direction::LowerIsBetter,
            &cols,
        )
        .unwrap();
        let expected = "\
==================================================================
Test          : hackbench
Metric        : workload.time_s
Units         : Normalized time in seconds (baseline mean 3.000)
Interpretation: Lower is better
Statistic     : AMean of 2 runs; paired delta = variant - baseline on the same seeds
==================================================================
Variant:     norm[pct imp](CV)            mean  paired delta (mean +- stdev)
baseline  1.00 [ -0.00](47.14)           3.000  -
fast      0.75 [ 25.00](47.14)           2.250  -0.750 +- 0.354 (-25.00%)
missing                    n/a

";
        assert_eq!(t.render(), expected);
    }

    #[test]
    fn lkml_cell_layout() {
        assert_eq!(
            lkml_cell(Some(1.0), Some(-0.0), 2.39),
            "1.00 [ -0.00]( 2.39)"
        );
        assert_eq!(
            lkml_cell(Some(0.56), Some(44.444), 41.66),
            "0.56 [ 44.44](41.66)"
        );
        assert_eq!(lkml_cell(None, None, 0.0), "   - [     -]( 0.00)");
    }

    #[test]
    fn perf_diff_noise_is_stderr_over_mean() {
        let mk = |ms: f64, cs: u64| PerfStat {
            task_clock_ms: ms,
            context_switches: cs,
            cpu_migrations: 0,
            cpus_utilized: 1.0,
            elapsed_s: 0.5,
        };
        let names = vec!["base".to_string(), "v".to_string()];
        let rows = perf_diff(
            &names,
            &[
                vec![mk(100.0, 10), mk(110.0, 10)],
                vec![mk(120.0, 12), mk(130.0, 14)],
            ],
        );
        // task-clock base: mean 105, s = 7.0711, stderr 5 → noise 4.762 %.
        let tc = &rows[0].variants;
        assert!(close(tc[0].mean, 105.0));
        assert!(close(tc[0].noise_pct, 100.0 * 5.0 / 105.0));
        assert_eq!(tc[0].change_pct, None);
        // v: mean 125 → +19.048 %; stderr 5 → noise 4.0 %.
        assert!(close(tc[1].change_pct.unwrap(), 100.0 * 20.0 / 105.0));
        assert!(close(tc[1].noise_pct, 4.0));
        let text = render_perf_diff(&rows, 2);
        assert!(text.contains("( +-  4.76% )"), "{text}");
        assert!(text.contains("125.00 ( +-  4.00% ) [ +19.05%]"), "{text}");
        // context-switches 10 → 13 (+30 %), printed as counts.
        assert!(text.contains("13 ( +-  7.69% ) [ +30.00%]"), "{text}");
    }

    #[test]
    fn constant_side_metrics_are_left_out() {
        let run = |t: f64, pairs: u64, lb: u64, hot: u64| {
            serde_json::json!({
                "workload": { "kind": "k", "time_s": t, "pairs": pairs },
                "perf_stat": { "context_switches": 5 },
                "migrations": { "total": 0 },
                "schedstat": { "by_idle_type": { "newly_idle": {
                    "lb_count": lb, "lb_hot_gained": hot } } },
            })
        };
        let typed = |v| serde_json::from_value::<RunResult>(v).unwrap();
        let (a, b) = (typed(run(1.0, 2, 7, 0)), typed(run(1.0, 2, 9, 0)));
        let names = vec!["base".to_string(), "v".to_string()];
        let c = Comparison::build(&names, &[1], &[vec![&a], vec![&b]], &[vec![], vec![]], "k");
        let metrics: Vec<&str> = c.metrics.iter().map(|t| t.metric.as_str()).collect();
        // time_s never changes but is the benchmark's headline, as are the perf counters
        // (every typed run has all three); pairs (informational, constant) and lb_hot_gained
        // (constant) are left out; lb_count changed.
        assert_eq!(
            metrics,
            [
                "workload.time_s",
                "perf_stat.context_switches",
                "perf_stat.cpu_migrations",
                "perf_stat.task_clock_ms",
                "migrations.total",
                "schedstat.by_idle_type.newly_idle.lb_count"
            ]
        );
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify("workload.time_s").unwrap().0,
            Direction::LowerIsBetter
        );
        assert_eq!(
            classify("workload.rps_avg").unwrap().0,
            Direction::HigherIsBetter
        );
        assert_eq!(
            classify("workload.wakeup_latency_us.p99").unwrap().0,
            Direction::LowerIsBetter
        );
        assert_eq!(
            classify("latency_us.wakeup.p99").unwrap().0,
            Direction::LowerIsBetter
        );
        assert_eq!(classify("latency_us.wakeup.samples"), None);
        assert_eq!(
            classify("perf_stat.cpu_migrations").unwrap().0,
            Direction::Informational
        );
        assert_eq!(classify("perf_stat.elapsed_s"), None);
    }

    #[test]
    fn metric_values_tolerate_null_schedstat() {
        let run = serde_json::json!({
            "workload": { "kind": "hackbench", "time_s": 1.5 },
            "latency_us": { "wakeup": { "p50": 3.0, "p99": 9.0, "samples": 4 } },
            "perf_stat": { "task_clock_ms": 1.0, "context_switches": 2, "cpu_migrations": 3,
                           "cpus_utilized": 1.0, "elapsed_s": 1.0 },
            "migrations": { "total": 3, "by_reason": { "wakeup": 3 }, "ping_pong": 0 },
            "schedstat": null,
        });
        let typed = |v: &serde_json::Value| serde_json::from_value::<RunResult>(v.clone()).unwrap();
        let m = metric_values(&typed(&run));
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "latency_us.wakeup.p50",
                "latency_us.wakeup.p99",
                "migrations.total",
                "perf_stat.context_switches",
                "perf_stat.cpu_migrations",
                "perf_stat.task_clock_ms",
                "workload.time_s"
            ]
        );
        let mut with = run.clone();
        with["schedstat"] = serde_json::json!({
            "by_idle_type": { "newly_idle": { "lb_count": 7, "lb_gained": 2 } } });
        let m = metric_values(&typed(&with));
        assert_eq!(m["schedstat.by_idle_type.newly_idle.lb_count"], 7.0);
    }
}
