//! The machine: CPUs, SMT siblings, clusters, LLCs, packages, NUMA nodes and their
//! distances, per-CPU capacity — what the kernel learns from the architecture code
//! (`arch/*/kernel/smpboot.c`, `drivers/base/arch_topology.c`) before
//! `kernel/sched/topology.c` builds sched domains on top of it.
//!
//! A [`Machine`] is plain data: one [`CpuTopology`] per possible CPU, indexed by CPU id in
//! the real machine's numbering order, plus the node distance table (SLIT, 10 = local).
//! The sibling masks the kernel exposes (`topology_sibling_cpumask`,
//! `topology_cluster_cpumask`, `cpu_coregroup_mask`, `topology_core_cpumask`,
//! `cpumask_of_node`) are derived once in [`Machine::new`] and cover possible CPUs; callers
//! intersect with [`Machine::online`] as the kernel intersects with `cpu_active_mask`.
//!
//! Not modelled: CPU hotplug during a run (the online set is fixed per run), memory-only
//! nodes (a node without CPUs is rejected).

pub mod file;
pub mod hwloc;
pub mod presets;
pub mod raw;
pub mod resolve;
pub mod sysfs;

pub use resolve::{resolve_machine, resolve_machine_with};

use crate::cpumask::{CpuMask, NR_CPUS_MAX};

/// How many machine imports (sysfs trees, hwloc XML files) this process has read.
static IMPORT_READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many machine imports (a sysfs tree, `host` included, or an hwloc XML file) this
/// process has read: a test hook (`SCHEDLAB_TEST_IMPORT_READS`) showing that a command reads
/// each import once however many runs it makes.
pub fn import_reads() -> u64 {
    IMPORT_READS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Count one read of a machine import (see [`import_reads`]).
fn count_import_read() {
    IMPORT_READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// `SCHED_CAPACITY_SCALE`: the capacity of the biggest CPU at its highest frequency.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

/// The SLIT distance of a node to itself.
pub const LOCAL_DISTANCE: u32 = 10;

/// One possible CPU and where it sits. Ids are global (unique machine-wide), not
/// per-package as sysfs `core_id` is, so equal ids always mean "same core".
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CpuTopology {
    pub cpu: usize,
    /// Global core id: CPUs with equal `core` are SMT siblings.
    pub core: usize,
    /// Global cluster id (CPUs sharing an L2 / cluster, `cluster_cpus`); equal to a
    /// per-core id when the machine has no clusters.
    pub cluster: usize,
    /// Global id of the last-level cache this CPU shares (`cpu_coregroup_mask` on x86).
    pub llc: usize,
    /// Physical package (socket) id.
    pub package: usize,
    /// NUMA node id (index into the distance table).
    pub node: usize,
    /// `arch_scale_cpu_capacity()`: 1024 for the biggest CPUs, less on little cores.
    pub capacity: u32,
}

/// The CPU architecture whose kernel code turns the machine into sched-domain levels:
/// each has its own `sched_domain_topology_level` table and mask functions (see
/// `crate::domains`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub enum Arch {
    /// `arch/x86/kernel/smpboot.c`: `x86_topology[]` = SMT, CLS (L2), MC (LLC), PKG (left
    /// out when a package holds several nodes).
    X86,
    /// The kernel's `default_topology[]` with the `drivers/base/arch_topology.c` masks
    /// (arm64, RISC-V): SMT, CLS, MC, PKG. The default for machines that do not say.
    #[default]
    Arm64,
    /// `arch/powerpc/kernel/smp.c`: `powerpc_topology[]` = SMT (small core on big-core
    /// parts), CACHE (L2, only when it is wider than the SMT mask), MC (coregroup, without
    /// `SD_SHARE_LLC`, only with coregroup support), PKG.
    Powerpc,
}

impl Arch {
    /// Every architecture with its name, as accepted in topology files.
    pub const ALL: [(Arch, &'static str); 3] = [
        (Arch::X86, "x86"),
        (Arch::Arm64, "arm64"),
        (Arch::Powerpc, "powerpc"),
    ];

    /// The name (`x86`, `arm64`, `powerpc`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(a, _)| *a == self)
            .map(|(_, n)| *n)
            .unwrap_or("arm64")
    }

    /// The architecture called `name`.
    pub fn from_name(name: &str) -> Option<Arch> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(a, _)| *a)
    }

    /// The architecture this binary runs on (for `host`); the generic table elsewhere.
    pub fn host() -> Arch {
        match std::env::consts::ARCH {
            "x86" | "x86_64" => Arch::X86,
            "powerpc" | "powerpc64" => Arch::Powerpc,
            _ => Arch::Arm64,
        }
    }
}

/// A machine topology, validated and with its sibling masks derived.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Preset name, `host`, or the file it was read from.
    pub name: String,
    /// One line saying what the machine is.
    pub description: String,
    /// Whose sched-domain topology table the kernel uses on this machine.
    pub arch: Arch,
    /// Every possible CPU, `cpus[i].cpu == i`.
    pub cpus: Vec<CpuTopology>,
    /// CPUs online for this run (`cpu_active_mask`).
    pub online: CpuMask,
    /// `node_distance(a, b)`: SLIT distances, `node_distance[a][a] == 10`.
    pub node_distance: Vec<Vec<u32>>,
    smt_mask: Vec<CpuMask>,
    cluster_mask: Vec<CpuMask>,
    llc_mask: Vec<CpuMask>,
    package_mask: Vec<CpuMask>,
    node_mask: Vec<CpuMask>,
    /// powerpc `cpu_coregroup_mask()` per CPU (CPUs whose firmware associativity puts them
    /// in the same coregroup); `None` without coregroup support.
    coregroup_mask: Option<Vec<CpuMask>>,
    /// What an importer could not read and the fallback it used instead (a sysfs file
    /// missing from a snapshot), in reading order; empty for presets. Printed by the CLI,
    /// never part of results.
    pub import_warnings: Vec<String>,
}

/// Why a topology is impossible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("machine has no CPUs")]
    NoCpus,
    #[error("machine has {0} CPUs, more than the simulator's limit of {max}", max = NR_CPUS_MAX)]
    TooManyCpus(usize),
    #[error("CPU entry {index} says it is CPU {cpu}; CPUs must be numbered 0..N in order")]
    Misnumbered { index: usize, cpu: usize },
    #[error("CPU {cpu} is on node {node}, but the distance table has {nodes} nodes")]
    NodeOutOfRange {
        cpu: usize,
        node: usize,
        nodes: usize,
    },
    #[error("node {0} has no CPUs (memory-only nodes are not modelled)")]
    EmptyNode(usize),
    #[error("distance table is not square ({rows} rows, row {row} has {len} entries)")]
    DistanceNotSquare { rows: usize, row: usize, len: usize },
    #[error("distance from node {0} to itself must be 10, found {1}")]
    DistanceNotLocal(usize, u32),
    #[error("distance between nodes {0} and {1} must be greater than 10, found {2}")]
    DistanceTooSmall(usize, usize, u32),
    #[error("CPU {cpu} has capacity {capacity}; accepted: 1..=1024")]
    BadCapacity { cpu: usize, capacity: u32 },
    #[error("SMT siblings {a} and {b} disagree on their {what}")]
    Inconsistent {
        a: usize,
        b: usize,
        what: &'static str,
    },
    #[error("offline list '{list}' names CPU {cpu}, but the machine has CPUs 0-{last}")]
    OfflineOutOfRange {
        list: String,
        cpu: usize,
        last: usize,
    },
    #[error("offline list '{0}' would leave no CPU online")]
    NothingOnline(String),
}

impl Machine {
    /// Validate `cpus` and `node_distance` and derive the sibling masks. All CPUs start
    /// online.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        cpus: Vec<CpuTopology>,
        node_distance: Vec<Vec<u32>>,
    ) -> Result<Machine, TopologyError> {
        validate(&cpus, &node_distance)?;
        let nr = cpus.len();
        // Each CPU's mask is the set of CPUs with its id: one pass collects every id's
        // CPUs, a second hands each CPU its id's mask. Why: comparing every pair of CPUs
        // cost ~48 M instructions per machine build at 768 CPUs (built twice per `run`:
        // setup line and run); this is O(n log n) and gives the same masks.
        let mask_of = |id: &dyn Fn(&CpuTopology) -> usize| -> Vec<CpuMask> {
            let mut by_id: std::collections::BTreeMap<usize, CpuMask> = Default::default();
            for c in &cpus {
                by_id.entry(id(c)).or_default().set(c.cpu);
            }
            (0..nr).map(|i| by_id[&id(&cpus[i])]).collect()
        };
        let smt_mask = mask_of(&|c| c.core);
        let cluster_mask = mask_of(&|c| c.cluster);
        let llc_mask = mask_of(&|c| c.llc);
        let package_mask = mask_of(&|c| c.package);
        let node_mask = (0..node_distance.len())
            .map(|n| cpus.iter().filter(|c| c.node == n).map(|c| c.cpu).collect())
            .collect();
        Ok(Machine {
            name: name.into(),
            description: description.into(),
            arch: Arch::default(),
            online: CpuMask::first_n(nr),
            cpus,
            node_distance,
            smt_mask,
            cluster_mask,
            llc_mask,
            package_mask,
            node_mask,
            coregroup_mask: None,
            import_warnings: Vec::new(),
        })
    }

    /// Give the machine powerpc coregroups: `ids[cpu]` is the CPU's coregroup id
    /// (`cpu_to_coregroup_id()`). Panics if `ids` does not have one entry per CPU or splits
    /// an SMT core (a preset programming error).
    pub fn set_coregroups(&mut self, ids: &[usize]) {
        assert_eq!(ids.len(), self.nr_cpus(), "one coregroup id per CPU");
        for c in 0..self.nr_cpus() {
            assert!(
                self.smt_mask[c].iter().all(|s| ids[s] == ids[c]),
                "coregroup splits the SMT core of CPU {c}"
            );
        }
        self.coregroup_mask = Some(
            (0..self.nr_cpus())
                .map(|c| (0..self.nr_cpus()).filter(|&o| ids[o] == ids[c]).collect())
                .collect(),
        );
    }

    /// powerpc `cpu_coregroup_mask()` (possible CPUs), if the machine has coregroups.
    pub fn coregroup_mask(&self, cpu: usize) -> Option<&CpuMask> {
        self.coregroup_mask.as_ref().map(|m| &m[cpu])
    }

    /// Take the CPUs of a cpulist offline (`echo 0 > cpuN/online`).
    pub fn set_offline(&mut self, list: &str) -> Result<(), TopologyError> {
        let offline = CpuMask::parse_list_for_machine(list, self.nr_cpus()).map_err(|_| {
            TopologyError::OfflineOutOfRange {
                list: list.to_string(),
                cpu: NR_CPUS_MAX,
                last: self.nr_cpus() - 1,
            }
        })?;
        if let Some(cpu) = offline.iter().find(|&c| c >= self.nr_cpus()) {
            return Err(TopologyError::OfflineOutOfRange {
                list: list.to_string(),
                cpu,
                last: self.nr_cpus() - 1,
            });
        }
        let online = self.online.andnot(&offline);
        if online.is_empty() {
            return Err(TopologyError::NothingOnline(list.to_string()));
        }
        self.online = online;
        Ok(())
    }

    /// Number of possible CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    pub fn nr_nodes(&self) -> usize {
        self.node_distance.len()
    }

    /// `topology_sibling_cpumask()`: the SMT siblings of `cpu` (including itself).
    pub fn smt_mask(&self, cpu: usize) -> &CpuMask {
        &self.smt_mask[cpu]
    }

    /// `topology_cluster_cpumask()`.
    pub fn cluster_mask(&self, cpu: usize) -> &CpuMask {
        &self.cluster_mask[cpu]
    }

    /// `cpu_coregroup_mask()`: CPUs sharing `cpu`'s last-level cache.
    pub fn llc_mask(&self, cpu: usize) -> &CpuMask {
        &self.llc_mask[cpu]
    }

    /// `topology_core_cpumask()`: CPUs in `cpu`'s package.
    pub fn package_mask(&self, cpu: usize) -> &CpuMask {
        &self.package_mask[cpu]
    }

    /// `cpumask_of_node()`.
    pub fn node_mask(&self, node: usize) -> &CpuMask {
        &self.node_mask[node]
    }

    /// `node_distance()`.
    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.node_distance[a][b]
    }

    /// True when CPUs differ in capacity (`SD_ASYM_CPUCAPACITY` will appear).
    pub fn has_asym_capacity(&self) -> bool {
        let first = self.cpus[0].capacity;
        self.cpus.iter().any(|c| c.capacity != first)
    }
}

fn validate(cpus: &[CpuTopology], node_distance: &[Vec<u32>]) -> Result<(), TopologyError> {
    if cpus.is_empty() {
        return Err(TopologyError::NoCpus);
    }
    if cpus.len() > NR_CPUS_MAX {
        return Err(TopologyError::TooManyCpus(cpus.len()));
    }
    let nodes = node_distance.len();
    for (row, dists) in node_distance.iter().enumerate() {
        if dists.len() != nodes {
            return Err(TopologyError::DistanceNotSquare {
                rows: nodes,
                row,
                len: dists.len(),
            });
        }
        for (col, &d) in dists.iter().enumerate() {
            if row == col && d != LOCAL_DISTANCE {
                return Err(TopologyError::DistanceNotLocal(row, d));
            }
            if row != col && d <= LOCAL_DISTANCE {
                return Err(TopologyError::DistanceTooSmall(row, col, d));
            }
        }
    }
    for (index, c) in cpus.iter().enumerate() {
        if c.cpu != index {
            return Err(TopologyError::Misnumbered { index, cpu: c.cpu });
        }
        if c.node >= nodes {
            return Err(TopologyError::NodeOutOfRange {
                cpu: c.cpu,
                node: c.node,
                nodes,
            });
        }
        if c.capacity == 0 || c.capacity > SCHED_CAPACITY_SCALE {
            return Err(TopologyError::BadCapacity {
                cpu: c.cpu,
                capacity: c.capacity,
            });
        }
    }
    for node in 0..nodes {
        if !cpus.iter().any(|c| c.node == node) {
            return Err(TopologyError::EmptyNode(node));
        }
    }
    for a in cpus {
        for b in cpus.iter().filter(|b| b.core == a.core && b.cpu > a.cpu) {
            let what = if a.cluster != b.cluster {
                "cluster"
            } else if a.llc != b.llc {
                "llc"
            } else if a.package != b.package {
                "package"
            } else if a.node != b.node {
                "node"
            } else {
                continue;
            };
            return Err(TopologyError::Inconsistent {
                a: a.cpu,
                b: b.cpu,
                what,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: usize, core: usize, llc: usize, node: usize) -> CpuTopology {
        CpuTopology {
            cpu,
            core,
            cluster: core,
            llc,
            package: node,
            node,
            capacity: 1024,
        }
    }

    fn two_node_smt2() -> Machine {
        // 2 nodes x 2 cores x SMT2, x86 numbering: first threads 0-3, second threads 4-7.
        let cpus = (0..8)
            .map(|i| cpu(i, i % 4, (i % 4) / 2, (i % 4) / 2))
            .collect();
        Machine::new("t", "test", cpus, vec![vec![10, 21], vec![21, 10]]).unwrap()
    }

    #[test]
    fn derives_sibling_masks() {
        let m = two_node_smt2();
        assert_eq!(m.smt_mask(0).to_string(), "0,4");
        assert_eq!(m.llc_mask(5).to_string(), "0-1,4-5");
        assert_eq!(m.node_mask(1).to_string(), "2-3,6-7");
        assert_eq!(m.distance(0, 1), 21);
    }

    #[test]
    fn offline_lists_are_checked() {
        let mut m = two_node_smt2();
        m.set_offline("1,5").unwrap();
        assert_eq!(m.online.to_string(), "0,2-4,6-7");
        assert!(matches!(
            m.set_offline("9"),
            Err(TopologyError::OfflineOutOfRange { cpu: 9, .. })
        ));
        assert!(matches!(
            m.set_offline("0-7"),
            Err(TopologyError::NothingOnline(_))
        ));
    }

    #[test]
    fn impossible_topologies_are_rejected() {
        let bad_node = vec![cpu(0, 0, 0, 1)];
        assert!(matches!(
            Machine::new("t", "", bad_node, vec![vec![10]]),
            Err(TopologyError::NodeOutOfRange { .. })
        ));
        let split_core = vec![cpu(0, 0, 0, 0), cpu(1, 0, 1, 0)];
        assert!(matches!(
            Machine::new("t", "", split_core, vec![vec![10]]),
            Err(TopologyError::Inconsistent { what: "llc", .. })
        ));
        assert!(matches!(
            Machine::new(
                "t",
                "",
                vec![cpu(0, 0, 0, 0)],
                vec![vec![10, 20], vec![20, 10]]
            ),
            Err(TopologyError::EmptyNode(1))
        ));
    }
}
