//! `schedlab._schedlab`: the Rust half of the Python package (python/schedlab/ is the other).
//!
//! Every function takes the options of the command line (as `schedlab run` and `schedlab
//! compare` take them) and calls the same library functions the CLI calls, so the results
//! document is the one `--json` writes. Documents cross into Python as JSON text; the
//! pure-Python part turns them into pandas DataFrames.
//!
//! A run releases the GIL and runs on its own thread; the calling thread polls Python's
//! signal handlers every 50 ms, so Ctrl-C sets the engines' stop flag (polled every 4096
//! events) and raises `KeyboardInterrupt` once the runs have stopped.

use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;

use schedlab::cli::args::{IncompleteArgs, MachineArgs, QuietArgs, TuneArgs};
use schedlab::cli::compare::{self, CompareArgs};
use schedlab::cli::run::{self as cli_run, RunArgs};
use schedlab::experiment::{self, RunContext};

pyo3::create_exception!(
    schedlab,
    InputError,
    PyException,
    "Bad input (a wrong scenario key, an unknown preset, feature or workload, a malformed file): the one-line message the CLI prints after `schedlab: error: `."
);

/// An error of the library as Python sees it: [`InputError`] with the CLI's one-line message
/// for bad input, `RuntimeError` for anything else.
fn to_py(e: anyhow::Error) -> PyErr {
    match e.downcast_ref::<schedlab::error::InputError>() {
        Some(input) => InputError::new_err(schedlab::output::shorten_words(&input.to_string())),
        None => PyRuntimeError::new_err(schedlab::output::shorten_words(&format!("{e:#}"))),
    }
}

fn input_err(e: schedlab::error::InputError) -> PyErr {
    to_py(e.into())
}

/// A context for runs started from Python: a progress bar when asked and stderr is a
/// terminal; the `/proc/schedstat` text of every run only when asked (`run` keeps it for
/// the per-CPU frames, `compare` has no use for it).
fn context(progress: bool, schedstat_text: bool) -> RunContext {
    let mut ctx = RunContext::for_terminal();
    ctx.progress &= progress;
    ctx.skip_schedstat_text = !schedstat_text;
    ctx
}

/// Run `work` on its own thread with the GIL released; poll Python's signal handlers from the
/// calling thread meanwhile. A handler's exception (`KeyboardInterrupt` for Ctrl-C) sets the
/// stop flag, waits for the runs to stop, and is returned.
fn interruptible<T: Send>(
    py: Python<'_>,
    ctx: &RunContext,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let (tx, mut rx) = mpsc::channel();
        let worker = s.spawn(move || {
            let _ = tx.send(work());
        });
        let out = loop {
            // The receiver goes into the GIL-free closure and comes back (it is Send, not Sync).
            let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
            rx = back;
            match got {
                Ok(out) => break Ok(out),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break Err(PyRuntimeError::new_err(
                        "schedlab: the run's thread panicked",
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if let Err(e) = py.check_signals() {
                ctx.shared
                    .stop
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                py.detach(move || drop(rx.recv()));
                break Err(e);
            }
        };
        let _ = py.detach(|| worker.join());
        out
    })
}

/// Pretty JSON as the CLI writes it (`serde_json::to_string_pretty` and a newline).
fn pretty(doc: &serde_json::Value) -> PyResult<String> {
    let mut text =
        serde_json::to_string_pretty(doc).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The quick-form options shared by `run` and `compare` (a dict from Python; lists hold the
/// `NAME=VALUE` words of the repeatable options).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Options {
    scenario: Option<std::path::PathBuf>,
    machine: Option<String>,
    offline: Option<String>,
    kernel: Option<String>,
    features: Vec<String>,
    sysctls: Vec<String>,
    sets: Vec<String>,
    command: Vec<String>,
    runs: Option<u32>,
    seed: Option<u64>,
}

fn run_args(o: Options) -> RunArgs {
    RunArgs {
        scenario: o.scenario,
        machine: MachineArgs {
            machine: o.machine,
            offline: o.offline,
        },
        profile: o.kernel,
        tune: TuneArgs {
            features: o.features,
            sysctls: o.sysctls,
            sets: o.sets,
        },
        runs: o.runs,
        seed: o.seed,
        json: None,
        schedstat: None,
        vmstat: None,
        trace: None,
        explain: None,
        report: None,
        run_index: None,
        // Progress is the Python side's (`progress=`), not the CLI's lines.
        quiet: QuietArgs { quiet: true },
        command: o.command,
    }
}

/// The text `schedlab run` prints on stdout: the setup line, the native reports, the perf-stat
/// block and one summary line per seed.
fn run_text(
    setup: &str,
    scn: &schedlab::config::scenario::Scenario,
    runs: &[experiment::RunOutput],
) -> String {
    let mut text = format!("{setup}\n");
    for r in runs {
        text.push_str(&r.native_text);
    }
    let perfs: Vec<_> = runs.iter().map(|r| r.perf).collect();
    if !runs.is_empty() {
        let command = cli_run::perf_target(scn);
        text.push_str(&schedlab::stats::perf::render(&command, &perfs));
    }
    for r in runs {
        text.push_str(&format!("seed {}: {}\n", r.seed, r.summary_line));
    }
    text
}

/// `schedlab run` with the given options: `(results JSON, text report, every run's
/// /proc/schedstat text)` (the text as `--schedstat` writes it; `""` for a policy without
/// schedstats). `timeline` records the first run's time series, as `schedlab run --report`
/// does (its JSON then carries them).
#[pyfunction]
#[pyo3(signature = (options, progress, timeline))]
fn run_json(
    py: Python<'_>,
    options: Options,
    progress: bool,
    timeline: bool,
) -> PyResult<(String, String, Vec<String>)> {
    let args = run_args(options);
    let scn = cli_run::scenario_from_args(&args).map_err(input_err)?;
    let machine = experiment::resolve_machine(&scn).map_err(input_err)?;
    schedlab::cli::print_import_warnings(&machine);
    let setup = experiment::setup_line(&scn, &machine);
    for note in &scn.kernel.notes {
        eprintln!("schedlab: note: {note}");
    }
    let ctx = context(progress, true);
    let instruments = schedlab::stats::trace::Instruments {
        timeline,
        ..Default::default()
    };
    let (runs, _) = interruptible(py, &ctx, || experiment::run_all_in(&ctx, &scn, instruments))?
        .map_err(input_err)?;
    let doc = experiment::results_json(&scn, &runs);
    let schedstats = (runs.iter())
        .map(|r| r.schedstat_text.clone().unwrap_or_default())
        .collect();
    Ok((pretty(&doc)?, run_text(&setup, &scn, &runs), schedstats))
}

/// `schedlab compare` with the given options and `--variant` specs: `(JSON, text report)`.
#[pyfunction]
#[pyo3(signature = (options, variants, progress))]
fn compare_json(
    py: Python<'_>,
    options: Options,
    variants: Vec<String>,
    progress: bool,
) -> PyResult<(String, String)> {
    let r = run_args(options);
    let args = CompareArgs {
        scenario: r.scenario,
        variants,
        runs: r.runs,
        seed: r.seed,
        machine: r.machine,
        profile: r.profile,
        tune: r.tune,
        json: None,
        report: None,
        incomplete: IncompleteArgs::default(),
        quiet: QuietArgs { quiet: true },
        command: r.command,
        db: None,
        sel_a: None,
        sel_b: None,
        metric: None,
    };
    let named = compare::scenarios_from_args(&args).map_err(input_err)?;
    let machine = experiment::resolve_machine(&named[0].scenario).map_err(input_err)?;
    schedlab::cli::print_import_warnings(&machine);
    let setup = experiment::setup_line(&named[0].scenario, &machine);
    let ctx = context(progress, false);
    let out = interruptible(py, &ctx, || compare::compare_in(&ctx, &named))?.map_err(input_err)?;
    let text = format!("{setup}\n{}", compare::render(&out));
    Ok((pretty(&compare::results_json(&out))?, text))
}

/// `schedlab topo MACHINE [--offline CPULIST] --json` as text.
#[pyfunction]
#[pyo3(signature = (machine, offline=None))]
fn topology_json(machine: String, offline: Option<String>) -> PyResult<String> {
    let args = schedlab::cli::TopoArgs {
        machine: Some(machine),
        sysfs_root: None,
        hwloc: None,
        offline,
        json: true,
    };
    let m = schedlab::cli::topo::machine_from_args(&args).map_err(input_err)?;
    let sds = schedlab::domains::build_sched_domains(&m);
    pretty(&schedlab::cli::topo::topo_json(&m, &sds))
}

/// The machine presets: `[{"machine", "description"}]`.
#[pyfunction]
fn machines_json() -> PyResult<String> {
    use schedlab::topology::presets;
    let rows: Vec<_> = (presets::names().iter())
        .map(|n| serde_json::json!({"machine": n, "description": presets::description(n)}))
        .collect();
    pretty(&serde_json::Value::Array(rows))
}

/// The scheduler features: name, default (newest profile), kind, what it changes, and the
/// value in every profile.
#[pyfunction]
fn features_json() -> PyResult<String> {
    use schedlab::kconfig::{Feature, profiles::PROFILES};
    let rows: Vec<_> = (Feature::ALL.iter())
        .map(|f| {
            let i = f.info();
            let mut row = serde_json::json!({
                "feature": f.name(), "default": i.default, "kind": i.kind.label(), "doc": i.doc,
            });
            for p in PROFILES {
                row[p.name] = p.feature(*f).into();
            }
            row
        })
        .collect();
    pretty(&serde_json::Value::Array(rows))
}

/// The kernel profiles: name, version, scheduler mode, summary.
#[pyfunction]
fn profiles_json() -> PyResult<String> {
    use schedlab::kconfig::profiles::PROFILES;
    let rows: Vec<_> = (PROFILES.iter())
        .map(|p| {
            serde_json::json!({
                "profile": p.name, "version": p.version.to_string(), "mode": p.mode().name(),
                "summary": p.summary,
            })
        })
        .collect();
    pretty(&serde_json::Value::Array(rows))
}

/// Draw a results document (of `run` or `compare`) as the HTML page `schedlab report` writes.
#[pyfunction]
fn report_html(source: &str, json: &str) -> PyResult<String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| InputError::new_err(e.to_string()))?;
    let report = schedlab::report::ReportDoc::from_json(source, &doc).map_err(input_err)?;
    Ok(schedlab::report::render(&report))
}

/// `schedlab validate`: the scoreboard of the corpus in `cases_dir` as JSON (`quick`: the CI
/// subset; `cases`: only these ids; no cache).
#[pyfunction]
#[pyo3(signature = (cases_dir, quick, cases, progress))]
fn validate_json(
    py: Python<'_>,
    cases_dir: String,
    quick: bool,
    cases: Vec<String>,
    progress: bool,
) -> PyResult<String> {
    use schedlab::experiment::validate;
    let all = validate::case::read_corpus(std::path::Path::new(&cases_dir)).map_err(input_err)?;
    for id in &cases {
        if !all.iter().any(|c| &c.id == id) {
            return Err(InputError::new_err(format!(
                "--case: {id}: no such case in {cases_dir}"
            )));
        }
    }
    let selected: Vec<_> = (all.into_iter())
        .filter(|c| !quick || c.file.quick)
        .filter(|c| cases.is_empty() || cases.contains(&c.id))
        .collect();
    let ctx = context(progress, false);
    let board = interruptible(py, &ctx, || {
        validate::validate(
            &ctx,
            &selected,
            &validate::Options::default(),
            None,
            &|_| {},
        )
    })?
    .map_err(input_err)?;
    serde_json::to_string(&board).map_err(|e| InputError::new_err(e.to_string()))
}

/// The JSON Schema of the results document (`run --json`), generated from the result types
/// as docs/results.schema.json is.
#[pyfunction]
fn results_schema_json() -> PyResult<String> {
    serde_json::to_string_pretty(&experiment::schema::results_schema())
        .map_err(|e| InputError::new_err(e.to_string()))
}

/// The version of the library, as results documents carry it.
#[pyfunction]
fn version() -> &'static str {
    experiment::SCHEDLAB_VERSION
}

#[pymodule]
fn _schedlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(compare_json, m)?)?;
    m.add_function(wrap_pyfunction!(topology_json, m)?)?;
    m.add_function(wrap_pyfunction!(machines_json, m)?)?;
    m.add_function(wrap_pyfunction!(features_json, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_json, m)?)?;
    m.add_function(wrap_pyfunction!(report_html, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(results_schema_json, m)?)?;
    Ok(())
}
