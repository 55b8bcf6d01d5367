//! The model against a host table: every row simulated on `-m host` (this machine's
//! topology, kernel settings, idle states and calibration) by the same command line, and
//! compared on its primary number (elapsed time or schbench's rps: within 20 %), context
//! switches per second and migrations per second (within 2x). Rows a calibration was fitted
//! to are marked and counted apart. Where the table recorded them (GNU time present at
//! `host-measure`), involuntary context switches per second are compared too (within 2x),
//! shown apart from the three scored numbers: whether tasks are preempted as often as on
//! the real kernel is the wakeup-preemption dynamics, not a number the calibration fits.

use serde::Serialize;

use super::rows::{self, Primary, Row};
use super::table::{HostTable, RowResult};
use crate::config::scenario::Scenario;
use crate::error::InputResult;
use crate::experiment::{RunContext, RunOutput, run_variants_in};
use crate::stats::summary::Summary;

/// The primary number's tolerance (relative).
pub const PRIMARY_TOLERANCE: f64 = 0.20;
/// The rates' tolerance (a ratio).
pub const RATE_FACTOR: f64 = 2.0;
/// Counts this small per run (context switches or migrations, both sides) have no meaningful
/// ratio: a run with 0.3 migrations on average against one with none is "0.00x". A rate
/// whose per-run counts differ by at most this many events counts as within, and the row
/// says so (`~`).
pub const COUNT_FLOOR_PER_RUN: f64 = 2.0;
/// Simulated seeds per row: as many as the host table's real runs (`host-measure`'s default
/// 5), so both sides' means carry the same number of runs (with 3, the 2-CPU hackbench pipe
/// rows' migration means swung 2x between close calibrations: 226-767 a run).
pub const SEEDS: &[u64] = &[1, 2, 3, 4, 5];

/// A row's numbers on one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Side {
    pub primary: f64,
    pub primary_sd: f64,
    pub context_switches_per_s: f64,
    pub migrations_per_s: f64,
    /// Involuntary context switches per second (real: when the table recorded them).
    pub involuntary_switches_per_s: Option<f64>,
    pub task_clock_ms: f64,
    /// Mean elapsed time of a run, s.
    pub elapsed_s: f64,
    pub runs: usize,
}

/// One row's comparison.
#[derive(Clone, Debug, Serialize)]
pub struct RowScore {
    pub id: String,
    pub command: String,
    pub primary: Primary,
    /// A calibration input was fitted to this row.
    pub fitted: bool,
    pub real: Option<Side>,
    pub sim: Option<Side>,
    pub primary_ratio: Option<f64>,
    pub primary_within: Option<bool>,
    pub context_switches_ratio: Option<f64>,
    pub context_switches_within: Option<bool>,
    pub migrations_ratio: Option<f64>,
    pub migrations_within: Option<bool>,
    /// None where the real side has no involuntary switch counts.
    pub involuntary_switches_ratio: Option<f64>,
    pub involuntary_switches_within: Option<bool>,
    /// Within only by [`COUNT_FLOOR_PER_RUN`] (too few events for a ratio).
    pub context_switches_by_floor: bool,
    pub migrations_by_floor: bool,
    /// Why a side is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Totals over the rows compared (not fitted / fitted).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    pub rows: usize,
    pub primary_within: usize,
    pub context_switches_within: usize,
    pub migrations_within: usize,
    /// Rows with involuntary switches on both sides, and of those within 2x.
    pub involuntary_switches_rows: usize,
    pub involuntary_switches_within: usize,
}

/// The host section of the scoreboard.
#[derive(Clone, Debug, Serialize)]
pub struct HostScore {
    pub table: String,
    pub measured_at: String,
    pub host: super::table::HostId,
    /// The calibration `-m host` applied (its note), if any.
    pub calibration: Option<String>,
    /// Where this host's kernel is known to differ from the model (autogroup, a patched
    /// scheduler's tunables): the real rows measure that kernel, not mainline.
    pub kernel_caveats: Vec<String>,
    pub rows: Vec<RowScore>,
    pub totals: Totals,
    pub totals_fitted: Totals,
}

/// The scenario of `row` on `-m host`, with `cost` overrides (a calibration candidate).
pub fn scenario_for(row: &Row, cost: &toml::Table) -> InputResult<Scenario> {
    let mut doc = toml::Table::new();
    let mut machine = toml::Table::new();
    machine.insert("preset".into(), "host".into());
    if !cost.is_empty() {
        machine.insert("cost".into(), toml::Value::Table(cost.clone()));
    }
    doc.insert("machine".into(), toml::Value::Table(machine));
    let mut workload = toml::Table::new();
    workload.insert("command".into(), row.command.into());
    doc.insert("workload".into(), toml::Value::Table(workload));
    let text = toml::to_string(&doc).expect("a scenario serializes");
    Scenario::parse(&text, &format!("host row {}", row.id))
}

/// The simulated side of a row from its runs.
pub fn sim_side(runs: &[RunOutput], primary: Primary) -> Side {
    let primary_values: Vec<f64> =
        runs.iter()
            .map(|r| match primary {
                Primary::ElapsedS => r.perf.elapsed_s,
                Primary::Rps => crate::experiment::validate::metric_of(r, "workload.rps_avg")
                    .unwrap_or(f64::NAN),
            })
            .collect();
    let per_s = |f: &dyn Fn(&RunOutput) -> f64| {
        Summary::of(
            &runs
                .iter()
                .map(|r| f(r) / r.perf.elapsed_s.max(1e-9))
                .collect::<Vec<_>>(),
        )
        .mean
    };
    let p = Summary::of(&primary_values);
    Side {
        primary: p.mean,
        primary_sd: p.stdev,
        context_switches_per_s: per_s(&|r| r.perf.context_switches as f64),
        migrations_per_s: per_s(&|r| r.perf.cpu_migrations as f64),
        involuntary_switches_per_s: Some(per_s(&|r| involuntary_switches(r) as f64)),
        task_clock_ms: Summary::of(
            &runs
                .iter()
                .map(|r| r.perf.task_clock_ms)
                .collect::<Vec<_>>(),
        )
        .mean,
        elapsed_s: Summary::of(&runs.iter().map(|r| r.perf.elapsed_s).collect::<Vec<_>>()).mean,
        runs: runs.len(),
    }
}

/// Involuntary context switches of a simulated run's workload tasks (what GNU time counts
/// of the real process tree).
fn involuntary_switches(run: &RunOutput) -> u64 {
    run.result
        .tasks
        .iter()
        .map(|t| t.counters.nr_involuntary_switches)
        .sum()
}

/// The real side of a measured row.
pub fn real_side(row: &RowResult, primary: Primary) -> Option<Side> {
    if row.runs.is_empty() {
        return None;
    }
    let of = |f: &dyn Fn(&super::table::RealRun) -> f64| {
        Summary::of(&row.runs.iter().map(f).collect::<Vec<_>>())
    };
    let p = of(&|r| match primary {
        Primary::ElapsedS => r.elapsed_s,
        Primary::Rps => r.rps.unwrap_or(f64::NAN),
    });
    Some(Side {
        primary: p.mean,
        primary_sd: p.stdev,
        context_switches_per_s: of(&|r| r.context_switches_per_s()).mean,
        migrations_per_s: of(&|r| r.migrations_per_s()).mean,
        involuntary_switches_per_s: row
            .runs
            .iter()
            .map(|r| r.involuntary_switches_per_s())
            .collect::<Option<Vec<f64>>>()
            .map(|v| Summary::of(&v).mean),
        task_clock_ms: of(&|r| r.task_clock_ms).mean,
        elapsed_s: of(&|r| r.elapsed_s).mean,
        runs: row.runs.len(),
    })
}

/// sim / real, with 0 / 0 = 1 (both none) and x / 0 = None (no ratio).
fn ratio(sim: f64, real: f64) -> Option<f64> {
    match (sim == 0.0, real == 0.0) {
        (true, true) => Some(1.0),
        (_, true) => None,
        _ => Some(sim / real),
    }
}

fn within_factor(r: Option<f64>) -> bool {
    r.is_some_and(|r| (1.0 / RATE_FACTOR..=RATE_FACTOR).contains(&r))
}

/// Per-run counts of a rate (per second) over each side's elapsed time.
fn counts_per_run(real: &Side, sim: &Side, rate: fn(&Side) -> f64) -> (f64, f64) {
    (rate(real) * real.elapsed_s, rate(sim) * sim.elapsed_s)
}

/// Within [`RATE_FACTOR`], or both counts per run within [`COUNT_FLOOR_PER_RUN`] events.
/// Returns (within, by the floor only).
fn rate_within(
    real: &Side,
    sim: &Side,
    ratio: Option<f64>,
    rate: fn(&Side) -> f64,
) -> (bool, bool) {
    if within_factor(ratio) {
        return (true, false);
    }
    let (r, s) = counts_per_run(real, sim, rate);
    let floor = (r - s).abs() <= COUNT_FLOOR_PER_RUN;
    (floor, floor)
}

/// Score one row from its sides.
pub fn score_row(row: &Row, real: Option<Side>, sim: Option<Side>, fitted: bool) -> RowScore {
    let both = real.zip(sim);
    let primary_ratio = both.and_then(|(r, s)| ratio(s.primary, r.primary));
    let cs = both.and_then(|(r, s)| ratio(s.context_switches_per_s, r.context_switches_per_s));
    let mig = both.and_then(|(r, s)| ratio(s.migrations_per_s, r.migrations_per_s));
    let cs_in = both.map(|(r, s)| rate_within(&r, &s, cs, |x| x.context_switches_per_s));
    let mig_in = both.map(|(r, s)| rate_within(&r, &s, mig, |x| x.migrations_per_s));
    // Both sides' involuntary switch rates, where the real table has them.
    let invol_rates = both
        .and_then(|(r, s)| Some((r.involuntary_switches_per_s?, s.involuntary_switches_per_s?)));
    let invol = invol_rates.and_then(|(r, s)| ratio(s, r));
    let invol_in = invol_rates.and(both).map(|(r, s)| {
        rate_within(&r, &s, invol, |x| {
            x.involuntary_switches_per_s.unwrap_or(0.0)
        })
        .0
    });
    RowScore {
        id: row.id.to_string(),
        command: row.command.to_string(),
        primary: row.primary,
        fitted,
        real,
        sim,
        primary_ratio,
        primary_within: both
            .map(|_| primary_ratio.is_some_and(|r| (r - 1.0).abs() <= PRIMARY_TOLERANCE)),
        context_switches_ratio: cs,
        context_switches_within: cs_in.map(|w| w.0),
        migrations_ratio: mig,
        migrations_within: mig_in.map(|w| w.0),
        involuntary_switches_ratio: invol,
        involuntary_switches_within: invol_in,
        context_switches_by_floor: cs_in.is_some_and(|w| w.1),
        migrations_by_floor: mig_in.is_some_and(|w| w.1),
        note: None,
    }
}

/// Simulate every measured row of `table` and score it. `fitted`: the rows the calibration
/// in force was fitted to.
pub fn score_table(
    ctx: &RunContext,
    table_path: &str,
    table: &HostTable,
    fitted: &[String],
) -> InputResult<HostScore> {
    let measured: Vec<(&Row, &RowResult)> = table
        .rows
        .iter()
        .filter_map(|r| rows::row(&r.id).map(|row| (row, r)))
        .collect();
    // Row by row: a row the model cannot run (an unmodelled option) is noted, not fatal.
    let scored: Vec<RowScore> = measured
        .iter()
        .map(|(row, result)| {
            let real = real_side(result, row.primary);
            let sim = scenario_for(row, &toml::Table::new())
                .and_then(|scn| run_variants_in(ctx, &[&scn], SEEDS, row.id))
                .map(|mut runs| runs.remove(0));
            let fitted_row = fitted.iter().any(|f| f == row.id);
            match sim {
                Ok(runs) if !runs.is_empty() => {
                    let mut s =
                        score_row(row, real, Some(sim_side(&runs, row.primary)), fitted_row);
                    s.note = result
                        .skipped
                        .clone()
                        .map(|why| format!("not measured: {why}"));
                    s
                }
                Ok(_) => score_row(row, real, None, fitted_row),
                Err(e) => {
                    let mut s = score_row(row, real, None, fitted_row);
                    s.note = Some(format!("not simulated: {}", e.message));
                    s
                }
            }
        })
        .collect();
    // The note `-m host` prints: the calibration applied, or why none was.
    let (_, calibration) = super::calibration::for_this_host()?;
    Ok(HostScore {
        table: table_path.to_string(),
        measured_at: table.measured_at.clone(),
        host: table.host.clone(),
        calibration,
        kernel_caveats: crate::kconfig::host::model_caveats(),
        totals: totals(&scored, false),
        totals_fitted: totals(&scored, true),
        rows: scored,
    })
}

fn totals(rows: &[RowScore], fitted: bool) -> Totals {
    let compared: Vec<&RowScore> = rows
        .iter()
        .filter(|r| r.fitted == fitted && r.primary_within.is_some())
        .collect();
    let count = |f: &dyn Fn(&RowScore) -> Option<bool>| {
        compared.iter().filter(|r| f(r) == Some(true)).count()
    };
    Totals {
        rows: compared.len(),
        primary_within: count(&|r| r.primary_within),
        context_switches_within: count(&|r| r.context_switches_within),
        migrations_within: count(&|r| r.migrations_within),
        involuntary_switches_rows: compared
            .iter()
            .filter(|r| r.involuntary_switches_within.is_some())
            .count(),
        involuntary_switches_within: count(&|r| r.involuntary_switches_within),
    }
}

/// The host section as text: one line per row, then the totals.
pub fn render(score: &HostScore) -> String {
    let mut out = format!(
        "host: {} ({} CPUs), table {} measured {}\n",
        score.host.cpu_model, score.host.nr_cpus, score.table, score.measured_at
    );
    out += &format!(
        "  calibration: {}\n",
        score
            .calibration
            .as_deref()
            .unwrap_or("none (uncalibrated `host` defaults)")
    );
    for caveat in &score.kernel_caveats {
        out += &format!("  kernel: {caveat}\n");
    }
    out += &format!(
        "  {:<32} {:>21} {:>21} {:>6} {:>17} {:>6} {:>15} {:>6} {:>15} {:>6}\n",
        "row",
        "real time|rps",
        "sim time|rps",
        "ratio",
        "cs/s real/sim",
        "ratio",
        "migr/s real/sim",
        "ratio",
        "invol/s real/sim",
        "ratio"
    );
    for r in &score.rows {
        out += &render_row(r);
    }
    out += &format!(
        "  (! outside the tolerance; ~ within only because the two sides' counts per run are at \
         most {COUNT_FLOOR_PER_RUN} events apart: too few for a ratio)\n"
    );
    for (label, t) in [
        ("not fitted", &score.totals),
        ("fitted", &score.totals_fitted),
    ] {
        if t.rows > 0 {
            out += &format!(
                "  {label}: {} rows; primary within 20 %: {}/{}; context switches/s within \
                 2x: {}/{}; migrations/s within 2x: {}/{}\n",
                t.rows,
                t.primary_within,
                t.rows,
                t.context_switches_within,
                t.rows,
                t.migrations_within,
                t.rows
            );
            if t.involuntary_switches_rows > 0 {
                out += &format!(
                    "    and (not scored) involuntary switches/s within 2x: {}/{}\n",
                    t.involuntary_switches_within, t.involuntary_switches_rows
                );
            }
        }
    }
    out
}

fn render_row(r: &RowScore) -> String {
    let name = if r.fitted {
        format!("{} (fitted)", r.id)
    } else {
        r.id.clone()
    };
    let (Some(real), Some(sim)) = (r.real, r.sim) else {
        return format!(
            "  {name:<32} {}\n",
            r.note.as_deref().unwrap_or("not simulated")
        );
    };
    let mark = |ok: Option<bool>| if ok == Some(true) { " " } else { "!" };
    let mark_floor = |ok: Option<bool>, floor: bool| if floor { "~" } else { mark(ok) };
    let fmt_ratio = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}"));
    format!(
        "  {name:<32} {:>13.3} ±{:>6.3} {:>13.3} ±{:>6.3} {:>5}{} {:>8.0}/{:<8.0} {:>5}{} \
         {:>7.1}/{:<7.1} {:>5}{} {:>15} {:>5}{}\n",
        real.primary,
        real.primary_sd,
        sim.primary,
        sim.primary_sd,
        fmt_ratio(r.primary_ratio),
        mark(r.primary_within),
        real.context_switches_per_s,
        sim.context_switches_per_s,
        fmt_ratio(r.context_switches_ratio),
        mark_floor(r.context_switches_within, r.context_switches_by_floor),
        real.migrations_per_s,
        sim.migrations_per_s,
        fmt_ratio(r.migrations_ratio),
        mark_floor(r.migrations_within, r.migrations_by_floor),
        match (
            real.involuntary_switches_per_s,
            sim.involuntary_switches_per_s
        ) {
            (Some(a), Some(b)) => format!("{a:.0}/{b:.0}"),
            _ => "-".to_string(),
        },
        fmt_ratio(r.involuntary_switches_ratio),
        if r.involuntary_switches_within.is_some() {
            mark(r.involuntary_switches_within)
        } else {
            " "
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(primary: f64, cs: f64, mig: f64) -> Side {
        Side {
            primary,
            context_switches_per_s: cs,
            migrations_per_s: mig,
            elapsed_s: 1.0,
            runs: 3,
            ..Side::default()
        }
    }

    #[test]
    fn tolerances_are_applied_per_metric() {
        let row = rows::row("pipe").unwrap();
        let s = score_row(
            row,
            Some(side(1.0, 1000.0, 0.0)),
            Some(side(1.19, 2100.0, 0.0)),
            false,
        );
        assert_eq!(s.primary_within, Some(true));
        assert_eq!(s.context_switches_within, Some(false));
        // No migrations on either side agree.
        assert_eq!(s.migrations_within, Some(true));
        let s = score_row(
            row,
            Some(side(1.0, 1000.0, 0.0)),
            Some(side(0.79, 500.0, 3.0)),
            true,
        );
        assert_eq!(s.primary_within, Some(false));
        assert_eq!(s.context_switches_within, Some(true));
        assert_eq!(s.migrations_within, Some(false));
        assert_eq!(totals(std::slice::from_ref(&s), true).rows, 1);
        assert_eq!(totals(&[s], false).rows, 0);
    }

    #[test]
    fn involuntary_switches_are_compared_only_where_the_table_has_them() {
        let row = rows::row("hackbench-socket-g1").unwrap();
        let with = |s: Side, invol: Option<f64>| Side {
            involuntary_switches_per_s: invol,
            ..s
        };
        let real = side(1.0, 1000.0, 10.0);
        let sim = side(1.0, 1000.0, 10.0);
        // An old table: no real count, nothing compared, not counted in the totals.
        let s = score_row(
            row,
            Some(with(real, None)),
            Some(with(sim, Some(900.0))),
            false,
        );
        assert_eq!(s.involuntary_switches_ratio, None);
        assert_eq!(s.involuntary_switches_within, None);
        assert_eq!(
            totals(std::slice::from_ref(&s), false).involuntary_switches_rows,
            0
        );
        // 2.8x as many preemptions as the real run: outside, and counted apart.
        let s = score_row(
            row,
            Some(with(real, Some(7000.0))),
            Some(with(sim, Some(19600.0))),
            false,
        );
        assert_eq!(s.involuntary_switches_ratio, Some(2.8));
        assert_eq!(s.involuntary_switches_within, Some(false));
        let t = totals(std::slice::from_ref(&s), false);
        assert_eq!(
            (t.involuntary_switches_rows, t.involuntary_switches_within),
            (1, 0)
        );
        // The three scored numbers do not depend on it.
        assert_eq!(
            (
                s.primary_within,
                s.context_switches_within,
                s.migrations_within
            ),
            (Some(true), Some(true), Some(true))
        );
        let s = score_row(
            row,
            Some(with(real, Some(7000.0))),
            Some(with(sim, Some(9000.0))),
            false,
        );
        assert_eq!(s.involuntary_switches_within, Some(true));
        assert!(render_row(&s).contains("7000/9000"));
    }

    #[test]
    fn counts_too_small_for_a_ratio_are_within_by_the_floor_and_say_so() {
        let row = rows::row("busy-pinned").unwrap();
        // 0.3 migrations a run against none: no ratio, but 0.3 events apart.
        let s = score_row(
            row,
            Some(side(1.0, 300.0, 0.3)),
            Some(side(1.0, 290.0, 0.0)),
            false,
        );
        assert_eq!(
            (s.migrations_within, s.migrations_by_floor),
            (Some(true), true)
        );
        assert_eq!(
            (s.context_switches_within, s.context_switches_by_floor),
            (Some(true), false)
        );
        // 4 a run against none is outside.
        let s = score_row(
            row,
            Some(side(1.0, 300.0, 4.0)),
            Some(side(1.0, 290.0, 0.0)),
            false,
        );
        assert_eq!(
            (s.migrations_within, s.migrations_by_floor),
            (Some(false), false)
        );
    }

    #[test]
    fn every_row_is_a_valid_host_scenario() {
        // Resolved (machine, cost, workload parsed against it): a row whose command line the
        // model cannot run fails here, not in validate's host section.
        for row in rows::ROWS {
            let scn = scenario_for(row, &toml::Table::new()).unwrap();
            crate::experiment::scenario::ResolvedScenario::resolve_alone(&scn)
                .unwrap_or_else(|e| panic!("{}: {e}", row.id));
        }
    }
}
