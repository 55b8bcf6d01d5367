//! Scheduling domains and groups, as `kernel/sched/topology.c` builds them.
//!
//! [`build_sched_domains`] mirrors the kernel's `build_sched_domains()` for one partition
//! (the machine's online CPUs = `cpu_active_mask`, no isolated CPUs, one root domain):
//! the architecture's topology-level table (x86 and generic: `SMT`, `CLS`, `MC`, `PKG`;
//! powerpc: `SMT`, `CACHE`, `MC` = coregroup without `SD_SHARE_LLC`, `PKG`) then `NODE`
//! and one `NUMA` level per further distinct SLIT distance (`sched_init_numa()`), `sd_init()` per level,
//! `build_sched_groups()`/`get_group()` for ordinary levels and
//! `build_overlap_sched_groups()` with balance masks for NUMA levels, the `imb_numa_nr`
//! pass, `init_sched_groups_capacity()`, and `cpu_attach_domain()` with the degenerate
//! domain removal (`sd_degenerate()`, `sd_parent_degenerate()`) and the per-CPU
//! shortcuts of `update_top_cache_domain()`. See `build.rs` for the step-by-step
//! mapping and every approximation.
//!
//! The result is plain index-based data: a flat `Vec` of [`SchedDomain`] indexed by
//! [`DomainId`] (one per CPU per surviving level, as in the kernel), a flat `Vec` of
//! [`SchedGroup`] indexed by [`GroupId`], and per-CPU bottom-up domain lists. Groups of
//! non-overlapping levels are shared by every CPU whose domain has them (as the kernel
//! shares `sched_group` objects), NUMA groups are private per domain as in the kernel but
//! carry the id of their shared `sched_group_capacity` ([`SchedGroup::sgc`]), so per-group
//! runtime state can be kept once per `sgc`.
//!
//! Left out: runtime fields (`last_balance`, `balance_interval`, `nr_balance_failed`,
//! `max_newidle_lb_cost`, schedstats) which the balancer owns; `relax_domain_level`;
//! exclusive cpusets (several root domains); energy-model perf domains; x86 ITMT
//! (`SD_ASYM_PACKING` is modelled as a flag and in the shortcuts, but no preset sets it).

mod build;
mod debug;
pub mod invariants;

pub use build::{DomainParams, build_sched_domains, build_sched_domains_with};

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Not};

use crate::cpumask::CpuMask;

/// `sd->flags`: the `SD_*` bits in `include/linux/sched/sd_flags.h` order (v6.10+, bit n
/// = declaration position n).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct SdFlags(pub u32);

impl SdFlags {
    pub const EMPTY: SdFlags = SdFlags(0);
    /// Balance when about to become idle.
    pub const SD_BALANCE_NEWIDLE: SdFlags = SdFlags(1 << 0);
    /// Balance on exec.
    pub const SD_BALANCE_EXEC: SdFlags = SdFlags(1 << 1);
    /// Balance on fork/clone.
    pub const SD_BALANCE_FORK: SdFlags = SdFlags(1 << 2);
    /// Balance on wakeup (slow path; off by default).
    pub const SD_BALANCE_WAKE: SdFlags = SdFlags(1 << 3);
    /// The waker's CPU is a candidate for the wakee.
    pub const SD_WAKE_AFFINE: SdFlags = SdFlags(1 << 4);
    /// The span has CPUs of different capacities.
    pub const SD_ASYM_CPUCAPACITY: SdFlags = SdFlags(1 << 5);
    /// The span has every CPU capacity value of the system.
    pub const SD_ASYM_CPUCAPACITY_FULL: SdFlags = SdFlags(1 << 6);
    /// Members share CPU capacity (SMT siblings).
    pub const SD_SHARE_CPUCAPACITY: SdFlags = SdFlags(1 << 7);
    /// Members share an L2 / cluster.
    pub const SD_CLUSTER: SdFlags = SdFlags(1 << 8);
    /// Members share the last-level cache (was `SD_SHARE_PKG_RESOURCES`).
    pub const SD_SHARE_LLC: SdFlags = SdFlags(1 << 9);
    /// Only one CPU system-wide balances such domains at a time.
    pub const SD_SERIALIZE: SdFlags = SdFlags(1 << 10);
    /// Pack tasks onto higher-priority CPUs.
    pub const SD_ASYM_PACKING: SdFlags = SdFlags(1 << 11);
    /// Spread tasks to sibling groups first.
    pub const SD_PREFER_SIBLING: SdFlags = SdFlags(1 << 12);
    /// The domain's groups overlap (NUMA).
    pub const SD_OVERLAP: SdFlags = SdFlags(1 << 13);
    /// Cross-node balancing.
    pub const SD_NUMA: SdFlags = SdFlags(1 << 14);

    /// Every flag with its kernel name, in bit order.
    pub const ALL: [(SdFlags, &'static str); 15] = [
        (Self::SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
        (Self::SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
        (Self::SD_BALANCE_FORK, "SD_BALANCE_FORK"),
        (Self::SD_BALANCE_WAKE, "SD_BALANCE_WAKE"),
        (Self::SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
        (Self::SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
        (Self::SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"),
        (Self::SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
        (Self::SD_CLUSTER, "SD_CLUSTER"),
        (Self::SD_SHARE_LLC, "SD_SHARE_LLC"),
        (Self::SD_SERIALIZE, "SD_SERIALIZE"),
        (Self::SD_ASYM_PACKING, "SD_ASYM_PACKING"),
        (Self::SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
        (Self::SD_OVERLAP, "SD_OVERLAP"),
        (Self::SD_NUMA, "SD_NUMA"),
    ];

    /// `SD_DEGENERATE_GROUPS_MASK`: flags with the `SDF_NEEDS_GROUPS` meta-flag, i.e.
    /// meaningless in a domain with a single group (every flag but `SD_WAKE_AFFINE`).
    pub const SD_DEGENERATE_GROUPS_MASK: SdFlags = SdFlags(
        Self::SD_BALANCE_NEWIDLE.0
            | Self::SD_BALANCE_EXEC.0
            | Self::SD_BALANCE_FORK.0
            | Self::SD_BALANCE_WAKE.0
            | Self::SD_ASYM_CPUCAPACITY.0
            | Self::SD_ASYM_CPUCAPACITY_FULL.0
            | Self::SD_SHARE_CPUCAPACITY.0
            | Self::SD_CLUSTER.0
            | Self::SD_SHARE_LLC.0
            | Self::SD_SERIALIZE.0
            | Self::SD_ASYM_PACKING.0
            | Self::SD_PREFER_SIBLING.0
            | Self::SD_OVERLAP.0
            | Self::SD_NUMA.0,
    );

    /// `SD_SHARED_CHILD_MASK`: flags with `SDF_SHARED_CHILD` (if set on a domain, set on
    /// all its children). `SD_ASYM_PACKING` lost the meta-flag in v6.5.
    pub const SD_SHARED_CHILD_MASK: SdFlags = SdFlags(
        Self::SD_BALANCE_NEWIDLE.0
            | Self::SD_BALANCE_EXEC.0
            | Self::SD_BALANCE_FORK.0
            | Self::SD_BALANCE_WAKE.0
            | Self::SD_WAKE_AFFINE.0
            | Self::SD_SHARE_CPUCAPACITY.0
            | Self::SD_SHARE_LLC.0,
    );

    /// All bits of `other` are set.
    pub fn contains(self, other: SdFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Some bit of `other` is set.
    pub fn intersects(self, other: SdFlags) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Kernel names of the set flags, in bit order.
    pub fn names(self) -> Vec<&'static str> {
        Self::ALL
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }

    /// The flag called `name` (`"SD_NUMA"`), if any.
    pub fn from_name(name: &str) -> Option<SdFlags> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(f, _)| *f)
    }
}

impl BitOr for SdFlags {
    type Output = SdFlags;
    fn bitor(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for SdFlags {
    fn bitor_assign(&mut self, rhs: SdFlags) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for SdFlags {
    type Output = SdFlags;
    fn bitand(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 & rhs.0)
    }
}

impl BitAndAssign for SdFlags {
    fn bitand_assign(&mut self, rhs: SdFlags) {
        self.0 &= rhs.0;
    }
}

impl Not for SdFlags {
    type Output = SdFlags;
    fn not(self) -> SdFlags {
        SdFlags(!self.0)
    }
}

/// `SD_FLAG|SD_FLAG...` as the kernel's debugfs `flags` file lists them (space
/// separated there; `|` here so it stays one token).
impl fmt::Display for SdFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join("|"))
    }
}

impl fmt::Debug for SdFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SdFlags({self})")
    }
}

/// Index of a [`SchedDomain`] in [`SchedDomains::domains`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct DomainId(pub usize);

/// Index of a [`SchedGroup`] in [`SchedDomains::groups`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct GroupId(pub usize);

/// One CPU's domain at one level (`struct sched_domain`), after degenerate removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// The CPU this domain belongs to (domains are per CPU).
    pub cpu: usize,
    /// `sd->name`: the topology level's name (`SMT`, `CLS`, `CACHE`, `MC`, `PKG`, `NODE`,
    /// `NUMA`).
    pub name: &'static str,
    /// `sd->level`: position in the chain *before* degenerate removal (the kernel does
    /// not renumber); see [`SchedDomains::cpu_domains`] for the surviving order.
    pub level: usize,
    /// `sched_domain_span(sd)`: online CPUs only.
    pub span: CpuMask,
    /// `sd->span_weight`.
    pub span_weight: usize,
    pub flags: SdFlags,
    pub imbalance_pct: u32,
    pub busy_factor: u32,
    /// `sd->min_interval`, in ms (= weight of the level's CPU mask).
    pub min_interval_ms: u32,
    /// `sd->max_interval`, in ms (= 2 × that weight).
    pub max_interval_ms: u32,
    pub cache_nice_tries: u32,
    /// `sd->imb_numa_nr`: tasks a NUMA imbalance may leave (0 below the LLC).
    pub imb_numa_nr: u32,
    /// `sd->groups` as a list in the kernel's circular order: the group containing
    /// `cpu` first, then wrapping around by CPU id.
    pub groups: Vec<GroupId>,
    pub parent: Option<DomainId>,
    pub child: Option<DomainId>,
    /// The SLIT distance this NUMA/NODE level stands for (`sched_domains_numa_distance`),
    /// `None` for arch levels.
    pub numa_distance: Option<u32>,
}

/// `struct sched_group` with its `sched_group_capacity`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    /// `sched_group_span(sg)`.
    pub span: CpuMask,
    /// `group_balance_mask(sg)`: the CPUs that arrive at this group when walking up their
    /// own hierarchy and so may balance on its behalf; equals `span` except for some
    /// overlapping NUMA groups.
    pub balance_mask: CpuMask,
    /// `sgc->capacity`: sum of the member CPUs' capacities.
    pub capacity: u64,
    /// `sgc->min_capacity`.
    pub min_capacity: u32,
    /// `sgc->max_capacity`.
    pub max_capacity: u32,
    /// `sg->group_weight`: CPUs in the span.
    pub group_weight: usize,
    /// `sg->cores`: distinct SMT cores in the span.
    pub cores: usize,
    /// `sg->flags`: the flags of the child domain this group stands for (0 for groups of
    /// the lowest level), as left by `cpu_attach_domain()`.
    pub flags: SdFlags,
    /// `sg->asym_prefer_cpu`, set when the domain has `SD_ASYM_PACKING`.
    pub asym_prefer_cpu: Option<usize>,
    /// Id of the shared `sched_group_capacity` (0..[`SchedDomains::nr_sgc`]): identical
    /// groups (also private NUMA ones) share one.
    pub sgc: usize,
    /// `sgc->id` as the kernel's debug output prints it: the CPU whose per-CPU `sgc`
    /// object this is.
    pub sgc_cpu: usize,
}

impl SchedGroup {
    /// `group_balance_cpu()`: first CPU of the balance mask.
    pub fn balance_cpu(&self) -> usize {
        self.balance_mask
            .first()
            .expect("a sched group always has a balance CPU")
    }
}

/// Per-CPU shortcut pointers (`update_top_cache_domain()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuShortcuts {
    /// `sd_llc`: highest domain with `SD_SHARE_LLC`.
    pub sd_llc: Option<DomainId>,
    /// `sd_llc_size`: its weight, 1 without one.
    pub llc_size: usize,
    /// `sd_llc_id`: first CPU of its span (the CPU itself without one). Also identifies
    /// the LLC's `sched_domain_shared` (`sd_llc_shared`).
    pub llc_id: usize,
    /// `sd_share_id`: first CPU of the lowest `SD_CLUSTER` domain, else `llc_id`.
    pub share_id: usize,
    /// `sd_numa`: lowest domain with `SD_NUMA`.
    pub sd_numa: Option<DomainId>,
    /// `sd_asym_packing`: highest domain with `SD_ASYM_PACKING`.
    pub sd_asym_packing: Option<DomainId>,
    /// `sd_asym_cpucapacity`: lowest domain with `SD_ASYM_CPUCAPACITY_FULL`.
    pub sd_asym_cpucapacity: Option<DomainId>,
}

/// The whole hierarchy of one root domain.
#[derive(Debug, Clone)]
pub struct SchedDomains {
    pub domains: Vec<SchedDomain>,
    pub groups: Vec<SchedGroup>,
    /// Root domain span: the CPUs the domains were built for (online CPUs).
    pub span: CpuMask,
    /// Number of distinct `sched_group_capacity` objects ([`SchedGroup::sgc`] ids).
    pub nr_sgc: usize,
    /// `sched_domains_numa_distance[]`: the distinct SLIT distances among nodes with
    /// online CPUs, ascending (`[10]` on a single-node machine).
    pub numa_distances: Vec<u32>,
    /// Static key `sched_asym_cpucapacity`: some domain has `SD_ASYM_CPUCAPACITY`.
    pub sched_asym_cpucapacity: bool,
    /// Static key `sched_cluster_active`: some CPU has an `SD_CLUSTER` domain.
    pub sched_cluster_active: bool,
    /// Messages the kernel would print while building (e.g. "BUG: arch topology
    /// borken" fix-ups), in order.
    pub warnings: Vec<String>,
    /// Set when the build failed as the kernel's would (`topology_span_sane()`); every
    /// CPU is then attached to the NULL domain, as at boot after a failed build.
    pub error: Option<String>,
    cpu_domains: Vec<Vec<DomainId>>,
    shortcuts: Vec<CpuShortcuts>,
}

impl SchedDomains {
    pub fn domain(&self, id: DomainId) -> &SchedDomain {
        &self.domains[id.0]
    }

    pub fn group(&self, id: GroupId) -> &SchedGroup {
        &self.groups[id.0]
    }

    /// The CPU's domains bottom-up (`for_each_domain(cpu, sd)`); empty for an offline
    /// CPU or one attached to the NULL domain.
    pub fn cpu_domains(&self, cpu: usize) -> &[DomainId] {
        self.cpu_domains.get(cpu).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `rq->sd`: the CPU's base domain.
    pub fn sd(&self, cpu: usize) -> Option<DomainId> {
        self.cpu_domains(cpu).first().copied()
    }

    /// The groups of a domain, local group first.
    pub fn groups_of(&self, id: DomainId) -> impl Iterator<Item = &SchedGroup> + '_ {
        self.domain(id).groups.iter().map(|g| self.group(*g))
    }

    /// Number of CPUs the hierarchy was built for (possible CPUs of the machine).
    pub fn nr_cpus(&self) -> usize {
        self.cpu_domains.len()
    }

    fn shortcut(&self, cpu: usize) -> CpuShortcuts {
        self.shortcuts.get(cpu).copied().unwrap_or(CpuShortcuts {
            sd_llc: None,
            llc_size: 1,
            llc_id: cpu,
            share_id: cpu,
            sd_numa: None,
            sd_asym_packing: None,
            sd_asym_cpucapacity: None,
        })
    }

    /// All per-CPU shortcuts of `cpu`.
    pub fn shortcuts(&self, cpu: usize) -> CpuShortcuts {
        self.shortcut(cpu)
    }

    /// `per_cpu(sd_llc, cpu)`.
    pub fn sd_llc(&self, cpu: usize) -> Option<DomainId> {
        self.shortcut(cpu).sd_llc
    }

    /// `per_cpu(sd_llc_size, cpu)`.
    pub fn llc_size(&self, cpu: usize) -> usize {
        self.shortcut(cpu).llc_size
    }

    /// `per_cpu(sd_llc_id, cpu)`.
    pub fn llc_id(&self, cpu: usize) -> usize {
        self.shortcut(cpu).llc_id
    }

    /// `per_cpu(sd_share_id, cpu)`.
    pub fn share_id(&self, cpu: usize) -> usize {
        self.shortcut(cpu).share_id
    }

    /// `per_cpu(sd_numa, cpu)`.
    pub fn sd_numa(&self, cpu: usize) -> Option<DomainId> {
        self.shortcut(cpu).sd_numa
    }

    /// `per_cpu(sd_asym_packing, cpu)`.
    pub fn sd_asym_packing(&self, cpu: usize) -> Option<DomainId> {
        self.shortcut(cpu).sd_asym_packing
    }

    /// `per_cpu(sd_asym_cpucapacity, cpu)`.
    pub fn sd_asym_cpucapacity(&self, cpu: usize) -> Option<DomainId> {
        self.shortcut(cpu).sd_asym_cpucapacity
    }

    /// `cpus_share_cache()`: same LLC domain.
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.llc_id(a) == self.llc_id(b)
    }

    /// `cpus_share_resources()`: same cluster (or LLC when there is no cluster).
    pub fn cpus_share_resources(&self, a: usize, b: usize) -> bool {
        a == b || self.share_id(a) == self.share_id(b)
    }

    /// `highest_flag_domain()`: the highest domain of `cpu` with all of `flag`; for
    /// `SDF_SHARED_CHILD` flags the walk stops at the first domain without it.
    pub fn highest_flag_domain(&self, cpu: usize, flag: SdFlags) -> Option<DomainId> {
        let mut found = None;
        for &id in self.cpu_domains(cpu) {
            if self.domain(id).flags.contains(flag) {
                found = Some(id);
            } else if flag.intersects(SdFlags::SD_SHARED_CHILD_MASK) {
                break;
            }
        }
        found
    }

    /// `lowest_flag_domain()`: the lowest domain of `cpu` with all of `flag`.
    pub fn lowest_flag_domain(&self, cpu: usize, flag: SdFlags) -> Option<DomainId> {
        self.cpu_domains(cpu)
            .iter()
            .copied()
            .find(|&id| self.domain(id).flags.contains(flag))
    }

    /// The lowest domain of `cpu` whose span holds `other` (`for_each_domain(cpu, sd)` until
    /// `cpumask_test_cpu(other, sched_domain_span(sd))`): where `ttwu_stat()` counts a remote
    /// wakeup and where active balancing pushes from `other` to `cpu`.
    pub fn lowest_spanning(&self, cpu: usize, other: usize) -> Option<DomainId> {
        self.cpu_domains(cpu)
            .iter()
            .copied()
            .find(|&id| self.domain(id).span.test(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_sd_flags_h_order_and_names() {
        assert_eq!(SdFlags::SD_BALANCE_NEWIDLE.0, 0x1);
        assert_eq!(SdFlags::SD_SHARE_LLC.0, 0x200);
        assert_eq!(SdFlags::SD_NUMA.0, 0x4000);
        let f = SdFlags::SD_NUMA | SdFlags::SD_BALANCE_EXEC;
        assert_eq!(f.names(), ["SD_BALANCE_EXEC", "SD_NUMA"]);
        assert_eq!(f.to_string(), "SD_BALANCE_EXEC|SD_NUMA");
        for (flag, name) in SdFlags::ALL {
            assert_eq!(SdFlags::from_name(name), Some(flag));
        }
        assert_eq!(SdFlags::from_name("SD_NOPE"), None);
    }

    #[test]
    fn only_wake_affine_works_without_groups() {
        let all = SdFlags::ALL.iter().fold(SdFlags::EMPTY, |a, (f, _)| a | *f);
        assert_eq!(
            all & !SdFlags::SD_DEGENERATE_GROUPS_MASK,
            SdFlags::SD_WAKE_AFFINE
        );
        assert!(!SdFlags::SD_SHARED_CHILD_MASK.intersects(SdFlags::SD_ASYM_PACKING));
        assert!(SdFlags::SD_SHARED_CHILD_MASK.contains(SdFlags::SD_SHARE_LLC));
    }
}
