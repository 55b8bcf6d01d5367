//! `schedlab compare` end to end: the LKML-style tables, the baseline row at 1.00, every
//! variant on the same seeds as `schedlab run` would use, the JSON document, and bad input
//! giving exit code 2.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

/// A two-pair ping-pong under the global FIFO policy on skl-2s for 50 ms, 3 runs, with a
/// `[[variant]]` that makes IPIs slow. The idle states are HLT-like (no MWAIT), so waking an
/// idle CPU takes an IPI.
const SCENARIO: &str = r#"
[machine]
preset = "skl-2s"

[machine.cost]
idle_states = [
    { name = "POLL", exit_latency_ns = 0, target_residency_ns = 0, polling = true },
    { name = "C1", exit_latency_ns = 2000, target_residency_ns = 2000 },
]

[kernel]
policy = "fifo"

[workload]
kind = "pingpong"
pairs = 2

[run]
duration_s = 0.05
runs = 3
seed = 7

[[variant]]
name = "slowipi"
"machine.cost.ipi_latency_ns" = 50000
"#;

fn scenario_file(tag: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn strip_wall_time(runs: &mut Value) {
    for r in runs.as_array_mut().unwrap() {
        let obj = r.as_object_mut().unwrap();
        obj.remove("wall_time_s");
        obj.remove("sim_s_per_wall_s");
    }
}

fn table<'a>(doc: &'a Value, metric: &str) -> &'a Value {
    doc["comparison"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == metric)
        .unwrap_or_else(|| panic!("no table for {metric}"))
}

#[test]
fn compare_tables_and_common_seeds() {
    let path = scenario_file("ok", SCENARIO);
    let p = path.to_str().unwrap();
    let out = schedlab(&[
        "compare",
        p,
        "--variant",
        "lowcost:sched_migration_cost_ns=100000",
        "--json",
        "-",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stderr).unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();

    // Variants in order: the scenario as given, the file's [[variant]], then --variant.
    let names: Vec<&str> = doc["comparison"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, ["baseline", "slowipi", "lowcost"]);

    // Every variant ran on the same seeds, the ones `schedlab run` derives from seed 7.
    let seeds = doc["seeds"].clone();
    assert_eq!(seeds.as_array().unwrap().len(), 3);
    assert_eq!(seeds[0], 7, "run 0 uses the base seed itself");
    for v in doc["variants"].as_array().unwrap() {
        let run_seeds: Vec<&Value> = v["results"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["seed"])
            .collect();
        assert_eq!(
            Value::Array(run_seeds.into_iter().cloned().collect()),
            seeds,
            "{}",
            v["name"]
        );
    }

    // The baseline is exactly what `schedlab run` gives for the file.
    let run = schedlab(&["run", p, "--json", "-"]);
    assert!(run.status.success());
    let mut run_doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    let mut base_runs = doc["variants"][0]["results"]["runs"].clone();
    strip_wall_time(&mut base_runs);
    strip_wall_time(&mut run_doc["runs"]);
    assert_eq!(base_runs, run_doc["runs"]);

    // Every table's baseline row is 1.00 with no paired delta.
    for t in doc["comparison"]["metrics"].as_array().unwrap() {
        let rows = t["rows"].as_array().unwrap();
        assert_eq!(rows[0]["variant"], "baseline");
        assert_eq!(rows[0]["normalized"], 1.0, "{}", t["metric"]);
        assert!(rows[0]["paired_delta"].is_null());
        assert_eq!(rows.len(), 3);
    }
    // The paired delta is over run i of the variant minus run i of the baseline, recomputed
    // here from the variants' own results.
    let per_run = |v: usize| -> Vec<f64> {
        doc["variants"][v]["results"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["workload"]["round_trips"].as_f64().unwrap())
            .collect()
    };
    let (base, slow) = (per_run(0), per_run(1));
    let d: Vec<f64> = slow.iter().zip(&base).map(|(s, b)| s - b).collect();
    let mean = d.iter().sum::<f64>() / 3.0;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let pd = &table(&doc, "workload.round_trips")["rows"][1]["paired_delta"];
    assert!((pd["mean"].as_f64().unwrap() - mean).abs() < 1e-9, "{pd}");
    assert!((pd["stdev"].as_f64().unwrap() - sd).abs() < 1e-9, "{pd}");
    assert_eq!(pd["n"], 3);

    // Slow IPIs: remote wakeups take longer, so fewer round trips in the same 50 ms — a
    // regression for a higher-is-better metric, i.e. a negative [pct imp].
    let rt = table(&doc, "workload.round_trips");
    assert_eq!(rt["interpretation"], "higher_is_better");
    let slow = &rt["rows"][1];
    assert!(slow["normalized"].as_f64().unwrap() < 1.0, "{rt}");
    assert!(slow["pct_imp"].as_f64().unwrap() < 0.0);
    // ... and a longer wakeup latency: lower is better, so also a negative [pct imp].
    let lat = table(&doc, "latency_us.wakeup.p99");
    assert_eq!(lat["interpretation"], "lower_is_better");
    assert!(lat["rows"][1]["pct_imp"].as_f64().unwrap() < 0.0, "{lat}");

    // The text: header lines, baseline rows at 1.00 (-0.00 when lower is better), the diffs.
    assert!(text.contains("seeds 7 "), "{text}");
    assert!(text.contains("Test          : pingpong\n"), "{text}");
    assert!(
        text.contains("Interpretation: Higher is better\n"),
        "{text}"
    );
    assert!(text.contains("Interpretation: Lower is better\n"), "{text}");
    assert!(text.contains("norm[pct imp](CV)"), "{text}");
    // The baseline's CV over the 3 seeds is the machine noise's (`crate::engine::noise`).
    assert!(text.contains("\nbaseline  1.00 [  0.00]("), "{text}");
    // Lower is better: the baseline's own change prints as -0.00.
    assert!(text.contains("\nbaseline  1.00 [ -0.00]("), "{text}");
    assert!(text.contains("perf stat diff"), "{text}");
    assert!(text.contains("\ncontext-switches "), "{text}");
    assert!(text.contains("migrations by reason"), "{text}");
    assert!(text.contains("\nwakeup "), "{text}");
    assert!(
        text.contains("  slowipi   machine.cost.ipi_latency_ns=50000\n"),
        "{text}"
    );

    // Same inputs, same bytes (apart from wall-clock keys): a rerun gives identical tables.
    let again = schedlab(&[
        "compare",
        p,
        "--variant",
        "lowcost:sched_migration_cost_ns=100000",
    ]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text);
}

#[test]
fn compare_bad_input_exits_2() {
    let path = scenario_file("bad", SCENARIO);
    let p = path.to_str().unwrap();
    let no_variants = scenario_file(
        "novariant",
        &SCENARIO[..SCENARIO.find("[[variant]]").unwrap()],
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["compare", no_variants.to_str().unwrap()],
            "nothing to compare",
        ),
        (
            vec!["compare", p, "--variant", "slowipi:NO_TTWU_QUEUE"],
            "already used",
        ),
        (
            vec!["compare", p, "--variant", "baseline:NO_TTWU_QUEUE"],
            "already used",
        ),
        (
            vec!["compare", p, "--variant", "x:NO_SUCH_FEATURE"],
            "NO_SUCH_FEATURE",
        ),
        (vec!["compare"], "nothing to compare"),
    ];
    for (args, needle) in cases {
        let out = schedlab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}
