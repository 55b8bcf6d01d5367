//! Placement controls and memory locality, end to end: `numactl`/`taskset` prefixes and
//! `[workload]` placement keys bound every task where they say, `Op::SetAffinity` moves a
//! running task the way `__set_cpus_allowed_ptr()` does, and remote memory slows work by the
//! SLIT distance as the memory model's formula says.

use std::collections::BTreeSet;
use std::process::Command;

use schedlab::config::scenario::Scenario;
use schedlab::cpumask::CpuMask;
use schedlab::engine::{Engine, WorkloadPlan};
use schedlab::experiment;
use schedlab::sched::types::MigrationReason;
use schedlab::task::{MemPolicy, Op, Program, TaskSpec};

const MS: u64 = 1_000_000;

/// Resolve a scenario's machine and workload and build its engine (invariants on).
fn scenario_engine(toml: &str) -> Engine {
    let scn = Scenario::parse(toml, "test.toml").unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let cost = experiment::resolve_cost(&scn, &machine).unwrap();
    let w = experiment::workloads::resolve(&scn, &machine, 1).unwrap();
    let mut cfg = experiment::engine_config(&scn, 1, w.default_duration_ns);
    cfg.check_invariants = true;
    let policy = experiment::make_policy(&scn, &machine, &cost, 1);
    Engine::new(machine, cost, cfg, policy, w.plan).unwrap()
}

/// An engine on `preset` (v6.18 fair class) running `plan` for `duration_ns`.
fn plan_engine(preset: &str, plan: WorkloadPlan, duration_ns: u64) -> Engine {
    let text = format!(
        "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"v6.18\"\n[workload]\nkind = \"spin\"\n"
    );
    let scn = Scenario::parse(&text, "test").unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let cost = experiment::resolve_cost(&scn, &machine).unwrap();
    let mut cfg = experiment::engine_config(&scn, 1, duration_ns);
    cfg.check_invariants = true;
    let policy = experiment::make_policy(&scn, &machine, &cost, 1);
    Engine::new(machine, cost, cfg, policy, plan).unwrap()
}

/// Every CPU each task was ever on: where it started, and every migration's destination.
fn cpus_visited(e: &Engine) -> Vec<BTreeSet<usize>> {
    let mut visited: Vec<BTreeSet<usize>> =
        e.tasks().iter().map(|t| BTreeSet::from([t.cpu])).collect();
    let mut seen = vec![false; e.tasks().len()];
    for m in e.migration_log() {
        let i = m.task.0 as usize;
        if !seen[i] && m.reason != MigrationReason::Fork {
            // Its first move is not the fork placement: it started on `from`.
            visited[i].insert(m.from);
        }
        seen[i] = true;
        visited[i].insert(m.to);
    }
    visited
}

fn reason_index(r: MigrationReason) -> usize {
    MigrationReason::ALL.iter().position(|&x| x == r).unwrap()
}

#[test]
fn numactl_cpunodebind_membind_keeps_hackbench_on_node_1() {
    let mut e = scenario_engine(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\n\
         command = \"numactl --cpunodebind=1 --membind=1 hackbench -g 2 -l 50\"\n",
    );
    e.run();
    assert!(e.all_exited());
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    // nehalem-2s: node 1 = the odd CPUs.
    for (i, cpus) in cpus_visited(&e).iter().enumerate() {
        assert!(cpus.iter().all(|c| c % 2 == 1), "task {i} ran on {cpus:?}");
    }
    for c in e.cpus().iter().filter(|c| c.cpu % 2 == 0) {
        assert_eq!(c.stats.counters.busy_ns, 0, "CPU {} was busy", c.cpu);
    }
    for t in e.tasks() {
        assert_eq!(t.numa_pages, vec![0, 1], "{}: pages all on node 1", t.comm);
    }
}

#[test]
fn group_cpus_bind_each_hackbench_group() {
    let mut e = scenario_engine(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\nkind = \"hackbench\"\n\
         groups = 2\nfds = 4\nloops = 50\ngroup_cpus = [\"0-3\", \"4-7\"]\n",
    );
    e.run();
    assert!(e.all_exited());
    let visited = cpus_visited(&e);
    let (mut g0, mut g1) = (0, 0);
    for (t, cpus) in e.tasks().iter().zip(&visited) {
        let allowed = if t.comm.contains("-0-") {
            g0 += 1;
            0..=3
        } else if t.comm.contains("-1-") {
            g1 += 1;
            4..=7
        } else {
            continue; // the main task is in no group
        };
        assert!(
            cpus.iter().all(|c| allowed.contains(c)),
            "{} ran on {cpus:?}",
            t.comm
        );
    }
    // 4 senders + 4 receivers per group.
    assert_eq!((g0, g1), (8, 8));
}

/// A task pinned to `cpu` that computes 1 ms, sets its affinity to mask 0, computes 1 ms.
fn affinity_task(cpu: &str, comm: &str) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program: 0,
        cpus_allowed: Some(CpuMask::parse(cpu).unwrap()),
        parent_cpu: 0,
        ..Default::default()
    }
}

#[test]
fn set_affinity_moves_a_running_task_with_the_stopper() {
    let plan = WorkloadPlan {
        programs: vec![Program {
            name: "setaffinity".into(),
            ops: vec![
                Op::Run { work_ns: MS },
                Op::SetAffinity { mask: 0 },
                Op::Run { work_ns: MS },
                Op::Exit,
            ],
        }],
        tasks: vec![affinity_task("5", "mover"), affinity_task("2", "stayer")],
        cpumasks: vec![CpuMask::parse("0-3").unwrap()],
        ..Default::default()
    };
    let mut e = plan_engine("nehalem-2s", plan, 100 * MS);
    e.run();
    assert!(e.all_exited());
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    let affinity: Vec<_> = e
        .migration_log()
        .iter()
        .filter(|m| m.reason == MigrationReason::Affinity)
        .collect();
    // cpumask_any_and_distribute() on CPU 5 (prev = 0): the first CPU of 0-3 after 0 is 1.
    assert_eq!(affinity.len(), 1, "{affinity:?}");
    assert_eq!(
        (affinity[0].task.0, affinity[0].from, affinity[0].to),
        (0, 5, 1)
    );
    let mover = &e.tasks()[0];
    assert_eq!(mover.cpu, 1);
    assert_eq!(mover.cpus_allowed, CpuMask::parse("0-3").unwrap());
    assert_eq!(
        mover.stats.migrations_by_reason[reason_index(MigrationReason::Affinity)],
        1
    );
    // CPU 2 stays allowed: the mask changes, the task does not move.
    let stayer = &e.tasks()[1];
    assert_eq!(stayer.cpu, 2);
    assert_eq!(
        stayer.stats.migrations_by_reason[reason_index(MigrationReason::Affinity)],
        0
    );
    assert!(
        e.migration_log()
            .iter()
            .all(|m| m.task.0 != 1 || m.reason == MigrationReason::Fork)
    );
    assert_eq!(stayer.cpus_allowed, CpuMask::parse("0-3").unwrap());
    assert_eq!(
        e.counters().migrations_by_reason[reason_index(MigrationReason::Affinity)],
        1
    );
}

/// Work completed in `ms` by a 1 ms-chunk spinner on CPU 0 of nehalem-2s (node 0) with
/// 50 % memory stalls and memory policy `mem`.
fn chunks_done(mem: MemPolicy, ms: u64) -> u64 {
    let plan = WorkloadPlan {
        programs: vec![Program {
            name: "memspin".into(),
            ops: vec![Op::Run { work_ns: MS }, Op::CountOp, Op::Jump { to: 0 }],
        }],
        tasks: vec![TaskSpec {
            comm: "memspin".into(),
            program: 0,
            cpus_allowed: Some(CpuMask::parse("0").unwrap()),
            mempolicy: mem,
            mem_intensity_permille: 500,
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut e = plan_engine("nehalem-2s", plan, ms * MS);
    e.run();
    e.ops_done()
}

#[test]
fn remote_memory_slows_work_by_the_slit_distance() {
    let local = chunks_done(MemPolicy::Bind { nodes: 0b01 }, 2000) as f64;
    let remote = chunks_done(MemPolicy::Bind { nodes: 0b10 }, 2000) as f64;
    let interleave = chunks_done(MemPolicy::Interleave { nodes: 0b11 }, 2000) as f64;
    assert!((local - 2000.0).abs() / 2000.0 < 0.01, "local {local}");
    // SLIT 21 between the nodes: time × (0.5 + 0.5 · 2.1) = × 1.55.
    let want_remote = 1.0 / (0.5 + 0.5 * 2.1);
    assert!(
        (remote / local - want_remote).abs() / want_remote < 0.01,
        "remote/local {} want {want_remote}",
        remote / local
    );
    // Interleaved: half the pages at each distance, the mean time scale (1 + 1.55) / 2.
    let want_il = 1.0 / ((1.0 + 1.55) / 2.0);
    assert!(
        (interleave / local - want_il).abs() / want_il < 0.01,
        "interleave/local {} want {want_il}",
        interleave / local
    );
}

#[test]
fn rtapp_phase_cpus_change_affinity_per_phase() {
    let dir = std::env::temp_dir().join(format!("schedlab-placement-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("phases.json");
    // Phase a runs on CPU 15, phase b on the task's own CPU 14 (rt-app restores it).
    std::fs::write(
        &file,
        r#"{"tasks": {"t": {"cpus": [14], "loop": 1, "phases": {
              "a": {"cpus": [15], "run": 1000},
              "b": {"run": 1000}}}},
            "global": {"calibration": 100, "duration": 1}}"#,
    )
    .unwrap();
    let toml = format!(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\nkind = \"rtapp\"\nfile = \"{}\"\n",
        file.display()
    );
    let mut e = scenario_engine(&toml);
    e.run();
    assert!(e.all_exited());
    let moves: Vec<usize> = e
        .migration_log()
        .iter()
        .filter(|m| m.reason == MigrationReason::Affinity)
        .map(|m| m.to)
        .collect();
    // Created with the inherited mask (near CPU 0): moved to 15 for phase a, to 14 for b.
    assert_eq!(moves, vec![15, 14]);
    assert_eq!(e.tasks()[0].cpus_allowed, CpuMask::parse("14").unwrap());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn default_placement_leaves_simulation_numbers_unchanged() {
    // The property (not a pinned number, which every model change moved): without a
    // placement the run is the run of a placement that allows every CPU and every node.
    let run_with = |command: &str| {
        let scn = Scenario::parse(
            &format!(
                "[machine]\npreset = \"nehalem-2s\"\n[run]\nnoise = false\n\
                 [workload]\ncommand = \"{command}\"\n"
            ),
            "test.toml",
        )
        .unwrap();
        experiment::run_once(&scn, 1).unwrap().json()
    };
    let plain = run_with("hackbench -g 2 -l 100");
    let everywhere = run_with("taskset -c 0-15 hackbench -g 2 -l 100");
    assert!(plain["placement"].is_null());
    assert!(!everywhere["placement"].is_null());
    for key in ["sim_time_ns", "events"] {
        assert_eq!(plain[key], everywhere[key], "{key}");
    }
    assert_eq!(
        plain["workload"]["time_s"],
        everywhere["workload"]["time_s"]
    );
    assert_eq!(plain["perf_stat"], everywhere["perf_stat"]);
    assert_eq!(plain["migrations"], everywhere["migrations"]);
    assert_eq!(plain["migrations"]["by_reason"]["affinity"], 0);
}

#[test]
fn resolved_placement_is_in_the_scenario_block() {
    let scn = Scenario::parse(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\n\
         command = \"taskset -c 1-7 numactl -m 1 hackbench -g 1 -l 10\"\nmem_intensity_pct = 30\n",
        "test.toml",
    )
    .unwrap();
    let run = experiment::run_once(&scn, 1).unwrap();
    let doc = experiment::results_json(&scn, &[run]);
    let p = &doc["scenario"]["workload"]["placement"];
    assert_eq!(p["cpus"], "1-7");
    assert_eq!(p["mempolicy"], "bind");
    assert_eq!(p["mem_nodes"], "1");
    assert_eq!(p["mem_intensity_pct"], 30.0);
    assert_eq!(p["command_prefix"], "taskset -c 1-7 numactl -m 1");
    let tasks = doc["runs"][0]["tasks"].as_array().unwrap();
    // Memory bound to node 1: the pages are local exactly for tasks on odd CPUs.
    for t in tasks {
        let local = t["numa_pages_local_pct"].as_f64().unwrap();
        let cpu = t["cpu"].as_u64().unwrap();
        assert_eq!(local, if cpu % 2 == 1 { 100.0 } else { 0.0 }, "{t}");
    }
}

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

#[test]
fn bad_prefix_options_give_the_tools_message_and_exit_2() {
    let out = schedlab(&[
        "run",
        "-m",
        "nehalem-2s",
        "--",
        "taskset",
        "-x",
        "1",
        "hackbench",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("taskset: invalid option -- 'x'"), "{err}");
    assert!(
        err.contains("Try 'taskset --help' for more information."),
        "{err}"
    );
    let out = schedlab(&[
        "run",
        "-m",
        "nehalem-2s",
        "--",
        "numactl",
        "--nodes=1",
        "hackbench",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("numactl: unrecognized option '--nodes=1'")
            || err.contains("numactl: unrecognized option '--nodes'"),
        "{err}"
    );
    assert!(err.contains("usage: numactl"), "{err}");
    let out = schedlab(&[
        "run",
        "-m",
        "nehalem-2s",
        "--",
        "taskset",
        "0x10000",
        "hackbench",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("taskset: failed to set pid 0's affinity: Invalid argument"),
        "{err}"
    );
}

#[test]
fn unknown_workload_keys_still_list_the_accepted_ones() {
    let scn = Scenario::parse(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\nkind = \"hackbench\"\ngroup_cpu = [\"0\"]\n",
        "test.toml",
    )
    .unwrap();
    let e = experiment::run_once(&scn, 1).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload.group_cpu"));
    assert!(
        e.message.contains("placement: cpus, cpunodebind, membind"),
        "{e}"
    );
}

#[test]
fn empty_intersection_with_a_benchmark_mask_is_an_error() {
    // schbench -M 0 pins the message thread to CPU 0; taskset allows only CPU 1.
    let scn = Scenario::parse(
        "[machine]\npreset = \"nehalem-2s\"\n[workload]\n\
         command = \"taskset -c 1 schbench -m 1 -t 1 -M 0 -r 1\"\n",
        "test.toml",
    )
    .unwrap();
    let e = experiment::run_once(&scn, 1).unwrap_err();
    assert!(e.message.contains("no online CPU in common"), "{e}");
}

#[test]
fn bundled_numactl_scenario_shows_the_remote_memory_cost() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/hackbench-numactl.toml");
    let scn = Scenario::load(&path, &[]).unwrap();
    let remote = experiment::run_once(&scn, 1).unwrap();
    let local = experiment::run_once(&scn.variant("local").unwrap(), 1).unwrap();
    let t_remote = remote.json()["workload"]["time_s"].as_f64().unwrap();
    let t_local = local.json()["workload"]["time_s"].as_f64().unwrap();
    // The receivers' stalls derived from the message traffic (m = 190 ‰, docs/numa-workloads.md)
    // stretch a read by 0.81 + 0.19 · 2.1 = 1.209 at distance 21; writes and waiting are not
    // stretched, so the benchmark slows by more than nothing and at most that.
    let ratio = t_remote / t_local;
    assert!(ratio > 1.05 && ratio <= 1.209, "remote/local {ratio}");
    let remote_json = remote.json();
    for t in remote_json["tasks"].as_array().unwrap() {
        assert_eq!(t["numa_pages_local_pct"], 0.0, "{t}");
        assert_eq!(t["cpu"].as_u64().unwrap() % 2, 0, "{t}");
    }
}
