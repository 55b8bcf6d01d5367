//! Executing a sweep's runs: those of a shard (`--shard K/N`: indices `i` with `i % N == K`)
//! or one run (`--index I`) that have no result yet, in parallel on a rayon pool. Each
//! result goes to a temporary file that is fsync'ed and renamed to `results/ID.json` only
//! when the run completed ([`crate::output`]), so a rerun skips exactly the finished runs and
//! a SIGKILL leaves at most a `.ID.json.tmp.PID` file, which nothing reads.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::{Manifest, PlannedRun, result_path};
use crate::error::{InputError, InputResult};
use crate::experiment::{self, RunContext};
use crate::stats::trace::Instruments;

/// Which runs of the manifest to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    All,
    /// `K/N`: runs with `index % N == K` (`K` from 0, as `$SLURM_ARRAY_TASK_ID`).
    Shard {
        k: usize,
        n: usize,
    },
    Index(usize),
}

impl Selection {
    /// Parse `K/N`.
    pub fn parse_shard(s: &str) -> Result<Selection, String> {
        let accepted = "accepted: K/N with 0 <= K < N (e.g. 0/4; K is $SLURM_ARRAY_TASK_ID)";
        let (k, n) = s.split_once('/').ok_or_else(|| accepted.to_string())?;
        match (k.trim().parse::<usize>(), n.trim().parse::<usize>()) {
            (Ok(k), Ok(n)) if k < n => Ok(Selection::Shard { k, n }),
            _ => Err(accepted.to_string()),
        }
    }

    /// Whether run `index` is in the selection.
    pub fn contains(self, index: usize) -> bool {
        match self {
            Selection::All => true,
            Selection::Shard { k, n } => index % n == k,
            Selection::Index(i) => index == i,
        }
    }
}

/// What `sweep run` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Runs in the selection.
    pub selected: usize,
    /// Runs skipped because their result existed.
    pub skipped: usize,
    /// Runs executed and written.
    pub ran: usize,
    /// Of `ran`, those whose benchmark did not finish (cut by `run.duration_s` or the time
    /// cap): written, and marked `workload_complete: false`.
    pub cut: usize,
    /// Runs stopped by a signal (nothing written).
    pub stopped: usize,
    /// `(index, message)` of runs that failed.
    pub failed: Vec<(usize, String)>,
}

/// Test hook (environment): `SCHEDLAB_SWEEP_TEST_KILL_AT=K` — when this process is about to
/// rename its K-th result (from 0) into place, it writes the temporary file and then
/// SIGKILLs itself, the worst moment for a kill.
pub const KILL_AT_ENV: &str = "SCHEDLAB_SWEEP_TEST_KILL_AT";

/// The result document of one run.
fn result_doc(m: &Manifest, run: &PlannedRun, out: &experiment::RunOutput) -> serde_json::Value {
    let axes: serde_json::Map<String, serde_json::Value> = run
        .axes
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    json!({
        "schedlab_version": m.schedlab_version,
        "id": run.id,
        "index": run.index,
        "seed": run.seed,
        "axes": axes,
        "scenario": run.scenario_toml,
        "workload_complete": out.workload_complete,
        "run": out.result.to_json(),
    })
}

/// Write one result atomically (see the module docs; honours [`KILL_AT_ENV`]).
fn write_result(dir: &Path, id: &str, doc: &serde_json::Value, nth: usize) -> InputResult<()> {
    use std::io::Write;
    let mut text = serde_json::to_string_pretty(doc).expect("JSON serializes");
    text.push('\n');
    let dest = result_path(dir, id);
    let (mut file, pending) = crate::output::Pending::create("sweep result", &dest)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| {
            InputError::with_key(
                "sweep result",
                dest.display().to_string(),
                format!("cannot write: {e}"),
            )
        })?;
    drop(file);
    if std::env::var(KILL_AT_ENV).ok().and_then(|v| v.parse().ok()) == Some(nth) {
        let _ = signal_hook::low_level::raise(signal_hook::consts::SIGKILL);
    }
    pending.commit()
}

/// Execute the selected runs without a result on `jobs` threads. `on_done` is called after
/// every run (for a progress bar). Stops starting runs once `ctx` is stopped.
pub fn run(
    ctx: &RunContext,
    dir: &Path,
    m: &Manifest,
    sel: Selection,
    jobs: usize,
    on_done: &(dyn Fn(&RunReport) + Sync),
) -> InputResult<RunReport> {
    use rayon::prelude::*;
    if let Selection::Index(i) = sel
        && i >= m.runs.len()
    {
        return Err(InputError::with_key(
            "--index",
            i.to_string(),
            format!(
                "accepted: 0 to {} (the sweep has {} runs)",
                m.runs.len().saturating_sub(1),
                m.runs.len()
            ),
        ));
    }
    std::fs::create_dir_all(dir.join(super::RESULTS)).map_err(|e| {
        InputError::new(
            dir.display().to_string(),
            format!("cannot create results/: {e}"),
        )
    })?;
    let selected: Vec<&PlannedRun> = m.runs.iter().filter(|r| sel.contains(r.index)).collect();
    let pending: Vec<&PlannedRun> = selected
        .iter()
        .copied()
        .filter(|r| !super::finished(dir, &r.id))
        .collect();
    let report = Mutex::new(RunReport {
        selected: selected.len(),
        skipped: selected.len() - pending.len(),
        ..RunReport::default()
    });
    let written = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| InputError::new("--jobs", format!("cannot start threads: {e}")))?;
    pool.install(|| {
        pending.par_iter().for_each(|run| {
            if ctx.stopped() {
                report.lock().expect("report").stopped += 1;
                return;
            }
            let outcome = one_run(ctx, dir, m, run, &written);
            let mut rep = report.lock().expect("report");
            match outcome {
                Ok(Some(finished)) => {
                    rep.ran += 1;
                    rep.cut += usize::from(!finished);
                }
                Ok(None) => rep.stopped += 1,
                Err(e) => rep.failed.push((run.index, e.to_string())),
            }
            on_done(&rep);
        })
    });
    let mut rep = report.into_inner().expect("report");
    rep.failed.sort();
    Ok(rep)
}

/// Run one planned run and write its result: whether its benchmark finished
/// ([`experiment::RunOutput::workload_complete`]), `None` when a stop request cut it short
/// (nothing written).
fn one_run(
    ctx: &RunContext,
    dir: &Path,
    m: &Manifest,
    run: &PlannedRun,
    written: &AtomicUsize,
) -> InputResult<Option<bool>> {
    let scn = m.scenario(run)?;
    let (out, _) = experiment::run_once_in(ctx, &scn, run.seed, Instruments::default())?;
    if !out.complete {
        return Ok(None);
    }
    let nth = written.fetch_add(1, Ordering::SeqCst);
    write_result(dir, &run.id, &result_doc(m, run, &out), nth)?;
    Ok(Some(out.workload_complete))
}
