//! `rq->cfs_tasks` per CPU with the NUMA counters the kernel keeps beside it:
//! `account_entity_enqueue()` adds a task to the list and calls `account_numa_enqueue()`
//! (`rq->nr_numa_running += preferred node set`, `rq->nr_preferred_running += preferred node
//! == the rq's node`), `account_entity_dequeue()` removes it and calls
//! `account_numa_dequeue()`; `sched_setnuma()` changes `p->numa_preferred_nid` between a
//! dequeue and an enqueue, so a queued task is re-accounted
//! ([`CfsTaskLists::set_preferred_nid`], called by the engine's NUMA tick through
//! `SchedPolicy::numa_preferred_nid_changed`).
//!
//! The load balancer reads the counters per CPU in O(1) instead of counting the list
//! (a simulator speed-up; the counts are the same — checked against a recount of the list
//! under `debug_assertions`).

use crate::sched::numa::locality::RqNumaCounters;
use crate::task::TaskId;

/// No CPU: the task is on no `cfs_tasks` list.
const NOT_LISTED: u32 = u32::MAX;

/// The per-CPU `cfs_tasks` lists (least recently run first) and NUMA counters.
#[derive(Clone, Debug)]
pub struct CfsTaskLists {
    lists: Vec<Vec<TaskId>>,
    numa: Vec<RqNumaCounters>,
    /// `cpu_to_node()` per CPU.
    node: Vec<usize>,
    /// Per task: `p->numa_preferred_nid` as last reported (`None` = NUMA_NO_NODE, the
    /// initial value of every task).
    preferred: Vec<Option<usize>>,
    /// Per task: the CPU whose list holds it, or [`NOT_LISTED`].
    listed_on: Vec<u32>,
}

impl CfsTaskLists {
    /// Empty lists for CPUs on nodes `node[cpu]`.
    pub fn new(node: Vec<usize>) -> CfsTaskLists {
        let nr = node.len();
        CfsTaskLists {
            lists: vec![Vec::new(); nr],
            numa: vec![RqNumaCounters::default(); nr],
            node,
            preferred: Vec::new(),
            listed_on: Vec::new(),
        }
    }

    fn grow(&mut self, p: TaskId) {
        if self.listed_on.len() <= p.idx() {
            self.listed_on.resize(p.idx() + 1, NOT_LISTED);
            self.preferred.resize(p.idx() + 1, None);
        }
    }

    /// The tasks of `cpu`'s list, least recently run first.
    pub fn list(&self, cpu: usize) -> &[TaskId] {
        &self.lists[cpu]
    }

    /// `list_add()` + `account_numa_enqueue()`: `p` joins `cpu`'s list at the most
    /// recently run end.
    pub fn add(&mut self, cpu: usize, p: TaskId) {
        self.grow(p);
        debug_assert_eq!(self.listed_on[p.idx()], NOT_LISTED, "{p:?} listed twice");
        self.lists[cpu].push(p);
        self.listed_on[p.idx()] = crate::units::cpu_u32(cpu);
        self.numa[cpu].enqueue(self.preferred[p.idx()], self.node[cpu]);
    }

    /// `list_del()` + `account_numa_dequeue()`: `p` leaves `cpu`'s list, if it is on it.
    pub fn remove(&mut self, cpu: usize, p: TaskId) {
        let list = &mut self.lists[cpu];
        if let Some(i) = list.iter().position(|&q| q == p) {
            list.remove(i);
            self.listed_on[p.idx()] = NOT_LISTED;
            self.numa[cpu].dequeue(self.preferred[p.idx()], self.node[cpu]);
        }
    }

    /// `list_move()` to the most recently run end (no accounting change).
    pub fn move_to_tail(&mut self, cpu: usize, p: TaskId) {
        let list = &mut self.lists[cpu];
        if let Some(i) = list.iter().position(|&q| q == p) {
            list.remove(i);
            list.push(p);
        }
    }

    /// `sched_setnuma(p, nid)`: re-account `p` on the CPU whose list holds it. Returns
    /// that CPU (its counters changed) or `None`.
    pub fn set_preferred_nid(&mut self, p: TaskId, nid: Option<usize>) -> Option<usize> {
        self.grow(p);
        let old = std::mem::replace(&mut self.preferred[p.idx()], nid);
        let cpu = self.listed_on[p.idx()];
        if cpu == NOT_LISTED || old == nid {
            return None;
        }
        let cpu = cpu as usize;
        self.numa[cpu].dequeue(old, self.node[cpu]);
        self.numa[cpu].enqueue(nid, self.node[cpu]);
        Some(cpu)
    }

    /// `p->numa_preferred_nid` as last reported (`None` = NUMA_NO_NODE).
    pub fn preferred_nid(&self, p: TaskId) -> Option<usize> {
        self.preferred.get(p.idx()).copied().flatten()
    }

    /// (`rq->nr_numa_running`, `rq->nr_preferred_running`) of `cpu`.
    pub fn numa_counts(&self, cpu: usize) -> (u32, u32) {
        let c = &self.numa[cpu];
        (c.nr_numa_running, c.nr_preferred_running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recount(l: &CfsTaskLists, cpu: usize) -> (u32, u32) {
        let mut c = RqNumaCounters::default();
        for p in l.list(cpu) {
            c.enqueue(l.preferred[p.idx()], l.node[cpu]);
        }
        (c.nr_numa_running, c.nr_preferred_running)
    }

    /// Adds, removes, rotations and preferred-node changes of listed and unlisted tasks
    /// keep every CPU's counters equal to a recount of its list.
    #[test]
    fn counters_follow_list_and_preferred_node_changes() {
        let mut l = CfsTaskLists::new(vec![0, 0, 1, 1]);
        let t = |i: u32| TaskId(i);
        l.add(0, t(0));
        l.add(0, t(1));
        l.add(2, t(2));
        assert_eq!(l.set_preferred_nid(t(0), Some(0)), Some(0));
        assert_eq!(l.numa_counts(0), (1, 1));
        assert_eq!(l.set_preferred_nid(t(1), Some(1)), Some(0));
        assert_eq!(l.numa_counts(0), (2, 1));
        // Not listed: only remembered, accounted when it is added.
        assert_eq!(l.set_preferred_nid(t(3), Some(1)), None);
        l.add(3, t(3));
        assert_eq!(l.numa_counts(3), (1, 1));
        l.move_to_tail(0, t(0));
        assert_eq!(l.list(0), &[t(1), t(0)]);
        l.remove(0, t(1));
        assert_eq!(l.numa_counts(0), (1, 1));
        // Removing a task that is not on the list changes nothing.
        l.remove(0, t(2));
        assert_eq!(l.numa_counts(0), (1, 1));
        l.add(2, t(1));
        assert_eq!(l.numa_counts(2), (1, 1));
        assert_eq!(l.preferred_nid(t(3)), Some(1));
        assert_eq!(l.set_preferred_nid(t(1), None), Some(2));
        assert_eq!(l.numa_counts(2), (0, 0));
        // Every task starts at NUMA_NO_NODE, also one the lists never saw.
        assert_eq!(l.preferred_nid(t(1)), None);
        assert_eq!(l.preferred_nid(t(99)), None);
        for cpu in 0..4 {
            assert_eq!(l.numa_counts(cpu), recount(&l, cpu), "CPU {cpu}");
        }
    }
}
