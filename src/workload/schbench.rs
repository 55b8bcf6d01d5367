//! schbench (masoncl/schbench) — command line, structure facts, fio-style latency histogram
//! and the exact percentile report, for the current (2023 rewrite, 2025 options) version and
//! the classic 2016–2020 version that reported only the p99 wakeup latency.
//!
//! Structure (reference/workloads.md §1): a main (stats) thread, `m` message threads, each
//! starting `t` workers. A worker queues itself on its message thread, posts it, futex-waits;
//! the message thread wakes the whole queue in one burst with one timestamp. The engine runs
//! that; this module turns `schbench -L -m 4 -M auto -t 128 -n 0 -r 60` into a
//! [`SchbenchConfig`] (with the CPU pinning the program would apply) and prints
//! [`SchbenchResult`] exactly as the program prints it, using the program's histogram
//! arithmetic ([`PlatHistogram`]), so its percentile quantisation is reproduced too.
//!
//! `-M auto`/`-W auto`: the code (since May 2025) pins message thread i to CPU i but lets the
//! workers run on *every* CPU — its "remaining CPUs" loop restarts at 0 because of a shadowed
//! loop counter. The README says workers get the remaining CPUs. [`AutoPinModel`] selects
//! which one to simulate; the code's behaviour is the default.
//!
//! Left out: `-j` JSON files are accepted but not written (the simulator has its own JSON),
//! and `--help` is refused as it runs nothing.

use super::cmdline::{self, LongOpt, OptStyle, lo};
use crate::cpumask::CpuMask;
use crate::error::{InputError, InputResult};

/// Which schbench generation the command line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchbenchVersion {
    /// masoncl/schbench HEAD (2023 rewrite with 2025 options).
    Current,
    /// Aug 2019 – Oct 2020: `-m 2 -t 16 -s 30000 -c 30000` spin workers, one
    /// "Latency percentiles" block printed with `%2.1f`.
    Classic,
    /// 2016 – Aug 2019: same program, percentiles printed with `%2.4f` (`*99.0000th:`), the
    /// form quoted in most LKML posts of that era.
    Classic2016,
    /// Oct 2020 – Dec 2021, as at commit e4aa540 (2021-09-09), the "old schbench" AMD's
    /// published tables name: the classic spin workers, plus a message thread that busy-spins
    /// `-C` µs (30 000) after each post before its sleep, a `-w` warm-up (5 s) that zeroes the
    /// statistics, interval reports every `-i` s (10), and the report's header with the
    /// runtime and band counts. Program name `schbench-2021`.
    Interim2021,
}

/// Which meaning of `-M auto`/`-W auto` to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutoPinModel {
    /// What the code does: message thread i on CPU i, workers on all CPUs.
    Code,
    /// What the README documents: workers on all CPUs except the message threads' CPUs.
    Readme,
}

/// A `-M`/`-W` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CpuPin {
    None,
    List(CpuMask),
    Auto,
}

/// A parsed schbench invocation, with defaults resolved for the current version.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SchbenchConfig {
    pub version: SchbenchVersion,
    /// `-m`.
    pub message_threads: u32,
    /// `-t`: workers per message thread (resolved: `ceil(nr_cpus / m)` when not given).
    pub workers_per_message_thread: u32,
    /// True when `-t` was not given, so the program prints `setting worker threads to N`.
    pub workers_defaulted: bool,
    /// `-r`; 0 = run forever.
    pub runtime_s: u32,
    /// `-w`, after the program's own adjustments (forced to 0 when `-r` < 30, and by `-A`/`-p`
    /// unless given explicitly).
    pub warmup_s: u32,
    /// `-i`.
    pub interval_s: u32,
    /// `-z`; 0 = never.
    pub zero_s: u32,
    /// `-n`: matrix multiplications per request.
    pub operations: u64,
    /// `-F`.
    pub cache_footprint_kb: u64,
    /// `--split P`: P % of the footprint private per thread; `None` = all private.
    pub split_private_pct: Option<u32>,
    /// `-s` (current) — usleep at the start of each request.
    pub sleep_usec: u64,
    /// `-L`, or implied by `-C`.
    pub skip_locking: bool,
    /// `-C`.
    pub calibrate: bool,
    /// `-R`: total requests/s over all message threads (0 = saturate).
    pub rps: u32,
    /// `-A PCT`.
    pub auto_rps_pct: Option<u32>,
    /// `-p BYTES` (at most 1 MiB).
    pub pipe_bytes: u32,
    pub message_cpus: CpuPin,
    pub worker_cpus: CpuPin,
    pub auto_pin_model: AutoPinModel,
    /// `-J`.
    pub jobname: Option<String>,
    /// Classic only: `-s` message-thread sleep between batches (µs).
    pub classic_sleeptime_us: u64,
    /// Classic only: `-c` worker busy-spin per loop (µs).
    pub classic_cputime_us: u64,
    /// Classic only: `-a` auto mode.
    pub classic_autobench: bool,
    /// [`SchbenchVersion::Interim2021`] only: the message thread's busy-spin after each post
    /// (µs; `message_cputime`, 30 000 whatever `-C` says: see [`parse_interim2021`]).
    pub message_cputime_us: u64,
    /// Lines the program prints to stderr while parsing (`pipe size too big, using ...`).
    pub parse_notes: Vec<String>,
    /// Model input, not an option: a worker's user-space work per request besides the matrix
    /// math (reference-CPU ns; `[workload] request_user_ns`). See [`REQUEST_USER_NS`].
    pub request_user_ns: u64,
    /// Coefficient of variation of that work, percent (`[workload] request_user_cv_pct`).
    pub request_user_cv_pct: u32,
    /// Model input, not an option: the message thread's user-space work per worker it wakes
    /// (reference-CPU ns; `[workload] wake_user_ns`). See [`WAKE_USER_NS`].
    pub wake_user_ns: u64,
    /// Model input, not an option: the message thread's user-space work per batch it wakes
    /// (reference-CPU ns; `[workload] batch_user_ns`). See [`BATCH_USER_NS`].
    pub batch_user_ns: u64,
}

/// Default of [`SchbenchConfig::request_user_ns`]: the current schbench's user-space code per
/// request outside the math — four `gettimeofday()` (vDSO), two `add_lat()` histogram
/// updates, the `usleep()`/`syscall()` wrappers, `xlist_add()`'s and `fpost()`'s CAS on lines
/// the message thread also writes, `fwait()`'s reload of the futex word. Measured on this
/// project's VM (AMD EPYC vCPU, `perf record -e cpu-clock` of `schbench -L -m 1 -t 2 -n 0`:
/// 12 % of the workers' CPU time is in user-space symbols, 2.1 µs of 17.5 µs per request;
/// samples on the instruction after a `syscall` are counted as kernel exit, not user work),
/// scaled to the reference CPU by the 1.5× this VM's syscall-heavy code runs faster
/// (docs/host-benchmarks.md). Details: docs/fidelity.md, "schbench's user-space work".
pub const REQUEST_USER_NS: u64 = 3_200;
/// Default of [`SchbenchConfig::request_user_cv_pct`]: the spread of the workers' run slices
/// on this VM (`perf sched timehist`: p10/p50/p90/p99 = 0.53/0.88/1.4/3.9 × the mean), which
/// a shifted exponential with CV 40 % reproduces (0.64/0.88/1.52/2.44).
pub const REQUEST_USER_CV_PCT: u32 = 40;
/// Default of [`SchbenchConfig::wake_user_ns`]: the message thread's user-space code per wakee
/// (`xlist_wake_all()`'s list walk and `wake_time` copy, `fpost()`'s CAS on the wakee's futex
/// line): 31 % of its user-space samples in the same profile (`fpost`, `xlist_wake_all`),
/// 0.16 µs per wakee on this VM, × 1.5 for the reference CPU.
pub const WAKE_USER_NS: u64 = 240;
/// Default of [`SchbenchConfig::batch_user_ns`]: the message thread's user-space code per batch
/// (the `fwait()` loop, `xlist_splice()`, one `gettimeofday()`): the other 69 % of its
/// user-space samples, 0.35 µs per wakee at the measured ~1.2 wakees per batch = 0.42 µs per
/// batch on this VM, × 1.5 for the reference CPU (0.5 µs per request in all).
pub const BATCH_USER_NS: u64 = 630;

/// One MiB: the largest `-p` transfer.
pub const PIPE_TRANSFER_BUFFER: u32 = 1024 * 1024;

/// `sizeof(unsigned long)` on the 64-bit machines schbench runs on.
const SIZEOF_ULONG: u64 = 8;

impl SchbenchConfig {
    fn current_defaults(nr_cpus: usize) -> Self {
        SchbenchConfig {
            version: SchbenchVersion::Current,
            message_threads: 1,
            workers_per_message_thread: nr_cpus.max(1) as u32,
            workers_defaulted: true,
            runtime_s: 30,
            warmup_s: 0,
            interval_s: 10,
            zero_s: 0,
            operations: 5,
            cache_footprint_kb: 256,
            split_private_pct: None,
            sleep_usec: 100,
            skip_locking: false,
            calibrate: false,
            rps: 0,
            auto_rps_pct: None,
            pipe_bytes: 0,
            message_cpus: CpuPin::None,
            worker_cpus: CpuPin::None,
            auto_pin_model: AutoPinModel::Code,
            jobname: None,
            classic_sleeptime_us: 30_000,
            classic_cputime_us: 30_000,
            classic_autobench: false,
            message_cputime_us: 0,
            parse_notes: Vec::new(),
            request_user_ns: REQUEST_USER_NS,
            request_user_cv_pct: REQUEST_USER_CV_PCT,
            wake_user_ns: WAKE_USER_NS,
            batch_user_ns: BATCH_USER_NS,
        }
    }

    fn classic_defaults(version: SchbenchVersion) -> Self {
        SchbenchConfig {
            version,
            message_threads: 2,
            workers_per_message_thread: 16,
            workers_defaulted: false,
            // The classic request path's bookkeeping is not modelled (its `-c` spin dominates).
            request_user_ns: 0,
            wake_user_ns: 0,
            batch_user_ns: 0,
            ..Self::current_defaults(1)
        }
    }

    /// All workers: m × t.
    pub fn nr_workers(&self) -> u64 {
        u64::from(self.message_threads) * u64::from(self.workers_per_message_thread)
    }

    /// All threads the program creates: main + m message threads + m × t workers.
    pub fn nr_threads(&self) -> u64 {
        1 + u64::from(self.message_threads) + self.nr_workers()
    }

    /// Matrix side used by each worker's math: `floor(sqrt(F·1024 / 3 / 8))` (integer division
    /// first, as the program does), e.g. 104 for the default 256 KB. Without `--split`.
    pub fn matrix_size(&self) -> u64 {
        isqrt(self.cache_footprint_kb * 1024 / 3 / SIZEOF_ULONG)
    }

    /// With `--split P`: (private, shared) matrix sides computed from `F·P/100` and
    /// `F·(100−P)/100` KB.
    pub fn split_matrix_sizes(&self) -> Option<(u64, u64)> {
        let p = u64::from(self.split_private_pct?);
        let private_kb = self.cache_footprint_kb * p / 100;
        let shared_kb = self.cache_footprint_kb * (100 - p) / 100;
        Some((
            isqrt(private_kb * 1024 / 3 / SIZEOF_ULONG),
            isqrt(shared_kb * 1024 / 3 / SIZEOF_ULONG),
        ))
    }

    /// Requests/s each message thread dispatches in `-R` mode (`rps / m`, integer division).
    pub fn rps_per_message_thread(&self) -> u32 {
        self.rps / self.message_threads.max(1)
    }

    /// Whether `-M auto` or `-W auto` was given (either triggers the auto-pinning helper).
    pub fn auto_pin(&self) -> bool {
        self.message_cpus == CpuPin::Auto || self.worker_cpus == CpuPin::Auto
    }

    /// The single CPU message thread `index` pins itself to, if any: the
    /// `(index mod count)`-th CPU of the message CPU set (CPU `index mod m` with `auto`).
    /// Order matters for the engine: the message thread first applies the worker mask to
    /// itself, creates its workers (they inherit it), and only then pins itself here.
    pub fn message_thread_cpu(&self, index: u32) -> Option<usize> {
        let set = if self.auto_pin() {
            CpuMask::first_n(self.message_threads as usize)
        } else {
            match self.message_cpus {
                CpuPin::List(m) => m,
                _ => return None,
            }
        };
        let n = set.weight();
        if n == 0 {
            return None;
        }
        set.iter().nth(index as usize % n)
    }

    /// The affinity of every worker, if pinned, on a machine with `nr_cpus` CPUs.
    pub fn worker_mask(&self, nr_cpus: usize) -> Option<CpuMask> {
        if self.auto_pin() {
            let all = CpuMask::first_n(nr_cpus);
            return Some(match self.auto_pin_model {
                AutoPinModel::Code => all,
                AutoPinModel::Readme => {
                    let msg = CpuMask::first_n((self.message_threads as usize).min(nr_cpus));
                    let rest = all.andnot(&msg);
                    // With as many message threads as CPUs, nothing remains; the README gives
                    // no answer, so fall back to all CPUs rather than an empty mask.
                    if rest.is_empty() { all } else { rest }
                }
            });
        }
        match self.worker_cpus {
            CpuPin::List(m) => Some(m),
            _ => None,
        }
    }

    /// Lines printed to stderr before the run: parse notes, `auto pinning ...`, `setting worker
    /// threads to N`, `--split` sizes, and one `Pinning to message thread index i cpu c` per
    /// message thread (printed by the message threads as they start; shown in index order).
    pub fn format_preamble(&self) -> String {
        let mut out = String::new();
        for n in &self.parse_notes {
            out.push_str(n);
            out.push('\n');
        }
        if self.version != SchbenchVersion::Current {
            return out;
        }
        if self.auto_pin() {
            out.push_str("auto pinning message and worker threads\n");
        }
        if self.workers_defaulted {
            out.push_str(&format!(
                "setting worker threads to {}\n",
                self.workers_per_message_thread
            ));
        }
        if let Some(p) = self.split_private_pct {
            let shared_kb = self.cache_footprint_kb * (100 - u64::from(p)) / 100;
            let private_kb = self.cache_footprint_kb * u64::from(p) / 100;
            let (ps, ss) = self.split_matrix_sizes().unwrap_or((0, 0));
            out.push_str(&format!(
                "split mode: {p}% private ({private_kb} KB per thread), {}% shared ({shared_kb} KB total)\n",
                100 - p
            ));
            out.push_str(&format!("matrix sizes: private={ps}, shared={ss}\n"));
        }
        for i in 0..self.message_threads {
            if let Some(cpu) = self.message_thread_cpu(i) {
                out.push_str(&format!("Pinning to message thread index {i} cpu {cpu}\n"));
            }
        }
        out
    }
}

fn isqrt(v: u64) -> u64 {
    // Same as the C `sqrt()` then truncation for the small values used here.
    let mut r = (v as f64).sqrt() as u64;
    while r * r > v {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= v {
        r += 1;
    }
    r
}

const CURRENT_LONGOPTS: &[LongOpt] = &[
    lo("pipe", true, 'p'),
    lo("message-threads", true, 'm'),
    lo("message-cpus", true, 'M'),
    lo("worker-cpus", true, 'W'),
    lo("threads", true, 't'),
    lo("runtime", true, 'r'),
    lo("rps", true, 'R'),
    lo("auto-rps", true, 'A'),
    // Bound to 'f', which the program never handles: `--cache_footprint` is silently
    // ignored (only `-F` works). Reproduced.
    lo("cache_footprint", true, 'f'),
    lo("calibrate", false, 'C'),
    lo("no-locking", false, 'L'),
    lo("operations", true, 'n'),
    lo("sleep_usec", true, 's'),
    lo("warmuptime", true, 'w'),
    lo("intervaltime", true, 'i'),
    lo("zerotime", true, 'z'),
    lo("json", true, 'j'),
    lo("jobname", true, 'J'),
    lo("split", true, 'S'),
    lo("help", false, 'h'),
];

/// Parse the current schbench's options (`p:m:M:W:t:Cr:R:w:i:z:A:n:F:Lj:s:J:` + `--split`).
/// Numbers go through `atoi` as in the program, but values the program would misbehave on
/// (negative counts, zero message threads) are refused with a clear error.
pub fn parse_current(args: &[String], nr_cpus: usize) -> InputResult<SchbenchConfig> {
    let p = cmdline::getopt_long(
        "schbench",
        args,
        "p:m:M:W:t:Cr:R:w:i:z:A:n:F:Lj:s:J:",
        CURRENT_LONGOPTS,
        OptStyle::Glibc,
    )
    .map_err(schbench_err)?;
    let mut c = SchbenchConfig::current_defaults(nr_cpus);
    let mut late = CurrentLate::default();
    for o in &p.opts {
        apply_current_opt(&mut c, &mut late, o)?;
    }
    finish_current(c, &late, &p.positional, nr_cpus)
}

fn schbench_err(m: String) -> InputError {
    InputError::new("schbench", m)
}

/// Options the current schbench applies after the option loop (`-t`, `-w`).
#[derive(Default)]
struct CurrentLate {
    worker_threads: i64,
    found_warmup: Option<u32>,
}

/// One option of the current schbench's `parse_options()` switch.
fn apply_current_opt(
    c: &mut SchbenchConfig,
    late: &mut CurrentLate,
    o: &cmdline::OptHit,
) -> InputResult<()> {
    let err = schbench_err;
    let arg = o.arg.as_deref().unwrap_or("");
    let nonneg = |what: &str| -> InputResult<u64> {
        let v = cmdline::atoi(arg);
        if v < 0 {
            Err(err(format!(
                "{} {what} must not be negative, got '{arg}'",
                o.spelled
            )))
        } else {
            Ok(v as u64)
        }
    };
    let u32v = |what: &str| -> InputResult<u32> {
        nonneg(what).map(|v| v.min(u64::from(u32::MAX)) as u32)
    };
    match o.id {
        'C' => c.calibrate = true,
        'L' => c.skip_locking = true,
        'A' => {
            c.auto_rps_pct = Some(u32v("auto-rps percentage")?);
            c.warmup_s = 0;
            if c.rps == 0 {
                c.rps = 10;
            }
        }
        'p' => set_pipe_bytes(c, u32v("pipe size")?),
        'w' => late.found_warmup = Some(u32v("warmup time")?),
        'm' => c.message_threads = u32v("message threads")?,
        'M' | 'W' => {
            let pin = cpu_pin(arg)?;
            if o.id == 'M' {
                c.message_cpus = pin;
            } else {
                c.worker_cpus = pin;
            }
        }
        't' => late.worker_threads = nonneg("worker threads")? as i64,
        'r' => c.runtime_s = u32v("runtime")?,
        'i' => c.interval_s = u32v("interval time")?,
        'z' => c.zero_s = u32v("zero time")?,
        'R' => c.rps = u32v("requests per second")?,
        'n' => c.operations = nonneg("operations")?,
        's' => c.sleep_usec = nonneg("sleep usec")?,
        'F' => c.cache_footprint_kb = nonneg("cache footprint")?,
        'f' => {} // see CURRENT_LONGOPTS
        'j' => return Err(json_opt_err(arg)),
        'J' => c.jobname = Some(arg.to_string()),
        'S' => c.split_private_pct = Some(split_pct(arg)?),
        'h' => return Err(err("--help prints usage; nothing to simulate".into())),
        _ => unreachable!("getopt only returns ids from the table"),
    }
    Ok(())
}

/// `-p`: the pipe transfer size, capped at the program's buffer (with its note), and no
/// warm-up.
fn set_pipe_bytes(c: &mut SchbenchConfig, mut v: u32) {
    if v > PIPE_TRANSFER_BUFFER {
        c.parse_notes
            .push(format!("pipe size too big, using {PIPE_TRANSFER_BUFFER}"));
        v = PIPE_TRANSFER_BUFFER;
    }
    c.pipe_bytes = v;
    c.warmup_s = 0;
}

/// `-M`/`-W`: `auto` or a CPU list.
fn cpu_pin(arg: &str) -> InputResult<CpuPin> {
    Ok(if arg == "auto" {
        CpuPin::Auto
    } else {
        CpuPin::List(
            parse_cpuset(arg)
                .ok_or_else(|| schbench_err("failed to parse cpuset information".into()))?,
        )
    })
}

/// `-j`/`--json`: refused, pointing to schedlab's own `--json`.
fn json_opt_err(arg: &str) -> InputError {
    schbench_err(format!(
        "--json {}: schbench's own JSON file is not written by the simulation; \
         accepted: schedlab's --json FILE, whose runs[].workload holds schbench's \
         metrics",
        crate::input::limits::clip(arg)
    ))
}

/// `--split`: the private share of the operations, a percentage 0..=100 (`atoi`).
fn split_pct(arg: &str) -> InputResult<u32> {
    let v = cmdline::atoi(arg);
    if !(0..=100).contains(&v) {
        return Err(schbench_err("split must be between 0 and 100".into()));
    }
    Ok(v as u32)
}

/// What the current schbench does after its option loop: the late options, `-C` implying
/// `-L`, no warm-up below 30 s, extra arguments, the default worker count, and CPU checks.
fn finish_current(
    mut c: SchbenchConfig,
    late: &CurrentLate,
    positional: &[String],
    nr_cpus: usize,
) -> InputResult<SchbenchConfig> {
    let err = schbench_err;
    if let Some(w) = late.found_warmup {
        c.warmup_s = w;
    }
    if c.calibrate {
        c.skip_locking = true;
    }
    if c.runtime_s < 30 {
        c.warmup_s = 0;
    }
    if let Some(w) = positional.first() {
        return Err(err(format!("Error Extra arguments '{w}'")));
    }
    if c.message_threads == 0 {
        return Err(err(
            "-m must be at least 1 (the program divides by it)".into()
        ));
    }
    if late.worker_threads == 0 {
        let n = nr_cpus.max(1) as u64;
        let m = u64::from(c.message_threads);
        c.workers_per_message_thread = n.div_ceil(m) as u32;
        c.workers_defaulted = true;
    } else {
        c.workers_per_message_thread = late.worker_threads.min(i64::from(u32::MAX)) as u32;
        c.workers_defaulted = false;
    }
    for (flag, pin) in [("-M", c.message_cpus), ("-W", c.worker_cpus)] {
        if let CpuPin::List(m) = pin
            && let Some(bad) = m.iter().find(|&cpu| cpu >= nr_cpus)
        {
            return Err(err(format!(
                "{flag}: CPU {bad} does not exist (machine has {nr_cpus} CPUs)"
            )));
        }
    }
    Ok(c)
}

/// schbench's own cpuset syntax: comma-separated `N` or `A-B` (no strides).
fn parse_cpuset(s: &str) -> Option<CpuMask> {
    if s.is_empty() {
        return None;
    }
    let mut m = CpuMask::new();
    for tok in s.split(',').filter(|t| !t.is_empty()) {
        let (a, b) = match tok.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => {
                let a = tok.parse::<usize>().ok()?;
                (a, a)
            }
        };
        if b < a || b >= crate::cpumask::NR_CPUS_MAX {
            return None;
        }
        for cpu in a..=b {
            m.set(cpu);
        }
    }
    Some(m)
}

const CLASSIC_LONGOPTS: &[LongOpt] = &[
    lo("auto", false, 'a'),
    lo("pipe", true, 'p'),
    lo("message-threads", true, 'm'),
    lo("threads", true, 't'),
    lo("runtime", true, 'r'),
    lo("rps", true, 'R'),
    lo("sleeptime", true, 's'),
    lo("cputime", true, 'c'),
    lo("help", false, 'h'),
];

/// A classic or 2021 option's value as `atoi()` reads it, clamped to `u32`; a negative one
/// is an error (the programs would wrap it).
fn classic_value(o: &cmdline::OptHit) -> InputResult<u64> {
    let arg = o.arg.as_deref().unwrap_or("");
    let v = cmdline::atoi(arg);
    if o.arg.is_some() && v < 0 {
        return Err(InputError::new(
            "schbench",
            format!("{} must not be negative, got '{arg}'", o.spelled),
        ));
    }
    Ok(v.min(i64::from(u32::MAX)) as u64)
}

/// Parse the classic (pre-2020) options `p:am:t:s:c:r:R:`.
pub fn parse_classic(args: &[String], version: SchbenchVersion) -> InputResult<SchbenchConfig> {
    let err = |m: String| InputError::new("schbench", m);
    let p = cmdline::getopt_long(
        "schbench",
        args,
        "p:am:t:s:c:r:R:",
        CLASSIC_LONGOPTS,
        OptStyle::Glibc,
    )
    .map_err(err)?;
    let mut c = SchbenchConfig::classic_defaults(version);
    let mut found_sleep = None;
    let mut found_cpu = None;
    for o in &p.opts {
        let v = classic_value(o)?;
        match o.id {
            'a' => c.classic_autobench = true,
            'p' => {
                let mut b = v as u32;
                if b > PIPE_TRANSFER_BUFFER {
                    c.parse_notes
                        .push(format!("pipe size too big, using {PIPE_TRANSFER_BUFFER}"));
                    b = PIPE_TRANSFER_BUFFER;
                }
                c.pipe_bytes = b;
                c.classic_sleeptime_us = 0;
                c.classic_cputime_us = 0;
            }
            's' => found_sleep = Some(v),
            'c' => found_cpu = Some(v),
            'm' => c.message_threads = v as u32,
            't' => c.workers_per_message_thread = v as u32,
            'r' => c.runtime_s = v as u32,
            'R' => c.rps = v as u32,
            'h' => return Err(err("--help prints usage; nothing to simulate".into())),
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(s) = found_sleep {
        c.classic_sleeptime_us = s;
    }
    if let Some(cpu) = found_cpu {
        c.classic_cputime_us = cpu;
    }
    if let Some(w) = p.positional.first() {
        return Err(err(format!("Error Extra arguments '{w}'")));
    }
    if c.message_threads == 0 {
        return Err(err("-m must be at least 1".into()));
    }
    Ok(c)
}

/// Long options of the e4aa540 program. `--message_cputime` is mapped to `'s'` there (a typo
/// in its table), so it sets the sleep time; kept.
const INTERIM2021_LONGOPTS: &[LongOpt] = &[
    lo("auto", false, 'a'),
    lo("pipe", true, 'p'),
    lo("message-threads", true, 'm'),
    lo("threads", true, 't'),
    lo("runtime", true, 'r'),
    lo("rps", true, 'R'),
    lo("auto-rps", true, 'A'),
    lo("sleeptime", true, 's'),
    lo("message_cputime", true, 's'),
    lo("cputime", true, 'c'),
    lo("warmuptime", true, 'w'),
    lo("intervaltime", true, 'i'),
    lo("zerotime", true, 'z'),
    lo("help", false, 'h'),
];

/// The e4aa540 program's defaults: `-m 2 -t 16 -r 30 -s 30000 -C 30000 -c 30000 -w 5 -i 10`.
fn interim2021_defaults() -> SchbenchConfig {
    SchbenchConfig {
        warmup_s: 5,
        interval_s: 10,
        zero_s: 0,
        message_cputime_us: 30_000,
        ..SchbenchConfig::classic_defaults(SchbenchVersion::Interim2021)
    }
}

/// Parse the Oct 2020 – Dec 2021 options `p:am:t:s:c:C:r:R:w:i:z:A:j` as commit e4aa540 does.
///
/// Two of that program's own quirks are kept: `-C` is parsed but never applied (its
/// `message_cputime = message_cputime;`), so the message thread always spins 30 000 µs; and
/// `--message_cputime` sets the sleep time. `-a`, `-p`, `-A` force the warm-up to 0 as the
/// program does (and are then refused by the generator, with `-R`); `-j` (random spin times)
/// and `-z` (periodic zeroing) are refused here: not modelled.
pub fn parse_interim2021(args: &[String]) -> InputResult<SchbenchConfig> {
    let err = |m: String| InputError::new("schbench", m);
    let p = cmdline::getopt_long(
        "schbench",
        args,
        "p:am:t:s:c:C:r:R:w:i:z:A:j",
        INTERIM2021_LONGOPTS,
        OptStyle::Glibc,
    )
    .map_err(err)?;
    let mut c = interim2021_defaults();
    let (mut found_sleep, mut found_cpu, mut found_warmup) = (None, None, None);
    for o in &p.opts {
        let v = classic_value(o)?;
        match o.id {
            'a' => {
                c.classic_autobench = true;
                c.warmup_s = 0;
            }
            'j' => {
                return Err(err(
                    "-j (random spin times) is not modelled; run without it".into(),
                ));
            }
            'A' => {
                c.auto_rps_pct = Some(v as u32);
                c.warmup_s = 0;
            }
            'p' => {
                c.pipe_bytes = (v as u32).min(PIPE_TRANSFER_BUFFER);
                c.classic_sleeptime_us = 0;
                c.classic_cputime_us = 0;
                c.warmup_s = 0;
                c.message_cputime_us = 0;
            }
            's' => found_sleep = Some(v),
            'c' => found_cpu = Some(v),
            // Parsed and dropped, as the program drops it.
            'C' => {}
            'w' => found_warmup = Some(v as u32),
            'm' => c.message_threads = v as u32,
            't' => c.workers_per_message_thread = v as u32,
            'r' => c.runtime_s = v as u32,
            'i' => c.interval_s = v as u32,
            'z' => c.zero_s = v as u32,
            'R' => c.rps = v as u32,
            'h' => return Err(err("--help prints usage; nothing to simulate".into())),
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    c.classic_sleeptime_us = found_sleep.unwrap_or(c.classic_sleeptime_us);
    c.classic_cputime_us = found_cpu.unwrap_or(c.classic_cputime_us);
    c.warmup_s = found_warmup.unwrap_or(c.warmup_s);
    check_interim2021(&c, p.positional.first())?;
    Ok(c)
}

/// The e4aa540 command lines [`parse_interim2021`] accepts but cannot simulate.
fn check_interim2021(c: &SchbenchConfig, extra: Option<&String>) -> InputResult<()> {
    let err = |m: String| Err(InputError::new("schbench", m));
    if let Some(w) = extra {
        return err(format!("Error Extra arguments '{w}'"));
    }
    if c.message_threads == 0 {
        return err("-m must be at least 1".into());
    }
    if c.zero_s > 0 {
        return err("-z (zeroing the statistics every N seconds) is not modelled".into());
    }
    if c.runtime_s == 0 {
        return err("-r 0 runs forever; give a runtime in seconds".into());
    }
    if c.interval_s == 0 {
        return err("-i 0 prints a report at every pass; give an interval of 1 s or more".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The fio "plat" histogram schbench uses.

/// Bits of exact resolution per power-of-two group.
pub const PLAT_BITS: u32 = 8;
/// Buckets per group.
pub const PLAT_VAL: u32 = 1 << PLAT_BITS;
/// Groups.
pub const PLAT_GROUP_NR: u32 = 19;
/// Total buckets.
pub const PLAT_NR: usize = (PLAT_GROUP_NR * PLAT_VAL) as usize;

/// schbench's latency/RPS histogram: 4864 buckets, exact below 512, then 256 buckets per power
/// of two (≤ 0.4 % error); values of about 2^26 and above share the last bucket. `min` treats 0
/// as "unset", as the program does.
#[derive(Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlatHistogram {
    #[serde(skip)]
    plat: Vec<u64>,
    pub nr_samples: u64,
    pub min: u32,
    pub max: u32,
}

impl std::fmt::Debug for PlatHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PlatHistogram {{ n: {}, min: {}, max: {} }}",
            self.nr_samples, self.min, self.max
        )
    }
}

impl Default for PlatHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bucket index of a value (fio's `plat_val_to_idx`).
pub fn plat_val_to_idx(val: u32) -> usize {
    let msb = if val == 0 {
        0
    } else {
        31 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// The value a bucket prints as: the bucket's midpoint (`plat_idx_to_val`).
pub fn plat_idx_to_val(idx: usize) -> u32 {
    let idx = idx.min(PLAT_NR - 1) as u32;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    // C: base + ((k + 0.5) * (1 << error_bits)), converted to unsigned int.
    (f64::from(base) + (f64::from(k) + 0.5) * f64::from(1u32 << error_bits)) as u32
}

/// One percentile line: the percentile, its value, and the band count (samples since the
/// previous percentile's bucket).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PercentileRow {
    pub pct: f64,
    pub value: u32,
    pub band: u64,
}

/// The current version's percentile list {20, 50, 90, 99, 99.9}.
pub const PLIST_CURRENT: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
/// The classic version's list {50, 75, 90, 95, 99, 99.5, 99.9}.
pub const PLIST_CLASSIC: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9];

impl PlatHistogram {
    pub fn new() -> Self {
        PlatHistogram {
            plat: vec![0; PLAT_NR],
            nr_samples: 0,
            min: 0,
            max: 0,
        }
    }

    /// `add_lat`: record one value (µs or requests/s).
    pub fn add(&mut self, v: u32) {
        if v > self.max {
            self.max = v;
        }
        if self.min == 0 || v < self.min {
            self.min = v;
        }
        self.plat[plat_val_to_idx(v)] += 1;
        self.nr_samples += 1;
    }

    /// `combine_stats`: fold `other` in. Note the program's quirk, kept: an empty `other`
    /// (min 0) resets a non-zero `min` to 0, until a later non-empty histogram is folded in.
    pub fn combine(&mut self, other: &PlatHistogram) {
        for (a, b) in self.plat.iter_mut().zip(&other.plat) {
            *a += b;
        }
        self.nr_samples += other.nr_samples;
        if other.max > self.max {
            self.max = other.max;
        }
        if self.min == 0 || other.min < self.min {
            self.min = other.min;
        }
    }

    /// Zero everything (warmup end, `-z`).
    pub fn reset(&mut self) {
        *self = PlatHistogram::new();
    }

    /// Count in one bucket.
    pub fn bucket(&self, idx: usize) -> u64 {
        self.plat[idx]
    }

    /// `calc_percentiles`: walk the buckets with a running sum; percentile j is the first
    /// bucket where `sum >= plist[j] / 100 * nr` (in double precision); band counts are the
    /// differences between consecutive cumulative counts.
    pub fn percentiles(&self, plist: &[f64]) -> Vec<PercentileRow> {
        let len = plist.len();
        if len == 0 {
            return Vec::new();
        }
        let nr = self.nr_samples as f64;
        let mut vals = vec![0u32; len];
        let mut cum = vec![0u64; len];
        let mut sum = 0u64;
        let mut j = 0;
        'outer: for (i, &count) in self.plat.iter().enumerate() {
            sum += count;
            while (sum as f64) >= plist[j] / 100.0 * nr {
                vals[j] = plat_idx_to_val(i);
                cum[j] = sum;
                if j == len - 1 {
                    break 'outer;
                }
                j += 1;
            }
        }
        // Band counts: the program subtracts the running total of already-converted bands.
        let mut bands = cum.clone();
        let mut last = 0u64;
        for i in 1..len {
            last += bands[i - 1];
            bands[i] = bands[i].saturating_sub(last);
        }
        plist
            .iter()
            .zip(vals)
            .zip(bands)
            .map(|((&pct, value), band)| PercentileRow { pct, value, band })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Results and the report.

/// One periodic (`-i`) report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SchbenchInterval {
    /// Whole seconds since start (`runtime_delta / USEC_PER_SEC`).
    pub elapsed_s: u64,
    /// Merged over all workers since the last zeroing (cumulative, not per interval).
    pub wakeup: PlatHistogram,
    pub request: PlatHistogram,
    pub rps: PlatHistogram,
    /// Average run delay per schedule-in, ns (from schedstat), over message threads / workers.
    pub sched_delay_message_ns: u64,
    pub sched_delay_worker_ns: u64,
    /// The latest one-second RPS sample.
    pub current_rps: f64,
}

/// Something the stats thread printed during the run, in order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum SchbenchLogEntry {
    /// `warmup done, zeroing stats`.
    WarmupDone,
    Interval(Box<SchbenchInterval>),
}

/// What the engine measured for one run of the current version.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SchbenchResult {
    pub log: Vec<SchbenchLogEntry>,
    pub wakeup: PlatHistogram,
    pub request: PlatHistogram,
    pub rps: PlatHistogram,
    /// Requests completed by all workers since start (never zeroed).
    pub loop_count: u64,
    /// Summed worker runtime in µs (pipe mode's ops/sec denominator).
    pub loop_runtime_us: u64,
    pub sched_delay_message_ns: u64,
    pub sched_delay_worker_ns: u64,
    /// `-A` mode: the final total RPS goal (`requests_per_sec × m`).
    pub final_rps_goal: Option<u64>,
    /// The simulated seconds the run lasted when it ended before `-r` (a cut run): the
    /// report prints them as its runtime and no average rps ([`runtime_text`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_runtime_s: Option<f64>,
}

/// The runtime a report prints: `-r`, or the simulated seconds of a run cut before it.
pub fn runtime_text(cfg: &SchbenchConfig, cut_runtime_s: Option<f64>) -> String {
    match cut_runtime_s {
        Some(s) => format!("{s:.3}"),
        None => cfg.runtime_s.to_string(),
    }
}

const PLIST_FOR_LAT: u32 = 0b11110; // 50, 90, 99, 99.9
const PLIST_FOR_RPS: u32 = 0b00111; // 20, 50, 90
const PLIST_PIPE: u32 = 0b11111;
const STAR_99: u32 = 1 << 3;
const STAR_50: u32 = 1 << 1;

/// `show_latencies`: one percentile block, exactly as printed (TABs, `%-10u`, `%2.1f`).
pub fn format_latency_block(
    label: &str,
    units: &str,
    runtime_s: impl std::fmt::Display,
    h: &PlatHistogram,
    mask: u32,
    star: u32,
) -> String {
    let mut out = format!(
        "{label} percentiles ({units}) runtime {runtime_s} (s) ({} total samples)\n",
        h.nr_samples
    );
    for (i, row) in h.percentiles(&PLIST_CURRENT).iter().enumerate() {
        let bit = 1u32 << i;
        if mask & bit == 0 {
            continue;
        }
        let mark = if bit == star { "* " } else { "  " };
        out.push_str(&format!(
            "\t{mark}{:.1}th: {:<10} ({} samples)\n",
            row.pct, row.value, row.band
        ));
    }
    out.push_str(&format!("\t  min={}, max={}\n", h.min, h.max));
    out
}

fn sched_delay_line(msg_ns: u64, worker_ns: u64) -> String {
    format!(
        "sched delay: message {} (usec) worker {} (usec)\n",
        msg_ns / 1000,
        worker_ns / 1000
    )
}

/// `pretty_size`: divide by 1024 until below 1024, units B..EB.
fn pretty_size(mut n: f64) -> (f64, &'static str) {
    const UNITS: [&str; 7] = ["B", "KB", "MB", "GB", "TB", "PB", "EB"];
    let mut i = 0;
    while n >= 1024.0 && i + 1 < UNITS.len() {
        i += 1;
        n /= 1024.0;
    }
    (n, UNITS[i])
}

/// One entry of the statistics thread's log as the program prints it.
pub fn format_log_entry(e: &SchbenchLogEntry) -> String {
    match e {
        SchbenchLogEntry::WarmupDone => "warmup done, zeroing stats\n".into(),
        SchbenchLogEntry::Interval(iv) => {
            let t = iv.elapsed_s;
            let mut out = format_latency_block(
                "Wakeup Latencies",
                "usec",
                t,
                &iv.wakeup,
                PLIST_FOR_LAT,
                STAR_99,
            );
            out += &format_latency_block(
                "Request Latencies",
                "usec",
                t,
                &iv.request,
                PLIST_FOR_LAT,
                STAR_99,
            );
            out += &format_latency_block("RPS", "requests", t, &iv.rps, PLIST_FOR_RPS, STAR_50);
            out += &sched_delay_line(iv.sched_delay_message_ns, iv.sched_delay_worker_ns);
            out += &format!("current rps: {:.2}\n", iv.current_rps);
            out
        }
    }
}

/// Everything the current schbench prints to stderr for one run: preamble, the log
/// (warmup/interval reports), then the final report.
pub fn format_report(cfg: &SchbenchConfig, res: &SchbenchResult) -> String {
    let mut out = cfg.format_preamble();
    for e in &res.log {
        out += &format_log_entry(e);
    }
    let runtime = runtime_text(cfg, res.cut_runtime_s);
    if cfg.pipe_bytes > 0 {
        out += &format_latency_block(
            "Wakeup Latencies",
            "usec",
            &runtime,
            &res.wakeup,
            PLIST_PIPE,
            STAR_99,
        );
        let rt = res.loop_runtime_us as f64;
        let loops_per_sec = res.loop_count as f64 * 1e6 / rt;
        // The program computes this in integer arithmetic before converting.
        let bytes_per_sec = if res.loop_runtime_us == 0 {
            0.0
        } else {
            ((u128::from(res.loop_count) * u128::from(cfg.pipe_bytes) * 1_000_000)
                / u128::from(res.loop_runtime_us)) as f64
        };
        let (v, unit) = pretty_size(bytes_per_sec);
        out += &format!("avg worker transfer: {loops_per_sec:.2} ops/sec {v:.2}{unit}/s\n");
    } else {
        out += &format_latency_block(
            "Wakeup Latencies",
            "usec",
            &runtime,
            &res.wakeup,
            PLIST_FOR_LAT,
            STAR_99,
        );
        out += &format_latency_block(
            "Request Latencies",
            "usec",
            &runtime,
            &res.request,
            PLIST_FOR_LAT,
            STAR_99,
        );
        out += &format_latency_block(
            "RPS",
            "requests",
            &runtime,
            &res.rps,
            PLIST_FOR_RPS,
            STAR_50,
        );
        match (cfg.auto_rps_pct, res.final_rps_goal, res.cut_runtime_s) {
            (_, _, Some(s)) => {
                out += &format!(
                    "average rps: not finished (the run ended at {s:.3} s of -r {} s)\n",
                    cfg.runtime_s
                );
            }
            (Some(_), Some(goal), None) => out += &format!("final rps goal was {goal}\n"),
            _ => {
                // `(double)loop_count / runtime`: with -r 0 this is inf in C; we print the
                // same "inf".
                let avg = res.loop_count as f64 / f64::from(cfg.runtime_s);
                out += &format!("average rps: {}\n", c_fixed2(avg));
            }
        }
        out += &sched_delay_line(res.sched_delay_message_ns, res.sched_delay_worker_ns);
    }
    out
}

/// `%.2f` including C's spelling of non-finite values.
fn c_fixed2(v: f64) -> String {
    if v.is_nan() {
        "-nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v:.2}")
    }
}

/// What the classic version measured: one wakeup-latency histogram merged over all workers.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SchbenchClassicResult {
    pub latency: PlatHistogram,
}

/// The classic report: `Latency percentiles (usec)` with all seven percentiles, `*` on p99,
/// and `min=0` always — the classic code started `min` at 0 and only ever lowered it.
pub fn format_classic_report(cfg: &SchbenchConfig, res: &SchbenchClassicResult) -> String {
    let mut out = cfg.format_preamble();
    out.push_str("Latency percentiles (usec)\n");
    for (i, row) in res.latency.percentiles(&PLIST_CLASSIC).iter().enumerate() {
        let star = if i == 4 { "*" } else { "" };
        let pct = if cfg.version == SchbenchVersion::Classic2016 {
            format!("{:.4}", row.pct)
        } else {
            format!("{:.1}", row.pct)
        };
        out.push_str(&format!("\t{star}{pct}th: {}\n", row.value));
    }
    out.push_str(&format!("\tmin=0, max={}\n", res.latency.max));
    out
}

/// Something the e4aa540 statistics loop printed during the run, in order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Interim2021LogEntry {
    /// `warmup done, zeroing stats`.
    WarmupDone,
    /// An `-i` report: the latencies since the warm-up (cumulative), at whole second
    /// `elapsed_s` of the run.
    Interval {
        elapsed_s: u64,
        latency: PlatHistogram,
    },
}

/// What the e4aa540 program measured: its log and the final wakeup-latency histogram.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SchbenchInterim2021Result {
    pub log: Vec<Interim2021LogEntry>,
    pub latency: PlatHistogram,
    /// As [`SchbenchResult::cut_runtime_s`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_runtime_s: Option<f64>,
}

/// e4aa540's `show_latencies()`: `Latency percentiles (usec) runtime N (s) (M total samples)`,
/// the seven percentiles with their band counts (`*` before p99, nothing before the others),
/// then `min`/`max` as tracked.
pub fn format_interim2021_block(runtime_s: impl std::fmt::Display, h: &PlatHistogram) -> String {
    let mut out = format!(
        "Latency percentiles (usec) runtime {runtime_s} (s) ({} total samples)\n",
        h.nr_samples
    );
    // With no samples the program still prints every row (all 0): its percentile walk
    // satisfies `sum >= p / 100 * 0` at the first bucket.
    for (i, row) in h.percentiles(&PLIST_CLASSIC).iter().enumerate() {
        let star = if i == 4 { "*" } else { "" };
        out.push_str(&format!(
            "\t{star}{:.1}th: {} ({} samples)\n",
            row.pct, row.value, row.band
        ));
    }
    out.push_str(&format!("\tmin={}, max={}\n", h.min, h.max));
    out
}

/// Everything the e4aa540 program prints to stderr: its log, then the final report.
pub fn format_interim2021_report(cfg: &SchbenchConfig, res: &SchbenchInterim2021Result) -> String {
    let mut out = cfg.format_preamble();
    for e in &res.log {
        match e {
            Interim2021LogEntry::WarmupDone => out.push_str("warmup done, zeroing stats\n"),
            Interim2021LogEntry::Interval { elapsed_s, latency } => {
                out.push_str(&format_interim2021_block(*elapsed_s, latency));
            }
        }
    }
    out.push_str(&format_interim2021_block(
        runtime_text(cfg, res.cut_runtime_s),
        &res.latency,
    ));
    out
}

/// `[workload] kind = "schbench"` keys. Each is one of the program's options, so the key
/// form is translated to the equivalent command line and both forms share every rule
/// (defaults, warm-up forcing, pinning).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchbenchKeys {
    pub version: Option<SchbenchVersion>,
    pub message_threads: Option<u64>,
    pub workers_per_message_thread: Option<u64>,
    pub runtime_s: Option<u64>,
    pub warmup_s: Option<u64>,
    pub interval_s: Option<u64>,
    pub zero_s: Option<u64>,
    pub operations: Option<u64>,
    pub cache_footprint_kb: Option<u64>,
    pub split_private_pct: Option<u64>,
    pub sleep_usec: Option<u64>,
    pub no_locking: Option<bool>,
    pub calibrate: Option<bool>,
    pub rps: Option<u64>,
    pub auto_rps_pct: Option<u64>,
    pub pipe_bytes: Option<u64>,
    pub message_cpus: Option<String>,
    pub worker_cpus: Option<String>,
    pub auto_pin_model: Option<AutoPinModel>,
    pub classic_sleeptime_us: Option<u64>,
    pub classic_cputime_us: Option<u64>,
    /// Model inputs, not options (current schbench only): see [`SchbenchConfig`].
    pub request_user_ns: Option<u64>,
    pub request_user_cv_pct: Option<u64>,
    pub wake_user_ns: Option<u64>,
    pub batch_user_ns: Option<u64>,
}

/// Each given key with the option words it stands for.
type KeyWords = Vec<(&'static str, Vec<String>)>;

/// A numeric key: (key, value, option flag, whether the version has the option).
type NumericKey = (&'static str, Option<u64>, &'static str, bool);

impl SchbenchKeys {
    /// The numeric keys, in the order of [`Self::option_words`], with whether the current
    /// (`current`) or classic version has each.
    fn numeric_keys(&self, version: SchbenchVersion) -> [NumericKey; 15] {
        let current = version == SchbenchVersion::Current;
        // The options the e4aa540 program shares with the current one.
        let since_2020 = current || version == SchbenchVersion::Interim2021;
        [
            ("message_threads", self.message_threads, "-m", true),
            (
                "workers_per_message_thread",
                self.workers_per_message_thread,
                "-t",
                true,
            ),
            ("runtime_s", self.runtime_s, "-r", true),
            ("rps", self.rps, "-R", true),
            ("warmup_s", self.warmup_s, "-w", since_2020),
            ("interval_s", self.interval_s, "-i", since_2020),
            ("zero_s", self.zero_s, "-z", since_2020),
            ("operations", self.operations, "-n", current),
            ("cache_footprint_kb", self.cache_footprint_kb, "-F", current),
            (
                "split_private_pct",
                self.split_private_pct,
                "--split",
                current,
            ),
            ("sleep_usec", self.sleep_usec, "-s", current),
            ("auto_rps_pct", self.auto_rps_pct, "-A", since_2020),
            ("pipe_bytes", self.pipe_bytes, "-p", true),
            (
                "classic_sleeptime_us",
                self.classic_sleeptime_us,
                "-s",
                !current,
            ),
            (
                "classic_cputime_us",
                self.classic_cputime_us,
                "-c",
                !current,
            ),
        ]
    }

    /// Each given key as `(key, the option words it stands for)`, in the order above.
    fn option_words(&self, version: SchbenchVersion) -> Result<KeyWords, (&'static str, String)> {
        let current = version == SchbenchVersion::Current;
        let mut out: Vec<(&'static str, Vec<String>)> = Vec::new();
        for (k, v, flag, exists) in self.numeric_keys(version) {
            let Some(v) = v else { continue };
            if !exists {
                return Err((k, only_in(current)));
            }
            out.push((k, vec![flag.to_string(), v.to_string()]));
        }
        for (k, v, flag) in [
            ("no_locking", self.no_locking, "-L"),
            ("calibrate", self.calibrate, "-C"),
        ] {
            if v == Some(true) {
                if !current {
                    return Err((k, only_in(current)));
                }
                out.push((k, vec![flag.to_string()]));
            }
        }
        for (k, v, flag) in [
            ("message_cpus", &self.message_cpus, "-M"),
            ("worker_cpus", &self.worker_cpus, "-W"),
        ] {
            if let Some(v) = v {
                if !current {
                    return Err((k, only_in(current)));
                }
                out.push((k, vec![flag.to_string(), v.clone()]));
            }
        }
        Ok(out)
    }
}

/// The user-space work keys (model inputs with no command-line option).
fn apply_user_work_keys(
    cfg: &mut SchbenchConfig,
    keys: &SchbenchKeys,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<()> {
    let current = cfg.version == SchbenchVersion::Current;
    for (k, v) in [
        ("request_user_ns", keys.request_user_ns),
        ("request_user_cv_pct", keys.request_user_cv_pct),
        ("wake_user_ns", keys.wake_user_ns),
        ("batch_user_ns", keys.batch_user_ns),
    ] {
        if v.is_some() && !current {
            return Err(err(
                k,
                "models the current schbench's request path; the classic one has its own -c spin"
                    .into(),
            ));
        }
    }
    const MAX_NS: u64 = 1_000_000_000;
    for (k, v, slot) in [
        (
            "request_user_ns",
            keys.request_user_ns,
            &mut cfg.request_user_ns,
        ),
        ("wake_user_ns", keys.wake_user_ns, &mut cfg.wake_user_ns),
        ("batch_user_ns", keys.batch_user_ns, &mut cfg.batch_user_ns),
    ] {
        if let Some(v) = v {
            if v > MAX_NS {
                return Err(err(
                    k,
                    format!("{v} ns is more than 1 s of work per request"),
                ));
            }
            *slot = v;
        }
    }
    if let Some(v) = keys.request_user_cv_pct {
        if v > 100 {
            return Err(err(
                "request_user_cv_pct",
                format!(
                    "{v} is above 100 (the shifted exponential's fixed part would be negative)"
                ),
            ));
        }
        cfg.request_user_cv_pct = v as u32;
    }
    Ok(())
}

fn only_in(current: bool) -> String {
    if current {
        "only exists in the classic schbench".into()
    } else {
        "only exists in the current schbench".into()
    }
}

/// Build from `[workload]` keys on top of `base` (the version and option words of a
/// command line) or of the `version` key's defaults: the keys' options follow the command's,
/// and, as with getopt, the last occurrence of an option wins.
pub fn from_keys(
    base: Option<(SchbenchVersion, Vec<String>)>,
    keys: &SchbenchKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<SchbenchConfig> {
    let (version, base_words) = match base {
        Some((v, words)) => {
            if let Some(k) = keys.version
                && k != v
            {
                return Err(err(
                    "version",
                    format!(
                        "the command runs the {v:?} schbench; a command's version cannot be changed by a key"
                    ),
                ));
            }
            (v, words)
        }
        None => (keys.version.unwrap_or(SchbenchVersion::Current), Vec::new()),
    };
    let words = keys.option_words(version).map_err(|(k, m)| err(k, m))?;
    let parse = |args: &[String]| match version {
        SchbenchVersion::Current => parse_current(args, nr_cpus),
        SchbenchVersion::Interim2021 => parse_interim2021(args),
        v => parse_classic(args, v),
    };
    let mut cfg = super::parse_with_key_words(&base_words, &words, parse, err)?;
    if let Some(m) = keys.auto_pin_model {
        cfg.auto_pin_model = m;
    }
    apply_user_work_keys(&mut cfg, keys, err)?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        cmdline::split_words(s).unwrap()
    }

    #[test]
    fn issue_command_2025() {
        let c = parse_current(&w("-L -m 4 -M auto -t 128 -n 0 -r 60"), 80).unwrap();
        assert_eq!(
            (c.message_threads, c.workers_per_message_thread, c.runtime_s),
            (4, 128, 60)
        );
        assert_eq!(
            (c.operations, c.sleep_usec, c.skip_locking, c.warmup_s),
            (0, 100, true, 0)
        );
        assert_eq!(c.nr_workers(), 512);
        assert_eq!(c.nr_threads(), 517);
        assert_eq!(
            (0..4)
                .map(|i| c.message_thread_cpu(i).unwrap())
                .collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        // Code behaviour: workers on every CPU, message CPUs included.
        assert_eq!(c.worker_mask(80).unwrap(), CpuMask::first_n(80));
        let mut r = c.clone();
        r.auto_pin_model = AutoPinModel::Readme;
        assert_eq!(r.worker_mask(80).unwrap().to_string(), "4-79");
        assert_eq!(
            c.format_preamble(),
            "auto pinning message and worker threads\n\
             Pinning to message thread index 0 cpu 0\nPinning to message thread index 1 cpu 1\n\
             Pinning to message thread index 2 cpu 2\nPinning to message thread index 3 cpu 3\n"
        );
    }

    #[test]
    fn defaults_and_adjustments() {
        let c = parse_current(&[], 10).unwrap();
        assert_eq!(
            (
                c.message_threads,
                c.workers_per_message_thread,
                c.runtime_s,
                c.interval_s
            ),
            (1, 10, 30, 10)
        );
        assert_eq!(
            (c.operations, c.cache_footprint_kb, c.matrix_size()),
            (5, 256, 104)
        );
        assert!(
            c.format_preamble()
                .contains("setting worker threads to 10\n")
        );
        // ceil(nprocs / m)
        assert_eq!(
            parse_current(&w("-m 3"), 10)
                .unwrap()
                .workers_per_message_thread,
            4
        );
        // -w is forced to 0 when -r < 30, kept otherwise.
        assert_eq!(parse_current(&w("-w 5 -r 20"), 4).unwrap().warmup_s, 0);
        assert_eq!(parse_current(&w("-w 5 -r 60"), 4).unwrap().warmup_s, 5);
        // -C implies -L; -A starts at 10 rps; -p caps at 1 MiB with a note.
        assert!(parse_current(&w("-C"), 4).unwrap().skip_locking);
        assert_eq!(parse_current(&w("-A 80"), 4).unwrap().rps, 10);
        let p = parse_current(&w("-p 2000000"), 4).unwrap();
        assert_eq!(p.pipe_bytes, PIPE_TRANSFER_BUFFER);
        assert_eq!(
            p.parse_notes,
            vec!["pipe size too big, using 1048576".to_string()]
        );
        // --cache_footprint is bound to 'f' and ignored by the program.
        assert_eq!(
            parse_current(&w("--cache_footprint 512"), 4)
                .unwrap()
                .cache_footprint_kb,
            256
        );
        assert_eq!(
            parse_current(&w("-F 512"), 4).unwrap().cache_footprint_kb,
            512
        );
        let s = parse_current(&w("--split 25"), 4).unwrap();
        assert_eq!(s.split_matrix_sizes(), Some((52, 90)));
        assert_eq!(
            parse_current(&w("-R 1000 -m 3"), 9)
                .unwrap()
                .rps_per_message_thread(),
            333
        );
        // -M list: thread i → (i mod count)-th CPU of the list.
        let m = parse_current(&w("-m 3 -M 4,6"), 8).unwrap();
        assert_eq!(
            [
                m.message_thread_cpu(0),
                m.message_thread_cpu(1),
                m.message_thread_cpu(2)
            ],
            [Some(4), Some(6), Some(4)]
        );
        assert_eq!(m.worker_mask(8), None);
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse_current(&w("-x"), 4).unwrap_err().message,
            "schbench: invalid option -- 'x'"
        );
        assert_eq!(
            parse_current(&w("-M 3-1"), 4).unwrap_err().message,
            "failed to parse cpuset information"
        );
        assert_eq!(
            parse_current(&w("extra"), 4).unwrap_err().message,
            "Error Extra arguments 'extra'"
        );
        assert_eq!(
            parse_current(&w("--split 101"), 4).unwrap_err().message,
            "split must be between 0 and 100"
        );
        assert!(parse_current(&w("-M 9"), 4).is_err());
    }

    #[test]
    fn classic_version() {
        let c = parse_classic(&w("-m 2 -t 16 -r 30"), SchbenchVersion::Classic).unwrap();
        assert_eq!(
            (c.message_threads, c.workers_per_message_thread, c.runtime_s),
            (2, 16, 30)
        );
        assert_eq!(
            (c.classic_sleeptime_us, c.classic_cputime_us),
            (30_000, 30_000)
        );
        let c = parse_classic(&w("-m 2 -t 8 -s 10000 -c 20000"), SchbenchVersion::Classic).unwrap();
        assert_eq!(
            (c.classic_sleeptime_us, c.classic_cputime_us),
            (10_000, 20_000)
        );
        let c = parse_classic(&w("-p 4096"), SchbenchVersion::Classic).unwrap();
        assert_eq!((c.classic_sleeptime_us, c.classic_cputime_us), (0, 0));
    }

    #[test]
    fn histogram_buckets() {
        // Exact below 512, then midpoints of 256 buckets per power of two.
        for v in [0u32, 1, 255, 511] {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v);
        }
        assert_eq!(plat_idx_to_val(plat_val_to_idx(4868)), 4872);
        assert_eq!(plat_idx_to_val(plat_val_to_idx(4821)), 4824);
        // The RPS values the reference quotes: 680960, 683008, 685056 are bucket midpoints.
        for v in [680960u32, 683008, 685056] {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v);
        }
        assert_eq!(plat_val_to_idx(u32::MAX), PLAT_NR - 1);
    }

    proptest::proptest! {
        #[test]
        fn bucket_error_below_half_percent(v in 512u32..(1 << 26)) {
            let back = plat_idx_to_val(plat_val_to_idx(v));
            let err = (f64::from(back) - f64::from(v)).abs() / f64::from(v);
            proptest::prop_assert!(err <= 1.0 / 256.0, "v={} back={}", v, back);
        }

        #[test]
        fn bands_sum_to_last_cumulative(samples in proptest::collection::vec(0u32..100_000, 1..200)) {
            let mut h = PlatHistogram::new();
            for s in &samples { h.add(*s); }
            let rows = h.percentiles(&PLIST_CURRENT);
            let total: u64 = rows.iter().map(|r| r.band).sum();
            proptest::prop_assert!(total <= samples.len() as u64);
            let vals: Vec<u32> = rows.iter().map(|r| r.value).collect();
            proptest::prop_assert!(vals.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    /// The RPS block of a real run on this machine (schbench 24e32b8, `-m 1 -t 2 -r 2 -n 1
    /// -F 64 -i 1`, 2 CPUs): samples 0 (the t≈0 sample), 4868 and 4821 requests/s gave, byte
    /// for byte:
    #[test]
    fn rps_block_matches_capture() {
        let mut h = PlatHistogram::new();
        for v in [0, 4868, 4821] {
            h.add(v);
        }
        assert_eq!(
            format_latency_block("RPS", "requests", 2, &h, PLIST_FOR_RPS, STAR_50),
            "RPS percentiles (requests) runtime 2 (s) (3 total samples)\n\
             \t  20.0th: 0          (1 samples)\n\
             \t* 50.0th: 4824       (1 samples)\n\
             \t  90.0th: 4872       (1 samples)\n\
             \t  min=4821, max=4868\n"
        );
        // The 1-second interval block of the same run had only the first two samples.
        let mut h1 = PlatHistogram::new();
        h1.add(0);
        h1.add(4868);
        assert_eq!(
            format_latency_block("RPS", "requests", 1, &h1, PLIST_FOR_RPS, STAR_50),
            "RPS percentiles (requests) runtime 1 (s) (2 total samples)\n\
             \t  20.0th: 0          (1 samples)\n\
             \t* 50.0th: 0          (0 samples)\n\
             \t  90.0th: 4872       (1 samples)\n\
             \t  min=4868, max=4868\n"
        );
    }

    #[test]
    fn full_report_layout() {
        let c = parse_current(&w("-m 1 -t 2 -r 2"), 2).unwrap();
        let mut wake = PlatHistogram::new();
        for v in [1, 7, 8, 10, 246] {
            wake.add(v);
        }
        let mut req = PlatHistogram::new();
        for v in [246, 383, 409] {
            req.add(v);
        }
        let mut rps = PlatHistogram::new();
        rps.add(0);
        let res = SchbenchResult {
            wakeup: wake,
            request: req,
            rps,
            loop_count: 9694,
            sched_delay_message_ns: 6500,
            sched_delay_worker_ns: 4100,
            ..Default::default()
        };
        let out = format_report(&c, &res);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "Wakeup Latencies percentiles (usec) runtime 2 (s) (5 total samples)"
        );
        assert_eq!(lines[1], "\t  50.0th: 8          (2 samples)");
        assert_eq!(lines[3], "\t* 99.0th: 246        (0 samples)");
        assert_eq!(lines[5], "\t  min=1, max=246");
        assert_eq!(
            lines[6],
            "Request Latencies percentiles (usec) runtime 2 (s) (3 total samples)"
        );
        assert_eq!(
            lines[12],
            "RPS percentiles (requests) runtime 2 (s) (1 total samples)"
        );
        // Captured: "average rps: 4847.00" for loop_count 9694 over -r 2.
        assert_eq!(lines[17], "average rps: 4847.00");
        assert_eq!(lines[18], "sched delay: message 6 (usec) worker 4 (usec)");
        assert_eq!(lines.len(), 19);
    }

    #[test]
    fn interval_and_warmup_entries() {
        let c = parse_current(&w("-m 1 -t 2 -r 30 -w 5"), 2).unwrap();
        let mut rps = PlatHistogram::new();
        rps.add(4868);
        let iv = SchbenchInterval {
            elapsed_s: 10,
            wakeup: PlatHistogram::new(),
            request: PlatHistogram::new(),
            rps,
            sched_delay_message_ns: 6999,
            sched_delay_worker_ns: 999,
            current_rps: 4868.654,
        };
        let res = SchbenchResult {
            log: vec![
                SchbenchLogEntry::WarmupDone,
                SchbenchLogEntry::Interval(Box::new(iv)),
            ],
            ..Default::default()
        };
        let out = format_report(&c, &res);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "warmup done, zeroing stats");
        // An empty histogram: every percentile lands in bucket 0 with 0 samples.
        assert_eq!(
            lines[1],
            "Wakeup Latencies percentiles (usec) runtime 10 (s) (0 total samples)"
        );
        assert_eq!(lines[2], "\t  50.0th: 0          (0 samples)");
        assert_eq!(lines[6], "\t  min=0, max=0");
        assert_eq!(
            lines[13],
            "RPS percentiles (requests) runtime 10 (s) (1 total samples)"
        );
        assert_eq!(lines[18], "sched delay: message 6 (usec) worker 0 (usec)");
        assert_eq!(lines[19], "current rps: 4868.65");
        assert_eq!(
            lines[20],
            "Wakeup Latencies percentiles (usec) runtime 30 (s) (0 total samples)"
        );
        // -r 30 keeps the 5 s warmup.
        assert_eq!(c.warmup_s, 5);
    }

    #[test]
    fn pipe_report() {
        let c = parse_current(&w("-p 4096 -r 10"), 2).unwrap();
        let mut wake = PlatHistogram::new();
        wake.add(5);
        let res = SchbenchResult {
            wakeup: wake,
            loop_count: 1000,
            loop_runtime_us: 1_000_000,
            ..Default::default()
        };
        let out = format_report(&c, &res);
        assert!(
            out.contains("\t  20.0th: 5          (1 samples)\n"),
            "{out}"
        );
        assert!(
            out.ends_with("avg worker transfer: 1000.00 ops/sec 3.91MB/s\n"),
            "{out}"
        );
    }

    #[test]
    fn classic_report_format() {
        let c = parse_classic(&w("-m 2 -t 16"), SchbenchVersion::Classic).unwrap();
        let mut h = PlatHistogram::new();
        for v in 1..=100u32 {
            h.add(v);
        }
        let out = format_classic_report(&c, &SchbenchClassicResult { latency: h.clone() });
        assert_eq!(
            out,
            "Latency percentiles (usec)\n\t50.0th: 50\n\t75.0th: 75\n\t90.0th: 90\n\t95.0th: 95\n\
             \t*99.0th: 99\n\t99.5th: 100\n\t99.9th: 100\n\tmin=0, max=100\n"
        );
        let c = parse_classic(&[], SchbenchVersion::Classic2016).unwrap();
        let out = format_classic_report(&c, &SchbenchClassicResult { latency: h });
        assert!(out.contains("\t*99.0000th: 99\n"), "{out}");
    }

    /// e4aa540's defaults, and its two parsing quirks: `-C` is dropped, `--message_cputime`
    /// sets the sleep time.
    #[test]
    fn interim2021_defaults_and_quirks() {
        let c = parse_interim2021(&w("-m 2 -t 256 -r 30")).unwrap();
        assert_eq!(c.version, SchbenchVersion::Interim2021);
        assert_eq!(
            (c.message_threads, c.workers_per_message_thread, c.runtime_s),
            (2, 256, 30)
        );
        assert_eq!((c.warmup_s, c.interval_s, c.zero_s), (5, 10, 0));
        assert_eq!(
            (
                c.classic_sleeptime_us,
                c.classic_cputime_us,
                c.message_cputime_us
            ),
            (30_000, 30_000, 30_000)
        );
        let c = parse_interim2021(&w("-C 0 -c 1000 -w 2")).unwrap();
        assert_eq!(
            (c.message_cputime_us, c.classic_cputime_us, c.warmup_s),
            (30_000, 1000, 2)
        );
        let c = parse_interim2021(&w("--message_cputime 7")).unwrap();
        assert_eq!((c.classic_sleeptime_us, c.message_cputime_us), (7, 30_000));
        // -a forces the warm-up to 0 unless -w is given.
        assert_eq!(parse_interim2021(&w("-a")).unwrap().warmup_s, 0);
        assert_eq!(parse_interim2021(&w("-a -w 3")).unwrap().warmup_s, 3);
    }

    #[test]
    fn interim2021_refuses_what_it_cannot_run() {
        for (args, what) in [
            ("-j", "-j"),
            ("-z 5", "-z"),
            ("-r 0", "-r 0"),
            ("-i 0", "-i 0"),
            ("-m 0", "-m"),
            ("-t 4 extra", "Extra arguments 'extra'"),
        ] {
            let e = parse_interim2021(&w(args)).unwrap_err().to_string();
            assert!(e.contains(what), "{args}: {e}");
        }
    }

    /// The block e4aa540 prints: header with runtime and total, `*` glued to p99 only, band
    /// counts, and min as tracked (not forced to 0 as in the classic report).
    #[test]
    fn interim2021_block_format() {
        let mut h = PlatHistogram::new();
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(
            format_interim2021_block(30, &h),
            "Latency percentiles (usec) runtime 30 (s) (100 total samples)\n\
             \t50.0th: 50 (50 samples)\n\t75.0th: 75 (25 samples)\n\t90.0th: 90 (15 samples)\n\
             \t95.0th: 95 (5 samples)\n\t*99.0th: 99 (4 samples)\n\t99.5th: 100 (1 samples)\n\
             \t99.9th: 100 (0 samples)\n\tmin=1, max=100\n"
        );
        // No samples: every row still printed, at 0.
        let empty = format_interim2021_block(10, &PlatHistogram::new());
        assert!(
            empty.contains("(0 total samples)\n\t50.0th: 0 (0 samples)\n"),
            "{empty}"
        );
        assert!(empty.ends_with("\t*99.0th: 0 (0 samples)\n\t99.5th: 0 (0 samples)\n\t99.9th: 0 (0 samples)\n\tmin=0, max=0\n"), "{empty}");
    }
}
