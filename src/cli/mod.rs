//! The `schedlab` command line (ARCHITECTURE.md §3). Each sub-command lives in its own
//! file; this one parses arguments and maps errors to exit codes (bad input: 2).

use clap::{Parser, Subcommand};

use crate::error::{EXIT_BAD_INPUT, InputError};

pub mod args;
pub mod bench;
pub mod bisect;
pub mod compare;
pub mod conventions;
pub mod host;
pub mod list;
pub mod report;
pub mod run;
pub mod signals;
pub mod sweep;
pub mod topo;
pub mod validate;

#[derive(Parser, Debug)]
#[command(
    name = "schedlab",
    version,
    about = "Deterministic simulator of the Linux CPU scheduler on any machine topology",
    long_about = "schedlab simulates the Linux fair scheduler (EEVDF/CFS runqueues, wakeup \
placement, SMP load balancing over sched domains) on any machine topology, driven by the \
benchmarks kernel developers use, and reports what they already read: perf stat, \
/proc/schedstat, latency percentiles and LKML-style A/B tables."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print every CPU's sched-domain hierarchy, like the kernel's sched_domain debug output.
    Topo(TopoArgs),
    /// List what can be named: machines, workloads, features or profiles.
    List(ListArgs),
    /// Simulate a scenario file, or a benchmark command line on a machine (quick form).
    Run(run::RunArgs),
    /// Compare kernel variants on the same seeds, in LKML-style tables (normalized mean,
    /// [pct imp], (CV), paired delta), with perf-stat and migration diffs.
    Compare(compare::CompareArgs),
    /// Find which kernel changes make --bad differ from --good (history-order bisection and
    /// attribution on paired seeds), and the mechanism counters that moved with them.
    Bisect(bisect::BisectArgs),
    /// Measure the simulator's speed: events/s and simulated seconds per wall second.
    Bench(bench::BenchArgs),
    /// Sweep a grid (machines x profiles x features x keys x seeds) locally or on Slurm,
    /// resumably, into an SQLite database: plan, run, status, slurm, merge, table.
    Sweep(sweep::SweepArgs),
    /// Draw a run's or a comparison's results JSON as one self-contained HTML page.
    Report(report::ReportArgs),
    /// Run the corpus of published scheduler results (validation/cases) and score the model:
    /// per case the real and simulated change, sign, ratio, within 2x; totals.
    Validate(validate::ValidateArgs),
    /// Run the real benchmarks of the host table on this machine under perf stat (time,
    /// context switches/s, migrations/s) and write the table (validation/host/)
    HostMeasure(host::HostMeasureArgs),
    /// Fit the `host` machine's speed and scheduler costs to microbenchmarks run here, into
    /// the calibration file `-m host` applies
    Calibrate(host::CalibrateArgs),
    /// Trace one command's scheduling on this machine's kernel (tracefs) and on the model's
    /// `-m host`, and compare the two: wakeup placement, waits, run lengths, preemptions
    /// (`-k`, `--feature`, `--sysctl`, `--set` change the simulated side only)
    HostTrace(host::HostTraceArgs),
    /// Print a shell completion script: `schedlab completions bash > /etc/bash_completion.d/schedlab`.
    Completions(conventions::CompletionsArgs),
    /// Print the man page (roff) of schedlab, or write one per sub-command to a directory.
    Man(conventions::ManArgs),
}

/// Arguments of `schedlab list`.
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// What to list.
    #[arg(value_enum)]
    pub what: list::ListWhat,
}

/// Arguments of `schedlab topo`.
#[derive(clap::Args, Debug)]
pub struct TopoArgs {
    /// A preset name (see `schedlab list machines`), `host`, an hwloc XML file, a sysfs
    /// snapshot directory, or a topology `.toml` file.
    pub machine: Option<String>,
    /// Read the machine from a sysfs/proc snapshot (hwloc-gather-topology / `lscpu -s` layout).
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<std::path::PathBuf>,
    /// Read the machine from an hwloc XML export (`lstopo --of xml`).
    #[arg(long, value_name = "FILE")]
    pub hwloc: Option<std::path::PathBuf>,
    /// CPUs to take offline, as a kernel cpulist (e.g. 18-23,26-31).
    #[arg(long, value_name = "CPULIST")]
    pub offline: Option<String>,
    /// Print the hierarchy as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `--seed`: a clear message for any value, negative ones included (clap's own tip to write
/// `-- -1` would make it the benchmark command).
pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .ok()
        .ok_or_else(|| format!("accepted: an integer from 0 to {}", u64::MAX))
}

/// `--run K`: a run number, 1 to [`crate::input::limits::MAX_RUNS`] (checked against
/// `run.runs` once the scenario is known).
pub(crate) fn parse_run_index(s: &str) -> Result<u32, String> {
    parse_runs(s).map_err(|e| e.replace("accepted:", "accepted: a run number,"))
}

/// `--runs`: 1 to [`crate::input::limits::MAX_RUNS`].
pub(crate) fn parse_runs(s: &str) -> Result<u32, String> {
    let max = crate::input::limits::MAX_RUNS;
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| (1..=max).contains(v))
        .map(|v| v as u32)
        .ok_or_else(|| format!("accepted: an integer from 1 to {max}"))
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    install_stdout_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return print_clap_error(&e),
    };
    let result = dispatch(cli);
    if std::env::var_os(IMPORT_READS_ENV).is_some() {
        eprintln!(
            "schedlab: test: machine imports read: {}",
            crate::topology::import_reads()
        );
    }
    match result {
        Ok(code) => code,
        Err(e) => match e.downcast_ref::<InputError>() {
            Some(input) => {
                eprintln!(
                    "schedlab: error: {}",
                    crate::output::shorten_words(&input.to_string())
                );
                EXIT_BAD_INPUT
            }
            None => {
                eprintln!(
                    "schedlab: internal error: {}",
                    crate::output::shorten_words(&format!("{e:#}"))
                );
                1
            }
        },
    }
}

/// Test hook (environment): when set, the binary prints on stderr, as it exits, how many
/// machine imports (sysfs trees, hwloc files) the command read
/// ([`crate::topology::import_reads`]).
pub const IMPORT_READS_ENV: &str = "SCHEDLAB_TEST_IMPORT_READS";

/// Print clap's error, help or version text; returns the exit code (0 for help and version,
/// 2 for a usage error). Help or version text that cannot be written (a full stdout) is an
/// error naming stdout, exit code 2.
fn print_clap_error(e: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    let to_stdout = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    let plain = e.render().to_string();
    let printed = if plain.len() > 4 * crate::output::ECHO_MAX_BYTES {
        // A huge value echoed by clap: print it shortened (without colours).
        let text = crate::output::shorten_words(&plain);
        if to_stdout {
            crate::output::write_stdout(&text).map_err(|e| e.to_string())
        } else {
            eprint!("{text}");
            Ok(())
        }
    } else {
        match e.print() {
            Err(io) if io.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(format!("stdout: cannot write the help: {io}"))
            }
            _ => Ok(()),
        }
    };
    match printed {
        Err(msg) => {
            eprintln!("schedlab: error: {msg}");
            EXIT_BAD_INPUT
        }
        Ok(()) if to_stdout => 0,
        Ok(()) => EXIT_BAD_INPUT,
    }
}

/// A last guard for output printed with `print!`: the standard library panics when stdout
/// cannot be written ("failed printing to stdout"). That panic becomes the one-line
/// `stdout` error with exit code 2 (a closed pipe ends quietly, as [`crate::output::write_stdout`]
/// does); every other panic keeps the default report.
fn install_stdout_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload_as_str().unwrap_or("");
        if let Some(err) = msg.strip_prefix("failed printing to stdout: ") {
            if err.starts_with("Broken pipe") {
                std::process::exit(0);
            }
            eprintln!("schedlab: error: stdout: cannot write: {err}");
            std::process::exit(EXIT_BAD_INPUT);
        }
        default(info);
    }));
}

/// Run the sub-command; returns the exit status (non-zero only for a signal-stopped run).
fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Topo(args) => topo::run(&args).map(|()| 0),
        Command::List(args) => list::run(args.what).map(|()| 0),
        Command::Run(args) => run::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Bench(args) => bench::run(&args).map(|()| 0),
        Command::Bisect(args) => bisect::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Report(args) => report::run(&args).map(|()| 0),
        Command::Validate(args) => validate::run(&args),
        Command::HostMeasure(args) => host::host_measure(&args),
        Command::Calibrate(args) => host::calibrate(&args),
        Command::HostTrace(args) => host::host_trace(&args),
        Command::Completions(args) => conventions::completions(&args).map(|()| 0),
        Command::Man(args) => conventions::man(&args).map(|()| 0),
    }
}

/// How many of a machine's import warnings are printed before "and N more".
const MAX_IMPORT_WARNINGS: usize = 8;

/// Print the machine importer's warnings (files missing from a sysfs snapshot and the
/// fallback used) on stderr, the first [`MAX_IMPORT_WARNINGS`] in reading order.
/// Open `--json DEST` (none for `-`, stdout) as an atomic temporary file, so an unwritable
/// path fails before any run.
pub(crate) fn open_json_output(
    json: Option<&str>,
) -> crate::error::InputResult<Option<crate::output::AtomicFile>> {
    json.filter(|j| *j != "-")
        .map(|dest| crate::output::AtomicFile::create("--json", std::path::Path::new(dest)))
        .transpose()
}

/// Open `--report DEST` as an atomic temporary file (see [`open_json_output`]).
pub(crate) fn open_report_output(
    report: Option<&std::path::Path>,
) -> crate::error::InputResult<Option<crate::output::AtomicFile>> {
    report
        .map(|dest| crate::output::AtomicFile::create("--report", dest))
        .transpose()
}

pub fn print_import_warnings(machine: &crate::topology::Machine) {
    let warnings = &machine.import_warnings;
    for w in warnings.iter().take(MAX_IMPORT_WARNINGS) {
        eprintln!("schedlab: warning: {w}");
    }
    if warnings.len() > MAX_IMPORT_WARNINGS {
        eprintln!(
            "schedlab: warning: and {} more missing sysfs files",
            warnings.len() - MAX_IMPORT_WARNINGS
        );
    }
}

/// Print the resolved scenario's machine import warnings, and return the setup line
/// ([`crate::experiment::setup_line`]) of `run`.
fn setup_line_with_warnings(resolved: &crate::experiment::scenario::ResolvedScenario) -> String {
    print_import_warnings(&resolved.machine);
    crate::experiment::setup_line(&resolved.scenario, &resolved.machine)
}

/// [`setup_line_with_warnings`] of `compare`'s baseline, its machine read through the
/// command's imports (read once, shared with the runs).
fn baseline_setup_line(
    scn: &crate::config::scenario::Scenario,
    imports: &crate::experiment::scenario::Imports,
) -> crate::error::InputResult<String> {
    let machine = crate::experiment::scenario::resolve_machine_in(scn, imports)?;
    print_import_warnings(&machine);
    Ok(crate::experiment::setup_line(scn, &machine))
}
