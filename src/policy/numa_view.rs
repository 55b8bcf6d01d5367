//! The Linux fair class's side of NUMA balancing: `NumaView` implements
//! [`NumaEnv`] over the fair runqueues (PELT sums, counts), the engine's [`CoreView`] and
//! the run's [`NumaSched`] (which the policy owns, [`super::numa_balancing`]), so
//! `task_numa_migrate()` decides on live state; and the load balancer's NUMA hooks
//! (`nr_numa_running`, `nr_preferred_running`, `migrate_degrades_locality`) computed from
//! the per-task `TaskNuma` state.
//!
//! Approximations: `select_idle_sibling()` for v3.18–v4.18 idle targets returns the target
//! itself (the default of [`NumaEnv`]). `rq->numa_migrate_on` is the run's
//! [`NumaState::numa_migrate_on`](crate::sched::numa::state::NumaState), held from a
//! v4.19+ decision until the engine's stopper work is done.

use super::CoreView;
use super::linux_rt::RtClass;
use crate::cpumask::CpuMask;
use crate::domains::SchedDomains;
use crate::sched::fair::{CfsRq, FairParams, SchedEntity};
use crate::sched::numa::locality::{LocalityCtx, can_migrate_locality};
use crate::sched::numa::state::NumaSched;
use crate::sched::numa::{NumaEnv, NumaGroup, NumaGroupId, NumaTopo, TaskNuma};
use crate::task::TaskId;

/// A read-only view of the fair class for `task_numa_migrate()`.
pub(crate) struct NumaView<'a> {
    pub core: &'a dyn CoreView,
    pub numa: &'a NumaSched,
    pub params: &'a FairParams,
    pub rqs: &'a [CfsRq],
    pub ents: &'a [SchedEntity],
    pub rt: &'a RtClass,
    pub domains: &'a SchedDomains,
}

impl NumaEnv for NumaView<'_> {
    fn topo(&self) -> &NumaTopo {
        &self.numa.topo
    }
    fn nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_queued() + self.rt.rqs[cpu].nr_running_visible()
    }
    fn h_nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_queued()
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_load()
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_runnable()
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_util_cfs(self.params)
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        let orig = self.core.machine().cpus[cpu].capacity as u64;
        self.rt.capacity_of(cpu, orig)
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.core.cpu_is_idle_task(cpu) && self.nr_running(cpu) == 0
    }
    fn smt_weight(&self, cpu: usize) -> u32 {
        crate::units::cpu_count_u32(self.core.machine().smt_mask(cpu).weight())
    }
    fn curr(&self, cpu: usize) -> Option<TaskId> {
        self.core.cpu_curr(cpu)
    }
    fn numa_migrate_on(&self, cpu: usize) -> bool {
        self.numa.state.numa_migrate_on(cpu)
    }
    fn sd_numa(&self, cpu: usize) -> Option<(u32, u32)> {
        self.domains.sd_numa(cpu).map(|d| {
            let d = self.domains.domain(d);
            (d.imbalance_pct, d.imb_numa_nr)
        })
    }
    fn task_cpu(&self, p: TaskId) -> usize {
        self.core.task_cpu(p)
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        self.core.task_cpus_allowed(p)
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.ents.get(p.idx()).map_or(0, |e| e.avg.load_avg)
    }
    fn task_numa(&self, p: TaskId) -> &TaskNuma {
        &self.numa.state.tasks[p.idx()]
    }
    fn numa_group(&self, g: NumaGroupId) -> &NumaGroup {
        self.numa.state.groups.get(g)
    }
}

/// `(nr_numa_running, nr_preferred_running)` of `cpu` whose queued CFS tasks are `tasks`;
/// (0, 0) without NUMA balancing. A recount of the list: the policy keeps the counters
/// ([`super::cfs_tasks::CfsTaskLists`]) and checks them against this in debug builds.
#[cfg(debug_assertions)]
pub(crate) fn rq_numa_counts(numa: Option<&NumaSched>, cpu: usize, tasks: &[TaskId]) -> (u32, u32) {
    match numa {
        Some(n) if n.balancing => n.rq_numa_counts(tasks, n.topo.cpu_node[cpu]),
        _ => (0, 0),
    }
}

/// The balancer's `migrate_degrades_locality()` answer (> 0 degrades, < 0 improves, 0
/// neutral) in the run's variant form, from `p`'s fault statistics; 0 without balancing.
pub(crate) fn lb_locality(
    numa: Option<&NumaSched>,
    p: TaskId,
    src: (usize, u32, u32),
    dst_cpu: usize,
    dst_idle: bool,
) -> i32 {
    let Some(n) = numa.filter(|n| n.balancing) else {
        return 0;
    };
    let Some(t) = n.state.tasks.get(p.idx()) else {
        return 0;
    };
    let (src_cpu, src_nr_running, src_nr_preferred_running) = src;
    let c = LocalityCtx {
        t,
        group: t.group.map(|g| n.state.groups.get(g)),
        topo: &n.topo,
        src_nid: n.topo.cpu_node[src_cpu],
        dst_nid: n.topo.cpu_node[dst_cpu],
        numa_enabled: true,
        sd_numa: true,
        src_nr_running,
        src_nr_preferred_running,
        dst_idle,
    };
    can_migrate_locality(&c, &n.variant).lb_env_value()
}
