//! Experiments: from a parsed [`Scenario`] to runs and their results (what mmtests does for
//! real machines). [`scenario`] resolves a scenario once per command (machine, cost model,
//! workload, all checked before any run); this module runs the engine once per seed from it
//! and assembles the contract's results JSON (ARCHITECTURE.md §3; its JSON Schema:
//! [`schema`]) and the text report `schedlab run` prints.

pub mod bisect;
pub mod host;
pub mod scenario;
pub mod schema;
pub mod sweep;
pub mod validate;
pub mod workloads;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::config::scenario::Scenario;
use crate::cost::CostModel;
use crate::engine::control::{RunControl, Shared};
use crate::engine::{Engine, EngineConfig};
use crate::error::{InputError, InputResult};
use crate::kconfig::Policy;
use crate::policy::SchedPolicy;
use crate::policy::fifo::GlobalFifo;
use crate::stats::perf::PerfStat;
use crate::stats::report::{self, RunResult};
use crate::stats::summary::{MetricColumns, Summary};
use crate::stats::trace::Instruments;
use crate::topology::Machine;
use crate::workload::generate::Ending;
use crate::workload::view::RunView;
use scenario::ResolvedScenario;

/// The version written into results.
pub const SCHEDLAB_VERSION: &str = env!("CARGO_PKG_VERSION");

impl RunOutput {
    /// The run's `runs[]` entry as JSON (see [`RunResult::to_json`]).
    pub fn json(&self) -> Value {
        self.result.to_json()
    }
}

/// One finished run.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub seed: u64,
    /// The contract's `runs[]` entry.
    pub result: RunResult,
    pub perf: PerfStat,
    /// The benchmark's own report.
    pub native_text: String,
    /// One line: migrations by reason, schedstat highlights.
    pub summary_line: String,
    pub invariant_violations: Vec<String>,
    /// `/proc/schedstat` v17 text at the end of the run (policies with schedstats).
    pub schedstat_text: Option<String>,
    /// False when a stop request (SIGINT/SIGTERM) cut the run short.
    pub complete: bool,
    /// False when the run ended (at `run.duration_s` or the default cap) before the
    /// benchmark had finished its work or run its own length
    /// ([`workloads::ResolvedWorkload::ending`], [`Ending::finished`]): its results are not
    /// the benchmark's.
    pub workload_complete: bool,
    /// Simulated time at the end of the run, warm-up included (`schedlab bench`).
    pub end_ns: u64,
    /// Of `result.events`, the queue entries that did nothing (`schedlab bench`).
    pub superseded_events: u64,
}

/// What the runs of one command share: the stop flag the signal handlers set, the progress
/// counter the engines advance, the progress bar drawn from it, and warnings printed once.
#[derive(Debug, Default)]
pub struct RunContext {
    pub shared: Arc<Shared>,
    /// Draw a progress bar on stderr (set when stderr is a terminal).
    pub progress: bool,
    /// Print progress lines on stderr instead (set when stderr is not a terminal): one for
    /// each finished run and at least every [`PROGRESS_LINE_EVERY`] of wall time.
    pub lines: bool,
    /// Neither bar nor lines (`--quiet`).
    pub quiet: bool,
    /// Runs finished under this context (all commands), for the progress lines.
    runs_done: std::sync::atomic::AtomicU64,
    /// When the last progress line was printed, and how many runs had finished then
    /// (shared by concurrent batches, so they never print the same news twice).
    last_line: Mutex<Option<(Instant, u64)>>,
    /// The longest simulated length of a run started under the current bar (its runs share
    /// a scenario, so the bar's length is this times their number).
    run_len_ns: std::sync::atomic::AtomicU64,
    /// How many runs the current bar covers.
    bar_runs: std::sync::atomic::AtomicU64,
    bar: Mutex<Option<indicatif::ProgressBar>>,
    warned: Mutex<Vec<String>>,
    endless_warned: AtomicBool,
    /// Where a benchmark's interval output goes as its run proceeds (schbench's periodic
    /// reports); `None`: it comes only with the native report at the end. For one run only.
    pub stream: Option<crate::workload::results::TextSink>,
    /// Leave [`RunOutput::schedstat_text`] out (`None`): set by the commands that never
    /// print it (`run` without `--schedstat`, `compare`, `sweep`, `bisect`). Writing the
    /// `/proc/schedstat` text walks every CPU's domains (~107 M instructions at the end of
    /// a 768-CPU run), and no other output depends on it.
    pub skip_schedstat_text: bool,
    /// Which run (0-based, in seed order) the instruments (`--trace`, `--explain`, the
    /// `--report` time series) record: `--run K` is `K - 1`; 0 by default.
    pub instrumented_run: usize,
    /// The machine imports and host settings the command's scenarios read once.
    pub imports: scenario::Imports,
}

impl RunContext {
    /// A context with a progress bar when stderr is a terminal.
    pub fn for_terminal() -> Self {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        RunContext {
            progress: terminal,
            lines: !terminal,
            ..RunContext::default()
        }
    }

    /// Whether a stop was requested.
    pub fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Print `msg` on stderr once per command (above the progress bar, if one is drawn).
    pub fn warn_once(&self, msg: String) {
        let mut seen = self.warned.lock().expect("warnings lock");
        if seen.contains(&msg) {
            return;
        }
        match self.bar.lock().expect("bar lock").as_ref() {
            Some(bar) => bar.println(format!("schedlab: warning: {msg}")),
            None => eprintln!("schedlab: warning: {msg}"),
        }
        seen.push(msg);
    }
}

/// The warnings a run's inputs deserve, printed once per command: the one-day default of a
/// benchmark without a timeout, and keys the simulated program ignores.
fn warn_about_inputs(ctx: &RunContext, scn: &Scenario, workload: &workloads::ResolvedWorkload) {
    if let Some(w) = endless_default_warning(scn, workload)
        && !ctx.endless_warned.swap(true, Ordering::Relaxed)
    {
        ctx.warn_once(w);
    }
    for w in ignored_input_warnings(workload) {
        ctx.warn_once(w);
    }
    if let Some(w) = cut_warmup_warning(scn, workload) {
        ctx.warn_once(w);
    }
}

/// The run ends (`[run] duration_s`) before the benchmark's own warm-up does (tbench's
/// `--warmup`, schbench's `-w`, the NUMA loads' `warmup_ms`): the engine never restarts the
/// statistics, so they cover the whole run, start included. Said, not refused: a short look
/// at a long benchmark is a legitimate run.
fn cut_warmup_warning(scn: &Scenario, workload: &workloads::ResolvedWorkload) -> Option<String> {
    let duration_s = scn.run.duration_s?;
    let warmup_ns = workload.warmup_ns;
    if warmup_ns == 0 || (duration_s * 1e9) as u64 > warmup_ns {
        return None;
    }
    Some(format!(
        "[run] duration_s = {duration_s} s ends the run inside the benchmark's own {} s \
         warm-up: its statistics cover the whole run, start included",
        warmup_ns as f64 / 1e9
    ))
}

/// One warning per input key the simulated program accepts but ignores, as the real one does
/// (rt-app's unknown global keys and legacy top-level `resources`): accepted, so the file
/// runs, but named, so a typo is not a silent no-op.
fn ignored_input_warnings(workload: &workloads::ResolvedWorkload) -> Vec<String> {
    match &workload.kind {
        workloads::WorkloadKind::Bench(spec) => match spec.as_ref() {
            crate::workload::WorkloadSpec::RtApp(rt) => (rt.ignored_keys.iter())
                .map(|k| {
                    format!(
                        "rt-app: key {} is ignored (rt-app accepts it without effect)",
                        crate::input::limits::clip(k)
                    )
                })
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Resolve `[machine]`: preset / host / file / snapshot / explicit table, then `offline`.
/// (Reads an import every time; [`scenario::resolve_machine_in`] reads each once per
/// command.)
pub fn resolve_machine(scn: &Scenario) -> InputResult<Machine> {
    let spec = &scn.machine;
    let mut machine = if let Some(table) = &spec.topology {
        crate::topology::file::from_table(
            table,
            scn.origin_of("machine.topology"),
            "machine.topology",
            "custom",
        )?
    } else {
        import_machine(scn)?
    };
    apply_offline(scn, &mut machine)?;
    Ok(machine)
}

/// The machine of `[machine]`'s `preset`, `sysfs_root` or `hwloc` (`host` when none is
/// given), before `offline`.
fn import_machine(scn: &Scenario) -> InputResult<Machine> {
    let spec = &scn.machine;
    let sysfs = spec.sysfs_root.as_deref().map(std::path::Path::new);
    let hwloc = spec.hwloc.as_deref().map(std::path::Path::new);
    let preset = if spec.preset.is_none() && sysfs.is_none() && hwloc.is_none() {
        Some("host")
    } else {
        spec.preset.as_deref()
    };
    crate::topology::resolve_machine_with(preset, sysfs, hwloc).map_err(|mut e| {
        if e.key.is_none() {
            e.key = Some("machine.preset".into());
        }
        e.origin = scn.origin_of("machine.preset").to_string();
        e
    })
}

/// `[machine] offline`, applied to `machine`.
fn apply_offline(scn: &Scenario, machine: &mut Machine) -> InputResult<()> {
    if let Some(list) = &scn.machine.offline {
        machine.set_offline(list).map_err(|e| {
            InputError::with_key(
                scn.origin_of("machine.offline"),
                "machine.offline",
                format!(
                    "{e}; accepted: a kernel cpulist of CPUs 0-{} leaving one online",
                    machine.nr_cpus() - 1
                ),
            )
        })?;
    }
    Ok(())
}

/// Where the scenario's machine comes from: `preset`, `host`, `sysfs`, `hwloc` or `file`
/// (a topology file or an explicit `[machine.topology]` table).
pub fn machine_source(scn: &Scenario) -> &'static str {
    let m = &scn.machine;
    if m.topology.is_some() {
        return "file";
    }
    if m.sysfs_root.is_some() {
        return "sysfs";
    }
    if m.hwloc.is_some() {
        return "hwloc";
    }
    match m.preset.as_deref() {
        None | Some("host") => "host",
        Some(p) if p.to_ascii_lowercase().ends_with(".xml") => "hwloc",
        Some(p) if p.to_ascii_lowercase().ends_with(".toml") => "file",
        Some(p) if std::path::Path::new(p).is_dir() => "sysfs",
        Some(_) => "preset",
    }
}

/// The first line of the text report: which machine (and where it came from), which kernel
/// profile with the features and tunables the scenario changed, which policy, which seeds.
pub fn setup_line(scn: &Scenario, machine: &Machine) -> String {
    let k = &scn.kernel;
    let mut kernel = format!(
        "kernel {} ({}",
        k.profile,
        format!("{:?}", k.mode).to_lowercase()
    );
    let features: Vec<String> = k
        .feature_overrides
        .iter()
        .map(|(f, &on)| if on { f.clone() } else { format!("NO_{f}") })
        .collect();
    if !features.is_empty() {
        kernel.push_str(&format!("; features {}", features.join(",")));
    }
    let sysctls: Vec<String> = k
        .sysctl_overrides
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if !sysctls.is_empty() {
        kernel.push_str(&format!("; sysctl {}", sysctls.join(",")));
    }
    kernel.push(')');
    let online = machine.online.weight();
    let offline = if online < machine.nr_cpus() {
        format!(", {online} online")
    } else {
        String::new()
    };
    let runs = scn.run.runs.max(1);
    format!(
        "schedlab: machine {} ({}; {} CPUs{offline}, {} node{}); {kernel}; policy {}; seed {}{}",
        crate::output::echo(&machine.name),
        machine_source(scn),
        machine.nr_cpus(),
        machine.nr_nodes(),
        if machine.nr_nodes() == 1 { "" } else { "s" },
        k.policy.name(),
        scn.run.seed,
        if runs > 1 {
            format!(", {runs} runs (run seeds derived from it)")
        } else {
            String::new()
        }
    )
}

/// The cost model: the machine's defaults, then `[machine.cost]` overrides, each checked
/// against what its key accepts ([`crate::cost::check_override`]): an error names the full
/// key (`machine.cost.idle_states[0].exit_latency_ns`), the value and what is accepted.
pub fn resolve_cost(scn: &Scenario, machine: &Machine) -> InputResult<CostModel> {
    // `host`: this machine's calibration (`schedlab calibrate`) under the scenario's own.
    let base = host::calibration::calibrated_defaults(machine)?;
    let Some(overrides) = &scn.machine.cost else {
        return Ok(base);
    };
    let mut table = match toml::Value::try_from(&base) {
        Ok(toml::Value::Table(t)) => t,
        _ => unreachable!("the cost model serializes to a table"),
    };
    for (k, v) in overrides {
        let origin = scn.origin_of(&format!("machine.cost.{k}"));
        let v = crate::cost::check_override("machine.cost", k, v)
            .map_err(|e| InputError::with_key(origin, e.path, e.message))?;
        table.insert(k.clone(), v);
    }
    // Checked above: this read fails only if a shape and the model disagree.
    let mut cost: CostModel =
        crate::input::keys::from_table(&table, "machine.cost", &|k| scn.origin_of(k).to_string())?;
    cost.resolve_nontask(machine.nr_cpus())
        .map_err(|(key, message)| {
            InputError::with_key(scn.origin_of("machine.cost.nontask_pct"), key, message)
        })?;
    check_cost_pcts(scn, &cost)?;
    Ok(cost)
}

/// The cost model's percentages (`speed_pct`, `af_unix_cost_pct`) are 1 to 100000 (a
/// calibration file's values included).
fn check_cost_pcts(scn: &Scenario, cost: &CostModel) -> InputResult<()> {
    for (key, pct) in [
        ("speed_pct", cost.speed_pct),
        ("af_unix_cost_pct", cost.af_unix_cost_pct),
    ] {
        if !(1..=100_000).contains(&pct) {
            return Err(InputError::with_key(
                scn.origin_of("machine.cost"),
                format!("machine.cost.{key}"),
                format!(
                    "{pct} is out of range; accepted: 1 to 100000 (percent of the reference CPU)"
                ),
            ));
        }
    }
    Ok(())
}

/// The scheduling policy a scenario selects.
pub fn make_policy(
    scn: &Scenario,
    machine: &Machine,
    cost: &CostModel,
    seed: u64,
) -> Box<dyn SchedPolicy> {
    match scn.kernel.policy {
        Policy::Fifo => Box::new(GlobalFifo::new(machine.nr_cpus())),
        Policy::LinuxFair => Box::new(crate::policy::linux_fair::LinuxFair::new(
            &scn.kernel,
            machine,
            cost,
            seed,
        )),
    }
}

/// Whether the scenario runs on this machine's own topology (`-m host`, or no machine).
pub fn is_host(scn: &Scenario) -> bool {
    let m = &scn.machine;
    m.preset.as_deref() == Some("host")
        || (m.preset.is_none()
            && m.sysfs_root.is_none()
            && m.hwloc.is_none()
            && m.topology.is_none())
}

/// On `host`, take HZ and the preemption model from the running kernel where they can be
/// read and the scenario did not set them.
pub fn with_host_kernel(scn: &Scenario) -> Option<(Scenario, crate::kconfig::host::HostKernel)> {
    if !is_host(scn) {
        return None;
    }
    let host = read_host();
    Some((host_adjusted(scn, &host), host))
}

/// The running kernel's settings, with a note on the cost calibration `-m host` applies.
pub fn read_host() -> crate::kconfig::host::HostKernel {
    let mut host = crate::kconfig::host::read();
    if let Ok((_, Some(note))) = host::calibration::for_this_host() {
        host.notes.push(note);
    }
    host
}

/// `scn` with HZ and the preemption model of the running kernel `host` where they were
/// read and the scenario did not set them.
fn host_adjusted(scn: &Scenario, host: &crate::kconfig::host::HostKernel) -> Scenario {
    let mut adjusted = scn.clone();
    let overridden = |k: &str| scn.kernel.sysctl_overrides.contains_key(k);
    if let Some(hz) = host.hz
        && !overridden("hz")
        && [100, 250, 300, 1000].contains(&hz)
    {
        adjusted.kernel.sysctl.hz = hz;
    }
    if let Some(p) = host.preempt
        && !overridden("preempt")
    {
        adjusted.kernel.sysctl.preempt = p;
    }
    adjusted
}

/// Engine parameters from the kernel and run settings.
pub fn engine_config(scn: &Scenario, seed: u64, default_duration_ns: u64) -> EngineConfig {
    let k = &scn.kernel;
    let duration_ns = scn
        .run
        .duration_s
        .map(|s| (s * 1e9) as u64)
        .unwrap_or(default_duration_ns);
    EngineConfig {
        hz: k.sysctl.hz,
        preempt: k.sysctl.preempt,
        ttwu_queue: k.sched_feat(crate::kconfig::features::Feature::TTWU_QUEUE),
        ttwu_queue_default: k.sched_feat(crate::kconfig::features::Feature::TTWU_QUEUE_DEFAULT),
        ttwu_queue_l2c: k.sched_feat(crate::kconfig::features::Feature::TTWU_QUEUE_L2C),
        ttwu_queue_on_cpu: k.sched_feat(crate::kconfig::features::Feature::TTWU_QUEUE_ON_CPU),
        ttwu_queue_delayed: k.sched_feat(crate::kconfig::features::Feature::TTWU_QUEUE_DELAYED),
        ttwu_queue_rule: crate::engine::TtwuQueueRule::for_version(k.version),
        fork_counts_as_migration: k.version < crate::kconfig::version::KernelVersion::new(4, 7),
        pipe_exclusive_waits: k.version >= crate::kconfig::features::PIPE_EXCLUSIVE_WAITS_SINCE,
        pipe_wake_on_free: k.sched_feat(crate::kconfig::features::Feature::PIPE_WAKE_ON_FREE),
        timer_slack_ns: 50_000,
        irq_time_accounting: k.sysctl.irq_time_accounting,
        migration_cost_ns: k.sysctl.sched_migration_cost_ns,
        duration_ns,
        warmup_ns: (scn.run.warmup_s * 1e9) as u64,
        seed,
        check_invariants: scn.run.invariants || crate::engine::invariants::env_requests_checks(),
        watchdog_panics: cfg!(debug_assertions),
        pingpong_window_ns: (scn.run.pingpong_window_ms * 1e6) as u64,
        noise: scn.run.noise,
    }
}

/// The results' `latency_us` (percentiles) and `latency_hist` (distributions) of a finished
/// run: `wakeup`, then the workload's own latency metrics by name.
type Latencies = (
    std::collections::BTreeMap<String, report::LatencyUs>,
    std::collections::BTreeMap<String, Vec<[u64; 2]>>,
);

fn latencies(engine: &Engine) -> Latencies {
    let (mut us, mut hist) = (Latencies::default().0, Latencies::default().1);
    us.insert(
        "wakeup".to_string(),
        report::latency_us(engine.wakeup_latency()),
    );
    hist.insert(
        "wakeup".to_string(),
        report::latency_hist(engine.wakeup_latency()),
    );
    us.insert(
        "schedule_delay".to_string(),
        report::latency_us(engine.schedule_delay()),
    );
    hist.insert(
        "schedule_delay".to_string(),
        report::latency_hist(engine.schedule_delay()),
    );
    for (name, h) in engine.metrics() {
        us.insert(name.to_string(), report::latency_us(h));
        hist.insert(name.to_string(), report::latency_hist(h));
    }
    (us, hist)
}

/// Run the scenario once with `seed`.
pub fn run_once(scn: &Scenario, seed: u64) -> InputResult<RunOutput> {
    run_once_with(scn, seed, Instruments::default()).map(|(r, _)| r)
}

/// Run the scenario once with `seed`, recording a trace and/or a task's decision history
/// (`--trace`, `--explain`). Returns the run and the `--explain` text.
pub fn run_once_with(
    scn: &Scenario,
    seed: u64,
    instruments: Instruments,
) -> InputResult<(RunOutput, Option<String>)> {
    run_once_in(&RunContext::default(), scn, seed, instruments)
}

/// The one-line warning for a run whose simulated length is a benchmark's one-day default
/// (stress-ng without `--timeout`/`-t` or `--cpu-ops`, and no `[run] duration_s`).
fn endless_default_warning(
    scn: &Scenario,
    workload: &workloads::ResolvedWorkload,
) -> Option<String> {
    if scn.run.duration_s.is_some() {
        return None;
    }
    let workloads::WorkloadKind::Bench(spec) = &workload.kind else {
        return None;
    };
    match spec.as_ref() {
        crate::workload::WorkloadSpec::StressNg(c)
            if c.timeout_s.is_none() && c.cpu_ops.is_none() =>
        {
            Some(format!(
                "stress-ng has no --timeout/-t: it runs for its default of one day ({} s of \
                 simulated time); set -t or [run] duration_s for a shorter run",
                crate::workload::stressng::DEFAULT_TIMEOUT_S
            ))
        }
        _ => None,
    }
}

/// [`run_once_with`] within a command's [`RunContext`]: the run stops early when a stop is
/// requested (then `complete` is false and a `--trace` is not kept), and advances the
/// context's progress counter as simulated time passes.
pub fn run_once_in(
    ctx: &RunContext,
    scn: &Scenario,
    seed: u64,
    instruments: Instruments,
) -> InputResult<(RunOutput, Option<String>)> {
    let resolved = ResolvedScenario::resolve(scn, &ctx.imports)?;
    run_resolved(ctx, &resolved, seed, instruments)
}

/// Run the resolved scenario once with `seed` within a command's [`RunContext`] (see
/// [`run_once_in`]).
pub fn run_resolved(
    ctx: &RunContext,
    resolved: &ResolvedScenario,
    seed: u64,
    mut instruments: Instruments,
) -> InputResult<(RunOutput, Option<String>)> {
    let scn = &resolved.scenario;
    let scenario::Instance {
        mut workload,
        cfg,
        policy,
    } = resolved.instantiate(seed)?;
    warn_about_inputs(ctx, scn, &workload);
    ctx.run_len_ns.fetch_max(cfg.duration_ns, Ordering::Relaxed);
    let started = Instant::now();
    let mut engine = start_engine(ctx, resolved, cfg, policy, &mut workload)?;
    let trace_label = instruments.trace.as_ref().map(|t| t.label.clone());
    let trace_pending = instruments.trace.as_mut().and_then(|t| t.pending.take());
    instruments.attach(&mut engine)?;
    engine.run();
    let complete = !engine.interrupted();
    ctx.runs_done
        .fetch_add(u64::from(complete), Ordering::Relaxed);
    let (explanation, timeline) =
        crate::stats::trace::detach_with_timeline(&mut engine, trace_label.as_deref())?;
    if let Some(pending) = trace_pending
        && complete
    {
        // The trace is renamed to its final name only when its run completed.
        pending.commit()?;
    }
    let wall_time_s = started.elapsed().as_secs_f64();
    let end = RunEnd {
        seed,
        wall_time_s,
        complete,
        timeline,
    };
    let output = run_output(ctx, resolved, &workload, &engine, end);
    Ok((output, explanation))
}

/// How one run ended: its seed, its host time, whether it completed, its time series.
struct RunEnd {
    seed: u64,
    wall_time_s: f64,
    complete: bool,
    timeline: Option<crate::stats::timeline::Timeline>,
}

/// The output of one finished run: its results and the text the CLI prints of it.
fn run_output(
    ctx: &RunContext,
    resolved: &ResolvedScenario,
    workload: &workloads::ResolvedWorkload,
    engine: &Engine,
    end: RunEnd,
) -> RunOutput {
    let scn = &resolved.scenario;
    let host_kernel = resolved.host_kernel.clone();
    let perf = report::perf_stat(engine);
    let (native_text, native_json, more_json, workload_complete) =
        workload_reports(scn, workload, engine);
    let migrations = report::migrations(engine);
    let schedstat = report::Schedstat::from_policy(engine.policy().report());
    let summary_line = summary_line(
        engine,
        &migrations,
        schedstat.as_ref(),
        host_kernel.as_ref(),
    );
    // `-m host`: say which idle states and governor the cpuidle model took from sysfs.
    let summary_line = match &resolved.host_idle_summary {
        Some(idle) => format!("{summary_line}\n{idle}"),
        None => summary_line,
    };
    let (seed, complete) = (end.seed, end.complete);
    let parts = ResultParts {
        end,
        perf,
        schedstat,
        migrations,
        native_json,
        more_json,
        host_kernel,
    };
    let result = run_result(engine, workload, parts);
    RunOutput {
        seed,
        result,
        perf,
        native_text,
        summary_line,
        invariant_violations: engine.invariant_violations().to_vec(),
        schedstat_text: if ctx.skip_schedstat_text {
            None
        } else {
            engine.schedstat_text()
        },
        complete,
        workload_complete,
        end_ns: engine.end_ns(),
        superseded_events: engine.superseded_events(),
    }
}

/// What `run_result` takes besides the engine and the workload: the parts computed before.
struct ResultParts {
    end: RunEnd,
    perf: PerfStat,
    schedstat: Option<report::Schedstat>,
    migrations: report::Migrations,
    native_json: Value,
    more_json: Vec<Value>,
    host_kernel: Option<crate::kconfig::host::HostKernel>,
}

/// The contract's `runs[]` entry of one finished run.
fn run_result(
    engine: &Engine,
    workload: &workloads::ResolvedWorkload,
    parts: ResultParts,
) -> RunResult {
    let ResultParts {
        end,
        perf,
        schedstat,
        migrations,
        native_json,
        more_json,
        host_kernel,
    } = parts;
    let wall_time_s = end.wall_time_s;
    let (latency_us, latency_hist) = latencies(engine);
    RunResult {
        seed: end.seed,
        sim_time_ns: engine.end_ns() - engine.stats_start_ns(),
        wall_time_s,
        events: engine.events(),
        sim_s_per_wall_s: if wall_time_s > 0.0 {
            (engine.end_ns() as f64 / 1e9) / wall_time_s
        } else {
            0.0
        },
        perf_stat: perf,
        schedstat,
        migrations,
        workload: report::WorkloadMetrics::from_value(native_json),
        more_workloads: more_json
            .into_iter()
            .map(report::WorkloadMetrics::from_value)
            .collect(),
        latency_us,
        latency_hist,
        cpus: report::cpus(engine),
        tasks: report::tasks(engine),
        all_tasks_exited: engine.all_exited(),
        invariant_violations: engine.invariant_violations().to_vec(),
        invariant_violations_dropped: (engine.invariant_violations_dropped() > 0)
            .then(|| engine.invariant_violations_dropped()),
        warnings: engine.warnings().to_vec(),
        host_kernel,
        placement: workload.placement.as_ref().map(|p| p.to_json()),
        timeline: end.timeline,
        vmstat: report::vmstat(engine),
        numa: report::numa(engine),
        background: report::background(engine),
    }
}

/// The engine of one run, its workload's plan taken out of `workload` (the rest of it
/// stays for the reports), set up for the run: NUMA settings, the stop/progress control,
/// the workload of each task when several run together, and the streaming hook of a
/// benchmark that prints as it runs, when it runs alone (two streams would interleave).
fn start_engine(
    ctx: &RunContext,
    resolved: &ResolvedScenario,
    cfg: EngineConfig,
    policy: Box<dyn SchedPolicy>,
    workload: &mut workloads::ResolvedWorkload,
) -> InputResult<Engine> {
    let scn = &resolved.scenario;
    let several = !workload.more.is_empty();
    let task_workloads = several.then(|| workload.task_workloads());
    let system_from = workload.system_from;
    let plan = std::mem::take(&mut workload.plan);
    let (machine, cost) = (resolved.machine.clone(), resolved.cost.clone());
    let mut engine = Engine::new(machine, cost, cfg, policy, plan)
        .map_err(|e| InputError::with_key(scn.origin_of("workload"), "workload", e.to_string()))?;
    engine.set_numa_kernel(&scn.kernel);
    engine.set_control(RunControl::new(ctx.shared.clone()));
    if let Some(of_task) = task_workloads {
        engine.set_task_workloads(of_task);
    }
    if let Some(from) = system_from {
        engine.set_system_tasks(from);
    }
    if let (Some(sink), workloads::WorkloadKind::Bench(spec), false) =
        (&ctx.stream, &workload.kind, several)
        && let Some(hook) = crate::workload::results::interval_hook(spec, &engine, sink.clone())
    {
        engine.set_interval_hook(hook);
    }
    Ok(engine)
}

/// The native report (text, JSON) and whether the run finished the benchmark
/// ([`Ending::finished`]: its work, or its own length). A benchmark that ends by itself has
/// `workload.complete` in its JSON; one that did not finish has `"complete": false` and a
/// line saying so, and why, at the end of its native report.
fn workload_completion(
    scn: &Scenario,
    kind: &workloads::WorkloadKind,
    ending: Ending,
    run: &RunView,
) -> (String, Value, bool) {
    let all_exited = || {
        run.tasks()
            .iter()
            .all(|t| t.state == crate::task::TaskState::Dead)
    };
    let cut =
        matches!(ending, Ending::After(_)) && !ending.finished(run.end_ns(), None, all_exited());
    let (mut text, mut json) = workloads::native_report(kind, run, cut);
    let reported = json.get("complete").and_then(Value::as_bool);
    let complete = !cut && ending.finished(run.end_ns(), reported, all_exited());
    if let Some(obj) = json.as_object_mut()
        && (ending == Ending::Work || !complete)
    {
        obj.insert("complete".into(), Value::Bool(complete));
    }
    if !complete {
        let own = match ending {
            Ending::After(ns) => format!(", before its own length of {} s", ns as f64 / 1e9),
            _ => String::new(),
        };
        text.push_str(&format!(
            "schedlab: the benchmark did not finish: {}{own}\n",
            cut_cause(scn, run.end_ns())
        ));
    }
    (text, json, complete)
}

/// The native reports of a run's workloads (text, the first's JSON, the others' JSON) and
/// whether every one that ends by itself finished. With one workload, its report as
/// [`workload_completion`] makes it; with several, each from its own share of the run
/// ([`RunView::part`]) under a `== workload N: ...` line, each later one's JSON with its
/// `placement`.
fn workload_reports(
    scn: &Scenario,
    workload: &workloads::ResolvedWorkload,
    engine: &Engine,
) -> (String, Value, Vec<Value>, bool) {
    let w = workload;
    if w.more.is_empty() {
        let (text, json, complete) =
            workload_completion(scn, &w.kind, w.ending, &RunView::whole(engine));
        return (text, json, Vec::new(), complete);
    }
    let sections = std::iter::once(&scn.workload).chain(&scn.more_workloads);
    let firsts = std::iter::once((&w.kind, w.ending, &w.placement));
    let others = w.more.iter().map(|m| (&m.kind, m.ending, &m.placement));
    let mut text = String::new();
    let (mut first_json, mut more_json, mut all_complete) = (Value::Null, Vec::new(), true);
    for ((part, section), (kind, ending, placement)) in
        w.parts.iter().zip(sections).zip(firsts.chain(others))
    {
        let (t, mut json, complete) =
            workload_completion(scn, kind, ending, &RunView::part(engine, part));
        let what = section
            .command
            .as_deref()
            .or(section.kind.as_deref())
            .unwrap_or("");
        text.push_str(&format!(
            "== workload {}: {}\n{t}",
            part.index + 1,
            crate::input::limits::clip(what)
        ));
        all_complete &= complete;
        match part.index {
            0 => first_json = json,
            _ => {
                if let Some(obj) = json.as_object_mut() {
                    let p = placement.as_ref().map_or(Value::Null, |p| p.to_json());
                    obj.insert("placement".into(), p);
                }
                more_json.push(json);
            }
        }
    }
    (text, first_json, more_json, all_complete)
}

/// Why a run of a benchmark that ends by itself ended first: `run.duration_s` (the user's
/// cut) or the default simulated-time cap.
pub fn cut_cause(scn: &Scenario, end_ns: u64) -> String {
    let at = end_ns as f64 / 1e9;
    match scn.run.duration_s {
        Some(d) => format!("the run was cut at {at} s of simulated time by run.duration_s = {d}"),
        None => format!(
            "the run reached the {} s simulated-time cap at {at} s before it ended (set \
             run.duration_s to cut it on purpose)",
            workloads::FINITE_CAP_NS / 1_000_000_000
        ),
    }
}

/// The one-line run summary: migrations by reason (rare reasons only when they happened),
/// newly-idle balance passes, ping-pongs and wakeup latency, and the host kernel's notes.
fn summary_line(
    engine: &Engine,
    migrations: &report::Migrations,
    schedstat: Option<&report::Schedstat>,
    host_kernel: Option<&crate::kconfig::host::HostKernel>,
) -> String {
    let newidle = |counter| schedstat.map_or(0, |s| s.idle_type("newly_idle", counter));
    // Reasons that are zero in most runs are shown only when they happened.
    use crate::sched::types::MigrationReason as R;
    let extra_reasons: String = [R::Affinity, R::Exec, R::Numa, R::NumaSwap, R::Dispatch]
        .iter()
        .filter_map(|&r| {
            let n = migrations.reason(r);
            (n > 0).then(|| format!(", {} {n}", r.name()))
        })
        .collect();
    format!(
        "migrations: {} (wakeup {}, fork {}, load_balance {}, newidle_balance {}, \
         nohz_idle_balance {}, active_balance {}{extra_reasons}); newly-idle balance passes {} \
         (gained {}); ping-pong {}; wakeup latency p50 {:.1} us p99 {:.1} us{}",
        migrations.total,
        migrations.reason(R::Wakeup),
        migrations.reason(R::Fork),
        migrations.reason(R::LoadBalance),
        migrations.reason(R::NewidleBalance),
        migrations.reason(R::NohzIdleBalance),
        migrations.reason(R::ActiveBalance),
        newidle("lb_count"),
        newidle("lb_gained"),
        migrations.ping_pong,
        engine.wakeup_latency().percentile(50.0) as f64 / 1e3,
        engine.wakeup_latency().percentile(99.0) as f64 / 1e3,
        host_kernel
            .map(|h| format!(
                "\nhost kernel {}: {}",
                h.release.as_deref().unwrap_or("?"),
                h.notes.join("; ")
            ))
            .unwrap_or_default(),
    )
}

/// [`run_all`], with `instruments` recording the first run only (the others run alongside).
/// Returns the runs and the `--explain` text.
pub fn run_all_with(
    scn: &Scenario,
    instruments: Instruments,
) -> InputResult<(Vec<RunOutput>, Option<String>)> {
    run_all_in(&RunContext::for_terminal(), scn, instruments)
}

/// [`run_all_with`] within a [`RunContext`]. After a stop request, only the runs that
/// completed are returned (in seed order); see [`RunContext::stopped`].
pub fn run_all_in(
    ctx: &RunContext,
    scn: &Scenario,
    instruments: Instruments,
) -> InputResult<(Vec<RunOutput>, Option<String>)> {
    run_all_streamed(ctx, scn, instruments, None)
}

/// [`run_all_in`], handing each completed run to `stream` (when given) in seed order as
/// soon as it and its predecessors have finished; the runs returned are what `stream`
/// gave back for them (see [`ResultsStream::push`]).
pub fn run_all_streamed(
    ctx: &RunContext,
    scn: &Scenario,
    instruments: Instruments,
    stream: Option<&mut ResultsStream>,
) -> InputResult<(Vec<RunOutput>, Option<String>)> {
    let resolved = ResolvedScenario::resolve(scn, &ctx.imports)?;
    run_resolved_streamed(ctx, &resolved, instruments, stream)
}

/// [`run_all_streamed`] of a scenario resolved beforehand (`schedlab run` resolves it
/// before it prints anything).
pub fn run_resolved_streamed(
    ctx: &RunContext,
    scn: &ResolvedScenario,
    instruments: Instruments,
    stream: Option<&mut ResultsStream>,
) -> InputResult<(Vec<RunOutput>, Option<String>)> {
    let seeds: Vec<u64> = (0..scn.scenario.run.runs.max(1) as u64)
        .map(|i| crate::rng::run_seed(scn.scenario.run.seed, i))
        .collect();
    let order = Mutex::new(InOrder::new(stream));
    if instruments.is_empty() {
        with_progress(ctx, "runs", seeds.len(), || {
            run_seeds_ordered(ctx, scn, &seeds, 0, &order)
        });
        return order
            .into_inner()
            .expect("run order lock")
            .finish()
            .map(|r| (r, None));
    }
    let k = ctx.instrumented_run.min(seeds.len() - 1);
    let explanation = with_progress(ctx, "runs", seeds.len(), || {
        let (first, ()) = rayon::join(
            || {
                let r = run_resolved(ctx, scn, seeds[k], instruments);
                let (r, explanation) = match r {
                    Ok((r, e)) => (Ok(Some(r)), e),
                    Err(e) => (Err(e), None),
                };
                order.lock().expect("run order lock").done(k, r);
                explanation
            },
            || {
                run_seeds_ordered(ctx, scn, &seeds[..k], 0, &order);
                run_seeds_ordered(ctx, scn, &seeds[k + 1..], k + 1, &order);
            },
        );
        first
    });
    let runs = order.into_inner().expect("run order lock").finish()?;
    Ok((runs, explanation))
}

/// Finished runs put back in seed order: a run that finishes before its predecessors
/// waits here only until they have finished; then, in order, each completed run goes to
/// the stream (or straight to the result list). Incomplete and skipped runs are dropped;
/// the first error in seed order ends the list (later runs are dropped).
struct InOrder<'s> {
    next: usize,
    pending: std::collections::BTreeMap<usize, InputResult<Option<RunOutput>>>,
    runs: Vec<RunOutput>,
    stream: Option<&'s mut ResultsStream>,
    error: Option<InputError>,
}

impl<'s> InOrder<'s> {
    fn new(stream: Option<&'s mut ResultsStream>) -> Self {
        InOrder {
            next: 0,
            pending: Default::default(),
            runs: Vec::new(),
            stream,
            error: None,
        }
    }

    /// Run `index` finished (`Ok(None)`: skipped after a stop request).
    fn done(&mut self, index: usize, run: InputResult<Option<RunOutput>>) {
        self.pending.insert(index, run);
        while let Some(run) = self.pending.remove(&self.next) {
            self.next += 1;
            if self.error.is_some() {
                continue;
            }
            let run = match run {
                Ok(Some(r)) if r.complete => r,
                Ok(_) => continue,
                Err(e) => {
                    self.error = Some(e);
                    continue;
                }
            };
            let kept = match self.stream.as_deref_mut() {
                Some(stream) => stream.push(run),
                None => Ok(run),
            };
            match kept {
                Ok(r) => self.runs.push(r),
                Err(e) => self.error = Some(e),
            }
        }
    }

    fn finish(self) -> InputResult<Vec<RunOutput>> {
        debug_assert!(self.pending.is_empty(), "runs left out of order");
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.runs),
        }
    }
}

/// Run `scn` once per seed in parallel; run `i` is `first_index + i` of `order`. Runs
/// start in seed order (each worker takes the next seed), so at most one run per worker
/// waits in `order` for a predecessor.
fn run_seeds_ordered(
    ctx: &RunContext,
    scn: &ResolvedScenario,
    seeds: &[u64],
    first_index: usize,
    order: &Mutex<InOrder>,
) {
    use rayon::prelude::*;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, seeds.len().max(1));
    (0..workers).into_par_iter().for_each(|_| {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&seed) = seeds.get(i) else { return };
            let r = if ctx.stopped() {
                Ok(None)
            } else {
                run_resolved(ctx, scn, seed, Instruments::default()).map(|(r, _)| Some(r))
            };
            order
                .lock()
                .expect("run order lock")
                .done(first_index + i, r);
        }
    });
}

/// The `runs[]` entries of a results document, written (in serde_json's pretty layout,
/// byte for byte what [`results_json_stopped`] gives) to an unnamed scratch file as each
/// run finishes; [`ResultsStream::finish`] assembles the document around them. What stays
/// in memory per run is what the text report, the summary and `--schedstat`/`--vmstat`
/// need (see [`ResultsStream::push`]), so memory does not grow with the task count of
/// the runs' JSON nor with `--runs`.
pub struct ResultsStream {
    option: &'static str,
    /// The scratch file of the `runs[]` entries; `None`: no results document is written
    /// (`run` without `--json`), finished runs are only slimmed.
    runs: Option<std::io::BufWriter<std::fs::File>>,
    count: usize,
    /// The first run's resolved placement (the document's `scenario.workload.placement`).
    placement: Option<Value>,
    /// Keep every run whole (a `--report` is built from the whole document).
    keep_whole: bool,
    /// How deep the `runs[]` entries sit: 4 in a document of its own (`run --json`).
    entry_indent: usize,
    /// The pushed runs' metrics: the document's `summary` and `compare`'s tables.
    columns: MetricColumns,
}

impl ResultsStream {
    /// A stream whose scratch file lives in `dir`; errors name `option`.
    pub fn new(option: &'static str, dir: &std::path::Path, keep_whole: bool) -> InputResult<Self> {
        let file = crate::output::scratch_file(dir).map_err(|e| {
            InputError::with_key(
                option,
                dir.display().to_string(),
                format!("cannot write: {e}"),
            )
        })?;
        Ok(ResultsStream {
            option,
            runs: Some(std::io::BufWriter::with_capacity(1 << 16, file)),
            count: 0,
            placement: None,
            keep_whole,
            entry_indent: 4,
            columns: MetricColumns::default(),
        })
    }

    /// A stream whose document will be written at `indent` (see
    /// [`ResultsStream::finish_at`]).
    pub fn nested(mut self, indent: usize) -> Self {
        self.entry_indent = indent + 4;
        self
    }

    /// A stream that writes nothing: finished runs are slimmed as [`ResultsStream::push`]
    /// slims them (for `run` without `--json`: memory flat in `--runs`).
    pub fn slim_only() -> Self {
        ResultsStream {
            option: "run",
            runs: None,
            count: 0,
            placement: None,
            keep_whole: false,
            entry_indent: 4,
            columns: MetricColumns::default(),
        }
    }

    fn io_error(&self, e: std::io::Error) -> InputError {
        InputError::new(self.option, format!("cannot write the results: {e}"))
    }

    /// The pushed runs' metrics, in seed order.
    pub fn columns(&self) -> &MetricColumns {
        &self.columns
    }

    /// The summary over the pushed runs (what [`summarize`] gives for them whole).
    pub fn summary(&self) -> std::collections::BTreeMap<String, Summary> {
        self.columns.summaries()
    }

    /// Write `run`'s `runs[]` entry and add its metrics to the columns; return the run
    /// slimmed (unless kept whole) to what the text reports need: its seed, perf counters,
    /// native report, summary line, first invariant violations, and for the first run its
    /// schedstat text, `vmstat` and workload kind. The summary and `compare`'s tables come
    /// from [`ResultsStream::columns`], not from slimmed runs.
    pub fn push(&mut self, mut run: RunOutput) -> InputResult<RunOutput> {
        if self.count == 0 {
            self.placement = run.result.placement.clone();
        }
        let tasks = std::mem::take(&mut run.result.tasks);
        if let Some(out) = self.runs.as_mut() {
            let written =
                write_run_entry(out, self.count == 0, &run.result, &tasks, self.entry_indent);
            written.map_err(|e| self.io_error(e))?;
        }
        self.count += 1;
        self.columns.push_run(run.result.metrics());
        if self.keep_whole {
            run.result.tasks = tasks;
            return Ok(run);
        }
        drop(tasks);
        let first = self.count == 1;
        let r = &mut run.result;
        r.cpus = Vec::new();
        r.timeline = None;
        r.latency_hist = Default::default();
        r.latency_us = Default::default();
        r.placement = None;
        r.numa = None;
        r.schedstat = None;
        r.migrations = Default::default();
        r.invariant_violations = Vec::new();
        run.invariant_violations.truncate(10);
        if !first {
            r.workload = Default::default();
            r.vmstat = None;
            run.schedstat_text = None;
        }
        Ok(run)
    }

    /// Write the whole document (what `serde_json::to_string_pretty` gives for
    /// [`results_json_stopped`] over the pushed runs kept whole, and a newline) to `out`:
    /// the keys around `runs` from the scenario and the columns, `runs` copied from the
    /// scratch file.
    pub fn finish(
        self,
        scn: &Scenario,
        stopped: Option<&str>,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        self.finish_at(scn, stopped, out, 0)?;
        out.write_all(b"\n")
    }

    /// [`ResultsStream::finish`] for a document nested in another one (`compare`'s
    /// `variants[].results`): written as serde_json's pretty layout places it at `indent`
    /// spaces, without the final newline. The scratch file must have been written at that
    /// depth (see [`ResultsStream::nested`]).
    pub fn finish_at(
        self,
        scn: &Scenario,
        stopped: Option<&str>,
        out: &mut dyn std::io::Write,
        indent: usize,
    ) -> std::io::Result<()> {
        debug_assert_eq!(
            indent + 4,
            self.entry_indent,
            "entries written at another depth"
        );
        let head = results_json_head(scn, self.placement.as_ref(), self.summary(), stopped);
        let Some(runs_file) = self.runs else {
            return Err(std::io::Error::other("no results were written"));
        };
        let mut scratch = runs_file.into_inner().map_err(|e| e.into_error())?;
        let Value::Object(map) = head else {
            unreachable!("the results document is an object")
        };
        let mut doc = crate::output::PrettyContainer::object(out, indent)?;
        for (key, value) in &map {
            if key != "runs" {
                doc.member(key, value)?;
                continue;
            }
            let (out, _) = doc.key("runs")?;
            if self.count == 0 {
                out.write_all(b"[]")?;
                continue;
            }
            use std::io::Seek;
            out.write_all(b"[\n")?;
            scratch.seek(std::io::SeekFrom::Start(0))?;
            std::io::copy(&mut scratch, out)?;
            out.write_all(b"\n")?;
            out.write_all(" ".repeat(indent + 2).as_bytes())?;
            out.write_all(b"]")?;
        }
        doc.end()
    }
}

/// One `runs[]` entry at its place in the document (`indent` spaces deep, after a `,`
/// unless `first`): `result` with its `tasks` streamed one by one from `tasks`.
fn write_run_entry(
    out: &mut dyn std::io::Write,
    first: bool,
    result: &RunResult,
    tasks: &[report::TaskResult],
    indent: usize,
) -> std::io::Result<()> {
    debug_assert!(result.tasks.is_empty());
    if !first {
        out.write_all(b",\n")?;
    }
    out.write_all(" ".repeat(indent).as_bytes())?;
    let Value::Object(map) = result.to_json() else {
        unreachable!("a run result is an object")
    };
    let mut entry = crate::output::PrettyContainer::object(out, indent)?;
    for (key, value) in &map {
        if key != "tasks" {
            entry.member(key, value)?;
            continue;
        }
        let (out, inner) = entry.key("tasks")?;
        let mut list = crate::output::PrettyContainer::array(out, inner)?;
        for t in tasks {
            list.element(&serde_json::to_value(t).map_err(std::io::Error::other)?)?;
        }
        list.end()?;
    }
    entry.end()
}

/// Run the scenario `scn.run.runs` times with seeds derived from `scn.run.seed`. Runs are
/// independent simulations, so they run in parallel across cores (rayon); results come back
/// in seed order whatever the thread timing. A progress bar is drawn on stderr only when it
/// is a terminal.
pub fn run_all(scn: &Scenario) -> InputResult<Vec<RunOutput>> {
    let seeds: Vec<u64> = (0..scn.run.runs.max(1) as u64)
        .map(|i| crate::rng::run_seed(scn.run.seed, i))
        .collect();
    run_seeds(scn, &seeds, "runs")
}

/// Run `scn` once per seed, in parallel, in seed order.
pub fn run_seeds(scn: &Scenario, seeds: &[u64], label: &str) -> InputResult<Vec<RunOutput>> {
    run_seeds_in(&RunContext::for_terminal(), scn, seeds, label)
}

/// [`run_seeds`] within a [`RunContext`]: runs not yet started when a stop is requested are
/// skipped, and only completed runs are returned.
pub fn run_seeds_in(
    ctx: &RunContext,
    scn: &Scenario,
    seeds: &[u64],
    label: &str,
) -> InputResult<Vec<RunOutput>> {
    let resolved = ResolvedScenario::resolve(scn, &ctx.imports)?;
    run_resolved_seeds_in(ctx, &resolved, seeds, label)
}

/// [`run_seeds_in`] on a scenario already resolved (so that a caller can resolve all its
/// scenarios, and report any error, before the first run).
pub fn run_resolved_seeds_in(
    ctx: &RunContext,
    resolved: &ResolvedScenario,
    seeds: &[u64],
    label: &str,
) -> InputResult<Vec<RunOutput>> {
    with_progress(ctx, label, seeds.len(), || {
        let mut runs = run_seeds_quiet(ctx, resolved, seeds)?;
        runs.retain(|r| r.complete);
        Ok(runs)
    })
}

/// Run every scenario of `scns` (the variants of `compare`) on every seed of `seeds` in one
/// parallel pool: the (variant, seed) runs are independent, so the pool stays busy across
/// variants instead of draining at the end of each. Returns, per scenario in order, its
/// completed runs in seed order; runs not yet started when a stop is requested are skipped.
/// Each run is the same as [`run_seeds_in`]'s (same scenario, same seed): results identical.
pub fn run_variants_in(
    ctx: &RunContext,
    scns: &[&Scenario],
    seeds: &[u64],
    label: &str,
) -> InputResult<Vec<Vec<RunOutput>>> {
    let streams: Vec<Option<&mut ResultsStream>> = scns.iter().map(|_| None).collect();
    run_variants_streamed(ctx, scns, seeds, label, streams)
}

/// [`run_variants_in`], handing each variant's completed runs to its stream (when given)
/// in seed order as they finish (see [`run_all_streamed`]): jobs start in (variant, seed)
/// order, so at most one run per worker waits for a predecessor. The first error (in
/// variant order, then seed order) is returned.
pub fn run_variants_streamed(
    ctx: &RunContext,
    scns: &[&Scenario],
    seeds: &[u64],
    label: &str,
    streams: Vec<Option<&mut ResultsStream>>,
) -> InputResult<Vec<Vec<RunOutput>>> {
    use rayon::prelude::*;
    debug_assert_eq!(scns.len(), streams.len());
    let orders: Vec<Mutex<InOrder>> = streams
        .into_iter()
        .map(|s| Mutex::new(InOrder::new(s)))
        .collect();
    // Every variant resolved (and so checked) before the first run starts.
    let resolved: Vec<ResolvedScenario> = (scns.iter())
        .map(|scn| ResolvedScenario::resolve(scn, &ctx.imports))
        .collect::<InputResult<_>>()?;
    let jobs = scns.len() * seeds.len();
    with_progress(ctx, label, jobs, || {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = rayon::current_num_threads().clamp(1, jobs.max(1));
        (0..workers).into_par_iter().for_each(|_| {
            loop {
                let job = next.fetch_add(1, Ordering::Relaxed);
                if job >= jobs {
                    return;
                }
                let (v, i) = (job / seeds.len(), job % seeds.len());
                let r = if ctx.stopped() {
                    Ok(None)
                } else {
                    run_resolved(ctx, &resolved[v], seeds[i], Instruments::default())
                        .map(|(r, _)| Some(r))
                };
                orders[v].lock().expect("run order lock").done(i, r);
            }
        });
    });
    orders
        .into_iter()
        .map(|o| o.into_inner().expect("run order lock").finish())
        .collect()
}

fn run_seeds_quiet(
    ctx: &RunContext,
    resolved: &ResolvedScenario,
    seeds: &[u64],
) -> InputResult<Vec<RunOutput>> {
    let order = Mutex::new(InOrder::new(None));
    run_seeds_ordered(ctx, resolved, seeds, 0, &order);
    order.into_inner().expect("run order lock").finish()
}

/// Run `work` (`runs` runs of one scenario) with a progress bar on stderr (when
/// `ctx.progress`) that ticks with the simulated time the runs have covered, out of the
/// simulated time they will cover (their length: `[run] duration_s` or the benchmark's own;
/// a benchmark that ends by itself, like hackbench, ends before its cap).
fn with_progress<T>(ctx: &RunContext, label: &str, runs: usize, work: impl FnOnce() -> T) -> T {
    if ctx.quiet {
        return work();
    }
    if !ctx.progress {
        return with_progress_lines(ctx, label, runs, work);
    }
    let bar = indicatif::ProgressBar::new(1);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {percent:>3}%, {elapsed}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let start_progress = ctx.shared.progress_ns.load(Ordering::Relaxed);
    ctx.run_len_ns.store(0, Ordering::Relaxed);
    ctx.bar_runs.store(runs as u64, Ordering::Relaxed);
    *ctx.bar.lock().expect("bar lock") = Some(bar.clone());
    let done = AtomicBool::new(false);
    let tick = || {
        let p_ns = ctx.shared.progress_ns.load(Ordering::Relaxed) - start_progress;
        let len_ns = (ctx.run_len_ns.load(Ordering::Relaxed)
            * ctx.bar_runs.load(Ordering::Relaxed))
        .max(p_ns);
        bar.set_length((len_ns / 1_000_000).max(1));
        bar.set_position(p_ns / 1_000_000);
        bar.set_message(format!(
            "{label}: {:.3} of {:.3} s simulated",
            p_ns as f64 / 1e9,
            len_ns as f64 / 1e9
        ));
    };
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                tick();
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    });
    *ctx.bar.lock().expect("bar lock") = None;
    bar.finish_and_clear();
    out
}

/// The longest wall time between two progress lines off a terminal.
pub const PROGRESS_LINE_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// `with_progress` off a terminal: a line on stderr each time runs have finished (when
/// there are several) and every [`PROGRESS_LINE_EVERY`] otherwise (only when `ctx.lines`).
/// `sweep run` prints its progress with it too.
pub fn with_progress_lines<T>(
    ctx: &RunContext,
    label: &str,
    runs: usize,
    work: impl FnOnce() -> T,
) -> T {
    if !ctx.lines {
        return work();
    }
    let start = Instant::now();
    let done_at_start = ctx.runs_done.load(Ordering::Relaxed);
    let sim_at_start = ctx.shared.progress_ns.load(Ordering::Relaxed);
    let done = AtomicBool::new(false);
    let report = |last_round: bool| {
        let finished = ctx.runs_done.load(Ordering::Relaxed);
        let mut last = ctx.last_line.lock().expect("progress line lock");
        let (at, seen) = last.unwrap_or((start, done_at_start));
        // A finished run is news when there are several; otherwise only the 10 s lines.
        let news = finished != seen && runs > 1;
        if !news && (last_round || at.elapsed() < PROGRESS_LINE_EVERY) {
            return;
        }
        *last = Some((Instant::now(), finished));
        let sim_ns = ctx.shared.progress_ns.load(Ordering::Relaxed) - sim_at_start;
        eprintln!(
            "schedlab: {label}: {} of {runs} runs finished, {:.3} s simulated, {:.0} s elapsed",
            (finished - done_at_start).min(runs as u64),
            sim_ns as f64 / 1e9,
            start.elapsed().as_secs_f64()
        );
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                report(false);
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            report(true);
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        out
    })
}

/// The summary over runs: mean / stdev / CV / min / max / P90 of every numeric metric of
/// `perf_stat`, `migrations`, `workload`, `latency_us` and `schedstat`
/// ([`RunResult::metrics`]), by dotted path.
pub fn summarize(runs: &[RunOutput]) -> std::collections::BTreeMap<String, Summary> {
    MetricColumns::of(runs.iter().map(|r| r.result.metrics())).summaries()
}

/// The full results document. The scenario block gains `workload.placement`, the resolved
/// placement (prefixes and keys checked against the machine), when there is one.
pub fn results_json(scn: &Scenario, runs: &[RunOutput]) -> Value {
    results_json_stopped(scn, runs, None)
}

/// [`results_json`] with the top-level completion keys: `"complete": true` normally;
/// `"complete": false` and `"stopped_reason": "SIGINT"` (or `SIGTERM`) when a signal stopped
/// the runs and `runs` holds only those that finished.
pub fn results_json_stopped(scn: &Scenario, runs: &[RunOutput], stopped: Option<&str>) -> Value {
    let placement = runs.first().and_then(|r| r.result.placement.as_ref());
    let mut doc = results_json_head(scn, placement, summarize(runs), stopped);
    doc["runs"] = Value::Array(runs.iter().map(|r| r.result.to_json()).collect());
    doc
}

/// The results document with an empty `runs` list: the scenario (with the first run's
/// `placement`), the completion keys and the summary over the runs.
fn results_json_head(
    scn: &Scenario,
    placement: Option<&Value>,
    summary: std::collections::BTreeMap<String, Summary>,
    stopped: Option<&str>,
) -> Value {
    let mut scenario = serde_json::to_value(scn).expect("the scenario serializes");
    if let Some(p) = placement
        && !p.is_null()
    {
        scenario["workload"]["placement"] = p.clone();
    }
    let mut doc = json!({
        "schedlab_version": SCHEDLAB_VERSION,
        "complete": stopped.is_none(),
        "scenario": scenario,
        "runs": [],
        "summary": summary,
    });
    if let Some(reason) = stopped {
        doc["stopped_reason"] = json!(reason);
    }
    doc
}
