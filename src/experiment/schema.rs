//! The JSON Schema of the results file (`run --json`; each `variants[].results` of `compare
//! --json`), generated from the result types themselves ([`RunResult`], [`Summary`], the
//! [`Scenario`] block), so it cannot drift from what serde writes. The checked-in copy is
//! `docs/results.schema.json`; `tests/results_schema.rs` fails when it is stale
//! (`SCHEDLAB_UPDATE_SCHEMA=1` rewrites it) and validates every bundled scenario's results
//! against it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::scenario::Scenario;
use crate::stats::report::RunResult;
use crate::stats::summary::Summary;

/// The results document as [`super::results_json_stopped`] writes it (a description for the
/// schema only: the document itself is assembled key by key).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(
    title = "schedlab results",
    description = "The results file of `schedlab run --json` (and each `variants[].results` of \
                   `schedlab compare --json`). Keys may be added in later versions; none is \
                   renamed or removed. Non-finite numbers are written as null."
)]
struct ResultsFile {
    /// The schedlab version that wrote the file.
    schedlab_version: String,
    /// False when a signal stopped the runs: `runs` then holds only those that finished.
    complete: bool,
    /// `SIGINT` or `SIGTERM`, when a signal stopped the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped_reason: Option<String>,
    /// The fully resolved scenario (with `workload.placement`, the resolved placement, when
    /// there is one).
    scenario: Scenario,
    /// One entry per run, in seed order.
    runs: Vec<RunResult>,
    /// Every numeric metric of the runs by dotted path (`perf_stat.context_switches`,
    /// `workload.time_s`, ...): mean, standard deviation and friends over the runs.
    summary: BTreeMap<String, Summary>,
}

/// The results file's JSON Schema (draft 2020-12), as checked in at
/// `docs/results.schema.json`.
pub fn results_schema() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    let schema = settings
        .into_generator()
        .into_root_schema_for::<ResultsFile>();
    let mut v = schema.to_value();
    allow_null_numbers(&mut v);
    v
}

/// serde_json writes a non-finite float (a mean over no runs, a ratio of zero) as `null`:
/// every `"type": "number"` becomes `["number", "null"]`.
fn allow_null_numbers(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("type") == Some(&Value::String("number".into())) {
                map.insert("type".into(), serde_json::json!(["number", "null"]));
            }
            for child in map.values_mut() {
                allow_null_numbers(child);
            }
        }
        Value::Array(list) => list.iter_mut().for_each(allow_null_numbers),
        _ => {}
    }
}
