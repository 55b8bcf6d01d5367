//! Sched-domain construction checked against what the kernel builds on the preset
//! machines (`kernel/sched/topology.c`), and `schedlab topo` from the binary.

use crate::machines;

use machines::numa_machine;
use proptest::prelude::*;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{
    DomainParams, SchedDomains, SdFlags, build_sched_domains, build_sched_domains_with,
};
use schedlab::topology::{CpuTopology, Machine, presets};

fn preset(name: &str) -> Machine {
    presets::by_name(name).unwrap()
}

fn build(name: &str) -> (Machine, SchedDomains) {
    let m = preset(name);
    let sds = build_sched_domains(&m);
    (m, sds)
}

/// Level names of a CPU's hierarchy, bottom-up.
fn names(sds: &SchedDomains, cpu: usize) -> Vec<&'static str> {
    sds.cpu_domains(cpu)
        .iter()
        .map(|&d| sds.domain(d).name)
        .collect()
}

fn weights(sds: &SchedDomains, cpu: usize) -> Vec<usize> {
    sds.cpu_domains(cpu)
        .iter()
        .map(|&d| sds.domain(d).span_weight)
        .collect()
}

fn group_spans(sds: &SchedDomains, cpu: usize, level: usize) -> Vec<String> {
    let d = sds.cpu_domains(cpu)[level];
    sds.groups_of(d).map(|g| g.span.to_string()).collect()
}

fn flags(list: &[&str]) -> SdFlags {
    list.iter().fold(SdFlags::EMPTY, |acc, n| {
        acc | SdFlags::from_name(n).unwrap()
    })
}

const BALANCE: [&str; 4] = [
    "SD_BALANCE_NEWIDLE",
    "SD_BALANCE_EXEC",
    "SD_BALANCE_FORK",
    "SD_WAKE_AFFINE",
];

fn with_balance(extra: &[&str]) -> SdFlags {
    flags(&BALANCE) | flags(extra)
}

#[test]
fn spr_2s_is_smt_mc_numa_for_every_cpu() {
    let (m, sds) = build("spr-2s");
    assert!(sds.error.is_none() && sds.warnings.is_empty());
    for cpu in 0..m.nr_cpus() {
        // PKG (= node = MC span, one group) and NODE degenerate into MC.
        assert_eq!(names(&sds, cpu), ["SMT", "MC", "NUMA"], "CPU{cpu}");
        assert_eq!(weights(&sds, cpu), [2, 112, 224], "CPU{cpu}");
    }
    let chain = sds.cpu_domains(0);
    let (smt, mc, numa) = (
        sds.domain(chain[0]),
        sds.domain(chain[1]),
        sds.domain(chain[2]),
    );
    assert_eq!(smt.span.to_string(), "0,112");
    assert_eq!(mc.span.to_string(), "0-55,112-167");
    assert_eq!(numa.span.to_string(), "0-223");
    assert_eq!(
        smt.flags,
        with_balance(&["SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC", "SD_PREFER_SIBLING"])
    );
    assert_eq!(
        mc.flags,
        with_balance(&["SD_SHARE_LLC", "SD_PREFER_SIBLING"])
    );
    // Distance 21 <= RECLAIM_DISTANCE: EXEC/FORK/WAKE_AFFINE stay.
    assert_eq!(
        numa.flags,
        with_balance(&["SD_SERIALIZE", "SD_OVERLAP", "SD_NUMA"])
    );
    assert_eq!(
        [smt.imbalance_pct, mc.imbalance_pct, numa.imbalance_pct],
        [110, 117, 117]
    );
    assert_eq!(
        [
            smt.cache_nice_tries,
            mc.cache_nice_tries,
            numa.cache_nice_tries
        ],
        [0, 1, 2]
    );
    assert_eq!([smt.min_interval_ms, smt.max_interval_ms], [2, 4]);
    assert_eq!([mc.min_interval_ms, mc.max_interval_ms], [112, 224]);
    assert_eq!([numa.min_interval_ms, numa.max_interval_ms], [224, 448]);
    assert_eq!(numa.busy_factor, 16);
    // Levels keep their pre-degeneration numbers: SMT 0, CLS 1, MC 2, PKG 3, NODE 4, NUMA 5.
    assert_eq!([smt.level, mc.level, numa.level], [0, 2, 5]);
    assert_eq!(
        [smt.groups.len(), mc.groups.len(), numa.groups.len()],
        [2, 56, 2]
    );
    assert_eq!(group_spans(&sds, 0, 0), ["0", "112"]);
    assert_eq!(group_spans(&sds, 112, 0), ["112", "0"]);
    assert_eq!(group_spans(&sds, 0, 2), ["0-55,112-167", "56-111,168-223"]);
    assert_eq!(group_spans(&sds, 60, 2), ["56-111,168-223", "0-55,112-167"]);
    let numa_caps: Vec<u64> = sds.groups_of(chain[2]).map(|g| g.capacity).collect();
    assert_eq!(numa_caps, [112 * 1024, 112 * 1024]);
    // imb_numa_nr: PKG had one LLC -> 112 >> 3 = 14, NUMA factor 224/224 = 1.
    assert_eq!(
        [smt.imb_numa_nr, mc.imb_numa_nr, numa.imb_numa_nr],
        [0, 0, 14]
    );
    assert_eq!(sds.sd_llc(0), Some(chain[1]));
    assert_eq!(sds.llc_size(0), 112);
    assert_eq!(sds.llc_id(150), 0);
    assert_eq!(sds.llc_id(60), 56);
    assert_eq!(sds.sd_numa(0), Some(chain[2]));
    assert_eq!(sds.sd_asym_cpucapacity(0), None);
    assert!(!sds.sched_asym_cpucapacity && !sds.sched_cluster_active);
    // Group flags: MC groups carry the SMT child's flags; the local NUMA group carries
    // MC's flags (copied when NODE was spliced out), remote ones NODE's.
    let mc_group = sds.group(mc.groups[1]);
    assert!(mc_group.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY));
    assert_eq!(mc_group.cores, 1);
    let local = sds.group(numa.groups[0]);
    assert_eq!(local.flags, mc.flags);
    let remote = sds.group(numa.groups[1]);
    assert_eq!(remote.flags, with_balance(&["SD_PREFER_SIBLING"]));
    assert_eq!(remote.cores, 56);
}

#[test]
fn turin_2s_has_ccx_mc_and_pkg_below_numa() {
    let (m, sds) = build("turin-2s");
    for cpu in [0, 7, 255, 256, 511] {
        assert_eq!(names(&sds, cpu), ["SMT", "MC", "PKG", "NUMA"], "CPU{cpu}");
        assert_eq!(weights(&sds, cpu), [2, 16, 256, 512], "CPU{cpu}");
    }
    let chain = sds.cpu_domains(0);
    let counts: Vec<usize> = chain.iter().map(|&d| sds.domain(d).groups.len()).collect();
    assert_eq!(counts, [2, 8, 16, 2]);
    assert_eq!(sds.domain(chain[1]).span.to_string(), "0-7,256-263");
    let pkg = sds.domain(chain[2]);
    assert_eq!(pkg.flags, with_balance(&["SD_PREFER_SIBLING"]));
    assert_eq!(pkg.imbalance_pct, 117);
    assert_eq!(pkg.cache_nice_tries, 1);
    // 16 LLCs in the node: imb = nr_llcs = 16; NUMA factor 1.
    assert_eq!(pkg.imb_numa_nr, 16);
    assert_eq!(sds.domain(chain[3]).imb_numa_nr, 16);
    assert!(
        sds.groups_of(chain[2])
            .all(|g| g.capacity == 16 * 1024 && g.cores == 8)
    );
    // AMD Zen: node_reclaim_distance 32, so the distance-32 NUMA level keeps wake
    // affinity; the generic RECLAIM_DISTANCE (30) would strip it.
    let numa = sds.domain(chain[3]);
    assert!(
        numa.flags
            .contains(SdFlags::SD_WAKE_AFFINE | SdFlags::SD_BALANCE_FORK)
    );
    let generic = build_sched_domains_with(&m, &DomainParams::default());
    let numa30 = generic.domain(generic.cpu_domains(0)[3]);
    assert_eq!(
        numa30.flags,
        flags(&[
            "SD_BALANCE_NEWIDLE",
            "SD_SERIALIZE",
            "SD_OVERLAP",
            "SD_NUMA"
        ])
    );
}

#[test]
fn milan_2s_llc_is_the_ccx_and_imb_numa_nr_matches_lkml() {
    let (_, sds) = build("milan-2s");
    assert_eq!(names(&sds, 0), ["SMT", "MC", "PKG", "NUMA"]);
    assert_eq!(sds.llc_size(0), 16);
    assert_eq!(sds.llc_size(255), 16);
    assert_eq!(sds.llc_id(135), 0);
    assert!(sds.cpus_share_cache(0, 135) && !sds.cpus_share_cache(0, 8));
    // Gautham Shenoy's numbers for 2S Zen3 NPS1: PKG and NUMA imb_numa_nr = 8.
    let imb: Vec<u32> = sds
        .cpu_domains(0)
        .iter()
        .map(|&d| sds.domain(d).imb_numa_nr)
        .collect();
    assert_eq!(imb, [0, 0, 8, 8]);
}

#[test]
fn altra_2s_lowest_level_is_a_two_cpu_mc() {
    // arm64's cpu_coregroup_mask() widens MC to the 2-core cluster (no CPU-side shared
    // LLC), and cpu_clustergroup_mask() then shrinks CLS to the core: CLS degenerates,
    // MC survives, as in Darren Hart / Yicong Yang's analysis of this machine.
    let (_, sds) = build("altra-2s");
    for cpu in [0, 1, 79, 80, 159] {
        assert_eq!(names(&sds, cpu), ["MC", "PKG", "NUMA"], "CPU{cpu}");
        assert_eq!(weights(&sds, cpu), [2, 80, 160], "CPU{cpu}");
    }
    let chain = sds.cpu_domains(1);
    let mc = sds.domain(chain[0]);
    assert_eq!(mc.span.to_string(), "0-1");
    assert_eq!(
        mc.flags,
        with_balance(&["SD_SHARE_LLC", "SD_PREFER_SIBLING"])
    );
    assert_eq!(mc.imbalance_pct, 117);
    assert_eq!(group_spans(&sds, 1, 0), ["1", "0"]);
    assert_eq!(sds.domain(chain[1]).groups.len(), 40);
    assert_eq!(sds.llc_size(1), 2);
    assert!(!sds.sched_cluster_active);
    assert_eq!(sds.share_id(1), 0);
    // 40 LLCs per node: imb_numa_nr = 40 at PKG and NUMA.
    assert_eq!(sds.domain(chain[1]).imb_numa_nr, 40);
    assert_eq!(sds.domain(chain[2]).imb_numa_nr, 40);
    // Distance 20: the NUMA level keeps EXEC/FORK/WAKE_AFFINE.
    assert!(sds.domain(chain[2]).flags.contains(SdFlags::SD_WAKE_AFFINE));
}

#[test]
fn hybrid_10_mixes_smt_pairs_and_single_cpu_cores() {
    let (_, sds) = build("hybrid-10");
    for cpu in 0..6 {
        assert_eq!(names(&sds, cpu), ["SMT", "MC"], "CPU{cpu}");
    }
    for cpu in 6..10 {
        // SMT and CLS have weight 1 on single-thread cores: MC is the base domain.
        assert_eq!(names(&sds, cpu), ["MC"], "CPU{cpu}");
    }
    assert_eq!(group_spans(&sds, 0, 0), ["0", "1"]);
    assert_eq!(group_spans(&sds, 3, 0), ["3", "2"]);
    assert_eq!(group_spans(&sds, 5, 0), ["5", "4"]);
    assert_eq!(
        group_spans(&sds, 0, 1),
        ["0-1", "2-3", "4-5", "6", "7", "8", "9"]
    );
    assert_eq!(
        group_spans(&sds, 6, 0),
        ["6", "7", "8", "9", "0-1", "2-3", "4-5"]
    );
    assert_eq!(
        group_spans(&sds, 4, 1),
        ["4-5", "6", "7", "8", "9", "0-1", "2-3"]
    );
    // MC groups are shared objects: CPU 0's {2,3} is CPU 9's {2,3}.
    let mc0 = sds.domain(sds.cpu_domains(0)[1]);
    let mc9 = sds.domain(sds.cpu_domains(9)[0]);
    assert_eq!(mc0.groups[1], mc9.groups[2]);
    let caps: Vec<u64> = sds
        .groups_of(sds.cpu_domains(0)[1])
        .map(|g| g.capacity)
        .collect();
    assert_eq!(caps, [2048, 2048, 2048, 1024, 1024, 1024, 1024]);
    let cores: Vec<usize> = sds
        .groups_of(sds.cpu_domains(0)[1])
        .map(|g| g.cores)
        .collect();
    assert_eq!(cores, [1; 7]);
    // The SMT pair groups carry SMT flags; single-CPU core groups had their (degenerate)
    // base domain removed, which clears the local group's flags.
    let g01 = sds.group(mc0.groups[0]);
    assert!(g01.flags.contains(SdFlags::SD_SHARE_CPUCAPACITY));
    let g6 = sds.group(mc0.groups[3]);
    assert_eq!(g6.flags, SdFlags::EMPTY);
    assert_eq!(sds.llc_size(7), 10);
    assert_eq!(sds.sd_numa(0), None);
}

#[test]
fn adl_i9_marks_asymmetric_capacity() {
    let (_, sds) = build("adl-i9");
    assert_eq!(names(&sds, 0), ["SMT", "MC"]);
    assert_eq!(names(&sds, 16), ["CLS", "MC"]);
    assert_eq!(group_spans(&sds, 17, 0), ["17", "18", "19", "16"]);
    let mc_id = sds.cpu_domains(0)[1];
    let mc = sds.domain(mc_id);
    assert!(
        mc.flags
            .contains(SdFlags::SD_ASYM_CPUCAPACITY | SdFlags::SD_ASYM_CPUCAPACITY_FULL)
    );
    // PKG's sd_init() stripped PREFER_SIBLING from MC, and splicing the degenerate PKG
    // out gave it back.
    assert!(mc.flags.contains(SdFlags::SD_PREFER_SIBLING));
    let cls = sds.domain(sds.cpu_domains(16)[0]);
    assert_eq!(
        cls.flags,
        with_balance(&["SD_CLUSTER", "SD_SHARE_LLC"]),
        "MC (asymmetric) strips PREFER_SIBLING from its CLS child"
    );
    assert_eq!(cls.imbalance_pct, 117);
    assert!(
        !sds.domain(sds.cpu_domains(0)[0])
            .flags
            .intersects(SdFlags::SD_ASYM_CPUCAPACITY)
    );
    assert_eq!(sds.sd_asym_cpucapacity(0), Some(mc_id));
    assert_eq!(sds.sd_asym_cpucapacity(20), Some(sds.cpu_domains(20)[1]));
    assert!(sds.sched_asym_cpucapacity && sds.sched_cluster_active);
    let caps: Vec<u64> = sds.groups_of(mc_id).map(|g| g.capacity).collect();
    assert_eq!(
        caps,
        [
            2048,
            2048,
            2048,
            2048,
            2048,
            2048,
            2048,
            2048,
            4 * 605,
            4 * 605
        ]
    );
    let e = sds.group(mc.groups[8]);
    assert_eq!((e.min_capacity, e.max_capacity, e.cores), (605, 605, 4));
    assert_eq!(sds.share_id(18), 16);
    assert_eq!(sds.share_id(3), 0);
    assert_eq!(sds.llc_size(18), 24);
}

/// Every domain of `cpu`: (name, span, flags).
fn chain(sds: &SchedDomains, cpu: usize) -> Vec<(&'static str, String, SdFlags)> {
    sds.cpu_domains(cpu)
        .iter()
        .map(|&d| {
            let d = sds.domain(d);
            (d.name, d.span.to_string(), d.flags)
        })
        .collect()
}

#[test]
fn power10_lpar_is_small_core_smt_then_coregroup_mc_then_pkg() {
    // arch/powerpc/kernel/smp.c on a POWER10 dedicated LPAR: SMT = the interleaved SMT4
    // small core (also the L2/LLC, so no CACHE level), MC = the coregroup without
    // SD_SHARE_LLC, PKG = the node. Spans as in the real 768-CPU LPAR's node 0.
    let (m, sds) = build("power10-96");
    let smt = with_balance(&["SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC", "SD_PREFER_SIBLING"]);
    let upper = with_balance(&["SD_PREFER_SIBLING"]);
    let cg0 = "0-7,24-39,48-55,72-87";
    let cg1 = "8-23,40-47,56-71,88-95";
    assert_eq!(
        chain(&sds, 0),
        [
            ("SMT", "0,2,4,6".to_string(), smt),
            ("MC", cg0.to_string(), upper),
            ("PKG", "0-95".to_string(), upper),
        ]
    );
    assert_eq!(
        chain(&sds, 17),
        [
            ("SMT", "17,19,21,23".to_string(), smt),
            ("MC", cg1.to_string(), upper),
            ("PKG", "0-95".to_string(), upper),
        ]
    );
    for cpu in 0..96 {
        assert_eq!(names(&sds, cpu), ["SMT", "MC", "PKG"], "CPU {cpu}");
        assert_eq!(weights(&sds, cpu), [4, 48, 96], "CPU {cpu}");
        // The LLC is the small core.
        assert_eq!(sds.llc_size(cpu), 4);
        assert_eq!(sds.sd_llc(cpu), Some(sds.cpu_domains(cpu)[0]));
    }
    assert_eq!(group_spans(&sds, 0, 0), ["0", "2", "4", "6"]);
    assert_eq!(
        group_spans(&sds, 0, 1),
        [
            "0,2,4,6",
            "1,3,5,7",
            "24,26,28,30",
            "25,27,29,31",
            "32,34,36,38",
            "33,35,37,39",
            "48,50,52,54",
            "49,51,53,55",
            "72,74,76,78",
            "73,75,77,79",
            "80,82,84,86",
            "81,83,85,87"
        ]
    );
    assert_eq!(group_spans(&sds, 0, 2), [cg0, cg1]);
    let mc = sds.domain(sds.cpu_domains(0)[1]);
    assert_eq!((mc.imbalance_pct, mc.cache_nice_tries), (117, 1));
    assert_eq!((mc.min_interval_ms, mc.imb_numa_nr), (48, 12));
    assert!(
        sds.groups_of(sds.cpu_domains(0)[1])
            .all(|g| g.capacity == 4096)
    );
    assert!(
        sds.groups_of(sds.cpu_domains(0)[2])
            .all(|g| g.capacity == 49152)
    );
    assert!(!sds.sched_cluster_active);
    assert_eq!(m.arch, schedlab::topology::Arch::Powerpc);
}

#[test]
fn power10_partially_offlined_cores_give_mixed_smt_groups() {
    // The seed's list offlines 6 threads of 4 big cores; each keeps threads 0 and 1, one
    // per small core, so 8 small cores run a single thread ("a few cores SMT=1").
    let mut m = preset("power10-96");
    m.set_offline("18-23,26-31,50-55,90-95").unwrap();
    assert_eq!(m.online.weight(), 72);
    let sds = build_sched_domains(&m);
    let smt = with_balance(&["SD_SHARE_CPUCAPACITY", "SD_SHARE_LLC", "SD_PREFER_SIBLING"]);
    let upper = with_balance(&["SD_PREFER_SIBLING"]);
    let cg0 = "0-7,24-25,32-39,48-49,72-87";
    let cg1 = "8-17,40-47,56-71,88-89";
    let all = "0-17,24-25,32-49,56-89";
    assert_eq!(
        chain(&sds, 0),
        [
            ("SMT", "0,2,4,6".to_string(), smt),
            ("MC", cg0.to_string(), upper),
            ("PKG", all.to_string(), upper),
        ]
    );
    for cpu in [16, 17, 24, 25, 48, 49, 88, 89] {
        // The one-CPU SMT domain is degenerate: the base domain is the coregroup, and
        // there is no LLC domain at all (sd_llc NULL, llc_size 1).
        let cg = if [24, 25, 48, 49].contains(&cpu) {
            cg0
        } else {
            cg1
        };
        assert_eq!(
            chain(&sds, cpu),
            [
                ("MC", cg.to_string(), upper),
                ("PKG", all.to_string(), upper)
            ],
            "CPU {cpu}"
        );
        assert_eq!(sds.sd_llc(cpu), None);
        assert_eq!((sds.llc_size(cpu), sds.llc_id(cpu)), (1, cpu));
        assert_eq!(group_spans(&sds, cpu, 0)[0], cpu.to_string());
    }
    assert_eq!(
        group_spans(&sds, 16, 0),
        [
            "16",
            "17",
            "40,42,44,46",
            "41,43,45,47",
            "56,58,60,62",
            "57,59,61,63",
            "64,66,68,70",
            "65,67,69,71",
            "88",
            "89",
            "8,10,12,14",
            "9,11,13,15"
        ]
    );
    let mc = sds.domain(sds.cpu_domains(0)[1]);
    assert_eq!((mc.span_weight, mc.min_interval_ms), (36, 36));
    let pkg = sds.domain(sds.cpu_domains(0)[2]);
    assert_eq!((pkg.span_weight, pkg.min_interval_ms), (72, 72));
    assert_eq!(group_spans(&sds, 0, 2), [cg0, cg1]);
    let caps: Vec<u64> = sds
        .groups_of(sds.cpu_domains(0)[1])
        .map(|g| g.capacity)
        .collect();
    assert_eq!(&caps[..4], [4096, 4096, 1024, 1024]);
    assert!(
        sds.groups_of(sds.cpu_domains(0)[2])
            .all(|g| g.capacity == 36 * 1024)
    );
    for cpu in [18, 23, 50, 95] {
        assert!(sds.cpu_domains(cpu).is_empty());
    }
    assert!(sds.domains.iter().all(|d| d.span.is_subset_of(&m.online)));
}

#[test]
fn powerpc_cache_level_only_when_l2_is_wider_than_the_smt_core() {
    // A POWER9-style machine: SMT4 cores whose L2 is shared by a core pair. powerpc's
    // `shared_caches` is set, so a CACHE level (SD_SHARE_LLC) sits between SMT and PKG;
    // without coregroups there is no MC level.
    let cpus = (0..16)
        .map(|cpu| CpuTopology {
            cpu,
            core: cpu / 4,
            cluster: cpu / 4,
            llc: cpu / 8,
            package: 0,
            node: 0,
            capacity: 1024,
        })
        .collect();
    let mut m = Machine::new("p9", "test", cpus, vec![vec![10]]).unwrap();
    m.arch = schedlab::topology::Arch::Powerpc;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["SMT", "CACHE", "PKG"]);
    assert_eq!(weights(&sds, 0), [4, 8, 16]);
    let cache = sds.domain(sds.cpu_domains(0)[1]);
    assert_eq!(
        cache.flags,
        with_balance(&["SD_SHARE_LLC", "SD_PREFER_SIBLING"])
    );
    assert_eq!(sds.llc_size(0), 8);
    // The same data on arm64's table: MC is the LLC pair, and a core-sized CLS folds away.
    m.arch = schedlab::topology::Arch::Arm64;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["SMT", "MC", "PKG"]);
}

#[test]
fn x86_leaves_out_pkg_when_a_package_holds_several_nodes() {
    // Sub-NUMA clustering: one package, two nodes of 4 cores (own LLC each). x86 drops PKG
    // (x86_has_numa_in_package) and NODE spans the node; the generic table builds PKG =
    // cpu_cpu_mask() = the node, which then replaces NODE as the surviving level.
    let cpus = (0..8)
        .map(|cpu| CpuTopology {
            cpu,
            core: cpu,
            cluster: cpu,
            llc: cpu / 4,
            package: 0,
            node: cpu / 4,
            capacity: 1024,
        })
        .collect();
    let mut m = Machine::new("snc", "test", cpus, vec![vec![10, 12], vec![12, 10]]).unwrap();
    m.arch = schedlab::topology::Arch::X86;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["MC", "NUMA"]);
    // sd->level counts the built levels: SMT, CLS, MC, NODE, NUMA.
    let numa = sds.domain(sds.cpu_domains(0)[1]);
    assert_eq!(numa.level, 4);
    m.arch = schedlab::topology::Arch::Arm64;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["MC", "NUMA"]);
    // ... and with PKG (degenerate under the equal NODE span) one more.
    assert_eq!(sds.domain(sds.cpu_domains(0)[1]).level, 5);
}

#[test]
fn nehalem_interleaved_nodes_and_haswell_4s_mesh() {
    let (_, sds) = build("nehalem-2s");
    assert_eq!(names(&sds, 1), ["SMT", "MC", "NUMA"]);
    assert_eq!(group_spans(&sds, 1, 0), ["1", "9"]);
    assert_eq!(
        group_spans(&sds, 1, 2),
        ["1,3,5,7,9,11,13,15", "0,2,4,6,8,10,12,14"]
    );
    // 8 CPUs in the node, one LLC: imb = 8 >> 3 = 1.
    assert_eq!(sds.domain(sds.cpu_domains(1)[2]).imb_numa_nr, 1);

    let (_, sds) = build("haswell-4s");
    assert_eq!(names(&sds, 0), ["SMT", "MC", "NUMA"]);
    assert_eq!(
        group_spans(&sds, 40, 2),
        [
            "36-53,108-125",
            "54-71,126-143",
            "0-17,72-89",
            "18-35,90-107"
        ]
    );
    assert_eq!(sds.domain(sds.cpu_domains(0)[2]).imb_numa_nr, 4);
    assert_eq!(sds.numa_distances, [10, 21]);
}

#[test]
fn ring_numa_groups_overlap_with_balance_masks() {
    // The 4-node ring of the comment above build_balance_mask() in topology.c.
    let m = numa_machine(vec![
        vec![10, 20, 30, 20],
        vec![20, 10, 20, 30],
        vec![30, 20, 10, 20],
        vec![20, 30, 20, 10],
    ]);
    let sds = build_sched_domains(&m);
    assert_eq!(sds.numa_distances, [10, 20, 30]);
    assert_eq!(names(&sds, 0), ["NUMA", "NUMA"]);
    assert_eq!(group_spans(&sds, 0, 0), ["0", "1", "3"]);
    assert_eq!(group_spans(&sds, 0, 1), ["0-1,3", "1-3"]);
    let top = sds.domain(sds.cpu_domains(0)[1]);
    let remote = sds.group(top.groups[1]);
    // Only CPU 2 walks up to the group {1-3}.
    assert_eq!(remote.balance_mask.to_string(), "2");
    assert_eq!(remote.balance_cpu(), 2);
    assert_eq!(sds.group(top.groups[0]).balance_mask.to_string(), "0");
    // Distance 30 is not > RECLAIM_DISTANCE: wake affinity stays.
    assert!(top.flags.contains(SdFlags::SD_WAKE_AFFINE));
    assert_eq!(sds.sd_numa(0), Some(sds.cpu_domains(0)[0]));
    let text = sds.sched_domain_debug(0);
    assert!(
        text.contains("groups: 0:{ span=0-1,3 mask=0 cap=3072 }, 2:{ span=1-3 mask=2 cap=3072 }"),
        "{text}"
    );
}

#[test]
fn line_numa_uses_descended_siblings() {
    // Diameter-3 line 0-1-2-3 (the find_descended_sibling() comment).
    let m = numa_machine(vec![
        vec![10, 20, 30, 40],
        vec![20, 10, 20, 30],
        vec![30, 20, 10, 20],
        vec![40, 30, 20, 10],
    ]);
    let sds = build_sched_domains(&m);
    assert_eq!(weights(&sds, 0), [2, 3, 4]);
    assert_eq!(group_spans(&sds, 0, 1), ["0-1", "2"]);
    // CPU 1's NUMA-2 domain already spans everything: its chain ends there.
    assert_eq!(weights(&sds, 1), [3, 4]);
    // Distance 40 > 30: the top level loses EXEC/FORK/WAKE_AFFINE.
    let top = sds.domain(sds.cpu_domains(0)[2]);
    assert!(
        !top.flags
            .intersects(SdFlags::SD_WAKE_AFFINE | SdFlags::SD_BALANCE_FORK)
    );
}

#[test]
fn single_online_cpu_gets_the_null_domain() {
    let mut m = preset("hybrid-10");
    m.set_offline("1-9").unwrap();
    let sds = build_sched_domains(&m);
    assert!(sds.cpu_domains(0).is_empty());
    assert_eq!(sds.llc_size(0), 1);
    assert_eq!(
        sds.sched_domain_debug(0),
        "CPU0 attaching NULL sched-domain.\n"
    );
}

#[test]
fn offlining_a_whole_node_drops_the_numa_level() {
    let mut m = preset("skl-2s");
    m.set_offline("20-39,60-79").unwrap();
    let sds = build_sched_domains(&m);
    assert_eq!(sds.numa_distances, [10]);
    assert_eq!(names(&sds, 0), ["SMT", "MC"]);
    assert_eq!(weights(&sds, 0), [2, 40]);
}

/// Structural invariants of every CPU's hierarchy.
fn check_invariants(m: &Machine, sds: &SchedDomains) -> Result<(), String> {
    for cpu in 0..m.nr_cpus() {
        let chain = sds.cpu_domains(cpu);
        if !m.online.test(cpu) {
            if !chain.is_empty() {
                return Err(format!("offline CPU{cpu} has domains"));
            }
            continue;
        }
        let mut prev: Option<CpuMask> = None;
        for (i, &id) in chain.iter().enumerate() {
            let d = sds.domain(id);
            let ctx = format!("CPU{cpu} {} ({})", d.name, d.span);
            if d.cpu != cpu || !d.span.test(cpu) || !d.span.is_subset_of(&m.online) {
                return Err(format!("{ctx}: span/cpu wrong"));
            }
            if d.span_weight != d.span.weight() {
                return Err(format!("{ctx}: span_weight"));
            }
            if let Some(p) = prev
                && !p.is_subset_of(&d.span)
            {
                return Err(format!("{ctx}: child span {p} not inside"));
            }
            if d.child != (i > 0).then(|| chain[i - 1]) || d.parent != chain.get(i + 1).copied() {
                return Err(format!("{ctx}: parent/child links"));
            }
            let first = sds.group(d.groups[0]);
            if !first.span.test(cpu) {
                return Err(format!("{ctx}: first group does not hold the CPU"));
            }
            let mut union = CpuMask::new();
            let overlap = d.flags.contains(SdFlags::SD_OVERLAP);
            for g in sds.groups_of(id) {
                if !overlap && union.intersects(&g.span) {
                    return Err(format!("{ctx}: groups overlap"));
                }
                if !g.balance_mask.is_subset_of(&g.span) || g.balance_mask.is_empty() {
                    return Err(format!("{ctx}: balance mask"));
                }
                let cap: u64 = g.span.iter().map(|c| u64::from(m.cpus[c].capacity)).sum();
                if g.capacity != cap || g.group_weight != g.span.weight() {
                    return Err(format!("{ctx}: group capacity/weight"));
                }
                union = union.or(&g.span);
            }
            if union != d.span {
                return Err(format!("{ctx}: groups cover {union}"));
            }
            if d.groups.len() < 2 {
                return Err(format!("{ctx}: a surviving domain has one group"));
            }
            prev = Some(d.span);
        }
        if let Some(&top) = chain.last()
            && sds.domain(top).span != m.online
        {
            return Err(format!(
                "CPU{cpu}: top domain does not span the online CPUs"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_preset_satisfies_the_invariants() {
    for name in presets::names() {
        let (m, sds) = build(name);
        assert!(sds.error.is_none(), "{name}: {:?}", sds.error);
        check_invariants(&m, &sds).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn invariants_hold_with_random_offline_cpus(
        which in 0usize..7,
        offline_bits in proptest::collection::vec(any::<bool>(), 160),
    ) {
        let name = ["hybrid-10", "adl-i9", "power10-96", "nehalem-2s", "skl-2s", "haswell-4s", "altra-2s"][which];
        let mut m = preset(name);
        let list: Vec<String> = (1..m.nr_cpus())
            .filter(|&c| offline_bits[c % offline_bits.len()])
            .map(|c| c.to_string())
            .collect();
        if !list.is_empty() {
            m.set_offline(&list.join(",")).unwrap();
        }
        let sds = build_sched_domains(&m);
        prop_assert!(sds.error.is_none());
        if let Err(e) = check_invariants(&m, &sds) {
            return Err(TestCaseError::fail(format!("{name} offline {}: {e}", list.join(","))));
        }
    }
}

fn schedlab(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn binary_prints_kernel_style_hierarchy() {
    let out = schedlab(&["topo", "spr-2s"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("CPU0 attaching sched-domain(s):\n domain-0: span=0,112 level=SMT\n"));
    assert!(text.contains("  groups: 0:{ span=0 cap=1024 }, 112:{ span=112 cap=1024 }\n"));
    assert!(text.contains("  domain-1: span=0-55,112-167 level=MC\n"));
    assert!(text.contains("   domain-2: span=0-223 level=NUMA\n"));
    assert!(text.contains(
        "    groups: 0:{ span=0-55,112-167 cap=114688 }, 56:{ span=56-111,168-223 cap=114688 }\n"
    ));
    assert!(text.contains("imbalance_pct=110"));
    assert_eq!(text.matches("attaching sched-domain(s)").count(), 224);
    assert!(text.ends_with("root domain span: 0-223\n"));
}

#[test]
fn binary_json_follows_the_contract() {
    let out = schedlab(&["topo", "spr-2s", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["machine"], "spr-2s");
    assert_eq!(v["nr_cpus"], 224);
    assert_eq!(v["online"], "0-223");
    assert_eq!(v["nodes"][0]["node"], 0);
    assert_eq!(v["nodes"][0]["cpus"], "0-55,112-167");
    assert_eq!(v["distances"], serde_json::json!([[10, 21], [21, 10]]));
    let cpu0 = &v["cpus"][0];
    assert_eq!(cpu0["cpu"], 0);
    assert_eq!(cpu0["core"], 0);
    assert_eq!(cpu0["package"], 0);
    assert_eq!(cpu0["node"], 0);
    assert_eq!(cpu0["capacity"], 1024);
    let smt = &cpu0["domains"][0];
    assert_eq!(smt["level"], "SMT");
    assert_eq!(smt["span"], "0,112");
    assert!(
        smt["flags"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("SD_SHARE_CPUCAPACITY"))
    );
    assert_eq!(smt["imbalance_pct"], 110);
    assert_eq!(smt["busy_factor"], 16);
    assert_eq!(smt["min_interval"], 2);
    assert_eq!(smt["max_interval"], 4);
    assert_eq!(smt["cache_nice_tries"], 0);
    assert_eq!(smt["groups"][1]["span"], "112");
    assert_eq!(smt["groups"][1]["capacity"], 1024);
    assert_eq!(cpu0["domains"].as_array().unwrap().len(), 3);
    assert_eq!(cpu0["domains"][2]["level"], "NUMA");
}

#[test]
fn binary_offline_and_bad_input() {
    let out = schedlab(&[
        "topo",
        "power10-96",
        "--offline",
        "18-23,26-31,50-55,90-95",
        "--json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["online"], "0-17,24-25,32-49,56-89");
    assert_eq!(v["cpus"][18]["online"], false);
    assert_eq!(v["cpus"][18]["domains"].as_array().unwrap().len(), 0);
    assert_eq!(v["arch"], "powerpc");
    let d16 = v["cpus"][16]["domains"].as_array().unwrap();
    assert_eq!(d16.len(), 2);
    assert_eq!(d16[0]["level"], "MC");
    assert_eq!(d16[0]["span"], "8-17,40-47,56-71,88-89");
    assert!(
        !d16[0]["flags"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("SD_SHARE_LLC"))
    );
    assert_eq!(d16[0]["groups"][0]["span"], "16");
    assert_eq!(d16[1]["level"], "PKG");
    assert_eq!(v["cpus"][0]["domains"][0]["span"], "0,2,4,6");

    let out = schedlab(&["topo", "power10-96", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d0 = v["cpus"][0]["domains"].as_array().unwrap();
    let levels: Vec<&str> = d0.iter().map(|d| d["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["SMT", "MC", "PKG"]);
    let spans: Vec<&str> = d0.iter().map(|d| d["span"].as_str().unwrap()).collect();
    assert_eq!(spans, ["0,2,4,6", "0-7,24-39,48-55,72-87", "0-95"]);
    let has_llc: Vec<bool> = d0
        .iter()
        .map(|d| {
            d["flags"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("SD_SHARE_LLC"))
        })
        .collect();
    assert_eq!(has_llc, [true, false, false]);
    assert_eq!(d0[1]["groups"][1]["span"], "1,3,5,7");
    assert_eq!(d0[1]["groups"][1]["capacity"], 4096);

    let out = schedlab(&["topo", "power10-96", "--offline", "18-23"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("offline: 18-23"));
    assert!(!text.contains("CPU18 attaching"));

    let out = schedlab(&["topo", "no-such-box"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no-such-box") && err.contains("spr-2s") && err.contains("altra-2s"),
        "{err}"
    );

    for bad in ["96", "0-95", "a-b"] {
        let out = schedlab(&["topo", "power10-96", "--offline", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("--offline"), "{err}");
    }
}

#[test]
fn insane_topology_fails_like_the_kernel_build() {
    // A cluster (CPUs 0-2) straddling two LLCs ({0,1}, {2,3}): the cluster masks then
    // disagree between CPUs (CLS {0} for CPU 0, whose LLC lies inside the cluster, but
    // {0-2} for CPU 2), which topology_span_sane() rejects; the CPUs stay on the NULL
    // domain.
    let cpus = (0..4)
        .map(|i| CpuTopology {
            cpu: i,
            core: i,
            cluster: if i < 3 { 0 } else { 1 },
            llc: i / 2,
            package: 0,
            node: 0,
            capacity: 1024,
        })
        .collect();
    let m = Machine::new("bad", "test", cpus, vec![vec![10]]).unwrap();
    let sds = build_sched_domains(&m);
    assert!(
        sds.error
            .as_deref()
            .unwrap()
            .contains("CLS level masks 0 and 0-2 partially overlap"),
        "{:?}",
        sds.error
    );
    assert!(sds.domains.is_empty() && sds.cpu_domains(0).is_empty());
    assert_eq!(
        sds.sched_domain_debug(3),
        "CPU3 attaching NULL sched-domain.\n"
    );
}

#[test]
fn a_cluster_equal_to_the_llc_is_cls_on_x86_and_mc_on_arm64() {
    // 8 single-thread cores, L2 clusters of 4 that are also the LLC. x86 builds CLS and MC
    // with the same span; MC's flags are a subset of CLS's, so MC is spliced out and CLS
    // (with SD_CLUSTER) survives. arch_topology.c shrinks CLS to the SMT mask instead, so
    // arm64 keeps MC and no cluster domain.
    let cpus = (0..8)
        .map(|cpu| CpuTopology {
            cpu,
            core: cpu,
            cluster: cpu / 4,
            llc: cpu / 4,
            package: 0,
            node: 0,
            capacity: 1024,
        })
        .collect();
    let mut m = Machine::new("cls", "test", cpus, vec![vec![10]]).unwrap();
    m.arch = schedlab::topology::Arch::X86;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["CLS", "PKG"]);
    assert!(sds.sched_cluster_active);
    assert_eq!(sds.share_id(5), 4);
    m.arch = schedlab::topology::Arch::Arm64;
    let sds = build_sched_domains(&m);
    assert_eq!(names(&sds, 0), ["MC", "PKG"]);
    assert!(!sds.sched_cluster_active);
}
