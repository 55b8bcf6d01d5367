//! The NUMA-balancing state of a whole run and the hinting-fault path that ties the
//! mechanisms together: `do_numa_page()` (mm/memory.c: locality, `last_cpupid` exchange,
//! `mpol_misplaced()`, rate limit, `migrate_misplaced_folio()`) followed by
//! `task_numa_fault()` (fair.c: private/shared, group join, group-local override, placement
//! at retry expiry, accounting), plus the /proc/vmstat counters they bump
//! ([`Vmstat`], plain data in `sched::types`).
//!
//! The `Mm`s and the machine are the caller's (the engine's memory model, phase 2); this
//! state is what fair.c and the vmstat counters hold, kept by the policy for the run. After
//! [`NumaState::numa_hint_fault`] returns `attempt_migrate`, the policy runs
//! [`super::migrate::task_numa_migrate`] with a [`super::NumaEnv`] view of the machine and
//! this state; the decision (`sched::types::NumaMigrateDecision`) is applied to this state
//! and, for the task move, by the engine.

use super::faults::{
    FaultClass, HintFault, TNF_FAULT_LOCAL, TNF_MIGRATE_FAIL, TNF_MIGRATED, TNF_NO_GROUP,
    TNF_SHARED, TaskNuma, classify_fault, group_local, placement_due, should_numa_migrate_memory,
};
use super::group::RqCurr;
use super::migrate::{MigratePreferred, numa_migrate_preferred};
use super::placement::{Placement, PlacementCtx, task_numa_placement};
use super::scan::MmNuma;
use super::{NumaGroups, NumaTopo, NumaVariant};
use crate::memory::migrate::NodeRateLimit;
use crate::memory::policy::mpol_misplaced;
use crate::memory::{Mm, PAGES_PER_GROUP, cpu_pid_to_cpupid, cpupid_to_cpu};
use crate::sched::types::Vmstat;
use crate::task::{MemPolicy, TaskId};

/// Scheduler-side NUMA state: per task, per group, per mm, per node.
#[derive(Clone, Debug, Default)]
pub struct NumaState {
    /// By `TaskId`.
    pub tasks: Vec<TaskNuma>,
    pub groups: NumaGroups,
    /// By `MmId`.
    pub mms: Vec<MmNuma>,
    /// Per destination node (used when the variant has a rate limit).
    pub rate: Vec<NodeRateLimit>,
    pub vmstat: Vmstat,
    /// `rq->numa_migrate_on` by CPU (v4.19+): a NUMA move or swap to this rq was decided and
    /// has not completed yet (`task_numa_assign()` sets it, `task_numa_migrate()` clears it
    /// after `migrate_task_to()` / `migrate_swap()`). Empty = none held.
    pub numa_migrate_on: Vec<bool>,
}

/// Everything about the faulting task and CPU that the fault path needs from the caller.
#[derive(Clone, Copy, Debug)]
pub struct FaultSite {
    pub p: TaskId,
    pub cpu: usize,
    pub policy: MemPolicy,
    /// The page group is in a writable mapping (else `TNF_NO_GROUP`).
    pub writable: bool,
    /// The page group is in a `VM_SHARED` mapping of several mms (`TNF_SHARED`).
    pub shared: bool,
    /// The task's `se.exec_start` and `sum_exec_runtime`, for placement.
    pub exec_start_ns: u64,
    pub sum_exec_runtime_ns: u64,
    /// `task_scan_min/max(p)` for the placement's scan-period update.
    pub scan_min_ms: u64,
    pub scan_max_ms: u64,
    pub now_ns: u64,
    pub hz: u32,
}

/// What one hinting fault did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultOutcome {
    /// The page group moved to the faulting CPU's node.
    pub migrated_to: Option<usize>,
    /// A wanted migration was refused (rate limit).
    pub migrate_failed: bool,
    /// The fault was private after group processing.
    pub private: bool,
    pub placement: Placement,
    /// Call `task_numa_migrate(p)` now.
    pub attempt_migrate: bool,
}

impl NumaState {
    /// Hold (`on`) or release `rq->numa_migrate_on` of `cpu`.
    pub fn set_numa_migrate_on(&mut self, cpu: usize, on: bool) {
        if self.numa_migrate_on.len() <= cpu {
            self.numa_migrate_on.resize(cpu + 1, false);
        }
        self.numa_migrate_on[cpu] = on;
    }

    /// `READ_ONCE(rq->numa_migrate_on)`.
    pub fn numa_migrate_on(&self, cpu: usize) -> bool {
        self.numa_migrate_on.get(cpu).copied().unwrap_or(false)
    }

    /// A NUMA hinting fault by task `site.p` on page group `g` of `mm`. `curr_of` gives the
    /// task running on a CPU (for `task_numa_group()`), with its pid, mm and group.
    pub fn numa_hint_fault(
        &mut self,
        mm: &mut Mm,
        g: usize,
        site: &FaultSite,
        topo: &NumaTopo,
        v: &NumaVariant,
        curr_of: impl Fn(usize) -> Option<RqCurr>,
    ) -> FaultOutcome {
        let mut out = FaultOutcome::default();
        let this_nid = topo.cpu_node[site.cpu];
        let pg = mm.groups[g];
        let Some(page_nid) = pg.nid.map(usize::from) else {
            return out;
        };
        mm.groups[g].prot_none = false;
        let mut flags = self.count_hint_fault(site, page_nid == this_nid);
        let last_cpupid = pg.last_cpupid;
        let target = self.misplaced_target(mm, g, site, topo, v, page_nid);
        let mut mem_nid = page_nid;
        if let Some(dst) = target {
            let (moved, fault_flag) = self.migrate_misplaced(mm, g, dst, site, topo, v);
            flags |= fault_flag;
            if moved {
                mem_nid = dst;
                out.migrated_to = Some(dst);
            } else {
                out.migrate_failed = true;
            }
        }
        let fault = TaskFault {
            last_cpupid,
            this_nid,
            mem_nid,
            flags,
        };
        self.task_numa_fault(&fault, site, topo, v, curr_of, &mut out);
        out
    }

    /// The head of `do_numa_page()`: the `TNF_*` flags known before `mpol_misplaced()`
    /// (no-group, shared, local) and the `numa_hint_faults[_local]` counters.
    fn count_hint_fault(&mut self, site: &FaultSite, local: bool) -> u32 {
        let mut flags = 0;
        if !site.writable {
            flags |= TNF_NO_GROUP;
        }
        if site.shared {
            flags |= TNF_SHARED;
        }
        self.vmstat.numa_hint_faults += PAGES_PER_GROUP;
        if local {
            self.vmstat.numa_hint_faults_local += PAGES_PER_GROUP;
            flags |= TNF_FAULT_LOCAL;
        }
        flags
    }

    /// `mpol_misplaced()`: the node page group `g` should move to, if any;
    /// `should_numa_migrate_memory()` exchanges the group's `last_cpupid` on the way.
    fn misplaced_target(
        &self,
        mm: &mut Mm,
        g: usize,
        site: &FaultSite,
        topo: &NumaTopo,
        v: &NumaVariant,
        page_nid: usize,
    ) -> Option<usize> {
        let this_nid = topo.cpu_node[site.cpu];
        let t = &self.tasks[site.p.idx()];
        let pid = t.pid;
        let ng = t.group.map(|id| self.groups.get(id));
        let page = &mut mm.groups[g];
        mpol_misplaced(
            site.policy,
            page_nid,
            this_nid,
            g as u64,
            &topo.distance,
            || {
                let last =
                    std::mem::replace(&mut page.last_cpupid, cpu_pid_to_cpupid(site.cpu, pid));
                should_numa_migrate_memory(t, ng, last, page_nid, this_nid, |c| topo.cpu_node[c], v)
            },
        )
    }

    /// `migrate_misplaced_folio()` of page group `g` to node `dst`, behind the variant's
    /// per-node rate limit. Returns whether it moved and the `TNF_*` flag to add.
    fn migrate_misplaced(
        &mut self,
        mm: &mut Mm,
        g: usize,
        dst: usize,
        site: &FaultSite,
        topo: &NumaTopo,
        v: &NumaVariant,
    ) -> (bool, u32) {
        let nr_nodes = topo.nr_nodes();
        let limited = match v.rate_limit {
            Some(limit) => {
                if self.rate.len() < nr_nodes {
                    self.rate.resize(nr_nodes, NodeRateLimit::default());
                }
                self.rate[dst].update(&limit, site.now_ns, PAGES_PER_GROUP)
            }
            None => false,
        };
        if limited {
            self.vmstat.pgmigrate_fail += PAGES_PER_GROUP;
            (false, TNF_MIGRATE_FAIL)
        } else {
            mm.move_group(g, dst);
            self.vmstat.numa_pages_migrated += PAGES_PER_GROUP;
            self.vmstat.pgmigrate_success += PAGES_PER_GROUP;
            (true, TNF_MIGRATED)
        }
    }

    /// `task_numa_fault(last_cpupid, mem_nid, pages, flags)`: private/shared (with the group
    /// join), the group-local override, placement and the migrate retry, then accounting.
    fn task_numa_fault(
        &mut self,
        f: &TaskFault,
        site: &FaultSite,
        topo: &NumaTopo,
        v: &NumaVariant,
        curr_of: impl Fn(usize) -> Option<RqCurr>,
        out: &mut FaultOutcome,
    ) {
        let nr_nodes = topo.nr_nodes();
        let (this_nid, mem_nid, flags) = (f.this_nid, f.mem_nid, f.flags);
        let t = &mut self.tasks[site.p.idx()];
        let pid = t.pid;
        if t.faults.is_none() {
            t.faults = Some(super::faults::NumaFaults::new(nr_nodes));
            t.faults_locality = [0; 3];
        }
        let private = match classify_fault(f.last_cpupid, pid, flags) {
            FaultClass::Private => true,
            FaultClass::Shared => false,
            FaultClass::SharedTryGroup => {
                let tsk = curr_of(cpupid_to_cpu(f.last_cpupid));
                self.groups
                    .task_numa_group(t, nr_nodes, this_nid, f.last_cpupid, flags, tsk)
            }
        };
        let ng = t.group.map(|id| self.groups.get(id));
        let local = group_local(
            private,
            flags & TNF_FAULT_LOCAL != 0,
            ng,
            this_nid,
            mem_nid,
            v,
        );
        let (run_placement, run_migrate) = placement_due(t, site.now_ns, v);
        if run_placement {
            let seq =
                t.mm.and_then(|m| self.mms.get(m.0 as usize))
                    .map_or(0, |m| m.numa_scan_seq);
            let ctx = PlacementCtx {
                mm_scan_seq: seq,
                exec_start_ns: site.exec_start_ns,
                sum_exec_runtime_ns: site.sum_exec_runtime_ns,
                first_runtime: (1, 1),
                scan_min_ms: site.scan_min_ms,
                scan_max_ms: site.scan_max_ms,
                task_node: this_nid,
                now_ns: site.now_ns,
            };
            out.placement = task_numa_placement(t, &mut self.groups, topo, &ctx, v);
            if let (Some(next), Some(m)) = (out.placement.numa_next_scan_ns, t.mm)
                && let Some(ms) = self.mms.get_mut(m.0 as usize)
            {
                ms.numa_next_scan_ns = next;
            }
        }
        // v4.19+: both at retry expiry; v3.x–v4.18: at retry expiry, and from inside
        // placement when it asks for it.
        let migrate_now = run_migrate || out.placement.migrate_now;
        if migrate_now {
            out.attempt_migrate = numa_migrate_preferred(t, this_nid, site.now_ns, site.hz)
                == MigratePreferred::Attempt;
        }
        out.private = private;
        t.account_fault(
            nr_nodes,
            &HintFault::new(mem_nid, this_nid, PAGES_PER_GROUP, flags),
            private,
            local,
        );
    }
}

/// What `do_numa_page()` hands to `task_numa_fault()`.
struct TaskFault {
    last_cpupid: u32,
    this_nid: usize,
    mem_nid: usize,
    flags: u32,
}

/// The scan parameters and clock of one tick.
#[derive(Clone, Copy, Debug)]
pub struct TickSite {
    pub p: TaskId,
    pub sum_exec_runtime_ns: u64,
    pub now_ns: u64,
    /// `vma_policy_mof()` of the task's memory policy.
    pub mof: bool,
    /// One jiffy in ns.
    pub tick_ns: u64,
}

impl NumaState {
    /// `task_tick_numa()` and, when it queues the work, `task_numa_work()` right away (the
    /// caller charges the scan cost; `numa_pte_updates` is counted here). Returns the work
    /// done, if it ran.
    pub fn tick(
        &mut self,
        mm: &mut Mm,
        site: &TickSite,
        params: &super::scan::ScanParams,
        v: &NumaVariant,
    ) -> Option<super::scan::NumaWork> {
        use super::scan::{
            task_numa_work, task_scan_max, task_scan_min, task_scan_start, task_tick_numa,
        };
        let t = &mut self.tasks[site.p.idx()];
        let mm_id = t.mm?;
        let idx = mm_id.0 as usize;
        if self.mms.len() <= idx {
            self.mms.resize(idx + 1, MmNuma::default());
        }
        let rss = mm.rss_pages();
        let ng = t.group.map(|g| self.groups.get(g));
        let start = if v.form >= super::NumaForm::V4_19 {
            task_scan_start(params, rss, ng, v)
        } else {
            task_scan_min(params, rss)
        };
        let max = task_scan_max(params, rss, ng, v);
        if !task_tick_numa(
            t,
            site.sum_exec_runtime_ns,
            site.now_ns,
            &self.mms[idx],
            start,
            v,
        ) {
            return None;
        }
        let w = task_numa_work(
            t,
            mm,
            &mut self.mms[idx],
            site.now_ns,
            params,
            site.mof,
            site.tick_ns,
            start,
            max,
        );
        self.vmstat.numa_pte_updates += w.pte_updates;
        Some(w)
    }
}

/// The scheduler-visible NUMA side of one run: the state, the machine's NUMA topology, the
/// variant, and whether balancing runs (`kernel.numa_balancing` normal bit on a multi-node
/// machine). The policy owns it (the fair class reads it for `task_numa_migrate()` and the
/// load balancer's NUMA hooks); the engine reports a memory-model task's ticks and hinting
/// faults to it through the policy and reaches none of it directly.
#[derive(Clone, Debug)]
pub struct NumaSched {
    pub state: NumaState,
    pub topo: NumaTopo,
    pub variant: NumaVariant,
    /// `sched_numa_balancing`: scanning, hinting faults, moves and the balancer's NUMA
    /// predicates run. Off: memory stays where first touch put it.
    pub balancing: bool,
}

impl NumaSched {
    /// `(rq->nr_numa_running, rq->nr_preferred_running)` of a CPU on `nid` whose queued CFS
    /// tasks (the running one included) are `tasks`: what `account_numa_enqueue()` /
    /// `account_numa_dequeue()` keep, counted on demand.
    pub fn rq_numa_counts(&self, tasks: &[TaskId], nid: usize) -> (u32, u32) {
        let mut c = super::locality::RqNumaCounters::default();
        for p in tasks {
            if let Some(t) = self.state.tasks.get(p.idx()) {
                c.enqueue(t.preferred_nid, nid);
            }
        }
        (c.nr_numa_running, c.nr_preferred_running)
    }
}
