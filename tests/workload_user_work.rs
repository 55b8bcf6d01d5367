//! schbench's user-space work per request (`[workload] request_user_ns`,
//! `request_user_cv_pct`, `wake_user_ns`; docs/fidelity.md "schbench's user-space work"):
//! one message thread and one worker on a 2-CPU machine with every kernel cost zeroed, so a
//! task's CPU time is only the work its program runs.

use crate::costs;

use schedlab::config::scenario::Scenario;
use schedlab::experiment;
use serde_json::Value;

/// Every `[machine.cost]` key that charges time set to zero, no noise, then `workload`.
fn scenario(workload: &str) -> Scenario {
    let zeroed: Vec<&str> = costs::KERNEL_COST_KEYS
        .iter()
        .chain(costs::REFILL_COST_KEYS.iter())
        .copied()
        .collect();
    let mut text = String::from("[machine.topology]\ncores_per_package = 2\n[machine.cost]\n");
    text += &costs::cost_lines_zeroed(&zeroed, "");
    text += "[kernel]\nprofile = \"v6.18\"\n[run]\nnoise = false\n[workload]\n";
    text += workload;
    Scenario::parse(&text, "test").unwrap()
}

/// (worker CPU ns, message-thread CPU ns, requests, worker wakeups) of one run.
fn run(scn: &Scenario, seed: u64) -> (u64, u64, u64, u64) {
    let out = experiment::run_once(scn, seed).unwrap();
    let json = out.json();
    let tasks = json["tasks"].as_array().unwrap();
    let task = |comm: &str| -> &Value { tasks.iter().find(|t| t["comm"] == comm).unwrap() };
    let worker = task("schbench-worker");
    let msg = task("schbench-msg");
    let loops = json["workload"]["loop_count"].as_u64().unwrap();
    (
        worker["sum_exec_runtime_ns"].as_u64().unwrap(),
        msg["sum_exec_runtime_ns"].as_u64().unwrap(),
        loops,
        worker["nr_wakeups"].as_u64().unwrap(),
    )
}

/// `schbench -L -m 1 -t 1 -n 0 -r 1` as keys (a command line and keys cannot share a table).
const CMD: &str = "kind = \"schbench\"\nno_locking = true\nmessage_threads = 1\n\
                   workers_per_message_thread = 1\noperations = 0\nruntime_s = 1\n";

#[test]
fn worker_cpu_per_request_is_the_user_work_parameter() {
    // No variation: each request runs exactly 7 µs of user work (two halves of 3.5 µs), -n 0
    // has no math, and every kernel cost is zero.
    let scn = scenario(&format!(
        "{CMD}request_user_ns = 7000\nrequest_user_cv_pct = 0\nwake_user_ns = 2000\n\
         batch_user_ns = 500\n"
    ));
    let (worker, msg, loops, wakeups) = run(&scn, 1);
    // Each request wakes the worker twice: from the gate and from its usleep's timer.
    assert!((2 * loops..=2 * loops + 2).contains(&wakeups), "{wakeups}");
    assert!(loops > 1000, "{loops} requests");
    // Completed requests ran both halves; the one in flight at the stop at most one more.
    assert!(
        (loops * 7000..=loops * 7000 + 7000).contains(&worker),
        "worker ran {worker} ns for {loops} requests"
    );
    // The message thread: pthread_create (15 µs), then per batch its user work and per wakee
    // the user work and the FUTEX_WAKE syscall's own 1 µs (schbench::FUTEX_WAKE_NS); with one
    // worker every batch is one wakee, one per request.
    let per_wake = (msg - 15_000) as f64 / loops as f64;
    assert!(
        (per_wake - 3500.0).abs() < 3500.0 * 0.01,
        "message thread {per_wake} ns per wakeup"
    );
    // Zero work: the worker runs nothing at all.
    let scn0 = scenario(&format!("{CMD}request_user_ns = 0\nwake_user_ns = 0\n"));
    let (worker0, _, loops0, _) = run(&scn0, 1);
    assert_eq!(worker0, 0, "{loops0} requests with no user work");
}

#[test]
fn user_work_variation_is_seeded_with_the_configured_mean() {
    let scn = scenario(&format!(
        "{CMD}request_user_ns = 20000\nrequest_user_cv_pct = 40\n"
    ));
    let a = run(&scn, 1);
    let b = run(&scn, 2);
    // Deterministic per seed ...
    assert_eq!(a, run(&scn, 1));
    // ... different across seeds (the exponential part is drawn per request) ...
    assert_ne!(a.0, b.0);
    // ... with the configured mean (CV 40 % per half: the mean of ~4000 halves is within 2 %).
    for (worker, _, loops, _) in [a, b] {
        let per = worker as f64 / loops as f64;
        assert!(
            (per - 20_000.0).abs() < 20_000.0 * 0.02,
            "{per} ns per request"
        );
    }
}

#[test]
fn user_work_keys_are_checked() {
    for (keys, needle) in [
        ("request_user_cv_pct = 101\n", "above 100"),
        ("request_user_ns = 2000000000\n", "more than 1 s"),
    ] {
        let text = format!("[machine.topology]\ncores_per_package = 2\n[workload]\n{CMD}{keys}");
        let msg = match Scenario::parse(&text, "t.toml") {
            Err(e) => format!("{e:?}"),
            Ok(s) => match experiment::run_once(&s, 1) {
                Err(e) => format!("{e:?}"),
                Ok(_) => panic!("{keys} accepted"),
            },
        };
        assert!(msg.contains(needle), "{msg}");
    }
    let text = "[machine.topology]\ncores_per_package = 2\n[workload]\nkind = \"schbench\"\n\
                version = \"classic\"\nrequest_user_ns = 10\n";
    let err = match Scenario::parse(text, "t.toml") {
        Err(e) => format!("{e:?}"),
        Ok(s) => format!("{:?}", experiment::run_once(&s, 1).err()),
    };
    assert!(err.contains("request_user_ns"), "{err}");
}
