//! Scenario configuration: the TOML scenario file (ARCHITECTURE.md §3), `--set` overrides,
//! the quick-form options (`-m`, `-k`, `--feature`, `--sysctl`, `--offline`), the
//! SCHED_FEAT registry, the tunables and the kernel profiles.
//!
//! Flow: a [`ScenarioDoc`] holds the raw TOML document and remembers where each overridden
//! key came from; `--set KEY=VALUE` and the quick-form options edit that document by dotted
//! path *before* typed parsing, so every source of a value goes through the same checks;
//! [`Scenario::from_doc`] then validates it and resolves the kernel (profile values, then the
//! `[kernel]` overrides) into a [`ResolvedKernel`]. Errors are [`InputError`]s naming the
//! origin (file path, `--set`, `--feature`, ...) and the dotted key.
//!
//! The kernel counterparts are `kernel/sched/features.h` (features), the `sysctl_sched_*`
//! variables and `update_sysctl()` (tunables); profiles stand for kernel releases.
//! Not here: building machines from `[machine]` (topology module), interpreting `[workload]`
//! (workload module) — both get their sections as raw tables plus the origin of each key.
//!
//! [`ResolvedKernel`]: crate::kconfig::ResolvedKernel

pub mod listing;
pub mod scenario;

use std::path::{Path, PathBuf};

pub use scenario::{
    MachineSpec, RunSpec, Scenario, VariantSpec, WorkloadSection, parse_variant_spec,
};

use crate::error::{InputError, InputResult};
use crate::kconfig::features::Feature;
use crate::kconfig::sysctl;

/// `--set`'s origin label in errors.
pub const ORIGIN_SET: &str = "--set";

/// The keys of `[machine]` that say where the machine comes from; setting one by override
/// clears the others, so `--set machine.preset=skl-2s` works on a file that used `hwloc`.
pub const MACHINE_SOURCES: &[&str] = &["preset", "sysfs_root", "hwloc", "topology"];

/// A scenario as a raw TOML document, before typed parsing, with the origin of every
/// overridden key.
#[derive(Clone, Debug)]
pub struct ScenarioDoc {
    pub table: toml::Table,
    /// Where the document came from: the file path, or `command line`.
    pub origin: String,
    /// Directory that relative paths in the file are resolved against.
    pub base_dir: Option<PathBuf>,
    /// `(dotted path, origin)` of every override, in application order.
    overrides: Vec<(Vec<String>, String)>,
    /// Behaviour worth a one-line warning (e.g. `-m` replacing the file's `[machine]`); the
    /// command line prints them.
    pub warnings: Vec<String>,
}

impl ScenarioDoc {
    /// An empty document (quick form without a base file).
    pub fn empty(origin: impl Into<String>) -> ScenarioDoc {
        ScenarioDoc {
            table: toml::Table::new(),
            origin: origin.into(),
            base_dir: None,
            overrides: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Parse TOML text; a syntax error gives the line and column.
    pub fn parse(text: &str, origin: impl Into<String>) -> InputResult<ScenarioDoc> {
        let origin = origin.into();
        let table = text.parse::<toml::Table>().map_err(|e| {
            if let Some(err) = e.span().and_then(|s| oversized_integer(text, s, &origin)) {
                return err;
            }
            let at = e
                .span()
                .map(|span| {
                    let (line, col) = line_col(text, span.start);
                    format!(" at line {line}, column {col}")
                })
                .unwrap_or_default();
            InputError::new(
                origin.clone(),
                format!("malformed TOML{at}: {}", e.message().trim()),
            )
        })?;
        Ok(ScenarioDoc {
            table,
            origin,
            base_dir: None,
            overrides: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// Read and parse a scenario file.
    pub fn from_file(path: &Path) -> InputResult<ScenarioDoc> {
        let origin = path.display().to_string();
        let text = crate::input::limits::read_input(path, &origin)?;
        let mut doc = ScenarioDoc::parse(&text, origin)?;
        doc.base_dir = path.parent().map(Path::to_path_buf);
        Ok(doc)
    }

    /// Where the value at `dotted` came from: the origin of the last override at or above
    /// that path, else the document's origin.
    pub fn origin_of(&self, dotted: &str) -> &str {
        let path: Vec<&str> = dotted.split('.').collect();
        self.overrides
            .iter()
            .rev()
            .find(|(p, _)| p.len() <= path.len() && p.iter().zip(&path).all(|(a, b)| a == b))
            .map(|(_, o)| o.as_str())
            .unwrap_or(&self.origin)
    }

    /// The origin of the override that created the unknown section `name` (`--set
    /// runn.duration_s=1` → `--set`), if one did; `None` when only the document has it.
    pub fn origin_of_section(&self, name: &str) -> Option<&str> {
        self.overrides
            .iter()
            .rev()
            .find(|(p, _)| p.first().is_some_and(|s| s == name))
            .map(|(_, o)| o.as_str())
    }

    /// Whether the value at `dotted` comes from the document itself (not an override), so
    /// relative paths in it resolve against [`ScenarioDoc::base_dir`].
    pub fn from_document(&self, dotted: &str) -> bool {
        self.origin_of(dotted) == self.origin
    }

    /// Set `value` at `path`, creating missing tables. Setting a machine source clears the
    /// other sources (see [`MACHINE_SOURCES`]).
    pub fn set_path(
        &mut self,
        path: &[String],
        value: toml::Value,
        origin: &str,
    ) -> InputResult<()> {
        let dotted = path.join(".");
        if path.is_empty() || path.iter().any(|s| s.is_empty()) {
            return Err(InputError::with_key(
                origin,
                dotted,
                "empty key segment (accepted: a dotted path like kernel.features.TTWU_QUEUE)",
            ));
        }
        if path.len() >= 2
            && path[0] == "machine"
            && MACHINE_SOURCES.contains(&path[1].as_str())
            && let Some(toml::Value::Table(m)) = self.table.get_mut("machine")
        {
            for other in MACHINE_SOURCES.iter().filter(|s| **s != path[1]) {
                m.remove(*other);
            }
        }
        let mut table = &mut self.table;
        for (i, seg) in path[..path.len() - 1].iter().enumerate() {
            let entry = table
                .entry(seg.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            table = match entry {
                toml::Value::Table(t) => t,
                other => {
                    return Err(InputError::with_key(
                        origin,
                        dotted.clone(),
                        format!(
                            "'{}' is {}, not a table, so it has no key '{}'",
                            path[..=i].join("."),
                            sysctl::describe(other),
                            path[i + 1]
                        ),
                    ));
                }
            };
        }
        table.insert(path[path.len() - 1].clone(), value);
        self.overrides.push((path.to_vec(), origin.to_string()));
        Ok(())
    }

    /// Remove the value at `path` if present (e.g. the quick form replacing `[workload]`).
    pub fn remove_path(&mut self, path: &[&str]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut table = &mut self.table;
        for seg in parents {
            match table.get_mut(*seg) {
                Some(toml::Value::Table(t)) => table = t,
                _ => return,
            }
        }
        table.remove(*last);
    }

    /// Apply one `--set KEY=VALUE`.
    pub fn apply_set(&mut self, spec: &str) -> InputResult<()> {
        self.apply_assignment(spec, ORIGIN_SET)
    }

    /// Apply `KEY=VALUE` with a given origin label.
    pub fn apply_assignment(&mut self, spec: &str, origin: &str) -> InputResult<()> {
        let (key, value) = split_assignment(spec, origin, "KEY=VALUE")?;
        let path: Vec<String> = key.split('.').map(|s| s.trim().to_string()).collect();
        self.set_path(&path, parse_value(value), origin)
    }
}

/// Split `KEY=VALUE` at the first `=`.
fn split_assignment<'a>(
    spec: &'a str,
    origin: &str,
    form: &str,
) -> InputResult<(&'a str, &'a str)> {
    match spec.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
        _ => Err(InputError::with_key(
            origin,
            spec,
            format!("expected {form}, e.g. kernel.features.TTWU_QUEUE=false"),
        )),
    }
}

/// Parse a command-line value as a TOML value (`4`, `false`, `"x"`, `[1, 2]`,
/// `{ A = true }`), falling back to a plain string (`skl-2s`, `0-3,8`).
pub fn parse_value(text: &str) -> toml::Value {
    if let Ok(mut t) = format!("v = {text}").parse::<toml::Table>()
        && t.len() == 1
        && let Some(v) = t.remove("v")
    {
        return v;
    }
    toml::Value::String(text.to_string())
}

/// An integer literal beyond TOML's range at `span` (the parser's error): an error naming its
/// key and what the key accepts, as its own checks say when asked with the value as a float
/// of its size (the scenario's, then the machine's, cost model's and workload's: `run.seed`
/// then points to its string form, `workload.tasks` states its range). A key those checks
/// do not reach gets the TOML range alone.
fn oversized_integer(text: &str, span: std::ops::Range<usize>, origin: &str) -> Option<InputError> {
    let o = crate::input::bigint::oversized_integer(text, span)?;
    let probe = ScenarioDoc {
        table: o.table.clone(),
        ..ScenarioDoc::empty(origin)
    };
    let probed = match scenario::Scenario::from_doc(probe) {
        Err(e) => Some(e),
        Ok(scn) => crate::experiment::scenario::ResolvedScenario::resolve_alone(&scn).err(),
    };
    let message = match probed.filter(|e| e.key.as_deref() == Some(o.path.as_str())) {
        Some(e) if e.message.starts_with("got ") => match e.message.split_once("; accepted: ") {
            Some((_, accepted)) => format!("{}; accepted: {accepted}", o.got()),
            None => o.got(),
        },
        // Another check of the key (an unknown key, a limit): its own words.
        Some(e) => e.message,
        None => o.got(),
    };
    Some(InputError::with_key(origin, o.path, message))
}

/// 1-based line and column of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, col)
}

/// The one did-you-mean helper (kept here for the modules that import it from `config`).
pub(crate) use crate::input::did_you_mean;

/// The quick-form options of `schedlab run` (ARCHITECTURE.md §3), turned into a scenario
/// document by [`build_document`].
#[derive(Clone, Debug, Default)]
pub struct QuickOptions {
    /// A scenario file to start from.
    pub base: Option<PathBuf>,
    /// `-m MACHINE`: a preset name, `host`, an hwloc `.xml`, a sysfs snapshot directory, or
    /// a `.toml` topology file.
    pub machine: Option<String>,
    /// `--offline CPULIST`.
    pub offline: Option<String>,
    /// `-k PROFILE`.
    pub profile: Option<String>,
    /// `--feature NAME=on|off` (also `NAME` and `NO_NAME`, as debugfs takes them).
    pub features: Vec<String>,
    /// `--sysctl NAME=VALUE`.
    pub sysctls: Vec<String>,
    /// `--set KEY=VALUE`, applied last.
    pub sets: Vec<String>,
    /// `--runs N`.
    pub runs: Option<u32>,
    /// `--seed S`.
    pub seed: Option<u64>,
    /// The benchmark command line after `--`; replaces the whole `[workload]` section.
    pub command: Vec<String>,
}

/// Build a scenario document from the quick-form options plus an optional base file.
/// Order: base file, `-m`/`--offline`/`-k`, `--feature`, `--sysctl`, `--runs`/`--seed`,
/// the command, then `--set` (so `--set` always wins).
pub fn build_document(opts: &QuickOptions) -> InputResult<ScenarioDoc> {
    let mut doc = match &opts.base {
        Some(path) => ScenarioDoc::from_file(path)?,
        None => ScenarioDoc::empty("command line"),
    };
    let p = |s: &[&str]| -> Vec<String> { s.iter().map(|x| x.to_string()).collect() };
    if let Some(m) = &opts.machine {
        set_machine(&mut doc, m)?;
    }
    if let Some(list) = &opts.offline {
        doc.set_path(
            &p(&["machine", "offline"]),
            toml::Value::String(list.clone()),
            "--offline",
        )?;
    }
    if let Some(k) = &opts.profile {
        doc.set_path(
            &p(&["kernel", "profile"]),
            toml::Value::String(k.clone()),
            "-k",
        )?;
    }
    for spec in &opts.features {
        let (feat, on) = parse_feature_switch(spec, "--feature")?;
        doc.set_path(
            &p(&["kernel", "features", feat.name()]),
            toml::Value::Boolean(on),
            "--feature",
        )?;
    }
    for spec in &opts.sysctls {
        let (name, value) = split_assignment(spec, "--sysctl", "NAME=VALUE")?;
        let info = sysctl::SysctlInfo::lookup(name, "--sysctl", name)?;
        doc.set_path(
            &p(&["kernel", "sysctl", info.name]),
            parse_value(value),
            "--sysctl",
        )?;
    }
    if let Some(n) = opts.runs {
        doc.set_path(
            &p(&["run", "runs"]),
            toml::Value::Integer(i64::from(n)),
            "--runs",
        )?;
    }
    if let Some(s) = opts.seed {
        // A TOML integer holds up to 2^63-1; larger seeds go in as a decimal string.
        let v = i64::try_from(s)
            .map_or_else(|_| toml::Value::String(s.to_string()), toml::Value::Integer);
        doc.set_path(&p(&["run", "seed"]), v, "--seed")?;
    }
    if !opts.command.is_empty() {
        set_command(&mut doc, &opts.command)?;
    }
    for spec in &opts.sets {
        doc.apply_set(spec)?;
    }
    Ok(doc)
}

/// `-m MACHINE`: the machine source key, with a warning when it replaces the file's.
fn set_machine(doc: &mut ScenarioDoc, m: &str) -> InputResult<()> {
    let p = |s: &[&str]| -> Vec<String> { s.iter().map(|x| x.to_string()).collect() };
    let (key, value) = machine_source(m, "-m")?;
    // Documented choice: `-m` wins over the file's [machine] source, with a warning.
    if let Some(toml::Value::Table(t)) = doc.table.get("machine")
        && let Some((old_key, old)) = MACHINE_SOURCES
            .iter()
            .find_map(|k| t.get(*k).map(|v| (*k, v)))
        && (old_key != key || *old != value)
    {
        let old = match old {
            toml::Value::Table(_) => "a table".to_string(),
            v => v.to_string(),
        };
        doc.warnings.push(format!(
            "-m {} replaces the scenario's machine.{old_key} = {}",
            crate::input::limits::clip(m),
            crate::input::limits::clip(&old)
        ));
    }
    doc.set_path(&p(&["machine", key]), value, "-m")?;
    Ok(())
}

/// The benchmark command line(s) after `--`: the whole `[workload]` section, with a warning
/// naming what it replaces.
fn set_command(doc: &mut ScenarioDoc, command: &[String]) -> InputResult<()> {
    let p = |s: &[&str]| -> Vec<String> { s.iter().map(|x| x.to_string()).collect() };
    // Documented choice, as for `-m`: the command wins over the file's [workload], with
    // a warning naming what it replaces.
    if let Some(toml::Value::Table(w)) = doc.table.get("workload") {
        let what = match (w.get("command"), w.get("kind")) {
            (Some(c), _) => format!("workload.command = {c}"),
            (None, Some(k)) => format!("the [workload] of kind {k}"),
            (None, None) => "its [workload]".to_string(),
        };
        doc.warnings.push(format!(
            "the benchmark command line replaces the scenario's {}",
            crate::input::limits::clip(&what)
        ));
    }
    doc.remove_path(&["workload"]);
    let commands = split_commands(command)?;
    if let [one] = commands.as_slice() {
        doc.set_path(
            &p(&["workload", "command"]),
            toml::Value::String(join_command(one)),
            "command line",
        )?;
    } else {
        let tables = commands.iter().map(|c| {
            let mut t = toml::Table::new();
            t.insert("command".into(), toml::Value::String(join_command(c)));
            toml::Value::Table(t)
        });
        doc.set_path(
            &p(&["workload"]),
            toml::Value::Array(tables.collect()),
            "command line",
        )?;
    }
    Ok(())
}

/// Map `-m MACHINE` onto a `[machine]` source key.
fn machine_source(m: &str, origin: &str) -> InputResult<(&'static str, toml::Value)> {
    let path = Path::new(m);
    if m.ends_with(".xml") {
        return Ok(("hwloc", toml::Value::String(m.to_string())));
    }
    if m.ends_with(".toml") {
        let text = crate::input::limits::read_text(path)
            .map_err(|e| InputError::with_key(origin, m, e))?;
        let mut doc = ScenarioDoc::parse(&text, m)?;
        // A file holding just `[topology]` or `[machine.topology]` gives that table.
        let table = match doc.table.remove("machine") {
            Some(toml::Value::Table(mut t)) => match t.remove("topology") {
                Some(toml::Value::Table(topo)) => topo,
                _ => t,
            },
            _ => match doc.table.remove("topology") {
                Some(toml::Value::Table(topo)) => topo,
                _ => doc.table,
            },
        };
        return Ok(("topology", toml::Value::Table(table)));
    }
    if path.is_dir() {
        return Ok(("sysfs_root", toml::Value::String(m.to_string())));
    }
    Ok(("preset", toml::Value::String(m.to_string())))
}

/// `NAME=on|off|true|false|1|0`, or `NAME` (on), or `NO_NAME` (off).
pub fn parse_feature_switch(spec: &str, origin: &str) -> InputResult<(Feature, bool)> {
    if let Some((name, value)) = spec.split_once('=') {
        let on = match value.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "1" | "yes" => true,
            "off" | "false" | "0" | "no" => false,
            other => {
                return Err(InputError::with_key(
                    origin,
                    name.trim(),
                    format!("'{other}' is not a switch value (accepted: on, off)"),
                ));
            }
        };
        return Ok((Feature::lookup(name.trim(), origin, name.trim())?, on));
    }
    let name = spec.trim();
    if Feature::from_name(name).is_none()
        && let Some(f) = name.strip_prefix("NO_").and_then(Feature::from_name)
    {
        return Ok((f, false));
    }
    Ok((Feature::lookup(name, origin, name)?, true))
}

/// Join argv into one command string, quoting words that need it.
/// The benchmark commands of `-- CMD [+ CMD ...]`: several workloads in one run are
/// separated by a lone `+` (not `--`, which netperf's own command line uses). Each command
/// must be non-empty, and there are at most [`crate::workload::merge::MAX_WORKLOADS`].
fn split_commands(argv: &[String]) -> InputResult<Vec<&[String]>> {
    use crate::workload::merge::MAX_WORKLOADS;
    let commands: Vec<&[String]> = argv.split(|a| a == "+").collect();
    if commands.iter().any(|c| c.is_empty()) {
        return Err(InputError::with_key(
            "command line",
            "+",
            "an empty benchmark command beside a '+' (accepted: -- CMD [+ CMD ...], each CMD a \
             benchmark command line; '+' alone separates the workloads of one run)",
        ));
    }
    if commands.len() > MAX_WORKLOADS {
        return Err(InputError::with_key(
            "command line",
            "+",
            format!(
                "{} benchmark commands, above the limit of {MAX_WORKLOADS} workloads in one run",
                commands.len()
            ),
        ));
    }
    Ok(commands)
}

fn join_command(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_toml_with_string_fallback() {
        assert_eq!(parse_value("4"), toml::Value::Integer(4));
        assert_eq!(parse_value("false"), toml::Value::Boolean(false));
        assert_eq!(parse_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(parse_value("skl-2s"), toml::Value::String("skl-2s".into()));
        assert_eq!(
            parse_value("\"v6.15\""),
            toml::Value::String("v6.15".into())
        );
        assert_eq!(parse_value("v6.15"), toml::Value::String("v6.15".into()));
        assert_eq!(parse_value("0-3,8"), toml::Value::String("0-3,8".into()));
        assert!(matches!(parse_value("[1, 2]"), toml::Value::Array(a) if a.len() == 2));
        assert!(matches!(parse_value("{ A = true }"), toml::Value::Table(_)));
        // Something that would smuggle in another key stays a string.
        assert!(matches!(parse_value("1\nx = 2"), toml::Value::String(_)));
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn suggestions() {
        let c = ["TTWU_QUEUE", "TTWU_QUEUE_ON_CPU", "PLACE_LAG"];
        assert!(did_you_mean("TTWU_QUEU", &c).contains("TTWU_QUEUE"));
        assert!(did_you_mean("place_lag", &c).contains("PLACE_LAG"));
        assert_eq!(did_you_mean("XYZZY", &c), "");
    }

    #[test]
    fn feature_switch_forms() {
        assert_eq!(
            parse_feature_switch("TTWU_QUEUE=off", "--feature").unwrap(),
            (Feature::TTWU_QUEUE, false)
        );
        assert_eq!(
            parse_feature_switch("NEXT_BUDDY=on", "--feature").unwrap(),
            (Feature::NEXT_BUDDY, true)
        );
        assert_eq!(
            parse_feature_switch("NO_DELAY_DEQUEUE", "--feature").unwrap(),
            (Feature::DELAY_DEQUEUE, false)
        );
        assert_eq!(
            parse_feature_switch("NONTASK_CAPACITY", "--feature").unwrap(),
            (Feature::NONTASK_CAPACITY, true)
        );
        let e = parse_feature_switch("TTWU_QUEUE=maybe", "--feature").unwrap_err();
        assert_eq!(e.origin, "--feature");
        let e = parse_feature_switch("NO_SUCH=on", "--feature").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("NO_SUCH"));
    }

    #[test]
    fn command_joining_quotes_only_when_needed() {
        let argv: Vec<String> = ["schbench", "-m", "4", "a b", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(join_command(&argv), r"schbench -m 4 'a b' 'it'\''s'");
    }
}
