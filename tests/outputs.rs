//! Result files and messages of `schedlab run` / `compare`: atomic writes, outputs that
//! name inputs, full stdout, SIGINT/SIGTERM with finished runs kept, `kill -9`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedlab-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_is_complete_true_and_no_temporary_file_remains() {
    let d = scratch("complete");
    let f = d.join("r.json");
    let o = bin()
        .args(["run", "scenarios/spin.toml", "--json"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    assert_eq!(v["complete"], true);
    assert!(v.get("stopped_reason").is_none());
    assert_eq!(files_in(&d), ["r.json"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_output_naming_an_input_or_another_output_is_refused_before_running() {
    let d = scratch("distinct");
    let scn = d.join("s.toml");
    std::fs::copy("scenarios/spin.toml", &scn).unwrap();
    let before = std::fs::read(&scn).unwrap();
    let o = bin()
        .arg("run")
        .arg(&scn)
        .arg("--json")
        .arg(&scn)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr_of(&o);
    assert!(
        err.contains("--json") && err.contains("is the input scenario"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "nothing ran");
    assert_eq!(
        std::fs::read(&scn).unwrap(),
        before,
        "the scenario is untouched"
    );
    // The rt-app file a scenario reads.
    let o = bin()
        .args([
            "run",
            "scenarios/rt-app.toml",
            "--json",
            "../shared/fixtures/rt-app/tutorial-example2.json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr_of(&o).contains("is the input workload.file"),
        "{}",
        stderr_of(&o)
    );
    // --trace and --json naming the same file (spelled differently).
    let o = bin()
        .args(["run", "scenarios/spin.toml", "--json"])
        .arg(d.join("x.txt"))
        .arg("--trace")
        .arg(d.join(".").join("x.txt"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr_of(&o).contains("is also the --json output"),
        "{}",
        stderr_of(&o)
    );
    assert_eq!(files_in(&d), ["s.toml"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unwritable_destination_fails_before_the_run_and_leaves_nothing() {
    let o = bin()
        .args([
            "run",
            "scenarios/spin.toml",
            "--json",
            "/nonexistent-dir/r.json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr_of(&o);
    assert!(
        err.starts_with("schedlab: error: --json: /nonexistent-dir/r.json: cannot create"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "the run did not start");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_full_stdout_is_a_clear_error_not_an_internal_one() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for extra in [&[][..], &["--json", "-"][..]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = bin()
            .args(["run", "scenarios/spin.toml"])
            .args(extra)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(
                "schedlab: error: stdout: cannot write the report: No space left on device"
            ),
            "{err}"
        );
        assert!(!err.contains("internal error"), "{err}");
    }
}

/// A run of `runs` seeds long enough to be interrupted (one worker thread, so runs finish
/// one after another).
fn long_run(d: &Path, runs: &str, sim_s: &str, extra: &[&str]) -> std::process::Child {
    bin()
        .env("RAYON_NUM_THREADS", "1")
        .args(["run", "-m", "skl-2s", "--runs", runs])
        .arg("--set")
        .arg(format!("run.duration_s={sim_s}"))
        .arg("--json")
        .arg(d.join("r.json"))
        .args(extra)
        .args(["--", "hackbench", "-g", "4", "-l", "1000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn sigint_keeps_the_finished_runs_marked_incomplete() {
    let d = scratch("sigint");
    // How long one run takes here (the machine may be busy), then 8 runs interrupted after
    // a few of them; if none had finished yet (a slow moment), again with a longer wait.
    let t0 = Instant::now();
    let mut one = long_run(&d, "1", "0.2", &[]);
    assert!(one.wait().unwrap().success());
    let one_run = t0.elapsed();
    let mut kept = 0;
    for wait_runs in [3, 5, 7] {
        let _ = std::fs::remove_file(d.join("r.json"));
        let child = long_run(&d, "8", "0.2", &[]);
        std::thread::sleep(one_run * wait_runs);
        signal(child.id(), "-INT");
        let started = Instant::now();
        let out = child.wait_with_output().unwrap();
        let err = stderr_of(&out);
        if out.status.success() {
            // All 8 finished before the signal: complete results.
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
            assert_eq!(v["complete"], true);
            continue;
        }
        assert!(
            started.elapsed() < one_run + Duration::from_secs(5),
            "stops promptly"
        );
        assert_eq!(out.status.code(), Some(130), "{err}");
        assert!(err.contains("schedlab: stopped by SIGINT: "), "{err}");
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
        assert_eq!(v["complete"], false);
        assert_eq!(v["stopped_reason"], "SIGINT");
        let runs = v["runs"].as_array().unwrap().len();
        assert!(runs < 8, "{runs} runs");
        if runs > 0 {
            assert_eq!(v["summary"]["workload.time_s"]["n"], runs);
        }
        assert_eq!(files_in(&d), ["r.json"], "no temporary file remains");
        kept = kept.max(runs);
        if runs > 0 {
            break;
        }
    }
    assert!(kept >= 1, "no attempt kept a finished run");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sigterm_then_a_second_signal_and_kill_9_leave_no_partial_file() {
    let d = scratch("kill");
    // SIGTERM: reason recorded, exit 143.
    let mut child = long_run(&d, "8", "5", &[]);
    std::thread::sleep(Duration::from_millis(700));
    signal(child.id(), "-TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(
        (v["complete"].clone(), v["stopped_reason"].clone()),
        (false.into(), "SIGTERM".into())
    );
    std::fs::remove_file(d.join("r.json")).unwrap();
    // Two SIGINTs in a row: exit 130, and the file is either absent or complete JSON.
    let mut child = long_run(
        &d,
        "8",
        "5",
        &["--trace", d.join("t.txt").to_str().unwrap()],
    );
    std::thread::sleep(Duration::from_millis(700));
    signal(child.id(), "-INT");
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    if let Ok(bytes) = std::fs::read(d.join("r.json")) {
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["complete"], false);
    }
    assert!(
        !d.join("t.txt").exists(),
        "an unfinished trace is never at its final name"
    );
    for f in files_in(&d) {
        let _ = std::fs::remove_file(d.join(f));
    }
    // kill -9: nothing at the final paths.
    let mut child = long_run(
        &d,
        "8",
        "5",
        &["--trace", d.join("t.txt").to_str().unwrap()],
    );
    std::thread::sleep(Duration::from_millis(700));
    child.kill().unwrap();
    let _ = child.wait();
    assert!(!d.join("r.json").exists());
    assert!(!d.join("t.txt").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_report_starts_with_machine_kernel_policy_and_seed() {
    let o = bin()
        .args([
            "run",
            "-m",
            "skl-2s",
            "--offline",
            "4-7",
            "-k",
            "v5.15",
            "--feature",
            "RUN_TO_PARITY=on",
            "--sysctl",
            "sched_migration_cost_ns=100000",
            "--seed",
            "7",
            "--runs",
            "2",
            "--",
            "hackbench",
            "-g",
            "1",
            "-l",
            "10",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "schedlab: machine skl-2s (preset; 80 CPUs, 76 online, 2 nodes); kernel v5.15 (cfs; \
         features RUN_TO_PARITY; sysctl sched_migration_cost_ns=100000); policy linux-fair; \
         seed 7, 2 runs (run seeds derived from it)"
    );
    // The profile's note goes to stderr as well as to the JSON.
    assert!(
        stderr_of(&o).contains("schedlab: note: RUN_TO_PARITY has no effect in cfs mode"),
        "{}",
        stderr_of(&o)
    );
    // An imported machine names its source; the report moves to stderr with --json -.
    let xml = "../shared/fixtures/topology/hwloc-xml/16em64t-4s2c2t.xml";
    let o = bin()
        .args([
            "run",
            "-m",
            xml,
            "--json",
            "-",
            "--",
            "hackbench",
            "-g",
            "1",
            "-l",
            "10",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let first = stderr_of(&o).lines().next().unwrap().to_string();
    assert!(
        first.starts_with(&format!(
            "schedlab: machine {xml} (hwloc; 16 CPUs, 1 node); kernel v6."
        )),
        "{first}"
    );
    assert!(
        first.ends_with("(eevdf); policy linux-fair; seed 1"),
        "{first}"
    );
}

#[test]
fn message_nits() {
    // bench's flags are checked where they are parsed, not as "malformed TOML".
    for v in ["nan", "-1", "0", "inf", "1e300"] {
        let o = bin().args(["bench", "--sim-s", v]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "--sim-s {v}");
        let err = stderr_of(&o);
        assert!(
            err.contains(&format!("invalid value '{v}' for '--sim-s <SIM_S>': out of range; accepted: seconds, more than 0 and at most 3600")),
            "{err}"
        );
        assert!(!err.contains("TOML"), "{err}");
        assert!(o.stdout.is_empty(), "no table header before the error");
    }
    let o = bin().args(["bench", "--policy", "cfs"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("[possible values: linux-fair, fifo]"));
    // A 100 KB name is not echoed whole (one short line, its length given).
    let long = "a".repeat(100_000);
    for args in [
        vec!["run", "-m", long.as_str(), "--", "hackbench"],
        vec!["run", "-m", "skl-2s", "--", long.as_str()],
        vec!["run", "scenarios/spin.toml", "--explain", long.as_str()],
        vec!["run", "scenarios/spin.toml", "--runs", long.as_str()],
    ] {
        let o = bin().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = stderr_of(&o);
        assert!(err.len() < 1500, "{} bytes: {}", err.len(), &err[..300]);
        assert!(
            err.contains("(100000 bytes)")
                || err.contains("(100002 bytes)")
                || err.contains("(100003 bytes)"),
            "{err}"
        );
    }
    // --explain's help is a whole sentence.
    let o = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8(o.stdout).unwrap();
    let line = help
        .lines()
        .skip_while(|l| !l.contains("--explain <TASK>"))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('-'))
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        line.contains("with --runs > 1, the task of the first run (first seed)"),
        "{line}"
    );
    assert!(!line.contains("the first run's"), "{line}");
}

/// The typed results cover every key of the contract's `runs[]` entries: a run read back
/// into [`RunResult`] serializes to the same JSON (fair and fifo policies, a benchmark with
/// its own latency metrics, placement, RT tasks).
#[test]
fn typed_run_results_round_trip_every_key() {
    use schedlab::stats::report::RunResult;
    for scn in [
        "scenarios/hackbench-numactl.toml",
        "scenarios/spin-fifo.toml",
        "scenarios/schbench.toml",
        "scenarios/rt-starve.toml",
    ] {
        let o = bin()
            .args(["run", scn, "--set", "run.duration_s=0.05", "--json", "-"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{scn}: {}", stderr_of(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        for run in doc["runs"].as_array().unwrap() {
            let typed: RunResult = serde_json::from_value(run.clone()).unwrap();
            assert_eq!(&typed.to_json(), run, "{scn}");
            assert!(
                typed.sim_time_ns > 0 && typed.perf_stat.task_clock_ms > 0.0,
                "{scn}"
            );
            assert_eq!(
                typed.workload.kind(),
                run["workload"]["kind"].as_str(),
                "{scn}"
            );
        }
        // Keys are written in sorted order at every level (serde_json maps are BTreeMaps).
        let firsts: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        let mut sorted = firsts.clone();
        sorted.sort();
        assert_eq!(firsts, sorted);
    }
}

/// stress-ng without a timeout runs its one-day default: a one-line warning before the run
/// (then SIGINT stops it promptly, with nothing finished).
#[test]
fn one_day_default_is_warned_about() {
    use std::io::{BufRead, BufReader};
    let d = scratch("oneday");
    let mut child = bin()
        .args(["run", "-m", "skl-2s", "--json"])
        .arg(d.join("r.json"))
        .args(["--", "stress-ng", "--cpu", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert_eq!(
        first,
        "schedlab: warning: stress-ng has no --timeout/-t: it runs for its default of one day \
         (86400 s of simulated time); set -t or [run] duration_s for a shorter run"
    );
    signal(child.id(), "-INT");
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(rest, ["schedlab: stopped by SIGINT: 0 of 1 runs finished"]);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["runs"].as_array().unwrap().len(), 0);
    // With a timeout (or [run] duration_s) there is no warning.
    let o = bin()
        .args([
            "run",
            "-m",
            "skl-2s",
            "--",
            "stress-ng",
            "--cpu",
            "2",
            "-t",
            "1",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!stderr_of(&o).contains("warning"), "{}", stderr_of(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// On a terminal, the progress bar ticks with simulated time within a single run (run under
/// `script`, which gives the process a pseudo-terminal).
#[test]
fn progress_bar_ticks_within_a_run_on_a_terminal() {
    if !Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: no /usr/bin/script to provide a terminal");
        return;
    }
    let cmd = format!(
        "{} run -m skl-2s --runs 1 --set run.duration_s=0.3 -- hackbench -g 4 -l 1000000 >/dev/null",
        env!("CARGO_BIN_EXE_schedlab")
    );
    let o = Command::new("/usr/bin/script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let screen = String::from_utf8_lossy(&o.stdout).replace('\r', "\n");
    let covered: Vec<f64> = screen
        .lines()
        .filter_map(|l| l.split("runs: ").nth(1))
        .filter_map(|l| l.split(" of 0.300 s simulated").next())
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    assert!(
        covered.iter().any(|&x| x > 0.0 && x < 0.3),
        "no intermediate position in: {covered:?}\n{screen}"
    );
    // Without a terminal there is no bar.
    let o = bin()
        .args([
            "run",
            "-m",
            "skl-2s",
            "--set",
            "run.duration_s=0.05",
            "--",
            "hackbench",
        ])
        .output()
        .unwrap();
    assert!(!stderr_of(&o).contains("s simulated"), "{}", stderr_of(&o));
}

// ----- streamed interval output (issue 11: schbench's periodic reports as time passes) -----

/// schbench `-i 1 -r 3`: its statistics thread prints an interval report every simulated
/// second. Each reaches the stream while the run is still going (the engine's progress counter
/// is below the run's end when it arrives, and grows from one report to the next), carries its
/// own simulated time (`runtime 1 (s)`, 2, 3, in order), and what was streamed is exactly the
/// start of the run's native report (the final report follows it).
#[test]
fn schbench_interval_reports_stream_in_simulated_time_order() {
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};
    let scn = schedlab::config::scenario::Scenario::parse(
        "[machine]\npreset = \"skl-2s\"\n[workload]\ncommand = \"schbench -m 2 -t 4 -i 1 -r 3\"\n",
        "test.toml",
    )
    .unwrap();
    let mut ctx = schedlab::experiment::RunContext::default();
    let shared = ctx.shared.clone();
    let chunks: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let log = chunks.clone();
    ctx.stream = Some(schedlab::workload::results::TextSink(Arc::new(
        move |t: &str| {
            let at = shared.progress_ns.load(Ordering::Relaxed);
            log.lock().unwrap().push((t.to_string(), at));
        },
    )));
    let (run, _) = schedlab::experiment::run_once_in(
        &ctx,
        &scn,
        1,
        schedlab::stats::trace::Instruments::default(),
    )
    .unwrap();
    let chunks = chunks.lock().unwrap();
    // The preamble, then one chunk per interval report.
    assert_eq!(chunks.len(), 4, "{chunks:?}");
    let mut last_at = 0;
    for (k, (text, at)) in chunks[1..].iter().enumerate() {
        let first = text.lines().next().unwrap();
        let want = format!("Wakeup Latencies percentiles (usec) runtime {} (s)", k + 1);
        assert!(first.starts_with(&want), "{first}");
        assert!(text.contains("current rps: "), "{text}");
        assert!(*at < 3_000_000_000, "report {} arrived at {at} ns", k + 1);
        assert!(*at >= last_at);
        last_at = *at;
    }
    let streamed: String = chunks.iter().map(|(t, _)| t.as_str()).collect();
    let rest = run
        .native_text
        .strip_prefix(&streamed)
        .expect("streamed text is the start of the native report");
    assert!(
        rest.starts_with("Wakeup Latencies percentiles (usec) runtime 3 (s)"),
        "{rest}"
    );
    assert!(rest.contains("average rps: "), "{rest}");
}

/// On the command line the streamed reports land on stdout after the setup line and before
/// the final report, the perf-stat block and the summary — the same order the non-streamed
/// (several-runs) output has for each run.
#[test]
fn schbench_stdout_interleaves_interval_reports_before_the_final_report() {
    let o = bin()
        .args([
            "run", "-m", "skl-2s", "--", "schbench", "-m", "2", "-t", "4", "-i", "1", "-r", "3",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("schedlab: machine skl-2s"), "{out}");
    let pos = |needle: &str, from: usize| {
        from + out[from..]
            .find(needle)
            .unwrap_or_else(|| panic!("'{needle}' after byte {from} in:\n{out}"))
    };
    let mut at = 0;
    for t in 1..=3 {
        at = pos(
            &format!("Wakeup Latencies percentiles (usec) runtime {t} (s)"),
            at,
        );
        at = pos("current rps: ", at);
    }
    // The final report (runtime 3 again, with the average) comes after the last interval.
    at = pos("Wakeup Latencies percentiles (usec) runtime 3 (s)", at);
    at = pos("average rps: ", at);
    pos("seed ", at);
    assert_eq!(out.matches("schedlab: machine").count(), 1);
}
