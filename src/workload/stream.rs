//! `kind = "stream"`: STREAM-like memory-bandwidth threads (McCalpin's STREAM with OpenMP).
//!
//! The model (program in [`crate::workload::generate::stream`]): `threads` threads of one
//! process run the four kernels over three arrays of `array_mib` MiB each (8-byte elements),
//! each thread over its own static chunk, with OpenMP's implicit barrier after each kernel:
//! Copy `c = a` (16 bytes moved per element), Scale `b = q·c` (16), Add `c = a + b` (24),
//! Triad `a = b + q·c` (24). A thread's chunk of a kernel is reference-CPU work of
//! `bytes / per_core_mb_s`: `per_core_mb_s` is what one core streams from local memory
//! when it has the memory controller to itself (default 10 000 MB/s, the single-thread
//! STREAM triad of a Haswell-EP/EX core); the dynamic memory model then stretches it by
//! remote placement and by node congestion when the threads together ask more than a node
//! delivers. Each thread's TaskMemory: its chunk of the three arrays as private memory (the
//! parallel initialisation loop first-touches each chunk from the thread that later uses
//! it), `bandwidth_mib_s` = `per_core_mb_s` in MiB/s, 90 % memory stalls by default.
//!
//! Result: `workload.bandwidth_mb_s` (all bytes moved / measured time) and per kernel
//! (`copy`, `scale`, `add`, `triad`: the kernel's bytes / the time between the barriers
//! around it, averaged over its repetitions; STREAM itself prints the best repetition).
//! `iterations` = 0 (the default) repeats until the run ends; N stops after N passes (STREAM's
//! NTIMES).
//!
//! Left out: caches (arrays are assumed far larger than the LLC), write-allocate traffic
//! (STREAM does not count it either), the validation pass.

use crate::error::{InputError, InputResult};
use crate::workload::web::{MAX_MIB, MAX_THREADS, duration_keys, in_range};

/// The four kernels, in program order, with the bytes each moves per element.
pub const KERNELS: [(&str, u64); 4] = [("copy", 16), ("scale", 16), ("add", 24), ("triad", 24)];

/// `[workload] kind = "stream"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StreamConfig {
    pub threads: u32,
    pub array_mib: u32,
    pub per_core_mb_s: u32,
    pub iterations: u32,
    pub mem_intensity_permille: u16,
    pub duration_s: u32,
    pub warmup_ms: u32,
}

impl StreamConfig {
    /// Elements per array.
    pub fn elements(&self) -> u64 {
        u64::from(self.array_mib) * (1 << 20) / 8
    }

    /// Elements of thread `t`'s chunk (OpenMP static schedule: the first `n % threads` get
    /// one more).
    pub fn chunk(&self, t: u32) -> u64 {
        let n = self.elements();
        let k = u64::from(self.threads);
        n / k + u64::from(u64::from(t) < n % k)
    }

    /// Bytes one pass of kernel `k` moves, all threads.
    pub fn kernel_bytes(&self, k: usize) -> u64 {
        KERNELS[k].1 * self.elements()
    }

    /// Private memory of thread `t`: its chunk of the three arrays, MiB (rounded up).
    pub fn thread_mib(&self, t: u32) -> u32 {
        (3 * 8 * self.chunk(t)).div_ceil(1 << 20) as u32
    }
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamKeys {
    threads: Option<u64>,
    array_mib: Option<u64>,
    per_core_mb_s: Option<u64>,
    iterations: Option<u64>,
    mem_intensity_permille: Option<u64>,
    duration_s: Option<u64>,
    warmup_ms: Option<u64>,
}

pub fn from_keys(
    k: &StreamKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<StreamConfig> {
    let (duration_s, warmup_ms) = duration_keys(err, k.duration_s, k.warmup_ms)?;
    Ok(StreamConfig {
        threads: in_range(err, "threads", k.threads, nr_cpus as u64, 1, MAX_THREADS)? as u32,
        array_mib: in_range(err, "array_mib", k.array_mib, 512, 1, MAX_MIB)? as u32,
        per_core_mb_s: in_range(err, "per_core_mb_s", k.per_core_mb_s, 10_000, 1, 1 << 20)? as u32,
        iterations: in_range(err, "iterations", k.iterations, 0, 0, u64::from(u32::MAX))? as u32,
        mem_intensity_permille: in_range(
            err,
            "mem_intensity_permille",
            k.mem_intensity_permille,
            900,
            0,
            1000,
        )? as u16,
        duration_s,
        warmup_ms,
    })
}

/// What a stream run measured: per kernel (in [`KERNELS`] order) the passes completed and
/// their total time, and the measured interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamResult {
    pub passes: [u64; 4],
    pub time_ns: [u64; 4],
    pub elapsed_ns: u64,
}

impl StreamResult {
    /// MB/s (10^6 bytes, as STREAM prints) of kernel `k` over its own time.
    pub fn kernel_mb_s(&self, cfg: &StreamConfig, k: usize) -> f64 {
        if self.time_ns[k] == 0 {
            return 0.0;
        }
        (self.passes[k] * cfg.kernel_bytes(k)) as f64 * 1e3 / self.time_ns[k] as f64
    }

    /// All bytes moved over the measured interval, MB/s.
    pub fn total_mb_s(&self, cfg: &StreamConfig) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        let bytes: u64 = (0..4).map(|k| self.passes[k] * cfg.kernel_bytes(k)).sum();
        bytes as f64 * 1e3 / self.elapsed_ns as f64
    }
}

/// STREAM's table (average rates instead of the best).
pub fn format_report(cfg: &StreamConfig, r: &StreamResult) -> String {
    let mut s = format!(
        "stream: {} threads, arrays of {} elements ({} MiB each)\nFunction    Avg Rate MB/s  Passes  Avg time ms\n",
        cfg.threads,
        cfg.elements(),
        cfg.array_mib
    );
    for (k, (name, _)) in KERNELS.iter().enumerate() {
        let avg_ms = if r.passes[k] > 0 {
            r.time_ns[k] as f64 / r.passes[k] as f64 / 1e6
        } else {
            0.0
        };
        s.push_str(&format!(
            "{:<11} {:>13.1} {:>7} {:>12.3}\n",
            format!("{}{}:", name[..1].to_uppercase(), &name[1..]),
            r.kernel_mb_s(cfg, k),
            r.passes[k],
            avg_ms
        ));
    }
    s.push_str(&format!("Total       {:>13.1}\n", r.total_mb_s(cfg)));
    s
}
