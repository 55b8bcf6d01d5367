//! Trace export, the ping-pong detector and `--explain`, end to end.
//!
//! The Perfetto checks load our traces into Perfetto's own trace processor
//! (`shared/tools/perfetto-check/check`, found by walking up from the repository like the
//! fixtures) and compare what it reconstructs with the run's results: one CPU track per CPU
//! that ran something, per-CPU busy time equal to the results' `busy_ns`, thread names, and
//! `prev_state` decoded with the modern encoding (`R+`). They skip, saying so, only when
//! `node` is missing. The first `check` call may create the tool's virtualenv (once per
//! machine, about 18 s); each later call takes about 5 s. Calls are serialized (see
//! `CheckLock`), so the three Perfetto checks take about 15 s.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use schedlab::config::scenario::Scenario;
use schedlab::config::{QuickOptions, build_document};
use schedlab::cost::CostModel;
use schedlab::engine::observer::Observer;
use schedlab::engine::observer::PrevState;
use schedlab::engine::pingpong::PingPong;
use schedlab::engine::{Engine, EngineConfig, WorkloadPlan};
use schedlab::experiment::{run_once, run_once_with};
use schedlab::policy::fifo::GlobalFifo;
use schedlab::stats::explain::{ExplainLog, select_task};
use schedlab::stats::trace::{
    Event, EventKind, Instruments, TraceFormat, TraceRecorder, TraceSink, Who, write_trace,
};
use schedlab::task::{Op, Program, TaskSpec};
use schedlab::topology::{Machine, presets};

const HACKBENCH: &[&str] = &["hackbench", "-g", "2", "-l", "50"];

// ----- helpers ------------------------------------------------------------------------------

fn scenario(command: &[&str], sets: &[&str]) -> Scenario {
    let mut all_sets = vec!["kernel.policy=fifo".to_string()];
    all_sets.extend(sets.iter().map(|s| s.to_string()));
    let opts = QuickOptions {
        machine: Some("hybrid-10".into()),
        sets: all_sets,
        command: command.iter().map(|s| s.to_string()).collect(),
        ..QuickOptions::default()
    };
    Scenario::from_doc(build_document(&opts).expect("document")).expect("scenario")
}

/// A `Write` that tests can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-tests");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `shared/tools/perfetto-check/check`, found by walking up from the repository.
fn perfetto_check() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let c = dir.join("shared/tools/perfetto-check/check");
        if c.is_file() {
            return c;
        }
        assert!(
            dir.pop(),
            "shared/tools/perfetto-check/check not found above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

fn have_node() -> bool {
    Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Serializes `check` calls across test processes (nextest runs each test in its own): the
/// first call creates the tool's virtualenv, and two concurrent creations would collide.
/// A directory next to the virtualenv is the lock (`create_dir` is atomic); one older than
/// 10 minutes is taken to be left over from a killed run.
struct CheckLock(PathBuf);

impl CheckLock {
    fn acquire() -> CheckLock {
        let venv = std::env::var_os("PERFETTO_CHECK_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp/perfetto-check-venv"));
        let mut name = venv.into_os_string();
        name.push(".schedlab-test-lock");
        let dir = PathBuf::from(name);
        let start = std::time::Instant::now();
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return CheckLock(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&dir)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age.as_secs() > 600);
                    if stale {
                        let _ = std::fs::remove_dir(&dir);
                    }
                    assert!(
                        start.elapsed().as_secs() < 900,
                        "waited 15 minutes for {}",
                        dir.display()
                    );
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => panic!("cannot create {}: {e}", dir.display()),
            }
        }
    }
}

impl Drop for CheckLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Run Perfetto's trace processor on `trace` with `queries`; rows per query, each row a map
/// of column to value (as text). `None` when node is missing.
fn tp_query(trace: &Path, queries: &[&str]) -> Option<Vec<Vec<BTreeMap<String, String>>>> {
    if !have_node() {
        // CI installs node (scripts/install-chromium --export) and then requires it.
        assert!(
            std::env::var_os("SCHEDLAB_REQUIRE_NODE").is_none(),
            "SCHEDLAB_REQUIRE_NODE is set but node is not runnable"
        );
        eprintln!("SKIPPED: node is not installed; Perfetto's trace processor cannot run");
        return None;
    }
    let out = {
        let _lock = CheckLock::acquire();
        Command::new(perfetto_check())
            .arg(trace)
            .args(queries)
            .output()
            .expect("perfetto-check runs")
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "perfetto-check failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut results: Vec<Vec<BTreeMap<String, String>>> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("-- ") {
            results.push(Vec::new());
        } else if let Some(row) = line.trim().strip_prefix('{') {
            let row = row.strip_suffix('}').expect("a python dict row");
            let mut map = BTreeMap::new();
            for cell in row.split(", '") {
                let (k, v) = cell.split_once("': ").expect("key: value");
                map.insert(
                    k.trim_matches('\'').to_string(),
                    v.trim_matches('\'').to_string(),
                );
            }
            results.last_mut().expect("rows follow a query").push(map);
        }
    }
    assert_eq!(
        results.len(),
        queries.len(),
        "one result per query:\n{stdout}"
    );
    Some(results)
}

fn num(row: &BTreeMap<String, String>, k: &str) -> i64 {
    row[k]
        .parse()
        .unwrap_or_else(|_| panic!("{k} = {} is not a number", row[k]))
}

/// Run hackbench once with a trace (format by `name`'s extension) under `policy`; returns
/// the trace path and the run's JSON.
fn traced_hackbench(name: &str, policy: &str) -> (PathBuf, serde_json::Value) {
    let path = out_dir().join(name);
    let scn = scenario(HACKBENCH, &[&format!("kernel.policy={policy}")]);
    let sink = TraceSink::create(&path).expect("trace file");
    let (run, _) = run_once_with(
        &scn,
        1,
        Instruments {
            trace: Some(sink),
            explain: None,
            timeline: false,
        },
    )
    .expect("run");
    (path, run.json())
}

/// The Perfetto checks of a hackbench trace against its results.
fn check_against_results(trace: &Path, json: &serde_json::Value, per_slice_tolerance_ns: i64) {
    let Some(res) = tp_query(
        trace,
        &[
            "select cpu, count(*) as n, sum(dur) as d from sched join thread using(utid) \
             where thread.tid != 0 group by cpu order by cpu",
            "select count(*) as n from sched where dur < 0 and utid != 0",
            "select count(*) as n from thread where tid != 0",
            "select count(*) as n from thread where name = 'receiver-0-0'",
            "select count(distinct cpu) as n from sched",
            "select count(*) as n from thread_state where state = 'R+'",
        ],
    ) else {
        return;
    };
    let busy: BTreeMap<i64, i64> = json["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["busy_ns"].as_i64().unwrap() > 0)
        .map(|c| (c["cpu"].as_i64().unwrap(), c["busy_ns"].as_i64().unwrap()))
        .collect();
    assert!(busy.len() >= 2, "hackbench keeps several CPUs busy");
    let traced: BTreeMap<i64, (i64, i64)> = res[0]
        .iter()
        .map(|r| (num(r, "cpu"), (num(r, "n"), num(r, "d"))))
        .collect();
    assert_eq!(
        traced.keys().collect::<Vec<_>>(),
        busy.keys().collect::<Vec<_>>(),
        "one sched track per CPU that ran something"
    );
    for (cpu, &(n, d)) in &traced {
        let diff = (d - busy[cpu]).abs();
        assert!(
            diff <= n * per_slice_tolerance_ns,
            "CPU {cpu}: slices sum to {d} ns, busy_ns is {} ({n} slices)",
            busy[cpu]
        );
    }
    assert_eq!(num(&res[1][0], "n"), 0, "every task slice is closed");
    // Every task is a thread, and so is every background task (kworkers, kernel threads)
    // that ran.
    let nr_tasks = json["tasks"].as_array().unwrap().len() as i64;
    let nr_background = json["background"]["tasks"].as_i64().unwrap_or(0);
    let threads = num(&res[2][0], "n");
    assert!(
        (nr_tasks..=nr_tasks + nr_background).contains(&threads),
        "{threads} threads for {nr_tasks} tasks and {nr_background} background tasks"
    );
    assert_eq!(num(&res[3][0], "n"), 1, "thread names come from comm");
    assert_eq!(
        num(&res[4][0], "n"),
        busy.len() as i64,
        "idle slices only on CPUs that also ran tasks"
    );
    // hackbench never yields: every involuntary switch is a preemption, decoded as R+.
    let involuntary: i64 = json["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["nr_involuntary_switches"].as_i64().unwrap())
        .sum();
    assert_eq!(
        num(&res[5][0], "n"),
        involuntary,
        "preempted switch-outs are R+"
    );
}

// ----- Perfetto: the trace processor reads our traces ----------------------------------------

#[test]
fn perfetto_protobuf_trace_matches_busy_time() {
    let (trace, json) = traced_hackbench("hackbench.pftrace", "fifo");
    // Timestamps are exact nanoseconds: the tolerance is far below the 1 µs per slice allowed.
    check_against_results(&trace, &json, 1000);
}

#[test]
fn ftrace_text_trace_matches_busy_time() {
    // The Linux fair policy preempts (the FIFO one never does), so this one has R+ too.
    let (trace, json) = traced_hackbench("hackbench.ftrace", "linux-fair");
    assert!(json["perf_stat"]["context_switches"].as_u64().unwrap() > 0);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("# tracer: nop\n"));
    for event in [
        "sched_switch:",
        "sched_waking:",
        "sched_wakeup:",
        "sched_wakeup_new:",
        "sched_migrate_task:",
        "sched_process_exit:",
        "tracing_mark_write: I|",
    ] {
        assert!(text.contains(event), "the text trace has {event} lines");
    }
    check_against_results(&trace, &json, 1000);
}

/// `prev_state` 0x100 is "preempted" only for kernels >= 4.14: the trace's SystemInfo must
/// make Perfetto decode it as R+ (4.4 semantics would read it as W, waking).
#[test]
fn perfetto_decodes_preempted_and_sleeping_states() {
    let path = out_dir().join("states.pftrace");
    let a = Who {
        pid: 11,
        comm: "a",
        prio: 120,
    };
    let b = Who {
        pid: 12,
        comm: "b",
        prio: 120,
    };
    let idle = Who::idle("swapper/0");
    let sw = |ts_ns, prev: Who<'static>, prev_state, next| Event {
        ts_ns,
        cpu: 0,
        curr: prev,
        kind: EventKind::Switch {
            prev,
            prev_state,
            next,
        },
    };
    let events = [
        sw(1_000, idle, PrevState::Runnable, a),
        sw(2_000, a, PrevState::Preempted, b),
        sw(3_000, b, PrevState::Sleeping, a),
        sw(4_000, a, PrevState::Dead, idle),
    ];
    let file = std::fs::File::create(&path).unwrap();
    write_trace(
        TraceFormat::Perfetto,
        Box::new(file),
        1,
        &[(11, "a"), (12, "b")],
        &events,
    )
    .unwrap();
    let Some(res) = tp_query(
        &path,
        &[
            "select ts, dur, state from thread_state join thread using(utid) \
             where tid = 11 order by ts",
            "select ts, state from thread_state join thread using(utid) \
             where tid = 12 order by ts",
        ],
    ) else {
        return;
    };
    let states = |rows: &[BTreeMap<String, String>]| -> Vec<(i64, String)> {
        rows.iter()
            .map(|r| (num(r, "ts"), r["state"].clone()))
            .collect()
    };
    assert_eq!(
        states(&res[0]),
        vec![
            (1_000, "Running".to_string()),
            (2_000, "R+".to_string()),
            (3_000, "Running".to_string()),
            (4_000, "X".to_string()),
        ]
    );
    assert_eq!(
        states(&res[1]),
        vec![(2_000, "Running".to_string()), (3_000, "S".to_string())]
    );
}

// ----- the recorder observes without changing the run -----------------------------------------

fn strip_wall(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    o.remove("wall_time_s");
    o.remove("sim_s_per_wall_s");
    v
}

#[test]
fn tracing_and_explaining_change_no_decision_and_are_deterministic() {
    for policy in ["fifo", "linux-fair"] {
        let scn = scenario(HACKBENCH, &[&format!("kernel.policy={policy}")]);
        let plain = run_once(&scn, 3).unwrap();
        let traced = |explain: Option<&str>| {
            let buf = Shared::default();
            let (run, text) = run_once_with(
                &scn,
                3,
                Instruments {
                    trace: Some(TraceSink {
                        format: TraceFormat::Perfetto,
                        out: Box::new(buf.clone()),
                        label: "buffer".into(),
                        pending: None,
                    }),
                    explain: explain.map(str::to_string),
                    timeline: false,
                },
            )
            .unwrap();
            let bytes = buf.0.lock().unwrap().clone();
            (run, text, bytes)
        };
        let (r1, t1, b1) = traced(Some("receiver-0-0"));
        let (r2, t2, b2) = traced(Some("receiver-0-0"));
        assert_eq!(strip_wall(plain.json()), strip_wall(r1.json()));
        assert_eq!(strip_wall(r1.json()), strip_wall(r2.json()));
        assert!(b1.len() > 1000);
        assert_eq!(b1, b2, "same seed, byte-identical trace");
        assert_eq!(t1, t2);
        assert!(t1.unwrap().contains("'receiver-0-0'"));
    }
}

// ----- engine-level events: prev_state, placement, exit --------------------------------------

fn spec(program: u32, comm: &str, start_ns: u64) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        nice: 0,
        cpus_allowed: None,
        start_ns,
        parent_cpu: 0,
        footprint_kib: 0,
        ..Default::default()
    }
}

fn machine() -> Machine {
    presets::by_name("hybrid-10").expect("preset exists")
}

/// A task that yields, sleeps and exits (pid 1); ten 1 ms spinners forked at 10 µs, so that
/// one of them is queued when the worker yields on the 10-CPU machine; and a 50 ms spinner
/// with nice 5 and a long name (pid 12).
fn small_plan() -> WorkloadPlan {
    WorkloadPlan {
        programs: vec![
            Program {
                name: "yield-sleep".into(),
                ops: vec![
                    Op::Run { work_ns: 100_000 },
                    Op::Yield,
                    Op::Run { work_ns: 100_000 },
                    Op::Sleep { ns: 1_000_000 },
                    Op::Run { work_ns: 50_000 },
                    Op::Exit,
                ],
            },
            Program {
                name: "spin".into(),
                ops: vec![Op::Run { work_ns: 1_000_000 }, Op::Exit],
            },
            Program {
                name: "long".into(),
                ops: vec![
                    Op::Run {
                        work_ns: 50_000_000,
                    },
                    Op::Exit,
                ],
            },
        ],
        tasks: std::iter::once(spec(0, "worker", 0))
            .chain((0..10).map(|_| spec(1, "spin", 10_000)))
            .chain(std::iter::once({
                let mut s = spec(2, "a-rather-long-task-name", 10_000);
                s.nice = 5;
                s
            }))
            .collect(),
        sems: vec![],
        nr_barriers: 0,
        nr_spinlocks: 0,
        metrics: vec![],
        ..Default::default()
    }
}

fn traced_engine(
    plan: WorkloadPlan,
    duration_ns: u64,
    explain: Option<u32>,
) -> (Engine, String, Option<ExplainLog>) {
    let m = machine();
    let cfg = EngineConfig {
        check_invariants: true,
        duration_ns,
        ..EngineConfig::default()
    };
    let n = m.nr_cpus();
    let mut e = Engine::new(
        m.clone(),
        CostModel::default_for(&m),
        cfg,
        Box::new(GlobalFifo::new(n)),
        plan,
    )
    .unwrap();
    let buf = Shared::default();
    let sink = TraceSink {
        format: TraceFormat::Ftrace,
        out: Box::new(buf.clone()),
        label: "buffer".into(),
        pending: None,
    };
    let log = explain.map(|t| ExplainLog::new(schedlab::task::TaskId(t), 10_000_000));
    let mut rec = TraceRecorder::new(n, Some(sink), log);
    rec.start(e.tasks(), n);
    e.set_observer(Box::new(rec));
    e.run();
    assert!(e.invariant_violations().is_empty());
    let (err, log) = schedlab::stats::trace::take_recorder(&mut e)
        .unwrap()
        .into_parts();
    assert!(err.is_none());
    (e, buf.text(), log)
}

#[test]
fn prev_state_follows_how_the_task_left_the_cpu() {
    let (e, text, _) = traced_engine(small_plan(), 20_000_000, None);
    let switches: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("sched_switch: prev_comm=worker "))
        .collect();
    // Yield (R), sleep (S), exit (X), in that order.
    let states: Vec<&str> = switches
        .iter()
        .map(|l| {
            l.split("prev_state=")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(
        states,
        ["R", "S", "X"],
        "a yield leaves the task runnable (not preempted), a sleep S, an exit X"
    );
    assert!(text.contains("sched_process_exit: comm=worker pid=1 prio=120"));
    // comm is cut to 15 bytes, nice 5 is prio 125, pid = index + 1.
    assert!(text.contains("sched_wakeup_new: comm=a-rather-long-t pid=12 prio=125"));
    // The run hit the 20 ms cap with the spinner still running: its slice is closed at the
    // end, runnable.
    assert!(!e.all_exited());
    let last_switch = text
        .lines()
        .rev()
        .find(|l| l.contains("sched_switch"))
        .unwrap();
    assert!(
        last_switch.contains("prev_pid=12 prev_prio=125 prev_state=R ==> next_comm=swapper/"),
        "{last_switch}"
    );
    assert!(last_switch.contains("    0.020000000: "), "{last_switch}");
    // Every line is in time order.
    let ts: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (head, _) = l.split_once(": ").unwrap();
            head.rsplit(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn explain_history_lists_placements_and_migrations_of_one_task() {
    let scn = scenario(HACKBENCH, &[]);
    let (run, text) = run_once_with(
        &scn,
        1,
        Instruments {
            trace: None,
            explain: Some("7".into()),
            timeline: false,
        },
    )
    .unwrap();
    let text = text.unwrap();
    let json = run.json();
    let task = &json["tasks"][7];
    let count = |prefix: &str| {
        text.lines()
            .filter(|l| l.split_whitespace().nth(2) == Some(prefix))
            .count() as u64
    };
    assert!(text.starts_with(&format!(
        "Explain pid 7 '{}' (trace pid 8)",
        task["comm"].as_str().unwrap()
    )));
    assert_eq!(count("fork"), 1);
    assert_eq!(count("exit"), 1);
    // No warm-up: the history and the task's counters cover the same interval.
    // Fork placements are listed but are not `set_task_cpu()` migrations.
    let fork_moves = task["migrations_by_reason"]["fork"].as_u64().unwrap();
    assert_eq!(
        count("migrate"),
        task["nr_migrations"].as_u64().unwrap() + fork_moves
    );
    assert_eq!(count("wakeup"), task["nr_wakeups"].as_u64().unwrap());
    assert!(text.contains(&format!(
        "switches: {} (voluntary",
        task["nr_switches"].as_u64().unwrap()
    )));
}

#[test]
fn explain_selects_by_pid_or_name() {
    let (e, _, _) = traced_engine(small_plan(), 1_000_000, None);
    let t = e.tasks();
    assert_eq!(select_task(t, "1").unwrap().0.0, 1);
    assert_eq!(
        select_task(t, "worker").unwrap(),
        (schedlab::task::TaskId(0), None)
    );
    let err = select_task(t, "12").unwrap_err();
    assert!(err.contains("pid 0-11"), "{err}");
    let err = select_task(t, "nobody").unwrap_err();
    assert!(
        err.contains("a-rather-long-task-name, spin, worker"),
        "{err}"
    );
    let (id, note) = select_task(t, "spin").unwrap();
    assert_eq!(id.0, 1);
    assert!(note.unwrap().contains("10 tasks are named 'spin'"));
    // Ambiguous names take the first and say so.
    let scn = scenario(HACKBENCH, &[]);
    let (_, text) = run_once_with(
        &scn,
        1,
        Instruments {
            trace: None,
            explain: Some("hackbench".into()),
            timeline: false,
        },
    )
    .unwrap();
    assert!(text.unwrap().starts_with("Explain pid 0 'hackbench'"));
}

#[test]
fn explain_records_only_the_chosen_task() {
    let (_, _, log) = traced_engine(small_plan(), 20_000_000, Some(0));
    let log = log.unwrap();
    // worker: fork placement, a wakeup after its sleep, its exit (plus its migrations).
    use schedlab::stats::explain::Decision;
    let kinds: Vec<&str> = log
        .entries
        .iter()
        .map(|e| match e.decision {
            Decision::Fork { .. } => "fork",
            Decision::Wakeup { .. } => "wakeup",
            Decision::WakeupQueued { .. } => "queued",
            Decision::Migrate { .. } => "migrate",
            Decision::Exit { .. } => "exit",
        })
        .filter(|k| *k != "migrate")
        .collect();
    assert_eq!(kinds, ["fork", "wakeup", "exit"]);
    assert!(log.entries.iter().all(|e| e.time_ns <= 20_000_000));
}

// ----- ping-pong in the engine ---------------------------------------------------------------

/// Recompute ping-pongs from the (complete) migration log with the detector's rule.
fn from_log(e: &Engine, window_ns: u64) -> PingPong {
    let mut pp = PingPong::new(window_ns);
    let mut last = vec![None; e.tasks().len()];
    for m in e.migration_log() {
        pp.record(&mut last[m.task.idx()], m.time_ns, m.from, m.to, m.reason);
    }
    pp
}

#[test]
fn ping_pong_counts_every_migration_and_lands_in_the_json() {
    for window_ms in ["10", "0.5"] {
        // No background tasks: the recount below runs the workload's plan alone.
        let scn = scenario(
            &["hackbench", "-g", "4", "-l", "200"],
            &[
                &format!("run.pingpong_window_ms={window_ms}"),
                "run.noise_kworker_interval_us=0",
                "run.noise_kthread_interval_us=0",
            ],
        );
        let run = run_once(&scn, 1).unwrap();
        let json = run.json();
        let mig = &json["migrations"];
        let total = mig["ping_pong"].as_u64().unwrap();
        let by_pair: u64 = mig["ping_pong_by_pair"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(total, by_pair);
        // The same run through the engine: the incremental counts equal a recount from the
        // full migration log.
        let m = machine();
        let workload = schedlab::experiment::workloads::resolve(&scn, &m, 1).unwrap();
        let mut cfg = schedlab::experiment::engine_config(&scn, 1, workload.default_duration_ns);
        cfg.warmup_ns = cfg.warmup_ns.max(workload.warmup_ns);
        let mut e = Engine::new(
            m.clone(),
            CostModel::default_for(&m),
            cfg.clone(),
            Box::new(GlobalFifo::new(m.nr_cpus())),
            workload.plan,
        )
        .unwrap();
        e.run();
        let recount = from_log(&e, cfg.pingpong_window_ns);
        assert_eq!(e.ping_pong().total, total);
        assert_eq!(e.ping_pong(), &recount);
        if window_ms == "10" {
            assert!(total > 0, "hackbench under the FIFO policy bounces tasks");
        }
    }
}

#[test]
fn ping_pong_window_rejects_bad_values() {
    let opts = QuickOptions {
        machine: Some("hybrid-10".into()),
        sets: vec!["run.pingpong_window_ms=-1".into()],
        command: HACKBENCH.iter().map(|s| s.to_string()).collect(),
        ..QuickOptions::default()
    };
    let err = Scenario::from_doc(build_document(&opts).unwrap()).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("run.pingpong_window_ms"));
    assert!(err.message.contains("accepted"), "{err}");
}

// ----- the CLI ------------------------------------------------------------------------------

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

#[test]
fn cli_trace_and_explain_flags() {
    let dir = out_dir();
    let bad = dir.join("trace.json");
    let base = ["run", "-m", "hybrid-10", "--set", "kernel.policy=fifo"];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v.push("--");
        v.extend_from_slice(HACKBENCH);
        schedlab(&v)
    };
    let out = with(&["--trace", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--trace") && err.contains(".pftrace"), "{err}");

    let out = with(&["--explain", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--explain") && err.contains("no task named"),
        "{err}"
    );

    let good = dir.join("cli.txt");
    let out = with(&[
        "--runs",
        "2",
        "--trace",
        good.to_str().unwrap(),
        "--explain",
        "3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Explain pid 3 "), "{stdout}");
    let trace = std::fs::read_to_string(&good).unwrap();
    assert!(trace.contains("sched_switch:"));
}

/// The ftrace reader and the dynamics replay read back, from the model's own text trace,
/// the counters the run reports: switches (voluntary and involuntary), wakeups and
/// migrations (`se.nr_migrations`: every `set_task_cpu()`) per task summed — so `schedlab host-trace` measures the model's side
/// with the same numbers its results carry.
#[test]
fn the_text_trace_reads_back_to_the_runs_counters() {
    use schedlab::stats::dynamics::Dynamics;
    use schedlab::stats::trace::ftrace_reader::read_records;
    let (trace, json) = traced_hackbench("hackbench-dynamics.ftrace", "linux-fair");
    let file = std::io::BufReader::new(std::fs::File::open(&trace).unwrap());
    let records = read_records(file, "trace").unwrap();
    let tasks = json["tasks"].as_array().unwrap();
    let pids = tasks
        .iter()
        .map(|t| u32::try_from(t["pid"].as_u64().unwrap()).unwrap() + 1)
        .collect();
    let d = Dynamics::of(&records, &pids);
    let sum = |key: &str| -> u64 { tasks.iter().map(|t| t[key].as_u64().unwrap()).sum() };
    assert_eq!(d.tasks, tasks.len());
    assert_eq!(d.switches_voluntary, sum("nr_voluntary_switches"));
    assert_eq!(d.switches_involuntary, sum("nr_involuntary_switches"));
    assert!(d.switches_involuntary > 0, "the fair policy preempts here");
    assert_eq!(d.wakeups.total(), sum("nr_wakeups"));
    assert_eq!(
        d.migrations_at_wakeup + d.migrations_other,
        sum("nr_migrations")
    );
    // perf's cpu-migrations counts a migrated task once, when it next runs.
    assert!(json["perf_stat"]["cpu_migrations"].as_u64().unwrap() <= sum("nr_migrations"));
    assert_eq!(d.wait_after_wakeup_us.n, d.wakeups.total());
    assert_eq!(
        d.run_until_sleep_us.n + d.run_until_preempted_us.n,
        d.switches_voluntary + d.switches_involuntary
    );
}
