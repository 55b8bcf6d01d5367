//! Sweeps: a grid of configurations (machines x profiles x features x `--set` keys x
//! benchmark arguments x seeds) planned into a manifest of content-addressed runs, executed
//! locally or as a Slurm job array (each run's result a file written atomically, so a rerun
//! skips what finished and a killed run leaves nothing that looks finished), and merged into
//! one SQLite database (docs/sweep.md).
//!
//! Layout of a sweep directory:
//! - `manifest.json`: every run (index, id, axis values, seed, the resolved scenario as TOML);
//! - `results/ID.json`: one finished run (renamed into place only when complete);
//! - `slurm/`: the job scripts `schedlab sweep slurm` writes, and their logs.
//!
//! A run's id is [`run_id`]: FNV-1a (128 bit) over the schedlab version, the canonical
//! resolved scenario (its JSON, keys sorted, without the `source` path) and the seed. The
//! same configuration gets the same id on every machine and in every plan; any change to it
//! (or another schedlab version) gives another id.

pub mod db;
pub mod exec;
pub mod grid;
pub mod query;
pub mod slurm;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::ScenarioDoc;
use crate::config::scenario::Scenario;
use crate::error::{InputError, InputResult};
use grid::Grid;

/// The manifest's file name in a sweep directory.
pub const MANIFEST: &str = "manifest.json";
/// The results directory in a sweep directory.
pub const RESULTS: &str = "results";

/// One planned run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub index: usize,
    pub id: String,
    pub seed: u64,
    /// `(axis, value)` in axis order.
    pub axes: Vec<(String, String)>,
    /// The resolved scenario document (one run, this seed) as TOML.
    pub scenario_toml: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schedlab_version: String,
    /// The grid file it was planned from.
    pub grid: String,
    pub description: Option<String>,
    /// Axis names in expansion order.
    pub axes: Vec<String>,
    /// Directory that relative paths of the base scenario resolve against.
    pub base_dir: Option<PathBuf>,
    pub runs: Vec<PlannedRun>,
}

/// 128-bit FNV-1a (offset basis and prime from the FNV reference).
pub fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    for &b in bytes {
        h ^= u128::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// The content-addressed id of a run: 32 hex digits of [`fnv1a_128`] over
/// `schedlab-sweep-v1\n{version}\n{canonical scenario JSON}\n{seed}`.
pub fn run_id(scn: &Scenario, seed: u64) -> String {
    let mut v = serde_json::to_value(scn).expect("the scenario serializes");
    if let Some(m) = v.as_object_mut() {
        m.remove("source");
    }
    let canonical = serde_json::to_string(&v).expect("JSON serializes");
    let text = format!(
        "schedlab-sweep-v1\n{}\n{canonical}\n{seed}",
        crate::experiment::SCHEDLAB_VERSION
    );
    format!("{:032x}", fnv1a_128(text.as_bytes()))
}

/// Expand a grid into its manifest (every configuration parsed and checked).
pub fn plan(grid: &Grid) -> InputResult<Manifest> {
    let mut runs = Vec::new();
    let mut checked = BTreeSet::new();
    let imports = crate::experiment::scenario::Imports::default();
    let mut ids: std::collections::BTreeMap<String, usize> = Default::default();
    for (index, point) in grid.points().iter().enumerate() {
        let doc = grid.scenario_doc(point)?;
        let scenario_toml = toml::to_string(&doc.table).map_err(|e| {
            InputError::new(
                grid.origin.clone(),
                format!("cannot write the scenario: {e}"),
            )
        })?;
        let scn = grid.checked(Scenario::from_doc(doc)?)?;
        let seed = grid.seed(point);
        resolve_once(&scn, &imports, &mut checked).map_err(|mut e| {
            e.origin = format!("{} (run {index})", grid.origin);
            e
        })?;
        let id = run_id(&scn, seed);
        if let Some(&twin) = ids.get(&id) {
            let twin: &PlannedRun = &runs[twin];
            return Err(InputError::with_key(
                grid.origin.clone(),
                "axes",
                format!(
                    "runs {} and {index} resolve to the same configuration and seed ({} and {}); \
                     accepted: axis values that change the configuration (a feature that is \
                     already the profile's default changes nothing)",
                    twin.index,
                    labels(&twin.axes),
                    labels(&grid.labels(point))
                ),
            ));
        }
        ids.insert(id.clone(), index);
        runs.push(PlannedRun {
            index,
            id,
            seed,
            axes: grid.labels(point),
            scenario_toml,
        });
    }
    Ok(Manifest {
        schedlab_version: crate::experiment::SCHEDLAB_VERSION.to_string(),
        grid: grid.origin.clone(),
        description: grid.description.clone(),
        axes: grid.axes.iter().map(|a| a.name.clone()).collect(),
        base_dir: grid
            .scenario
            .as_deref()
            .and_then(Path::parent)
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        runs,
    })
}

fn labels(axes: &[(String, String)]) -> String {
    axes.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Resolve the machine, cost model and workload of `scn` (what a run does before it starts)
/// once per distinct machine and workload, so that a name only the topology or workload
/// module checks (a preset, a benchmark option) fails the plan, not a run on a cluster.
fn resolve_once(
    scn: &Scenario,
    imports: &crate::experiment::scenario::Imports,
    done: &mut BTreeSet<String>,
) -> InputResult<()> {
    let key = serde_json::to_string(&(&scn.machine, &scn.workload, &scn.run.max_tasks))
        .expect("JSON serializes");
    if done.contains(&key) {
        return Ok(());
    }
    crate::experiment::scenario::ResolvedScenario::resolve(scn, imports)?;
    done.insert(key);
    Ok(())
}

impl Manifest {
    /// Read `DIR/manifest.json`.
    pub fn load(dir: &Path) -> InputResult<Manifest> {
        let path = dir.join(MANIFEST);
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            InputError::new(
                origin.clone(),
                format!(
                    "cannot read the sweep manifest: {e}; accepted: a directory made by \
                     `schedlab sweep plan GRID.toml -o DIR`"
                ),
            )
        })?;
        serde_json::from_str(&text)
            .map_err(|e| InputError::new(origin, format!("not a sweep manifest: {e}")))
    }

    /// The scenario of a planned run, checked against its id: a manifest planned by another
    /// schedlab version (or edited) is refused rather than run under the wrong id.
    pub fn scenario(&self, run: &PlannedRun) -> InputResult<Scenario> {
        let origin = format!("{} (run {})", self.grid, run.index);
        let mut doc = ScenarioDoc::parse(&run.scenario_toml, origin.clone())?;
        doc.base_dir = self.base_dir.clone();
        let scn = Scenario::from_doc(doc)?;
        let id = run_id(&scn, run.seed);
        if id != run.id {
            return Err(InputError::new(
                origin,
                format!(
                    "the run's configuration hashes to {id}, not to the manifest's {}: the sweep \
                     was planned by schedlab {} (this is {}) or the manifest was edited; \
                     accepted: plan the grid again with this schedlab",
                    run.id,
                    self.schedlab_version,
                    crate::experiment::SCHEDLAB_VERSION
                ),
            ));
        }
        Ok(scn)
    }
}

/// The result file of run `id` in sweep directory `dir`.
pub fn result_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(RESULTS).join(format!("{id}.json"))
}

/// Whether run `id` has a whole result (finished; its benchmark may have been cut short,
/// [`ResultState::Cut`]): results are renamed into place only when complete, so a file that
/// is not a whole result ([`result_state`]) was damaged afterwards (cut, edited, a disk
/// fault) and the run counts as not finished — `sweep run` runs it again.
pub fn finished(dir: &Path, id: &str) -> bool {
    matches!(result_state(dir, id), ResultState::Whole | ResultState::Cut)
}

/// What is at a run's result path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultState {
    Missing,
    /// A file that is not a whole result.
    Damaged,
    /// A whole result whose benchmark finished.
    Whole,
    /// A whole result whose benchmark did not finish (the run ended at `run.duration_s` or
    /// the time cap first): kept, as a rerun would cut it the same way, and marked in
    /// `sweep table`.
    Cut,
}

/// A result file as [`exec`] writes it, read strictly: the typed run results with every key
/// a run always writes, under the id of the run it belongs to.
#[derive(serde::Deserialize)]
struct ResultDoc {
    id: String,
    #[allow(dead_code)]
    schedlab_version: String,
    #[allow(dead_code)]
    index: usize,
    #[allow(dead_code)]
    seed: serde::de::IgnoredAny,
    /// Absent in results written before it was recorded: then from `run.workload.complete`.
    workload_complete: Option<bool>,
    run: serde_json::Map<String, serde_json::Value>,
}

/// Whether a run's results are whole: typed (each value of the right type) and with every
/// key [`RunResult`](crate::stats::report::RunResult) always writes; then whether its
/// benchmark finished ([`benchmark_finished`]).
fn read_run(
    recorded: Option<bool>,
    run: serde_json::Map<String, serde_json::Value>,
) -> Option<bool> {
    use crate::stats::report::RunResult;
    let always = RunResult::default().to_json();
    let keys = always.as_object().expect("the run results are an object");
    if !keys.keys().all(|k| run.contains_key(k)) {
        return None;
    }
    let r: RunResult = serde_json::from_value(serde_json::Value::Object(run)).ok()?;
    Some(benchmark_finished(recorded, &r))
}

/// Whether a run's benchmark finished: the result file's `workload_complete` (`recorded`,
/// absent in results written before it was) is not false, and no workload of the run has
/// `complete = false`.
pub fn benchmark_finished(recorded: Option<bool>, r: &crate::stats::report::RunResult) -> bool {
    let done = |w: &crate::stats::report::WorkloadMetrics| {
        w.0.get("complete").and_then(serde_json::Value::as_bool) != Some(false)
    };
    recorded != Some(false) && done(&r.workload) && r.more_workloads.iter().all(done)
}

/// [`ResultState`] of run `id` (reads the file; no values are kept).
pub fn result_state(dir: &Path, id: &str) -> ResultState {
    let path = result_path(dir, id);
    let Ok(file) = std::fs::File::open(&path) else {
        return ResultState::Missing;
    };
    let reader = std::io::BufReader::new(file);
    let Ok(doc) = serde_json::from_reader::<_, ResultDoc>(reader) else {
        return ResultState::Damaged;
    };
    if doc.id != id {
        return ResultState::Damaged;
    }
    match read_run(doc.workload_complete, doc.run) {
        None => ResultState::Damaged,
        Some(true) => ResultState::Whole,
        Some(false) => ResultState::Cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_the_reference_vectors() {
        // FNV-1a 128 test vectors (draft-eastlake-fnv).
        assert_eq!(fnv1a_128(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
    }
}
