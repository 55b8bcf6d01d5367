//! Node scores for placement: `task_weight()`, `group_weight()`, `score_nearby_nodes()`, and
//! the NUMA topology classification they depend on (`init_numa_topology_type()`,
//! kernel/sched/topology.c).
//!
//! `task_weight(p, nid, dist) = 1000 × (task_faults(nid) + nearby) / total_numa_faults`
//! (0..1000; 0 without statistics), `group_weight` the same over the group. The nearby
//! term (Rik van Riel's "numa placement on complex topologies", ~v4.0 `[M]`) is 0 on
//! NUMA_DIRECT machines (every 2-socket box) and absent in the v3.13–v3.17 form.

use super::faults::TaskNuma;
use super::{LOCAL_DISTANCE, NumaForm, NumaGroup};
use crate::cpumask::CpuMask;
use crate::topology::Machine;

/// `enum numa_topology_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaTopologyType {
    /// At most two distinct distances (local and one remote): all nodes directly connected.
    Direct,
    /// Some node is closer than the maximum distance to both of two farthest nodes.
    GluelessMesh,
    /// Farthest nodes have no common closer neighbour (node groups behind a backplane).
    Backplane,
}

/// The machine as NUMA balancing sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaTopo {
    /// `node_distance()`.
    pub distance: Vec<Vec<u32>>,
    /// `cpu_to_node()`.
    pub cpu_node: Vec<usize>,
    /// `cpumask_of_node()`.
    pub node_cpus: Vec<CpuMask>,
    /// `sched_numa_topology_type`.
    pub topology_type: NumaTopologyType,
    /// `sched_max_numa_distance`.
    pub max_distance: u32,
}

impl NumaTopo {
    pub fn new(distance: Vec<Vec<u32>>, cpu_node: Vec<usize>) -> NumaTopo {
        let nr = distance.len();
        let mut node_cpus = vec![CpuMask::default(); nr];
        for (cpu, &n) in cpu_node.iter().enumerate() {
            node_cpus[n].set(cpu);
        }
        let topology_type = init_numa_topology_type(&distance);
        let max_distance = distance
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or(LOCAL_DISTANCE);
        NumaTopo {
            distance,
            cpu_node,
            node_cpus,
            topology_type,
            max_distance,
        }
    }

    pub fn from_machine(m: &Machine) -> NumaTopo {
        NumaTopo::new(
            m.node_distance.clone(),
            m.cpus.iter().map(|c| c.node).collect(),
        )
    }

    pub fn nr_nodes(&self) -> usize {
        self.distance.len()
    }

    /// `node_distance(a, b)`.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.distance[a][b]
    }

    /// `find_numa_distance(d)`: some pair of nodes is exactly `d` apart.
    pub fn find_numa_distance(&self, d: u32) -> bool {
        self.distance.iter().flatten().any(|&x| x == d)
    }
}

/// `init_numa_topology_type()`: DIRECT with at most two distinct distances (counting the
/// local one); otherwise GLUELESS_MESH if some node is closer than the maximum to both of
/// the first pair of farthest nodes, else BACKPLANE.
pub fn init_numa_topology_type(distance: &[Vec<u32>]) -> NumaTopologyType {
    let mut levels: Vec<u32> = distance.iter().flatten().copied().collect();
    levels.sort_unstable();
    levels.dedup();
    if levels.len() <= 2 {
        return NumaTopologyType::Direct;
    }
    let n = *levels.last().expect("non-empty");
    let nr = distance.len();
    for a in 0..nr {
        for b in 0..nr {
            if distance[a][b] < n {
                continue;
            }
            if (0..nr).any(|c| distance[a][c] < n && distance[b][c] < n) {
                return NumaTopologyType::GluelessMesh;
            }
            return NumaTopologyType::Backplane;
        }
    }
    NumaTopologyType::Direct
}

/// `score_nearby_nodes(p, nid, lim_dist, task)`: faults on nodes near `nid` — all nodes
/// closer than the maximum distance; on BACKPLANE only those closer than `lim_dist`; on
/// GLUELESS_MESH scaled by `(max − d) / (max − LOCAL_DISTANCE)`. `faults(n)` gives the task
/// or group faults of node n.
pub fn score_nearby_nodes(
    topo: &NumaTopo,
    nid: usize,
    lim_dist: u32,
    faults: impl Fn(usize) -> i64,
) -> i64 {
    if topo.topology_type == NumaTopologyType::Direct {
        return 0;
    }
    let max_dist = topo.max_distance;
    let mut score = 0;
    for node in 0..topo.nr_nodes() {
        let dist = topo.node_distance(nid, node);
        if dist >= max_dist || node == nid {
            continue;
        }
        if topo.topology_type == NumaTopologyType::Backplane && dist >= lim_dist {
            continue;
        }
        let mut f = faults(node);
        if topo.topology_type == NumaTopologyType::GluelessMesh {
            f *= i64::from(max_dist - dist);
            f /= i64::from(max_dist - LOCAL_DISTANCE);
        }
        score += f;
    }
    score
}

/// `task_weight(p, nid, dist)`: 0..1000.
pub fn task_weight(t: &TaskNuma, topo: &NumaTopo, nid: usize, dist: u32, form: NumaForm) -> i64 {
    let Some(f) = t.faults.as_ref() else {
        return 0;
    };
    if t.total_numa_faults == 0 {
        return 0;
    }
    let mut faults = f.task_faults(nid);
    if form >= NumaForm::V3_18 {
        faults += score_nearby_nodes(topo, nid, dist, |n| f.task_faults(n));
    }
    1000 * faults / t.total_numa_faults
}

/// `group_weight(p, nid, dist)`: 0..1000 (0 without a group).
pub fn group_weight(
    ng: Option<&NumaGroup>,
    topo: &NumaTopo,
    nid: usize,
    dist: u32,
    form: NumaForm,
) -> i64 {
    let Some(ng) = ng else {
        return 0;
    };
    if ng.total_faults == 0 {
        return 0;
    }
    let mut faults = ng.group_faults(nid);
    if form >= NumaForm::V3_18 {
        faults += score_nearby_nodes(topo, nid, dist, |n| ng.group_faults(n));
    }
    1000 * faults / ng.total_faults
}
