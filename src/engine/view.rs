//! The engine's implementation of the policy's read-only [`CoreView`]: a borrow of the clock,
//! the machine, the cost model and the task and CPU vectors, built afresh for every policy
//! call. Every accessor is one field read (inlined within the engine's crate).

use super::{CpuCore, Task};
use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::policy::CoreView;
use crate::task::{TaskId, TaskPolicy};
use crate::topology::Machine;

/// What a policy sees of the engine during one call.
pub(crate) struct EngineView<'a> {
    pub now_ns: u64,
    pub machine: &'a Machine,
    pub cost: &'a CostModel,
    pub tasks: &'a [Task],
    pub cpus: &'a [CpuCore],
}

impl CoreView for EngineView<'_> {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.now_ns
    }
    #[inline]
    fn machine(&self) -> &Machine {
        self.machine
    }
    #[inline]
    fn cost(&self) -> &CostModel {
        self.cost
    }
    #[inline]
    fn task_cpu(&self, p: TaskId) -> usize {
        self.tasks[p.idx()].cpu
    }
    #[inline]
    fn task_cpus_allowed(&self, p: TaskId) -> &CpuMask {
        &self.tasks[p.idx()].cpus_allowed
    }
    #[inline]
    fn task_nice(&self, p: TaskId) -> i8 {
        self.tasks[p.idx()].nice
    }
    #[inline]
    fn task_policy(&self, p: TaskId) -> TaskPolicy {
        self.tasks[p.idx()].policy
    }
    #[inline]
    fn cpu_curr(&self, cpu: usize) -> Option<TaskId> {
        self.cpus[cpu].curr
    }
    #[inline]
    fn cpu_ttwu_pending(&self, cpu: usize) -> bool {
        self.cpus[cpu].ttwu_pending()
    }
    #[inline]
    fn cpu_ttwu_pending_seen(&self, cpu: usize, reader: usize) -> bool {
        self.cpus[cpu].ttwu_pending_seen_at(self.now_ns, reader)
    }
    #[inline]
    fn cpu_avg_idle_ns(&self, cpu: usize) -> u64 {
        self.cpus[cpu].avg_idle_ns
    }
    #[inline]
    fn cpu_idle_stamp_ns(&self, cpu: usize) -> u64 {
        self.cpus[cpu].idle_stamp_ns
    }
    #[inline]
    fn cpu_is_idle_task(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        c.curr.is_none() && !c.switching_to_idle && !c.ttwu_pending()
    }
    #[inline]
    fn cpu_is_idle_task_seen(&self, cpu: usize, reader: usize) -> bool {
        let c = &self.cpus[cpu];
        c.curr.is_none() && !c.switching_to_idle && !c.ttwu_pending_seen_at(self.now_ns, reader)
    }
    #[inline]
    fn cpu_idle_state(&self, cpu: usize) -> usize {
        self.cpus[cpu].idle_state
    }
}
