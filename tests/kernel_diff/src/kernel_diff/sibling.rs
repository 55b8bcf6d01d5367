//! `select_idle_sibling()` whole (kernel/sched/fair.c of linux 6.12.y and 6.1.y) against
//! src/sched/wakeup/sis.rs: the target, the cache-affine previous CPU (or, outside the
//! target's cluster, `prev_aff`: 6.12 only, v6.8+ in the mirror), `recent_used_cpu` (always
//! replaced by prev), the LLC domain, `select_idle_smt()` on prev without an idle core,
//! `select_idle_cpu()` (SIS_UTIL, the cluster-first scan from v6.8, `select_idle_core()`),
//! then the `prev_aff`, `recent_used_cpu` (both v6.8+) and target fallbacks;
//! `p->recent_used_cpu` and the LLC's `has_idle_cores` after. Symmetric machines only
//! (skl-2s, power10-96, milan-2s, two clustered LLCs): on asymmetric ones the kernel's
//! `select_idle_capacity()` path (`util_fits_cpu()` with uclamp) is not extracted. 6.1's
//! SIS_PROP (off in its features.h, as in the mirror's 6.1 features) is never set.

use super::idlest::{Cpu, Setup, V61, cpu, env_on};
use super::sis::{machine, set_ids, set_smt, version, wakeups};
use crate::ffi::{KdMask, KdSiblingOut, KdSisIn, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::domains::{SdFlags, build_sched_domains};
use schedlab::sched::wakeup::{Topo, Wakeup};
use schedlab::task::TaskId;
use std::cell::RefCell;

const V: &str = "6.12";

const MACHINES: [&str; 5] = [
    "skl-2s",
    "power10-96",
    "milan-2s",
    "cluster-24",
    "cluster-smt-32",
];

/// (machine, target, prev, recent_used_cpu, the CPUs' states, affinity, has_idle_cores,
/// SIS_UTIL, nr_idle_scan).
type Case = (
    usize,
    usize,
    usize,
    usize,
    Vec<Cpu>,
    Option<KdMask>,
    bool,
    bool,
    u32,
);

fn case() -> impl Strategy<Value = Case> {
    (
        0..MACHINES.len(),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        prop::collection::vec(cpu(), 1..=24),
        prop_oneof![3 => Just(None), 1 => any::<KdMask>().prop_map(Some)],
        any::<bool>(),
        prop::bool::weighted(0.8),
        prop_oneof![Just(0u32), 0u32..4, 0u32..64],
    )
}

/// The CPU near `base` (same LLC in 3 of 4 draws, so that prev and recent_used_cpu are
/// often cache-affine to the target), else anywhere.
fn near(s: &Setup, base: usize, raw: usize) -> usize {
    let n = s.m.nr_cpus();
    if !raw.is_multiple_of(4)
        && let Some(sd) = s.d.sd_llc(base)
    {
        let span: Vec<usize> = s.d.domain(sd).span.iter().collect();
        return span[(raw / 4) % span.len()];
    }
    (raw / 4) % n
}

/// Per machine: the domains and the mirror at the unit's version and (6.1 only) at v6.12,
/// whose differences are counted.
struct Sibling {
    s: Setup,
    w: [Wakeup; 2],
    later: Option<[Wakeup; 2]>,
}

#[test]
fn select_idle_sibling_matches() {
    select_idle_sibling_on(V);
    select_idle_sibling_on(V61);
}

fn select_idle_sibling_on(v: &'static str) {
    if !available("wakeup", v) {
        return;
    }
    let ms = RefCell::new(
        MACHINES
            .iter()
            .map(|name| {
                let m = machine(name);
                let d = build_sched_domains(&m);
                assert!(!d.sched_asym_cpucapacity, "{name}: symmetric machines only");
                let s = Setup { m, d };
                Sibling {
                    w: wakeups(&s, version(v)),
                    later: (v == V61).then(|| wakeups(&s, version(V))),
                    s,
                }
            })
            .collect::<Vec<_>>(),
    );
    let tally = RefCell::new([0u64; 5]);
    assert_no_mismatch("wakeup::select_idle_sibling", v, cases(5000), case(), |c| {
        check(v, &mut ms.borrow_mut()[c.0], c, &mut tally.borrow_mut())
    });
    println!(
        "kernel_diff wakeup::select_idle_sibling (linux {}): target, prev, recent_used_cpu, other CPU, the mirror's v6.12 form differs (6.1 only): {:?}",
        crate::release(v),
        tally.borrow()
    );
}

fn check(v: &str, sb: &mut Sibling, c: &Case, tally: &mut [u64; 5]) -> Result<(), String> {
    let &(_, target, prev, recent, ref states, ref allowed, hic, sis_util, nr) = c;
    let s = &sb.s;
    let target = target % s.m.nr_cpus();
    let prev = near(s, target, prev);
    let recent = near(s, target, recent);
    let e = env_on(v, s, states, allowed);
    let topo = Topo::new(&s.m, &s.d);
    for cpu in 0..s.m.nr_cpus() {
        // sd_share_id: the first CPU sharing resources (cluster, else LLC) with this one
        // (6.1 has no cpus_share_resources()).
        let share = (0..s.m.nr_cpus())
            .find(|&o| s.d.cpus_share_resources(cpu, o))
            .unwrap_or(cpu);
        set_smt(v, cpu, &kd_mask(&s.m.smt_mask(cpu).and(&s.m.online)));
        set_ids(v, cpu, s.d.llc_id(cpu), share);
    }
    let Some(sd) = s.d.sd_llc(target) else {
        return Ok(());
    };
    let dom = s.d.domain(sd);
    let sg = s.d.group(dom.groups[0]);
    let inp = KdSisIn {
        span: kd_mask(&dom.span),
        allowed: kd_mask(&e.allowed),
        group_span: kd_mask(&sg.span),
        target: target as u32,
        has_idle_core: 0,
        group_flags: u32::from(sg.flags.contains(SdFlags::SD_CLUSTER)),
        cluster_active: u32::from(s.d.sched_cluster_active),
        has_sds: 1,
        nr_idle_scan: nr,
        sis_util: u32::from(sis_util),
        nr_cpu_ids: s.m.nr_cpus() as u32,
        has_idle_cores: u32::from(hic),
        op: 0,
        ..KdSisIn::default()
    };
    let mut k = KdSiblingOut::default();
    // SAFETY: reads `inp` and the per-CPU arrays; writes `k`.
    let (prev_c, recent_c, smt_c) = (prev as i32, recent as i32, i32::from(sb.w[0].smt_active()));
    unsafe {
        if v == V61 {
            crate::ffi::kd61_select_idle_sibling(&inp, prev_c, recent_c, smt_c, &mut k)
        } else {
            crate::ffi::kd612_select_idle_sibling(&inp, prev_c, recent_c, smt_c, &mut k)
        }
    };
    let cpu = k.cpu as usize;
    tally[if cpu == target {
        0
    } else if cpu == prev {
        1
    } else if cpu == recent {
        2
    } else {
        3
    }] += 1;
    let mirror = |w: &mut Wakeup| {
        w.set_nr_idle_scan(&topo, target, nr);
        w.set_idle_cores(&topo, target, hic);
        w.task_mut(TaskId(0)).recent_used_cpu = Some(recent);
        let cpu = w.scan_idle_sibling(&topo, &e, TaskId(0), prev, target);
        KdSiblingOut {
            cpu: cpu as i32,
            has_idle_cores: u32::from(w.test_idle_cores(&topo, target)),
            recent_used_cpu: w.task(TaskId(0)).recent_used_cpu.map_or(-1, |c| c as i32),
            pad: 0,
        }
    };
    let r = mirror(&mut sb.w[usize::from(sis_util)]);
    if let Some(later) = &mut sb.later {
        tally[4] += u64::from(mirror(&mut later[usize::from(sis_util)]) != k);
    }
    compare("select_idle_sibling", &k, &r)
}
