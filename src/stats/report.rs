//! The results of one run as typed data ([`RunResult`], the contract's `runs[]` entry,
//! ARCHITECTURE.md §3), built from a finished [`Engine`].
//!
//! Serialization goes through `serde_json::Value` ([`RunResult::to_json`]), whose maps are
//! BTreeMaps here (serde_json without `preserve_order`): keys come out sorted whatever the
//! field order of the structs, and numbers print as they always did (ryu for floats, non-finite
//! floats as `null`), so the same run always serializes to the same bytes and the results
//! are byte-identical to the `json!` trees they replace. Only `wall_time_s` and
//! `sim_s_per_wall_s` depend on the host.
//!
//! Left dynamic: the benchmark-native `workload` metrics (their keys differ per benchmark and
//! are produced by `crate::workload`; [`WorkloadMetrics`] wraps them), the resolved
//! placement, and the policy's extra per-task counters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::perf::PerfStat;
use crate::engine::Engine;
use crate::hist::Histogram;
use crate::sched::types::MigrationReason;

/// Latency percentiles in µs, as the contract names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LatencyUs {
    pub samples: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
    pub mean: f64,
}

/// Most `[lower_ns, count]` pairs a latency distribution keeps in the results
/// (`runs[].latency_hist`); finer histograms are coarsened to fit (~4 KiB per latency).
pub const LATENCY_HIST_BUCKETS_MAX: usize = 256;

/// The results' compact form of a latency histogram (`runs[].latency_hist.NAME`).
pub fn latency_hist(h: &Histogram) -> Vec<[u64; 2]> {
    h.compact(LATENCY_HIST_BUCKETS_MAX)
}

/// Latency percentiles of a histogram of nanoseconds, in µs.
pub fn latency_us(h: &Histogram) -> LatencyUs {
    let us = |ns: u64| ns as f64 / 1000.0;
    LatencyUs {
        samples: h.len(),
        p50: us(h.percentile(50.0)),
        p90: us(h.percentile(90.0)),
        p99: us(h.percentile(99.0)),
        p99_9: us(h.percentile(99.9)),
        max: us(h.max()),
        mean: h.mean() / 1000.0,
    }
}

/// Migrations by reason (contract keys), the total and the ping-pong counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Migrations {
    pub total: u64,
    /// Every [`MigrationReason`] by its name.
    pub by_reason: BTreeMap<String, u64>,
    pub ping_pong: u64,
    /// Ping-pongs by `first->second` mechanism pair (non-zero pairs only).
    #[serde(default)]
    pub ping_pong_by_pair: BTreeMap<String, u64>,
}

impl Migrations {
    /// The count for `reason` (0 when absent).
    pub fn reason(&self, reason: MigrationReason) -> u64 {
        self.by_reason.get(reason.name()).copied().unwrap_or(0)
    }
}

/// The load balancer's schedstat counters summed over CPUs: `totals`, `by_level` (domain
/// level name) and `by_idle_type` (`idle` / `not_idle` / `newly_idle`), each a map from the
/// kernel's counter name (`lb_count`, `lb_gained`, ...) to its value. Beside the kernel's
/// counters, two of schedlab's own over the whole run: `placements` (the CFS placements by
/// exit: `sis_target`, `sis_prev`, ... `sis_target_fallback` for `select_idle_sibling()`'s
/// exits, `find_idlest`, `pinned`, `other`, and `scan_steps`) and `newidle_entry` (where each
/// `sched_balance_newidle()` call went: `ttwu_pending`, `inactive`, `rd_not_overloaded`,
/// `avg_idle_gate`, `walked`); and in each `by_level` map the level's newly-idle cost gate
/// at the end of the run over the CPUs' copies (`max_newidle_lb_cost_ns_mean`, `_ns_max`,
/// `_zero_cpus`: state, not counters); empty maps from results written before they existed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Schedstat {
    pub totals: BTreeMap<String, u64>,
    pub by_level: BTreeMap<String, BTreeMap<String, u64>>,
    pub by_idle_type: BTreeMap<String, BTreeMap<String, u64>>,
    pub placements: BTreeMap<String, u64>,
    pub newidle_entry: BTreeMap<String, u64>,
}

impl Schedstat {
    /// The policy's report (`SchedPolicy::report`), `None` for policies without schedstats.
    pub fn from_policy(v: Value) -> Option<Schedstat> {
        if v.is_null() {
            return None;
        }
        Some(
            serde_json::from_value(v)
                .expect("a policy's schedstat report has the contract's shape"),
        )
    }

    /// One counter of one idle type (0 when absent).
    pub fn idle_type(&self, idle: &str, counter: &str) -> u64 {
        self.by_idle_type
            .get(idle)
            .and_then(|m| m.get(counter))
            .copied()
            .unwrap_or(0)
    }
}

/// The benchmark's own metrics (`workload`): `kind` plus benchmark-native keys (ARCHITECTURE.md
/// §3: hackbench `time_s`, schbench `rps_avg`, ...), nested objects allowed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct WorkloadMetrics(pub Map<String, Value>);

impl WorkloadMetrics {
    /// From the workload's native report (an object; anything else gives no metrics).
    pub fn from_value(v: Value) -> WorkloadMetrics {
        match v {
            Value::Object(m) => WorkloadMetrics(m),
            _ => WorkloadMetrics::default(),
        }
    }

    /// The benchmark (`hackbench`, `schbench`, ...), when given.
    pub fn kind(&self) -> Option<&str> {
        self.0.get("kind").and_then(Value::as_str)
    }

    /// Every numeric metric by dotted path below `workload.` (`time_s`,
    /// `wakeup_latency_us.p99`), in key order.
    pub fn numeric(&self) -> Vec<(String, f64)> {
        fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
            match v {
                Value::Number(n) => {
                    if let Some(x) = n.as_f64() {
                        out.push((prefix.to_string(), x));
                    }
                }
                Value::Object(map) => {
                    for (k, v) in map {
                        walk(&format!("{prefix}.{k}"), v, out);
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (k, v) in &self.0 {
            walk(k, v, &mut out);
        }
        out
    }
}

/// One CPU's counters (an extension of the contract): its number and the engine's reported
/// counters (the engine's `CpuCounters`, one home for their names).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuResult {
    pub cpu: usize,
    #[serde(flatten)]
    pub counters: crate::engine::CpuCounters,
}

/// One task's statistics like /proc/PID/sched (an extension of the contract).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskResult {
    pub pid: usize,
    pub comm: String,
    pub cpu: usize,
    /// `SCHED_NORMAL`, `SCHED_FIFO`, ...
    pub policy: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rt_priority: Option<u32>,
    /// The engine's reported counters (`TaskCounters`). Declared before
    /// `policy_stats`: deserializing, it takes its keys first and the policy's map the rest.
    #[serde(flatten)]
    pub counters: crate::engine::TaskCounters,
    pub migrations_by_reason: BTreeMap<String, u64>,
    /// Share of the task's pages on its CPU's node (null before the task first ran).
    pub numa_pages_local_pct: Option<f64>,
    /// Share of its pages per node (null before the task first ran).
    pub numa_pages_pct: Option<Vec<f64>>,
    /// The policy's own per-task counters (`SchedPolicy::task_report`; linux-fair: the
    /// `nr_failed_migrations_*` / `nr_forced_migrations` of /proc/PID/sched).
    #[serde(flatten)]
    pub policy_stats: BTreeMap<String, u64>,
}

/// One finished run: the contract's `runs[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RunResult {
    pub seed: u64,
    /// Simulated time measured (after warm-up).
    pub sim_time_ns: u64,
    /// Host time the run took (the only host-dependent values, with `sim_s_per_wall_s`).
    pub wall_time_s: f64,
    pub events: u64,
    pub sim_s_per_wall_s: f64,
    pub perf_stat: PerfStat,
    /// `None` (null) for policies without schedstats.
    pub schedstat: Option<Schedstat>,
    pub migrations: Migrations,
    pub workload: WorkloadMetrics,
    /// With several workloads in one run, the metrics of the second and later ones (each
    /// with its `placement`); `workload` is the first's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_workloads: Vec<WorkloadMetrics>,
    /// `wakeup`, then the workload's own latency metrics by name.
    pub latency_us: BTreeMap<String, LatencyUs>,
    /// The distribution behind each `latency_us` entry, by the same name: the histogram's
    /// non-empty buckets as `[lower_ns, count]` pairs in value order
    /// ([`crate::hist::Histogram::compact`], at most [`LATENCY_HIST_BUCKETS_MAX`] pairs per
    /// latency), for CDFs (`schedlab report`). Absent in results written before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub latency_hist: BTreeMap<String, Vec<[u64; 2]>>,
    pub cpus: Vec<CpuResult>,
    pub tasks: Vec<TaskResult>,
    pub all_tasks_exited: bool,
    pub invariant_violations: Vec<String>,
    /// How many violations the bounded log dropped; present only when it overflowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invariant_violations_dropped: Option<u64>,
    /// The scheduling watchdog's findings (`engine::watchdog`: a task left waiting on an
    /// idle CPU, a wasted core), checked in every run; present only when there are some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The running kernel's settings on `host` (null elsewhere).
    #[serde(skip_deserializing)]
    pub host_kernel: Option<crate::kconfig::host::HostKernel>,
    /// The resolved placement (`taskset`/`numactl`, placement keys), null when none.
    pub placement: Option<Value>,
    /// The run's compact time series ([`crate::stats::timeline`]); recorded, and so present,
    /// only when a report was asked for (`--report`), for the first run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<super::timeline::Timeline>,
    /// `/proc/vmstat`'s NUMA-balancing counters over the measured interval; present only
    /// when a task declares a working set (`TaskSpec::memory`), so other runs' JSON is
    /// unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vmstat: Option<crate::sched::types::Vmstat>,
    /// NUMA balancing and dynamic memory ([`numa`]): move counts, pages per node, per-node
    /// bandwidth and congestion, node-level ping-pongs, per-task NUMA state. Present with
    /// `vmstat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<Value>,
    /// The machine's own background activity (`crate::workload::background`: per-CPU
    /// kworkers, unbound kernel threads, a daemon) over the measured interval; present only
    /// when the run had some. Its tasks are not in `tasks`, `perf_stat` or `latency_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundResult>,
}

/// What the machine's background tasks did in a run ([`RunResult::background`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BackgroundResult {
    /// How many background tasks ran beside the workloads.
    pub tasks: usize,
    /// Their CPU time.
    pub task_clock_ms: f64,
    /// Their wakeups.
    pub wakeups: u64,
    /// Switches out of them (each one a preemption of, or an idle period for, the CPU's
    /// other work).
    pub context_switches: u64,
    /// Their migrations (`set_task_cpu()` to another CPU; only unbound ones can move).
    pub migrations: u64,
}

impl RunResult {
    /// The contract's JSON (keys sorted, see the module docs).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("plain data serializes")
    }

    /// Every finite numeric metric of `perf_stat`, `migrations`, `workload`, `latency_us`
    /// and `schedstat`, by dotted path (`perf_stat.context_switches`,
    /// `latency_us.wakeup.p99`, `schedstat.by_idle_type.newly_idle.lb_count`), for summaries
    /// over runs and comparisons. Non-finite values (written as `null`) are left out.
    pub fn metrics(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        let p = &self.perf_stat;
        for (k, v) in [
            ("task_clock_ms", p.task_clock_ms),
            ("context_switches", p.context_switches as f64),
            ("cpu_migrations", p.cpu_migrations as f64),
            ("cpus_utilized", p.cpus_utilized),
            ("elapsed_s", p.elapsed_s),
        ] {
            out.push((format!("perf_stat.{k}"), v));
        }
        let m = &self.migrations;
        out.push(("migrations.total".into(), m.total as f64));
        out.push(("migrations.ping_pong".into(), m.ping_pong as f64));
        for (k, &v) in &m.by_reason {
            out.push((format!("migrations.by_reason.{k}"), v as f64));
        }
        for (k, &v) in &m.ping_pong_by_pair {
            out.push((format!("migrations.ping_pong_by_pair.{k}"), v as f64));
        }
        for (k, v) in self.workload.numeric() {
            out.push((format!("workload.{k}"), v));
        }
        // Several workloads: the second is `workload2.*`, and so on (its placement is an
        // input, not a metric).
        for (i, w) in self.more_workloads.iter().enumerate() {
            for (k, v) in w
                .numeric()
                .into_iter()
                .filter(|(k, _)| !k.starts_with("placement."))
            {
                out.push((format!("workload{}.{k}", i + 2), v));
            }
        }
        for (name, l) in &self.latency_us {
            for (k, v) in [
                ("samples", l.samples as f64),
                ("p50", l.p50),
                ("p90", l.p90),
                ("p99", l.p99),
                ("p99.9", l.p99_9),
                ("max", l.max),
                ("mean", l.mean),
            ] {
                out.push((format!("latency_us.{name}.{k}"), v));
            }
        }
        self.numa_metrics(&mut out);
        self.schedstat_metrics(&mut out);
        out.retain(|(_, v)| v.is_finite());
        out
    }

    /// The `vmstat.*`, `numa.moves.*` and `numa.ping_pong.*` metrics (none without a memory
    /// model); separate as the NUMA block of [`RunResult::metrics`].
    fn numa_metrics(&self, out: &mut Vec<(String, f64)>) {
        if let Some(v) = &self.vmstat
            && let Ok(Value::Object(m)) = serde_json::to_value(v)
        {
            for (k, v) in m {
                out.push((format!("vmstat.{k}"), v.as_f64().unwrap_or(f64::NAN)));
            }
        }
        if let Some(Value::Object(m)) = self.numa.as_ref().and_then(|n| n.get("moves")) {
            for (k, v) in m {
                out.push((format!("numa.moves.{k}"), v.as_f64().unwrap_or(f64::NAN)));
            }
        }
        if let Some(Value::Object(m)) = self.numa.as_ref().and_then(|n| n.get("ping_pong")) {
            for (k, v) in m {
                out.push((
                    format!("numa.ping_pong.{k}"),
                    v.as_f64().unwrap_or(f64::NAN),
                ));
            }
        }
    }

    /// The `schedstat.*` metrics (totals, by level, by idle type; none without schedstats);
    /// separate as the schedstat block of [`RunResult::metrics`].
    fn schedstat_metrics(&self, out: &mut Vec<(String, f64)>) {
        if let Some(s) = &self.schedstat {
            for (k, &v) in &s.totals {
                out.push((format!("schedstat.totals.{k}"), v as f64));
            }
            for (group, maps) in [("by_level", &s.by_level), ("by_idle_type", &s.by_idle_type)] {
                for (name, counters) in maps {
                    for (k, &v) in counters {
                        out.push((format!("schedstat.{group}.{name}.{k}"), v as f64));
                    }
                }
            }
        }
    }
}

/// The run's NUMA `/proc/vmstat` counters (`None` without a memory model).
pub fn vmstat(engine: &Engine) -> Option<crate::sched::types::Vmstat> {
    engine.numa()?;
    Some(
        engine
            .policy()
            .numa_balancing()
            .map(|nb| nb.vmstat())
            .unwrap_or_default(),
    )
}

/// The `numa` object of a run with a memory model: `balancing`, `moves` (`numa_move`,
/// `numa_swap`, `numa_stick`, `numa_move_fail`), `pages_per_node` (base pages of every
/// process), `node_bandwidth_mib_s`, `congestion` at the end, `ping_pong` (node-level pairs
/// and `numa->X->numa` cycles), and `tasks[]` (memory-model tasks: `pid`, `comm`, `mm`,
/// `preferred_nid`, `numa_scan_period_ms`, `numa_pages_migrated`, `total_numa_faults`,
/// `faults_per_node`, `group`).
pub fn numa(engine: &Engine) -> Option<Value> {
    let n = engine.numa()?;
    let nb = engine.policy().numa_balancing()?;
    let pages: Vec<u64> = engine
        .numa_groups_per_node()
        .iter()
        .map(|g| g * crate::memory::PAGES_PER_GROUP)
        .collect();
    let mut ping_pong = Map::new();
    for (k, v) in n.ping_pong.pairs().into_iter().chain(n.ping_pong.cycles()) {
        ping_pong.insert(k, json!(v));
    }
    let tasks: Vec<Value> = engine
        .tasks()
        .iter()
        .filter_map(|t| {
            let tm = n.task_mem(t.id)?;
            let tn = &nb.sched.state.tasks[t.id.idx()];
            let faults: Vec<i64> = (0..engine.machine().nr_nodes())
                .map(|nid| tn.task_faults(nid))
                .collect();
            Some(json!({
                "pid": t.id.0,
                "comm": t.comm,
                "mm": tm.mm.0,
                "preferred_nid": tn.preferred_nid,
                "numa_scan_period_ms": tn.numa_scan_period_ms,
                "numa_pages_migrated": tn.numa_pages_migrated,
                "total_numa_faults": tn.total_numa_faults,
                "faults_per_node": faults,
                "group": tn.group.map(|g| g.0),
            }))
        })
        .collect();
    let mut out = json!({
        "balancing": nb.balancing(),
        "moves": n.moves,
        "pages_per_node": pages,
        "node_bandwidth_mib_s": n.node_bw_mb_s,
        "congestion": n.congestion,
        "ping_pong": ping_pong,
        "tasks": tasks,
    });
    if let Some(series) = engine.numa_pages_series() {
        out["pages_series"] = pages_series(series);
    }
    Some(out)
}

/// `numa.pages_series` ([`crate::engine::numa_series`]), column by column: `step_ns`,
/// `time_ns[sample]`, `pages_per_node[node][sample]` (all processes),
/// `vmstat[counter][sample]` (cumulative from the run's start); per process (mm =
/// `numa.tasks[].mm`) `mm_pages_per_node[mm][node]` and `mm_pages[mm]` (its resident pages,
/// counted apart) as change points, `[sample, pages]` pairs at the first sample and
/// wherever the value changes (a process's pages mostly stay put, so this keeps a run with
/// many processes small).
pub fn pages_series(s: &crate::engine::numa_series::NumaPagesSeries) -> Value {
    let pages = crate::memory::PAGES_PER_GROUP;
    let col = |f: &dyn Fn(&crate::engine::numa_series::NumaPagesSample) -> u64| -> Vec<u64> {
        s.samples.iter().map(f).collect()
    };
    let changes = |v: Vec<u64>| -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for (i, x) in v.into_iter().enumerate() {
            if out.last().is_none_or(|l| l[1] != x) {
                out.push([i as u64, x]);
            }
        }
        out
    };
    let mm_node =
        |mm: usize, node: usize| changes(col(&|x| x.mm_groups[mm * s.nr_nodes + node] * pages));
    let per_node: Vec<Vec<u64>> = (0..s.nr_nodes)
        .map(|node| {
            col(&|x| {
                (0..s.nr_mms)
                    .map(|mm| x.mm_groups[mm * s.nr_nodes + node])
                    .sum::<u64>()
                    * pages
            })
        })
        .collect();
    let mm_per_node: Vec<Vec<Vec<[u64; 2]>>> = (0..s.nr_mms)
        .map(|mm| (0..s.nr_nodes).map(|node| mm_node(mm, node)).collect())
        .collect();
    let mm_pages: Vec<Vec<[u64; 2]>> = (0..s.nr_mms)
        .map(|mm| changes(col(&|x| x.mm_resident[mm] * pages)))
        .collect();
    let as_map = |v: &crate::sched::types::Vmstat| match serde_json::to_value(v) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let base = as_map(&s.vmstat_base);
    let mut vmstat: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for x in &s.samples {
        for (k, v) in as_map(&x.vmstat) {
            let before = if x.after_warmup {
                base.get(&k).and_then(Value::as_u64).unwrap_or(0)
            } else {
                0
            };
            vmstat
                .entry(k)
                .or_default()
                .push(v.as_u64().unwrap_or(0) + before);
        }
    }
    json!({
        "step_ns": s.step_ns,
        "time_ns": col(&|x| x.time_ns),
        "pages_per_node": per_node,
        "mm_pages_per_node": mm_per_node,
        "mm_pages": mm_pages,
        "vmstat": vmstat,
    })
}

/// perf-stat counters of a finished run (task-clock of all workload tasks, not the system
/// tasks: `perf stat -- CMD` counts the command).
pub fn perf_stat(engine: &Engine) -> PerfStat {
    let elapsed_ns = engine.end_ns() - engine.stats_start_ns();
    let task_clock_ns: u64 = engine
        .workload_tasks()
        .iter()
        .map(|t| t.stats.counters.sum_exec_runtime_ns)
        .sum();
    PerfStat {
        task_clock_ms: task_clock_ns as f64 / 1e6,
        context_switches: engine.counters().context_switches,
        cpu_migrations: engine.counters().cpu_migrations,
        cpus_utilized: if elapsed_ns > 0 {
            task_clock_ns as f64 / elapsed_ns as f64
        } else {
            0.0
        },
        elapsed_s: elapsed_ns as f64 / 1e9,
    }
}

/// Migration counts by reason (contract keys), the total, the ping-pong count and its
/// breakdown by mechanism pair.
pub fn migrations(engine: &Engine) -> Migrations {
    let counts = &engine.counters().migrations_by_reason;
    Migrations {
        total: counts.iter().sum::<u64>(),
        by_reason: MigrationReason::ALL
            .iter()
            .enumerate()
            .map(|(i, reason)| (reason.name().to_string(), counts[i]))
            .collect(),
        ping_pong: engine.ping_pong().total,
        ping_pong_by_pair: engine.ping_pong().pairs().into_iter().collect(),
    }
}

/// Per-CPU counters of the online CPUs.
pub fn cpus(engine: &Engine) -> Vec<CpuResult> {
    engine
        .cpus()
        .iter()
        .filter(|c| engine.machine().online.test(c.cpu))
        .map(|c| CpuResult {
            cpu: c.cpu,
            counters: c.stats.counters.clone(),
        })
        .collect()
}

/// What the background tasks did ([`RunResult::background`]); `None` without any.
pub fn background(engine: &Engine) -> Option<BackgroundResult> {
    let tasks = engine.system_tasks();
    if tasks.is_empty() {
        return None;
    }
    let sum = |f: fn(&crate::engine::Task) -> u64| tasks.iter().map(f).sum::<u64>();
    Some(BackgroundResult {
        tasks: tasks.len(),
        task_clock_ms: sum(|t| t.stats.counters.sum_exec_runtime_ns) as f64 / 1e6,
        wakeups: sum(|t| t.stats.counters.nr_wakeups),
        context_switches: sum(|t| t.stats.counters.nr_switches),
        migrations: sum(|t| t.stats.counters.nr_migrations),
    })
}

/// Per-task statistics like /proc/PID/sched (the workloads' tasks).
pub fn tasks(engine: &Engine) -> Vec<TaskResult> {
    engine
        .workload_tasks()
        .iter()
        .map(|t| {
            let s = &t.stats;
            // Memory locality: share of the task's pages on its CPU's node, and per node.
            let pages = (!t.numa_pages.is_empty()).then_some(&t.numa_pages);
            let node = engine.machine().cpus[t.cpu].node;
            let policy_stats = match engine.policy().task_report(t.id) {
                Value::Object(extra) => extra
                    .into_iter()
                    .map(|(k, v)| {
                        let n = v.as_u64().expect("a policy's per-task counters are counts");
                        (k, n)
                    })
                    .collect(),
                _ => BTreeMap::new(),
            };
            TaskResult {
                pid: t.id.0 as usize,
                comm: t.comm.clone(),
                cpu: t.cpu,
                policy: t.policy.kernel_name().to_string(),
                rt_priority: t.policy.rt_priority().map(u32::from),
                counters: s.counters.clone(),
                migrations_by_reason: MigrationReason::ALL
                    .iter()
                    .enumerate()
                    .map(|(i, reason)| (reason.name().to_string(), s.migrations_by_reason[i]))
                    .collect(),
                numa_pages_local_pct: pages
                    .map(|p| crate::engine::mempolicy::pages_on_node_pct(p, node)),
                numa_pages_pct: pages.map(|p| {
                    (0..p.len())
                        .map(|n| crate::engine::mempolicy::pages_on_node_pct(p, n))
                        .collect()
                }),
                policy_stats,
            }
        })
        .collect()
}
