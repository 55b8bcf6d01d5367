//! The wakeup side of schedstat and the migration counters, checked against the kernel's
//! rules on a whole run:
//! - `ttwu_stat()`: every remote wakeup counts once in the task's `nr_wakeups_remote` and
//!   once in `ttwu_wake_remote` of the waker's lowest domain spanning the target;
//! - `wake_affine()`: `nr_wakeups_affine_attempts` per call, `nr_wakeups_affine` and the
//!   domain's `ttwu_move_affine` when it returned the waking CPU;
//! - `wake_up_new_task()` places a child with `__set_task_cpu()` (v4.7+): a fork placement
//!   is in `migrations.by_reason.fork` but not in `se.nr_migrations` nor perf's
//!   `cpu-migrations`; before v4.7 it was a `set_task_cpu()` and counted in both.

use std::process::Command;

fn run_json(name: &str, args: &[&str]) -> serde_json::Value {
    let out = std::env::temp_dir().join(format!("schedlab-{name}-{}.json", std::process::id()));
    let mut all = vec!["run", "-q", "--set", "run.noise=false", "--json"];
    all.push(out.to_str().unwrap());
    all.extend_from_slice(args);
    let o = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(&all)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    serde_json::from_str(&text).unwrap()
}

fn task_sum(run: &serde_json::Value, key: &str) -> u64 {
    run["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[key].as_u64().unwrap_or_else(|| panic!("{key} in {t}")))
        .sum()
}

#[test]
fn wakeup_schedstat_counters_follow_ttwu_stat_and_wake_affine() {
    let r = run_json(
        "ttwu-stat",
        &["-m", "skl-2s", "--", "hackbench", "-g", "4", "-l", "200"],
    );
    let run = &r["runs"][0];
    let totals = &run["schedstat"]["totals"];
    let remote = task_sum(run, "nr_wakeups_remote");
    let attempts = task_sum(run, "nr_wakeups_affine_attempts");
    let affine = task_sum(run, "nr_wakeups_affine");
    assert!(remote > 0 && affine > 0, "remote {remote}, affine {affine}");
    assert_eq!(totals["ttwu_wake_remote"].as_u64().unwrap(), remote);
    assert_eq!(totals["ttwu_move_affine"].as_u64().unwrap(), affine);
    assert!(affine <= attempts && attempts <= task_sum(run, "nr_wakeups"));
    // The kernel never increments ttwu_move_balance (SD_BALANCE_WAKE moves are not
    // counted there since the sched_balance_find_dst_cpu() rework).
    assert_eq!(totals["ttwu_move_balance"].as_u64().unwrap(), 0);
    // The wake-affine counts are per level: on skl-2s the waker's lowest domain spanning
    // a same-socket target is MC, a cross-socket one NUMA.
    let levels = run["schedstat"]["by_level"].as_object().unwrap();
    let by_level: u64 = levels
        .values()
        .map(|l| l["ttwu_wake_remote"].as_u64().unwrap())
        .sum();
    assert_eq!(by_level, remote);
}

/// Per task: `nr_migrations` against the moves by reason, fork placements counted or not.
fn check_fork_counting(run: &serde_json::Value, forks_count: bool) {
    let mut forks = 0;
    for t in run["tasks"].as_array().unwrap() {
        let by_reason = t["migrations_by_reason"].as_object().unwrap();
        let moves: u64 = by_reason.values().map(|v| v.as_u64().unwrap()).sum();
        let fork = by_reason["fork"].as_u64().unwrap();
        forks += fork;
        let expected = if forks_count { moves } else { moves - fork };
        assert_eq!(t["nr_migrations"].as_u64().unwrap(), expected, "{t}");
    }
    assert!(forks > 0, "hackbench's children are spread at fork");
}

#[test]
fn fork_placements_are_counted_as_migrations_only_before_v4_7() {
    let old = run_json(
        "fork-mig-old",
        &[
            "-m",
            "skl-2s",
            "-k",
            "v4.2",
            "--",
            "hackbench",
            "-g",
            "2",
            "-l",
            "100",
        ],
    );
    check_fork_counting(&old["runs"][0], true);
}

#[test]
fn fork_placements_are_not_set_task_cpu_migrations() {
    let r = run_json(
        "fork-mig",
        &["-m", "skl-2s", "--", "hackbench", "-g", "2", "-l", "100"],
    );
    let run = &r["runs"][0];
    check_fork_counting(run, false);
    let perf = run["perf_stat"]["cpu_migrations"].as_u64().unwrap();
    assert!(
        perf <= task_sum(run, "nr_migrations"),
        "perf counts a migrated task once at its next switch-in"
    );
}

/// schedlab's own counters beside schedstat: `newidle_entry` says where each
/// `sched_balance_newidle()` call went, `placements` where each CFS placement did.
/// Kernel facts: a newidle call returns before any pass while `rd->overloaded` is clear
/// (no runqueue reached two tasks since a root-level pass cleared it); a fork is placed by
/// the slow path (`WF_FORK` → `SD_BALANCE_FORK`, set at every level → `find_idlest`).
/// The `schedstat` of `stress-ng --cpu N -l 50 -t 1` on skl-2s (56 CPUs).
fn stress_schedstat(n: &str) -> serde_json::Value {
    let args = [
        "-m",
        "skl-2s",
        "--",
        "stress-ng",
        "--cpu",
        n,
        "-l",
        "50",
        "-t",
        "1",
    ];
    run_json(&format!("ni-{n}"), &args)["runs"][0]["schedstat"].clone()
}

#[test]
fn newidle_entries_follow_the_overload_flag_and_forks_take_the_slow_path() {
    // Two tasks (and the per-CPU kworkers) on 56 CPUs: hardly ever two on a runqueue.
    let light = stress_schedstat("2");
    let ni = &light["newidle_entry"];
    let not_over = ni["rd_not_overloaded"].as_u64().unwrap();
    let walked = ni["walked"].as_u64().unwrap();
    assert!(not_over > 10 * walked.max(1), "{ni}");

    // 200 tasks on 56 CPUs: the flag stays set; every newidle call walks or is gated.
    let heavy = stress_schedstat("200");
    let ni = &heavy["newidle_entry"];
    assert_eq!(ni["rd_not_overloaded"].as_u64(), Some(0), "{ni}");
    assert!(ni["walked"].as_u64().unwrap() > 0, "{ni}");
    // Each of the 200 forked instances is placed by the slow path.
    let p = &heavy["placements"];
    assert!(p["find_idlest"].as_u64().unwrap() >= 200, "{p}");
    // Every key is there, from select_idle_sibling()'s exits to the scan steps.
    for key in [
        "sis_target",
        "sis_prev",
        "sis_idle_cpu",
        "sis_target_fallback",
        "scan_steps",
    ] {
        assert!(p[key].is_u64(), "{key} in {p}");
    }
    assert!(p["scan_steps"].as_u64().unwrap() > 0, "{p}");
}

/// `sd->max_newidle_lb_cost` per level at the end of a run, read as the kernel's debugfs shows
/// it per CPU. Two CPU hogs pinned to CPU 0 keep `rd->overloaded` set, and nothing can be
/// pulled (they are pinned), so every newly-idle walk fails. Without NEWIDLE_FAIL_BUMP a
/// failed walk still charges its measured cost, so the walked levels' costs are above 0; with
/// it a failure charges `3/2 × max_newidle_lb_cost`, which from the boot value 0 stays 0
/// (Chris Mason's 155213a2aed4 has the same arithmetic). CPU 2, pinned to a 30 % load in
/// 1 ms slices, is the CPU that walks.
#[test]
fn newidle_costs_per_level_show_the_failure_bump_stuck_at_zero() {
    let costs = |bump: &str| {
        let args = [
            "-m",
            "skl-2s",
            "-k",
            "v6.17",
            "--feature",
            bump,
            "--",
            "taskset",
            "-c",
            "0",
            "stress-ng",
            "--cpu",
            "2",
            "-t",
            "1",
            "+",
            "taskset",
            "-c",
            "2",
            "stress-ng",
            "--cpu",
            "1",
            "-l",
            "30",
            "--cpu-load-slice",
            "1",
            "-t",
            "1",
        ];
        let run = run_json(&format!("nicost-{bump}"), &args)["runs"][0].clone();
        let cpus = run["cpus"].as_array().unwrap().len() as u64;
        let walked = run["schedstat"]["newidle_entry"]["walked"]
            .as_u64()
            .unwrap();
        (run["schedstat"]["by_level"].clone(), cpus, walked)
    };
    let (without, cpus, walked) = costs("NO_NEWIDLE_FAIL_BUMP");
    // CPU 2 goes idle after each 1 ms slice and walks (the flag is set by CPU 0's pair).
    assert!(walked > 20, "walks without the bump: {walked}");
    let mc = &without["MC"];
    let max = mc["max_newidle_lb_cost_ns_max"].as_u64().unwrap();
    let mean = mc["max_newidle_lb_cost_ns_mean"].as_u64().unwrap();
    assert!(max > 0 && mean > 0 && mean <= max, "{mc}");
    assert!(
        mc["max_newidle_lb_cost_zero_cpus"].as_u64().unwrap() < cpus,
        "{mc}"
    );

    let (with, cpus, walked) = costs("NEWIDLE_FAIL_BUMP");
    assert!(walked > 20, "walks with the bump: {walked}");
    for (level, c) in with.as_object().unwrap() {
        assert_eq!(
            c["max_newidle_lb_cost_zero_cpus"].as_u64(),
            Some(cpus),
            "{level}: {c}"
        );
        assert_eq!(
            c["max_newidle_lb_cost_ns_max"].as_u64(),
            Some(0),
            "{level}: {c}"
        );
    }
}
