//! `schedlab calibrate`: fit the `host` machine's inputs to microbenchmarks run here, one
//! input (or one group, scaled together) per microbenchmark, in an order where each fit
//! depends only on the ones before it:
//!
//! 1. `speed_pct` (user-space speed against the reference CPU the workloads' work is written
//!    for) from `stress-ng --cpu 1`'s task-clock: almost all of it is the cpu stressor's
//!    user-space work.
//! 2. The switch cycle (`context_switch_ns`, `enqueue_task_ns`, `dequeue_task_ns`,
//!    `put_prev_entity_ns`, `set_next_entity_ns`, scaled together from their defaults) from
//!    `taskset -c 0 perf bench sched pipe`: two tasks on one CPU, two switches per loop, and
//!    the pipe syscalls' work already scaled by step 1.
//! 3. `ipi_latency_ns` from the same benchmark on two CPUs: each wakeup lands on the other,
//!    idle CPU, so its wakeup-to-run delay (IPI delivery, and on a VM the halted vCPU's exit
//!    and re-entry, which the model has no separate input for) is what is left.
//! 4. `af_unix_cost_pct` from `taskset -c 0 perf bench sched messaging -g 1`: 40 tasks over
//!    AF_UNIX sockets on one CPU, so the elapsed time is the CPU's work — the messages'
//!    socket syscalls, plus the switches step 2 fixed. On this VM its simulated switch count
//!    matches the real one (13.6 k vs 9-19 k a run), so what is left is the work per message.
//!    The pipe equivalent is not fitted: there the simulated switch count is half the real
//!    one, so its time gap cannot be put on one input.
//!
//! Each fit bisects the input until the simulated mean over [`compare::SEEDS`] meets the
//! real mean (the model is monotone in each input on its row). The fitted inputs are global
//! for this machine: every workload on `-m host` uses them, and the scoreboard marks the
//! four rows they were fitted to.

use super::calibration::{CALIBRATION_FORMAT, Calibration, Fit};
use super::compare::{self, SEEDS};
use super::rows::{self, Row};
use super::table::{HostId, HostTable, now_rfc3339};
use crate::cost::CostModel;
use crate::error::{InputError, InputResult};
use crate::experiment::{RunContext, run_variants_in};
use crate::stats::summary::Summary;

/// The switch-cycle inputs scaled together by step 2.
pub const SWITCH_CYCLE_INPUTS: &[&str] = &[
    "context_switch_ns",
    "enqueue_task_ns",
    "dequeue_task_ns",
    "put_prev_entity_ns",
    "set_next_entity_ns",
];

/// Bisection steps per fit (the interval shrinks 2^-STEPS).
pub const FIT_STEPS: u32 = 14;

/// One fit: which row and metric, which input, its range.
#[derive(Clone, Copy, Debug)]
pub struct FitSpec {
    pub row: &'static str,
    pub metric: Metric,
    pub input: Input,
    pub lo: f64,
    pub hi: f64,
}

/// The metric a fit matches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    TaskClockMs,
    ElapsedS,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::TaskClockMs => "task_clock_ms",
            Metric::ElapsedS => "elapsed_s",
        }
    }
}

/// The input a fit sets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    SpeedPct,
    SwitchCycleScale,
    IpiLatencyNs,
    AfUnixCostPct,
}

/// The fits, in order.
pub const FITS: &[FitSpec] = &[
    FitSpec {
        row: "stress-ng-cpu1",
        metric: Metric::TaskClockMs,
        input: Input::SpeedPct,
        lo: 10.0,
        hi: 1000.0,
    },
    FitSpec {
        row: "pipe-pinned",
        metric: Metric::ElapsedS,
        input: Input::SwitchCycleScale,
        lo: 0.05,
        hi: 20.0,
    },
    FitSpec {
        row: "pipe",
        metric: Metric::ElapsedS,
        input: Input::IpiLatencyNs,
        lo: 0.0,
        hi: 200_000.0,
    },
    FitSpec {
        row: "hackbench-socket-pinned",
        metric: Metric::ElapsedS,
        input: Input::AfUnixCostPct,
        lo: 10.0,
        hi: 1000.0,
    },
];

/// The rows the fits need.
pub fn rows_needed() -> Vec<&'static Row> {
    FITS.iter()
        .map(|f| rows::row(f.row).expect("a fit names a row"))
        .collect()
}

/// `input = x` as `[machine.cost]` keys.
fn cost_keys(input: Input, x: f64, defaults: &CostModel) -> toml::Table {
    let mut t = toml::Table::new();
    match input {
        Input::SpeedPct => {
            t.insert("speed_pct".into(), toml::Value::Integer(x.round() as i64));
        }
        Input::IpiLatencyNs => {
            t.insert(
                "ipi_latency_ns".into(),
                toml::Value::Integer(x.round() as i64),
            );
        }
        Input::AfUnixCostPct => {
            t.insert(
                "af_unix_cost_pct".into(),
                toml::Value::Integer(x.round() as i64),
            );
        }
        Input::SwitchCycleScale => {
            let table = match toml::Value::try_from(defaults) {
                Ok(toml::Value::Table(t)) => t,
                _ => unreachable!("the cost model serializes to a table"),
            };
            for k in SWITCH_CYCLE_INPUTS {
                let base = table.get(*k).and_then(toml::Value::as_integer).unwrap_or(0);
                t.insert(
                    (*k).into(),
                    toml::Value::Integer((base as f64 * x).round() as i64),
                );
            }
        }
    }
    t
}

/// The simulated mean of `metric` on `row` with `cost`.
fn simulate(ctx: &RunContext, row: &Row, cost: &toml::Table, metric: Metric) -> InputResult<f64> {
    let scn = compare::scenario_for(row, cost)?;
    let runs = run_variants_in(ctx, &[&scn], SEEDS, row.id)?.remove(0);
    let values: Vec<f64> = runs
        .iter()
        .map(|r| match metric {
            Metric::TaskClockMs => r.perf.task_clock_ms,
            Metric::ElapsedS => r.perf.elapsed_s,
        })
        .collect();
    Ok(Summary::of(&values).mean)
}

/// The real mean of `metric` on `row` in `table`.
fn real_mean(table: &HostTable, spec: &FitSpec) -> InputResult<f64> {
    let row = table
        .row(spec.row)
        .filter(|r| !r.runs.is_empty())
        .ok_or_else(|| {
            InputError::new(
                "calibrate",
                format!(
                    "row {} was not measured{}; it is needed to fit {:?}",
                    spec.row,
                    table
                        .row(spec.row)
                        .and_then(|r| r.skipped.as_deref())
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default(),
                    spec.input
                ),
            )
        })?;
    let values: Vec<f64> = row
        .runs
        .iter()
        .map(|r| match spec.metric {
            Metric::TaskClockMs => r.task_clock_ms,
            Metric::ElapsedS => r.elapsed_s,
        })
        .collect();
    Ok(Summary::of(&values).mean)
}

/// Fit every input in order against `table`'s measurements; `progress` gets a line per fit.
pub fn calibrate(
    ctx: &RunContext,
    table: &HostTable,
    progress: &mut dyn FnMut(&str),
) -> InputResult<Calibration> {
    calibrate_rows(ctx, table, rows::ROWS, progress)
}

/// [`calibrate`] with the fits' rows looked up (by id) in `rows` (tests use short ones).
pub fn calibrate_rows(
    ctx: &RunContext,
    table: &HostTable,
    rows: &[Row],
    progress: &mut dyn FnMut(&str),
) -> InputResult<Calibration> {
    let machine = crate::topology::resolve_machine_with(Some("host"), None, None)?;
    let defaults = CostModel::default_for(&machine);
    // The fits start from the uncalibrated defaults: every input a calibration in force
    // sets is overridden by its default (a scenario's [machine.cost] wins over the file).
    let mut cost = uncalibrated(&defaults)?;
    let mut fits = Vec::new();
    for spec in FITS {
        let real = real_mean(table, spec)?;
        let row = rows
            .iter()
            .find(|r| r.id == spec.row)
            .ok_or_else(|| InputError::new("calibrate", format!("no row {}", spec.row)))?;
        let (x, sim) = fit_one(ctx, row, spec, real, &cost, &defaults)?;
        cost.extend(cost_keys(spec.input, x, &defaults));
        progress(&format!(
            "{:?} = {x:.3} from {} ({}: real {real:.4}, simulated {sim:.4})",
            spec.input,
            spec.row,
            spec.metric.name()
        ));
        fits.push(Fit {
            input: fit_input_name(spec.input).into(),
            value: if spec.input == Input::SwitchCycleScale {
                (x * 1000.0).round() / 1000.0
            } else {
                x.round()
            },
            row: spec.row.into(),
            metric: spec.metric.name().into(),
            real,
            sim,
        });
    }
    Ok(Calibration {
        format: CALIBRATION_FORMAT,
        host: HostId::current(),
        calibrated_at: now_rfc3339(),
        schedlab_version: crate::experiment::SCHEDLAB_VERSION.into(),
        fits,
        cost,
    })
}

/// The defaults of every input fitted here or set by the calibration in force.
fn uncalibrated(defaults: &CostModel) -> InputResult<toml::Table> {
    let table = match toml::Value::try_from(defaults) {
        Ok(toml::Value::Table(t)) => t,
        _ => unreachable!("the cost model serializes to a table"),
    };
    let mut keys: Vec<String> = ["speed_pct", "ipi_latency_ns", "af_unix_cost_pct"]
        .iter()
        .chain(SWITCH_CYCLE_INPUTS)
        .map(|k| (*k).to_string())
        .collect();
    if let (Some(cal), _) = super::calibration::for_this_host()? {
        keys.extend(cal.cost.keys().cloned());
    }
    Ok(keys
        .into_iter()
        .filter_map(|k| table.get(&k).cloned().map(|v| (k, v)))
        .collect())
}

fn fit_input_name(input: Input) -> &'static str {
    match input {
        Input::SpeedPct => "speed_pct",
        Input::SwitchCycleScale => "switch_cycle_scale",
        Input::IpiLatencyNs => "ipi_latency_ns",
        Input::AfUnixCostPct => "af_unix_cost_pct",
    }
}

/// Bisect `spec.input` so the simulated metric meets `real`; returns the value and its
/// simulated metric. At a range end when the target lies beyond it.
fn fit_one(
    ctx: &RunContext,
    row: &Row,
    spec: &FitSpec,
    real: f64,
    before: &toml::Table,
    defaults: &CostModel,
) -> InputResult<(f64, f64)> {
    let at = |x: f64| -> InputResult<f64> {
        let mut cost = before.clone();
        cost.extend(cost_keys(spec.input, x, defaults));
        simulate(ctx, row, &cost, spec.metric)
    };
    let (mut lo, mut hi) = (spec.lo, spec.hi);
    let (f_lo, f_hi) = (at(lo)?, at(hi)?);
    // Which end makes the metric larger (speed: the low end; costs: the high end).
    let increasing = f_hi > f_lo;
    if (real - f_lo) * (real - f_hi) >= 0.0 {
        let lo_closer = (real - f_lo).abs() <= (real - f_hi).abs();
        return Ok(if lo_closer { (lo, f_lo) } else { (hi, f_hi) });
    }
    let mut best = (lo, f_lo);
    for _ in 0..FIT_STEPS {
        let mid = (lo + hi) / 2.0;
        let f = at(mid)?;
        if (f - real).abs() < (best.1 - real).abs() {
            best = (mid, f);
        }
        if (f < real) == increasing {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(best)
}

/// The rows a calibration was fitted to (for the scoreboard).
pub fn fitted_rows(cal: Option<&Calibration>) -> Vec<String> {
    cal.map(|c| c.fits.iter().map(|f| f.row.clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_cycle_scales_from_the_defaults() {
        let d = CostModel::default();
        let t = cost_keys(Input::SwitchCycleScale, 2.0, &d);
        assert_eq!(
            t["context_switch_ns"].as_integer(),
            Some(2 * d.context_switch_ns as i64)
        );
        assert_eq!(t.len(), SWITCH_CYCLE_INPUTS.len());
        assert_eq!(
            cost_keys(Input::SpeedPct, 149.6, &d)["speed_pct"].as_integer(),
            Some(150)
        );
    }

    #[test]
    fn every_fit_names_a_row() {
        assert_eq!(rows_needed().len(), FITS.len());
    }
}
