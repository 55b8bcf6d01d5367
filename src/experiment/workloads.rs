//! `[workload]` → task programs, and the finished run → the workload's native report.
//!
//! Built-in kinds (`spin`, `pingpong`) are generated here; benchmark kinds (hackbench,
//! schbench, stress-ng, rt-app, netperf) are parsed by [`crate::workload`].

use serde_json::{Value, json};

use crate::config::scenario::{Scenario, WorkloadSection};
use crate::engine::WorkloadPlan;
use crate::error::{InputError, InputResult};
use crate::input::keys::UInt;
use crate::input::{keys, limits};
use crate::topology::Machine;
use crate::workload::generate::Ending;
use crate::workload::merge::PlanPart;
use crate::workload::placement::{self, ResolvedPlacement};
use crate::workload::view::RunView;
use crate::workload::{SectionInput, WorkloadSpec, builtin};

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
#[derive(Debug)]
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
    /// How the workload ends: a fixed amount of work (hackbench, `--cpu-ops` stress-ng,
    /// netperf `-l -N`, pingpong with `loops`), its own length (schbench `-r`, stress-ng
    /// `--timeout`, ...), or never. A run that ends before it did not finish the benchmark
    /// ([`Ending::finished`]).
    pub ending: Ending,
    /// What each workload owns in `plan` (one entry, the whole plan, for one workload).
    pub parts: Vec<PlanPart>,
    /// The workloads after the first, when several run together (`parts[1..]`).
    pub more: Vec<MoreWorkload>,
    /// The index of the first of the machine's background tasks in `plan`, which follow
    /// every workload's tasks ([`ResolvedWorkload::with_background`]); `None` without any.
    pub system_from: Option<usize>,
}

/// A workload after the first of a run of several: what its report needs.
#[derive(Debug, Clone)]
pub struct MoreWorkload {
    pub kind: WorkloadKind,
    pub placement: Option<ResolvedPlacement>,
    pub ending: Ending,
}

impl ResolvedWorkload {
    /// Several workloads of one run joined into one plan (`first` and `more` each placed):
    /// the run lasts as long as the longest needs. Errors as [`crate::workload::merge::join`].
    pub fn join(first: ResolvedWorkload, more: Vec<ResolvedWorkload>) -> Result<Self, String> {
        if more.is_empty() {
            return Ok(first);
        }
        let default_duration_ns =
            (more.iter().map(|w| w.default_duration_ns)).fold(first.default_duration_ns, u64::max);
        let warmup_ns = more
            .iter()
            .map(|w| w.warmup_ns)
            .fold(first.warmup_ns, u64::max);
        let infos = (more.iter())
            .map(|w| MoreWorkload {
                kind: w.kind.clone(),
                placement: w.placement.clone(),
                ending: w.ending,
            })
            .collect();
        let plans = std::iter::once(first.plan).chain(more.into_iter().map(|w| w.plan));
        let (plan, parts) = crate::workload::merge::join(plans.collect())?;
        Ok(ResolvedWorkload {
            kind: first.kind,
            plan,
            placement: first.placement,
            default_duration_ns,
            warmup_ns,
            ending: first.ending,
            parts,
            more: infos,
            system_from: None,
        })
    }

    /// The workloads with the machine's background tasks `background` appended after
    /// their tasks ([`crate::workload::background`]).
    pub fn with_background(mut self, background: Option<WorkloadPlan>) -> Self {
        let Some(background) = background else {
            return self;
        };
        let from = self.plan.tasks.len();
        let plan = std::mem::take(&mut self.plan);
        let (joined, _) = crate::workload::merge::join(vec![plan, background])
            .expect("background tasks record no metrics");
        self.plan = joined;
        self.system_from = Some(from);
        self
    }

    /// The workload of each task of the plan (for [`crate::engine::Engine::set_task_workloads`]).
    pub fn task_workloads(&self) -> Vec<u16> {
        let mut of_task = vec![0u16; self.plan.tasks.len()];
        for p in &self.parts {
            let w = u16::try_from(p.index).expect("at most MAX_WORKLOADS workloads");
            of_task[p.tasks.clone()].fill(w);
        }
        of_task
    }
}

const ENDLESS_DEFAULT_NS: u64 = 1_000_000_000;
pub const FINITE_CAP_NS: u64 = 3_600_000_000_000;

/// `kind = "spin"` keys.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SpinKeys {
    tasks: Option<UInt<1, 100_000>>,
    nice: Option<toml::Value>,
    footprint_kib: Option<UInt<0, { 1 << 22 }>>,
}

/// `kind = "pingpong"` keys.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PingPongKeys {
    pairs: Option<UInt<1, 100_000>>,
    message_work_us: Option<UInt<0, 10_000_000>>,
    worker_work_us: Option<UInt<0, 10_000_000>>,
    loops: Option<u32>,
    footprint_kib: Option<UInt<0, { 1 << 22 }>>,
}

/// Typed keys of a built-in kind, with the errors of [`crate::input::keys`].
fn builtin_keys<T: serde::de::DeserializeOwned>(
    scn: &Scenario,
    params: &toml::Table,
) -> InputResult<T> {
    let origin_of = |k: &str| scn.origin_of(k).to_string();
    keys::from_table_also(
        params,
        "workload",
        &origin_of,
        &[
            ("also", &["kind"]),
            ("placement", placement::PLACEMENT_KEYS),
        ],
    )
}

/// `nice`: one value or a list, each -20..=19.
fn nice_values(scn: &Scenario, value: Option<&toml::Value>) -> InputResult<Vec<i8>> {
    let err = |v: &toml::Value| {
        InputError::with_key(
            scn.origin_of("workload.nice"),
            "workload.nice",
            keys::expected(
                "an integer or a list of integers, -20 to 19",
                crate::input::describe(v),
            ),
        )
    };
    let one = |v: &toml::Value| match v {
        toml::Value::Integer(n) if (-20..=19).contains(n) => Ok(*n as i8),
        other => Err(err(other)),
    };
    match value {
        None => Ok(vec![0]),
        Some(toml::Value::Array(a)) if !a.is_empty() => a.iter().map(one).collect(),
        Some(v @ toml::Value::Integer(_)) => Ok(vec![one(v)?]),
        Some(v) => Err(err(v)),
    }
}

/// `run.max_tasks`: refuse a workload of more tasks before any is allocated.
fn check_tasks(scn: &Scenario, nr_tasks: u64, what: &str) -> InputResult<()> {
    let max = scn.run.max_tasks;
    if nr_tasks <= max {
        return check_memory(scn, nr_tasks, what);
    }
    Err(InputError::with_key(
        scn.origin_of("workload"),
        "workload",
        format!(
            "{what} would create {nr_tasks} tasks, above run.max_tasks = {max} (about {} MiB of \
             simulator memory at {} KiB per task; raise it with --set run.max_tasks=N, at most {})",
            (max * limits::BYTES_PER_TASK) >> 20,
            limits::BYTES_PER_TASK >> 10,
            limits::MAX_TASKS_CEILING
        ),
    ))
}

/// Test hook (environment): the `MemAvailable` to assume, in KiB, instead of
/// `/proc/meminfo`'s.
pub const MEMAVAILABLE_ENV: &str = "SCHEDLAB_TEST_MEMAVAILABLE_KIB";

/// `MemAvailable` of `/proc/meminfo` in bytes (or [`MEMAVAILABLE_ENV`]'s); `None` when
/// neither can be read (the check is then skipped).
fn mem_available_bytes() -> Option<u64> {
    let kib = match std::env::var(MEMAVAILABLE_ENV) {
        Ok(v) => v.trim().parse::<u64>().ok(),
        Err(_) => std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }),
    }?;
    Some(kib.saturating_mul(1024))
}

/// Refuse, before anything is allocated, a workload whose tasks would need more memory
/// than the machine has available: [`limits::BYTES_PER_TASK`] per task, times the runs
/// that run at once (up to one per core). Small runs (under 64 MiB) are not checked.
fn check_memory(scn: &Scenario, nr_tasks: u64, what: &str) -> InputResult<()> {
    let parallel = std::thread::available_parallelism()
        .map_or(1, |n| n.get() as u64)
        .min(u64::from(scn.run.runs.max(1)));
    let estimate = nr_tasks
        .saturating_mul(limits::BYTES_PER_TASK)
        .saturating_mul(parallel);
    if estimate < 64 << 20 {
        return Ok(());
    }
    let Some(available) = mem_available_bytes() else {
        return Ok(());
    };
    if estimate <= available {
        return Ok(());
    }
    Err(InputError::with_key(
        scn.origin_of("workload"),
        "workload",
        format!(
            "{what} would create {nr_tasks} tasks: about {} MiB of simulator memory ({} KiB per \
             task x {parallel} runs at once), above the {} MiB this machine has available \
             (MemAvailable in /proc/meminfo); accepted: fewer tasks, or fewer --runs",
            estimate >> 20,
            limits::BYTES_PER_TASK >> 10,
            available >> 20
        ),
    ))
}

/// `run.max_duration_s`: refuse a workload whose own length is longer (when `run.duration_s`
/// does not cap it; that key is checked against the limit by the scenario parser).
fn check_duration(scn: &Scenario, own_ns: u64, what: &str) -> InputResult<()> {
    let max_s = scn.run.max_duration_s;
    if scn.run.duration_s.is_some() || own_ns as f64 <= max_s * 1e9 {
        return Ok(());
    }
    Err(InputError::with_key(
        scn.origin_of("workload"),
        "workload",
        format!(
            "{what} runs for {} s of simulated time, above run.max_duration_s = {max_s} s (cap \
             it with --set run.duration_s=SECONDS or raise the limit with --set \
             run.max_duration_s=SECONDS, at most {})",
            own_ns / 1_000_000_000,
            limits::MAX_DURATION_CEILING_S
        ),
    ))
}

/// Resolve the scenario's (first) workload, with its placement applied.
pub fn resolve(scn: &Scenario, machine: &Machine, seed: u64) -> InputResult<ResolvedWorkload> {
    let setup = setup(scn, &scn.workload, machine)?;
    let cost = match setup.needs_cost() {
        true => Some(super::resolve_cost(scn, machine)?),
        false => None,
    };
    setup.instantiate(machine, cost.as_ref(), seed)
}

/// What a scenario's workload is, whatever the seed: the parsed benchmark (or the built-in
/// kind and its plan), the placement resolved against the machine, the lengths. Built
/// once per scenario ([`setup`]); [`WorkloadSetup::instantiate`] makes a seed's plan.
#[derive(Debug, Clone)]
pub struct WorkloadSetup {
    pub kind: WorkloadKind,
    /// The plan of a built-in kind (the same for every seed); benchmarks plan per seed.
    builtin_plan: Option<WorkloadPlan>,
    pub placement: Option<ResolvedPlacement>,
    pub default_duration_ns: u64,
    pub warmup_ns: u64,
    pub ending: Ending,
    /// Where `[workload]` came from (for the placement's errors).
    origin: String,
}

/// Parse and check one of the scenario's workloads, `section` (`scn.workload` or one of
/// `scn.more_workloads`), against `machine` (every error a run of it could report about its
/// keys, its task count, its length and its placement).
pub fn setup(
    scn: &Scenario,
    section: &WorkloadSection,
    machine: &Machine,
) -> InputResult<WorkloadSetup> {
    let origin = scn.origin_of("workload");
    let (params, mut args) = placement::from_toml(&section.params, origin)?;
    let w = resolve_unplaced(scn, section, &params, machine, &mut args)?;
    let placement = match args.is_empty() {
        true => None,
        false => Some(args.resolve(machine)?),
    };
    Ok(WorkloadSetup {
        placement,
        origin: origin.to_string(),
        ..w
    })
}

impl WorkloadSetup {
    /// Whether [`WorkloadSetup::instantiate`] needs the cost model (hackbench's message
    /// traffic between placed groups).
    pub fn needs_cost(&self) -> bool {
        // Placed hackbench: its message traffic; hackbench over AF_UNIX: the per-message
        // cost (`af_unix_cost_pct`).
        self.hackbench().is_some_and(|c| {
            self.placement.is_some() || c.ipc == crate::workload::hackbench::HackbenchIpc::Socket
        })
    }

    fn hackbench(&self) -> Option<&crate::workload::hackbench::HackbenchConfig> {
        match &self.kind {
            WorkloadKind::Bench(spec) => match spec.as_ref() {
                WorkloadSpec::Hackbench(c) => Some(c),
                _ => None,
            },
            _ => None,
        }
    }

    /// The workload of the run with `seed`: its plan, with the placement applied (`cost`:
    /// the scenario's cost model, needed when [`WorkloadSetup::needs_cost`]).
    pub fn instantiate(
        &self,
        machine: &Machine,
        cost: Option<&crate::cost::CostModel>,
        seed: u64,
    ) -> InputResult<ResolvedWorkload> {
        let mut plan = match (&self.kind, &self.builtin_plan) {
            (WorkloadKind::Bench(spec), _) => {
                crate::workload::generate::plan_with_cost(spec, machine, cost, seed)?
            }
            (_, Some(plan)) => plan.clone(),
            (_, None) => unreachable!("a built-in kind has its plan"),
        };
        if let Some(placed) = &self.placement {
            placed.apply(&mut plan, machine, &self.origin)?;
            if let (Some(c), Some(cost)) = (self.hackbench(), cost) {
                crate::workload::generate::hackbench::apply_message_traffic(
                    &mut plan, c, machine, cost,
                );
            }
        }
        Ok(ResolvedWorkload {
            kind: self.kind.clone(),
            parts: vec![PlanPart::whole(&plan)],
            plan,
            placement: self.placement.clone(),
            default_duration_ns: self.default_duration_ns,
            warmup_ns: self.warmup_ns,
            ending: self.ending,
            more: Vec::new(),
            system_from: None,
        })
    }
}

/// The workload's plan before placement; command-line prefixes go into `args`.
fn resolve_unplaced(
    scn: &Scenario,
    w: &WorkloadSection,
    params: &toml::Table,
    machine: &Machine,
    args: &mut placement::PlacementArgs,
) -> InputResult<WorkloadSetup> {
    let nr_online = machine.online.weight();
    match (w.kind.as_deref(), w.command.as_deref()) {
        (Some("spin"), None) => spin_setup(scn, params, nr_online),
        (Some("pingpong"), None) => pingpong_setup(scn, params),
        _ => bench_setup(scn, w, params, nr_online, args),
    }
}

/// The setup of the built-in `spin` workload (one endless spinner per online CPU by default).
fn spin_setup(
    scn: &Scenario,
    params: &toml::Table,
    nr_online: usize,
) -> InputResult<WorkloadSetup> {
    let k: SpinKeys = builtin_keys(scn, params)?;
    let tasks = k.tasks.map_or(nr_online as u64, UInt::get) as usize;
    check_tasks(scn, tasks as u64, "spin")?;
    let nices = nice_values(scn, k.nice.as_ref())?;
    let footprint = k.footprint_kib.map_or(256, UInt::get) as u32;
    Ok(WorkloadSetup {
        kind: WorkloadKind::Spin { tasks },
        placement: None,
        origin: String::new(),
        builtin_plan: Some(builtin::spin(tasks, &nices, footprint)),
        default_duration_ns: ENDLESS_DEFAULT_NS,
        warmup_ns: 0,
        ending: Ending::Never,
    })
}

/// The setup of the built-in `pingpong` workload (endless unless it has `loops`).
fn pingpong_setup(scn: &Scenario, params: &toml::Table) -> InputResult<WorkloadSetup> {
    let k: PingPongKeys = builtin_keys(scn, params)?;
    let pairs = k.pairs.map_or(1, UInt::get) as usize;
    check_tasks(scn, 2 * pairs as u64, "pingpong")?;
    let message_us = k.message_work_us.map_or(10, UInt::get);
    let worker_us = k.worker_work_us.map_or(10, UInt::get);
    let loops = k.loops.unwrap_or(0);
    let footprint = k.footprint_kib.map_or(64, UInt::get) as u32;
    Ok(WorkloadSetup {
        kind: WorkloadKind::PingPong { pairs },
        placement: None,
        origin: String::new(),
        builtin_plan: Some(builtin::pingpong(
            pairs,
            message_us * 1000,
            worker_us * 1000,
            loops,
            footprint,
        )),
        default_duration_ns: if loops == 0 {
            ENDLESS_DEFAULT_NS
        } else {
            FINITE_CAP_NS
        },
        warmup_ns: 0,
        ending: if loops == 0 {
            Ending::Never
        } else {
            Ending::Work
        },
    })
}

/// The setup of a benchmark workload (a `kind` with its keys, or a `command` line).
fn bench_setup(
    scn: &Scenario,
    w: &WorkloadSection,
    params: &toml::Table,
    nr_online: usize,
    args: &mut placement::PlacementArgs,
) -> InputResult<WorkloadSetup> {
    let doc_dir = scn.doc.base_dir.as_deref();
    let origin_of = |k: &str| scn.origin_of(k).to_string();
    let (spec, prefix) = WorkloadSpec::from_section(&SectionInput {
        kind: w.kind.as_deref(),
        command: w.command.as_deref(),
        keys: params,
        origin_of: &origin_of,
        base_dir: doc_dir,
        nr_cpus: nr_online,
    })?;
    args.merge_prefix(prefix);
    check_tasks(scn, spec.nr_tasks(), spec.kind())?;
    let default_duration_ns =
        crate::workload::generate::workload_duration_ns(&spec).unwrap_or(FINITE_CAP_NS);
    check_duration(scn, default_duration_ns, spec.kind())?;
    let warmup_ns = crate::workload::generate::workload_warmup_ns(&spec);
    let ending = crate::workload::generate::ending(&spec);
    Ok(WorkloadSetup {
        kind: WorkloadKind::Bench(Box::new(spec)),
        placement: None,
        origin: String::new(),
        builtin_plan: None,
        default_duration_ns,
        warmup_ns,
        ending,
    })
}

/// The workload's native report text and its JSON metrics, from its view of the run; `cut`:
/// the run ended before the benchmark's own length ([`Ending::After`]), so the report gives
/// the simulated runtime, not the one asked for.
pub fn native_report(kind: &WorkloadKind, run: &RunView, cut: bool) -> (String, Value) {
    let elapsed_s = (run.end_ns() - run.stats_start_ns()) as f64 / 1e9;
    match kind {
        WorkloadKind::Spin { tasks } => {
            let runtime: Vec<u64> = run
                .tasks()
                .iter()
                .map(|t| t.stats.counters.sum_exec_runtime_ns)
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
            let ops = run.ops_done();
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
        WorkloadKind::Bench(spec) => crate::workload::results::native_report(spec, run, cut),
    }
}
