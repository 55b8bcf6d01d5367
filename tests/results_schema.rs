//! The results file's JSON Schema (`docs/results.schema.json`, generated from the result
//! types by `schedlab::experiment::schema`): the checked-in copy is current, and every
//! bundled scenario's results (and a comparison's) validate against it.
//!
//! To regenerate the checked-in copy after changing a result type:
//! `SCHEDLAB_UPDATE_SCHEMA=1 cargo nextest run --cargo-profile ci-debug -E 'test(/^results_schema::/)'`.

use std::path::{Path, PathBuf};
use std::process::Command;

const SCHEMA_FILE: &str = "docs/results.schema.json";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The schema as the code generates it, pretty-printed with a final newline.
fn generated() -> String {
    let v = schedlab::experiment::schema::results_schema();
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

#[test]
fn checked_in_schema_is_current() {
    let path = repo().join(SCHEMA_FILE);
    let want = generated();
    if std::env::var_os("SCHEDLAB_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{SCHEMA_FILE} is stale (a result type changed); regenerate it with \
         SCHEDLAB_UPDATE_SCHEMA=1 cargo nextest run --cargo-profile ci-debug -E \
         'test(/^results_schema::/)' and commit it"
    );
}

/// A validator of the checked-in schema.
struct Validator {
    schemas: boon::Schemas,
    id: boon::SchemaIndex,
}

impl Validator {
    fn new() -> Validator {
        let text = std::fs::read_to_string(repo().join(SCHEMA_FILE)).unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut schemas = boon::Schemas::new();
        let mut compiler = boon::Compiler::new();
        let url = "urn:schedlab:results.schema.json";
        compiler.add_resource(url, schema).unwrap();
        let id = compiler.compile(url, &mut schemas).unwrap();
        Validator { schemas, id }
    }

    fn check(&self, what: &str, doc: &serde_json::Value) {
        if let Err(e) = self.schemas.validate(doc, self.id) {
            panic!("{what}: results do not match {SCHEMA_FILE}:\n{e:#}");
        }
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(tag: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("schedlab-schema-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// Run the binary in the repository; returns the JSON it wrote to `json`.
fn results_of(args: &[&str], json: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .args(["-q", "--json", json.to_str().unwrap()])
        .current_dir(repo())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "schedlab {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// Every bundled scenario (one run, cut short: the shape, not the numbers, is checked).
#[test]
fn bundled_scenarios_results_match_the_schema() {
    let validator = Validator::new();
    let tmp = temp_dir("bundled");
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 10, "{scenarios:?}");
    for s in &scenarios {
        let json = tmp.0.join("run.json");
        let rel = s.strip_prefix(repo()).unwrap().to_str().unwrap();
        let doc = results_of(
            &["run", rel, "--runs", "2", "--set", "run.duration_s=0.2"],
            &json,
        );
        validator.check(rel, &doc);
    }
}

/// The optional parts: a time series (`--report`), NUMA counters, a placement, and the
/// results nested in a comparison.
#[test]
fn optional_keys_and_comparisons_match_the_schema() {
    let validator = Validator::new();
    let tmp = temp_dir("optional");
    let json = tmp.0.join("r.json");
    let report = tmp.0.join("r.html");
    let doc = results_of(
        &[
            "run",
            "scenarios/hackbench-numactl.toml",
            "--set",
            "run.duration_s=0.2",
            "--report",
            report.to_str().unwrap(),
        ],
        &json,
    );
    assert!(doc["runs"][0]["timeline"].is_object());
    validator.check("run --report", &doc);
    let doc = results_of(
        &[
            "compare",
            "scenarios/newidle-gate.toml",
            "--runs",
            "2",
            "--set",
            "run.duration_s=0.1",
        ],
        &json,
    );
    let variants = doc["variants"].as_array().unwrap();
    assert!(variants.len() >= 2);
    for v in variants {
        validator.check(v["name"].as_str().unwrap(), &v["results"]);
    }
}

#[test]
fn the_schema_rejects_what_breaks_the_contract() {
    let validator = Validator::new();
    let tmp = temp_dir("reject");
    let json = tmp.0.join("r.json");
    let mut doc = results_of(
        &["run", "scenarios/spin.toml", "--set", "run.duration_s=0.05"],
        &json,
    );
    validator.check("spin", &doc);
    doc["runs"][0]["perf_stat"]["context_switches"] = serde_json::json!("many");
    assert!(validator.schemas.validate(&doc, validator.id).is_err());
    doc.as_object_mut().unwrap().remove("runs");
    assert!(validator.schemas.validate(&doc, validator.id).is_err());
}
