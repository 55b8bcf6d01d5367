//! Automatic NUMA balancing, the scheduler side (`kernel/sched/fair.c`, `CONFIG_NUMA_BALANCING`):
//! fault statistics, preferred-node placement, numa_groups, scan-rate control, the task
//! mover (`task_numa_migrate`) and the load balancer's NUMA predicates — each as decisions
//! computed from a constructed state, with the historical variants as switches.
//!
//! One file per mechanism, named as the kernel names it:
//! - [`faults`]: `task_numa_fault()` — the per-task `numa_faults` array (MEM/CPU × buffer ×
//!   node × private/shared), private/shared classification via `last_cpupid`, the
//!   group-local override, and `should_numa_migrate_memory()` (the two-stage filter);
//! - [`group`]: `struct numa_group`, `task_numa_group()` joins, active nodes
//!   (`numa_group_count_active_nodes()`, v4.6+, and the 3.15–4.5 hysteresis mask);
//! - [`weight`]: `task_weight()` / `group_weight()` / `score_nearby_nodes()` and the NUMA
//!   topology type (`init_numa_topology_type()`: DIRECT, GLUELESS_MESH, BACKPLANE);
//! - [`placement`]: `task_numa_placement()` (decay, preferred node) and
//!   `preferred_group_nid()`;
//! - [`scan`]: `task_tick_numa()`, `task_numa_work()`, `task_scan_min/start/max()`,
//!   `update_task_scan_period()`, `update_scan_period()`;
//! - [`migrate`]: `update_numa_stats()`, `numa_classify()`, `load_too_imbalanced()`,
//!   `numa_has_capacity()`, `task_numa_compare()`, `task_numa_find_cpu()`,
//!   `task_numa_migrate()`, `numa_migrate_preferred()` — the move / swap / stay decision;
//! - [`locality`]: the load balancer's side — `migrate_improves_locality()` /
//!   `migrate_degrades_locality()` (v3.x pair with NUMA_FAVOUR_HIGHER / NUMA_RESIST_LOWER,
//!   and the v4.3+ tri-state), `fbq_classify_*` on per-rq NUMA counters,
//!   `account_numa_enqueue/dequeue`;
//! - [`state`]: the whole run's NUMA state, the hinting-fault path (`do_numa_page()` +
//!   `task_numa_fault()`) and the /proc/vmstat counters they bump (`sched::types::Vmstat`);
//! - [`features`]: the variant switches, each with the commit it mirrors and its history
//!   over releases ([`NumaVariant::for_version`]).
//!
//! Everything reads machine and runqueue state through [`NumaEnv`], so each decision is
//! testable on a constructed state (`fake::FakeNumaEnv`, test builds only). Memory itself (pages per node,
//! first touch, page migration, bandwidth) is in the bottom-layer `crate::memory`.
//!
//! Wired into runs from above (the policy layer's NUMA-balancing state, which the engine's
//! NUMA hooks report to for tasks with a declared working set, and the fair class's `NumaEnv`
//! implementation); this module names neither. See
//! docs/numa.md, "Phase 2: status".

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

#[cfg(test)]
pub mod fake;
pub mod faults;
pub mod features;
pub mod group;
pub mod locality;
pub mod migrate;
pub mod placement;
pub mod scan;
pub mod state;
pub mod weight;

#[cfg(test)]
mod tests;

use crate::cpumask::CpuMask;
use crate::task::TaskId;

pub use faults::{NumaFaults, TaskNuma};
pub use features::NumaVariant;
pub use group::{NumaGroup, NumaGroupId, NumaGroups};
pub use weight::{NumaTopo, NumaTopologyType};

/// `LOCAL_DISTANCE`.
pub const LOCAL_DISTANCE: u32 = 10;

/// The shape of the NUMA-balancing code in a kernel era, for the differences no switch
/// names (statistics layout, comparison details). The decisions the investigations compare
/// are switches in [`NumaVariant`]; the form only selects which release's text the shared
/// parts follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NumaForm {
    /// v3.13–v3.17: capacity-normalised node load, `task_capacity = round(capacity/1024)`,
    /// `imp = groupimp > 0 ? groupimp : taskimp`, no move-instead-of-swap, no distance
    /// weighting, `NUMA_PERIOD_THRESHOLD` 3.
    V3_13,
    /// v3.18–v4.18: raw load with capacity in `load_too_imbalanced`, `task_capacity` =
    /// cores, move-instead-of-swap (`moveimp`), `select_idle_sibling` for idle targets,
    /// `score_nearby_nodes` (v4.0), `NUMA_PERIOD_THRESHOLD` 7, scan period reset to
    /// `task_scan_min` on every NUMA move.
    V3_18,
    /// v4.19–v5.6 (Srikar Dronamraju's 2018 series): no `task_capacity`, `maymove`,
    /// `SMALLIMP`, `numa_migrate_on`, strict `load_too_imbalanced`, placement only at retry
    /// expiry, early-life page migration, `update_scan_period()` on every cross-node move.
    V4_19,
    /// v5.7+ (Mel Gorman's reconciliation with the load balancer): CFS-only counts,
    /// util/runnable, cached idle CPU. The node-type decisions themselves are the
    /// `NUMA_CLASSIFY` switch.
    V5_7,
}

/// What the NUMA-balancing decisions read from the machine, the runqueues and the tasks —
/// the kernel's `struct rq`, `struct task_struct` and `struct numa_group` as fair.c's NUMA
/// code reads them. Loads are PELT averages as in [`crate::sched::balance::LbEnv`].
pub trait NumaEnv {
    /// Nodes, distances, CPUs per node, topology type.
    fn topo(&self) -> &NumaTopo;

    // ---- per CPU ----

    /// `rq->nr_running` (all classes).
    fn nr_running(&self, cpu: usize) -> u32;
    /// `rq->cfs.h_nr_queued` (CFS tasks; v5.7+ `update_numa_stats`).
    fn h_nr_running(&self, cpu: usize) -> u32;
    /// `cpu_load(rq)` / `weighted_cpuload()`.
    fn cpu_load(&self, cpu: usize) -> u64;
    /// `cpu_runnable(rq)`.
    fn cpu_runnable(&self, cpu: usize) -> u64;
    /// `cpu_util_cfs(cpu)`.
    fn cpu_util(&self, cpu: usize) -> u64;
    /// `capacity_of(cpu)`.
    fn capacity_of(&self, cpu: usize) -> u64;
    /// `idle_cpu(cpu)`.
    fn idle_cpu(&self, cpu: usize) -> bool;
    /// `is_core_idle(cpu)`: every SMT sibling idle. Default true (no SMT).
    fn is_core_idle(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu)
    }
    /// `sched_smt_present`. Default false.
    fn smt_present(&self) -> bool {
        false
    }
    /// CPUs in `cpu`'s SMT sibling group (the SMT domain's `span_weight`; 1 without SMT).
    /// Default 1.
    fn smt_weight(&self, _cpu: usize) -> u32 {
        1
    }
    /// `rq->curr` when it is a task (not the idle task).
    fn curr(&self, cpu: usize) -> Option<TaskId>;
    /// `rq->numa_migrate_on`: a NUMA migration to this rq is pending (v4.19+). Default false.
    fn numa_migrate_on(&self, _cpu: usize) -> bool {
        false
    }
    /// `(sd_numa->imbalance_pct, sd_numa->imb_numa_nr)` of `cpu`'s lowest SD_NUMA domain;
    /// `None` when it has none (cpuset-isolated).
    fn sd_numa(&self, cpu: usize) -> Option<(u32, u32)>;
    /// `select_idle_sibling(p, prev, target)` (v3.18–v4.18 idle NUMA targets). Default:
    /// `target`.
    fn select_idle_sibling(&self, _p: TaskId, _prev: usize, target: usize) -> usize {
        target
    }

    // ---- per task ----

    /// `task_cpu(p)`.
    fn task_cpu(&self, p: TaskId) -> usize;
    /// `p->cpus_ptr`.
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask;
    /// `task_h_load(p)`.
    fn task_h_load(&self, p: TaskId) -> u64;
    /// The task's NUMA state (`numa_faults`, `numa_preferred_nid`, group, scan state).
    fn task_numa(&self, p: TaskId) -> &TaskNuma;
    /// A numa_group.
    fn numa_group(&self, g: NumaGroupId) -> &NumaGroup;
    /// `PF_EXITING`. Default false.
    fn is_exiting(&self, _p: TaskId) -> bool {
        false
    }

    // ---- derived ----

    /// `cpu_to_node(cpu)`.
    fn cpu_to_node(&self, cpu: usize) -> usize {
        self.topo().cpu_node[cpu]
    }
    /// `task_node(p)`.
    fn task_node(&self, p: TaskId) -> usize {
        self.cpu_to_node(self.task_cpu(p))
    }
    /// `p->numa_group` resolved.
    fn group_of(&self, p: TaskId) -> Option<&NumaGroup> {
        self.task_numa(p).group.map(|g| self.numa_group(g))
    }
}
