//! `kind = "linpack"`: a compute-bound blocked LU solver's threads (HPL/Intel LINPACK-like).
//!
//! The model (program in [`crate::workload::generate::linpack`]): `threads` threads of one
//! process factor an `n × n` matrix in blocks of `nb` columns, repeatedly (a new solve starts
//! when one ends). Step k (of ⌈n/nb⌉) does the flops of eliminating its block from the
//! trailing matrix, `2/3 (n_k³ − n_{k+1}³)` with `n_k = n − k·nb`, shared evenly by the
//! threads, then all threads meet at a barrier (the panel broadcast). A thread's share is
//! reference-CPU work at `gflops_per_core` (default 16 GFLOP/s: a 2 GHz AVX2/FMA core's
//! 32 DP flops/cycle peak at 50 %, covering panel factorisation and pivoting). Memory: the
//! matrix is the process's shared region (`8·n²` bytes, most accesses), a 16 MiB private
//! block buffer per thread, 5 % memory stalls (blocked DGEMM runs from cache): placement
//! barely matters, as for the real program. Result: `workload.gflops`, flops of the
//! completed steps per simulated second.
//!
//! Left out: pivoting's row swaps and the panel factorisation's serial part (only the
//! barrier is kept), look-ahead, the back substitution (O(n²)).

use crate::error::{InputError, InputResult};
use crate::workload::web::{
    MAX_THREADS, MemoryConfig, MemoryKeys, duration_keys, in_range, memory_config,
};

/// Flops are counted in units of this many (one `CountOp` each).
pub const FLOPS_PER_OP: u64 = 100_000_000;

/// `[workload] kind = "linpack"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinpackConfig {
    pub threads: u32,
    pub n: u32,
    pub nb: u32,
    pub gflops_per_core: u32,
    /// Per-thread memory; `shared_mib` is the matrix (derived from `n`).
    pub memory: MemoryConfig,
    pub duration_s: u32,
    pub warmup_ms: u32,
}

impl LinpackConfig {
    pub fn steps(&self) -> u32 {
        self.n.div_ceil(self.nb)
    }

    /// Flops of step `k` (all threads).
    pub fn step_flops(&self, k: u32) -> f64 {
        let n = f64::from(self.n);
        let nk = (n - f64::from(k) * f64::from(self.nb)).max(0.0);
        let nk1 = (nk - f64::from(self.nb)).max(0.0);
        2.0 / 3.0 * (nk * nk * nk - nk1 * nk1 * nk1)
    }
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinpackKeys {
    threads: Option<u64>,
    n: Option<u64>,
    nb: Option<u64>,
    gflops_per_core: Option<u64>,
    private_mib: Option<u64>,
    shared_access_permille: Option<u64>,
    bandwidth_mib_s: Option<u64>,
    mem_intensity_permille: Option<u64>,
    duration_s: Option<u64>,
    warmup_ms: Option<u64>,
}

pub fn from_keys(
    k: &LinpackKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<LinpackConfig> {
    let n = in_range(err, "n", k.n, 20_000, 1, 1_000_000)?;
    let nb = in_range(err, "nb", k.nb, 256, 1, n)?;
    let matrix_mib = (8 * n * n).div_ceil(1 << 20);
    let mut memory = memory_config(
        err,
        MemoryKeys {
            private_mib: k.private_mib,
            shared_mib: None,
            shared_access_permille: k.shared_access_permille,
            bandwidth_mib_s: k.bandwidth_mib_s,
            mem_intensity_permille: k.mem_intensity_permille,
        },
        MemoryConfig {
            private_mib: 16,
            shared_mib: 0,
            shared_access_permille: 900,
            bandwidth_mib_s: 200,
            mem_intensity_permille: 50,
        },
    )?;
    memory.shared_mib = matrix_mib.min(u64::from(u32::MAX)) as u32;
    let (duration_s, warmup_ms) = duration_keys(err, k.duration_s, k.warmup_ms)?;
    Ok(LinpackConfig {
        threads: in_range(err, "threads", k.threads, nr_cpus as u64, 1, MAX_THREADS)? as u32,
        n: n as u32,
        nb: nb as u32,
        gflops_per_core: in_range(err, "gflops_per_core", k.gflops_per_core, 16, 1, 10_000)? as u32,
        memory,
        duration_s,
        warmup_ms,
    })
}

/// What a linpack run measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinpackResult {
    pub flops: f64,
    pub elapsed_s: f64,
}

impl LinpackResult {
    pub fn gflops(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.flops / self.elapsed_s / 1e9
        } else {
            0.0
        }
    }
}

pub fn format_report(cfg: &LinpackConfig, r: &LinpackResult) -> String {
    format!(
        "linpack: {} threads, N = {}, NB = {}\n{:.3e} flops in {:.3} s: {:.2} GFLOPS\n",
        cfg.threads,
        cfg.n,
        cfg.nb,
        r.flops,
        r.elapsed_s,
        r.gflops()
    )
}
