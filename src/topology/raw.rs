//! The assembly step every topology importer shares, below the importers.
//!
//! Importers ([`super::sysfs`], [`super::hwloc`], [`super::file`]) read what their source
//! says about each CPU — its SMT siblings, the CPUs sharing its cluster and last-level cache,
//! its package and NUMA node, its capacity, whether it is online — into a `RawMachine`;
//! `assemble` then derives the dense, machine-wide ids a [`Machine`] holds, the way the
//! architecture code fills `cpu_topology[]` before `kernel/sched/topology.c` builds sched
//! domains:
//!
//! * **Cores**: CPUs listed as each other's SMT siblings (`topology_sibling_cpumask`) form a
//!   core; ids are dense, in order of each core's lowest CPU, so they are unique across
//!   packages (sysfs `core_id` is per package).
//! * **Packages** and **nodes**: firmware ids are kept when they are already `0..k`, and
//!   otherwise renumbered densely in ascending firmware order (the node distance table is
//!   renumbered with them). A node without CPUs is dropped: memory-only nodes are not
//!   modelled.
//! * **LLC** (`cpu_coregroup_mask`): the CPUs sharing the highest-level data/unified cache,
//!   clamped to the CPU's package and node. The clamp mirrors x86 `match_llc()`, which does
//!   not let an LLC cross a node under Sub-NUMA Clustering, and arm64 `cpu_coregroup_mask()`,
//!   which keeps the LLC inside `cpumask_of_node() & core_sibling`. A CPU with no cache
//!   information gets package ∩ node as its LLC, arm64's fallback.
//! * **Cluster** (`cpu_clustergroup_mask`): `cluster_cpus` or the L2 sharing mask, clamped to
//!   the LLC; when a cluster would cover its whole LLC it collapses to the core, as arm64
//!   `cpu_clustergroup_mask()` does (on x86 the CLS domain would then be degenerate and
//!   removed, so the result is the same).
//! * **Capacity** (`arch_scale_cpu_capacity`): see `derive_capacities`.
//! * **Offline CPUs** stay possible CPUs of the machine, outside [`Machine::online`]. A CPU
//!   whose topology is partly unknown (the kernel removes `cpuN/topology` when a CPU goes
//!   offline) inherits what its SMT siblings know, then takes its package from a CPU sharing
//!   its LLC or cluster; with nothing to go on it becomes its own core, LLC and package, so it
//!   can never be mistaken for a sibling of a known CPU. Its node comes from a CPU of its
//!   package, else the lowest node.
//!
//! Not modelled: CPUs numbered with gaps (rejected with an error naming the missing CPU),
//! ITMT / `SD_ASYM_PACKING` priorities, memory-only nodes.

use std::collections::BTreeMap;

use super::{CpuTopology, LOCAL_DISTANCE, Machine, SCHED_CAPACITY_SCALE};
use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::{InputError, InputResult};

/// `REMOTE_DISTANCE` (include/linux/topology.h): the distance the kernel assumes between
/// two nodes when firmware gives none, or gives an invalid table.
pub const REMOTE_DISTANCE: u32 = 20;

/// What an importer learned about one CPU. `None` means "the source does not say".
#[derive(Debug, Clone, Default)]
pub(crate) struct RawCpu {
    pub online: bool,
    /// SMT siblings (`core_cpus` / `thread_siblings`); the CPU itself is implied.
    pub core: CpuMask,
    /// CPUs sharing the cluster (`cluster_cpus`, or the L2 when there is no cluster file).
    pub cluster: Option<CpuMask>,
    /// CPUs sharing the last-level cache.
    pub llc: Option<CpuMask>,
    /// Firmware package id (`physical_package_id`).
    pub package: Option<usize>,
    /// Firmware NUMA node id.
    pub node: Option<usize>,
    /// Capacity the source states outright (`cpu_capacity`, hwloc `LinuxCapacity`).
    pub capacity: Option<u32>,
    /// Highest frequency the CPU can reach (`cpuinfo_max_freq`, hwloc `FrequencyMaxMHz`).
    pub max_freq_khz: Option<u64>,
}

/// A machine as an importer read it, before ids are made dense and checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawMachine {
    pub name: String,
    /// Where it came from (file or directory), the origin of every error.
    pub origin: String,
    /// What kind of source (e.g. "sysfs snapshot"), for the description.
    pub source: String,
    /// CPU `i` of the machine is `cpus[i]`.
    pub cpus: Vec<RawCpu>,
    /// `node_distance(from, to)` keyed by firmware node ids, as read.
    pub distances: BTreeMap<(usize, usize), u64>,
}

/// Disjoint sets over CPU indexes whose representative is always the lowest member, so
/// every derived id is independent of the order unions happen in.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, x: usize) -> usize {
        let mut root = x;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut cur = x;
        while self.parent[cur] != root {
            let next = self.parent[cur];
            self.parent[cur] = root;
            cur = next;
        }
        root
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (low, high) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[high] = low;
        }
    }
}

/// Dense ids in order of first appearance (callers iterate CPUs in ascending order, so ids
/// follow each group's lowest CPU).
fn dense_by_first<K: Ord + Clone>(keys: &[K]) -> Vec<usize> {
    let mut ids = BTreeMap::new();
    keys.iter()
        .map(|k| {
            let next = ids.len();
            *ids.entry(k.clone()).or_insert(next)
        })
        .collect()
}

/// Dense ids in ascending key order: identity when keys are already `0..k`.
fn dense_sorted<K: Ord + Clone>(keys: &[K]) -> (Vec<usize>, Vec<K>) {
    let mut sorted: Vec<K> = keys.to_vec();
    sorted.sort();
    sorted.dedup();
    let ids = keys
        .iter()
        .map(|k| sorted.binary_search(k).expect("key is in sorted list"))
        .collect();
    (ids, sorted)
}

/// Parse a kernel/hwloc hexadecimal bitmap: comma-separated 32-bit words, most significant
/// first (`00000000,00000101` from sysfs `*_map`/`cpumap`, `0x0000ffff,0xff000000` from
/// hwloc; hwloc writes an all-zero word as an empty field, `0xffffff00,,0x0`). hwloc's
/// "infinitely set" prefix `0xf...f` only ever covers CPUs that do not exist, so it is read
/// as zero.
pub(crate) fn parse_hex_mask(text: &str) -> Result<CpuMask, String> {
    let text = text.trim();
    let mut mask = CpuMask::new();
    if text.is_empty() {
        return Ok(mask);
    }
    for (index, word) in text.split(',').rev().enumerate() {
        let word = word.trim();
        let digits = word
            .strip_prefix("0x")
            .or_else(|| word.strip_prefix("0X"))
            .unwrap_or(word);
        if digits == "f...f" || digits.is_empty() {
            continue;
        }
        if digits.len() > 8 {
            return Err(format!(
                "'{word}' in bitmap '{text}' is wider than 32 bits (accepted: comma-separated \
32-bit hexadecimal words, as in 00000000,0000ffff)"
            ));
        }
        let value = u32::from_str_radix(digits, 16).map_err(|_| {
            format!(
                "'{word}' in bitmap '{text}' is not hexadecimal (accepted: comma-separated \
32-bit hexadecimal words, as in 00000000,0000ffff)"
            )
        })?;
        for bit in 0..32 {
            if value & (1 << bit) != 0 {
                let cpu = index * 32 + bit;
                if cpu >= NR_CPUS_MAX {
                    return Err(format!(
                        "bitmap '{text}' names CPU {cpu}, beyond the simulator's limit of \
{NR_CPUS_MAX} CPUs"
                    ));
                }
                mask.set(cpu);
            }
        }
    }
    Ok(mask)
}

/// `arch_scale_cpu_capacity()` for each CPU, from what the source states:
///
/// 1. A stated capacity (`cpuN/cpu_capacity`, hwloc `LinuxCapacity`) is used as is: it is
///    what `drivers/base/arch_topology.c` (arm64, RISC-V) or intel_pstate computed, already
///    normalised to 1024 for the biggest CPU. CPUs without one get 1024.
/// 2. Otherwise, on a machine without SMT whose CPUs differ in maximum frequency (a hybrid
///    part with SMT off), capacity = 1024 × f_max(cpu) / f_max(biggest), rounded. Since
///    v6.12 intel_pstate (`hybrid_init_cpu_capacity_scaling`) sets asymmetric capacities on
///    hybrid parts only when SMT is not in use, from the HWP highest-performance ratio; the
///    maximum-frequency ratio is its closest stand-in in a snapshot or an XML file.
/// 3. Otherwise every CPU has 1024: x86 with SMT keeps symmetric capacity and prefers P-cores
///    through ITMT asym packing (not modelled), and older kernels never scale on x86.
fn derive_capacities(raw: &[RawCpu], smt_present: bool) -> Vec<u32> {
    let scale = SCHED_CAPACITY_SCALE;
    if raw.iter().any(|c| c.capacity.is_some()) {
        return raw
            .iter()
            .map(|c| c.capacity.unwrap_or(scale).clamp(1, scale))
            .collect();
    }
    let freqs: Vec<u64> = raw.iter().filter_map(|c| c.max_freq_khz).collect();
    let fmax = freqs.iter().copied().max().unwrap_or(0);
    let fmin = freqs.iter().copied().min().unwrap_or(0);
    if smt_present || fmax == 0 || fmin == fmax {
        return vec![scale; raw.len()];
    }
    raw.iter()
        .map(|c| match c.max_freq_khz {
            Some(f) => {
                let cap = (f * u64::from(scale) + fmax / 2) / fmax;
                (cap as u32).clamp(1, scale)
            }
            None => scale,
        })
        .collect()
}

/// Build the SLIT table for `nodes` (firmware ids, ascending) from what was read.
/// Missing entries take the kernel defaults (10 on the diagonal, [`REMOTE_DISTANCE`]
/// elsewhere; a missing `(a, b)` is first taken from `(b, a)`). A table stored as latencies
/// (hwloc may hold latencies whose diagonal is not 10) is rescaled so the diagonal becomes
/// 10. A table that is still not a valid SLIT (diagonal not 10, or a remote distance <= 10)
/// is replaced by the defaults, as the kernel's `slit_valid()` rejects such a SLIT; the
/// returned note says so.
fn build_distances(
    read: &BTreeMap<(usize, usize), u64>,
    nodes: &[usize],
) -> (Vec<Vec<u32>>, Option<String>) {
    let k = nodes.len();
    let get = |i: usize, j: usize| {
        read.get(&(nodes[i], nodes[j]))
            .or_else(|| read.get(&(nodes[j], nodes[i])))
            .copied()
    };
    let diag: Vec<u64> = (0..k).filter_map(|i| get(i, i)).collect();
    let local = u64::from(LOCAL_DISTANCE);
    let scale_from = match diag.first() {
        Some(&v) if v != local && v > 0 && diag.iter().all(|&d| d == v) => Some(v),
        _ => None,
    };
    let defaults = |i: usize, j: usize| {
        if i == j {
            LOCAL_DISTANCE
        } else {
            REMOTE_DISTANCE
        }
    };
    let table: Vec<Vec<u32>> = (0..k)
        .map(|i| {
            (0..k)
                .map(|j| match get(i, j) {
                    Some(d) => {
                        let d = match scale_from {
                            Some(v) => (d * local + v / 2) / v,
                            None => d,
                        };
                        u32::try_from(d).unwrap_or(u32::MAX)
                    }
                    None => defaults(i, j),
                })
                .collect()
        })
        .collect();
    let valid = (0..k).all(|i| {
        (0..k).all(|j| {
            if i == j {
                table[i][j] == LOCAL_DISTANCE
            } else {
                table[i][j] > LOCAL_DISTANCE
            }
        })
    });
    if valid {
        let note = scale_from.map(|v| format!("distances rescaled from latencies (local {v})"));
        (table, note)
    } else {
        let table = (0..k).map(|i| (0..k).map(|j| defaults(i, j)).collect());
        (
            table.collect(),
            Some("invalid distance table ignored, kernel defaults 10/20 used".to_string()),
        )
    }
}

/// Cores: SMT sibling lists, closed transitively. Returns each CPU's dense core id (in
/// order of each core's lowest CPU) and each core's CPUs.
fn smt_cores(cpus: &[RawCpu], all: &CpuMask) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = cpus.len();
    let mut cores = UnionFind::new(n);
    for (i, c) in cpus.iter().enumerate() {
        for j in c.core.and(all).iter() {
            cores.union(i, j);
        }
    }
    let core_root: Vec<usize> = (0..n).map(|i| cores.find(i)).collect();
    let core_id = dense_by_first(&core_root);
    let nr_cores = core_id.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nr_cores];
    for (cpu, &core) in core_id.iter().enumerate() {
        members[core].push(cpu);
    }
    (core_id, members)
}

/// SMT siblings share everything above the core: fill each gap from the lowest sibling
/// that knows.
fn fill_from_smt_siblings(cpus: &mut [RawCpu], members: &[Vec<usize>]) {
    for m in members {
        let first_some = |f: &dyn Fn(&RawCpu) -> bool| m.iter().copied().find(|&c| f(&cpus[c]));
        let cluster = first_some(&|c| c.cluster.is_some()).and_then(|c| cpus[c].cluster);
        let llc = first_some(&|c| c.llc.is_some()).and_then(|c| cpus[c].llc);
        let package = first_some(&|c| c.package.is_some()).and_then(|c| cpus[c].package);
        let node = first_some(&|c| c.node.is_some()).and_then(|c| cpus[c].node);
        for &c in m {
            cpus[c].cluster = cluster;
            cpus[c].llc = llc;
            cpus[c].package = package;
            cpus[c].node = node;
        }
    }
}

/// Dense package ids. Unknown package: take it from a CPU sharing the LLC, then the
/// cluster; still unknown: a package of its own (keys sort after every firmware id).
fn assign_packages(
    cpus: &mut [RawCpu],
    core_id: &[usize],
    members: &[Vec<usize>],
    all: &CpuMask,
) -> Vec<usize> {
    let n = cpus.len();
    for i in 0..n {
        if cpus[i].package.is_some() {
            continue;
        }
        let mates = [cpus[i].llc, cpus[i].cluster];
        let found = mates
            .iter()
            .flatten()
            .flat_map(|m| m.and(all).iter().collect::<Vec<_>>())
            .find_map(|j| cpus[j].package);
        if let Some(p) = found {
            for &c in &members[core_id[i]] {
                cpus[c].package = Some(p);
            }
        }
    }
    // Still unknown: a package of its own (keys sort after every firmware id).
    let package_key: Vec<(u8, usize)> = (0..n)
        .map(|i| match cpus[i].package {
            Some(p) => (0, p),
            None => (1, core_id[i]),
        })
        .collect();
    let (package, _) = dense_sorted(&package_key);
    package
}

/// Dense LLC ids: sharing closed transitively, clamped to package and node.
fn assign_llcs(cpus: &[RawCpu], package: &[usize], node: &[usize], all: &CpuMask) -> Vec<usize> {
    let n = cpus.len();
    let mut llcs = UnionFind::new(n);
    for (i, c) in cpus.iter().enumerate() {
        if let Some(m) = c.llc {
            for j in m.and(all).iter() {
                llcs.union(i, j);
            }
        }
    }
    let llc_key: Vec<(Option<usize>, usize, usize)> = (0..n)
        .map(|i| {
            let root = cpus[i].llc.map(|_| llcs.find(i));
            (root, package[i], node[i])
        })
        .collect();
    dense_by_first(&llc_key)
}

/// Dense cluster ids: sharing closed transitively, clamped to the LLC; none → the core.
fn assign_clusters(
    cpus: &[RawCpu],
    core_id: &[usize],
    members: &[Vec<usize>],
    llc: &[usize],
    all: &CpuMask,
) -> Vec<usize> {
    let n = cpus.len();
    let mut clusters = UnionFind::new(n);
    for (i, c) in cpus.iter().enumerate() {
        if let Some(m) = c.cluster {
            for j in m.and(all).iter() {
                clusters.union(i, j);
            }
        }
    }
    let mut cluster_key: Vec<(u8, usize, usize)> = (0..n)
        .map(|i| match cpus[i].cluster {
            Some(_) => (0, clusters.find(i), llc[i]),
            None => (1, core_id[i], 0),
        })
        .collect();
    // A cluster spanning its whole LLC (and more than one core) collapses to the core.
    for i in 0..n {
        if cluster_key[i].0 != 0 {
            continue;
        }
        let same_cluster = (0..n).filter(|&j| cluster_key[j] == cluster_key[i]).count();
        let same_llc = (0..n).filter(|&j| llc[j] == llc[i]).count();
        let own_core = members[core_id[i]].len();
        if same_cluster == same_llc && same_cluster > own_core {
            let key = cluster_key[i];
            for k in cluster_key.iter_mut().filter(|k| **k == key) {
                *k = (2, 0, 0);
            }
        }
    }
    for i in 0..n {
        if cluster_key[i].0 == 2 {
            cluster_key[i] = (1, core_id[i], 0);
        }
    }
    dense_by_first(&cluster_key)
}

/// Derive a [`Machine`] from what an importer read (see the module doc for the rules).
pub(crate) fn assemble(raw: RawMachine) -> InputResult<Machine> {
    let origin = raw.origin.clone();
    let n = raw.cpus.len();
    if n == 0 {
        return Err(InputError::new(origin, "no CPUs found"));
    }
    if n > NR_CPUS_MAX {
        return Err(InputError::new(
            origin,
            format!("{n} CPUs, more than the simulator's limit of {NR_CPUS_MAX}"),
        ));
    }
    let all = CpuMask::first_n(n);
    let mut cpus = raw.cpus.clone();

    let (core_id, members) = smt_cores(&cpus, &all);

    fill_from_smt_siblings(&mut cpus, &members);

    let package = assign_packages(&mut cpus, &core_id, &members, &all);

    let node_fw = firmware_nodes(&cpus, &package);
    let (node, node_ids) = dense_sorted(&node_fw);
    let (node_distance, distance_note) = build_distances(&raw.distances, &node_ids);

    let llc = assign_llcs(&cpus, &package, &node, &all);

    let cluster = assign_clusters(&cpus, &core_id, &members, &llc, &all);

    let smt_present = members.iter().any(|m| m.len() > 1);
    let capacity = derive_capacities(&cpus, smt_present);

    let topo: Vec<CpuTopology> = (0..n)
        .map(|i| CpuTopology {
            cpu: i,
            core: core_id[i],
            cluster: cluster[i],
            llc: llc[i],
            package: package[i],
            node: node[i],
            capacity: capacity[i],
        })
        .collect();
    let online: CpuMask = (0..n).filter(|&i| cpus[i].online).collect();
    if online.is_empty() {
        return Err(InputError::new(origin, "no CPU is online"));
    }

    let mut description = format!(
        "{}: {n} CPUs (online {online}); online CPUs span {} packages, {} cores, {} LLCs, {} nodes",
        raw.source,
        count_online(&online, &package),
        count_online(&online, &core_id),
        count_online(&online, &llc),
        count_online(&online, &node),
    );
    if let Some(note) = distance_note {
        description.push_str("; ");
        description.push_str(&note);
    }
    let mut machine = Machine::new(raw.name, description, topo, node_distance)
        .map_err(|e| InputError::new(origin.clone(), format!("impossible topology: {e}")))?;
    machine.online = online;
    Ok(machine)
}

/// Each CPU's node as the firmware gave it; an unknown node is that of a CPU of the same
/// package, else the lowest node, else node 0.
fn firmware_nodes(cpus: &[RawCpu], package: &[usize]) -> Vec<usize> {
    let n = cpus.len();
    let lowest_node = cpus.iter().filter_map(|c| c.node).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            cpus[i].node.unwrap_or_else(|| {
                (0..n)
                    .filter(|&j| package[j] == package[i])
                    .find_map(|j| cpus[j].node)
                    .unwrap_or(lowest_node)
            })
        })
        .collect()
}

/// How many distinct ids (`ids[cpu]`) the online CPUs have.
fn count_online(online: &CpuMask, ids: &[usize]) -> usize {
    let mut seen: Vec<usize> = online.iter().map(|c| ids[c]).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_cpu(core: &str, llc: &str, package: usize) -> RawCpu {
        RawCpu {
            online: true,
            core: CpuMask::parse(core).unwrap(),
            llc: Some(CpuMask::parse(llc).unwrap()),
            package: Some(package),
            ..RawCpu::default()
        }
    }

    #[test]
    fn hex_masks_read_like_sysfs_and_hwloc() {
        assert_eq!(
            parse_hex_mask("00000000,00000101").unwrap().to_string(),
            "0,8"
        );
        assert_eq!(
            parse_hex_mask("0x0000ffff,0xff000000").unwrap().to_string(),
            "24-47"
        );
        assert_eq!(
            parse_hex_mask("0xffffff00,,0x0").unwrap().to_string(),
            "72-95"
        );
        assert_eq!(
            parse_hex_mask("0xf...f,0x00000003").unwrap().to_string(),
            "0-1"
        );
        assert!(parse_hex_mask("0xzz").is_err());
        assert!(parse_hex_mask("0x123456789").is_err());
    }

    #[test]
    fn core_ids_are_global_and_siblings_inherit() {
        // Two packages, each with core_id 0 and 1 (per package), SMT2 x86 numbering.
        // CPU 6 is offline with nothing known but its sibling list from CPU 2.
        let mut cpus = vec![
            raw_cpu("0,4", "0-1,4-5", 0),
            raw_cpu("1,5", "0-1,4-5", 0),
            raw_cpu("2,6", "2-3,6-7", 1),
            raw_cpu("3,7", "2-3,6-7", 1),
            raw_cpu("0,4", "0-1,4-5", 0),
            raw_cpu("1,5", "0-1,4-5", 0),
            RawCpu::default(),
            raw_cpu("3,7", "2-3,6-7", 1),
        ];
        cpus[6].online = false;
        let m = assemble(RawMachine {
            name: "t".into(),
            origin: "test".into(),
            source: "test".into(),
            cpus,
            distances: BTreeMap::new(),
        })
        .unwrap();
        let cores: Vec<usize> = m.cpus.iter().map(|c| c.core).collect();
        assert_eq!(cores, vec![0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(m.cpus[6].package, 1);
        assert_eq!(m.llc_mask(6).to_string(), "2-3,6-7");
        assert_eq!(m.online.to_string(), "0-5,7");
        assert_eq!(m.node_distance, vec![vec![10]]);
    }

    #[test]
    fn latency_tables_are_rescaled_and_invalid_ones_replaced() {
        let mut read = BTreeMap::new();
        for (a, b, d) in [(0, 0, 100), (0, 1, 210), (1, 0, 210), (1, 1, 100)] {
            read.insert((a, b), d);
        }
        let (t, note) = build_distances(&read, &[0, 1]);
        assert_eq!(t, vec![vec![10, 21], vec![21, 10]]);
        assert!(note.is_some());
        let mut bad = BTreeMap::new();
        for (a, b, d) in [(0, 0, 10), (0, 1, 10), (1, 0, 10), (1, 1, 10)] {
            bad.insert((a, b), d);
        }
        let (t, note) = build_distances(&bad, &[0, 1]);
        assert_eq!(t, vec![vec![10, 20], vec![20, 10]]);
        assert!(note.unwrap().contains("defaults"));
    }

    #[test]
    fn capacity_follows_kernel_rules() {
        let mk = |f: u64| RawCpu {
            max_freq_khz: Some(f),
            ..RawCpu::default()
        };
        let cpus = vec![mk(4_000_000), mk(2_000_000)];
        assert_eq!(derive_capacities(&cpus, false), vec![1024, 512]);
        // With SMT in use x86 keeps symmetric capacity (ITMT instead).
        assert_eq!(derive_capacities(&cpus, true), vec![1024, 1024]);
        let stated = vec![
            RawCpu {
                capacity: Some(446),
                ..mk(1)
            },
            mk(2),
        ];
        assert_eq!(derive_capacities(&stated, false), vec![446, 1024]);
    }
}
