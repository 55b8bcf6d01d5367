//! The wakeup fast path's scans (kernel/sched/fair.c of linux 6.12.y and 6.1.y:
//! `select_idle_cpu()` with `select_idle_core()` and `__select_idle_cpu()`, SIS_UTIL's
//! `nr_idle_scan` limit, the cluster-first scan (6.12; none in 6.1, nor in the mirror before
//! v6.8), `set_idle_cores()`; `select_idle_smt()`) against src/sched/wakeup/sis.rs, on the
//! LLC domain of random targets of SMT2, SMT4, hybrid and clustered presets, random idle /
//! SCHED_IDLE CPUs and affinity. The scan order (`for_each_cpu_wrap()` from `target + 1`
//! over a mask that `select_idle_core()` shrinks) is the kernel's own
//! (`find_next_bit_wrap()`, `__for_each_wrap()` are extracted). 6.1's SIS_PROP (off in its
//! features.h) is set in a third of the 6.1 cases, with a random `wake_avg_idle`, `wake_stamp`
//! (up to 40 jiffies back) and `avg_scan_cost`: the scan limit, the ageing and both updates are
//! compared. The kernel's `cpu_clock()` advances 40 ns per `available_idle_cpu()` read, the
//! mirror's `idle_scan_step_ns` per examined CPU.

use super::idlest::{Cpu, Setup, V61, cpu, env_on};
use crate::ffi::{KdMask, KdSisIn, KdSisOut, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::domains::{SdFlags, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::wakeup::{Topo, WakeAvgIdle, Wakeup, WakeupParams};
use schedlab::task::TaskId;
use schedlab::topology::Machine;
use schedlab::topology::presets::{self, CoreSpec, Numbering};
use std::cell::RefCell;

const V: &str = "6.12";

/// The kernel version of the unit `v` ("6.12" or "6.1"): the mirror runs at it, with its
/// features.
pub(super) fn version(v: &str) -> KernelVersion {
    if v == V61 {
        KernelVersion::new(6, 1)
    } else {
        KernelVersion::new(6, 12)
    }
}

/// `cpu_smt_mask(cpu)` in the unit of kernel `v`.
pub(super) fn set_smt(v: &str, cpu: usize, smt: &KdMask) {
    // SAFETY: cpu < 512; `smt` outlives the call.
    unsafe {
        if v == V61 {
            crate::ffi::kd61_sis_set_smt(cpu as i32, smt.as_ptr());
        } else {
            crate::ffi::kd612_sis_set_smt(cpu as i32, smt.as_ptr());
        }
    }
}

/// A CPU's LLC id and `sd_share_id` in the unit of kernel `v`.
pub(super) fn set_ids(v: &str, cpu: usize, llc: usize, share: usize) {
    // SAFETY: cpu < 512.
    unsafe {
        if v == V61 {
            crate::ffi::kd61_sis_set_ids(cpu as i32, llc as i32, share as i32);
        } else {
            crate::ffi::kd612_sis_set_ids(cpu as i32, llc as i32, share as i32);
        }
    }
}

/// Presets (SMT2 with thread-major numbering, SMT2 + single-thread cores, SMT4, hybrid
/// with E-core clusters, CCX LLCs), then two clustered LLCs built here (4-core clusters,
/// single-thread and SMT2) for the cluster-first scan.
const MACHINES: [&str; 7] = [
    "skl-2s",
    "hybrid-10",
    "power10-96",
    "adl-i9",
    "milan-2s",
    "cluster-24",
    "cluster-smt-32",
];

pub(super) fn machine(name: &str) -> Machine {
    let (threads, nr_cores) = match name {
        "cluster-24" => (1, 24),
        "cluster-smt-32" => (2, 16),
        _ => return presets::by_name(name).expect("preset"),
    };
    let cores: Vec<CoreSpec> = (0..nr_cores)
        .map(|i| CoreSpec {
            package: 0,
            node: 0,
            cluster: i / 4,
            llc: 0,
            threads,
            capacity: 1024,
        })
        .collect();
    presets::build(name, name, &cores, Numbering::ThreadMajor, vec![vec![10]])
}

/// (machine, target, states, affinity, has_idle_core, has_idle_cores before, SIS_UTIL,
/// nr_idle_scan, select_idle_smt instead, SIS_PROP state).
type Case = (
    usize,
    usize,
    Vec<Cpu>,
    Option<KdMask>,
    bool,
    bool,
    bool,
    u32,
    bool,
    SisProp,
);

/// 6.1's SIS_PROP in one case: on (6.1 only), the waking CPU's `wake_avg_idle`, how many
/// jiffies ago its `wake_stamp` was, its LLC's `avg_scan_cost`.
#[derive(Clone, Copy, Debug)]
struct SisProp {
    on: bool,
    wake_avg_idle: u64,
    stamp_back: u64,
    avg_scan_cost: u64,
}

/// The mirror's jiffy in these cases: the env's clock reads 1 ms, so `jiffies` is 1 000 and
/// a stamp can lie up to 40 jiffies back.
const KD_TICK_NS: u64 = 1_000;

fn sis_prop() -> impl Strategy<Value = SisProp> {
    (
        prop::bool::weighted(0.35),
        prop_oneof![Just(0u64), 0u64..2_000, 0u64..2_000_000],
        prop_oneof![Just(0u64), 0u64..3, 0u64..40],
        prop_oneof![Just(0u64), 0u64..200, 0u64..5_000],
    )
        .prop_map(|(on, wake_avg_idle, stamp_back, avg_scan_cost)| SisProp {
            on,
            wake_avg_idle,
            stamp_back,
            avg_scan_cost,
        })
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..MACHINES.len(),
        any::<usize>(),
        prop::collection::vec(cpu(), 1..=24),
        prop_oneof![3 => Just(None), 1 => any::<KdMask>().prop_map(Some)],
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop_oneof![Just(0u32), 0u32..4, 0u32..64],
        prop::bool::weighted(0.25),
        sis_prop(),
    )
}

/// Per machine: the domains and the placement state with SIS_UTIL on and off, at the unit's
/// version and (6.1 only) at v6.12, whose differences are counted.
struct Sis {
    s: Setup,
    w: [Wakeup; 2],
    /// 6.1 only: the mirror at 6.1 with SIS_PROP on (SIS_UTIL off and on).
    w_prop: Option<[Wakeup; 2]>,
    later: Option<[Wakeup; 2]>,
}

/// The mirror at `v` with SIS_PROP on, SIS_UTIL off and on, a jiffy of [`KD_TICK_NS`].
fn wakeups_sis_prop(s: &Setup, v: KernelVersion) -> [Wakeup; 2] {
    [false, true].map(|on| {
        let mut f = Features::at_version(v);
        f.set(Feature::SIS_UTIL, on);
        f.set(Feature::SIS_PROP, true);
        let mut params = WakeupParams::new(v, f);
        params.tick_ns = KD_TICK_NS;
        Wakeup::new(&Topo::new(&s.m, &s.d), params)
    })
}

/// The mirror at `v` with SIS_UTIL off and on (SIS_PROP as `v` has it: off at 6.1 and 6.12).
pub(super) fn wakeups(s: &Setup, v: KernelVersion) -> [Wakeup; 2] {
    [false, true].map(|on| {
        let mut f = Features::at_version(v);
        f.set(Feature::SIS_UTIL, on);
        assert!(!f.on(Feature::SIS_PROP), "SIS_PROP is not compared");
        Wakeup::new(&Topo::new(&s.m, &s.d), WakeupParams::new(v, f))
    })
}

fn machines(v: &str) -> Vec<Sis> {
    MACHINES
        .iter()
        .map(|name| {
            let m = machine(name);
            let d = build_sched_domains(&m);
            let s = Setup { m, d };
            Sis {
                w: wakeups(&s, version(v)),
                w_prop: (v == V61).then(|| wakeups_sis_prop(&s, version(v))),
                later: (v == V61).then(|| wakeups(&s, version(V))),
                s,
            }
        })
        .collect()
}

#[test]
fn select_idle_cpu_and_smt_match() {
    select_idle_cpu_and_smt_on(V);
    select_idle_cpu_and_smt_on(V61);
}

fn select_idle_cpu_and_smt_on(v: &'static str) {
    if !available("wakeup", v) {
        return;
    }
    let ms = RefCell::new(machines(v));
    let tally = RefCell::new([0u64; 7]);
    assert_no_mismatch(
        "wakeup::select_idle_cpu+select_idle_core+select_idle_smt",
        v,
        cases(5000),
        case(),
        |c| check(v, &mut ms.borrow_mut()[c.0], c, &mut tally.borrow_mut()),
    );
    println!(
        "kernel_diff wakeup::select_idle_cpu (linux {}): scans of a clustered LLC (cluster first from v6.8), CPU found, none found, has_idle_cores cleared, the mirror's v6.12 form differs (6.1 only), SIS_PROP cases (6.1 only), SIS_PROP cases whose wake_avg_idle changed: {:?}",
        crate::release(v),
        tally.borrow()
    );
}

fn check(v: &str, sis: &mut Sis, c: &Case, tally: &mut [u64; 7]) -> Result<(), String> {
    let &(_, target, ref states, ref allowed, has_idle_core, hic, sis_util, nr, smt, prop) = c;
    let prop_on = prop.on && v == V61;
    let jiffies = 1_000_000 / KD_TICK_NS;
    let stamp = jiffies - prop.stamp_back;
    let s = &sis.s;
    let target = target % s.m.nr_cpus();
    let Some(sd) = s.d.sd_llc(target) else {
        return Ok(());
    };
    let e = env_on(v, s, states, allowed);
    for cpu in 0..s.m.nr_cpus() {
        set_smt(v, cpu, &kd_mask(&s.m.smt_mask(cpu).and(&s.m.online)));
    }
    let dom = s.d.domain(sd);
    let sg = s.d.group(dom.groups[0]);
    let inp = KdSisIn {
        span: kd_mask(&dom.span),
        allowed: kd_mask(&e.allowed),
        group_span: kd_mask(&sg.span),
        target: target as u32,
        has_idle_core: u32::from(has_idle_core),
        group_flags: u32::from(sg.flags.contains(SdFlags::SD_CLUSTER)),
        cluster_active: u32::from(s.d.sched_cluster_active),
        has_sds: 1,
        nr_idle_scan: nr,
        sis_util: u32::from(sis_util),
        nr_cpu_ids: s.m.nr_cpus() as u32,
        has_idle_cores: u32::from(hic),
        op: u32::from(smt),
        sis_prop: u32::from(prop_on),
        pad: 0,
        jiffies,
        wake_avg_idle: prop.wake_avg_idle,
        wake_stamp: stamp,
        avg_scan_cost: prop.avg_scan_cost,
    };
    let mut k = KdSisOut::default();
    // SAFETY: reads `inp` and the per-CPU arrays; writes `k`.
    unsafe {
        if v == V61 {
            crate::ffi::kd61_select_idle(&inp, &mut k)
        } else {
            crate::ffi::kd612_select_idle(&inp, &mut k)
        }
    };
    tally[0] += u64::from(!smt && inp.cluster_active == 1 && inp.group_flags == 1);
    tally[if k.cpu >= 0 { 1 } else { 2 }] += 1;
    tally[3] += u64::from(hic && k.has_idle_cores == 0);
    tally[5] += u64::from(prop_on);
    tally[6] += u64::from(prop_on && k.wake_avg_idle != prop.wake_avg_idle);
    let topo = Topo::new(&s.m, &s.d);
    // The waking CPU is the target in the mirror's scan entry, CPU 0 in the shim's.
    let mirror = |w: &mut Wakeup| {
        w.set_nr_idle_scan(&topo, target, nr);
        w.set_idle_cores(&topo, target, hic);
        w.set_wake_idle(
            target,
            WakeAvgIdle {
                avg_ns: prop.wake_avg_idle,
                stamp_jiffy: stamp,
            },
        );
        w.set_avg_scan_cost(&topo, target, prop.avg_scan_cost);
        let cpu = if smt {
            w.scan_idle_smt(&topo, &e, TaskId(0), sd, target)
        } else {
            w.scan_idle_cpu(&topo, &e, TaskId(0), sd, has_idle_core, target)
                .map(|(c, _)| c)
        };
        let after = w.wake_avg_idle(target).expect("a CPU of the machine");
        KdSisOut {
            cpu: cpu.map_or(-1, |c| c as i32),
            has_idle_cores: u32::from(w.test_idle_cores(&topo, target)),
            wake_avg_idle: after.avg_ns,
            wake_stamp: after.stamp_jiffy,
            avg_scan_cost: w
                .llc_shared(&topo, target)
                .map_or(prop.avg_scan_cost, |l| l.avg_scan_cost_ns),
        }
    };
    let r = match (&mut sis.w_prop, prop_on) {
        (Some(wp), true) => mirror(&mut wp[usize::from(sis_util)]),
        _ => mirror(&mut sis.w[usize::from(sis_util)]),
    };
    if let Some(later) = &mut sis.later
        && !prop_on
    {
        tally[4] += u64::from(mirror(&mut later[usize::from(sis_util)]) != k);
    }
    compare("select_idle", &k, &r)
}
