//! `schedlab bench`: its selection, its JSON figures and the accounting of superseded queue
//! entries (speed itself is never asserted: it depends on the host).

use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[test]
fn unknown_case_is_bad_input_naming_the_accepted_ones() {
    let o = bin().args(["bench", "--case", "nope"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("--case: nope: unknown case; accepted: bare, spr-2s, skl-v6.9"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "nothing measured before the error");
}

#[test]
fn json_figures_of_one_case_are_consistent() {
    let o = bin()
        .args([
            "bench", "--case", "spr-1k", "--sim-s", "0.01", "--json", "-",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The test binary is built without -Cprofile-use: a plain build of an optimized profile
    // (build.rs reports `release` for every profile that inherits it, ci-debug included).
    assert_eq!(doc["build"], "release/plain", "build kind from build.rs");
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "--case selects one case");
    let c = &cases[0];
    assert_eq!(c["name"], "spr-1k");
    // --sim-s caps the simulated length (the End event fires at exactly that time).
    assert_eq!(c["sim_s"].as_f64(), Some(0.01));
    let events = c["events"].as_f64().unwrap();
    let cpu_s = c["cpu_s"].as_f64().unwrap();
    let bare = c["bare_events_per_cpu_s"].as_f64().unwrap();
    assert!(events > 0.0 && cpu_s > 0.0 && bare > 0.0);
    // 1 000 schbench threads on 224 CPUs re-plan ticks and timers: some entries are superseded.
    assert!(c["superseded_events"].as_u64().unwrap() > 0);
    let rel = |a: f64, b: f64| ((a - b) / b).abs() < 1e-9;
    assert!(rel(c["events_per_cpu_s"].as_f64().unwrap(), events / cpu_s));
    assert!(rel(
        c["ratio_to_bare"].as_f64().unwrap(),
        events / cpu_s / bare
    ));
}

#[test]
fn superseded_entries_are_part_of_the_json_event_count() {
    // `run`'s JSON counts every popped entry; bench's `events` excludes the superseded ones.
    let run = bin()
        .args([
            "run",
            "-m",
            "spr-2s",
            "--set",
            "run.duration_s=0.01",
            "--json",
            "-",
            "--",
        ])
        .args(["schbench", "-m", "4", "-t", "250", "-r", "2"])
        .output()
        .unwrap();
    assert!(run.status.success());
    let run: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let total = run["runs"][0]["events"].as_u64().unwrap();
    let o = bin()
        .args([
            "bench", "--case", "spr-1k", "--sim-s", "0.01", "--json", "-",
        ])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &doc["cases"][0];
    assert_eq!(
        c["events"].as_u64().unwrap() + c["superseded_events"].as_u64().unwrap(),
        total
    );
}
