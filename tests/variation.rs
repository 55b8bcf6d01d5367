//! Run-to-run variation (`crate::engine::noise`): repeated runs of stress-ng differ as real
//! runs do, deterministically per seed, and with the noise off the old deterministic model
//! (stress-ng identical across seeds) is back.

use std::process::Command;

fn run_json(extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", "-m", "hybrid-10"];
    args.extend_from_slice(extra);
    args.extend([
        "--runs",
        "5",
        "--json",
        "-",
        "--",
        "stress-ng",
        "--cpu",
        "6",
        "-l",
        "50",
        "--cpu-load-slice",
        "1",
        "--cpu-ops",
        "1500",
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs");
    assert!(
        out.status.success(),
        "schedlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in v["runs"].as_array_mut().unwrap() {
        let o = r.as_object_mut().unwrap();
        o.remove("wall_time_s");
        o.remove("sim_s_per_wall_s");
        o.remove("events_per_s");
    }
    v["summary"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| !k.contains("wall"));
    v
}

fn cv(v: &serde_json::Value, key: &str) -> f64 {
    v["summary"][key]["cv_pct"]
        .as_f64()
        .unwrap_or_else(|| panic!("summary {key}.cv_pct"))
}

#[test]
fn repeated_stress_ng_runs_vary_and_the_variation_is_seeded() {
    let a = run_json(&[]);
    assert!(cv(&a, "perf_stat.cpu_migrations") > 0.0);
    assert!(cv(&a, "perf_stat.elapsed_s") > 0.0);
    // The variation is small, as on real machines: elapsed within a few percent.
    assert!(
        cv(&a, "perf_stat.elapsed_s") < 10.0,
        "{}",
        cv(&a, "perf_stat.elapsed_s")
    );
    // Same seed: byte-identical.
    let b = run_json(&[]);
    assert_eq!(a.to_string(), b.to_string());
    // Another base seed: other trajectories.
    let c = run_json(&["--seed", "99"]);
    assert_ne!(a["summary"].to_string(), c["summary"].to_string());
}

#[test]
fn without_noise_stress_ng_is_identical_across_seeds() {
    let off = run_json(&["--set", "run.noise=false"]);
    // The stress-ng program has no random draw of its own: every seed gives the same run.
    assert_eq!(cv(&off, "perf_stat.cpu_migrations"), 0.0);
    assert_eq!(cv(&off, "perf_stat.elapsed_s"), 0.0);
    assert_eq!(cv(&off, "perf_stat.context_switches"), 0.0);
    // Each parameter at 0 is the same model as `noise = false`.
    let zeros = run_json(&[
        "--set",
        "run.noise_work_cv_ppm=0",
        "--set",
        "run.noise_timer_jitter_ns=0",
        "--set",
        "run.noise_irq_rate_hz=0",
        "--set",
        "run.noise_irq_len_ns=0",
        "--set",
        "run.noise_kworker_interval_us=0",
        "--set",
        "run.noise_kthread_interval_us=0",
        "--set",
        "run.noise_daemon_interval_us=0",
    ]);
    assert_eq!(off["summary"].to_string(), zeros["summary"].to_string());
    assert_eq!(off["runs"].to_string(), zeros["runs"].to_string());
}

#[test]
fn each_noise_source_alone_makes_runs_differ() {
    // Each source and the keys that turn it off.
    let off: [&[&str]; 4] = [
        &["run.noise_work_cv_ppm=0"],
        &["run.noise_timer_jitter_ns=0"],
        &["run.noise_irq_rate_hz=0"],
        &[
            "run.noise_kworker_interval_us=0",
            "run.noise_kthread_interval_us=0",
        ],
    ];
    for keep in 0..off.len() {
        let mut args = Vec::new();
        for (i, keys) in off.iter().enumerate() {
            if i != keep {
                for k in keys.iter() {
                    args.extend(["--set", *k]);
                }
            }
        }
        let v = run_json(&args);
        assert!(
            cv(&v, "perf_stat.elapsed_s") > 0.0,
            "only {:?} on: elapsed identical across seeds",
            off[keep]
        );
    }
}

#[test]
fn bad_noise_key_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "run",
            "scenarios/stress-ng.toml",
            "--set",
            "run.noise_work_cv_ppm=900000",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run.noise_work_cv_ppm"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
