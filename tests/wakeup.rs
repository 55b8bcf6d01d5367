//! Wakeup and fork placement (`select_task_rq_fair()` and below) on constructed runqueue
//! states: each test sets up a preset machine, a fake runqueue view, and asserts what the
//! kernel's `kernel/sched/fair.c` does in that situation.

use proptest::prelude::*;

use schedlab::cpumask::{CpuMask, WrapCursor};
use schedlab::domains::{SchedDomains, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::types::{IdleType, PlacementPath, WakeCtx, WakeFlags};
use schedlab::sched::wakeup::{
    AffineOutcome, BalanceKind, GroupWakeSums, SisStep, Topo, Wakeup, WakeupEnv, WakeupParams,
};
use schedlab::task::TaskId;
use schedlab::topology::{Machine, presets};

/// The task being placed.
const P: TaskId = TaskId(0);
/// The waker.
const W: TaskId = TaskId(1);

/// A runqueue view built by hand: a CPU is idle iff its `nr_running` is 0.
#[derive(Clone)]
struct FakeEnv {
    now_ns: u64,
    active: CpuMask,
    nr_running: Vec<usize>,
    capacity: Vec<u64>,
    util: Vec<u64>,
    load: Vec<u64>,
    task_util: Vec<u64>,
    task_load: Vec<u64>,
    allowed: Vec<CpuMask>,
}

impl FakeEnv {
    /// Every online CPU idle; two tasks (P, W) allowed everywhere, nice-0 load 1024,
    /// small util.
    fn idle(m: &Machine) -> FakeEnv {
        let n = m.nr_cpus();
        FakeEnv {
            now_ns: 1_000_000,
            active: m.online,
            nr_running: vec![0; n],
            capacity: m.cpus.iter().map(|c| u64::from(c.capacity)).collect(),
            util: vec![0; n],
            load: vec![0; n],
            task_util: vec![100, 100],
            task_load: vec![1024, 1024],
            allowed: vec![m.online, m.online],
        }
    }

    /// `nr` always-running nice-0 tasks on `cpu`.
    fn busy(&mut self, cpu: usize, nr: usize) {
        self.nr_running[cpu] = nr;
        self.util[cpu] = if nr > 0 { self.capacity[cpu] } else { 0 };
        self.load[cpu] = 1024 * nr as u64;
    }

    fn busy_all(&mut self, cpus: impl IntoIterator<Item = usize>) {
        for c in cpus {
            self.busy(c, 1);
        }
    }
}

impl WakeupEnv for FakeEnv {
    fn now_ns(&self) -> u64 {
        self.now_ns
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        &self.active
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.nr_running[cpu] == 0
    }
    fn nr_running(&self, cpu: usize) -> usize {
        self.nr_running[cpu]
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.capacity[cpu]
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.capacity[cpu]
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.util[cpu]
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.load[cpu]
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.load[cpu]
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        self.task_util[p.idx()]
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.task_load[p.idx()]
    }
    fn task_running_on_cpu(&self, _cpu: usize, _p: TaskId) -> bool {
        false
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        &self.allowed[p.idx()]
    }
}

struct Setup {
    m: Machine,
    d: SchedDomains,
}

impl Setup {
    fn new(preset: &str) -> Setup {
        let m = presets::by_name(preset).expect("preset exists");
        let d = build_sched_domains(&m);
        Setup { m, d }
    }

    fn topo(&self) -> Topo<'_> {
        Topo::new(&self.m, &self.d)
    }

    /// Mainline placement state with every LLC allowed to scan fully (as after a
    /// periodic balance on an idle machine).
    fn wakeup(&self) -> Wakeup {
        let mut params = WakeupParams::mainline();
        params.nr_idle_scan_start_full = true;
        Wakeup::new(&self.topo(), params)
    }

    fn llc_span(&self, cpu: usize) -> CpuMask {
        self.d.domain(self.d.sd_llc(cpu).unwrap()).span
    }
}

fn ttwu(this_cpu: usize, waker: Option<TaskId>, sync: bool) -> WakeCtx {
    WakeCtx {
        this_cpu,
        waker,
        flags: WakeFlags {
            sync,
            fork: false,
            ttwu: true,
            exec: false,
        },
    }
}

fn fork(this_cpu: usize) -> WakeCtx {
    WakeCtx {
        this_cpu,
        waker: None,
        flags: WakeFlags {
            sync: false,
            fork: true,
            ttwu: false,
            exec: false,
        },
    }
}

/// skl-2s: socket 0 is CPUs 0-19 + 40-59, CPU n's sibling is n+40.
fn skl_socket0() -> impl Iterator<Item = usize> {
    (0..20).chain(40..60)
}

#[test]
fn select_idle_sibling_prefers_idle_core_over_idle_sibling_of_busy_core() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Socket 0 busy except CPU 40 (sibling of the busy target CPU 0) and the whole core
    // {5, 45}.
    env.busy_all(skl_socket0().filter(|&c| c != 40 && c != 5 && c != 45));
    assert_eq!(s.m.smt_mask(0).iter().collect::<Vec<_>>(), [0, 40]);
    assert!(!w.test_idle_cores(&topo, 0));
    // CPU 45 enters idle after CPU 5: its whole core is idle -> has_idle_cores.
    w.update_idle_core(&topo, &env, 40);
    assert!(!w.test_idle_cores(&topo, 0), "40's sibling 0 is busy");
    w.update_idle_core(&topo, &env, 45);
    assert!(w.test_idle_cores(&topo, 0));

    w.task_fork(P, None, 0);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 5, "{r:?}");
    assert_eq!(r.placement.path, PlacementPath::SelectIdleSibling);
    assert_eq!(r.explain.sis, Some(SisStep::IdleCore));
    // The idle-core scan visited cores 1..4 (two CPUs each) and core 5's first CPU
    // sibling pair: 4 busy cores x 2 + 2.
    assert_eq!(r.cost.cpus, 10);
    assert!(
        w.test_idle_cores(&topo, 0),
        "a successful core scan keeps the hint"
    );

    // Without the idle-core hint the kernel (v5.16+) takes the idle SMT sibling of
    // prev first: select_idle_smt().
    w.set_idle_cores(&topo, 0, false);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 40);
    assert_eq!(r.explain.sis, Some(SisStep::IdleSmt));
}

#[test]
fn previous_cpu_returned_when_idle_and_cache_affine() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // The waker runs alone on CPU 1; prev CPU 3 is idle; CPU 2 is idle too (it would be
    // the scan's first hit from target 1).
    env.busy(1, 1);
    w.task_fork(P, None, 3);
    let r = w.select_task_rq(&topo, &env, P, 3, ttwu(1, Some(W), true));
    assert_eq!(r.explain.affine, Some(AffineOutcome::SyncOnlyTask));
    assert_eq!(r.explain.sis_target, Some(1));
    assert_eq!(r.placement.cpu, 3);
    assert_eq!(r.explain.sis, Some(SisStep::Prev));
    assert_eq!(r.cost.cpus, 0, "a shortcut examines no CPU");

    // A prev CPU in the other socket's LLC is not cache affine: the search stays in the
    // target's LLC.
    let r = w.select_task_rq(&topo, &env, P, 23, ttwu(1, Some(W), true));
    assert_ne!(r.placement.cpu, 23);
    assert!(s.llc_span(1).test(r.placement.cpu), "{r:?}");
}

#[test]
fn recent_used_cpu_shortcut_and_update() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    env.busy(3, 2);
    w.task_fork(P, None, 3);
    w.task_mut(P).recent_used_cpu = Some(7);
    // Waking on its own (busy) CPU 3: target = prev = 3; CPU 4 is idle and would be the
    // scan's first hit, but recent_used_cpu 7 (idle, same LLC) comes first.
    let r = w.select_task_rq(&topo, &env, P, 3, ttwu(3, None, false));
    assert_eq!(r.placement.cpu, 7);
    assert_eq!(r.explain.sis, Some(SisStep::RecentUsed));
    assert_eq!(w.task(P).recent_used_cpu, Some(3), "replaced by prev");

    // A busy recent_used_cpu is skipped (and still replaced by prev, v5.13+).
    w.task_mut(P).recent_used_cpu = Some(7);
    env.busy(7, 1);
    let r = w.select_task_rq(&topo, &env, P, 3, ttwu(3, None, false));
    assert_ne!(r.explain.sis, Some(SisStep::RecentUsed));
    assert_eq!(w.task(P).recent_used_cpu, Some(3));

    // Not allowed -> skipped.
    env.busy(7, 0);
    w.task_mut(P).recent_used_cpu = Some(7);
    env.allowed[0] = s.llc_span(3).andnot(&CpuMask::single(7));
    let r = w.select_task_rq(&topo, &env, P, 3, ttwu(3, None, false));
    assert_ne!(r.placement.cpu, 7);
}

#[test]
fn sync_wakeup_wa_idle_picks_this_cpu_with_one_task() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Everything in socket 0 busy: the waker alone on CPU 10, prev CPU 12 with 2 tasks.
    env.busy_all(skl_socket0());
    env.busy(12, 2);
    w.task_fork(P, None, 12);
    let r = w.select_task_rq(&topo, &env, P, 12, ttwu(10, Some(W), true));
    assert_eq!(r.explain.affine, Some(AffineOutcome::SyncOnlyTask));
    assert_eq!(r.explain.sis_target, Some(10));
    assert_eq!(r.placement.cpu, 10, "nothing idle: the affine target");
    assert_eq!(r.explain.sis, Some(SisStep::TargetFallback));

    // Not sync: WA_IDLE has no rule; wake_affine_weight compares 1024+1024 (this + p)
    // with 2048-1024 (prev - p) biased by 108%: prev stays.
    let r = w.select_task_rq(&topo, &env, P, 12, ttwu(10, Some(W), false));
    assert_eq!(r.explain.affine, Some(AffineOutcome::KeepPrev));
    assert_eq!(r.explain.sis_target, Some(12));

    // Two tasks on the waker's CPU: the sync rule does not fire; with prev heavily
    // loaded wake_affine_weight pulls to this CPU instead.
    env.busy(10, 2);
    env.busy(12, 6);
    let r = w.select_task_rq(&topo, &env, P, 12, ttwu(10, Some(W), true));
    assert_eq!(r.explain.affine, Some(AffineOutcome::WeightThis));

    // NO_WA_IDLE: the sync rule is gone, only the weights decide.
    let mut feats = Features::defaults();
    feats.set(Feature::WA_IDLE, false);
    feats.set(Feature::WA_WEIGHT, false);
    w.params.features = feats;
    env.busy(10, 1);
    let r = w.select_task_rq(&topo, &env, P, 12, ttwu(10, Some(W), true));
    assert_eq!(r.explain.affine, Some(AffineOutcome::KeepPrev));
}

#[test]
fn wake_wide_sends_one_to_many_wakees_away_from_waker_llc() {
    let s = Setup::new("milan-2s");
    let topo = s.topo();
    assert_eq!(s.d.llc_size(0), 16);
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Waker alone on CPU 0 (LLC 0-7,128-135); the wakee last ran on CPU 40 (another
    // LLC of the same socket), busy.
    env.busy(0, 1);
    env.busy(40, 1);
    w.task_fork(P, None, 40);
    w.task_mut(W).wakee_flips = 300;
    w.task_mut(P).wakee_flips = 16;
    assert!(
        w.wake_wide(&topo, Some(W), P, 0),
        "16 >= 16 && 300 >= 16*16"
    );
    let r = w.select_task_rq(&topo, &env, P, 40, ttwu(0, Some(W), true));
    assert!(r.explain.wake_wide);
    assert!(!r.explain.want_affine);
    assert_eq!(r.explain.affine, None, "wake_affine never runs");
    assert_eq!(r.explain.sis_target, Some(40));
    assert!(s.llc_span(40).test(r.placement.cpu), "{r:?}");
    assert!(!s.llc_span(0).test(r.placement.cpu));

    // A 1:1 pair (few flips) is pulled to the waker's LLC by the sync rule.
    w.task_mut(W).wakee_flips = 1;
    w.task_mut(W).last_wakee = Some(P);
    w.task_mut(P).wakee_flips = 1;
    let r = w.select_task_rq(&topo, &env, P, 40, ttwu(0, Some(W), true));
    assert!(!r.explain.wake_wide);
    assert_eq!(r.explain.affine, Some(AffineOutcome::SyncOnlyTask));
    assert!(s.llc_span(0).test(r.placement.cpu), "{r:?}");

    // The wakee's flips must also reach the LLC size.
    w.task_mut(W).wakee_flips = 300;
    w.task_mut(P).wakee_flips = 15;
    assert!(!w.wake_wide(&topo, Some(W), P, 0));
}

#[test]
fn record_wakee_counts_flips_and_decays_each_second() {
    let s = Setup::new("skl-2s");
    let mut w = s.wakeup();
    let q = TaskId(2);
    w.record_wakee(W, P, 10);
    w.record_wakee(W, P, 20);
    assert_eq!(w.task(W).wakee_flips, 1, "same wakee twice: one flip");
    w.record_wakee(W, q, 30);
    w.record_wakee(W, P, 40);
    assert_eq!(w.task(W).wakee_flips, 3);
    assert_eq!(w.task(W).last_wakee, Some(P));
    // More than a second after the last decay stamp (0): halve once, then count.
    w.record_wakee(W, q, 1_000_000_001);
    assert_eq!(w.task(W).wakee_flips, 3 / 2 + 1);
    assert_eq!(w.task(W).wakee_flip_decay_ts, 1_000_000_001);
}

#[test]
fn sis_util_scan_stops_after_nr_idle_scan_cpus() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Socket 0 busy except CPU 19, the 19th CPU of a scan starting at target+1 = 1.
    env.busy_all(skl_socket0().filter(|&c| c != 19));
    w.task_fork(P, None, 0);

    w.set_nr_idle_scan(&topo, 0, 3);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 0, "scan gave up: target");
    assert_eq!(r.explain.sis, Some(SisStep::TargetFallback));
    // select_idle_smt(prev) reads sibling 40, then nr = 3 + 1 lets 3 CPUs (1, 2, 3) be
    // examined before `--nr <= 0` stops the loop.
    assert_eq!(r.cost.cpus, 1 + 3);

    w.set_nr_idle_scan(&topo, 0, 40);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 19);
    assert_eq!(r.explain.sis, Some(SisStep::IdleCpu));
    assert_eq!(r.cost.cpus, 1 + 19);

    // nr_idle_scan == 0 (overloaded LLC, or no periodic balance yet): no scan at all.
    w.set_nr_idle_scan(&topo, 0, 0);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 0);
    assert_eq!(r.cost.cpus, 1);

    // NO_SIS_UTIL: unlimited scan.
    w.params.features.set(Feature::SIS_UTIL, false);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 19);
}

#[test]
fn update_idle_cpu_scan_follows_the_sis_util_curve() {
    // milan-2s: 16-CPU LLCs, MC imbalance_pct 117. Kernel examples for llc_weight 16:
    // 25% util -> 14 CPUs, 50% -> 10, 75% -> 3, 85% -> 0.
    let s = Setup::new("milan-2s");
    let topo = s.topo();
    let mut w = Wakeup::new(&topo, WakeupParams::mainline());
    assert_eq!(
        w.llc_shared(&topo, 0).unwrap().nr_idle_scan,
        0,
        "zeroed at boot"
    );
    let mc = s.d.sd_llc(0).unwrap();
    assert_eq!(s.d.domain(mc).imbalance_pct, 117);
    for (pct, expect) in [(0, 16), (25, 14), (50, 10), (75, 3), (85, 0), (100, 0)] {
        let sum_util = 16 * 1024 * pct / 100;
        w.update_idle_cpu_scan(&topo, 0, mc, IdleType::Idle, sum_util);
        assert_eq!(
            w.llc_shared(&topo, 0).unwrap().nr_idle_scan,
            expect,
            "{pct}%"
        );
        assert_eq!(
            w.llc_shared(&topo, 8).unwrap().nr_idle_scan,
            0,
            "other LLC untouched"
        );
    }
    // Newly-idle balancing and domains other than the LLC do not write the hint.
    w.update_idle_cpu_scan(&topo, 0, mc, IdleType::NewlyIdle, 0);
    assert_eq!(w.llc_shared(&topo, 0).unwrap().nr_idle_scan, 0);
    let pkg = s.d.domain(mc).parent.unwrap();
    w.update_idle_cpu_scan(&topo, 0, pkg, IdleType::Idle, 0);
    assert_eq!(w.llc_shared(&topo, 0).unwrap().nr_idle_scan, 0);
}

#[test]
fn asym_capacity_big_task_goes_to_idle_p_core() {
    let s = Setup::new("adl-i9");
    let topo = s.topo();
    assert!(s.d.sched_asym_cpucapacity);
    assert!(s.d.sd_asym_cpucapacity(16).is_some());
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // P-cores (0-15) busy except the whole core {10, 11}; E-cores 16-23 idle except the
    // task's prev CPU 16.
    env.busy_all((0..16).filter(|&c| c != 10 && c != 11));
    env.busy(16, 1);
    // util 700: 700 * 1.25 = 875 fits 1024 but not 605.
    env.task_util[0] = 700;
    w.task_fork(P, None, 16);
    let r = w.select_task_rq(&topo, &env, P, 16, ttwu(16, None, false));
    assert_eq!(r.placement.cpu, 10, "{r:?}");
    assert_eq!(r.explain.sis, Some(SisStep::IdleCapacity));
    // Scanned 16 (busy), 17..23 (idle, too small), 0..9 (busy), then 10.
    assert_eq!(r.cost.cpus, 1 + 7 + 10 + 1);

    // A small task takes the first idle CPU in the scan: an E-core.
    env.task_util[0] = 100;
    let r = w.select_task_rq(&topo, &env, P, 16, ttwu(16, None, false));
    assert_eq!(r.placement.cpu, 17);

    // An idle E-core target is not taken by the big task (asym_fits_cpu).
    env.task_util[0] = 700;
    env.busy(16, 0);
    let r = w.select_task_rq(&topo, &env, P, 16, ttwu(16, None, false));
    assert_eq!(r.placement.cpu, 10);

    // No P-core idle: the biggest idle CPU (all E-cores are 605: the first one).
    env.busy_all([10, 11]);
    let r = w.select_task_rq(&topo, &env, P, 16, ttwu(16, None, false));
    assert_eq!(r.placement.cpu, 16);
}

#[test]
fn fork_on_milan_goes_to_the_idle_llc() {
    let s = Setup::new("milan-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Socket 0 has 8 LLCs of 8 cores: LLC k = CPUs 8k..8k+7 and 128+8k..128+8k+7.
    let llc = |k: usize| (8 * k..8 * k + 8).chain(128 + 8 * k..128 + 8 * k + 8);
    // The parent's LLC 0 is a quarter busy, LLC 3 is idle, the others fully busy.
    env.busy_all([0, 1, 2, 3]);
    for k in [1, 2, 4, 5, 6, 7] {
        env.busy_all(llc(k));
    }
    // Socket 1 fully busy too. (Zen sets node_reclaim_distance = 32, so the NUMA level
    // keeps SD_BALANCE_FORK and the walk starts there: node 0 has spare capacity, node
    // 1 is fully busy, so the local node is kept.)
    env.busy_all(s.m.node_mask(1).iter());
    let numa = *s.d.cpu_domains(0).last().unwrap();
    assert!(
        s.d.domain(numa)
            .flags
            .contains(schedlab::domains::SdFlags::SD_BALANCE_FORK)
    );
    w.task_fork(P, Some(W), 0);
    let r = w.select_task_rq(&topo, &env, P, 0, fork(0));
    assert_eq!(r.placement.path, PlacementPath::FindIdlest);
    assert_eq!(r.explain.kind, BalanceKind::Fork);
    let llc3: CpuMask = llc(3).collect();
    assert!(llc3.test(r.placement.cpu), "{r:?}");
    assert!(r.explain.slow_moves >= 1);
    // PKG level: 8 groups of 16 CPUs; then the MC and SMT levels inside LLC 3.
    assert!(r.cost.groups >= 8);

    // With LLC 3 as busy as the parent's LLC, the local group (same type, as many idle
    // CPUs) is kept.
    env.busy_all([24, 25, 26, 27]);
    let r = w.select_task_rq(&topo, &env, P, 0, fork(0));
    assert!(s.llc_span(0).test(r.placement.cpu), "{r:?}");
    assert!(env.idle_cpu(r.placement.cpu));

    // An idle socket 1: both nodes have spare capacity, but node 0 already runs far
    // more than imb_numa_nr tasks, so the NUMA allowance does not apply and the node
    // with more idle CPUs wins.
    for c in s.m.node_mask(1).iter() {
        env.busy(c, 0);
    }
    let r = w.select_task_rq(&topo, &env, P, 0, fork(0));
    assert_eq!(s.m.cpus[r.placement.cpu].node, 1, "{r:?}");
}

#[test]
fn hybrid10_single_thread_cores_count_as_idle_cores() {
    let s = Setup::new("hybrid-10");
    let topo = s.topo();
    assert!(w_smt(&s));
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    // Busy: 0, 2-5, 7-9. Idle: 1 (sibling of busy 0) and the single-thread core 6.
    env.busy_all([0, 2, 3, 4, 5, 7, 8, 9]);
    w.update_idle_core(&topo, &env, 1);
    assert!(!w.test_idle_cores(&topo, 0), "CPU 1's sibling 0 is busy");
    // A single-thread core has no other sibling to wait for: going idle sets the hint.
    w.update_idle_core(&topo, &env, 6);
    assert!(w.test_idle_cores(&topo, 0));

    w.task_fork(P, None, 0);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(
        r.placement.cpu, 6,
        "an idle core, not the idle SMT sibling 1: {r:?}"
    );
    assert_eq!(r.explain.sis, Some(SisStep::IdleCore));

    // Core 6 gets busy but the hint is stale: the core scan finds no idle core,
    // returns the idle sibling it noted on the way (CPU 1) and clears the hint.
    env.busy(6, 1);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 1);
    assert_eq!(r.explain.sis, Some(SisStep::IdleCpu));
    assert!(!w.test_idle_cores(&topo, 0));
}

fn w_smt(s: &Setup) -> bool {
    s.topo().sched_smt_active()
}

#[test]
fn legacy_select_idle_sibling_takes_a_fully_idle_group() {
    // v3.16: no idle-core hint; the first group below the LLC whose CPUs are all idle.
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let params = WakeupParams::new(
        KernelVersion::new(3, 16),
        Features::at_version(KernelVersion::new(3, 16)),
    );
    let mut w = Wakeup::new(&topo, params);
    let mut env = FakeEnv::idle(&s.m);
    env.busy_all(skl_socket0().filter(|&c| c != 45 && c != 5 && c != 47));
    w.task_fork(P, None, 0);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    // MC groups are cores in CPU order from the local one: {1,41}, ..., {5,45} idle.
    assert_eq!(r.placement.cpu, 5);
    assert_eq!(r.explain.sis, Some(SisStep::LegacyGroup));
}

#[test]
fn pinned_task_and_fallback_respect_affinity() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    env.allowed[0] = CpuMask::single(33);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 33);
    assert_eq!(r.placement.path, PlacementPath::Pinned);
    // prev (idle) outside the new mask: select_idle_sibling returns it, the fallback
    // replaces it with an allowed CPU on prev's node.
    env.allowed[0] = [30, 31, 70].into_iter().collect();
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert!(r.explain.fallback);
    assert_eq!(
        r.placement.cpu, 30,
        "node 1 only has allowed CPUs: the first"
    );
}

/// 82d6e01a0699 (v6.19, WAKEUP_STATS_ALLOWED): the slow path counts a group's idle CPUs
/// only among those the task may use. skl-2s at the NUMA level: node 0 (local) has two idle
/// CPUs, node 1 many, but the task may run only on four busy CPUs of node 1. Summing every
/// CPU (before v6.19) sends it to node 1; summing the allowed ones keeps it local.
#[test]
fn find_dst_group_counts_only_the_allowed_cpus_from_v6_19() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let numa = *s.d.cpu_domains(0).last().unwrap();
    let groups = &s.d.domain(numa).groups;
    let (local, remote) = (s.d.group(groups[0]).span, s.d.group(groups[1]).span);
    assert!(local.test(0) && !remote.test(0));
    let mut env = FakeEnv::idle(&s.m);
    env.busy_all(local.iter().skip(2));
    let pinned: Vec<usize> = remote.iter().take(4).collect();
    env.busy_all(pinned.iter().copied());
    env.allowed[0] = local.or(&pinned.iter().copied().collect());
    let with = |on: bool| {
        let mut f = Features::defaults();
        f.set(Feature::WAKEUP_STATS_ALLOWED, on);
        Wakeup::new(&topo, WakeupParams::new(KernelVersion::new(6, 18), f))
    };
    assert_eq!(
        with(false).find_dst_group(&topo, &env, numa, P, 0),
        Some(groups[1]),
        "every CPU of node 1 counted: node 1 looks idler"
    );
    assert_eq!(
        with(true).find_dst_group(&topo, &env, numa, P, 0),
        None,
        "only the four busy allowed CPUs of node 1: stay local"
    );
    let v6_19 = KernelVersion::new(6, 19);
    assert!(Features::at_version(v6_19).on(Feature::WAKEUP_STATS_ALLOWED));
    assert!(!Features::at_version(KernelVersion::new(6, 18)).on(Feature::WAKEUP_STATS_ALLOWED));
}

fn params_for(version: (u16, u16)) -> WakeupParams {
    let v = KernelVersion::new(version.0, version.1);
    let mut p = WakeupParams::new(v, Features::at_version(v));
    p.nr_idle_scan_start_full = true;
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever the state, flags, version and mask, the placement is an allowed, active
    /// CPU.
    #[test]
    fn placement_never_leaves_affinity(
        preset in prop::sample::select(vec!["hybrid-10", "adl-i9", "nehalem-2s", "altra-2s", "skl-2s"]),
        version in prop::sample::select(vec![(3, 16), (4, 9), (4, 19), (5, 8), (5, 10), (5, 15), (6, 6), (6, 18)]),
        seed_busy in prop::collection::vec(0usize..3, 160),
        seed_mask in prop::collection::vec(any::<bool>(), 160),
        prev in 0usize..160,
        this in 0usize..160,
        recent in 0usize..160,
        kind in 0u8..4,
        idle_cores in any::<bool>(),
        nr_scan in 0u32..20,
        util in 0u64..1100,
        waker_flips in 0u32..64,
        wakee_flips in 0u32..64,
    ) {
        let s = Setup::new(preset);
        let topo = s.topo();
        let n = s.m.nr_cpus();
        let (prev, this, recent) = (prev % n, this % n, recent % n);
        let mut w = Wakeup::new(&topo, params_for(version));
        let mut env = FakeEnv::idle(&s.m);
        for (c, &nr) in seed_busy.iter().enumerate().take(n) {
            env.busy(c, nr);
        }
        let mut mask: CpuMask = (0..n).filter(|&c| seed_mask[c]).collect();
        if mask.is_empty() {
            mask.set(n / 2);
        }
        env.allowed[0] = mask;
        env.task_util[0] = util;
        w.task_fork(P, None, prev);
        w.task_mut(P).recent_used_cpu = Some(recent);
        w.task_mut(P).wakee_flips = wakee_flips;
        w.task_mut(W).wakee_flips = waker_flips;
        w.set_idle_cores(&topo, this, idle_cores);
        w.set_nr_idle_scan(&topo, prev, nr_scan);
        let ctx = match kind {
            0 => ttwu(this, Some(W), false),
            1 => ttwu(this, Some(W), true),
            2 => ttwu(this, None, false),
            _ => fork(this),
        };
        let r = w.select_task_rq(&topo, &env, P, prev, ctx);
        prop_assert!(mask.test(r.placement.cpu), "{:?} not in {}", r, mask);
        prop_assert!(s.m.online.test(r.placement.cpu));
    }
}

/// An env whose CPUs report a fixed `avg_idle` (SIS_PROP input).
struct AvgIdleEnv {
    inner: FakeEnv,
    avg_idle_ns: u64,
}

impl WakeupEnv for AvgIdleEnv {
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        self.inner.cpu_active_mask()
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.inner.idle_cpu(cpu)
    }
    fn nr_running(&self, cpu: usize) -> usize {
        self.inner.nr_running(cpu)
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.inner.capacity_of(cpu)
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.inner.arch_scale_cpu_capacity(cpu)
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.inner.cpu_util(cpu)
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.inner.cpu_load(cpu)
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.inner.cpu_runnable(cpu)
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        self.inner.task_util_est(p)
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.inner.task_h_load(p)
    }
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> bool {
        self.inner.task_running_on_cpu(cpu, p)
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        self.inner.cpus_allowed(p)
    }
    fn avg_idle_ns(&self, _cpu: usize) -> u64 {
        self.avg_idle_ns
    }
}

/// The placement parameters of `version`, whose defaults have SIS_PROP on.
fn sis_prop_params(version: (u16, u16)) -> WakeupParams {
    let params = params_for(version);
    assert!(params.features.on(Feature::SIS_PROP));
    params
}

/// skl-2s with every CPU of socket 0 busy but CPU 19, and `avg_idle` 0 everywhere.
fn only_cpu_19_idle_on_socket0(m: &Machine) -> AvgIdleEnv {
    let mut inner = FakeEnv::idle(m);
    inner.busy_all(skl_socket0().filter(|&c| c != 19));
    AvgIdleEnv {
        inner,
        avg_idle_ns: 0,
    }
}

#[test]
fn sis_prop_limits_the_v5_10_scan_by_avg_idle() {
    // v5.10: select_idle_core / select_idle_cpu / select_idle_smt in sequence, SIS_PROP
    // on, SIS_UTIL not yet there.
    let params = sis_prop_params((5, 10));
    assert!(!params.features.on(Feature::SIS_UTIL));
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = Wakeup::new(&topo, params);
    let mut env = only_cpu_19_idle_on_socket0(&s.m);
    w.task_fork(P, None, 0);
    // avg_idle 0: the floor nr = 4, so `!--nr` lets 3 CPUs (0, 1, 2 from target 0) be
    // examined; then select_idle_smt(target) reads 0 and 40. The aborted scan is not
    // averaged into avg_scan_cost.
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 0);
    assert_eq!(r.cost.cpus, 3 + 2);
    assert_eq!(w.llc_shared(&topo, 0).unwrap().avg_scan_cost_ns, 0);

    // avg_idle 1 ms: nr = 40 * (1e6 / 512) / 1, unlimited in practice: CPU 19 is found
    // after examining 0..=19, and the scan (20 CPUs x 40 ns) enters avg_scan_cost with
    // weight 1/8 (update_avg).
    env.avg_idle_ns = 1_000_000;
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(r.placement.cpu, 19);
    assert_eq!(r.cost.cpus, 20);
    assert_eq!(
        w.llc_shared(&topo, 0).unwrap().avg_scan_cost_ns,
        20 * 40 / 8
    );
}

/// v5.14+ (94aafc3ee31d): SIS_PROP reads the waking runqueue's `wake_avg_idle`, not
/// `avg_idle / 512`. It starts at `avg_idle` (1 ms), loses each complete scan's time, halves
/// once per jiffy since `wake_stamp`, and is reset to `avg_idle / 2` when the CPU wakes from
/// idle. So a waker busy for 20 jiffies scans 4 CPUs at most, whatever its `avg_idle`.
#[test]
fn sis_prop_ages_the_waking_cpus_idle_estimate_from_v5_14() {
    let params = sis_prop_params((5, 15));
    assert_eq!(params.tick_ns, 1_000_000, "HZ=1000 jiffies");
    let s = Setup::new("skl-2s");
    let mut w = Wakeup::new(&s.topo(), params);
    let topo = s.topo();
    // `avg_idle` 0 is not read any more: in the old form it would allow no scan.
    let mut env = only_cpu_19_idle_on_socket0(&s.m);
    env.inner.now_ns = 0;
    w.task_fork(P, None, 0);
    let est = |w: &Wakeup| w.wake_avg_idle(0).unwrap();
    assert_eq!(
        est(&w).avg_ns,
        1_000_000,
        "sched_init(): wake_avg_idle = avg_idle"
    );

    // 1 ms of estimate against an avg_scan_cost of 0: no limit. The scan (from target + 1
    // since v5.12) finds CPU 19 after 19 CPUs (760 ns), which the estimate loses and
    // avg_scan_cost averages.
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!((r.placement.cpu, r.cost.cpus), (19, 19));
    assert_eq!(est(&w).avg_ns, 1_000_000 - 19 * 40);
    assert_eq!(
        w.llc_shared(&topo, 0).unwrap().avg_scan_cost_ns,
        19 * 40 / 8
    );

    // 20 jiffies later, 999 240 ns halved 20 times is 0: the floor, nr = 4, so 3 CPUs are
    // examined and the scan gives up (not averaged, the estimate untouched).
    env.inner.now_ns = 20_000_000;
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!((r.placement.cpu, r.cost.cpus), (0, 3));
    assert_eq!(est(&w).avg_ns, 0);
    assert_eq!(est(&w).stamp_jiffy, 20, "the stamp follows the halvings");

    // Woken from idle with avg_idle 400 µs: wake_avg_idle = 200 µs, stamped now; the
    // whole scan is allowed again.
    w.set_wake_avg_idle(0, 400_000, 20_000_000);
    let r = w.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!((r.placement.cpu, r.cost.cpus), (19, 19));
    assert_eq!(est(&w).avg_ns, 200_000 - 19 * 40);

    // Before v5.14 the estimate is `avg_idle / 512` of the waker, and nothing ages.
    let mut old = Wakeup::new(&topo, params_for((5, 10)));
    old.task_fork(P, None, 0);
    let r = old.select_task_rq(&topo, &env, P, 0, ttwu(0, None, false));
    assert_eq!(
        r.cost.cpus,
        3 + 2,
        "avg_idle 0: the floor, then select_idle_smt(target)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `WrapCursor` over a mask that loses bits during the walk visits exactly the CPUs a
    /// walk over a copy taken at the start visits when it skips CPUs no longer in the
    /// live mask (the former `select_idle_cpu()` loop), in the same order.
    #[test]
    fn wrap_cursor_matches_a_snapshot_walk_with_clears(
        cpus in prop::collection::btree_set(0usize..1024, 0..120),
        start in 0usize..1100,
        deltas in prop::collection::vec(1usize..1024, 0..3),
    ) {
        let mask: CpuMask = cpus.iter().copied().collect();
        // A visited CPU takes its "siblings" (CPU + delta, mod 1024) out of the mask.
        let clear = |m: &mut CpuMask, c: usize| {
            for d in &deltas {
                m.clear((c + d) % 1024);
            }
        };
        let mut live = mask;
        let mut want = Vec::new();
        for c in mask.iter_wrap(start) {
            if live.test(c) {
                want.push(c);
                clear(&mut live, c);
            }
        }
        let mut live = mask;
        let mut got = Vec::new();
        let mut walk = WrapCursor::new(start);
        while let Some(c) = walk.next(&live) {
            got.push(c);
            clear(&mut live, c);
        }
        prop_assert_eq!(got, want);
    }

    /// The in-place mask operations equal the copying ones.
    #[test]
    fn in_place_and_andnot_equal_the_copying_forms(
        a in prop::collection::btree_set(0usize..1024, 0..200),
        b in prop::collection::btree_set(0usize..1024, 0..200),
    ) {
        let a: CpuMask = a.into_iter().collect();
        let b: CpuMask = b.into_iter().collect();
        let mut x = a;
        x.and_assign(&b);
        prop_assert_eq!(x, a.and(&b));
        let mut y = a;
        y.andnot_assign(&b);
        prop_assert_eq!(y, a.andnot(&b));
    }
}

/// The core-mode `select_idle_cpu()` walk wraps from `target + 1` over the live mask:
/// a busy core's siblings leave it when the core is visited, so each core is examined
/// once (two CPUs each), CPUs 40-50 come before 0-10 (their cores were examined through
/// the sibling), and an idle sibling of a busy core is remembered and returned when no
/// whole idle core exists, clearing the LLC's `has_idle_cores`.
#[test]
fn idle_core_scan_wraps_once_per_core_and_falls_back_to_the_remembered_cpu() {
    let s = Setup::new("skl-2s");
    let topo = s.topo();
    let mut w = s.wakeup();
    let mut env = FakeEnv::idle(&s.m);
    env.busy_all(skl_socket0().filter(|&c| c != 47));
    w.set_idle_cores(&topo, 10, true);
    w.task_fork(P, None, 10);
    let r = w.select_task_rq(&topo, &env, P, 10, ttwu(10, None, false));
    assert_eq!(r.placement.cpu, 47, "{r:?}");
    assert_eq!(r.explain.sis, Some(SisStep::IdleCpu));
    // Cores 11-19 (via 11..19) and 0-10 (via 40..50): 20 cores. Two CPUs each until
    // 47 is remembered; after that a busy core stops at its first busy CPU (48-50: one
    // each): 9 * 2 + 7 * 2 + 2 + 3 = 37.
    assert_eq!(r.cost.cpus, 37);
    assert!(
        !w.test_idle_cores(&topo, 10),
        "a failed core scan clears the hint"
    );

    // Same state with core {3, 43} idle and the walk starting past the end of the
    // socket's low half: 56-59 (4 busy cores), then 0-2 (3 busy cores), then core 3.
    env.busy(3, 0);
    env.busy(43, 0);
    w.set_idle_cores(&topo, 55, true);
    w.task_fork(P, None, 55);
    let r = w.select_task_rq(&topo, &env, P, 55, ttwu(55, None, false));
    assert_eq!(r.placement.cpu, 3, "{r:?}");
    assert_eq!(r.explain.sis, Some(SisStep::IdleCore));
    assert_eq!(r.cost.cpus, 16);
}

/// [`FakeEnv`] with the placed task queued on `p_cpu` (an exec: it counts in that CPU's
/// `nr_running`, load, util and runnable, and the `*_without` readings remove it), and
/// optionally (`sums`) the per-group sums a runqueue model may keep.
struct QueuedEnv {
    base: FakeEnv,
    p_cpu: Option<usize>,
    sums: bool,
}

impl QueuedEnv {
    fn here(&self, cpu: usize, p: TaskId) -> bool {
        p == P && self.p_cpu == Some(cpu)
    }
    fn own(&self, cpu: usize) -> bool {
        self.p_cpu == Some(cpu)
    }
}

impl WakeupEnv for QueuedEnv {
    fn now_ns(&self) -> u64 {
        self.base.now_ns
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        &self.base.active
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.nr_running(cpu) == 0
    }
    fn nr_running(&self, cpu: usize) -> usize {
        self.base.nr_running[cpu] + usize::from(self.own(cpu))
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.base.capacity[cpu]
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.base.capacity[cpu]
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.base.util[cpu]
            + if self.own(cpu) {
                self.base.task_util[0]
            } else {
                0
            }
    }
    fn cpu_util_without(&self, cpu: usize, p: TaskId) -> u64 {
        self.cpu_util(cpu)
            - if self.here(cpu, p) {
                self.base.task_util[0]
            } else {
                0
            }
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.base.load[cpu]
            + if self.own(cpu) {
                self.base.task_load[0]
            } else {
                0
            }
    }
    fn cpu_load_without(&self, cpu: usize, p: TaskId) -> u64 {
        self.cpu_load(cpu)
            - if self.here(cpu, p) {
                self.base.task_load[0]
            } else {
                0
            }
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cpu_load(cpu)
    }
    fn cpu_runnable_without(&self, cpu: usize, p: TaskId) -> u64 {
        self.cpu_load_without(cpu, p)
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        self.base.task_util[p.idx()]
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.base.task_load[p.idx()]
    }
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> bool {
        self.here(cpu, p)
    }
    fn task_queued_cpu(&self, p: TaskId) -> Option<usize> {
        if p == P { self.p_cpu } else { None }
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        &self.base.allowed[p.idx()]
    }
    fn group_sums(&self, group: &schedlab::domains::SchedGroup) -> Option<GroupWakeSums> {
        if !self.sums {
            return None;
        }
        let mut s = GroupWakeSums::default();
        for c in group.span.iter() {
            s.load += self.cpu_load(c);
            s.util += self.cpu_util(c);
            s.runnable += self.cpu_runnable(c);
            s.nr_running += self.nr_running(c) as u32;
            s.idle_cpus += u32::from(self.nr_running(c) == 0 && self.idle_cpu(c));
            s.capacity += self.capacity_of(c);
        }
        Some(s)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Fork and exec placement from per-group sums (with the placed task's own CPU
    /// counted without it) chooses the CPU the per-CPU walk chooses, at the same scan
    /// cost, on SMT, multi-LLC and NUMA machines.
    #[test]
    fn fork_and_exec_placement_from_group_sums_equals_the_walk(
        preset in prop::sample::select(vec!["skl-2s", "milan-2s", "spr-2s"]),
        busy_seed in any::<u64>(),
        this_cpu_pick in any::<u32>(),
        exec in any::<bool>(),
        spread in 0u64..4,
    ) {
        let s = Setup::new(preset);
        let topo = s.topo();
        let mut base = FakeEnv::idle(&s.m);
        let n = s.m.nr_cpus();
        // A deterministic spread of tasks: 0-3 per CPU (mostly idle), or at most one per
        // CPU, half or three quarters of them busy (groups near their weight in tasks);
        // or (spread 3) one on every CPU but the placing one.
        let mut x = busy_seed | 1;
        for cpu in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let nr = match spread {
                0 => (x % 7).saturating_sub(3),
                1 => x % 2,
                2 => u64::from(x % 4 != 0),
                _ => 1,
            };
            base.busy(cpu, nr as usize);
        }
        let this_cpu = this_cpu_pick as usize % n;
        if spread == 3 {
            // Every CPU busy but the placing one: whether the placed task counts there
            // decides whether the local groups have spare room.
            base.busy(this_cpu, 0);
        }
        let ctx = WakeCtx {
            this_cpu,
            waker: None,
            flags: WakeFlags { sync: false, fork: !exec, ttwu: false, exec },
        };
        let p_cpu = exec.then_some(this_cpu);
        let walk = QueuedEnv { base: base.clone(), p_cpu, sums: false };
        let sums = QueuedEnv { base, p_cpu, sums: true };
        let (mut w1, mut w2) = (s.wakeup(), s.wakeup());
        w1.task_fork(P, None, this_cpu);
        w2.task_fork(P, None, this_cpu);
        let a = w1.select_task_rq(&topo, &walk, P, this_cpu, ctx);
        let b = w2.select_task_rq(&topo, &sums, P, this_cpu, ctx);
        prop_assert_eq!(a.placement, b.placement);
        prop_assert_eq!(a.cost, b.cost);
    }
}
