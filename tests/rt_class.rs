//! The RT class inside the Linux policy, checked against kernel facts: the class order
//! (RT before fair, the fair dl_server before RT), SCHED_FIFO / SCHED_RR semantics, RT
//! wakeup placement (`find_lowest_rq`), RT throttling before v6.12 and the fair server
//! from v6.12, and that fair load balancing never moves RT tasks.

use schedlab::config::scenario::Scenario;
use schedlab::cpumask::CpuMask;
use schedlab::engine::{Engine, WorkloadPlan};
use schedlab::experiment;
use schedlab::task::{Op, Program, TaskPolicy, TaskSpec};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// An engine for `toml` (machine + kernel) running `plan` for `duration_ns`, invariants on.
fn engine(toml: &str, plan: WorkloadPlan, duration_ns: u64) -> Engine {
    let text = format!("{toml}[workload]\nkind = \"spin\"\n");
    let scn = Scenario::parse(&text, "test").unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let cost = experiment::resolve_cost(&scn, &machine).unwrap();
    let mut cfg = experiment::engine_config(&scn, 1, duration_ns);
    cfg.check_invariants = true;
    let policy = experiment::make_policy(&scn, &machine, &cost, 1);
    Engine::new(machine, cost, cfg, policy, plan).unwrap()
}

fn kernel(profile: &str, extra: &str) -> String {
    format!("[machine]\npreset = \"skl-2s\"\n[kernel]\nprofile = \"{profile}\"\n{extra}")
}

fn task(comm: &str, program: u32, policy: TaskPolicy, cpus: Option<&str>) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        cpus_allowed: cpus.map(|c| CpuMask::parse(c).unwrap()),
        policy,
        ..Default::default()
    }
}

fn fifo(rt_priority: u8) -> TaskPolicy {
    TaskPolicy::Fifo { rt_priority }
}

fn hog() -> Program {
    Program {
        name: "hog".into(),
        ops: vec![Op::Run { work_ns: SEC }, Op::Jump { to: 0 }],
    }
}

fn assert_clean(e: &Engine) {
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        &e.invariant_violations()[..e.invariant_violations().len().min(5)]
    );
    let (runtime, busy) = e.runtime_and_busy_ns();
    assert_eq!(runtime, busy, "busy time equals the sum of task runtimes");
}

/// One SCHED_FIFO hog and one nice-0 fair hog pinned to CPU 2 for `duration_ns`: the
/// fair task's CPU time and the engine.
fn fifo_vs_fair(toml: &str, duration_ns: u64) -> (u64, Engine) {
    let plan = WorkloadPlan {
        programs: vec![hog()],
        tasks: vec![
            task("rt", 0, fifo(50), Some("2")),
            task("fair", 0, TaskPolicy::Normal, Some("2")),
        ],
        ..Default::default()
    };
    let mut e = engine(toml, plan, duration_ns);
    e.run();
    assert_clean(&e);
    (e.tasks()[1].stats.counters.sum_exec_runtime_ns, e)
}

/// The fair task of [`fifo_vs_fair`] gets 5.0 % ± 0.2 % of 10 s, in ~10 bursts, none
/// before 940 ms and about 50 ms by 1 s: the bursts sit at the end of each second.
fn assert_five_percent_at_period_end(toml: &str) {
    let (fair_ns, e) = fifo_vs_fair(toml, 10 * SEC);
    let share = fair_ns as f64 / (10 * SEC) as f64;
    assert!((share - 0.05).abs() <= 0.002, "fair share {share}");
    let switches = e.tasks()[1].stats.counters.nr_switches;
    assert!((9..=11).contains(&switches), "fair bursts {switches}");
    let (early_ns, _) = fifo_vs_fair(toml, 940 * MS);
    assert_eq!(early_ns, 0, "no fair runtime before the period's end");
    let (first_ns, _) = fifo_vs_fair(toml, SEC);
    assert!(
        (44 * MS..=56 * MS).contains(&first_ns),
        "first burst {first_ns} ns"
    );
}

/// v6.12+: the fair server guarantees 50 ms per 1 s period to a fair task starved by an
/// RT hog. In defer mode it first runs at the zero-laxity point (deadline − runtime, 950 ms
/// after the fair task arrived), then, having handled a starvation, at once at each
/// replenishment a period later (it does not defer again): 50 ms at the end of each second.
#[test]
fn fair_server_gives_fair_5_percent_under_an_rt_hog() {
    assert_five_percent_at_period_end(&kernel("v6.12", ""));
    assert_five_percent_at_period_end(&kernel("v6.18", ""));
}

/// Before v6.12, RT throttling (950000 µs per 1000000 µs) stops the RT hog once it used
/// 950 ms of the period (noticed at the tick); the fair task runs until the period timer
/// refills the RT budget.
#[test]
fn rt_throttling_gives_fair_the_rest_of_each_period_before_v6_12() {
    assert_five_percent_at_period_end(&kernel("v6.6", ""));
    // sched_rt_runtime_us = sched_rt_period_us means no limit (the kernel's -1).
    let (fair_ns, _) = fifo_vs_fair(
        &kernel("v6.6", "sysctl = { sched_rt_runtime_us = 1000000 }\n"),
        3 * SEC,
    );
    assert_eq!(fair_ns, 0);
}

/// v6.12 removed the default RT bandwidth control (5f6bd380c7bd): without the fair server
/// nothing stops an RT hog and the fair task never runs.
#[test]
fn no_fair_server_means_starvation_from_v6_12() {
    for extra in [
        "features = { DL_SERVER = false }\n",
        "sysctl = { dl_server_runtime_ns = 0 }\n",
    ] {
        let (fair_ns, e) = fifo_vs_fair(&kernel("v6.12", extra), 3 * SEC);
        assert_eq!(fair_ns, 0, "{extra}");
        assert!(e.tasks()[0].stats.counters.sum_exec_runtime_ns > 3 * SEC - MS);
    }
}

/// A periodic task: run `run_ns`, sleep `sleep_ns`, forever.
fn periodic(run_ns: u64, sleep_ns: u64) -> Program {
    Program {
        name: "periodic".into(),
        ops: vec![
            Op::Run { work_ns: run_ns },
            Op::Sleep { ns: sleep_ns },
            Op::Jump { to: 0 },
        ],
    }
}

fn plan(programs: Vec<Program>, tasks: Vec<TaskSpec>) -> WorkloadPlan {
    WorkloadPlan {
        programs,
        tasks,
        ..Default::default()
    }
}

/// Average wait from runnable to running per run, in ns.
fn mean_wait_ns(e: &Engine, i: usize) -> u64 {
    let s = &e.tasks()[i].stats;
    s.counters.wait_sum_ns / s.counters.wait_count.max(1)
}

/// `wakeup_preempt_rt()`: a waking SCHED_FIFO 50 task preempts a running SCHED_FIFO 10 hog
/// at once (`p->prio` 49 < 89); a SCHED_FIFO 5 task (prio 94) never gets the CPU from it.
#[test]
fn higher_fifo_priority_preempts_at_wakeup_lower_never_runs() {
    let run = |waker_prio: u8| {
        let mut t1 = task("waker", 1, fifo(waker_prio), Some("2"));
        t1.start_ns = MS;
        let p = plan(
            vec![hog(), periodic(MS, 9 * MS)],
            vec![task("hog", 0, fifo(10), Some("2")), t1],
        );
        let mut e = engine(&kernel("v6.18", ""), p, SEC);
        e.run();
        assert_clean(&e);
        e
    };
    let e = run(50);
    let s = &e.tasks()[1].stats;
    assert!(
        s.counters.sum_exec_runtime_ns >= 95 * MS,
        "{}",
        s.counters.sum_exec_runtime_ns
    );
    // Preempting needs only the context switch (plus the timer slack).
    assert!(
        mean_wait_ns(&e, 1) < 20_000,
        "wait {} ns",
        mean_wait_ns(&e, 1)
    );
    let e = run(5);
    assert_eq!(e.tasks()[1].stats.counters.sum_exec_runtime_ns, 0);
}

/// SCHED_FIFO has no time slice: of two equal-priority hogs on one CPU the first runs
/// forever; SCHED_RR hogs alternate every `sched_rr_timeslice` (100 ms = 25 ticks at
/// HZ=250): ~10 switches per second each way, 50/50.
#[test]
fn fifo_runs_to_completion_rr_alternates_every_100_ms() {
    let pair = |policy: TaskPolicy| {
        let p = plan(
            vec![hog()],
            vec![
                task("a", 0, policy, Some("2")),
                task("b", 0, policy, Some("2")),
            ],
        );
        let mut e = engine(&kernel("v6.18", ""), p, 2 * SEC);
        e.run();
        assert_clean(&e);
        e
    };
    let e = pair(fifo(30));
    assert_eq!(e.tasks()[1].stats.counters.sum_exec_runtime_ns, 0);
    assert!(e.tasks()[0].stats.counters.sum_exec_runtime_ns > 2 * SEC - MS);
    assert_eq!(e.tasks()[0].stats.counters.nr_switches, 0);
    let e = pair(TaskPolicy::Rr { rt_priority: 30 });
    for t in e.tasks() {
        let share = t.stats.counters.sum_exec_runtime_ns as f64 / (2 * SEC) as f64;
        assert!((share - 0.5).abs() < 0.03, "{} share {share}", t.comm);
        // 2 s / 100 ms = 20 slices, 10 per task; each ends in an involuntary switch.
        let n = t.stats.counters.nr_involuntary_switches;
        assert!((9..=11).contains(&n), "{} switched out {n} times", t.comm);
    }
}

/// An RT task waking on a CPU that runs a fair hog preempts it at once (RT is a higher
/// class: `wakeup_preempt` → `resched_curr`), whatever the fair task's slice; the fair
/// task gets the rest of the CPU.
#[test]
fn rt_wakeup_preempts_a_fair_task_immediately() {
    rt_wakeup_preempts_fair(&kernel("v6.18", ""));
    // Also under preempt=lazy: only fair preemption is lazy (`resched_curr_lazy`).
    rt_wakeup_preempts_fair(&kernel("v6.18", "preempt = \"lazy\"\n"));
}

fn rt_wakeup_preempts_fair(toml: &str) {
    let p = plan(
        vec![hog(), periodic(2 * MS, 8 * MS)],
        vec![
            task("fair", 0, TaskPolicy::Normal, Some("2")),
            task("rt", 1, fifo(1), Some("2")),
        ],
    );
    let mut e = engine(toml, p, SEC);
    e.run();
    assert_clean(&e);
    assert!(
        mean_wait_ns(&e, 1) < 20_000,
        "wait {} ns",
        mean_wait_ns(&e, 1)
    );
    let rt = e.tasks()[1].stats.counters.sum_exec_runtime_ns;
    assert!((190 * MS..=205 * MS).contains(&rt), "rt ran {rt} ns");
    assert!(e.tasks()[0].stats.counters.sum_exec_runtime_ns > 780 * MS);
}

/// `select_task_rq_rt()`: an RT task whose previous CPU runs a higher-priority RT task is
/// sent by `find_lowest_rq()` to a CPU running lower-priority work (here an idle CPU of
/// the nearest wake-affine domain: CPU 2's SMT sibling); if the running RT task has the
/// lower priority (and may itself migrate), the wakee stays and preempts it.
#[test]
fn find_lowest_rq_moves_a_wakee_away_from_a_higher_rt_task() {
    let run = |hog_prio: u8| {
        let mut w = task("wakee", 1, fifo(20), None);
        w.parent_cpu = 2;
        w.start_ns = MS;
        let mut h = task("hog", 0, fifo(hog_prio), None);
        h.parent_cpu = 2;
        let p = plan(vec![hog(), periodic(MS, 9 * MS)], vec![h, w]);
        let mut e = engine(&kernel("v6.18", ""), p, SEC);
        e.run();
        assert_clean(&e);
        e
    };
    let e = run(90);
    assert_eq!(e.tasks()[0].cpu, 2);
    let w = &e.tasks()[1];
    assert_eq!(w.cpu, 42, "placed on the idle SMT sibling of CPU 2");
    assert!(w.stats.counters.sum_exec_runtime_ns >= 95 * MS);
    assert!(e.tasks()[0].stats.counters.sum_exec_runtime_ns > SEC - 2 * MS);
    let e = run(10);
    let w = &e.tasks()[1];
    assert_eq!(w.cpu, 2, "stays and preempts the FIFO 10 hog");
    assert_eq!(w.stats.counters.nr_migrations, 0);
    assert!(
        mean_wait_ns(&e, 1) < 20_000,
        "wait {} ns",
        mean_wait_ns(&e, 1)
    );
}

/// The fair load balancer moves only `cfs_tasks`: an RT hog sharing two CPUs with four
/// fair hogs is never migrated by balancing (an RT task moves only at its own wakeups),
/// while the fair hogs are.
#[test]
fn fair_load_balancing_never_migrates_rt_tasks() {
    let mut tasks = vec![task("rt", 0, fifo(40), Some("2,3"))];
    for i in 0..4 {
        tasks.push(task(
            &format!("fair{i}"),
            0,
            TaskPolicy::Normal,
            Some("2,3"),
        ));
    }
    for t in &mut tasks {
        t.parent_cpu = 2;
    }
    let mut e = engine(&kernel("v6.18", ""), plan(vec![hog()], tasks), 2 * SEC);
    e.run();
    assert_clean(&e);
    let rt = &e.tasks()[0];
    assert_eq!(rt.stats.counters.nr_migrations, 0);
    let fair_moves: u64 = e.tasks()[1..]
        .iter()
        .map(|t| t.stats.counters.nr_migrations)
        .sum();
    assert!(fair_moves > 0);
}

/// rt-app's `"policy": "SCHED_FIFO", "priority": 50` makes an RT task: it preempts a fair
/// hog on its CPU at every wakeup.
#[test]
fn rtapp_sched_fifo_task_runs_in_the_rt_class() {
    let json = r#"{
        "global": { "duration": 1, "calibration": 1000 },
        "tasks": {
            "rt": {
                "policy": "SCHED_FIFO", "priority": 50, "cpus": [2],
                "run": 2000, "sleep": 8000
            }
        }
    }"#;
    let spec = schedlab::workload::rtapp::parse_str(json, "test.json", 8).unwrap();
    let scn = Scenario::parse(
        &format!("{}[workload]\nkind = \"spin\"\n", kernel("v6.18", "")),
        "t",
    )
    .unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let mut p = schedlab::workload::generate::rtapp::plan(&spec, &machine).unwrap();
    assert_eq!(p.tasks[0].policy, TaskPolicy::Fifo { rt_priority: 50 });
    let hog_prog = p.programs.len() as u32;
    p.programs.push(hog());
    p.tasks
        .push(task("fair", hog_prog, TaskPolicy::Normal, Some("2")));
    let mut e = engine(&kernel("v6.18", ""), p, SEC);
    e.run();
    assert_clean(&e);
    assert!(
        mean_wait_ns(&e, 0) < 20_000,
        "wait {} ns",
        mean_wait_ns(&e, 0)
    );
    // The per-task results name the policy as the kernel does.
    let tasks = serde_json::to_value(schedlab::stats::report::tasks(&e)).unwrap();
    assert_eq!(tasks[0]["policy"], "SCHED_FIFO");
    assert_eq!(tasks[0]["rt_priority"], 50);
    assert_eq!(tasks[1]["policy"], "SCHED_NORMAL");
    assert!(tasks[1].get("rt_priority").is_none());
}

/// The fair task reaches the RT hog's CPU by migration (an affinity change moved by the
/// migration stopper): attaching it is an enqueue like any other, so the fair server starts
/// on that CPU's 0 → 1 transition and the fair task still gets its 50 ms per second.
#[test]
fn fair_server_starts_when_a_fair_task_arrives_by_migration() {
    let pin_to_2 = Program {
        name: "pin-then-hog".into(),
        ops: vec![
            Op::SetAffinity { mask: 0 },
            Op::Run { work_ns: SEC },
            Op::Jump { to: 1 },
        ],
    };
    let plan = WorkloadPlan {
        programs: vec![hog(), pin_to_2],
        tasks: vec![
            task("rt", 0, fifo(50), Some("2")),
            task("fair", 1, TaskPolicy::Normal, None),
        ],
        cpumasks: vec![schedlab::cpumask::CpuMask::parse("2").unwrap()],
        ..Default::default()
    };
    let mut e = engine(&kernel("v6.18", ""), plan, 3 * SEC);
    e.run();
    assert_clean(&e);
    let fair = &e.tasks()[1];
    assert_eq!(fair.cpu, 2);
    let share = fair.stats.counters.sum_exec_runtime_ns as f64 / (3 * SEC) as f64;
    assert!((share - 0.05).abs() <= 0.005, "fair share {share}");
}
