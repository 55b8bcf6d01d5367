//! Machine presets (ARCHITECTURE.md §4), each built from public facts cited in its doc
//! comment: core counts, SMT width, which CPUs share an L2 (cluster) and the last-level
//! cache, the NUMA layout with its SLIT distances, and the CPU numbering order the
//! firmware/kernel produce on the real machine.
//!
//! Presets are short data: a list of cores ([`CoreSpec`], each saying its package, node,
//! cluster, LLC, thread count and capacity) plus a [`Numbering`] rule that turns
//! (core, thread) pairs into CPU ids the way the real machine enumerates them. [`build`]
//! turns that into a validated [`Machine`].
//!
//! What the presets leave out: cache sizes and memory bandwidth (the cost model owns
//! those), Turbo Boost Max 3.0 "favoured core" rankings (ITMT priorities), and SNC/NPS
//! sub-NUMA modes other than the ones named (all x86 presets are one node per socket).

use super::{Arch, CpuTopology, LOCAL_DISTANCE, Machine, SCHED_CAPACITY_SCALE};

/// One physical core of a preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreSpec {
    pub package: usize,
    pub node: usize,
    /// Global id of the CPUs sharing this core's L2 (`cluster_cpus`).
    pub cluster: usize,
    /// Global id of the last-level cache this core shares.
    pub llc: usize,
    /// Hardware threads (SMT width) of this core.
    pub threads: usize,
    /// `arch_scale_cpu_capacity()` of every thread of this core.
    pub capacity: u32,
}

/// How CPU ids are handed out to the hardware threads of a core list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// Thread 0 of every core in core-list order, then thread 1 of every core, ... — what
    /// x86 ACPI MADT enumeration gives on Intel and AMD servers (CPU 0's sibling is CPU
    /// `nr_cores`).
    ThreadMajor,
    /// All threads of a core get consecutive ids (POWER; Intel client hybrids, where the
    /// P-core siblings are adjacent).
    CoreMajor,
}

/// Build a machine from a core list. Core ids are the indexes in `cores`.
///
/// Panics only if a preset's own data is inconsistent (a programming error caught by the
/// preset tests), never on user input.
pub fn build(
    name: &str,
    description: &str,
    cores: &[CoreSpec],
    numbering: Numbering,
    node_distance: Vec<Vec<u32>>,
) -> Machine {
    let mut threads: Vec<(usize, &CoreSpec)> = Vec::new();
    match numbering {
        Numbering::ThreadMajor => {
            let max_threads = cores.iter().map(|c| c.threads).max().unwrap_or(0);
            for t in 0..max_threads {
                threads.extend(cores.iter().enumerate().filter(|(_, c)| c.threads > t));
            }
        }
        Numbering::CoreMajor => {
            for (i, c) in cores.iter().enumerate() {
                threads.extend(std::iter::repeat_n((i, c), c.threads));
            }
        }
    }
    let cpus = threads
        .into_iter()
        .enumerate()
        .map(|(cpu, (core, c))| CpuTopology {
            cpu,
            core,
            cluster: c.cluster,
            llc: c.llc,
            package: c.package,
            node: c.node,
            capacity: c.capacity,
        })
        .collect();
    Machine::new(name, description, cpus, node_distance)
        .unwrap_or_else(|e| panic!("preset {name} is inconsistent: {e}"))
}

/// Cores of a homogeneous multi-socket machine, socket by socket, one node per socket.
/// `cores_per_cluster` cores share an L2, `cores_per_llc` share the LLC (global ids
/// count up across sockets). With `interleave_sockets`, the core list alternates sockets
/// (socket 0 core 0, socket 1 core 0, socket 0 core 1, ...) as old BIOSes enumerated.
pub fn uniform_cores(
    sockets: usize,
    cores_per_socket: usize,
    threads: usize,
    cores_per_llc: usize,
    cores_per_cluster: usize,
    interleave_sockets: bool,
) -> Vec<CoreSpec> {
    let core = |socket: usize, i: usize| {
        let global = socket * cores_per_socket + i;
        CoreSpec {
            package: socket,
            node: socket,
            cluster: global / cores_per_cluster,
            llc: global / cores_per_llc,
            threads,
            capacity: SCHED_CAPACITY_SCALE,
        }
    };
    if interleave_sockets {
        (0..cores_per_socket)
            .flat_map(|i| (0..sockets).map(move |s| (s, i)))
            .map(|(s, i)| core(s, i))
            .collect()
    } else {
        (0..sockets)
            .flat_map(|s| (0..cores_per_socket).map(move |i| (s, i)))
            .map(|(s, i)| core(s, i))
            .collect()
    }
}

/// A SLIT with `LOCAL_DISTANCE` on the diagonal and `remote` everywhere else (fully
/// connected sockets).
pub fn slit_uniform(nodes: usize, remote: u32) -> Vec<Vec<u32>> {
    (0..nodes)
        .map(|a| {
            (0..nodes)
                .map(|b| if a == b { LOCAL_DISTANCE } else { remote })
                .collect()
        })
        .collect()
}

struct Preset {
    name: &'static str,
    description: &'static str,
    /// Whose sched-domain topology table the machine's kernel uses.
    arch: Arch,
    make: fn() -> Machine,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "hybrid-10",
        description: "3 SMT2 cores (CPUs 0-5) + 4 single-thread cores (6-9), one LLC, one node",
        arch: Arch::X86,
        make: hybrid_10,
    },
    Preset {
        name: "adl-i9",
        description: "Intel Core i9-12900K: 8 P-cores SMT2 (0-15) + 8 E-cores (16-23), asymmetric capacity",
        arch: Arch::X86,
        make: adl_i9,
    },
    Preset {
        name: "power10-96",
        description: "IBM POWER10 dedicated LPAR: 12 SMT8 big cores = 24 interleaved SMT4 small cores (LLC), 2 coregroups (MC), one node",
        arch: Arch::Powerpc,
        make: power10_96,
    },
    Preset {
        name: "nehalem-2s",
        description: "2 x Xeon X5570 (Nehalem-EP): 2 x 4 cores x SMT2 = 16 CPUs, node 0 = even CPUs",
        arch: Arch::X86,
        make: nehalem_2s,
    },
    Preset {
        name: "haswell-2s",
        description: "2 x Xeon E5-2699 v3 (Haswell-EP): 2 x 18 cores x SMT2 = 72 CPUs, 2 nodes",
        arch: Arch::X86,
        make: haswell_2s,
    },
    Preset {
        name: "haswell-4s",
        description: "4 x Xeon E7-8890 v3 (Haswell-EX): 4 x 18 cores x SMT2 = 144 CPUs, 4 nodes",
        arch: Arch::X86,
        make: haswell_4s,
    },
    Preset {
        name: "skl-2s",
        description: "2 x Xeon Gold 6148 (Skylake-SP): 2 x 20 cores x SMT2 = 80 CPUs, 2 nodes",
        arch: Arch::X86,
        make: skl_2s,
    },
    Preset {
        name: "spr-2s",
        description: "2 x Xeon Platinum 8480+ (Sapphire Rapids): 2 x 56 cores x SMT2 = 224 CPUs, 2 nodes",
        arch: Arch::X86,
        make: spr_2s,
    },
    Preset {
        name: "milan-2s",
        description: "2 x EPYC 7763 (Zen 3): 2 x 64 cores x SMT2 = 256 CPUs, 8-core CCX LLCs, NPS1",
        arch: Arch::X86,
        make: milan_2s,
    },
    Preset {
        name: "turin-2s",
        description: "2 x EPYC 9755 (Zen 5): 2 x 128 cores x SMT2 = 512 CPUs, 8-core CCX LLCs, NPS1",
        arch: Arch::X86,
        make: turin_2s,
    },
    Preset {
        name: "turin-dense-2s",
        description: "2 x EPYC 9965 (Zen 5c): 2 x 192 cores x SMT2 = 768 CPUs, 16-core CCX LLCs, NPS1",
        arch: Arch::X86,
        make: turin_dense_2s,
    },
    Preset {
        name: "altra-2s",
        description: "2 x Ampere Altra Q80-30: 2 x 80 Neoverse N1 cores, no SMT, 2-core clusters, 2 nodes",
        arch: Arch::Arm64,
        make: altra_2s,
    },
];

/// Every preset name, in the order `schedlab list machines` prints them.
pub fn names() -> &'static [&'static str] {
    const NAMES: [&str; PRESETS.len()] = {
        let mut names = [""; PRESETS.len()];
        let mut i = 0;
        while i < PRESETS.len() {
            names[i] = PRESETS[i].name;
            i += 1;
        }
        names
    };
    &NAMES
}

/// The one-line description of preset `name`, without building it.
pub fn description(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.description)
}

/// The preset called `name`, if there is one.
pub fn by_name(name: &str) -> Option<Machine> {
    PRESETS.iter().find(|p| p.name == name).map(|p| {
        let mut machine = (p.make)();
        machine.arch = p.arch;
        machine
    })
}

/// `node_reclaim_distance` of the preset's kernel: `RECLAIM_DISTANCE` (30), except on
/// AMD Zen, where `arch/x86/kernel/cpu/amd.c` (`init_amd_zen_common()`, formerly
/// `init_amd_zn()`) sets it to 32 so that the 2-socket SLIT distance of 32 does not strip
/// `SD_BALANCE_EXEC`, `SD_BALANCE_FORK` and `SD_WAKE_AFFINE` from the NUMA domain in
/// `sd_init()`. `None` for machines that are not presets (the caller then uses 30).
pub fn node_reclaim_distance(name: &str) -> Option<u32> {
    match name {
        "milan-2s" | "turin-2s" | "turin-dense-2s" => Some(32),
        _ if PRESETS.iter().any(|p| p.name == name) => Some(30),
        _ => None,
    }
}

/// `hybrid-10`: the layout of the `should_we_balance()` report — three SMT2 cores
/// numbered first, siblings adjacent (`[0,1] [2,3] [4,5]`), then four single-thread cores
/// 6, 7, 8, 9. All ten CPUs share one LLC and one node; every core has its own L2 (so no
/// CLS level survives and the MC groups are {0,1},{2,3},{4,5},{6},{7},{8},{9}).
///
/// Capacity is symmetric (1024 everywhere). Why: on a hybrid x86 part with SMT enabled
/// the kernel keeps every CPU at `SCHED_CAPACITY_SCALE` and uses ITMT priorities instead
/// (`intel_pstate` enables hybrid capacity scaling only when SMT is not possible, see
/// `hybrid_init_cpu_capacity_scaling()`), and the report's effect is about the SMT
/// sibling choice, not capacity.
fn hybrid_10() -> Machine {
    let core = |i: usize, threads: usize| CoreSpec {
        package: 0,
        node: 0,
        cluster: i,
        llc: 0,
        threads,
        capacity: SCHED_CAPACITY_SCALE,
    };
    let cores: Vec<CoreSpec> = (0..3)
        .map(|i| core(i, 2))
        .chain((3..7).map(|i| core(i, 1)))
        .collect();
    build(
        "hybrid-10",
        description("hybrid-10").unwrap_or_default(),
        &cores,
        Numbering::CoreMajor,
        slit_uniform(1, LOCAL_DISTANCE),
    )
}

/// E-core capacity of `adl-i9`, as `intel_pstate`'s hybrid capacity scaling computes it:
/// `capacity = 1024 * highest_perf / max(highest_perf)`, where HWP performance levels are
/// in a common unit: one P-core level = 78.741 MHz (`HYBRID_SCALING_FACTOR_ADL` = 78741
/// kHz), one E-core level = 100 MHz (`INTEL_PSTATE_CORE_SCALING`). The i9-12900K P-core
/// max turbo is 5.2 GHz -> 66 levels; the E-core max turbo is 3.9 GHz -> 39 levels; so
/// 1024 * 39 / 66 = 605. (Intel ARK: i9-12900K, P-core max turbo 5.10 GHz (5.20 GHz
/// Turbo Boost Max 3.0), E-core max turbo 3.90 GHz.)
pub const ADL_E_CORE_CAPACITY: u32 = 605;

/// `adl-i9`: Intel Core i9-12900K (Alder Lake-S). 8 Golden Cove P-cores with SMT2 and
/// 1.25 MB private L2 each, numbered first with adjacent siblings (CPUs 0-15: core 0 =
/// CPUs 0,1); 8 Gracemont E-cores without SMT (CPUs 16-23) in two clusters of 4 sharing a
/// 2 MB L2 (16-19, 20-23); all share the 30 MB L3; one package, one node (Intel ARK and
/// the Alder Lake "Intel 7 hybrid architecture" disclosure; Linux enumerates P-core
/// threads first on these parts).
///
/// Capacity is asymmetric: P-cores 1024, E-cores [`ADL_E_CORE_CAPACITY`]. Approximation:
/// the kernel enables this capacity scaling only when SMT is not possible (with SMT on it
/// keeps 1024 everywhere and uses ITMT `SD_ASYM_PACKING`); the preset models the
/// capacity-aware configuration because the simulator's cost model needs the E-cores'
/// lower speed, and the brief asks for `SD_ASYM_CPUCAPACITY` on this machine.
fn adl_i9() -> Machine {
    let p = |i: usize| CoreSpec {
        package: 0,
        node: 0,
        cluster: i,
        llc: 0,
        threads: 2,
        capacity: SCHED_CAPACITY_SCALE,
    };
    let e = |i: usize| CoreSpec {
        package: 0,
        node: 0,
        cluster: 8 + (i - 8) / 4,
        llc: 0,
        threads: 1,
        capacity: ADL_E_CORE_CAPACITY,
    };
    let cores: Vec<CoreSpec> = (0..8).map(p).chain((8..16).map(e)).collect();
    build(
        "adl-i9",
        description("adl-i9").unwrap_or_default(),
        &cores,
        Numbering::CoreMajor,
        slit_uniform(1, LOCAL_DISTANCE),
    )
}

/// Big cores of `power10-96` in its first coregroup (the others form the second): the
/// membership node 0 of a real POWER10 dedicated LPAR shows (see `power10_96`).
pub const POWER10_COREGROUP0_BIG_CORES: [usize; 6] = [0, 3, 4, 6, 9, 10];

/// `power10-96`: an IBM POWER10 dedicated LPAR with 12 SMT8 big cores = 96 CPUs on one
/// node, as Linux sees it (`arch/powerpc/kernel/smp.c`, v6.12):
///
/// - Threads of a big core are consecutive (big core `b` = CPUs `8b..8b+7`), but the
///   firmware's `ibm,thread-groups` property 1 splits it into two interleaved SMT4 small
///   cores, threads {0,2,4,6} and {1,3,5,7}. With `has_big_cores` the kernel schedules the
///   small cores: `cpu_smt_mask()` = the small core (`core` here: 24 small cores).
/// - Property 2 says the L2 is shared by the same thread groups (`thread_group_shares_l2`),
///   so the L2/LLC mask is the small core too; `shared_caches` stays false and no CACHE
///   level is built: the SMT domain is the LLC domain (`sd_llc`, 4 CPUs).
/// - With coregroup support (dedicated LPAR, associativity form 2) an MC level spans the
///   CPU's coregroup, built from whole big cores, with no `SD_SHARE_LLC`
///   (`powerpc_shared_proc_flags()` = 0): two coregroups of 6 big cores,
///   [`POWER10_COREGROUP0_BIG_CORES`] (CPUs 0-7,24-39,48-55,72-87) and the rest (8-23,
///   40-47,56-71,88-95).
/// - PKG = the node (all 96 CPUs).
///
/// Sources: the seed report's machine (Shrikanth Hegde, LKML 2023-07-14, Tested-by on
/// "sched/fair: Consider the idle state of the whole core for load balance": POWER10,
/// 96 CPUs, offline 18-23,26-31,50-55,90-95, "a few cores SMT=1") — offlining 18-23 leaves
/// CPUs 16 and 17 alone in their small cores, which is what "SMT=1" means only with
/// interleaved small cores; the sched-domain dump of a POWER10 dedicated LPAR (Shrikanth
/// Hegde, LKML 2023-09-10, 96 SMT8 cores, 768 CPUs, 96 CPUs per node): `SMT 0,2,4,6`,
/// `MC 0-7,24-39,48-55,72-87` with small-core groups of capacity 4096, `DIE 0-95` with two
/// coregroup groups; Gautham Shenoy's 2020 `ibm,thread-groups` L2 patch (CACHE degenerates
/// into SMT, "the last-level-cache domain gets correctly set to the SMT sched-domain").
/// Assumption: the seed LPAR's node and coregroup layout is not published; this preset
/// takes node 0 of the 768-CPU LPAR (12 big cores, the same coregroup membership).
///
/// Not modelled: shared-processor LPARs (`splpar_asym_pack`: no MC level, SD_ASYM_PACKING
/// on CACHE/PKG), the big core's shared front end between its two small cores.
fn power10_96() -> Machine {
    let cpus: Vec<CpuTopology> = (0..96)
        .map(|cpu| {
            let small = 2 * (cpu / 8) + cpu % 2;
            CpuTopology {
                cpu,
                core: small,
                cluster: small,
                llc: small,
                package: 0,
                node: 0,
                capacity: SCHED_CAPACITY_SCALE,
            }
        })
        .collect();
    let mut m = Machine::new(
        "power10-96",
        description("power10-96").unwrap_or_default(),
        cpus,
        slit_uniform(1, LOCAL_DISTANCE),
    )
    .unwrap_or_else(|e| panic!("preset power10-96 is inconsistent: {e}"));
    let coregroup: Vec<usize> = (0..96)
        .map(|cpu| usize::from(!POWER10_COREGROUP0_BIG_CORES.contains(&(cpu / 8))))
        .collect();
    m.set_coregroups(&coregroup);
    m
}

/// `nehalem-2s`: 2 x Xeon X5570 (Nehalem-EP): 4 cores x SMT2 per socket, 256 KB private L2
/// per core, 8 MB L3 per socket, one node per socket, SLIT 10/21 (Intel ARK; typical
/// Nehalem-EP BIOS SLIT). Numbering interleaves sockets, as on the machine of the
/// hackbench/numactl investigation: CPUs 0-7 are the first threads alternating socket 0 /
/// socket 1 core by core, CPUs 8-15 the second threads in the same order, so node 0 = the
/// even CPUs and CPU 0's sibling is CPU 8.
fn nehalem_2s() -> Machine {
    build(
        "nehalem-2s",
        description("nehalem-2s").unwrap_or_default(),
        &uniform_cores(2, 4, 2, 4, 1, true),
        Numbering::ThreadMajor,
        slit_uniform(2, 21),
    )
}

/// `haswell-2s`: 2 x Xeon E5-2699 v3 (Haswell-EP): 18 cores x SMT2 per socket, 256 KB
/// private L2, 45 MB L3 per socket, Cluster-on-Die off (one node per socket), SLIT 10/21
/// (Intel ARK; the Intel 2-socket SLIT default). x86 numbering: socket 0 = CPUs 0-17 and
/// 36-53, socket 1 = 18-35 and 54-71.
fn haswell_2s() -> Machine {
    build(
        "haswell-2s",
        description("haswell-2s").unwrap_or_default(),
        &uniform_cores(2, 18, 2, 18, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 21),
    )
}

/// `haswell-4s`: 4 x Xeon E7-8890 v3 (Haswell-EX): 18 cores x SMT2 per socket, 256 KB
/// private L2, 45 MB L3 per socket, 3 QPI links per socket so the 4 sockets are fully
/// connected: SLIT 10/21 between every pair (Intel ARK). Numbering: first threads socket
/// by socket (0-71), then second threads (72-143).
fn haswell_4s() -> Machine {
    build(
        "haswell-4s",
        description("haswell-4s").unwrap_or_default(),
        &uniform_cores(4, 18, 2, 18, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(4, 21),
    )
}

/// `skl-2s`: 2 x Xeon Gold 6148 (Skylake-SP): 20 cores x SMT2 per socket, 1 MB private
/// L2, 27.5 MB L3 per socket, SNC off, SLIT 10/21 (Intel ARK). Socket 0 = CPUs 0-19 and
/// 40-59; CPU 0's sibling is 40.
fn skl_2s() -> Machine {
    build(
        "skl-2s",
        description("skl-2s").unwrap_or_default(),
        &uniform_cores(2, 20, 2, 20, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 21),
    )
}

/// `spr-2s`: 2 x Xeon Platinum 8480+ (Sapphire Rapids): 56 cores x SMT2 per socket, 2 MB
/// private L2, 105 MB L3 per socket, SNC off, SLIT 10/21 (Intel ARK). Socket 0 = CPUs
/// 0-55 and 112-167; CPU 0's sibling is 112.
fn spr_2s() -> Machine {
    build(
        "spr-2s",
        description("spr-2s").unwrap_or_default(),
        &uniform_cores(2, 56, 2, 56, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 21),
    )
}

/// `milan-2s`: 2 x AMD EPYC 7763 (Zen 3): 64 cores x SMT2 per socket in 8 CCDs of one
/// 8-core CCX each; 512 KB private L2; each CCX shares 32 MB L3 (so an LLC = 8 cores =
/// 16 CPUs); NPS1 (one node per socket), SLIT 10/32 (AMD EPYC 7003 datasheet; the 2P NPS1
/// SLIT AMD firmware reports). Numbering: first threads 0-127 socket by socket, second
/// threads 128-255; socket 0 = 0-63,128-191.
fn milan_2s() -> Machine {
    build(
        "milan-2s",
        description("milan-2s").unwrap_or_default(),
        &uniform_cores(2, 64, 2, 8, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 32),
    )
}

/// `turin-2s`: 2 x AMD EPYC 9755 (Zen 5): 128 cores x SMT2 per socket in 16 CCDs of 8
/// cores; 1 MB private L2; 32 MB L3 per 8-core CCX (LLC = 16 CPUs); NPS1, SLIT 10/32 (AMD
/// EPYC 9005 product page). Socket 0 = CPUs 0-127 and 256-383.
fn turin_2s() -> Machine {
    build(
        "turin-2s",
        description("turin-2s").unwrap_or_default(),
        &uniform_cores(2, 128, 2, 8, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 32),
    )
}

/// `turin-dense-2s`: 2 x AMD EPYC 9965 (Zen 5c): 192 cores x SMT2 per socket in 12 CCDs of
/// 16 cores; 1 MB private L2; 32 MB L3 shared by the 16 cores of a CCX (LLC = 32 CPUs);
/// NPS1, SLIT 10/32 (AMD EPYC 9005 product page). Socket 0 = CPUs 0-191 and 384-575.
fn turin_dense_2s() -> Machine {
    build(
        "turin-dense-2s",
        description("turin-dense-2s").unwrap_or_default(),
        &uniform_cores(2, 192, 2, 16, 1, false),
        Numbering::ThreadMajor,
        slit_uniform(2, 32),
    )
}

/// `altra-2s`: 2 x Ampere Altra Q80-30: 80 Arm Neoverse N1 cores per socket, no SMT,
/// 1 MB private L2 per core, 32 MB system-level cache that is memory-side (not described
/// as a CPU cache in the ACPI PPTT), one node per socket; socket 0 = CPUs 0-79 (Ampere
/// Altra product brief). The PPTT groups cores in pairs (two cores per mesh crosspoint):
/// that is the 2-CPU `cluster` here ("CLS [0-1]" in Darren Hart's arch_topology patch
/// for this machine). The LLC reported to Linux is the private L2, so each core is its own
/// LLC; arm64's `cpu_coregroup_mask()` then widens MC to the cluster and
/// `cpu_clustergroup_mask()` shrinks CLS to the core, so the lowest surviving level is an
/// `MC` of 2 CPUs (see `crate::domains`). SLIT 10/20: the ACPI default remote distance;
/// not verified against a real Altra SLIT.
fn altra_2s() -> Machine {
    let cores: Vec<CoreSpec> = (0..160)
        .map(|i| CoreSpec {
            package: i / 80,
            node: i / 80,
            cluster: i / 2,
            llc: i,
            threads: 1,
            capacity: SCHED_CAPACITY_SCALE,
        })
        .collect();
    build(
        "altra-2s",
        description("altra-2s").unwrap_or_default(),
        &cores,
        Numbering::CoreMajor,
        slit_uniform(2, 20),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_with_its_cpu_count() {
        let expected = [
            ("hybrid-10", 10, 1),
            ("adl-i9", 24, 1),
            ("power10-96", 96, 1),
            ("nehalem-2s", 16, 2),
            ("haswell-2s", 72, 2),
            ("haswell-4s", 144, 4),
            ("skl-2s", 80, 2),
            ("spr-2s", 224, 2),
            ("milan-2s", 256, 2),
            ("turin-2s", 512, 2),
            ("turin-dense-2s", 768, 2),
            ("altra-2s", 160, 2),
        ];
        assert_eq!(names().len(), expected.len());
        for (name, cpus, nodes) in expected {
            let m = by_name(name).unwrap();
            assert_eq!(m.nr_cpus(), cpus, "{name}");
            assert_eq!(m.nr_nodes(), nodes, "{name}");
            assert_eq!(m.name, name);
            assert!(!m.description.is_empty());
        }
        assert!(by_name("nope").is_none());
    }

    #[test]
    fn x86_numbering_puts_second_threads_after_all_first_threads() {
        let m = by_name("skl-2s").unwrap();
        assert_eq!(m.smt_mask(0).to_string(), "0,40");
        assert_eq!(m.node_mask(0).to_string(), "0-19,40-59");
        assert_eq!(m.node_mask(1).to_string(), "20-39,60-79");
        let spr = by_name("spr-2s").unwrap();
        assert_eq!(spr.node_mask(0).to_string(), "0-55,112-167");
        assert_eq!(spr.smt_mask(55).to_string(), "55,167");
        let milan = by_name("milan-2s").unwrap();
        assert_eq!(milan.llc_mask(0).to_string(), "0-7,128-135");
        assert_eq!(milan.node_mask(1).to_string(), "64-127,192-255");
        assert_eq!(milan.distance(0, 1), 32);
    }

    #[test]
    fn nehalem_interleaves_nodes() {
        let m = by_name("nehalem-2s").unwrap();
        assert_eq!(m.node_mask(0).to_string(), "0,2,4,6,8,10,12,14");
        assert_eq!(m.smt_mask(0).to_string(), "0,8");
        assert_eq!(m.smt_mask(3).to_string(), "3,11");
        assert_eq!(m.llc_mask(1).to_string(), "1,3,5,7,9,11,13,15");
    }

    #[test]
    fn client_and_power_layouts() {
        let h = by_name("hybrid-10").unwrap();
        assert_eq!(h.smt_mask(0).to_string(), "0-1");
        assert_eq!(h.smt_mask(5).to_string(), "4-5");
        assert_eq!(h.smt_mask(6).to_string(), "6");
        assert!(!h.has_asym_capacity());
        let adl = by_name("adl-i9").unwrap();
        assert_eq!(adl.smt_mask(14).to_string(), "14-15");
        assert_eq!(adl.cluster_mask(17).to_string(), "16-19");
        assert_eq!(adl.cluster_mask(2).to_string(), "2-3");
        assert_eq!(adl.cpus[16].capacity, 605);
        assert!(adl.has_asym_capacity());
        let p = by_name("power10-96").unwrap();
        assert_eq!(p.arch, Arch::Powerpc);
        assert_eq!(p.smt_mask(0).to_string(), "0,2,4,6");
        assert_eq!(p.smt_mask(95).to_string(), "89,91,93,95");
        assert_eq!(p.llc_mask(5).to_string(), "1,3,5,7");
        assert_eq!(
            p.coregroup_mask(0).unwrap().to_string(),
            "0-7,24-39,48-55,72-87"
        );
        assert_eq!(
            p.coregroup_mask(17).unwrap().to_string(),
            "8-23,40-47,56-71,88-95"
        );
        assert_eq!(by_name("altra-2s").unwrap().arch, Arch::Arm64);
        assert_eq!(by_name("skl-2s").unwrap().arch, Arch::X86);
        let a = by_name("altra-2s").unwrap();
        assert_eq!(a.cluster_mask(1).to_string(), "0-1");
        assert_eq!(a.smt_mask(1).to_string(), "1");
        assert_eq!(a.node_mask(1).to_string(), "80-159");
    }

    #[test]
    fn reclaim_distance_is_32_on_zen_only() {
        assert_eq!(node_reclaim_distance("milan-2s"), Some(32));
        assert_eq!(node_reclaim_distance("skl-2s"), Some(30));
        assert_eq!(node_reclaim_distance("host"), None);
    }
}
