//! `schedlab host-measure`, `schedlab calibrate` and `-m host`'s calibration: real runs on this
//! machine into a table, a calibration fitted to a table, and the file applied by `-m host`.

use std::process::Command;

fn schedlab(args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("schedlab runs")
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh directory for one test (removed first if a previous run left it).
fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-host-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn have_perf() -> bool {
    let ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("SCHEDLAB_REQUIRE_HOST_BENCHMARKS").is_some() {
        panic!("perf is required (SCHEDLAB_REQUIRE_HOST_BENCHMARKS) but not runnable");
    }
    if !ok {
        println!("SKIPPED: perf is not installed (scripts/install-host-benchmarks)");
    }
    ok
}

#[test]
fn host_measure_writes_a_table_of_real_perf_stat_runs() {
    if !have_perf() {
        return;
    }
    let dir = tempdir("measure");
    let out = dir.join("t.json");
    let o = schedlab(
        &[
            "host-measure",
            "--row",
            "hackbench-pipe-g1",
            "--runs",
            "2",
            "--no-isolate",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let runs = t["rows"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        // 40 processes exchanging 40 000 messages: real switches, real CPU time.
        assert!(r["context_switches"].as_f64().unwrap() > 100.0, "{r}");
        assert!(r["task_clock_ms"].as_f64().unwrap() > 1.0, "{r}");
        assert!(r["elapsed_s"].as_f64().unwrap() > 0.0, "{r}");
        // Under GNU time (scripts/install-host-benchmarks installs it) the run records the
        // process tree's voluntary and involuntary switches; their sum is about perf's count
        // (perf's own few switches aside).
        if std::path::Path::new("/usr/bin/time").is_file() {
            let vol = r["voluntary_switches"].as_f64().unwrap();
            let invol = r["involuntary_switches"].as_f64().unwrap();
            let cs = r["context_switches"].as_f64().unwrap();
            assert!(vol > 100.0, "{r}");
            assert!(
                (vol + invol - cs).abs() <= 0.05 * cs + 50.0,
                "voluntary + involuntary should be perf's context switches: {r}"
            );
        }
    }
    assert_eq!(
        t["host"]["nr_cpus"].as_u64().unwrap() as usize,
        this_host().nr_cpus
    );
}

#[test]
fn bad_rows_and_run_counts_are_refused_with_what_is_accepted() {
    let o = schedlab(&["host-measure", "--row", "no-such-row"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("accepted: pipe-pinned, pipe,"),
        "{}",
        text(&o)
    );
    let o = schedlab(&["calibrate", "--runs", "0"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("accepted: 1 to 100"), "{}", text(&o));
}

/// A calibration file in the format `calibrate` writes, for this machine.
fn calibration_file(dir: &std::path::Path, cpu_model: &str, nr_cpus: usize) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("cal.toml");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    std::fs::write(
        &path,
        format!(
            "format = 1\ncalibrated_at = \"2026-12-04T23:00:00Z\"\nschedlab_version = \"0\"\n\
             fits = []\n[host]\ncpu_model = \"{cpu_model}\"\nnr_cpus = {nr_cpus}\n\
             kernel_release = \"{}\"\n[cost]\nspeed_pct = 200\n",
            release.trim()
        ),
    )
    .unwrap();
    path
}

/// This machine as the calibration file records it.
fn this_host() -> schedlab::experiment::host::table::HostId {
    schedlab::experiment::host::table::HostId::current()
}

fn stress_time(envs: &[(&str, &str)]) -> (f64, String) {
    let o = schedlab(
        &[
            "run",
            "-m",
            "host",
            "-q",
            "--",
            "stress-ng",
            "--cpu",
            "1",
            "--cpu-ops",
            "20",
        ],
        envs,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    let clock = t
        .lines()
        .find(|l| l.contains("task-clock"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.replace(',', "").parse().ok())
        .expect("a task-clock line");
    (clock, t)
}

#[test]
fn host_applies_this_machines_calibration_and_says_so() {
    let dir = tempdir("apply");
    let cal = calibration_file(&dir, &this_host().cpu_model, this_host().nr_cpus);
    let (base, base_text) = stress_time(&[("SCHEDLAB_HOST_CALIBRATION", "none")]);
    assert!(!base_text.contains("calibrated"), "{base_text}");
    let (fast, fast_text) = stress_time(&[("SCHEDLAB_HOST_CALIBRATION", cal.to_str().unwrap())]);
    // speed_pct = 200: the same bogo ops in half the CPU time.
    let ratio = fast / base;
    assert!((0.45..0.55).contains(&ratio), "{fast} / {base}");
    assert!(
        fast_text.contains("cost inputs calibrated on this machine"),
        "{fast_text}"
    );
    // A calibration of another kind of machine is not applied, and the notes say so.
    let other = calibration_file(&dir.join("other"), "Another CPU", this_host().nr_cpus + 1);
    let (same, other_text) = stress_time(&[("SCHEDLAB_HOST_CALIBRATION", other.to_str().unwrap())]);
    assert_eq!(same, base);
    assert!(other_text.contains("not applied"), "{other_text}");
}

#[test]
fn a_broken_calibration_file_is_an_input_error() {
    let dir = tempdir("broken");
    let path = dir.join("bad.toml");
    std::fs::write(&path, "format = 1\n[cost]\nspeed_pct = 10\n").unwrap();
    let o = schedlab(
        &[
            "run",
            "-m",
            "host",
            "-q",
            "--",
            "stress-ng",
            "--cpu",
            "1",
            "--cpu-ops",
            "5",
        ],
        &[("SCHEDLAB_HOST_CALIBRATION", path.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("bad.toml"), "{}", text(&o));
    assert!(text(&o).contains("not a host calibration"), "{}", text(&o));
}

/// The calibration fits recover the inputs a table was simulated with: a "real" table made of
/// the model's own means (short rows, this machine's `host`) at known inputs, calibrated from
/// the defaults, gives those inputs back.
#[test]
fn calibrate_recovers_the_inputs_a_table_was_made_with() {
    use schedlab::experiment::RunContext;
    use schedlab::experiment::host::{calibrate, compare, rows, table};
    let short = [
        rows::Row {
            command: "stress-ng --cpu 1 --cpu-ops 20 --metrics-brief",
            ..*rows::row("stress-ng-cpu1").unwrap()
        },
        rows::Row {
            command: "taskset -c 0 perf bench sched pipe -l 3000",
            ..*rows::row("pipe-pinned").unwrap()
        },
        rows::Row {
            command: "perf bench sched pipe -l 3000",
            ..*rows::row("pipe").unwrap()
        },
        rows::Row {
            command: "taskset -c 0 perf bench sched messaging -g 1 -l 40",
            ..*rows::row("hackbench-socket-pinned").unwrap()
        },
    ];
    let ctx = RunContext::default();
    let truth: toml::Table = toml::from_str(
        "speed_pct = 150\nipi_latency_ns = 12000\ncontext_switch_ns = 2000\n\
         enqueue_task_ns = 400\ndequeue_task_ns = 400\nput_prev_entity_ns = 100\n\
         set_next_entity_ns = 100\naf_unix_cost_pct = 140\n",
    )
    .unwrap();
    let rows_measured = short
        .iter()
        .map(|row| {
            let scn = compare::scenario_for(row, &truth).unwrap();
            let runs = schedlab::experiment::run_variants_in(&ctx, &[&scn], compare::SEEDS, row.id)
                .unwrap()
                .remove(0);
            table::RowResult {
                id: row.id.into(),
                command: row.command.into(),
                primary: Some(row.primary),
                runs: runs
                    .iter()
                    .map(|r| table::RealRun {
                        elapsed_s: r.perf.elapsed_s,
                        task_clock_ms: r.perf.task_clock_ms,
                        context_switches: r.perf.context_switches as f64,
                        cpu_migrations: r.perf.cpu_migrations as f64,
                        ..table::RealRun::default()
                    })
                    .collect(),
                skipped: None,
            }
        })
        .collect();
    let t = table::HostTable {
        format: table::TABLE_FORMAT,
        host: table::HostId::current(),
        rows: rows_measured,
        ..table::HostTable::default()
    };
    let cal = calibrate::calibrate_rows(&ctx, &t, &short, &mut |_| {}).unwrap();
    let fit = |input: &str| cal.fits.iter().find(|f| f.input == input).unwrap().value;
    assert!((fit("speed_pct") - 150.0).abs() <= 2.0, "{:?}", cal.fits);
    assert!(
        (fit("switch_cycle_scale") - 2.0).abs() <= 0.1,
        "{:?}",
        cal.fits
    );
    assert!(
        (fit("ipi_latency_ns") - 12000.0).abs() <= 1500.0,
        "{:?}",
        cal.fits
    );
    assert!(
        (fit("af_unix_cost_pct") - 140.0).abs() <= 5.0,
        "{:?}",
        cal.fits
    );
    assert_eq!(
        cal.cost["speed_pct"].as_integer(),
        Some(fit("speed_pct") as i64)
    );
}

/// tracefs writable here (root, mounted)? Says so when not.
fn have_tracefs() -> bool {
    let set_event = std::path::Path::new("/sys/kernel/tracing/set_event");
    let ok = std::fs::OpenOptions::new()
        .append(true)
        .open(set_event)
        .is_ok();
    if !ok {
        println!("SKIPPED: /sys/kernel/tracing/set_event is not writable (tracefs, root)");
    }
    ok
}

#[test]
fn host_trace_reads_one_command_on_the_real_kernel_and_on_the_model() {
    if !have_perf() || !have_tracefs() {
        return;
    }
    let before: Vec<String> = ["tracing_on", "set_event", "buffer_size_kb"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("/sys/kernel/tracing/{f}")).unwrap())
        .collect();
    let dir = tempdir("trace");
    let json = dir.join("d.json");
    let o = schedlab(
        &[
            "host-trace",
            "--out",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--",
            "perf",
            "bench",
            "sched",
            "pipe",
            "-l",
            "5000",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("wait after wakeup p90 (us)"),
        "{}",
        text(&o)
    );
    let d: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(d["real_runs"].as_array().unwrap().len(), 1, "{d}");
    assert_eq!(d["real_runs"][0]["lost_events"], 0, "{d}");
    // The pipe ping-pong, 5 000 round trips: on two CPUs each side blocks once a round trip
    // and is woken once (10 000 switches and wakeups); while the two share a CPU, a wakeup
    // preempts the waker, which then finds its reply without blocking (2 switches and 1
    // wakeup a round trip). So 10 000 switches either way, and 5 000 to 10 000 wakeups.
    for side in ["real", "sim"] {
        let s = &d[side];
        assert!(s["tasks"].as_u64().unwrap() >= 2, "{side}: {s}");
        let switches =
            s["switches_voluntary"].as_u64().unwrap() + s["switches_involuntary"].as_u64().unwrap();
        assert!((9_000..=12_000).contains(&switches), "{side}: {s}");
        let wakeups: u64 = [
            "local_to_waker",
            "local_elsewhere",
            "remote_to_previous",
            "remote_to_waker",
            "remote_elsewhere",
        ]
        .iter()
        .map(|k| s["wakeups"][k].as_u64().unwrap())
        .sum();
        assert!((4_500..=12_000).contains(&wakeups), "{side}: {s}");
        assert!(
            s["wait_after_wakeup_us"]["n"].as_u64().unwrap() >= 4_500,
            "{side}: {s}"
        );
    }
    assert!(dir.join("real-1.txt").is_file() && dir.join("sim-1.txt").is_file());
    // A model variant against the same real run, two seeds pooled: the real side is read
    // back unchanged.
    let json2 = dir.join("d2.json");
    let mut again = vec!["host-trace", "--out", dir.to_str().unwrap(), "--reuse-real"];
    again.extend([
        "--feature",
        "RUN_TO_PARITY=off",
        "--json",
        json2.to_str().unwrap(),
        "--runs",
        "2",
    ]);
    again.extend(["--", "perf", "bench", "sched", "pipe", "-l", "5000"]);
    let o = schedlab(&again, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("features NO_RUN_TO_PARITY"),
        "{}",
        text(&o)
    );
    let d2: serde_json::Value = serde_json::from_slice(&std::fs::read(&json2).unwrap()).unwrap();
    assert_eq!(d2["real"], d["real"]);
    assert_eq!(d2["sim_seeds"].as_array().unwrap().len(), 2, "{d2}");
    assert!(dir.join("sim-2.txt").is_file());
    // Another command is refused: the saved real run is of the pipe benchmark.
    let o = schedlab(
        &[
            "host-trace",
            "--out",
            dir.to_str().unwrap(),
            "--reuse-real",
            "--",
            "true",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("the real traces there are of"),
        "{}",
        text(&o)
    );
    let after: Vec<String> = ["tracing_on", "set_event", "buffer_size_kb"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("/sys/kernel/tracing/{f}")).unwrap())
        .collect();
    assert_eq!(
        before[..2],
        after[..2],
        "host-trace restores the tracing settings it changed"
    );
    // A buffer never used reads `7 (expanded: 1408)`; once used it cannot be un-expanded, so
    // host-trace puts it back at the size it would have had, which the kernel rounds to
    // whole pages (1408 reads back as 1410).
    let (kb_before, kb_after) = (traced_buffer_kb(&before[2]), traced_buffer_kb(&after[2]));
    assert!(
        kb_after.abs_diff(kb_before) <= 4,
        "host-trace restores buffer_size_kb: {} -> {}",
        before[2].trim(),
        after[2].trim()
    );
}

/// The per-CPU trace buffer size `buffer_size_kb` stands for: `1410`, or the size an unused
/// buffer will take, `7 (expanded: 1408)` -> 1408.
fn traced_buffer_kb(read: &str) -> u64 {
    let size = match read.split_once("(expanded:") {
        Some((_, rest)) => rest.trim().trim_end_matches(')').trim(),
        None => read.split_whitespace().next().unwrap_or(""),
    };
    size.parse()
        .unwrap_or_else(|_| panic!("buffer_size_kb reads {read:?}"))
}

#[test]
fn host_trace_needs_a_command_or_a_row() {
    let o = schedlab(&["host-trace"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("give a command after `--`"),
        "{}",
        text(&o)
    );
    let o = schedlab(&["host-trace", "--row", "nope"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no row 'nope'"), "{}", text(&o));
    let o = schedlab(&["host-trace", "--buffer-kb", "0", "--", "true"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--buffer-kb"), "{}", text(&o));
    let o = schedlab(&["host-trace", "--runs", "21", "--", "true"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("accepted: 1 to 20"), "{}", text(&o));
}
