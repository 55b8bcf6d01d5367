//! NUMA balancing wired into the engine: constructed runs on small 2-node machines whose
//! tasks declare working sets (`TaskSpec::memory`), checked against what the kernel does —
//! hinting faults, the preferred node, task moves / swaps / sticks per variant, page
//! migration under the v3.8–v4.18 rate limit, bandwidth congestion, `numa_balancing=0`, and
//! determinism.

use schedlab::cost::CostModel;
use schedlab::cpumask::CpuMask;
use schedlab::engine::{Engine, EngineConfig, WorkloadPlan};
use schedlab::kconfig::{Profile, ResolvedKernel};
use schedlab::policy::linux_fair::LinuxFair;
use schedlab::policy::numa_balancing::{NumaBalancing, NumaConfig};
use schedlab::sched::types::MigrationReason;
use schedlab::task::{MemPolicy, Op, Program, TaskId, TaskMemory, TaskSpec};
use schedlab::topology::{CpuTopology, Machine};

/// Two nodes of `per_node` CPUs (no SMT, one LLC per node), SLIT 10/21.
fn two_nodes(per_node: usize) -> Machine {
    let cpus = (0..2 * per_node)
        .map(|cpu| CpuTopology {
            cpu,
            core: cpu,
            cluster: cpu,
            llc: cpu / per_node,
            package: cpu / per_node,
            node: cpu / per_node,
            capacity: 1024,
        })
        .collect();
    Machine::new("numa2", "test", cpus, vec![vec![10, 21], vec![21, 10]]).unwrap()
}

fn reason_idx(r: MigrationReason) -> usize {
    MigrationReason::ALL.iter().position(|&x| x == r).unwrap()
}

/// A program: pinned to `first` for `settle_ms` of work, then to `second` for 10 ms, then
/// free (`all`) for `free_ms`, then exit. Masks: 0 = node 0, 1 = node 1, 2 = all.
fn phases(name: &str, first: u32, second: u32, settle_ms: u64, free_ms: u64) -> Program {
    Program {
        name: name.into(),
        ops: vec![
            Op::SetAffinity { mask: first },
            Op::Run {
                work_ns: settle_ms * 1_000_000,
            },
            Op::SetAffinity { mask: second },
            Op::Run {
                work_ns: 10_000_000,
            },
            Op::SetAffinity { mask: 2 },
            Op::Run {
                work_ns: free_ms * 1_000_000,
            },
            Op::Exit,
        ],
    }
}

/// A program of one stretch of `work_ns` of work, then exit.
fn run_then_exit(name: &str, work_ns: u64) -> Program {
    Program {
        name: name.into(),
        ops: vec![Op::Run { work_ns }, Op::Exit],
    }
}

/// A program that first touches its memory on node 1 (1 ms of work there), then runs
/// `work_ns` pinned to node 0 (masks as in [`phases`]), then exits.
fn touch_on_node1_then_run_on_node0(name: &str, work_ns: u64) -> Program {
    Program {
        name: name.into(),
        ops: vec![
            Op::SetAffinity { mask: 1 },
            Op::Run { work_ns: 1_000_000 },
            Op::SetAffinity { mask: 0 },
            Op::Run { work_ns },
            Op::Exit,
        ],
    }
}

/// A plan of `programs` and `tasks` with the [`masks`] of a machine of `per_node` CPUs a
/// node.
fn masked_plan(programs: Vec<Program>, tasks: Vec<TaskSpec>, per_node: usize) -> WorkloadPlan {
    WorkloadPlan {
        programs,
        tasks,
        cpumasks: masks(per_node),
        ..WorkloadPlan::default()
    }
}

/// A task of its own process (numbered `cpu`) pinned to `cpu`, started at `start_ns`, that
/// touches only its 16 MiB shared region (the `shm_key` object when given) and has 2 MiB of
/// private memory.
fn shared_region_task(comm: &str, cpu: usize, start_ns: u64, shm_key: Option<u32>) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program: 0,
        parent_cpu: cpu,
        cpus_allowed: Some(CpuMask::single(cpu)),
        start_ns,
        memory: TaskMemory {
            process: Some(cpu as u32),
            shared_mib: 16,
            shared_access_permille: 1000,
            private_mib: 2,
            shm_key,
            ..TaskMemory::default()
        },
        ..TaskSpec::default()
    }
}

fn memory_task(comm: &str, program: u32, start_cpu: usize, private_mib: u32) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        parent_cpu: start_cpu,
        cpus_allowed: Some(CpuMask::single(start_cpu)),
        memory: TaskMemory {
            private_mib,
            ..TaskMemory::default()
        },
        ..TaskSpec::default()
    }
}

fn masks(per_node: usize) -> Vec<CpuMask> {
    let node0 = CpuMask::first_n(per_node);
    let all = CpuMask::first_n(2 * per_node);
    let node1 = all.andnot(&node0);
    vec![node0, node1, all]
}

struct Run {
    engine: Engine,
}

fn run(machine: Machine, plan: WorkloadPlan, profile: &str, balancing: bool, seed: u64) -> Run {
    run_with(machine, plan, profile, balancing, seed, |_| {})
}

fn run_with(
    machine: Machine,
    plan: WorkloadPlan,
    profile: &str,
    balancing: bool,
    seed: u64,
    tweak: impl FnOnce(&mut CostModel),
) -> Run {
    let mut kernel = ResolvedKernel::from_profile(Profile::by_name(profile).unwrap());
    if !balancing {
        kernel.sysctl.numa_balancing = 0;
    }
    let mut cost = CostModel::default_for(&machine);
    tweak(&mut cost);
    let policy = Box::new(LinuxFair::new(&kernel, &machine, &cost, seed));
    let cfg = EngineConfig {
        duration_ns: 20_000_000_000,
        seed,
        check_invariants: false,
        ..EngineConfig::default()
    };
    let numa = NumaConfig::from_kernel(&kernel, &machine);
    let mut engine = Engine::new(machine, cost, cfg, policy, plan).unwrap();
    engine.set_numa(numa);
    engine.run();
    Run { engine }
}

impl Run {
    fn numa_migrations(&self, p: usize, r: MigrationReason) -> u64 {
        self.engine.tasks()[p].stats.migrations_by_reason[reason_idx(r)]
    }
    fn node_of(&self, p: usize) -> usize {
        self.engine.machine().cpus[self.engine.tasks()[p].cpu].node
    }
    fn balancing(&self) -> &NumaBalancing {
        self.engine.policy().numa_balancing().unwrap()
    }
    fn preferred(&self, p: usize) -> Option<usize> {
        self.balancing().sched.state.tasks[p].preferred_nid
    }
    fn vmstat(&self) -> schedlab::sched::types::Vmstat {
        self.balancing().vmstat()
    }
}

/// A CPU hog without memory, pinned to node 0 for the whole run.
fn hogs(program: u32) -> Vec<TaskSpec> {
    (0..1)
        .map(|i| TaskSpec {
            comm: format!("hog{i}"),
            program,
            parent_cpu: i,
            cpus_allowed: Some(CpuMask::first_n(2)),
            ..TaskSpec::default()
        })
        .collect()
}

fn hog_program() -> Program {
    run_then_exit("hog", 12_000_000_000)
}

/// One task settles on node 1 (memory and statistics there), is pushed to node 0 (which
/// also runs a pinned CPU hog) by its affinity, then released: the next hinting fault past
/// the retry time calls `task_numa_migrate()`, which finds node 1 idle and moves it there
/// (reason `numa`) in every form. (With node 0 otherwise idle the v3.x–v4.18 move would
/// not pass `load_too_imbalanced()`: 1 task vs 0 is as imbalanced as 0 vs 1.)
#[test]
fn task_off_its_memory_node_is_moved_back_to_the_idle_preferred_node() {
    for profile in ["v3.16", "v3.17", "v4.2", "v5.15", "v6.12"] {
        let mut tasks = vec![memory_task("p", 0, 2, 64)];
        tasks.extend(hogs(1));
        let plan = masked_plan(vec![phases("p", 1, 0, 6000, 3000), hog_program()], tasks, 2);
        let r = run(two_nodes(2), plan, profile, true, 1);
        let vm = r.vmstat();
        assert!(vm.numa_hint_faults > 0, "{profile}: hinting faults {vm:?}");
        assert!(vm.numa_pte_updates > 0, "{profile}: scanning marked pages");
        assert_eq!(r.preferred(0), Some(1), "{profile}: preferred node");
        assert!(
            r.numa_migrations(0, MigrationReason::Numa) >= 1,
            "{profile}: moved by NUMA balancing"
        );
        assert_eq!(r.node_of(0), 1, "{profile}: ends on its memory's node");
        assert_eq!(
            vm.numa_task_migrated,
            r.engine.numa().unwrap().moves.numa_move
        );
        // The results' numa object reports the same.
        let j = schedlab::stats::report::numa(&r.engine).unwrap();
        assert_eq!(j["tasks"][0]["preferred_nid"], 1, "{profile}");
        assert_eq!(j["tasks"].as_array().unwrap().len(), 1, "only memory tasks");
        assert_eq!(j["pages_per_node"][1], 32 * 512 - vm.numa_pages_migrated);
    }
}

/// `--vmstat` text: /proc/vmstat's names and order, base pages, the huge-PTE count in
/// page groups.
#[test]
fn vmstat_text_has_proc_vmstat_names() {
    let v = schedlab::sched::types::Vmstat {
        numa_pte_updates: 3 * 512,
        numa_hint_faults: 1024,
        numa_hint_faults_local: 512,
        numa_pages_migrated: 512,
        pgmigrate_success: 512,
        pgmigrate_fail: 0,
        numa_task_migrated: 1,
        numa_task_swapped: 2,
    };
    assert_eq!(
        v.proc_text(),
        "numa_pte_updates 1536\nnuma_huge_pte_updates 3\nnuma_hint_faults 1024\n\
         numa_hint_faults_local 512\nnuma_pages_migrated 512\npgmigrate_success 512\n\
         pgmigrate_fail 0\nnuma_task_migrated 1\nnuma_task_swapped 2\n"
    );
}

/// `numa_balancing=0`: no scanning, no faults, no NUMA moves; the task stays where its
/// affinity left it, away from its memory.
#[test]
fn numa_balancing_off_gives_no_scans_faults_or_moves() {
    let plan = masked_plan(
        vec![phases("p", 1, 0, 3000, 2000)],
        vec![memory_task("p", 0, 2, 64)],
        2,
    );
    let r = run(two_nodes(2), plan, "v4.2", false, 1);
    let vm = r.vmstat();
    assert_eq!(vm.numa_pte_updates, 0);
    assert_eq!(vm.numa_hint_faults, 0);
    assert_eq!(vm.numa_pages_migrated, 0);
    assert_eq!(r.numa_migrations(0, MigrationReason::Numa), 0);
    assert_eq!(r.numa_migrations(0, MigrationReason::NumaSwap), 0);
    assert_eq!(r.node_of(0), 0, "stays on node 0");
    let n = r.engine.numa().unwrap();
    assert_eq!(
        n.mms[0].groups_per_node,
        vec![0, 32],
        "memory stays on node 1"
    );
}

/// Two tasks on a 1-CPU-per-node box, each settled on its own memory's node, are pushed to
/// the other node: each preferred node is busy with a task that prefers the other node.
/// v3.17 (NUMA_MIGRATE_PREFERRED_BUSY) swaps them; v3.16 (no free capacity on the
/// preferred node) never acts: both stick.
#[test]
fn busy_preferred_node_swaps_on_v3_17_and_sticks_on_v3_16() {
    let plan = || {
        masked_plan(
            vec![phases("a", 1, 0, 3000, 3000), phases("b", 0, 1, 3000, 3000)],
            vec![memory_task("a", 0, 1, 64), memory_task("b", 1, 0, 64)],
            1,
        )
    };
    let r = run(two_nodes(1), plan(), "v3.17", true, 1);
    let swaps = r.numa_migrations(0, MigrationReason::NumaSwap)
        + r.numa_migrations(1, MigrationReason::NumaSwap);
    assert!(swaps >= 2, "v3.17 swaps (both legs counted): {swaps}");
    assert!(r.engine.numa().unwrap().moves.numa_swap >= 1);

    let r = run(two_nodes(1), plan(), "v3.16", true, 1);
    let numa_moves: u64 = (0..2)
        .map(|p| {
            r.numa_migrations(p, MigrationReason::NumaSwap)
                + r.numa_migrations(p, MigrationReason::Numa)
        })
        .sum();
    assert_eq!(numa_moves, 0, "v3.16 never acts on a busy preferred node");
    let n = r.engine.numa().unwrap();
    assert_eq!(n.moves.numa_swap + n.moves.numa_move, 0);
    assert!(n.moves.numa_stick > 0, "task_numa_migrate found nothing");
    // Both stay away from their first-touch node: their memory follows them instead.
    assert!(r.vmstat().numa_pages_migrated > 0);
}

/// A task pinned to node 0 whose 1 GiB was first touched on node 1: its pages follow it
/// on hinting faults. v4.2 limits migration to 128 MiB per 100 ms per destination node
/// (some migrations fail); v6.12 has no limit for DRAM-only NUMA.
#[test]
fn page_migration_follows_a_pinned_task_under_the_rate_limit() {
    let plan = || {
        let mut t = memory_task("p", 0, 1, 1024);
        t.memory.bandwidth_mib_s = 20_000;
        let program = touch_on_node1_then_run_on_node0("p", 4_000_000_000);
        masked_plan(vec![program], vec![t], 1)
    };
    let r = run(two_nodes(1), plan(), "v4.2", true, 1);
    let vm = r.vmstat();
    assert!(vm.numa_pages_migrated > 0, "{vm:?}");
    assert!(
        vm.pgmigrate_fail > 0,
        "v4.2 rate limit refused some: {vm:?}"
    );
    assert_eq!(vm.numa_pages_migrated, vm.pgmigrate_success);
    let n = r.engine.numa().unwrap();
    assert_eq!(
        n.mms[0].groups_per_node.iter().sum::<u64>(),
        512,
        "all 1 GiB resident"
    );
    assert!(n.mms[0].groups_per_node[0] > 256, "most moved to node 0");

    let r = run(two_nodes(1), plan(), "v6.12", true, 1);
    assert_eq!(r.vmstat().pgmigrate_fail, 0, "no rate limit on v6.12");
    assert!(r.vmstat().numa_pages_migrated > 0);
}

/// Two fully memory-bound tasks (m = 1) of 12 GB/s each on one node of 16 GB/s: the node
/// serves 16 GB/s, so c = 24/16 = 1.5 and each runs at 2/3 speed — 100 ms of work takes
/// 150 ms. Alone, one takes 100 ms.
#[test]
fn bandwidth_limit_slows_two_bound_tasks_by_the_hand_computed_factor() {
    let plan = |n: usize| WorkloadPlan {
        programs: vec![run_then_exit("stream", 100_000_000)],
        tasks: (0..n)
            .map(|i| TaskSpec {
                comm: format!("s{i}"),
                parent_cpu: i,
                cpus_allowed: Some(CpuMask::single(i)),
                mem_intensity_permille: 1000,
                memory: TaskMemory {
                    private_mib: 256,
                    bandwidth_mib_s: 12_000,
                    ..TaskMemory::default()
                },
                ..TaskSpec::default()
            })
            .collect(),
        ..WorkloadPlan::default()
    };
    let bw = |c: &mut CostModel| c.mem_bw_mib_s_per_node = 16_000;
    let r = run_with(two_nodes(2), plan(2), "v6.12", false, 1, bw);
    let c = &r.engine.numa().unwrap().congestion;
    assert!((c[0] - 1.0).abs() < 1e-9, "all done: nothing runs, c = 1");
    for p in 0..2 {
        let rt = r.engine.tasks()[p].stats.counters.sum_exec_runtime_ns as f64 / 1e6;
        assert!((rt - 150.0).abs() < 1.0, "task {p}: {rt} ms, want 150");
    }
    let r = run_with(two_nodes(2), plan(1), "v6.12", false, 1, bw);
    let rt = r.engine.tasks()[0].stats.counters.sum_exec_runtime_ns as f64 / 1e6;
    assert!(
        (rt - 100.0).abs() < 1.0,
        "alone: {rt} ms, want 100 (12 < 16 GB/s)"
    );
}

/// Same seed, same counters; the placement and moves come from the seeded streams only.
#[test]
fn same_seed_same_vmstat() {
    let plan = || {
        masked_plan(
            vec![phases("a", 1, 0, 2000, 2000), phases("b", 0, 1, 2000, 2000)],
            vec![memory_task("a", 0, 1, 64), memory_task("b", 1, 0, 64)],
            1,
        )
    };
    let a = run(two_nodes(1), plan(), "v4.2", true, 7);
    let b = run(two_nodes(1), plan(), "v4.2", true, 7);
    assert_eq!(a.vmstat(), b.vmstat());
    assert!(a.vmstat().numa_hint_faults > 0);
    assert_eq!(
        a.engine.numa().unwrap().moves,
        b.engine.numa().unwrap().moves
    );
    assert_eq!(a.engine.events(), b.engine.events());
    let _ = TaskId(0);
    let _ = MemPolicy::Local;
}

/// Remote memory costs what the SLIT says (m = 1: 2.1 × at distance 21); page migration
/// brings it back: the task's speed is re-rated as its pages arrive.
#[test]
fn remote_memory_slows_by_the_distance_and_migration_restores_speed() {
    let plan = || {
        let mut t = memory_task("p", 0, 1, 64);
        t.mem_intensity_permille = 1000;
        let program = touch_on_node1_then_run_on_node0("p", 2_000_000_000);
        masked_plan(vec![program], vec![t], 1)
    };
    let off = run(two_nodes(1), plan(), "v6.12", false, 1);
    let rt_off = off.engine.tasks()[0].stats.counters.sum_exec_runtime_ns as f64 / 1e9;
    // 1 ms local + 2 s of work at 1/2.1 speed (plus the affinity switch).
    assert!((rt_off - (0.001 + 4.2)).abs() < 0.01, "remote: {rt_off} s");
    let on = run(two_nodes(1), plan(), "v6.12", true, 1);
    let rt_on = on.engine.tasks()[0].stats.counters.sum_exec_runtime_ns as f64 / 1e9;
    assert!(
        on.vmstat().numa_pages_migrated == 32 * 512,
        "all pages moved"
    );
    assert!(
        rt_on < 0.75 * rt_off,
        "migration restores speed: {rt_on} vs {rt_off}"
    );
}

/// Two single-threaded processes, one pinned to each node, map the same `MAP_SHARED`
/// object (`shm_key`) and touch only it. The kernel keeps one page per object page: the
/// first process to touch a page places it and the other maps that same page (its accesses
/// are remote); their hinting faults on it carry `TNF_SHARED` (`VM_SHARED`, mapped by more
/// than one mm), so `task_numa_group()` joins the two processes into one numa_group even
/// though they have different mms. Every mapping sees each page on the same node, and the
/// run's page count holds the object once.
#[test]
fn processes_sharing_a_shm_object_see_one_page_and_join_one_numa_group() {
    let plan = WorkloadPlan {
        programs: vec![run_then_exit("toucher", 4_000_000_000)],
        tasks: vec![
            shared_region_task("a", 0, 0, Some(7)),
            shared_region_task("b", 2, 10_000_000, Some(7)),
        ],
        ..WorkloadPlan::default()
    };
    let r = run(two_nodes(2), plan, "v3.17", true, 1);
    let n = r.engine.numa().unwrap();
    assert_eq!(n.shm.len(), 1, "one object for one key");
    assert_eq!(n.shm[0].maps.len(), 2, "mapped by both processes");
    let (ma, mb) = (&n.mms[0], &n.mms[1]);
    assert_ne!(ma.id, mb.id, "two mms");
    // The same node for each page in both mappings and in the object.
    for off in 0..8 {
        let (ga, gb) = (ma.groups[off], mb.groups[off]);
        assert_eq!(ga.nid, gb.nid, "page group {off}");
        assert_eq!(ga.nid, n.shm[0].nid[off], "page group {off}");
        assert_eq!(ga.last_cpupid, gb.last_cpupid, "one last_cpupid per page");
    }
    assert_eq!(
        r.engine.numa_groups_per_node().iter().sum::<u64>(),
        8 + 2,
        "the object's 8 page groups counted once, plus one private group each"
    );
    let vm = r.vmstat();
    assert!(vm.numa_hint_faults > 0);
    assert!(
        vm.numa_hint_faults_local < vm.numa_hint_faults,
        "one process's faults on the shared pages are remote: {vm:?}"
    );
    let st = &r.balancing().sched.state;
    let (ta, tb) = (&st.tasks[0], &st.tasks[1]);
    assert!(ta.group.is_some(), "TNF_SHARED faults form a numa_group");
    assert_eq!(ta.group, tb.group, "across the two processes");
}

/// Without `shm_key` each process's shared region is its own: no page is shared, faults
/// are not `TNF_SHARED` (private: the last accessor is always the process itself), and no
/// numa_group forms.
#[test]
fn processes_with_their_own_shared_regions_share_nothing() {
    let plan = WorkloadPlan {
        programs: vec![run_then_exit("toucher", 4_000_000_000)],
        tasks: vec![
            shared_region_task("a", 0, 0, None),
            shared_region_task("b", 2, 0, None),
        ],
        ..WorkloadPlan::default()
    };
    let r = run(two_nodes(2), plan, "v3.17", true, 1);
    let n = r.engine.numa().unwrap();
    assert!(n.shm.is_empty());
    // 8 shared + 1 private page group each (the private region is never accessed).
    assert_eq!(
        n.mms[0].groups_per_node,
        vec![9, 0],
        "a's own, touched on node 0"
    );
    assert_eq!(
        n.mms[1].groups_per_node,
        vec![0, 9],
        "b's own, touched on node 1"
    );
    assert_eq!(r.engine.numa_groups_per_node(), vec![9, 9]);
    let vm = r.vmstat();
    assert_eq!(vm.numa_hint_faults_local, vm.numa_hint_faults, "all local");
    assert!(
        r.balancing()
            .sched
            .state
            .tasks
            .iter()
            .all(|t| t.group.is_none())
    );
}
