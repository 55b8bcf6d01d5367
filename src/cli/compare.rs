//! `schedlab compare`: A/B comparison of kernel variants (ARCHITECTURE.md §3), what a
//! scheduler developer does with mmtests on two kernels, here on common random numbers.
//!
//! The baseline is the scenario as given (file plus quick-form options); then every
//! `[[variant]]` of the file, then every `--variant NAME:FEAT,NO_FEAT,sysctl=value`. All of
//! them run on the SAME seeds (those `schedlab run` would use for the baseline), so run `i`
//! of every variant sees the same random draws and the per-seed differences isolate the
//! variant's effect. The tables are built by [`crate::stats::compare`].

use super::args::{MachineArgs, TuneArgs};
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::config::{QuickOptions, build_document, parse_variant_spec, scenario::Scenario};
use crate::error::{InputError, InputResult};
use crate::experiment::{self, RunContext, RunOutput};
use crate::output;
use crate::stats::compare::Comparison;

/// The baseline's name in tables and JSON.
pub const BASELINE: &str = "baseline";

/// Arguments of `schedlab compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// A scenario file (TOML): the baseline, plus its `[[variant]]` tables. Optional with
    /// the quick form (`-m ... -- COMMAND`).
    pub scenario: Option<PathBuf>,
    /// A variant: NAME:FEAT,NO_FEAT,sysctl=value,dotted.key=value (repeatable), e.g.
    /// `--variant noq:NO_TTWU_QUEUE` or `--variant slowipi:machine.cost.ipi_latency_ns=50000`.
    #[arg(long = "variant", value_name = "NAME:FEAT,NO_FEAT,sysctl=value")]
    pub variants: Vec<String>,
    /// Runs per variant (the same seeds for every variant) [default: the scenario's run.runs,
    /// else 1]
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_runs)]
    pub runs: Option<u32>,
    /// Base seed [default: the scenario's run.seed, else 1]
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Kernel profile of the baseline (`schedlab list profiles`), e.g. v6.6
    /// [default: the scenario's kernel.profile, else v6.18, the newest]
    #[arg(short = 'k', long = "kernel", value_name = "PROFILE")]
    pub profile: Option<String>,
    // `--feature`, `--sysctl` and `--set` apply to the baseline, so to every variant.
    #[command(flatten)]
    pub tune: TuneArgs,
    /// Write every variant's results and the comparison tables as JSON to FILE (`-` =
    /// stdout; the text report then goes to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write an HTML report (see `schedlab report`) to FILE; the first seed of every variant
    /// also records its time series (per-CPU utilisation, tasks, migrations over time).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub incomplete: super::args::IncompleteArgs,
    #[command(flatten)]
    pub quiet: super::args::QuietArgs,
    /// The benchmark command line, as its users type it (after `--`), optionally behind
    /// `taskset` / `numactl` prefixes.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Compare two selections of a sweep database instead of running (`schedlab sweep
    /// merge`): needs --a, --b and --metric (docs/sweep.md).
    #[arg(long, value_name = "FILE", requires_all = ["sel_a", "sel_b", "metric"], conflicts_with_all = ["scenario", "variants", "command", "machine"])]
    pub db: Option<PathBuf>,
    /// With --db: selection A, AXIS=VALUE[,AXIS=VALUE...] (e.g. profile=v6.9).
    #[arg(long = "a", value_name = "AXIS=VALUE,...", requires = "db")]
    pub sel_a: Option<String>,
    /// With --db: selection B (runs are paired with A's on the axes neither names).
    #[arg(long = "b", value_name = "AXIS=VALUE,...", requires = "db")]
    pub sel_b: Option<String>,
    /// With --db: the metric compared (e.g. workload.time_s).
    #[arg(long, value_name = "M", requires = "db")]
    pub metric: Option<String>,
}

/// Build the baseline scenario from a file and/or the quick-form options.
pub fn baseline_from_args(args: &CompareArgs) -> InputResult<Scenario> {
    if args.scenario.is_none() && args.command.is_empty() && args.machine.machine.is_none() {
        return Err(InputError::new(
            "command line",
            "nothing to compare; accepted: `schedlab compare SCENARIO.toml [--variant \
             NAME:FEAT,...]` or `schedlab compare -m MACHINE --variant NAME:FEAT,... -- COMMAND` \
             (see `schedlab compare --help`)",
        ));
    }
    let opts = QuickOptions {
        base: args.scenario.clone(),
        machine: args.machine.machine.clone(),
        offline: args.machine.offline.clone(),
        profile: args.profile.clone(),
        features: args.tune.features.clone(),
        sysctls: args.tune.sysctls.clone(),
        sets: args.tune.sets.clone(),
        runs: args.runs,
        seed: args.seed,
        command: args.command.clone(),
    };
    let doc = build_document(&opts)?;
    for w in &doc.warnings {
        eprintln!("schedlab: warning: {w}");
    }
    Scenario::from_doc(doc)
}

/// One of the scenarios compared.
#[derive(Clone, Debug)]
pub struct NamedScenario {
    pub name: String,
    /// What it changes against the baseline (`dotted.key=value, ...`).
    pub changes: String,
    pub scenario: Scenario,
}

/// The scenarios to compare, named: the baseline first, then the file's `[[variant]]`s,
/// then each `--variant`.
pub fn scenarios_from_args(args: &CompareArgs) -> InputResult<Vec<NamedScenario>> {
    let base = baseline_from_args(args)?;
    let mut out = vec![NamedScenario {
        name: BASELINE.to_string(),
        changes: describe_baseline(&base),
        scenario: base.clone(),
    }];
    for v in &base.variants {
        if v.name == BASELINE {
            return Err(InputError::with_key(
                base.origin_of("variant"),
                "variant.name",
                format!("'{BASELINE}' names the scenario as given; choose another name"),
            ));
        }
        out.push(NamedScenario {
            name: v.name.clone(),
            changes: describe_overrides(&v.overrides),
            scenario: base.with_variant(v)?,
        });
    }
    for spec in &args.variants {
        let v = parse_variant_spec(spec, "--variant")?;
        if out.iter().any(|n| n.name == v.name) {
            return Err(InputError::with_key(
                "--variant",
                spec.clone(),
                format!(
                    "variant name '{}' is already used (names in use: {})",
                    v.name,
                    out.iter()
                        .map(|n| n.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        out.push(NamedScenario {
            name: v.name.clone(),
            changes: describe_overrides(&v.overrides),
            scenario: base.with_variant(&v)?,
        });
    }
    if out.len() < 2 {
        return Err(InputError::new(
            base.source.clone(),
            "nothing to compare the baseline with; accepted: [[variant]] tables in the \
             scenario, or --variant NAME:FEAT,NO_FEAT,sysctl=value",
        ));
    }
    Ok(out)
}

/// The runs of every variant and the comparison built from them.
pub struct CompareOutput {
    pub names: Vec<String>,
    /// What each variant changes (see [`NamedScenario::changes`]).
    pub changes: Vec<String>,
    pub scenarios: Vec<Scenario>,
    /// The seeds every variant ran with.
    pub seeds: Vec<u64>,
    /// Per variant, its runs in seed order (slimmed when streamed: see
    /// [`experiment::ResultsStream::push`]).
    pub runs: Vec<Vec<RunOutput>>,
    pub comparison: Comparison,
    /// Per variant, the stream its `runs[]` entries were written to (`--json`; empty
    /// otherwise): [`write_json`] assembles the document from them.
    pub streams: Vec<experiment::ResultsStream>,
}

/// Where `compare` sends finished runs (see [`compare_streamed`]).
pub enum RunsSink<'a> {
    /// Keep every run whole (the caller builds documents from them: `--report` alone).
    Whole,
    /// Keep only what the tables and the text report need (no `--json`).
    Slim,
    /// `--json`: each variant's `runs[]` entries to a scratch file in the directory as
    /// they finish; runs kept whole as well when the flag is set (`--report`).
    Json(&'a std::path::Path, bool),
}

/// The seeds `schedlab run` uses for `scn`: `run.runs` seeds derived from `run.seed`.
pub fn seeds_of(scn: &Scenario) -> Vec<u64> {
    (0..scn.run.runs.max(1) as u64)
        .map(|i| crate::rng::run_seed(scn.run.seed, i))
        .collect()
}

/// Run every variant on the baseline's seeds and compare.
pub fn compare(variants: &[NamedScenario]) -> InputResult<CompareOutput> {
    compare_in(&RunContext::for_terminal(), variants)
}

/// [`compare`] within a [`RunContext`]: after a stop request, only the variants whose runs
/// all finished are compared.
pub fn compare_in(ctx: &RunContext, variants: &[NamedScenario]) -> InputResult<CompareOutput> {
    compare_streamed(ctx, variants, RunsSink::Whole)
}

/// [`compare_in`], finished runs going to `sink` in seed order as they finish, so memory
/// does not grow with the number of runs (unless they are kept whole).
pub fn compare_streamed(
    ctx: &RunContext,
    variants: &[NamedScenario],
    sink: RunsSink,
) -> InputResult<CompareOutput> {
    let Some(base) = variants.first().map(|v| &v.scenario) else {
        return Err(InputError::new("compare", "no scenario to run"));
    };
    let seeds = seeds_of(base);
    // All variants' seeds share one parallel pool.
    let scns: Vec<&Scenario> = variants.iter().map(|v| &v.scenario).collect();
    let mut streams = streams_for(sink, variants.len())?;
    let handed: Vec<Option<&mut experiment::ResultsStream>> = if streams.is_empty() {
        variants.iter().map(|_| None).collect()
    } else {
        streams.iter_mut().map(Some).collect()
    };
    let mut runs = Vec::with_capacity(variants.len());
    for r in experiment::run_variants_streamed(ctx, &scns, &seeds, "compare", handed)? {
        if r.len() < seeds.len() {
            break;
        }
        runs.push(r);
    }
    streams.truncate(runs.len());
    let variants = &variants[..runs.len()];
    let names: Vec<String> = variants.iter().map(|v| v.name.clone()).collect();
    // The tables name a variant whose benchmark did not finish in some run with a `*`.
    let table_names: Vec<String> = (names.iter().zip(&runs))
        .map(|(n, rs)| match unfinished(rs) {
            0 => n.clone(),
            _ => format!("{n}*"),
        })
        .collect();
    let results: Vec<Vec<&crate::stats::report::RunResult>> = runs
        .iter()
        .map(|rs| rs.iter().map(|r| &r.result).collect())
        .collect();
    let perfs: Vec<Vec<_>> = runs
        .iter()
        .map(|rs| rs.iter().map(|r| r.perf).collect())
        .collect();
    let kind = workload_kind(&runs, base);
    let mut comparison = if streams.is_empty() {
        Comparison::build(&table_names, &seeds, &results, &perfs, &kind)
    } else {
        // Streamed runs are slimmed: the tables come from the streams' metric columns.
        let columns: Vec<_> = streams.iter().map(|s| s.columns().clone()).collect();
        let migrations = crate::stats::compare::migration_diff_of_columns(&table_names, &columns);
        Comparison::from_columns(&table_names, &seeds, &columns, &perfs, migrations, &kind)
    };
    comparison.mark_unfinished(&runs.iter().map(|rs| unfinished(rs)).collect::<Vec<_>>());
    Ok(CompareOutput {
        names,
        changes: variants.iter().map(|v| v.changes.clone()).collect(),
        scenarios: variants.iter().map(|v| v.scenario.clone()).collect(),
        seeds,
        runs,
        comparison,
        streams,
    })
}

/// One results stream per variant for `sink` (none when the runs are kept whole); separate
/// as the choice of where `compare_streamed` sends finished runs.
fn streams_for(sink: RunsSink, variants: usize) -> InputResult<Vec<experiment::ResultsStream>> {
    Ok(match sink {
        RunsSink::Whole => Vec::new(),
        RunsSink::Slim => (0..variants)
            .map(|_| experiment::ResultsStream::slim_only())
            .collect(),
        RunsSink::Json(dir, keep_whole) => (0..variants)
            .map(|_| {
                // Each variant's document sits at `variants[].results`, 6 spaces deep.
                experiment::ResultsStream::new("--json", dir, keep_whole).map(|s| s.nested(6))
            })
            .collect::<InputResult<_>>()?,
    })
}

/// The workload kind the tables name: the first run's, else the baseline scenario's;
/// separate to keep `compare_streamed` to its steps.
fn workload_kind(runs: &[Vec<RunOutput>], base: &Scenario) -> String {
    runs.first()
        .and_then(|rs| rs.first())
        .and_then(|r| r.result.workload.kind())
        .map(str::to_string)
        .or_else(|| base.workload.kind.clone())
        .unwrap_or_else(|| "workload".to_string())
}

/// How many of `runs` did not finish their benchmark ([`RunOutput::workload_complete`]).
pub fn unfinished(runs: &[RunOutput]) -> usize {
    runs.iter().filter(|r| !r.workload_complete).count()
}

/// Refuse to compare runs whose benchmark did not finish, unless `allow` (then they are
/// marked in the tables and a warning says so).
fn check_finished(out: &CompareOutput, allow: bool) -> InputResult<()> {
    let total: usize = out.runs.iter().map(Vec::len).sum();
    let cut: usize = out.runs.iter().map(|rs| unfinished(rs)).sum();
    let Some((scn, first)) = (out.scenarios.iter().zip(&out.runs))
        .find_map(|(scn, rs)| rs.iter().find(|r| !r.workload_complete).map(|r| (scn, r)))
    else {
        return Ok(());
    };
    let cause = experiment::cut_cause(scn, first.end_ns);
    if allow {
        eprintln!(
            "schedlab: warning: the benchmark did not finish in {cut} of {total} runs ({cause}); \
             compared anyway (--allow-incomplete), marked * in the tables"
        );
        return Ok(());
    }
    Err(InputError::with_key(
        "compare",
        "run.duration_s",
        format!(
            "the benchmark did not finish in {cut} of {total} runs ({cause}): their numbers are \
             not the benchmark's and are not compared; accepted: a run.duration_s long enough \
             for the benchmark to finish, or --allow-incomplete to compare cut runs"
        ),
    ))
}

/// Run the first seed of every variant again with its time series recorded (a run is
/// deterministic, so its results are the same, now with `timeline`), for `--report`.
fn record_timelines(ctx: &RunContext, out: &mut CompareOutput) -> InputResult<()> {
    for (scn, runs) in out.scenarios.iter().zip(out.runs.iter_mut()) {
        let Some(first) = runs.first_mut() else {
            continue;
        };
        if ctx.stopped() {
            break;
        }
        let instruments = crate::stats::trace::Instruments {
            timeline: true,
            ..Default::default()
        };
        let (again, _) = experiment::run_once_in(ctx, scn, first.seed, instruments)?;
        if again.complete {
            first.result.timeline = again.result.timeline;
        }
    }
    Ok(())
}

/// The baseline's one-line description.
fn describe_baseline(scn: &Scenario) -> String {
    format!(
        "the scenario as given (profile {}, policy {})",
        scn.kernel.profile,
        serde_json::to_value(scn.kernel.policy)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    )
}

fn describe_overrides(o: &std::collections::BTreeMap<String, toml::Value>) -> String {
    o.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text report: what ran, then the tables.
pub fn render(out: &CompareOutput) -> String {
    let mut text = String::new();
    let seeds: Vec<String> = out.seeds.iter().map(u64::to_string).collect();
    text.push_str(&format!(
        "schedlab compare: {} variants x {} run{}, seeds {} (the same for every variant)\n",
        out.names.len(),
        out.seeds.len(),
        if out.seeds.len() == 1 { "" } else { "s" },
        seeds.join(" ")
    ));
    let w = out.names.iter().map(String::len).max().unwrap_or(8);
    for ((name, line), runs) in out.names.iter().zip(&out.changes).zip(&out.runs) {
        text.push_str(&format!("  {name:<w$}  {line}\n"));
        let cut = unfinished(runs);
        if cut > 0 {
            text.push_str(&format!(
                "  {:<w$}  * the benchmark did not finish in {cut} of {} runs\n",
                "",
                runs.len()
            ));
        }
    }
    text.push('\n');
    text.push_str(&out.comparison.render());
    for (name, runs) in out.names.iter().zip(&out.runs) {
        for r in runs {
            super::run::warn_watchdog(&format!("{name} "), r);
            for v in r.invariant_violations.iter().take(10) {
                text.push_str(&format!(
                    "{name} seed {}: invariant violated: {v}\n",
                    r.seed
                ));
            }
        }
    }
    text
}

/// The JSON document: every variant's results (as `schedlab run` writes them) and the
/// comparison tables as data.
pub fn results_json(out: &CompareOutput) -> Value {
    results_json_stopped(out, None)
}

/// [`results_json`] with the completion keys: `"complete": true`, or `false` with
/// `"stopped_reason"` when a signal stopped the comparison (then only the variants that
/// finished are in it).
pub fn results_json_stopped(out: &CompareOutput, stopped: Option<&str>) -> Value {
    let mut doc = json!({
        "schedlab_version": experiment::SCHEDLAB_VERSION,
        "complete": stopped.is_none(),
        "baseline": BASELINE,
        "seeds": out.seeds,
        "variants": out
            .names
            .iter()
            .zip(&out.scenarios)
            .zip(&out.runs)
            .zip(&out.changes)
            .map(|(((name, scn), runs), line)| json!({
                "name": name,
                "changes": line,
                "results": experiment::results_json(scn, runs),
            }))
            .collect::<Vec<_>>(),
        "comparison": out.comparison,
    });
    if let Some(reason) = stopped {
        doc["stopped_reason"] = json!(reason);
    }
    doc
}

/// Write the JSON document of a comparison whose runs were streamed (`RunsSink::Json`):
/// byte for byte what `serde_json::to_string_pretty` gives for [`results_json_stopped`]
/// (and a newline), each variant's `results` assembled by its stream.
pub fn write_json(
    out: CompareOutput,
    stopped: Option<&str>,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    debug_assert_eq!(out.streams.len(), out.runs.len(), "every variant streamed");
    let mut streams = out.streams.into_iter();
    let head = json!({
        "schedlab_version": experiment::SCHEDLAB_VERSION,
        "complete": stopped.is_none(),
        "baseline": BASELINE,
        "seeds": out.seeds,
        "variants": [],
        "comparison": out.comparison,
    });
    let Value::Object(mut map) = head else {
        unreachable!("the document is an object")
    };
    if let Some(reason) = stopped {
        map.insert("stopped_reason".into(), json!(reason));
    }
    let mut doc = output::PrettyContainer::object(w, 0)?;
    for (key, value) in &map {
        if key != "variants" {
            doc.member(key, value)?;
            continue;
        }
        let (w, indent) = doc.key("variants")?;
        let mut list = output::PrettyContainer::array(w, indent)?;
        let variants = (out.names.iter()).zip(&out.changes).zip(&out.scenarios);
        for (((name, changes), scn), stream) in variants.zip(streams.by_ref()) {
            let (w, indent) = list.next_entry()?;
            // Keys in serde_json's (sorted) order: changes, name, results.
            let mut v = output::PrettyContainer::object(w, indent)?;
            v.member("changes", changes)?;
            v.member("name", name)?;
            let (w, indent) = v.key("results")?;
            stream.finish_at(scn, None, w, indent)?;
            v.end()?;
        }
        list.end()?;
    }
    doc.end()?;
    w.write_all(b"\n")
}

/// Run `schedlab compare`; returns the exit status (0, or 128 + the signal that stopped it).
pub fn run(args: &CompareArgs) -> anyhow::Result<i32> {
    if let (Some(db), Some(a), Some(b), Some(m)) =
        (&args.db, &args.sel_a, &args.sel_b, &args.metric)
    {
        return super::sweep::compare_db(db, a, b, m, args.incomplete.allow_incomplete);
    }
    let variants = scenarios_from_args(args)?;
    let base = &variants[0].scenario;
    let mut ctx = RunContext::for_terminal();
    let setup = super::baseline_setup_line(base, &ctx.imports)?;
    for v in &variants {
        for note in &v.scenario.kernel.notes {
            eprintln!("schedlab: note: {}: {note}", v.name);
        }
    }
    let (json_file, report_file) = open_outputs(args)?;
    ctx.skip_schedstat_text = true;
    let signals = super::signals::Signals::install(&ctx);
    let json_dir = json_file
        .as_ref()
        .map_or_else(std::env::temp_dir, |f| f.dir());
    ctx.quiet = args.quiet.quiet;
    // With --report the runs are kept whole, so the time series recorded for the report
    // are in the --json document too (`schedlab report` of it draws the same charts).
    let sink = match (&args.json, &args.report) {
        (Some(_), None) => RunsSink::Json(&json_dir, false),
        (_, Some(_)) => RunsSink::Whole,
        (None, None) => RunsSink::Slim,
    };
    let mut out = compare_streamed(&ctx, &variants, sink)?;
    check_finished(&out, args.incomplete.allow_incomplete)?;
    if report_file.is_some() {
        record_timelines(&ctx, &mut out)?;
    }
    let stopped = ctx.stopped().then(|| signals.reason().unwrap_or("SIGINT"));
    let text = format!("{setup}\n{}", render(&out));
    let json_to_stdout = args.json.as_deref() == Some("-");
    if json_to_stdout {
        eprint!("{text}");
    } else {
        output::write_stdout(&text)?;
    }
    if let Some(reason) = stopped {
        eprintln!(
            "schedlab: stopped by {reason}: {} of {} variants finished",
            out.names.len(),
            variants.len()
        );
    }
    if let Some(file) = report_file {
        let results = results_json_stopped(&out, stopped);
        let doc = crate::report::ReportDoc::from_json("schedlab compare", &results)?;
        file.write_commit(crate::report::render(&doc).as_bytes())?;
    }
    if args.json.is_some() {
        write_results_json(out, stopped, json_file)?;
    }
    Ok(stopped.map_or(0, super::signals::exit_code))
}

/// Check `--json` against the scenario file, then open the `--json` and `--report` files
/// (as temporary files); separate so `run` fails on a bad path in one step, before the runs.
fn open_outputs(
    args: &CompareArgs,
) -> InputResult<(Option<output::AtomicFile>, Option<output::AtomicFile>)> {
    if let (Some(dest), Some(scenario)) =
        (args.json.as_deref().filter(|j| *j != "-"), &args.scenario)
    {
        output::check_distinct(
            &[("--json", std::path::Path::new(dest))],
            &[("scenario", scenario.as_path())],
        )?;
    }
    let json_file = super::open_json_output(args.json.as_deref())?;
    let report_file = super::open_report_output(args.report.as_deref())?;
    Ok((json_file, report_file))
}

/// Write the `--json` document to its file, or to stdout without one: streamed runs from
/// their streams, whole runs serialized; separate as the last output step of `run`.
fn write_results_json(
    out: CompareOutput,
    stopped: Option<&str>,
    json_file: Option<output::AtomicFile>,
) -> InputResult<()> {
    let streamed = !out.streams.is_empty();
    let write = |w: &mut dyn std::io::Write| {
        if streamed {
            return write_json(out, stopped, w);
        }
        serde_json::to_writer_pretty(&mut *w, &results_json_stopped(&out, stopped))?;
        w.write_all(b"\n")
    };
    match json_file {
        Some(file) => file.write_with(write),
        None => output::write_stdout_with(write),
    }
}
