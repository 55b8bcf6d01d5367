//! Where a task's pages live: the node choice of mm/mempolicy.c at the task's first touch.
//!
//! A task touches its memory when it first runs; its pages go where its memory policy
//! (`TaskSpec::mempolicy`) puts them:
//! - MPOL_LOCAL: the node of the CPU it runs on (first touch).
//! - MPOL_BIND: the nearest node of the set to the running node (the local node when it is in
//!   the set): the allocation walks the local node's zonelist, ordered by distance, filtered
//!   by the nodemask (`policy_nodemask()` + `__alloc_pages()`); ties go to the lower node id,
//!   as `build_zonelists()` orders equal distances.
//! - MPOL_PREFERRED: the preferred node.
//! - MPOL_INTERLEAVE: evenly over the set (`interleave_nodes()` round-robin per page).
//!
//! Approximations (with reasons): all of a task's memory is placed at once, at its first run
//! (the workloads touch their buffers at start); nodes never run out of memory, so
//! MPOL_PREFERRED never falls back and MPOL_BIND never fails; threads of one process do not
//! share pages (each task has its own). Pages never move until NUMA balancing moves them.
//!
//! The node choice itself is `memory::policy::alloc_node()` (one place for mm/mempolicy.c's
//! allocation rule, shared with the page-group memory model); this module only turns it into
//! the per-task page shares the speed model reads.

use crate::memory::policy::alloc_node;
use crate::task::MemPolicy;
use crate::topology::Machine;

/// Page shares per node (index = node id) of a task first touching its memory on
/// `cpu_node` under `policy`: one share on the node `alloc_node()` picks; for interleave one
/// share per node of the set (interleave indices 0..set size, `interleave_nid()`'s
/// round-robin over equally many pages).
pub fn first_touch_pages(policy: MemPolicy, cpu_node: usize, machine: &Machine) -> Vec<u32> {
    let nr = machine.nr_nodes();
    let mut pages = vec![0u32; nr];
    let ilx_count = match policy {
        MemPolicy::Interleave { nodes } => (0..nr.min(64))
            .filter(|&n| nodes & (1 << n) != 0)
            .count()
            .max(1) as u64,
        _ => 1,
    };
    for ilx in 0..ilx_count {
        pages[alloc_node(policy, cpu_node, ilx, &machine.node_distance)] += 1;
    }
    pages
}

/// Percentage of `pages` on `node` (0 for no pages).
pub fn pages_on_node_pct(pages: &[u32], node: usize) -> f64 {
    let total: u64 = pages.iter().map(|&p| u64::from(p)).sum();
    if total == 0 {
        return 0.0;
    }
    100.0 * f64::from(pages.get(node).copied().unwrap_or(0)) / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::CpuTopology;

    /// 4 nodes in a ring: 0-1-2-3-0 at distance 20, opposite nodes at 30.
    fn ring4() -> Machine {
        let cpus = (0..4)
            .map(|cpu| CpuTopology {
                cpu,
                core: cpu,
                cluster: cpu,
                llc: cpu,
                package: cpu,
                node: cpu,
                capacity: 1024,
            })
            .collect();
        let d = vec![
            vec![10, 20, 30, 20],
            vec![20, 10, 20, 30],
            vec![30, 20, 10, 20],
            vec![20, 30, 20, 10],
        ];
        Machine::new("ring4", "", cpus, d).unwrap()
    }

    #[test]
    fn bind_takes_local_node_when_bound_else_nearest() {
        let m = ring4();
        let bind = |nodes| MemPolicy::Bind { nodes };
        assert_eq!(first_touch_pages(bind(0b0110), 2, &m), vec![0, 0, 1, 0]);
        // From node 0, nodes 1 and 3 are both at 20: the lower id wins; node 2 (30) never.
        assert_eq!(first_touch_pages(bind(0b1110), 0, &m), vec![0, 1, 0, 0]);
        assert_eq!(first_touch_pages(bind(0b1100), 0, &m), vec![0, 0, 0, 1]);
    }

    #[test]
    fn local_preferred_interleave() {
        let m = ring4();
        assert_eq!(first_touch_pages(MemPolicy::Local, 3, &m), vec![0, 0, 0, 1]);
        assert_eq!(
            first_touch_pages(MemPolicy::Preferred { node: 1 }, 3, &m),
            vec![0, 1, 0, 0]
        );
        let il = first_touch_pages(MemPolicy::Interleave { nodes: 0b1011 }, 2, &m);
        assert_eq!(il, vec![1, 1, 0, 1]);
        assert!((pages_on_node_pct(&il, 0) - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(pages_on_node_pct(&il, 2), 0.0);
        // Nodes the machine lacks are not in the interleave set; a set of none, or a
        // preferred node that does not exist, falls back to local (alloc_node's rule).
        let il = first_touch_pages(MemPolicy::Interleave { nodes: 0b10_0101 }, 1, &m);
        assert_eq!(il, vec![1, 0, 1, 0]);
        assert_eq!(
            first_touch_pages(MemPolicy::Interleave { nodes: 0b1_0000 }, 1, &m),
            vec![0, 1, 0, 0]
        );
        assert_eq!(
            first_touch_pages(MemPolicy::Preferred { node: 7 }, 2, &m),
            vec![0, 0, 1, 0]
        );
    }
}
