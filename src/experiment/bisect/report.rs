//! What `schedlab bisect` prints and writes: the total, the changes, the history-order
//! decisions, the LKML-style ranked table (change | introduced in | effect with 95 % CI |
//! alone from good | alone removed from bad | interaction), the smallest explaining set, and
//! for the top changes the mechanism counters that moved with them (any counter of the
//! results: migrations by reason, schedstat balancing and wakeup counters, context switches).

use serde::Serialize;
use serde_json::{Value, json};

use super::Estimate;
use super::diff::Difference;
use super::search::{Bisection, Bisector, Runner, Selection, Step};
use crate::stats::compare::{classify, decimals_for};

/// How many top changes get a counter block.
pub const TOP_CHANGES_WITH_COUNTERS: usize = 3;
/// Most counters listed per change.
pub const COUNTERS_PER_CHANGE: usize = 10;

/// A counter that moved with a change.
#[derive(Clone, Debug, Serialize)]
pub struct CounterMove {
    pub counter: String,
    /// Mean over good's runs.
    pub good_mean: f64,
    /// Mean over bad's runs.
    pub bad_mean: f64,
    /// (good + change) − good.
    pub alone: Estimate,
    /// bad − (bad − change).
    pub removed: Estimate,
}

/// The category of a mechanism counter (its listing order), or `None` for the benchmark's
/// own numbers and for `schedstat.totals` sums that repeat the per-level counters (the
/// wakeup-placement `ttwu_*` totals are kept).
fn counter_category(name: &str) -> Option<u8> {
    if name.starts_with("migrations.") {
        Some(0)
    } else if name == "perf_stat.context_switches" || name == "perf_stat.cpu_migrations" {
        Some(1)
    } else if name.starts_with("schedstat.totals.ttwu_") {
        Some(2)
    } else if name.starts_with("schedstat.by_idle_type.") {
        Some(3)
    } else if name.starts_with("schedstat.by_level.") {
        Some(4)
    } else {
        None
    }
}

/// Most counters listed per category and change.
const COUNTERS_PER_CATEGORY: usize = 3;

/// Mean of counter `k` over the first `n` cached seeds of `cfg`.
fn mean_of<R: Runner>(b: &Bisector<R>, cfg: &super::Config, k: &str, n: usize) -> f64 {
    let v: Vec<f64> = (0..n)
        .filter_map(|s| b.cached(cfg, s).map(|m| m.get(k).copied().unwrap_or(0.0)))
        .collect();
    crate::stats::summary::Summary::of(&v).mean
}

/// The counters that moved significantly with change `i` (alone from good or removed from
/// bad): per category (migrations, perf, wakeup placement, balancing by idle type, by
/// level) the largest relative moves.
pub fn mechanism_counters<R: Runner>(b: &Bisector<R>, i: usize) -> Vec<CounterMove> {
    let d = b.diff;
    let (good, bad) = (d.good_config(), d.bad_config());
    let (add, rem) = (d.with_changes(&[i]), d.without_change(i));
    let Some(first) = b.cached(&good, 0) else {
        return Vec::new();
    };
    let mut moves: Vec<(u8, f64, CounterMove)> = first
        .keys()
        .filter(|k| *k != &b.metric_name())
        .filter_map(|k| {
            let cat = counter_category(k)?;
            let alone = Estimate::of(&b.diffs_of(&good, &add, k));
            let removed = Estimate::of(&b.diffs_of(&rem, &bad, k));
            if !alone.significant() && !removed.significant() {
                return None;
            }
            let good_mean = mean_of(b, &good, k, alone.n);
            let bad_mean = mean_of(b, &bad, k, removed.n);
            let size = alone.mean.abs().max(removed.mean.abs())
                / good_mean.abs().max(bad_mean.abs()).max(1.0);
            let m = CounterMove {
                counter: k.clone(),
                good_mean,
                bad_mean,
                alone,
                removed,
            };
            Some((cat, size, m))
        })
        .collect();
    moves.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.counter.cmp(&b.2.counter))
    });
    let mut per_cat = [0usize; 5];
    moves
        .into_iter()
        .filter(|(cat, _, _)| {
            per_cat[*cat as usize] += 1;
            per_cat[*cat as usize] <= COUNTERS_PER_CATEGORY
        })
        .take(COUNTERS_PER_CHANGE)
        .map(|(_, _, m)| m)
        .collect()
}

/// `-30.10 +- 4.00`.
fn est(e: &Estimate, dec: usize) -> String {
    if e.ci95.is_finite() {
        format!("{:+.*} +- {:.*}", dec, e.mean, dec, e.ci95)
    } else {
        format!("{:+.*} +- inf", dec, e.mean)
    }
}

/// `(-2.79%)` of the good mean.
fn pct(mean: f64, base: f64) -> String {
    if base == 0.0 {
        String::new()
    } else {
        format!(" ({:+.2}%)", 100.0 * mean / base)
    }
}

fn tag(v: Option<crate::kconfig::KernelVersion>) -> String {
    v.map_or_else(|| "override".to_string(), |v| v.to_string())
}

/// The total line and the verdict.
fn render_total(d: &Difference, b: &Bisection, dec: usize) -> String {
    let interp = classify(&b.metric).map_or("", |(dir, _)| dir.interpretation());
    let mut out = format!(
        "schedlab bisect: {} ({interp}); good {} ({}), bad {} ({})\n",
        b.metric, d.good_name, d.good.kernel.profile, d.bad_name, d.bad.kernel.profile
    );
    let (Some(t), Some(g), Some(bm)) = (b.total, b.good_mean, b.bad_mean) else {
        out.push_str("total: not measured\n");
        return out;
    };
    // Numbers from runs whose benchmark did not finish (--allow-incomplete) are marked.
    let mark = if b.cut_runs > 0 { "*" } else { "" };
    out.push_str(&format!(
        "total: good {g:.dec$}{mark}, bad {bm:.dec$}{mark}: bad - good = {}{} (95% CI, {} paired \
         seeds)\n",
        est(&t, dec),
        pct(t.mean, g),
        t.n
    ));
    if b.cut_runs > 0 {
        out.push_str(&format!(
            "* the benchmark did not finish in {} of the {} runs (cut short by run.duration_s \
             or the time cap; used under --allow-incomplete): these are the cut runs' numbers, \
             not the benchmark's\n",
            b.cut_runs, b.runs_executed
        ));
    }
    if !b.differs {
        out.push_str("verdict: no significant difference between good and bad: no culprit\n");
    } else if d.changes.is_empty() {
        out.push_str("verdict: the sides differ but no setting differs between them\n");
    }
    out
}

fn render_changes(d: &Difference) -> String {
    let mut out = format!(
        "\nchanges between good and bad ({}), release order:\n",
        d.changes.len()
    );
    let w = d
        .changes
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    for (i, c) in d.changes.iter().enumerate() {
        out.push_str(&format!(
            "  {:>2}  {:<w$}  {:<10}  {}\n",
            i + 1,
            c.name,
            tag(c.introduced),
            c.switches.join(", ")
        ));
        if !c.note.is_empty() && c.group.is_none() {
            out.push_str(&format!(
                "  {:>2}  {:<w$}  {:<10}  ({})\n",
                "", "", "", c.note
            ));
        }
    }
    out
}

fn render_step(d: &Difference, s: &Step, dec: usize) -> String {
    let verdict = match (s.bad, s.uncertain) {
        (true, false) => "bad",
        (false, false) => "good",
        (true, true) => "bad (uncertain)",
        (false, true) => "good (uncertain)",
    };
    let _ = d;
    format!(
        "  {:<44} {:>24}  n={:<2} {verdict}\n",
        s.label,
        est(&s.delta, dec),
        s.delta.n
    )
}

fn render_history(d: &Difference, b: &Bisection, dec: usize) -> String {
    let Some(h) = &b.history else {
        return String::new();
    };
    let mut out = String::from(
        "\nhistory order (git bisect over the releases, then over the first bad release's \
         changes;\nbad = past the midpoint of the total; delta = configuration - good):\n",
    );
    for s in &h.profiles {
        out.push_str(&render_step(d, s, dec));
    }
    if h.first_bad.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "  first bad release: {} (last good: {})\n",
        h.first_bad, h.last_good
    ));
    for s in &h.steps {
        out.push_str(&render_step(d, s, dec));
    }
    match h.culprit {
        Some(c) => out.push_str(&format!(
            "  first bad change: {} ({}){}\n",
            d.changes[c].name,
            tag(d.changes[c].introduced),
            if h.uncertain {
                " (a decision on the path was uncertain at the seed limit)"
            } else {
                ""
            }
        )),
        None => out.push_str("  first bad change: none found\n"),
    }
    out
}

fn render_table(d: &Difference, b: &Bisection, dec: usize) -> String {
    let Some(a) = &b.attribution else {
        return String::new();
    };
    let base = b.good_mean.unwrap_or(0.0);
    let w = d
        .changes
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let rule = "=".repeat(w + 110);
    let mut out = format!(
        "\n{rule}\nTest          : attribution of {} (bad - good)\nStatistic     : paired \
         on common seeds, mean +- 95% CI; effect = (alone + removed) / 2; interaction = \
         removed - alone\n{rule}\n",
        b.metric
    );
    out.push_str(&format!(
        "rank  {:<w$}  {:<10}  {:>34}  {:>22}  {:>22}  {:>22}\n",
        "change", "introduced", "effect", "alone from good", "removed from bad", "interaction"
    ));
    for (rank, r) in a.rows.iter().enumerate() {
        let c = &d.changes[r.change];
        let effect = format!("{}{}", est(&r.effect, dec), pct(r.effect.mean, base));
        out.push_str(&format!(
            "{:>4}  {:<w$}  {:<10}  {effect:>34}  {:>22}  {:>22}  {:>22}\n",
            rank + 1,
            c.name,
            tag(c.introduced),
            est(&r.alone, dec),
            est(&r.removed, dec),
            est(&r.interaction, dec),
        ));
    }
    if let (Some(s), Some(i), Some(t)) = (a.sum_alone, a.interaction, b.total) {
        out.push_str(&format!(
            "sum of the alone effects {}; total {}; interaction (total - sum) {}\n",
            est(&s, dec),
            est(&t, dec),
            est(&i, dec)
        ));
    }
    out.push_str(&selection_lines(d, &a.selection, dec));
    out
}

/// The lines of the smallest set of changes that explains the total (greedy selection).
fn selection_lines(d: &Difference, sel: &Selection, dec: usize) -> String {
    let mut out = String::new();
    let names: Vec<&str> = sel
        .changes
        .iter()
        .map(|&c| d.changes[c].name.as_str())
        .collect();
    out.push_str(&format!(
        "smallest set explaining the total (greedy): {}{}\n",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(" + ")
        },
        if sel.explained {
            ""
        } else {
            " (does not explain it)"
        }
    ));
    if let (Some(t), Some(s), Some(i), Some(r)) =
        (sel.together, sel.sum_alone, sel.interaction, sel.residual)
    {
        out.push_str(&format!(
            "  together {}; sum alone {}; interaction {}; residual (bad - set) {}\n",
            est(&t, dec),
            est(&s, dec),
            est(&i, dec),
            est(&r, dec)
        ));
    }
    out
}

fn render_counters(d: &Difference, counters: &[(usize, Vec<CounterMove>)]) -> String {
    if counters.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nmechanism counters that moved with the top changes (mean per run; significant \
         moves only):\n",
    );
    for (c, moves) in counters {
        out.push_str(&format!(
            "{}:\n  {:<50} {:>12} {:>12}  {:>22}  {:>22}\n",
            d.changes[*c].name, "counter", "good", "bad", "alone from good", "removed from bad"
        ));
        if moves.is_empty() {
            out.push_str("  no counter moved significantly\n");
        }
        for m in moves {
            let dec = decimals_for(m.good_mean).min(1);
            out.push_str(&format!(
                "  {:<50} {:>12.dec$} {:>12.dec$}  {:>22}  {:>22}\n",
                m.counter,
                m.good_mean,
                m.bad_mean,
                est(&m.alone, dec),
                est(&m.removed, dec),
            ));
        }
    }
    out
}

/// The counter blocks of the top changes.
pub fn top_counters<R: Runner>(
    b: &Bisector<R>,
    result: &Bisection,
) -> Vec<(usize, Vec<CounterMove>)> {
    let Some(a) = &result.attribution else {
        return Vec::new();
    };
    a.rows
        .iter()
        .take(TOP_CHANGES_WITH_COUNTERS)
        .map(|r| (r.change, mechanism_counters(b, r.change)))
        .collect()
}

/// The whole text report.
pub fn render(d: &Difference, b: &Bisection, counters: &[(usize, Vec<CounterMove>)]) -> String {
    let dec = decimals_for(b.good_mean.unwrap_or(0.0));
    let mut out = render_total(d, b, dec);
    out.push_str(&render_changes(d));
    out.push_str(&render_history(d, b, dec));
    out.push_str(&render_table(d, b, dec));
    out.push_str(&render_counters(d, counters));
    out.push_str(&format!(
        "\nruns: {} executed (budget {}), {} cache hits (runs reused by a later stage or another route)\n",
        b.runs_executed, b.limits.budget_runs, b.cache_hits
    ));
    for n in &b.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if let Some((h, stage)) = &b.halted {
        out.push_str(&match h {
            super::Halt::Budget => format!(
                "stopped: the --budget of {} runs is reached in the {stage} stage; the results \
                 above are partial (raise --budget)\n",
                b.limits.budget_runs
            ),
            super::Halt::Interrupted => format!("stopped by a signal in the {stage} stage\n"),
        });
    }
    out
}

/// The JSON document.
pub fn to_json(d: &Difference, b: &Bisection, counters: &[(usize, Vec<CounterMove>)]) -> Value {
    let side = |name: &str, scn: &crate::config::scenario::Scenario| json!({ "name": name, "profile": scn.kernel.profile, "kernel": scn.kernel });
    json!({
        "schedlab_version": crate::experiment::SCHEDLAB_VERSION,
        "complete": b.halted.is_none(),
        "good": side(&d.good_name, &d.good),
        "bad": side(&d.bad_name, &d.bad),
        "interpretation": classify(&b.metric).map(|(dir, _)| dir),
        "changes": d.changes,
        "bisection": b,
        "counters": counters
            .iter()
            .map(|(c, m)| json!({ "change": c, "name": d.changes[*c].name, "moves": m }))
            .collect::<Vec<_>>(),
    })
}
