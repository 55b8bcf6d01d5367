//! The host calibration file: cost-model inputs of the `host` machine fitted on this machine
//! by `schedlab calibrate`, applied by `-m host` under the scenario's own `[machine.cost]`.
//!
//! Where it is: `$SCHEDLAB_HOST_CALIBRATION` when set (`none` or empty: no calibration),
//! else `$XDG_CONFIG_HOME/schedlab/host-calibration.toml` (`~/.config/...`) when it exists.
//! A file measured on another kind of machine (CPU model or CPU count) is not applied, and
//! the run's host notes say so; an applied one is named in the notes with its fitted values.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::table::HostId;
use crate::cost::CostModel;
use crate::error::{InputError, InputResult};

/// The environment variable naming the calibration file (`none`: use none).
pub const ENV: &str = "SCHEDLAB_HOST_CALIBRATION";

/// Format version of the calibration file.
pub const CALIBRATION_FORMAT: u32 = 1;

/// One fitted input and the measurement it was fitted to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// The cost input(s) fitted, e.g. `speed_pct`.
    pub input: String,
    /// Its fitted value (a scale for a group of inputs).
    pub value: f64,
    /// The host-table row measured, and the metric matched.
    pub row: String,
    pub metric: String,
    /// The real mean, and the simulated mean with the fitted value.
    pub real: f64,
    pub sim: f64,
}

/// The calibration file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    pub format: u32,
    pub host: HostId,
    pub calibrated_at: String,
    pub schedlab_version: String,
    pub fits: Vec<Fit>,
    /// `[cost]`: the cost-model inputs, as `[machine.cost]` keys.
    pub cost: toml::Table,
}

impl Calibration {
    pub fn read(path: &Path) -> InputResult<Calibration> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            InputError::new(&origin, format!("cannot read the host calibration: {e}"))
        })?;
        let cal: Calibration = toml::from_str(&text).map_err(|e| {
            InputError::new(
                &origin,
                format!(
                    "not a host calibration (written by `schedlab calibrate`): {}",
                    e.message()
                ),
            )
        })?;
        if cal.format != CALIBRATION_FORMAT {
            return Err(InputError::with_key(
                &origin,
                "format",
                format!(
                    "format {} is not supported; accepted: {CALIBRATION_FORMAT}",
                    cal.format
                ),
            ));
        }
        Ok(cal)
    }

    /// The file's text: a header comment, then the TOML.
    pub fn to_text(&self) -> String {
        let body = toml::to_string_pretty(self).expect("a calibration serializes");
        format!(
            "# The `host` machine's cost inputs fitted on this machine by `schedlab calibrate`.\n\
             # `-m host` applies [cost] (docs/host-benchmarks.md, \"Calibration\").\n{body}"
        )
    }

    /// `cost` applied to `base`: every key must be a cost input, with a value its key accepts
    /// ([`crate::cost::override_shape`], as in a scenario's `[machine.cost]`).
    pub fn apply(&self, base: &CostModel, origin: &str) -> InputResult<CostModel> {
        let mut table = match toml::Value::try_from(base) {
            Ok(toml::Value::Table(t)) => t,
            _ => unreachable!("the cost model serializes to a table"),
        };
        for (k, v) in &self.cost {
            let v = crate::cost::check_override("cost", k, v)
                .map_err(|e| InputError::with_key(origin, e.path, e.message))?;
            table.insert(k.clone(), v);
        }
        crate::input::keys::from_table(&table, "cost", &|_| origin.to_string())
    }

    /// One line for the run's host notes.
    pub fn note(&self, path: &Path) -> String {
        let fits: Vec<String> = self
            .fits
            .iter()
            .map(|f| format!("{} = {} (from {})", f.input, fmt_value(f.value), f.row))
            .collect();
        format!(
            "cost inputs calibrated on this machine ({}, {}): {}",
            path.display(),
            self.calibrated_at,
            fits.join(", ")
        )
    }
}

fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The default file: `$XDG_CONFIG_HOME/schedlab/host-calibration.toml` or under `~/.config`.
pub fn default_path() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("schedlab/host-calibration.toml"))
}

/// The file `-m host` should apply: the variable's, else the default when it exists.
pub fn path_in_force() -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(v) if v.is_empty() || v == "none" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => default_path().filter(|p| p.is_file()),
    }
}

/// What `-m host` applies: the calibration (None when there is none or it was measured on
/// another kind of machine) and the note saying so.
pub fn for_this_host() -> InputResult<(Option<Calibration>, Option<String>)> {
    let Some(path) = path_in_force() else {
        return Ok((None, None));
    };
    let cal = Calibration::read(&path)?;
    if let Some(why) = cal.host.mismatch(&HostId::current()) {
        let note = format!(
            "host calibration {} not applied: {why}; run `schedlab calibrate` here",
            path.display()
        );
        return Ok((None, Some(note)));
    }
    let note = cal.note(&path);
    Ok((Some(cal), Some(note)))
}

/// The `host` machine's base cost model: its defaults with this machine's calibration.
pub fn calibrated_defaults(machine: &crate::topology::Machine) -> InputResult<CostModel> {
    let base = CostModel::default_for(machine);
    if machine.name != "host" {
        return Ok(base);
    }
    match (for_this_host()?, path_in_force()) {
        ((Some(cal), _), Some(path)) => cal.apply(&base, &path.display().to_string()),
        _ => Ok(base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Calibration {
        let mut cost = toml::Table::new();
        cost.insert("speed_pct".into(), toml::Value::Integer(150));
        Calibration {
            format: CALIBRATION_FORMAT,
            host: HostId::current(),
            calibrated_at: "2026-12-04T23:00:00Z".into(),
            schedlab_version: "0".into(),
            fits: vec![Fit {
                input: "speed_pct".into(),
                value: 150.0,
                row: "stress-ng-cpu1".into(),
                metric: "task_clock_ms".into(),
                real: 1.0,
                sim: 1.0,
            }],
            cost,
        }
    }

    #[test]
    fn round_trips_and_applies() {
        let cal = sample();
        let text = cal.to_text();
        let back: Calibration = toml::from_str(&text).unwrap();
        assert_eq!(back, cal);
        let base = CostModel::default();
        let applied = cal.apply(&base, "f").unwrap();
        assert_eq!(applied.speed_pct, 150);
        assert_eq!(applied.context_switch_ns, base.context_switch_ns);
        assert!(
            cal.note(Path::new("f"))
                .contains("speed_pct = 150 (from stress-ng-cpu1)")
        );
    }

    #[test]
    fn unknown_cost_keys_are_refused() {
        let mut cal = sample();
        cal.cost
            .insert("no_such_cost".into(), toml::Value::Integer(1));
        let e = cal.apply(&CostModel::default(), "f").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("cost.no_such_cost"));
    }
}
