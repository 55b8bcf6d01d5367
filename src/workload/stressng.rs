//! stress-ng's `cpu` stressor — `stress-ng --cpu N [-l P] [--cpu-load-slice S] [--cpu-ops K]
//! [--cpu-method M] [-t T] [--metrics-brief|--metrics]` — parsed as the program parses it, with
//! its load-slice arithmetic and its exact info/metrics output.
//!
//! Model (reference/workloads.md §3, ColinIanKing/stress-ng `stress-cpu.c`, `stress-ng.c`):
//! N single-threaded worker processes (`--cpu 0` = the configured CPUs). Each calls the chosen
//! compute method in a loop. Since stress-ng 0.14 each call adds `1484.5 / bogo_op_rate` to the
//! bogo counter, where `bogo_op_rate` is the method's call rate on the reference i5-8350U, so
//! **one bogo op is 1/1484.5 s ≈ 673.6 µs of i5-8350U work whatever the method**. The engine
//! charges [`StressNgConfig::method_call_ns`] of *schedlab reference-CPU* work per call (the
//! i5-8350U time × [`I5_8350U_TO_REFERENCE`], see [`crate::workload::generate`]) and adds
//! [`StressNgConfig::bogo_ops_per_call`] (stress-ng's own normalisation, CPU-independent).
//!
//! `--cpu-method all` (the default) cycles through every method in table order, one call per
//! step (`stress_call_cpu_method()`'s static index, per process, starting at the first
//! method), so consecutive calls differ by orders of magnitude in cost. The generator follows
//! that cycle call by call ([`StressNgConfig::call_cycle`]) with each method's own cost,
//! measured on this project's VM ([`methods`]) and scaled to the reference CPU, so the
//! `--cpu-load-slice` busy periods are as uneven as the real ones (a 1 ms slice ends after the
//! first call that crosses 1 ms, often a long one).
//!
//! Left out: every other stressor and most global options (only `--taskset` of the affinity
//! options is modelled); `--timestamp` (no timestamps are printed, so output is deterministic).

use super::cmdline::{self, LongOpt, OptStyle, lo};
use crate::cpumask::CpuMask;
use crate::error::{InputError, InputResult};

/// The reference rate: a method call that takes `1/rate` s adds `1484.5/rate` bogo ops.
pub const BOGO_OPS_PER_REFERENCE_SECOND: f64 = 1484.50;

/// One bogo op in i5-8350U nanoseconds (1e9 / 1484.5).
pub const BOGO_OP_NS: f64 = 1e9 / BOGO_OPS_PER_REFERENCE_SECOND;

/// Time of a bogo op on schedlab's reference CPU over its time on stress-ng's i5-8350U:
/// measured on the reference machine (docs/host-benchmarks.md), where
/// `stress-ng --cpu 1 --cpu-ops 2002` (`--cpu-method all`) used 2.39 s of task-clock for
/// 2002 bogo ops, i.e. 1.194 ms per bogo op against the i5-8350U's 673.6 µs: 1.772.
pub const I5_8350U_TO_REFERENCE: f64 = 1.772;

/// Reference-CPU nanoseconds of one bogo op under `--cpu-method all`
/// ([`BOGO_OP_NS`] × [`I5_8350U_TO_REFERENCE`]). The per-method costs measured on the
/// project VM are scaled so that a whole `all` cycle takes exactly this per bogo op.
pub const REFERENCE_ALL_BOGO_OP_NS: f64 = BOGO_OP_NS * I5_8350U_TO_REFERENCE;

pub mod methods;
pub use methods::{CpuMethod, METHODS};

/// Default timeout when `-t` is not given: one day (`DEFAULT_TIMEOUT`).
pub const DEFAULT_TIMEOUT_S: u64 = 24 * 60 * 60;

/// `--cpu-ops` range (`MIN_OPS` .. `MAX_OPS`).
pub const MIN_OPS: u64 = 1;
pub const MAX_OPS: u64 = 100_000_000;

/// VM CPU nanoseconds of one call of `m` (see [`methods`]).
fn vm_call_ns(m: &CpuMethod) -> f64 {
    1e9 * BOGO_OPS_PER_REFERENCE_SECOND / (m.vm_bogo_ops_per_cpu_s * m.bogo_op_rate)
}

/// Reference ns per VM ns: a bogo op of the whole `all` cycle on the VM
/// (Σ call ns / Σ bogo ops per call) becomes [`REFERENCE_ALL_BOGO_OP_NS`].
pub fn vm_to_reference() -> f64 {
    let ns: f64 = METHODS.iter().map(vm_call_ns).sum();
    let ops: f64 = METHODS
        .iter()
        .map(|m| BOGO_OPS_PER_REFERENCE_SECOND / m.bogo_op_rate)
        .sum();
    REFERENCE_ALL_BOGO_OP_NS / (ns / ops)
}

/// Reference-CPU nanoseconds of one call of method `m`.
pub fn method_reference_ns(m: &CpuMethod) -> u64 {
    reference_ns_scaled(m, vm_to_reference())
}

/// [`method_reference_ns`] with [`vm_to_reference`]'s factor given: the factor walks the
/// whole method table, so a caller costing every method computes it once (the same value,
/// so the same result bit for bit) instead of once per method — O(N) instead of O(N²) over
/// the table (the report's `all`-cycle bogo counts paid ~87 k instructions per instance).
fn reference_ns_scaled(m: &CpuMethod, vm_to_ref: f64) -> u64 {
    ((vm_call_ns(m) * vm_to_ref).round() as u64).max(1)
}

/// How a busy slice ends (`--cpu-load-slice S`, only used when 0 < P < 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LoadSlice {
    /// S < 0: run |S| method calls (default S = −64).
    Calls(u32),
    /// S = 0: run until the process CPU time has grown by `r / 131072` s, r a random u16
    /// (0 to 0.5 s); see [`StressNgConfig::random_slice_ns`].
    RandomCpuTime,
    /// S > 0: run until the process CPU time has grown by S ms.
    CpuTimeMs(u32),
}

/// Metrics output requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricsMode {
    Off,
    /// `--metrics-brief`: 7 columns, rows with no bogo ops skipped.
    Brief,
    /// `--metrics`/`-M`: adds "CPU used per instance (%)" and "RSS Max (KB)".
    Full,
}

/// A parsed stress-ng cpu invocation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StressNgConfig {
    /// Worker processes (`--cpu N`, resolved: 0 → configured CPUs, negative → online CPUs,
    /// `P%` → P % of the configured CPUs, at least 1).
    pub instances: u32,
    /// `-l/--cpu-load` (0..=100).
    pub cpu_load_pct: u32,
    /// `--cpu-load-slice` (−5000..=5000, default −64).
    pub cpu_load_slice: i32,
    /// `--cpu-ops`: total bogo ops for the stressor.
    pub cpu_ops: Option<u64>,
    /// `--cpu-method` name.
    pub cpu_method: String,
    /// `--cpu-old-metrics`: one call = one bogo op.
    pub cpu_old_metrics: bool,
    /// `-t/--timeout` in seconds (None: the one-day default).
    pub timeout_s: Option<u64>,
    pub metrics: MetricsMode,
    /// `--taskset`: affinity of every instance.
    pub taskset: Option<CpuMask>,
    /// True when `-l` was given (so instances print the "for stable load results" hint with
    /// method `all`).
    pub cpu_load_given: bool,
}

impl StressNgConfig {
    /// Bogo ops each instance stops after: `ceil(K / N)`.
    pub fn ops_per_instance(&self) -> Option<u64> {
        let n = u64::from(self.instances.max(1));
        self.cpu_ops.map(|k| k.div_ceil(n))
    }

    /// The run length limit in seconds (`-t`, or one day).
    pub fn effective_timeout_s(&self) -> u64 {
        self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S)
    }

    /// The method's index in [`METHODS`], `None` for `all`.
    pub fn method_index(&self) -> Option<usize> {
        METHODS.iter().position(|m| m.name == self.cpu_method)
    }

    /// The calls an instance makes, in order, as (reference-CPU ns, bogo ops added) — one
    /// entry for a specific method, the whole table for `all` (the instance repeats the
    /// cycle).
    pub fn call_cycle(&self) -> Vec<(u64, f64)> {
        let vm_to_ref = vm_to_reference();
        let call = |m: &CpuMethod| {
            let ops = if self.cpu_old_metrics {
                1.0
            } else {
                BOGO_OPS_PER_REFERENCE_SECOND / m.bogo_op_rate
            };
            (reference_ns_scaled(m, vm_to_ref), ops)
        };
        match self.method_index() {
            Some(i) => vec![call(&METHODS[i])],
            None => METHODS.iter().map(call).collect(),
        }
    }

    /// Reference-CPU nanoseconds of one method call (the engine scales by CPU speed): the
    /// method's cost, or the mean over the cycle for `all`.
    pub fn method_call_ns(&self) -> u64 {
        let c = self.call_cycle();
        (c.iter().map(|(ns, _)| *ns as f64).sum::<f64>() / c.len() as f64).round() as u64
    }

    /// Bogo ops added per method call: `1484.5 / rate` (the mean over the cycle for `all`),
    /// or 1 with `--cpu-old-metrics`.
    pub fn bogo_ops_per_call(&self) -> f64 {
        let c = self.call_cycle();
        c.iter().map(|(_, o)| o).sum::<f64>() / c.len() as f64
    }

    /// The bogo counter after `calls` calls: ⌊Σ ops of the calls made⌋ (`stress_bogo_set(args,
    /// (uint64_t)counter)`), whole cycles plus the first calls of the next.
    pub fn bogo_ops_after_calls(&self, calls: u64) -> u64 {
        Self::bogo_ops_in_cycle(&self.call_cycle(), calls)
    }

    /// [`Self::bogo_ops_after_calls`] over a cycle already built by [`Self::call_cycle`]
    /// (the report counts every instance with one cycle).
    pub fn bogo_ops_in_cycle(c: &[(u64, f64)], calls: u64) -> u64 {
        let n = c.len() as u64;
        let per_cycle: f64 = c.iter().map(|(_, o)| o).sum();
        let part: f64 = c[..(calls % n) as usize].iter().map(|(_, o)| o).sum();
        ((calls / n) as f64 * per_cycle + part).floor() as u64
    }

    /// Calls an instance makes before its counter reaches `ops` (the smallest n with
    /// [`Self::bogo_ops_after_calls`]`(n) ≥ ops`); 0 for `ops` = 0.
    pub fn calls_for_ops(&self, ops: u64) -> u64 {
        if ops == 0 {
            return 0;
        }
        let c = self.call_cycle();
        let per_cycle: f64 = c.iter().map(|(_, o)| o).sum();
        let cycles = (ops as f64 / per_cycle).floor() as u64;
        let mut n = cycles.saturating_sub(1) * c.len() as u64;
        while Self::bogo_ops_in_cycle(&c, n) < ops {
            n += 1;
        }
        n
    }

    /// The busy-slice rule for `--cpu-load-slice`.
    pub fn load_slice(&self) -> LoadSlice {
        match self.cpu_load_slice {
            s if s < 0 => LoadSlice::Calls(s.unsigned_abs()),
            0 => LoadSlice::RandomCpuTime,
            s => LoadSlice::CpuTimeMs(s as u32),
        }
    }

    /// Random slice length for S = 0 from a 16-bit random value r: `r / 131072` s, in ns
    /// (truncated).
    pub fn random_slice_ns(r: u16) -> u64 {
        u64::from(r) * 1_000_000_000 / 131_072
    }

    /// Minimum busy CPU time of one slice at reference speed: |S| calls, or the smallest whole
    /// number of calls reaching S ms (the loop checks the clock after each call). `None` for
    /// the random slice (draw with [`Self::random_slice_ns`]).
    pub fn slice_busy_ns(&self) -> Option<u64> {
        let call = self.method_call_ns().max(1);
        match self.load_slice() {
            LoadSlice::Calls(n) => Some(u64::from(n) * call),
            LoadSlice::CpuTimeMs(ms) => {
                Some(u64::from(ms) * 1_000_000).map(|t| t.div_ceil(call).max(1) * call)
            }
            LoadSlice::RandomCpuTime => None,
        }
    }

    /// stress-ng's idle time after a busy slice, in seconds (may be negative: then it does not
    /// sleep and resets `bias` to 0):
    /// `busy_cpu·(100−P)/P + (busy_cpu − busy_wall) − bias`.
    /// The `(cpu − wall)` term shortens the sleep when preemption stretched the slice.
    pub fn load_delay_s(&self, busy_cpu_s: f64, busy_wall_s: f64, bias_s: f64) -> f64 {
        let p = f64::from(self.cpu_load_pct);
        ((100.0 - p) * busy_cpu_s) / p + (busy_cpu_s - busy_wall_s) - bias_s
    }

    /// The sleep actually requested from `select()` for a delay: the timeval is filled with
    /// whole seconds and truncated microseconds.
    pub fn select_sleep_ns(delay_s: f64) -> u64 {
        if delay_s <= 0.0 {
            return 0;
        }
        let sec = delay_s.trunc();
        let usec = ((delay_s - sec) * 1e6).trunc();
        sec as u64 * 1_000_000_000 + usec as u64 * 1000
    }

    /// Next `bias` after a sleep: the overshoot `actual − requested delay` (seconds), which the
    /// next cycle's sleep pays back.
    pub fn next_bias_s(delay_s: f64, actual_sleep_s: f64) -> f64 {
        actual_sleep_s - delay_s
    }

    /// Idle time for an uncontended slice (busy wall = busy CPU, no bias), in ns:
    /// `busy·(100−P)/P`, truncated to µs as `select()` sees it. 0 for P = 100.
    pub fn nominal_idle_ns(&self, busy_ns: u64) -> u64 {
        if self.cpu_load_pct >= 100 || self.cpu_load_pct == 0 {
            return 0;
        }
        let b = busy_ns as f64 / 1e9;
        Self::select_sleep_ns(self.load_delay_s(b, b, 0.0))
    }
}

const LONGOPTS: &[LongOpt] = &[
    lo("cpu", true, 'c'),
    lo("cpu-ops", true, 'o'),
    lo("cpu-load", true, 'l'),
    lo("cpu-load-slice", true, 'S'),
    lo("cpu-method", true, 'x'),
    lo("cpu-old-metrics", false, 'O'),
    lo("timeout", true, 't'),
    lo("metrics", false, 'M'),
    lo("metrics-brief", false, 'B'),
    lo("taskset", true, 'T'),
];

fn supported_list() -> String {
    LONGOPTS
        .iter()
        .map(|l| format!("--{}", l.name))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_i64(s: &str) -> Result<i64, String> {
    // stress_ensure_numeric + strtoll.
    let body = s.strip_prefix('-').unwrap_or(s);
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        let bad = body.trim_start_matches(|c: char| c.is_ascii_digit());
        return Err(format!("value {s} contains non-integer numeric: '{bad}'"));
    }
    s.parse::<i64>().map_err(|_| format!("invalid value {s}"))
}

/// `stress_get_uint64_time`: a number with an optional s/m/h/d/w/y suffix.
fn parse_time_s(s: &str) -> Result<u64, String> {
    let (num, scale) = match s.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let scale = match c.to_ascii_lowercase() {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86400,
                'w' => 7 * 86400,
                'y' => 31_536_000,
                _ => return Err(format!("illegal time specifier {c}")),
            };
            (&s[..s.len() - 1], scale)
        }
        _ => (s, 1),
    };
    let v: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("invalid value {s}"))?;
    Ok(v.saturating_mul(scale))
}

/// Parse `stress-ng` arguments (after the program name). `nr_cpus` is the number of
/// configured CPUs (what `--cpu 0` uses); the simulator treats online = configured here, since
/// offlining is applied by the machine model afterwards.
pub fn parse(args: &[String], nr_cpus: usize) -> InputResult<StressNgConfig> {
    let err = |m: String| InputError::new("stress-ng", m);
    check_unmodelled_longopts(args)?;
    let p = cmdline::getopt_long("stress-ng", args, "c:l:t:M", LONGOPTS, OptStyle::Glibc).map_err(
        |m| {
            err(format!(
                "{m}\ntry 'stress-ng --help' or 'man stress-ng' for more information."
            ))
        },
    )?;
    let mut c = default_config();
    let mut cpu_given = false;
    for o in &p.opts {
        let arg = o.arg.as_deref().unwrap_or("");
        let range = |name: &str, lo: i64, hi: i64| -> InputResult<i64> {
            let v = parse_i64(arg).map_err(err)?;
            if v < lo || v > hi {
                return Err(err(format!(
                    "value {v} is out of range for {name}, allowed: {lo} .. {hi}"
                )));
            }
            Ok(v)
        };
        match o.id {
            'c' => {
                cpu_given = true;
                c.instances = resolve_instances(arg, nr_cpus).map_err(err)?;
            }
            'o' => c.cpu_ops = Some(cpu_ops_value(arg)?),
            'l' => {
                c.cpu_load_pct = range("cpu-load", 0, 100)? as u32;
                c.cpu_load_given = true;
            }
            'S' => c.cpu_load_slice = range("cpu-load-slice", -5000, 5000)? as i32,
            'x' => c.cpu_method = cpu_method_value(arg)?,
            'O' => c.cpu_old_metrics = true,
            't' => c.timeout_s = Some(parse_time_s(arg).map_err(err)?),
            'M' => {
                if c.metrics == MetricsMode::Off {
                    c.metrics = MetricsMode::Full;
                }
            }
            'B' => c.metrics = MetricsMode::Brief,
            'T' => c.taskset = Some(taskset_value(arg, nr_cpus)?),
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(w) = p.positional.first() {
        let rest = p.positional.join(" ");
        return Err(err(format!(
            "error: unrecognised option: {rest} (first: '{w}')"
        )));
    }
    if !cpu_given {
        return Err(err(format!(
            "no stressor given: schedlab models the cpu stressor only (--cpu N); supported options: {}",
            supported_list()
        )));
    }
    Ok(c)
}

fn stressng_err(m: String) -> InputError {
    InputError::new("stress-ng", m)
}

/// Refuse long options stress-ng has but schedlab does not model.
fn check_unmodelled_longopts(args: &[String]) -> InputResult<()> {
    let err = stressng_err;
    // Options stress-ng has but we do not model: flag them clearly instead of pretending to
    // be getopt ("unrecognized option" would wrongly suggest stress-ng lacks them).
    for a in args {
        if let Some(body) = a.strip_prefix("--") {
            let name = body.split('=').next().unwrap_or(body);
            if !name.is_empty() && !LONGOPTS.iter().any(|l| l.name.starts_with(name)) {
                return Err(err(format!(
                    "option '--{name}' is not modelled by schedlab's stress-ng (supported: {}, -c, -l, -t, -M)",
                    supported_list()
                )));
            }
        }
    }
    Ok(())
}

/// The configuration before any option: stress-ng's defaults.
fn default_config() -> StressNgConfig {
    StressNgConfig {
        instances: 0,
        cpu_load_pct: 100,
        cpu_load_slice: -64,
        cpu_ops: None,
        cpu_method: "all".into(),
        cpu_old_metrics: false,
        timeout_s: None,
        metrics: MetricsMode::Off,
        taskset: None,
        cpu_load_given: false,
    }
}

/// `--cpu-ops N`: not negative, within `MIN_OPS..=MAX_OPS`.
fn cpu_ops_value(arg: &str) -> InputResult<u64> {
    let err = stressng_err;
    let v: u64 = if arg.starts_with('-') {
        return Err(err(format!("invalid negative value {arg}")));
    } else {
        parse_i64(arg).map_err(err)? as u64
    };
    if !(MIN_OPS..=MAX_OPS).contains(&v) {
        return Err(err(format!(
            "value {v} is out of range for cpu-ops, allowed: {MIN_OPS} .. {MAX_OPS}"
        )));
    }
    Ok(v)
}

/// `--cpu-method M`: `all` or a modelled method.
fn cpu_method_value(arg: &str) -> InputResult<String> {
    if arg != "all" && !METHODS.iter().any(|m| m.name == arg) {
        let mut names = vec!["all"];
        names.extend(METHODS.iter().map(|m| m.name));
        return Err(stressng_err(format!(
            "option cpu-method choice '{arg}' not known, choices are: {} (schedlab models these cpu methods)",
            names.join(" ")
        )));
    }
    Ok(arg.to_string())
}

/// `--taskset LIST`: a CPU list of CPUs that exist.
fn taskset_value(arg: &str, nr_cpus: usize) -> InputResult<CpuMask> {
    let err = stressng_err;
    let m =
        CpuMask::parse(arg).map_err(|e| err(format!("taskset: invalid CPU list '{arg}': {e}")))?;
    if let Some(bad) = m.iter().find(|&cpu| cpu >= nr_cpus) {
        return Err(err(format!(
            "taskset: CPU {bad} is not available (machine has {nr_cpus} CPUs)"
        )));
    }
    Ok(m)
}

/// `stress_get_int32_instance_percent`: `N`, or `P%` of the configured CPUs (at least 1);
/// 0 → configured CPUs; negative → online CPUs (= configured here).
fn resolve_instances(arg: &str, nr_cpus: usize) -> Result<u32, String> {
    let v: i64 = if let Some(pct) = arg.strip_suffix('%').filter(|_| arg.len() > 1) {
        let p: f64 = pct
            .parse()
            .map_err(|_| format!("invalid percentage {arg}"))?;
        if p < 0.0 {
            -1
        } else if p > 0.0 {
            let n = nr_cpus as f64 * p / 100.0;
            if n < 1.0 { 1 } else { n as i64 }
        } else {
            0
        }
    } else {
        parse_i64(arg)?
    };
    let n = if v <= 0 { nr_cpus as i64 } else { v };
    // STRESS_PROCS_MAX is 8192 in stress-ng.
    if n > 8192 {
        return Err("number of cpu stressors must be between 0 and 8192".into());
    }
    Ok(n as u32)
}

/// Per-instance accounting the engine fills (one entry per worker process).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct StressNgInstance {
    pub bogo_ops: u64,
    /// Wall-clock run time of the instance, seconds.
    pub wall_s: f64,
    pub usr_s: f64,
    pub sys_s: f64,
    /// Whether it ran to completion (stress-ng averages real time over completed instances).
    pub completed: bool,
    /// Modelled max RSS (KB) for `--metrics`; 0 if not modelled.
    pub maxrss_kb: i64,
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct StressNgResult {
    /// PID printed in `[PID]` — the engine passes the simulated parent's pid so output stays
    /// deterministic. Instance i is assumed to be `pid + 1 + i`.
    pub pid: u32,
    pub instances: Vec<StressNgInstance>,
    /// Whole-run duration (seconds) for "successful run completed in ...".
    pub duration_s: f64,
    pub success: bool,
}

/// Aggregates exactly as `stress_metrics_dump` computes them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct StressNgMetrics {
    pub bogo_ops: u64,
    /// Mean wall time over completed instances.
    pub real_time_s: f64,
    pub usr_time_s: f64,
    pub sys_time_s: f64,
    pub bogo_ops_per_s_real: f64,
    pub bogo_ops_per_s_cpu: f64,
    pub cpu_used_per_instance_pct: f64,
    pub maxrss_kb: i64,
}

impl StressNgResult {
    pub fn metrics(&self) -> StressNgMetrics {
        let completed = self.instances.iter().filter(|i| i.completed).count();
        let c: u64 = self.instances.iter().map(|i| i.bogo_ops).sum();
        let u: f64 = self.instances.iter().map(|i| i.usr_s).sum();
        let s: f64 = self.instances.iter().map(|i| i.sys_s).sum();
        let r_sum: f64 = self.instances.iter().map(|i| i.wall_s).sum();
        let r = if completed > 0 {
            r_sum / completed as f64
        } else {
            0.0
        };
        let cpu = if r > 0.0 { 100.0 * (u + s) / r } else { 0.0 };
        StressNgMetrics {
            bogo_ops: c,
            real_time_s: r,
            usr_time_s: u,
            sys_time_s: s,
            bogo_ops_per_s_real: if r > 0.0 { c as f64 / r } else { 0.0 },
            bogo_ops_per_s_cpu: if u + s > 0.0 { c as f64 / (u + s) } else { 0.0 },
            cpu_used_per_instance_pct: if completed > 0 {
                cpu / completed as f64
            } else {
                0.0
            },
            maxrss_kb: self
                .instances
                .iter()
                .map(|i| i.maxrss_kb)
                .max()
                .unwrap_or(0),
        }
    }
}

/// `stress_time_duration_to_str`: years/days/hours/mins as integers, then seconds either as
/// `%.2f` (`float_secs`) or as an integer; units pluralised when the integer part is > 1.
pub fn duration_to_str(duration_s: f64, float_secs: bool, report_secs: bool) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut d = duration_s;
    for (secs, unit) in [
        (365.2425 * 86400.0, "year"),
        (86400.0, "day"),
        (3600.0, "hour"),
        (60.0, "min"),
    ] {
        let v = (d / secs) as u64;
        if v > 0 {
            parts.push(format!("{v} {unit}{}", if v > 1 { "s" } else { "" }));
        }
        d -= secs * v as f64;
    }
    let v = d as u64;
    if report_secs || v > 0 {
        let plural = if v > 1 { "s" } else { "" };
        if float_secs {
            parts.push(format!("{d:.2} sec{plural}"));
        } else {
            parts.push(format!("{v} sec{plural}"));
        }
    }
    if parts.is_empty() {
        "0 secs".into()
    } else {
        parts.join(" ")
    }
}

fn line(pid: u32, tag: &str, text: &str) -> String {
    format!("stress-ng: {tag} [{pid}] {text}\n")
}

/// Everything stress-ng prints for the run (all to stdout/stderr through its logger, in this
/// order): timeout line, dispatch line, the per-instance method hint, the metrics table if
/// asked, the exit-status summary and the completion line.
pub fn format_report(cfg: &StressNgConfig, res: &StressNgResult) -> String {
    let mut out = startup_lines(cfg, res.pid);
    out += &metrics_table(cfg, res);
    out += &summary_lines(res);
    out
}

/// The timeout and dispatch lines and the per-instance hints.
fn startup_lines(cfg: &StressNgConfig, pid: u32) -> String {
    let info = "info: ";
    let mut out = String::new();
    let timeout = match cfg.timeout_s {
        None => format!(
            "defaulting to a {} run per stressor",
            duration_to_str(DEFAULT_TIMEOUT_S as f64, false, false)
        ),
        Some(0) => "setting to a infinite run per stressor".into(),
        Some(t) => format!(
            "setting to a {} run per stressor",
            duration_to_str(t as f64, false, false)
        ),
    };
    out += &line(pid, info, &timeout);
    out += &line(
        pid,
        info,
        &format!("dispatching hogs: {} cpu", cfg.instances),
    );
    if cfg.cpu_load_given && cfg.cpu_method == "all" {
        for i in 0..cfg.instances {
            out += &line(
                pid + 1 + i,
                info,
                "cpu: for stable load results, select a specific cpu stress method with --cpu-method other than 'all'",
            );
        }
    }
    if cfg.taskset.is_some() && cfg.cpu_load_pct > 0 && cfg.cpu_load_pct < 100 {
        // Printed by instance 0 after its load-controlled loop ends.
        out += &line(
            pid + 1,
            info,
            "cpu: CPU affinity probably set, this can affect CPU loading",
        );
    }
    out
}

/// The `--metrics-brief` / `--metrics` table (nothing without either).
fn metrics_table(cfg: &StressNgConfig, res: &StressNgResult) -> String {
    let pid = res.pid;
    let mut out = String::new();
    let m = res.metrics();
    match cfg.metrics {
        MetricsMode::Off => {}
        MetricsMode::Brief => out += &metrics_brief(res, &m),
        MetricsMode::Full => out += &metrics_full(pid, &m),
    }
    out
}

/// `--metrics-brief`: the header and, when the stressor did anything, its row.
fn metrics_brief(res: &StressNgResult, m: &StressNgMetrics) -> String {
    let pid = res.pid;
    let mut out = String::new();
    out += &line(
        pid,
        "metrc:",
        &format!(
            "{:<13} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14}",
            "stressor", "bogo ops", "real time", "usr time", "sys time", "bogo ops/s", "bogo ops/s"
        ),
    );
    out += &line(
        pid,
        "metrc:",
        &format!(
            "{:<13} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14}",
            "", "", "(secs) ", "(secs) ", "(secs) ", "(real time)", "(usr+sys time)"
        ),
    );
    if m.bogo_ops > 0 || res.instances.iter().any(|i| i.completed) {
        out += &line(
            pid,
            "metrc:",
            &format!(
                "{:<13} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>12.2} {:>14.2}",
                "cpu",
                m.bogo_ops,
                m.real_time_s,
                m.usr_time_s,
                m.sys_time_s,
                m.bogo_ops_per_s_real,
                m.bogo_ops_per_s_cpu
            ),
        );
    }
    out
}

/// `--metrics`: the header and the row, with CPU use per instance and RSS.
fn metrics_full(pid: u32, m: &StressNgMetrics) -> String {
    let mut out = String::new();
    out += &line(
        pid,
        "metrc:",
        &format!(
            "{:<13} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14} {:>12} {:>13}",
            "stressor",
            "bogo ops",
            "real time",
            "usr time",
            "sys time",
            "bogo ops/s",
            "bogo ops/s",
            "CPU used per",
            "RSS Max"
        ),
    );
    out += &line(
        pid,
        "metrc:",
        &format!(
            "{:<13} {:>9} {:>9} {:>9} {:>9} {:>12} {:>14} {:>12} {:>13}",
            "",
            "",
            "(secs) ",
            "(secs) ",
            "(secs) ",
            "(real time)",
            "(usr+sys time)",
            "instance (%)",
            "(KB)"
        ),
    );
    out += &line(
        pid,
        "metrc:",
        &format!(
            "{:<13} {:>9} {:>9.2} {:>9.2} {:>9.2} {:>12.2} {:>14.2} {:>12.2} {:>13}",
            "cpu",
            m.bogo_ops,
            m.real_time_s,
            m.usr_time_s,
            m.sys_time_s,
            m.bogo_ops_per_s_real,
            m.bogo_ops_per_s_cpu,
            m.cpu_used_per_instance_pct,
            m.maxrss_kb
        ),
    );
    out
}

/// The exit-status summary and the completion line.
fn summary_lines(res: &StressNgResult) -> String {
    let pid = res.pid;
    let info = "info: ";
    let mut out = String::new();
    let passed = res.instances.iter().filter(|i| i.completed).count();
    let failed = res.instances.len() - passed;
    out += &line(pid, info, "skipped: 0");
    out += &line(
        pid,
        info,
        &if passed > 0 {
            format!("passed: {passed}: cpu ({passed})")
        } else {
            "passed: 0".into()
        },
    );
    out += &line(
        pid,
        info,
        &if failed > 0 {
            format!("failed: {failed}: cpu ({failed})")
        } else {
            "failed: 0".into()
        },
    );
    out += &line(pid, info, "metrics untrustworthy: 0");
    out += &line(
        pid,
        info,
        &format!(
            "{} run completed in {}",
            if res.success {
                "successful"
            } else {
                "unsuccessful"
            },
            duration_to_str(res.duration_s, true, false)
        ),
    );
    out
}

/// `[workload] kind = "stress-ng"` keys, each one of the program's options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StressNgKeys {
    pub cpu: Option<i64>,
    pub cpu_load_pct: Option<i64>,
    pub cpu_load_slice: Option<i64>,
    pub cpu_ops: Option<i64>,
    pub cpu_method: Option<String>,
    pub cpu_old_metrics: Option<bool>,
    pub timeout_s: Option<i64>,
    pub metrics: Option<MetricsKey>,
    pub taskset: Option<String>,
}

/// `metrics` key values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricsKey {
    Off,
    Brief,
    Full,
}

/// Build from `[workload]` keys on top of `base` (a command line's option words) or, without
/// one, of `--cpu 0`: the keys become the equivalent options after the command's (one set of
/// rules; the last occurrence of an option wins, as in stress-ng).
pub fn from_keys(
    base: Option<Vec<String>>,
    keys: &StressNgKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<StressNgConfig> {
    let mut words: Vec<(&str, Vec<String>)> = Vec::new();
    let cpu = keys.cpu.or(if base.is_none() { Some(0) } else { None });
    if let Some(n) = cpu {
        words.push(("cpu", vec![format!("--cpu={n}")]));
    }
    for (k, v, flag) in [
        ("cpu_load_pct", keys.cpu_load_pct, "--cpu-load"),
        ("cpu_load_slice", keys.cpu_load_slice, "--cpu-load-slice"),
        ("cpu_ops", keys.cpu_ops, "--cpu-ops"),
        ("timeout_s", keys.timeout_s, "--timeout"),
    ] {
        if let Some(v) = v {
            words.push((k, vec![format!("{flag}={v}")]));
        }
    }
    if let Some(m) = &keys.cpu_method {
        words.push(("cpu_method", vec![format!("--cpu-method={m}")]));
    }
    if keys.cpu_old_metrics == Some(true) {
        words.push(("cpu_old_metrics", vec!["--cpu-old-metrics".into()]));
    }
    if let Some(t) = &keys.taskset {
        words.push(("taskset", vec![format!("--taskset={t}")]));
    }
    match keys.metrics {
        None | Some(MetricsKey::Off) => {}
        Some(MetricsKey::Brief) => words.push(("metrics", vec!["--metrics-brief".into()])),
        Some(MetricsKey::Full) => words.push(("metrics", vec!["--metrics".into()])),
    }
    let base = base.unwrap_or_default();
    super::parse_with_key_words(&base, &words, |a: &[String]| parse(a, nr_cpus), err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        cmdline::split_words(s).unwrap()
    }

    #[test]
    fn issue_example_parses() {
        let c = parse(&w("--cpu=72 -l 50 --cpu-ops=100000 --cpu-load-slice=1"), 72).unwrap();
        assert_eq!(
            (c.instances, c.cpu_load_pct, c.cpu_load_slice, c.cpu_ops),
            (72, 50, 1, Some(100_000))
        );
        assert_eq!(c.ops_per_instance(), Some(1389)); // ceil(100000 / 72)
        assert_eq!(c.load_slice(), LoadSlice::CpuTimeMs(1));
        assert_eq!(c.effective_timeout_s(), DEFAULT_TIMEOUT_S);
        // 1 ms slice with ~1.14 ms mean calls (643 µs on the i5-8350U): one mean call.
        assert_eq!(c.slice_busy_ns(), Some(c.method_call_ns()));
        assert_eq!(c.method_call_ns(), 1_140_072);
        // 50 %: idle = busy, truncated to µs.
        assert_eq!(c.nominal_idle_ns(1_286_764), 1_286_000);
    }

    #[test]
    fn cpu_zero_means_all_cpus_and_percent() {
        assert_eq!(parse(&w("--cpu 0"), 16).unwrap().instances, 16);
        assert_eq!(parse(&w("-c -1"), 16).unwrap().instances, 16);
        assert_eq!(parse(&w("--cpu 50%"), 16).unwrap().instances, 8);
        assert_eq!(parse(&w("--cpu 1%"), 16).unwrap().instances, 1);
        assert_eq!(
            parse(&w("--cpu 4 --cpu-ops 10"), 16)
                .unwrap()
                .ops_per_instance(),
            Some(3)
        );
    }

    #[test]
    fn load_slice_arithmetic() {
        let c = parse(&w("--cpu 1 -l 25"), 4).unwrap();
        assert_eq!(c.load_slice(), LoadSlice::Calls(64)); // default -64
        assert_eq!(c.slice_busy_ns(), Some(64 * c.method_call_ns()));
        // delay = busy·(100−P)/P + (busy_cpu − busy_wall) − bias
        assert!((c.load_delay_s(0.010, 0.010, 0.0) - 0.030).abs() < 1e-12);
        // Preempted slice (wall 15 ms for 10 ms CPU): 5 ms shorter sleep.
        assert!((c.load_delay_s(0.010, 0.015, 0.0) - 0.025).abs() < 1e-12);
        // Bias from last overshoot is paid back.
        assert!((c.load_delay_s(0.010, 0.010, 0.001) - 0.029).abs() < 1e-12);
        assert!((StressNgConfig::next_bias_s(0.030, 0.03006) - 0.00006).abs() < 1e-12);
        assert_eq!(StressNgConfig::select_sleep_ns(1.2345678), 1_234_567_000);
        assert_eq!(StressNgConfig::select_sleep_ns(-0.1), 0);
        let r = parse(&w("--cpu 1 -l 25 --cpu-load-slice 0"), 4).unwrap();
        assert_eq!(r.load_slice(), LoadSlice::RandomCpuTime);
        assert_eq!(r.slice_busy_ns(), None);
        assert_eq!(StressNgConfig::random_slice_ns(65535), 499_992_370);
        assert_eq!(StressNgConfig::random_slice_ns(0), 0);
    }

    #[test]
    fn method_costs() {
        let all = parse(&w("--cpu 1"), 4).unwrap();
        // One bogo op of the whole `all` cycle is 1.194 ms on the reference CPU (673.6 µs of
        // i5-8350U time × 1.772).
        let per_op_ref_ns = all.method_call_ns() as f64 / all.bogo_ops_per_call();
        assert!(
            (per_op_ref_ns - 1_193_600.0).abs() < 100.0,
            "{per_op_ref_ns}"
        );
        // The i5-8350U mean call (the table's mean 1/rate) is 643.4 µs.
        assert!((all.bogo_ops_per_call() * BOGO_OP_NS - 643_382.0).abs() < 1.0);
        let mp = parse(&w("--cpu 1 --cpu-method matrixprod"), 4).unwrap();
        // 4336 µs measured on the VM × 2.5019.
        assert_eq!(mp.method_call_ns(), 10_848_322);
        assert!((mp.bogo_ops_per_call() - 1484.5 / 263.84).abs() < 1e-12);
        assert_eq!(mp.call_cycle().len(), 1);
        let old = parse(&w("--cpu 1 --cpu-method matrixprod --cpu-old-metrics"), 4).unwrap();
        assert_eq!(old.bogo_ops_per_call(), 1.0);
    }

    #[test]
    fn errors_use_stress_ng_text() {
        assert_eq!(
            parse(&w("--cpu 1 -l 150"), 4).unwrap_err().message,
            "value 150 is out of range for cpu-load, allowed: 0 .. 100"
        );
        assert_eq!(
            parse(&w("--cpu 1 --cpu-load-slice -6000"), 4)
                .unwrap_err()
                .message,
            "value -6000 is out of range for cpu-load-slice, allowed: -5000 .. 5000"
        );
        assert_eq!(
            parse(&w("--cpu 1 --cpu-ops 0"), 4).unwrap_err().message,
            "value 0 is out of range for cpu-ops, allowed: 1 .. 100000000"
        );
        assert_eq!(
            parse(&w("--cpu x"), 4).unwrap_err().message,
            "value x contains non-integer numeric: 'x'"
        );
        assert!(parse(&w("--cpu 1 --cpu-method bogus"), 4).is_err_and(|e| {
            e.message
                .starts_with("option cpu-method choice 'bogus' not known, choices are: all ")
        }));
        assert!(
            parse(&w("--vm 2"), 4)
                .unwrap_err()
                .message
                .contains("'--vm' is not modelled")
        );
        assert!(
            parse(&w("-l 50"), 4)
                .unwrap_err()
                .message
                .contains("no stressor given")
        );
        assert!(
            parse(&w("--cpu 1 -q"), 4)
                .unwrap_err()
                .message
                .starts_with("stress-ng: invalid option -- 'q'")
        );
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse(&w("--cpu 1 -t 60"), 4).unwrap().timeout_s, Some(60));
        assert_eq!(
            parse(&w("--cpu 1 --timeout 2m"), 4).unwrap().timeout_s,
            Some(120)
        );
        assert_eq!(parse(&w("--cpu 1 -t 1h"), 4).unwrap().timeout_s, Some(3600));
    }

    #[test]
    fn duration_strings() {
        assert_eq!(duration_to_str(86400.0, false, false), "1 day");
        assert_eq!(duration_to_str(60.0, false, false), "1 min");
        assert_eq!(duration_to_str(30.0, false, false), "30 secs");
        assert_eq!(duration_to_str(13.47, true, false), "13.47 secs");
        assert_eq!(duration_to_str(75.3, true, false), "1 min 15.30 secs");
        assert_eq!(duration_to_str(1.5, true, false), "1.50 sec");
        assert_eq!(duration_to_str(0.4, true, false), "0 secs");
    }

    /// Layout transcribed from `stress_metrics_dump`'s formats (`%-13s %9PRIu64 %9.2f ...`);
    /// the numbers are the example of reference/workloads.md §3.4 (4 instances, 10000 bogo
    /// ops). Note the digest's sample row is one space short of its own format: `%-13s %9`
    /// puts the last digit of the op count in column 23, as the header's "bogo ops" does.
    #[test]
    fn metrics_brief_report() {
        let c = parse(&w("--cpu 4 --cpu-ops 10000 -t 60 --metrics-brief"), 4).unwrap();
        let inst = StressNgInstance {
            bogo_ops: 2500,
            wall_s: 13.47,
            usr_s: 13.47,
            sys_s: 0.00575,
            completed: true,
            maxrss_kb: 0,
        };
        let res = StressNgResult {
            pid: 4242,
            instances: vec![inst; 4],
            duration_s: 13.51,
            success: true,
        };
        let out = format_report(&c, &res);
        assert_eq!(
            out,
            "stress-ng: info:  [4242] setting to a 1 min run per stressor\n\
             stress-ng: info:  [4242] dispatching hogs: 4 cpu\n\
             stress-ng: metrc: [4242] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n\
             stress-ng: metrc: [4242]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n\
             stress-ng: metrc: [4242] cpu               10000     13.47     53.88      0.02       742.39         185.52\n\
             stress-ng: info:  [4242] skipped: 0\n\
             stress-ng: info:  [4242] passed: 4: cpu (4)\n\
             stress-ng: info:  [4242] failed: 0\n\
             stress-ng: info:  [4242] metrics untrustworthy: 0\n\
             stress-ng: info:  [4242] successful run completed in 13.51 secs\n"
        );
    }

    #[test]
    fn full_metrics_and_load_hint() {
        let c = parse(&w("--cpu 2 -l 50 --metrics"), 4).unwrap();
        let inst = StressNgInstance {
            bogo_ops: 100,
            wall_s: 10.0,
            usr_s: 5.0,
            sys_s: 0.0,
            completed: true,
            maxrss_kb: 2048,
        };
        let res = StressNgResult {
            pid: 10,
            instances: vec![inst; 2],
            duration_s: 10.0,
            success: true,
        };
        let out = format_report(&c, &res);
        assert!(out.starts_with("stress-ng: info:  [10] defaulting to a 1 day run per stressor\n"));
        assert!(out.contains("stress-ng: info:  [11] cpu: for stable load results"));
        assert!(out.contains("stress-ng: info:  [12] cpu: for stable load results"));
        assert!(out.contains(
            "stress-ng: metrc: [10] cpu                 200     10.00     10.00      0.00        20.00          20.00        50.00          2048\n"
        ), "{out}");
        assert!(out.contains("CPU used per       RSS Max\n"));
        assert!(!out.contains("CPU affinity probably set"));
        let t = parse(&w("--cpu 2 -l 50 --taskset 0-1"), 4).unwrap();
        assert_eq!(t.taskset.unwrap().to_string(), "0-1");
        assert!(format_report(&t, &res).contains(
            "stress-ng: info:  [11] cpu: CPU affinity probably set, this can affect CPU loading\n"
        ));
        assert!(parse(&w("--cpu 2 --taskset 7"), 4).is_err());
    }
}
