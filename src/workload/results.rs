//! Benchmark-native results of a finished run: each benchmark's result struct filled from the
//! engine, its exact native report (`format_report` of the benchmark module) and the
//! contract's benchmark-native JSON keys (ARCHITECTURE.md §3: hackbench `time_s`; schbench
//! `rps_avg`, `wakeup_latency_us.{p50,p90,p99,p99.9}`, `request_latency_us.{...}`; stress-ng
//! `bogo_ops`, `bogo_ops_per_s`; netperf/tbench `throughput`; all with `kind`).
//!
//! What is read from where (the generators in [`crate::workload::generate`] set it up):
//! - hackbench: metric `time` (parent's start mark → all children reaped), exact (the
//!   histogram's sum); µs resolution like `gettimeofday`.
//! - perf bench sched pipe: metric `time` (before the fork/create → workers reaped), exact,
//!   at µs resolution; round trips from the op counter (worker 1 counts each).
//! - schbench: metrics `wakeup_latency`/`request_latency` re-bucketed into the program's own
//!   histogram ([`PlatHistogram`]) at µs resolution — each engine bucket (≤ 0.8 % wide) goes
//!   to its midpoint rounded to the µs, and 0 µs samples are dropped as the program drops
//!   `delta == 0`; RPS samples, `warmup done` and interval reports from the statistics
//!   thread's once-a-second snapshots; `loop_count` from the op counter (never reset, like
//!   the program's); sched delay from each thread's run delay / times scheduled in
//!   (`/proc/<tid>/schedstat`).
//! - stress-ng: each instance's call counter semaphore (bogo ops = the counter after that
//!   many calls of the method cycle), its CPU time, and its wall time (metric
//!   `instance_wall` at exit, else until the run ended).
//! - netperf/tbench: transactions counted since the statistics start, over that interval.
//! - web: metric `response` (arrival stamp → end of the request, [`crate::workload::web`]),
//!   requests counted since the statistics start, over that interval.
//! - jbb: transactions counted since the statistics start over that interval (`bops`); GC
//!   pauses from metric `gc_pause`.
//! - stream: each kernel's metric (barrier to barrier, thread 0) — passes and total time;
//!   the total rate is all completed kernels' bytes over the statistics interval.
//! - linpack: op counter in units of `FLOPS_PER_OP` flops, over the statistics interval.
//! - rt-app: rt-app prints nothing of its own on stdout (its results are per-thread log
//!   files); we print one summary line per thread (runtime, wakeups, run delay).

use serde_json::{Value, json};

use crate::engine::Engine;
use crate::hist::Histogram;
use crate::task::TaskState;
use crate::workload::WorkloadSpec;
use crate::workload::generate::{
    hackbench as ghb, jbb as gjbb, netperf as gnp, schbench as gsb, sched_pipe as gsp,
    stressng as gsn, web as gweb,
};
use crate::workload::hackbench::{self, HackbenchConfig, HackbenchResult};
use crate::workload::netperf::{
    self, NetperfRrConfig, NetperfRrResult, RrFlavor, TBENCH_PAYLOAD_BYTES,
};
use crate::workload::rtapp::RtAppSpec;
use crate::workload::schbench::{
    self, Interim2021LogEntry, PLIST_CLASSIC, PLIST_CURRENT, PlatHistogram, SchbenchClassicResult,
    SchbenchConfig, SchbenchInterim2021Result, SchbenchInterval, SchbenchLogEntry, SchbenchResult,
    SchbenchVersion,
};
use crate::workload::sched_pipe::{self, SchedPipeConfig, SchedPipeResult};
use crate::workload::stressng::{self, StressNgConfig, StressNgInstance, StressNgResult};
use crate::workload::view::RunView;
use crate::workload::{jbb, linpack, stream, web};

/// The `[PID]` stress-ng prints: a fixed simulated pid keeps the output deterministic.
pub const SIMULATED_PID: u32 = 4242;

/// The benchmark's native report text and its JSON metrics (`"workload"` in the results).
/// `cut`: the run ended before the benchmark's own length
/// ([`crate::workload::generate::Ending::After`]); a report that states its runtime (schbench)
/// then gives the simulated one, and its rates are over that time.
pub fn native_report(spec: &WorkloadSpec, run: &RunView, cut: bool) -> (String, Value) {
    let cut_runtime_s = cut.then(|| run.end_ns() as f64 / 1e9);
    match spec {
        WorkloadSpec::Hackbench(c) => hackbench_report(c, run),
        WorkloadSpec::SchedPipe(c) => sched_pipe_report(c, run),
        WorkloadSpec::Schbench(c) if c.version == SchbenchVersion::Current => {
            schbench_report(c, run, cut_runtime_s)
        }
        WorkloadSpec::Schbench(c) if c.version == SchbenchVersion::Interim2021 => {
            schbench_interim2021_report(c, run, cut_runtime_s)
        }
        WorkloadSpec::Schbench(c) => schbench_classic_report(c, run, cut_runtime_s),
        WorkloadSpec::StressNg(c) => stressng_report(c, run),
        WorkloadSpec::NetperfRr(c) => netperf_report(c, run),
        WorkloadSpec::RtApp(c) => rtapp_report(c, run),
        WorkloadSpec::Web(c) => web_report(c, run),
        WorkloadSpec::Jbb(c) => jbb_report(c, run),
        WorkloadSpec::Stream(c) => stream_report(c, run),
        WorkloadSpec::Linpack(c) => linpack_report(c, run),
    }
}

fn metric<'a>(run: &'a RunView<'_>, name: &str) -> Option<&'a Histogram> {
    run.metrics().find(|(n, _)| *n == name).map(|(_, h)| h)
}

/// Mean of a histogram, exactly (sum / count), in ns.
fn exact_mean_ns(h: &Histogram) -> Option<u64> {
    (!h.is_empty()).then(|| (h.sum() / u128::from(h.len())) as u64)
}

// ----- hackbench -----------------------------------------------------------------------------

/// hackbench's measured interval: the parent's start mark to the last child reaped, µs
/// resolution. If the run was cut before that, the time simulated since the statistics start.
pub fn hackbench_result(run: &RunView) -> (HackbenchResult, bool) {
    let done = metric(run, ghb::TIME_METRIC).and_then(exact_mean_ns);
    let ns = done.unwrap_or(run.end_ns() - run.stats_start_ns());
    (
        HackbenchResult {
            elapsed_ns: ns / 1000 * 1000,
        },
        done.is_some(),
    )
}

fn hackbench_report(cfg: &HackbenchConfig, run: &RunView) -> (String, Value) {
    let (res, complete) = hackbench_result(run);
    let text = if complete {
        hackbench::format_report(cfg, &res)
    } else {
        // The time the run was cut at is not hackbench's time: say it did not finish.
        let total =
            u64::from(cfg.groups) * u64::from(cfg.fds) * u64::from(cfg.fds) * u64::from(cfg.loops);
        format!(
            "{}Time: not finished (the run ended before hackbench did: {} of {total} messages \
             sent)\n",
            cfg.format_header(),
            run.ops_total()
        )
    };
    let json = json!({
        "kind": "hackbench",
        "time_s": res.elapsed_ns as f64 / 1e9,
        "messages": run.ops_total(),
        "complete": complete,
    });
    (text, json)
}

// ----- perf bench sched pipe ------------------------------------------------------------------

/// sched pipe's measured interval (µs resolution) and whether the program finished; if the run
/// was cut before that, the time simulated since the statistics start.
pub fn sched_pipe_result(run: &RunView) -> (SchedPipeResult, bool) {
    let done = metric(run, gsp::TIME_METRIC).and_then(exact_mean_ns);
    let ns = done.unwrap_or(run.end_ns() - run.stats_start_ns());
    (
        SchedPipeResult {
            elapsed_ns: ns / 1000 * 1000,
        },
        done.is_some(),
    )
}

fn sched_pipe_report(cfg: &SchedPipeConfig, run: &RunView) -> (String, Value) {
    let (res, complete) = sched_pipe_result(run);
    let ops = run.ops_total();
    let text = if complete {
        sched_pipe::format_report(cfg, &res)
    } else {
        format!(
            "{}# not finished (the run ended before perf did: {ops} of {} round trips)\n",
            cfg.format_header(),
            cfg.loops
        )
    };
    let json = json!({
        "kind": "sched-pipe",
        "complete": complete,
        "time_s": res.elapsed_ns as f64 / 1e9,
        "loops": cfg.loops,
        "ops": ops,
        "usecs_per_op": if complete { res.usecs_per_op(cfg.loops) } else { 0.0 },
        "ops_per_s": if complete { res.ops_per_sec(cfg.loops) } else { 0 },
    });
    (text, json)
}

// ----- schbench ------------------------------------------------------------------------------

/// Re-bucket an engine latency histogram (ns) into schbench's histogram (µs).
pub fn to_plat_us(h: &Histogram) -> PlatHistogram {
    let mut out = PlatHistogram::new();
    for (low, high, count) in h.buckets() {
        let mid_ns = low / 2 + high / 2 + (low % 2 + high % 2) / 2;
        let us = (mid_ns + 500) / 1000;
        if us == 0 {
            continue;
        }
        let us = us.min(u64::from(u32::MAX)) as u32;
        for _ in 0..count {
            out.add(us);
        }
    }
    out
}

/// `run_delay / pcount` of each task, averaged the way `collect_sched_delay()` does:
/// (message threads' mean, workers' mean), ns.
fn sched_delays(cfg: &SchbenchConfig, waits: &[(u64, u64)]) -> (u64, u64) {
    let layout = gsb::Layout::of(cfg);
    let avg = |i: usize| -> u64 {
        let (sum, n) = waits.get(i).copied().unwrap_or((0, 0));
        sum.checked_div(n).unwrap_or(0)
    };
    let m = cfg.message_threads.max(1);
    let t = cfg.workers_per_message_thread;
    let mut msg = 0u64;
    let mut workers = 0u64;
    for i in 0..cfg.message_threads {
        msg += avg(layout.message(i));
        for w in 0..t {
            workers += avg(layout.worker(i, w));
        }
    }
    (
        msg / u64::from(m),
        workers
            .checked_div(u64::from(m) * u64::from(t))
            .unwrap_or(0),
    )
}

/// The statistics thread's log (warm-up notice and interval reports), rebuilt one snapshot at
/// a time: [`schbench_result`] replays every snapshot at the end, and [`SchbenchStream`] feeds
/// it as the run goes, so both print the same entries.
#[derive(Debug, Clone)]
pub struct SchbenchLog {
    /// Indexes of the wakeup and request metrics in the snapshots.
    wakeup_metric: Option<usize>,
    request_metric: Option<usize>,
    start_us: u64,
    last_t_us: u64,
    last_ops: u64,
    warmup_done: bool,
    /// The RPS samples so far (reset at the end of the warm-up).
    pub rps: PlatHistogram,
}

impl SchbenchLog {
    pub fn new(wakeup_metric: Option<usize>, request_metric: Option<usize>) -> Self {
        SchbenchLog {
            wakeup_metric,
            request_metric,
            start_us: 0,
            last_t_us: 0,
            last_ops: 0,
            warmup_done: false,
            rps: PlatHistogram::new(),
        }
    }

    /// Snapshot `k` (pass `k` of the statistics loop): its RPS sample, and the log entry it
    /// prints, if any.
    pub fn push(
        &mut self,
        cfg: &SchbenchConfig,
        k: usize,
        s: &crate::engine::Snapshot,
    ) -> Option<SchbenchLogEntry> {
        let pipe = cfg.pipe_bytes > 0;
        let now_us = s.time_ns / 1000;
        if k == 0 {
            self.start_us = now_us;
            self.last_t_us = now_us;
        }
        let runtime_delta = now_us - self.start_us;
        if cfg.rps == 0
            && !pipe
            && cfg.warmup_s > 0
            && !self.warmup_done
            && runtime_delta > u64::from(cfg.warmup_s) * 1_000_000
        {
            self.warmup_done = true;
            self.rps.reset();
            return Some(SchbenchLogEntry::WarmupDone);
        }
        if pipe {
            return None;
        }
        let delta = now_us - self.last_t_us;
        let current = (s.ops_total - self.last_ops) as f64 * 1e6 / delta as f64;
        self.last_ops = s.ops_total;
        self.last_t_us = now_us;
        self.rps.add(if current.is_finite() {
            current as u32
        } else {
            0
        });
        if !gsb::full_snapshot_pass(cfg, k as u64) || s.metrics.is_empty() {
            return None;
        }
        let (m, w) = sched_delays(cfg, &s.task_waits);
        let pick = |i: Option<usize>| i.map(|i| to_plat_us(&s.metrics[i])).unwrap_or_default();
        Some(SchbenchLogEntry::Interval(Box::new(SchbenchInterval {
            elapsed_s: runtime_delta / 1_000_000,
            wakeup: pick(self.wakeup_metric),
            request: pick(self.request_metric),
            rps: self.rps.clone(),
            sched_delay_message_ns: m,
            sched_delay_worker_ns: w,
            current_rps: if current.is_finite() { current } else { 0.0 },
        })))
    }
}

/// Where streamed benchmark output goes (stdout, or stderr when stdout carries the JSON).
#[derive(Clone)]
pub struct TextSink(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for TextSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextSink")
    }
}

/// schbench's periodic output as the run goes: the preamble at the start, then each warm-up
/// notice and interval report at the simulated time its statistics pass runs — what the
/// real program prints while it runs. The final report follows from [`native_report`].
pub struct SchbenchStream {
    cfg: SchbenchConfig,
    log: SchbenchLog,
    sink: TextSink,
}

impl crate::engine::observer::IntervalHook for SchbenchStream {
    fn snapshot(&mut self, index: usize, snap: &crate::engine::Snapshot) {
        if let Some(entry) = self.log.push(&self.cfg, index, snap) {
            (self.sink.0)(&schbench::format_log_entry(&entry));
        }
    }
}

/// The streaming hook of a benchmark that prints as it runs (the current schbench; the other
/// benchmarks print only at the end), with its preamble already sent to `sink`.
pub fn interval_hook(
    spec: &WorkloadSpec,
    engine: &Engine,
    sink: TextSink,
) -> Option<Box<dyn crate::engine::observer::IntervalHook>> {
    let WorkloadSpec::Schbench(cfg) = spec else {
        return None;
    };
    if cfg.version != SchbenchVersion::Current {
        return None;
    }
    let metric_index = |name: &str| engine.metrics().position(|(n, _)| n == name);
    let log = SchbenchLog::new(
        metric_index(gsb::WAKEUP_METRIC),
        metric_index(gsb::REQUEST_METRIC),
    );
    (sink.0)(&cfg.format_preamble());
    Some(Box::new(SchbenchStream {
        cfg: cfg.clone(),
        log,
        sink,
    }))
}

/// Fill [`SchbenchResult`] from a finished run of the current schbench.
pub fn schbench_result(cfg: &SchbenchConfig, run: &RunView) -> SchbenchResult {
    let empty = Histogram::new();
    let wake_h = metric(run, gsb::WAKEUP_METRIC).unwrap_or(&empty);
    let req_h = metric(run, gsb::REQUEST_METRIC).unwrap_or(&empty);
    let metric_index = |name: &str| run.metrics().position(|(n, _)| n == name);
    let (wi, ri) = (
        metric_index(gsb::WAKEUP_METRIC),
        metric_index(gsb::REQUEST_METRIC),
    );
    let pipe = cfg.pipe_bytes > 0;
    let mut res = SchbenchResult::default();
    let snaps = run.snapshots();
    let mut log = SchbenchLog::new(wi, ri);
    for (k, s) in snaps.iter().enumerate() {
        if let Some(entry) = log.push(cfg, k, s) {
            res.log.push(entry);
        }
    }
    let rps = log.rps;
    res.wakeup = to_plat_us(wake_h);
    res.request = to_plat_us(req_h);
    res.rps = rps;
    res.loop_count = snaps.last().map(|s| s.ops_total).unwrap_or(run.ops_total());
    let waits: Vec<(u64, u64)> = run
        .tasks()
        .iter()
        .map(|t| (t.stats.counters.wait_sum_ns, t.stats.counters.wait_count))
        .collect();
    let (m, w) = sched_delays(cfg, &waits);
    res.sched_delay_message_ns = m;
    res.sched_delay_worker_ns = w;
    if pipe {
        // Each worker's `runtime`: from its start to its last loop (≈ the end of the run).
        let end_us = run.end_ns() / 1000;
        let mut total = 0u64;
        for i in 0..cfg.message_threads {
            for w in 0..cfg.workers_per_message_thread {
                let start = (u64::from(i) * gsb::THREAD_CREATE_NS
                    + u64::from(w + 1) * gsb::THREAD_CREATE_NS)
                    / 1000;
                total += end_us.saturating_sub(start);
            }
        }
        res.loop_runtime_us = total;
    }
    res
}

fn pct_json(h: &PlatHistogram, plist: &[f64], idx: [usize; 4]) -> Value {
    let rows = h.percentiles(plist);
    json!({
        "p50": rows[idx[0]].value,
        "p90": rows[idx[1]].value,
        "p99": rows[idx[2]].value,
        "p99.9": rows[idx[3]].value,
    })
}

/// schbench's average RPS: `loop_count / -r`, or over the simulated seconds of a cut run.
fn rps_avg(cfg: &SchbenchConfig, loops: u64, cut_runtime_s: Option<f64>) -> f64 {
    let secs = cut_runtime_s.map_or(f64::from(cfg.runtime_s.max(1)), |s| s.max(1e-9));
    ((loops as f64 / secs) * 100.0).round() / 100.0
}

fn schbench_report(
    cfg: &SchbenchConfig,
    run: &RunView,
    cut_runtime_s: Option<f64>,
) -> (String, Value) {
    let res = SchbenchResult {
        cut_runtime_s,
        ..schbench_result(cfg, run)
    };
    let text = schbench::format_report(cfg, &res);
    let mut json = json!({
        "kind": "schbench",
        "rps_avg": rps_avg(cfg, res.loop_count, cut_runtime_s),
        "loop_count": res.loop_count,
        "wakeup_latency_us": pct_json(&res.wakeup, &PLIST_CURRENT, [1, 2, 3, 4]),
        "sched_delay_message_us": res.sched_delay_message_ns / 1000,
        "sched_delay_worker_us": res.sched_delay_worker_ns / 1000,
    });
    if cfg.pipe_bytes == 0 {
        json["request_latency_us"] = pct_json(&res.request, &PLIST_CURRENT, [1, 2, 3, 4]);
    }
    (text, json)
}

/// The JSON of the classic and 2021 schbench: loops from the op counter, the seven-point
/// wakeup percentiles read at p50/p90/p99/p99.9.
fn classic_json(
    cfg: &SchbenchConfig,
    run: &RunView,
    latency: &PlatHistogram,
    cut_runtime_s: Option<f64>,
) -> Value {
    let loops = run.ops_total();
    json!({
        "kind": "schbench",
        "rps_avg": rps_avg(cfg, loops, cut_runtime_s),
        "loop_count": loops,
        "wakeup_latency_us": pct_json(latency, &PLIST_CLASSIC, [0, 2, 4, 6]),
    })
}

fn schbench_classic_report(
    cfg: &SchbenchConfig,
    run: &RunView,
    cut_runtime_s: Option<f64>,
) -> (String, Value) {
    let empty = Histogram::new();
    let latency = to_plat_us(metric(run, gsb::WAKEUP_METRIC).unwrap_or(&empty));
    let res = SchbenchClassicResult { latency };
    let text = schbench::format_classic_report(cfg, &res);
    (text, classic_json(cfg, run, &res.latency, cut_runtime_s))
}

/// e4aa540's log, rebuilt from the statistics loop's once-a-second snapshots with the
/// program's own rules: the pass that sees `-r` seconds stops without printing; the first
/// pass past the warm-up zeroes (and prints only that); otherwise a pass `-i` seconds after
/// the last report prints the latencies since the warm-up.
pub fn interim2021_log(cfg: &SchbenchConfig, run: &RunView) -> Vec<Interim2021LogEntry> {
    const US: u64 = 1_000_000;
    let snaps = run.snapshots();
    let Some(first) = snaps.first() else {
        return Vec::new();
    };
    let wakeup = run.metrics().position(|(n, _)| n == gsb::WAKEUP_METRIC);
    let start_us = first.time_ns / 1000;
    let mut last_calc_us = start_us;
    let mut warmup_done = false;
    let mut log = Vec::new();
    for s in snaps {
        let now_us = s.time_ns / 1000;
        let runtime_delta = now_us - start_us;
        if runtime_delta >= u64::from(cfg.runtime_s) * US {
            break;
        }
        if cfg.warmup_s > 0 && !warmup_done && runtime_delta > u64::from(cfg.warmup_s) * US {
            warmup_done = true;
            log.push(Interim2021LogEntry::WarmupDone);
        } else if now_us - last_calc_us >= u64::from(cfg.interval_s) * US {
            let latency = wakeup
                .and_then(|i| s.metrics.get(i))
                .map(to_plat_us)
                .unwrap_or_default();
            log.push(Interim2021LogEntry::Interval {
                elapsed_s: runtime_delta / US,
                latency,
            });
            last_calc_us = now_us;
        }
    }
    log
}

fn schbench_interim2021_report(
    cfg: &SchbenchConfig,
    run: &RunView,
    cut_runtime_s: Option<f64>,
) -> (String, Value) {
    let empty = Histogram::new();
    let latency = to_plat_us(metric(run, gsb::WAKEUP_METRIC).unwrap_or(&empty));
    let res = SchbenchInterim2021Result {
        log: interim2021_log(cfg, run),
        latency,
        cut_runtime_s,
    };
    let text = schbench::format_interim2021_report(cfg, &res);
    (text, classic_json(cfg, run, &res.latency, cut_runtime_s))
}

// ----- stress-ng -----------------------------------------------------------------------------

/// Fill [`StressNgResult`] from a finished run.
pub fn stressng_result(cfg: &StressNgConfig, run: &RunView) -> StressNgResult {
    let end = run.end_ns();
    let timeout_ns = cfg.effective_timeout_s().saturating_mul(1_000_000_000);
    let timed_out = timeout_ns > 0 && end >= timeout_ns;
    let mean_wall = metric(run, gsn::WALL_METRIC).and_then(exact_mean_ns);
    let mut instances = Vec::new();
    let cycle = cfg.call_cycle();
    for i in 0..cfg.instances as usize {
        let Some(t) = run.tasks().get(i) else {
            break;
        };
        let calls = run.sem_count(gsn::COUNTER_BASE + i as u32);
        let exited = t.state == TaskState::Dead;
        let start = (i as u64 + 1) * gsn::FORK_NS;
        let wall_ns = match (exited, mean_wall) {
            (true, Some(w)) => w,
            _ => end.saturating_sub(start),
        };
        instances.push(StressNgInstance {
            bogo_ops: StressNgConfig::bogo_ops_in_cycle(&cycle, calls),
            wall_s: wall_ns as f64 / 1e9,
            usr_s: t.stats.counters.sum_exec_runtime_ns as f64 / 1e9,
            sys_s: 0.0,
            completed: exited || timed_out,
            maxrss_kb: 0,
        });
    }
    let success = instances.iter().all(|i| i.completed);
    StressNgResult {
        pid: SIMULATED_PID,
        instances,
        duration_s: end as f64 / 1e9,
        success,
    }
}

fn stressng_report(cfg: &StressNgConfig, run: &RunView) -> (String, Value) {
    let res = stressng_result(cfg, run);
    let text = stressng::format_report(cfg, &res);
    let m = res.metrics();
    let r2 = |v: f64| (v * 100.0).round() / 100.0;
    let json = json!({
        "kind": "stress-ng",
        "bogo_ops": m.bogo_ops,
        "bogo_ops_per_s": r2(m.bogo_ops_per_s_real),
        "bogo_ops_per_s_cpu": r2(m.bogo_ops_per_s_cpu),
        "real_time_s": r2(m.real_time_s),
        "usr_time_s": r2(m.usr_time_s),
    });
    (text, json)
}

// ----- netperf / tbench ----------------------------------------------------------------------

pub fn netperf_result(run: &RunView) -> NetperfRrResult {
    let elapsed_ns = run.end_ns() - run.stats_start_ns();
    let max_ns = metric(run, gnp::TRANSACTION_METRIC)
        .map(Histogram::max)
        .unwrap_or(0);
    NetperfRrResult {
        transactions: run.ops_done(),
        elapsed_s: elapsed_ns as f64 / 1e9,
        max_latency_ms: max_ns as f64 / 1e6,
        ..NetperfRrResult::default()
    }
}

fn netperf_report(cfg: &NetperfRrConfig, run: &RunView) -> (String, Value) {
    let res = netperf_result(run);
    let text = netperf::format_report(cfg, &res);
    // A run cut inside the warm-up is said once, by the run's input warning; the JSON keeps
    // it with the result.
    let warmup_done = warmup_done(cfg, run);
    let json = match cfg.flavor {
        RrFlavor::Netperf => json!({
            "kind": "netperf",
            "throughput": (res.rate() * 100.0).round() / 100.0,
            "throughput_unit": "transactions/s",
            "transactions": res.transactions,
            "elapsed_s": res.elapsed_s,
        }),
        RrFlavor::Tbench => json!({
            "kind": "tbench",
            "throughput": res.rate() * f64::from(TBENCH_PAYLOAD_BYTES) / 1e6,
            "throughput_unit": "MB/s",
            "transactions": res.transactions,
            "elapsed_s": res.elapsed_s,
            "max_latency_ms": res.max_latency_ms,
            "warmup_done": warmup_done,
        }),
    };
    (text, json)
}

/// Whether the statistics start after tbench's warm-up (the engine restarts them at the
/// later of it and `run.warmup_s`); vacuously true without a warm-up (netperf, `--warmup 0`).
fn warmup_done(cfg: &NetperfRrConfig, run: &RunView) -> bool {
    run.stats_start_ns() >= u64::from(cfg.warmup_s) * 1_000_000_000
}

// ----- rt-app --------------------------------------------------------------------------------

fn rtapp_report(spec: &RtAppSpec, run: &RunView) -> (String, Value) {
    let mut text = String::new();
    let mut threads = Vec::new();
    for t in run.tasks() {
        let s = &t.stats;
        let delay_us = s
            .counters
            .wait_sum_ns
            .checked_div(s.counters.wait_count)
            .unwrap_or(0)
            / 1000;
        text.push_str(&format!(
            "{:<16} runtime {:>10.3} ms  wakeups {:>8}  avg run delay {:>6} us  {}\n",
            t.comm,
            s.counters.sum_exec_runtime_ns as f64 / 1e6,
            s.counters.nr_wakeups,
            delay_us,
            if t.state == TaskState::Dead {
                "exited"
            } else {
                "running"
            }
        ));
        threads.push(json!({
            "name": t.comm,
            "runtime_ms": s.counters.sum_exec_runtime_ns as f64 / 1e6,
            "wakeups": s.counters.nr_wakeups,
            "avg_run_delay_us": delay_us,
        }));
    }
    let json = json!({
        "kind": "rtapp",
        "threads": threads,
        "initial_threads": spec.nr_threads(),
        "duration_s": run.end_ns() as f64 / 1e9,
    });
    (text, json)
}

// ----- web / jbb / stream / linpack (issue 13) --------------------------------------------

fn measured_s(run: &RunView) -> f64 {
    (run.end_ns() - run.stats_start_ns()) as f64 / 1e9
}

/// Round to 3 decimals (µs resolution for ms values).
fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Fill [`web::WebResult`]: response times from metric `response` (exact mean, histogram
/// percentiles), requests completed over the statistics interval.
pub fn web_result(run: &RunView) -> web::WebResult {
    let empty = Histogram::new();
    let h = metric(run, gweb::RESPONSE_METRIC).unwrap_or(&empty);
    let ms = |ns: u64| ns as f64 / 1e6;
    web::WebResult {
        requests: run.ops_done(),
        elapsed_s: measured_s(run),
        response_ms_avg: h
            .sum()
            .checked_div(u128::from(h.len()))
            .map_or(0.0, |v| v as f64 / 1e6),
        response_ms_p50: if h.is_empty() {
            0.0
        } else {
            ms(h.percentile(50.0))
        },
        response_ms_p90: if h.is_empty() {
            0.0
        } else {
            ms(h.percentile(90.0))
        },
        response_ms_p99: if h.is_empty() {
            0.0
        } else {
            ms(h.percentile(99.0))
        },
        response_ms_max: ms(h.max()),
    }
}

fn web_report(cfg: &web::WebConfig, run: &RunView) -> (String, Value) {
    let r = web_result(run);
    let json = json!({
        "kind": "web",
        "requests": r.requests,
        "requests_per_s": (r.requests_per_s() * 10.0).round() / 10.0,
        "response_ms_avg": r3(r.response_ms_avg),
        "response_ms_p50": r3(r.response_ms_p50),
        "response_ms_p90": r3(r.response_ms_p90),
        "response_ms_p99": r3(r.response_ms_p99),
        "response_ms_max": r3(r.response_ms_max),
        "elapsed_s": r.elapsed_s,
    });
    (web::format_report(cfg, &r), json)
}

pub fn jbb_result(run: &RunView) -> jbb::JbbResult {
    let empty = Histogram::new();
    let h = metric(run, gjbb::GC_PAUSE_METRIC).unwrap_or(&empty);
    jbb::JbbResult {
        transactions: run.ops_done(),
        elapsed_s: measured_s(run),
        gc_pauses: h.len(),
        gc_pause_ms_avg: exact_mean_ns(h).map_or(0.0, |v| v as f64 / 1e6),
    }
}

fn jbb_report(cfg: &jbb::JbbConfig, run: &RunView) -> (String, Value) {
    let r = jbb_result(run);
    let json = json!({
        "kind": "jbb",
        "bops": (r.bops() * 10.0).round() / 10.0,
        "transactions": r.transactions,
        "gc_pauses": r.gc_pauses,
        "gc_pause_ms_avg": r3(r.gc_pause_ms_avg),
        "elapsed_s": r.elapsed_s,
    });
    (jbb::format_report(cfg, &r), json)
}

pub fn stream_result(run: &RunView) -> stream::StreamResult {
    let mut r = stream::StreamResult {
        elapsed_ns: run.end_ns() - run.stats_start_ns(),
        ..Default::default()
    };
    for (k, (name, _)) in stream::KERNELS.iter().enumerate() {
        if let Some(h) = metric(run, name) {
            r.passes[k] = h.len();
            r.time_ns[k] = h.sum().min(u128::from(u64::MAX)) as u64;
        }
    }
    r
}

fn stream_report(cfg: &stream::StreamConfig, run: &RunView) -> (String, Value) {
    let r = stream_result(run);
    let r1 = |v: f64| (v * 10.0).round() / 10.0;
    let mut per = serde_json::Map::new();
    for (k, (name, _)) in stream::KERNELS.iter().enumerate() {
        per.insert(name.to_string(), json!(r1(r.kernel_mb_s(cfg, k))));
    }
    let json = json!({
        "kind": "stream",
        "bandwidth_mb_s": r1(r.total_mb_s(cfg)),
        "kernel_bandwidth_mb_s": per,
        "passes": r.passes[3],
        "elapsed_s": r.elapsed_ns as f64 / 1e9,
    });
    (stream::format_report(cfg, &r), json)
}

pub fn linpack_result(run: &RunView) -> linpack::LinpackResult {
    linpack::LinpackResult {
        flops: run.ops_done() as f64 * linpack::FLOPS_PER_OP as f64,
        elapsed_s: measured_s(run),
    }
}

fn linpack_report(cfg: &linpack::LinpackConfig, run: &RunView) -> (String, Value) {
    let r = linpack_result(run);
    let json = json!({
        "kind": "linpack",
        "gflops": (r.gflops() * 100.0).round() / 100.0,
        "flops": r.flops,
        "elapsed_s": r.elapsed_s,
    });
    (linpack::format_report(cfg, &r), json)
}
