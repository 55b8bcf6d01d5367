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
    let runtime: u64 = e.tasks().iter().map(|t| t.stats.sum_exec_runtime_ns).sum();
    let busy: u64 = e.cpus().iter().map(|c| c.stats.busy_ns).sum();
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
    (e.tasks()[1].stats.sum_exec_runtime_ns, e)
}

/// The fair task of [`fifo_vs_fair`] gets 5.0 % ± 0.2 % of 10 s, in ~10 bursts, none
/// before 940 ms and about 50 ms by 1 s: the bursts sit at the end of each second.
fn assert_five_percent_at_period_end(toml: &str) {
    let (fair_ns, e) = fifo_vs_fair(toml, 10 * SEC);
    let share = fair_ns as f64 / (10 * SEC) as f64;
    assert!((share - 0.05).abs() <= 0.002, "fair share {share}");
    let switches = e.tasks()[1].stats.nr_switches;
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
        assert!(e.tasks()[0].stats.sum_exec_runtime_ns > 3 * SEC - MS);
    }
}
