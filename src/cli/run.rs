//! `schedlab run`: a scenario file or the quick form, one or more runs, the workload's native
//! report, a perf-stat block and a migration summary; `--json` writes the full results.

use std::io::Write;
use std::path::PathBuf;

use crate::config::{QuickOptions, build_document, scenario::Scenario};
use crate::error::InputError;
use crate::experiment;
use crate::stats::perf;
use crate::stats::trace::{Instruments, TraceSink};

/// Arguments of `schedlab run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// A scenario file (TOML). Optional with the quick form (`-m ... -- COMMAND`).
    pub scenario: Option<PathBuf>,
    /// Machine: a preset (`schedlab list machines`), `host`, an hwloc XML, a sysfs snapshot
    /// directory, or a topology `.toml` file.
    #[arg(short = 'm', long = "machine", value_name = "MACHINE")]
    pub machine: Option<String>,
    /// CPUs to take offline (kernel cpulist, e.g. 18-23,26-31).
    #[arg(long, value_name = "CPULIST")]
    pub offline: Option<String>,
    /// Kernel profile (`schedlab list profiles`), e.g. v6.6.
    #[arg(short = 'k', long = "kernel", value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Switch a scheduler feature: NAME=on|off (also NAME / NO_NAME).
    #[arg(long = "feature", value_name = "NAME=on|off")]
    pub features: Vec<String>,
    /// Set a tunable: NAME=VALUE (e.g. sched_migration_cost_ns=500000).
    #[arg(long = "sysctl", value_name = "NAME=VALUE")]
    pub sysctls: Vec<String>,
    /// Override any scenario key by dotted path (e.g. workload.tasks=8).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Number of runs (seeds derived from --seed).
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_runs)]
    pub runs: Option<u32>,
    /// Base seed.
    #[arg(long, allow_hyphen_values = true, value_parser = super::parse_seed)]
    pub seed: Option<u64>,
    /// Write the results JSON to FILE (`-` = stdout; the text report then goes to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write /proc/schedstat (version 17) as it reads at the end of the first run.
    #[arg(long, value_name = "FILE")]
    pub schedstat: Option<PathBuf>,
    /// Write a scheduling trace of the first run to FILE: `.pftrace`/`.perfetto-trace` =
    /// Perfetto protobuf (open in ui.perfetto.dev), `.txt`/`.ftrace` = ftrace text. With
    /// --runs > 1 only the first run (the first seed) is traced.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// After the run, print one task's decision history: placements, migrations with their
    /// reasons, switches, wakeups, runtime and wait time. TASK is a pid (the results'
    /// tasks[].pid) or a task name. With --runs > 1, the first run's.
    #[arg(long, value_name = "TASK")]
    pub explain: Option<String>,
    /// The benchmark command line, as its users type it (after `--`), optionally behind
    /// `taskset [-c] MASK|CPULIST` and `numactl [-N nodes] [-C cpus] [-m|-p|-i nodes] [-l]`
    /// prefixes (e.g. `-- numactl --cpunodebind=1 --membind=1 hackbench 10`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Build the scenario from a file and/or the quick-form options.
pub fn scenario_from_args(args: &RunArgs) -> Result<Scenario, InputError> {
    if args.scenario.is_none() && args.command.is_empty() && args.machine.is_none() {
        return Err(InputError::new(
            "command line",
            "nothing to run; accepted: `schedlab run SCENARIO.toml` or `schedlab run -m MACHINE \
             -- COMMAND` (see `schedlab run --help`)",
        ));
    }
    let opts = QuickOptions {
        base: args.scenario.clone(),
        machine: args.machine.clone(),
        offline: args.offline.clone(),
        profile: args.profile.clone(),
        features: args.features.clone(),
        sysctls: args.sysctls.clone(),
        sets: args.sets.clone(),
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

pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let scn = scenario_from_args(args)?;
    let instruments = Instruments {
        trace: args.trace.as_deref().map(TraceSink::create).transpose()?,
        explain: args.explain.clone(),
    };
    let (runs, explanation) = experiment::run_all_with(&scn, instruments)?;
    let json_to_stdout = args.json.as_deref() == Some("-");
    let mut text = String::new();
    for r in &runs {
        text.push_str(&r.native_text);
    }
    let command = scn
        .workload
        .command
        .clone()
        .or_else(|| scn.workload.kind.clone())
        .unwrap_or_default();
    let perfs: Vec<_> = runs.iter().map(|r| r.perf).collect();
    text.push_str(&perf::render(&command, &perfs));
    for r in &runs {
        text.push_str(&format!("seed {}: {}\n", r.seed, r.summary_line));
        for v in r.invariant_violations.iter().take(10) {
            text.push_str(&format!("invariant violated: {v}\n"));
        }
    }
    if let Some(explanation) = &explanation {
        text.push('\n');
        text.push_str(explanation);
    }
    if json_to_stdout {
        eprint!("{text}");
    } else {
        write_stdout(&text)?;
    }
    if let Some(dest) = &args.schedstat {
        let text = runs[0].schedstat_text.clone().ok_or_else(|| {
            InputError::with_key(
                "--schedstat",
                dest.display().to_string(),
                format!(
                    "policy '{}' keeps no schedstats; accepted with kernel.policy = \"linux-fair\"",
                    scn.kernel.policy.name()
                ),
            )
        })?;
        std::fs::write(dest, text).map_err(|e| {
            InputError::with_key(
                "--schedstat",
                dest.display().to_string(),
                format!("cannot write: {e}"),
            )
        })?;
    }
    if let Some(dest) = &args.json {
        let mut doc = serde_json::to_string_pretty(&experiment::results_json(&scn, &runs))?;
        doc.push('\n');
        if json_to_stdout {
            write_stdout(&doc)?;
        } else {
            std::fs::write(dest, doc).map_err(|e| {
                InputError::with_key("--json", dest.clone(), format!("cannot write: {e}"))
            })?;
        }
    }
    Ok(())
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
