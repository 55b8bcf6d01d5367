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

use super::{ScenarioDoc, did_you_mean, parse_feature_switch, parse_value};
use crate::cpumask::CpuMask;
use crate::error::{InputError, InputResult};
use crate::input::keys::UInt;
use crate::input::{keys, limits};
use crate::kconfig::features::{AppliesTo, Feature, PIPE_EXCLUSIVE_WAITS_SINCE};
use crate::kconfig::profiles::{Profile, SchedMode};
use crate::kconfig::sysctl::{self, PreemptModel, SysctlInfo};
use crate::kconfig::{Policy, ResolvedKernel};

/// `[machine]`: where the machine comes from, and its raw extras.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
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
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub topology: Option<toml::Table>,
    /// CPUs to take offline, as a kernel cpulist (syntax checked here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline: Option<String>,
    /// `[machine.cost]`: cost-model overrides, for the cost module.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub cost: Option<toml::Table>,
}

/// The raw `[workload]` table: the kind or the benchmark command line, plus the rest for the
/// workload module (which parses it into a [`crate::workload::WorkloadSpec`], the benchmark).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WorkloadSection {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `start_ms`: when the workload starts, in simulated milliseconds from the start of the
    /// run (for several workloads in one run: a background load started before a latency
    /// benchmark). Absent = at 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<u64>,
    /// Every other key of `[workload]`, unchecked here.
    #[serde(flatten)]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub params: toml::Table,
}

/// `[run]`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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
    /// Window of the migration ping-pong detector (`crate::engine::pingpong`), in ms.
    pub pingpong_window_ms: f64,
    /// Most simulated tasks in one run (a memory budget: [`limits::BYTES_PER_TASK`] each).
    #[serde(skip_serializing_if = "RunSpec::default_max_tasks")]
    pub max_tasks: u64,
    /// Longest simulated duration of one run, in seconds.
    #[serde(skip_serializing_if = "RunSpec::default_max_duration")]
    pub max_duration_s: f64,
    /// Run-to-run variation sources (`[run] noise`, `noise_*`; `crate::engine::noise`).
    #[serde(skip_serializing_if = "RunSpec::default_noise")]
    pub noise: crate::engine::noise::NoiseParams,
    /// The machine's background tasks (`[run] noise`, `noise_<class>_interval_us` /
    /// `_run_us`; `crate::workload::background`): overrides of the machine's defaults.
    #[serde(skip_serializing_if = "RunSpec::default_background")]
    pub background: crate::workload::background::BackgroundSpec,
}

impl RunSpec {
    fn default_max_tasks(n: &u64) -> bool {
        *n == limits::DEFAULT_MAX_TASKS
    }

    fn default_max_duration(s: &f64) -> bool {
        *s == limits::DEFAULT_MAX_DURATION_S
    }

    fn default_noise(n: &crate::engine::noise::NoiseParams) -> bool {
        *n == crate::engine::noise::NoiseParams::DEFAULT
    }

    fn default_background(b: &crate::workload::background::BackgroundSpec) -> bool {
        *b == crate::workload::background::BackgroundSpec::default()
    }
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
            max_tasks: limits::DEFAULT_MAX_TASKS,
            max_duration_s: limits::DEFAULT_MAX_DURATION_S,
            noise: crate::engine::noise::NoiseParams::DEFAULT,
            background: crate::workload::background::BackgroundSpec::default(),
        }
    }
}

/// One `[[variant]]` (or `--variant`): a name and dotted-path overrides.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VariantSpec {
    pub name: String,
    /// `dotted.path -> value`, applied in key order.
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub overrides: BTreeMap<String, toml::Value>,
}

/// A parsed, validated scenario with its kernel resolved.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
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
    pub workload: WorkloadSection,
    /// The workloads after the first when several run together (`[[workload]]` entries 2..,
    /// or commands joined by a lone `+`); empty for one workload.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub more_workloads: Vec<WorkloadSection>,
    pub run: RunSpec,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSpec>,
}

const VARIANT_SECTIONS: &[&str] = &["kernel", "machine", "workload"];

/// The document's top level as typed keys (the one reader of [`crate::input::keys`]);
/// `[workload]` stays a raw table for the workload module, `[[variant]]` a list of tables.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DocKeys {
    description: Option<String>,
    machine: Option<MachineKeys>,
    kernel: Option<KernelKeys>,
    /// `[workload]`, or `[[workload]]` for several workloads in one run.
    workload: Option<toml::Value>,
    run: Option<RunKeys>,
    variant: Option<Vec<toml::Table>>,
}

/// `[machine]` keys.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MachineKeys {
    preset: Option<String>,
    offline: Option<toml::Value>,
    sysfs_root: Option<String>,
    hwloc: Option<String>,
    topology: Option<toml::Table>,
    cost: Option<toml::Table>,
}

/// `[kernel]` keys (features and tunables are checked by name against their registries).
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct KernelKeys {
    profile: Option<String>,
    features: Option<toml::Table>,
    sysctl: Option<toml::Table>,
    hz: Option<toml::Value>,
    preempt: Option<toml::Value>,
    policy: Option<Policy>,
}

/// `[run]` keys.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RunKeys {
    runs: Option<UInt<1, { limits::MAX_RUNS }>>,
    /// An integer, or a decimal string for seeds above 2^63-1 (TOML integers are i64).
    seed: Option<toml::Value>,
    warmup_s: Option<f64>,
    duration_s: Option<f64>,
    invariants: Option<bool>,
    pingpong_window_ms: Option<f64>,
    max_tasks: Option<UInt<1, { limits::MAX_TASKS_CEILING }>>,
    max_duration_s: Option<f64>,
    noise: Option<bool>,
    noise_work_cv_ppm: Option<UInt<0, 500_000>>,
    noise_timer_jitter_ns: Option<UInt<0, 1_000_000_000>>,
    noise_irq_rate_hz: Option<UInt<0, 100_000>>,
    noise_irq_len_ns: Option<UInt<0, 10_000_000>>,
    noise_kworker_interval_us: Option<UInt<0, 3_600_000_000>>,
    noise_kworker_run_us: Option<UInt<0, 1_000_000>>,
    noise_kthread_interval_us: Option<UInt<0, 3_600_000_000>>,
    noise_kthread_run_us: Option<UInt<0, 1_000_000>>,
    noise_daemon_interval_us: Option<UInt<0, 3_600_000_000>>,
    noise_daemon_run_us: Option<UInt<0, 1_000_000>>,
}

/// Error at `key` of `doc`, from its origin.
fn key_err(doc: &ScenarioDoc, key: &str, msg: impl Into<String>) -> InputError {
    InputError::with_key(doc.origin_of(key), key, msg)
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
        let keys: DocKeys = keys::from_table(&doc.table, "", &|k| doc.origin_of(k).to_string())
            .map_err(|mut e| {
                // At the top level an unknown key is an unknown section.
                if let Some(k) = e.key.as_deref().filter(|k| !k.contains('.')) {
                    if e.message.starts_with("unknown key")
                        && let Some(origin) = doc.origin_of_section(k)
                    {
                        e.origin = origin.to_string();
                    }
                    e.message = e.message.replacen("unknown key", "unknown section", 1);
                }
                e
            })?;
        let machine = parse_machine(&doc, keys.machine.unwrap_or_default())?;
        let kernel = parse_kernel(&doc, keys.kernel.unwrap_or_default())?;
        let (workload, more_workloads) = parse_workloads(&doc, keys.workload)?;
        let run = parse_run(&doc, keys.run.unwrap_or_default())?;
        let variants = parse_variants(&doc, keys.variant.unwrap_or_default())?;
        let source = doc.origin.clone();
        Ok(Scenario {
            doc,
            source,
            variant: None,
            description: keys.description,
            machine,
            kernel,
            workload,
            more_workloads,
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

fn parse_machine(doc: &ScenarioDoc, m: MachineKeys) -> InputResult<MachineSpec> {
    let path = |k: &str, p: Option<String>| -> Option<String> {
        let p = p?;
        let key = format!("machine.{k}");
        Some(match &doc.base_dir {
            Some(dir) if doc.from_document(&key) && std::path::Path::new(&p).is_relative() => {
                dir.join(&p).display().to_string()
            }
            _ => p,
        })
    };
    let offline = match m.offline {
        None => None,
        Some(toml::Value::String(s)) => Some(s),
        // `--set machine.offline=5` arrives as an integer.
        Some(toml::Value::Integer(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(key_err(
                doc,
                "machine.offline",
                keys::expected("a cpulist string", keys::describe(&other)),
            ));
        }
    };
    if let Some(list) = &offline {
        CpuMask::parse(list).map_err(|e| key_err(doc, "machine.offline", e.to_string()))?;
    }
    let spec = MachineSpec {
        preset: m.preset,
        sysfs_root: path("sysfs_root", m.sysfs_root),
        hwloc: path("hwloc", m.hwloc),
        topology: m.topology,
        offline,
        cost: m.cost,
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
            doc.origin_of("machine"),
            "machine",
            "no machine given (accepted: [machine] preset = \"NAME\" or \"host\", sysfs_root, \
             hwloc, or a [machine.topology] table; on the command line -m MACHINE; see \
             `schedlab list machines`)",
        )),
        _ => Err(key_err(
            doc,
            &format!("machine.{}", given[1]),
            format!(
                "conflicts with machine.{} (accepted: exactly one of preset, sysfs_root, hwloc, \
                 topology)",
                given[0]
            ),
        )),
    }
}

/// Why feature `f`, switched on, changes nothing on kernel `k` (a note, not an error: the
/// user may sweep a switch across profiles): an EEVDF-only bit in CFS mode or the reverse,
/// or PIPE_WAKE_ON_FREE before pipe writers waited exclusively (v5.5).
fn switched_on_without_effect(k: &ResolvedKernel, f: Feature) -> Option<String> {
    let applies = f.info().applies_to;
    let wrong_mode = match k.mode {
        SchedMode::Cfs => applies == AppliesTo::EevdfOnly,
        SchedMode::Eevdf => applies == AppliesTo::CfsOnly,
    };
    if wrong_mode {
        return Some(format!(
            "{f} has no effect in {} mode (profile {})",
            k.mode.name(),
            k.profile
        ));
    }
    if f == Feature::PIPE_WAKE_ON_FREE && k.version < PIPE_EXCLUSIVE_WAITS_SINCE {
        return Some(format!(
            "{f} has no effect before v5.5 (profile {}): pipe writers wait non-exclusively \
             there, and a freed page wakes them all",
            k.profile
        ));
    }
    None
}

fn parse_kernel(doc: &ScenarioDoc, keys: KernelKeys) -> InputResult<ResolvedKernel> {
    let profile = match &keys.profile {
        Some(name) => Profile::lookup(name, doc.origin_of("kernel.profile"), "kernel.profile")?,
        None => Profile::default_profile(),
    };
    let mut k = ResolvedKernel::from_profile(profile);
    let base_features = k.features;
    let base_sysctl = k.sysctl.clone();
    for (name, value) in keys.features.iter().flatten() {
        let key = format!("kernel.features.{name}");
        let origin = doc.origin_of(&key);
        let f = Feature::lookup(name, origin, &key)?;
        let on: bool = keys::from_value(value, &key, origin)?;
        k.features.set(f, on);
        if on && let Some(note) = switched_on_without_effect(&k, f) {
            k.notes.push(note);
        }
    }
    for (name, value) in keys.sysctl.iter().flatten() {
        let key = format!("kernel.sysctl.{name}");
        k.sysctl.set_value(name, value, doc.origin_of(&key), &key)?;
    }
    // `[kernel] hz` / `preempt` are shorthands for the tunables of the same name; they win
    // over `[kernel.sysctl]`.
    for (short, value) in [("hz", &keys.hz), ("preempt", &keys.preempt)] {
        if let Some(value) = value {
            let key = format!("kernel.{short}");
            k.sysctl
                .set_value(short, value, doc.origin_of(&key), &key)?;
        }
    }
    k.sysctl
        .validate(doc.origin_of("kernel.sysctl"), "kernel.sysctl.")?;
    if k.sysctl.preempt == PreemptModel::Lazy && !profile.has_lazy_preemption() {
        let key = if keys.preempt.is_some() {
            "kernel.preempt"
        } else {
            "kernel.sysctl.preempt"
        };
        return Err(key_err(
            doc,
            key,
            format!(
                "preempt = \"lazy\" exists from v6.13 (PREEMPT_LAZY); profile {} accepts none, \
                 voluntary, full",
                profile.name
            ),
        ));
    }
    if let Some(p) = keys.policy {
        k.policy = p;
    }
    k.feature_overrides = base_features
        .diff(&k.features)
        .into_iter()
        .map(|f| (f.name().to_string(), k.features.on(f)))
        .collect();
    k.sysctl_overrides = sysctl::diff(&base_sysctl, &k.sysctl);
    Ok(k)
}

/// `[workload]` (one workload) or `[[workload]]` (several, at most
/// [`crate::workload::merge::MAX_WORKLOADS`]): the first, and the others.
fn parse_workloads(
    doc: &ScenarioDoc,
    value: Option<toml::Value>,
) -> InputResult<(WorkloadSection, Vec<WorkloadSection>)> {
    use crate::workload::merge::MAX_WORKLOADS;
    let tables = match value {
        None => return Ok((parse_workload(doc, None, "workload")?, Vec::new())),
        Some(toml::Value::Table(t)) => {
            return Ok((parse_workload(doc, Some(t), "workload")?, Vec::new()));
        }
        Some(toml::Value::Array(a)) if (1..=MAX_WORKLOADS).contains(&a.len()) => a,
        Some(other) => {
            return Err(key_err(
                doc,
                "workload",
                keys::expected(
                    &format!(
                        "a table [workload], or 1 to {MAX_WORKLOADS} tables [[workload]] for \
                         several workloads in one run"
                    ),
                    keys::describe(&other),
                ),
            ));
        }
    };
    let mut sections = Vec::with_capacity(tables.len());
    for (i, t) in tables.into_iter().enumerate() {
        let name = format!("workload[{}]", i + 1);
        let toml::Value::Table(t) = t else {
            return Err(key_err(
                doc,
                &name,
                keys::expected("a table of workload keys", keys::describe(&t)),
            ));
        };
        sections.push(parse_workload(doc, Some(t), &name)?);
    }
    let first = sections.remove(0);
    Ok((first, sections))
}

/// One workload table; `name` (`workload`, `workload[2]`) prefixes its keys in errors.
fn parse_workload(
    doc: &ScenarioDoc,
    table: Option<toml::Table>,
    name: &str,
) -> InputResult<WorkloadSection> {
    let mut params = table.unwrap_or_default();
    let mut text = |k: &str| -> InputResult<Option<String>> {
        params
            .remove(k)
            .map(|v| {
                let key = format!("{name}.{k}");
                keys::from_value::<String>(&v, &key, doc.origin_of(&key))
            })
            .transpose()
    };
    let kind = text("kind")?;
    let command = text("command")?;
    let start_ms = params
        .remove("start_ms")
        .map(|v| {
            let key = format!("{name}.start_ms");
            keys::from_value::<UInt<0, { crate::workload::merge::MAX_START_MS }>>(
                &v,
                &key,
                doc.origin_of(&key),
            )
        })
        .transpose()?
        .map(UInt::get);
    match (&kind, &command) {
        (None, None) => Err(InputError::with_key(
            doc.origin_of("workload"),
            name,
            "no workload given (accepted: [workload] kind = \"hackbench\" | \"schbench\" | ... \
             with its parameters, or command = \"<benchmark command line>\"; on the command \
             line: -- <benchmark command line>; see `schedlab list workloads`)",
        )),
        (Some(_), Some(_)) => Err(key_err(
            doc,
            &format!("{name}.kind"),
            format!(
                "cannot be combined with {name}.command (accepted: either kind with its keys, \
                 or command with the benchmark's command line, which names the benchmark)"
            ),
        )),
        _ => Ok(WorkloadSection {
            kind,
            command,
            start_ms,
            params,
        }),
    }
}

fn parse_run(doc: &ScenarioDoc, keys: RunKeys) -> InputResult<RunSpec> {
    let d = RunSpec::default();
    let seconds = |key: &str, v: Option<f64>, min_excl: bool, hi: f64| {
        check_seconds(doc, key, v, min_excl, hi)
    };
    let max_duration_s = seconds(
        "run.max_duration_s",
        keys.max_duration_s,
        true,
        limits::MAX_DURATION_CEILING_S,
    )?
    .unwrap_or(d.max_duration_s);
    let runs = keys.runs.map_or(d.runs, |n| n.get() as u32);
    let seed = parse_seed(doc, keys.seed.as_ref())?.unwrap_or(d.seed);
    let warmup_s =
        seconds("run.warmup_s", keys.warmup_s, false, max_duration_s)?.unwrap_or(d.warmup_s);
    let duration_s = match keys.duration_s {
        Some(x) if x.is_finite() && x > max_duration_s => {
            return Err(key_err(
                doc,
                "run.duration_s",
                format!(
                    "{x} s is above the limit run.max_duration_s = {max_duration_s} s (raise it \
                     with --set run.max_duration_s=SECONDS, at most {})",
                    limits::MAX_DURATION_CEILING_S
                ),
            ));
        }
        other => seconds("run.duration_s", other, true, max_duration_s)?,
    };
    if let Some(dur) = duration_s
        && warmup_s >= dur
    {
        return Err(key_err(
            doc,
            "run.warmup_s",
            format!(
                "warm-up of {warmup_s} s leaves nothing to measure in run.duration_s = {dur} s \
                 (accepted: warmup_s < duration_s)"
            ),
        ));
    }
    let pingpong_window_ms = keys.pingpong_window_ms.unwrap_or(d.pingpong_window_ms);
    if !(0.0..=3_600_000.0).contains(&pingpong_window_ms) {
        return Err(key_err(
            doc,
            "run.pingpong_window_ms",
            keys::expected(
                "milliseconds from 0 to 3600000",
                format!("float {pingpong_window_ms}"),
            ),
        ));
    }
    let max_tasks = keys.max_tasks.map_or(d.max_tasks, UInt::get);
    let noise = parse_noise(&keys)?;
    Ok(RunSpec {
        runs,
        seed,
        warmup_s,
        duration_s,
        invariants: keys.invariants.unwrap_or(d.invariants),
        pingpong_window_ms,
        max_tasks,
        max_duration_s,
        noise,
        background: parse_background(&keys),
    })
}

/// `run.seed`: any u64, as an integer or (above 2^63-1, which a TOML integer cannot hold)
/// as a decimal string, so every seed a report prints can be passed back.
fn parse_seed(doc: &ScenarioDoc, v: Option<&toml::Value>) -> InputResult<Option<u64>> {
    let parsed = match v {
        None => return Ok(None),
        Some(toml::Value::Integer(i)) => u64::try_from(*i).ok(),
        Some(toml::Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(_) => None,
    };
    parsed.map(Some).ok_or_else(|| {
        let found = match v {
            Some(v) => keys::describe(v),
            None => String::new(),
        };
        key_err(
            doc,
            "run.seed",
            keys::expected(
                &format!(
                    "an integer from 0 to {} (above {} as a string, e.g. \"{}\")",
                    u64::MAX,
                    i64::MAX,
                    u64::MAX
                ),
                found,
            ),
        )
    })
}

/// `x` as a user would write it: scientific notation when the decimal form is long.
fn short_float(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `v` when it is absent or a finite number of seconds above (or at) 0 and at most `hi`.
fn check_seconds(
    doc: &ScenarioDoc,
    key: &str,
    v: Option<f64>,
    min_excl: bool,
    hi: f64,
) -> InputResult<Option<f64>> {
    match v {
        Some(x)
            if !(x.is_finite()
                && (if min_excl {
                    x >= limits::MIN_DURATION_S
                } else {
                    x >= 0.0
                })
                && x <= hi) =>
        {
            Err(key_err(
                doc,
                key,
                keys::expected(
                    &format!(
                        "seconds {} and at most {hi}",
                        if min_excl {
                            format!(">= {} (one microsecond)", limits::MIN_DURATION_S)
                        } else {
                            ">= 0".to_string()
                        }
                    ),
                    format!("float {}", short_float(x)),
                ),
            ))
        }
        other => Ok(other),
    }
}

/// The run-to-run noise: `run.noise = false` starts from all sources off, then each
/// `run.noise_*` key overrides its source.
fn parse_noise(keys: &RunKeys) -> InputResult<crate::engine::noise::NoiseParams> {
    let base = if keys.noise.unwrap_or(true) {
        RunSpec::default().noise
    } else {
        crate::engine::noise::NoiseParams::OFF
    };
    Ok(crate::engine::noise::NoiseParams {
        work_cv_ppm: keys
            .noise_work_cv_ppm
            .map_or(base.work_cv_ppm, |n| n.get() as u32),
        timer_jitter_ns_max: keys
            .noise_timer_jitter_ns
            .map_or(base.timer_jitter_ns_max, UInt::get),
        irq_rate_hz: keys
            .noise_irq_rate_hz
            .map_or(base.irq_rate_hz, |n| n.get() as u32),
        irq_len_ns: keys.noise_irq_len_ns.map_or(base.irq_len_ns, UInt::get),
    })
}

/// The background tasks: `run.noise = false` starts from none, then each
/// `run.noise_<class>_interval_us` / `_run_us` key overrides the machine's default.
fn parse_background(keys: &RunKeys) -> crate::workload::background::BackgroundSpec {
    let get = |k: Option<UInt<0, 3_600_000_000>>| k.map(UInt::get);
    let run = |k: Option<UInt<0, 1_000_000>>| k.map(UInt::get);
    crate::workload::background::BackgroundSpec {
        off: !keys.noise.unwrap_or(true),
        interval_us: [
            get(keys.noise_kworker_interval_us),
            get(keys.noise_kthread_interval_us),
            get(keys.noise_daemon_interval_us),
        ],
        run_us: [
            run(keys.noise_kworker_run_us),
            run(keys.noise_kthread_run_us),
            run(keys.noise_daemon_run_us),
        ],
    }
}

fn parse_variants(doc: &ScenarioDoc, list: Vec<toml::Table>) -> InputResult<Vec<VariantSpec>> {
    let mut out: Vec<VariantSpec> = Vec::new();
    let origin = doc.origin_of("variant");
    for (i, table) in list.iter().enumerate() {
        let key = format!("variant[{i}]");
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
        if let Some(problem) = limits::variant_name_problem(&name) {
            return Err(InputError::with_key(origin, format!("{key}.name"), problem));
        }
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
    let Some((name, items)) = spec.split_once(':') else {
        return Err(InputError::with_key(
            origin,
            limits::clip(spec).into_owned(),
            "a variant without a colon changes nothing; accepted: NAME:FEAT,NO_FEAT,\
             sysctl=value,dotted.key=value (e.g. nodelay:NO_DELAY_DEQUEUE; `NAME:` for an \
             explicit copy of the baseline)",
        ));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(InputError::with_key(
            origin,
            limits::clip(spec).into_owned(),
            "expected NAME:FEAT,NO_FEAT,sysctl=value (a name is required)",
        ));
    }
    if let Some(problem) = limits::variant_name_problem(name) {
        return Err(InputError::with_key(
            origin,
            limits::clip(spec).into_owned(),
            problem,
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
