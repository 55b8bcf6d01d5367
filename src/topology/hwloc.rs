//! Import a machine from an hwloc XML export (`lstopo --of xml`, `hwloc-gather-topology`),
//! hwloc 2.x and 1.x formats.
//!
//! hwloc describes a machine as a tree of objects, each with the set of CPUs (PU
//! `os_index`, the kernel's CPU ids) it covers. For every CPU this importer finds the
//! objects covering it, using `complete_cpuset` (which still holds offline CPUs) and
//! falling back to `cpuset`:
//!
//! * `Core` → SMT siblings; `Package` (1.x: `Socket`) → package, by `os_index`.
//! * Caches: `L1Cache`..`L5Cache` / `L1iCache`.. (2.x) or `Cache` with `depth` and
//!   `cache_type` (1.x; type 2 = instruction). The highest-level data/unified cache is the
//!   LLC; a `Group` with `subtype="Cluster"` is the cluster, else the L2.
//! * `NUMANode` (2.x: memory children; 1.x: ordinary parents) → node, by `os_index`. When
//!   several nodes cover a CPU (a DDR node and an HBM/MCDRAM node on the same package), the
//!   CPU belongs to the one with the fewest CPUs, then the lowest `os_index`, and the other
//!   becomes a memory-only node, which is dropped: the kernel's `cpu_to_node()` names one
//!   node, and memory-only nodes are not modelled.
//! * Distances: 2.x `distances2` of type `NUMANode` (the `NUMALatency` matrix, or the first
//!   one not marked as bandwidth), `indexing="os"` or `"gp"`; 1.x `distances` with
//!   `latency` values times `latency_base`, indexed by the NUMA nodes in document order.
//!   On Linux these values are the SLIT itself; a matrix of latencies whose diagonal is not
//!   10 is rescaled to SLIT units (diagonal 10), and an invalid one is replaced by the
//!   kernel defaults (see `raw::build_distances`). Distance matrices of other object
//!   types (Package, Core, PU) are not the kernel's `node_distance()` and are ignored.
//! * `cpukind` elements: `LinuxCapacity` (hwloc's copy of sysfs `cpu_capacity`) is the
//!   CPU's capacity; else `FrequencyMaxMHz` feeds `raw::derive_capacities` (asymmetric
//!   capacity only without SMT, as intel_pstate does). `CoreType` is informational only.
//! * Offline CPUs: the root's `complete_cpuset` minus its `online_cpuset` (1.x) or its
//!   `cpuset` (2.x, where offline PUs are left out of every `cpuset`). Disallowed CPUs
//!   (`allowed_cpuset`, a cgroup restriction) are still online to the scheduler.
//!
//! Not read: I/O objects, memory-side caches (`MemCache`), `Die` (the LLC is what sched
//! domains use), object infos other than the above.

use std::collections::BTreeMap;
use std::path::Path;

use super::Machine;
use super::raw::{RawCpu, RawMachine, assemble, parse_hex_mask};
use crate::cpumask::CpuMask;
use crate::error::{InputError, InputResult};

/// What an object contributes to the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Core,
    Package,
    Node,
    Cluster,
    Cache { level: u32, instruction: bool },
}

#[derive(Debug, Clone)]
struct Obj {
    kind: Kind,
    mask: CpuMask,
    os: Option<usize>,
    gp: Option<usize>,
}

/// Import an hwloc XML file.
pub fn import(path: &Path) -> InputResult<Machine> {
    super::count_import_read();
    let origin = path.display().to_string();
    let text = crate::input::limits::read_text(path)
        .map_err(|e| InputError::new(origin.clone(), format!("hwloc XML: {e}")))?;
    import_str(&text, &origin)
}

/// Import hwloc XML text; `origin` names it in errors and becomes the machine's name.
pub fn import_str(text: &str, origin: &str) -> InputResult<Machine> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| {
        InputError::new(
            origin,
            format!("malformed XML: {e} (accepted: an `lstopo --of xml` export)"),
        )
    })?;
    let top = doc.root_element();
    if !top.has_tag_name("topology") {
        return Err(InputError::new(
            origin,
            format!(
                "root element is <{}>, not <topology> (accepted: an `lstopo --of xml` export)",
                top.tag_name().name()
            ),
        ));
    }
    let root = top
        .children()
        .find(|n| n.has_tag_name("object"))
        .ok_or_else(|| InputError::new(origin, "no <object> in <topology>"))?;

    let (n, online) = cpu_range(root, origin)?;
    let objs = flatten_objects(root, origin)?;
    let mut cpus: Vec<RawCpu> = (0..n).map(|cpu| raw_cpu(&objs, &online, cpu)).collect();
    apply_cpu_kinds(top, origin, &mut cpus)?;

    let distances = read_distances(top, &objs, origin)?;
    assemble(RawMachine {
        name: origin.to_string(),
        origin: origin.to_string(),
        source: format!("hwloc XML {origin}"),
        cpus,
        distances,
    })
}

/// A hex cpuset attribute of `node`, if present.
fn mask_attr(node: roxmltree::Node, attr: &str, origin: &str) -> InputResult<Option<CpuMask>> {
    match node.attribute(attr) {
        None => Ok(None),
        Some(v) => parse_hex_mask(v)
            .map(Some)
            .map_err(|e| InputError::with_key(origin, format!("{} {attr}", describe(node)), e)),
    }
}

/// A non-negative integer attribute of `node`, if present.
fn num_attr(node: roxmltree::Node, attr: &str, origin: &str) -> InputResult<Option<usize>> {
    match node.attribute(attr) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            InputError::with_key(
                origin,
                format!("{} {attr}", describe(node)),
                format!("'{v}' is not a non-negative integer"),
            )
        }),
    }
}

/// The number of CPUs and which are online: every CPU the root's `cpuset` /
/// `complete_cpuset` or a PU's `os_index` names, which must be numbered 0..N without gaps
/// (schedlab ids are dense).
fn cpu_range(root: roxmltree::Node, origin: &str) -> InputResult<(usize, CpuMask)> {
    let root_cpuset = mask_attr(root, "cpuset", origin)?.unwrap_or_default();
    let root_complete = mask_attr(root, "complete_cpuset", origin)?.unwrap_or_default();
    let mut all = root_cpuset.or(&root_complete);
    let mut pus_seen = CpuMask::new();
    let mut nr_pus = 0usize;
    for pu in root
        .descendants()
        .filter(|n| n.has_tag_name("object") && n.attribute("type") == Some("PU"))
    {
        nr_pus += 1;
        if let Some(os) = num_attr(pu, "os_index", origin)? {
            if os < crate::cpumask::NR_CPUS_MAX && pus_seen.test(os) {
                // Two PUs with one id: every CPU's placement would be ambiguous.
                return Err(InputError::with_key(
                    origin,
                    format!("{} os_index", describe(pu)),
                    format!("CPU {os} is named by two PU objects; accepted: one PU per CPU id"),
                ));
            }
            if os >= crate::cpumask::NR_CPUS_MAX {
                return Err(InputError::with_key(
                    origin,
                    format!("{} os_index", describe(pu)),
                    format!("CPU {os} is beyond the simulator's limit"),
                ));
            }
            all.set(os);
            pus_seen.set(os);
        }
    }
    let online = match mask_attr(root, "online_cpuset", origin)? {
        Some(m) => m,
        None => root_cpuset,
    };
    let n = all.iter().last().map_or(0, |c| c + 1);
    if n == 0 {
        return Err(InputError::new(origin, "the topology has no PU (CPU)"));
    }
    if let Some(missing) = (0..n).find(|&c| !all.test(c)) {
        return Err(InputError::new(
            origin,
            format!(
                "CPU numbering has a gap: CPU {missing} is missing but CPU {} exists \
(CPUs: {all}); schedlab needs CPUs numbered 0..N",
                n - 1
            ),
        ));
    }
    if nr_pus == 0 {
        // Without PUs no CPU has a core, package or node: the cpusets alone say nothing.
        return Err(InputError::new(
            origin,
            "the topology has no PU object; accepted: an hwloc XML (lstopo --of xml) with one \
             PU object per CPU",
        ));
    }
    Ok((n, online))
}

/// The objects that matter to the topology, in document order; others are skipped.
fn flatten_objects(root: roxmltree::Node, origin: &str) -> InputResult<Vec<Obj>> {
    let mut objs: Vec<Obj> = Vec::new();
    for node in root.descendants().filter(|n| n.has_tag_name("object")) {
        let Some(kind) = object_kind(node, origin)? else {
            continue;
        };
        let mask = match mask_attr(node, "complete_cpuset", origin)? {
            Some(m) => m,
            None => mask_attr(node, "cpuset", origin)?.unwrap_or_default(),
        };
        objs.push(Obj {
            kind,
            mask,
            os: num_attr(node, "os_index", origin)?,
            gp: num_attr(node, "gp_index", origin)?,
        });
    }
    Ok(objs)
}

/// What an hwloc object of this `type` contributes, or `None` when it is not read.
fn object_kind(node: roxmltree::Node, origin: &str) -> InputResult<Option<Kind>> {
    let typ = node.attribute("type").unwrap_or("");
    Ok(Some(match typ {
        "Core" => Kind::Core,
        "Package" | "Socket" => Kind::Package,
        "NUMANode" | "Node" => Kind::Node,
        "Group"
            if node
                .attribute("subtype")
                .is_some_and(|s| s.eq_ignore_ascii_case("cluster")) =>
        {
            Kind::Cluster
        }
        "Cache" => Kind::Cache {
            level: num_attr(node, "depth", origin)?.unwrap_or(0) as u32,
            instruction: node.attribute("cache_type") == Some("2"),
        },
        t if t.starts_with('L') && t.ends_with("Cache") => {
            // `get`: a non-ASCII character after the `L` is no level (and no panic).
            let level: u32 = t.get(1..2).and_then(|d| d.parse().ok()).unwrap_or(0);
            Kind::Cache {
                level,
                instruction: t.ends_with("iCache") || node.attribute("cache_type") == Some("2"),
            }
        }
        _ => return Ok(None),
    }))
}

/// The cache level of a data or unified cache object.
fn data_level(o: &Obj) -> Option<u32> {
    match o.kind {
        Kind::Cache {
            level,
            instruction: false,
        } => Some(level),
        _ => None,
    }
}

/// The smallest object covering `cpu` that satisfies `pred` (ties: lowest `os_index`).
fn smallest<'a>(objs: &'a [Obj], cpu: usize, pred: &dyn Fn(&Obj) -> bool) -> Option<&'a Obj> {
    objs.iter()
        .filter(|o| pred(o) && o.mask.test(cpu))
        .min_by_key(|o| (o.mask.weight(), o.os.unwrap_or(usize::MAX)))
}

/// One CPU's SMT siblings, package, node, LLC and cluster, from the smallest objects
/// covering it.
fn raw_cpu(objs: &[Obj], online: &CpuMask, cpu: usize) -> RawCpu {
    let mut raw = RawCpu {
        online: online.test(cpu),
        ..RawCpu::default()
    };
    raw.core =
        smallest(objs, cpu, &|o| o.kind == Kind::Core).map_or(CpuMask::single(cpu), |o| o.mask);
    raw.core.set(cpu);
    raw.package = package_id(objs, cpu);
    raw.node = smallest(objs, cpu, &|o| o.kind == Kind::Node).and_then(|o| o.os);
    let top = objs
        .iter()
        .filter(|o| o.mask.test(cpu))
        .filter_map(data_level)
        .max();
    raw.llc =
        top.and_then(|top| smallest(objs, cpu, &|o| data_level(o) == Some(top)).map(|o| o.mask));
    raw.cluster = smallest(objs, cpu, &|o| o.kind == Kind::Cluster)
        .or_else(|| smallest(objs, cpu, &|o| data_level(o) == Some(2)))
        .map(|o| o.mask);
    raw
}

/// The package id of `cpu`: the smallest covering package's `os_index`, or a synthetic id
/// past any real one (by package order) when it has none; 0 when the file has no packages.
fn package_id(objs: &[Obj], cpu: usize) -> Option<usize> {
    if !objs.iter().any(|o| o.kind == Kind::Package) {
        return Some(0);
    }
    objs.iter()
        .filter(|o| o.kind == Kind::Package)
        .enumerate()
        .filter(|(_, o)| o.mask.test(cpu))
        .min_by_key(|(_, o)| o.mask.weight())
        .map(|(seq, o)| o.os.unwrap_or((1 << 20) + seq))
}

/// `cpukind` elements: `LinuxCapacity` sets the capacity, `FrequencyMaxMHz` the maximum
/// frequency of the CPUs in the kind's cpuset.
fn apply_cpu_kinds(top: roxmltree::Node, origin: &str, cpus: &mut [RawCpu]) -> InputResult<()> {
    let n = cpus.len();
    for kind in top.descendants().filter(|n| n.has_tag_name("cpukind")) {
        let mask = mask_attr(kind, "cpuset", origin)?.unwrap_or_default();
        let mut capacity = None;
        let mut freq_mhz = None;
        for info in kind.children().filter(|n| n.has_tag_name("info")) {
            let value = info.attribute("value").unwrap_or("").trim();
            let parse = |what: &str| -> InputResult<u64> {
                value.parse().map_err(|_| {
                    InputError::with_key(
                        origin,
                        format!("cpukind info {what}"),
                        format!("'{value}' is not a non-negative integer"),
                    )
                })
            };
            match info.attribute("name") {
                Some("LinuxCapacity") => capacity = Some(parse("LinuxCapacity")? as u32),
                Some("FrequencyMaxMHz") => freq_mhz = Some(parse("FrequencyMaxMHz")?),
                _ => {}
            }
        }
        for cpu in mask.iter().filter(|&c| c < n) {
            if capacity.is_some() {
                cpus[cpu].capacity = capacity;
            }
            if let Some(f) = freq_mhz {
                cpus[cpu].max_freq_khz = Some(f * 1000);
            }
        }
    }
    Ok(())
}

/// `<object type="X" gp_index="N">` for error keys.
fn describe(node: roxmltree::Node) -> String {
    let typ = node.attribute("type").unwrap_or(node.tag_name().name());
    match node.attribute("gp_index").or(node.attribute("os_index")) {
        Some(i) => format!("object {typ} #{i}"),
        None => format!("object {typ}"),
    }
}

/// The most nodes a `distances2` matrix may have: the kernel's `MAX_NUMNODES` at its largest
/// `NODES_SHIFT` (10, x86_64). Why a limit: `nbobjs` squared sizes the matrix.
const DISTANCE_NODES_MAX: usize = 1024;

/// The NUMA distance matrix, keyed by node `os_index`.
fn read_distances(
    top: roxmltree::Node,
    objs: &[Obj],
    origin: &str,
) -> InputResult<BTreeMap<(usize, usize), u64>> {
    // hwloc 2.x
    let candidates: Vec<roxmltree::Node> = top
        .children()
        .filter(|n| n.has_tag_name("distances2") && n.attribute("type") == Some("NUMANode"))
        .filter(|n| {
            let kind: u64 = n
                .attribute("kind")
                .and_then(|k| k.parse().ok())
                .unwrap_or(0);
            kind & 8 == 0 // HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH
        })
        .collect();
    let chosen = candidates
        .iter()
        .find(|n| n.attribute("name") == Some("NUMALatency"))
        .or(candidates.first());
    match chosen {
        Some(d) => distances2(*d, objs, origin),
        None => distances1(top, objs, origin),
    }
}

/// hwloc 2.x: the matrix of one `<distances2>` element.
fn distances2(
    d: roxmltree::Node,
    objs: &[Obj],
    origin: &str,
) -> InputResult<BTreeMap<(usize, usize), u64>> {
    let mut out = BTreeMap::new();
    let bad = |msg: String| InputError::with_key(origin, "distances", msg);
    let nb: usize = d
        .attribute("nbobjs")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad("distances2 has no valid nbobjs".into()))?;
    if nb > DISTANCE_NODES_MAX {
        return Err(bad(format!(
            "distances2 nbobjs = {nb}: accepted: at most {DISTANCE_NODES_MAX} nodes"
        )));
    }
    let numbers = |tag: &str| -> InputResult<Vec<u64>> {
        let mut v = Vec::new();
        for child in d.children().filter(|c| c.has_tag_name(tag)) {
            for word in child.text().unwrap_or("").split_whitespace() {
                v.push(word.parse().map_err(|_| {
                    bad(format!("'{word}' in <{tag}> is not a non-negative integer"))
                })?);
            }
        }
        Ok(v)
    };
    let indexes = numbers("indexes")?;
    let values = numbers("u64values")?;
    if indexes.len() != nb || values.len() != nb * nb {
        return Err(bad(format!(
            "distances2 for {nb} nodes has {} indexes and {} values (expected {nb} and {})",
            indexes.len(),
            values.len(),
            nb * nb
        )));
    }
    let ids: Vec<usize> = if d.attribute("indexing") == Some("gp") {
        indexes
            .iter()
            .map(|&gp| {
                objs.iter()
                    .find(|o| o.kind == Kind::Node && o.gp == Some(gp as usize))
                    .and_then(|o| o.os)
                    .ok_or_else(|| bad(format!("no NUMANode with gp_index {gp}")))
            })
            .collect::<InputResult<_>>()?
    } else {
        indexes.iter().map(|&i| i as usize).collect()
    };
    for (i, &a) in ids.iter().enumerate() {
        for (j, &b) in ids.iter().enumerate() {
            out.insert((a, b), values[i * nb + j]);
        }
    }
    Ok(out)
}

/// hwloc 1.x: the matrix of the first `<distances>` element over all the NUMA nodes.
fn distances1(
    top: roxmltree::Node,
    objs: &[Obj],
    origin: &str,
) -> InputResult<BTreeMap<(usize, usize), u64>> {
    let mut out = BTreeMap::new();
    let bad = |msg: String| InputError::with_key(origin, "distances", msg);
    let nodes: Vec<usize> = objs
        .iter()
        .filter(|o| o.kind == Kind::Node)
        .filter_map(|o| o.os)
        .collect();
    for d in top.descendants().filter(|n| n.has_tag_name("distances")) {
        let nb: usize = d
            .attribute("nbobjs")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if nb == 0 || nb != nodes.len() {
            continue;
        }
        let base: f64 = d
            .attribute("latency_base")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1.0);
        let values: Vec<f64> = d
            .children()
            .filter(|c| c.has_tag_name("latency"))
            .map(|c| {
                let v = c.attribute("value").unwrap_or("");
                v.parse::<f64>()
                    .map_err(|_| bad(format!("latency value '{v}' is not a number")))
            })
            .collect::<InputResult<_>>()?;
        if values.len() != nb * nb {
            return Err(bad(format!(
                "distances for {nb} nodes has {} latency values (expected {})",
                values.len(),
                nb * nb
            )));
        }
        for (i, &a) in nodes.iter().enumerate() {
            for (j, &b) in nodes.iter().enumerate() {
                out.insert((a, b), (values[i * nb + j] * base).round().max(0.0) as u64);
            }
        }
        break;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwloc1_format_is_read() {
        // A 2-socket, 2-core, 1-node-per-socket machine in hwloc 1.x form, with CPU 3
        // offline.
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc.dtd">
<topology>
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" online_cpuset="0x00000007">
    <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003">
      <object type="Socket" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003">
        <object type="Cache" cpuset="0x00000003" depth="2" cache_type="0">
          <object type="Core" os_index="0" cpuset="0x00000001"><object type="PU" os_index="0" cpuset="0x00000001"/></object>
          <object type="Core" os_index="1" cpuset="0x00000002"><object type="PU" os_index="1" cpuset="0x00000002"/></object>
        </object>
      </object>
    </object>
    <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c">
      <object type="Socket" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c">
        <object type="Cache" cpuset="0x0000000c" complete_cpuset="0x0000000c" depth="2" cache_type="0">
          <object type="Core" os_index="0" cpuset="0x00000004"><object type="PU" os_index="2" cpuset="0x00000004"/></object>
          <object type="Core" os_index="1" cpuset="0x00000008" complete_cpuset="0x00000008"/>
        </object>
      </object>
    </object>
    <distances nbobjs="2" relative_depth="1" latency_base="10.000000">
      <latency value="1.000000"/><latency value="2.100000"/>
      <latency value="2.100000"/><latency value="1.000000"/>
    </distances>
  </object>
</topology>"#;
        let m = import_str(xml, "v1.xml").unwrap();
        assert_eq!(m.nr_cpus(), 4);
        assert_eq!(m.online.to_string(), "0-2");
        assert_eq!(m.llc_mask(3).to_string(), "2-3");
        assert_eq!(m.cpus[3].package, 1);
        assert_eq!(m.node_mask(1).to_string(), "2-3");
        assert_eq!(m.node_distance, vec![vec![10, 21], vec![21, 10]]);
    }

    #[test]
    fn malformed_and_foreign_xml_are_input_errors() {
        let e = import_str("<topology><object type=\"Machine\"", "bad.xml").unwrap_err();
        assert_eq!(e.origin, "bad.xml");
        assert!(e.message.contains("malformed XML"));
        let e = import_str("<svg/>", "pic.xml").unwrap_err();
        assert!(e.message.contains("<svg>"));
        let e = import_str(
            r#"<topology><object type="Machine" cpuset="0x00000005"/></topology>"#,
            "gap.xml",
        )
        .unwrap_err();
        assert!(e.message.contains("CPU 1 is missing"), "{e}");
    }

    /// A `distances2` matrix claiming more nodes than the kernel can have is refused, not
    /// squared (found by `fuzz_topology::fuzz_hwloc_xml_mutated`: `nbobjs="42949672958"`
    /// overflowed `nbobjs * nbobjs`).
    #[test]
    fn a_distance_matrix_of_too_many_nodes_is_an_input_error() {
        let xml = r#"<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" gp_index="3"/>
      <object type="Core" os_index="0" cpuset="0x00000001" gp_index="4"><object type="PU" os_index="0" cpuset="0x00000001" gp_index="5"/></object>
      <object type="Core" os_index="1" cpuset="0x00000002" gp_index="6"><object type="PU" os_index="1" cpuset="0x00000002" gp_index="7"/></object>
    </object>
  </object>
  <distances2 type="NUMANode" nbobjs="42949672958" kind="5" name="NUMALatency" indexing="os">
    <indexes length="1">0 </indexes>
    <u64values length="2">10 </u64values>
  </distances2>
</topology>"#;
        let e = import_str(xml, "huge.xml").unwrap_err();
        assert_eq!(e.origin, "huge.xml");
        assert!(
            e.message.contains("nbobjs = 42949672958") && e.message.contains("at most 1024"),
            "{e}"
        );
    }
}
