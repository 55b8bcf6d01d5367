//! The two searches of `schedlab bisect`, over [`Config`]s of a [`Difference`], through a
//! [`Runner`] with a result cache and a run budget.
//!
//! Every comparison is paired: configuration `b` minus configuration `a`, seed by seed, on
//! the same seeds (common random numbers), with a 95 % Student-t interval ([`Estimate`]).
//!
//! - Total: bad − good. Seeds are added while its interval straddles zero; if it still does
//!   at [`Limits::max_seeds`], there is no difference to explain and no culprit.
//! - History order: a configuration is *bad* when its difference from good is past the
//!   midpoint of the total (interval on the far side of `total / 2`), *good* when short of
//!   it; seeds are added while the interval straddles the midpoint, and at the seed limit the
//!   point estimate decides, flagged uncertain. Binary search over the profile chain, then
//!   over the first bad release's changes in release order (prefixes).
//! - Attribution: per change, `alone` = (good + change) − good, `removed` = bad − (bad −
//!   change), `effect` = their per-seed mean (the change's contribution, averaged over the
//!   two orders), `interaction` = removed − alone. Seeds are added to a change whose effect
//!   interval straddles zero while its mean is not negligible, or overlaps the next one's
//!   among the top ranks. Then greedy forward selection: repeatedly add the change that moves
//!   (good + set) furthest towards bad, until the remaining difference is explained.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::diff::{Config, Difference};
use super::{Estimate, Metrics};
use crate::error::{InputError, InputResult};

/// Runs configurations; the real one is [`super::runner::ScenarioRunner`], tests inject a
/// synthetic one.
pub trait Runner {
    /// The identity of a configuration's resolved form: the cache key (with the seed).
    fn key(&self, cfg: &Config) -> InputResult<String>;
    /// Run every `(configuration, seed)` job (in parallel where it can); the metrics in job
    /// order, or `None` when a stop request cut the runs short.
    fn run(&self, jobs: &[(Config, u64)]) -> InputResult<Option<Vec<Metrics>>>;
}

/// Why a search stopped before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Halt {
    /// The next batch of runs would exceed `--budget`.
    Budget,
    /// SIGINT/SIGTERM.
    Interrupted,
}

/// Effort limits.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Limits {
    /// Seeds every configuration starts with (`--runs`).
    pub runs: usize,
    /// Seeds added per refinement.
    pub seed_step: usize,
    /// Most seeds for one configuration ([`MAX_SEEDS`] by default).
    pub max_seeds: usize,
    /// Most runs in total (`--budget`); cache hits are free.
    pub budget_runs: u64,
}

/// Default seeds per configuration.
pub const DEFAULT_RUNS: usize = 5;
/// Default `--budget`.
pub const DEFAULT_BUDGET_RUNS: u64 = 400;
/// Most seeds one configuration gets by adaptive refinement.
pub const MAX_SEEDS: usize = 30;
/// A remaining difference within this fraction of the total counts as explained.
pub const EXPLAINED_FRACTION: f64 = 0.1;
/// An effect below this fraction of the total gets no extra seeds.
pub const NEGLIGIBLE_FRACTION: f64 = 0.05;
/// Ranks whose interval overlap with the next rank earns extra seeds.
pub const REFINE_TOP_RANKS: usize = 3;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            runs: DEFAULT_RUNS,
            seed_step: 2,
            max_seeds: MAX_SEEDS,
            budget_runs: DEFAULT_BUDGET_RUNS,
        }
    }
}

/// One decision of the history search.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The profile, or `+ change` for a prefix within a release.
    pub label: String,
    /// The change a prefix ends with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<usize>,
    /// This configuration − good.
    pub delta: Estimate,
    pub bad: bool,
    /// Still straddling the midpoint at the seed limit: decided by the point estimate.
    pub uncertain: bool,
}

/// The history-order search.
#[derive(Clone, Debug, Default, Serialize)]
pub struct History {
    /// Profile decisions, in the order made.
    pub profiles: Vec<Step>,
    pub last_good: String,
    pub first_bad: String,
    /// Decisions within the first bad release, in the order made.
    pub steps: Vec<Step>,
    /// The first change where the metric crosses the midpoint.
    pub culprit: Option<usize>,
    /// Some decision on the path was uncertain.
    pub uncertain: bool,
}

/// One change's attribution.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub change: usize,
    pub effect: Estimate,
    pub alone: Estimate,
    pub removed: Estimate,
    pub interaction: Estimate,
}

/// The greedy selection.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Selection {
    /// In the order chosen.
    pub changes: Vec<usize>,
    /// (good + set) − good.
    pub together: Option<Estimate>,
    /// Σ alone over the set, per seed.
    pub sum_alone: Option<Estimate>,
    /// together − Σ alone.
    pub interaction: Option<Estimate>,
    /// bad − (good + set).
    pub residual: Option<Estimate>,
    pub explained: bool,
}

/// The attribution search.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Attribution {
    /// Ranked by |effect|.
    pub rows: Vec<Row>,
    pub selection: Selection,
    /// Σ alone over every change, per seed.
    pub sum_alone: Option<Estimate>,
    /// total − Σ alone.
    pub interaction: Option<Estimate>,
}

/// Everything a bisect found.
#[derive(Clone, Debug, Serialize)]
pub struct Bisection {
    pub metric: String,
    pub total: Option<Estimate>,
    pub good_mean: Option<f64>,
    pub bad_mean: Option<f64>,
    /// The total is significant (else: no culprit).
    pub differs: bool,
    pub history: Option<History>,
    pub attribution: Option<Attribution>,
    pub runs_executed: u64,
    pub cache_hits: u64,
    pub limits: Limits,
    /// Why the search stopped early, and in which stage.
    pub halted: Option<(Halt, String)>,
    /// Remarks (refinement cut by the budget, ...).
    pub notes: Vec<String>,
    /// Runs whose benchmark did not finish, used under `--allow-incomplete` (the report
    /// marks its numbers `*`); set by the caller from its runner.
    pub cut_runs: u64,
}

/// The search state: the difference, the runner, the cache and the counters.
pub struct Bisector<'a, R: Runner> {
    pub diff: &'a Difference,
    runner: &'a R,
    metric: String,
    base_seed: u64,
    limits: Limits,
    cache: BTreeMap<(String, u64), Arc<Metrics>>,
    keys: BTreeMap<Config, String>,
    pub runs_executed: u64,
    pub cache_hits: u64,
    /// The current stage, and the `(stage, key, seed)` requests already counted, so a hit
    /// counts a run reused by a later stage or another route, not a repeated request.
    stage: u8,
    served: std::collections::BTreeSet<(u8, String, u64)>,
}

type Stage<T> = Result<T, Halt>;

impl<'a, R: Runner> Bisector<'a, R> {
    pub fn new(
        diff: &'a Difference,
        runner: &'a R,
        metric: &str,
        base_seed: u64,
        limits: Limits,
    ) -> Self {
        Bisector {
            diff,
            runner,
            metric: metric.to_string(),
            base_seed,
            limits,
            cache: BTreeMap::new(),
            keys: BTreeMap::new(),
            runs_executed: 0,
            cache_hits: 0,
            stage: 0,
            served: std::collections::BTreeSet::new(),
        }
    }

    /// The metric being explained.
    pub fn metric_name(&self) -> String {
        self.metric.clone()
    }

    /// The seed of run `i` (the seeds `schedlab run` and `compare` use).
    pub fn seed(&self, i: usize) -> u64 {
        crate::rng::run_seed(self.base_seed, i as u64)
    }

    fn key(&mut self, cfg: &Config) -> InputResult<String> {
        if let Some(k) = self.keys.get(cfg) {
            return Ok(k.clone());
        }
        let k = self.runner.key(cfg)?;
        self.keys.insert(cfg.clone(), k.clone());
        Ok(k)
    }

    /// Make sure every configuration has results for seeds `0..n` (`n` capped at the seed
    /// limit): runs what the cache lacks, in one parallel batch, within the budget.
    fn ensure(&mut self, cfgs: &[Config], n: usize) -> InputResult<Stage<()>> {
        let n = n.min(self.limits.max_seeds);
        let mut jobs: Vec<(Config, u64)> = Vec::new();
        let mut job_keys: Vec<(String, u64)> = Vec::new();
        for cfg in cfgs {
            let key = self.key(cfg)?;
            for i in 0..n {
                let k = (key.clone(), self.seed(i));
                let first_ask = self.served.insert((self.stage, k.0.clone(), k.1));
                if self.cache.contains_key(&k) {
                    self.cache_hits += u64::from(first_ask);
                } else if !job_keys.contains(&k) {
                    jobs.push((cfg.clone(), k.1));
                    job_keys.push(k);
                }
            }
        }
        if jobs.is_empty() {
            return Ok(Ok(()));
        }
        if self.runs_executed + jobs.len() as u64 > self.limits.budget_runs {
            return Ok(Err(Halt::Budget));
        }
        let Some(results) = self.runner.run(&jobs)? else {
            return Ok(Err(Halt::Interrupted));
        };
        self.runs_executed += jobs.len() as u64;
        for (k, m) in job_keys.into_iter().zip(results) {
            self.cache.insert(k, Arc::new(m));
        }
        Ok(Ok(()))
    }

    /// How many leading seeds every configuration has results for.
    fn avail(&self, cfgs: &[&Config]) -> usize {
        cfgs.iter()
            .map(|c| {
                let Some(key) = self.keys.get(*c) else {
                    return 0;
                };
                (0..self.limits.max_seeds)
                    .take_while(|&i| self.cache.contains_key(&(key.clone(), self.seed(i))))
                    .count()
            })
            .min()
            .unwrap_or(0)
    }

    /// `name` of `cfg` for seeds `0..n`. Where a run lacks it: NaN for the metric, 0 for a
    /// counter (the results list only the ping-pong pairs and reasons that occurred).
    fn values_of(&self, cfg: &Config, n: usize, name: &str) -> Vec<f64> {
        let key = &self.keys[cfg];
        let missing = if name == self.metric { f64::NAN } else { 0.0 };
        (0..n)
            .map(|i| {
                self.cache[&(key.clone(), self.seed(i))]
                    .get(name)
                    .copied()
                    .unwrap_or(missing)
            })
            .collect()
    }

    fn values(&self, cfg: &Config, n: usize) -> Vec<f64> {
        self.values_of(cfg, n, &self.metric)
    }

    /// Per-seed `b − a` of metric `name` over the seeds both have.
    pub(crate) fn diffs_of(&self, a: &Config, b: &Config, name: &str) -> Vec<f64> {
        let n = self.avail(&[a, b]);
        let (va, vb) = (self.values_of(a, n, name), self.values_of(b, n, name));
        vb.iter().zip(&va).map(|(y, x)| y - x).collect()
    }

    fn diffs(&self, a: &Config, b: &Config) -> Vec<f64> {
        self.diffs_of(a, b, &self.metric)
    }

    /// The metrics of `cfg` for seed `i`, when cached.
    pub fn cached(&self, cfg: &Config, i: usize) -> Option<&Metrics> {
        let key = self.keys.get(cfg)?;
        self.cache.get(&(key.clone(), self.seed(i))).map(|m| &**m)
    }

    /// Check that the metric exists in good's first run; list the numeric fields otherwise.
    fn check_metric(&self) -> InputResult<()> {
        let Some(m) = self.cached(&self.diff.good_config(), 0) else {
            return Ok(());
        };
        if m.contains_key(&self.metric) {
            return Ok(());
        }
        let names: Vec<&str> = m
            .keys()
            .map(String::as_str)
            .filter(|k| !k.starts_with("schedstat.by_level"))
            .collect();
        Err(InputError::with_key(
            "--metric",
            self.metric.clone(),
            format!(
                "no such numeric field in the results{}; accepted: {}",
                crate::input::did_you_mean(&self.metric, &names),
                names.join(", ")
            ),
        ))
    }

    /// Run both searches.
    pub fn run(&mut self) -> InputResult<Bisection> {
        let mut out = Bisection {
            metric: self.metric.clone(),
            total: None,
            good_mean: None,
            bad_mean: None,
            differs: false,
            history: None,
            attribution: None,
            runs_executed: 0,
            cache_hits: 0,
            limits: self.limits,
            halted: None,
            notes: Vec::new(),
            cut_runs: 0,
        };
        let halt = self.searches(&mut out)?;
        out.halted = halt;
        out.runs_executed = self.runs_executed;
        out.cache_hits = self.cache_hits;
        Ok(out)
    }

    fn searches(&mut self, out: &mut Bisection) -> InputResult<Option<(Halt, String)>> {
        let at = |h: Halt, stage: &str| Some((h, stage.to_string()));
        let total = match self.total()? {
            Ok(t) => t,
            Err(h) => return Ok(at(h, "total")),
        };
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let n = total.n;
        out.good_mean = Some(crate::stats::summary::Summary::of(&self.values(&good, n)).mean);
        out.bad_mean = Some(crate::stats::summary::Summary::of(&self.values(&bad, n)).mean);
        out.total = Some(total);
        out.differs = total.significant();
        if !out.differs || self.diff.changes.is_empty() {
            return Ok(None);
        }
        self.stage = 1;
        let mut history = History::default();
        let h = self.history(total, &mut history)?;
        out.history = Some(history);
        if let Err(h) = h {
            return Ok(at(h, "history"));
        }
        self.stage = 2;
        let mut attribution = Attribution::default();
        let h = self.attribution(total, &mut attribution, &mut out.notes)?;
        out.attribution = Some(attribution);
        Ok(h.err().and_then(|h| at(h, "attribution")))
    }

    /// bad − good, with seeds added while the interval straddles zero.
    fn total(&mut self) -> InputResult<Stage<Estimate>> {
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let mut n = self.limits.runs;
        loop {
            if let Err(h) = self.ensure(&[good.clone(), bad.clone()], n)? {
                return Ok(Err(h));
            }
            self.check_metric()?;
            let t = Estimate::of(&self.diffs(&good, &bad));
            if t.significant() || t.n >= self.limits.max_seeds || t.n < n {
                return Ok(Ok(t));
            }
            n = t.n + self.limits.seed_step;
        }
    }

    /// Classify `cfg` against the midpoint of `total`.
    fn classify(
        &mut self,
        label: String,
        cfg: &Config,
        total: Estimate,
    ) -> InputResult<Stage<Step>> {
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let sign = total.mean.signum();
        let mut n = self.limits.runs;
        loop {
            if let Err(h) = self.ensure(&[good.clone(), bad.clone(), cfg.clone()], n)? {
                return Ok(Err(h));
            }
            let delta = Estimate::of(&self.diffs(&good, cfg));
            let past = Estimate {
                mean: (delta.mean - total.mean / 2.0) * sign,
                ..delta
            };
            let decided = past.significant();
            if decided || delta.n >= self.limits.max_seeds || delta.n < n {
                return Ok(Ok(Step {
                    label,
                    change: None,
                    delta,
                    bad: past.mean > 0.0,
                    uncertain: !decided,
                }));
            }
            n = delta.n + self.limits.seed_step;
        }
    }

    /// Binary search over `configs` (first good, last bad): the index of the first bad one.
    fn bisect_chain(
        &mut self,
        configs: &[(String, Option<usize>, Config)],
        total: Estimate,
        steps: &mut Vec<Step>,
    ) -> InputResult<Stage<usize>> {
        let (mut lo, mut hi) = (0, configs.len() - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let (label, change, cfg) = &configs[mid];
            let mut step = match self.classify(label.clone(), cfg, total)? {
                Ok(s) => s,
                Err(h) => return Ok(Err(h)),
            };
            step.change = *change;
            if step.bad {
                hi = mid;
            } else {
                lo = mid;
            }
            steps.push(step);
        }
        Ok(Ok(hi))
    }

    /// History order: profiles, then the first bad release's changes.
    fn history(&mut self, total: Estimate, out: &mut History) -> InputResult<Stage<()>> {
        let chain: Vec<(String, Option<usize>, Config)> = self
            .diff
            .profile_chain()
            .into_iter()
            .map(|(n, c)| (n, None, c))
            .collect();
        let hi = match self.bisect_chain(&chain, total, &mut out.profiles)? {
            Ok(i) => i,
            Err(h) => return Ok(Err(h)),
        };
        let (from, to) = (&chain[hi - 1], &chain[hi]);
        out.last_good = from.0.clone();
        out.first_bad = to.0.clone();
        let order = self.diff.changes_between(&from.2, &to.2);
        let mut prefixes = vec![(from.0.clone(), None, from.2.clone())];
        for k in 1..=order.len() {
            let cfg = self.diff.blend(&from.2, &to.2, &order[..k]);
            let label = format!("{} + {}", from.0, self.diff.changes[order[k - 1]].name);
            prefixes.push((label, Some(order[k - 1]), cfg));
        }
        if let Some(last) = prefixes.last_mut() {
            last.2 = to.2.clone();
        }
        let first = match self.bisect_chain(&prefixes, total, &mut out.steps)? {
            Ok(i) => i,
            Err(h) => return Ok(Err(h)),
        };
        out.culprit = prefixes[first].1;
        out.uncertain = out.profiles.iter().chain(&out.steps).any(|s| s.uncertain);
        Ok(Ok(()))
    }

    /// The attribution row of change `i` over the seeds available to it.
    fn row(&self, i: usize) -> Row {
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let (add, rem) = (self.diff.with_changes(&[i]), self.diff.without_change(i));
        let n = self.avail(&[&good, &bad, &add, &rem]);
        let (vg, vb) = (self.values(&good, n), self.values(&bad, n));
        let (va, vr) = (self.values(&add, n), self.values(&rem, n));
        let alone: Vec<f64> = (0..n).map(|s| va[s] - vg[s]).collect();
        let removed: Vec<f64> = (0..n).map(|s| vb[s] - vr[s]).collect();
        let effect: Vec<f64> = (0..n).map(|s| (alone[s] + removed[s]) / 2.0).collect();
        let inter: Vec<f64> = (0..n).map(|s| removed[s] - alone[s]).collect();
        Row {
            change: i,
            effect: Estimate::of(&effect),
            alone: Estimate::of(&alone),
            removed: Estimate::of(&removed),
            interaction: Estimate::of(&inter),
        }
    }

    fn ranked_rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = (0..self.diff.changes.len()).map(|i| self.row(i)).collect();
        rows.sort_by(|a, b| {
            b.effect
                .mean
                .abs()
                .total_cmp(&a.effect.mean.abs())
                .then(a.change.cmp(&b.change))
        });
        rows
    }

    /// Changes that deserve more seeds (see the module doc).
    fn to_refine(&self, rows: &[Row], total: Estimate) -> Vec<usize> {
        let negligible = NEGLIGIBLE_FRACTION * total.mean.abs();
        rows.iter()
            .enumerate()
            .filter(|(rank, r)| {
                let unsure = !r.effect.significant() && r.effect.mean.abs() >= negligible;
                let crowded = *rank < REFINE_TOP_RANKS
                    && rows
                        .get(rank + 1)
                        .is_some_and(|next| r.effect.overlaps(&next.effect))
                    && r.effect.mean.abs() >= negligible;
                r.effect.n < self.limits.max_seeds && (unsure || crowded)
            })
            .map(|(_, r)| r.change)
            .collect()
    }

    /// Singles, adaptive refinement, greedy selection.
    fn attribution(
        &mut self,
        total: Estimate,
        out: &mut Attribution,
        notes: &mut Vec<String>,
    ) -> InputResult<Stage<()>> {
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let n0 = self.limits.runs;
        let nc = self.diff.changes.len();
        let mut cfgs = vec![good.clone(), bad.clone()];
        for i in 0..nc {
            cfgs.push(self.diff.with_changes(&[i]));
            cfgs.push(self.diff.without_change(i));
        }
        if let Err(h) = self.ensure(&cfgs, n0)? {
            return Ok(Err(h));
        }
        loop {
            let rows = self.ranked_rows();
            let refine = self.to_refine(&rows, total);
            if refine.is_empty() {
                break;
            }
            for i in refine {
                let n = self.row(i).effect.n + self.limits.seed_step;
                let set = [
                    good.clone(),
                    bad.clone(),
                    self.diff.with_changes(&[i]),
                    self.diff.without_change(i),
                ];
                if self.ensure(&set, n)?.is_err() {
                    notes.push(format!(
                        "adaptive seeds stopped by the budget at {} runs",
                        self.runs_executed
                    ));
                    out.rows = self.ranked_rows();
                    return self.finish_attribution(total, out);
                }
            }
        }
        out.rows = self.ranked_rows();
        self.finish_attribution(total, out)
    }

    fn finish_attribution(
        &mut self,
        total: Estimate,
        out: &mut Attribution,
    ) -> InputResult<Stage<()>> {
        let (good, bad) = (self.diff.good_config(), self.diff.bad_config());
        let all: Vec<usize> = (0..self.diff.changes.len()).collect();
        let (sum, inter) = self.sum_alone(&all, &self.diffs(&good, &bad));
        out.sum_alone = Some(sum);
        out.interaction = Some(inter);
        self.select(total, &mut out.selection)
    }

    /// Σ alone over `set`, per seed, and `whole − Σ alone` (`whole` per seed), over the
    /// seeds every term has.
    fn sum_alone(&self, set: &[usize], whole: &[f64]) -> (Estimate, Estimate) {
        let good = self.diff.good_config();
        let terms: Vec<Vec<f64>> = set
            .iter()
            .map(|&i| self.diffs(&good, &self.diff.with_changes(&[i])))
            .collect();
        let n = terms.iter().map(Vec::len).fold(whole.len(), usize::min);
        let sum: Vec<f64> = (0..n).map(|s| terms.iter().map(|t| t[s]).sum()).collect();
        let inter: Vec<f64> = (0..n).map(|s| whole[s] - sum[s]).collect();
        (Estimate::of(&sum), Estimate::of(&inter))
    }

    /// Greedy forward selection of the smallest set explaining the total: each step adds
    /// the change that moves (good + set) furthest towards bad (the sign of the remaining
    /// difference, so an overshoot is corrected), significantly; when none does, the one
    /// whose removal from bad moves it most in that direction.
    fn select(&mut self, total: Estimate, out: &mut Selection) -> InputResult<Stage<()>> {
        self.stage = 3;
        let bad = self.diff.bad_config();
        let n = self.limits.runs;
        let explained = |r: &Estimate| {
            r.mean.abs() <= EXPLAINED_FRACTION * total.mean.abs()
                || (!r.significant() && r.mean.abs() <= 2.5 * EXPLAINED_FRACTION * total.mean.abs())
        };
        let mut cur = self.diff.good_config();
        let halt = loop {
            let residual = Estimate::of(&self.diffs(&cur, &bad));
            out.residual = Some(residual);
            if explained(&residual) {
                out.explained = true;
                break None;
            }
            let sign = residual.mean.signum();
            let cands: Vec<usize> = (0..self.diff.changes.len())
                .filter(|i| !out.changes.contains(i))
                .collect();
            if cands.is_empty() {
                break None;
            }
            let cfgs: Vec<Config> = cands
                .iter()
                .map(|&c| self.with_set(&out.changes, c))
                .collect();
            if let Err(h) = self.ensure(&cfgs, n)? {
                break Some(h);
            }
            let progress = |s: &Self, c: &Config| {
                let e = Estimate::of(&s.diffs(&cur, c));
                (e.mean * sign, e.significant())
            };
            let best = cands
                .iter()
                .zip(&cfgs)
                .map(|(&c, cfg)| (c, progress(self, cfg)))
                .filter(|(_, (p, sig))| *sig && *p > 0.0)
                .max_by(|a, b| a.1.0.total_cmp(&b.1.0).then(b.0.cmp(&a.0)))
                .map(|(c, _)| c)
                .or_else(|| self.most_needed(&cands, sign));
            let Some(best) = best else {
                break None;
            };
            out.changes.push(best);
            cur = self.diff.with_changes(&out.changes);
        };
        if !out.changes.is_empty() {
            let whole = self.diffs(&self.diff.good_config(), &cur);
            let (sum, inter) = self.sum_alone(&out.changes, &whole);
            out.together = Some(Estimate::of(&whole));
            out.sum_alone = Some(sum);
            out.interaction = Some(inter);
            out.residual = Some(Estimate::of(&self.diffs(&cur, &bad)));
        }
        Ok(halt.map_or(Ok(()), Err))
    }

    fn with_set(&self, set: &[usize], c: usize) -> Config {
        let mut s = set.to_vec();
        s.push(c);
        self.diff.with_changes(&s)
    }

    /// When no single addition moves significantly: the candidate whose removal from bad
    /// moves furthest back (significantly), i.e. the one bad needs most.
    fn most_needed(&self, cands: &[usize], sign: f64) -> Option<usize> {
        cands
            .iter()
            .map(|&c| (c, self.row(c).removed))
            .filter(|(_, r)| r.significant() && r.mean * sign > 0.0)
            .max_by(|a, b| {
                (a.1.mean * sign)
                    .total_cmp(&(b.1.mean * sign))
                    .then(b.0.cmp(&a.0))
            })
            .map(|(c, _)| c)
    }
}
