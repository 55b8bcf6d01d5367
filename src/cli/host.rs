//! `schedlab host-measure` and `schedlab calibrate`: this machine's real benchmarks into a
//! host table, and the `host` machine's inputs fitted to its microbenchmarks.

use std::path::PathBuf;

use crate::error::InputError;
use crate::experiment::RunContext;
use crate::experiment::host::{calibrate, calibration, measure, rows, table, trace};
use crate::output;
use crate::stats::dynamics;
use crate::stats::trace::ftrace_reader::{self, TraceRecord};
use crate::stats::trace::{Instruments, TraceSink};

/// Arguments of `schedlab host-measure`.
#[derive(clap::Args, Debug)]
pub struct HostMeasureArgs {
    /// Real runs per row.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,
    /// Only this row (repeatable); default: every row.
    #[arg(long = "row", value_name = "ID")]
    pub row_ids: Vec<String>,
    /// Write the table here (default: `validation/host/<cpu-model>-<N>cpu.json`).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Do not start runs in their own autogroup at nice -20 (needs root otherwise).
    #[arg(long)]
    pub no_isolate: bool,
    /// The schbench binary (default: `schbench` on PATH).
    #[arg(long, value_name = "PATH")]
    pub schbench: Option<PathBuf>,
}

/// Arguments of `schedlab calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Fit to this host table's measurements instead of measuring the calibration rows now.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Real runs per calibration row when measuring now.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,
    /// Write the calibration here (default: $SCHEDLAB_HOST_CALIBRATION, else
    /// ~/.config/schedlab/host-calibration.toml, which `-m host` then applies).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Do not start runs in their own autogroup at nice -20.
    #[arg(long)]
    pub no_isolate: bool,
}

fn check_runs(runs: usize) -> Result<(), InputError> {
    if (1..=measure::MAX_RUNS_PER_ROW).contains(&runs) {
        return Ok(());
    }
    Err(InputError::with_key(
        "command line",
        "--runs",
        format!(
            "{runs} is out of range; accepted: 1 to {}",
            measure::MAX_RUNS_PER_ROW
        ),
    ))
}

fn selected_rows(ids: &[String]) -> Result<Vec<&'static rows::Row>, InputError> {
    if ids.is_empty() {
        return Ok(rows::ROWS.iter().collect());
    }
    ids.iter()
        .map(|id| {
            rows::row(id).ok_or_else(|| {
                InputError::with_key(
                    "command line",
                    "--row",
                    format!(
                        "no row '{}'; accepted: {}",
                        crate::input::limits::clip(id),
                        rows::ids()
                    ),
                )
            })
        })
        .collect()
}

fn options(runs: usize, no_isolate: bool, schbench: Option<PathBuf>) -> measure::Options {
    measure::Options {
        runs,
        isolate: !no_isolate,
        schbench,
    }
}

/// `schedlab host-measure`.
pub fn host_measure(args: &HostMeasureArgs) -> anyhow::Result<i32> {
    check_runs(args.runs)?;
    let rows = selected_rows(&args.row_ids)?;
    let out = args.out.clone().unwrap_or_else(|| {
        measure::default_table_path(std::path::Path::new("."), &table::HostId::current())
    });
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError::with_key("--out", out.display().to_string(), e.to_string()))?;
    }
    let opts = options(args.runs, args.no_isolate, args.schbench.clone());
    let t = measure::measure(&rows, &opts, &mut |line| eprintln!("schedlab: {line}"));
    let text = serde_json::to_string_pretty(&t)? + "\n";
    output::write_atomic("--out", &out, text.as_bytes())?;
    let skipped = t.rows.iter().filter(|r| r.runs.is_empty()).count();
    eprintln!(
        "schedlab: host table {} ({} rows measured, {skipped} not)",
        out.display(),
        t.rows.len() - skipped
    );
    Ok(if skipped > 0 { 3 } else { 0 })
}

/// `schedlab calibrate`.
pub fn calibrate(args: &CalibrateArgs) -> anyhow::Result<i32> {
    check_runs(args.runs)?;
    let out = args
        .out
        .clone()
        .or_else(|| {
            std::env::var_os(calibration::ENV)
                .filter(|v| v != "none" && !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(calibration::default_path)
        .ok_or_else(|| {
            InputError::with_key(
                "command line",
                "--out",
                "no HOME to put the calibration in; give --out FILE",
            )
        })?;
    let t = match &args.table {
        Some(path) => table::HostTable::read(path)?,
        None => {
            let opts = options(args.runs, args.no_isolate, None);
            measure::measure(&calibrate::rows_needed(), &opts, &mut |l| {
                eprintln!("schedlab: {l}")
            })
        }
    };
    if let Some(why) = t.host.mismatch(&table::HostId::current()) {
        return Err(InputError::new(
            args.table
                .as_ref()
                .map_or("calibrate".into(), |p| p.display().to_string()),
            format!("the table was {why}: a calibration fits this machine only"),
        )
        .into());
    }
    let ctx = RunContext::for_terminal();
    let cal = calibrate::calibrate(&ctx, &t, &mut |l| eprintln!("schedlab: {l}"))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError::with_key("--out", out.display().to_string(), e.to_string()))?;
    }
    output::write_atomic("--out", &out, cal.to_text().as_bytes())?;
    output::write_stdout(&cal.to_text())?;
    eprintln!(
        "schedlab: calibration written to {}; `-m host` applies it{}",
        out.display(),
        if calibration::path_in_force().as_deref() == Some(out.as_path()) {
            String::new()
        } else {
            format!(" when {}={} is set", calibration::ENV, out.display())
        }
    );
    Ok(0)
}

/// Arguments of `schedlab host-trace`.
#[derive(clap::Args, Debug)]
pub struct HostTraceArgs {
    /// Trace this host-table row's command (`schedlab host-measure --row` names them).
    #[arg(long = "row", value_name = "ID", conflicts_with = "command")]
    pub row: Option<String>,
    /// Directory for the traces (real-K.txt, sim-K.txt), the real runs' record
    /// (real-runs.json) and the command's output (default: a new directory under the
    /// system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// tracefs ring buffer per CPU, KiB (a full buffer drops events, which is reported).
    #[arg(long, default_value_t = trace::BUFFER_KB_DEFAULT, value_name = "KIB")]
    pub buffer_kb: u64,
    /// Seed of the simulated run (the first, with --runs).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs a side: the command traced N times on this kernel and simulated with N seeds;
    /// counts, rates and distributions are pooled over the runs (one real run is one sample:
    /// real runs differ by tens of percent).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: usize,
    /// Write both sides' dynamics as JSON to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Kernel profile of the simulated side (default: the newest, as `run`).
    #[arg(short = 'k', long = "kernel", value_name = "PROFILE")]
    pub profile: Option<String>,
    /// `--feature`, `--sysctl`, `--set`: on the simulated side (the real kernel is as it is),
    /// to see which mechanism moves the model towards the real trace.
    #[command(flatten)]
    pub tune: super::args::TuneArgs,
    /// Do not trace the command again: read the real traces an earlier `host-trace --out
    /// DIR` of the same command left there (real-K.txt, real-runs.json), so model variants
    /// are compared with the same real runs.
    #[arg(long, requires = "out")]
    pub reuse_real: bool,
    /// The command, as for `schedlab run -m host -- COMMAND` (e.g. `perf bench sched
    /// messaging -g 1 -l 1000`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// What `host-trace --json` writes.
#[derive(serde::Serialize)]
struct HostTraceReport {
    command: String,
    /// The real runs traced (or reused), each with its trace file.
    real_runs: Vec<trace::RealRun>,
    sim_seeds: Vec<u64>,
    sim_traces: Vec<String>,
    real: dynamics::Dynamics,
    sim: dynamics::Dynamics,
}

/// `schedlab host-trace`.
pub fn host_trace(args: &HostTraceArgs) -> anyhow::Result<i32> {
    let argv = host_trace_argv(args)?;
    let command = argv.join(" ");
    check_host_trace_limits(args)?;
    let dir = args.out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("schedlab-host-trace-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir)
        .map_err(|e| InputError::with_key("--out", dir.display().to_string(), e.to_string()))?;
    let real_runs = real_side(args, &argv, &dir)?;
    let real = real_dynamics(&dir, &real_runs)?;
    let (sim, sim_seeds, sim_traces, setup) = sim_side(args, &argv, &dir)?;
    let lost: u64 = real_runs.iter().map(|r| r.lost_events).sum();
    let elapsed: Vec<String> = real_runs
        .iter()
        .map(|r| format!("{:.3}", r.elapsed_s))
        .collect();
    let mut text = format!(
        "{setup}\nreal: {command}, {} run(s) traced ({} s) in {}\nsim:  seeds {:?}\n\n{}",
        real_runs.len(),
        elapsed.join(", "),
        dir.display(),
        sim_seeds,
        dynamics::render_pair(&real, &sim)
    );
    if lost > 0 {
        text.push_str(&format!(
            "\nINCOMPLETE: the real traces lost {lost} events (ring buffer full): their counts \
             are short; raise --buffer-kb or trace a shorter run\n"
        ));
    }
    let report = HostTraceReport {
        command,
        real_runs,
        sim_seeds,
        sim_traces,
        real,
        sim,
    };
    let json = serde_json::to_string_pretty(&report)? + "\n";
    match args.json.as_deref() {
        Some("-") => {
            eprint!("{text}");
            output::write_stdout(&json)?;
        }
        Some(path) => {
            output::write_atomic("--json", std::path::Path::new(path), json.as_bytes())?;
            output::write_stdout(&text)?;
        }
        None => output::write_stdout(&text)?,
    }
    Ok(if lost > 0 { 3 } else { 0 })
}

fn check_host_trace_limits(args: &HostTraceArgs) -> Result<(), InputError> {
    let range = |key: &str, v: u64, max: u64| {
        if (1..=max).contains(&v) {
            Ok(())
        } else {
            Err(InputError::with_key(
                "command line",
                key,
                format!("{v} is out of range; accepted: 1 to {max}"),
            ))
        }
    };
    range("--buffer-kb", args.buffer_kb, trace::BUFFER_KB_MAX)?;
    range("--runs", args.runs as u64, trace::MAX_RUNS as u64)
}

/// The command `host-trace` runs, as argv: the one after `--` (its words kept as given), or
/// a row's.
fn host_trace_argv(args: &HostTraceArgs) -> Result<Vec<String>, InputError> {
    match (&args.row, args.command.is_empty()) {
        (Some(id), _) => selected_rows(std::slice::from_ref(id)).map(|r| {
            r[0].command
                .split_whitespace()
                .map(str::to_string)
                .collect()
        }),
        (None, false) => Ok(args.command.clone()),
        (None, true) => Err(InputError::with_key(
            "command line",
            "COMMAND",
            "give a command after `--` or a host-table row with --row",
        )),
    }
}

fn read_trace(path: &std::path::Path) -> Result<Vec<TraceRecord>, InputError> {
    let file = std::fs::File::open(path)
        .map_err(|e| InputError::new(path.display().to_string(), e.to_string()))?;
    ftrace_reader::read_records(std::io::BufReader::new(file), &path.display().to_string())
}

/// The real side: `--runs` traced runs of the command now (recorded in DIR/real-runs.json),
/// or, with `--reuse-real`, the runs an earlier `host-trace` of the same command left in DIR.
fn real_side(
    args: &HostTraceArgs,
    argv: &[String],
    dir: &std::path::Path,
) -> anyhow::Result<Vec<trace::RealRun>> {
    let command = argv.join(" ");
    let meta_path = dir.join("real-runs.json");
    if args.reuse_real {
        let text = std::fs::read_to_string(&meta_path)
            .map_err(|e| InputError::new(meta_path.display().to_string(), e.to_string()))?;
        let runs: Vec<trace::RealRun> = serde_json::from_str(&text).map_err(|e| {
            InputError::new(
                meta_path.display().to_string(),
                format!("not a real-runs record: {e}"),
            )
        })?;
        if let Some(other) = runs.iter().find(|r| r.command != command) {
            return Err(InputError::with_key(
                meta_path.display().to_string(),
                "command",
                format!(
                    "the real traces there are of `{}`, not `{command}`",
                    other.command
                ),
            )
            .into());
        }
        eprintln!(
            "schedlab: reusing {} real trace(s) of `{command}` in {}",
            runs.len(),
            dir.display()
        );
        return Ok(runs);
    }
    let mut runs = Vec::with_capacity(args.runs);
    for k in 1..=args.runs {
        eprintln!(
            "schedlab: tracing `{command}` on this machine's kernel ({k} of {})",
            args.runs
        );
        runs.push(trace::capture(
            argv,
            &dir.join(format!("real-{k}.txt")),
            args.buffer_kb,
        )?);
    }
    let json = serde_json::to_string_pretty(&runs)? + "\n";
    output::write_atomic("--out", &meta_path, json.as_bytes())?;
    Ok(runs)
}

/// The real runs' dynamics, pooled; each run's tasks are its command's process tree.
fn real_dynamics(
    dir: &std::path::Path,
    runs: &[trace::RealRun],
) -> Result<dynamics::Dynamics, InputError> {
    let mut traces = Vec::with_capacity(runs.len());
    for r in runs {
        let records = read_trace(&dir.join(&r.trace))?;
        let tasks = trace::process_tree(&records, r.root_pid);
        traces.push((records, tasks));
    }
    let parts: Vec<_> = traces.iter().map(|(r, t)| (r.as_slice(), t)).collect();
    Ok(dynamics::Dynamics::of_runs(&parts))
}

/// The simulated side: `--runs` seeds from `--seed` (as `run --runs` derives them), each
/// traced to DIR/sim-K.txt; returns the pooled dynamics, the seeds, the trace paths and
/// the setup line.
fn sim_side(
    args: &HostTraceArgs,
    argv: &[String],
    dir: &std::path::Path,
) -> anyhow::Result<(dynamics::Dynamics, Vec<u64>, Vec<String>, String)> {
    let seeds: Vec<u64> = (0..args.runs as u64)
        .map(|i| crate::rng::run_seed(args.seed, i))
        .collect();
    let mut traces = Vec::with_capacity(seeds.len());
    let mut paths = Vec::with_capacity(seeds.len());
    let mut setup = String::new();
    for (k, &seed) in seeds.iter().enumerate() {
        eprintln!("schedlab: simulating it on -m host (seed {seed})");
        let path = dir.join(format!("sim-{}.txt", k + 1));
        let (tasks, line) = simulate_traced(args, argv, seed, &path)?;
        traces.push((read_trace(&path)?, tasks));
        paths.push(path.display().to_string());
        if k == 0 {
            setup = line;
        }
    }
    let parts: Vec<_> = traces.iter().map(|(r, t)| (r.as_slice(), t)).collect();
    Ok((dynamics::Dynamics::of_runs(&parts), seeds, paths, setup))
}

/// Run the command `argv` once with `seed` on `-m host` (with this machine's calibration, as `run -m
/// host`, and the simulated side's `-k`, `--feature`, `--sysctl`, `--set`), writing its
/// ftrace text to `trace_path`; returns the workload tasks' trace pids and the setup line.
fn simulate_traced(
    args: &HostTraceArgs,
    argv: &[String],
    seed: u64,
    trace_path: &std::path::Path,
) -> anyhow::Result<(std::collections::BTreeSet<u32>, String)> {
    let opts = crate::config::QuickOptions {
        machine: Some("host".into()),
        profile: args.profile.clone(),
        features: args.tune.features.clone(),
        sysctls: args.tune.sysctls.clone(),
        sets: args.tune.sets.clone(),
        runs: Some(1),
        seed: Some(seed),
        command: argv.to_vec(),
        ..crate::config::QuickOptions::default()
    };
    let doc = crate::config::build_document(&opts)?;
    for w in &doc.warnings {
        eprintln!("schedlab: warning: {w}");
    }
    let scn = crate::config::scenario::Scenario::from_doc(doc)?;
    let mut ctx = RunContext::for_terminal();
    ctx.quiet = true;
    let resolved = crate::experiment::scenario::ResolvedScenario::resolve(&scn, &ctx.imports)?;
    let mut setup = super::setup_line_with_warnings(&resolved);
    if let (_, Some(note)) = calibration::for_this_host()? {
        setup.push_str(&format!("\n{note}"));
    }
    let instruments = Instruments {
        trace: Some(TraceSink::create(trace_path)?),
        explain: None,
        timeline: false,
    };
    let (runs, _) = crate::experiment::run_resolved_streamed(&ctx, &resolved, instruments, None)?;
    let run = runs
        .first()
        .ok_or_else(|| InputError::new("host-trace", "the simulation produced no run"))?;
    let pids = run
        .result
        .tasks
        .iter()
        .map(|t| crate::units::cpu_u32(t.pid) + 1)
        .collect();
    Ok((pids, setup))
}
