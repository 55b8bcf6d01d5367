//! Construction of the hierarchy: `kernel/sched/topology.c: build_sched_domains()` and
//! its helpers, step by step.
//!
//! 1. Topology-level table of the machine's architecture ([`Arch`]), each level = (name,
//!    mask function, flags function) as in the kernel's `sched_domain_topology_level`
//!    arrays: x86 `x86_topology[]` (SMT, CLS, MC, PKG unless a package holds several
//!    nodes), the generic `default_topology[]` used by arm64/RISC-V (SMT, CLS, MC, PKG),
//!    powerpc `powerpc_topology[]` (SMT, CACHE only with `shared_caches`, MC = coregroup
//!    *without* `SD_SHARE_LLC`, PKG); then `sched_init_numa()`'s `NODE`, `NUMA`... The
//!    masks are restricted to online CPUs, because the arch hotplug code removes offline
//!    CPUs from the sibling masks (x86 `remove_siblinginfo()`, arm64
//!    `remove_cpu_topology()`, powerpc `remove_cpu_from_masks()`) and
//!    `sched_domains_numa_masks_clear()` from the NUMA masks.
//! 2. `topology_span_sane()` for non-NUMA levels.
//! 3. Per CPU, bottom-up `build_sched_domain()` = `sd_init()` + parent/child link + span
//!    fix-up; stop when a span covers all online CPUs.
//! 4. Groups: `build_sched_groups()`/`get_group()` or `build_overlap_sched_groups()`
//!    (`find_descended_sibling()`, `build_balance_mask()`, shared `sgc` per balance CPU).
//! 5. `imb_numa_nr`.
//! 6. `init_sched_groups_capacity()` for CPUs in descending order.
//! 7. `cpu_attach_domain()` for CPUs in ascending order: degenerate parents spliced out
//!    (group flags and `SD_PREFER_SIBLING` carried down as the kernel does), degenerate
//!    base dropped, then `update_top_cache_domain()`.
//!
//! Approximations (each also stated where it happens):
//! - arm64/generic masks are those of `drivers/base/arch_topology.c`:
//!   `cpu_coregroup_mask()` = the smallest of node, package and LLC, widened to the cluster
//!   when the LLC is inside it; `cpu_clustergroup_mask()` = the cluster unless it would
//!   cover the coregroup (then the SMT mask). x86 uses the L2 (`cluster`) and LLC masks
//!   directly; the two differ only when a cluster equals the LLC (x86 keeps `CLS`, arm64
//!   keeps `MC`). ITMT (`x86_sched_itmt_flags()`) is not modelled.
//! - powerpc: the machine's `core` is what `cpu_smt_mask()` returns (the small core on
//!   big-core parts), its `llc` is the L2 mask (`cpu_l2_cache_mask()`), and coregroups are
//!   given per machine ([`Machine::coregroup_mask`]). `shared_caches` is evaluated over all
//!   possible CPUs, as at boot. Only dedicated partitions: no shared-processor
//!   `splpar_asym_pack` (SD_ASYM_PACKING on CACHE/MC/PKG, MC dropped), no
//!   `CPU_FTR_ASYM_SMT` (POWER7).
//! - Group capacity is the sum of `arch_scale_cpu_capacity()` of the members:
//!   `update_group_capacity()` at build time with no RT/DL/IRQ pressure and no thermal
//!   capping, which is what `scale_rt_capacity()` returns on an idle machine.
//! - `arch_asym_cpu_priority()` is the default (`-cpu`): lower CPU ids are preferred.

use std::collections::BTreeSet;

use super::{CpuShortcuts, DomainId, GroupId, SchedDomain, SchedDomains, SchedGroup, SdFlags};
use crate::cpumask::CpuMask;
use crate::topology::{Arch, LOCAL_DISTANCE, Machine, presets};

/// Kernel parameters that shape the domains but are not topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainParams {
    /// `node_reclaim_distance`: NUMA levels farther than this lose `SD_BALANCE_EXEC`,
    /// `SD_BALANCE_FORK` and `SD_WAKE_AFFINE`.
    pub node_reclaim_distance: u32,
}

impl DomainParams {
    /// `RECLAIM_DISTANCE`, the generic default of `node_reclaim_distance`.
    pub const RECLAIM_DISTANCE: u32 = 30;

    /// The parameters the machine's kernel would use (32 on AMD Zen presets, see
    /// [`presets::node_reclaim_distance`]; 30 otherwise).
    pub fn for_machine(machine: &Machine) -> DomainParams {
        DomainParams {
            node_reclaim_distance: presets::node_reclaim_distance(&machine.name)
                .unwrap_or(Self::RECLAIM_DISTANCE),
        }
    }
}

impl Default for DomainParams {
    fn default() -> Self {
        DomainParams {
            node_reclaim_distance: Self::RECLAIM_DISTANCE,
        }
    }
}

/// Build the sched domains of `machine`'s online CPUs with the machine's kernel
/// parameters ([`DomainParams::for_machine`]).
pub fn build_sched_domains(machine: &Machine) -> SchedDomains {
    build_sched_domains_with(machine, &DomainParams::for_machine(machine))
}

/// `NR_DISTANCE_VALUES` (`1 << DISTANCE_BITS`): `sched_init_numa()` builds no NUMA levels
/// when a distance is outside `[LOCAL_DISTANCE, 256)`.
const NR_DISTANCE_VALUES: u32 = 256;

/// One entry of the topology-level table (`struct sched_domain_topology_level`).
struct Level {
    name: &'static str,
    /// What the level's `sd_flags()` function returns.
    topology_flags: SdFlags,
    /// `SDTL_OVERLAP`.
    overlap: bool,
    /// `tl->numa_level` for `NODE`/`NUMA` levels.
    numa_level: Option<usize>,
    /// `tl->mask(cpu)` for every possible CPU (online CPUs only in each mask).
    masks: Vec<CpuMask>,
}

/// One arch level before its masks are computed: name, `sd_flags()` result.
fn level(name: &'static str, topology_flags: SdFlags, masks: Vec<CpuMask>) -> Level {
    Level {
        name,
        topology_flags,
        overlap: false,
        numa_level: None,
        masks,
    }
}

/// `cpu_smt_flags()` (also x86's `x86_smt_flags()` and powerpc's `powerpc_smt_flags()`
/// without `CPU_FTR_ASYM_SMT`, a POWER7 feature).
const SMT_FLAGS: SdFlags = SdFlags(SdFlags::SD_SHARE_CPUCAPACITY.0 | SdFlags::SD_SHARE_LLC.0);
/// `cpu_cluster_flags()`.
const CLS_FLAGS: SdFlags = SdFlags(SdFlags::SD_CLUSTER.0 | SdFlags::SD_SHARE_LLC.0);
/// `cpu_core_flags()`, powerpc's `powerpc_shared_cache_flags()` (dedicated partitions).
const CORE_FLAGS: SdFlags = SdFlags::SD_SHARE_LLC;

/// The architecture's `sched_domain_topology_level` table, each level's mask function
/// evaluated for every possible CPU (online CPUs only in each mask).
fn arch_levels(m: &Machine, online: &CpuMask, node_cpus: &[CpuMask]) -> Vec<Level> {
    let n = m.nr_cpus();
    let on = |mask: &CpuMask| mask.and(online);
    let node_of = |cpu: usize| m.cpus[cpu].node;
    let smt: Vec<CpuMask> = (0..n).map(|c| on(m.smt_mask(c))).collect();
    // cpu_cpu_mask() = cpumask_of_node(cpu_to_node(cpu)), on every architecture.
    let pkg: Vec<CpuMask> = (0..n).map(|c| node_cpus[node_of(c)]).collect();
    match m.arch {
        Arch::X86 => x86_levels(m, online, smt, pkg),
        Arch::Arm64 => arm64_levels(m, online, node_cpus, smt, pkg),
        Arch::Powerpc => powerpc_levels(m, online, smt, pkg),
    }
}

/// x86's levels: SMT, CLS, MC, and PKG unless a package holds several nodes.
fn x86_levels(m: &Machine, online: &CpuMask, smt: Vec<CpuMask>, pkg: Vec<CpuMask>) -> Vec<Level> {
    let n = m.nr_cpus();
    let on = |mask: &CpuMask| mask.and(online);
    // x86_topology[]: cpu_clustergroup_mask() = the L2 siblings,
    // cpu_coregroup_mask() = the LLC siblings; ITMT (SD_ASYM_PACKING on CLS, MC
    // and PKG) is not modelled.
    let cls = (0..n).map(|c| on(m.cluster_mask(c))).collect();
    let mc = (0..n).map(|c| on(m.llc_mask(c))).collect();
    let mut levels = vec![
        level("SMT", SMT_FLAGS, smt),
        level("CLS", CLS_FLAGS, cls),
        level("MC", CORE_FLAGS, mc),
    ];
    // x86_has_numa_in_package (set at boot, over all CPUs): the PKG level is left
    // out and the NUMA levels build the spanning domains.
    let numa_in_package = m.cpus.iter().any(|a| {
        m.package_mask(a.cpu)
            .iter()
            .any(|b| m.cpus[b].node != a.node)
    });
    if !numa_in_package {
        levels.push(level("PKG", SdFlags::EMPTY, pkg));
    }
    levels
}

/// arm64's levels: SMT, CLS, MC (the coregroup) and PKG.
fn arm64_levels(
    m: &Machine,
    online: &CpuMask,
    node_cpus: &[CpuMask],
    smt: Vec<CpuMask>,
    pkg: Vec<CpuMask>,
) -> Vec<Level> {
    let n = m.nr_cpus();
    let on = |mask: &CpuMask| mask.and(online);
    let node_of = |cpu: usize| m.cpus[cpu].node;
    // default_topology[] with drivers/base/arch_topology.c's masks.
    // cpu_coregroup_mask(): the smallest of node, package and LLC, widened to the
    // cluster when it lies inside it.
    let coregroup: Vec<CpuMask> = (0..n)
        .map(|c| {
            let package = on(m.package_mask(c));
            let llc = on(m.llc_mask(c));
            let cluster = on(m.cluster_mask(c));
            let mut core = node_cpus[node_of(c)];
            if package.is_subset_of(&core) {
                core = package;
            }
            if llc.is_subset_of(&core) {
                core = llc;
            }
            if core.is_subset_of(&cluster) {
                core = cluster;
            }
            core
        })
        .collect();
    // cpu_clustergroup_mask(): never as wide as the coregroup.
    let cls: Vec<CpuMask> = (0..n)
        .map(|c| {
            let cluster = on(m.cluster_mask(c));
            if coregroup[c].is_subset_of(&cluster) {
                smt[c]
            } else {
                cluster
            }
        })
        .collect();
    vec![
        level("SMT", SMT_FLAGS, smt),
        level("CLS", CLS_FLAGS, cls),
        level("MC", CORE_FLAGS, coregroup),
        level("PKG", SdFlags::EMPTY, pkg),
    ]
}

/// powerpc's levels (dedicated partition): SMT, CACHE and MC when present, PKG.
fn powerpc_levels(
    m: &Machine,
    online: &CpuMask,
    smt: Vec<CpuMask>,
    pkg: Vec<CpuMask>,
) -> Vec<Level> {
    let n = m.nr_cpus();
    let on = |mask: &CpuMask| mask.and(online);
    // powerpc_topology[] as build_sched_topology() assembles it for a dedicated
    // partition (no SPLPAR asym packing): SMT = cpu_smt_mask() (the small core on
    // big-core parts, which the machine's `core` already is); CACHE = the L2
    // siblings (the machine's `llc`), only if `shared_caches`, i.e. some CPU's L2
    // mask is wider than its SMT mask at boot; MC = the coregroup with flags 0
    // (powerpc_shared_proc_flags()), only with coregroup support; PKG.
    let mut levels = vec![level("SMT", SMT_FLAGS, smt)];
    let shared_caches = (0..n).any(|c| m.llc_mask(c).weight() > m.smt_mask(c).weight());
    if shared_caches {
        let l2 = (0..n).map(|c| on(m.llc_mask(c))).collect();
        levels.push(level("CACHE", CORE_FLAGS, l2));
    }
    if m.coregroup_mask(0).is_some() {
        let mc = (0..n)
            .map(|c| on(m.coregroup_mask(c).expect("checked")))
            .collect();
        levels.push(level("MC", SdFlags::EMPTY, mc));
    }
    levels.push(level("PKG", SdFlags::EMPTY, pkg));
    levels
}

/// The table: arch levels then `sched_init_numa()`'s levels, plus the distinct distances.
fn topology_levels(
    m: &Machine,
    online: &CpuMask,
    warnings: &mut Vec<String>,
) -> (Vec<Level>, Vec<u32>) {
    let n = m.nr_cpus();
    let on = |mask: &CpuMask| mask.and(online);
    let node_of = |cpu: usize| m.cpus[cpu].node;
    let node_cpus: Vec<CpuMask> = (0..m.nr_nodes()).map(|nd| on(m.node_mask(nd))).collect();
    let mut levels = arch_levels(m, online, &node_cpus);

    // sched_init_numa(): nodes without online CPUs are left out (the kernel passes the
    // node whose last CPU went offline as `offline_node`, and N_CPU excludes the rest).
    let cpu_nodes: Vec<usize> = (0..m.nr_nodes())
        .filter(|&nd| !node_cpus[nd].is_empty())
        .collect();
    let mut distinct = BTreeSet::new();
    for &a in &cpu_nodes {
        for &b in &cpu_nodes {
            distinct.insert(m.distance(a, b));
        }
    }
    let distances: Vec<u32> = distinct.into_iter().collect();
    if distances
        .iter()
        .any(|&d| !(LOCAL_DISTANCE..NR_DISTANCE_VALUES).contains(&d))
    {
        warnings.push("ERROR: Invalid distance value range".to_string());
        return (levels, Vec::new());
    }
    for (numa_level, &d) in distances.iter().enumerate() {
        let masks = (0..n)
            .map(|c| {
                cpu_nodes
                    .iter()
                    .filter(|&&k| m.distance(node_of(c), k) <= d)
                    .fold(CpuMask::new(), |acc, &k| acc.or(&node_cpus[k]))
            })
            .collect();
        levels.push(if numa_level == 0 {
            Level {
                name: "NODE",
                topology_flags: SdFlags::EMPTY,
                overlap: false,
                numa_level: Some(0),
                masks,
            }
        } else {
            Level {
                name: "NUMA",
                topology_flags: SdFlags::SD_NUMA,
                overlap: true,
                numa_level: Some(numa_level),
                masks,
            }
        });
    }
    (levels, distances)
}

/// `topology_span_sane()`: at a non-overlapping level, two CPUs' masks are equal or
/// disjoint. Checked once per level over the distinct masks.
fn topology_span_sane(level: &Level, cpu_map: &CpuMask) -> Result<(), String> {
    if level.overlap {
        return Ok(());
    }
    let distinct: Vec<CpuMask> = cpu_map
        .iter()
        .map(|c| level.masks[c])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    for (i, a) in distinct.iter().enumerate() {
        if let Some(b) = distinct[i + 1..].iter().find(|b| a.intersects(b)) {
            return Err(format!(
                "topology_span_sane: {} level masks {a} and {b} partially overlap",
                level.name
            ));
        }
    }
    Ok(())
}

/// `asym_cap_list`: CPUs grouped by capacity, descending; empty when symmetric.
struct AsymCapList(Vec<CpuMask>);

impl AsymCapList {
    /// `asym_cpu_capacity_scan()`: over all possible CPUs (offline ones included, as the
    /// kernel scans `cpu_possible_mask`).
    fn scan(m: &Machine) -> AsymCapList {
        let mut by_cap: std::collections::BTreeMap<u32, CpuMask> = Default::default();
        for c in &m.cpus {
            by_cap.entry(c.capacity).or_default().set(c.cpu);
        }
        if by_cap.len() < 2 {
            return AsymCapList(Vec::new());
        }
        AsymCapList(by_cap.into_values().rev().collect())
    }

    /// `asym_cpu_capacity_classify()`.
    fn classify(&self, span: &CpuMask, cpu_map: &CpuMask) -> SdFlags {
        let mut count = 0;
        let mut miss = 0;
        for cpus in &self.0 {
            if span.intersects(cpus) {
                count += 1;
            } else if cpu_map.intersects(cpus) {
                miss += 1;
            }
        }
        if count < 2 {
            SdFlags::EMPTY
        } else if miss > 0 {
            SdFlags::SD_ASYM_CPUCAPACITY
        } else {
            SdFlags::SD_ASYM_CPUCAPACITY | SdFlags::SD_ASYM_CPUCAPACITY_FULL
        }
    }
}

/// A domain under construction (one per CPU per level, like the kernel's per-CPU
/// `sdd->sd` objects).
struct BuildSd {
    cpu: usize,
    tl: usize,
    span: CpuMask,
    flags: SdFlags,
    imbalance_pct: u32,
    busy_factor: u32,
    cache_nice_tries: u32,
    min_interval_ms: u32,
    max_interval_ms: u32,
    level: usize,
    child: Option<usize>,
    parent: Option<usize>,
    groups: Vec<usize>,
    span_weight: usize,
    imb_numa_nr: u32,
}

struct Builder<'a> {
    m: &'a Machine,
    params: DomainParams,
    cpu_map: CpuMask,
    levels: Vec<Level>,
    distances: Vec<u32>,
    asym: AsymCapList,
    sds: Vec<BuildSd>,
    /// `*per_cpu_ptr(tl->data.sd, cpu)`.
    sd_of: Vec<Vec<Option<usize>>>,
    groups: Vec<SchedGroup>,
    /// `*per_cpu_ptr(tl->data.sg, cpu)` once initialised (non-overlapping groups).
    group_of: Vec<Vec<Option<usize>>>,
    /// `*per_cpu_ptr(tl->data.sgc, cpu)` once referenced.
    sgc_of: Vec<Vec<Option<usize>>>,
    /// Balance mask stored in each sgc.
    sgc_mask: Vec<CpuMask>,
    warnings: Vec<String>,
    /// Setup-cost caches (results unchanged, see [`BuildCaches`]).
    caches: BuildCaches,
}

/// Memos of pure functions of the build, so a 768-CPU machine does not redo per CPU what
/// depends only on a span (why: the kernel builds the same objects once per CPU, which
/// cost ~220 M instructions per run at 768 CPUs, most of it recomputing these):
/// - `build_balance_mask()` depends only on the sibling's level and the group's span once
///   the domains are linked (the groups pass changes no span nor child link);
/// - a group's weight, cores and capacities depend only on its span and the machine.
#[derive(Default)]
struct BuildCaches {
    balance_mask: std::collections::BTreeMap<(usize, CpuMask), CpuMask>,
    group_capacity: std::collections::BTreeMap<CpuMask, GroupCapacity>,
    /// Groups whose capacity fields are already set (non-overlapping groups are shared by
    /// every CPU of their domain span).
    capacity_done: Vec<bool>,
}

/// What `init_sched_groups_capacity()` computes for a span.
#[derive(Clone, Copy)]
struct GroupCapacity {
    weight: usize,
    cores: usize,
    capacity: u64,
    min_capacity: u32,
    max_capacity: u32,
}

/// `for_each_cpu_wrap(i, span, cpu)` with the loop's `if (cpumask_test_cpu(i, covered))
/// continue;` folded in: the next CPU of `span` not in `covered` (as `covered` is when
/// asked) in wrap order from `start`. Why: the groups passes visited every CPU of a
/// 384-768-CPU span per CPU only to skip the covered ones; this jumps over them a word at
/// a time and yields the same CPUs in the same order.
struct UncoveredWrap {
    start: usize,
    pos: usize,
    wrapped: bool,
}

impl UncoveredWrap {
    fn new(start: usize) -> Self {
        UncoveredWrap {
            start,
            pos: start,
            wrapped: false,
        }
    }

    fn next(&mut self, span: &CpuMask, covered: &CpuMask) -> Option<usize> {
        loop {
            match span.andnot(covered).next_from(self.pos) {
                Some(i) if !self.wrapped || i < self.start => {
                    self.pos = i + 1;
                    return Some(i);
                }
                None if !self.wrapped => {
                    self.wrapped = true;
                    self.pos = 0;
                }
                _ => return None,
            }
        }
    }
}

impl<'a> Builder<'a> {
    fn warn(&mut self, msg: String) {
        if !self.warnings.contains(&msg) {
            self.warnings.push(msg);
        }
    }

    /// `sd_init()`.
    fn sd_init(&mut self, tl: usize, cpu: usize, child: Option<usize>) -> usize {
        let level = &self.levels[tl];
        // sd_weight: weight of the raw level mask (intervals scale with it).
        let sd_weight = level.masks[cpu].weight() as u32;
        let mut flags = SdFlags::SD_BALANCE_NEWIDLE
            | SdFlags::SD_BALANCE_EXEC
            | SdFlags::SD_BALANCE_FORK
            | SdFlags::SD_WAKE_AFFINE
            | SdFlags::SD_PREFER_SIBLING
            | level.topology_flags;
        let span = self.cpu_map.and(&level.masks[cpu]);
        flags |= self.asym.classify(&span, &self.cpu_map);
        // Don't attempt to spread across CPUs of different capacities.
        if let Some(c) = child
            && flags.contains(SdFlags::SD_ASYM_CPUCAPACITY)
        {
            self.sds[c].flags &= !SdFlags::SD_PREFER_SIBLING;
        }
        let mut imbalance_pct = 117;
        let cache_nice_tries;
        if flags.contains(SdFlags::SD_SHARE_CPUCAPACITY) {
            imbalance_pct = 110;
            cache_nice_tries = 0;
        } else if flags.contains(SdFlags::SD_SHARE_LLC) {
            imbalance_pct = 117;
            cache_nice_tries = 1;
        } else if flags.contains(SdFlags::SD_NUMA) {
            cache_nice_tries = 2;
            flags &= !SdFlags::SD_PREFER_SIBLING;
            flags |= SdFlags::SD_SERIALIZE;
            let distance = level.numa_level.map(|l| self.distances[l]).unwrap_or(0);
            if distance > self.params.node_reclaim_distance {
                flags &= !(SdFlags::SD_BALANCE_EXEC
                    | SdFlags::SD_BALANCE_FORK
                    | SdFlags::SD_WAKE_AFFINE);
            }
        } else {
            cache_nice_tries = 1;
        }
        self.sds.push(BuildSd {
            cpu,
            tl,
            span,
            flags,
            imbalance_pct,
            busy_factor: 16,
            cache_nice_tries,
            min_interval_ms: sd_weight,
            max_interval_ms: 2 * sd_weight,
            level: 0,
            child,
            parent: None,
            groups: Vec::new(),
            span_weight: 0,
            imb_numa_nr: 0,
        });
        self.sds.len() - 1
    }

    /// `build_sched_domain()`: `sd_init()`, link to the child, fix a span that does not
    /// contain the child's.
    fn build_sched_domain(&mut self, tl: usize, cpu: usize, child: Option<usize>) -> usize {
        let sd = self.sd_init(tl, cpu, child);
        if let Some(c) = child {
            self.sds[sd].level = self.sds[c].level + 1;
            self.sds[c].parent = Some(sd);
            if !self.sds[c].span.is_subset_of(&self.sds[sd].span) {
                let msg = format!(
                    "BUG: arch topology borken: the {} domain not a subset of the {} domain",
                    self.levels[self.sds[c].tl].name, self.levels[tl].name
                );
                self.warn(msg);
                self.sds[sd].span = self.sds[sd].span.or(&self.sds[c].span);
            }
        }
        sd
    }

    fn sgc_id(&mut self, tl: usize, cpu: usize, mask: &CpuMask) -> usize {
        if let Some(id) = self.sgc_of[tl][cpu] {
            if self.sgc_mask[id] != *mask {
                self.warn(format!(
                    "WARNING: sgc of CPU{cpu} at level {} reused with balance mask {mask} != {}",
                    self.levels[tl].name, self.sgc_mask[id]
                ));
            }
            return id;
        }
        self.sgc_mask.push(*mask);
        let id = self.sgc_mask.len() - 1;
        self.sgc_of[tl][cpu] = Some(id);
        id
    }

    fn new_group(
        &mut self,
        span: CpuMask,
        balance_mask: CpuMask,
        flags: SdFlags,
        sgc: usize,
        sgc_cpu: usize,
    ) -> usize {
        self.groups.push(SchedGroup {
            span,
            balance_mask,
            capacity: 0,
            min_capacity: 0,
            max_capacity: 0,
            group_weight: span.weight(),
            cores: 0,
            flags,
            asym_prefer_cpu: None,
            sgc,
            sgc_cpu,
        });
        self.groups.len() - 1
    }

    /// `get_group()`: the shared group of CPU `i`'s child domain at level `tl`.
    fn get_group(&mut self, i: usize, tl: usize) -> usize {
        let child = self.sd_of[tl][i].and_then(|s| self.sds[s].child);
        let key = match child {
            Some(c) => self.sds[c].span.first().unwrap_or(i),
            None => i,
        };
        if let Some(g) = self.group_of[tl][key] {
            return g;
        }
        let (span, flags) = match child {
            Some(c) => (self.sds[c].span, self.sds[c].flags),
            None => (CpuMask::single(key), SdFlags::EMPTY),
        };
        let sgc = self.sgc_id(tl, key, &span);
        let g = self.new_group(span, span, flags, sgc, key);
        self.group_of[tl][key] = Some(g);
        g
    }

    /// `build_sched_groups()`.
    fn build_sched_groups(&mut self, sd: usize, cpu: usize) {
        let span = self.sds[sd].span;
        let tl = self.sds[sd].tl;
        let mut covered = CpuMask::new();
        let mut list = Vec::new();
        let mut wrap = UncoveredWrap::new(cpu);
        while let Some(i) = wrap.next(&span, &covered) {
            let g = self.get_group(i, tl);
            covered = covered.or(&self.groups[g].span);
            list.push(g);
        }
        self.sds[sd].groups = list;
    }

    /// `find_descended_sibling()`.
    fn find_descended_sibling(&self, sd: usize, mut sibling: usize) -> usize {
        let span = self.sds[sd].span;
        while let Some(c) = self.sds[sibling].child {
            if self.sds[c].span.is_subset_of(&span) {
                break;
            }
            sibling = c;
        }
        while let Some(c) = self.sds[sibling].child {
            if self.sds[c].span != self.sds[sibling].span {
                break;
            }
            sibling = c;
        }
        sibling
    }

    /// `build_balance_mask()`: CPUs of the group whose own domain at the sibling's level
    /// has exactly the group's span as child.
    /// Memoised per (level, group span): see [`BuildCaches`].
    fn build_balance_mask(&mut self, sibling: usize, group_span: &CpuMask) -> CpuMask {
        let tl = self.sds[sibling].tl;
        if let Some(mask) = self.caches.balance_mask.get(&(tl, *group_span)) {
            return *mask;
        }
        let mask = group_span
            .iter()
            .filter(|&j| {
                self.sd_of[tl][j]
                    .and_then(|s| self.sds[s].child)
                    .is_some_and(|c| self.sds[c].span == *group_span)
            })
            .collect();
        self.caches.balance_mask.insert((tl, *group_span), mask);
        mask
    }

    /// `build_overlap_sched_groups()`.
    fn build_overlap_sched_groups(&mut self, sd: usize, cpu: usize) {
        let span = self.sds[sd].span;
        let tl = self.sds[sd].tl;
        let mut covered = CpuMask::new();
        let mut list = Vec::new();
        let mut wrap = UncoveredWrap::new(cpu);
        while let Some(i) = wrap.next(&span, &covered) {
            let Some(mut sibling) = self.sd_of[tl][i] else {
                continue;
            };
            if !self.sds[sibling].span.test(i) {
                continue;
            }
            if let Some(c) = self.sds[sibling].child
                && !self.sds[c].span.is_subset_of(&span)
            {
                sibling = self.find_descended_sibling(sd, sibling);
            }
            // build_group_from_child_sched_domain()
            let (group_span, flags) = match self.sds[sibling].child {
                Some(c) => (self.sds[c].span, self.sds[c].flags),
                None => (self.sds[sibling].span, SdFlags::EMPTY),
            };
            covered = covered.or(&group_span);
            // init_overlap_sched_group()
            let mut mask = self.build_balance_mask(sibling, &group_span);
            if mask.is_empty() {
                self.warn(format!(
                    "WARNING: empty balance mask for group {group_span} of CPU{cpu}"
                ));
                mask = group_span;
            }
            let first = mask.first().expect("non-empty mask");
            let sgc = self.sgc_id(self.sds[sibling].tl, first, &mask);
            let balance_mask = self.sgc_mask[sgc];
            let g = self.new_group(group_span, balance_mask, flags, sgc, first);
            list.push(g);
        }
        self.sds[sd].groups = list;
    }

    /// The `imb_numa_nr` pass of `build_sched_domains()`.
    fn compute_imb_numa_nr(&mut self, base: usize) {
        let mut imb: u32 = 0;
        let mut imb_span: usize = 1;
        let mut cur = Some(base);
        while let Some(s) = cur {
            let child = self.sds[s].child;
            let sw = self.sds[s].span_weight;
            let llc_boundary = !self.sds[s].flags.contains(SdFlags::SD_SHARE_LLC)
                && child.is_some_and(|c| self.sds[c].flags.contains(SdFlags::SD_SHARE_LLC));
            if llc_boundary {
                let child_sw = self.sds[child.expect("checked")].span_weight;
                let nr_llcs = sw / child_sw;
                imb = if nr_llcs == 1 {
                    (sw >> 3) as u32
                } else {
                    nr_llcs as u32
                };
                imb = imb.max(1);
                self.sds[s].imb_numa_nr = imb;
                // Span of the first NUMA ancestor.
                let mut top_p = self.sds[s].parent;
                while let Some(p) = top_p {
                    if self.sds[p].flags.contains(SdFlags::SD_NUMA) {
                        break;
                    }
                    top_p = self.sds[p].parent;
                }
                imb_span = top_p.map(|p| self.sds[p].span_weight).unwrap_or(sw);
            } else {
                let factor = (sw / imb_span).max(1) as u32;
                self.sds[s].imb_numa_nr = imb * factor;
            }
            cur = self.sds[s].parent;
        }
    }

    /// `init_sched_groups_capacity()` (+ the build-time `update_group_capacity()`). A group
    /// already set (shared by an earlier CPU) or a span already computed is not recomputed:
    /// the values depend only on the span (see [`BuildCaches`]).
    fn init_sched_groups_capacity(&mut self, sd: usize) {
        let asym_packing = self.sds[sd].flags.contains(SdFlags::SD_ASYM_PACKING);
        self.caches.capacity_done.resize(self.groups.len(), false);
        for gi in 0..self.sds[sd].groups.len() {
            let g = self.sds[sd].groups[gi];
            let span = self.groups[g].span;
            if !self.caches.capacity_done[g] {
                let cap = match self.caches.group_capacity.get(&span) {
                    Some(cap) => *cap,
                    None => {
                        let cap = group_capacity(self.m, &span);
                        self.caches.group_capacity.insert(span, cap);
                        cap
                    }
                };
                let group = &mut self.groups[g];
                group.group_weight = cap.weight;
                group.cores = cap.cores;
                group.capacity = cap.capacity;
                group.min_capacity = cap.min_capacity;
                group.max_capacity = cap.max_capacity;
                self.caches.capacity_done[g] = true;
            }
            let group = &mut self.groups[g];
            if asym_packing {
                // arch_asym_cpu_priority() = -cpu: the lowest id wins, first kept on ties.
                group.asym_prefer_cpu = span.first();
            }
        }
    }

    fn sd_degenerate(&self, sd: usize) -> bool {
        let s = &self.sds[sd];
        if s.span.weight() == 1 {
            return true;
        }
        if s.flags.intersects(SdFlags::SD_DEGENERATE_GROUPS_MASK) && s.groups.len() > 1 {
            return false;
        }
        !s.flags.contains(SdFlags::SD_WAKE_AFFINE)
    }

    fn sd_parent_degenerate(&self, sd: usize, parent: usize) -> bool {
        if self.sd_degenerate(parent) {
            return true;
        }
        let (c, p) = (&self.sds[sd], &self.sds[parent]);
        if c.span != p.span {
            return false;
        }
        let mut pflags = p.flags;
        if p.groups.len() == 1 {
            pflags &= !SdFlags::SD_DEGENERATE_GROUPS_MASK;
        }
        (pflags & !c.flags).is_empty()
    }

    /// `cpu_attach_domain()` minus the root-domain and shortcut parts; returns the new
    /// base domain.
    fn cpu_attach_domain(&mut self, base: Option<usize>) -> Option<usize> {
        let mut tmp = base;
        while let Some(t) = tmp {
            let Some(parent) = self.sds[t].parent else {
                break;
            };
            if self.sd_parent_degenerate(t, parent) {
                let grandparent = self.sds[parent].parent;
                self.sds[t].parent = grandparent;
                if let Some(gp) = grandparent {
                    self.sds[gp].child = Some(t);
                    let first = self.sds[gp].groups[0];
                    self.groups[first].flags = self.sds[t].flags;
                }
                // The spans match, so SD_PREFER_SIBLING transfers down.
                if self.sds[parent].flags.contains(SdFlags::SD_PREFER_SIBLING) {
                    self.sds[t].flags |= SdFlags::SD_PREFER_SIBLING;
                }
            } else {
                tmp = Some(parent);
            }
        }
        let mut sd = base;
        if let Some(b) = sd
            && self.sd_degenerate(b)
        {
            sd = self.sds[b].parent;
            if let Some(n) = sd {
                // The kernel's loop clearing the groups' flags never advances, so only
                // the first (local) group is cleared.
                let first = self.sds[n].groups[0];
                self.groups[first].flags = SdFlags::EMPTY;
                self.sds[n].child = None;
            }
        }
        sd
    }
}

/// A span's CPU count, cores (SMT masks stripped one core at a time) and capacity sum,
/// minimum and maximum.
fn group_capacity(m: &Machine, span: &CpuMask) -> GroupCapacity {
    let mut mask = *span;
    let mut cores = 0;
    while let Some(c) = mask.first() {
        cores += 1;
        mask = mask.andnot(m.smt_mask(c));
    }
    let caps: Vec<u32> = span.iter().map(|c| m.cpus[c].capacity).collect();
    GroupCapacity {
        weight: span.weight(),
        cores,
        capacity: caps.iter().copied().map(u64::from).sum(),
        min_capacity: caps.iter().copied().min().unwrap_or(0),
        max_capacity: caps.iter().copied().max().unwrap_or(0),
    }
}

/// [`build_sched_domains`] with explicit kernel parameters.
pub fn build_sched_domains_with(machine: &Machine, params: &DomainParams) -> SchedDomains {
    let n = machine.nr_cpus();
    let cpu_map = machine.online;
    let mut warnings = Vec::new();
    let (levels, distances) = topology_levels(machine, &cpu_map, &mut warnings);
    let nl = levels.len();
    let empty = |error: Option<String>, warnings: Vec<String>, distances: Vec<u32>| SchedDomains {
        domains: Vec::new(),
        groups: Vec::new(),
        span: cpu_map,
        nr_sgc: 0,
        numa_distances: distances,
        sched_asym_cpucapacity: false,
        sched_cluster_active: false,
        warnings,
        error,
        cpu_domains: vec![Vec::new(); n],
        shortcuts: (0..n)
            .map(|cpu| CpuShortcuts {
                sd_llc: None,
                llc_size: 1,
                llc_id: cpu,
                share_id: cpu,
                sd_numa: None,
                sd_asym_packing: None,
                sd_asym_cpucapacity: None,
            })
            .collect(),
    };
    if cpu_map.is_empty() {
        return empty(Some("no online CPUs".into()), warnings, distances);
    }
    for level in &levels {
        if let Err(e) = topology_span_sane(level, &cpu_map) {
            return empty(Some(e), warnings, distances);
        }
    }

    let mut b = Builder {
        m: machine,
        params: *params,
        cpu_map,
        asym: AsymCapList::scan(machine),
        levels,
        distances,
        sds: Vec::new(),
        sd_of: vec![vec![None; n]; nl],
        groups: Vec::new(),
        group_of: vec![vec![None; n]; nl],
        sgc_of: vec![vec![None; n]; nl],
        sgc_mask: Vec::new(),
        warnings,
        caches: BuildCaches::default(),
    };

    // Set up domains for the CPUs of the cpu_map.
    let mut base: Vec<Option<usize>> = vec![None; n];
    let mut has_asym = false;
    for cpu in cpu_map.iter() {
        let mut child = None;
        for tl in 0..nl {
            let sd = b.build_sched_domain(tl, cpu, child);
            has_asym |= b.sds[sd].flags.contains(SdFlags::SD_ASYM_CPUCAPACITY);
            if tl == 0 {
                base[cpu] = Some(sd);
            }
            b.sd_of[tl][cpu] = Some(sd);
            if b.levels[tl].overlap {
                b.sds[sd].flags |= SdFlags::SD_OVERLAP;
            }
            child = Some(sd);
            if b.sds[sd].span == cpu_map {
                break;
            }
        }
    }

    // Build the groups for the domains.
    for cpu in cpu_map.iter() {
        let mut cur = base[cpu];
        while let Some(sd) = cur {
            b.sds[sd].span_weight = b.sds[sd].span.weight();
            if b.sds[sd].flags.contains(SdFlags::SD_OVERLAP) {
                b.build_overlap_sched_groups(sd, cpu);
            } else {
                b.build_sched_groups(sd, cpu);
            }
            cur = b.sds[sd].parent;
        }
    }

    // Allowed NUMA imbalance.
    for cpu in cpu_map.iter() {
        if let Some(sd) = base[cpu] {
            b.compute_imb_numa_nr(sd);
        }
    }

    // Group capacities, CPUs in descending order.
    for cpu in cpu_map.iter().collect::<Vec<_>>().into_iter().rev() {
        let mut cur = base[cpu];
        while let Some(sd) = cur {
            b.init_sched_groups_capacity(sd);
            cur = b.sds[sd].parent;
        }
    }

    // Attach the domains.
    let mut chains: Vec<Vec<usize>> = vec![Vec::new(); n];
    for cpu in cpu_map.iter() {
        let mut cur = b.cpu_attach_domain(base[cpu]);
        while let Some(sd) = cur {
            chains[cpu].push(sd);
            cur = b.sds[sd].parent;
        }
    }

    finish(b, chains, has_asym)
}

/// Turn the surviving build domains into the flat, renumbered result and compute the
/// per-CPU shortcuts (`update_top_cache_domain()`).
fn finish(b: Builder<'_>, chains: Vec<Vec<usize>>, has_asym: bool) -> SchedDomains {
    let n = chains.len();
    let mut domain_id: Vec<Option<usize>> = vec![None; b.sds.len()];
    let mut order = Vec::new();
    for chain in &chains {
        for &sd in chain {
            domain_id[sd] = Some(order.len());
            order.push(sd);
        }
    }
    let (domains, groups, nr_sgc) = flatten(&b, &order, &domain_id);
    let cpu_domains: Vec<Vec<DomainId>> = chains
        .iter()
        .map(|chain| {
            chain
                .iter()
                .map(|&sd| DomainId(domain_id[sd].expect("surviving domain has an id")))
                .collect()
        })
        .collect();
    let mut out = SchedDomains {
        domains,
        groups,
        span: b.cpu_map,
        nr_sgc,
        numa_distances: b.distances,
        sched_asym_cpucapacity: has_asym,
        sched_cluster_active: false,
        warnings: b.warnings,
        error: None,
        cpu_domains,
        shortcuts: Vec::new(),
    };
    out.shortcuts = (0..n)
        .map(|cpu| update_top_cache_domain(&out, cpu))
        .collect();
    out.sched_cluster_active =
        (0..n).any(|cpu| out.lowest_flag_domain(cpu, SdFlags::SD_CLUSTER).is_some());
    super::invariants::debug_check(&out);
    out
}

/// The surviving domains in `order`, renumbered by `domain_id`, with the groups and group
/// capacities they use, renumbered in first-use order (and how many capacities).
fn flatten(
    b: &Builder<'_>,
    order: &[usize],
    domain_id: &[Option<usize>],
) -> (Vec<SchedDomain>, Vec<SchedGroup>, usize) {
    let mut group_id: Vec<Option<usize>> = vec![None; b.groups.len()];
    let mut sgc_id: Vec<Option<usize>> = vec![None; b.sgc_mask.len()];
    let mut groups = Vec::new();
    let mut nr_sgc = 0;
    let mut domains = Vec::with_capacity(order.len());
    for &sd in order {
        let s = &b.sds[sd];
        let mut glist = Vec::with_capacity(s.groups.len());
        for &g in &s.groups {
            let id = *group_id[g].get_or_insert_with(|| {
                let mut group = b.groups[g].clone();
                group.sgc = *sgc_id[group.sgc].get_or_insert_with(|| {
                    nr_sgc += 1;
                    nr_sgc - 1
                });
                groups.push(group);
                groups.len() - 1
            });
            glist.push(GroupId(id));
        }
        let level = &b.levels[s.tl];
        domains.push(SchedDomain {
            cpu: s.cpu,
            name: level.name,
            level: s.level,
            span: s.span,
            span_weight: s.span_weight,
            flags: s.flags,
            imbalance_pct: s.imbalance_pct,
            busy_factor: s.busy_factor,
            min_interval_ms: s.min_interval_ms,
            max_interval_ms: s.max_interval_ms,
            cache_nice_tries: s.cache_nice_tries,
            imb_numa_nr: s.imb_numa_nr,
            groups: glist,
            parent: s.parent.and_then(|p| domain_id[p]).map(DomainId),
            child: s.child.and_then(|c| domain_id[c]).map(DomainId),
            numa_distance: level.numa_level.map(|l| b.distances[l]),
        });
    }
    (domains, groups, nr_sgc)
}

/// `update_top_cache_domain()`.
fn update_top_cache_domain(sds: &SchedDomains, cpu: usize) -> CpuShortcuts {
    let sd_llc = sds.highest_flag_domain(cpu, SdFlags::SD_SHARE_LLC);
    let (llc_id, llc_size) = match sd_llc {
        Some(id) => {
            let d = sds.domain(id);
            (d.span.first().unwrap_or(cpu), d.span_weight)
        }
        None => (cpu, 1),
    };
    let share_id = sds
        .lowest_flag_domain(cpu, SdFlags::SD_CLUSTER)
        .and_then(|id| sds.domain(id).span.first())
        .unwrap_or(llc_id);
    CpuShortcuts {
        sd_llc,
        llc_size,
        llc_id,
        share_id,
        sd_numa: sds.lowest_flag_domain(cpu, SdFlags::SD_NUMA),
        sd_asym_packing: sds.highest_flag_domain(cpu, SdFlags::SD_ASYM_PACKING),
        sd_asym_cpucapacity: sds.lowest_flag_domain(cpu, SdFlags::SD_ASYM_CPUCAPACITY_FULL),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets;

    /// The groups loop as it was written before [`UncoveredWrap`]: `for_each_cpu_wrap()`
    /// over the span, skipping covered CPUs; `group_of(i)` is what visiting `i` covers.
    fn visits_skipping(
        span: &CpuMask,
        start: usize,
        group_of: &dyn Fn(usize) -> CpuMask,
    ) -> Vec<usize> {
        let mut covered = CpuMask::new();
        let mut seen = Vec::new();
        for i in span.iter_wrap(start) {
            if covered.test(i) {
                continue;
            }
            seen.push(i);
            covered = covered.or(&group_of(i));
        }
        seen
    }

    fn visits_uncovered(
        span: &CpuMask,
        start: usize,
        group_of: &dyn Fn(usize) -> CpuMask,
    ) -> Vec<usize> {
        let mut covered = CpuMask::new();
        let mut seen = Vec::new();
        let mut wrap = UncoveredWrap::new(start);
        while let Some(i) = wrap.next(span, &covered) {
            seen.push(i);
            covered = covered.or(&group_of(i));
        }
        seen
    }

    #[test]
    fn uncovered_wrap_visits_what_the_skipping_loop_visits() {
        // Spans with holes and across word boundaries; groups of 1, of 4 aligned CPUs,
        // of a CPU and its +64 twin, and groups that cover nothing (visited each time).
        let spans = [
            CpuMask::parse_list("0-767", 1024).unwrap(),
            CpuMask::parse_list("3-70,100,128-200", 1024).unwrap(),
            CpuMask::parse_list("5", 1024).unwrap(),
            CpuMask::parse_list("60-70,1000-1023", 1024).unwrap(),
        ];
        let groups: [&dyn Fn(usize) -> CpuMask; 4] = [
            &CpuMask::single,
            &|i| (i & !3..(i & !3) + 4).collect(),
            &|i| [i, (i + 64) % 1024].into_iter().collect(),
            &|_| CpuMask::new(),
        ];
        for span in &spans {
            for start in [0, 3, 5, 63, 64, 65, 100, 129, 767, 1023] {
                for (k, g) in groups.iter().enumerate() {
                    if k == 3 {
                        // Covering nothing: every CPU once, in wrap order.
                        let all: Vec<usize> = span.iter_wrap(start).collect();
                        assert_eq!(visits_uncovered(span, start, g), all);
                        continue;
                    }
                    assert_eq!(
                        visits_uncovered(span, start, g),
                        visits_skipping(span, start, g),
                        "span {span} start {start} grouping {k}"
                    );
                }
            }
        }
    }

    /// The memoised capacities equal a recount from the machine's CPU list (cores as
    /// distinct core ids) for every group of every preset.
    #[test]
    fn group_capacities_match_a_recount_on_every_preset() {
        for name in presets::names() {
            let m = presets::by_name(name).expect("preset");
            let sds = build_sched_domains(&m);
            assert!(sds.error.is_none(), "{name}");
            for g in &sds.groups {
                let cpus: Vec<_> = g.span.iter().map(|c| &m.cpus[c]).collect();
                let cores: BTreeSet<usize> = cpus.iter().map(|c| c.core).collect();
                assert_eq!(g.group_weight, cpus.len(), "{name}");
                assert_eq!(g.cores, cores.len(), "{name} group {}", g.span);
                let caps = cpus.iter().map(|c| c.capacity);
                assert_eq!(
                    g.capacity,
                    caps.clone().map(u64::from).sum::<u64>(),
                    "{name}"
                );
                assert_eq!(g.min_capacity, caps.clone().min().unwrap_or(0), "{name}");
                assert_eq!(g.max_capacity, caps.max().unwrap_or(0), "{name}");
            }
        }
    }

    /// `Machine::new`'s per-id masks equal the pairwise definition (CPUs with the same id).
    #[test]
    fn machine_masks_are_the_cpus_sharing_an_id() {
        for name in presets::names() {
            let m = presets::by_name(name).expect("preset");
            for a in &m.cpus {
                let same = |f: &dyn Fn(&crate::topology::CpuTopology) -> usize| -> CpuMask {
                    m.cpus
                        .iter()
                        .filter(|b| f(b) == f(a))
                        .map(|b| b.cpu)
                        .collect()
                };
                assert_eq!(*m.smt_mask(a.cpu), same(&|c| c.core), "{name}");
                assert_eq!(*m.cluster_mask(a.cpu), same(&|c| c.cluster), "{name}");
                assert_eq!(*m.llc_mask(a.cpu), same(&|c| c.llc), "{name}");
                assert_eq!(*m.package_mask(a.cpu), same(&|c| c.package), "{name}");
            }
        }
    }
}
