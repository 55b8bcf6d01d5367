//! `schedlab run`: a scenario file or the quick form, one or more runs, the workload's native
//! report, a perf-stat block and a migration summary; `--json` writes the full results.

use super::args::{MachineArgs, TuneArgs};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::signals::{self, Signals};
use crate::config::{QuickOptions, build_document, scenario::Scenario};
use crate::error::InputError;
use crate::experiment::{self, RunContext};
use crate::output;
use crate::stats::perf;
use crate::stats::trace::{Instruments, TraceSink};
use crate::workload::results::TextSink;

/// Arguments of `schedlab run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// A scenario file (TOML). Optional with the quick form (`-m ... -- COMMAND`).
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Kernel profile (`schedlab list profiles`), e.g. v6.6
    /// [default: the scenario's kernel.profile, else v6.18, the newest]
    #[arg(short = 'k', long = "kernel", value_name = "PROFILE")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub tune: TuneArgs,
    /// Number of runs (seeds derived from --seed) [default: the scenario's run.runs, else 1]
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_runs)]
    pub runs: Option<u32>,
    /// Base seed [default: the scenario's run.seed, else 1]
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    /// Write the results JSON to FILE (`-` = stdout; the text report then goes to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write /proc/schedstat (version 17) as it reads at the end of the first run.
    #[arg(long, value_name = "FILE")]
    pub schedstat: Option<PathBuf>,
    /// Write the NUMA-balancing counters of /proc/vmstat (`name value` lines) of the first
    /// run's measured interval (all zero when no task declares a working set).
    #[arg(long, value_name = "FILE")]
    pub vmstat: Option<PathBuf>,
    /// Write a scheduling trace of one run to FILE: `.pftrace`/`.perfetto-trace` =
    /// Perfetto protobuf (open in ui.perfetto.dev), `.txt`/`.ftrace` = ftrace text. With
    /// --runs > 1 only the first run (the first seed), or the one --run K names, is traced.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// After the run, print one task's decision history: placements, migrations with their
    /// reasons, switches, wakeups, runtime and wait time. TASK is a pid (the results'
    /// tasks[].pid) or a task name; with --runs > 1, the task of the first run (first seed),
    /// or of the run --run K names
    #[arg(long, value_name = "TASK")]
    pub explain: Option<String>,
    /// Write an HTML report of the results to FILE (see `schedlab report`); records the time
    /// series of the first run, or of the one --run K names (per-CPU utilisation, tasks, migrations), which `--json` then
    /// carries.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Which run (1-based, in seed order) --trace, --explain and --report record; default 1.
    /// Its seed is printed with its summary line, and `--seed SEED --runs 1` replays it.
    #[arg(long = "run", value_name = "K", value_parser = super::parse_run_index)]
    pub run_index: Option<u32>,
    #[command(flatten)]
    pub quiet: super::args::QuietArgs,
    /// The benchmark command line, as its users type it (after `--`), optionally behind
    /// `taskset [-c] MASK|CPULIST` and `numactl [-N nodes] [-C cpus] [-m|-p|-i nodes] [-l]`
    /// prefixes (e.g. `-- numactl --cpunodebind=1 --membind=1 hackbench 10`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Build the scenario from a file and/or the quick-form options.
pub fn scenario_from_args(args: &RunArgs) -> Result<Scenario, InputError> {
    if args.scenario.is_none() && args.command.is_empty() && args.machine.machine.is_none() {
        return Err(InputError::new(
            "command line",
            "nothing to run; accepted: `schedlab run SCENARIO.toml` or `schedlab run -m MACHINE \
             -- COMMAND` (see `schedlab run --help`)",
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

/// The files `run` reads, for [`crate::output::check_distinct`]: the scenario, a machine
/// file, the `[machine]` hwloc file, the rt-app `file`, and every word of the benchmark
/// command line that names an existing file.
fn input_paths(args: &RunArgs, scn: &Scenario) -> Vec<(&'static str, PathBuf)> {
    let mut inputs: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(p) = &args.scenario {
        inputs.push(("scenario", p.clone()));
    }
    if let Some(m) = &args.machine.machine {
        inputs.push(("-m", PathBuf::from(m)));
    }
    let base = args
        .scenario
        .as_deref()
        .and_then(std::path::Path::parent)
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    if let Some(h) = &scn.machine.hwloc {
        inputs.push(("machine.hwloc", base.join(h)));
    }
    for w in &args.command {
        inputs.push(("benchmark command", PathBuf::from(w)));
    }
    for workload in std::iter::once(&scn.workload).chain(&scn.more_workloads) {
        if let Some(toml::Value::String(f)) = workload.params.get("file") {
            inputs.push(("workload.file", base.join(f)));
        }
        for w in workload.command.iter().flat_map(|c| c.split_whitespace()) {
            let w = w.trim_matches(|c| c == '"' || c == '\'');
            inputs.push(("workload.command", base.join(w)));
        }
    }
    inputs
}

/// The output files of `run` (`--json -` is stdout, not a file).
fn output_paths(args: &RunArgs) -> Vec<(&'static str, PathBuf)> {
    let mut outs = Vec::new();
    if let Some(j) = args.json.as_deref().filter(|j| *j != "-") {
        outs.push(("--json", PathBuf::from(j)));
    }
    if let Some(t) = &args.trace {
        outs.push(("--trace", t.clone()));
    }
    if let Some(s) = &args.schedstat {
        outs.push(("--schedstat", s.clone()));
    }
    if let Some(r) = &args.report {
        outs.push(("--report", r.clone()));
    }
    if let Some(v) = &args.vmstat {
        outs.push(("--vmstat", v.clone()));
    }
    outs
}

/// Reject outputs that name an input or each other, before anything runs.
pub fn check_outputs(args: &RunArgs, scn: &Scenario) -> Result<(), InputError> {
    let outs = output_paths(args);
    let ins = input_paths(args, scn);
    let outs: Vec<(&str, &std::path::Path)> = outs.iter().map(|(o, p)| (*o, p.as_path())).collect();
    let ins: Vec<(&str, &std::path::Path)> = ins.iter().map(|(o, p)| (*o, p.as_path())).collect();
    output::check_distinct(&outs, &ins)
}

/// Run `schedlab run`; returns the exit status (0, or 128 + the signal that stopped it).
pub fn run(args: &RunArgs) -> anyhow::Result<i32> {
    let scn = scenario_from_args(args)?;
    check_outputs(args, &scn)?;
    let mut ctx = RunContext::for_terminal();
    // Resolved (machine imported, workload checked) before anything is printed or run.
    let resolved = experiment::scenario::ResolvedScenario::resolve(&scn, &ctx.imports)?;
    let setup = super::setup_line_with_warnings(&resolved);
    for note in &scn.kernel.notes {
        eprintln!("schedlab: note: {note}");
    }
    // Result files are opened (as temporary files) now: an unwritable path fails before the run.
    let json_file = super::open_json_output(args.json.as_deref())?;
    let side_files = SideFiles::open(args)?;
    let json_to_stdout = args.json.as_deref() == Some("-");
    ctx.skip_schedstat_text = args.schedstat.is_none();
    ctx.instrumented_run = instrumented_run(args, &scn)?;
    ctx.quiet = args.quiet.quiet;
    // One run: the benchmark's interval output streams as simulated time passes, after the
    // setup line, as the real program prints it (several runs print in seed order at the end).
    let streamed = if scn.run.runs.max(1) == 1 {
        stream_interval_output(&mut ctx, &setup, json_to_stdout)
    } else {
        Arc::default()
    };
    let signals = Signals::install(&ctx);
    let instruments = Instruments {
        trace: args.trace.as_deref().map(TraceSink::create).transpose()?,
        explain: args.explain.clone(),
        timeline: args.report.is_some(),
    };
    let mut stream = results_stream(args, json_file.as_ref())?;
    let (runs, explanation) =
        experiment::run_resolved_streamed(&ctx, &resolved, instruments, stream.as_mut())?;
    let stopped = if ctx.stopped() {
        Some(signals.reason().unwrap_or("SIGINT"))
    } else {
        None
    };
    for r in &runs {
        warn_watchdog("", r);
    }
    let text = report_text(&streamed, &setup, &scn, &runs, explanation.as_deref());
    if json_to_stdout {
        eprint!("{text}");
    } else {
        output::write_stdout(&text)?;
    }
    if let Some(reason) = stopped {
        eprintln!(
            "{}",
            stop_message(args, &scn, ctx.instrumented_run, &runs, reason)
        );
    }
    side_files.write(args, &scn, &runs, stopped)?;
    if let Some(stream) = stream.filter(|_| args.json.is_some()) {
        let write = |out: &mut dyn std::io::Write| stream.finish(&scn, stopped, out);
        match json_file {
            Some(file) => file.write_with(write)?,
            None => output::write_stdout_with(write)?,
        }
    }
    Ok(stopped.map_or_else(|| unfinished_exit(&scn, &runs), signals::exit_code))
}

/// The text report of `run` after the runs: the native reports, the perf-stat block, a
/// summary line per seed and the `--explain` history; separate to keep `run` to its steps.
fn report_text(
    streamed: &Mutex<Option<String>>,
    setup: &str,
    scn: &Scenario,
    runs: &[experiment::RunOutput],
    explanation: Option<&str>,
) -> String {
    let mut text = native_texts(streamed, setup, runs);
    let command = perf_target(scn);
    let perfs: Vec<_> = runs.iter().map(|r| r.perf).collect();
    if !runs.is_empty() {
        text.push_str(&perf::render(&command, &perfs));
        text.push_str(&unfinished_note(runs));
    }
    for r in runs {
        text.push_str(&format!("seed {}: {}\n", r.seed, r.summary_line));
        for v in r.invariant_violations.iter().take(10) {
            text.push_str(&format!("invariant violated: {v}\n"));
        }
    }
    if let Some(explanation) = explanation {
        text.push('\n');
        text.push_str(explanation);
    }
    text
}

/// The result files of `run` besides `--json` (`--schedstat`, `--vmstat`, `--report`),
/// opened before the run and written from its first run (or all runs) after it.
struct SideFiles {
    schedstat: Option<output::AtomicFile>,
    vmstat: Option<output::AtomicFile>,
    report: Option<output::AtomicFile>,
}

impl SideFiles {
    /// Open the files the options name as temporary files; separate so `run` opens them all
    /// (an unwritable path fails) before anything runs.
    fn open(args: &RunArgs) -> Result<SideFiles, InputError> {
        let schedstat = match &args.schedstat {
            Some(dest) => Some(output::AtomicFile::create("--schedstat", dest)?),
            None => None,
        };
        let vmstat = match &args.vmstat {
            Some(dest) => Some(output::AtomicFile::create("--vmstat", dest)?),
            None => None,
        };
        let report = super::open_report_output(args.report.as_deref())?;
        Ok(SideFiles {
            schedstat,
            vmstat,
            report,
        })
    }

    /// Write and commit the files (none without a finished run); separate from `run` as one
    /// step: the schedstat text, the HTML report, then the vmstat counters.
    fn write(
        self,
        args: &RunArgs,
        scn: &Scenario,
        runs: &[experiment::RunOutput],
        stopped: Option<&str>,
    ) -> anyhow::Result<()> {
        if let (Some(dest), Some(file)) = (&args.schedstat, self.schedstat)
            && let Some(first) = runs.first()
        {
            let text = first.schedstat_text.clone().ok_or_else(|| {
                InputError::with_key(
                    "--schedstat",
                    output::echo(&dest.display().to_string()),
                    format!(
                        "policy '{}' keeps no schedstats; accepted with kernel.policy = \"linux-fair\"",
                        scn.kernel.policy.name()
                    ),
                )
            })?;
            file.write_commit(text.as_bytes())?;
        }
        if let Some(file) = self.report
            && !runs.is_empty()
        {
            let results = experiment::results_json_stopped(scn, runs, stopped);
            let doc = crate::report::ReportDoc::from_json("schedlab run", &results)?;
            file.write_commit(crate::report::render(&doc).as_bytes())?;
        }
        if let (Some(file), Some(first)) = (self.vmstat, runs.first()) {
            let text = first.result.vmstat.unwrap_or_default().proc_text();
            file.write_commit(text.as_bytes())?;
        }
        Ok(())
    }
}

/// The line printed after a signal stopped the runs: how many finished, and whether the
/// trace was kept (it is when the run it records, the `--run K`, finished before the stop).
fn stop_message(
    args: &RunArgs,
    scn: &Scenario,
    traced: usize,
    runs: &[experiment::RunOutput],
    reason: &str,
) -> String {
    let traced_seed = crate::rng::run_seed(scn.run.seed, traced as u64);
    let trace_kept = runs.iter().any(|r| r.seed == traced_seed);
    format!(
        "schedlab: stopped by {reason}: {} of {} runs finished{}",
        runs.len(),
        scn.run.runs.max(1),
        match (&args.trace, trace_kept) {
            (None, _) => String::new(),
            (Some(t), true) => format!(
                "; the trace of run {} is complete in {}",
                traced + 1,
                output::echo(&t.display().to_string())
            ),
            (Some(_), false) => "; the trace was not kept (its run did not finish)".into(),
        }
    )
}

/// `--run K`: the 0-based index of the run the instruments record; K must name one of the
/// runs, and is meaningful only with `--trace`, `--explain` or `--report`.
fn instrumented_run(args: &RunArgs, scn: &Scenario) -> Result<usize, InputError> {
    let Some(k) = args.run_index else {
        return Ok(0);
    };
    let runs = scn.run.runs.max(1);
    if args.trace.is_none() && args.explain.is_none() && args.report.is_none() {
        return Err(InputError::with_key(
            "command line",
            "--run",
            "picks the run --trace, --explain or --report records; accepted with one of them",
        ));
    }
    if k > runs {
        return Err(InputError::with_key(
            "command line",
            "--run",
            format!("got {k}; accepted: a run from 1 to {runs} (run.runs = {runs})"),
        ));
    }
    Ok(k as usize - 1)
}

/// The perf-stat block's last line when some runs did not finish the benchmark: its
/// counters then cover a cut run, not the benchmark.
fn unfinished_note(runs: &[experiment::RunOutput]) -> String {
    let cut = runs.iter().filter(|r| !r.workload_complete).count();
    if cut == 0 {
        return String::new();
    }
    format!(
        " benchmark not finished in {cut} of {} runs: these counters cover the runs as cut, \
         not the benchmark\n\n",
        runs.len()
    )
}

/// The exit status of runs that were not stopped by a signal: 0, with a warning when the
/// user's `run.duration_s` cut the benchmark short; [`crate::error::EXIT_INCOMPLETE`] with an
/// error when the default simulated-time cap did.
fn unfinished_exit(scn: &Scenario, runs: &[experiment::RunOutput]) -> i32 {
    let Some(cut) = runs.iter().find(|r| !r.workload_complete) else {
        return 0;
    };
    let n = runs.iter().filter(|r| !r.workload_complete).count();
    let cause = experiment::cut_cause(scn, cut.end_ns);
    if scn.run.duration_s.is_some() {
        eprintln!(
            "schedlab: warning: the benchmark did not finish in {n} of {} runs, its results are \
             not the benchmark's: {cause}",
            runs.len()
        );
        0
    } else {
        eprintln!(
            "schedlab: error: the benchmark did not finish in {n} of {} runs: {cause}",
            runs.len()
        );
        crate::error::EXIT_INCOMPLETE
    }
}

/// `--json`: the stream each run's entry is written to as it finishes (its scratch file next
/// to the destination, or in the temporary directory for stdout); runs are kept whole for
/// a `--report`. Without `--json` (and `--report`) finished runs are slimmed all the same.
fn results_stream(
    args: &RunArgs,
    json_file: Option<&output::AtomicFile>,
) -> Result<Option<experiment::ResultsStream>, InputError> {
    if args.json.is_none() {
        return Ok(args
            .report
            .is_none()
            .then(experiment::ResultsStream::slim_only));
    }
    let dir = json_file.map_or_else(std::env::temp_dir, |f| f.dir());
    experiment::ResultsStream::new("--json", &dir, args.report.is_some()).map(Some)
}

/// Write streamed report text now: to stdout, or to stderr when stdout carries the JSON.
/// Errors (a closed or full stdout) are left to the final write, which reports them.
fn emit(text: &str, json_to_stdout: bool) {
    use std::io::Write;
    if json_to_stdout {
        eprint!("{text}");
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
}

/// Stream the benchmark's interval output of a single run (see [`emit`]) with the setup line
/// before its first text. Returns what was streamed: `None` until the benchmark first prints.
fn stream_interval_output(
    ctx: &mut RunContext,
    setup: &str,
    json_to_stdout: bool,
) -> Arc<Mutex<Option<String>>> {
    let streamed: Arc<Mutex<Option<String>>> = Arc::default();
    let log = streamed.clone();
    let setup_line = format!("{setup}\n");
    ctx.stream = Some(TextSink(Arc::new(move |text: &str| {
        let mut log = log.lock().expect("stream log");
        let log = log.get_or_insert_with(|| {
            emit(&setup_line, json_to_stdout);
            String::new()
        });
        emit(text, json_to_stdout);
        log.push_str(text);
    })));
    streamed
}

/// The setup line and the runs' native reports, minus what was already streamed.
fn native_texts(
    streamed: &Mutex<Option<String>>,
    setup: &str,
    runs: &[experiment::RunOutput],
) -> String {
    let mut text = String::new();
    match streamed.lock().expect("stream log").as_deref() {
        Some(streamed) => {
            // What was streamed is the start of the native report: print the rest.
            for r in runs {
                text.push_str(
                    r.native_text
                        .strip_prefix(streamed)
                        .unwrap_or(&r.native_text),
                );
            }
        }
        None => {
            text.push_str(setup);
            text.push('\n');
            for r in runs {
                text.push_str(&r.native_text);
            }
        }
    }
    text
}

/// The command the perf-stat header names: the workload's command line (else its kind) and,
/// when keys from `--set` or a variant were applied on top of the command, those keys as the
/// `--set` options that changed what ran (`'hackbench -g 10 -l 500 --set workload.groups=4'`).
/// What the perf-stat header names: the workload's command ([`perf_command`]), or with
/// several workloads `system wide`, as `perf stat -a` prints it (the counters are the
/// machine's).
pub fn perf_target(scn: &crate::config::scenario::Scenario) -> String {
    match scn.more_workloads.is_empty() {
        true => perf_command(&scn.workload),
        false => "system wide".to_string(),
    }
}

pub fn perf_command(w: &crate::config::scenario::WorkloadSection) -> String {
    let Some(cmd) = &w.command else {
        return w.kind.clone().unwrap_or_default();
    };
    let mut out = cmd.clone();
    for (k, v) in &w.params {
        out.push_str(&format!(" --set workload.{k}={v}"));
    }
    out
}

/// The scheduling watchdog's first finding of a run, once, on stderr (like the kernel's
/// `WARN_ON_ONCE()`); all of them are in the results' `warnings`.
pub(crate) fn warn_watchdog(variant: &str, r: &experiment::RunOutput) {
    if let Some(line) = watchdog_warning(variant, r) {
        eprintln!("{line}");
    }
}

/// The one stderr line `warn_watchdog` prints for run `r` (`variant`: a comparison's
/// variant name and a blank, or nothing): its first watchdog finding and how many more the
/// results hold. `None` when the run has none.
pub fn watchdog_warning(variant: &str, r: &experiment::RunOutput) -> Option<String> {
    let first = r.result.warnings.first()?;
    let more = r.result.warnings.len() - 1;
    Some(format!(
        "schedlab: warning: {variant}seed {}: scheduling watchdog: {first}{}",
        r.seed,
        if more > 0 {
            format!(" (and {more} more: the results' `warnings`)")
        } else {
            String::new()
        }
    ))
}
