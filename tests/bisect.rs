//! `schedlab bisect`: the two searches on constructed differences where the metric is a
//! synthetic function of the configuration (an injected runner, exact and fast), and one
//! real run through the command line.
//!
//! The synthetic runner gives every seed a common random offset (what common random numbers
//! cancel) plus a small independent noise per (configuration, seed), so the searches have to
//! use their paired intervals; it records every job so a test can check that nothing ran
//! twice and that the budget held.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::process::Command;

use schedlab::config::scenario::{Scenario, VariantSpec};
use schedlab::error::InputResult;
use schedlab::experiment::bisect::search::{Halt, Limits, Runner};
use schedlab::experiment::bisect::{Bisection, Bisector, Config, Difference, Member, Metrics};
use schedlab::kconfig::Feature;

const METRIC: &str = "workload.time_s";

/// Features flipped between good and bad: ten atomic (ungrouped) changes.
const FLIPPED: &[Feature] = &[
    Feature::PLACE_LAG,
    Feature::PLACE_DEADLINE_INITIAL,
    Feature::RUN_TO_PARITY,
    Feature::WAKEUP_PREEMPTION,
    Feature::CACHE_HOT_BUDDY,
    Feature::LB_MIN,
    Feature::HRTICK,
    Feature::ATTACH_AGE_LOAD,
    Feature::WA_BIAS,
    Feature::WA_WEIGHT,
];

fn base() -> Scenario {
    Scenario::parse(
        "[machine]\npreset = \"hybrid-10\"\n[kernel]\nprofile = \"v6.15\"\n\
         [workload]\nkind = \"pingpong\"\npairs = 2\n[run]\nduration_s = 0.02\n",
        "bisect-test.toml",
    )
    .unwrap()
}

/// Good = the base; bad = the base with every feature of `FLIPPED` switched.
fn difference() -> Difference {
    let good = base();
    let overrides = FLIPPED
        .iter()
        .map(|f| {
            (
                format!("kernel.features.{}", f.name()),
                toml::Value::Boolean(!good.kernel.features.on(*f)),
            )
        })
        .collect();
    let bad = good
        .with_variant(&VariantSpec {
            name: "bad".into(),
            overrides,
        })
        .unwrap();
    Difference::between("good", good, "bad", bad).unwrap()
}

/// Whether feature `f`'s member is switched to bad in `cfg`.
fn on(d: &Difference, cfg: &Config, f: Feature) -> bool {
    d.members
        .iter()
        .zip(&cfg.applied)
        .any(|(m, a)| *a && matches!(m, Member::Feature { feature, .. } if *feature == f))
}

/// A deterministic hash to [-1, 1).
fn unit(x: u64) -> f64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// The metric without noise, as a function of the configuration.
type MetricFn<'a> = Box<dyn Fn(&Difference, &Config) -> f64 + 'a>;

struct Synthetic<'a> {
    diff: &'a Difference,
    f: MetricFn<'a>,
    jobs: RefCell<Vec<(String, u64)>>,
}

impl Runner for Synthetic<'_> {
    fn key(&self, cfg: &Config) -> InputResult<String> {
        Ok(format!("{:?}", cfg))
    }

    fn run(&self, jobs: &[(Config, u64)]) -> InputResult<Option<Vec<Metrics>>> {
        let mut out = Vec::new();
        for (cfg, seed) in jobs {
            let key = self.key(cfg)?;
            let h = key
                .bytes()
                .fold(*seed, |a, b| a.rotate_left(5) ^ u64::from(b));
            // Common per seed (cancels in pairs), plus a small independent part.
            let value = (self.f)(self.diff, cfg) + 5.0 * unit(*seed) + 0.2 * unit(h);
            self.jobs.borrow_mut().push((key, *seed));
            let mut m = Metrics::new();
            m.insert(METRIC.to_string(), value);
            m.insert(
                "migrations.total".to_string(),
                if on(self.diff, cfg, Feature::LB_MIN) {
                    50.0
                } else {
                    10.0
                } + unit(h),
            );
            out.push(m);
        }
        Ok(Some(out))
    }
}

fn bisect(
    d: &Difference,
    f: impl Fn(&Difference, &Config) -> f64 + 'static,
    limits: Limits,
) -> (Bisection, Vec<(String, u64)>) {
    let runner = Synthetic {
        diff: d,
        f: Box::new(f),
        jobs: RefCell::new(Vec::new()),
    };
    let mut b = Bisector::new(d, &runner, METRIC, 1, limits);
    let result = b.run().unwrap();
    assert_eq!(result.runs_executed, runner.jobs.borrow().len() as u64);
    let jobs = runner.jobs.borrow().clone();
    (result, jobs)
}

fn change_of(d: &Difference, f: Feature) -> usize {
    d.changes.iter().position(|c| c.name == f.name()).unwrap()
}

#[test]
fn one_harmful_change_among_many_is_found_first_by_both_searches() {
    let d = difference();
    assert_eq!(d.changes.len(), FLIPPED.len());
    let culprit = change_of(&d, Feature::LB_MIN);
    let (r, jobs) = bisect(
        &d,
        |d, c| 100.0 + if on(d, c, Feature::LB_MIN) { 10.0 } else { 0.0 },
        Limits::default(),
    );
    assert!(r.differs);
    let t = r.total.unwrap();
    assert!((t.mean - 10.0).abs() < 0.5, "{t:?}");
    let h = r.history.as_ref().unwrap();
    assert_eq!(h.culprit, Some(culprit), "history order: {h:?}");
    assert!(!h.uncertain);
    let a = r.attribution.as_ref().unwrap();
    assert_eq!(a.rows[0].change, culprit, "attribution ranks it first");
    assert!(a.rows[0].effect.significant());
    assert!(a.rows[0].alone.significant() && a.rows[0].removed.significant());
    assert!(!a.rows[0].interaction.significant(), "it acts alone");
    for row in &a.rows[1..] {
        assert!(row.effect.mean.abs() < 1.0, "{row:?}");
    }
    assert_eq!(a.selection.changes, vec![culprit]);
    assert!(a.selection.explained);
    // Nothing ran twice; later stages reused cached runs.
    let distinct: BTreeSet<&(String, u64)> = jobs.iter().collect();
    assert_eq!(
        distinct.len(),
        jobs.len(),
        "a (configuration, seed) ran twice"
    );
    assert!(r.cache_hits > 0);
    assert!(r.runs_executed <= r.limits.budget_runs);
}

#[test]
fn two_changes_that_only_hurt_together_are_an_interaction() {
    let d = difference();
    let (a_idx, b_idx) = (
        change_of(&d, Feature::HRTICK),
        change_of(&d, Feature::WA_BIAS),
    );
    let (r, _) = bisect(
        &d,
        |d, c| {
            let both = on(d, c, Feature::HRTICK) && on(d, c, Feature::WA_BIAS);
            100.0 + if both { 8.0 } else { 0.0 }
        },
        Limits::default(),
    );
    assert!(r.differs);
    let a = r.attribution.as_ref().unwrap();
    for idx in [a_idx, b_idx] {
        let row = a.rows.iter().find(|x| x.change == idx).unwrap();
        assert!(
            !row.alone.significant() || row.alone.mean.abs() < 0.5,
            "{row:?}"
        );
        assert!(
            row.removed.significant() && row.removed.mean > 7.0,
            "{row:?}"
        );
        assert!(row.interaction.significant(), "{row:?}");
    }
    let mut top: Vec<usize> = a.rows[..2].iter().map(|x| x.change).collect();
    top.sort_unstable();
    assert_eq!(top, [a_idx.min(b_idx), a_idx.max(b_idx)]);
    let mut set = a.selection.changes.clone();
    set.sort_unstable();
    assert_eq!(set, [a_idx.min(b_idx), a_idx.max(b_idx)]);
    assert!(a.selection.explained);
    let inter = a.selection.interaction.unwrap();
    assert!(
        inter.significant() && (inter.mean - 8.0).abs() < 0.5,
        "{inter:?}"
    );
    // The sum of the singles misses the total: an interaction overall too.
    assert!(a.interaction.unwrap().significant());
    // History order still finds the change where the metric crosses: the later of the two.
    assert_eq!(r.history.unwrap().culprit, Some(a_idx.max(b_idx)));
}

#[test]
fn a_null_difference_reports_no_culprit() {
    let d = difference();
    let (r, jobs) = bisect(&d, |_, _| 100.0, Limits::default());
    assert!(!r.differs);
    assert!(r.history.is_none() && r.attribution.is_none());
    // Only good and bad ran, with seeds added up to the limit while the total straddled 0.
    let configs: BTreeSet<&String> = jobs.iter().map(|(k, _)| k).collect();
    assert_eq!(configs.len(), 2);
    assert!(r.runs_executed <= 2 * r.limits.max_seeds as u64);
}

#[test]
fn the_budget_is_respected_and_named() {
    let d = difference();
    let limits = Limits {
        budget_runs: 40,
        ..Limits::default()
    };
    let (r, _) = bisect(
        &d,
        |d, c| 100.0 + if on(d, c, Feature::LB_MIN) { 10.0 } else { 0.0 },
        limits,
    );
    assert!(r.runs_executed <= 40, "{}", r.runs_executed);
    let (halt, stage) = r.halted.clone().expect("the budget stops the search");
    assert_eq!(halt, Halt::Budget);
    assert_eq!(
        stage, "attribution",
        "good, bad and the history fit in 40 runs"
    );
    let text = schedlab::experiment::bisect::report::render(&d, &r, &[]);
    assert!(text.contains("--budget of 40 runs"), "{text}");
}

#[test]
fn the_greedy_selection_corrects_an_overshoot() {
    // LB_MIN alone overshoots the total (+15 of +10); HRTICK pulls back (-5).
    let d = difference();
    let (a, b) = (
        change_of(&d, Feature::LB_MIN),
        change_of(&d, Feature::HRTICK),
    );
    let (r, _) = bisect(
        &d,
        |d, c| {
            100.0 + if on(d, c, Feature::LB_MIN) { 15.0 } else { 0.0 }
                - if on(d, c, Feature::HRTICK) { 5.0 } else { 0.0 }
        },
        Limits::default(),
    );
    let at = r.attribution.unwrap();
    assert_eq!(at.rows[0].change, a);
    assert_eq!(at.rows[1].change, b);
    assert!((at.rows[1].effect.mean + 5.0).abs() < 0.5);
    assert_eq!(at.selection.changes, vec![a, b]);
    assert!(at.selection.explained);
    assert!(!at.selection.interaction.unwrap().significant(), "additive");
}

#[test]
fn profiles_bisect_through_the_release_chain() {
    // v6.9 -> v6.17 with the metric a function of DELAY_DEQUEUE: the history search must
    // stop at v6.12 and name the delay_dequeue group.
    let good = base().with_variant(&profile("v6.9")).unwrap();
    let bad = base().with_variant(&profile("v6.17")).unwrap();
    let d = Difference::between("v6.9", good, "v6.17", bad).unwrap();
    let (r, _) = bisect(
        &d,
        |d, c| {
            let k = d.kernel(c);
            100.0
                + if k.features.on(Feature::DELAY_DEQUEUE) {
                    6.0
                } else {
                    0.0
                }
        },
        Limits::default(),
    );
    let h = r.history.unwrap();
    assert_eq!(h.first_bad, "v6.12");
    assert_eq!(h.last_good, "v6.9");
    assert_eq!(d.changes[h.culprit.unwrap()].name, "delay_dequeue");
    let a = r.attribution.unwrap();
    assert_eq!(d.changes[a.rows[0].change].name, "delay_dequeue");
}

fn profile(name: &str) -> VariantSpec {
    VariantSpec {
        name: name.into(),
        overrides: [(
            "kernel.profile".to_string(),
            toml::Value::String(name.into()),
        )]
        .into_iter()
        .collect(),
    }
}

#[test]
fn end_to_end_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("schedlab-bisect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("bisect.json");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "bisect",
            "-m",
            "hybrid-10",
            "--good",
            "v6.9",
            "--bad",
            "v6.12",
            "--metric",
            "perf_stat.context_switches",
            "--runs",
            "2",
            "--budget",
            "20",
            "--set",
            "run.duration_s=0.1",
            "--json",
        ])
        .arg(&json)
        .args(["--", "hackbench", "-g", "2", "-l", "50"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("changes between good and bad"), "{stdout}");
    assert!(stdout.contains("delay_dequeue"), "{stdout}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["bisection"]["metric"], "perf_stat.context_switches");
    assert!(doc["bisection"]["runs_executed"].as_u64().unwrap() <= 20);
    assert!(
        doc["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "fair_server")
    );
    // Bad input: exit 2 with one line naming the flag.
    let bad = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "bisect",
            "-m",
            "hybrid-10",
            "--good",
            "v6.9",
            "--bad",
            "v9.9",
        ])
        .args(["--", "hackbench"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("--bad") && err.contains("v6.12"), "{err}");
    let small = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "bisect",
            "-m",
            "hybrid-10",
            "--good",
            "v6.9",
            "--bad",
            "v6.12",
        ])
        .args(["--runs", "5", "--budget", "4", "--", "hackbench"])
        .output()
        .unwrap();
    assert_eq!(small.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&small.stderr).contains("--budget"));
    let _ = std::fs::remove_dir_all(&dir);
}
