//! `schedlab bisect`: which kernel changes make `--bad` differ from `--good`, and why
//! (issue 15; the searches are in [`crate::experiment::bisect`]).
//!
//! The scenario is built as `compare` builds its baseline (a file and/or `-m ... --
//! COMMAND`); each side is then a kernel profile (`v6.9`), a `[[variant]]` of the file, or
//! a `NAME:FEAT,NO_FEAT,sysctl=value` spec applied to it.

use super::args::{MachineArgs, TuneArgs};
use std::path::PathBuf;
use std::time::Instant;

use crate::config::scenario::{Scenario, VariantSpec};
use crate::config::{QuickOptions, build_document, parse_variant_spec};
use crate::error::{InputError, InputResult};
use crate::experiment::RunContext;
use crate::experiment::bisect::search::{DEFAULT_RUNS, Limits, MAX_SEEDS};
use crate::experiment::bisect::{Bisector, Difference, Metrics, report, runner};
use crate::kconfig::Profile;
use crate::output;

/// Largest `--budget`.
pub const MAX_BUDGET_RUNS: u64 = 1_000_000;

/// Arguments of `schedlab bisect`.
#[derive(clap::Args, Debug)]
pub struct BisectArgs {
    /// A scenario file (TOML); its `[[variant]]`s can be named by --good/--bad. Optional
    /// with the quick form (`-m ... -- COMMAND`).
    pub scenario: Option<PathBuf>,
    /// The good side: a kernel profile (v6.9), a `[[variant]]` of the scenario, or
    /// NAME:FEAT,NO_FEAT,sysctl=value applied to the scenario.
    #[arg(long, value_name = "PROFILE_OR_VARIANT")]
    pub good: String,
    /// The bad side (same forms as --good).
    #[arg(long, value_name = "PROFILE_OR_VARIANT")]
    pub bad: String,
    /// The results field to explain (dotted path, e.g. workload.rps_avg,
    /// latency_us.wakeup.p99, perf_stat.cpu_migrations). Default: the benchmark's headline
    /// number (time, RPS, throughput), else latency_us.wakeup.p99.
    #[arg(long, value_name = "FIELD")]
    pub metric: Option<String>,
    /// Seeds every configuration starts with (2 to 30; more are added where intervals
    /// still straddle zero, the midpoint or a neighbour) [default: 5]
    #[arg(long, allow_hyphen_values = true, value_parser = parse_bisect_runs)]
    pub runs: Option<u32>,
    /// Most simulation runs in total (cache hits are free) [default: 400]
    #[arg(long, value_name = "RUNS", allow_hyphen_values = true, value_parser = parse_budget)]
    pub budget: Option<u64>,
    /// Base seed [default: the scenario's run.seed, else 1]
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub incomplete: super::args::IncompleteArgs,
    #[command(flatten)]
    pub quiet: super::args::QuietArgs,
    #[command(flatten)]
    pub machine: MachineArgs,
    // `--feature`, `--sysctl` and `--set` apply to both sides.
    #[command(flatten)]
    pub tune: TuneArgs,
    /// Write the bisection as JSON to FILE (`-` = stdout; the text then goes to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write an HTML page of the bisection to FILE: the run header, the ranked changes with
    /// their effects and 95% CIs, and a chart of each change's effect (see docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The benchmark command line (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

fn parse_bisect_runs(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|v| (2..=MAX_SEEDS as u32).contains(v))
        .ok_or_else(|| {
            format!(
                "accepted: an integer from 2 (a confidence interval needs two seeds) to \
                 {MAX_SEEDS} (MAX_SEEDS)"
            )
        })
}

fn parse_budget(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| (1..=MAX_BUDGET_RUNS).contains(v))
        .ok_or_else(|| format!("accepted: an integer from 1 to {MAX_BUDGET_RUNS} (runs)"))
}

/// The scenario both sides start from.
fn base_from_args(args: &BisectArgs) -> InputResult<Scenario> {
    if args.scenario.is_none() && args.command.is_empty() {
        return Err(InputError::new(
            "command line",
            "nothing to bisect; accepted: `schedlab bisect SCENARIO.toml --good A --bad B` or \
             `schedlab bisect -m MACHINE --good v6.9 --bad v6.15 -- COMMAND`",
        ));
    }
    let opts = QuickOptions {
        base: args.scenario.clone(),
        machine: args.machine.machine.clone(),
        offline: args.machine.offline.clone(),
        profile: None,
        features: args.tune.features.clone(),
        sysctls: args.tune.sysctls.clone(),
        sets: args.tune.sets.clone(),
        runs: None,
        seed: args.seed,
        command: args.command.clone(),
    };
    let doc = build_document(&opts)?;
    for w in &doc.warnings {
        eprintln!("schedlab: warning: {w}");
    }
    Scenario::from_doc(doc)
}

/// One side: a profile, a `[[variant]]`, or a variant spec.
pub fn side(base: &Scenario, spec: &str, flag: &str) -> InputResult<(String, Scenario)> {
    if let Some(p) = Profile::by_name(spec) {
        let v = VariantSpec {
            name: p.name.to_string(),
            overrides: [(
                "kernel.profile".to_string(),
                toml::Value::String(p.name.to_string()),
            )]
            .into_iter()
            .collect(),
        };
        return Ok((p.name.to_string(), base.with_variant(&v)?));
    }
    if base.variants.iter().any(|v| v.name == spec) {
        return Ok((spec.to_string(), base.variant(spec)?));
    }
    if spec.contains(':') {
        let v = parse_variant_spec(spec, flag)?;
        return Ok((v.name.clone(), base.with_variant(&v)?));
    }
    let profiles: Vec<&str> = crate::kconfig::profiles::PROFILES
        .iter()
        .map(|p| p.name)
        .collect();
    let variants = base.variant_names();
    Err(InputError::with_key(
        flag,
        spec,
        format!(
            "neither a kernel profile nor a variant; accepted: a profile ({}), a [[variant]] \
             of the scenario ({}), or NAME:FEAT,NO_FEAT,sysctl=value",
            profiles.join(", "),
            if variants.is_empty() {
                "none defined".to_string()
            } else {
                variants.join(", ")
            }
        ),
    ))
}

/// The default metric: the benchmark's headline number, else the wakeup latency P99.
pub fn default_metric(m: &Metrics) -> String {
    const HEADLINES: &[&str] = &[
        "workload.time_s",
        "workload.rps_avg",
        "workload.throughput",
        "workload.throughput_rps",
        "workload.bogo_ops_per_s",
        "workload.transactions",
        "workload.round_trips",
    ];
    HEADLINES
        .iter()
        .find(|k| m.get(**k).is_some_and(|v| *v != 0.0))
        .map_or("latency_us.wakeup.p99", |k| k)
        .to_string()
}

/// Run `schedlab bisect`; returns the exit status.
pub fn run(args: &BisectArgs) -> anyhow::Result<i32> {
    let started = Instant::now();
    let base = base_from_args(args)?;
    let (good_name, good) = side(&base, &args.good, "--good")?;
    let (bad_name, bad) = side(&base, &args.bad, "--bad")?;
    let limits = limits_from_args(args)?;
    check_bisect_outputs(args)?;
    let report_file = super::open_report_output(args.report.as_deref())?;
    let json_file = super::open_json_output(args.json.as_deref())?;
    let seed = base.run.seed;
    let diff = Difference::between(&good_name, good, &bad_name, bad)?;
    let mut ctx = RunContext::default();
    ctx.skip_schedstat_text = true;
    let signals = super::signals::Signals::install(&ctx);
    let verbose = std::io::IsTerminal::is_terminal(&std::io::stderr());
    ctx.lines = !verbose && !args.quiet.quiet;
    // Both sides resolved (machine imported once, workload checked) before the first run;
    // the configurations between them differ from these only in kernel features and
    // tunables.
    for side in [&diff.good, &diff.bad] {
        crate::experiment::scenario::ResolvedScenario::resolve(side, &ctx.imports)?;
    }
    let runner = runner::ScenarioRunner {
        diff: &diff,
        ctx: &ctx,
        verbose: verbose && !args.quiet.quiet,
        allow_incomplete: args.incomplete.allow_incomplete,
        cut_runs: Default::default(),
    };
    let metric = metric_of(args, &ctx, &diff, seed)?;
    let mut bisector = Bisector::new(&diff, &runner, &metric, seed, limits);
    let mut result = bisector.run()?;
    result.cut_runs = runner.cut_runs.load(std::sync::atomic::Ordering::Relaxed);
    let counters = report::top_counters(&bisector, &result);
    let mut text = report::render(&diff, &result, &counters);
    text.push_str(&format!(
        "wall time {:.1} s\n",
        started.elapsed().as_secs_f64()
    ));
    if args.json.as_deref() == Some("-") {
        eprint!("{text}");
    } else {
        output::write_stdout(&text)?;
    }
    if args.json.is_some() {
        let mut doc = serde_json::to_string_pretty(&report::to_json(&diff, &result, &counters))?;
        doc.push('\n');
        match json_file {
            Some(file) => file.write_commit(doc.as_bytes())?,
            None => output::write_stdout(&doc)?,
        }
    }
    if let Some(file) = report_file {
        file.write_commit(crate::report::pages::bisect_page(&diff, &result).as_bytes())?;
    }
    let stopped = ctx.stopped().then(|| signals.reason().unwrap_or("SIGINT"));
    Ok(stopped.map_or(0, super::signals::exit_code))
}

/// The search limits of `--runs` and `--budget`; separate as the argument check of `run`:
/// the budget must measure good and bad once.
fn limits_from_args(args: &BisectArgs) -> Result<Limits, InputError> {
    let limits = Limits {
        runs: args.runs.map_or(DEFAULT_RUNS, |r| r as usize),
        budget_runs: args.budget.unwrap_or(Limits::default().budget_runs),
        ..Limits::default()
    };
    if limits.budget_runs < 2 * limits.runs as u64 {
        return Err(InputError::with_key(
            "--budget",
            limits.budget_runs.to_string(),
            format!(
                "too small to measure good and bad once; accepted: at least 2 x --runs = {} runs",
                2 * limits.runs
            ),
        ));
    }
    Ok(limits)
}

/// Reject `--json` and `--report` files that name the scenario or each other; separate so
/// `run` checks them, before anything runs, in one step.
fn check_bisect_outputs(args: &BisectArgs) -> Result<(), InputError> {
    let mut outs: Vec<(&str, &std::path::Path)> = Vec::new();
    if let Some(dest) = args.json.as_deref().filter(|j| *j != "-") {
        outs.push(("--json", std::path::Path::new(dest)));
    }
    if let Some(dest) = &args.report {
        outs.push(("--report", dest.as_path()));
    }
    let ins: Vec<(&str, &std::path::Path)> = args
        .scenario
        .iter()
        .map(|s| ("scenario", s.as_path()))
        .collect();
    output::check_distinct(&outs, &ins)
}

/// The metric the search compares: `--metric`, else [`default_metric`] of one good run
/// (on the base seed); separate because the default costs a run of its own.
fn metric_of(
    args: &BisectArgs,
    ctx: &RunContext,
    diff: &Difference,
    seed: u64,
) -> InputResult<String> {
    Ok(match &args.metric {
        Some(m) => m.clone(),
        None => {
            let instruments = crate::stats::trace::Instruments::default();
            let (first, _) = crate::experiment::run_once_in(ctx, &diff.good, seed, instruments)?;
            default_metric(&runner::metrics_of(&first))
        }
    })
}
