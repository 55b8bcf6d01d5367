//! The results of one run as the contract's JSON (ARCHITECTURE.md §3, `runs[]`), built from a
//! finished [`Engine`]. Keys are ordered (serde_json's map is a BTreeMap here), so the same
//! run always serializes to the same bytes; only `wall_time_s` depends on the host.

use serde_json::{Value, json};

use super::histogram::Histogram;
use super::perf::PerfStat;
use crate::engine::Engine;
use crate::policy::MigrationReason;

/// Latency percentiles in µs, as the contract names them.
pub fn latency_us(h: &Histogram) -> Value {
    let us = |ns: u64| ns as f64 / 1000.0;
    json!({
        "samples": h.len(),
        "p50": us(h.percentile(50.0)),
        "p90": us(h.percentile(90.0)),
        "p99": us(h.percentile(99.0)),
        "p99.9": us(h.percentile(99.9)),
        "max": us(h.max()),
        "mean": h.mean() / 1000.0,
    })
}

/// perf-stat counters of a finished run (task-clock of all workload tasks).
pub fn perf_stat(engine: &Engine) -> PerfStat {
    let elapsed_ns = engine.end_ns() - engine.stats_start_ns();
    let task_clock_ns: u64 = engine
        .tasks()
        .iter()
        .map(|t| t.stats.sum_exec_runtime_ns)
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

/// Migration counts by reason (contract keys), the total and the ping-pong count.
pub fn migrations(engine: &Engine, ping_pong: u64) -> Value {
    let counts = &engine.counters().migrations_by_reason;
    let mut by_reason = serde_json::Map::new();
    for (i, reason) in MigrationReason::ALL.iter().enumerate() {
        by_reason.insert(reason.name().to_string(), json!(counts[i]));
    }
    json!({
        "total": counts.iter().sum::<u64>(),
        "by_reason": by_reason,
        "ping_pong": ping_pong,
    })
}

/// Per-CPU summary (an extension of the contract).
pub fn cpus(engine: &Engine) -> Value {
    Value::Array(
        engine
            .cpus()
            .iter()
            .filter(|c| engine.machine().online.test(c.cpu))
            .map(|c| {
                json!({
                    "cpu": c.cpu,
                    "busy_ns": c.stats.busy_ns,
                    "kernel_work_ns": c.stats.kernel_work_ns,
                    "nr_switches": c.stats.nr_switches,
                    "ipis_received": c.stats.ipis_received,
                    "ipis_sent": c.stats.ipis_sent,
                    "idle_exits": c.stats.idle_exits,
                    "ttwu_count": c.stats.ttwu_count,
                    "ttwu_local": c.stats.ttwu_local,
                    "ttwu_queued": c.stats.ttwu_queued,
                    "ttwu_remote_locked": c.stats.ttwu_remote_locked,
                    "remote_lock_wait_ns": c.stats.remote_lock_wait_ns,
                    "ttwu_on_cpu_queued": c.stats.ttwu_on_cpu_queued,
                    "on_cpu_spins": c.stats.on_cpu_spins,
                    "on_cpu_spin_ns": c.stats.on_cpu_spin_ns,
                    "ttwu_delayed_queued": c.stats.ttwu_delayed_queued,
                    "ttwu_delayed_forwarded": c.stats.ttwu_delayed_forwarded,
                })
            })
            .collect(),
    )
}

/// Per-task statistics like /proc/PID/sched (an extension of the contract).
pub fn tasks(engine: &Engine) -> Value {
    Value::Array(
        engine
            .tasks()
            .iter()
            .map(|t| {
                let mut v = serde_json::to_value(&t.stats).expect("plain struct");
                let obj = v.as_object_mut().expect("struct is an object");
                obj.insert("pid".into(), json!(t.id.0));
                obj.insert("comm".into(), json!(t.comm));
                obj.insert("cpu".into(), json!(t.cpu));
                obj.insert("policy".into(), json!(t.policy.kernel_name()));
                if let Some(rt) = t.policy.rt_priority() {
                    obj.insert("rt_priority".into(), json!(rt));
                }
                // Memory locality: share of the task's pages on its CPU's node, and per node
                // (null before the task first ran).
                let pages = (!t.numa_pages.is_empty()).then_some(&t.numa_pages);
                let node = engine.machine().cpus[t.cpu].node;
                obj.insert(
                    "numa_pages_local_pct".into(),
                    json!(pages.map(|p| crate::engine::mempolicy::pages_on_node_pct(p, node))),
                );
                obj.insert(
                    "numa_pages_pct".into(),
                    json!(pages.map(|p| {
                        (0..p.len())
                            .map(|n| crate::engine::mempolicy::pages_on_node_pct(p, n))
                            .collect::<Vec<_>>()
                    })),
                );
                let mut by_reason = serde_json::Map::new();
                for (i, reason) in MigrationReason::ALL.iter().enumerate() {
                    by_reason.insert(
                        reason.name().to_string(),
                        json!(t.stats.migrations_by_reason[i]),
                    );
                }
                obj.insert("migrations_by_reason".into(), Value::Object(by_reason));
                if let Value::Object(extra) = engine.policy().task_report(t.id) {
                    obj.extend(extra);
                }
                v
            })
            .collect(),
    )
}
