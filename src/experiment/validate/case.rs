//! One validation case (`validation/cases/ID.toml`, format in validation/README.md): a
//! published, measured effect of one scheduler change, and how schedlab runs both sides.
//! Read strictly: an unknown key, a missing required key or a value of the wrong type is an
//! error naming the file and the key.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::scenario::{Scenario, parse_variant_spec};
use crate::config::{QuickOptions, build_document};
use crate::error::{InputError, InputResult};

/// Seeds per side a case may ask for.
pub const CASE_RUNS_MAX: u32 = 100;

/// Cases a corpus directory may hold.
pub const CASES_MAX: usize = 1000;

/// Published counters (`[[regime]]`) one case may list.
pub const REGIME_CHECKS_MAX: usize = 16;

/// A case file, as written.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    pub title: String,
    pub benchmark: String,
    #[serde(default)]
    pub quick: bool,
    pub source: Source,
    pub machine: CaseMachine,
    pub command: CaseCommand,
    pub metric: CaseMetric,
    pub base: Side,
    pub change: Side,
    pub real: Real,
    pub scoring: Scoring,
    /// Other published counters of the real runs (`[[regime]]`): a check that the model
    /// runs the case in the published regime (utilisation, switch and migration rates, the
    /// base's own level); reported beside the score, not scored.
    #[serde(default)]
    pub regime: Vec<RegimeCheck>,
}

/// One published counter of one side's real runs, and the model's number to compare it with.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegimeCheck {
    /// The counter's name as published (`perf-stat.ps.context-switches`).
    pub counter: String,
    /// Which side's runs it describes.
    pub side: RegimeSide,
    /// The model's number: a path in `runs[]` of the results JSON, as `metric.path`.
    pub path: String,
    /// Divide the model's number by the run's `perf_stat.elapsed_s` (the counter is a rate).
    #[serde(default)]
    pub per_second: bool,
    /// The published value, in the model's units (after `per_second`).
    pub real: f64,
}

/// The side of a case a published counter belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegimeSide {
    Base,
    Change,
}

/// Where the published result comes from.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub kind: String,
    /// Who measured: cases of one group are one independent source.
    pub group: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub message_id: String,
    #[serde(default)]
    pub commit: String,
    pub date: String,
    pub measured_by: String,
    #[serde(default)]
    pub quote: String,
}

/// The measured machine and the schedlab machine that stands for it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMachine {
    pub real: String,
    pub preset: String,
    #[serde(default)]
    pub offline: Option<String>,
    #[serde(default)]
    pub note: String,
}

/// The benchmark as published and as simulated.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseCommand {
    pub real: String,
    /// The quick-form command line; empty when `sets` give the workload's keys.
    pub sim: String,
    pub runs: u32,
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default)]
    pub sets: Vec<String>,
}

/// The metric compared.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMetric {
    pub published: String,
    /// A path in `runs[]` of the results JSON (`workload.time_s`, `perf_stat.cpu_migrations`).
    pub path: String,
    #[serde(default)]
    pub transform: Transform,
    pub higher_is_better: bool,
}

/// How the published metric follows from the simulated one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transform {
    #[default]
    None,
    /// The published metric is `1 / path` (a throughput from a time).
    Reciprocal,
}

/// One side of the change: a kernel profile and a variant spec applied to it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Side {
    pub kernel: String,
    #[serde(default)]
    pub variant: String,
}

/// The published numbers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Real {
    #[serde(default)]
    pub base: Option<f64>,
    #[serde(default)]
    pub change: Option<f64>,
    /// `100 * (change - base) / base` of the published metric.
    pub change_pct: f64,
    #[serde(default)]
    pub base_stddev_pct: Option<f64>,
    #[serde(default)]
    pub change_stddev_pct: Option<f64>,
    #[serde(default)]
    pub runs: Option<u32>,
    #[serde(default)]
    pub note: String,
}

/// Whether the case counts in the score.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scoring {
    pub scored: bool,
    #[serde(default)]
    pub reason: String,
    /// A global fitted input was fitted to this case's numbers (counted apart).
    #[serde(default)]
    pub fitted_from: bool,
}

/// A case read from its file.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file stem.
    pub id: String,
    pub path: PathBuf,
    /// The file's text (the cache key covers it).
    pub text: String,
    pub file: CaseFile,
}

impl Case {
    /// Read and check one case file.
    pub fn read(path: &Path) -> InputResult<Case> {
        let origin = path.display().to_string();
        let text = crate::input::limits::read_input(path, &origin)?;
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| InputError::new(&origin, format!("not TOML: {e}")))?;
        let file: CaseFile = crate::input::keys::from_table(&table, "", &|_| origin.clone())?;
        let id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let case = Case {
            id,
            path: path.to_path_buf(),
            text,
            file,
        };
        case.check()?;
        Ok(case)
    }

    fn check(&self) -> InputResult<()> {
        let origin = self.path.display().to_string();
        let f = &self.file;
        if f.command.runs == 0 || f.command.runs > CASE_RUNS_MAX {
            return Err(InputError::with_key(
                origin,
                "command.runs",
                format!("got {}; accepted: 1..={CASE_RUNS_MAX}", f.command.runs),
            ));
        }
        if f.regime.len() > REGIME_CHECKS_MAX {
            return Err(InputError::with_key(
                origin,
                "regime",
                format!(
                    "{} entries; the limit is {REGIME_CHECKS_MAX}",
                    f.regime.len()
                ),
            ));
        }
        for (i, r) in f.regime.iter().enumerate() {
            if !(r.real.is_finite() && r.real > 0.0) {
                return Err(InputError::with_key(
                    &origin,
                    format!("regime[{i}].real"),
                    format!("got {}; accepted: a positive number", r.real),
                ));
            }
            if r.path.trim().is_empty() {
                return Err(InputError::with_key(
                    &origin,
                    format!("regime[{i}].path"),
                    "accepted: a path in the results' runs[] (e.g. perf_stat.context_switches)",
                ));
            }
        }
        if !f.real.change_pct.is_finite() {
            return Err(InputError::with_key(
                origin,
                "real.change_pct",
                "accepted: a finite number (percent)",
            ));
        }
        if f.scoring.scored {
            // Both sides must resolve now: a bad key is an error before any run starts.
            self.scenario(&f.base, &[])?;
            self.scenario(&f.change, &[])?;
        }
        Ok(())
    }

    /// The scenario of one side: the machine, the side's kernel and variant, the case's
    /// `sets` then `extra_sets` (`validate --set`) and command, seeds and runs from the case.
    pub fn scenario(&self, side: &Side, extra_sets: &[String]) -> InputResult<Scenario> {
        let origin = self.path.display().to_string();
        let f = &self.file;
        let command = crate::workload::cmdline::split_words(&f.command.sim)
            .map_err(|e| InputError::with_key(&origin, "command.sim", e))?;
        let mut sets = f.command.sets.clone();
        if let Some(d) = f.command.duration_s {
            sets.push(format!("run.duration_s={d}"));
        }
        sets.extend(extra_sets.iter().cloned());
        let opts = QuickOptions {
            machine: Some(self.machine_arg()),
            offline: f.machine.offline.clone(),
            profile: Some(side.kernel.clone()),
            sets,
            runs: Some(f.command.runs),
            seed: Some(1),
            command,
            ..QuickOptions::default()
        };
        let doc = build_document(&opts).map_err(|e| in_case(&origin, e))?;
        let scn = Scenario::from_doc(doc).map_err(|e| in_case(&origin, e))?;
        if side.variant.trim().is_empty() {
            return Ok(scn);
        }
        let spec = parse_variant_spec(&format!("side:{}", side.variant), &origin)?;
        scn.with_variant(&spec).map_err(|e| in_case(&origin, e))
    }
}

impl Case {
    /// `machine.preset` as `-m` takes it: a preset name as is; a machine file path
    /// (`validation/machines/icl-2s.toml`) relative to the repository the corpus lives in
    /// (the case directory's grandparent), so `validate` works from any directory.
    fn machine_arg(&self) -> String {
        let m = &self.file.machine.preset;
        let path = Path::new(m);
        if !m.contains('/') || path.is_absolute() {
            return m.clone();
        }
        let root = self
            .path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent);
        match root.map(|r| r.join(path)) {
            Some(p) if p.exists() => p.display().to_string(),
            _ => m.clone(),
        }
    }
}

/// An error of a case's scenario, said to come from the case file.
fn in_case(origin: &str, e: InputError) -> InputError {
    InputError {
        origin: format!("{origin} ({})", e.origin),
        ..e
    }
}

/// Every `*.toml` case of `dir`, sorted by id.
pub fn read_corpus(dir: &Path) -> InputResult<Vec<Case>> {
    let origin = dir.display().to_string();
    let entries = std::fs::read_dir(dir).map_err(|e| {
        InputError::new(
            &origin,
            format!("cannot read the case directory: {e}; accepted: a directory of case files (validation/cases)"),
        )
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.len() > CASES_MAX {
        return Err(InputError::new(
            origin,
            format!("{} case files; the limit is {CASES_MAX}", paths.len()),
        ));
    }
    paths.iter().map(|p| Case::read(p)).collect()
}
