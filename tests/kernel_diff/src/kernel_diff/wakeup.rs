//! Wakeup placement's affine decisions (kernel/sched/fair.c of linux 6.12.y) against
//! src/sched/wakeup/affine.rs: `wake_affine_idle` and `wake_affine_weight`, on the
//! skl-2s preset's domains (two LLCs).

use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{DomainId, SchedDomains, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::version::KernelVersion;
use schedlab::sched::wakeup::{Topo, Wakeup, WakeupEnv, WakeupParams};
use schedlab::task::TaskId;
use schedlab::topology::{Machine, presets};
use std::sync::atomic::{AtomicU64, Ordering};

const V: &str = "6.12";

/// One CPU's state as the two functions read it.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    nr_running: usize,
    delayed: usize,
    idle: bool,
    load: u64,
    capacity: u64,
}

fn cpu() -> impl Strategy<Value = Cpu> {
    (
        0usize..6,
        0usize..3,
        any::<bool>(),
        0u64..=88761 * 4,
        1u64..=1024,
    )
        .prop_map(|(nr, delayed, idle, load, capacity)| Cpu {
            nr_running: nr,
            delayed: delayed.min(nr),
            // available_idle_cpu() implies an empty runqueue.
            idle: idle && nr == 0,
            load,
            capacity,
        })
}

struct Env {
    active: CpuMask,
    cpus: Vec<Cpu>,
    p_load: u64,
    current_load: u64,
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
    fn nr_running(&self, cpu: usize) -> usize {
        self.cpus[cpu].nr_running
    }
    fn cfs_h_nr_delayed(&self, cpu: usize) -> usize {
        self.cpus[cpu].delayed
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.cpus[cpu].capacity
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
    fn task_h_load(&self, p: TaskId) -> u64 {
        if p == TaskId(0) {
            self.p_load
        } else {
            self.current_load
        }
    }
    fn task_running_on_cpu(&self, _cpu: usize, _p: TaskId) -> bool {
        false
    }
    fn cpus_allowed(&self, _p: TaskId) -> &CpuMask {
        &self.active
    }
}

struct Setup {
    m: Machine,
    d: SchedDomains,
}

fn setup() -> Setup {
    let m = presets::by_name("skl-2s").expect("preset");
    let d = build_sched_domains(&m);
    Setup { m, d }
}

fn wakeup(s: &Setup, version: KernelVersion, wa_bias: bool) -> Wakeup {
    let mut f = Features::defaults();
    f.set(Feature::WA_BIAS, wa_bias);
    Wakeup::new(&Topo::new(&s.m, &s.d), WakeupParams::new(version, f))
}

/// this_cpu, prev_cpu (same LLC or not), their states, the loads, sync, WA_BIAS, a domain.
type Case = (usize, usize, Cpu, Cpu, u64, u64, bool, bool, usize);

fn case(nr_cpus: usize, nr_domains: usize) -> impl Strategy<Value = Case> {
    (
        0..nr_cpus,
        0..nr_cpus,
        cpu(),
        cpu(),
        0u64..=88761 * 2,
        0u64..=88761 * 2,
        any::<bool>(),
        any::<bool>(),
        0..nr_domains,
    )
}

/// Fills the kernel side's per-CPU arrays and the Rust env for one case.
fn env(s: &Setup, c: &Case) -> Env {
    let &(this, prev, ct, cp, p_load, current_load, _, _, _) = c;
    let mut cpus = vec![
        Cpu {
            nr_running: 0,
            delayed: 0,
            idle: false,
            load: 0,
            capacity: 1024
        };
        s.m.nr_cpus()
    ];
    cpus[prev] = cp;
    cpus[this] = ct;
    for cpu in [prev, this] {
        let st = cpus[cpu];
        let llc =
            s.d.sd_llc(cpu)
                .map_or(cpu, |id| s.d.domain(id).span.first().unwrap_or(cpu));
        // SAFETY: cpu < 512 (the shim's array).
        unsafe {
            crate::ffi::kd612_wakeup_set_cpu(
                cpu as i32,
                st.nr_running as u32,
                st.nr_running as u32,
                (st.nr_running - st.delayed) as u32,
                st.load,
                st.capacity,
                i32::from(st.idle),
                llc as i32,
            )
        };
    }
    Env {
        active: s.m.online,
        cpus,
        p_load,
        current_load,
    }
}

#[test]
fn wake_affine_idle_matches() {
    if !available("wakeup", V) {
        return;
    }
    let s = setup();
    // 6.12.118 has the v6.14 cfs_h_nr_delayed rule (a stable backport): the mirror's
    // v6.14 form must match exactly; count where its v6.12 form (upstream 6.12.0) differs.
    let (w_backport, w_612) = (
        wakeup(&s, KernelVersion::new(6, 14), true),
        wakeup(&s, KernelVersion::new(6, 12), true),
    );
    let differs_612 = AtomicU64::new(0);
    let topo = Topo::new(&s.m, &s.d);
    assert_no_mismatch(
        "wakeup::wake_affine_idle",
        V,
        cases(5000),
        case(s.m.nr_cpus(), s.d.domains.len()),
        |c| {
            let e = env(&s, c);
            let (this, prev, sync) = (c.0, c.1, c.6);
            // SAFETY: indices within the machine (< 512).
            let k = unsafe {
                crate::ffi::kd612_wake_affine_idle(this as i32, prev as i32, i32::from(sync))
            };
            let k = (k >= 0).then_some(k as usize);
            let r = w_backport
                .wake_affine_idle(&topo, &e, this, prev, sync)
                .map(|(cpu, _)| cpu);
            if w_612
                .wake_affine_idle(&topo, &e, this, prev, sync)
                .map(|(cpu, _)| cpu)
                != k
            {
                differs_612.fetch_add(1, Ordering::Relaxed);
            }
            compare("wake_affine_idle", &k, &r)
        },
    );
    println!(
        "kernel_diff wakeup::wake_affine_idle (linux {}): the v6.12 profile's form differs in {} cases (no cfs_h_nr_delayed)",
        crate::release(V),
        differs_612.load(Ordering::Relaxed)
    );
}

#[test]
fn wake_affine_weight_matches() {
    if !available("wakeup", V) {
        return;
    }
    let s = setup();
    let topo = Topo::new(&s.m, &s.d);
    let (with_bias, without) = (
        wakeup(&s, KernelVersion::new(6, 12), true),
        wakeup(&s, KernelVersion::new(6, 12), false),
    );
    assert_no_mismatch(
        "wakeup::wake_affine_weight",
        V,
        cases(5000),
        case(s.m.nr_cpus(), s.d.domains.len()),
        |c| {
            let e = env(&s, c);
            let &(this, prev, _, _, p_load, current_load, sync, bias, sd) = c;
            let pct = s.d.domain(DomainId(sd)).imbalance_pct;
            // SAFETY: indices within the machine (< 512).
            let k = unsafe {
                crate::ffi::kd612_wake_affine_weight(
                    pct,
                    p_load,
                    current_load,
                    this as i32,
                    prev as i32,
                    i32::from(sync),
                    i32::from(bias),
                )
            };
            let k = (k >= 0).then_some(k as usize);
            let w = if bias { &with_bias } else { &without };
            let r = w.wake_affine_weight(
                &topo,
                &e,
                DomainId(sd),
                TaskId(0),
                Some(TaskId(1)),
                this,
                prev,
                sync,
            );
            compare("wake_affine_weight", &k, &r)
        },
    );
}
