//! `kind = "web"`: an nginx-like server under open- or closed-loop load (issue 13, the
//! workload the 2014 NUMA-balancing regression was reported on).
//!
//! The model (the program is in [`crate::workload::generate::web`]): `workers` worker
//! processes (nginx's default) or threads of one process (`mode = "threads"`) take requests
//! from one shared accept queue; each request is CPU work (`demand_us`, fixed or exponential)
//! split into segments by blocking phases (`file_wait_us`, `ipc_wait_us`,
//! `network_wait_us`, each skipped at 0); a request's response time is its arrival (the NIC
//! interrupt handing it to the accept queue) to the end of its last phase, in simulated time.
//! Load comes from outside the machine: `load = "open"` — arrivals at `rate_per_s` (Poisson
//! or evenly spaced), so CPU load can be pushed to any level, above 90 % included — or
//! `load = "closed"` — `clients` clients that each send a request, wait for its response and
//! think `think_us` before the next.
//!
//! Memory (the dynamic memory model's [`crate::task::TaskMemory`]): each worker has
//! `private_mib` (its connection buffers and heap); threads share `shared_mib` (the cache
//! zone) in their one process. Worker processes cannot share a region through `TaskMemory`
//! (one region per mm; nginx's shared zones are `MAP_SHARED` mappings in every worker):
//! in process mode the shared zone is left out and each worker's accesses all go to its
//! private memory (see docs/numa-workloads.md).
//!
//! Left out: HTTP parsing and keep-alive (one request per accept), the master process,
//! `accept_mutex` / `EPOLLEXCLUSIVE` thundering-herd behaviour (one waiter is woken per
//! request), request size variety beyond the demand distribution, the client machines'
//! network latency (only the server side of a request is timed).

use crate::error::{InputError, InputResult};
use crate::input::keys::expected;

/// Simulated seconds a run lasts by default (`duration_s`).
pub const DEFAULT_DURATION_S: u32 = 5;
/// Longest `duration_s`.
pub const MAX_DURATION_S: u64 = 86_400;
/// Most workers, clients, threads or instances any of the NUMA workloads creates per key.
pub const MAX_THREADS: u64 = 100_000;
/// Largest memory size of one region, MiB (1 TiB).
pub const MAX_MIB: u64 = 1 << 20;
/// Longest CPU demand or wait of one phase, µs (10 s).
pub const MAX_PHASE_US: u64 = 10_000_000;

/// A random quantity's distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dist {
    /// Always the mean.
    Fixed,
    /// Exponentially distributed with the given mean.
    Exponential,
}

/// Worker processes (nginx's model) or threads of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerMode {
    Processes,
    Threads,
}

/// Where requests come from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "load")]
pub enum WebLoad {
    /// Arrivals at a rate, independent of how fast the server answers.
    Open { rate_per_s: f64, arrivals: Dist },
    /// `clients` clients, each with one request outstanding at most, thinking between them.
    Closed {
        clients: u32,
        think_ns: u64,
        think: Dist,
    },
}

/// The memory of one thread of a NUMA workload (filled into [`crate::task::TaskMemory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MemoryConfig {
    pub private_mib: u32,
    pub shared_mib: u32,
    pub shared_access_permille: u16,
    pub bandwidth_mib_s: u32,
    /// Memory-stall share of run time with local memory (`TaskSpec::mem_intensity_permille`).
    pub mem_intensity_permille: u16,
}

/// `[workload] kind = "web"`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WebConfig {
    pub workers: u32,
    pub mode: WorkerMode,
    pub load: WebLoad,
    /// Mean CPU work of one request (reference CPU), ns.
    pub demand_ns: u64,
    pub demand: Dist,
    pub file_wait_ns: u64,
    pub ipc_wait_ns: u64,
    pub network_wait_ns: u64,
    /// Receive-interrupt threads handing arrivals to the accept queue (`None`: one per node).
    pub irq_threads: Option<u32>,
    pub memory: MemoryConfig,
    pub duration_s: u32,
    pub warmup_ms: u32,
}

impl WebConfig {
    /// Threads of the workload: workers plus the load's tasks (the default irq threads, one
    /// per node, are counted as one: the node count is not known yet, and they are few).
    pub fn nr_tasks(&self) -> u64 {
        let load = match self.load {
            WebLoad::Open { .. } => u64::from(self.irq_threads.unwrap_or(1)),
            WebLoad::Closed { clients, .. } => u64::from(clients),
        };
        u64::from(self.workers) + load
    }
}

/// `kind = "web"` keys.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebKeys {
    workers: Option<u64>,
    mode: Option<WorkerMode>,
    load: Option<LoadKey>,
    rate_per_s: Option<f64>,
    arrivals: Option<Dist>,
    clients: Option<u64>,
    think_us: Option<u64>,
    think: Option<Dist>,
    demand_us: Option<u64>,
    demand: Option<Dist>,
    file_wait_us: Option<u64>,
    ipc_wait_us: Option<u64>,
    network_wait_us: Option<u64>,
    irq_threads: Option<u64>,
    private_mib: Option<u64>,
    shared_mib: Option<u64>,
    shared_access_permille: Option<u64>,
    bandwidth_mib_s: Option<u64>,
    mem_intensity_permille: Option<u64>,
    duration_s: Option<u64>,
    warmup_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
enum LoadKey {
    Open,
    Closed,
}

/// `key`'s value (default `default`) checked against `min..=max`.
pub(crate) fn in_range(
    err: &dyn Fn(&str, String) -> InputError,
    key: &str,
    value: Option<u64>,
    default: u64,
    min: u64,
    max: u64,
) -> InputResult<u64> {
    match value {
        None => Ok(default),
        Some(v) if (min..=max).contains(&v) => Ok(v),
        Some(v) => Err(err(
            key,
            expected(
                &format!("an integer from {min} to {max}"),
                format!("integer {v}"),
            ),
        )),
    }
}

/// The memory keys every NUMA workload shares, with that workload's defaults.
pub(crate) struct MemoryKeys {
    pub private_mib: Option<u64>,
    pub shared_mib: Option<u64>,
    pub shared_access_permille: Option<u64>,
    pub bandwidth_mib_s: Option<u64>,
    pub mem_intensity_permille: Option<u64>,
}

pub(crate) fn memory_config(
    err: &dyn Fn(&str, String) -> InputError,
    k: MemoryKeys,
    default: MemoryConfig,
) -> InputResult<MemoryConfig> {
    Ok(MemoryConfig {
        private_mib: in_range(
            err,
            "private_mib",
            k.private_mib,
            default.private_mib.into(),
            0,
            MAX_MIB,
        )? as u32,
        shared_mib: in_range(
            err,
            "shared_mib",
            k.shared_mib,
            default.shared_mib.into(),
            0,
            MAX_MIB,
        )? as u32,
        shared_access_permille: in_range(
            err,
            "shared_access_permille",
            k.shared_access_permille,
            default.shared_access_permille.into(),
            0,
            1000,
        )? as u16,
        bandwidth_mib_s: in_range(
            err,
            "bandwidth_mib_s",
            k.bandwidth_mib_s,
            default.bandwidth_mib_s.into(),
            0,
            1 << 20,
        )? as u32,
        mem_intensity_permille: in_range(
            err,
            "mem_intensity_permille",
            k.mem_intensity_permille,
            default.mem_intensity_permille.into(),
            0,
            1000,
        )? as u16,
    })
}

/// `duration_s` (default [`DEFAULT_DURATION_S`]) and `warmup_ms` (default 0, less than the
/// duration).
pub(crate) fn duration_keys(
    err: &dyn Fn(&str, String) -> InputError,
    duration_s: Option<u64>,
    warmup_ms: Option<u64>,
) -> InputResult<(u32, u32)> {
    let d = in_range(
        err,
        "duration_s",
        duration_s,
        DEFAULT_DURATION_S.into(),
        1,
        MAX_DURATION_S,
    )?;
    let w = in_range(err, "warmup_ms", warmup_ms, 0, 0, d * 1000 - 1)?;
    Ok((d as u32, w as u32))
}

/// Default web memory: 16 MiB per worker, a 256 MiB shared cache zone taking 30 % of the
/// accesses, 500 MiB/s per busy worker, 20 % memory stalls.
pub const WEB_MEMORY: MemoryConfig = MemoryConfig {
    private_mib: 16,
    shared_mib: 256,
    shared_access_permille: 300,
    bandwidth_mib_s: 500,
    mem_intensity_permille: 200,
};

/// Build the configuration from its keys. `nr_cpus`: online CPUs (default `workers` and
/// default open-loop rate: 90 % of the workers' capacity).
pub fn from_keys(
    k: &WebKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<WebConfig> {
    let workers = in_range(err, "workers", k.workers, nr_cpus as u64, 1, MAX_THREADS)? as u32;
    let demand_us = in_range(err, "demand_us", k.demand_us, 1000, 1, MAX_PHASE_US)?;
    let wait = |key: &str, v: Option<u64>| in_range(err, key, v, 0, 0, MAX_PHASE_US);
    let closed_keys = closed_keys_given(k).contains(&true);
    let load = k.load.unwrap_or(if closed_keys {
        LoadKey::Closed
    } else {
        LoadKey::Open
    });
    let load = match load {
        LoadKey::Open => open_load(k, workers, nr_cpus, demand_us, err)?,
        LoadKey::Closed => closed_load(k, workers, err)?,
    };
    let irq_threads = match k.irq_threads {
        None => None,
        Some(v) => Some(in_range(err, "irq_threads", Some(v), 1, 1, 4096)? as u32),
    };
    let memory = memory_config(
        err,
        MemoryKeys {
            private_mib: k.private_mib,
            shared_mib: k.shared_mib,
            shared_access_permille: k.shared_access_permille,
            bandwidth_mib_s: k.bandwidth_mib_s,
            mem_intensity_permille: k.mem_intensity_permille,
        },
        WEB_MEMORY,
    )?;
    let (duration_s, warmup_ms) = duration_keys(err, k.duration_s, k.warmup_ms)?;
    Ok(WebConfig {
        workers,
        mode: k.mode.unwrap_or(WorkerMode::Processes),
        load,
        demand_ns: demand_us * 1000,
        demand: k.demand.unwrap_or(Dist::Exponential),
        file_wait_ns: wait("file_wait_us", k.file_wait_us)? * 1000,
        ipc_wait_ns: wait("ipc_wait_us", k.ipc_wait_us)? * 1000,
        network_wait_ns: wait("network_wait_us", k.network_wait_us)? * 1000,
        irq_threads,
        memory,
        duration_s,
        warmup_ms,
    })
}

/// Which closed-loop keys are given: `clients`, `think_us`, `think`.
fn closed_keys_given(k: &WebKeys) -> [bool; 3] {
    [k.clients.is_some(), k.think_us.is_some(), k.think.is_some()]
}

/// The open-loop load: no closed-loop key, and a rate (default 90 % of the workers'
/// capacity) from 0.001 to 1e8 per second.
fn open_load(
    k: &WebKeys,
    workers: u32,
    nr_cpus: usize,
    demand_us: u64,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<WebLoad> {
    if closed_keys_given(k).contains(&true) {
        let key = ["clients", "think_us", "think"]
            [closed_keys_given(k).iter().position(|&b| b).unwrap_or(0)];
        return Err(err(key, "only with load = \"closed\"".into()));
    }
    let cap = workers.min(nr_cpus as u32) as f64 * 1e6 / demand_us as f64;
    let rate = k.rate_per_s.unwrap_or((cap * 0.9).round().max(1.0));
    if !(rate.is_finite() && (0.001..=1e8).contains(&rate)) {
        return Err(err(
            "rate_per_s",
            expected("requests per second from 0.001 to 1e8", rate),
        ));
    }
    Ok(WebLoad::Open {
        rate_per_s: rate,
        arrivals: k.arrivals.unwrap_or(Dist::Exponential),
    })
}

/// The closed-loop load: no open-loop key; `clients` (default one per worker) and the
/// think time.
fn closed_load(
    k: &WebKeys,
    workers: u32,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<WebLoad> {
    let open_keys = k.rate_per_s.is_some() || k.arrivals.is_some();
    if open_keys {
        let key = if k.rate_per_s.is_some() {
            "rate_per_s"
        } else {
            "arrivals"
        };
        return Err(err(key, "only with load = \"open\"".into()));
    }
    Ok(WebLoad::Closed {
        clients: in_range(
            err,
            "clients",
            k.clients,
            u64::from(workers),
            1,
            MAX_THREADS,
        )? as u32,
        think_ns: in_range(err, "think_us", k.think_us, 0, 0, MAX_PHASE_US)? * 1000,
        think: k.think.unwrap_or(Dist::Exponential),
    })
}

/// What a web run measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WebResult {
    pub requests: u64,
    pub elapsed_s: f64,
    pub response_ms_avg: f64,
    pub response_ms_p50: f64,
    pub response_ms_p90: f64,
    pub response_ms_p99: f64,
    pub response_ms_max: f64,
}

impl WebResult {
    pub fn requests_per_s(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.requests as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
}

/// A short report in the spirit of wrk/ab's summary.
pub fn format_report(cfg: &WebConfig, r: &WebResult) -> String {
    let load = match cfg.load {
        WebLoad::Open { rate_per_s, .. } => format!("open loop, {rate_per_s} requests/s offered"),
        WebLoad::Closed {
            clients, think_ns, ..
        } => format!(
            "closed loop, {clients} clients, think {} us",
            think_ns / 1000
        ),
    };
    format!(
        "web: {} worker {}, {load}\n\
         {} requests in {:.3} s, {:.1} requests/s\n\
         response time ms: avg {:.3}  p50 {:.3}  p90 {:.3}  p99 {:.3}  max {:.3}\n",
        cfg.workers,
        match cfg.mode {
            WorkerMode::Processes => "processes",
            WorkerMode::Threads => "threads",
        },
        r.requests,
        r.elapsed_s,
        r.requests_per_s(),
        r.response_ms_avg,
        r.response_ms_p50,
        r.response_ms_p90,
        r.response_ms_p99,
        r.response_ms_max,
    )
}
