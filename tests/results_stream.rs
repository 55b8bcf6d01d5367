//! Streamed results (issue 14, "results memory does not grow with --runs"): `run --json` and
//! `compare --json` write each finished run's `runs[]` entry to a scratch file and assemble
//! the document at the end, while the finished runs keep only what the summary, the tables
//! and the text report need. The document must be what the whole runs give: the same value
//! as `results_json` over runs kept whole in memory, laid out byte for byte as
//! `serde_json::to_string_pretty` lays it out.

use std::path::PathBuf;
use std::process::Command;

use schedlab::config::scenario::Scenario;
use schedlab::experiment::{self, RunContext};
use serde_json::Value;

fn schedlab(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs");
    assert!(
        out.status.success(),
        "schedlab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 JSON")
}

/// schbench on a small 2-socket machine under the fair class (schedstats, latency
/// histograms, per-task and per-CPU results), 3 runs; a variant switches TTWU_QUEUE off.
const SCENARIO: &str = r#"
[machine]
preset = "nehalem-2s"

[workload]
command = "schbench -m 2 -t 6 -r 30"

[run]
duration_s = 0.03
runs = 3
seed = 11

[[variant]]
name = "noq"
"kernel.features.TTWU_QUEUE" = false
"#;

fn scenario_file(tag: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Drop the wall-clock keys (they differ from one execution to the next) everywhere.
fn strip_wall_time(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("wall_time_s");
            m.remove("sim_s_per_wall_s");
            m.values_mut().for_each(strip_wall_time);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_wall_time),
        _ => {}
    }
}

/// The text is serde_json's pretty layout of the value it holds (and a newline): the same
/// lines as a re-serialization, numbers aside (serde_json's default float parser may move a
/// float by one ulp, so numbers are compared as values, through [`reparsed`]).
fn assert_pretty_layout(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).expect("valid JSON");
    let again = serde_json::to_string_pretty(&v).unwrap() + "\n";
    let shape = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| {
                let (head, tail) = match l.rfind(": ") {
                    Some(i) => l.split_at(i + 2),
                    None => ("", l),
                };
                let bare = tail.trim().trim_end_matches(',');
                if !bare.is_empty() && bare.parse::<f64>().is_ok() {
                    format!("{head}{}N", &tail[..tail.len() - tail.trim_start().len()])
                } else {
                    l.to_string()
                }
            })
            .collect()
    };
    assert!(text.ends_with("}\n"), "the document ends with a newline");
    assert!(
        shape(text) == shape(&again),
        "the streamed document's layout differs from serde_json's"
    );
    v
}

/// `v` as it reads back from its JSON text (the same float parsing as the CLI's output).
fn reparsed(v: &Value) -> Value {
    serde_json::from_str(&serde_json::to_string_pretty(v).unwrap()).unwrap()
}

#[test]
fn run_json_with_three_runs_is_the_document_of_the_whole_runs() {
    let file = scenario_file("run", SCENARIO);
    let text = schedlab(&["run", file.to_str().unwrap(), "--json", "-"]);
    let mut streamed = assert_pretty_layout(&text);
    assert_eq!(streamed["runs"].as_array().unwrap().len(), 3);
    // The same runs kept whole in this process (`results_json` over them).
    let scn = Scenario::load(&file, &[]).unwrap();
    let runs = experiment::run_all(&scn).unwrap();
    assert!(!runs[0].result.tasks.is_empty() && !runs[0].result.latency_hist.is_empty());
    let mut whole = reparsed(&experiment::results_json(&scn, &runs));
    strip_wall_time(&mut streamed);
    strip_wall_time(&mut whole);
    assert!(
        streamed == whole,
        "streamed runs differ from the whole runs"
    );
}

#[test]
fn slimmed_runs_keep_the_summary_and_drop_the_bulk() {
    let file = scenario_file("slim", SCENARIO);
    let scn = Scenario::load(&file, &[]).unwrap();
    let whole = experiment::run_all(&scn).unwrap();
    let mut stream = experiment::ResultsStream::slim_only();
    let (slim, _) = experiment::run_all_streamed(
        &RunContext::default(),
        &scn,
        Default::default(),
        Some(&mut stream),
    )
    .unwrap();
    assert_eq!(slim.len(), 3);
    for (s, w) in slim.iter().zip(&whole) {
        assert!(s.result.tasks.is_empty() && s.result.cpus.is_empty());
        assert!(s.result.latency_hist.is_empty() && s.result.placement.is_none());
        assert_eq!(s.native_text, w.native_text);
        assert_eq!(s.summary_line, w.summary_line);
    }
    // Only the first run keeps its /proc/schedstat text (`--schedstat` writes the first's).
    assert!(slim[0].schedstat_text.is_some() && slim[1].schedstat_text.is_none());
    // The slimmed runs lost their metrics; the stream's columns hold them.
    assert!(slim[1].result.schedstat.is_none() && slim[1].result.latency_us.is_empty());
    assert_eq!(
        serde_json::to_value(stream.summary()).unwrap(),
        serde_json::to_value(experiment::summarize(&whole)).unwrap()
    );
    assert_eq!(stream.columns().runs(), 3);
}

#[test]
fn compare_json_is_the_document_of_the_whole_runs() {
    // The runs are cut short (schbench -r 30 at 0.03 s): compared on purpose, the layout is
    // what is checked.
    let file = scenario_file("compare", SCENARIO);
    let text = schedlab(&[
        "compare",
        file.to_str().unwrap(),
        "--allow-incomplete",
        "--json",
        "-",
    ]);
    let mut streamed = assert_pretty_layout(&text);
    let variants = streamed["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    assert_eq!(variants[1]["results"]["runs"].as_array().unwrap().len(), 3);
    // Each variant's results are what `run --json` gives for its scenario: the whole runs.
    let base = Scenario::load(&file, &[]).unwrap();
    for (v, scn) in variants
        .iter()
        .zip([base.clone(), base.variant("noq").unwrap()])
    {
        let mut whole = reparsed(&experiment::results_json(
            &scn,
            &experiment::run_all(&scn).unwrap(),
        ));
        let mut got = v["results"].clone();
        strip_wall_time(&mut whole);
        strip_wall_time(&mut got);
        assert!(
            got == whole,
            "variant {} differs from its whole runs",
            v["name"]
        );
    }
    // The tables do not depend on how the runs were kept: the text report's tables are
    // the same with `--report` (runs kept whole) as without.
    let report = std::env::temp_dir().join(format!("schedlab-stream-{}.html", std::process::id()));
    let whole_text = schedlab(&[
        "compare",
        file.to_str().unwrap(),
        "--allow-incomplete",
        "--report",
        report.to_str().unwrap(),
        "--json",
        "-",
    ]);
    let _ = std::fs::remove_file(&report);
    let mut whole_doc: Value = serde_json::from_str(&whole_text).unwrap();
    strip_wall_time(&mut whole_doc);
    strip_wall_time(&mut streamed);
    assert!(streamed["comparison"] == whole_doc["comparison"]);
}
