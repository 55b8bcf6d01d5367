//! Scheduler tunables: the sysctls and debugfs knobs of `/proc/sys/kernel/sched_*` and
//! `/sys/kernel/debug/sched/*`, plus the build/boot choices that act like tunables (HZ, the
//! preemption model).
//!
//! Mirrors the variables at the top of `kernel/sched/fair.c` (`sysctl_sched_base_slice`,
//! `sysctl_sched_migration_cost`, the pre-v6.6 `sysctl_sched_latency` /
//! `_min_granularity` / `_wakeup_granularity`, `sysctl_sched_tunable_scaling`),
//! `sysctl_sched_nr_migrate` (core.c), the `numa_balancing_*` knobs, the fair dl_server
//! parameters (deadline.c), and `update_sysctl()` / `get_update_sysctl_factor()` which scale
//! the slice tunables by the number of online CPUs.
//!
//! The values stored here are the *normalized* ones (`normalized_sysctl_*`, before the
//! CPU-count factor), because that is what a kernel boots with and what a profile can state
//! independently of the machine; [`Sysctls::scaled_base_slice_ns`] and friends apply the
//! factor. Kernel difference worth knowing: writing `base_slice_ns` in debugfs sets the
//! *effective* value directly; to model that, set `sched_tunable_scaling = 0` (none) and the
//! wanted slice.
//!
//! Left out: knobs with no modelled effect (`sched_child_runs_first`, autogroup, uclamp,
//! cfs bandwidth, energy-aware scheduling, `numa_balancing_hot_threshold_ms` and the memory
//! tiering knobs).

use std::collections::BTreeMap;

use super::did_you_mean;
use crate::error::{InputError, InputResult};

/// `RR_TIMESLICE` in ms: the default of `sched_rr_timeslice_ms` (`kernel/sched/rt.c`).
pub const RR_TIMESLICE_MS: u64 = 100;

/// `sysctl_sched_tunable_scaling` (`enum sched_tunable_scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableScaling {
    /// `SCHED_TUNABLESCALING_NONE` = 0: factor 1.
    None = 0,
    /// `SCHED_TUNABLESCALING_LOG` = 1 (the default): factor `1 + ilog2(min(ncpus, 8))`.
    Log = 1,
    /// `SCHED_TUNABLESCALING_LINEAR` = 2: factor `min(ncpus, 8)`.
    Linear = 2,
}

/// The kernel's preemption model (`CONFIG_PREEMPT_*`, or `preempt=` with PREEMPT_DYNAMIC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PreemptModel {
    /// `preempt=none`: preemption only on return to user space.
    None,
    /// `preempt=voluntary`: plus the `might_resched()` points in the kernel.
    Voluntary,
    /// `preempt=full`: any point outside critical sections.
    Full,
    /// `preempt=lazy` (v6.13+): fair-class wakeup preemption waits for the next tick or
    /// return to user space (TIF_NEED_RESCHED_LAZY); RT preemption is immediate.
    Lazy,
}

impl PreemptModel {
    pub const NAMES: &'static [&'static str] = &["none", "voluntary", "full", "lazy"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(name: &str) -> Option<PreemptModel> {
        match name {
            "none" => Some(PreemptModel::None),
            "voluntary" => Some(PreemptModel::Voluntary),
            "full" => Some(PreemptModel::Full),
            "lazy" => Some(PreemptModel::Lazy),
            _ => None,
        }
    }
}

/// All tunables of one simulated kernel, at kernel default values by [`Sysctls::default`]
/// (the v6.18 defaults; profiles adjust the ones that changed).
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Sysctls {
    /// `sysctl_sched_migration_cost`: a task that ran less than this ago is cache hot
    /// (`task_hot`); also the newidle gates and `max_idle_balance_cost` floor.
    pub sched_migration_cost_ns: u64,
    /// `sysctl_sched_nr_migrate`: most tasks one balance pass may detach (loop_max).
    pub sched_nr_migrate: u32,
    /// `normalized_sysctl_sched_base_slice` (EEVDF, v6.6+): 700 µs from v6.15
    /// (2ae891b82695), 750 µs in v6.6–v6.14. Scaled by the CPU-count factor.
    pub sched_base_slice_ns: u64,
    /// `normalized_sysctl_sched_latency` (CFS, before v6.6): the targeted period.
    pub sched_latency_ns: u64,
    /// `normalized_sysctl_sched_min_granularity` (CFS): smallest slice.
    pub sched_min_granularity_ns: u64,
    /// `normalized_sysctl_sched_wakeup_granularity` (CFS): vruntime lead a wakee needs to
    /// preempt.
    pub sched_wakeup_granularity_ns: u64,
    /// `sysctl_sched_tunable_scaling`: 0 none, 1 log (default), 2 linear.
    pub sched_tunable_scaling: u32,
    /// `kernel.numa_balancing`: 0 off, 1 normal (default on a multi-node machine), 2 memory
    /// tiering, 3 both. Has no effect on a single-node machine, as in the kernel.
    pub numa_balancing: u32,
    /// `numa_balancing/scan_delay_ms`: first scan delay of a new mm / task.
    pub numa_balancing_scan_delay_ms: u64,
    /// `numa_balancing/scan_period_min_ms`.
    pub numa_balancing_scan_period_min_ms: u64,
    /// `numa_balancing/scan_period_max_ms`.
    pub numa_balancing_scan_period_max_ms: u64,
    /// `numa_balancing/scan_size_mb`: address space scanned per scan window.
    pub numa_balancing_scan_size_mb: u64,
    /// `kernel.sched_schedstats`: whether the schedstat-only counters are collected. The
    /// simulator always counts them (they cost nothing here); this only mirrors the knob for
    /// reports that print it.
    pub sched_schedstats: bool,
    /// `CONFIG_HZ`: tick frequency (100, 250, 300 or 1000).
    pub hz: u32,
    /// The preemption model.
    pub preempt: PreemptModel,
    /// Kernel built with `CONFIG_PREEMPT_DYNAMIC` (so `CONFIG_PREEMPTION=y` whatever the boot
    /// model — as every major distribution kernel since ~v5.12). Compile-time
    /// `#ifdef CONFIG_PREEMPTION` code, e.g. `detach_tasks()` stopping after one task in
    /// newidle balancing, follows this, not `preempt`.
    pub preempt_dynamic: bool,
    /// Built with `CONFIG_IRQ_TIME_ACCOUNTING`: hard and soft interrupt time is kept out of
    /// `rq->clock_task` (`update_rq_clock_task()` subtracts `irq_time_read()`), so a task's
    /// runtime and PELT do not count the interrupts that hit it. Off in the upstream
    /// Kconfig (and on this project's VM); on in RHEL/Fedora-derived configs such as
    /// LKP's `x86_64-rhel-9.4`.
    pub irq_time_accounting: bool,
    /// Fair dl_server runtime per period (`fair_server/cpuN/runtime`); 0 disables it.
    pub dl_server_runtime_ns: u64,
    /// Fair dl_server period (`fair_server/cpuN/period`).
    pub dl_server_period_ns: u64,
    /// `kernel.sched_rt_runtime_us`: RT runtime per period before RT throttling (kernels
    /// with default RT bandwidth control, before v6.12). The kernel's -1 (no limit) is
    /// written as a value >= `sched_rt_period_us`, which the kernel also treats as no limit.
    pub sched_rt_runtime_us: u64,
    /// `kernel.sched_rt_period_us`.
    pub sched_rt_period_us: u64,
    /// `kernel.sched_rr_timeslice_ms`: the SCHED_RR slice.
    pub sched_rr_timeslice_ms: u64,
}

impl Default for Sysctls {
    fn default() -> Self {
        Sysctls {
            sched_migration_cost_ns: 500_000,
            sched_nr_migrate: 32,
            sched_base_slice_ns: 700_000,
            sched_latency_ns: 6_000_000,
            sched_min_granularity_ns: 750_000,
            sched_wakeup_granularity_ns: 1_000_000,
            sched_tunable_scaling: TunableScaling::Log as u32,
            numa_balancing: 1,
            numa_balancing_scan_delay_ms: 1000,
            numa_balancing_scan_period_min_ms: 1000,
            numa_balancing_scan_period_max_ms: 60_000,
            numa_balancing_scan_size_mb: 256,
            sched_schedstats: false,
            hz: 250,
            preempt: PreemptModel::Voluntary,
            preempt_dynamic: true,
            irq_time_accounting: false,
            dl_server_runtime_ns: 50_000_000,
            dl_server_period_ns: 1_000_000_000,
            sched_rt_runtime_us: 950_000,
            sched_rt_period_us: 1_000_000,
            sched_rr_timeslice_ms: RR_TIMESLICE_MS,
        }
    }
}

impl Sysctls {
    pub fn tunable_scaling(&self) -> TunableScaling {
        match self.sched_tunable_scaling {
            0 => TunableScaling::None,
            2 => TunableScaling::Linear,
            _ => TunableScaling::Log,
        }
    }

    /// `get_update_sysctl_factor()`: the factor the slice tunables are multiplied by for
    /// `nr_cpus` online CPUs (the kernel recomputes it on CPU hotplug).
    pub fn tunable_factor(&self, nr_cpus: usize) -> u64 {
        let cpus = nr_cpus.clamp(1, 8) as u64;
        match self.tunable_scaling() {
            TunableScaling::None => 1,
            TunableScaling::Linear => cpus,
            TunableScaling::Log => 1 + u64::from(cpus.ilog2()),
        }
    }

    /// Effective `sysctl_sched_base_slice` on `nr_cpus` online CPUs.
    pub fn scaled_base_slice_ns(&self, nr_cpus: usize) -> u64 {
        self.sched_base_slice_ns * self.tunable_factor(nr_cpus)
    }

    /// Effective CFS `sysctl_sched_latency`.
    pub fn scaled_latency_ns(&self, nr_cpus: usize) -> u64 {
        self.sched_latency_ns * self.tunable_factor(nr_cpus)
    }

    /// Effective CFS `sysctl_sched_min_granularity`.
    pub fn scaled_min_granularity_ns(&self, nr_cpus: usize) -> u64 {
        self.sched_min_granularity_ns * self.tunable_factor(nr_cpus)
    }

    /// Effective CFS `sysctl_sched_wakeup_granularity`.
    pub fn scaled_wakeup_granularity_ns(&self, nr_cpus: usize) -> u64 {
        self.sched_wakeup_granularity_ns * self.tunable_factor(nr_cpus)
    }

    /// CFS `sched_nr_latency` = latency / min_granularity (8 with the defaults): above this
    /// many tasks the period stretches to `nr_running × min_granularity`.
    pub fn sched_nr_latency(&self) -> u64 {
        (self.sched_latency_ns / self.sched_min_granularity_ns.max(1)).max(1)
    }

    /// One tick, in ns.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.hz)
    }

    /// Set one tunable by name from a TOML value; errors name `origin` and `key`.
    pub fn set_value(
        &mut self,
        name: &str,
        value: &toml::Value,
        origin: &str,
        key: &str,
    ) -> InputResult<()> {
        let info = SysctlInfo::lookup(name, origin, key)?;
        (info.set)(self, info.check(value, origin, key)?);
        Ok(())
    }

    /// Current value of a tunable, as text (for tables and overrides lists).
    pub fn get_text(&self, name: &str) -> Option<String> {
        SysctlInfo::find(name).map(|i| (i.get)(self).to_string())
    }

    /// Cross-field checks (after all values are set).
    pub fn validate(&self, origin: &str, key_prefix: &str) -> InputResult<()> {
        if self.numa_balancing_scan_period_min_ms > self.numa_balancing_scan_period_max_ms {
            return Err(InputError::with_key(
                origin,
                format!("{key_prefix}numa_balancing_scan_period_min_ms"),
                format!(
                    "{} ms exceeds numa_balancing_scan_period_max_ms = {} ms (accepted: min <= max)",
                    self.numa_balancing_scan_period_min_ms, self.numa_balancing_scan_period_max_ms
                ),
            ));
        }
        if self.dl_server_runtime_ns > self.dl_server_period_ns {
            return Err(InputError::with_key(
                origin,
                format!("{key_prefix}dl_server_runtime_ns"),
                format!(
                    "{} ns exceeds dl_server_period_ns = {} ns (accepted: runtime <= period)",
                    self.dl_server_runtime_ns, self.dl_server_period_ns
                ),
            ));
        }
        Ok(())
    }
}

/// A tunable's value, checked against its kind.
#[derive(Clone, Debug, PartialEq)]
pub enum SysctlValue {
    Int(u64),
    Bool(bool),
    Preempt(PreemptModel),
}

impl std::fmt::Display for SysctlValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SysctlValue::Int(n) => write!(f, "{n}"),
            SysctlValue::Bool(b) => write!(f, "{}", u8::from(*b)),
            SysctlValue::Preempt(p) => f.write_str(p.name()),
        }
    }
}

/// What values a tunable accepts.
#[derive(Clone, Copy, Debug)]
pub enum SysctlKind {
    /// An integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// One of a fixed set of integers.
    IntChoice(&'static [u64]),
    /// 0/1 or false/true.
    Bool,
    /// A preemption model name.
    Preempt,
}

/// One registry entry.
pub struct SysctlInfo {
    pub name: &'static str,
    /// Other names accepted: the debugfs file name, the `kernel.` sysctl path.
    pub aliases: &'static [&'static str],
    pub unit: &'static str,
    pub kind: SysctlKind,
    pub doc: &'static str,
    pub get: fn(&Sysctls) -> SysctlValue,
    pub set: fn(&mut Sysctls, SysctlValue),
}

fn int(v: SysctlValue) -> u64 {
    match v {
        SysctlValue::Int(n) => n,
        SysctlValue::Bool(b) => u64::from(b),
        SysctlValue::Preempt(p) => p as u64,
    }
}

const NS_MAX: u64 = 1_000_000_000_000; // 1000 s: far beyond any sensible tunable

macro_rules! int_entry {
    ($name:literal, $aliases:expr, $unit:literal, $min:expr, $max:expr, $field:ident, $ty:ty, $doc:literal) => {
        SysctlInfo {
            name: $name,
            aliases: $aliases,
            unit: $unit,
            kind: SysctlKind::Int {
                min: $min,
                max: $max,
            },
            doc: $doc,
            get: |s| SysctlValue::Int(s.$field as u64),
            set: |s, v| s.$field = int(v) as $ty,
        }
    };
}

/// A 0|1 tunable (`SysctlKind::Bool`) backed by a `bool` field.
macro_rules! bool_entry {
    ($name:literal, $aliases:expr, $field:ident, $doc:literal) => {
        SysctlInfo {
            name: $name,
            aliases: $aliases,
            unit: "0|1",
            kind: SysctlKind::Bool,
            doc: $doc,
            get: |s| SysctlValue::Bool(s.$field),
            set: |s, v| s.$field = int(v) != 0,
        }
    };
}

/// Every tunable, in the order `schedlab list` and the JSON print them.
pub static SYSCTLS: &[SysctlInfo] = &[
    int_entry!(
        "sched_migration_cost_ns",
        &["migration_cost_ns", "kernel.sched_migration_cost_ns"],
        "ns",
        0,
        NS_MAX,
        sched_migration_cost_ns,
        u64,
        "task_hot threshold and newidle cost floor (500000)"
    ),
    int_entry!(
        "sched_nr_migrate",
        &["nr_migrate", "kernel.sched_nr_migrate"],
        "tasks",
        1,
        1 << 20,
        sched_nr_migrate,
        u32,
        "most tasks one balance pass may move (32)"
    ),
    int_entry!(
        "sched_base_slice_ns",
        &["base_slice_ns"],
        "ns",
        100_000,
        NS_MAX,
        sched_base_slice_ns,
        u64,
        "EEVDF request size before CPU-count scaling (700000 from v6.15, 750000 before)"
    ),
    int_entry!(
        "sched_latency_ns",
        &["latency_ns", "kernel.sched_latency_ns"],
        "ns",
        100_000,
        NS_MAX,
        sched_latency_ns,
        u64,
        "CFS targeted scheduling period before scaling (6000000)"
    ),
    int_entry!(
        "sched_min_granularity_ns",
        &["min_granularity_ns", "kernel.sched_min_granularity_ns"],
        "ns",
        100_000,
        NS_MAX,
        sched_min_granularity_ns,
        u64,
        "CFS minimum slice before scaling (750000)"
    ),
    int_entry!(
        "sched_wakeup_granularity_ns",
        &[
            "wakeup_granularity_ns",
            "kernel.sched_wakeup_granularity_ns"
        ],
        "ns",
        0,
        NS_MAX,
        sched_wakeup_granularity_ns,
        u64,
        "CFS vruntime lead a wakee needs to preempt, before scaling (1000000)"
    ),
    int_entry!(
        "sched_tunable_scaling",
        &["tunable_scaling", "kernel.sched_tunable_scaling"],
        "",
        0,
        2,
        sched_tunable_scaling,
        u32,
        "slice scaling by online CPUs: 0 none, 1 log = 1+ilog2(min(n,8)), 2 linear (1)"
    ),
    int_entry!(
        "numa_balancing",
        &["kernel.numa_balancing"],
        "",
        0,
        3,
        numa_balancing,
        u32,
        "automatic NUMA balancing: 0 off, 1 normal, 2 tiering, 3 both (1; multi-node only)"
    ),
    int_entry!(
        "numa_balancing_scan_delay_ms",
        &["scan_delay_ms", "kernel.numa_balancing_scan_delay_ms"],
        "ms",
        0,
        3_600_000,
        numa_balancing_scan_delay_ms,
        u64,
        "delay before a new task's first NUMA scan (1000)"
    ),
    int_entry!(
        "numa_balancing_scan_period_min_ms",
        &[
            "scan_period_min_ms",
            "kernel.numa_balancing_scan_period_min_ms"
        ],
        "ms",
        1,
        3_600_000,
        numa_balancing_scan_period_min_ms,
        u64,
        "shortest NUMA scan period (1000)"
    ),
    int_entry!(
        "numa_balancing_scan_period_max_ms",
        &[
            "scan_period_max_ms",
            "kernel.numa_balancing_scan_period_max_ms"
        ],
        "ms",
        1,
        3_600_000,
        numa_balancing_scan_period_max_ms,
        u64,
        "longest NUMA scan period (60000)"
    ),
    int_entry!(
        "numa_balancing_scan_size_mb",
        &["scan_size_mb", "kernel.numa_balancing_scan_size_mb"],
        "MB",
        1,
        1 << 20,
        numa_balancing_scan_size_mb,
        u64,
        "address space marked per NUMA scan window (256)"
    ),
    bool_entry!(
        "sched_schedstats",
        &["kernel.sched_schedstats"],
        sched_schedstats,
        "schedstat collection switch; mirrored only, the simulator always counts (0)"
    ),
    SysctlInfo {
        name: "hz",
        aliases: &["HZ", "CONFIG_HZ"],
        unit: "Hz",
        kind: SysctlKind::IntChoice(&[100, 250, 300, 1000]),
        doc: "tick frequency, CONFIG_HZ (250)",
        get: |s| SysctlValue::Int(u64::from(s.hz)),
        set: |s, v| s.hz = int(v) as u32,
    },
    SysctlInfo {
        name: "preempt",
        aliases: &["preempt_model"],
        unit: "model",
        kind: SysctlKind::Preempt,
        doc: "preemption model: none, voluntary, full, lazy (v6.13+) (voluntary)",
        get: |s| SysctlValue::Preempt(s.preempt),
        set: |s, v| {
            if let SysctlValue::Preempt(p) = v {
                s.preempt = p
            }
        },
    },
    bool_entry!(
        "preempt_dynamic",
        &["CONFIG_PREEMPT_DYNAMIC"],
        preempt_dynamic,
        "built with PREEMPT_DYNAMIC, hence CONFIG_PREEMPTION=y (1)"
    ),
    bool_entry!(
        "irq_time_accounting",
        &["CONFIG_IRQ_TIME_ACCOUNTING"],
        irq_time_accounting,
        "built with CONFIG_IRQ_TIME_ACCOUNTING: interrupt time is not task time (0)"
    ),
    int_entry!(
        "dl_server_runtime_ns",
        &["fair_server_runtime_ns"],
        "ns",
        0,
        NS_MAX,
        dl_server_runtime_ns,
        u64,
        "fair dl_server runtime per period; 0 disables it (50000000)"
    ),
    int_entry!(
        "dl_server_period_ns",
        &["fair_server_period_ns"],
        "ns",
        1_000_000,
        NS_MAX,
        dl_server_period_ns,
        u64,
        "fair dl_server period (1000000000)"
    ),
    int_entry!(
        "sched_rt_runtime_us",
        &["kernel.sched_rt_runtime_us"],
        "us",
        0,
        NS_MAX / 1000,
        sched_rt_runtime_us,
        u64,
        "RT runtime per period before throttling (before v6.12); >= the period: no limit \
         (950000)"
    ),
    int_entry!(
        "sched_rt_period_us",
        &["kernel.sched_rt_period_us"],
        "us",
        1,
        NS_MAX / 1000,
        sched_rt_period_us,
        u64,
        "RT bandwidth period (1000000)"
    ),
    int_entry!(
        "sched_rr_timeslice_ms",
        &["kernel.sched_rr_timeslice_ms", "rr_timeslice_ms"],
        "ms",
        1,
        NS_MAX / 1_000_000,
        sched_rr_timeslice_ms,
        u64,
        "SCHED_RR time slice (100)"
    ),
];

impl SysctlInfo {
    /// The entry for a name or alias (exact).
    pub fn find(name: &str) -> Option<&'static SysctlInfo> {
        SYSCTLS
            .iter()
            .find(|i| i.name == name || i.aliases.contains(&name))
    }

    /// Like [`SysctlInfo::find`], with an [`InputError`] listing the accepted names.
    pub fn lookup(name: &str, origin: &str, key: &str) -> InputResult<&'static SysctlInfo> {
        SysctlInfo::find(name).ok_or_else(|| {
            let names: Vec<&str> = SYSCTLS.iter().map(|i| i.name).collect();
            InputError::with_key(
                origin,
                key,
                format!(
                    "unknown tunable '{}'{}; accepted: {}",
                    crate::input::limits::clip(name),
                    did_you_mean(name, &names),
                    names.join(", ")
                ),
            )
        })
    }

    /// Check a TOML value against this entry's kind.
    pub fn check(&self, value: &toml::Value, origin: &str, key: &str) -> InputResult<SysctlValue> {
        let bad = |what: String| InputError::with_key(origin, key, what);
        match self.kind {
            SysctlKind::Int { min, max } => {
                let n = as_u64(value).ok_or_else(|| {
                    bad(format!(
                        "expected an integer{}, got {}",
                        if self.unit.is_empty() {
                            String::new()
                        } else {
                            format!(" in {}", self.unit)
                        },
                        describe(value)
                    ))
                })?;
                if n < min || n > max {
                    return Err(bad(format!(
                        "{n} is out of range (accepted: {min}..={max} {})",
                        self.unit
                    )
                    .replace(" )", ")")));
                }
                Ok(SysctlValue::Int(n))
            }
            SysctlKind::IntChoice(choices) => {
                let n = as_u64(value)
                    .filter(|n| choices.contains(n))
                    .ok_or_else(|| {
                        let list: Vec<String> = choices.iter().map(|c| c.to_string()).collect();
                        bad(format!(
                            "got {} (accepted: one of {})",
                            describe(value),
                            list.join(", ")
                        ))
                    })?;
                Ok(SysctlValue::Int(n))
            }
            SysctlKind::Bool => match value {
                toml::Value::Boolean(b) => Ok(SysctlValue::Bool(*b)),
                toml::Value::Integer(0) => Ok(SysctlValue::Bool(false)),
                toml::Value::Integer(1) => Ok(SysctlValue::Bool(true)),
                other => Err(bad(format!(
                    "got {} (accepted: 0, 1, false, true)",
                    describe(other)
                ))),
            },
            SysctlKind::Preempt => value
                .as_str()
                .and_then(PreemptModel::from_name)
                .map(SysctlValue::Preempt)
                .ok_or_else(|| {
                    bad(format!(
                        "got {} (accepted: {})",
                        describe(value),
                        PreemptModel::NAMES.join(", ")
                    ))
                }),
        }
    }
}

fn as_u64(value: &toml::Value) -> Option<u64> {
    match value {
        toml::Value::Integer(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// A short description of a TOML value for error messages: `string "abc"`, `integer -1`.
pub(crate) fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("string \"{}\"", crate::error::escape_controls(s)),
        toml::Value::Integer(n) => format!("integer {n}"),
        toml::Value::Float(x) => format!("float {x}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("datetime {d}"),
        toml::Value::Array(_) => "an array".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// `name -> value text` of every tunable that differs between `a` and `b` (value of `b`).
pub fn diff(a: &Sysctls, b: &Sysctls) -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter(|i| (i.get)(a) != (i.get)(b))
        .map(|i| (i.name.to_string(), (i.get)(b).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_defaults() {
        let s = Sysctls::default();
        assert_eq!(s.sched_migration_cost_ns, 500_000);
        assert_eq!(s.sched_nr_migrate, 32);
        assert_eq!(s.sched_base_slice_ns, 700_000);
        assert_eq!(s.sched_latency_ns, 6_000_000);
        assert_eq!(s.sched_min_granularity_ns, 750_000);
        assert_eq!(s.sched_wakeup_granularity_ns, 1_000_000);
        assert_eq!(s.tunable_scaling(), TunableScaling::Log);
        assert_eq!(s.hz, 250);
        assert_eq!(s.tick_ns(), 4_000_000);
        assert_eq!(s.dl_server_runtime_ns, 50_000_000);
        assert_eq!(s.dl_server_period_ns, 1_000_000_000);
        assert_eq!(
            s.sched_nr_latency(),
            8,
            "CFS sched_nr_latency = 6 ms / 0.75 ms"
        );
    }

    #[test]
    fn log_scaling_of_the_v6_6_base_slice() {
        // 0.75 ms × (1 + ilog2(min(n, 8))): the v6.6-v6.14 values quoted in 2ae891b82695.
        let s = Sysctls {
            sched_base_slice_ns: 750_000,
            ..Sysctls::default()
        };
        for (cpus, want) in [
            (1, 750_000),
            (2, 1_500_000),
            (3, 1_500_000),
            (4, 2_250_000),
            (7, 2_250_000),
            (8, 3_000_000),
            (224, 3_000_000),
        ] {
            assert_eq!(s.scaled_base_slice_ns(cpus), want, "{cpus} CPUs");
        }
        // v6.15+: 0.70 ms × factor (2.8 ms on 8+ CPUs).
        assert_eq!(Sysctls::default().scaled_base_slice_ns(224), 2_800_000);
        // CFS on >= 8 CPUs: 24 / 3 / 4 ms.
        let d = Sysctls::default();
        assert_eq!(d.scaled_latency_ns(80), 24_000_000);
        assert_eq!(d.scaled_min_granularity_ns(80), 3_000_000);
        assert_eq!(d.scaled_wakeup_granularity_ns(80), 4_000_000);
    }

    #[test]
    fn other_scaling_modes() {
        let mut s = Sysctls {
            sched_tunable_scaling: 0,
            ..Sysctls::default()
        };
        assert_eq!(s.scaled_base_slice_ns(224), 700_000);
        s.sched_tunable_scaling = 2;
        assert_eq!(s.scaled_base_slice_ns(4), 2_800_000);
        assert_eq!(s.scaled_base_slice_ns(224), 5_600_000);
    }

    #[test]
    fn set_by_name_with_type_and_range_errors() {
        let mut s = Sysctls::default();
        s.set_value(
            "sched_migration_cost_ns",
            &toml::Value::Integer(250_000),
            "f",
            "k",
        )
        .unwrap();
        assert_eq!(s.sched_migration_cost_ns, 250_000);
        s.set_value("base_slice_ns", &toml::Value::Integer(3_000_000), "f", "k")
            .unwrap();
        assert_eq!(s.sched_base_slice_ns, 3_000_000, "debugfs alias");
        s.set_value("hz", &toml::Value::Integer(1000), "f", "k")
            .unwrap();
        assert_eq!(s.tick_ns(), 1_000_000);
        s.set_value("preempt", &toml::Value::String("full".into()), "f", "k")
            .unwrap();
        assert_eq!(s.preempt, PreemptModel::Full);
        s.set_value("sched_schedstats", &toml::Value::Integer(1), "f", "k")
            .unwrap();
        assert!(s.sched_schedstats);

        let e = s
            .set_value(
                "hz",
                &toml::Value::Integer(200),
                "f.toml",
                "kernel.sysctl.hz",
            )
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("kernel.sysctl.hz"));
        assert!(e.message.contains("100, 250, 300, 1000"), "{}", e.message);
        let e = s
            .set_value("numa_balancing", &toml::Value::Integer(4), "f", "k")
            .unwrap_err();
        assert!(e.message.contains("0..=3"), "{}", e.message);
        let e = s
            .set_value(
                "sched_nr_migrate",
                &toml::Value::String("many".into()),
                "f",
                "k",
            )
            .unwrap_err();
        assert!(e.message.contains("string \"many\""), "{}", e.message);
        let e = s
            .set_value("sched_migraton_cost_ns", &toml::Value::Integer(1), "f", "k")
            .unwrap_err();
        assert!(
            e.message.contains("sched_migration_cost_ns"),
            "{}",
            e.message
        );
    }

    #[test]
    fn cross_field_validation() {
        let s = Sysctls {
            dl_server_runtime_ns: 2_000_000_000,
            ..Sysctls::default()
        };
        let e = s.validate("f", "kernel.sysctl.").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("kernel.sysctl.dl_server_runtime_ns"));
        assert!(Sysctls::default().validate("f", "").is_ok());
    }

    #[test]
    fn every_entry_round_trips_its_default() {
        let d = Sysctls::default();
        for info in SYSCTLS {
            let mut s = d.clone();
            let text = (info.get)(&d).to_string();
            let value: toml::Value = match info.kind {
                SysctlKind::Preempt => toml::Value::String(text.clone()),
                _ => toml::Value::Integer(text.parse().unwrap()),
            };
            s.set_value(info.name, &value, "t", info.name).unwrap();
            assert_eq!(s, d, "{}", info.name);
            assert_eq!(s.get_text(info.name).unwrap(), text);
        }
    }
}
