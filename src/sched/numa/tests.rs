//! Decisions of the NUMA-balancing mechanisms on constructed states, with hand-computed
//! expectations. The task-mover tests use one 2-node machine (CPUs 0–3 on node 0, 4–7 on
//! node 1, distance 21, capacity 1024 each, SD_NUMA imbalance_pct 125 → env 112) and a task
//! `p` running on CPU 0 with private faults 100 on node 0 and 900 on node 1, preferred node
//! 1: `taskimp = 900 − 100 = 800` (task_weight is per mille of total faults).

use super::fake::FakeNumaEnv;
use super::faults::*;
use super::group::*;
use super::locality::*;
use super::migrate::*;
use super::placement::*;
use super::scan::*;
use super::weight::*;
use super::*;
use crate::memory::{LAST_CPUPID_UNSET, Mm, MmId, cpu_pid_to_cpupid};
use crate::sched::balance::FbqType;
use crate::sched::types::{NumaMigrateDecision, NumaMove};

/// `per_cpu[n]` tasks of load 1024 on each CPU of node n (p is the running task of CPU 0
/// and counts as one of node 0's). Partners (every other task) prefer `partner_pref` with
/// faults 100 / 900 towards it, or have no statistics.
fn machine(per_cpu: [usize; 2], partner_pref: Option<usize>) -> (FakeNumaEnv, TaskId) {
    let mut env = FakeNumaEnv::two_nodes(4);
    let p = env.add_task(0, 1024, true);
    env.set_faults(p, &[100, 900], Some(1));
    for cpu in 0..8 {
        let n = per_cpu[cpu / 4];
        let already = usize::from(cpu == 0);
        for i in already..n {
            let t = env.add_task(cpu, 1024, i == n - 1 && cpu != 0);
            if let Some(pref) = partner_pref {
                let mut mem = [100, 100];
                mem[pref] = 900;
                env.set_faults(t, &mem, Some(pref));
            }
        }
    }
    (env, p)
}

fn decide(
    env: &FakeNumaEnv,
    p: TaskId,
    version: (u16, u16),
    tweak: &[(&str, bool)],
) -> NumaMigrateDecision {
    let mut v = NumaVariant::for_version(version.0, version.1);
    for &(name, on) in tweak {
        v.set(name, on).unwrap();
    }
    task_numa_migrate(env, p, &v)
}

fn curr(env: &FakeNumaEnv, cpu: usize) -> TaskId {
    env.cpus[cpu].curr.expect("busy CPU")
}

#[test]
fn preferred_node_idle_every_variant_moves_there() {
    // Node 0: 2 tasks per CPU; node 1 idle.
    let (env, p) = machine([2, 0], None);
    // v3.16/v3.17: free capacity (0 < round(4096/1024) = 4); each idle CPU scores imp 800
    // and the normalised loads pass (dst' 1024 vs src' 1024 is within 112%); `imp <
    // best_imp` rejects only worse candidates, so the last equal one (CPU 7) wins.
    for ver in [(3, 16), (3, 17)] {
        let d = decide(&env, p, ver, &[]);
        assert_eq!(d.action, NumaMove::Move { dst_cpu: 7 }, "{ver:?}");
        assert!(
            d.reset_scan_period,
            "3.x resets the scan period on a NUMA move"
        );
    }
    // v4.2: numa_has_capacity (8192·4096 > 0) passes; the first idle CPU wins and later equal
    // ones are skipped (`imp <= best && moveimp <= best`).
    assert_eq!(
        decide(&env, p, (4, 2), &[]).action,
        NumaMove::Move { dst_cpu: 4 }
    );
    // v5.4: maymove (|1024−7168| < |0−8192| in capacity units), first idle CPU, stop.
    let d = decide(&env, p, (5, 4), &[]);
    assert_eq!(d.action, NumaMove::Move { dst_cpu: 4 });
    assert_eq!(d.claimed_cpu, Some(4), "v4.19+ claims numa_migrate_on");
    assert!(!d.reset_scan_period);
    // v6.15: node 1 has spare capacity, src_running 7 vs dst_running 1 is no imbalance:
    // straight to the cached idle CPU.
    assert_eq!(
        decide(&env, p, (6, 15), &[]).action,
        NumaMove::Move { dst_cpu: 4 }
    );
}

#[test]
fn preferred_node_busy_v316_stays_v317_swaps_v42_stays_on_equal_load() {
    // Both nodes: 2 tasks on every CPU (equal load). Partners have no NUMA statistics.
    let (env, p) = machine([2, 2], None);
    // v3.16: node 1 has no free capacity (8 ≥ 4): the preferred node is never searched, and
    // there is no other node.
    let d = decide(&env, p, (3, 16), &[]);
    assert_eq!(d.action, NumaMove::Stay);
    assert!(!d.reset_scan_period);
    // v3.17 (a43455a1d572): searched anyway. Each CPU's current task is a swap partner with
    // imp 800 + 0 − 0, loads unchanged by a swap of equal loads: the last CPU's wins.
    let d = decide(&env, p, (3, 17), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 7,
            other: curr(&env, 7)
        }
    );
    // The switch alone reproduces both: v3.17 with NUMA_MIGRATE_PREFERRED_BUSY off stays.
    assert_eq!(
        decide(&env, p, (3, 17), &[("NUMA_MIGRATE_PREFERRED_BUSY", false)]).action,
        NumaMove::Stay
    );
    // v4.2: numa_has_capacity needs src.load/cap > dst.load/cap strictly: 8192 = 8192 -> no.
    assert_eq!(decide(&env, p, (4, 2), &[]).action, NumaMove::Stay);
    // Without NUMA_HAS_CAPACITY the v4.2 code swaps with the first CPU's task.
    let d = decide(&env, p, (4, 2), &[("NUMA_HAS_CAPACITY", false)]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 4,
            other: curr(&env, 4)
        }
    );
    // v4.3's imbalance_pct slack (8192·112 > 8192·100) lets the equal-load node through.
    let d = decide(&env, p, (4, 3), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 4,
            other: curr(&env, 4)
        }
    );
    // v6.15: node 1 overloaded, a pure move would worsen the imbalance (maymove false); the
    // swap has imp 800 ≥ SMALLIMP and zero net load: swap with the first CPU's task.
    let d = decide(&env, p, (6, 15), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 4,
            other: curr(&env, 4)
        }
    );
}

#[test]
fn preferred_node_busy_but_less_loaded_per_capacity() {
    // Node 0: 3 tasks per CPU (12), node 1: 2 per CPU (8); partners on node 1 prefer node 1
    // (they are at home), so swapping with them gains nothing: imp = 800 + 100 − 900 = 0.
    let (env, p) = machine([3, 2], Some(1));
    // v3.16: no free capacity on node 1 -> stay.
    assert_eq!(decide(&env, p, (3, 16), &[]).action, NumaMove::Stay);
    // v3.17: a zero-gain swap is accepted (`imp < best_imp` with best 0) and a swap of equal
    // loads keeps the (normalised) imbalance: it evicts a task that is at home.
    let d = decide(&env, p, (3, 17), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 7,
            other: curr(&env, 7)
        }
    );
    // v4.2: numa_has_capacity passes (12288 > 8192 per 4096); moving beats swapping
    // (moveimp 800 > imp 0) and moving p leaves 11264 vs 9216, within 112% -> a pure move
    // onto a *busy* CPU, where p queues behind its current task (no select_idle_sibling).
    // Each later CPU re-wins with moveimp 800 > best 799, so the last one is chosen.
    let d = decide(&env, p, (4, 2), &[]);
    assert_eq!(d.action, NumaMove::Move { dst_cpu: 7 });
    assert_eq!(d.best_imp, 799, "moveimp − 1, so an idle CPU would win");
    assert!(env.nr_running(7) > 0);
    // v6.15: overloaded destination, but the pure move does not worsen |imbalance|
    // (|9216 − 11264| < |8192 − 12288|): maymove; the first CPU takes the move.
    assert_eq!(
        decide(&env, p, (6, 15), &[]).action,
        NumaMove::Move { dst_cpu: 4 }
    );
    // And when the preferred node is *more* loaded per capacity, v4.2 refuses it outright.
    let (env2, p2) = machine([2, 3], Some(1));
    assert_eq!(decide(&env2, p2, (4, 2), &[]).action, NumaMove::Stay);
}

#[test]
fn spare_capacity_numa_classify_refuses_moves_beyond_the_allowance_and_same_group_swaps() {
    // p alone on node 0; node 1 runs one task on CPUs 4-6, CPU 7 idle.
    let mut env = FakeNumaEnv::two_nodes(4);
    let p = env.add_task(0, 1024, true);
    env.set_faults(p, &[100, 900], Some(1));
    for cpu in 4..7 {
        env.add_task(cpu, 1024, true);
    }
    // v6.15: has_spare (3 < 4 CPUs); moving would make it 0 vs 4 tasks, an imbalance of 4
    // > NUMA_IMBALANCE_MIN: no move, and no swaps between ungrouped tasks with spare
    // capacity -> stay.
    assert_eq!(decide(&env, p, (6, 15), &[]).action, NumaMove::Stay);
    // Without NUMA_CLASSIFY (the v4.19-v5.6 rule) the move is judged by load only:
    // |4096·1 − 0| vs |3072 − 1024|·4096 gets worse -> no move; a swap of equal loads with a
    // stats-less partner (imp 800) is allowed.
    let d = decide(&env, p, (6, 15), &[("NUMA_CLASSIFY", false)]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 4,
            other: curr(&env, 4)
        }
    );
    // v3.17: one task per CPU on both sides -> swap without a load check; the idle CPU is
    // refused (moving p would leave node 0 empty: too imbalanced), the last swap wins.
    let d = decide(&env, p, (3, 17), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 6,
            other: curr(&env, 6)
        }
    );
    // v4.2: the source has free capacity and so does the destination, but node 1 is more
    // loaded (3072 vs 1024): numa_has_capacity refuses.
    assert_eq!(decide(&env, p, (4, 2), &[]).action, NumaMove::Stay);
}

#[test]
fn numa_migrate_on_and_missing_numa_domain() {
    let (mut env, p) = machine([2, 0], None);
    // Another migration already targets CPU 4: v6.15's idle search skips it.
    env.cpus[4].numa_migrate_on = true;
    let d = decide(&env, p, (6, 15), &[]);
    assert_eq!(d.action, NumaMove::Move { dst_cpu: 5 });
    assert_eq!(d.claimed_cpu, Some(5));
    // A cpuset-isolated CPU (no SD_NUMA): -EINVAL, preferred node := current node.
    env.sd_numa = None;
    let d = decide(&env, p, (6, 15), &[]);
    assert_eq!(d.action, NumaMove::NoNumaDomain);
    assert_eq!(d.set_preferred, Some(0));
}

#[test]
fn grouped_task_that_cannot_move_adopts_its_node_v419_plus() {
    let (mut env, p) = machine([2, 2], Some(1));
    // A second thread of p's group with no load of its own (e.g. just woken), so both
    // nodes still carry 8192.
    let q = env.add_task(1, 0, false);
    env.set_faults(q, &[100, 900], Some(1));
    env.group_tasks(&[p, q]);
    // Partners at home on node 1, ungrouped: swap imp = groupimp 800 + 100 − 900 = 0 <
    // SMALLIMP; a pure move worsens |8192 − 8192| (maymove false). Nothing found -> the
    // grouped task settles where it is.
    let d = decide(&env, p, (6, 15), &[]);
    assert_eq!(d.action, NumaMove::Stay);
    assert_eq!(
        d.set_preferred,
        Some(0),
        "sched_setnuma(p, src_nid) for a stuck group member"
    );
}

#[test]
fn retry_interval_is_a_sixteenth_of_the_scan_period_capped_at_a_second() {
    assert_eq!(numa_migrate_retry_interval_ns(1000, 1000), 62_000_000);
    assert_eq!(numa_migrate_retry_interval_ns(1000, 250), 15 * 4_000_000);
    assert_eq!(numa_migrate_retry_interval_ns(60_000, 1000), 1_000_000_000);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    assert_eq!(
        numa_migrate_preferred(&mut t, 0, 5, 1000),
        MigratePreferred::NoStats
    );
    t.faults = Some(NumaFaults::new(2));
    t.preferred_nid = Some(1);
    assert_eq!(
        numa_migrate_preferred(&mut t, 0, 5, 1000),
        MigratePreferred::Attempt
    );
    assert_eq!(t.numa_migrate_retry_ns, 5 + 62_000_000);
    assert_eq!(
        numa_migrate_preferred(&mut t, 1, 5, 1000),
        MigratePreferred::OnPreferred
    );
}

fn params() -> ScanParams {
    ScanParams::default()
}

#[test]
fn scan_period_bounds_follow_rss() {
    let mb = |m: u64| (m << 20) / 4096;
    // Floor 1000 / (2560 / 256) = 100 ms.
    assert_eq!(task_scan_min(&params(), mb(256)), 1000);
    assert_eq!(task_scan_min(&params(), mb(2048)), 125);
    assert_eq!(task_scan_min(&params(), mb(4096)), 100);
    assert_eq!(
        task_scan_min(&params(), 0),
        1000,
        "RSS 0 counts as one window"
    );
    assert_eq!(
        task_scan_max(&params(), mb(256), None, &NumaVariant::for_version(6, 15)),
        60_000
    );
    assert_eq!(
        task_scan_max(&params(), mb(2048), None, &NumaVariant::for_version(6, 15)),
        7500
    );
}

#[test]
fn nr_scan_windows_round_up_is_the_kernels_power_of_two_mask() {
    // task_nr_scan_windows() rounds the RSS with round_up(), a mask: with 100 MB windows
    // (25 600 pages) 30 000 pages count as one window, not two (tests/kernel_diff found it).
    let p = ScanParams {
        scan_size_mb: 100,
        ..ScanParams::default()
    };
    assert_eq!(task_nr_scan_windows(&p, 30_000), 1);
    assert_eq!(task_nr_scan_windows(&p, 25_600), 1);
    // Power-of-two windows (the default 256 MB = 65 536 pages): a true round-up.
    let p = ScanParams::default();
    assert_eq!(task_nr_scan_windows(&p, 65_537), 2);
    assert_eq!(task_nr_scan_windows(&p, 0), 1);
}

#[test]
fn update_task_scan_period_negative_sum_wraps_to_the_maximum() {
    // A 12 ms period (scan_size_mb = 32 and a 3 GB RSS give task_scan_min = 12) with
    // remote, shared-only faults: diff = -(7 - 0) * 2 = -14. The kernel's unsigned int sum
    // wraps and clamp() returns task_scan_max, not task_scan_min (tests/kernel_diff).
    let v6 = NumaVariant::for_version(6, 12);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    t.numa_scan_period_ms = 12;
    t.numa_scan_period_max_ms = 625;
    t.faults_locality = [5, 0, 0];
    assert_eq!(update_task_scan_period(&mut t, 1, 0, 12, 625, 0, &v6), None);
    assert_eq!(t.numa_scan_period_ms, 625);
}

#[test]
fn update_task_scan_period_modern_and_v316() {
    let v6 = NumaVariant::for_version(6, 15);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    t.numa_scan_period_max_ms = 60_000;
    // 20% local, 30% private: lr 2, ps 3 -> speed up by (7 − 3) slots of 100 ms.
    t.faults_locality = [80, 20, 0];
    assert_eq!(
        update_task_scan_period(&mut t, 70, 30, 100, 60_000, 0, &v6),
        None
    );
    assert_eq!(t.numa_scan_period_ms, 600);
    assert_eq!(t.faults_locality, [0, 0, 0]);
    // 90% private: slow down by max(1, 9 − 7) slots of ceil(600/10) = 60 -> 720.
    t.faults_locality = [50, 50, 0];
    update_task_scan_period(&mut t, 10, 90, 100, 60_000, 0, &v6);
    assert_eq!(t.numa_scan_period_ms, 720);
    // No local and no shared faults: double (capped by period_max) and push next scan out.
    t.faults_locality = [10, 0, 0];
    assert_eq!(
        update_task_scan_period(&mut t, 0, 10, 100, 60_000, 7, &v6),
        Some(7 + 1_440_000_000)
    );
    assert_eq!(t.numa_scan_period_ms, 1440);
    // A failed migration also doubles (v4.0+).
    t.faults_locality = [10, 90, 5];
    update_task_scan_period(&mut t, 0, 100, 100, 60_000, 0, &v6);
    assert_eq!(t.numa_scan_period_ms, 2880);
    // v3.16: threshold 3, no failure term; 20% local -> diff −(3 − 2) × 100 = −100, scaled by
    // ceil(10 × 30/100)/10 = 3/10 -> −30.
    let v316 = NumaVariant::for_version(3, 16);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    t.faults_locality = [80, 20, 7];
    update_task_scan_period(&mut t, 70, 30, 100, 60_000, 0, &v316);
    assert_eq!(t.numa_scan_period_ms, 970);
}

#[test]
fn update_scan_period_resets_only_for_moves_off_the_preferred_node() {
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    t.faults = Some(NumaFaults::new(2));
    t.numa_scan_period_ms = 5000;
    t.preferred_nid = Some(1);
    t.numa_scan_seq = 3;
    assert!(!update_scan_period(&mut t, 0, 1, 1000), "moving home");
    assert!(!update_scan_period(&mut t, 0, 0, 1000), "same node");
    assert!(
        update_scan_period(&mut t, 1, 0, 1000),
        "the balancer pulled it off its node"
    );
    assert_eq!(t.numa_scan_period_ms, 1000);
}

#[test]
fn task_tick_and_numa_work_mark_scan_size_per_period() {
    let v = NumaVariant::for_version(6, 15);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    let mut mm = Mm::new(MmId(0), 2);
    mm.map(600 << 20, false, true); // 300 page groups
    for g in 0..300 {
        mm.touch(g, g % 2);
    }
    let mut st = MmNuma::default();
    // Runtime 1000 ms has not passed node_stamp 0 + period 1000 ms; 1000 ms + 1 ns has.
    assert!(!task_tick_numa(&mut t, 1_000_000_000, 0, &st, 1000, &v));
    assert!(task_tick_numa(&mut t, 1_000_000_001, 0, &st, 1000, &v));
    assert_eq!(t.node_stamp_ns, 1_000_000_000);
    // First work: sets next_scan = now + 1 s scan delay and does nothing.
    let w = task_numa_work(
        &mut t,
        &mut mm,
        &mut st,
        5,
        &params(),
        true,
        1_000_000,
        1000,
        60_000,
    );
    assert!(!w.ran);
    assert_eq!(st.numa_next_scan_ns, 5 + 1_000_000_000);
    // At the next scan time: 256 MB = 128 groups marked, next scan one period later.
    let now = 1_000_000_005;
    let w = task_numa_work(
        &mut t,
        &mut mm,
        &mut st,
        now,
        &params(),
        true,
        1_000_000,
        1000,
        60_000,
    );
    assert!(w.ran);
    assert_eq!((w.groups_marked, w.pte_updates), (128, 128 * 512));
    assert_eq!(st.numa_scan_offset, 128);
    assert_eq!(st.numa_next_scan_ns, now + 1_000_000_000);
    assert_eq!(
        t.node_stamp_ns,
        1_000_000_000 + 2_000_000,
        "+2 ticks stagger"
    );
    // Two more windows complete the pass (44 groups left in the third).
    let later = now + 1_000_000_000;
    task_numa_work(
        &mut t,
        &mut mm,
        &mut st,
        later,
        &params(),
        true,
        1_000_000,
        1000,
        60_000,
    );
    let w = task_numa_work(
        &mut t,
        &mut mm,
        &mut st,
        later + 1_000_000_000,
        &params(),
        true,
        1_000_000,
        1000,
        60_000,
    );
    assert_eq!(w.groups_marked, 44);
    assert_eq!(
        (w.passes_completed, st.numa_scan_seq, st.numa_scan_offset),
        (1, 1, 0)
    );
    // Without MPOL_F_MOF (a numactl policy) nothing is marked.
    let mut mm2 = mm.clone();
    for g in &mut mm2.groups {
        g.prot_none = false;
    }
    let mut st2 = MmNuma {
        numa_next_scan_ns: 1,
        ..MmNuma::default()
    };
    let w = task_numa_work(
        &mut t,
        &mut mm2,
        &mut st2,
        10,
        &params(),
        false,
        1_000_000,
        1000,
        60_000,
    );
    assert!(w.ran && w.pte_updates == 0);
    assert_eq!(numa_work_overhead_stamp_ns(50_000), 1_600_000);
}

#[test]
fn should_numa_migrate_memory_two_stage_filter_and_group_spread() {
    let v6 = NumaVariant::for_version(6, 15);
    let node = |cpu: usize| cpu / 4;
    let mut t = TaskNuma::new(700, Some(MmId(0)), 1000);
    t.preferred_nid = Some(1);
    t.numa_scan_seq = 10;
    let other_from_node0 = cpu_pid_to_cpupid(1, 701);
    let other_from_node1 = cpu_pid_to_cpupid(5, 701);
    let mine_from_node0 = cpu_pid_to_cpupid(2, 700);
    // Page on 0, fault from node 1: the previous fault came from node 0 -> not yet.
    assert!(!should_numa_migrate_memory(
        &t,
        None,
        mine_from_node0,
        0,
        1,
        node,
        &v6
    ));
    assert!(!should_numa_migrate_memory(
        &t,
        None,
        other_from_node0,
        0,
        1,
        node,
        &v6
    ));
    // Second fault from node 1 in a row, private -> move.
    let mine_from_node1 = cpu_pid_to_cpupid(6, 700);
    assert!(should_numa_migrate_memory(
        &t,
        None,
        mine_from_node1,
        0,
        1,
        node,
        &v6
    ));
    // Shared (other pid) from node 1, no group -> move.
    assert!(should_numa_migrate_memory(
        &t,
        None,
        other_from_node1,
        0,
        1,
        node,
        &v6
    ));
    // Early life (scan_seq <= 4) and never-faulted page: move at once (v4.19+) ...
    t.numa_scan_seq = 2;
    assert!(should_numa_migrate_memory(
        &t,
        None,
        LAST_CPUPID_UNSET,
        0,
        1,
        node,
        &v6
    ));
    assert!(should_numa_migrate_memory(
        &t,
        None,
        mine_from_node0,
        0,
        1,
        node,
        &v6
    ));
    // ... but not in v4.2 for a page last touched on node 0.
    let v42 = NumaVariant::for_version(4, 2);
    assert!(!should_numa_migrate_memory(
        &t,
        None,
        mine_from_node0,
        0,
        1,
        node,
        &v42
    ));
    assert!(should_numa_migrate_memory(
        &t,
        None,
        LAST_CPUPID_UNSET,
        0,
        1,
        node,
        &v42
    ));
    // Group (v4.6+): CPU faults 30 on node 1 vs 10 on node 0 is not > 3×; memory 40 / 20:
    // 30·40·3 = 3600 > 10·20·4 = 800 -> move (memory follows CPU use).
    let mut g = NumaGroup {
        gid: 1,
        nr_tasks: 2,
        nr_nodes: 2,
        faults: vec![0; 8],
        total_faults: 60,
        max_faults_cpu: 0,
        active_nodes: 0,
        active_mask: 0b11,
    };
    g.add(super::faults::NumaFaultsStats::Mem, 0, false, 40);
    g.add(super::faults::NumaFaultsStats::Mem, 1, false, 20);
    g.add(super::faults::NumaFaultsStats::Cpu, 0, false, 10);
    g.add(super::faults::NumaFaultsStats::Cpu, 1, false, 30);
    t.numa_scan_seq = 10;
    assert!(should_numa_migrate_memory(
        &t,
        Some(&g),
        other_from_node1,
        0,
        1,
        node,
        &v6
    ));
    // Reverse direction (page on 1, fault from node 0): 10·20·3 = 600 > 30·40·4? no.
    let other_from_node0b = cpu_pid_to_cpupid(0, 701);
    assert!(!should_numa_migrate_memory(
        &t,
        Some(&g),
        other_from_node0b,
        1,
        0,
        node,
        &v6
    ));
    // v4.2 form: both nodes active -> only if group_faults(dst) < 3/4 group_faults(src):
    // page on 0 (40) to 1 (20): 20 < 30 -> yes.
    assert!(should_numa_migrate_memory(
        &t,
        Some(&g),
        other_from_node1,
        0,
        1,
        node,
        &v42
    ));
}

#[test]
fn placement_decays_by_half_and_picks_the_busiest_node() {
    let topo = NumaTopo::new(vec![vec![10, 21], vec![21, 10]], vec![0, 0, 1, 1]);
    let v6 = NumaVariant::for_version(6, 15);
    let mut groups = NumaGroups::default();
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    // Old window: 400 on node 0. New buffer: 100 on node 0, 600 on node 1 (private).
    t.account_fault(2, &HintFault::new(0, 0, 100, 0), true, true);
    t.account_fault(2, &HintFault::new(1, 0, 600, 0), true, false);
    {
        let f = t.faults.as_mut().unwrap();
        f.add(NumaFaultsStats::Mem, 0, true, 400);
    }
    t.total_numa_faults = 400;
    let ctx = PlacementCtx {
        mm_scan_seq: 1,
        exec_start_ns: 2_000_000_000,
        sum_exec_runtime_ns: 1_000_000_000,
        first_runtime: (1, 1),
        scan_min_ms: 1000,
        scan_max_ms: 60_000,
        task_node: 0,
        now_ns: 2_000_000_000,
    };
    let r = task_numa_placement(&mut t, &mut groups, &topo, &ctx, &v6);
    assert!(r.ran && r.preferred_changed && !r.migrate_now);
    // node 0: 400 − 200 + 100 = 300; node 1: 0 + 600 = 600.
    assert_eq!(t.task_faults(0), 300);
    assert_eq!(t.task_faults(1), 600);
    assert_eq!(t.total_numa_faults, 900);
    assert_eq!(t.preferred_nid, Some(1));
    assert_eq!(r.fault_types, [0, 700]);
    // Same scan sequence again: nothing happens.
    assert!(!task_numa_placement(&mut t, &mut groups, &topo, &ctx, &v6).ran);
    // v3.16 asks for an immediate numa_migrate_preferred after a change.
    let mut t2 = TaskNuma::new(2, Some(MmId(1)), 1000);
    t2.account_fault(2, &HintFault::new(1, 0, 10, 0), true, false);
    let r = task_numa_placement(
        &mut t2,
        &mut groups,
        &topo,
        &ctx,
        &NumaVariant::for_version(3, 16),
    );
    assert!(r.preferred_changed && r.migrate_now);
}

#[test]
fn placement_due_depends_on_the_form() {
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    t.numa_migrate_retry_ns = 100;
    assert_eq!(
        placement_due(&t, 100, &NumaVariant::for_version(6, 15)),
        (false, false)
    );
    assert_eq!(
        placement_due(&t, 101, &NumaVariant::for_version(6, 15)),
        (true, true)
    );
    assert_eq!(
        placement_due(&t, 100, &NumaVariant::for_version(3, 17)),
        (true, false)
    );
}

#[test]
fn group_joins_bigger_group_of_same_mm_and_flags_false_sharing() {
    let mut groups = NumaGroups::default();
    let mut a = TaskNuma::new(10, Some(MmId(1)), 1000);
    let mut b = TaskNuma::new(11, Some(MmId(1)), 1000);
    let mut c = TaskNuma::new(12, Some(MmId(2)), 1000);
    a.account_fault(2, &HintFault::new(0, 0, 512, 0), false, true);
    // b has a group of 2 (b plus a phantom member) so it is bigger than a's new singleton.
    let gb = groups.create(&mut b, 2, 1);
    groups.get_mut(gb).nr_tasks = 2;
    let b_curr = RqCurr {
        pid: b.pid,
        mm: b.mm,
        group: b.group,
    };
    let cpupid_b = cpu_pid_to_cpupid(4, b.pid);
    // a (same mm) joins b's group: not private.
    let private = groups.task_numa_group(&mut a, 2, 0, cpupid_b, 0, Some(b_curr));
    assert!(!private);
    assert_eq!(a.group, Some(gb));
    assert_eq!(groups.get(gb).nr_tasks, 3);
    // c (another mm, not TNF_SHARED) could join but must not: false sharing -> private.
    c.faults = Some(NumaFaults::new(2));
    let private = groups.task_numa_group(&mut c, 2, 0, cpupid_b, 0, Some(b_curr));
    assert!(private);
    assert_ne!(c.group, Some(gb));
    // With TNF_SHARED (a VM_SHARED mapping) it joins.
    let private = groups.task_numa_group(&mut c, 2, 0, cpupid_b, TNF_SHARED, Some(b_curr));
    assert!(!private);
    assert_eq!(c.group, Some(gb));
    // The CPU now runs a task whose PID bits do not match: no join attempt.
    let mut d = TaskNuma::new(13, Some(MmId(1)), 1000);
    let wrong = RqCurr {
        pid: 99,
        mm: b.mm,
        group: b.group,
    };
    assert!(!groups.task_numa_group(&mut d, 2, 0, cpupid_b, 0, Some(wrong)));
    assert_ne!(d.group, Some(gb));
    groups.leave(&mut a);
    assert_eq!(groups.get(gb).nr_tasks, 3);
    assert_eq!(a.group, None);
}

#[test]
fn active_nodes_count_and_hysteresis_mask() {
    let mut g = NumaGroup {
        gid: 1,
        nr_tasks: 1,
        nr_nodes: 4,
        faults: vec![0; 16],
        total_faults: 0,
        max_faults_cpu: 0,
        active_nodes: 0,
        active_mask: 0,
    };
    for (n, f) in [(0, 160), (1, 60), (2, 50), (3, 20)] {
        g.add(NumaFaultsStats::Cpu, n, true, f);
    }
    // v4.6+: active iff faults × 3 > 160: nodes 0 (480), 1 (180) yes; 2 (150), 3 no.
    g.count_active_nodes();
    assert_eq!((g.active_nodes, g.max_faults_cpu), (2, 160));
    // v3.x mask: add above 6/16 × 160 = 60 (node 1's 60 is not above), drop below 30.
    g.active_mask = 0b1100; // nodes 2, 3 active from before
    g.update_active_node_mask();
    assert_eq!(
        g.active_mask, 0b0101,
        "0 added, 2 kept (50 >= 30), 3 dropped (20 < 30)"
    );
}

#[test]
fn group_local_override_counts_shared_faults_between_active_nodes() {
    let v6 = NumaVariant::for_version(6, 15);
    let mut g = NumaGroup {
        gid: 1,
        nr_tasks: 2,
        nr_nodes: 2,
        faults: vec![0; 8],
        total_faults: 0,
        max_faults_cpu: 0,
        active_nodes: 0,
        active_mask: 0,
    };
    g.add(NumaFaultsStats::Cpu, 0, false, 50);
    g.add(NumaFaultsStats::Cpu, 1, false, 40);
    g.count_active_nodes();
    assert!(group_local(false, false, Some(&g), 0, 1, &v6));
    assert!(
        !group_local(true, false, Some(&g), 0, 1, &v6),
        "private faults are not re-labelled"
    );
    assert!(!group_local(false, false, None, 0, 1, &v6));
}

#[test]
fn topology_types_and_nearby_scores() {
    let direct = vec![vec![10, 21], vec![21, 10]];
    assert_eq!(init_numa_topology_type(&direct), NumaTopologyType::Direct);
    let ring = vec![
        vec![10, 20, 30, 20],
        vec![20, 10, 20, 30],
        vec![30, 20, 10, 20],
        vec![20, 30, 20, 10],
    ];
    assert_eq!(
        init_numa_topology_type(&ring),
        NumaTopologyType::GluelessMesh
    );
    let backplane = vec![
        vec![10, 16, 32, 32],
        vec![16, 10, 32, 32],
        vec![32, 32, 10, 16],
        vec![32, 32, 16, 10],
    ];
    assert_eq!(
        init_numa_topology_type(&backplane),
        NumaTopologyType::Backplane
    );
    // Glueless ring: node 0's neighbours 1 and 3 (distance 20) count (30−20)/(30−10) = 1/2.
    let topo = NumaTopo::new(ring, vec![0, 1, 2, 3]);
    let faults = [100i64, 40, 1000, 60];
    assert_eq!(score_nearby_nodes(&topo, 0, 30, |n| faults[n]), 20 + 30);
    // Backplane: preferred_group_nid narrows to the heavier pair {2, 3}, then node 3.
    let topo = NumaTopo::new(backplane, vec![0, 1, 2, 3]);
    let mut g = NumaGroup {
        gid: 1,
        nr_tasks: 1,
        nr_nodes: 4,
        faults: vec![0; 16],
        total_faults: 0,
        max_faults_cpu: 0,
        active_nodes: 0,
        active_mask: 0,
    };
    for (n, f) in [(0, 300), (1, 0), (2, 200), (3, 250)] {
        g.add(NumaFaultsStats::Mem, n, true, f);
        g.total_faults += f;
    }
    assert_eq!(
        preferred_group_nid(&g, &topo, 0, NumaForm::V5_7),
        3,
        "pair {{2,3}} = 450 > 300"
    );
}

#[test]
fn balancer_locality_v3_never_resists_and_v43_tristate_does() {
    let topo = NumaTopo::new(vec![vec![10, 21], vec![21, 10]], vec![0, 0, 1, 1]);
    let mut t = TaskNuma::new(1, Some(MmId(0)), 1000);
    let mut f = NumaFaults::new(2);
    f.add(NumaFaultsStats::Mem, 0, true, 900);
    f.add(NumaFaultsStats::Mem, 1, true, 100);
    t.faults = Some(f);
    t.total_numa_faults = 1000;
    t.preferred_nid = Some(0);
    let ctx = |src, dst, nr, pref, idle| LocalityCtx {
        t: &t,
        group: None,
        topo: &topo,
        src_nid: src,
        dst_nid: dst,
        numa_enabled: true,
        sd_numa: true,
        src_nr_running: nr,
        src_nr_preferred_running: pref,
        dst_idle: idle,
    };
    let v42 = NumaVariant::for_version(4, 2);
    // Pulling the task off its preferred node (0 -> 1): v4.2 does not resist (RESIST_LOWER
    // off): task_hot() decides.
    assert_eq!(
        can_migrate_locality(&ctx(0, 1, 3, 1, false), &v42),
        Locality::DontCare
    );
    // Towards its preferred node it migrates even if cache hot (FAVOUR_HIGHER).
    assert_eq!(
        can_migrate_locality(&ctx(1, 0, 3, 1, false), &v42),
        Locality::Improves
    );
    let mut resist = v42;
    resist.set("NUMA_RESIST_LOWER", true).unwrap();
    assert_eq!(
        can_migrate_locality(&ctx(0, 1, 3, 1, false), &resist),
        Locality::Degrades
    );
    // v6.15 tri-state: off the preferred node while other (worse placed) tasks share the rq
    // -> degrades; when everything there is well placed -> don't care.
    let v6 = NumaVariant::for_version(6, 15);
    assert_eq!(
        can_migrate_locality(&ctx(0, 1, 3, 1, false), &v6),
        Locality::Degrades
    );
    assert_eq!(
        can_migrate_locality(&ctx(0, 1, 3, 3, false), &v6),
        Locality::DontCare
    );
    assert_eq!(
        can_migrate_locality(&ctx(1, 0, 3, 0, false), &v6),
        Locality::Improves
    );
    assert_eq!(Locality::Degrades.lb_env_value(), 1);
    assert_eq!(Locality::Improves.lb_env_value(), -1);
    assert_eq!(Locality::DontCare.lb_env_value(), 0);
}

#[test]
fn rq_counters_and_fbq_classes() {
    let mut rq = RqNumaCounters::default();
    rq.enqueue(None, 0); // a kthread: no preference
    rq.enqueue(Some(0), 0);
    rq.enqueue(Some(1), 0);
    assert_eq!((rq.nr_numa_running, rq.nr_preferred_running), (2, 1));
    assert_eq!(
        fbq_classify(3, rq.nr_numa_running, rq.nr_preferred_running),
        FbqType::Regular
    );
    rq.dequeue(None, 0);
    assert_eq!(
        fbq_classify(2, rq.nr_numa_running, rq.nr_preferred_running),
        FbqType::Remote
    );
    rq.dequeue(Some(1), 0);
    assert_eq!(
        fbq_classify(1, rq.nr_numa_running, rq.nr_preferred_running),
        FbqType::All
    );
}

mod fault_path {
    use super::super::state::{FaultSite, NumaState, TickSite};
    use super::*;
    use crate::task::MemPolicy;

    fn topo() -> NumaTopo {
        NumaTopo::new(vec![vec![10, 21], vec![21, 10]], vec![0, 0, 1, 1])
    }

    /// One task (TaskId 0, pid 1000) whose mm has `groups` page groups on node 0.
    fn setup(groups: usize) -> (NumaState, Mm) {
        let mut mm = Mm::new(MmId(0), 2);
        mm.map(groups as u64 * (2 << 20), false, true);
        for g in 0..groups {
            mm.touch(g, 0);
            mm.groups[g].prot_none = true;
        }
        let st = NumaState {
            tasks: vec![TaskNuma::new(1000, Some(MmId(0)), 1000)],
            mms: vec![MmNuma::default()],
            ..NumaState::default()
        };
        (st, mm)
    }

    fn site(cpu: usize, now_ns: u64) -> FaultSite {
        FaultSite {
            p: TaskId(0),
            cpu,
            policy: MemPolicy::Local,
            writable: true,
            shared: false,
            exec_start_ns: now_ns,
            sum_exec_runtime_ns: now_ns / 2,
            scan_min_ms: 1000,
            scan_max_ms: 60_000,
            now_ns,
            hz: 1000,
        }
    }

    #[test]
    fn two_stage_filter_needs_two_faults_from_the_new_node_before_v419() {
        let topo = topo();
        let v42 = NumaVariant::for_version(4, 2);
        let (mut st, mut mm) = setup(1);
        // p last touched the page from CPU 0 (node 0) and now runs on CPU 2 (node 1).
        mm.groups[0].last_cpupid = cpu_pid_to_cpupid(0, 1000);
        let out = st.numa_hint_fault(&mut mm, 0, &site(2, 5_000_000_000), &topo, &v42, |_| None);
        assert_eq!(
            out.migrated_to, None,
            "first fault from node 1 only records the node"
        );
        assert_eq!(mm.groups[0].last_cpupid, cpu_pid_to_cpupid(2, 1000));
        assert!(!mm.groups[0].prot_none, "the fault restores the mapping");
        mm.groups[0].prot_none = true;
        let out = st.numa_hint_fault(&mut mm, 0, &site(3, 6_000_000_000), &topo, &v42, |_| None);
        assert_eq!(out.migrated_to, Some(1));
        assert!(out.private);
        assert_eq!(mm.groups_per_node, vec![0, 1]);
        assert_eq!(st.vmstat.numa_hint_faults, 1024);
        assert_eq!(st.vmstat.numa_hint_faults_local, 0);
        assert_eq!(st.vmstat.numa_pages_migrated, 512);
        // v6.15: a task in its first scan passes takes its own page at the first fault.
        let v6 = NumaVariant::for_version(6, 15);
        let (mut st, mut mm) = setup(1);
        mm.groups[0].last_cpupid = cpu_pid_to_cpupid(0, 1000);
        let out = st.numa_hint_fault(&mut mm, 0, &site(2, 5_000_000_000), &topo, &v6, |_| None);
        assert_eq!(out.migrated_to, Some(1));
    }

    #[test]
    fn rate_limit_caps_migration_per_destination_node_until_v419() {
        let topo = topo();
        for (ver, migrated) in [((4, 2), 65u64), ((6, 15), 100)] {
            let v = NumaVariant::for_version(ver.0, ver.1);
            let (mut st, mut mm) = setup(100);
            for g in 0..100 {
                st.numa_hint_fault(&mut mm, g, &site(2, 1_000_000_000), &topo, &v, |_| None);
            }
            // 128 MiB = 64 groups fill the window, the 65th is admitted (check before add).
            assert_eq!(st.vmstat.numa_pages_migrated, migrated * 512, "{ver:?}");
            assert_eq!(st.vmstat.pgmigrate_fail, (100 - migrated) * 512, "{ver:?}");
            assert_eq!(
                st.tasks[0].faults_locality[2],
                ((100 - migrated) * 512) as i64
            );
        }
    }

    #[test]
    fn scan_fault_and_placement_converge_on_the_running_node() {
        let topo = topo();
        let v6 = NumaVariant::for_version(6, 15);
        let params = ScanParams::default();
        let (mut st, mut mm) = setup(8);
        for g in &mut mm.groups {
            g.prot_none = false;
        }
        let tick = |st: &mut NumaState, mm: &mut Mm, runtime: u64, now: u64| {
            let ts = TickSite {
                p: TaskId(0),
                sum_exec_runtime_ns: runtime,
                now_ns: now,
                mof: true,
                tick_ns: 1_000_000,
            };
            st.tick(mm, &ts, &params, &v6)
        };
        // First period: the work only arms the 1 s scan delay.
        let w = tick(&mut st, &mut mm, 1_000_000_001, 1_000_000_001).unwrap();
        assert!(!w.ran);
        // Next period: the whole 16 MiB is marked in one window, completing pass 1.
        let w = tick(&mut st, &mut mm, 2_000_000_002, 2_100_000_000).unwrap();
        assert!(w.ran && w.groups_marked == 8 && st.mms[0].numa_scan_seq == 1);
        // The task runs on node 1; every page faults and (early life) follows it.
        for g in 0..8 {
            let out = st.numa_hint_fault(&mut mm, g, &site(2, 2_200_000_000), &topo, &v6, |_| None);
            assert_eq!(out.migrated_to, Some(1));
        }
        assert_eq!(mm.groups_per_node, vec![0, 8]);
        // The first fault's placement found no statistics yet: no preferred node, and the
        // scan period doubled ("no useful faults").
        assert_eq!(st.tasks[0].preferred_nid, None);
        assert_eq!(st.tasks[0].numa_scan_period_ms, 2000);
        // Pass 2 once the runtime passes node_stamp (2 s + the 2-tick stagger) + 2 s; the next
        // fault folds pass 1's faults in.
        assert!(tick(&mut st, &mut mm, 4_002_000_000, 4_300_000_000).is_none());
        let w = tick(&mut st, &mut mm, 4_002_000_001, 4_300_000_000).unwrap();
        assert!(w.ran && st.mms[0].numa_scan_seq == 2);
        let out = st.numa_hint_fault(&mut mm, 0, &site(2, 4_400_000_000), &topo, &v6, |_| None);
        assert!(out.placement.ran && out.placement.preferred_changed);
        assert_eq!(st.tasks[0].preferred_nid, Some(1));
        assert!(!out.attempt_migrate, "already on its preferred node");
        assert_eq!(st.tasks[0].task_faults(1), 8 * 512);
        let vm = st.vmstat;
        assert_eq!(
            (
                vm.numa_pte_updates,
                vm.numa_hint_faults,
                vm.numa_hint_faults_local,
                vm.numa_pages_migrated
            ),
            (16 * 512, 9 * 512, 512, 8 * 512)
        );
    }
}

#[test]
fn migrate_swap_moves_queued_tasks_and_redirects_sleepers() {
    let side = |t: u32, cpu: usize| SwapSide {
        task: TaskId(t),
        cpu,
        task_cpu: cpu,
        queued: true,
        allowed_other: true,
        cpu_active: true,
    };
    let (a, mut b) = (side(1, 0), side(2, 4));
    b.queued = false;
    assert_eq!(
        migrate_swap(&a, &b),
        Ok([
            SwapLeg::Move {
                task: TaskId(1),
                to: 4
            },
            SwapLeg::SetWakeCpu {
                task: TaskId(2),
                cpu: 0
            }
        ])
    );
    // The partner was moved by someone else before the stoppers ran.
    b.task_cpu = 5;
    assert_eq!(migrate_swap(&a, &b), Err(MigrateFail::Again));
    b.task_cpu = 4;
    b.allowed_other = false;
    assert_eq!(migrate_swap(&a, &b), Err(MigrateFail::Invalid));
    let all = crate::cpumask::CpuMask::first_n(8);
    assert_eq!(migrate_task_to(3, 3, &all), Ok(false));
    assert_eq!(migrate_task_to(3, 5, &all), Ok(true));
    assert_eq!(migrate_task_to(3, 9, &all), Err(MigrateFail::Invalid));
}

/// `update_numa_stats()` of node `nid` for `p` (not a swap search, no idle-CPU search) in
/// the NUMA mover of kernel `version`.
fn node_stats(
    env: &FakeNumaEnv,
    p: TaskId,
    nid: usize,
    imbalance_pct: i64,
    version: (u16, u16),
) -> NumaStats {
    update_numa_stats(
        env,
        p,
        nid,
        false,
        imbalance_pct,
        None,
        &NumaVariant::for_version(version.0, version.1),
    )
}

/// Node statistics with `load` over `cap` (one CPU per 1024), `nr` tasks and room for
/// `task_cap`, no free capacity, no utilisation: the fields a test does not set.
fn full_stats(load: i64, cap: i64, nr: i64, task_cap: i64) -> NumaStats {
    NumaStats {
        load,
        runnable: 0,
        util: 0,
        compute_capacity: cap,
        nr_running: nr,
        weight: cap / 1024,
        task_capacity: task_cap,
        has_free_capacity: false,
        node_type: NodeType::HasSpare,
        idle_cpu: None,
    }
}

#[test]
fn node_task_capacity_on_smt_v316_is_115_percent_of_cores_v318_is_cores() {
    // One node of 4 cores × 2 threads, per-thread capacity 589 (smt_gain 1178 / 2, 3.x/4.x).
    let mut env = FakeNumaEnv::new(vec![vec![10, 21], vec![21, 10]], 8);
    for c in &mut env.cpus {
        c.capacity = 589;
    }
    let p = env.add_task(8, 1024, true);
    for cpu in 0..5 {
        env.add_task(cpu, 1024, true);
    }
    let s316 = node_stats(&env, p, 0, 112, (3, 16));
    // round(8 · 589 / 1024) = round(4.6) = 5: five runnable tasks fill it.
    assert_eq!(
        (s316.task_capacity, s316.nr_running, s316.has_free_capacity),
        (5, 5, false)
    );
    // Capacity-normalised load: 5 · 1024 · 1024 / 4712.
    assert_eq!(s316.load, 5 * 1024 * 1024 / 4712);
    let s42 = node_stats(&env, p, 0, 112, (4, 2));
    // smt = ceil(1024 · 8 / 4712) = 2, cores = 4: min(4, 5) = 4.
    assert_eq!(
        (s42.task_capacity, s42.has_free_capacity, s42.load),
        (4, false, 5 * 1024)
    );
}

#[test]
fn numa_classify_thresholds() {
    let ns = |nr: i64, util: i64, runnable: i64| NumaStats {
        runnable,
        util,
        ..full_stats(0, 4096, nr, 4)
    };
    // Fewer tasks than CPUs: spare, whatever the utilisation.
    assert_eq!(numa_classify(117, &ns(3, 4096, 9000)), NodeType::HasSpare);
    // As many tasks as CPUs with util · 1.17 ≥ capacity: fully busy.
    assert_eq!(numa_classify(117, &ns(4, 3600, 3600)), NodeType::FullyBusy);
    // util 3400 · 117 = 397800 < 409600 and runnable too: still spare capacity.
    assert_eq!(numa_classify(117, &ns(4, 3400, 3400)), NodeType::HasSpare);
    // More tasks than CPUs and runnable · 100 > capacity · 117: overloaded.
    assert_eq!(numa_classify(117, &ns(5, 3000, 4900)), NodeType::Overloaded);
}

#[test]
fn smt_gain_capacity_is_1178_over_the_sibling_count() {
    assert_eq!(smt_gain_capacity(1024, 1), 1024);
    assert_eq!(smt_gain_capacity(1024, 2), 589);
    assert_eq!(smt_gain_capacity(1024, 4), 294);
    // RT-reduced capacity scales the same way: 512 · 589 / 1024.
    assert_eq!(smt_gain_capacity(512, 2), 294);
}

#[test]
fn smt_node_at_three_quarters_busy_has_no_free_capacity_before_v4_19() {
    // 2 nodes of 2 cores × 2 threads (SMT span_weight 2), capacity 1024 per thread as the
    // machine gives it. p on CPU 0 (node 0: p + one task, 2 of 4 threads busy) prefers
    // node 1, where 3 of 4 threads run a task without NUMA statistics.
    let mut env = FakeNumaEnv::two_nodes(4);
    env.smt = true;
    env.smt_weight = 2;
    let p = env.add_task(0, 1024, true);
    env.set_faults(p, &[100, 900], Some(1));
    env.add_task(1, 1024, true);
    for cpu in 4..7 {
        env.add_task(cpu, 1024, true);
    }
    // v3.16: node 1's capacity is 4 · 589 = 2356, task_capacity round(2356 / 1024) = 2;
    // 3 running ≥ 2, so the busy preferred node is not searched: stay. (With 1024 per
    // thread it would have been 4 > 3, a free node, and p would swap.)
    let s = node_stats(&env, p, 1, 112, (3, 16));
    assert_eq!(
        (s.compute_capacity, s.task_capacity, s.has_free_capacity),
        (2356, 2, false)
    );
    assert_eq!(decide(&env, p, (3, 16), &[]).action, NumaMove::Stay);
    // v3.17 searches it anyway: CPUs 4–6 each offer a one-task-per-CPU swap of imp 800 (the
    // last equal one wins); idle CPU 7 is refused by load_too_imbalanced (normalised loads
    // 890 / 1335, a whole task's 1024 moved makes it worse).
    let d = decide(&env, p, (3, 17), &[]);
    assert_eq!(
        d.action,
        NumaMove::Swap {
            dst_cpu: 6,
            other: curr(&env, 6)
        }
    );
    // v4.2: task_capacity min(2 cores, 2) = 2; from v4.19 the capacity is the thread's own.
    let s = node_stats(&env, p, 1, 112, (4, 2));
    assert_eq!((s.compute_capacity, s.task_capacity), (2356, 2));
    let s = node_stats(&env, p, 1, 117, (6, 6));
    assert_eq!(s.compute_capacity, 4096);
}

#[test]
fn numa_has_capacity_compares_load_per_capacity_strictly_in_v42_with_slack_in_v43() {
    // The v4.2 text (6f9aad0bc372): refuse when the source has free capacity and the
    // destination none; otherwise accept iff src.load · dst.cap > dst.load · src.cap.
    let stats = |load: i64, cap: i64, nr: i64, task_cap: i64| NumaStats {
        has_free_capacity: nr < task_cap,
        ..full_stats(load, cap, nr, task_cap)
    };
    let env = |src: NumaStats, dst: NumaStats| TaskNumaEnv {
        p: TaskId(0),
        src_cpu: 0,
        src_nid: 0,
        dst_cpu: 4,
        dst_nid: 1,
        imb_numa_nr: 0,
        src_stats: src,
        dst_stats: dst,
        imbalance_pct: 112,
        dist: 21,
        best_task: None,
        best_imp: 0,
        best_cpu: None,
        claimed: None,
    };
    // Source 4 CPUs (cap 4096, load 6000), destination 2 CPUs (cap 2048), both full.
    // 6000 · 2048 = 12 288 000 > 2900 · 4096 = 11 878 400: less loaded per capacity, accept.
    let e = env(stats(6000, 4096, 6, 4), stats(2900, 2048, 3, 2));
    assert!(numa_has_capacity(&e, false));
    // 3100 · 4096 = 12 697 600 > 12 288 000: the smaller node is busier per capacity.
    let e = env(stats(6000, 4096, 6, 4), stats(3100, 2048, 3, 2));
    assert!(!numa_has_capacity(&e, false));
    // v4.3's slack: 6000 · 2048 · 112 = 1 376 256 000 > 3100 · 4096 · 100 = 1 269 760 000.
    assert!(numa_has_capacity(&e, true));
    // Equal load per capacity (a fully loaded, balanced machine): v4.2 refuses, v4.3 takes.
    let e = env(stats(36_864, 36_864, 36, 18), stats(36_864, 36_864, 36, 18));
    assert!(!numa_has_capacity(&e, false));
    assert!(numa_has_capacity(&e, true));
    // The first clause wins over loads: the source has room (1 < 4), the destination none
    // (2 ≥ 2), even though the destination carries no load per capacity at all.
    let e = env(stats(1024, 4096, 1, 4), stats(0, 2048, 2, 2));
    assert!(!numa_has_capacity(&e, false));
    assert!(!numa_has_capacity(&e, true));
    // Both with room: only the loads count (1024 · 2048 > 0).
    let e = env(stats(1024, 4096, 1, 4), stats(0, 2048, 1, 2));
    assert!(numa_has_capacity(&e, false));
}
