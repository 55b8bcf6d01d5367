//! Fuzz target: the two inputs `schedlab report` reads — a results JSON
//! (`report::render_file`, `ReportDoc::from_json` + `render`) and a run's ftrace text trace
//! (`stats::timeline::from_ftrace`, and `report::render_file_with_trace` end to end). Every
//! input is bounded (a short run's results and at most 400 trace lines, plus a few edits), and
//! every case must return: a page, or an error on one line. See `tests/fuzz_common/mod.rs`
//! for the driver and the long-run command.

use crate::fuzz_common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use fuzz_common::{TempDir, fuzz, mutated, one_line, token_soup};
use proptest::prelude::*;
use proptest::sample::Index;
use schedlab::report::{self, ReportDoc};
use serde_json::Value;

/// Trace lines of the corpus (a bounded input: the head of a short run's trace).
const TRACE_LINES_MAX: usize = 400;

/// A short run's results JSON and ftrace text trace, written once by the binary.
struct Corpus {
    _dir: TempDir,
    results: PathBuf,
    results_text: String,
    trace_chunks: Vec<String>,
    nr_cpus: usize,
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = TempDir::new("report");
        let (results, trace) = (dir.0.join("a.json"), dir.0.join("a.txt"));
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(["run", "-m", "hybrid-10", "--json"])
            .arg(&results)
            .arg("--trace")
            .arg(&trace)
            .args(["--", "hackbench", "-g", "1", "-l", "5"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("schedlab runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results_text = std::fs::read_to_string(&results).unwrap();
        let lines: Vec<String> = std::fs::read_to_string(&trace)
            .unwrap()
            .lines()
            .take(TRACE_LINES_MAX)
            .map(str::to_string)
            .collect();
        assert!(lines.len() > 40, "a trace to mutate: {} lines", lines.len());
        // The whole head, and shorter pieces of it (so an edit is a larger share).
        let mut trace_chunks = vec![lines.join("\n")];
        trace_chunks.extend(lines.chunks(40).map(|c| c.join("\n")));
        Corpus {
            _dir: dir,
            results,
            results_text,
            trace_chunks,
            nr_cpus: 10,
        }
    })
}

/// `text` written to a fresh file named `name` in a scratch directory.
fn written(dir: &TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.0.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A page or one error line: anything else (a panic) fails the case.
fn page_or_one_line(r: schedlab::error::InputResult<String>) -> Result<(), TestCaseError> {
    match r {
        Ok(page) => {
            prop_assert!(page.starts_with("<!DOCTYPE html>"), "not a page");
            Ok(())
        }
        Err(e) => one_line(&e),
    }
}

/// The JSON pointers of every node of `v` (objects and arrays walked in order).
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Values that stress a reader of typed results: wrong types, extreme numbers, empties.
fn odd_value(k: u8) -> Value {
    match k {
        0 => Value::Null,
        1 => serde_json::json!(-1),
        2 => serde_json::json!(1e308),
        3 => serde_json::json!(u64::MAX),
        4 => serde_json::json!("x"),
        5 => serde_json::json!([]),
        6 => serde_json::json!({}),
        7 => serde_json::json!(true),
        8 => serde_json::json!(0),
        _ => serde_json::json!([[0, 1], [1, 0]]),
    }
}

/// Character edits of the results file, read through `report::render_file` (the file
/// reader, the JSON parser and the typed results).
#[test]
fn fuzz_report_results_mutated() {
    let c = corpus();
    let dir = TempDir::new("report-results");
    fuzz(
        "report-results-mutated",
        300,
        mutated(vec![c.results_text.clone()], 8),
        |text| page_or_one_line(report::render_file(&written(&dir, "r.json", &text))),
    );
}

/// Valid JSON with up to four nodes replaced by values of the wrong type or size (or
/// removed): `ReportDoc::from_json` refuses it on one line or the page is drawn.
#[test]
fn fuzz_report_results_structural() {
    let c = corpus();
    let doc: Value = serde_json::from_str(&c.results_text).unwrap();
    let mut all = Vec::new();
    pointers(&doc, String::new(), &mut all);
    fuzz(
        "report-results-structural",
        300,
        proptest::collection::vec((any::<Index>(), 0u8..11), 1..=4),
        |edits| {
            let mut v = doc.clone();
            for (at, kind) in edits {
                let ptr = at.get(&all);
                if ptr.is_empty() {
                    continue;
                }
                let (parent, key) = ptr.rsplit_once('/').unwrap();
                let removed = kind == 10
                    && match v.pointer_mut(parent) {
                        Some(Value::Object(m)) => m
                            .remove(&key.replace("~1", "/").replace("~0", "~"))
                            .is_some(),
                        _ => false,
                    };
                if !removed && let Some(x) = v.pointer_mut(ptr) {
                    *x = odd_value(kind);
                }
            }
            match ReportDoc::from_json("fuzz.json", &v) {
                Ok(d) => {
                    prop_assert!(report::render(&d).starts_with("<!DOCTYPE html>"));
                    Ok(())
                }
                Err(e) => one_line(&e),
            }
        },
    );
}

/// Edited traces (and token soup) parsed alone for any CPU count.
#[test]
fn fuzz_report_ftrace_parse() {
    let c = corpus();
    fuzz(
        "report-ftrace",
        1000,
        (
            prop_oneof![
                3 => mutated(c.trace_chunks.clone(), 8),
                1 => token_soup(
                    &[
                        " [000] ",
                        " [999] ",
                        "d... ",
                        "0.000001: ",
                        "1.5: ",
                        "sched_switch: ",
                        "next_pid=",
                        "prev_pid=",
                        "tracing_mark_write: I|",
                        "|migrate ",
                        "numa ",
                        "wakeup ",
                        "0->1",
                        "9->0",
                        "#",
                    ],
                    "",
                ),
            ],
            1usize..=16,
        ),
        |(text, nr_cpus)| {
            if let Err(e) = schedlab::stats::timeline::from_ftrace(text.as_bytes(), nr_cpus) {
                one_line(&e)?;
            }
            Ok(())
        },
    );
}

/// Edited traces given to `report --trace` with the run's own results, end to end.
#[test]
fn fuzz_report_with_trace() {
    let c = corpus();
    let dir = TempDir::new("report-trace");
    fuzz(
        "report-with-trace",
        150,
        mutated(c.trace_chunks.clone(), 8),
        |text| {
            let trace = written(&dir, "t.txt", &text);
            page_or_one_line(report::render_file_with_trace(&c.results, Some(&trace)))
        },
    );
}

/// The corpus run is the machine the trace parser is given (10 CPUs of hybrid-10), and an
/// unedited trace head draws a page: the targets start from inputs that work.
#[test]
fn the_corpus_is_valid() {
    let c = corpus();
    let head = &c.trace_chunks[0];
    assert!(schedlab::stats::timeline::from_ftrace(head.as_bytes(), c.nr_cpus).is_ok());
    let dir = TempDir::new("report-valid");
    // A whole trace ends with schedlab's end line; the head is given one.
    let whole = format!("{head}{}", schedlab::stats::trace::ftrace::END_MARKER);
    let trace = written(&dir, "t.txt", &whole);
    let page = report::render_file_with_trace(&c.results, Some(&trace)).unwrap();
    assert!(
        page.contains("data-plot=\"heatmap-run\""),
        "drawn from the trace"
    );
}
