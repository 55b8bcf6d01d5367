//! Fuzz targets: hwloc XML (`hwloc::import_str`), hand-written topology files
//! (`file::import`), and sysfs trees (`sysfs::import` on generated directories in a
//! scratch dir). See `tests/fuzz_common/mod.rs` for the driver and the long-run command.

use crate::fuzz_common;

use std::path::Path;

use fuzz_common::{TempDir, corpus_dir, fixtures, fuzz, mutated, one_line, token_soup};
use proptest::prelude::*;
use schedlab::topology::{file, hwloc, sysfs};

#[test]
fn fuzz_hwloc_xml_mutated() {
    let corpus = corpus_dir(&fixtures().join("topology/hwloc-xml"), ".xml");
    fuzz("hwloc-mutated", 150, mutated(corpus, 8), |text| {
        if let Err(e) = hwloc::import_str(&text, "fuzz.xml") {
            one_line(&e)?;
        }
        Ok(())
    });
}

#[test]
fn fuzz_hwloc_xml_arbitrary() {
    fuzz(
        "hwloc-arbitrary",
        1000,
        prop_oneof![
            any::<String>(),
            token_soup(
                &[
                    "<topology>",
                    "</topology>",
                    "<object",
                    "type=\"Machine\"",
                    "type=\"PU\"",
                    "type=\"Core\"",
                    "type=\"Package\"",
                    "type=\"NUMANode\"",
                    "os_index=\"0\"",
                    "cpuset=\"0x0000000f\"",
                    "complete_cpuset=\"0xf\"",
                    "<distances",
                    "nbobjs=\"2\"",
                    "value=\"10\""
                ],
                " "
            ),
        ],
        |text| {
            if let Err(e) = hwloc::import_str(&text, "fuzz.xml") {
                one_line(&e)?;
            }
            Ok(())
        },
    );
}

const TOPOLOGY_FILES: &[&str] = &[
    "name = \"t\"\npackages = 2\ncores_per_package = 4\nthreads_per_core = 2\nnodes = 2\n\
     cores_per_llc = 2\ncores_per_cluster = 1\nnumbering = \"core-major\"\n\
     distances = [[10, 21], [21, 10]]\ncapacities = { \"0-7\" = 1024, \"8-15\" = 512 }\n\
     offline = \"14-15\"\n",
    "[topology]\ncores_per_package = 8\n",
    "[machine.topology]\npackages = 1\ncores_per_package = 6\nnodes = 1\n",
    "cpus = [\n { core = 0, llc = 0, capacity = 1024 }, { core = 0, llc = 0, capacity = 1024 },\n \
     { core = 1, llc = 0, capacity = 512, cluster = 1, package = 0, node = 0, cpu = 2 },\n]\n\
     distances = [[10]]\noffline = \"1\"\n",
];

#[test]
fn fuzz_topology_file() {
    let corpus: Vec<String> = TOPOLOGY_FILES.iter().map(|s| s.to_string()).collect();
    let tmp = TempDir::new("topo");
    let path = tmp.0.join("machine.toml");
    fuzz(
        "topology-file",
        1500,
        prop_oneof![3 => mutated(corpus, 6), 1 => token_soup(&["packages", "cores_per_package", "threads_per_core", "nodes", "cpus", "core", "llc", "=", "\n"], " ")],
        |text| {
            std::fs::write(&path, &text).unwrap();
            if let Err(e) = file::import(&path) {
                one_line(&e)?;
            }
            Ok(())
        },
    );
}

/// One sysfs file of a generated tree: path relative to the root, and content.
type SysFile = (String, String);

/// A plausible sysfs tree for `n` CPUs in packages of `per_pkg` CPUs with SMT `smt`.
fn sysfs_tree(n: usize, per_pkg: usize, smt: usize) -> Vec<SysFile> {
    let cpu = "sys/devices/system/cpu";
    let mut files = vec![
        (format!("{cpu}/online"), format!("0-{}\n", n - 1)),
        (format!("{cpu}/possible"), format!("0-{}\n", n - 1)),
        (
            "sys/devices/system/node/node0/cpulist".into(),
            format!("0-{}\n", n - 1),
        ),
        (
            "sys/devices/system/node/node0/distance".into(),
            "10\n".into(),
        ),
    ];
    for c in 0..n {
        let pkg = c / per_pkg;
        let core = c / smt;
        let first = core * smt;
        let sib = format!("{first}-{}\n", (first + smt - 1).min(n - 1));
        let pk = format!(
            "{}-{}\n",
            pkg * per_pkg,
            ((pkg + 1) * per_pkg - 1).min(n - 1)
        );
        let d = format!("{cpu}/cpu{c}");
        files.push((format!("{d}/online"), "1\n".into()));
        files.push((format!("{d}/topology/core_id"), format!("{core}\n")));
        files.push((
            format!("{d}/topology/physical_package_id"),
            format!("{pkg}\n"),
        ));
        files.push((format!("{d}/topology/die_id"), "0\n".into()));
        files.push((format!("{d}/topology/thread_siblings_list"), sib.clone()));
        files.push((format!("{d}/topology/core_cpus_list"), sib.clone()));
        files.push((format!("{d}/topology/core_siblings_list"), pk.clone()));
        files.push((format!("{d}/topology/cluster_cpus_list"), sib.clone()));
        files.push((format!("{d}/cpu_capacity"), "1024\n".into()));
        files.push((format!("{d}/cache/index0/level"), "1\n".into()));
        files.push((format!("{d}/cache/index0/type"), "Data\n".into()));
        files.push((format!("{d}/cache/index0/shared_cpu_list"), sib.clone()));
        files.push((format!("{d}/cache/index3/level"), "3\n".into()));
        files.push((format!("{d}/cache/index3/type"), "Unified\n".into()));
        files.push((format!("{d}/cache/index3/shared_cpu_list"), pk.clone()));
        files.push((format!("{d}/node0/cpulist"), "0\n".into()));
    }
    files
}

fn sysfs_strategy() -> impl Strategy<Value = Vec<SysFile>> {
    (1usize..=16, 1usize..=8, 1usize..=2)
        .prop_flat_map(|(n, per_pkg, smt)| {
            let files = sysfs_tree(n, per_pkg.max(smt), smt);
            let len = files.len();
            (
                Just(files),
                proptest::collection::vec((0..len, 0u8..3, fuzz_common_value()), 0..6),
            )
        })
        .prop_map(|(mut files, edits)| {
            for (i, kind, value) in edits {
                match kind {
                    0 => files[i].1 = value,          // garbage content
                    1 => files[i].1 = String::new(),  // empty file
                    _ => files[i].1 = "\u{1}".into(), // marker: remove below
                }
            }
            files.retain(|(_, content)| content != "\u{1}");
            files
        })
}

fn fuzz_common_value() -> impl Strategy<Value = String> {
    prop_oneof![
        token_soup(&[], ""),
        proptest::sample::select(vec![
            "0-N\n",
            "all",
            "0-1023\n",
            "ffffffff,ffffffff\n",
            "-1\n",
            "99999999999\n",
            "0-3:1/2\n",
            "Instruction\n",
            "4\n"
        ])
        .prop_map(String::from),
    ]
}

#[test]
fn fuzz_sysfs_trees() {
    // File creation dominates: 60 trees take ~10 s in release on a shared disk.
    fuzz("sysfs-tree", 60, sysfs_strategy(), |files| {
        let tmp = TempDir::new("sysfs");
        for (rel, content) in &files {
            let path = tmp.0.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
        }
        if let Err(e) = sysfs::import(Path::new(&tmp.0)) {
            one_line(&e)?;
        }
        Ok(())
    });
}
