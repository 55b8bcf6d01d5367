//! `[workload]` → task programs, and the finished run → the workload's native report.
//!
//! Built-in kinds (`spin`, `pingpong`) are generated here; benchmark kinds (hackbench,
//! schbench, stress-ng, rt-app, netperf) are parsed by [`crate::workload`].

use serde_json::{Value, json};

use crate::config::scenario::Scenario;
use crate::engine::{Engine, WorkloadPlan};
use crate::error::{InputError, InputResult};
use crate::topology::Machine;
use crate::workload::placement::{self, ResolvedPlacement};
use crate::workload::{WorkloadSpec, builtin};

/// Built-in kinds with their accepted keys.
pub const BUILTIN_KINDS: &[(&str, &str)] = &[
    (
        "spin",
        "N always-running CPU hogs; keys: tasks (default: online CPUs), nice (int or list), footprint_kib",
    ),
    (
        "pingpong",
        "message/worker pairs waking each other; keys: pairs, message_work_us, worker_work_us, loops (0 = forever), footprint_kib",
    ),
];

/// What a scenario's workload resolved to.
#[derive(Debug, Clone)]
pub enum WorkloadKind {
    Spin { tasks: usize },
    PingPong { pairs: usize },
    Bench(Box<WorkloadSpec>),
}

/// A workload ready to run.
pub struct ResolvedWorkload {
    pub kind: WorkloadKind,
    pub plan: WorkloadPlan,
    /// The placement applied to the plan (`taskset`/`numactl` prefixes, `[workload]`
    /// placement keys); `None` when there was none.
    pub placement: Option<ResolvedPlacement>,
    /// Simulated-time cap when `[run] duration_s` is not set: long enough for finite
    /// workloads, one second for endless ones.
    pub default_duration_ns: u64,
    /// The benchmark's own warm-up (schbench `-w`), excluded from statistics.
    pub warmup_ns: u64,
}

const ENDLESS_DEFAULT_NS: u64 = 1_000_000_000;
const FINITE_CAP_NS: u64 = 3_600_000_000_000;

struct Keys<'a> {
    table: &'a toml::Table,
    origin: &'a str,
}

impl Keys<'_> {
    fn int(&self, key: &str, default: i64, min: i64, max: i64) -> InputResult<i64> {
        match self.table.get(key) {
            None => Ok(default),
            Some(toml::Value::Integer(v)) if (min..=max).contains(v) => Ok(*v),
            Some(v) => Err(InputError::with_key(
                self.origin,
                format!("workload.{key}"),
                format!("{v} is not accepted; accepted: an integer in {min}..={max}"),
            )),
        }
    }

    fn check_only(&self, kind: &str, accepted: &[&str]) -> InputResult<()> {
        for k in self.table.keys() {
            if !accepted.contains(&k.as_str()) {
                return Err(InputError::with_key(
                    self.origin,
                    format!("workload.{k}"),
                    format!(
                        "unknown key for kind '{kind}'; accepted: {}; placement: {}",
                        accepted.join(", "),
                        placement::PLACEMENT_KEYS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Resolve the scenario's workload, with its placement applied.
pub fn resolve(scn: &Scenario, machine: &Machine, seed: u64) -> InputResult<ResolvedWorkload> {
    let origin = scn.origin_of("workload");
    let (params, mut args) = placement::from_toml(&scn.workload.params, origin)?;
    let mut w = resolve_unplaced(scn, &params, machine, seed, &mut args)?;
    if !args.is_empty() {
        let placed = args.resolve(machine)?;
        placed.apply(&mut w.plan, machine, origin)?;
        w.placement = Some(placed);
    }
    Ok(w)
}

/// The workload's plan before placement; command-line prefixes go into `args`.
fn resolve_unplaced(
    scn: &Scenario,
    params: &toml::Table,
    machine: &Machine,
    seed: u64,
    args: &mut placement::PlacementArgs,
) -> InputResult<ResolvedWorkload> {
    let w = &scn.workload;
    let origin = scn.origin_of("workload");
    let nr_online = machine.online.weight();
    let keys = Keys {
        table: params,
        origin,
    };
    match (w.kind.as_deref(), w.command.as_deref()) {
        (Some("spin"), None) => {
            keys.check_only("spin", &["tasks", "nice", "footprint_kib"])?;
            let tasks = keys.int("tasks", nr_online as i64, 1, 100_000)? as usize;
            let nices = match params.get("nice") {
                None => vec![0],
                Some(toml::Value::Integer(n)) if (-20..=19).contains(n) => vec![*n as i8],
                Some(toml::Value::Array(a)) => a
                    .iter()
                    .map(|v| match v {
                        toml::Value::Integer(n) if (-20..=19).contains(n) => Ok(*n as i8),
                        _ => Err(InputError::with_key(
                            origin,
                            "workload.nice",
                            format!("{v} is not a nice value; accepted: integers -20..=19"),
                        )),
                    })
                    .collect::<InputResult<Vec<_>>>()?,
                Some(v) => {
                    return Err(InputError::with_key(
                        origin,
                        "workload.nice",
                        format!("{v} is not accepted; accepted: an integer or a list, -20..=19"),
                    ));
                }
            };
            let footprint = keys.int("footprint_kib", 256, 0, 1 << 22)? as u32;
            Ok(ResolvedWorkload {
                kind: WorkloadKind::Spin { tasks },
                placement: None,
                plan: builtin::spin(tasks, &nices, footprint),
                default_duration_ns: ENDLESS_DEFAULT_NS,
                warmup_ns: 0,
            })
        }
        (Some("pingpong"), None) => {
            keys.check_only(
                "pingpong",
                &[
                    "pairs",
                    "message_work_us",
                    "worker_work_us",
                    "loops",
                    "footprint_kib",
                ],
            )?;
            let pairs = keys.int("pairs", 1, 1, 100_000)? as usize;
            let message_us = keys.int("message_work_us", 10, 0, 10_000_000)? as u64;
            let worker_us = keys.int("worker_work_us", 10, 0, 10_000_000)? as u64;
            let loops = keys.int("loops", 0, 0, u32::MAX as i64)? as u32;
            let footprint = keys.int("footprint_kib", 64, 0, 1 << 22)? as u32;
            Ok(ResolvedWorkload {
                kind: WorkloadKind::PingPong { pairs },
                placement: None,
                plan: builtin::pingpong(
                    pairs,
                    message_us * 1000,
                    worker_us * 1000,
                    loops,
                    footprint,
                ),
                default_duration_ns: if loops == 0 {
                    ENDLESS_DEFAULT_NS
                } else {
                    FINITE_CAP_NS
                },
                warmup_ns: 0,
            })
        }
        _ => {
            let spec = match (w.kind.as_deref(), w.command.as_deref()) {
                (_, Some(cmd)) => {
                    let (spec, prefix) = WorkloadSpec::from_command_placed(cmd, nr_online)
                        .map_err(|mut e| {
                            e.origin = format!("{origin}: workload.command: {}", e.origin);
                            e
                        })?;
                    args.merge_prefix(prefix);
                    spec
                }
                (Some(kind), None) => WorkloadSpec::from_toml(kind, params, origin, nr_online)?,
                (None, None) => {
                    return Err(InputError::with_key(
                        origin,
                        "workload",
                        "no workload; accepted: [workload] kind = ... or command = \"...\", \
                         or a command line after `--` (see `schedlab list workloads`)",
                    ));
                }
            };
            let plan = crate::workload::generate::plan(&spec, machine, seed)?;
            let default_duration_ns =
                crate::workload::generate::workload_duration_ns(&spec).unwrap_or(FINITE_CAP_NS);
            let warmup_ns = crate::workload::generate::workload_warmup_ns(&spec);
            Ok(ResolvedWorkload {
                kind: WorkloadKind::Bench(Box::new(spec)),
                placement: None,
                plan,
                default_duration_ns,
                warmup_ns,
            })
        }
    }
}

/// The workload's native report text and its JSON metrics.
pub fn native_report(kind: &WorkloadKind, engine: &Engine) -> (String, Value) {
    let elapsed_s = (engine.end_ns() - engine.stats_start_ns()) as f64 / 1e9;
    match kind {
        WorkloadKind::Spin { tasks } => {
            let runtime: Vec<u64> = engine
                .tasks()
                .iter()
                .map(|t| t.stats.sum_exec_runtime_ns)
                .collect();
            let total: u64 = runtime.iter().sum();
            let min = runtime.iter().copied().min().unwrap_or(0);
            let max = runtime.iter().copied().max().unwrap_or(0);
            let text = format!(
                "spin: {tasks} tasks for {elapsed_s:.3} s: runtime per task min {:.3} s max {:.3} s \
                 (total {:.3} s)\n",
                min as f64 / 1e9,
                max as f64 / 1e9,
                total as f64 / 1e9
            );
            let json = json!({
                "kind": "spin",
                "tasks": tasks,
                "runtime_s_min": min as f64 / 1e9,
                "runtime_s_max": max as f64 / 1e9,
                "throughput": total as f64 / 1e9 / elapsed_s.max(1e-9),
            });
            (text, json)
        }
        WorkloadKind::PingPong { pairs } => {
            let ops = engine.ops_done();
            let rate = ops as f64 / elapsed_s.max(1e-9);
            let text = format!(
                "pingpong: {pairs} pairs, {ops} round trips in {elapsed_s:.3} s ({rate:.0}/s)\n"
            );
            let json = json!({
                "kind": "pingpong",
                "pairs": pairs,
                "round_trips": ops,
                "throughput": rate,
            });
            (text, json)
        }
        WorkloadKind::Bench(spec) => crate::workload::results::native_report(spec, engine),
    }
}
