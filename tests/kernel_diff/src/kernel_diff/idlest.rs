//! The slow path's CPU choice inside the idlest group (kernel/sched/fair.c of linux 6.12.y:
//! `sched_balance_find_dst_group_cpu()`, `find_idlest_group_cpu()` before v6.10) against
//! src/sched/wakeup/idlest.rs: a SCHED_IDLE-only CPU at once, else the idle CPU in the
//! shallowest idle state (ties: the most recent idle stamp), else the least loaded CPU;
//! every group of the presets' domains, random affinity and per-CPU idle states.

use crate::ffi::{KdMask, kd_mask};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{SchedDomains, build_sched_domains};
use schedlab::kconfig::features::Features;
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::wakeup::{Topo, Wakeup, WakeupEnv, WakeupParams};
use schedlab::task::TaskId;
use schedlab::topology::{Machine, presets};

const V: &str = "6.12";
/// 6.1's `find_idlest_group_cpu()`: the same body before the v6.10 rename.
pub(super) const V61: &str = "6.1";

const MACHINES: [&str; 3] = ["hybrid-10", "skl-2s", "power10-96"];

/// One CPU: idle (available_idle_cpu()), SCHED_IDLE-only (a busy CPU), its idle state's
/// exit latency in us (None: no state), its idle stamp, its load.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cpu {
    idle: bool,
    sched_idle: bool,
    exit_latency_us: Option<u32>,
    idle_stamp: u64,
    load: u64,
}

/// Few distinct values, so that ties (equal latency, equal stamp, equal load) are common.
/// An idle CPU's stamp is never 0: `sched_balance_newidle()` sets it when the CPU goes
/// idle (and only a wakeup, which ends the idle period, clears it).
pub(super) fn cpu() -> impl Strategy<Value = Cpu> {
    (
        any::<bool>(),
        prop::bool::weighted(0.1),
        prop_oneof![1 => Just(None), 3 => prop_oneof![Just(0u32), Just(1), Just(2), Just(133), 0u32..1000].prop_map(Some)],
        prop_oneof![0u64..4, 0u64..1_000_000_000],
        prop_oneof![0u64..3, 0u64..88761 * 2],
    )
        .prop_map(|(idle, sched_idle, lat, stamp, load)| Cpu {
            idle,
            sched_idle: sched_idle && !idle,
            exit_latency_us: lat,
            idle_stamp: if idle { stamp.max(1) } else { stamp },
            load,
        })
}

pub(super) struct Env {
    active: CpuMask,
    pub(super) allowed: CpuMask,
    cpus: Vec<Cpu>,
}

impl WakeupEnv for Env {
    fn now_ns(&self) -> u64 {
        1_000_000
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        &self.active
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.cpus[cpu].idle
    }
    fn sched_idle_cpu(&self, cpu: usize) -> bool {
        self.cpus[cpu].sched_idle
    }
    fn nr_running(&self, cpu: usize) -> usize {
        usize::from(!self.cpus[cpu].idle)
    }
    fn capacity_of(&self, _cpu: usize) -> u64 {
        1024
    }
    fn arch_scale_cpu_capacity(&self, _cpu: usize) -> u64 {
        1024
    }
    fn cpu_util(&self, _cpu: usize) -> u64 {
        0
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.cpus[cpu].load
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cpus[cpu].load
    }
    fn task_util_est(&self, _p: TaskId) -> u64 {
        0
    }
    fn task_h_load(&self, _p: TaskId) -> u64 {
        0
    }
    fn task_running_on_cpu(&self, _cpu: usize, _p: TaskId) -> bool {
        false
    }
    fn cpus_allowed(&self, _p: TaskId) -> &CpuMask {
        &self.allowed
    }
    fn idle_exit_latency_ns(&self, cpu: usize) -> Option<u64> {
        self.cpus[cpu]
            .exit_latency_us
            .map(|us| u64::from(us) * 1000)
    }
    fn idle_stamp_ns(&self, cpu: usize) -> u64 {
        self.cpus[cpu].idle_stamp
    }
}

pub(super) struct Setup {
    pub(super) m: Machine,
    pub(super) d: SchedDomains,
}

/// (machine, group (any group of any domain), this_cpu, the CPUs' states (repeated over
/// the machine), affinity (None: every CPU)).
type Case = (usize, usize, usize, Vec<Cpu>, Option<KdMask>);

fn case() -> impl Strategy<Value = Case> {
    (
        0..MACHINES.len(),
        any::<usize>(),
        any::<usize>(),
        prop::collection::vec(cpu(), 1..=24),
        prop_oneof![3 => Just(None), 1 => any::<KdMask>().prop_map(Some)],
    )
}

/// The per-CPU state of a case, set on the kernel side too, in the unit of kernel `v` (6.12
/// or 6.1).
pub(super) fn env_on(v: &str, s: &Setup, states: &[Cpu], allowed: &Option<KdMask>) -> Env {
    let n = s.m.nr_cpus();
    let cpus: Vec<Cpu> = (0..n).map(|c| states[c % states.len()]).collect();
    for (i, c) in cpus.iter().enumerate() {
        let (cpu, idle, load) = (i as i32, i32::from(c.idle), c.load);
        let (has, lat) = (
            i32::from(c.exit_latency_us.is_some()),
            c.exit_latency_us.unwrap_or(0),
        );
        let (stamp, sidle) = (c.idle_stamp, i32::from(c.sched_idle));
        // SAFETY: i < 512 (the shim's array).
        unsafe {
            if v == V61 {
                crate::ffi::kd61_wakeup_set_cpu(cpu, 0, 0, 0, load, 1024, idle, 0);
                crate::ffi::kd61_wakeup_set_idle(cpu, has, lat, stamp, sidle);
            } else {
                crate::ffi::kd612_wakeup_set_cpu(cpu, 0, 0, 0, load, 1024, idle, 0);
                crate::ffi::kd612_wakeup_set_idle(cpu, has, lat, stamp, sidle);
            }
        }
    }
    let mut mask = s.m.online;
    if let Some(a) = allowed {
        mask = CpuMask::default();
        for cpu in
            s.m.online
                .iter()
                .filter(|&c| a[c / 64] >> (c % 64) & 1 == 1)
        {
            mask.set(cpu);
        }
    }
    Env {
        active: s.m.online,
        allowed: mask,
        cpus,
    }
}

#[test]
fn sched_balance_find_dst_group_cpu_matches() {
    find_dst_group_cpu_on(V);
    find_dst_group_cpu_on(V61);
}

fn find_dst_group_cpu_on(v: &str) {
    if !available("wakeup", v) {
        return;
    }
    let setups: Vec<Setup> = MACHINES
        .iter()
        .map(|name| {
            let m = presets::by_name(name).expect("preset");
            let d = build_sched_domains(&m);
            Setup { m, d }
        })
        .collect();
    let (major, minor) = if v == V61 { (6, 1) } else { (6, 12) };
    let params = WakeupParams::new(
        KernelVersion::new(major, minor),
        Features::at_version(KernelVersion::new(major, minor)),
    );
    let wakeups: Vec<Wakeup> = setups
        .iter()
        .map(|s| Wakeup::new(&Topo::new(&s.m, &s.d), params))
        .collect();
    assert_no_mismatch(
        "wakeup::sched_balance_find_dst_group_cpu",
        v,
        cases(5000),
        case(),
        |(mi, gi, this, states, allowed)| {
            let s = &setups[*mi];
            let g = schedlab::domains::GroupId(gi % s.d.groups.len());
            let sg = s.d.group(g);
            let this = this % s.m.nr_cpus();
            let e = env_on(v, s, states, allowed);
            let (span, aff) = (kd_mask(&sg.span), kd_mask(&e.allowed));
            let (w, this_c) = (sg.group_weight as u32, this as i32);
            // SAFETY: reads two masks and the per-CPU arrays set by env_on().
            let k = unsafe {
                if v == V61 {
                    crate::ffi::kd61_find_dst_group_cpu(span.as_ptr(), w, aff.as_ptr(), this_c)
                } else {
                    crate::ffi::kd612_find_dst_group_cpu(span.as_ptr(), w, aff.as_ptr(), this_c)
                }
            };
            let topo = Topo::new(&s.m, &s.d);
            let r = wakeups[*mi].find_dst_group_cpu(&topo, &e, g, TaskId(0), this);
            compare("sched_balance_find_dst_group_cpu", &(k as usize), &r)
        },
    );
}
