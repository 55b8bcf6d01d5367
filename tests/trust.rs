//! Results that can be trusted (issue 32): a benchmark cut short is never reported as
//! finished, every printed seed replays its run, and `--run K` picks the run recorded.

use std::process::Command;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-trust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn cut_hackbench_is_not_reported_as_finished() {
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--set",
        "run.duration_s=0.001",
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "1000",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("Time: not finished"), "{stdout}");
    assert!(
        !stdout.contains("Time: 0."),
        "the cap printed as hackbench's time: {stdout}"
    );
    assert!(
        stdout.contains("benchmark not finished in 1 of 1 runs"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: the benchmark did not finish")
            && stderr.contains("run.duration_s"),
        "{stderr}"
    );
}

#[test]
fn cut_by_the_default_cap_is_an_error() {
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--set",
        "kernel.policy=fifo",
        "--set",
        "workload.kind=pingpong",
        "--set",
        "workload.pairs=1",
        "--set",
        "workload.message_work_us=10000000",
        "--set",
        "workload.worker_work_us=10000000",
        "--set",
        "workload.loops=1000",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("error: the benchmark did not finish"),
        "{stderr}"
    );
    assert!(stderr.contains("3600 s simulated-time cap"), "{stderr}");
    assert!(text(&out.stdout).contains("benchmark not finished in 1 of 1 runs"));
}

#[test]
fn finished_hackbench_prints_its_time_and_no_note() {
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "50",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("Time: 0."), "{stdout}");
    assert!(!stdout.contains("not finished"), "{stdout}");
}

fn runs_of(path: &std::path::Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut runs = v["runs"].as_array().unwrap().clone();
    for r in &mut runs {
        let obj = r.as_object_mut().unwrap();
        obj.remove("wall_time_s");
        obj.remove("sim_s_per_wall_s");
    }
    runs
}

#[test]
fn a_printed_derived_seed_replays_its_run() {
    let (r, s) = (tmp("r.json"), tmp("s.json"));
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--runs",
        "3",
        "--json",
        r.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "100",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The seed as printed: "seed S: migrations ..." lines, the second one.
    let stdout = text(&out.stdout);
    let seeds: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("seed ")?.split(':').next())
        .collect();
    assert_eq!(seeds.len(), 3, "{stdout}");
    assert!(
        seeds[1].parse::<u64>().unwrap() > i64::MAX as u64,
        "a seed above 2^63-1: {seeds:?}"
    );
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--seed",
        seeds[1],
        "--json",
        s.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "100",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(runs_of(&r)[1], runs_of(&s)[0]);
}

#[test]
fn seeds_above_i64_are_accepted_in_a_scenario_as_strings() {
    let f = tmp("seed.toml");
    std::fs::write(
        &f,
        "[machine]\npreset = \"skl-2s\"\n[workload]\ncommand = \"hackbench -g 1 -l 10\"\n\
         [run]\nseed = \"18446744073709551615\"\n",
    )
    .unwrap();
    let out = schedlab(&["run", f.to_str().unwrap(), "--json", "-"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["seed"].as_u64(), Some(u64::MAX));
    let out = schedlab(&["run", f.to_str().unwrap(), "--set", "run.seed=-1"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("run.seed") && stderr.contains("18446744073709551615"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn run_k_picks_the_run_the_report_records() {
    let (j, h) = (tmp("k.json"), tmp("k.html"));
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--runs",
        "2",
        "--run",
        "2",
        "--report",
        h.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "50",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let runs = runs_of(&j);
    let recorded: Vec<bool> = runs.iter().map(|r| !r["timeline"].is_null()).collect();
    assert_eq!(recorded, [false, true]);
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--runs",
        "2",
        "--run",
        "3",
        "--report",
        h.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "50",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--run") && stderr.contains("from 1 to 2"),
        "{stderr}"
    );
}

const CUT_COMPARE: &[&str] = &[
    "compare",
    "-m",
    "skl-2s",
    "--set",
    "run.duration_s=0.001",
    "--variant",
    "a:NO_TTWU_QUEUE",
    "--runs",
    "2",
    "--",
    "hackbench",
    "-g",
    "2",
    "-l",
    "1000",
];

#[test]
fn compare_refuses_cut_runs_unless_allowed_and_marks_them() {
    let out = schedlab(CUT_COMPARE);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did not finish in 4 of 4 runs"), "{stderr}");
    assert!(stderr.contains("--allow-incomplete"), "{stderr}");
    assert!(
        !text(&out.stdout).contains("paired delta"),
        "compared anyway"
    );
    let mut args = CUT_COMPARE.to_vec();
    args.insert(1, "--allow-incomplete");
    let out = schedlab(&args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: the benchmark did not finish"),
        "{stderr}"
    );
    // Every table row of a cut variant is marked.
    let unmarked: Vec<&str> = (stdout.lines())
        .filter(|l| l.starts_with("baseline ") || l.starts_with("a "))
        .collect();
    assert!(
        unmarked.is_empty(),
        "unmarked table rows: {unmarked:?}\n{stdout}"
    );
    assert!(
        stdout.contains("baseline*") && stdout.contains("a*"),
        "{stdout}"
    );
}

/// `bisect` v6.6 -> v6.18 of `hackbench -g 2 -l 1000` with every run cut at `duration`
/// (`run.duration_s`), with `extra` options before the command.
fn cut_bisect(duration: &str, extra: &[&str]) -> std::process::Output {
    let set = format!("run.duration_s={duration}");
    let mut args = vec!["bisect", "-m", "skl-2s", "--good", "v6.6", "--bad", "v6.18"];
    args.extend(["--set", &set]);
    args.extend(extra);
    args.extend(["--", "hackbench", "-g", "2", "-l", "1000"]);
    schedlab(&args)
}

/// The command exited 2 saying the benchmark did not finish and naming the way out.
fn assert_refused_as_cut(out: &std::process::Output) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("did not finish") && stderr.contains("--allow-incomplete"),
        "{stderr}"
    );
}

#[test]
fn bisect_refuses_cut_runs() {
    assert_refused_as_cut(&cut_bisect("0.001", &[]));
}

#[test]
fn piped_runs_print_a_progress_line_per_finished_run_unless_quiet() {
    let args = [
        "run",
        "-m",
        "skl-2s",
        "--runs",
        "2",
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "50",
    ];
    let out = schedlab(&args);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("schedlab: runs: 2 of 2 runs finished"),
        "{stderr}"
    );
    assert!(
        stderr.lines().all(|l| l.starts_with("schedlab: ")),
        "{stderr}"
    );
    let mut quiet = args.to_vec();
    quiet.insert(1, "--quiet");
    let out = schedlab(&quiet);
    assert!(out.status.success());
    assert!(
        !text(&out.stderr).contains("runs finished"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn compare_json_keeps_the_time_series_of_its_report() {
    let (j, h) = (tmp("c.json"), tmp("c.html"));
    let out = schedlab(&[
        "compare",
        "-q",
        "-m",
        "skl-2s",
        "--variant",
        "a:NO_TTWU_QUEUE",
        "--json",
        j.to_str().unwrap(),
        "--report",
        h.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "2",
        "-l",
        "50",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    for variant in v["variants"].as_array().unwrap() {
        assert!(
            !variant["results"]["runs"][0]["timeline"].is_null(),
            "no time series in --json for {}",
            variant["name"]
        );
    }
}

#[test]
fn absurd_costs_are_refused_with_the_full_key_and_the_limit() {
    for (set, range) in [
        (
            "machine.cost.context_switch_ns=9e18",
            "from 0 to 1000000000 ns",
        ),
        (
            "machine.cost.context_switch_ns=-100",
            "from 0 to 1000000000 ns",
        ),
        (
            "machine.cost.ipi_latency_ns=\"x\"",
            "from 0 to 1000000000 ns",
        ),
        ("machine.cost.speed_pct=-100", "from 1 to 100000"),
    ] {
        let out = schedlab(&[
            "run",
            "-m",
            "skl-2s",
            "--set",
            set,
            "--",
            "hackbench",
            "-g",
            "1",
        ]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {stderr}");
        let key = set.split('=').next().unwrap();
        assert!(stderr.contains(&format!("{key}: got")), "{set}: {stderr}");
        assert!(stderr.contains(range), "{set}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn tasks_beyond_the_available_memory_are_refused_up_front() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "run",
            "-m",
            "skl-2s",
            "--set",
            "run.max_tasks=1000000",
            "--",
            "hackbench",
        ])
        .args(["-g", "1000", "-l", "1"])
        .env("SCHEDLAB_TEST_MEMAVAILABLE_KIB", "102400")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("would create 40001 tasks") && stderr.contains("MiB"),
        "{stderr}"
    );
    assert!(stderr.contains("above the 100 MiB"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Inputs echoed in an error keep it on one line (the fuzz targets' findings).
#[test]
fn echoed_inputs_never_break_the_error_line() {
    let dir = tmp("echo");
    std::fs::create_dir_all(&dir).unwrap();
    let variant = dir.join("v.toml");
    std::fs::write(
        &variant,
        "[machine]\npreset = \"skl-2s\"\n[workload]\ncommand = \"hackbench -g 1\"\n\
         [[variant]]\nname = \"a\"\n\"x\\ny\" = 1\n",
    )
    .unwrap();
    let rtapp = dir.join("r.json");
    std::fs::write(
        &rtapp,
        r#"{"global":{"ftrace":"a\nb"},"tasks":{"t":{"loop":1,"run":100}}}"#,
    )
    .unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec![
            "run".into(),
            "-m".into(),
            "skl\n2s".into(),
            "--".into(),
            "hackbench".into(),
        ],
        vec!["compare".into(), variant.display().to_string()],
        vec![
            "run".into(),
            "-m".into(),
            "skl-2s".into(),
            "--".into(),
            "rt-app".into(),
            rtapp.display().to_string(),
        ],
    ];
    for args in cases {
        let out = schedlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("\\n"),
            "the newline is shown escaped: {stderr}"
        );
    }
}

/// fuzz_topology found it: a cache type `L<non-ASCII>Cache` panicked on a byte slice.
#[test]
fn hwloc_cache_type_with_a_non_ascii_level_is_no_panic() {
    let f = tmp("lcache.xml");
    std::fs::write(
        &f,
        "<?xml version=\"1.0\"?>\n<topology>\n<object type=\"Machine\" os_index=\"0\">\n\
         <object type=\"L\u{e9}Cache\" cache_size=\"1\"><object type=\"PU\" os_index=\"0\"/>\
         </object>\n</object>\n</topology>\n",
    )
    .unwrap();
    let out = schedlab(&["topo", "--hwloc", f.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// The `workload` object of every run of a results file.
fn workloads_of(path: &std::path::Path) -> Vec<serde_json::Value> {
    runs_of(path)
        .into_iter()
        .map(|r| r["workload"].clone())
        .collect()
}

/// Issue 32 (audit, item 3): a time-bounded benchmark (its own `-r`/`--timeout`/`-l`/
/// `duration`) cut short by `run.duration_s` is marked not complete exactly as a cut hackbench
/// is, and its report gives the simulated runtime, not the one asked for.
#[test]
fn cut_time_bounded_schbench_is_not_reported_as_finished() {
    let json = tmp("schbench-cut.json");
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--set",
        "run.duration_s=0.05",
        "--json",
        json.to_str().unwrap(),
        "--",
        "schbench",
        "-m",
        "2",
        "-t",
        "4",
        "-r",
        "60",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("runtime 0.050 (s)") && !stdout.contains("runtime 60 (s)"),
        "the requested runtime printed as the one that ran: {stdout}"
    );
    assert!(
        stdout.contains("average rps: not finished (the run ended at 0.050 s of -r 60 s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("schedlab: the benchmark did not finish: the run was cut at 0.05 s")
            && stdout.contains("before its own length of 60 s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("benchmark not finished in 1 of 1 runs"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: the benchmark did not finish in 1 of 1 runs"),
        "{stderr}"
    );
    assert_eq!(workloads_of(&json)[0]["complete"], false);
}

/// Every time-bounded benchmark: cut, `workload.complete = false`; run to its own length,
/// no `complete` key (their results do not change) and no note.
#[test]
fn every_time_bounded_benchmark_cut_short_is_marked() {
    let rtapp = "../shared/fixtures/rt-app/tutorial-example1.json";
    let cut: &[&[&str]] = &[
        &["schbench-2021", "-m", "1", "-t", "2", "-r", "30"],
        &["schbench-classic", "-m", "1", "-t", "2", "-r", "30"],
        &["stress-ng", "--cpu", "2", "--timeout", "10"],
        &["netperf", "-t", "TCP_RR", "-l", "10"],
        &["tbench", "-t", "10", "2"],
        &["rt-app", rtapp],
    ];
    for (i, cmd) in cut.iter().enumerate() {
        let json = tmp(&format!("bounded-{i}.json"));
        let mut args = vec!["run", "-m", "skl-2s", "--set", "run.duration_s=0.02"];
        args.extend(["--json", json.to_str().unwrap(), "--"]);
        args.extend_from_slice(cmd);
        let out = schedlab(&args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {stderr}");
        assert!(
            stdout.contains("schedlab: the benchmark did not finish"),
            "{cmd:?}: {stdout}"
        );
        assert_eq!(workloads_of(&json)[0]["complete"], false, "{cmd:?}");
    }
    let whole: &[&[&str]] = &[
        &["schbench", "-m", "1", "-t", "1", "-r", "1"],
        &["netperf", "-t", "TCP_RR", "-l", "1"],
        &[
            "stress-ng",
            "--cpu",
            "1",
            "--cpu-ops",
            "20",
            "--timeout",
            "60",
        ],
    ];
    for (i, cmd) in whole.iter().enumerate() {
        let json = tmp(&format!("whole-{i}.json"));
        let mut args = vec![
            "run",
            "-m",
            "skl-2s",
            "--json",
            json.to_str().unwrap(),
            "--",
        ];
        args.extend_from_slice(cmd);
        let out = schedlab(&args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {stderr}");
        assert!(!stdout.contains("did not finish"), "{cmd:?}: {stdout}");
        assert!(!stderr.contains("did not finish"), "{cmd:?}: {stderr}");
        let w = &workloads_of(&json)[0];
        assert!(w.get("complete").is_none(), "{cmd:?}: {w}");
    }
}

/// `run -m skl-2s [--set SET] -- tbench -t 1 --warmup 1 2`: (stderr, workload JSON).
fn tbench_warmup_run(set: Option<&str>) -> (String, serde_json::Value) {
    let json = tmp("tbench-warmup.json");
    let mut args = vec!["run", "-m", "skl-2s", "--json", json.to_str().unwrap()];
    if let Some(set) = set {
        args.extend(["--set", set]);
    }
    args.extend(["--", "tbench", "-t", "1", "--warmup", "1", "2"]);
    let out = schedlab(&args);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (stderr, workloads_of(&json)[0].clone())
}

/// tbench measures `-t` seconds after its warm-up; a run cut inside the warm-up says that its
/// throughput covers the start (`workload.warmup_done` and a warning).
#[test]
fn tbench_measures_t_seconds_after_its_warmup_and_says_when_cut_inside_it() {
    let (stderr, w) = tbench_warmup_run(None);
    assert!(!stderr.contains("warm-up:"), "{stderr}");
    assert_eq!(w["elapsed_s"].as_f64(), Some(1.0), "{w}");
    assert_eq!(w["warmup_done"], true, "{w}");
    assert!(w.get("complete").is_none(), "{w}");

    let (stderr, w) = tbench_warmup_run(Some("run.duration_s=0.5"));
    assert!(
        stderr.contains(
            "warning: [run] duration_s = 0.5 s ends the run inside the benchmark's own 1 s warm-up"
        ),
        "{stderr}"
    );
    assert_eq!(w["elapsed_s"].as_f64(), Some(0.5), "{w}");
    assert_eq!(w["warmup_done"], false, "{w}");
    assert_eq!(w["complete"], false, "{w}");
}

/// A cut time-bounded benchmark is refused by `compare` and `bisect` like a cut hackbench;
/// `validate` scores it only when the case declares the cut (`[command] duration_s`) or with
/// `--allow-incomplete`.
#[test]
fn cut_time_bounded_runs_are_refused_by_compare_bisect_and_validate() {
    let tail = ["--", "schbench", "-m", "1", "-t", "2", "-r", "30"];
    let mut compare = vec!["compare", "-m", "skl-2s", "--set", "run.duration_s=0.02"];
    compare.extend(["--variant", "a:NO_TTWU_QUEUE", "--runs", "2"]);
    compare.extend(tail);
    let out = schedlab(&compare);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("did not finish in 4 of 4 runs") && stderr.contains("--allow-incomplete"),
        "{stderr}"
    );
    let mut bisect = vec!["bisect", "-m", "skl-2s", "--good", "v6.6", "--bad", "v6.18"];
    bisect.extend(["--set", "run.duration_s=0.02"]);
    bisect.extend(tail);
    assert_refused_as_cut(&schedlab(&bisect));
    // The tbench case declares a 0.5 s cap (a rate); a shorter one from --set is not its own.
    let case = ["validate", "--case", "i7-4790-tbench-8-eevdf", "--no-cache"];
    let json = tmp("validate-cut.json");
    let mut args = case.to_vec();
    args.extend([
        "--set",
        "run.duration_s=0.02",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = schedlab(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("not compared (--allow-incomplete)"),
        "{}",
        text(&out.stdout)
    );
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(board["cases"][0]["sim_change_pct"].is_null(), "{board}");
    assert_eq!(board["cases"][0]["incomplete_runs"], 10, "{board}");
    args.insert(1, "--allow-incomplete");
    let out = schedlab(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let board: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(board["cases"][0]["sim_change_pct"].is_number(), "{board}");
}

/// Issue 32 (audit, item 2): with `--allow-incomplete`, the benchmark's own time or
/// throughput of a side with cut runs is `not finished`, never a mean of the cap; `bisect`
/// marks its total on stdout.
#[test]
fn allowed_cut_runs_print_not_finished_for_the_benchmarks_own_time() {
    let mut args = CUT_COMPARE.to_vec();
    args.insert(1, "--allow-incomplete");
    let out = schedlab(&args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let table = stdout
        .split("Metric        : workload.time_s\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap_or_else(|| panic!("no time table: {stdout}"));
    assert!(
        table.contains("baseline*  not finished (2 of 2 runs cut short)")
            && table.contains("a*         not finished (2 of 2 runs cut short)"),
        "{table}"
    );
    assert!(
        table.contains("(baseline not finished)") && !table.contains("0.00100"),
        "the cap printed as the benchmark's time: {table}"
    );
    let out = cut_bisect("0.002", &["--allow-incomplete", "-q"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let total = stdout
        .lines()
        .find(|l| l.starts_with("total:"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        total.starts_with("total: good 0.002000*, bad 0.002000*:"),
        "{total}"
    );
    assert!(
        stdout.contains("* the benchmark did not finish in ")
            && stdout.contains("these are the cut runs' numbers, not the benchmark's"),
        "{stdout}"
    );
}
