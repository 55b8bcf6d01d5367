//! `struct numa_group`: tasks that share memory, with summed fault statistics, and how tasks
//! join one (`task_numa_group()`), leave one (`task_numa_free()`), and which nodes a group
//! actively uses.
//!
//! Active nodes, two forms:
//! - v3.15–v4.5 ([`NumaVariant::active_nodes_mask`]): a node mask with hysteresis —
//!   `update_numa_active_node_mask()` adds a node whose CPU-side faults exceed 6/16 of the
//!   busiest node's and drops one below 3/16;
//! - v4.6+: `numa_group_count_active_nodes()` counts nodes with
//!   `faults_cpu × ACTIVE_NODE_FRACTION > max_faults_cpu`, and `numa_is_active_node()`
//!   tests the same inequality, without hysteresis.
//!
//! Groups live in an arena ([`NumaGroups`]) indexed by [`NumaGroupId`]; ids are never reused,
//! and the kernel's "tie-break on the group address" compares ids.

use super::NumaVariant;
use super::faults::{NumaFaultsStats, TaskNuma};
use crate::memory::{MmId, cpupid_match_pid};

/// `ACTIVE_NODE_FRACTION` (v4.6+).
pub const ACTIVE_NODE_FRACTION: i64 = 3;

/// Index of a numa_group in [`NumaGroups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NumaGroupId(pub usize);

/// `struct numa_group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaGroup {
    /// `ng->gid`: the PID of the task that created it.
    pub gid: u32,
    /// `ng->nr_tasks`.
    pub nr_tasks: u32,
    pub nr_nodes: usize,
    /// `ng->faults`: MEM and CPU regions, `task_faults_idx()` layout.
    pub faults: Vec<i64>,
    /// `ng->total_faults`.
    pub total_faults: i64,
    /// `ng->max_faults_cpu` (v4.6+).
    pub max_faults_cpu: i64,
    /// `ng->active_nodes` (v4.6+ count).
    pub active_nodes: u32,
    /// `ng->active_nodes` (v3.15–v4.5 node mask).
    pub active_mask: u64,
}

impl NumaGroup {
    fn idx(&self, s: NumaFaultsStats, nid: usize, private: bool) -> usize {
        2 * (s as usize * self.nr_nodes + nid) + usize::from(private)
    }

    /// `group_faults(p, nid)`: MEM faults of the group on `nid`.
    pub fn group_faults(&self, nid: usize) -> i64 {
        self.faults[self.idx(NumaFaultsStats::Mem, nid, false)]
            + self.faults[self.idx(NumaFaultsStats::Mem, nid, true)]
    }

    /// `group_faults_cpu(ng, nid)`.
    pub fn group_faults_cpu(&self, nid: usize) -> i64 {
        self.faults[self.idx(NumaFaultsStats::Cpu, nid, false)]
            + self.faults[self.idx(NumaFaultsStats::Cpu, nid, true)]
    }

    /// `group_faults_priv(ng)`: private MEM faults over all nodes.
    pub fn group_faults_priv(&self) -> i64 {
        (0..self.nr_nodes)
            .map(|n| self.faults[self.idx(NumaFaultsStats::Mem, n, true)])
            .sum()
    }

    /// `group_faults_shared(ng)`.
    pub fn group_faults_shared(&self) -> i64 {
        (0..self.nr_nodes)
            .map(|n| self.faults[self.idx(NumaFaultsStats::Mem, n, false)])
            .sum()
    }

    /// Add `d` to the group's `s` (MEM or CPU) statistic.
    pub fn add(&mut self, s: NumaFaultsStats, nid: usize, private: bool, d: i64) {
        let i = self.idx(s, nid, private);
        self.faults[i] += d;
    }

    /// `numa_is_active_node(nid, ng)` (v4.6+), or `node_isset(nid, ng->active_nodes)`
    /// (v3.15–v4.5).
    pub fn is_active_node(&self, nid: usize, v: &NumaVariant) -> bool {
        if v.active_nodes_mask {
            self.active_mask & (1 << nid) != 0
        } else {
            self.group_faults_cpu(nid) * ACTIVE_NODE_FRACTION > self.max_faults_cpu
        }
    }

    /// Number of active nodes in either form.
    pub fn nr_active_nodes(&self, v: &NumaVariant) -> u32 {
        if v.active_nodes_mask {
            self.active_mask.count_ones()
        } else {
            self.active_nodes
        }
    }

    /// `numa_group_count_active_nodes()` (v4.6+).
    pub fn count_active_nodes(&mut self) {
        let max = (0..self.nr_nodes)
            .map(|n| self.group_faults_cpu(n))
            .max()
            .unwrap_or(0)
            .max(0);
        let active = (0..self.nr_nodes)
            .filter(|&n| self.group_faults_cpu(n) * ACTIVE_NODE_FRACTION > max)
            .count();
        self.max_faults_cpu = max;
        self.active_nodes = u32::try_from(active).expect("active nodes <= nr_nodes");
    }

    /// `update_numa_active_node_mask()` (v3.15–v4.5): add above 6/16 of the maximum, drop
    /// below 3/16.
    pub fn update_active_node_mask(&mut self) {
        let max = (0..self.nr_nodes)
            .map(|n| self.group_faults_cpu(n))
            .max()
            .unwrap_or(0)
            .max(0);
        for n in 0..self.nr_nodes {
            let f = self.group_faults_cpu(n);
            if self.active_mask & (1 << n) == 0 {
                if f > max * 6 / 16 {
                    self.active_mask |= 1 << n;
                }
            } else if f < max * 3 / 16 {
                self.active_mask &= !(1 << n);
            }
        }
    }

    /// Refresh the active nodes in the variant's form.
    pub fn update_active_nodes(&mut self, v: &NumaVariant) {
        if v.active_nodes_mask {
            self.update_active_node_mask();
        } else {
            self.count_active_nodes();
        }
    }
}

/// The arena of numa_groups.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NumaGroups {
    pub groups: Vec<NumaGroup>,
}

/// The task running on the CPU recorded in a page's `last_cpupid`, as `task_numa_group()`
/// sees it (`cpu_rq(cpupid_to_cpu(cpupid))->curr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqCurr {
    pub pid: u32,
    pub mm: Option<MmId>,
    pub group: Option<NumaGroupId>,
}

impl NumaGroups {
    pub fn get(&self, g: NumaGroupId) -> &NumaGroup {
        &self.groups[g.0]
    }

    pub fn get_mut(&mut self, g: NumaGroupId) -> &mut NumaGroup {
        &mut self.groups[g.0]
    }

    /// A singleton group for `t` holding a copy of its MEM and CPU statistics (the first
    /// branch of `task_numa_group()`). `cpu_node` seeds the 3.x active mask.
    pub fn create(&mut self, t: &mut TaskNuma, nr_nodes: usize, cpu_node: usize) -> NumaGroupId {
        let f = t
            .faults
            .get_or_insert_with(|| super::faults::NumaFaults::new(nr_nodes));
        let faults = f.v[..2 * nr_nodes * 2].to_vec();
        let id = NumaGroupId(self.groups.len());
        self.groups.push(NumaGroup {
            gid: t.pid,
            nr_tasks: 1,
            nr_nodes,
            faults,
            total_faults: t.total_numa_faults,
            max_faults_cpu: 0,
            active_nodes: 1,
            active_mask: 1 << cpu_node,
        });
        t.group = Some(id);
        id
    }

    /// Move `t`'s statistics from its group to `to` (the join half of `task_numa_group()`).
    fn move_task(&mut self, t: &mut TaskNuma, to: NumaGroupId) {
        let from = t.group.expect("joining task has a group");
        let f = t.faults.as_ref().expect("joining task has statistics");
        let n = 2 * self.groups[from.0].nr_nodes * 2;
        for i in 0..n {
            self.groups[from.0].faults[i] -= f.v[i];
            self.groups[to.0].faults[i] += f.v[i];
        }
        self.groups[from.0].total_faults -= t.total_numa_faults;
        self.groups[to.0].total_faults += t.total_numa_faults;
        self.groups[from.0].nr_tasks -= 1;
        self.groups[to.0].nr_tasks += 1;
        t.group = Some(to);
    }

    /// `task_numa_group(p, cpupid, flags, &priv)`: on a shared fault, create `t`'s group if
    /// it has none, then join the group of the task now running on the CPU that last
    /// touched the page if: that task's PID bits match `cpupid`, its group differs and is
    /// bigger (ties: the lower id wins), and it shares `t`'s mm or the fault is `TNF_SHARED`.
    /// Returns the fault's final `priv`: `true` when a join was possible but not justified
    /// (suspected false sharing), else `false`.
    pub fn task_numa_group(
        &mut self,
        t: &mut TaskNuma,
        nr_nodes: usize,
        cpu_node: usize,
        cpupid: u32,
        flags: u32,
        tsk: Option<RqCurr>,
    ) -> bool {
        if t.group.is_none() {
            self.create(t, nr_nodes, cpu_node);
        }
        let Some(tsk) = tsk else {
            return false;
        };
        if !cpupid_match_pid(tsk.pid, cpupid) {
            return false;
        }
        let Some(grp) = tsk.group else {
            return false;
        };
        let my = t.group.expect("created above");
        if grp == my {
            return false;
        }
        let (mine, theirs) = (self.get(my).nr_tasks, self.get(grp).nr_tasks);
        if mine > theirs || (mine == theirs && my > grp) {
            return false;
        }
        let join = (tsk.mm.is_some() && tsk.mm == t.mm) || flags & super::faults::TNF_SHARED != 0;
        if !join {
            return true;
        }
        self.move_task(t, grp);
        false
    }

    /// `task_numa_free()`: remove `t`'s statistics from its group and leave it.
    pub fn leave(&mut self, t: &mut TaskNuma) {
        let Some(g) = t.group.take() else {
            return;
        };
        if let Some(f) = t.faults.as_ref() {
            let n = 2 * self.groups[g.0].nr_nodes * 2;
            for i in 0..n {
                self.groups[g.0].faults[i] -= f.v[i];
            }
        }
        self.groups[g.0].total_faults -= t.total_numa_faults;
        self.groups[g.0].nr_tasks -= 1;
    }
}
