//! `perf bench sched pipe` end to end: two switches per round trip on one CPU, time linear in
//! the loop count, byte-identical reruns, the native report matching the JSON, and bad options
//! refused with exit code 2.

use std::process::Command;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

/// A 2-CPU machine: two cores of one Skylake socket (CPUs 0 and 1 are different cores).
const TWO_CPUS: &[&str] = &["-m", "skl-2s", "--offline", "2-79"];

/// `schedlab run` on [`TWO_CPUS`] with `extra` options, then `-- cmd`: the results JSON
/// without its wall-clock keys, and the raw stdout.
fn run(extra: &[&str], cmd: &str) -> (serde_json::Value, String) {
    let mut args = vec!["run"];
    args.extend_from_slice(TWO_CPUS);
    args.extend_from_slice(extra);
    args.extend(["--json", "-"]);
    if !cmd.is_empty() {
        args.push("--");
        args.extend(cmd.split_whitespace());
    }
    let out = schedlab(&args);
    assert!(
        out.status.success(),
        "schedlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for r in v["runs"].as_array_mut().unwrap() {
        let o = r.as_object_mut().unwrap();
        o.remove("wall_time_s");
        o.remove("sim_s_per_wall_s");
    }
    if let Some(s) = v["summary"].as_object_mut() {
        s.retain(|k, _| !k.contains("wall"));
    }
    (v, text)
}

#[test]
fn pinned_to_one_cpu_each_round_trip_is_two_switches() {
    for (cmd, loops) in [
        ("taskset -c 0 perf bench sched pipe -l 3000", 3000u64),
        ("taskset -c 0 perf bench sched pipe -l 1000 -T", 1000),
    ] {
        let (v, _) = run(&[], cmd);
        let r = &v["runs"][0];
        let w = &r["workload"];
        assert_eq!(w["kind"], "sched-pipe");
        assert_eq!(w["complete"], true, "{w}");
        assert_eq!(w["loops"], loops);
        assert_eq!(w["ops"], loops);
        let switches = r["perf_stat"]["context_switches"].as_u64().unwrap();
        // Each worker blocks once per loop; a few more around fork, exit and the wait.
        assert!(
            (2 * loops..=2 * loops + 10).contains(&switches),
            "{cmd}: {switches} switches for {loops} loops"
        );
        assert_eq!(r["perf_stat"]["cpu_migrations"], 0, "{cmd}");
    }
}

#[test]
fn time_scales_with_loops() {
    let time = |loops: u32| {
        let (v, _) = run(
            &[],
            &format!("taskset -c 0 perf bench sched pipe -l {loops}"),
        );
        v["runs"][0]["workload"]["time_s"].as_f64().unwrap()
    };
    let (t1, t4) = (time(1000), time(4000));
    let ratio = t4 / t1;
    // Linear apart from the fixed fork/exit/wait cost (~0.1 ms of several ms).
    assert!(
        (3.7..=4.05).contains(&ratio),
        "{t1} s, {t4} s: ratio {ratio}"
    );
}

#[test]
fn same_seed_gives_identical_results_and_the_report_matches_the_json() {
    for cmd in [
        "perf bench sched pipe -l 2000",
        "perf bench sched pipe -l 2000 -T",
    ] {
        let (a, _) = run(&["--runs", "2", "--seed", "7"], cmd);
        let (b, _) = run(&["--runs", "2", "--seed", "7"], cmd);
        assert_eq!(a, b, "{cmd}");
        assert_eq!(a["runs"][0]["workload"]["complete"], true);
        let w = &a["runs"][0]["workload"];
        let usecs = w["usecs_per_op"].as_f64().unwrap();
        assert!((usecs - w["time_s"].as_f64().unwrap() * 1e6 / 2000.0).abs() < 1e-6);
        // The text report (without --json) prints the same numbers in perf's format.
        let mut args = vec!["run"];
        args.extend_from_slice(TWO_CPUS);
        args.extend(["--seed", "7", "--"]);
        args.extend(cmd.split_whitespace());
        let out = schedlab(&args);
        let report = String::from_utf8(out.stdout).unwrap();
        let what = if cmd.ends_with("-T") {
            "threads"
        } else {
            "processes"
        };
        assert!(
            report.contains(&format!(
                "# Running 'sched/pipe' benchmark:\n# Executed 2000 pipe operations between two {what}\n\n     Total time: "
            )),
            "{report}"
        );
        assert!(
            report.contains(&format!(" {usecs:>14.6} usecs/op\n")),
            "{report}"
        );
        assert!(
            report.contains(&format!(" {:>14} ops/sec\n", w["ops_per_s"])),
            "{report}"
        );
        assert!(report.contains("context-switches"), "{report}");
    }
}

#[test]
fn bad_options_exit_2_naming_the_option_and_what_is_accepted() {
    for (cmd, wanted) in [
        ("perf bench sched pipe -x", "unknown switch `x'"),
        ("perf bench sched pipe -l 0", "-l/--loop 0 is out of range"),
        (
            "perf bench sched pipe -l many",
            "switch `l' expects a numerical value",
        ),
        (
            "perf bench sched pipe -G a,b",
            "-G (put the workers in cgroups) is not modelled",
        ),
        ("perf bench sched pipe --nonblocking", "--nonblocking"),
        (
            "perf bench sched pipes",
            "and `perf bench sched pipe` are modelled",
        ),
    ] {
        let mut args = vec!["run"];
        args.extend_from_slice(TWO_CPUS);
        args.push("--");
        args.extend(cmd.split_whitespace());
        let out = schedlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains(wanted), "{cmd}: {err}");
        assert!(
            err.contains("accepted") || err.contains("modelled"),
            "{cmd}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
    }
}

#[test]
fn listed_as_a_workload_kind_with_keys() {
    let out = schedlab(&["list", "workloads"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("sched-pipe"), "{text}");
    let (v, _) = run(
        &[
            "--set",
            "workload.kind=sched-pipe",
            "--set",
            "workload.loops=500",
            "--set",
            "workload.mode=thread",
        ],
        "",
    );
    assert_eq!(v["runs"][0]["workload"]["ops"], 500);
    assert_eq!(v["runs"][0]["workload"]["complete"], true);
}
