//! Import a machine from a sysfs tree: this machine's `/` (`host`), or a snapshot laid out as
//! `hwloc-gather-topology` and `lscpu -s` produce (`ROOT/sys/devices/system/...`).
//!
//! What is read, and the kernel data it shows:
//!
//! * `cpu/cpuN/` — every directory is a present CPU, and becomes a possible CPU of the
//!   machine. CPU ids must be `0..N` without gaps (an error names the first missing one).
//!   CPUs that are `possible` but not `present` (empty hotplug slots, `cpu/possible` is often
//!   far larger than the machine) have no directory and are not part of the machine.
//! * Online set: `cpu/online` when present, and any `cpuN/online` holding `0`. A CPU without
//!   an `online` file (CPU 0 is usually not hot-pluggable) is online unless `cpu/online`
//!   says otherwise.
//! * `cpuN/topology/`: `core_cpus_list` / `thread_siblings_list` (or the hex `core_cpus` /
//!   `thread_siblings` of old kernels) = `topology_sibling_cpumask`; `physical_package_id`
//!   (`-1` = unknown: one package 0 when every CPU says so, else a warning and the package of
//!   a CPU sharing the LLC); `cluster_cpus_list` (or `cluster_cpus`) =
//!   `topology_cluster_cpumask`. Without sibling lists, CPUs with equal
//!   (`physical_package_id`, `die_id`, `core_id`) are siblings, as x86 `match_smt()` decides.
//! * `cpuN/cache/indexK/{level,type,shared_cpu_list|shared_cpu_map}`: the highest-level
//!   data/unified cache is the LLC (`cpu_coregroup_mask`, x86 `llc_id`); the level-2 cache is
//!   the cluster when there is no cluster file (x86 `cpu_l2c_shared_mask`, the cluster before
//!   v5.16 exposed `cluster_cpus`).
//! * Offline CPUs: recent kernels remove `cpuN/topology` when a CPU goes offline but keep
//!   `cpuN/cache`. Such a CPU's SMT siblings are the CPUs sharing its level-1 data cache
//!   (exactly the SMT siblings on x86 and arm64); its package comes from a CPU sharing its
//!   LLC ([`super::resolve`] documents the remaining fallbacks).
//! * `node/nodeN/{cpulist|cpumap,distance}`, else the `cpuN/nodeK` link
//!   (`register_cpu_under_node()`, i.e. `cpu_to_node()`), else node 0 when there is no node
//!   directory at all. A `distance` row lists `node_distance(N, i)` for every online node `i`
//!   (`node_read_distance()` walks `for_each_online_node`): its columns are the nodes of
//!   `node/online` when that file has as many, else the node directories, else `0..len`.
//! * Capacity: `cpuN/cpu_capacity` (arm64/RISC-V `arch_topology`, and x86 since
//!   intel_pstate sets hybrid capacities) when present; else the rules of
//!   `raw::derive_capacities` from `cpuN/cpufreq/cpuinfo_max_freq`.
//!
//! A directory without `sys/devices/system/cpu` but holding exactly one sub-directory that
//! has it (an unpacked `hwloc-gather-topology` tarball) is read from that sub-directory.
//! Unreadable files are treated as absent (sysfs refuses some reads to unprivileged users).
//!
//! A missing file whose absence changes the topology (no sibling list nor `core_id`, no
//! `physical_package_id`, a cache index without `level` or `shared_cpu_list`, a CPU without
//! any cache, a node without `cpulist` or `distance`, a CPU in no node) adds one line to
//! [`Machine::import_warnings`] naming the file relative to the snapshot root and the
//! fallback used. Files that are normally optional (`die_id`, cluster files, `cpu_capacity`,
//! `cpufreq`, an offline CPU's `topology/` and `cache/`, the whole `node/` tree of a kernel
//! without NUMA) do not warn.

use std::path::{Path, PathBuf};

use super::Machine;
use super::raw::{RawCpu, RawMachine, assemble, parse_hex_mask};
use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::{InputError, InputResult};

/// Where `sys/devices/system/cpu` lives under a sysfs root.
const CPU_DIR: &str = "sys/devices/system/cpu";
const NODE_DIR: &str = "sys/devices/system/node";

/// Import this machine from `/sys`, named `host`.
pub fn host() -> InputResult<Machine> {
    let mut machine = import_named(Path::new("/"), "host")?;
    machine.arch = super::Arch::host();
    Ok(machine)
}

/// Import a sysfs snapshot rooted at `root` (the directory holding `sys/`); the machine is
/// named after the path.
pub fn import(root: &Path) -> InputResult<Machine> {
    import_named(root, &root.display().to_string())
}

/// Import a sysfs tree rooted at `root`, naming the machine `name`.
pub fn import_named(root: &Path, name: &str) -> InputResult<Machine> {
    super::count_import_read();
    let origin = root.display().to_string();
    let (base, cpu_dir, n) = cpu_dir_of(root, &origin)?;
    let online_all = read_mask(&cpu_dir, "online", None)?;
    let mut warn = Warnings {
        base: base.clone(),
        lines: Vec::new(),
    };
    let mut cpus: Vec<RawCpu> = Vec::with_capacity(n);
    // (package, die, core_id) for CPUs without a sibling list.
    let mut core_keys: Vec<Option<(i64, i64, i64)>> = vec![None; n];
    for (cpu, raw_key) in core_keys.iter_mut().enumerate() {
        let dir = cpu_dir.join(format!("cpu{cpu}"));
        let (cpu_raw, key) = read_cpu(&dir, cpu, online_all.as_ref(), &mut warn)?;
        *raw_key = key;
        cpus.push(cpu_raw);
    }
    for (i, key) in core_keys.iter().enumerate() {
        if key.is_some() {
            let same: CpuMask = (0..n).filter(|&j| core_keys[j] == *key).collect();
            cpus[i].core = cpus[i].core.or(&same);
        }
    }

    unknown_packages(&cpu_dir, &mut cpus, &mut warn);

    let node_dir = base.join(NODE_DIR);
    let node_ids = numbered_entries(&node_dir, "node");
    assign_nodes(&cpu_dir, &node_dir, &node_ids, &mut cpus, &mut warn)?;
    let distances = read_distances(&node_dir, &node_ids, &mut warn)?;

    let mut machine = assemble(RawMachine {
        name: name.to_string(),
        origin,
        source: format!("sysfs {}", base.display()),
        cpus,
        distances,
    })?;
    machine.import_warnings = warn.lines;
    Ok(machine)
}

/// The snapshot's base directory, its CPU directory and its number of CPUs (numbered 0..N,
/// at most the simulator's limit).
fn cpu_dir_of(root: &Path, origin: &str) -> InputResult<(PathBuf, PathBuf, usize)> {
    let accepted = "accepted: a directory holding sys/devices/system/cpu, such as / or an \
unpacked hwloc-gather-topology snapshot";
    if !root.exists() {
        return Err(InputError::new(
            origin.to_string(),
            format!("sysfs root does not exist ({accepted})"),
        ));
    }
    if !root.is_dir() {
        return Err(InputError::new(
            origin.to_string(),
            format!("sysfs root is not a directory ({accepted})"),
        ));
    }
    let base = locate_base(root).ok_or_else(|| {
        InputError::new(
            origin.to_string(),
            format!("no {CPU_DIR} directory found ({accepted})"),
        )
    })?;
    let cpu_dir = base.join(CPU_DIR);
    let ids = numbered_entries(&cpu_dir, "cpu");
    if ids.is_empty() {
        return Err(InputError::new(
            cpu_dir.display().to_string(),
            "no cpuN directories".to_string(),
        ));
    }
    if let Some((expected, _)) = ids.iter().enumerate().find(|(i, id)| *i != **id) {
        return Err(InputError::new(
            cpu_dir.display().to_string(),
            format!(
                "CPU numbering has a gap: cpu{expected} is missing but cpu{} exists; \
schedlab needs CPUs numbered 0..N",
                ids.last().copied().unwrap_or(0)
            ),
        ));
    }
    let n = ids.len();
    if n > NR_CPUS_MAX {
        return Err(InputError::new(
            cpu_dir.display().to_string(),
            format!("{n} CPUs, more than the simulator's limit of {NR_CPUS_MAX}"),
        ));
    }

    Ok((base, cpu_dir, n))
}

/// The warnings of one import, with paths shown relative to the snapshot root.
struct Warnings {
    base: PathBuf,
    lines: Vec<String>,
}

impl Warnings {
    /// Record "`path` missing: `fallback`".
    fn missing(&mut self, path: &Path, fallback: &str) {
        let rel = path.strip_prefix(&self.base).unwrap_or(path);
        self.lines
            .push(format!("{} missing: {fallback}", rel.display()));
    }

    /// Record "`path`: `what`" for a file whose value the import does not take as it is.
    fn note(&mut self, path: &Path, what: &str) {
        let rel = path.strip_prefix(&self.base).unwrap_or(path);
        self.lines.push(format!("{}: {what}", rel.display()));
    }
}

/// CPUs whose `physical_package_id` is -1, the kernel's "unknown" (powerpc's
/// `cpu_to_chip_id()` without an `ibm,chip-id` in the device tree; `arch_topology`'s value
/// before `store_cpu_topology()`). When every CPU says so the machine is one package, 0.
/// Next to CPUs with ids — a mix x86 and arm64 never show for online CPUs, and powerpc only
/// from firmware that gives some CPUs a chip id and not others — each such file warns, and
/// the CPU's package is that of a CPU sharing its LLC, else its own (`raw::assemble`), not
/// package 0, which would split an LLC of another package.
fn unknown_packages(cpu_dir: &Path, cpus: &mut [RawCpu], warn: &mut Warnings) {
    let file = |cpu: usize| cpu_dir.join(format!("cpu{cpu}/topology/physical_package_id"));
    // `None` with the file present is -1: `read_topology` refuses other values and gives a
    // missing file package 0; a CPU without `topology/` has no file.
    let unknown: Vec<usize> = (0..cpus.len())
        .filter(|&c| cpus[c].package.is_none() && file(c).is_file())
        .collect();
    if cpus.iter().all(|c| c.package.is_none()) {
        for c in unknown {
            cpus[c].package = Some(0);
        }
        return;
    }
    for c in unknown {
        warn.note(
            &file(c),
            &format!(
                "-1 (unknown) while other CPUs have package ids; CPU {c}'s package is that of \
                 a CPU sharing its LLC, else its own"
            ),
        );
    }
}

/// Each CPU's NUMA node: the first `nodeN/cpulist` (or `cpumap`) naming it, else the
/// `cpuN/nodeM` link.
fn assign_nodes(
    cpu_dir: &Path,
    node_dir: &Path,
    node_ids: &[usize],
    cpus: &mut [RawCpu],
    warn: &mut Warnings,
) -> InputResult<()> {
    let n = cpus.len();
    for &nid in node_ids {
        let dir = node_dir.join(format!("node{nid}"));
        if let Some(mask) = read_mask(&dir, "cpulist", Some("cpumap"))? {
            for cpu in mask.iter().filter(|&c| c < n) {
                if cpus[cpu].node.is_none() {
                    cpus[cpu].node = Some(nid);
                }
            }
        } else {
            warn.missing(
                &dir.join("cpulist"),
                &format!("node {nid}'s CPUs taken from the cpuN/node{nid} links"),
            );
        }
    }
    for (cpu, raw) in cpus.iter_mut().enumerate() {
        if raw.node.is_none() {
            let dir = cpu_dir.join(format!("cpu{cpu}"));
            raw.node = numbered_entries(&dir, "node").first().copied();
            if raw.node.is_none() && !node_ids.is_empty() {
                warn.missing(
                    &dir.join("nodeN"),
                    &format!(
                        "CPU {cpu} is in no node's cpulist and has no node link; \
it goes to a node of its package, else the lowest node"
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The `nodeN/distance` rows, keyed (from, to); a row's columns are the online nodes, else
/// every node directory, else 0.. when neither count matches.
fn read_distances(
    node_dir: &Path,
    node_ids: &[usize],
    warn: &mut Warnings,
) -> InputResult<std::collections::BTreeMap<(usize, usize), u64>> {
    let mut distances = std::collections::BTreeMap::new();
    let online_nodes: Vec<usize> = read_mask(node_dir, "online", None)?
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    for &nid in node_ids {
        let path = node_dir.join(format!("node{nid}/distance"));
        let Some(text) = read_opt(&path)? else {
            if node_ids.len() > 1 {
                warn.missing(
                    &path,
                    &format!(
                        "distances from node {nid} are the kernel defaults \
(10 to itself, {} to other nodes) unless the other nodes' rows give them",
                        super::raw::REMOTE_DISTANCE
                    ),
                );
            }
            continue;
        };
        let row: Vec<u64> = text
            .split_whitespace()
            .map(|d| {
                d.parse().map_err(|_| {
                    InputError::new(
                        path.display().to_string(),
                        format!(
                            "'{}' is not a distance; expected one non-negative integer per node",
                            crate::input::limits::clip(d)
                        ),
                    )
                })
            })
            .collect::<InputResult<_>>()?;
        let columns: Vec<usize> = if online_nodes.len() == row.len() {
            online_nodes.clone()
        } else if node_ids.len() == row.len() {
            node_ids.to_vec()
        } else {
            (0..row.len()).collect()
        };
        for (to, d) in columns.into_iter().zip(row) {
            distances.insert((nid, to), d);
        }
    }
    Ok(distances)
}

/// The directory under which `sys/devices/system/cpu` lives: `root` itself, or its single
/// sub-directory that has one (an unpacked hwloc-gather-topology tarball).
fn locate_base(root: &Path) -> Option<PathBuf> {
    if root.join(CPU_DIR).is_dir() {
        return Some(root.to_path_buf());
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    let with_cpu: Vec<&PathBuf> = subdirs
        .iter()
        .filter(|p| p.join(CPU_DIR).is_dir())
        .collect();
    match with_cpu.as_slice() {
        [only] => Some((*only).clone()),
        _ => None,
    }
}

/// Sorted N of the entries named `{prefix}N` in `dir` (empty when `dir` is absent).
fn numbered_entries(dir: &Path, prefix: &str) -> Vec<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut ids: Vec<usize> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let digits = name.strip_prefix(prefix)?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// A file's text without surrounding whitespace or NUL bytes (some snapshots carry a
/// trailing NUL), or `None` when it is absent. A file that exists but cannot be read as a
/// small text file (unreadable, above the input limit like a link to `/dev/zero`, not UTF-8,
/// a FIFO that would block) is an error naming it, not a silently missing file.
fn read_opt(path: &Path) -> InputResult<Option<String>> {
    use std::os::unix::fs::FileTypeExt;
    let err = |m: String| InputError::new(path.display().to_string(), m);
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Ok(m) if m.file_type().is_fifo() || m.file_type().is_socket() => {
            return Err(err(
                "is a FIFO or socket; accepted: a regular file of a sysfs snapshot".into(),
            ));
        }
        _ => {}
    }
    let text = crate::input::limits::read_text(path).map_err(err)?;
    Ok(Some(
        text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
            .to_string(),
    ))
}

/// A CPU set from `dir/list_name` (cpulist) or, failing that, `dir/map_name` (hex bitmap).
fn read_mask(dir: &Path, list_name: &str, map_name: Option<&str>) -> InputResult<Option<CpuMask>> {
    let list_path = dir.join(list_name);
    if let Some(text) = read_opt(&list_path)? {
        return CpuMask::parse(&text).map(Some).map_err(|e| {
            InputError::new(
                list_path.display().to_string(),
                format!("{e}; expected a CPU list such as 0-3,8-11"),
            )
        });
    }
    if let Some(map_name) = map_name {
        let map_path = dir.join(map_name);
        if let Some(text) = read_opt(&map_path)? {
            return parse_hex_mask(&text).map(Some).map_err(|e| {
                InputError::new(
                    map_path.display().to_string(),
                    format!("{e}; expected a hex CPU bitmap such as 00000000,0000000f"),
                )
            });
        }
    }
    Ok(None)
}

/// A number from a file, `None` when absent; `expected` says what the file holds, for the
/// error on anything else.
fn read_num<T: std::str::FromStr>(path: &Path, expected: &str) -> InputResult<Option<T>> {
    match read_opt(path)? {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| {
            InputError::new(
                path.display().to_string(),
                format!(
                    "'{}' is not a number; expected {expected}",
                    crate::input::limits::clip(&crate::error::escape_controls(&text))
                ),
            )
        }),
    }
}

/// One cache of a CPU: level, whether it holds instructions only, who shares it.
struct Cache {
    level: u32,
    instruction: bool,
    shared: CpuMask,
}

fn read_caches(dir: &Path, warn: &mut Warnings) -> InputResult<Vec<Cache>> {
    let cache_dir = dir.join("cache");
    let mut caches = Vec::new();
    for index in numbered_entries(&cache_dir, "index") {
        let idir = cache_dir.join(format!("index{index}"));
        let Some(level) = read_num::<u32>(&idir.join("level"), "a cache level (1, 2, 3...)")?
        else {
            warn.missing(&idir.join("level"), "this cache is ignored");
            continue;
        };
        let instruction = read_opt(&idir.join("type"))?.is_some_and(|t| t == "Instruction");
        let Some(shared) = read_mask(&idir, "shared_cpu_list", Some("shared_cpu_map"))? else {
            warn.missing(&idir.join("shared_cpu_list"), "this cache is ignored");
            continue;
        };
        caches.push(Cache {
            level,
            instruction,
            shared,
        });
    }
    Ok(caches)
}

/// Read `cpuN/`: its raw topology and, when it has no sibling list, its
/// (package, die, core_id) key.
#[allow(clippy::type_complexity)]
fn read_cpu(
    dir: &Path,
    cpu: usize,
    online_all: Option<&CpuMask>,
    warn: &mut Warnings,
) -> InputResult<(RawCpu, Option<(i64, i64, i64)>)> {
    let topo = dir.join("topology");
    let has_topo = topo.is_dir();
    let mut raw = RawCpu::default();

    let offline_flag = read_opt(&dir.join("online"))?.is_some_and(|t| t == "0");
    let listed = online_all.is_none_or(|m| m.test(cpu));
    raw.online = listed && !offline_flag;

    let caches = read_caches(dir, warn)?;
    let data = || caches.iter().filter(|c| !c.instruction);
    let union_at = |level: u32| -> Option<CpuMask> {
        data()
            .filter(|c| c.level == level)
            .map(|c| c.shared)
            .reduce(|a, b| a.or(&b))
    };
    let top_level = data().map(|c| c.level).max();
    raw.llc = top_level.and_then(union_at);
    if raw.llc.is_none() && raw.online {
        warn.missing(
            &dir.join("cache/indexK"),
            &format!("no data cache of CPU {cpu} is known; its LLC is its package within its node"),
        );
    }
    let l2 = union_at(2);
    let l1 = union_at(1);

    let mut core_key = None;
    if has_topo {
        core_key = read_topology(&topo, cpu, &mut raw, warn)?;
    } else if let Some(l1) = l1 {
        // Offline CPU without topology/: the L1 is shared by exactly the SMT siblings.
        raw.core = l1;
        if raw.online {
            // Every online CPU has topology/ (drivers/base/topology.c): a cut snapshot.
            warn.missing(
                &topo,
                &format!(
                    "online CPU {cpu} has no topology/; its core is the CPUs sharing its L1 \
                     and its package that of a CPU sharing its LLC, else its own"
                ),
            );
        }
    } else if raw.online {
        warn.missing(
            &topo,
            &format!("CPU {cpu} has no level-1 cache either; it is its own core"),
        );
    }
    raw.core.set(cpu);
    if raw.cluster.is_none() {
        raw.cluster = l2;
    }
    raw.capacity = read_num::<u32>(
        &dir.join("cpu_capacity"),
        "a capacity (an integer, at most 1024)",
    )?;
    raw.max_freq_khz =
        read_num::<u64>(&dir.join("cpufreq/cpuinfo_max_freq"), "a frequency in kHz")?;
    Ok((raw, core_key))
}

/// Read `cpuN/topology/` into `raw` (package, core, cluster); the CPU's (package, die,
/// core_id) key when it has no sibling list.
fn read_topology(
    topo: &Path,
    cpu: usize,
    raw: &mut RawCpu,
    warn: &mut Warnings,
) -> InputResult<Option<(i64, i64, i64)>> {
    let mut core_key = None;
    let siblings = match read_mask(topo, "core_cpus_list", Some("core_cpus"))? {
        Some(m) => Some(m),
        None => read_mask(topo, "thread_siblings_list", Some("thread_siblings"))?,
    };
    let package = read_num::<i64>(
        &topo.join("physical_package_id"),
        "a package id (an integer, -1 = unknown)",
    )?;
    if let Some(p) = package.filter(|&p| p < -1) {
        return Err(InputError::new(
            topo.join("physical_package_id").display().to_string(),
            format!("package id {p}; accepted: an integer >= 0, or -1 (unknown)"),
        ));
    }
    // -1 (unknown): `None` here, settled with the other CPUs' ids by `unknown_packages`.
    raw.package = match package {
        Some(p) => usize::try_from(p).ok(),
        None => Some(0),
    };
    if package.is_none() {
        warn.missing(
            &topo.join("physical_package_id"),
            &format!("CPU {cpu} is in package 0"),
        );
    }
    match siblings {
        Some(m) => raw.core = m,
        None => {
            if let Some(core_id) = read_num::<i64>(&topo.join("core_id"), "a core id (an integer)")?
            {
                let die =
                    read_num::<i64>(&topo.join("die_id"), "a die id (an integer)")?.unwrap_or(0);
                core_key = Some((package.unwrap_or(0), die, core_id));
            } else {
                warn.missing(
                    &topo.join("core_id"),
                    &format!(
                        "CPU {cpu} is its own core (core_cpus_list and \
thread_siblings_list are missing too)"
                    ),
                );
            }
        }
    }
    raw.cluster = read_mask(topo, "cluster_cpus_list", Some("cluster_cpus"))?;
    Ok(core_key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_imports() {
        // Whatever this machine is, its sysfs must import, with every online CPU counted.
        let m = host().unwrap();
        assert_eq!(m.name, "host");
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let online = CpuMask::parse(&online).unwrap();
        assert_eq!(m.online, online);
        assert!(m.nr_nodes() >= 1);
    }

    #[test]
    fn missing_root_is_an_input_error() {
        let e = import(Path::new("/nonexistent/schedlab-sysfs")).unwrap_err();
        assert_eq!(e.origin, "/nonexistent/schedlab-sysfs");
        assert!(e.message.contains("does not exist"));
    }
}
