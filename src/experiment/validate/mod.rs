//! `schedlab validate`: the corpus of published scheduler results (`validation/cases/`), run
//! on the model, scored as a simulator's validation suite is: per case the real and the
//! simulated change with their intervals, sign agreement, the ratio of their sizes, within
//! 2x, and whether the difference is inside the combined noise; in total the share of scored
//! cases with the right sign and within 2x and the median absolute log-ratio.
//!
//! Each case runs both sides on the same seeds (paired), the sides' runs of a case in one
//! parallel pool; results are cached per binary and case file ([`cache`]). The guard
//! ([`guard`]) compares a scoreboard with the one recorded in docs/validation.md.

pub mod cache;
pub mod case;
pub mod guard;

use serde::Serialize;

use crate::error::{InputError, InputResult};
use crate::experiment::{RunContext, RunOutput, run_variants_in};
use crate::stats::summary::{Summary, t975};
use case::{Case, RegimeSide, Transform};

/// How `validate` runs the corpus.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--set KEY=VALUE` for both sides of every case (results then not cached).
    pub sets: Vec<String>,
    /// Score a case whose benchmark did not finish in some run (cut by its time cap);
    /// otherwise such a case gets no simulated change and says why.
    pub allow_incomplete: bool,
}

/// The simulated side of one case.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct SimResult {
    /// Per seed, the published metric (after the case's transform) of each side.
    pub base: Vec<f64>,
    pub change: Vec<f64>,
    /// Runs whose benchmark did not finish (the metric is then not comparable).
    pub incomplete_runs: u32,
    /// Scheduling-watchdog findings in the case's runs.
    pub warnings: u32,
    /// Per `[[regime]]` check of the case, the model's number in each run of its side.
    #[serde(default)]
    pub regime: Vec<Vec<f64>>,
}

/// A published counter of a case beside the model's mean over the runs of the same side.
#[derive(Clone, Debug, Serialize)]
pub struct RegimeScore {
    /// The counter as the case file gives it (its fields appear flat in the JSON).
    #[serde(flatten)]
    pub check: case::RegimeCheck,
    pub sim: Option<f64>,
    /// `sim / real`.
    pub ratio: Option<f64>,
    /// `0.5 <= ratio <= 2`.
    pub within_2x: Option<bool>,
}

/// One row of the scoreboard.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CaseScore {
    pub id: String,
    pub title: String,
    pub benchmark: String,
    pub machine: String,
    pub group: String,
    pub source: String,
    pub date: String,
    pub measured_by: String,
    pub quick: bool,
    pub scored: bool,
    pub reason: String,
    pub fitted_from: bool,
    /// Global fitted inputs the case's runs use (`CostModel::fitted_inputs`), each naming
    /// what it was fitted to.
    pub fitted_inputs: Vec<String>,
    pub metric: String,
    pub real_change_pct: f64,
    /// Half-width of the real change's 95 % interval, from the published variation (when
    /// given).
    pub real_ci_pct: Option<f64>,
    pub sim_change_pct: Option<f64>,
    /// Half-width of the simulated change's 95 % interval (paired, over seeds).
    pub sim_ci_pct: Option<f64>,
    pub runs: u32,
    /// Same sign as the published change.
    pub sign_ok: Option<bool>,
    /// `sim / real`.
    pub ratio: Option<f64>,
    /// Same sign and `0.5 <= ratio <= 2`.
    pub within_2x: Option<bool>,
    /// The simulated change's interval contains 0: the model's effect is inside its noise.
    pub sim_in_noise: Option<bool>,
    /// `|sim - real|` is within the combined intervals.
    pub agrees_within_noise: Option<bool>,
    pub incomplete_runs: u32,
    pub warnings: u32,
    /// The case's published counters (`[[regime]]`) against the model's: is the case run in
    /// the published regime? Reported, not scored.
    pub regime: Vec<RegimeScore>,
    /// Served from the cache.
    pub cached: bool,
}

/// The totals over scored cases.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub cases: usize,
    pub scored: usize,
    /// Scored cases that ran (all of them unless `--case` / `--quick` selected fewer).
    pub ran: usize,
    pub sign_ok: usize,
    pub within_2x: usize,
    pub sign_ok_pct: f64,
    pub within_2x_pct: f64,
    /// Median of `|ln(|sim| / |real|)|` over the scored cases that ran.
    pub median_abs_log_ratio: f64,
    pub sim_in_noise: usize,
    /// Scored cases that ran whose simulated change is outside its own noise (its 95 %
    /// interval over the seeds excludes 0): the model's decisive predictions. The sign of a
    /// change inside its noise is a coin the next perturbation may flip, so the right-sign
    /// share over these is the one a developer can lean on.
    pub decisive: usize,
    /// Decisive cases with the published sign.
    pub decisive_sign_ok: usize,
    pub fitted_from: usize,
    /// Scored cases that ran with a global fitted input (`CaseScore::fitted_inputs`).
    pub with_fitted_input: usize,
    /// Independent sources (`source.group`) among the scored cases that ran.
    pub groups: usize,
    /// Published counters (`[[regime]]`) of the scored cases that ran, and how many of them
    /// the model's runs reproduce within 2x.
    pub regime_checks: usize,
    pub regime_within_2x: usize,
}

/// The whole scoreboard.
#[derive(Clone, Debug, Serialize)]
pub struct Scoreboard {
    pub cases: Vec<CaseScore>,
    pub totals: Totals,
}

/// Run the scored `cases` and score them (unscored ones get a row without a result).
/// `extra_sets`: `--set KEY=VALUE` applied to both sides of every case (then no cache).
/// `cache`: where results are kept per binary and case file.
pub fn validate(
    ctx: &RunContext,
    cases: &[Case],
    opts: &Options,
    cache: Option<&cache::Cache>,
    progress: &dyn Fn(&str),
) -> InputResult<Scoreboard> {
    let extra_sets = &opts.sets[..];
    let mut rows = Vec::with_capacity(cases.len());
    for case in cases {
        if ctx.stopped() {
            break;
        }
        let f = &case.file;
        if !f.scoring.scored {
            rows.push(score(case, None, false, opts.allow_incomplete));
            continue;
        }
        let fitted_inputs = fitted_inputs_of(case, extra_sets)?;
        let cache = cache.filter(|_| extra_sets.is_empty());
        let (sim, cached) = match cache.and_then(|c| c.get(case)) {
            Some(sim) => (sim, true),
            None => {
                progress(&format!(
                    "validate: {} ({} runs per side)",
                    case.id, f.command.runs
                ));
                let sim = simulate(ctx, case, extra_sets)?;
                if let Some(c) = cache
                    && !ctx.stopped()
                {
                    c.put(case, &sim);
                }
                (sim, false)
            }
        };
        let allow = opts.allow_incomplete || declares_its_cut(case, extra_sets);
        rows.push(CaseScore {
            fitted_inputs,
            ..score(case, Some(&sim), cached, allow)
        });
    }
    let totals = totals(&rows);
    Ok(Scoreboard {
        cases: rows,
        totals,
    })
}

/// The global fitted inputs `case` runs with: its base side's machine and cost model
/// resolved (both sides share the machine; `--set` overrides included, so a table that
/// replaces the fitted value does not count).
fn fitted_inputs_of(case: &Case, extra_sets: &[String]) -> InputResult<Vec<String>> {
    let scn = case.scenario(&case.file.base, extra_sets)?;
    let machine = super::resolve_machine(&scn)?;
    let cost = super::resolve_cost(&scn, &machine)?;
    Ok(cost.fitted_inputs(&machine.name))
}

/// Whether the case itself cuts its runs short on purpose: it sets `[command] duration_s`
/// (a cap for a long benchmark, whose metric must then be a rate: validation/README.md) and
/// `validate --set` does not change the cap. Its cut runs are scored and marked, as
/// `--allow-incomplete` would; any other cut needs the flag.
pub fn declares_its_cut(case: &Case, extra_sets: &[String]) -> bool {
    case.file.command.duration_s.is_some()
        && !extra_sets
            .iter()
            .any(|s| s.trim_start().starts_with("run.duration_s"))
}

/// Run both sides of `case` on the same seeds.
pub fn simulate(ctx: &RunContext, case: &Case, extra_sets: &[String]) -> InputResult<SimResult> {
    let f = &case.file;
    let base = case.scenario(&f.base, extra_sets)?;
    let change = case.scenario(&f.change, extra_sets)?;
    let seeds: Vec<u64> = (0..u64::from(f.command.runs))
        .map(|i| crate::rng::run_seed(base.run.seed, i))
        .collect();
    let runs = run_variants_in(ctx, &[&base, &change], &seeds, &case.id)?;
    let origin = case.path.display().to_string();
    let mut sim = SimResult {
        base: Vec::new(),
        change: Vec::new(),
        incomplete_runs: 0,
        warnings: 0,
        regime: vec![Vec::new(); f.regime.len()],
    };
    for (side, out) in runs.iter().enumerate() {
        for r in out {
            // One JSON view of the run for every number read from it.
            let doc = serde_json::to_value(&r.result).ok();
            let number = |path: &str| doc.as_ref().and_then(|d| lookup_path(d, path));
            let side_of = if side == 0 {
                RegimeSide::Base
            } else {
                RegimeSide::Change
            };
            for (i, check) in f.regime.iter().enumerate() {
                if check.side == side_of {
                    sim.regime[i].push(regime_value(&number, check, i, &origin)?);
                }
            }
            let v = number(&f.metric.path).ok_or_else(|| {
                InputError::with_key(
                    &origin,
                    "metric.path",
                    format!(
                        "{} is not a number in the results' runs[] (e.g. workload.time_s, \
                             perf_stat.cpu_migrations, latency_us.wakeup.p99)",
                        f.metric.path
                    ),
                )
            })?;
            let v = match f.metric.transform {
                Transform::None => v,
                Transform::Reciprocal => 1.0 / v,
            };
            sim.incomplete_runs += u32::from(!r.workload_complete || !r.complete);
            sim.warnings += r.result.warnings.len() as u32;
            if side == 0 {
                sim.base.push(v);
            } else {
                sim.change.push(v);
            }
        }
    }
    Ok(sim)
}

/// The model's number for one published counter in one run (`number`: the run's number at a
/// path; `i`: the counter's index, for errors).
fn regime_value(
    number: &dyn Fn(&str) -> Option<f64>,
    check: &case::RegimeCheck,
    i: usize,
    origin: &str,
) -> InputResult<f64> {
    let v = number(&check.path).ok_or_else(|| {
        InputError::with_key(
            origin,
            format!("regime[{i}].path"),
            format!(
                "{} is not a number in the results' runs[] (e.g. perf_stat.context_switches, \
                 perf_stat.cpus_utilized, workload.rps_avg)",
                check.path
            ),
        )
    })?;
    if !check.per_second {
        return Ok(v);
    }
    let elapsed = number("perf_stat.elapsed_s").unwrap_or(0.0);
    Ok(if elapsed > 0.0 { v / elapsed } else { f64::NAN })
}

/// Each published counter of `case` beside the model's mean over the runs of its side.
fn regime_scores(case: &Case, sim: Option<&SimResult>) -> Vec<RegimeScore> {
    case.file
        .regime
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let values = sim.and_then(|s| s.regime.get(i)).filter(|v| !v.is_empty());
            let mean = values
                .map(|v| Summary::of(v).mean)
                .filter(|m| m.is_finite());
            let ratio = mean.map(|m| m / c.real);
            RegimeScore {
                check: c.clone(),
                sim: mean,
                ratio,
                within_2x: ratio.map(|r| (0.5..=2.0).contains(&r)),
            }
        })
        .collect()
}

/// The number at dotted `path` in a run's results (keys may themselves hold dots, as
/// `p99.9` does: the longest key that matches wins).
pub fn metric_of(run: &RunOutput, path: &str) -> Option<f64> {
    lookup_path(&serde_json::to_value(&run.result).ok()?, path)
}

/// The number at dotted `path` in a run's results as JSON ([`metric_of`]'s lookup).
fn lookup_path(v: &serde_json::Value, path: &str) -> Option<f64> {
    let parts: Vec<&str> = path.split('.').collect();
    lookup(v, &parts)
}

fn lookup(v: &serde_json::Value, parts: &[&str]) -> Option<f64> {
    if parts.is_empty() {
        return v.as_f64();
    }
    let obj = v.as_object()?;
    (1..=parts.len()).rev().find_map(|k| {
        obj.get(&parts[..k].join("."))
            .and_then(|child| lookup(child, &parts[k..]))
    })
}

/// The scoreboard row of `case` (`sim` = None: not run).
pub fn score(
    case: &Case,
    sim: Option<&SimResult>,
    cached: bool,
    allow_incomplete: bool,
) -> CaseScore {
    let f = &case.file;
    let real = f.real.change_pct;
    let real_ci = real_interval(&f.real);
    let (sim_change, sim_ci) = match sim {
        // Cut runs measure the cut, not the benchmark: not compared unless asked.
        Some(s) if s.incomplete_runs > 0 && !allow_incomplete => (None, None),
        Some(s) => paired_change(&s.base, &s.change),
        None => (None, None),
    };
    let ratio = sim_change.map(|s| s / real);
    let sign_ok = sim_change.map(|s| s != 0.0 && s.signum() == real.signum());
    let within_2x = ratio.map(|r| (0.5..=2.0).contains(&r));
    let sim_in_noise = sim_change.zip(sim_ci).map(|(s, ci)| s.abs() <= ci);
    let agrees = sim_change.map(|s| {
        let combined = (real_ci.unwrap_or(0.0).powi(2) + sim_ci.unwrap_or(0.0).powi(2)).sqrt();
        (s - real).abs() <= combined
    });
    CaseScore {
        id: case.id.clone(),
        title: f.title.clone(),
        benchmark: f.benchmark.clone(),
        machine: f.machine.preset.clone(),
        group: f.source.group.clone(),
        source: if f.source.url.is_empty() {
            f.source.message_id.clone()
        } else {
            f.source.url.clone()
        },
        date: f.source.date.clone(),
        measured_by: f.source.measured_by.clone(),
        quick: f.quick,
        scored: f.scoring.scored,
        reason: f.scoring.reason.clone(),
        fitted_from: f.scoring.fitted_from,
        fitted_inputs: Vec::new(),
        metric: f.metric.published.clone(),
        real_change_pct: real,
        real_ci_pct: real_ci,
        sim_change_pct: sim_change,
        sim_ci_pct: sim_ci,
        runs: f.command.runs,
        sign_ok,
        ratio,
        within_2x,
        sim_in_noise,
        agrees_within_noise: agrees,
        incomplete_runs: sim.map_or(0, |s| s.incomplete_runs),
        warnings: sim.map_or(0, |s| s.warnings),
        regime: regime_scores(case, sim),
        cached,
    }
}

/// The simulated change in % of the base mean, and the half-width of its paired 95 %
/// interval (None with one seed).
pub fn paired_change(base: &[f64], change: &[f64]) -> (Option<f64>, Option<f64>) {
    let a = Summary::of(base).mean;
    if base.is_empty() || base.len() != change.len() || a == 0.0 || !a.is_finite() {
        return (None, None);
    }
    let deltas: Vec<f64> = base
        .iter()
        .zip(change)
        .map(|(x, y)| 100.0 * (y - x) / a)
        .collect();
    let d = Summary::of(&deltas);
    let ci = (d.n > 1).then(|| t975(d.n - 1) * d.stdev / (d.n as f64).sqrt());
    (Some(d.mean), ci)
}

/// Half-width of the published change's 95 % interval from the published per-side
/// variation: `1.96 * sqrt(s_a^2 + s_b^2) / sqrt(runs)` (one side's variation stands for both
/// when only one is given; `runs` = 1 when not given).
pub fn real_interval(r: &case::Real) -> Option<f64> {
    let (a, b) = match (r.base_stddev_pct, r.change_stddev_pct) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a, a),
        (None, Some(b)) => (b, b),
        (None, None) => return None,
    };
    let n = f64::from(r.runs.unwrap_or(1).max(1));
    Some(1.96 * (a * a + b * b).sqrt() / n.sqrt())
}

fn totals(rows: &[CaseScore]) -> Totals {
    let scored: Vec<&CaseScore> = rows.iter().filter(|r| r.scored).collect();
    let ran: Vec<&CaseScore> = scored
        .iter()
        .copied()
        .filter(|r| r.sim_change_pct.is_some())
        .collect();
    let sign_ok = ran.iter().filter(|r| r.sign_ok == Some(true)).count();
    let within = ran.iter().filter(|r| r.within_2x == Some(true)).count();
    let mut logs: Vec<f64> = ran
        .iter()
        .filter_map(|r| {
            let s = r.sim_change_pct?.abs();
            let real = r.real_change_pct.abs();
            (real > 0.0).then(|| (s.max(1e-6) / real).ln().abs())
        })
        .collect();
    logs.sort_by(f64::total_cmp);
    let median = match logs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => logs[n / 2],
        n => 0.5 * (logs[n / 2 - 1] + logs[n / 2]),
    };
    let pct = |k: usize| {
        if ran.is_empty() {
            0.0
        } else {
            100.0 * k as f64 / ran.len() as f64
        }
    };
    let groups: std::collections::BTreeSet<&str> = ran.iter().map(|r| r.group.as_str()).collect();
    let decisive = |r: &&&CaseScore| r.sim_in_noise == Some(false);
    Totals {
        cases: rows.len(),
        scored: scored.len(),
        ran: ran.len(),
        sign_ok,
        within_2x: within,
        sign_ok_pct: pct(sign_ok),
        within_2x_pct: pct(within),
        median_abs_log_ratio: median,
        sim_in_noise: ran.iter().filter(|r| r.sim_in_noise == Some(true)).count(),
        decisive: ran.iter().filter(decisive).count(),
        decisive_sign_ok: ran
            .iter()
            .filter(decisive)
            .filter(|r| r.sign_ok == Some(true))
            .count(),
        fitted_from: ran.iter().filter(|r| r.fitted_from).count(),
        with_fitted_input: ran.iter().filter(|r| !r.fitted_inputs.is_empty()).count(),
        groups: groups.len(),
        regime_checks: ran
            .iter()
            .flat_map(|r| &r.regime)
            .filter(|c| c.within_2x.is_some())
            .count(),
        regime_within_2x: ran
            .iter()
            .flat_map(|r| &r.regime)
            .filter(|c| c.within_2x == Some(true))
            .count(),
    }
}

/// A machine file's stem (`validation/machines/icl-2s.toml` -> `icl-2s`), a preset as is.
fn short_machine(machine: &str) -> &str {
    std::path::Path::new(machine)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(machine)
}

/// The scoreboard as a text table.
pub fn render(board: &Scoreboard) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<38} {:<10} {:<14} {:>9} {:>18} {:>7} {:>4} {:>4} notes",
        "case", "bench", "machine", "real %", "sim % (95% CI)", "ratio", "sign", "2x"
    );
    for r in &board.cases {
        let sim = match (r.sim_change_pct, r.sim_ci_pct) {
            (Some(v), Some(ci)) => format!("{v:+.2} ± {ci:.2}"),
            (Some(v), None) => format!("{v:+.2}"),
            _ => "-".to_string(),
        };
        let yes = |b: Option<bool>| match b {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let notes = case_notes(r);
        let _ = writeln!(
            s,
            "{:<38} {:<10} {:<14} {:>+9.2} {:>18} {:>7} {:>4} {:>4} {}",
            crate::input::limits::clip(&r.id),
            r.benchmark,
            short_machine(&r.machine),
            r.real_change_pct,
            sim,
            r.ratio.map_or("-".to_string(), |x| format!("{x:.2}")),
            yes(r.sign_ok),
            yes(r.within_2x),
            notes.join("; ")
        );
    }
    let t = &board.totals;
    let _ = writeln!(
        s,
        "\n{} cases, {} scored, {} run ({} independent sources): right sign {}/{} ({:.0} %), within 2x {}/{} ({:.0} %), median |log ratio| {:.2}; {} inside their own noise; right sign where the simulated change is outside its noise {}/{}; {} run with a fitted input, {} fitted to; published counters reproduced within 2x {}/{}",
        t.cases,
        t.scored,
        t.ran,
        t.groups,
        t.sign_ok,
        t.ran,
        t.sign_ok_pct,
        t.within_2x,
        t.ran,
        t.within_2x_pct,
        t.median_abs_log_ratio,
        t.sim_in_noise,
        t.decisive_sign_ok,
        t.decisive,
        t.with_fitted_input,
        t.fitted_from,
        t.regime_within_2x,
        t.regime_checks
    );
    render_fitted_inputs(&mut s, &board.cases);
    s
}

/// Each global fitted input the scored cases that ran used, with how many of them used it
/// (sorted by the input's line; the text and HTML scoreboards both list it).
pub fn fitted_input_uses(rows: &[CaseScore]) -> std::collections::BTreeMap<&str, usize> {
    let mut uses = std::collections::BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| r.scored && r.sim_change_pct.is_some())
    {
        for input in &r.fitted_inputs {
            *uses.entry(input.as_str()).or_default() += 1;
        }
    }
    uses
}

/// The scoreboard's footer: each global fitted input the scored cases ran with, what it was
/// fitted to, and how many of them use it (sorted by the input's line).
fn render_fitted_inputs(s: &mut String, rows: &[CaseScore]) {
    use std::fmt::Write;
    let uses = fitted_input_uses(rows);
    if uses.is_empty() {
        return;
    }
    let _ = writeln!(s, "fitted inputs (global per machine family):");
    for (input, n) in uses {
        let _ = writeln!(s, "  {input}: {n} scored cases");
    }
}

/// The notes column of one case: why it is not scored, and what to know about its runs.
fn case_notes(r: &CaseScore) -> Vec<String> {
    let mut notes = Vec::new();
    if !r.scored {
        notes.push(format!("not scored: {}", r.reason));
    }
    if r.sim_in_noise == Some(true) {
        notes.push("sim inside its noise".to_string());
    }
    if r.fitted_from {
        notes.push("fitted input".to_string());
    }
    if r.incomplete_runs > 0 {
        notes.push(format!(
            "benchmark not finished in {} runs{}",
            r.incomplete_runs,
            if r.sim_change_pct.is_none() {
                ": not compared (--allow-incomplete)"
            } else {
                " (cut short: compared as a rate)"
            }
        ));
    }
    if r.warnings > 0 {
        notes.push(format!("{} watchdog warnings", r.warnings));
    }
    let off: Vec<String> = r
        .regime
        .iter()
        .filter(|c| c.within_2x == Some(false))
        .filter_map(|c| c.ratio.map(|x| format!("{} {x:.2}x", c.check.counter)))
        .collect();
    if !off.is_empty() {
        notes.push(format!("regime off: {}", off.join(", ")));
    }
    if r.cached {
        notes.push("cached".to_string());
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_change_is_the_mean_delta_over_the_base_mean() {
        let (c, ci) = paired_change(&[10.0, 10.0, 10.0], &[11.0, 12.0, 13.0]);
        assert!((c.unwrap() - 20.0).abs() < 1e-9);
        // deltas 10, 20, 30 %: stdev 10, t(0.975, 2) = 4.303.
        assert!((ci.unwrap() - 4.3027 * 10.0 / 3f64.sqrt()).abs() < 1e-2);
        assert_eq!(paired_change(&[1.0], &[2.0]).1, None);
        assert_eq!(paired_change(&[], &[]).0, None);
    }

    #[test]
    fn real_interval_uses_both_sides_and_runs() {
        let r = case::Real {
            base: None,
            change: None,
            change_pct: -40.0,
            base_stddev_pct: Some(3.0),
            change_stddev_pct: Some(4.0),
            runs: Some(4),
            note: String::new(),
        };
        assert!((real_interval(&r).unwrap() - 1.96 * 5.0 / 2.0).abs() < 1e-9);
    }

    /// A scored case that ran, with its simulated change, whether that is inside its noise
    /// (`None`: one run, no interval) and whether the sign is right.
    fn ran(id: &str, in_noise: Option<bool>, sign_ok: bool) -> CaseScore {
        CaseScore {
            id: id.to_string(),
            scored: true,
            sim_change_pct: Some(if sign_ok { -1.0 } else { 1.0 }),
            real_change_pct: -2.0,
            sign_ok: Some(sign_ok),
            sim_in_noise: in_noise,
            ..CaseScore::default()
        }
    }

    /// Cases that ran with a fitted input are counted, and the footer names each input once
    /// with the number of scored cases using it; unscored rows do not count.
    #[test]
    fn fitted_inputs_are_counted_and_listed_under_the_totals() {
        let input = "m C2 core exit 26 us (fitted to x)".to_string();
        let with = |id: &str| CaseScore {
            fitted_inputs: vec![input.clone()],
            ..ran(id, Some(false), true)
        };
        let unscored = CaseScore {
            scored: false,
            sim_change_pct: None,
            fitted_inputs: vec![input.clone()],
            ..CaseScore::default()
        };
        let rows = vec![with("a"), with("b"), ran("c", Some(false), true), unscored];
        let t = totals(&rows);
        assert_eq!((t.with_fitted_input, t.fitted_from), (2, 0));
        let text = render(&Scoreboard {
            cases: rows,
            totals: t,
        });
        assert!(
            text.contains("2 run with a fitted input, 0 fitted to"),
            "{text}"
        );
        assert!(
            text.contains("fitted inputs (global per machine family):\n  m C2 core exit 26 us (fitted to x): 2 scored cases\n"),
            "{text}"
        );
    }

    #[test]
    fn decisive_totals_count_only_changes_outside_their_noise() {
        let rows = [
            ran("a", Some(false), true),
            ran("b", Some(false), false),
            ran("c", Some(true), true),
            ran("d", None, true),
            CaseScore {
                id: "unscored".to_string(),
                ..CaseScore::default()
            },
        ];
        let t = totals(&rows);
        assert_eq!((t.ran, t.sign_ok, t.sim_in_noise), (4, 3, 1));
        // Only a and b have an interval that excludes 0; a one-run case is not decisive.
        assert_eq!((t.decisive, t.decisive_sign_ok), (2, 1));
    }

    #[test]
    fn lookup_takes_keys_with_dots() {
        let v = serde_json::json!({"latency_us": {"wakeup": {"p99.9": 7.0, "p99": 3.0}}});
        assert_eq!(lookup(&v, &["latency_us", "wakeup", "p99", "9"]), Some(7.0));
        assert_eq!(lookup(&v, &["latency_us", "wakeup", "p99"]), Some(3.0));
        assert_eq!(lookup(&v, &["latency_us", "nope"]), None);
    }
}
