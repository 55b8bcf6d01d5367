//! The real [`Runner`]: each configuration resolved to a scenario and run on the
//! experiment's parallel pool ([`crate::experiment::run_seeds_in`], the entry point
//! `compare` uses), configurations of one batch side by side.

use crate::experiment::scenario::ResolvedScenario;
use std::collections::BTreeMap;

use super::Metrics;
use super::diff::{Config, Difference};
use super::search::Runner;
use crate::config::scenario::Scenario;
use crate::error::InputResult;
use crate::experiment::{self, RunContext, RunOutput};

/// Runs configurations of a [`Difference`] as scenarios.
pub struct ScenarioRunner<'a> {
    pub diff: &'a Difference,
    /// The stop flag and progress counter (its progress bar should be off: batches run
    /// several configurations at once).
    pub ctx: &'a RunContext,
    /// Print one line per batch on stderr.
    pub verbose: bool,
    /// Use runs whose benchmark did not finish (`--allow-incomplete`) instead of refusing.
    pub allow_incomplete: bool,
    /// How many such runs were used ([`super::Bisection::cut_runs`]).
    pub cut_runs: std::sync::atomic::AtomicU64,
}

/// Refuse a run whose benchmark did not finish unless `allow` (then warn once).
fn check_finished(
    ctx: &RunContext,
    scn: &Scenario,
    run: &RunOutput,
    allow: bool,
) -> InputResult<()> {
    if run.workload_complete {
        return Ok(());
    }
    let cause = experiment::cut_cause(scn, run.end_ns);
    if allow {
        ctx.warn_once(format!(
            "bisect: the benchmark did not finish ({cause}); used anyway (--allow-incomplete)"
        ));
        return Ok(());
    }
    Err(crate::error::InputError::with_key(
        "bisect",
        "run.duration_s",
        format!(
            "the benchmark did not finish in the run of seed {} ({cause}): its numbers are not \
             the benchmark's; accepted: a run.duration_s long enough for the benchmark to \
             finish, or --allow-incomplete to bisect on cut runs",
            run.seed
        ),
    ))
}

/// The cache identity of a resolved scenario: what a run depends on (machine, kernel,
/// workload, run settings), as canonical JSON.
pub fn config_key(scn: &Scenario) -> String {
    serde_json::json!({
        "machine": scn.machine,
        "kernel": {
            "version": scn.kernel.version,
            "mode": scn.kernel.mode,
            "policy": scn.kernel.policy,
            "features": scn.kernel.features,
            "sysctl": scn.kernel.sysctl,
        },
        "workload": scn.workload,
        "run": scn.run,
    })
    .to_string()
}

/// The numeric metrics of a run.
pub fn metrics_of(run: &RunOutput) -> Metrics {
    run.result.metrics().into_iter().collect()
}

/// One configuration of a batch: its scenario, resolved, and its jobs (index, seed).
type ConfigRuns = (Scenario, ResolvedScenario, Vec<(usize, u64)>);

impl Runner for ScenarioRunner<'_> {
    fn key(&self, cfg: &Config) -> InputResult<String> {
        Ok(config_key(&self.diff.scenario(cfg)?))
    }

    fn run(&self, jobs: &[(Config, u64)]) -> InputResult<Option<Vec<Metrics>>> {
        use rayon::prelude::*;
        let mut groups: BTreeMap<&Config, Vec<(usize, u64)>> = BTreeMap::new();
        for (i, (cfg, seed)) in jobs.iter().enumerate() {
            groups.entry(cfg).or_default().push((i, *seed));
        }
        // Every configuration of the batch is resolved (machine, workload, plan of the first
        // seed) before any of its runs starts: a bad mix is reported up front, not from
        // inside the parallel pool.
        let groups: Vec<ConfigRuns> = groups
            .into_iter()
            .map(|(cfg, js)| {
                let scn = self.diff.scenario(cfg)?;
                let resolved = ResolvedScenario::resolve(&scn, &self.ctx.imports)?;
                Ok((scn, resolved, js))
            })
            .collect::<InputResult<_>>()?;
        if self.verbose {
            eprintln!(
                "schedlab: bisect: {} runs of {} configurations",
                jobs.len(),
                groups.len()
            );
        }
        let outs: Vec<InputResult<Vec<RunOutput>>> = groups
            .par_iter()
            .map(|(_, resolved, js)| {
                let seeds: Vec<u64> = js.iter().map(|j| j.1).collect();
                experiment::run_resolved_seeds_in(self.ctx, resolved, &seeds, "bisect")
            })
            .collect();
        let mut results: Vec<Option<Metrics>> = vec![None; jobs.len()];
        for ((scn, _, js), out) in groups.iter().zip(outs) {
            let out = out?;
            if out.len() < js.len() || self.ctx.stopped() {
                return Ok(None);
            }
            for ((i, _), run) in js.iter().zip(&out) {
                check_finished(self.ctx, scn, run, self.allow_incomplete)?;
                self.cut_runs.fetch_add(
                    u64::from(!run.workload_complete),
                    std::sync::atomic::Ordering::Relaxed,
                );
                results[*i] = Some(metrics_of(run));
            }
        }
        Ok(results.into_iter().collect())
    }
}
