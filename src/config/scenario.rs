//! Typed scenario: `[machine]`, `[kernel]`, `[workload]`, `[run]` and `[[variant]]`
//! (ARCHITECTURE.md §3), parsed from a [`ScenarioDoc`] with strict key checking, and the
//! kernel resolved into a [`ResolvedKernel`] (profile values, then `[kernel]` overrides).
//!
//! `[machine]` and `[workload]` are validated only as far as this module knows them; their
//! contents are handed on raw (`topology`, `cost`, workload parameters) to the topology and
//! workload modules, which report their own errors with [`Scenario::origin_of`].
//!
//! The resolved scenario serializes (for the results JSON) with a fixed key order: struct
//! fields in declaration order, features in registry order, raw tables sorted by key.

use std::collections::BTreeMap;

use serde::Serialize;

use super::features::{AppliesTo, Feature};
use super::profiles::{Profile, SchedMode};
use super::sysctl::{self, PreemptModel, SysctlInfo};
use super::{ScenarioDoc, did_you_mean, parse_feature_switch, parse_value};
use crate::cpumask::CpuMask;
use crate::error::{InputError, InputResult};
pub use crate::kconfig::{Policy, ResolvedKernel};

/// `[machine]`: where the machine comes from, and its raw extras.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MachineSpec {
    /// A preset name or `host` (validated by the topology module).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// A sysfs/proc snapshot directory (relative paths resolved against the scenario file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sysfs_root: Option<String>,
    /// An hwloc XML file (resolved like `sysfs_root`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hwloc: Option<String>,
    /// An explicit `[machine.topology]` table, for the topology importer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<toml::Table>,
    /// CPUs to take offline, as a kernel cpulist (syntax checked here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline: Option<String>,
    /// `[machine.cost]`: cost-model overrides, for the cost module.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<toml::Table>,
}

/// `[workload]`: the kind or the benchmark command line, plus the rest for the workload
/// module.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkloadSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Every other key of `[workload]`, unchecked here.
    #[serde(flatten)]
    pub params: toml::Table,
}

/// `[run]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSpec {
    /// Independent runs (different seeds derived from `seed`).
    pub runs: u32,
    pub seed: u64,
    /// Simulated time excluded from measurement at the start.
    pub warmup_s: f64,
    /// Simulated-time cap; `None` = the workload's own length.
    pub duration_s: Option<f64>,
    /// Run the invariant checker.
    pub invariants: bool,
    /// Window of the migration ping-pong detector (`crate::stats::pingpong`), in ms.
    pub pingpong_window_ms: f64,
}

impl Default for RunSpec {
    fn default() -> Self {
        RunSpec {
            runs: 1,
            seed: 1,
            warmup_s: 0.0,
            duration_s: None,
            invariants: false,
            pingpong_window_ms: 10.0,
        }
    }
}

/// One `[[variant]]` (or `--variant`): a name and dotted-path overrides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantSpec {
    pub name: String,
    /// `dotted.path -> value`, applied in key order.
    pub overrides: BTreeMap<String, toml::Value>,
}

/// A parsed, validated scenario with its kernel resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// The raw document, kept to derive variants and to report origins.
    #[serde(skip)]
    pub doc: ScenarioDoc,
    /// The file path or `command line`.
    pub source: String,
    /// Name of the variant this scenario is (after [`Scenario::variant`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub machine: MachineSpec,
    pub kernel: ResolvedKernel,
    pub workload: WorkloadSpec,
    pub run: RunSpec,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSpec>,
}

const TOP_KEYS: &[&str] = &[
    "description",
    "machine",
    "kernel",
    "workload",
    "run",
    "variant",
];
const MACHINE_KEYS: &[&str] = &[
    "preset",
    "offline",
    "sysfs_root",
    "hwloc",
    "topology",
    "cost",
];
const KERNEL_KEYS: &[&str] = &["profile", "features", "sysctl", "hz", "preempt", "policy"];
const RUN_KEYS: &[&str] = &[
    "runs",
    "seed",
    "warmup_s",
    "duration_s",
    "invariants",
    "pingpong_window_ms",
];
const VARIANT_SECTIONS: &[&str] = &["kernel", "machine", "workload"];

/// Typed access to one table of the document, with errors naming origin and dotted key.
struct Section<'a> {
    doc: &'a ScenarioDoc,
    prefix: &'a str,
    table: Option<&'a toml::Table>,
}

impl<'a> Section<'a> {
    fn key(&self, k: &str) -> String {
        if self.prefix.is_empty() {
            k.to_string()
        } else {
            format!("{}.{k}", self.prefix)
        }
    }

    fn err(&self, k: &str, msg: impl Into<String>) -> InputError {
        let key = self.key(k);
        InputError::with_key(self.doc.origin_of(&key), key, msg)
    }

    fn check_keys(&self, accepted: &[&str]) -> InputResult<()> {
        for k in self.table.into_iter().flat_map(|t| t.keys()) {
            if !accepted.contains(&k.as_str()) {
                let what = if self.prefix.is_empty() {
                    "unknown section".to_string()
                } else {
                    format!("unknown key in [{}]", self.prefix)
                };
                return Err(self.err(
                    k,
                    format!(
                        "{what}{}; accepted: {}",
                        did_you_mean(k, accepted),
                        accepted.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn get(&self, k: &str) -> Option<&'a toml::Value> {
        self.table.and_then(|t| t.get(k))
    }

    fn type_err(&self, k: &str, want: &str, got: &toml::Value) -> InputError {
        self.err(k, format!("expected {want}, got {}", sysctl::describe(got)))
    }

    fn string(&self, k: &str) -> InputResult<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.type_err(k, "a string", other)),
        }
    }

    fn table(&self, k: &str) -> InputResult<Option<&'a toml::Table>> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(t)),
            Some(other) => Err(self.type_err(k, "a table", other)),
        }
    }

    fn sub(&self, k: &str, key_buf: &'a str) -> InputResult<Section<'a>> {
        Ok(Section {
            doc: self.doc,
            prefix: key_buf,
            table: self.table(k)?,
        })
    }

    fn uint(&self, k: &str, min: u64, max: u64) -> InputResult<Option<u64>> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(n))
                if *n >= 0 && (*n as u64) >= min && (*n as u64) <= max =>
            {
                Ok(Some(*n as u64))
            }
            Some(toml::Value::Integer(n)) => {
                Err(self.err(k, format!("{n} is out of range (accepted: {min}..={max})")))
            }
            Some(other) => Err(self.type_err(k, "an integer", other)),
        }
    }

    fn float(&self, k: &str) -> InputResult<Option<f64>> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Float(x)) => Ok(Some(*x)),
            Some(toml::Value::Integer(n)) => Ok(Some(*n as f64)),
            Some(other) => Err(self.type_err(k, "a number of seconds", other)),
        }
    }

    fn boolean(&self, k: &str) -> InputResult<Option<bool>> {
        match self.get(k) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.type_err(k, "true or false", other)),
        }
    }
}

impl Scenario {
    /// Read a scenario file and apply `--set` overrides.
    pub fn load(path: &std::path::Path, sets: &[String]) -> InputResult<Scenario> {
        let mut doc = ScenarioDoc::from_file(path)?;
        for s in sets {
            doc.apply_set(s)?;
        }
        Scenario::from_doc(doc)
    }

    /// Parse TOML text (tests, embedded examples).
    pub fn parse(text: &str, origin: &str) -> InputResult<Scenario> {
        Scenario::from_doc(ScenarioDoc::parse(text, origin)?)
    }

    /// Where the value at a dotted key came from (file path, `--set`, ...).
    pub fn origin_of(&self, dotted: &str) -> &str {
        self.doc.origin_of(dotted)
    }

    /// Validate a document and resolve it. Variants are parsed and each is checked by
    /// resolving it too, so a bad key in any variant is reported up front.
    pub fn from_doc(doc: ScenarioDoc) -> InputResult<Scenario> {
        let scenario = Scenario::from_doc_no_variants(doc)?;
        for v in &scenario.variants {
            scenario.with_variant(v)?;
        }
        Ok(scenario)
    }

    fn from_doc_no_variants(doc: ScenarioDoc) -> InputResult<Scenario> {
        let top = Section {
            doc: &doc,
            prefix: "",
            table: Some(&doc.table),
        };
        top.check_keys(TOP_KEYS)?;
        let description = top.string("description")?;
        let machine = parse_machine(&top.sub("machine", "machine")?)?;
        let kernel = parse_kernel(&top.sub("kernel", "kernel")?)?;
        let workload = parse_workload(&top.sub("workload", "workload")?)?;
        let run = parse_run(&top.sub("run", "run")?)?;
        let variants = parse_variants(&top)?;
        let source = doc.origin.clone();
        Ok(Scenario {
            doc,
            source,
            variant: None,
            description,
            machine,
            kernel,
            workload,
            run,
            variants,
        })
    }

    /// Names of the `[[variant]]`s, in file order.
    pub fn variant_names(&self) -> Vec<&str> {
        self.variants.iter().map(|v| v.name.as_str()).collect()
    }

    /// The scenario as variant `name` (its overrides applied to this document).
    pub fn variant(&self, name: &str) -> InputResult<Scenario> {
        match self.variants.iter().find(|v| v.name == name) {
            Some(v) => self.with_variant(v),
            None => {
                let names = self.variant_names();
                Err(InputError::with_key(
                    self.source.clone(),
                    "variant",
                    format!(
                        "no variant named '{name}'{}; defined: {}",
                        did_you_mean(name, &names),
                        if names.is_empty() {
                            "none".to_string()
                        } else {
                            names.join(", ")
                        }
                    ),
                ))
            }
        }
    }

    /// The scenario with `spec`'s overrides applied (for `[[variant]]` and `--variant`).
    pub fn with_variant(&self, spec: &VariantSpec) -> InputResult<Scenario> {
        let mut doc = self.doc.clone();
        doc.remove_path(&["variant"]);
        let origin = format!("{} [variant {}]", self.source, spec.name);
        for (dotted, value) in &spec.overrides {
            let path: Vec<String> = dotted.split('.').map(str::to_string).collect();
            doc.set_path(&path, value.clone(), &origin)?;
        }
        let mut s = Scenario::from_doc_no_variants(doc)?;
        s.variant = Some(spec.name.clone());
        Ok(s)
    }
}

fn parse_machine(sec: &Section) -> InputResult<MachineSpec> {
    sec.check_keys(MACHINE_KEYS)?;
    let path = |k: &str| -> InputResult<Option<String>> {
        let Some(p) = sec.string(k)? else {
            return Ok(None);
        };
        let key = sec.key(k);
        Ok(Some(match &sec.doc.base_dir {
            Some(dir) if sec.doc.from_document(&key) && std::path::Path::new(&p).is_relative() => {
                dir.join(&p).display().to_string()
            }
            _ => p,
        }))
    };
    let offline = match sec.get("offline") {
        None => None,
        Some(toml::Value::String(s)) => Some(s.clone()),
        // `--set machine.offline=5` arrives as an integer.
        Some(toml::Value::Integer(n)) => Some(n.to_string()),
        Some(other) => return Err(sec.type_err("offline", "a cpulist string", other)),
    };
    if let Some(list) = &offline {
        CpuMask::parse(list).map_err(|e| sec.err("offline", e.to_string()))?;
    }
    let spec = MachineSpec {
        preset: sec.string("preset")?,
        sysfs_root: path("sysfs_root")?,
        hwloc: path("hwloc")?,
        topology: sec.table("topology")?.cloned(),
        offline,
        cost: sec.table("cost")?.cloned(),
    };
    let given: Vec<&str> = [
        ("preset", spec.preset.is_some()),
        ("sysfs_root", spec.sysfs_root.is_some()),
        ("hwloc", spec.hwloc.is_some()),
        ("topology", spec.topology.is_some()),
    ]
    .iter()
    .filter(|(_, set)| *set)
    .map(|(k, _)| *k)
    .collect();
    match given.len() {
        1 => Ok(spec),
        0 => Err(InputError::with_key(
            sec.doc.origin_of("machine"),
            "machine",
            "no machine given (accepted: [machine] preset = \"NAME\" or \"host\", sysfs_root, \
             hwloc, or a [machine.topology] table; on the command line -m MACHINE; see \
             `schedlab list machines`)",
        )),
        _ => Err(sec.err(
            given[1],
            format!(
                "conflicts with machine.{} (accepted: exactly one of preset, sysfs_root, hwloc, \
                 topology)",
                given[0]
            ),
        )),
    }
}

fn parse_kernel(sec: &Section) -> InputResult<ResolvedKernel> {
    sec.check_keys(KERNEL_KEYS)?;
    let profile = match sec.string("profile")? {
        Some(name) => {
            let key = sec.key("profile");
            Profile::lookup(&name, sec.doc.origin_of(&key), &key)?
        }
        None => Profile::default_profile(),
    };
    let mut k = ResolvedKernel::from_profile(profile);
    let base_features = k.features;
    let base_sysctl = k.sysctl.clone();

    if let Some(feats) = sec.table("features")? {
        for (name, value) in feats {
            let key = format!("{}.features.{name}", sec.prefix);
            let origin = sec.doc.origin_of(&key);
            let f = Feature::lookup(name, origin, &key)?;
            let on = match value {
                toml::Value::Boolean(b) => *b,
                other => {
                    return Err(InputError::with_key(
                        origin,
                        key,
                        format!("expected true or false, got {}", sysctl::describe(other)),
                    ));
                }
            };
            k.features.set(f, on);
            let applies = f.info().applies_to;
            let ignored = match k.mode {
                SchedMode::Cfs => applies == AppliesTo::EevdfOnly,
                SchedMode::Eevdf => applies == AppliesTo::CfsOnly,
            };
            if ignored && on {
                k.notes.push(format!(
                    "{f} has no effect in {} mode (profile {})",
                    k.mode.name(),
                    k.profile
                ));
            }
        }
    }
    if let Some(table) = sec.table("sysctl")? {
        for (name, value) in table {
            let key = format!("{}.sysctl.{name}", sec.prefix);
            let origin = sec.doc.origin_of(&key);
            k.sysctl.set_value(name, value, origin, &key)?;
        }
    }
    // `[kernel] hz` / `preempt` are shorthands for the tunables of the same name; they win
    // over `[kernel.sysctl]`.
    for short in ["hz", "preempt"] {
        if let Some(value) = sec.get(short) {
            let key = sec.key(short);
            k.sysctl
                .set_value(short, value, sec.doc.origin_of(&key), &key)?;
        }
    }
    k.sysctl
        .validate(sec.doc.origin_of("kernel.sysctl"), "kernel.sysctl.")?;
    if k.sysctl.preempt == PreemptModel::Lazy && !profile.has_lazy_preemption() {
        let key = if sec.get("preempt").is_some() {
            sec.key("preempt")
        } else {
            format!("{}.sysctl.preempt", sec.prefix)
        };
        return Err(InputError::with_key(
            sec.doc.origin_of(&key),
            key,
            format!(
                "preempt = \"lazy\" exists from v6.13 (PREEMPT_LAZY); profile {} accepts none, \
                 voluntary, full",
                profile.name
            ),
        ));
    }
    if let Some(p) = sec.string("policy")? {
        k.policy = match p.as_str() {
            "linux-fair" => Policy::LinuxFair,
            "fifo" => Policy::Fifo,
            other => {
                return Err(sec.err(
                    "policy",
                    format!(
                        "unknown policy '{other}'{}; accepted: {}",
                        did_you_mean(other, Policy::NAMES),
                        Policy::NAMES.join(", ")
                    ),
                ));
            }
        };
    }
    k.feature_overrides = base_features
        .diff(&k.features)
        .into_iter()
        .map(|f| (f.name().to_string(), k.features.on(f)))
        .collect();
    k.sysctl_overrides = sysctl::diff(&base_sysctl, &k.sysctl);
    Ok(k)
}

fn parse_workload(sec: &Section) -> InputResult<WorkloadSpec> {
    let kind = sec.string("kind")?;
    let command = sec.string("command")?;
    if kind.is_none() && command.is_none() {
        return Err(InputError::with_key(
            sec.doc.origin_of("workload"),
            "workload",
            "no workload given (accepted: [workload] kind = \"hackbench\" | \"schbench\" | ... \
             with its parameters, or command = \"<benchmark command line>\"; on the command \
             line: -- <benchmark command line>; see `schedlab list workloads`)",
        ));
    }
    let mut params = sec.table.cloned().unwrap_or_default();
    params.remove("kind");
    params.remove("command");
    Ok(WorkloadSpec {
        kind,
        command,
        params,
    })
}

fn parse_run(sec: &Section) -> InputResult<RunSpec> {
    sec.check_keys(RUN_KEYS)?;
    let d = RunSpec::default();
    let runs = sec.uint("runs", 1, 100_000)?.map_or(d.runs, |n| n as u32);
    let seed = sec.uint("seed", 0, i64::MAX as u64)?.unwrap_or(d.seed);
    let warmup_s = sec.float("warmup_s")?.unwrap_or(d.warmup_s);
    if !(warmup_s >= 0.0 && warmup_s.is_finite()) {
        return Err(sec.err("warmup_s", format!("{warmup_s} (accepted: seconds >= 0)")));
    }
    let duration_s = sec.float("duration_s")?;
    if let Some(x) = duration_s
        && !(x > 0.0 && x.is_finite())
    {
        return Err(sec.err("duration_s", format!("{x} (accepted: seconds > 0)")));
    }
    let invariants = sec.boolean("invariants")?.unwrap_or(d.invariants);
    let pingpong_window_ms = match sec.get("pingpong_window_ms") {
        None => d.pingpong_window_ms,
        Some(toml::Value::Float(x)) => *x,
        Some(toml::Value::Integer(n)) => *n as f64,
        Some(other) => {
            return Err(sec.type_err("pingpong_window_ms", "a number of milliseconds", other));
        }
    };
    if !(0.0..=3_600_000.0).contains(&pingpong_window_ms) {
        return Err(sec.err(
            "pingpong_window_ms",
            format!("{pingpong_window_ms} (accepted: milliseconds, 0 to 3600000)"),
        ));
    }
    Ok(RunSpec {
        runs,
        seed,
        warmup_s,
        duration_s,
        invariants,
        pingpong_window_ms,
    })
}

fn parse_variants(top: &Section) -> InputResult<Vec<VariantSpec>> {
    let list = match top.get("variant") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(other) => return Err(top.type_err("variant", "[[variant]] tables", other)),
    };
    let mut out: Vec<VariantSpec> = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let key = format!("variant[{i}]");
        let origin = top.doc.origin_of("variant");
        let table = item.as_table().ok_or_else(|| {
            InputError::with_key(
                origin,
                key.clone(),
                format!("expected a table, got {}", sysctl::describe(item)),
            )
        })?;
        let name = match table.get("name") {
            Some(toml::Value::String(s)) if !s.is_empty() => s.clone(),
            _ => {
                return Err(InputError::with_key(
                    origin,
                    format!("{key}.name"),
                    "every [[variant]] needs name = \"...\"",
                ));
            }
        };
        if out.iter().any(|v| v.name == name) {
            return Err(InputError::with_key(
                origin,
                format!("{key}.name"),
                format!("variant name '{name}' is used twice"),
            ));
        }
        let mut overrides = BTreeMap::new();
        for (k, v) in table.iter().filter(|(k, _)| k.as_str() != "name") {
            flatten(k, v, &mut overrides);
        }
        for dotted in overrides.keys() {
            let section = dotted.split('.').next().unwrap_or_default();
            if !VARIANT_SECTIONS.contains(&section) || !dotted.contains('.') {
                return Err(InputError::with_key(
                    origin,
                    format!("{key}.{dotted}"),
                    format!(
                        "a variant may override keys of [kernel], [machine] or [workload] \
                         (e.g. \"kernel.features.TTWU_QUEUE\" = false), not '{dotted}'"
                    ),
                ));
            }
        }
        out.push(VariantSpec { name, overrides });
    }
    Ok(out)
}

/// Flatten nested tables into dotted leaves: `kernel = { features = { A = true } }` and
/// `"kernel.features.A" = true` both give `kernel.features.A`.
fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, toml::Value>) {
    match value {
        toml::Value::Table(t) if !t.is_empty() => {
            for (k, v) in t {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Parse `compare --variant NAME:FEAT,NO_FEAT,sysctl=value,dotted.key=value`.
/// `FEAT` turns a feature on, `NO_FEAT` off; `NAME=VALUE` sets a tunable when `NAME` is
/// one, `profile=v6.9` the profile, and a dotted key any scenario key.
pub fn parse_variant_spec(spec: &str, origin: &str) -> InputResult<VariantSpec> {
    let (name, items) = spec.split_once(':').unwrap_or((spec, ""));
    let name = name.trim();
    if name.is_empty() {
        return Err(InputError::with_key(
            origin,
            spec,
            "expected NAME:FEAT,NO_FEAT,sysctl=value (a name is required)",
        ));
    }
    let mut overrides = BTreeMap::new();
    for item in items.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) => {
                let k = k.trim();
                let value = parse_value(v.trim());
                let dotted = if k == "profile" {
                    "kernel.profile".to_string()
                } else if Feature::from_name(k).is_some() {
                    // FEAT=on|off
                    let (f, on) = parse_feature_switch(item, origin)?;
                    overrides.insert(
                        format!("kernel.features.{}", f.name()),
                        toml::Value::Boolean(on),
                    );
                    continue;
                } else if k.contains('.') {
                    k.to_string()
                } else {
                    // Otherwise it must be a tunable; the lookup reports close names.
                    format!("kernel.sysctl.{}", SysctlInfo::lookup(k, origin, k)?.name)
                };
                overrides.insert(dotted, value);
            }
            None => {
                let (f, on) = parse_feature_switch(item, origin)?;
                overrides.insert(
                    format!("kernel.features.{}", f.name()),
                    toml::Value::Boolean(on),
                );
            }
        }
    }
    Ok(VariantSpec {
        name: name.to_string(),
        overrides,
    })
}
