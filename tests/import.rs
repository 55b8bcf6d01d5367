//! Topology importers against real machines: hwloc's own test-suite snapshots
//! (`../shared/fixtures/topology`), checked against hwloc's reading of the same data
//! (`*.lstopo.txt`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use schedlab::cpumask::CpuMask;
use schedlab::topology::{Machine, hwloc, resolve_machine, resolve_machine_with, sysfs};

/// `shared/fixtures`, found by walking up from the crate root.
fn fixtures() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let candidate = dir.join("shared/fixtures");
        if candidate.is_dir() {
            return candidate;
        }
        assert!(
            dir.pop(),
            "no shared/fixtures above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "schedlab-import-{}-{}-{tag}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Unpack `topology/sysfs/NAME.tar.bz2` with the system tar and import it.
fn sysfs_fixture(name: &str) -> (Machine, TempDir) {
    let tarball = fixtures().join(format!("topology/sysfs/{name}.tar.bz2"));
    let tmp = TempDir::new(name);
    let status = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .expect("tar (with bzip2) must be installed to unpack sysfs fixtures");
    assert!(status.success(), "tar xjf {} failed", tarball.display());
    let m = sysfs::import(&tmp.0).unwrap_or_else(|e| panic!("{name}: {e}"));
    (m, tmp)
}

fn hwloc_fixture(name: &str) -> Machine {
    let path = fixtures().join(format!("topology/hwloc-xml/{name}.xml"));
    hwloc::import(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Distinct spans of `mask(cpu) ∩ online` over online CPUs, sorted by first CPU.
fn spans(m: &Machine, mask: impl Fn(&Machine, usize) -> CpuMask) -> Vec<String> {
    let mut out: Vec<CpuMask> = Vec::new();
    for cpu in m.online.iter() {
        let s = mask(m, cpu).and(&m.online);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out.sort_by_key(|s| s.first());
    out.iter().map(|s| s.to_string()).collect()
}

/// The facts hwloc's `lstopo` prints, as this crate sees them (over online CPUs).
#[derive(Debug, PartialEq)]
struct Facts {
    nr_cpus: usize,
    online: String,
    packages: Vec<String>,
    cores: usize,
    smt_width: usize,
    llcs: Vec<String>,
    nodes: Vec<String>,
    distances: Vec<Vec<u32>>,
}

fn facts(m: &Machine) -> Facts {
    Facts {
        nr_cpus: m.nr_cpus(),
        online: m.online.to_string(),
        packages: spans(m, |m, c| *m.package_mask(c)),
        cores: spans(m, |m, c| *m.smt_mask(c)).len(),
        smt_width: m
            .online
            .iter()
            .map(|c| m.smt_mask(c).and(&m.online).weight())
            .max()
            .unwrap(),
        llcs: spans(m, |m, c| *m.llc_mask(c)),
        nodes: (0..m.nr_nodes())
            .map(|n| m.node_mask(n).to_string())
            .collect(),
        distances: m.node_distance.clone(),
    }
}

/// `k` nodes, 10 on the diagonal and `remote` elsewhere.
fn uniform(k: usize, remote: u32) -> Vec<Vec<u32>> {
    (0..k)
        .map(|i| (0..k).map(|j| if i == j { 10 } else { remote }).collect())
        .collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn singles(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|c| c.to_string()).collect()
}

#[test]
fn sysfs_amd_opteron_8_nodes() {
    // 16amd64-8n2c.lstopo.txt: 8 Packages of 2 cores (P#0-1 ... P#14-15), one NUMANode per
    // package, a private L2 per core and no L3, relative latency matrix 10 / 20.
    let (m, _tmp) = sysfs_fixture("16amd64-8n2c");
    let pairs: Vec<String> = (0..8).map(|p| format!("{}-{}", 2 * p, 2 * p + 1)).collect();
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 16,
            online: "0-15".into(),
            packages: pairs.clone(),
            cores: 16,
            smt_width: 1,
            llcs: singles(0..16),
            nodes: pairs,
            distances: uniform(8, 20),
        }
    );
}

#[test]
fn sysfs_offline_cpus_of_4_socket_ht() {
    // 16em64t-4s2c2t-offlines.lstopo.txt: "4 processors not represented in topology:
    // 0x00006024" = CPUs 2, 5, 13, 14 offline. Package P#0 = PUs 0,8,4,12; P#1 = 1,9;
    // P#3 = 3,11,7,15; P#2 = 6,10; one L3 per package; 7 Cores; 1 NUMANode.
    let (m, _tmp) = sysfs_fixture("16em64t-4s2c2t-offlines");
    let packages = strs(&["0,4,8,12", "1,9", "3,7,11,15", "6,10"]);
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 16,
            online: "0-1,3-4,6-12,15".into(),
            packages: packages.clone(),
            cores: 7,
            smt_width: 2,
            llcs: packages,
            nodes: strs(&["0-15"]),
            distances: uniform(1, 20),
        }
    );
    // The offline CPUs remain possible CPUs, each alone (the snapshot says nothing of them).
    for cpu in [2, 5, 13, 14] {
        assert!(!m.online.test(cpu));
        assert_eq!(m.smt_mask(cpu).to_string(), cpu.to_string());
        assert_eq!(m.cpus[cpu].node, 0);
    }
}

#[test]
fn sysfs_hybrid_i7_1370p() {
    // 20em64t-hybrid-1p6c2t+2ca4co1t.lstopo.txt: 6 P-cores with 2 PUs each (0-11), then
    // two L2 caches each shared by 4 single-thread E-cores (12-15, 16-19); one L3.
    let (m, _tmp) = sysfs_fixture("20em64t-hybrid-1p6c2t+2ca4co1t");
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 20,
            online: "0-19".into(),
            packages: strs(&["0-19"]),
            cores: 14,
            smt_width: 2,
            llcs: strs(&["0-19"]),
            nodes: strs(&["0-19"]),
            distances: uniform(1, 20),
        }
    );
    assert_eq!(
        spans(&m, |m, c| *m.cluster_mask(c)),
        strs(&["0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-15", "16-19"])
    );
    assert_eq!(m.smt_mask(12).to_string(), "12");
    // CPU kinds differ (lstopo: E-cores 3900 MHz, P-cores 5000 MHz) but with SMT active
    // intel_pstate keeps every capacity at 1024 and x86 uses ITMT priorities instead.
    assert!(m.cpus.iter().all(|c| c.capacity == 1024));
}

#[test]
fn sysfs_4_node_xeon_e7() {
    // 40intel64-4n10c+pci-conflicts: sysfs gives physical_package_id 0-3 (CPU k on package
    // k mod 4), one L3 and one node per package, node distances 10 / 20. cpu/possible is
    // 0-79 but only CPUs 0-39 are present. lstopo.txt shows the fourth package only as an
    // L3Cache (hwloc dropped it over conflicting /proc/cpuinfo data); the kernel's view,
    // which sched domains use, is the sysfs one.
    let (m, _tmp) = sysfs_fixture("40intel64-4n10c+pci-conflicts");
    let per_package: Vec<String> = (0..4)
        .map(|p| {
            (0..10)
                .map(|i| (p + 4 * i).to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 40,
            online: "0-39".into(),
            packages: per_package.clone(),
            cores: 40,
            smt_width: 1,
            llcs: per_package.clone(),
            nodes: per_package,
            distances: uniform(4, 20),
        }
    );
}

#[test]
fn sysfs_asymmetric_caches() {
    // 8em64t-2s4c-asymcaches.lstopo.txt: 2 Packages (PUs 0,2,4,6 and 1,3,5,7); L2 caches
    // hold PUs {2,6}, {1,5}, {3,7}; CPUs 0 and 4 have only an L1, so their LLC is their own.
    let (m, _tmp) = sysfs_fixture("8em64t-2s4c-asymcaches");
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 8,
            online: "0-7".into(),
            packages: strs(&["0,2,4,6", "1,3,5,7"]),
            cores: 8,
            smt_width: 1,
            llcs: strs(&["0", "1,5", "2,6", "3,7", "4"]),
            nodes: strs(&["0-7"]),
            distances: uniform(1, 20),
        }
    );
}

#[test]
fn sysfs_offline_cpu0_and_node0() {
    // offline-cpu0-node0.lstopo.txt: "7 processors not represented: 0x00e0000f" = CPUs
    // 0-3 and 21-23 offline; Package L#0 = even PUs 4-20, L#1 = odd PUs 5-19, one L3 each.
    // lstopo shows a single NUMANode (P#1) because the snapshot lacks node/node0, but the
    // cpuN/node0 links (cpu_to_node) put the even CPUs on node 0 and node1/distance reads
    // "21 10": the kernel's view has 2 nodes at distance 21.
    let (m, _tmp) = sysfs_fixture("offline-cpu0-node0");
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 24,
            online: "4-20".into(),
            packages: strs(&["4,6,8,10,12,14,16,18,20", "5,7,9,11,13,15,17,19"]),
            cores: 17,
            smt_width: 1,
            llcs: strs(&["4,6,8,10,12,14,16,18,20", "5,7,9,11,13,15,17,19"]),
            nodes: strs(&[
                "0,2,4,6,8,10,12,14,16,18,20,22",
                "1,3,5,7,9,11,13,15,17,19,21,23"
            ]),
            distances: vec![vec![10, 21], vec![21, 10]],
        }
    );
    // Offline CPU 0 has no topology/ directory: its L3 sharing list puts it on package 0.
    assert!(!m.online.test(0));
    assert_eq!(m.cpus[0].package, m.cpus[4].package);
    assert_eq!(m.llc_mask(0).to_string(), "0,2,4,6,8,10,12,14,16,18,20,22");
    assert_eq!(m.llc_mask(23).to_string(), "1,3,5,7,9,11,13,15,17,19,21,23");
}

#[test]
fn hwloc_amd_8_nodes_with_numa_latency_matrix() {
    // 16amd64-4distances.xml: 8 Packages of 2 cores; NUMANode os_index 1 is on the first
    // package (PUs 0-1), node 0 on the second (2-3), etc.; the NUMALatency matrix is 10 /
    // 20. Its Package and Core matrices (10/20/40/80) are not node distances.
    let m = hwloc_fixture("16amd64-4distances");
    let pairs: Vec<String> = (0..8).map(|p| format!("{}-{}", 2 * p, 2 * p + 1)).collect();
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 16,
            online: "0-15".into(),
            packages: pairs.clone(),
            cores: 16,
            smt_width: 1,
            llcs: singles(0..16),
            nodes: strs(&["2-3", "0-1", "4-5", "10-11", "8-9", "6-7", "12-13", "14-15"]),
            distances: uniform(8, 20),
        }
    );
}

#[test]
fn hwloc_4_socket_ht() {
    // 16em64t-4s2c2t.xml: 4 Packages (cpusets 0x1111, 0x2222, 0x4444, 0x8888), 2 cores of 2
    // PUs each (siblings n and n+8), one L3 per package, one NUMANode, no distances.
    let m = hwloc_fixture("16em64t-4s2c2t");
    let packages = strs(&["0,4,8,12", "1,5,9,13", "2,6,10,14", "3,7,11,15"]);
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 16,
            online: "0-15".into(),
            packages: packages.clone(),
            cores: 8,
            smt_width: 2,
            llcs: packages,
            nodes: strs(&["0-15"]),
            distances: uniform(1, 20),
        }
    );
    assert_eq!(m.smt_mask(3).to_string(), "3,11");
}

#[test]
fn hwloc_2_node_westmere() {
    // 24em64t-2n6c2t-pci.xml: 2 Packages (0x555555 even, 0xaaaaaa odd) with one NUMANode
    // and one L3 each, 6 cores of 2 PUs (n, n+12); NUMALatency 10 / 20.
    let m = hwloc_fixture("24em64t-2n6c2t-pci");
    let even_odd = strs(&[
        "0,2,4,6,8,10,12,14,16,18,20,22",
        "1,3,5,7,9,11,13,15,17,19,21,23",
    ]);
    assert_eq!(
        facts(&m),
        Facts {
            nr_cpus: 24,
            online: "0-23".into(),
            packages: even_odd.clone(),
            cores: 12,
            smt_width: 2,
            llcs: even_odd.clone(),
            nodes: even_odd,
            distances: vec![vec![10, 20], vec![20, 10]],
        }
    );
    assert_eq!(m.smt_mask(1).to_string(), "1,13");
}

#[test]
fn hwloc_96_cpu_4_nodes_several_llcs_per_node() {
    // 96em64t-4n4d3ca2co-pci.xml: 4 NUMANodes of 24 CPUs (0x00ffffff, ...), each with 4
    // Packages of 6 cores; a Package has one L3 and 3 L2 shared by 2 cores (the cluster);
    // NUMALatency 10 / 26.
    let m = hwloc_fixture("96em64t-4n4d3ca2co-pci");
    let f = facts(&m);
    assert_eq!(f.nr_cpus, 96);
    assert_eq!(f.packages.len(), 16);
    assert_eq!(f.cores, 96);
    assert_eq!(f.smt_width, 1);
    assert_eq!(f.llcs, f.packages);
    assert_eq!(f.llcs[0], "0,4,8,12,16,20");
    assert_eq!(f.nodes, strs(&["0-23", "24-47", "48-71", "72-95"]));
    assert_eq!(f.distances, uniform(4, 26));
    let clusters = spans(&m, |m, c| *m.cluster_mask(c));
    assert_eq!(clusters.len(), 48);
    assert_eq!(clusters[0], "0,4");
}

/// fakecpukinds.xml without SMT: every PU its own core.
fn fakecpukinds_without_smt(extra_info: &str) -> String {
    let text =
        std::fs::read_to_string(fixtures().join("topology/hwloc-xml/fakecpukinds.xml")).unwrap();
    let start = text.find("<object type=\"Core\"").unwrap();
    let end = text.rfind("</object>\n    </object>").unwrap() + "</object>\n".len();
    let cores: String = (0..4)
        .map(|i| {
            format!(
                "<object type=\"Core\" os_index=\"{i}\" cpuset=\"0x{:08x}\"><object type=\"PU\" \
os_index=\"{i}\" cpuset=\"0x{:08x}\"/></object>\n",
                1 << i,
                1 << i
            )
        })
        .collect();
    let text = format!("{}{cores}{}", &text[..start], &text[end..]);
    text.replace(
        "<info name=\"CoreType\" value=\"MySmallCore\"/>",
        &format!("<info name=\"CoreType\" value=\"MySmallCore\"/>{extra_info}"),
    )
}

#[test]
fn hwloc_cpukinds_set_capacity() {
    // fakecpukinds.xml: 2 cores of 2 PUs; kinds: PUs 0-1 at 1000 MHz, PU 2 and PU 3 at
    // 2000 MHz. With SMT present, x86 keeps symmetric capacity.
    let m = hwloc_fixture("fakecpukinds");
    assert_eq!(spans(&m, |m, c| *m.smt_mask(c)), strs(&["0,2", "1,3"]));
    assert!(m.cpus.iter().all(|c| c.capacity == 1024));
    // Without SMT, capacity follows the maximum-frequency ratio.
    let m = hwloc::import_str(&fakecpukinds_without_smt(""), "nosmt.xml").unwrap();
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, vec![512, 512, 1024, 1024]);
    assert!(m.has_asym_capacity());
    // LinuxCapacity (sysfs cpu_capacity as hwloc records it) wins over frequencies.
    let text = fakecpukinds_without_smt("<info name=\"LinuxCapacity\" value=\"380\"/>");
    let m = hwloc::import_str(&text, "cap.xml").unwrap();
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, vec![380, 380, 1024, 1024]);
}

fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn sysfs_capacity_files_and_frequency_fallback() {
    // arm64-style: cpu_capacity present → used as is (big.LITTLE 2+2, core-major).
    let tmp = TempDir::new("arm");
    for cpu in 0..4 {
        let d = format!("sys/devices/system/cpu/cpu{cpu}");
        write(
            &tmp.0,
            &format!("{d}/topology/core_cpus_list"),
            &cpu.to_string(),
        );
        write(&tmp.0, &format!("{d}/topology/physical_package_id"), "0");
        write(
            &tmp.0,
            &format!("{d}/topology/cluster_cpus_list"),
            if cpu < 2 { "0-1" } else { "2-3" },
        );
        write(
            &tmp.0,
            &format!("{d}/cpu_capacity"),
            if cpu < 2 { "1024" } else { "446" },
        );
        write(
            &tmp.0,
            &format!("{d}/cpufreq/cpuinfo_max_freq"),
            if cpu < 2 { "2800000" } else { "1800000" },
        );
        write(&tmp.0, &format!("{d}/cache/index2/level"), "3");
        write(&tmp.0, &format!("{d}/cache/index2/type"), "Unified");
        write(&tmp.0, &format!("{d}/cache/index2/shared_cpu_list"), "0-3");
    }
    let m = sysfs::import(&tmp.0).unwrap();
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, vec![1024, 1024, 446, 446]);
    assert_eq!(m.cluster_mask(2).to_string(), "2-3");
    assert_eq!(m.llc_mask(0).to_string(), "0-3");
    // No node directory: one node.
    assert_eq!(m.node_distance, vec![vec![10]]);
    // Without cpu_capacity and without SMT: maximum-frequency ratio (2800 : 1800 MHz).
    for cpu in 0..4 {
        std::fs::remove_file(
            tmp.0
                .join(format!("sys/devices/system/cpu/cpu{cpu}/cpu_capacity")),
        )
        .unwrap();
    }
    let m = sysfs::import(&tmp.0).unwrap();
    let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, vec![1024, 1024, 658, 658]);
}

#[test]
fn sysfs_gaps_and_missing_directories_are_input_errors() {
    let e = sysfs::import(Path::new("/nonexistent/schedlab")).unwrap_err();
    assert_eq!(e.origin, "/nonexistent/schedlab");
    assert!(e.message.contains("does not exist"), "{e}");

    let empty = TempDir::new("empty");
    let e = sysfs::import(&empty.0).unwrap_err();
    assert!(e.message.contains("sys/devices/system/cpu"), "{e}");

    let gap = TempDir::new("gap");
    write(&gap.0, "sys/devices/system/cpu/cpu0/online", "1");
    write(&gap.0, "sys/devices/system/cpu/cpu2/online", "1");
    let e = sysfs::import(&gap.0).unwrap_err();
    assert!(e.message.contains("cpu1 is missing"), "{e}");
}

#[test]
fn malformed_hwloc_xml_is_an_input_error() {
    let tmp = TempDir::new("xml");
    let text =
        std::fs::read_to_string(fixtures().join("topology/hwloc-xml/16em64t-4s2c2t.xml")).unwrap();
    let path = tmp.0.join("truncated.xml");
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let e = resolve_machine(path.to_str().unwrap()).unwrap_err();
    assert_eq!(e.origin, path.display().to_string());
    assert!(e.message.contains("malformed XML"), "{e}");
    let e = hwloc::import(&tmp.0.join("absent.xml")).unwrap_err();
    assert!(e.message.contains("cannot read"), "{e}");
}

#[test]
fn toml_topology_files() {
    let tmp = TempDir::new("toml");
    let good = tmp.0.join("box.toml");
    std::fs::write(
        &good,
        "[machine.topology]\npackages = 2\ncores_per_package = 4\nthreads_per_core = 2\n\
distances = [[10, 21], [21, 10]]\n",
    )
    .unwrap();
    let m = resolve_machine(good.to_str().unwrap()).unwrap();
    assert_eq!(m.name, "box");
    assert_eq!(m.nr_cpus(), 16);
    assert_eq!(m.smt_mask(1).to_string(), "1,9");
    assert_eq!(m.node_mask(1).to_string(), "4-7,12-15");

    let bad = tmp.0.join("bad.toml");
    std::fs::write(
        &bad,
        "[machine.topology]\npackages = 2\ncores_per_socket = 4\n",
    )
    .unwrap();
    let e = resolve_machine(bad.to_str().unwrap()).unwrap_err();
    assert_eq!(e.origin, bad.display().to_string());
    assert_eq!(e.key.as_deref(), Some("machine.topology.cores_per_socket"));
    assert!(e.message.contains("cores_per_package"), "{e}");
    // The message is the exit-2 line the CLI prints.
    assert!(e.to_string().starts_with(&format!(
        "{}: machine.topology.cores_per_socket: ",
        bad.display()
    )));

    let broken = tmp.0.join("broken.toml");
    std::fs::write(&broken, "packages = [").unwrap();
    let e = resolve_machine(broken.to_str().unwrap()).unwrap_err();
    assert!(e.message.contains("malformed TOML"), "{e}");
}

#[test]
fn resolve_accepts_every_form() {
    let m = resolve_machine("host").unwrap();
    assert_eq!(m.name, "host");
    let xml = fixtures().join("topology/hwloc-xml/24em64t-2n6c2t-pci.xml");
    assert_eq!(
        resolve_machine(xml.to_str().unwrap()).unwrap().nr_cpus(),
        24
    );
    assert_eq!(
        resolve_machine_with(None, None, Some(&xml))
            .unwrap()
            .nr_nodes(),
        2
    );
    let (_, tmp) = sysfs_fixture("8em64t-2s4c-asymcaches");
    assert_eq!(
        resolve_machine(tmp.0.to_str().unwrap()).unwrap().nr_cpus(),
        8
    );
    assert_eq!(
        resolve_machine_with(None, Some(&tmp.0), None)
            .unwrap()
            .nr_cpus(),
        8
    );
    let e = resolve_machine("nonesuch").unwrap_err();
    assert!(e.message.contains("preset"), "{e}");
    assert!(e.message.contains("host"), "{e}");
}

/// Unpack `topology/sysfs/NAME.tar.bz2` into a temp dir and return it with the path of its
/// `sys/devices/system` directory (the fixture itself is never modified).
fn sysfs_tree(name: &str) -> (TempDir, PathBuf) {
    let tarball = fixtures().join(format!("topology/sysfs/{name}.tar.bz2"));
    let tmp = TempDir::new(&format!("broken-{name}"));
    let status = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .expect("tar (with bzip2) must be installed to unpack sysfs fixtures");
    assert!(status.success());
    let top = std::fs::read_dir(&tmp.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("sys/devices/system/cpu").is_dir())
        .expect("a snapshot directory");
    let sys = top.join("sys/devices/system");
    (tmp, sys)
}

/// Garbage in a topology file is one error naming that file and what it should hold.
#[test]
fn sysfs_garbage_topology_files_name_the_file_and_what_was_expected() {
    let fixture = "8em64t-2s4c-asymcaches";
    // (file under sys/devices/system, garbage, files removed first, expected words)
    let cases: &[(&str, &str, &[&str], &str)] = &[
        (
            "cpu/cpu1/topology/physical_package_id",
            "zero",
            &[],
            "'zero' is not a number; expected a package id",
        ),
        (
            "cpu/cpu2/topology/core_id",
            "x1",
            &[
                "cpu/cpu2/topology/thread_siblings_list",
                "cpu/cpu2/topology/thread_siblings",
            ],
            "'x1' is not a number; expected a core id",
        ),
        (
            "cpu/cpu3/topology/thread_siblings_list",
            "3-",
            &[],
            "expected a CPU list such as 0-3,8-11",
        ),
        (
            "cpu/cpu0/cache/index0/shared_cpu_list",
            "zz",
            &[],
            "expected a CPU list such as 0-3,8-11",
        ),
        (
            "cpu/cpu0/cache/index1/level",
            "two",
            &[],
            "'two' is not a number; expected a cache level",
        ),
        (
            "node/node0/cpulist",
            "0-3,a",
            &[],
            "expected a CPU list such as 0-3,8-11",
        ),
        (
            "node/node0/distance",
            "10 far",
            &[],
            "'far' is not a distance; expected one non-negative integer per node",
        ),
    ];
    for (file, garbage, remove, want) in cases {
        let (tmp, sys) = sysfs_tree(fixture);
        for r in *remove {
            let _ = std::fs::remove_file(sys.join(r));
        }
        let path = sys.join(file);
        assert!(path.is_file(), "{file} is in the fixture");
        std::fs::write(&path, garbage).unwrap();
        let e = sysfs::import(&tmp.0).expect_err(file).to_string();
        assert!(e.contains(file), "{file}: {e}");
        assert!(e.contains(want), "{file}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

/// A topology file that exists but cannot be read as a small text file (a link to
/// `/dev/zero`, a FIFO that would block the reader) is an error naming it, not a missing
/// file silently replaced by a fallback.
#[test]
fn sysfs_files_that_cannot_be_read_are_errors_not_missing_files() {
    let fixture = "8em64t-2s4c-asymcaches";
    let file = "cpu/cpu3/topology/thread_siblings_list";
    let (tmp, sys) = sysfs_tree(fixture);
    std::fs::remove_file(sys.join(file)).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sys.join(file)).unwrap();
    let e = sysfs::import(&tmp.0).expect_err("/dev/zero").to_string();
    assert!(e.contains(file), "{e}");
    assert!(e.contains("larger than the input limit of 16 MiB"), "{e}");

    let (tmp, sys) = sysfs_tree(fixture);
    std::fs::remove_file(sys.join(file)).unwrap();
    let made = Command::new("mkfifo").arg(sys.join(file)).status();
    if made.is_ok_and(|s| s.success()) {
        let e = sysfs::import(&tmp.0).expect_err("a FIFO").to_string();
        assert!(e.contains(file), "{e}");
        assert!(e.contains("is a FIFO or socket"), "{e}");
    }
}

/// A topology file missing from a snapshot is a warning naming the file (relative to the
/// snapshot root) and the fallback used, printed by `schedlab topo`; an intact snapshot
/// gives none.
#[test]
fn sysfs_missing_topology_files_warn_with_the_fallback() {
    let fixture = "8em64t-2s4c-asymcaches";
    let (tmp, _) = sysfs_tree(fixture);
    assert_eq!(
        sysfs::import(&tmp.0).unwrap().import_warnings,
        Vec::<String>::new()
    );
    let topo = |dir: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .arg("topo")
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(topo(&tmp.0), "");

    // (fixture, files removed under sys/devices/system, expected warning)
    let cases: &[(&str, &[&str], &str)] = &[
        (
            fixture,
            &[
                "cpu/cpu3/topology/thread_siblings_list",
                "cpu/cpu3/topology/thread_siblings",
                "cpu/cpu3/topology/core_id",
            ],
            "schedlab: warning: sys/devices/system/cpu/cpu3/topology/core_id missing: \
CPU 3 is its own core",
        ),
        (
            fixture,
            &["cpu/cpu1/topology/physical_package_id"],
            "schedlab: warning: sys/devices/system/cpu/cpu1/topology/physical_package_id \
missing: CPU 1 is in package 0",
        ),
        (
            fixture,
            &[
                "cpu/cpu0/cache/index0/shared_cpu_list",
                "cpu/cpu0/cache/index0/shared_cpu_map",
            ],
            "schedlab: warning: sys/devices/system/cpu/cpu0/cache/index0/shared_cpu_list \
missing: this cache is ignored",
        ),
        (
            "16amd64-8n2c",
            &["node/node1/distance"],
            "schedlab: warning: sys/devices/system/node/node1/distance missing: distances \
from node 1 are the kernel defaults",
        ),
    ];
    for (fixture, remove, want) in cases {
        let (tmp, sys) = sysfs_tree(fixture);
        for r in *remove {
            let _ = std::fs::remove_file(sys.join(r));
        }
        let stderr = topo(&tmp.0);
        // The named file's warning comes first (a lost cache may also lose the LLC).
        assert!(
            stderr.lines().next().is_some_and(|l| l.starts_with(want)),
            "{remove:?}: {stderr}"
        );
        let m = sysfs::import(&tmp.0).unwrap();
        assert_eq!(m.import_warnings.len(), stderr.lines().count());
    }
}
