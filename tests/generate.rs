//! Workload generators and native results: each benchmark's plan has the real program's
//! structure, runs to completion (or its own length) under the global FIFO policy on the
//! `hybrid-10` preset with invariants checked, and its native report parses back to the
//! numbers in its JSON.

use std::path::{Path, PathBuf};

use schedlab::cost::CostModel;
use schedlab::engine::{Engine, EngineConfig, WorkloadPlan};
use schedlab::policy::fifo::GlobalFifo;
use schedlab::task::Op;
use schedlab::topology::{Machine, presets};
use schedlab::workload::WorkloadSpec;
use schedlab::workload::generate::{self, hackbench as ghb, schbench as gsb};
use schedlab::workload::hackbench::HackbenchIpc;
use schedlab::workload::results::{native_report, to_plat_us};
use schedlab::workload::view::RunView;

fn machine() -> Machine {
    presets::by_name("hybrid-10").expect("preset exists")
}

fn spec(cmd: &str) -> WorkloadSpec {
    WorkloadSpec::from_command(cmd, machine().nr_cpus()).expect("command parses")
}

fn run_plan(plan: WorkloadPlan, duration_ns: u64, warmup_ns: u64) -> Engine {
    let m = machine();
    let n = m.nr_cpus();
    let cfg = EngineConfig {
        check_invariants: true,
        duration_ns,
        warmup_ns,
        ..EngineConfig::default()
    };
    let mut e = Engine::new(
        m.clone(),
        CostModel::default_for(&m),
        cfg,
        Box::new(GlobalFifo::new(n)),
        plan,
    )
    .expect("plan is valid");
    e.run();
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        &e.invariant_violations()[..e.invariant_violations().len().min(5)]
    );
    e
}

fn run(spec: &WorkloadSpec, cap_ns: u64) -> Engine {
    let plan = generate::plan(spec, &machine(), 1).expect("plan builds");
    let d = generate::workload_duration_ns(spec)
        .unwrap_or(cap_ns)
        .min(cap_ns);
    run_plan(plan, d, generate::workload_warmup_ns(spec))
}

fn count_ops(plan: &WorkloadPlan, pred: impl Fn(&Op) -> bool) -> usize {
    plan.programs
        .iter()
        .flat_map(|p| p.ops.iter())
        .filter(|o| pred(o))
        .count()
}

// ----- hackbench -----------------------------------------------------------------------------

#[test]
fn hackbench_structure() {
    let s = spec("hackbench -g 2 -f 3 -l 4");
    let plan = generate::plan(&s, &machine(), 1).unwrap();
    // Parent + 2 groups × (3 receivers + 3 senders), in creation order.
    assert_eq!(plan.tasks.len(), 1 + 2 * 6);
    let comms: Vec<&str> = plan.tasks.iter().map(|t| t.comm.as_str()).collect();
    assert_eq!(comms[0], "hackbench");
    assert_eq!(
        &comms[1..4],
        &["receiver-0-0", "receiver-0-1", "receiver-0-2"]
    );
    assert_eq!(&comms[4..7], &["sender-0-0", "sender-0-1", "sender-0-2"]);
    assert!(plan.tasks.iter().all(|t| t.parent_cpu == 0));
    // Forks are sequential: each child starts one fork later than the previous.
    let fork = ghb::fork_ns(schedlab::workload::hackbench::HackbenchMode::Process);
    for (i, t) in plan.tasks.iter().enumerate() {
        assert_eq!(t.start_ns, i as u64 * fork);
    }
    // A sender writes to each of its group's 3 receivers in turn: one WF_SYNC data post per
    // receiver in its loop body.
    let sender = &plan.programs[plan.tasks[4].program as usize];
    let posts = sender
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Up { sync: true, .. }))
        .count();
    assert_eq!(posts, 1 + 3, "ready byte + one data write per receiver");
    // The parent's one write to the wake pipe wakes every polling child with WF_SYNC
    // (pipe_write() -> wake_up_interruptible_sync_poll()).
    let parent = &plan.programs[plan.tasks[0].program as usize];
    let start = parent.ops.iter().find(|o| matches!(o, Op::UpMany { .. }));
    assert_eq!(
        start,
        Some(&Op::UpMany {
            sem: 1,
            n: 12,
            sync: true
        }),
        "{:?}",
        parent.ops
    );
    // Data and space hand off cache lines (AF_UNIX by default): 5 per message, 2 per freed
    // slot; the three start-up semaphores hand off none.
    assert_eq!(&plan.sem_handoff_lines[..3], &[0, 0, 0]);
    assert!(
        plan.sem_handoff_lines[3..]
            .iter()
            .all(|&l| l == 5 || l == 2)
    );
}

#[test]
fn hackbench_moves_every_message_and_reports_time() {
    for cmd in [
        "hackbench -g 2 -f 4 -l 30",
        "hackbench -p -T -g 2 -f 4 -l 30",
        "hackbench 1 thread 10",
    ] {
        let s = spec(cmd);
        let WorkloadSpec::Hackbench(c) = &s else {
            unreachable!()
        };
        let e = run(&s, 10_000_000_000);
        assert!(e.all_exited(), "{cmd}: every task exits");
        // groups × senders × receivers × loops messages, each read once.
        assert_eq!(e.ops_total(), c.total_messages(), "{cmd}");
        let (text, json) = native_report(&s, &RunView::whole(&e), false);
        let time_s = json["time_s"].as_f64().unwrap();
        assert!(time_s > 0.0 && json["complete"] == true, "{cmd}");
        // The interval ends when the last child is reaped: the run ends right after.
        assert!(time_s * 1e9 <= e.end_ns() as f64);
        // "Time: S.mmm" is the JSON value truncated to ms.
        let line = text.lines().last().unwrap();
        let printed: f64 = line.trim_start_matches("Time: ").parse().unwrap();
        assert_eq!(printed, (time_s * 1000.0 + 1e-9).floor() / 1000.0, "{text}");
    }
}

#[test]
fn hackbench_buffer_capacities() {
    // AF_UNIX, 100-byte messages: truesize 768 → 212992/768 = 277; writable at ≤ 69 queued.
    assert_eq!(ghb::unix_skb_truesize(100), 768);
    assert_eq!(
        ghb::buffer_messages(HackbenchIpc::Socket, 100),
        (277, 277 - 69)
    );
    // Pipe: 40 messages per 4 KiB page, 16 pages; a freed page wakes writers.
    assert_eq!(ghb::buffer_messages(HackbenchIpc::Pipe, 100), (640, 40));
    assert_eq!(ghb::buffer_messages(HackbenchIpc::Pipe, 5000), (8, 1));
}

#[test]
fn hackbench_writers_block_on_full_buffers() {
    // One receiver, many writes: with a 10-page pipe budget of 8-KiB messages (2 pages each,
    // 8 fit) the senders must block and be woken by the reader.
    let s = spec("hackbench -p -g 1 -f 2 -l 50 -s 8192");
    let e = run(&s, 10_000_000_000);
    assert!(e.all_exited());
    assert_eq!(e.ops_total(), 2 * 2 * 50);
    let senders_woken: u64 = e
        .tasks()
        .iter()
        .filter(|t| t.comm.starts_with("sender"))
        .map(|t| t.stats.counters.nr_wakeups)
        .sum();
    // Each sender is woken once by the start herd; more means it blocked on space.
    assert!(senders_woken > 2, "{senders_woken}");
}

// ----- schbench ------------------------------------------------------------------------------

#[test]
fn schbench_structure_and_pinning() {
    let s = spec("schbench -L -m 2 -M auto -t 3 -n 0 -r 2");
    let plan = generate::plan(&s, &machine(), 1).unwrap();
    let WorkloadSpec::Schbench(c) = &s else {
        unreachable!()
    };
    let layout = gsb::Layout::of(c);
    assert_eq!(plan.tasks.len(), layout.nr_tasks());
    assert_eq!(plan.tasks.len(), 1 + 2 * (1 + 3));
    assert_eq!(plan.tasks[gsb::Layout::MAIN].comm, "schbench");
    for i in 0..2 {
        let m = &plan.tasks[layout.message(i)];
        assert_eq!(m.comm, "schbench-msg");
        // -M auto: message thread i on CPU i; workers on every CPU (the code's behaviour).
        assert_eq!(m.cpus_allowed.unwrap().to_string(), i.to_string());
        for w in 0..3 {
            let t = &plan.tasks[layout.worker(i, w)];
            assert_eq!(t.comm, "schbench-worker");
            assert_eq!(t.cpus_allowed.unwrap().weight(), 10);
        }
    }
    // Wakeups of workers carry the batch timestamp: message threads post with UpStamped.
    assert_eq!(count_ops(&plan, |o| matches!(o, Op::UpStamped { .. })), 2);
    // One request count per worker loop.
    assert_eq!(count_ops(&plan, |o| matches!(o, Op::CountOp)), 6);
}

#[test]
fn schbench_runs_counts_each_request_once_and_reports() {
    let s = spec("schbench -m 2 -t 4 -n 1 -F 64 -r 2 -i 1");
    let WorkloadSpec::Schbench(c) = &s else {
        unreachable!()
    };
    let e = run(&s, 20_000_000_000);
    assert!(
        e.stopped(),
        "the stats thread ends the run after -r seconds"
    );
    let end = e.end_ns();
    assert!((2_000_000_000..2_100_000_000).contains(&end), "{end}");
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    let req = e
        .metrics()
        .find(|(n, _)| *n == gsb::REQUEST_METRIC)
        .unwrap()
        .1
        .len();
    // Every completed request is counted exactly once: one request-latency sample each.
    // (Requests still in flight at the stop have neither.)
    assert_eq!(e.ops_total(), req);
    // Each request wakes its worker once: wakeup samples ≥ requests (the in-flight ones too).
    let wake = e
        .metrics()
        .find(|(n, _)| *n == gsb::WAKEUP_METRIC)
        .unwrap()
        .1
        .len();
    assert!(
        wake >= req && wake <= req + u64::from(c.message_threads * c.workers_per_message_thread)
    );
    // The report: -r + 1 RPS samples (t≈0 sample included), two interval reports.
    assert!(
        text.contains("RPS percentiles (requests) runtime 2 (s) (3 total samples)"),
        "{text}"
    );
    assert_eq!(text.matches("current rps:").count(), 2, "{text}");
    // "average rps" parses back to rps_avg = loop_count / -r.
    let avg: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("average rps: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(avg, json["rps_avg"].as_f64().unwrap());
    assert_eq!(json["loop_count"].as_u64().unwrap() as f64 / 2.0, avg);
    // Requests: usleep(100) + 50 µs slack + one 64 KB-matrix multiply, so p50 > 150 µs.
    let p50 = json["request_latency_us"]["p50"].as_u64().unwrap();
    assert!(p50 >= 150, "{p50}");
    // The starred p99 line of the final wakeup block parses back to the JSON's p99.
    let block = text.rsplit("Wakeup Latencies").next().unwrap();
    let p99: u64 = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("* 99.0th: "))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(p99, json["wakeup_latency_us"]["p99"].as_u64().unwrap());
}

#[test]
fn schbench_rps_mode_paces_requests() {
    // -R 400 over 2 message threads: 200 requests per thread per 1 s window.
    let s = spec("schbench -m 2 -t 4 -n 0 -R 400 -r 3");
    let e = run(&s, 20_000_000_000);
    let (_, json) = native_report(&s, &RunView::whole(&e), false);
    let loops = json["loop_count"].as_u64().unwrap();
    // Windows start at t≈0, 1, 2 and 3 s (the stop lands just after the 4th starts).
    assert!((1_200..=1_600).contains(&loops), "{loops}");
}

#[test]
fn schbench_pipe_and_classic_run() {
    let s = spec("schbench -p 4096 -m 1 -t 2 -r 1");
    let e = run(&s, 10_000_000_000);
    let (text, _) = native_report(&s, &RunView::whole(&e), false);
    assert!(text.contains("avg worker transfer:"), "{text}");
    let s = WorkloadSpec::from_command("schbench-classic -m 2 -t 2 -r 1", 10).unwrap();
    let e = run(&s, 10_000_000_000);
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    assert!(text.starts_with("Latency percentiles (usec)\n"), "{text}");
    // Workers spin 30 ms per loop: about 33 loops/s per worker at most.
    let loops = json["loop_count"].as_u64().unwrap();
    assert!((4..=4 * 34).contains(&loops), "{loops}");
    // -A is refused with a clear error.
    let e = generate::plan(&spec("schbench -A 50"), &machine(), 1).unwrap_err();
    assert!(e.message.contains("-A/--auto-rps"), "{e}");
}

/// The e4aa540 schbench (`schbench-2021`): the message thread busy-spins 30 ms after each
/// post, the 5 s warm-up zeroes the statistics, and a report is printed every 10 s after it.
#[test]
fn schbench_2021_spins_its_message_thread_and_warms_up() {
    let s = spec("schbench-2021 -m 1 -t 2 -r 12");
    let plan = generate::plan(&s, &machine(), 1).unwrap();
    // One 30 ms spin per batch copy in the message thread's program, none in the classic's.
    let spins = |p: &WorkloadPlan| {
        count_ops(
            p,
            |op| matches!(op, Op::SpinWall { ns } if *ns == 30_000_000),
        )
    };
    assert_eq!(
        spins(&plan),
        64 + 2,
        "64 message-thread copies + 2 workers' -c spins"
    );
    let classic = generate::plan(&spec("schbench-classic -m 1 -t 2 -r 12"), &machine(), 1).unwrap();
    assert_eq!(spins(&classic), 2);
    let e = run(&s, 20_000_000_000);
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    let warm = text
        .find("warmup done, zeroing stats\n")
        .expect("warm-up notice");
    let interval = text
        .find("Latency percentiles (usec) runtime 10 (s) (")
        .expect("the 10 s report");
    let last = text
        .rfind("Latency percentiles (usec) runtime 12 (s) (")
        .expect("the final report");
    assert!(warm < interval && interval < last, "{text}");
    // A cycle is the 30 ms worker spin, the message thread's 30 ms spin and its 30-37.5 ms
    // sleep: ~95-100 ms, so ~10 batches a second; only the 7 s after the warm-up count.
    let p99 = json["wakeup_latency_us"]["p99"].as_u64().unwrap();
    assert!(p99 > 0, "{json}");
    let samples: u64 = text[last..]
        .split("runtime 12 (s) (")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        (2 * 55..=2 * 80).contains(&samples),
        "{samples} samples in 7 s\n{text}"
    );
}

#[test]
fn schbench_latency_conversion_is_to_the_microsecond() {
    let mut h = schedlab::hist::Histogram::new();
    h.record(100); // 0.1 µs: dropped, like the program's `delta == 0`
    h.record(150_000);
    h.record(2_000_000);
    let p = to_plat_us(&h);
    assert_eq!(p.nr_samples, 2);
    assert_eq!(p.min, 150);
    // 2 ms within the engine histogram's 1/128 bucket width.
    assert!((1990..=2010).contains(&p.max), "{}", p.max);
    assert_eq!(
        gsb::request_work_ns(&match spec("schbench -n 5") {
            WorkloadSpec::Schbench(c) => c,
            _ => unreachable!(),
        }),
        // 5 × 104³ multiply-adds at 1.45 ns (the reference CPU's naive matrix multiply).
        5 * 104 * 104 * 104 * 1450 / 1000
    );
}

// ----- stress-ng -----------------------------------------------------------------------------

#[test]
fn stressng_stops_after_cpu_ops() {
    let s = spec("stress-ng --cpu 4 --cpu-method matrixprod --cpu-ops 40 --metrics-brief");
    let WorkloadSpec::StressNg(c) = &s else {
        unreachable!()
    };
    let e = run(&s, 100_000_000_000);
    assert!(e.all_exited(), "instances exit after their ops");
    // ceil(40/4) = 10 bogo ops each; matrixprod: 1484.5/263.84 = 5.63 ops per call, so two
    // calls each (⌊1 × 5.63⌋ = 5 < 10 ≤ ⌊2 × 5.63⌋ = 11).
    assert_eq!(c.calls_for_ops(10), 2);
    assert_eq!(e.ops_total(), 4 * 2);
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    assert_eq!(json["bogo_ops"].as_u64().unwrap(), 4 * 11);
    let row = text.lines().find(|l| l.contains("] cpu ")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[4].parse::<u64>().unwrap(), 44, "{row}");
    let rate: f64 = cols[8].parse().unwrap();
    assert_eq!(rate, json["bogo_ops_per_s"].as_f64().unwrap(), "{row}");
}

#[test]
fn stressng_load_slices_hold_the_duty_cycle() {
    // 2 instances at 30 % on a 10-CPU machine: each is busy ~30 % of the wall time.
    let s = spec("stress-ng --cpu 2 -l 30 --cpu-method matrixprod --cpu-load-slice -2 -t 2");
    let e = run(&s, 2_000_000_000);
    for t in &e.tasks()[..2] {
        let busy = t.stats.counters.sum_exec_runtime_ns as f64 / e.end_ns() as f64;
        assert!((0.27..0.33).contains(&busy), "{busy}");
    }
    let (_, json) = native_report(&s, &RunView::whole(&e), false);
    assert!(json["bogo_ops"].as_u64().unwrap() > 0);
    // -l 0: sleep for the whole timeout; -l 100: busy the whole time.
    let e = run(&spec("stress-ng --cpu 1 -l 0 -t 1"), 1_000_000_000);
    assert!(e.tasks()[0].stats.counters.sum_exec_runtime_ns < 10_000);
    let e = run(&spec("stress-ng --cpu 1 -t 1"), 1_000_000_000);
    let busy = e.tasks()[0].stats.counters.sum_exec_runtime_ns as f64 / 1e9;
    assert!(busy > 0.99, "{busy}");
}

// ----- netperf / tbench ----------------------------------------------------------------------

#[test]
fn netperf_pairs_alternate() {
    let s = spec("netperf -t TCP_RR -l -500 -- -r 64,64");
    let plan = generate::plan(&s, &machine(), 1).unwrap();
    assert_eq!(plan.tasks.len(), 2);
    let e = run(&s, 10_000_000_000);
    assert!(e.stopped());
    assert_eq!(e.ops_total(), 500);
    // Strict alternation: the server is woken once per transaction.
    // (The very first request may arrive before the server has blocked.)
    assert!((499..=500).contains(&e.tasks()[1].stats.counters.nr_wakeups));
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    let rate: f64 = text
        .lines()
        .rev()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(rate, json["throughput"].as_f64().unwrap());
    // About 1/(2 × (send + recv + wakeup)) on two CPUs: 20–100 k transactions/s.
    assert!((20_000.0..100_000.0).contains(&rate), "{rate}");

    let s = spec("tbench -t 1 --warmup 0 3");
    let e = run(&s, 1_000_000_000);
    assert_eq!(e.tasks().len(), 6);
    let (text, json) = native_report(&s, &RunView::whole(&e), false);
    assert_eq!(json["kind"], "tbench");
    assert!(text.contains("3 clients  3 procs"), "{text}");
}

/// dbench's `sig_alarm()` restarts its clock when the warm-up ends and stops the clients `-t`
/// seconds after that, so tbench's length is warm-up + `-t`; netperf has no warm-up.
#[test]
fn tbench_runs_its_warmup_then_t_seconds() {
    const S: u64 = 1_000_000_000;
    let s = spec("tbench -t 3 --warmup 4 2");
    assert_eq!(generate::workload_duration_ns(&s), Some(7 * S));
    assert_eq!(generate::workload_warmup_ns(&s), 4 * S);
    assert_eq!(generate::ending(&s), generate::Ending::After(7 * S));
    // The default warm-up is -t/5: 600 s + 120 s.
    let s = spec("tbench 2");
    assert_eq!(generate::workload_duration_ns(&s), Some(720 * S));
    let s = spec("netperf -t TCP_RR -l 3");
    assert_eq!(generate::workload_duration_ns(&s), Some(3 * S));
    assert_eq!(generate::workload_warmup_ns(&s), 0);
}

// ----- rt-app --------------------------------------------------------------------------------

fn fixtures() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let candidate = dir.join("shared/fixtures");
        if candidate.is_dir() {
            return candidate;
        }
        assert!(dir.pop(), "shared/fixtures not found above the crate");
    }
}

#[test]
fn rtapp_fixtures_generate_and_run_one_second() {
    let dir = fixtures().join("rt-app");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    for f in files {
        let s = WorkloadSpec::RtApp(
            schedlab::workload::rtapp::load(&f, machine().nr_cpus()).expect("fixture loads"),
        );
        let plan =
            generate::plan(&s, &machine(), 1).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let WorkloadSpec::RtApp(r) = &s else {
            unreachable!()
        };
        assert!(plan.tasks.len() as u64 >= r.nr_threads(), "{}", f.display());
        let e = run_plan(plan, 1_000_000_000, 0);
        let busy: u64 = e
            .tasks()
            .iter()
            .map(|t| t.stats.counters.sum_exec_runtime_ns)
            .sum();
        assert!(busy > 0, "{}: something ran", f.display());
        let (text, _) = native_report(&s, &RunView::whole(&e), false);
        assert_eq!(text.lines().count(), e.tasks().len());
    }
}

#[test]
fn rtapp_periodic_timer_keeps_its_period() {
    let text = r#"{ "global": { "duration": 1 },
        "tasks": { "periodic": { "instance": 1, "run": 2000,
                                 "timer": { "ref": "unique", "period": 10000 } } } }"#;
    let r = schedlab::workload::rtapp::parse_str(text, "t.json", 10).unwrap();
    let s = WorkloadSpec::RtApp(r);
    let e = run(&s, 1_000_000_000);
    for t in e.tasks() {
        // Alone on CPU 0 (the calibration CPU, so 2000 µs of `run` take 2 ms there):
        // 100 periods of 10 ms in 1 s, each with 2 ms of work: 20 % busy, ~100 wakeups.
        let busy = t.stats.counters.sum_exec_runtime_ns as f64 / 1e9;
        assert!((0.19..0.21).contains(&busy), "{busy}");
        assert!(
            (98..=101).contains(&t.stats.counters.nr_wakeups),
            "{}",
            t.stats.counters.nr_wakeups
        );
    }
}

#[test]
fn rtapp_fork_pool_starts_on_fork() {
    let f = fixtures().join("rt-app/tutorial-example9.json");
    let r = schedlab::workload::rtapp::load(&f, 10).unwrap();
    let s = WorkloadSpec::RtApp(r);
    let plan = generate::plan(&s, &machine(), 1).unwrap();
    // thread1 and thread3 start; thread3 forks thread1 once and thread2 once (loop 1).
    assert_eq!(plan.tasks.len(), 2 + 2);
    let e = run_plan(plan, 2_000_000_000, 0);
    // The forked thread2 ran: 20 ms of work per loop.
    let t2 = e
        .tasks()
        .iter()
        .find(|t| t.comm.starts_with("thread2"))
        .unwrap();
    assert!(t2.stats.counters.sum_exec_runtime_ns >= 20_000_000);
}

// ----- the engine ops the generators added ---------------------------------------------------

mod ops {
    use super::*;
    use schedlab::task::{Program, TaskSpec, TaskState};
    use schedlab::topology::CpuTopology;

    /// `n` cores without SMT, one LLC.
    fn flat(n: usize) -> Machine {
        let cpus = (0..n)
            .map(|cpu| CpuTopology {
                cpu,
                core: cpu,
                cluster: cpu,
                llc: 0,
                package: 0,
                node: 0,
                capacity: 1024,
            })
            .collect();
        Machine::new("flat", "test", cpus, vec![vec![10]]).unwrap()
    }

    fn task(program: u32, start_ns: u64) -> TaskSpec {
        TaskSpec {
            comm: format!("t{program}"),
            program,
            nice: 0,
            cpus_allowed: None,
            start_ns,
            parent_cpu: 0,
            footprint_kib: 0,
            ..Default::default()
        }
    }

    fn go(progs: Vec<Vec<Op>>, starts: &[u64], sems: Vec<u64>, metrics: usize) -> Engine {
        go_cfg(progs, starts, sems, metrics, EngineConfig::default())
    }

    fn go_cfg(
        progs: Vec<Vec<Op>>,
        starts: &[u64],
        sems: Vec<u64>,
        metrics: usize,
        base: EngineConfig,
    ) -> Engine {
        let m = flat(4);
        let plan = WorkloadPlan {
            tasks: starts
                .iter()
                .enumerate()
                .map(|(i, &s)| task(i as u32, s))
                .collect(),
            programs: progs
                .into_iter()
                .enumerate()
                .map(|(i, ops)| Program {
                    name: format!("p{i}"),
                    ops,
                })
                .collect(),
            sems,
            nr_barriers: 0,
            nr_spinlocks: 0,
            metrics: (0..metrics).map(|i| format!("m{i}")).collect(),
            ..Default::default()
        };
        let cfg = EngineConfig {
            check_invariants: true,
            duration_ns: 1_000_000_000,
            ..base
        };
        let mut e = Engine::new(
            m.clone(),
            CostModel::default_for(&m),
            cfg,
            Box::new(GlobalFifo::new(4)),
            plan,
        )
        .unwrap();
        e.run();
        assert!(
            e.invariant_violations().is_empty(),
            "{:?}",
            e.invariant_violations()
        );
        e
    }

    #[test]
    fn trydown_branches_and_downall_moves_units() {
        // sem 0 has 3 units: DownAll moves them to sem 1; TryDown takes them one by one
        // (CountOp each) and branches out when none are left.
        let e = go(
            vec![vec![
                Op::DownAll { sem: 0, into: 1 },
                Op::TryDown { sem: 1, else_to: 4 },
                Op::CountOp,
                Op::Jump { to: 1 },
                Op::Exit,
            ]],
            &[0],
            vec![3, 0],
            0,
        );
        assert!(e.all_exited());
        assert_eq!(e.ops_total(), 3);
        assert_eq!((e.sem_count(0), e.sem_count(1)), (0, 0));
    }

    #[test]
    fn upstamped_hands_the_wakers_timestamp() {
        // The waker marks at t0, computes 100 µs, then posts: the wakee's latency sample
        // (now − stamp) includes those 100 µs. A second stamped unit, posted before the
        // wakee waits again, is taken without blocking and still carries its stamp.
        let waker = vec![
            Op::Mark { slot: 0 },
            Op::Run { work_ns: 100_000 },
            Op::UpStamped {
                sem: 0,
                sync: false,
                slot: 0,
            },
            Op::Mark { slot: 0 },
            Op::UpStamped {
                sem: 0,
                sync: false,
                slot: 0,
            },
            Op::Exit,
        ];
        let wakee = vec![
            Op::Down { sem: 0 },
            Op::Sample { slot: 0, metric: 0 },
            Op::Run { work_ns: 50_000 },
            Op::Down { sem: 0 },
            Op::Sample { slot: 0, metric: 0 },
            Op::Exit,
        ];
        let e = go(vec![waker, wakee], &[1_000_000, 0], vec![0], 1);
        assert!(e.all_exited());
        let h = e.metrics().next().unwrap().1;
        assert_eq!(h.len(), 2);
        assert!(h.max() >= 100_000, "first: {}", h.max());
        // The second unit's stamp is from after the first post, and the wakee took it after
        // 50 µs of work; without the handed stamps, slot 0 would be 0 and the samples would
        // be absolute times, i.e. at least the waker's 1 ms start plus its 100 µs of work.
        assert!(h.min() >= 50_000, "second: {}", h.min());
        assert!(h.max() < 1_000_000, "{}", h.max());
    }

    #[test]
    fn upthreshold_wakes_only_at_the_threshold() {
        // A writer blocks on an empty "space" semaphore; the reader returns one unit every
        // 10 µs with a threshold of 5: the writer wakes only after the 5th (≥ 50 µs).
        let writer = vec![Op::Down { sem: 0 }, Op::Mark { slot: 0 }, Op::Exit];
        let reader = vec![
            Op::Mark { slot: 0 },
            Op::Run { work_ns: 10_000 },
            Op::UpThreshold {
                sem: 0,
                sync: true,
                min_count: 5,
            },
            Op::Loop {
                to: 1,
                times: 8,
                slot: 0,
            },
            Op::Exit,
        ];
        let e = go(vec![writer, reader], &[0, 1_000], vec![0], 0);
        assert!(e.all_exited());
        // Woken once, when 5 units were there; it took one, 4 left, plus 3 more posts.
        assert_eq!(e.tasks()[0].stats.counters.nr_wakeups, 1);
        assert_eq!(e.sem_count(0), 8 - 1);
        assert!(e.tasks()[1].stats.counters.sum_exec_runtime_ns >= 80_000);
    }

    /// Two writers blocked on a full pipe (`space` at 0, both started before the reader),
    /// each `Down` then (with `wake_next`) `WakeNext`; the reader returns room with `UpPage`
    /// (page of 4) every 200 µs, 8 reads. Returns whether both writers finished, each
    /// writer's wakeups, and the room left.
    /// Which `pipe_read()` wakeup rule the engine follows.
    #[derive(Clone, Copy)]
    enum PipeRule {
        /// Before v5.5: a freed page wakes every waiter.
        NonExclusive,
        /// v5.5-v6.13: a read that began with the pipe full wakes one waiter.
        WasFull,
        /// v6.14 (aaec5a95d596): ... and freed a page.
        WasFullAndFreed,
    }

    fn pipe_writers(wake_next: bool, rule: PipeRule) -> (bool, (u64, u64), u64) {
        let mut writer = vec![Op::Down { sem: 0 }];
        if wake_next {
            writer.push(Op::WakeNext { sem: 0, sync: true });
        }
        writer.push(Op::Exit);
        let reader = vec![
            Op::Run { work_ns: 200_000 },
            Op::UpPage {
                sem: 0,
                sync: true,
                page: 4,
            },
            Op::Loop {
                to: 0,
                times: 8,
                slot: 0,
            },
            Op::Exit,
        ];
        let cfg = EngineConfig {
            pipe_exclusive_waits: !matches!(rule, PipeRule::NonExclusive),
            pipe_wake_on_free: matches!(rule, PipeRule::WasFullAndFreed),
            ..EngineConfig::default()
        };
        let e = go_cfg(
            vec![writer.clone(), writer, reader],
            &[0, 0, 1_000],
            vec![0],
            0,
            cfg,
        );
        let writer_wakeups = |i: usize| e.tasks()[i].stats.counters.nr_wakeups;
        let writers_done = e.tasks()[..2].iter().all(|t| t.state == TaskState::Dead);
        (
            writers_done,
            (writer_wakeups(0), writer_wakeups(1)),
            e.sem_count(0),
        )
    }

    #[test]
    fn uppage_wakes_one_writer_per_read_from_a_full_pipe_and_writers_chain() {
        // `pipe_read()` wakes one (exclusive) writer per read that began with the pipe full,
        // room or not: reads 1-3 free no page, so each wakes a writer that re-checks and
        // waits again (W0, W1, W0: the queue rotates); read 4 frees the page (4 units) and
        // wakes W1, which takes one and, having waited, wakes W0 (`wake_next_writer`), which
        // takes another. Reads 5-8 start with room: nobody is woken; read 8 frees a page.
        assert_eq!(
            pipe_writers(true, PipeRule::WasFull),
            (true, (3, 2), 4 - 2 + 4)
        );
        // Without `WakeNext`, the writer left waiting after read 4 (W0) is never woken again:
        // the reads after it find room, so none of them wakes a writer.
        assert_eq!(
            pipe_writers(false, PipeRule::WasFull),
            (false, (2, 2), 4 - 1 + 4)
        );
    }

    #[test]
    fn uppage_before_v5_5_wakes_every_writer_when_a_page_is_freed() {
        // One wait queue, non-exclusive waits, a wakeup only when a read frees a buffer:
        // reads 1-3 wake nobody; read 4 wakes both writers, which each take a unit.
        // `WakeNext` does nothing (there is no `wake_next_writer`).
        assert_eq!(
            pipe_writers(true, PipeRule::NonExclusive),
            (true, (1, 1), 4 - 2 + 4)
        );
    }

    #[test]
    fn uppage_from_v6_14_wakes_a_writer_only_when_a_read_frees_a_page() {
        // aaec5a95d596: reads 1-3 leave the pipe full, so they wake nobody (v5.5-v6.13 woke
        // a writer each time, for nothing); read 4 frees the page and wakes W0, the head of
        // the queue, which takes a unit and wakes W1 (`wake_next_writer`), which takes
        // another. One wakeup each, against (3, 2) under the v5.5 rule.
        assert_eq!(
            pipe_writers(true, PipeRule::WasFullAndFreed),
            (true, (1, 1), 4 - 2 + 4)
        );
        // The chain still matters: without `WakeNext` only W0 is ever woken.
        assert_eq!(
            pipe_writers(false, PipeRule::WasFullAndFreed),
            (false, (1, 0), 4 - 1 + 4)
        );
    }

    #[test]
    fn wake_is_lost_without_a_waiter() {
        // The signal comes before the wait: the waiter sleeps until the end of the run.
        let signaller = vec![Op::Wake { sem: 0, all: false }, Op::Exit];
        let waiter = vec![Op::Run { work_ns: 100_000 }, Op::Down { sem: 0 }, Op::Exit];
        let e = go(vec![signaller, waiter], &[0, 0], vec![0], 0);
        assert!(!e.all_exited());
        // A broadcast after the waiters block wakes all of them.
        let waiter = vec![Op::Down { sem: 0 }, Op::Exit];
        let broadcaster = vec![
            Op::Run { work_ns: 100_000 },
            Op::Wake { sem: 0, all: true },
            Op::Exit,
        ];
        let e = go(
            vec![waiter.clone(), waiter, broadcaster],
            &[0, 0, 0],
            vec![0],
            0,
        );
        assert!(e.all_exited());
    }

    #[test]
    fn timerwait_relative_restarts_when_late() {
        // Period 10 ms but 15 ms of work per period: every expiry is already past, so the
        // task never sleeps; in relative mode the schedule restarts from now each time.
        let late = vec![
            Op::TimerStart { timer: 0 },
            Op::Run {
                work_ns: 15_000_000,
            },
            Op::TimerWait {
                timer: 0,
                period_ns: 10_000_000,
                absolute: false,
            },
            Op::Loop {
                to: 1,
                times: 4,
                slot: 0,
            },
            Op::Exit,
        ];
        let e = go(vec![late], &[0], vec![], 0);
        assert!(e.all_exited());
        assert_eq!(e.tasks()[0].stats.counters.nr_wakeups, 0);
        // 5 ms of work then a 10 ms period: sleeps 5 ms each time; 4 periods ≈ 40 ms.
        let fits = vec![
            Op::TimerStart { timer: 0 },
            Op::Run { work_ns: 5_000_000 },
            Op::TimerWait {
                timer: 0,
                period_ns: 10_000_000,
                absolute: true,
            },
            Op::Loop {
                to: 1,
                times: 4,
                slot: 0,
            },
            Op::Exit,
        ];
        let e = go(vec![fits], &[0], vec![], 0);
        assert_eq!(e.tasks()[0].stats.counters.nr_wakeups, 4);
        let end = e.end_ns();
        assert!((40_000_000..40_300_000).contains(&end), "{end}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// Whatever the shape and IPC kind, hackbench moves exactly G·F·F·loops messages and every
    /// task exits (no lost wakeup on the data, space, ready, wake or reap semaphores).
    #[test]
    fn hackbench_always_completes(groups in 1u32..3, fds in 1u32..5, loops in 1u32..40,
                                  ipc in 0usize..3, size in proptest::sample::select(vec![1u32, 100, 5000])) {
        let flag = ["", "-p", "-i"][ipc];
        let s = spec(&format!("hackbench {flag} -g {groups} -f {fds} -l {loops} -s {size}"));
        let e = run(&s, 10_000_000_000);
        proptest::prop_assert!(e.all_exited());
        proptest::prop_assert_eq!(
            e.ops_total(),
            u64::from(groups) * u64::from(fds) * u64::from(fds) * u64::from(loops)
        );
    }
}

#[test]
fn reports_are_deterministic() {
    for cmd in [
        "hackbench -g 2 -f 3 -l 20",
        "schbench -m 2 -t 3 -n 1 -F 32 -r 1",
    ] {
        let s = spec(cmd);
        let a = native_report(&s, &RunView::whole(&run(&s, 5_000_000_000)), false);
        let b = native_report(&s, &RunView::whole(&run(&s, 5_000_000_000)), false);
        assert_eq!(a, b, "{cmd}");
    }
}
