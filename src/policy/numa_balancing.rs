//! NUMA balancing, the scheduling class's side of a run (docs/numa.md, "Phase 2"): the
//! runtime state of the [`crate::sched::numa`] mirrors — per-task fault statistics and scan
//! state, numa_groups, per-mm scan state, the `/proc/vmstat` counters, each rq's
//! `numa_migrate_on` — with the machine's NUMA topology, the release's variant and whether
//! balancing runs ([`NumaSched`]), and the scan tunables and HZ it runs with.
//!
//! A policy that balances NUMA owns one ([`super::SchedPolicy::numa_balancing`]): the Linux
//! fair class reads it for `task_numa_migrate()` and the load balancer's NUMA hooks, and
//! [`super::fifo::GlobalFifo`] keeps one so that scanning, hinting faults and page migration
//! run under it as well (it never moves a task for NUMA). The engine owns the memory (the
//! `Mm`s, first touch, access sampling, speeds, congestion) and reports plain facts through
//! the methods here, each a kernel entry point: a memory-model task's tick
//! ([`NumaBalancing::task_tick`]: `task_tick_numa()` and `task_numa_work()`), each sampled
//! hinting fault ([`NumaBalancing::hint_fault`]: `do_numa_page()` → `task_numa_fault()`), a
//! `task_numa_migrate()` decision to take ([`NumaBalancing::take_decision`]), the moves it
//! carried out (vmstat, the `numa_migrate_on` claim); it applies the decisions it gets back
//! (task moves through its migration stopper, page moves on its `Mm`s). So the engine reaches
//! `sched` only through `sched::types` (scripts/check-layers).

use crate::kconfig::ResolvedKernel;
use crate::memory::policy::vma_policy_mof;
use crate::memory::{Mm, MmId};
use crate::sched::numa::group::RqCurr;
use crate::sched::numa::scan::{
    ScanParams, numa_work_overhead_stamp_ns, task_scan_max, task_scan_min,
};
use crate::sched::numa::state::{FaultSite, NumaSched, NumaState, TickSite};
use crate::sched::numa::{NumaTopo, NumaVariant, TaskNuma};
use crate::sched::types::{NumaMigrateDecision, NumaMove, Vmstat};
use crate::task::{MemPolicy, TaskId};
use crate::topology::Machine;

/// `NUMA_BALANCING_NORMAL`.
pub const NUMA_BALANCING_NORMAL: u32 = 1;

/// A scan delay or period in ms as the `u32` that `TaskNuma` keeps (an `unsigned int` in
/// the kernel). Fits: the scan sysctls are at most 3 600 000 ms (kconfig's ranges) and
/// `task_scan_min()` is at most the period minimum.
pub(crate) fn scan_ms_u32(ms: u64) -> u32 {
    u32::try_from(ms).expect("NUMA scan delay/period above u32::MAX ms: beyond the sysctl range")
}

/// NUMA balancing as configured for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaRun {
    /// The release form and the resolved switches.
    pub variant: NumaVariant,
}

/// `Some` when NUMA balancing runs on `machine` under `kernel`: the sysctl's normal bit
/// and more than one node; the variant from the profile's version and resolved features.
pub fn numa_run(kernel: &ResolvedKernel, machine: &Machine) -> Option<NumaRun> {
    let on = kernel.sysctl.numa_balancing & NUMA_BALANCING_NORMAL != 0 && machine.nr_nodes() > 1;
    on.then(|| NumaRun {
        variant: NumaVariant::from_kernel(kernel.version, &kernel.features),
    })
}

/// The scan tunables of a resolved kernel.
pub fn scan_params(kernel: &ResolvedKernel) -> ScanParams {
    let s = &kernel.sysctl;
    ScanParams {
        scan_delay_ms: s.numa_balancing_scan_delay_ms,
        scan_period_min_ms: s.numa_balancing_scan_period_min_ms,
        scan_period_max_ms: s.numa_balancing_scan_period_max_ms,
        scan_size_mb: s.numa_balancing_scan_size_mb,
    }
}

/// The NUMA-balancing configuration of a run: whether it runs (and in which variant) and
/// the scan tunables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaConfig {
    /// `None`: balancing off.
    pub run: Option<NumaRun>,
    pub params: ScanParams,
}

impl NumaConfig {
    /// The configuration `kernel` gives on `machine` ([`numa_run`], [`scan_params`]).
    pub fn from_kernel(kernel: &ResolvedKernel, machine: &Machine) -> NumaConfig {
        NumaConfig {
            run: numa_run(kernel, machine),
            params: scan_params(kernel),
        }
    }
}

/// What the engine knows of a memory-model task at its tick.
#[derive(Clone, Copy, Debug)]
pub struct NumaTickFacts {
    pub p: TaskId,
    pub cpu: usize,
    /// The task's whole `sum_exec_runtime` (warm-up included), up to now.
    pub sum_exec_runtime_ns: u64,
    pub now_ns: u64,
    /// The task's memory policy.
    pub policy: MemPolicy,
    /// The engine's cost of `task_numa_work()`: per pass and per marked page group (the
    /// run time the overhead cap counts).
    pub scan_base_ns: u64,
    pub scan_group_ns: u64,
}

/// What one hinting fault did, as the engine needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HintFaultEffect {
    /// The page group moved to the faulting CPU's node.
    pub migrated: bool,
    /// Call `task_numa_migrate(p)` now.
    pub attempt_migrate: bool,
    /// The task's preferred node changed.
    pub placement_changed: bool,
}

/// The NUMA-balancing state of one run, owned by the policy.
#[derive(Clone, Debug)]
pub struct NumaBalancing {
    pub sched: NumaSched,
    params: ScanParams,
    hz: u32,
    /// What each CPU ran at the last tick (`RqCurr`, by CPU; `None` = idle): the fault
    /// path's `task_numa_group()` reads it.
    curr_buf: Vec<Option<RqCurr>>,
    /// The fault site of the last tick's task ([`NumaBalancing::task_tick`]); its hinting
    /// faults fill in the page's mapping.
    fault_site: Option<FaultSite>,
}

impl NumaBalancing {
    /// The state of a run on `machine` whose task `i` has the mm `task_mms[i]` (`None`: not
    /// a memory-model task). Balancing starts off ([`NumaBalancing::configure`]).
    pub fn new(machine: &Machine, task_mms: &[Option<MmId>]) -> NumaBalancing {
        let params = ScanParams::default();
        let tasks = task_mms
            .iter()
            .enumerate()
            .map(|(i, &mm)| {
                let pid = TaskId::from_index(i).0 + 1;
                TaskNuma::new(pid, mm, scan_ms_u32(params.scan_delay_ms))
            })
            .collect();
        NumaBalancing {
            sched: NumaSched {
                state: NumaState {
                    tasks,
                    ..NumaState::default()
                },
                topo: NumaTopo::from_machine(machine),
                variant: NumaVariant::for_version(6, 12),
                balancing: false,
            },
            params,
            hz: 250,
            curr_buf: vec![None; machine.nr_cpus()],
            fault_site: None,
        }
    }

    /// Apply the kernel configuration: balancing on with `cfg.run`'s variant (off for
    /// `None`), the scan tunables, HZ.
    pub fn configure(&mut self, cfg: NumaConfig, hz: u32) {
        self.sched.balancing = cfg.run.is_some();
        if let Some(r) = cfg.run {
            self.sched.variant = r.variant;
        }
        self.params = cfg.params;
        self.hz = hz;
        for t in &mut self.sched.state.tasks {
            t.numa_scan_period_ms = scan_ms_u32(cfg.params.scan_delay_ms);
        }
    }

    /// `sched_numa_balancing`.
    pub fn balancing(&self) -> bool {
        self.sched.balancing
    }

    /// The `/proc/vmstat` counters.
    pub fn vmstat(&self) -> Vmstat {
        self.sched.state.vmstat
    }

    /// The `/proc/vmstat` counters, to count a NUMA task move or reset at the warm-up's end.
    pub fn vmstat_mut(&mut self) -> &mut Vmstat {
        &mut self.sched.state.vmstat
    }

    /// `p->numa_preferred_nid` (`None` inside: NUMA_NO_NODE); `None` for an unknown task.
    pub fn preferred_nid(&self, p: TaskId) -> Option<Option<usize>> {
        self.sched.state.tasks.get(p.idx()).map(|t| t.preferred_nid)
    }

    /// `READ_ONCE(rq->numa_migrate_on)` of `cpu`.
    pub fn numa_migrate_on(&self, cpu: usize) -> bool {
        self.sched.state.numa_migrate_on(cpu)
    }

    /// Hold (`on`) or release `rq->numa_migrate_on` of `cpu`.
    pub fn set_numa_migrate_on(&mut self, cpu: usize, on: bool) {
        self.sched.state.set_numa_migrate_on(cpu, on);
    }

    /// NUMA balancing at the tick of `f.p` (a memory-model task, on `f.cpu`, whose mm is
    /// `mm`): `task_tick_numa()` and, when due, `task_numa_work()` (run at once: the return
    /// to user space that follows the tick). `currs` is what every CPU runs now (`None` =
    /// idle), for the hinting faults that follow ([`NumaBalancing::hint_fault`]). Returns
    /// the scan's cost to charge; `None` when balancing is off (no faults either).
    pub fn task_tick(
        &mut self,
        mm: &mut Mm,
        f: &NumaTickFacts,
        currs: &[Option<TaskId>],
    ) -> Option<u64> {
        if !self.sched.balancing {
            return None;
        }
        let (params, v, hz) = (self.params, self.sched.variant, self.hz);
        let tick_ns = 1_000_000_000 / u64::from(hz.max(1));
        let site = TickSite {
            p: f.p,
            sum_exec_runtime_ns: f.sum_exec_runtime_ns,
            now_ns: f.now_ns,
            mof: vma_policy_mof(f.policy),
            tick_ns,
        };
        let state = &mut self.sched.state;
        let mut cost = 0;
        if let Some(w) = state.tick(mm, &site, &params, &v)
            && w.ran
        {
            let c = f.scan_base_ns + w.groups_marked * f.scan_group_ns;
            cost += c;
            state.tasks[f.p.idx()].node_stamp_ns += numa_work_overhead_stamp_ns(c);
        }
        self.set_rq_currs(currs);
        let rss = mm.rss_pages();
        let state = &self.sched.state;
        let ng = state.tasks[f.p.idx()].group.map(|g| state.groups.get(g));
        self.fault_site = Some(FaultSite {
            p: f.p,
            cpu: f.cpu,
            policy: f.policy,
            writable: true,
            shared: false,
            // update_curr() ran in this tick: the kernel's se.exec_start is now.
            exec_start_ns: f.now_ns,
            sum_exec_runtime_ns: f.sum_exec_runtime_ns,
            scan_min_ms: task_scan_min(&params, rss),
            scan_max_ms: task_scan_max(&params, rss, ng, &v),
            now_ns: f.now_ns,
            hz,
        });
        Some(cost)
    }

    /// What each CPU runs, as the fault path reads it: its current task's pid, mm and group.
    fn set_rq_currs(&mut self, currs: &[Option<TaskId>]) {
        for (curr, slot) in currs.iter().zip(self.curr_buf.iter_mut()) {
            *slot = curr.map(|q| {
                let tq = &self.sched.state.tasks[q.idx()];
                RqCurr {
                    pid: tq.pid,
                    mm: tq.mm,
                    group: tq.group,
                }
            });
        }
    }

    /// A NUMA hinting fault of the last tick's task ([`NumaBalancing::task_tick`]) on the
    /// PROT_NONE page group `g` of its `mm`, in a `writable` mapping, `shared` with other
    /// mms or not: `do_numa_page()` (which may move the page on `mm`) and
    /// `task_numa_fault()`.
    pub fn hint_fault(
        &mut self,
        mm: &mut Mm,
        g: usize,
        writable: bool,
        shared: bool,
    ) -> HintFaultEffect {
        let site = FaultSite {
            writable,
            shared,
            ..self
                .fault_site
                .expect("a hinting fault follows its task's tick")
        };
        let NumaSched {
            state,
            topo,
            variant,
            ..
        } = &mut self.sched;
        let curr_buf = &self.curr_buf;
        let f = state.numa_hint_fault(mm, g, &site, topo, variant, |c| curr_buf[c]);
        HintFaultEffect {
            migrated: f.migrated_to.is_some(),
            attempt_migrate: f.attempt_migrate,
            placement_changed: f.placement.preferred_changed,
        }
    }

    /// Take `task_numa_migrate(p)`'s decision `d` (`rss_pages`: `p`'s mm): `sched_setnuma()`,
    /// the scan-period reset, and the `numa_migrate_on` claim — held for a move or a swap
    /// until the engine's stopper is done, released at once when nothing moves.
    pub fn take_decision(&mut self, p: TaskId, d: &NumaMigrateDecision, rss_pages: u64) {
        let params = self.params;
        let t = &mut self.sched.state.tasks[p.idx()];
        if let Some(nid) = d.set_preferred {
            t.preferred_nid = Some(nid);
        }
        match d.action {
            NumaMove::Move { .. } | NumaMove::Swap { .. } => {
                if d.reset_scan_period {
                    t.numa_scan_period_ms = scan_ms_u32(task_scan_min(&params, rss_pages));
                }
                // task_numa_assign() took the claim; it is held until the stopper is done.
                if let Some(c) = d.claimed_cpu {
                    self.sched.state.set_numa_migrate_on(c, true);
                }
            }
            NumaMove::Stay | NumaMove::NoNumaDomain => {
                if let Some(c) = d.claimed_cpu {
                    self.sched.state.set_numa_migrate_on(c, false);
                }
            }
        }
    }
}
