//! The slow path's group choice (kernel/sched/fair.c of linux 6.12.y:
//! `sched_balance_find_dst_group()`, `find_idlest_group()` before v6.10, with
//! `update_sg_wakeup_stats()`, `update_pick_idlest()`, `group_classify()`,
//! `group_is_overloaded()`, `group_has_capacity()`, `task_fits_cpu()`,
//! `task_running_on_cpu()`, `idle_cpu_without()`, `adjust_numa_imbalance()`) against
//! src/sched/wakeup/idlest.rs: any domain of any CPU of the presets (SMT, asymmetric
//! capacity, POWER10, two and four NUMA nodes), random per-CPU runqueues (the loads, utils
//! and runnables without the task, capacity, `nr_running`, the running task: idle, the task
//! or another, a pending wakeup), a random task (its CPU, queued or sleeping or new, util
//! estimate, preferred node, affinity: all CPUs, a random half, a few CPUs) and
//! `sgc->imbalance` flags. Compared: every allowed group's `sg_lb_stats` (what the mirror
//! defines: not `sum_h_nr_running`, read by no decision here) and the group returned (or
//! NULL).
//!
//! `sgc->capacity` and `sgc->max_capacity` are the sum and the maximum of the group's
//! `capacity_of()` now (the mirror's reading: an `update_group_capacity()` with today's
//! capacities); no uclamp (`uclamp_is_used()` false, as in the mirror).

use crate::ffi::{KD_DG_MAX_GROUPS, KdDgCpu, KdDgGroup, KdDgIn, KdDgOut, KdDgSgs, KdMask, kd_mask};
use crate::kernel_diff::lb::MACHINES;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{SchedDomains, SdFlags, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::types::GroupType;
use schedlab::sched::wakeup::{SgWakeupStats, Topo, Wakeup, WakeupEnv, WakeupParams};
use schedlab::task::TaskId;
use schedlab::topology::{Machine, presets};
use std::sync::atomic::{AtomicU64, Ordering};

const V: &str = "6.12";
/// 6.1's `find_idlest_group()`: the same bodies before the v6.10 rename (no
/// group_smt_balance type, `cfs.h_nr_running` for 6.12's `h_nr_queued`).
const V61: &str = "6.1";

/// One CPU's runqueue (values without the task); repeated over the machine.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    load: u64,
    util: u64,
    runnable: u64,
    /// `capacity_of()` as a fraction (/1024) of the CPU's original capacity.
    cap_frac: u64,
    nr_running: u32,
    ttwu_pending: bool,
    /// With tasks queued: another task runs (else the idle task still does).
    other_curr: bool,
}

fn cpu() -> impl Strategy<Value = Cpu> {
    (
        prop_oneof![0u64..4, 0u64..3000],
        prop_oneof![0u64..4, 0u64..1400],
        prop_oneof![0u64..4, 0u64..1400],
        prop_oneof![3 => Just(1024u64), 1 => 1u64..1025],
        prop_oneof![3 => Just(0u32), 3 => 1u32..3, 1 => 0u32..16],
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.9),
    )
        .prop_map(
            |(load, util, runnable, cap_frac, nr_running, ttwu_pending, other_curr)| Cpu {
                load,
                util,
                runnable,
                cap_frac,
                nr_running,
                ttwu_pending,
                other_curr,
            },
        )
}

/// The task: its CPU (`task_cpu()`), queued there or sleeping or new (`last_update_time`
/// 0), running when queued, its util estimate, preferred node.
#[derive(Debug, Clone, Copy)]
struct Task {
    cpu: usize,
    state: u8,
    util: u64,
    nid: Option<usize>,
}

fn task() -> impl Strategy<Value = Task> {
    (
        any::<usize>(),
        0u8..4,
        prop_oneof![0u64..4, 0u64..1100],
        prop_oneof![Just(None), (0usize..8).prop_map(Some)],
    )
        .prop_map(|(cpu, state, util, nid)| Task {
            cpu,
            state,
            util,
            nid,
        })
}

/// 0 sleeping, 1 new, 2 queued (not running), 3 queued and running.
const SLEEPING: u8 = 0;
const NEW: u8 = 1;
const RUNNING: u8 = 3;

/// The per-CPU state both sides read.
#[derive(Debug, Clone, Copy)]
struct CpuState {
    load: u64,
    util: u64,
    runnable: u64,
    capacity: u64,
    arch: u64,
    nr_running: u32,
    ttwu_pending: bool,
    /// 0 the idle task, 1 the task, 2 another task.
    curr: u32,
}

struct Env {
    active: CpuMask,
    allowed: CpuMask,
    cpus: Vec<CpuState>,
    task: Task,
    /// `sgc` ids with `sgc->imbalance` set.
    imbalanced: Vec<usize>,
}

impl Env {
    fn queued(&self) -> bool {
        self.task.state >= 2
    }
}

impl WakeupEnv for Env {
    fn now_ns(&self) -> u64 {
        1_000_000
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        &self.active
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.nr_running == 0 && c.curr == 0 && !c.ttwu_pending
    }
    fn nr_running(&self, cpu: usize) -> usize {
        self.cpus[cpu].nr_running as usize
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.cpus[cpu].capacity
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.cpus[cpu].arch
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.cpus[cpu].util
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.cpus[cpu].load
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cpus[cpu].runnable
    }
    fn task_util_est(&self, _p: TaskId) -> u64 {
        self.task.util
    }
    fn task_h_load(&self, _p: TaskId) -> u64 {
        0
    }
    /// The kernel's test: `p`'s CPU, not new, queued.
    fn task_running_on_cpu(&self, cpu: usize, _p: TaskId) -> bool {
        cpu == self.task.cpu && self.queued()
    }
    fn ttwu_pending(&self, cpu: usize) -> bool {
        self.cpus[cpu].ttwu_pending
    }
    fn cpus_allowed(&self, _p: TaskId) -> &CpuMask {
        &self.allowed
    }
    fn numa_preferred_nid(&self, _p: TaskId) -> Option<usize> {
        self.task.nid
    }
    fn sg_imbalanced(&self, sgc: usize) -> bool {
        self.imbalanced.contains(&sgc)
    }
    fn task_queued_cpu(&self, _p: TaskId) -> Option<usize> {
        self.queued().then_some(self.task.cpu)
    }
}

struct Setup {
    m: Machine,
    d: SchedDomains,
    /// The mirror as the kernel sources compared are: WAKEUP_STATS_ALLOWED on (v6.19,
    /// backported to 6.12.118 and 6.1.192).
    w: Wakeup,
    /// The mirror without it (upstream before v6.19): its differences are counted.
    w_all_cpus: Wakeup,
}

/// (machine, this_cpu, the domain's level among this_cpu's, the CPUs' states (repeated
/// over the machine), the task, affinity (0 all CPUs, 1 a random mask, 2 a few CPUs),
/// the random mask, the few CPUs, `sgc->imbalance` per group index (bits)).
type Case = (
    usize,
    usize,
    usize,
    Vec<Cpu>,
    Task,
    u8,
    KdMask,
    Vec<usize>,
    u64,
);

fn case() -> impl Strategy<Value = Case> {
    (
        0..MACHINES.len(),
        any::<usize>(),
        any::<usize>(),
        prop::collection::vec(cpu(), 1..=24),
        task(),
        prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8)],
        any::<KdMask>(),
        prop::collection::vec(any::<usize>(), 1..4),
        prop_oneof![3 => Just(0u64), 1 => any::<u64>().prop_map(|b| b & b >> 7 & b >> 13)],
    )
}

/// The kernel's `enum group_type` value of kernel `v` (6.1 has no group_smt_balance).
fn group_type_of(v: &str, t: GroupType) -> u32 {
    let n = t as u32;
    if v == V61 && n > GroupType::SmtBalance as u32 {
        n - 1
    } else {
        n
    }
}

fn sgs_of(v: &str, s: &SgWakeupStats) -> KdDgSgs {
    KdDgSgs {
        avg_load: s.avg_load,
        group_load: s.group_load,
        group_capacity: s.group_capacity,
        group_util: s.group_util,
        group_runnable: s.group_runnable,
        group_misfit_task_load: s.group_misfit_task_load,
        sum_nr_running: s.sum_nr_running,
        idle_cpus: s.idle_cpus,
        group_weight: s.group_weight,
        group_type: group_type_of(v, s.group_type),
        computed: 1,
        pad: 0,
    }
}

/// What the cases reached (printed with the counts).
#[derive(Default)]
struct Seen {
    null: AtomicU64,
    numa: AtomicU64,
    misfit: AtomicU64,
    imbalanced: AtomicU64,
    overloaded_or_busy: AtomicU64,
    restricted: AtomicU64,
    no_local: AtomicU64,
    /// Cases where the mirror without WAKEUP_STATS_ALLOWED gives other statistics / another
    /// group.
    all_cpus_stats: AtomicU64,
    all_cpus_choice: AtomicU64,
}

#[test]
fn sched_balance_find_dst_group_matches() {
    find_dst_group_on(V);
    find_dst_group_on(V61);
}

fn find_dst_group_on(v: &str) {
    if !available("dstgroup", v) {
        return;
    }
    let (major, minor) = if v == V61 { (6, 1) } else { (6, 12) };
    let ver = KernelVersion::new(major, minor);
    let mut features = Features::at_version(ver);
    features.set(Feature::WAKEUP_STATS_ALLOWED, true);
    let params = WakeupParams::new(ver, features);
    features.set(Feature::WAKEUP_STATS_ALLOWED, false);
    let params_all_cpus = WakeupParams::new(ver, features);
    let setups: Vec<Setup> = MACHINES
        .iter()
        .map(|name| {
            let m = presets::by_name(name).expect("preset");
            let d = build_sched_domains(&m);
            let w = Wakeup::new(&Topo::new(&m, &d), params);
            let w_all_cpus = Wakeup::new(&Topo::new(&m, &d), params_all_cpus);
            Setup {
                m,
                d,
                w,
                w_all_cpus,
            }
        })
        .collect();
    let seen = Seen::default();
    let n = cases(5000);
    assert_no_mismatch("wakeup::sched_balance_find_dst_group", v, n, case(), |c| {
        check(v, &setups, &seen, c)
    });
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "  (linux {v}) cases: NULL {}, NUMA domains {}; groups: misfit {}, imbalanced {}, \
         overloaded/fully busy {}, cut by affinity {}; cases: local group not allowed {}; \
         the mirror without WAKEUP_STATS_ALLOWED (before v6.19): other statistics in {} cases, \
         another group in {}",
        get(&seen.null),
        get(&seen.numa),
        get(&seen.misfit),
        get(&seen.imbalanced),
        get(&seen.overloaded_or_busy),
        get(&seen.restricted),
        get(&seen.no_local),
        get(&seen.all_cpus_stats),
        get(&seen.all_cpus_choice),
    );
}

/// The case's task affinity: all CPUs, a random mask or a few CPUs, always with a CPU of
/// the domain (the kernel's precondition: `p` may run somewhere in `sd`).
fn affinity(s: &Setup, kind: u8, mask: &KdMask, few: &[usize]) -> CpuMask {
    let n = s.m.nr_cpus();
    let mut a = CpuMask::default();
    match kind {
        0 => return s.m.online,
        1 => {
            for cpu in
                s.m.online
                    .iter()
                    .filter(|&c| mask[c / 64] >> (c % 64) & 1 == 1)
            {
                a.set(cpu);
            }
        }
        _ => {
            for &c in few {
                a.set(c % n);
            }
        }
    }
    a
}

fn check(v: &str, setups: &[Setup], seen: &Seen, case: &Case) -> Result<(), String> {
    let (mi, this, level, states, task, kind, mask, few, imb_bits) = case;
    let s = &setups[*mi];
    let n = s.m.nr_cpus();
    let this = this % n;
    let doms = s.d.cpu_domains(this);
    if doms.is_empty() {
        return Ok(());
    }
    let sd = doms[level % doms.len()];
    let d = s.d.domain(sd);
    assert!(
        d.groups.len() <= KD_DG_MAX_GROUPS,
        "{} groups",
        d.groups.len()
    );
    let mut allowed = affinity(s, *kind, mask, few);
    if !allowed.intersects(&d.span) {
        allowed.set(this);
    }
    let mut task = *task;
    task.cpu %= n;
    let nodes = (0..n).map(|c| s.m.cpus[c].node).max().unwrap_or(0) + 1;
    task.nid = task.nid.map(|x| x % nodes);
    let queued = task.state >= 2;
    let cpus: Vec<CpuState> = (0..n)
        .map(|c| {
            let st = states[c % states.len()];
            let arch = s.m.cpus[c].capacity as u64;
            let mut nr = st.nr_running;
            let mut curr = if nr > 0 && st.other_curr { 2 } else { 0 };
            if queued && c == task.cpu {
                nr = nr.max(1);
                curr = if task.state == RUNNING {
                    1
                } else if nr >= 2 && st.other_curr {
                    2
                } else {
                    0
                };
            }
            CpuState {
                load: st.load,
                util: st.util,
                runnable: st.runnable,
                capacity: (arch * st.cap_frac / 1024).max(1),
                arch,
                nr_running: nr,
                ttwu_pending: st.ttwu_pending,
                curr,
            }
        })
        .collect();
    let mut imbalanced = Vec::new();
    let mut groups = [KdDgGroup::default(); KD_DG_MAX_GROUPS];
    for (i, &g) in d.groups.iter().enumerate() {
        let sg = s.d.group(g);
        let imb = i < 64 && imb_bits >> i & 1 == 1;
        if imb {
            imbalanced.push(sg.sgc);
        }
        groups[i] = KdDgGroup {
            span: kd_mask(&sg.span),
            capacity: sg.span.iter().map(|c| cpus[c].capacity).sum(),
            max_capacity: sg.span.iter().map(|c| cpus[c].capacity).max().unwrap_or(0),
            group_weight: sg.group_weight as u32,
            imbalance: u32::from(imb),
        };
    }
    // Groups sharing one sgc share its flag, as in the kernel.
    for (i, &g) in d.groups.iter().enumerate() {
        groups[i].imbalance = u32::from(imbalanced.contains(&s.d.group(g).sgc));
    }
    for (c, st) in cpus.iter().enumerate() {
        let k = KdDgCpu {
            load: st.load,
            util: st.util,
            runnable: st.runnable,
            capacity: st.capacity,
            arch_capacity: st.arch,
            nr_running: st.nr_running,
            h_nr_queued: st.nr_running,
            ttwu_pending: u32::from(st.ttwu_pending),
            curr: st.curr,
            node: s.m.cpus[c].node as i32,
            pad: 0,
        };
        // SAFETY: c < 512 (the shim's array); reads one struct.
        unsafe {
            if v == V61 {
                crate::ffi::kd61_dstgroup_set_cpu(c as i32, &k);
            } else {
                crate::ffi::kd612_dstgroup_set_cpu(c as i32, &k);
            }
        }
    }
    let mut sd_flags = 0;
    if d.flags.contains(SdFlags::SD_ASYM_CPUCAPACITY) {
        sd_flags |= 0x1;
    }
    if d.flags.contains(SdFlags::SD_NUMA) {
        sd_flags |= 0x4;
    }
    let inp = KdDgIn {
        groups,
        allowed: kd_mask(&allowed),
        last_update_time: u64::from(task.state != NEW),
        task_util: task.util,
        nr_groups: d.groups.len() as u32,
        sd_flags,
        imbalance_pct: d.imbalance_pct,
        imb_numa_nr: d.imb_numa_nr,
        this_cpu: this as i32,
        task_cpu: task.cpu as i32,
        on_rq: i32::from(queued),
        numa_preferred_nid: task.nid.map_or(-1, |x| x as i32),
    };
    let mut out = KdDgOut {
        sgs: [KdDgSgs::default(); KD_DG_MAX_GROUPS],
        chosen: -2,
        pad: 0,
    };
    // SAFETY: reads the inputs and the per-CPU arrays set above, writes `out`.
    let rc = unsafe {
        if v == V61 {
            crate::ffi::kd61_find_dst_group(&inp, &mut out)
        } else {
            crate::ffi::kd612_find_dst_group(&inp, &mut out)
        }
    };
    assert_eq!(rc, 0);
    debug_assert!(task.state <= RUNNING && (task.state != SLEEPING || !queued));

    let env = Env {
        active: s.m.online,
        allowed,
        cpus,
        task,
        imbalanced,
    };
    let topo = Topo::new(&s.m, &s.d);
    let p = TaskId(0);
    let mut rust = [KdDgSgs::default(); KD_DG_MAX_GROUPS];
    let mut all_cpus_differ = false;
    for (i, &g) in d.groups.iter().enumerate() {
        let sg = s.d.group(g);
        if sg.span.intersects(&env.allowed) {
            let st = s.w.sg_wakeup_stats(&topo, &env, sd, g, p);
            rust[i] = sgs_of(v, &st);
            all_cpus_differ |= s.w_all_cpus.sg_wakeup_stats(&topo, &env, sd, g, p) != st;
            match st.group_type {
                GroupType::MisfitTask => seen.misfit.fetch_add(1, Ordering::Relaxed),
                GroupType::Imbalanced => seen.imbalanced.fetch_add(1, Ordering::Relaxed),
                GroupType::Overloaded | GroupType::FullyBusy => {
                    seen.overloaded_or_busy.fetch_add(1, Ordering::Relaxed)
                }
                _ => 0,
            };
            if sg.span.and(&env.allowed) != sg.span {
                seen.restricted.fetch_add(1, Ordering::Relaxed);
            }
        } else if sg.span.test(this) {
            seen.no_local.fetch_add(1, Ordering::Relaxed);
        }
    }
    let chosen =
        s.w.find_dst_group(&topo, &env, sd, p, this)
            .map_or(-1, |g| {
                d.groups
                    .iter()
                    .position(|&x| x == g)
                    .expect("a group of sd") as i32
            });
    if chosen == -1 {
        seen.null.fetch_add(1, Ordering::Relaxed);
    }
    if all_cpus_differ {
        seen.all_cpus_stats.fetch_add(1, Ordering::Relaxed);
    }
    if s.w_all_cpus.find_dst_group(&topo, &env, sd, p, this)
        != s.w.find_dst_group(&topo, &env, sd, p, this)
    {
        seen.all_cpus_choice.fetch_add(1, Ordering::Relaxed);
    }
    if d.flags.contains(SdFlags::SD_NUMA) {
        seen.numa.fetch_add(1, Ordering::Relaxed);
    }
    let ng = d.groups.len();
    compare(
        "update_sg_wakeup_stats (per group) and the group chosen",
        &(&out.sgs[..ng], out.chosen),
        &(&rust[..ng], chosen),
    )
}
