//! The grid file of `schedlab sweep plan` (docs/sweep.md): a base (a scenario file and/or
//! the quick-form machine, command and `--set` keys) and axes whose Cartesian product is the
//! sweep. Read with the project's typed TOML reader (unknown keys are errors with a
//! did-you-mean), and bounded by [`MAX_AXIS_VALUES`] and [`MAX_SWEEP_RUNS`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{QuickOptions, ScenarioDoc, build_document, scenario::Scenario};
use crate::error::{InputError, InputResult};
use crate::input::{keys, limits};

/// Most values on one axis.
pub const MAX_AXIS_VALUES: usize = 1_000;

/// Most runs in one sweep (the product of the axis sizes).
pub const MAX_SWEEP_RUNS: u64 = limits::MAX_RUNS;

/// The grid file's top level.
#[derive(serde::Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct GridKeys {
    description: Option<String>,
    base: Option<BaseKeys>,
    axes: Option<AxesKeys>,
}

/// `[base]`: what every run starts from.
#[derive(serde::Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct BaseKeys {
    /// A scenario file, relative to the grid file.
    scenario: Option<String>,
    machine: Option<String>,
    profile: Option<String>,
    command: Option<String>,
    features: Option<Vec<String>>,
    set: Option<Vec<String>>,
}

/// `[axes]`: the values swept.
#[derive(serde::Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct AxesKeys {
    machines: Option<Vec<String>>,
    profiles: Option<Vec<String>>,
    /// Each value: comma-separated feature switches (`NO_TTWU_QUEUE,PLACE_LAG=off`); `""` =
    /// none.
    features: Option<Vec<String>>,
    /// Benchmark command lines (replace the base workload).
    commands: Option<Vec<String>>,
    /// `dotted.key = [values]`, applied like `--set`.
    set: Option<toml::Table>,
    /// A list of seeds, or a count N (seeds 1..=N).
    seeds: Option<toml::Value>,
}

/// One axis: its name (`machine`, `profile`, `features`, `command`, a dotted `--set` key, or
/// `seed`) and its values as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<AxisValue>,
}

/// One value of an axis: how it is shown (and stored in the database) and what it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisValue {
    pub shown: String,
    /// For `--set` axes: the value as TOML (so `4` stays an integer).
    pub toml: Option<toml::Value>,
}

/// A parsed grid.
#[derive(Debug, Clone)]
pub struct Grid {
    /// The grid file path.
    pub origin: String,
    pub description: Option<String>,
    /// The base scenario file (absolute or relative to the current directory).
    pub scenario: Option<PathBuf>,
    pub machine: Option<String>,
    pub profile: Option<String>,
    pub command: Option<String>,
    pub features: Vec<String>,
    pub sets: Vec<String>,
    /// Axes in expansion order (the last varies fastest); `seed` is always last.
    pub axes: Vec<Axis>,
}

/// One point of the grid: `(axis name, value index)` for every axis, in axis order.
pub type Point = Vec<usize>;

fn shown(v: &str) -> AxisValue {
    AxisValue {
        shown: v.to_string(),
        toml: None,
    }
}

impl Grid {
    /// Read and check a grid file.
    pub fn load(path: &Path) -> InputResult<Grid> {
        let origin = path.display().to_string();
        let text = limits::read_input(path, &origin)?;
        let doc = ScenarioDoc::parse(&text, origin.clone())?;
        let g: GridKeys = keys::from_table(&doc.table, "", &|_| origin.clone())?;
        let base = g.base.unwrap_or_default();
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let scenario = base.scenario.map(|s| {
            let p = PathBuf::from(&s);
            if p.is_relative() { dir.join(p) } else { p }
        });
        let mut grid = Grid {
            origin: origin.clone(),
            description: g.description,
            scenario,
            machine: base.machine,
            profile: base.profile,
            command: base.command,
            features: base.features.unwrap_or_default(),
            sets: base.set.unwrap_or_default(),
            axes: Vec::new(),
        };
        let mut axes = g.axes.unwrap_or_default();
        if axes.seeds.is_none() {
            // No seeds axis: the base scenario's own seed (else 1).
            axes.seeds = match &grid.scenario {
                Some(p) => ScenarioDoc::from_file(p)?
                    .table
                    .get("run")
                    .and_then(|r| r.get("seed"))
                    .cloned()
                    .map(|s| toml::Value::Array(vec![s])),
                None => None,
            };
        }
        grid.axes = parse_axes(&origin, axes)?;
        grid.check_size()?;
        Ok(grid)
    }

    fn check_size(&self) -> InputResult<()> {
        let mut total: u64 = 1;
        for a in &self.axes {
            total = total.saturating_mul(a.values.len() as u64);
        }
        if total > MAX_SWEEP_RUNS {
            let sizes: Vec<String> = self
                .axes
                .iter()
                .map(|a| format!("{} {}", a.values.len(), a.name))
                .collect();
            return Err(InputError::with_key(
                self.origin.clone(),
                "axes",
                format!(
                    "{} runs ({}) exceed the limit of {MAX_SWEEP_RUNS} runs per sweep; accepted: \
                     fewer values, or several sweeps",
                    total,
                    sizes.join(" x ")
                ),
            ));
        }
        Ok(())
    }

    /// Every point of the grid, the last axis varying fastest.
    pub fn points(&self) -> Vec<Point> {
        let mut out: Vec<Point> = vec![Vec::new()];
        for axis in &self.axes {
            let mut next = Vec::with_capacity(out.len() * axis.values.len());
            for p in &out {
                for i in 0..axis.values.len() {
                    let mut q = p.clone();
                    q.push(i);
                    next.push(q);
                }
            }
            out = next;
        }
        out
    }

    /// The axis values of a point, by axis name (in axis order).
    pub fn labels(&self, point: &Point) -> Vec<(String, String)> {
        self.axes
            .iter()
            .zip(point)
            .map(|(a, &i)| (a.name.clone(), a.values[i].shown.clone()))
            .collect()
    }

    /// The seed of a point.
    pub fn seed(&self, point: &Point) -> u64 {
        let a = self.axes.last().expect("seed is always an axis");
        a.values[point[point.len() - 1]]
            .shown
            .parse()
            .expect("seeds are checked integers")
    }

    /// The resolved scenario of a point: the base, then every axis's value, then `--set`s
    /// of the axes (after the base `set`), one run with the point's seed.
    pub fn scenario_doc(&self, point: &Point) -> InputResult<ScenarioDoc> {
        let mut opts = QuickOptions {
            base: self.scenario.clone(),
            machine: self.machine.clone(),
            profile: self.profile.clone(),
            features: self.features.clone(),
            sets: self.sets.clone(),
            runs: Some(1),
            seed: Some(self.seed(point)),
            command: self
                .command
                .as_deref()
                .map(split_command)
                .unwrap_or_default(),
            ..QuickOptions::default()
        };
        for (axis, &i) in self.axes.iter().zip(point) {
            let v = &axis.values[i];
            match axis.name.as_str() {
                "machine" => opts.machine = Some(v.shown.clone()),
                "profile" => opts.profile = Some(v.shown.clone()),
                "features" => opts.features.extend(
                    v.shown
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                ),
                "command" => opts.command = split_command(&v.shown),
                "seed" => {}
                key => {
                    let value = v.toml.as_ref().expect("set axes keep their TOML value");
                    opts.sets.push(format!("{key}={value}"));
                }
            }
        }
        if opts.base.is_none() && opts.machine.is_none() && opts.command.is_empty() {
            return Err(InputError::with_key(
                self.origin.clone(),
                "base",
                "nothing to run; accepted: base.scenario = \"FILE\", or a machine (base.machine \
                 or axes.machines) and a command (base.command or axes.commands)",
            ));
        }
        let mut doc = build_document(&opts).map_err(|mut e| {
            e.origin = format!("{} ({})", self.origin, e.origin);
            e
        })?;
        // Variants are not swept (a run is one configuration); use a `features` or `set`
        // axis instead.
        doc.remove_path(&["variant"]);
        Ok(doc)
    }

    /// [`Grid::scenario_doc`], parsed and checked.
    pub fn scenario(&self, point: &Point) -> InputResult<Scenario> {
        self.checked(Scenario::from_doc(self.scenario_doc(point)?)?)
    }

    /// `scn` if it names its machine (see [`Grid::scenario`]).
    pub fn checked(&self, scn: Scenario) -> InputResult<Scenario> {
        if crate::experiment::is_host(&scn) {
            return Err(InputError::with_key(
                self.origin.clone(),
                "machine",
                "a sweep needs a named machine (a preset or a topology file), not `host`: \
                 `host` differs between the nodes that run the sweep",
            ));
        }
        Ok(scn)
    }
}

/// A command line split into words (plain whitespace; quotes are not interpreted).
fn split_command(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(str::to_string).collect()
}

fn check_axis(origin: &str, key: &str, n: usize) -> InputResult<()> {
    if n == 0 || n > MAX_AXIS_VALUES {
        return Err(InputError::with_key(
            origin,
            key,
            format!("{n} values; accepted: 1 to {MAX_AXIS_VALUES} values (or leave the axis out)"),
        ));
    }
    Ok(())
}

fn list_axis(
    origin: &str,
    key: &str,
    name: &str,
    v: Option<Vec<String>>,
) -> InputResult<Option<Axis>> {
    let Some(v) = v else { return Ok(None) };
    check_axis(origin, &format!("axes.{key}"), v.len())?;
    for (i, x) in v.iter().enumerate() {
        if v[..i].contains(x) {
            return Err(InputError::with_key(
                origin,
                format!("axes.{key}"),
                format!(
                    "'{}' is listed twice; accepted: distinct values",
                    limits::clip(x)
                ),
            ));
        }
    }
    Ok(Some(Axis {
        name: name.to_string(),
        values: v.iter().map(|s| shown(s)).collect(),
    }))
}

fn parse_axes(origin: &str, a: AxesKeys) -> InputResult<Vec<Axis>> {
    let mut axes = Vec::new();
    for (key, name, v) in [
        ("machines", "machine", a.machines),
        ("profiles", "profile", a.profiles),
        ("features", "features", a.features),
    ] {
        axes.extend(list_axis(origin, key, name, v)?);
    }
    let sets: BTreeMap<String, toml::Value> = a.set.unwrap_or_default().into_iter().collect();
    for (key, values) in sets {
        let dotted = format!("axes.set.\"{key}\"");
        let toml::Value::Array(values) = values else {
            return Err(InputError::with_key(
                origin,
                dotted,
                "expected a list of values, e.g. \"workload.groups\" = [2, 4]",
            ));
        };
        if ["machine", "profile", "features", "command", "seed"].contains(&key.as_str())
            || !key.contains('.')
        {
            return Err(InputError::with_key(
                origin,
                dotted,
                "accepted: a dotted scenario key (e.g. \"kernel.sysctl.sched_migration_cost_ns\")",
            ));
        }
        check_axis(origin, &dotted, values.len())?;
        let values = values
            .into_iter()
            .map(|v| AxisValue {
                shown: match &v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
                toml: Some(v),
            })
            .collect();
        axes.push(Axis { name: key, values });
    }
    axes.extend(list_axis(origin, "commands", "command", a.commands)?);
    axes.push(Axis {
        name: "seed".into(),
        values: parse_seeds(origin, a.seeds)?
            .iter()
            .map(|s| shown(&s.to_string()))
            .collect(),
    });
    Ok(axes)
}

/// `seeds = [1, 2, 3]` or `seeds = 3` (seeds 1, 2, 3); absent = seed 1 only.
fn parse_seeds(origin: &str, v: Option<toml::Value>) -> InputResult<Vec<u64>> {
    let bad = |got: String| {
        InputError::with_key(
            origin,
            "axes.seeds",
            keys::expected(
                &format!(
                    "a list of distinct seeds from 0 to {} (above {}, as a decimal string, as \
                     run.seed takes them) or a count from 1 to {MAX_AXIS_VALUES}",
                    u64::MAX,
                    i64::MAX
                ),
                got,
            ),
        )
    };
    let seeds: Vec<u64> = match v {
        None => vec![1],
        Some(toml::Value::Integer(n)) if (1..=MAX_AXIS_VALUES as i64).contains(&n) => {
            (1..=n as u64).collect()
        }
        Some(toml::Value::Array(list)) => {
            let mut out = Vec::new();
            for x in &list {
                let seed = match x {
                    toml::Value::Integer(s) => u64::try_from(*s).ok(),
                    // TOML integers stop at 2^63-1: larger seeds (as reports print them) come
                    // as decimal strings.
                    toml::Value::String(s) => s.parse::<u64>().ok(),
                    _ => None,
                };
                match seed {
                    Some(s) if !out.contains(&s) => out.push(s),
                    _ => return Err(bad(keys::describe(x))),
                }
            }
            out
        }
        Some(other) => return Err(bad(keys::describe(&other))),
    };
    check_axis(origin, "axes.seeds", seeds.len())?;
    Ok(seeds)
}
