use super::*;
use crate::engine::Engine;
use crate::kconfig::{Feature, Profile, ResolvedKernel};
use crate::policy::numa_balancing::{NumaBalancing, numa_run};
use crate::sched::types::NumaMigrateDecision;
use crate::task::TaskState;
use crate::topology::CpuTopology;

fn machine(nodes: usize) -> Machine {
    let cpus = (0..4)
        .map(|cpu| CpuTopology {
            cpu,
            core: cpu,
            cluster: cpu,
            llc: cpu * nodes / 4,
            package: cpu * nodes / 4,
            node: cpu * nodes / 4,
            capacity: 1024,
        })
        .collect();
    let d = (0..nodes)
        .map(|a| (0..nodes).map(|b| if a == b { 10 } else { 21 }).collect())
        .collect();
    Machine::new("t", "", cpus, d).unwrap()
}

#[test]
fn on_by_default_on_multi_node_only_and_follows_the_sysctl() {
    let p = Profile::by_name("v3.17").unwrap();
    let mut k = ResolvedKernel::from_profile(p);
    assert_eq!(k.sysctl.numa_balancing, 1, "default sysctl is 1");
    assert!(numa_run(&k, &machine(1)).is_none(), "one node: off");
    let run = numa_run(&k, &machine(2)).expect("two nodes: on");
    assert!(run.variant.migrate_preferred_busy && !run.variant.has_capacity);
    // A scenario override of a switch reaches the variant.
    k.features.set(Feature::NUMA_MIGRATE_PREFERRED_BUSY, false);
    assert!(
        !numa_run(&k, &machine(2))
            .unwrap()
            .variant
            .migrate_preferred_busy
    );
    // numa_balancing=0 and tiering-only (2) are off; 3 has the normal bit.
    for (val, on) in [(0, false), (2, false), (3, true)] {
        k.sysctl.numa_balancing = val;
        assert_eq!(
            numa_run(&k, &machine(2)).is_some(),
            on,
            "numa_balancing={val}"
        );
    }
}

/// An engine on [`machine`]`(2)` (CPUs 0-1 node 0, 2-3 node 1) stopped at 5 ms: task 0
/// hogs CPU 0, task 1 (forked on CPU 2, pinned to node 1's CPUs and CPU 0) ran 1 ms
/// and sleeps; v4.19-form balancing on.
fn hog_and_sleeper() -> Engine {
    use crate::cost::CostModel;
    use crate::cpumask::CpuMask;
    use crate::engine::{EngineConfig, WorkloadPlan};
    use crate::task::{Op, Program, TaskMemory, TaskSpec};
    let m = machine(2);
    let mut k = ResolvedKernel::from_profile(Profile::by_name("v5.15").unwrap());
    k.sysctl.numa_balancing = 1;
    let cost = CostModel::default_for(&m);
    let policy = Box::new(crate::policy::linux_fair::LinuxFair::new(&k, &m, &cost, 1));
    let mem = TaskMemory {
        private_mib: 4,
        ..TaskMemory::default()
    };
    let prog = |ops: Vec<Op>| Program {
        name: "p".into(),
        ops,
    };
    let plan = WorkloadPlan {
        programs: vec![
            prog(vec![Op::Run { work_ns: 1 << 40 }, Op::Exit]),
            prog(vec![
                Op::Run { work_ns: 1_000_000 },
                Op::Sleep { ns: 1 << 40 },
                Op::Exit,
            ]),
        ],
        tasks: vec![
            TaskSpec {
                comm: "hog".into(),
                program: 0,
                parent_cpu: 0,
                cpus_allowed: Some(CpuMask::single(0).or(&CpuMask::single(2))),
                memory: mem,
                ..TaskSpec::default()
            },
            TaskSpec {
                comm: "sleeper".into(),
                program: 1,
                parent_cpu: 2,
                cpus_allowed: Some(CpuMask::single(2).or(&CpuMask::single(0))),
                memory: mem,
                ..TaskSpec::default()
            },
        ],
        ..WorkloadPlan::default()
    };
    let cfg = EngineConfig {
        duration_ns: 5_000_000,
        seed: 1,
        check_invariants: false,
        ..EngineConfig::default()
    };
    let mut e = Engine::new(m, cost, cfg, policy, plan).unwrap();
    e.set_numa_kernel(&k);
    e.run();
    e
}

/// `migrate_swap()` with a partner that went to sleep: the kernel's
/// `__migrate_swap_task()` only sets its `wake_cpu` (no `set_task_cpu()`), so the
/// sleeper stays on its CPU and its next wakeup starts from the swapper's CPU; any
/// later `set_task_cpu()` makes `wake_cpu` follow `task_cpu` again. And the v4.19+
/// `numa_migrate_on` claim on the destination rq is held from the decision until the
/// stoppers are done, then released.
#[test]
fn swap_with_a_sleeper_sets_its_wake_cpu_and_the_claim_is_held_until_done() {
    let mut e = hog_and_sleeper();
    let (a, b) = (TaskId(0), TaskId(1));
    assert_eq!(e.tasks[a.idx()].cpu, 0);
    assert_eq!(e.tasks[a.idx()].state, TaskState::Running);
    assert_eq!(e.tasks[b.idx()].cpu, 2);
    assert_eq!(e.tasks[b.idx()].state, TaskState::Blocked);
    let d = NumaMigrateDecision {
        action: NumaMove::Swap {
            dst_cpu: 2,
            other: b,
        },
        set_preferred: None,
        reset_scan_period: false,
        claimed_cpu: Some(2),
        best_imp: 10,
    };
    let mv = e.numa_decided(a, &d);
    let nb = balancing(&e);
    assert!(nb.numa_migrate_on(2), "claimed until the stopper ran");
    assert!(!nb.numa_migrate_on(0));
    e.numa_apply_move(0, mv);
    assert!(!balancing(&e).numa_migrate_on(2), "released");
    assert_eq!(e.tasks[a.idx()].cpu, 2, "the queued side moved");
    assert_eq!(
        e.tasks[b.idx()].cpu,
        2,
        "the sleeper's task_cpu is unchanged"
    );
    assert_eq!(e.numa_wake_cpu(b), Some(0), "wake_cpu = the swapper's CPU");
    assert_eq!(e.numa().unwrap().moves.numa_swap, 1);
    assert_eq!(
        e.tasks[b.idx()].stats.migrations_by_reason[reason_idx(MigrationReason::NumaSwap)],
        0,
        "no set_task_cpu() for the sleeper"
    );
    // The wakeup reads it once.
    assert_eq!(e.numa_take_wake_cpu(b), Some(0));
    assert_eq!(e.numa_take_wake_cpu(b), None);
    // A set_task_cpu() (any migration) resets it.
    e.count_numa(|n| n.wake_cpu[1] = Some(0));
    e.numa_record_move(b, 2, 3, MigrationReason::LoadBalance);
    assert_eq!(e.numa_wake_cpu(b), None);
    // A decision that found nothing releases its claim at once.
    let stay = NumaMigrateDecision {
        action: NumaMove::Stay,
        claimed_cpu: Some(3),
        ..d
    };
    let nb = e.policy.numa_balancing_mut().unwrap();
    nb.set_numa_migrate_on(3, true);
    assert!(e.numa_decided(b, &stay).is_none());
    assert!(!balancing(&e).numa_migrate_on(3));
}

/// The policy's NUMA-balancing state of `e`.
fn balancing(e: &Engine) -> &NumaBalancing {
    e.policy().numa_balancing().unwrap()
}

#[test]
fn node_ping_pong_pairs_and_numa_lb_numa_cycles() {
    use MigrationReason as R;
    let mut pp = NodePingPong::new(2);
    let p = TaskId(0);
    // numa 0->1, load_balance 1->0 (within 1 s), numa 0->1 again: two pairs, one cycle.
    pp.record(p, 0, 0, 1, R::Numa);
    pp.record(p, 300_000_000, 1, 0, R::LoadBalance);
    pp.record(p, 600_000_000, 0, 1, R::Numa);
    assert_eq!(
        pp.pairs(),
        vec![
            ("load_balance->numa".to_string(), 1),
            ("numa->load_balance".to_string(), 1)
        ]
    );
    assert_eq!(
        pp.cycles(),
        vec![("numa->load_balance->numa".to_string(), 1)]
    );
    // Two load-balancer moves undoing each other involve no NUMA move: not counted;
    // nor is a reversal after the window, nor one by the same mechanism.
    let q = TaskId(1);
    pp.record(q, 0, 0, 1, R::LoadBalance);
    pp.record(q, 1, 1, 0, R::Wakeup);
    pp.record(q, 10, 0, 1, R::Numa);
    pp.record(q, 10 + NODE_PINGPONG_WINDOW_NS + 1, 1, 0, R::LoadBalance);
    pp.record(q, 2 * NODE_PINGPONG_WINDOW_NS, 0, 1, R::LoadBalance);
    assert_eq!(
        pp.by_pair.iter().flatten().sum::<u64>(),
        3,
        "{:?}",
        pp.pairs()
    );
    assert_eq!(pp.cycles().len(), 1);
}

#[test]
fn stall_share_is_the_capacity_miss_ratio_times_the_memory_bound_share() {
    assert_eq!(stall_share_from_footprint(0, 1024), 0.0);
    assert_eq!(stall_share_from_footprint(512, 1024), 0.0, "fits the LLC");
    // 4 MiB over 1 MiB of LLC: 3/4 of accesses miss.
    let m = stall_share_from_footprint(4096, 1024);
    assert!((m - 0.75 * STALL_SHARE_MAX).abs() < 1e-12);
}
