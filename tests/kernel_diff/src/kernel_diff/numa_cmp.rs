//! NUMA balancing's destination search (kernel/sched/fair.c of linux 6.12.y) against
//! src/sched/numa/migrate.rs: `task_numa_find_cpu()`, which runs `task_numa_compare()` on
//! every allowed CPU of the destination node, with `task_numa_assign()` (the
//! `numa_migrate_on` claims and the alternative idle CPU), `load_too_imbalanced()`,
//! `adjust_numa_imbalance()`, `task_weight()` / `group_weight()`.
//!
//! A case is 2–4 nodes of 1–8 CPUs on a random distance table, a task or the idle task on
//! every CPU (now and then the task being placed itself, "migrated around"), their faults,
//! groups, preferred nodes, affinity and `task_h_load()`, pending migrations
//! (`numa_migrate_on`), the two nodes' statistics with any node type and cached idle CPU, and
//! the search state a previous node left (best task, CPU and improvement). Compared: the
//! best task, improvement and CPU, `env->dst_cpu`, and the CPUs whose `numa_migrate_on` is
//! set after the search (the mirror's own claim included).

use crate::ffi::{KdNcIn, KdNcOut, KdNcStats, KdNcTask, KdNs};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::sched::numa::migrate::{NodeType, NumaStats, TaskNumaEnv, task_numa_find_cpu};
use schedlab::sched::numa::{
    NumaEnv, NumaFaults, NumaGroup, NumaGroupId, NumaTopo, NumaVariant, TaskNuma,
};
use schedlab::task::TaskId;

const V: &str = "6.12";
/// 6.1 starts `task_numa_assign()`'s alternative idle-CPU scan at `dst_cpu` itself, 6.3+ at
/// `dst_cpu + 1` (8589018acc65 'sched/core: Adjusting the order of scanning CPU'): the
/// first candidate then always fails (its flag is set), so the two differ only in the
/// `env->dst_cpu` a failed scan leaves, which `task_numa_migrate()` never reads (it moves
/// to `best_cpu`). The mirror has the 6.3+ start; those cases are counted for 6.1.
const V61: &str = "6.1";
const NR_TASKS: usize = 33;

fn task() -> impl Strategy<Value = KdNcTask> {
    let faults = prop_oneof![
        prop::array::uniform32(0u64..8),
        prop::array::uniform32(0u64..1 << 20),
    ];
    (
        faults,
        prop_oneof![Just(0u64), 1u64..64, 1u64..1 << 24],
        prop_oneof![Just(1024u64), 0u64..4096],
        prop_oneof![3 => Just(u64::MAX), 1 => any::<u64>()],
        -1i32..4,
        -1i32..2,
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.9),
    )
        .prop_map(
            |(faults, total, h_load, cpus, pref, group, exiting, has)| KdNcTask {
                faults,
                total_faults: total,
                h_load,
                cpus,
                preferred_nid: pref,
                group,
                exiting: i32::from(exiting),
                has_faults: i32::from(has),
            },
        )
}

fn stats() -> impl Strategy<Value = KdNcStats> {
    (1u32..=8, 0u64..=8192, 0u32..=24, 0u32..3, any::<u8>()).prop_map(
        |(w, load, nr, node_type, idle)| KdNcStats {
            ns: KdNs {
                load,
                runnable: 0,
                util: 0,
                compute_capacity: u64::from(w) * 1024,
                nr_running: nr,
                weight: w,
            },
            node_type,
            idle_cpu: i32::from(idle),
        },
    )
}

/// Remote distances from a few levels, symmetric.
fn dist(n: usize, levels: usize, raw: &[u8; 16]) -> [[i32; 8]; 8] {
    let lv: &[i32] = [&[20][..], &[16, 22], &[12, 20, 30], &[11, 21, 28, 40]][levels];
    let mut d = [[0i32; 8]; 8];
    for a in 0..n {
        d[a][a] = 10;
        for b in a + 1..n {
            let x = lv[raw[a * 4 + b] as usize % lv.len()];
            d[a][b] = x;
            d[b][a] = x;
        }
    }
    d
}

fn case() -> impl Strategy<Value = KdNcIn> {
    let cpu_raw = (
        prop::array::uniform32(any::<u8>()),
        prop::array::uniform32(prop::bool::weighted(0.85)),
        prop::array::uniform32(prop::bool::weighted(0.1)),
    );
    let env_raw = (
        stats(),
        stats(),
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()),
        (0u8..4, 0i64..1500, -1998i64..=1998, -1998i64..=1998),
        (
            1i32..=16,
            prop_oneof![Just(112i32), Just(117), 100i32..=150],
        ),
    );
    (
        (
            2usize..=4,
            prop::array::uniform4(1usize..=8),
            0usize..4,
            any::<[u8; 16]>(),
        ),
        prop::collection::vec(task(), NR_TASKS),
        (
            prop::array::uniform32(0u64..1 << 20),
            prop::array::uniform32(0u64..8),
        ),
        (0u64..1 << 24, 0u64..1 << 24),
        cpu_raw,
        env_raw,
    )
        .prop_map(|(topo, tasks, gf, gt, cpu_raw, env_raw)| {
            build(topo, tasks, gf, gt, cpu_raw, env_raw)
        })
}

type Topo = (usize, [usize; 4], usize, [u8; 16]);
type CpuRaw = ([u8; 32], [bool; 32], [bool; 32]);
type EnvRaw = (
    KdNcStats,
    KdNcStats,
    (u8, u8, u8, u8),
    (u8, i64, i64, i64),
    (i32, i32),
);

/// A consistent case from the raw draws: p (task 0) runs on `src_cpu`; a busy CPU is not
/// idle; the previous best CPU (outside the source node) is claimed by this search and its
/// task is that CPU's current one; the cached idle CPU is on the destination node.
fn build(
    (nr_nodes, sizes, levels, draw): Topo,
    tasks: Vec<KdNcTask>,
    (gf0, gf1): ([u64; 32], [u64; 32]),
    (gt0, gt1): (u64, u64),
    (curr_raw, idle_raw, on_raw): CpuRaw,
    (mut src_stats, mut dst_stats, picks, best, (imb_numa_nr, imbalance_pct)): EnvRaw,
) -> KdNcIn {
    let mut cpu_node = [0i32; 32];
    let mut node_first = [0usize; 5];
    let mut nr_cpus = 0;
    for (n, &size) in sizes.iter().enumerate().take(nr_nodes) {
        node_first[n] = nr_cpus;
        for _ in 0..size {
            cpu_node[nr_cpus] = n as i32;
            nr_cpus += 1;
        }
    }
    node_first[nr_nodes] = nr_cpus;
    let in_node =
        |n: usize, raw: u8| node_first[n] + raw as usize % (node_first[n + 1] - node_first[n]);
    let src_nid = picks.0 as usize % nr_nodes;
    let dst_nid = (src_nid + 1 + picks.1 as usize % (nr_nodes - 1)) % nr_nodes;
    let src_cpu = in_node(src_nid, picks.2);
    let mut curr = [-1i32; 32];
    let mut idle = [0u32; 32];
    let mut migrate_on = [0u32; 32];
    for cpu in 0..nr_cpus {
        curr[cpu] = match curr_raw[cpu] % 16 {
            0..=4 => -1,
            15 => 0,
            _ => cpu as i32 + 1,
        };
        migrate_on[cpu] = u32::from(on_raw[cpu]);
    }
    curr[src_cpu] = 0;
    for cpu in 0..nr_cpus {
        idle[cpu] = u32::from(curr[cpu] < 0 && idle_raw[cpu]);
    }
    let (mut best_task, mut best_cpu) = (-1, -1);
    let (kind, best_imp, taskimp, groupimp) = best;
    if kind > 0 && nr_cpus > sizes[src_nid] {
        let mut b = (picks.3 as usize) % nr_cpus;
        while cpu_node[b] as usize == src_nid {
            b = (b + 1) % nr_cpus;
        }
        best_cpu = b as i32;
        migrate_on[b] = 1;
        if curr[b] > 0 {
            best_task = curr[b];
        }
    }
    let best_imp = if best_cpu < 0 { 0 } else { best_imp };
    src_stats.ns.nr_running = src_stats.ns.nr_running.max(1);
    src_stats.idle_cpu = -1;
    dst_stats.idle_cpu = if dst_stats.idle_cpu % 3 == 0 {
        -1
    } else {
        in_node(dst_nid, dst_stats.idle_cpu as u8) as i32
    };
    let d = dist(nr_nodes, levels, &draw);
    KdNcIn {
        task: std::array::from_fn(|i| tasks[i]),
        group_faults: [gf0, gf1],
        group_total_faults: [gt0, gt1],
        dist: d,
        cpu_node,
        curr,
        idle,
        migrate_on,
        src_stats,
        dst_stats,
        best_imp,
        taskimp,
        groupimp,
        nr_nodes: nr_nodes as i32,
        nr_cpus: nr_cpus as i32,
        src_cpu: src_cpu as i32,
        src_nid: src_nid as i32,
        dst_cpu: in_node(dst_nid, picks.3) as i32,
        dst_nid: dst_nid as i32,
        imb_numa_nr,
        imbalance_pct,
        dist_lim: d[src_nid][dst_nid],
        best_task,
        best_cpu,
        pad: 0,
    }
}

/// The mirror's view of a case.
struct Env {
    topo: NumaTopo,
    curr: Vec<Option<TaskId>>,
    idle: Vec<bool>,
    migrate_on: Vec<bool>,
    tasks: Vec<TaskNuma>,
    cpus: Vec<CpuMask>,
    h_load: Vec<u64>,
    exiting: Vec<bool>,
    groups: Vec<NumaGroup>,
}

impl NumaEnv for Env {
    fn topo(&self) -> &NumaTopo {
        &self.topo
    }
    fn nr_running(&self, _cpu: usize) -> u32 {
        unreachable!("update_numa_stats() is not part of the search")
    }
    fn h_nr_running(&self, _cpu: usize) -> u32 {
        unreachable!()
    }
    fn cpu_load(&self, _cpu: usize) -> u64 {
        unreachable!()
    }
    fn cpu_runnable(&self, _cpu: usize) -> u64 {
        unreachable!()
    }
    fn cpu_util(&self, _cpu: usize) -> u64 {
        unreachable!()
    }
    fn capacity_of(&self, _cpu: usize) -> u64 {
        unreachable!()
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.idle[cpu]
    }
    fn curr(&self, cpu: usize) -> Option<TaskId> {
        self.curr[cpu]
    }
    fn numa_migrate_on(&self, cpu: usize) -> bool {
        self.migrate_on[cpu]
    }
    fn sd_numa(&self, _cpu: usize) -> Option<(u32, u32)> {
        unreachable!()
    }
    fn task_cpu(&self, _p: TaskId) -> usize {
        unreachable!()
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        &self.cpus[p.idx()]
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.h_load[p.idx()]
    }
    fn task_numa(&self, p: TaskId) -> &TaskNuma {
        &self.tasks[p.idx()]
    }
    fn numa_group(&self, g: NumaGroupId) -> &NumaGroup {
        &self.groups[g.0]
    }
    fn is_exiting(&self, p: TaskId) -> bool {
        self.exiting[p.idx()]
    }
}

fn stats_of(k: &KdNcStats) -> NumaStats {
    NumaStats {
        load: k.ns.load as i64,
        runnable: k.ns.runnable as i64,
        util: k.ns.util as i64,
        compute_capacity: k.ns.compute_capacity as i64,
        nr_running: i64::from(k.ns.nr_running),
        weight: i64::from(k.ns.weight),
        task_capacity: 0,
        has_free_capacity: false,
        node_type: [
            NodeType::HasSpare,
            NodeType::FullyBusy,
            NodeType::Overloaded,
        ][k.node_type as usize],
        idle_cpu: usize::try_from(k.idle_cpu).ok(),
    }
}

fn env_of(c: &KdNcIn) -> Env {
    let n = c.nr_nodes as usize;
    let nr = c.nr_cpus as usize;
    let distance = (0..n)
        .map(|a| (0..n).map(|b| c.dist[a][b] as u32).collect())
        .collect();
    let topo = NumaTopo::new(
        distance,
        c.cpu_node[..nr].iter().map(|&x| x as usize).collect(),
    );
    let tasks = c
        .task
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut t = TaskNuma::new(i as u32 + 1, None, 1000);
            if k.has_faults != 0 {
                let mut f = NumaFaults::new(n);
                f.v = k.faults[..8 * n].iter().map(|&x| x as i64).collect();
                t.faults = Some(f);
            }
            t.total_numa_faults = k.total_faults as i64;
            t.preferred_nid = usize::try_from(k.preferred_nid).ok();
            t.group = usize::try_from(k.group).ok().map(NumaGroupId);
            t
        })
        .collect();
    let groups = (0..2)
        .map(|g| NumaGroup {
            gid: g as u32 + 100,
            nr_tasks: 2,
            nr_nodes: n,
            faults: c.group_faults[g][..8 * n]
                .iter()
                .map(|&x| x as i64)
                .collect(),
            total_faults: c.group_total_faults[g] as i64,
            max_faults_cpu: 0,
            active_nodes: 1,
            active_mask: 1,
        })
        .collect();
    let best = usize::try_from(c.best_cpu).ok();
    Env {
        topo,
        curr: (0..nr)
            .map(|cpu| u32::try_from(c.curr[cpu]).ok().map(TaskId))
            .collect(),
        idle: (0..nr).map(|cpu| c.idle[cpu] != 0).collect(),
        // The previous best CPU's flag is this search's own claim (TaskNumaEnv::claimed).
        migrate_on: (0..nr)
            .map(|cpu| c.migrate_on[cpu] != 0 && Some(cpu) != best)
            .collect(),
        tasks,
        cpus: c
            .task
            .iter()
            .map(|k| {
                let mut m = CpuMask::default();
                (0..nr)
                    .filter(|&b| k.cpus >> b & 1 == 1)
                    .for_each(|b| m.set(b));
                m
            })
            .collect(),
        h_load: c.task.iter().map(|k| k.h_load).collect(),
        exiting: c.task.iter().map(|k| k.exiting != 0).collect(),
        groups,
    }
}

fn kernel(c: &KdNcIn, f: &impl Fn(&KdNcIn, &mut KdNcOut) -> i32) -> KdNcOut {
    let mut out = KdNcOut::default();
    let rc = f(c, &mut out);
    assert_eq!(rc, 0);
    out
}

fn rust(c: &KdNcIn, mv: (u16, u16)) -> KdNcOut {
    let env = env_of(c);
    let best = usize::try_from(c.best_cpu).ok();
    let mut s = TaskNumaEnv {
        p: TaskId(0),
        src_cpu: c.src_cpu as usize,
        src_nid: c.src_nid as usize,
        dst_cpu: c.dst_cpu as usize,
        dst_nid: c.dst_nid as usize,
        imb_numa_nr: i64::from(c.imb_numa_nr),
        src_stats: stats_of(&c.src_stats),
        dst_stats: stats_of(&c.dst_stats),
        imbalance_pct: i64::from(c.imbalance_pct),
        dist: c.dist_lim as u32,
        best_task: u32::try_from(c.best_task).ok().map(TaskId),
        best_imp: c.best_imp,
        best_cpu: best,
        claimed: best,
    };
    let v = NumaVariant::for_version(mv.0, mv.1);
    task_numa_find_cpu(&env, &mut s, c.taskimp, c.groupimp, &v);
    let mut migrate_on = 0u64;
    for cpu in 0..c.nr_cpus as usize {
        if env.migrate_on[cpu] || s.claimed == Some(cpu) {
            migrate_on |= 1 << cpu;
        }
    }
    KdNcOut {
        best_imp: s.best_imp,
        migrate_on,
        best_task: s.best_task.map_or(-1, |t| t.0 as i32),
        best_cpu: s.best_cpu.map_or(-1, |b| b as i32),
        dst_cpu: s.dst_cpu as i32,
        pad: 0,
    }
}

#[test]
fn task_numa_find_cpu_matches() {
    // SAFETY (both): reads the case, writes `out`.
    find_cpu_on(V, (6, 12), &|c, o| unsafe {
        crate::ffi::kd612_numa_find_cpu(c, o)
    });
    find_cpu_on(V61, (6, 1), &|c, o| unsafe {
        crate::ffi::kd61_numa_find_cpu(c, o)
    });
}

fn find_cpu_on(v: &str, mv: (u16, u16), f: &impl Fn(&KdNcIn, &mut KdNcOut) -> i32) {
    if !available("numa", v) {
        return;
    }
    let kinds = [0, 1, 2].map(|_| std::sync::atomic::AtomicU64::new(0));
    let scan_start = std::sync::atomic::AtomicU64::new(0);
    assert_no_mismatch(
        "numa::task_numa_find_cpu+task_numa_compare+task_numa_assign",
        v,
        cases(5000),
        case(),
        |c| {
            let k = kernel(c, f);
            // No candidate / a move / a swap.
            let kind = if k.best_cpu < 0 {
                0
            } else if k.best_task < 0 {
                1
            } else {
                2
            };
            kinds[kind].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let r = rust(c, mv);
            if v == V61
                && k != r
                && k == (KdNcOut {
                    dst_cpu: k.dst_cpu,
                    ..r
                })
            {
                scan_start.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Ok(());
            }
            compare("search state", &k, &r)
        },
    );
    println!(
        "kernel_diff numa::task_numa_find_cpu (linux {}): no candidate / move / swap {:?}; \
         only the leftover dst_cpu of a failed alternative scan differs (6.1's scan start): {}",
        crate::release(v),
        kinds.map(|t| t.into_inner()),
        scan_start.load(std::sync::atomic::Ordering::Relaxed)
    );
}
