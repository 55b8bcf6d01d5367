//! Several workloads in one run (`[[workload]]`, or commands joined by a lone `+`): each
//! benchmark reports from its own tasks, operations and metrics, each keeps its own
//! placement, the run is deterministic, a single workload is unchanged, and bad forms are
//! refused with exit code 2.

use std::process::Command;

use schedlab::config::scenario::Scenario;
use schedlab::experiment;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

/// Two hackbench jobs bound to opposite nodes of the 2-node Nehalem (node 0 = even CPUs).
const OPPOSITE_NODES: &str = r#"
[machine]
preset = "nehalem-2s"
[[workload]]
command = "numactl --cpunodebind=0 --membind=1 hackbench -g 2 -l 100"
[[workload]]
command = "numactl --cpunodebind=1 --membind=0 hackbench -g 2 -l 100"
"#;

fn run(text: &str, seed: u64) -> experiment::RunOutput {
    let scn = Scenario::parse(text, "test").unwrap();
    experiment::run_once(&scn, seed).unwrap()
}

#[test]
fn two_jobs_on_opposite_nodes_each_report_their_own_run() {
    let out = run(OPPOSITE_NODES, 1);
    let r = &out.result;
    assert_eq!(r.more_workloads.len(), 1);
    let (first, second) = (&r.workload.0, &r.more_workloads[0].0);
    for w in [first, second] {
        assert_eq!(w["kind"], "hackbench");
        assert_eq!(w["complete"], true, "{w:?}");
        // Each job's own messages: 2 groups x 20 senders x 20 receivers x 100 loops.
        assert_eq!(w["messages"], 80_000, "{w:?}");
    }
    assert_eq!(second["placement"]["cpus"], "1,3,5,7,9,11,13,15");
    // Each job's time is its own: both ran at once, so neither is the sum of both.
    let (t1, t2) = (
        first["time_s"].as_f64().unwrap(),
        second["time_s"].as_f64().unwrap(),
    );
    let run_s = r.sim_time_ns as f64 / 1e9;
    assert!(
        t1 > 0.0 && t2 > 0.0 && t1 <= run_s && t2 <= run_s,
        "{t1} {t2} {run_s}"
    );
    // 2 x (the main task + 2 groups x 40 tasks), each job's tasks on its own node's CPUs.
    assert_eq!(r.tasks.len(), 2 * 81);
    let (a, b) = r.tasks.split_at(81);
    assert!(a.iter().all(|t| t.cpu % 2 == 0), "job 1 left node 0");
    assert!(b.iter().all(|t| t.cpu % 2 == 1), "job 2 left node 1");
    assert!(
        out.native_text
            .contains("== workload 2: numactl --cpunodebind=1")
    );
    assert_eq!(out.native_text.matches("Time: ").count(), 2);
    // Each job's metrics under its own name.
    assert!(r.latency_us.contains_key("time") && r.latency_us.contains_key("w2.time"));
}

#[test]
fn a_job_beside_another_is_slower_than_alone_on_a_shared_node() {
    // Two jobs on the same node share its CPUs: each takes longer than one alone.
    let alone = run(
        r#"
[machine]
preset = "nehalem-2s"
[workload]
command = "numactl --cpunodebind=0 hackbench -g 2 -l 100"
"#,
        1,
    );
    let together = run(
        r#"
[machine]
preset = "nehalem-2s"
[[workload]]
command = "numactl --cpunodebind=0 hackbench -g 2 -l 100"
[[workload]]
command = "numactl --cpunodebind=0 hackbench -g 2 -l 100"
"#,
        1,
    );
    let t = |w: &schedlab::stats::report::WorkloadMetrics| w.0["time_s"].as_f64().unwrap();
    let t_alone = t(&alone.result.workload);
    for w in [
        &together.result.workload,
        &together.result.more_workloads[0],
    ] {
        assert!(t(w) > 1.3 * t_alone, "{} vs alone {t_alone}", t(w));
    }
}

#[test]
fn different_kinds_count_their_own_operations() {
    // stress-ng's bogo ops and hackbench's messages come from each one's own counters.
    let text = r#"
[machine]
preset = "nehalem-2s"
[[workload]]
command = "hackbench -g 1 -l 100"
[[workload]]
command = "stress-ng --cpu 4 --cpu-ops 2000"
"#;
    let r = run(text, 3).result;
    assert_eq!(r.workload.0["messages"], 40_000);
    let s = &r.more_workloads[0].0;
    assert_eq!(s["kind"], "stress-ng", "{s:?}");
    // `--cpu-ops 2000` over 4 instances: each stops at its share, rounded up.
    let ops = s["bogo_ops"].as_u64().unwrap();
    assert!((2000..2010).contains(&ops), "{s:?}");
}

#[test]
fn a_later_start_delays_the_whole_workload() {
    // The second job starts 50 ms in: none of its tasks runs before, and the run lasts at
    // least until its own end, 50 ms plus its time.
    let text = r#"
[machine]
preset = "nehalem-2s"
[[workload]]
command = "hackbench -g 1 -l 50"
[[workload]]
command = "hackbench -g 1 -l 50"
start_ms = 50
"#;
    let out = run(text, 1);
    let r = &out.result;
    let t2 = r.more_workloads[0].0["time_s"].as_f64().unwrap();
    assert!(
        r.sim_time_ns as f64 / 1e9 >= 0.050 + t2,
        "{} {t2}",
        r.sim_time_ns
    );
    assert_eq!(r.more_workloads[0].0["complete"], true);
    let scn = Scenario::parse(text, "t").unwrap();
    assert_eq!(scn.more_workloads[0].start_ms, Some(50));
    // Out of range: the key's own range.
    let bad = text.replace("start_ms = 50", "start_ms = -1");
    let e = Scenario::parse(&bad, "t").unwrap_err().to_string();
    assert!(
        e.contains("workload[2].start_ms: got integer -1; accepted: an integer from 0 to 86400000"),
        "{e}"
    );
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let json = |seed| serde_json::to_string(&run(OPPOSITE_NODES, seed).result.tasks).unwrap();
    assert_eq!(json(5), json(5));
    assert_ne!(json(5), json(6));
}

#[test]
fn one_entry_of_workload_array_is_the_single_workload() {
    let one = |form: &str| {
        let text =
            format!("[machine]\npreset = \"skl-2s\"\n{form}\ncommand = \"hackbench -g 1 -l 50\"\n");
        let r = run(&text, 2).result;
        (
            serde_json::to_string(&r.tasks).unwrap(),
            r.workload,
            r.more_workloads.len(),
        )
    };
    assert_eq!(one("[workload]"), one("[[workload]]"));
}

#[test]
fn plus_joins_commands_on_the_command_line() {
    let out = schedlab(&[
        "run",
        "-m",
        "nehalem-2s",
        "--json",
        "-",
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "50",
        "+",
        "hackbench",
        "-g",
        "1",
        "-l",
        "60",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["runs"][0];
    assert_eq!(r["workload"]["messages"], 20_000);
    assert_eq!(r["more_workloads"][0]["messages"], 24_000);
    // The later workloads' metrics are in the summary as `workload2.*`, for compare's
    // `--metric`, without their placement.
    let summary = v["summary"].as_object().unwrap();
    assert!(summary.contains_key("workload2.time_s"), "{summary:?}");
    assert!(!summary.keys().any(|k| k.contains("placement")));
    assert_eq!(
        v["scenario"]["more_workloads"][0]["command"],
        "hackbench -g 1 -l 60"
    );
}

#[test]
fn bad_forms_are_refused_with_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["hackbench", "+"],
            "an empty benchmark command beside a '+'",
        ),
        (
            &["+", "hackbench"],
            "an empty benchmark command beside a '+'",
        ),
        (
            &[
                "schbench",
                "-m",
                "1",
                "-t",
                "2",
                "-r",
                "30",
                "-w",
                "5",
                "+",
                "hackbench",
            ],
            "workload[1]: a warm-up of its own",
        ),
    ];
    for (cmd, want) in cases {
        let mut args = vec!["run", "-m", "skl-2s", "--"];
        args.extend_from_slice(cmd);
        let out = schedlab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(err.contains(want), "{cmd:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let toml_cases = [
        (
            "workload = 3",
            "workload: got integer 3; accepted: a table [workload], or 1 to 16 tables",
        ),
        (
            "[[workload]]\ncommand = \"hackbench\"\n[[workload]]\nkind = \"spin\"\ncommand = \"x\"",
            "workload[2].kind: cannot be combined with workload[2].command",
        ),
        (
            "[[workload]]\ncommand = \"hackbench\"\n[[workload]]\ncommand = \"hackbench --nope\"",
            "hackbench: unrecognized option '--nope'",
        ),
    ];
    for (body, want) in toml_cases {
        let text = format!("{body}\n[machine]\npreset = \"skl-2s\"\n");
        let err = match Scenario::parse(&text, "t.toml") {
            Err(e) => e.to_string(),
            Ok(scn) => experiment::run_once(&scn, 1)
                .expect_err("refused")
                .to_string(),
        };
        assert!(err.contains(want), "{body}: {err}");
    }
}
