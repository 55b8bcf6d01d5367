//! `kind = "jbb"`: a SPECjbb-like Java server benchmark (issue 13: the load NUMA balancing's
//! 2015 capacity fix was measured with on 4-node machines).
//!
//! The model (program in [`crate::workload::generate::jbb`]): `instances` JVMs (one process
//! each; `instances` = the node count gives SPECjbb's "one JVM per node" runs, and
//! `group_nodes` can bind each instance as `numactl` would). Each JVM has `warehouses`
//! warehouse threads that run business transactions back to back (CPU work `txn_us`,
//! exponential) on one shared heap (`heap_mib`, the process's shared region, which takes
//! `shared_access_permille` of the accesses) plus a private thread-local part (`private_mib`:
//! TLABs, stacks), and `gc_threads` GC threads: every `gc_period_ms` a stop-the-world
//! collection brings every warehouse thread to a safepoint (at the end of its current
//! transaction), then the GC threads do `gc_work_ms` of CPU work between them, in parallel,
//! and release the warehouses. Result: `workload.bops`, transactions completed per simulated
//! second over all instances (a "business operation" here is one modelled transaction).
//!
//! Left out: the transaction mix and its response-time SLAs (SPECjbb2015's critical-jOPS),
//! the driver/controller threads, JIT compilation, concurrent (non-stop-the-world) GC
//! phases, heap growth; each GC thread touches the whole heap evenly.

use crate::error::{InputError, InputResult};
use crate::workload::web::{
    MAX_PHASE_US, MAX_THREADS, MemoryConfig, MemoryKeys, duration_keys, in_range, memory_config,
};

/// `[workload] kind = "jbb"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JbbConfig {
    pub instances: u32,
    /// Warehouse threads per instance.
    pub warehouses: u32,
    /// Mean CPU work of one transaction (reference CPU), ns.
    pub txn_ns: u64,
    pub gc_threads: u32,
    pub gc_period_ns: u64,
    /// CPU work of one collection, all GC threads together (reference CPU), ns.
    pub gc_work_ns: u64,
    /// Warehouse memory: `shared_mib` is the heap.
    pub memory: MemoryConfig,
    pub duration_s: u32,
    pub warmup_ms: u32,
}

impl JbbConfig {
    pub fn nr_tasks(&self) -> u64 {
        u64::from(self.instances) * (u64::from(self.warehouses) + u64::from(self.gc_threads))
    }
}

/// `kind = "jbb"` keys.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JbbKeys {
    instances: Option<u64>,
    warehouses: Option<u64>,
    txn_us: Option<u64>,
    gc_threads: Option<u64>,
    gc_period_ms: Option<u64>,
    gc_work_ms: Option<u64>,
    heap_mib: Option<u64>,
    private_mib: Option<u64>,
    shared_access_permille: Option<u64>,
    bandwidth_mib_s: Option<u64>,
    mem_intensity_permille: Option<u64>,
    duration_s: Option<u64>,
    warmup_ms: Option<u64>,
}

/// Default warehouse memory: a 4 GiB heap taking 80 % of the accesses, 32 MiB thread-local,
/// 1000 MiB/s per busy thread, 30 % memory stalls.
pub const JBB_MEMORY: MemoryConfig = MemoryConfig {
    private_mib: 32,
    shared_mib: 4096,
    shared_access_permille: 800,
    bandwidth_mib_s: 1000,
    mem_intensity_permille: 300,
};

/// Build the configuration; `warehouses` defaults to the online CPUs shared out over the
/// instances (at least one).
pub fn from_keys(
    k: &JbbKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<JbbConfig> {
    let instances = in_range(err, "instances", k.instances, 1, 1, 4096)? as u32;
    let default_wh = (nr_cpus as u64 / u64::from(instances)).max(1);
    let warehouses = in_range(err, "warehouses", k.warehouses, default_wh, 1, MAX_THREADS)? as u32;
    let gc_threads = in_range(err, "gc_threads", k.gc_threads, 2, 0, 4096)? as u32;
    // The heap is the process's shared region: errors name the key the user wrote.
    let heap_err =
        |key: &str, m: String| err(if key == "shared_mib" { "heap_mib" } else { key }, m);
    let memory = memory_config(
        &heap_err,
        MemoryKeys {
            private_mib: k.private_mib,
            shared_mib: k.heap_mib,
            shared_access_permille: k.shared_access_permille,
            bandwidth_mib_s: k.bandwidth_mib_s,
            mem_intensity_permille: k.mem_intensity_permille,
        },
        JBB_MEMORY,
    )?;
    let (duration_s, warmup_ms) = duration_keys(err, k.duration_s, k.warmup_ms)?;
    Ok(JbbConfig {
        instances,
        warehouses,
        txn_ns: in_range(err, "txn_us", k.txn_us, 500, 1, MAX_PHASE_US)? * 1000,
        gc_threads,
        gc_period_ns: in_range(err, "gc_period_ms", k.gc_period_ms, 1000, 1, 3_600_000)?
            * 1_000_000,
        gc_work_ns: in_range(err, "gc_work_ms", k.gc_work_ms, 40, 0, 3_600_000)? * 1_000_000,
        memory,
        duration_s,
        warmup_ms,
    })
}

/// What a jbb run measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JbbResult {
    pub transactions: u64,
    pub elapsed_s: f64,
    pub gc_pauses: u64,
    pub gc_pause_ms_avg: f64,
}

impl JbbResult {
    pub fn bops(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.transactions as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
}

pub fn format_report(cfg: &JbbConfig, r: &JbbResult) -> String {
    format!(
        "jbb: {} instance(s) x {} warehouses, {} GC threads each\n\
         {} transactions in {:.3} s: {:.1} bops\n\
         {} GC pauses, avg {:.3} ms\n",
        cfg.instances,
        cfg.warehouses,
        cfg.gc_threads,
        r.transactions,
        r.elapsed_s,
        r.bops(),
        r.gc_pauses,
        r.gc_pause_ms_avg
    )
}
