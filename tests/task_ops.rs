//! Task-program actions that interact with the scheduler: `fork()` from a running task
//! (through `wake_up_new_task()`'s fork placement) and user-space spin locks (a spinner burns
//! CPU time and competes for its CPU like any running task).

use schedlab::config::scenario::Scenario;
use schedlab::cpumask::CpuMask;
use schedlab::engine::{Engine, PlanError, WorkloadPlan};
use schedlab::experiment;
use schedlab::sched::types::MigrationReason;
use schedlab::task::{Op, Program, TaskSpec, TaskState};

const MS: u64 = 1_000_000;

fn engine(preset: &str, plan: WorkloadPlan) -> Result<Engine, PlanError> {
    let text = format!(
        "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"v6.18\"\n[workload]\nkind = \"spin\"\n"
    );
    let scn = Scenario::parse(&text, "test").unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let cost = experiment::resolve_cost(&scn, &machine).unwrap();
    let mut cfg = experiment::engine_config(&scn, 1, 1_000 * MS);
    cfg.check_invariants = true;
    // Exact times, without the run-to-run machine noise.
    cfg.noise = schedlab::engine::noise::NoiseParams::OFF;
    let policy = experiment::make_policy(&scn, &machine, &cost, 1);
    Engine::new(machine, cost, cfg, policy, plan)
}

fn program(name: &str, ops: Vec<Op>) -> Program {
    Program {
        name: name.into(),
        ops,
    }
}

fn spec(comm: &str, program: u32, cpus: Option<&str>, parent_cpu: usize) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        cpus_allowed: cpus.map(|c| CpuMask::parse(c).unwrap()),
        parent_cpu,
        ..Default::default()
    }
}

fn run_clean(mut e: Engine) -> Engine {
    e.run();
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    assert!(e.all_exited());
    e
}

fn fork_idx() -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&r| r == MigrationReason::Fork)
        .unwrap()
}

#[test]
fn fork_op_starts_the_child_at_the_op_through_fork_placement() {
    // The parent computes 1 ms on CPU 3 of skl-2s, forks, and keeps computing 1 ms: the
    // child (1 ms of work) starts only at the fork, and fork placement
    // (sched_balance_find_dst_cpu) puts it on an idle CPU, not behind its running parent.
    let plan = WorkloadPlan {
        programs: vec![
            program(
                "parent",
                vec![
                    Op::Run { work_ns: MS },
                    Op::Fork { task: 1 },
                    Op::Fork { task: 1 },
                    Op::Run { work_ns: MS },
                    Op::Exit,
                ],
            ),
            program("child", vec![Op::Run { work_ns: MS }, Op::Exit]),
        ],
        tasks: vec![
            spec("parent", 0, Some("3"), 3),
            TaskSpec {
                start_ns: TaskSpec::START_ON_FORK_OP,
                ..spec("child", 1, None, 0)
            },
        ],
        ..Default::default()
    };
    let e = run_clean(engine("skl-2s", plan).unwrap());
    let child = &e.tasks()[1];
    assert_eq!(child.state, TaskState::Dead);
    assert_ne!(child.cpu, 3, "the child left its busy parent's CPU");
    assert_eq!(child.stats.migrations_by_reason[fork_idx()], 1);
    // Forked once (the second fork is a no-op): one task's worth of work after 1 ms.
    // (plus the idle-exit latency of the child's CPU, C6 on skl-2s: 133 µs).
    let end = e.end_ns();
    assert!(
        (2 * MS..2 * MS + MS / 5).contains(&end),
        "ended at {end} ns"
    );
    assert!((MS..MS + MS / 10).contains(&child.stats.counters.sum_exec_runtime_ns));
}

#[test]
fn fork_op_of_a_task_with_a_start_time_is_rejected() {
    let plan = WorkloadPlan {
        programs: vec![program("p", vec![Op::Fork { task: 0 }, Op::Exit])],
        tasks: vec![spec("p", 0, None, 0)],
        ..Default::default()
    };
    let err = engine("skl-2s", plan).err().expect("invalid plan");
    assert!(err.to_string().contains("forked by an op"), "{err}");
}

/// `holder` takes lock 0 at once and holds it for `hold_ns` of work; `spinner` starts
/// 0.1 ms later, spins for the lock, then computes 1 ms.
fn lock_plan(hold_ns: u64, holder_cpu: &str, spinner_cpu: &str) -> WorkloadPlan {
    WorkloadPlan {
        programs: vec![
            program(
                "holder",
                vec![
                    Op::SpinLock { lock: 0 },
                    Op::Run { work_ns: hold_ns },
                    Op::SpinUnlock { lock: 0 },
                    Op::Exit,
                ],
            ),
            program(
                "spinner",
                vec![
                    Op::SpinLock { lock: 0 },
                    Op::Run { work_ns: MS },
                    Op::SpinUnlock { lock: 0 },
                    Op::Exit,
                ],
            ),
        ],
        tasks: vec![
            spec("holder", 0, Some(holder_cpu), 0),
            TaskSpec {
                start_ns: MS / 10,
                ..spec("spinner", 1, Some(spinner_cpu), 0)
            },
        ],
        nr_spinlocks: 1,
        ..Default::default()
    }
}

#[test]
fn spinner_on_another_cpu_gets_the_lock_at_the_release() {
    // Holder on CPU 0 for 2 ms; the spinner, forked at 0.1 ms onto idle CPU 1 (another
    // core), runs once CPU 1 has left its idle state and spins until the release, then
    // computes 1 ms: its CPU time is exactly (release − start) + 1 ms.
    let e = run_clean(engine("skl-2s", lock_plan(2 * MS, "0", "1")).unwrap());
    let holder = &e.tasks()[0];
    let spinner = &e.tasks()[1];
    let release_ns = holder.stats.counters.sum_exec_runtime_ns; // ran from 0, never preempted
    let start_ns = MS / 10 + spinner.stats.counters.wait_sum_ns;
    let runtime = spinner.stats.counters.sum_exec_runtime_ns;
    assert_eq!(
        runtime,
        release_ns - start_ns + MS,
        "spinner ran {runtime} ns"
    );
    assert!(release_ns - start_ns > MS * 17 / 10);
    assert!((3 * MS..3 * MS + MS / 10).contains(&e.end_ns()));
}

#[test]
fn spinner_on_the_holders_cpu_takes_half_of_it_while_the_holder_is_preempted() {
    // Both on CPU 0: the spinner competes for the CPU as any runnable task does (EEVDF gives
    // both nice-0 tasks half of it), so the holder's 20 ms of work take about 40 ms, and
    // the spinner burns ~20 ms spinning. When the holder releases, the spinner is not
    // running (it cannot see the release); it takes the free lock when it runs next.
    let e = run_clean(engine("skl-2s", lock_plan(20 * MS, "0", "0")).unwrap());
    let holder = &e.tasks()[0];
    let spinner = &e.tasks()[1];
    let spin_ns = spinner.stats.counters.sum_exec_runtime_ns - MS;
    assert!(
        (17 * MS..23 * MS).contains(&spin_ns),
        "spinner spun {spin_ns} ns"
    );
    assert!(holder.stats.counters.nr_involuntary_switches >= 3);
    let end = e.end_ns();
    assert!((38 * MS..44 * MS).contains(&end), "ended at {end} ns");
}

fn reason_idx(reason: MigrationReason) -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&r| r == reason)
        .unwrap()
}

/// `e` starts on CPU 0 of skl-2s, computes 0.1 ms, execs, computes 1 ms; with `hog`, a
/// pinned hog shares CPU 0.
fn exec_plan(hog: bool) -> WorkloadPlan {
    let mut tasks = vec![spec("e", 0, None, 0)];
    if hog {
        tasks.push(spec("hog", 1, Some("0"), 0));
    }
    WorkloadPlan {
        programs: vec![
            program(
                "e",
                vec![
                    Op::Run { work_ns: MS / 10 },
                    Op::Exec,
                    Op::Run { work_ns: MS },
                    Op::Exit,
                ],
            ),
            program("hog", vec![Op::Run { work_ns: 20 * MS }, Op::Exit]),
        ],
        tasks,
        ..Default::default()
    }
}

#[test]
fn exec_balancing_moves_a_task_off_a_busy_cpu_and_keeps_it_on_an_idle_one() {
    // sched_exec(): select_task_rq(WF_EXEC) takes the slow path (SD_BALANCE_EXEC on every
    // level of skl-2s). Alone on CPU 0 the local group is the idlest (the task's own
    // utilization is not counted against it): no move.
    let e = run_clean(engine("skl-2s", exec_plan(false)).unwrap());
    let t = &e.tasks()[0];
    assert_eq!(
        t.stats.migrations_by_reason[reason_idx(MigrationReason::Exec)],
        0
    );
    assert_eq!(t.cpu, 0);
    // Beside a hog on CPU 0 an idle CPU elsewhere wins: the stopper moves it, once.
    let e = run_clean(engine("skl-2s", exec_plan(true)).unwrap());
    let t = &e.tasks()[0];
    assert_eq!(
        t.stats.migrations_by_reason[reason_idx(MigrationReason::Exec)],
        1
    );
    assert_ne!(t.cpu, 0);
    assert_ne!(
        t.cpu, 40,
        "not the busy CPU's SMT sibling while whole cores are idle"
    );
}

/// Per-CPU locks (schbench's lock around the math): two tasks on different CPUs take
/// different locks and never wait for each other; two on one CPU share its lock.
fn percpu_plan(a_cpu: &str, b_cpu: &str) -> WorkloadPlan {
    let body = |name: &str| {
        program(
            name,
            vec![
                Op::PerCpuSpinLock { base: 0 },
                Op::Run { work_ns: 20 * MS },
                Op::PerCpuSpinUnlock,
                Op::Exit,
            ],
        )
    };
    WorkloadPlan {
        programs: vec![body("a"), body("b")],
        tasks: vec![
            spec("a", 0, Some(a_cpu), 0),
            TaskSpec {
                start_ns: MS / 10,
                ..spec("b", 1, Some(b_cpu), 0)
            },
        ],
        nr_spinlocks: 80,
        ..Default::default()
    }
}

#[test]
fn per_cpu_locks_of_different_cpus_do_not_contend() {
    let e = run_clean(engine("skl-2s", percpu_plan("0", "1")).unwrap());
    for t in e.tasks() {
        // 20 ms of work each, no spinning.
        let ran = t.stats.counters.sum_exec_runtime_ns;
        assert!(
            (20 * MS..20 * MS + MS / 2).contains(&ran),
            "{} ran {ran}",
            t.comm
        );
    }
}

#[test]
fn per_cpu_lock_of_one_cpu_makes_the_second_task_spin() {
    // Both on CPU 0: as with one shared lock, the second task spins while the holder is
    // preempted (EEVDF halves the CPU between them), so it burns ~20 ms spinning.
    let e = run_clean(engine("skl-2s", percpu_plan("0", "0")).unwrap());
    let spin_ns = e.tasks()[1].stats.counters.sum_exec_runtime_ns - 20 * MS;
    assert!((15 * MS..25 * MS).contains(&spin_ns), "spun {spin_ns} ns");
}

#[test]
fn a_per_cpu_lock_needs_one_lock_per_cpu_in_the_plan() {
    let mut plan = percpu_plan("0", "1");
    plan.nr_spinlocks = 79;
    let err = engine("skl-2s", plan).err().expect("refused");
    assert!(err.to_string().contains("per-CPU spin lock"), "{err}");
}

/// `SpinWall` (schbench's `usec_spin()`): two spinners sharing one CPU both stop once their
/// wall-clock time is up, each with about half of it as CPU time; two `Run`s of the same
/// amount need twice as long, each getting it all.
#[test]
fn wall_clock_spinners_sharing_a_cpu_stop_on_time_with_half_the_cpu() {
    let finish = |op: Op| {
        let plan = WorkloadPlan {
            programs: vec![program("spin", vec![op, Op::Exit])],
            tasks: vec![spec("a", 0, Some("1"), 1), spec("b", 0, Some("1"), 1)],
            ..Default::default()
        };
        let e = run_clean(engine("skl-2s", plan).unwrap());
        let cpu: Vec<u64> = e
            .tasks()
            .iter()
            .map(|t| t.stats.counters.sum_exec_runtime_ns)
            .collect();
        (e.end_ns(), cpu)
    };
    let (end, cpu) = finish(Op::SpinWall { ns: 30 * MS });
    // The second starts spinning when it first runs (after the first's slice, ~3-4 ms), so
    // the last spin ends at 30 ms plus that; each spinner got about half the CPU meanwhile.
    assert!((30 * MS..36 * MS).contains(&end), "spins ended at {end}");
    for c in &cpu {
        assert!(
            (13 * MS..21 * MS).contains(c),
            "a spinner ran {c} ns: {cpu:?}"
        );
    }
    let (end, cpu) = finish(Op::Run { work_ns: 30 * MS });
    assert!(end >= 60 * MS, "runs ended at {end}");
    for c in &cpu {
        assert!(*c >= 30 * MS, "a runner ran {c} ns: {cpu:?}");
    }
}

/// A pipe page of no messages would release room that is never there: the plan is refused.
#[test]
fn a_pipe_page_of_zero_messages_is_refused() {
    let plan = |page: u32| WorkloadPlan {
        programs: vec![program(
            "reader",
            vec![
                Op::UpPage {
                    sem: 0,
                    sync: true,
                    page,
                },
                Op::Exit,
            ],
        )],
        tasks: vec![spec("r", 0, Some("1"), 1)],
        sems: vec![0],
        ..Default::default()
    };
    let err = engine("skl-2s", plan(0)).err().expect("refused");
    assert!(err.to_string().contains("page size"), "{err}");
    assert!(engine("skl-2s", plan(1)).is_ok());
}
