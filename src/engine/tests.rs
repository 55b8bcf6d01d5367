//! Engine tests with the global FIFO policy (the Linux policy has its own tests).

use super::*;
use crate::policy::fifo::GlobalFifo;
use crate::task::{Op, Program, TaskSpec, TaskState};
use crate::topology::CpuTopology;

/// `n` cores without SMT, one LLC, one node.
pub(crate) fn flat_machine(n: usize) -> Machine {
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

fn spec(program: u32, comm: &str) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        nice: 0,
        cpus_allowed: None,
        start_ns: 0,
        parent_cpu: 0,
        footprint_kib: 0,
        ..Default::default()
    }
}

fn engine(machine: Machine, plan: WorkloadPlan) -> Engine {
    let n = machine.nr_cpus();
    let cost = CostModel::default_for(&machine);
    let cfg = EngineConfig {
        check_invariants: true,
        ..EngineConfig::default()
    };
    Engine::new(machine, cost, cfg, Box::new(GlobalFifo::new(n)), plan).unwrap()
}

#[test]
fn cpu_bound_tasks_finish_and_busy_time_equals_runtime() {
    let plan = WorkloadPlan {
        programs: vec![Program {
            name: "burn".into(),
            ops: vec![
                Op::Run {
                    work_ns: 10_000_000,
                },
                Op::Exit,
            ],
        }],
        tasks: (0..4).map(|i| spec(0, &format!("burn{i}"))).collect(),
        ..Default::default()
    };
    let mut e = engine(flat_machine(2), plan);
    e.run();
    assert!(e.all_exited());
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    // Two CPUs, 40 ms of work: about 20 ms plus switch overheads.
    let end = e.end_ns();
    assert!((20_000_000..20_200_000).contains(&end), "end {end}");
    let (runtime, busy) = e.runtime_and_busy_ns();
    assert_eq!(runtime, busy);
}

/// A program whose last op is not `Exit` ends like a thread function that returns: the
/// task exits after its last op, and the next program's ops (stored after it in the
/// engine's single op table) never run for it.
#[test]
fn falling_off_a_program_exits_the_task() {
    let plan = WorkloadPlan {
        programs: vec![
            Program {
                name: "short".into(),
                ops: vec![Op::Run { work_ns: 1_000_000 }],
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
        tasks: vec![spec(0, "short")],
        ..Default::default()
    };
    let mut e = engine(flat_machine(1), plan);
    e.run();
    assert!(e.all_exited());
    let t = &e.tasks()[0];
    assert!(
        (1_000_000..2_000_000).contains(&t.stats.counters.sum_exec_runtime_ns),
        "ran {} ns: only its own 1 ms",
        t.stats.counters.sum_exec_runtime_ns
    );
}

#[test]
fn ping_pong_wakes_each_other() {
    // Two tasks hand a token back and forth 1000 times via two semaphores.
    let ping = Program {
        name: "ping".into(),
        ops: vec![
            Op::Run { work_ns: 1_000 },
            Op::Up { sem: 0, sync: true },
            Op::Down { sem: 1 },
            Op::Loop {
                to: 0,
                times: 1000,
                slot: 0,
            },
            Op::Exit,
        ],
    };
    let pong = Program {
        name: "pong".into(),
        ops: vec![
            Op::Down { sem: 0 },
            Op::Run { work_ns: 1_000 },
            Op::Up { sem: 1, sync: true },
            Op::Loop {
                to: 0,
                times: 1000,
                slot: 0,
            },
            Op::Exit,
        ],
    };
    let plan = WorkloadPlan {
        programs: vec![ping, pong],
        tasks: vec![spec(0, "ping"), spec(1, "pong")],
        sems: vec![0, 0],
        ..Default::default()
    };
    let mut e = engine(flat_machine(2), plan);
    e.run();
    assert!(e.all_exited());
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    // Every handoff is a wakeup except when the token arrives before its receiver blocked
    // (at most the very first one, when both start at once).
    let wakeups = e.counters().wakeups;
    assert!((1999..=2000).contains(&wakeups), "{wakeups}");
    assert_eq!(e.wakeup_latency().len(), wakeups);
    // One schedule-delay sample per switch-in, adding up to schedstat's run_delay.
    let pcount: u64 = e.cpus().iter().map(|c| c.stats.pcount).sum();
    let run_delay_ns: u64 = e.cpus().iter().map(|c| c.stats.run_delay_ns).sum();
    assert_eq!(e.schedule_delay().len(), pcount);
    assert_eq!(e.schedule_delay().sum(), u128::from(run_delay_ns));
    assert!(pcount >= wakeups);
    // Each wakeup of a task on an idle CPU costs at least the IPI latency or is polled.
    let (runtime, busy) = e.runtime_and_busy_ns();
    assert_eq!(runtime, busy);
}

#[test]
fn sleeping_task_wakes_after_duration_plus_slack() {
    let plan = WorkloadPlan {
        programs: vec![Program {
            name: "nap".into(),
            ops: vec![Op::Sleep { ns: 1_000_000 }, Op::Exit],
        }],
        tasks: vec![spec(0, "nap")],
        ..Default::default()
    };
    let mut e = engine(flat_machine(1), plan);
    e.run();
    let lat = e.end_ns();
    // 1 ms + 50 µs slack + idle exit + context switches: between 1.05 and 1.3 ms.
    assert!((1_050_000..1_300_000).contains(&lat), "{lat}");
}

#[test]
fn identical_seeds_give_identical_runs() {
    let mk = || {
        let plan = WorkloadPlan {
            programs: vec![Program {
                name: "rand".into(),
                ops: vec![
                    Op::RunExp {
                        mean_work_ns: 100_000,
                    },
                    Op::Sleep { ns: 50_000 },
                    Op::Loop {
                        to: 0,
                        times: 200,
                        slot: 0,
                    },
                    Op::Exit,
                ],
            }],
            tasks: (0..6).map(|i| spec(0, &format!("r{i}"))).collect(),
            ..Default::default()
        };
        let mut e = engine(flat_machine(3), plan);
        e.run();
        (
            e.end_ns(),
            e.events(),
            e.counters().context_switches,
            e.wakeup_latency().percentile(99.0),
        )
    };
    assert_eq!(mk(), mk());
}

/// Counts what an [`Observer`] is shown.
#[derive(Default)]
struct Counting {
    started_tasks: usize,
    switches: u64,
    migrations: u64,
    exits: u64,
    finished: bool,
}

impl observer::Observer for Counting {
    fn start(&mut self, tasks: &[Task], _nr_cpus: usize) {
        self.started_tasks = tasks.len();
    }
    fn switch(
        &mut self,
        _ts_ns: u64,
        _cpu: usize,
        prev: Option<&Task>,
        _prev_state: observer::PrevState,
        next: Option<&Task>,
    ) {
        assert_ne!(
            prev.map(|t| t.id),
            next.map(|t| t.id),
            "a switch changes the task"
        );
        self.switches += 1;
    }
    fn migrate(&mut self, ev: &observer::MigrateEvent<'_>) {
        assert_ne!(ev.from, ev.to);
        self.migrations += 1;
    }
    fn exit(&mut self, _ts_ns: u64, _cpu: usize, _p: &Task) {
        self.exits += 1;
    }
    fn finish(&mut self, _ts_ns: u64, _running: &[(usize, &Task)]) {
        self.finished = true;
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

#[test]
fn observer_sees_every_migration_and_exit_and_changes_nothing() {
    let mk = |observe: bool| {
        let plan = WorkloadPlan {
            programs: vec![Program {
                name: "rand".into(),
                ops: vec![
                    Op::RunExp {
                        mean_work_ns: 100_000,
                    },
                    Op::Sleep { ns: 50_000 },
                    Op::Loop {
                        to: 0,
                        times: 200,
                        slot: 0,
                    },
                    Op::Exit,
                ],
            }],
            tasks: (0..6).map(|i| spec(0, &format!("r{i}"))).collect(),
            ..Default::default()
        };
        let mut e = engine(flat_machine(3), plan);
        if observe {
            let mut obs = Counting::default();
            observer::Observer::start(&mut obs, e.tasks(), e.cpus().len());
            e.set_observer(Box::new(obs));
        }
        e.run();
        let seen = e
            .take_observer()
            .map(|o| *o.into_any().downcast::<Counting>().unwrap());
        let result = (e.end_ns(), e.events(), e.counters().context_switches);
        let migrations: u64 = e.counters().migrations_by_reason.iter().sum();
        (result, migrations, seen)
    };
    let (plain, _, none) = mk(false);
    assert!(none.is_none());
    let (observed, migrations, seen) = mk(true);
    assert_eq!(
        plain, observed,
        "an observer never feeds back into decisions"
    );
    let seen = seen.unwrap();
    assert_eq!(seen.started_tasks, 6);
    assert!(migrations > 0, "3 CPUs, 6 sleepers: some wakeups migrate");
    assert_eq!(seen.migrations, migrations);
    assert_eq!(seen.exits, 6);
    assert!(
        seen.switches >= plain.2,
        "every context switch is a sched_switch"
    );
    assert!(seen.finished);
}

/// One task, `stuck`, that does nothing worth simulating: the watchdog tests set its state.
fn one_task_plan() -> WorkloadPlan {
    WorkloadPlan {
        programs: vec![Program {
            name: "burn".into(),
            ops: vec![Op::Run { work_ns: 1_000 }, Op::Exit],
        }],
        tasks: vec![spec(0, "stuck")],
        ..Default::default()
    }
}

/// The state a lost reschedule leaves since time 0: task 0 queued and runnable on `cpu`,
/// which idles. Then the watchdog must stay silent at `bound` and report the wait once just
/// beyond it.
fn assert_watchdog_reports_a_lost_resched_just_beyond(e: &mut Engine, cpu: usize, bound: u64) {
    e.cfg.watchdog_panics = false;
    e.tasks[0].state = TaskState::Runnable;
    e.tasks[0].on_rq = true;
    e.tasks[0].cpu = cpu;
    e.tasks[0].runnable_since_ns = 0;
    e.cpus[cpu].idle_since_ns = 0;
    e.clock.set_now(bound);
    e.watchdog();
    assert!(e.warnings().is_empty(), "not beyond the bound yet");
    e.clock.set_now(bound + 1);
    e.watchdog();
    assert_eq!(e.warnings().len(), 1, "{:?}", e.warnings());
    let expected = format!("stalled wakeup: task 0 ('stuck') waits runnable on CPU {cpu}");
    assert!(e.warnings()[0].contains(&expected), "{}", e.warnings()[0]);
    e.clock
        .set_now(e.clock.now() + watchdog::WATCHDOG_PERIOD_NS);
    e.watchdog();
    assert_eq!(e.warnings().len(), 1, "each wait is reported once");
}

/// The watchdog reports a task left runnable on an idle CPU (a lost reschedule) once, after
/// its bound, and not before; a policy without domains gets the floor,
/// [`watchdog::STALL_BOUND_MIN_NS`].
#[test]
fn watchdog_reports_a_task_waiting_on_an_idle_cpu_once() {
    let mut e = engine(flat_machine(2), one_task_plan());
    assert_eq!(e.watchdog_bound_ns(), watchdog::STALL_BOUND_MIN_NS);
    assert_watchdog_reports_a_lost_resched_just_beyond(&mut e, 1, watchdog::STALL_BOUND_MIN_NS);
}

/// The watchdog's bound is the largest balance interval of the machine's sched domains, an
/// idle CPU's `sd->max_interval` (2 ms × the widest domain's weight: the NUMA level of a
/// 2-socket machine), at least 100 ms. On spr-2s a lost reschedule is reported beyond
/// 448 ms, not at 100 ms.
#[test]
fn watchdog_bound_follows_the_largest_balance_interval_of_the_domains() {
    use crate::kconfig::{Profile, ResolvedKernel};
    use crate::policy::linux_fair::LinuxFair;
    const MS: u64 = 1_000_000;
    let k = ResolvedKernel::from_profile(Profile::by_name("v6.12").unwrap());
    let fair = |m: &Machine| LinuxFair::new(&k, m, &CostModel::default_for(m), 1);
    for (preset, ms) in [
        ("skl-2s", 160),
        ("spr-2s", 448),
        ("milan-2s", 512),
        ("turin-2s", 1024),
        ("hybrid-10", 20),
    ] {
        let m = crate::topology::presets::by_name(preset).unwrap();
        assert_eq!(fair(&m).max_balance_interval_ms(), Some(ms), "{preset}");
        let bound = watchdog::stall_bound_ns(Some(ms));
        assert_eq!(
            bound,
            (ms * MS).max(watchdog::STALL_BOUND_MIN_NS),
            "{preset}"
        );
    }
    let m = crate::topology::presets::by_name("spr-2s").unwrap();
    let cost = CostModel::default_for(&m);
    let policy = Box::new(fair(&m));
    let mut e = Engine::new(m, cost, EngineConfig::default(), policy, one_task_plan()).unwrap();
    assert_eq!(e.watchdog_bound_ns(), 448 * MS);
    assert_watchdog_reports_a_lost_resched_just_beyond(&mut e, 5, 448 * MS);
}

/// A run from the state issue 33 left (a reschedule request left set on an idle CPU whose
/// tick is stopped, which then swallows the IPI of the next `resched_curr()`): `stuck`,
/// forked from CPU 0 onto idle CPU 1, is never run there, while `busy` keeps CPU 0 (and the
/// event loop) going for 300 ms.
fn lost_resched_run() -> Engine {
    let plan = WorkloadPlan {
        programs: vec![
            Program {
                name: "busy".into(),
                ops: vec![
                    Op::Run {
                        work_ns: 300_000_000,
                    },
                    Op::Exit,
                ],
            },
            Program {
                name: "stuck".into(),
                ops: vec![Op::Run { work_ns: 1_000 }, Op::Exit],
            },
        ],
        tasks: vec![
            TaskSpec {
                cpus_allowed: Some(CpuMask::parse("0").unwrap()),
                ..spec(0, "busy")
            },
            TaskSpec {
                cpus_allowed: Some(CpuMask::parse("1").unwrap()),
                ..spec(1, "stuck")
            },
        ],
        ..Default::default()
    };
    let mut e = engine(flat_machine(2), plan);
    e.cfg.check_invariants = false;
    e.cpus[1].need_resched = true;
    e.cpus[1].tick_stopped = true;
    e
}

/// In a whole run (the event loop calls the watchdog), the lost reschedule is reported once
/// in the results' `warnings`, and the run goes on to its end.
#[test]
fn a_lost_reschedule_in_a_run_is_one_warning() {
    let mut e = lost_resched_run();
    e.cfg.watchdog_panics = false;
    e.run();
    assert_eq!(e.warnings().len(), 1, "{:?}", e.warnings());
    let w = &e.warnings()[0];
    assert!(
        w.contains("stalled wakeup: task 1 ('stuck') waits runnable on CPU 1"),
        "{w}"
    );
    assert_eq!(e.tasks()[0].state, TaskState::Dead, "busy ran to its end");
    assert_eq!(e.tasks()[1].state, TaskState::Runnable, "stuck never ran");
}

/// Builds with debug assertions (the test suite, the ci-debug binary) panic on the finding.
#[test]
#[should_panic(expected = "scheduling watchdog: t=")]
fn a_lost_reschedule_panics_with_debug_assertions() {
    let mut e = lost_resched_run();
    e.cfg.watchdog_panics = true;
    e.run();
}

/// Two nodes: CPUs 0 and 1 are SMT siblings of core 0 (node 0), CPU 2 is core 2 on node 1.
fn siblings_and_remote_node_machine() -> Machine {
    let cpu = |cpu, core, node| CpuTopology {
        cpu,
        core,
        cluster: core,
        llc: node,
        package: node,
        node,
        capacity: 1024,
    };
    let cpus = vec![cpu(0, 0, 0), cpu(1, 0, 0), cpu(2, 2, 1)];
    Machine::new("two-node", "test", cpus, vec![vec![10, 20], vec![20, 10]]).unwrap()
}

/// Ping on CPU 0, pong on `pong_cpu`, 1000 round trips whose semaphores hand off `lines`
/// cache lines each; the CPU time each task consumed.
fn handoff_ping_pong(pong_cpu: usize, lines: u16) -> (u64, u64) {
    let prog = |name: &str, down: u32, up: u32, down_first: bool| {
        let mut ops = vec![
            Op::Run { work_ns: 1_000 },
            Op::Up {
                sem: up,
                sync: true,
            },
            Op::Down { sem: down },
        ];
        if down_first {
            ops.rotate_left(2);
        }
        ops.push(Op::Loop {
            to: 0,
            times: 1000,
            slot: 0,
        });
        ops.push(Op::Exit);
        Program {
            name: name.into(),
            ops,
        }
    };
    let pinned = |program, comm: &str, cpu| TaskSpec {
        cpus_allowed: Some(crate::cpumask::CpuMask::single(cpu)),
        ..spec(program, comm)
    };
    let plan = WorkloadPlan {
        programs: vec![prog("ping", 1, 0, false), prog("pong", 0, 1, true)],
        tasks: vec![pinned(0, "ping", 0), pinned(1, "pong", pong_cpu)],
        sems: vec![0, 0],
        sem_handoff_lines: vec![lines, lines],
        ..Default::default()
    };
    let mut e = engine(siblings_and_remote_node_machine(), plan);
    e.run();
    assert!(e.all_exited());
    let runtime = |i: usize| e.tasks()[i].stats.counters.sum_exec_runtime_ns;
    (runtime(0), runtime(1))
}

/// A semaphore's hand-off lines cost the taker one core-to-core transfer each when poster
/// and taker share no private cache (here across nodes), and nothing on SMT siblings, which
/// share the core's caches.
#[test]
fn handed_off_lines_cost_a_transfer_each_across_nodes_and_nothing_on_siblings() {
    let machine = siblings_and_remote_node_machine();
    let line_ns = CostModel::default_for(&machine).cacheline_cross_node_ns;
    assert!(line_ns > 0);
    assert_eq!(handoff_ping_pong(1, 4), handoff_ping_pong(1, 0));
    let (ping_free, pong_free) = handoff_ping_pong(2, 0);
    let (ping_paid, pong_paid) = handoff_ping_pong(2, 4);
    // A taker pays at its next Run: pong at each of its 1000 Runs; ping's 1000th unit comes
    // after its last Run, so it pays for 999.
    let want_pong = 1000 * 4 * line_ns;
    let want_ping = 999 * 4 * line_ns;
    let near = |got: u64, want: u64| got.abs_diff(want) <= want / 100;
    assert!(
        near(pong_paid - pong_free, want_pong),
        "pong paid {} ns more, want {want_pong}",
        pong_paid - pong_free
    );
    assert!(
        near(ping_paid - ping_free, want_ping),
        "ping paid {} ns more, want {want_ping}",
        ping_paid - ping_free
    );
}

/// Records the time of every `sched_waking`, in order.
#[derive(Default)]
struct WakingTimes(Vec<(u64, u32)>);

impl observer::Observer for WakingTimes {
    fn waking(&mut self, ts_ns: u64, _cpu: usize, _curr: Option<&Task>, p: &Task) {
        self.0.push((ts_ns, p.id.0));
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// `UpMany` wakes its waiters one after the other, each after the work the previous
/// `try_to_wake_up()` charged to the waker's CPU (`__wake_up_common()` walks the wait queue),
/// not all at one instant; every waiter is woken, in queue order, and the waker goes on
/// only after the last.
#[test]
fn up_many_wakes_its_waiters_one_after_the_other() {
    const WAITERS: u32 = 4;
    let waker = Program {
        name: "waker".into(),
        ops: vec![
            // Long enough for every waiter to block first.
            Op::Run { work_ns: 200_000 },
            Op::UpMany {
                sem: 0,
                n: WAITERS,
                sync: true,
            },
            Op::Run { work_ns: 1_000 },
            Op::Exit,
        ],
    };
    let waiter = Program {
        name: "waiter".into(),
        ops: vec![Op::Down { sem: 0 }, Op::Run { work_ns: 1_000 }, Op::Exit],
    };
    let mut tasks = vec![spec(0, "waker")];
    tasks.extend((0..WAITERS).map(|i| spec(1, &format!("waiter{i}"))));
    let plan = WorkloadPlan {
        programs: vec![waker, waiter],
        tasks,
        sems: vec![0],
        ..Default::default()
    };
    let mut e = engine(flat_machine(WAITERS as usize + 1), plan);
    e.set_observer(Box::new(WakingTimes::default()));
    e.run();
    assert!(e.all_exited());
    let seen = e.take_observer().unwrap().into_any();
    let times = seen.downcast::<WakingTimes>().unwrap().0;
    // The UpMany's wakings: after the waker's 200 µs run.
    let ups: Vec<(u64, u32)> = times.into_iter().filter(|&(t, _)| t >= 200_000).collect();
    assert_eq!(ups.len(), WAITERS as usize, "{ups:?}");
    let order: Vec<u32> = ups.iter().map(|&(_, p)| p).collect();
    assert_eq!(order, (1..=WAITERS).collect::<Vec<_>>(), "queue order");
    for pair in ups.windows(2) {
        assert!(
            pair[1].0 > pair[0].0,
            "each wakeup comes after the previous one's work: {ups:?}"
        );
    }
    assert!(e.invariant_violations().is_empty());
}

/// Intel server C6 (`spr_cstates`): a CPU woken out of C6 pays core C6's exit (200 µs) while
/// any other online CPU is busy, still in kernel work before its idle loop, or idle in a
/// shallower state, and the declared exit (package C6, 290 µs) only when every online CPU
/// sits in C6 (Intel's pepc notes, "C6P"). A state without a package part keeps its declared
/// exit; the IPI path charges the same.
#[test]
fn c6_exit_is_package_c6_only_when_every_online_cpu_is_in_c6() {
    let mut e = engine(flat_machine(3), one_task_plan());
    e.cost.idle_states = crate::cpuidle::states::spr();
    let (c1e, c6) = (2, 3);
    for c in 0..3 {
        e.cpus[c].curr = None;
        e.cpus[c].busy_until_ns = 0;
        e.cpus[c].idle_state = c6;
        e.cpus[c].idle_mwait = true;
    }
    assert_eq!(e.idle_exit_ns(0), 290_000, "the whole machine in C6");
    e.cpus[2].idle_state = c1e;
    assert_eq!(e.idle_exit_ns(0), 200_000, "another CPU in C1E");
    e.cpus[2].idle_state = c6;
    e.cpus[1].busy_until_ns = 1;
    assert_eq!(
        e.idle_exit_ns(0),
        200_000,
        "another CPU before its idle loop"
    );
    let (at, how) = e.send_ipi(1, 0);
    assert_eq!(
        (at, how),
        (200_000, IpiWake::Monitor),
        "an MWAIT wakeup pays it too"
    );
    e.cpus[1].busy_until_ns = 0;
    e.cpus[2].idle_state = 0;
    e.machine.online.clear(2);
    assert_eq!(
        e.idle_exit_ns(0),
        290_000,
        "an offline CPU does not hold the package"
    );
    e.cpus[0].idle_state = c1e;
    assert_eq!(e.idle_exit_ns(0), 2_000, "C1E has no package part");
}

/// `idle_cpu()` is false while a CPU finishes the `__schedule()` that found nothing to run:
/// until the switch to the idle task, `rq->curr` is still the task that left, so the
/// scheduler work charged there (put_prev, newly-idle balancing) keeps the CPU from looking
/// idle to wakeup placement and the load balancer. The `IdleTaskRunning` event at the end of
/// that work makes it idle; a CPU that took a task meanwhile stays busy.
#[test]
fn a_cpu_is_not_idle_until_its_switch_to_idle_is_over() {
    use crate::policy::CoreView;
    let mut e = engine(flat_machine(2), one_task_plan());
    let p = TaskId::from_index(0);
    e.tasks[p.idx()].state = TaskState::Blocked;
    e.tasks[p.idx()].on_rq = false;
    e.tasks[p.idx()].cpu = 0;
    e.cpus[0].curr = Some(p);
    e.cpus[0].busy_until_ns = 5_000;
    e.schedule(0);
    let end = e.cpus[0].idle_task_from_ns;
    assert!(
        end >= 5_000,
        "the switch ends after the work charged before it: {end}"
    );
    let idle = |e: &Engine, cpu: usize| {
        let view = view::EngineView {
            now_ns: e.clock.now(),
            machine: &e.machine,
            cost: &e.cost,
            tasks: &e.tasks,
            cpus: &e.cpus,
        };
        view.cpu_is_idle_task(cpu)
    };
    assert!(e.cpus[0].curr.is_none());
    assert!(!idle(&e, 0), "still switching to idle");
    assert!(idle(&e, 1), "a CPU in its idle loop is idle");
    e.clock.set_now(end);
    e.idle_task_running(0);
    assert!(idle(&e, 0), "the idle task runs");
    // A stale end: the CPU took a task before it, so it stays busy.
    e.cpus[0].switching_to_idle = true;
    e.cpus[0].curr = Some(p);
    e.idle_task_running(0);
    assert!(e.cpus[0].switching_to_idle, "a stale event changes nothing");
}
