//! `schedlab host-measure`: run the rows' real benchmarks on this machine under
//! `perf stat -e task-clock,context-switches,cpu-migrations` and collect a [`HostTable`].
//!
//! Each run is a child process tree: optionally `setsid sh -c 'echo -20 >
//! /proc/self/autogroup; exec ...'` (a fresh autogroup at nice -20, so other sessions get
//! ~1 % of a CPU while the benchmark is runnable), then `perf stat -o FILE ... -- COMMAND`.
//! The counters come from perf's own report; schbench's throughput from its "average rps:"
//! line. Where GNU time is on PATH (Debian `time`), perf runs under `time -f '%w %c'`,
//! which adds the voluntary and involuntary context switches of the whole process tree
//! (`getrusage(RUSAGE_CHILDREN)`, as LKP's `time.*_context_switches`): perf's
//! `context-switches` is their sum, and the split says whether tasks blocked or were
//! preempted.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::rows::{Primary, Program, Row};
use super::table::{HostId, HostTable, RealRun, RowResult, TABLE_FORMAT, now_rfc3339};

/// Most runs per row `--runs` accepts.
pub const MAX_RUNS_PER_ROW: usize = 100;

/// How `host-measure` runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub runs: usize,
    /// Start each run in its own autogroup at nice -20 (needs root).
    pub isolate: bool,
    /// The schbench binary (else `schbench` on PATH).
    pub schbench: Option<PathBuf>,
}

/// Measure `rows`, calling `progress` with one line per finished run.
pub fn measure(rows: &[&Row], opts: &Options, progress: &mut dyn FnMut(&str)) -> HostTable {
    assert!((1..=MAX_RUNS_PER_ROW).contains(&opts.runs));
    let measured_at = now_rfc3339();
    if gnu_time().is_none() {
        progress(
            "GNU time not on PATH: voluntary and involuntary context switches are not recorded \
             (install: apt-get install time)",
        );
    }
    let rows = rows
        .iter()
        .map(|row| measure_row(row, opts, progress))
        .collect();
    HostTable {
        format: TABLE_FORMAT,
        host: HostId::current(),
        measured_at,
        schedlab_version: crate::experiment::SCHEDLAB_VERSION.to_string(),
        isolated: opts.isolate,
        rows,
    }
}

fn measure_row(row: &Row, opts: &Options, progress: &mut dyn FnMut(&str)) -> RowResult {
    let mut result = RowResult {
        id: row.id.to_string(),
        command: row.command.to_string(),
        primary: Some(row.primary),
        runs: Vec::new(),
        skipped: None,
    };
    let argv = match argv_of(row, opts) {
        Ok(a) => a,
        Err(why) => {
            progress(&format!("{}: skipped: {why}", row.id));
            result.skipped = Some(why);
            return result;
        }
    };
    let mut failures = Vec::new();
    for k in 0..opts.runs {
        match run_once(&argv, row.primary, opts.isolate) {
            Ok(run) => {
                progress(&format!(
                    "{} run {}/{}: {:.3} s elapsed, {:.0} context switches, {:.0} migrations",
                    row.id,
                    k + 1,
                    opts.runs,
                    run.elapsed_s,
                    run.context_switches,
                    run.cpu_migrations
                ));
                result.runs.push(run);
            }
            Err(why) => {
                progress(&format!(
                    "{} run {}/{}: failed: {why}",
                    row.id,
                    k + 1,
                    opts.runs
                ));
                failures.push(why);
            }
        }
    }
    if result.runs.is_empty() {
        result.skipped = Some(format!("every run failed; first: {}", failures[0]));
    }
    result
}

/// The row's command line as argv, with the program located (schbench from `--schbench`).
fn argv_of(row: &Row, opts: &Options) -> Result<Vec<String>, String> {
    let mut argv: Vec<String> = row.command.split_whitespace().map(String::from).collect();
    let at = argv
        .iter()
        .position(|a| a == row.program.name())
        .expect("a row's command names its program");
    let program = match (row.program, &opts.schbench) {
        (Program::Schbench, Some(p)) => p.clone(),
        (p, _) => find_on_path(p.name()).ok_or_else(|| {
            format!(
                "{} not found on PATH; install: {}",
                p.name(),
                p.install_hint()
            )
        })?,
    };
    if !program.is_file() {
        return Err(format!(
            "{} is not a file; install: {}",
            program.display(),
            row.program.install_hint()
        ));
    }
    argv[at] = program.display().to_string();
    if argv[0] == "taskset" && find_on_path("taskset").is_none() {
        return Err("taskset not found on PATH; install: apt-get install util-linux".into());
    }
    Ok(argv)
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// GNU time, when on PATH: a `time` that takes `-f FORMAT -o FILE`. (Debian's `time`
/// package; the shell keyword of the same name is not a file.)
fn gnu_time() -> Option<PathBuf> {
    find_on_path("time")
}

/// One real run of `argv` under perf stat (under GNU time where present).
fn run_once(argv: &[String], primary: Primary, isolate: bool) -> Result<RealRun, String> {
    let tmp = |what: &str| {
        std::env::temp_dir().join(format!(
            "schedlab-host-measure-{}-{what}.txt",
            std::process::id()
        ))
    };
    let (stat_file, time_file) = (tmp("perf"), tmp("rusage"));
    let time = gnu_time();
    let mut cmd = measured_command(argv, isolate, time.as_deref(), &stat_file, &time_file);
    let loadavg_before = loadavg();
    let cpu_before = cpu_ticks();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start perf: {e}"))?;
    let cpu_after = cpu_ticks();
    let stat = std::fs::read_to_string(&stat_file).unwrap_or_default();
    let _ = std::fs::remove_file(&stat_file);
    let rusage = std::fs::read_to_string(&time_file).unwrap_or_default();
    let _ = std::fs::remove_file(&time_file);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!(
            "{} exited with {}: {}",
            argv.join(" "),
            out.status,
            last_line(&text)
        ));
    }
    let mut run = parse_perf_stat(&stat)
        .ok_or_else(|| format!("no perf stat counters in its report: {}", last_line(&stat)))?;
    if primary == Primary::Rps {
        run.rps = Some(parse_rps(&text).ok_or("no 'average rps:' line in schbench's output")?);
    }
    run.loadavg_before = loadavg_before;
    run.steal_pct = steal_pct(cpu_before, cpu_after);
    if time.is_some() {
        let (voluntary, involuntary) = parse_gnu_time_switches(&rusage).ok_or_else(|| {
            format!(
                "no '%w %c' line in GNU time's report: {}",
                last_line(&rusage)
            )
        })?;
        run.voluntary_switches = Some(voluntary);
        run.involuntary_switches = Some(involuntary);
    }
    Ok(run)
}

/// The voluntary and involuntary switch counts GNU time's `-f '%w %c'` wrote: its last
/// non-empty line (a "Command exited with non-zero status" line may come first).
pub fn parse_gnu_time_switches(text: &str) -> Option<(f64, f64)> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let mut words = line.split_whitespace().map(|w| w.parse::<u64>().ok());
    let (voluntary, involuntary) = (words.next()??, words.next()??);
    if words.next().is_some() {
        return None;
    }
    Some((voluntary as f64, involuntary as f64))
}

/// The command of one run: `argv` under `perf stat -o stat_file`, wrapped in GNU time
/// (`-o time_file`) when `time` is given, and started in its own autogroup at nice -20 when
/// `isolate`.
fn measured_command(
    argv: &[String],
    isolate: bool,
    time: Option<&Path>,
    stat_file: &Path,
    time_file: &Path,
) -> Command {
    // The program run first: GNU time wrapping perf, or perf.
    let mut chain: Vec<std::ffi::OsString> = Vec::new();
    if let Some(t) = time {
        chain.push(t.into());
        chain.extend(["-f", "%w %c", "-o"].map(Into::into));
        chain.push(time_file.into());
    }
    chain.push("perf".into());
    let mut cmd = if isolate {
        let mut c = Command::new("setsid");
        c.args([
            "sh",
            "-c",
            "echo -20 > /proc/self/autogroup 2>/dev/null; exec \"$@\"",
            "sh",
        ]);
        c.args(&chain);
        c
    } else {
        let mut c = Command::new(&chain[0]);
        c.args(&chain[1..]);
        c
    };
    cmd.args([
        "stat",
        "-e",
        "task-clock,context-switches,cpu-migrations",
        "-o",
    ])
    .arg(stat_file)
    .arg("--")
    .args(argv);
    cmd
}

fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The counters and the elapsed time of perf stat's human-readable report.
pub fn parse_perf_stat(text: &str) -> Option<RealRun> {
    let (mut clock, mut cs, mut mig, mut elapsed) = (None, None, None, None);
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(value) = words
            .next()
            .and_then(|w| w.replace(',', "").parse::<f64>().ok())
        else {
            continue;
        };
        let rest: Vec<&str> = words.collect();
        let has = |name: &str| rest.iter().take(2).any(|w| w.starts_with(name));
        if has("task-clock") {
            clock = Some(value);
        } else if has("context-switches") {
            cs = Some(value);
        } else if has("cpu-migrations") {
            mig = Some(value);
        } else if rest.starts_with(&["seconds", "time", "elapsed"]) {
            elapsed = Some(value);
        }
    }
    Some(RealRun {
        elapsed_s: elapsed?,
        task_clock_ms: clock?,
        context_switches: cs?,
        cpu_migrations: mig?,
        ..RealRun::default()
    })
}

/// schbench's `average rps: N` (its last report).
pub fn parse_rps(text: &str) -> Option<f64> {
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("average rps:"))
        .and_then(|v| v.trim().parse().ok())
}

fn loadavg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// (all, steal) jiffies of the `cpu` line of /proc/stat.
fn cpu_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().find(|l| l.starts_with("cpu ")) else {
        return (0, 0);
    };
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|w| w.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    (v.iter().take(8).sum(), v.get(7).copied().unwrap_or(0))
}

fn steal_pct(before: (u64, u64), after: (u64, u64)) -> f64 {
    let all = after.0.saturating_sub(before.0);
    if all == 0 {
        return 0.0;
    }
    100.0 * after.1.saturating_sub(before.1) as f64 / all as f64
}

/// Where `host-measure` writes by default: `validation/host/<slug>.json` under `root`.
pub fn default_table_path(root: &Path, host: &HostId) -> PathBuf {
    root.join("validation/host")
        .join(format!("{}.json", host.slug()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_stat_report_parses() {
        let text = "\n Performance counter stats for 'perf bench sched messaging -g 1 -l 200':\n\n\
            \x20           349.11 msec task-clock                       #    1.303 CPUs utilized\n\
            \x20            4,220      context-switches                 #   12.088 K/sec\n\
            \x20               92      cpu-migrations                   #  263.526 /sec\n\n\
            \x20      0.267845123 seconds time elapsed\n\n\
            \x20      0.101 seconds user\n";
        let r = parse_perf_stat(text).unwrap();
        assert_eq!(r.task_clock_ms, 349.11);
        assert_eq!(r.context_switches, 4220.0);
        assert_eq!(r.cpu_migrations, 92.0);
        assert_eq!(r.elapsed_s, 0.267845123);
        assert!(parse_perf_stat("no counters here").is_none());
    }

    #[test]
    fn schbench_rps_is_the_last_average() {
        let text = "average rps: 10.00\nsomething\naverage rps: 75.50\nsched delay: message 0";
        assert_eq!(parse_rps(text), Some(75.5));
        assert_eq!(parse_rps("none"), None);
    }

    #[test]
    fn gnu_time_switch_counts_are_its_last_line() {
        assert_eq!(
            parse_gnu_time_switches("106635 20918\n"),
            Some((106635.0, 20918.0))
        );
        assert_eq!(
            parse_gnu_time_switches("Command exited with non-zero status 1\n12 3\n"),
            Some((12.0, 3.0))
        );
        assert_eq!(parse_gnu_time_switches("12 3 4\n"), None);
        assert_eq!(
            parse_gnu_time_switches("Command terminated by signal 9\n"),
            None
        );
        assert_eq!(parse_gnu_time_switches(""), None);
    }

    #[test]
    fn steal_share_of_ticks() {
        assert_eq!(steal_pct((100, 10), (200, 20)), 10.0);
        assert_eq!(steal_pct((100, 10), (100, 10)), 0.0);
    }
}
