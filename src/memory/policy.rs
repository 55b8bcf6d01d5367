//! Memory policies at allocation (first touch) and at a NUMA hinting fault
//! (`mm/mempolicy.c`: `policy_nodemask()` / `interleave_nid()` for the former,
//! `mpol_misplaced()` for the latter).
//!
//! The default policy (no `set_mempolicy`/`mbind`, [`MemPolicy::Local`] here) is the kernel's
//! per-node `preferred_node_policy`: local allocation with `MPOL_F_MOF | MPOL_F_MORON`, i.e.
//! "migrate on fault, towards the node that references the page". Policies set by
//! `numactl --membind/--preferred/--interleave` carry neither flag, so NUMA balancing never
//! scans (`vma_policy_mof()` is false in `task_numa_work`) nor migrates their pages.
//! Approximation: an explicit `numactl --localalloc` is indistinguishable from the default
//! here and is treated as the default; `MPOL_F_NUMA_BALANCING` (v5.12+, `numactl
//! --balancing` with `--membind`) is not modelled.

use crate::task::MemPolicy;

/// Nodes of a node bitmask below `nr_nodes`, ascending.
fn nodes_of(mask: u64, nr_nodes: usize) -> impl Iterator<Item = usize> {
    (0..nr_nodes.min(64)).filter(move |&n| mask & (1 << n) != 0)
}

/// The node of `mask` nearest to `from` by SLIT distance (lowest id on ties, as
/// `build_zonelists()` orders equal distances); `from` itself when in the set.
pub fn nearest_node(mask: u64, from: usize, distance: &[Vec<u32>]) -> Option<usize> {
    nodes_of(mask, distance.len()).min_by_key(|&n| (distance[from][n], n))
}

/// `MPOL_F_MOF` and `MPOL_F_MORON` of a policy: (migrate-on-fault, migrate-on-reference).
pub fn policy_mof_moron(policy: MemPolicy) -> (bool, bool) {
    match policy {
        MemPolicy::Local => (true, true),
        _ => (false, false),
    }
}

/// `vma_policy_mof()`: NUMA balancing may scan memory under this policy.
pub fn vma_policy_mof(policy: MemPolicy) -> bool {
    policy_mof_moron(policy).0
}

/// The node a page is allocated on at first touch: the faulting CPU's node `cpu_node` under
/// the default policy; the nearest node of a bind set; the preferred node; for interleave the
/// `ilx`-th node of the set (`interleave_nid()`: page offset modulo the set size). A policy
/// naming no existing node falls back to local.
pub fn alloc_node(policy: MemPolicy, cpu_node: usize, ilx: u64, distance: &[Vec<u32>]) -> usize {
    let nr = distance.len();
    let chosen = match policy {
        MemPolicy::Local => Some(cpu_node),
        MemPolicy::Bind { nodes } => nearest_node(nodes, cpu_node, distance),
        MemPolicy::Preferred { node } if (node as usize) < nr => Some(node as usize),
        MemPolicy::Preferred { .. } => None,
        MemPolicy::Interleave { nodes } => {
            let set: Vec<usize> = nodes_of(nodes, nr).collect();
            if set.is_empty() {
                None
            } else {
                Some(set[(ilx % set.len() as u64) as usize])
            }
        }
    };
    chosen.unwrap_or(cpu_node)
}

/// `mpol_misplaced()`: the node a page on `curnid` should move to when the task on a CPU of
/// `thisnid` takes a NUMA hinting fault on it, or `None` (stay). `ilx` is the page's
/// interleave index. `should_numa_migrate_memory` is the scheduler's filter
/// (`sched::numa::should_numa_migrate_memory`), evaluated only for MPOL_F_MORON policies —
/// it has a side effect in the kernel (it exchanges the page's `last_cpupid`), so it is
/// called at most once, and only where the kernel calls it.
pub fn mpol_misplaced(
    policy: MemPolicy,
    curnid: usize,
    thisnid: usize,
    ilx: u64,
    distance: &[Vec<u32>],
    should_numa_migrate_memory: impl FnOnce() -> bool,
) -> Option<usize> {
    let (mof, moron) = policy_mof_moron(policy);
    if !mof {
        return None;
    }
    let nr = distance.len();
    let mut polnid = match policy {
        MemPolicy::Interleave { .. } => alloc_node(policy, thisnid, ilx, distance),
        MemPolicy::Preferred { node } => {
            if node as usize == curnid {
                return None;
            }
            node as usize
        }
        MemPolicy::Local => thisnid,
        MemPolicy::Bind { nodes } => {
            if moron {
                if nodes_of(nodes, nr).any(|n| n == thisnid) {
                    thisnid
                } else {
                    return None;
                }
            } else {
                if nodes_of(nodes, nr).any(|n| n == curnid) {
                    return None;
                }
                nearest_node(nodes, thisnid, distance)?
            }
        }
    };
    if moron {
        polnid = thisnid;
        if !should_numa_migrate_memory() {
            return None;
        }
    }
    (curnid != polnid).then_some(polnid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn four_node_ring() -> Vec<Vec<u32>> {
        // 0-1-2-3-0 ring: neighbours 20, opposite 30.
        vec![
            vec![10, 20, 30, 20],
            vec![20, 10, 20, 30],
            vec![30, 20, 10, 20],
            vec![20, 30, 20, 10],
        ]
    }

    #[test]
    fn first_touch_follows_the_policy() {
        let d = four_node_ring();
        assert_eq!(alloc_node(MemPolicy::Local, 2, 0, &d), 2);
        // Bind to {1, 3} from node 2: both at distance 20, lower id wins.
        assert_eq!(alloc_node(MemPolicy::Bind { nodes: 0b1010 }, 2, 0, &d), 1);
        // Bind to {0, 1} from node 3: node 0 (20) is nearer than node 1 (30).
        assert_eq!(alloc_node(MemPolicy::Bind { nodes: 0b0011 }, 3, 0, &d), 0);
        assert_eq!(alloc_node(MemPolicy::Preferred { node: 3 }, 0, 0, &d), 3);
        assert_eq!(alloc_node(MemPolicy::Preferred { node: 9 }, 1, 0, &d), 1);
        let il = MemPolicy::Interleave { nodes: 0b0101 };
        let placed: Vec<usize> = (0..4).map(|i| alloc_node(il, 1, i, &d)).collect();
        assert_eq!(placed, vec![0, 2, 0, 2]);
    }

    #[test]
    fn only_the_default_policy_migrates_on_fault() {
        let d = four_node_ring();
        // Default policy: page on 0, task faulting from node 2, filter says yes -> move to 2.
        assert_eq!(
            mpol_misplaced(MemPolicy::Local, 0, 2, 0, &d, || true),
            Some(2)
        );
        // Filter says no -> stays.
        assert_eq!(
            mpol_misplaced(MemPolicy::Local, 0, 2, 0, &d, || false),
            None
        );
        // Already local: the filter runs (it records last_cpupid) but nothing moves.
        let mut asked = false;
        assert_eq!(
            mpol_misplaced(MemPolicy::Local, 2, 2, 0, &d, || {
                asked = true;
                true
            }),
            None
        );
        assert!(
            asked,
            "should_numa_migrate_memory runs even for a local page"
        );
        // numactl policies lack MPOL_F_MOF: never misplaced, the filter is never consulted.
        for pol in [
            MemPolicy::Bind { nodes: 0b0001 },
            MemPolicy::Preferred { node: 0 },
            MemPolicy::Interleave { nodes: 0b1111 },
        ] {
            assert_eq!(
                mpol_misplaced(pol, 0, 2, 0, &d, || panic!("not called")),
                None
            );
            assert!(!vma_policy_mof(pol));
        }
        assert!(vma_policy_mof(MemPolicy::Local));
    }
}
