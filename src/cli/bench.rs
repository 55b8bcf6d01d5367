//! `schedlab bench`: the simulator's own speed, measured on fixed cases — the command lines of
//! issue 14 (schbench, hackbench and stress-ng on 80- to 768-CPU machines, 1 000 to 50 000
//! tasks). Per case it prints events that did work per CPU-second, simulated seconds per
//! CPU-second, the superseded (no-op) queue entries apart, the case's peak RSS, and the ratio
//! to a bare binary-heap event loop measured in the same process right after the case.
//!
//! CPU time is the thread's own (the kernel's `sum_exec_runtime`, the counter behind
//! `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, read from `/proc/thread-self/schedstat` since the
//! crate forbids `unsafe`): these machines are shared, so wall time would measure the
//! neighbours. Speed is reported here, never asserted in tests (ARCHITECTURE.md §7).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::config::{QuickOptions, build_document, scenario::Scenario};
use crate::error::InputError;
use crate::experiment;

/// The longest `--sim-s` accepted (an hour of simulated time per scenario).
pub const MAX_SIM_S: f64 = 3600.0;

/// Arguments of `schedlab bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Simulated seconds per case (more than 0, at most 3600); default: each case's short
    /// length, or with --full the benchmark command's own length.
    #[arg(long, value_parser = parse_sim_s, allow_negative_numbers = true)]
    pub sim_s: Option<f64>,
    /// Scheduling policy to measure (default: the cases' own, linux-fair).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(crate::kconfig::Policy::NAMES))]
    pub policy: Option<String>,
    /// Run only the named case(s) (`bare` = only the bare event loop); repeatable.
    #[arg(long = "case", value_name = "NAME")]
    pub cases: Vec<String>,
    /// Run each case for its benchmark command's own length (minutes in all) instead of the
    /// short smoke length.
    #[arg(long)]
    pub full: bool,
    /// Also write the figures as JSON to FILE (`-` = stdout; the table then goes to stderr).
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
}

/// `--sim-s`: a finite number of seconds in (0, [`MAX_SIM_S`]], checked here rather than
/// by the TOML the scenarios are built from (where `nan` was a "malformed TOML" error).
fn parse_sim_s(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| "not a number; accepted: seconds, more than 0 and at most 3600".to_string())?;
    if v.is_finite() && v > 0.0 && v <= MAX_SIM_S {
        Ok(v)
    } else {
        Err("out of range; accepted: seconds, more than 0 and at most 3600".to_string())
    }
}

/// One benchmark case: a `schedlab run` quick-form command line.
struct Case {
    name: &'static str,
    machine: &'static str,
    offline: Option<&'static str>,
    profile: Option<&'static str>,
    command: &'static str,
    /// Simulated seconds in the default (short) mode.
    short_s: f64,
}

/// The cases: issue 14's table, a 768-CPU machine, and 1 000 / 20 000 / 50 000 tasks.
const CASES: &[Case] = &[
    Case {
        name: "spr-2s",
        machine: "spr-2s",
        offline: None,
        profile: None,
        command: "schbench -m 4 -t 128 -r 5",
        short_s: 1.0,
    },
    Case {
        name: "skl-v6.9",
        machine: "skl-2s",
        offline: Some("20-39,60-79"),
        profile: Some("v6.9"),
        command: "schbench -L -m 4 -M auto -t 128 -n 0 -r 3",
        short_s: 0.05,
    },
    Case {
        name: "skl-hackbench",
        machine: "skl-2s",
        offline: None,
        profile: None,
        command: "hackbench -g 10 -l 2000",
        short_s: 0.1,
    },
    Case {
        name: "turin-2s",
        machine: "turin-2s",
        offline: None,
        profile: None,
        command: "schbench -m 16 -t 32 -r 2",
        short_s: 0.3,
    },
    Case {
        name: "milan-2s",
        machine: "milan-2s",
        offline: None,
        profile: None,
        command: "stress-ng --cpu=256 -l 50 --cpu-load-slice=1 --timeout 3",
        short_s: 1.0,
    },
    Case {
        name: "turin-dense-2s",
        machine: "turin-dense-2s",
        offline: None,
        profile: None,
        command: "stress-ng --cpu=768 -l 50 --cpu-load-slice=1 --timeout 2",
        short_s: 0.3,
    },
    Case {
        name: "spr-1k",
        machine: "spr-2s",
        offline: None,
        profile: None,
        command: "schbench -m 4 -t 250 -r 2",
        short_s: 0.2,
    },
    Case {
        name: "spr-20k",
        machine: "spr-2s",
        offline: None,
        profile: None,
        command: "schbench -m 4 -t 5000 -r 2",
        short_s: 0.05,
    },
    Case {
        name: "spr-50k",
        machine: "spr-2s",
        offline: None,
        profile: None,
        command: "schbench -m 4 -t 12500 -r 1",
        short_s: 0.02,
    },
];

/// The bare loop's queue length and the events it runs per measurement.
const BARE_QUEUE_LEN: usize = 1024;
const BARE_EVENTS: u64 = 4_000_000;

/// How this binary was built (build.rs): `release/plain`, `release/pgo` (scripts/build-pgo), ...
const BUILD: &str = env!("SCHEDLAB_BUILD");

/// This thread's CPU time in ns: the first field of `/proc/thread-self/schedstat` (the
/// kernel's `sum_exec_runtime`, what `CLOCK_THREAD_CPUTIME_ID` reads).
fn thread_cpu_ns() -> anyhow::Result<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| anyhow::anyhow!("bench: reading /proc/thread-self/schedstat: {e}"))?;
    text.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("bench: /proc/thread-self/schedstat: unexpected format"))
}

/// Peak resident set size of this process in KiB (`VmHWM`), where /proc exists.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reset the peak RSS to the current RSS (`echo 5 > /proc/self/clear_refs`), so each case's
/// peak is its own; false where the kernel does not allow it (the peak is then the process's).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A bare discrete-event loop: a binary min-heap of (time, sequence) of [`BARE_QUEUE_LEN`]
/// entries; each event pops the earliest and pushes one a pseudo-random 1-1024 ns later.
/// Returns events per CPU-second: the yardstick the cases are divided by.
fn bare_loop_events_per_cpu_s() -> anyhow::Result<f64> {
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::with_capacity(BARE_QUEUE_LEN);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let next = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x & 1023
    };
    for seq in 0..BARE_QUEUE_LEN as u64 {
        heap.push(Reverse((next(&mut x), seq)));
    }
    let started = thread_cpu_ns()?;
    let mut checksum = 0u64;
    for seq in 0..BARE_EVENTS {
        let Reverse((t, s)) = heap.pop().expect("the heap never empties");
        checksum = checksum.wrapping_add(s);
        heap.push(Reverse((t + 1 + next(&mut x), seq + BARE_QUEUE_LEN as u64)));
    }
    let cpu_ns = thread_cpu_ns()?.saturating_sub(started).max(1);
    std::hint::black_box(checksum);
    Ok(BARE_EVENTS as f64 * 1e9 / cpu_ns as f64)
}

/// One case's figures.
#[derive(Debug, serde::Serialize)]
struct CaseResult {
    name: &'static str,
    command: String,
    sim_s: f64,
    cpu_s: f64,
    /// Events that did work (popped entries minus superseded ones).
    events: u64,
    superseded_events: u64,
    events_per_cpu_s: f64,
    sim_s_per_cpu_s: f64,
    peak_rss_mib: Option<f64>,
    bare_events_per_cpu_s: f64,
    /// `events_per_cpu_s` / `bare_events_per_cpu_s`.
    ratio_to_bare: f64,
    /// `sim_s_per_cpu_s` per million bare events per CPU-second: comparable across machines
    /// and load (issue 14's work-normalised speed).
    sim_s_per_bare_mevent: f64,
}

/// The scenario of `case` for `args`.
fn scenario(case: &Case, args: &BenchArgs) -> Result<Scenario, InputError> {
    let mut sets = Vec::new();
    if let Some(s) = args.sim_s.or((!args.full).then_some(case.short_s)) {
        sets.push(format!("run.duration_s={s}"));
    }
    if let Some(p) = &args.policy {
        sets.push(format!("kernel.policy=\"{p}\""));
    }
    let opts = QuickOptions {
        machine: Some(case.machine.to_string()),
        offline: case.offline.map(str::to_string),
        profile: case.profile.map(str::to_string),
        sets,
        command: case.command.split(' ').map(str::to_string).collect(),
        ..QuickOptions::default()
    };
    Scenario::from_doc(build_document(&opts)?)
}

/// The quick-form command line of `case`, as a user would type it.
fn command_line(case: &Case) -> String {
    let mut s = format!("run -m {}", case.machine);
    if let Some(o) = case.offline {
        s.push_str(&format!(" --offline {o}"));
    }
    if let Some(k) = case.profile {
        s.push_str(&format!(" -k {k}"));
    }
    format!("{s} -- {}", case.command)
}

/// Run `case` once (seed 1) and the bare loop right after.
fn measure(case: &Case, scn: &Scenario) -> anyhow::Result<CaseResult> {
    let rss_reset = reset_peak_rss();
    let started = thread_cpu_ns()?;
    let out = experiment::run_once(scn, 1)?;
    let cpu_s = (thread_cpu_ns()?.saturating_sub(started)).max(1) as f64 / 1e9;
    let peak_rss_mib = peak_rss_kib()
        .filter(|_| rss_reset)
        .map(|k| k as f64 / 1024.0);
    let bare = bare_loop_events_per_cpu_s()?;
    let events = out.result.events - out.superseded_events;
    let sim_s = out.end_ns as f64 / 1e9;
    let events_per_cpu_s = events as f64 / cpu_s;
    let sim_s_per_cpu_s = sim_s / cpu_s;
    Ok(CaseResult {
        name: case.name,
        command: command_line(case),
        sim_s,
        cpu_s,
        events,
        superseded_events: out.superseded_events,
        events_per_cpu_s,
        sim_s_per_cpu_s,
        peak_rss_mib,
        bare_events_per_cpu_s: bare,
        ratio_to_bare: events_per_cpu_s / bare,
        sim_s_per_bare_mevent: sim_s_per_cpu_s / (bare / 1e6),
    })
}

/// The cases `--case` selects (all without it); an unknown name is bad input.
fn selected(args: &BenchArgs) -> Result<Vec<&'static Case>, InputError> {
    for name in &args.cases {
        if name != "bare" && !CASES.iter().any(|c| c.name == name) {
            let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
            return Err(InputError::with_key(
                "--case",
                crate::output::echo(name),
                format!("unknown case; accepted: bare, {}", names.join(", ")),
            ));
        }
    }
    Ok(CASES
        .iter()
        .filter(|c| args.cases.is_empty() || args.cases.iter().any(|n| n == c.name))
        .collect())
}

/// One table row.
fn row(r: &CaseResult) -> String {
    format!(
        "{:<15} {:>8.3} {:>8.3} {:>11} {:>10} {:>11.0} {:>9.3} {:>8} {:>6.3} {:>8.4}\n",
        r.name,
        r.sim_s,
        r.cpu_s,
        r.events,
        r.superseded_events,
        r.events_per_cpu_s,
        r.sim_s_per_cpu_s,
        r.peak_rss_mib
            .map_or("-".to_string(), |m| format!("{m:.1}")),
        r.ratio_to_bare,
        r.sim_s_per_bare_mevent,
    )
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let cases = selected(args)?;
    // Every scenario is built first: bad input fails before any measurement.
    let scenarios = cases
        .iter()
        .map(|c| scenario(c, args))
        .collect::<Result<Vec<_>, _>>()?;
    let json_file = match args.json.as_deref().filter(|j| *j != "-") {
        Some(dest) => Some(crate::output::AtomicFile::create(
            "--json",
            std::path::Path::new(dest),
        )?),
        None => None,
    };
    let to_stderr = args.json.as_deref() == Some("-");
    let print = |s: &str| -> anyhow::Result<()> {
        if to_stderr {
            eprint!("{s}");
            Ok(())
        } else {
            Ok(crate::output::write_stdout(s)?)
        }
    };
    print(&format!(
        "{:<15} {:>8} {:>8} {:>11} {:>10} {:>11} {:>9} {:>8} {:>6} {:>8}\n",
        "case",
        "sim_s",
        "cpu_s",
        "events",
        "superseded",
        "events/cpu_s",
        "sim/cpu",
        "rss_MiB",
        "ratio",
        "sim/Mev"
    ))?;
    let mut results = Vec::new();
    for (case, scn) in cases.iter().zip(&scenarios) {
        let r = measure(case, scn)?;
        print(&row(&r))?;
        results.push(r);
    }
    let bare = bare_loop_events_per_cpu_s()?;
    print(&format!(
        "bare binary-heap loop ({BARE_QUEUE_LEN} entries): {:.1} M events per CPU-second\n\
         build: {BUILD} (profile/plain or profile/pgo: compare figures of the same kind)\n",
        bare / 1e6
    ))?;
    if args.json.is_some() {
        let doc = serde_json::json!({
            "schedlab_version": experiment::SCHEDLAB_VERSION,
            "build": BUILD,
            "mode": if args.full { "full" } else { "short" },
            "bare_events_per_cpu_s": bare,
            "cases": results,
        });
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        match json_file {
            Some(f) => f.write_commit(text.as_bytes())?,
            None => crate::output::write_stdout(&text)?,
        }
    }
    Ok(())
}
