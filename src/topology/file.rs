//! Hand-written machine topologies in TOML: a `[machine.topology]` table in a scenario, or a
//! standalone `.toml` file (keys at the top level, or under `[topology]` or
//! `[machine.topology]`).
//!
//! Two forms. The **regular form** describes a symmetric machine by counts:
//!
//! ```toml
//! name = "2s-skl"                 # optional; default: the file name
//! description = "..."             # optional
//! packages = 2                    # default 1
//! cores_per_package = 20          # required
//! threads_per_core = 2            # default 1 (SMT width, 1..=8)
//! nodes = 2                       # default = packages; a multiple of packages (Sub-NUMA
//!                                 # Clustering: nodes split each package's cores evenly)
//!                                 # or a divisor (a node spans several packages)
//! cores_per_llc = 20              # default: all cores of a package's node share one LLC
//! cores_per_cluster = 1           # default 1 (no clusters); must divide cores_per_llc
//! numbering = "socket-major"      # default. x86 order: CPU = thread * (packages *
//!                                 # cores_per_package) + global core, so second threads
//!                                 # follow all first threads. "core-major": CPU = global
//!                                 # core * threads_per_core + thread (siblings adjacent,
//!                                 # as on arm64 and POWER).
//! distances = [[10, 21], [21, 10]] # default: 10 local, 20 (REMOTE_DISTANCE) remote
//! capacities = { "0-15" = 1024, "16-31" = 512 }   # cpulist → capacity; default 1024
//! offline = "30-31"               # optional cpulist of offline CPUs
//! arch = "x86"                    # optional: whose sched-domain table the kernel uses,
//!                                 # "x86", "arm64" (default: the kernel's generic
//!                                 # default_topology) or "powerpc"
//! ```
//!
//! Global core `g = package * cores_per_package + core`; LLCs and clusters are consecutive
//! runs of cores inside a package, and an LLC never crosses a node.
//!
//! The **explicit form** lists every CPU, for machines no counts can describe (hybrid parts
//! with SMT on some cores only):
//!
//! ```toml
//! cpus = [
//!   { core = 0, llc = 0, capacity = 1024 }, { core = 0, llc = 0, capacity = 1024 },
//!   { core = 1, llc = 0, capacity = 512 },
//! ]
//! distances = [[10]]   # optional; nodes = highest `node` + 1
//! ```
//!
//! Per-CPU keys: `core` (required), `cluster` (default: the core), `llc` (default: the
//! package), `package` (default 0), `node` (default 0), `capacity` (default 1024), and
//! `cpu` (optional; must equal the entry's index). `name`, `description`, `distances`,
//! `offline` and `arch` apply as above; the regular-form keys may not be mixed in.
//!
//! Every error names the file, the dotted key and what is accepted.

use std::path::Path;

use toml::{Table, Value};

use super::raw::REMOTE_DISTANCE;
use super::{CpuTopology, LOCAL_DISTANCE, Machine, SCHED_CAPACITY_SCALE};
use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::{InputError, InputResult};

const REGULAR_KEYS: &[&str] = &[
    "name",
    "description",
    "packages",
    "cores_per_package",
    "threads_per_core",
    "nodes",
    "cores_per_llc",
    "cores_per_cluster",
    "numbering",
    "distances",
    "capacities",
    "offline",
    "arch",
];
const EXPLICIT_KEYS: &[&str] = &[
    "name",
    "description",
    "cpus",
    "distances",
    "offline",
    "arch",
];
const CPU_KEYS: &[&str] = &[
    "cpu", "core", "cluster", "llc", "package", "node", "capacity",
];

/// Read a standalone topology file.
pub fn import(path: &Path) -> InputResult<Machine> {
    let origin = path.display().to_string();
    let text = crate::input::limits::read_text(path)
        .map_err(|e| InputError::new(origin.clone(), format!("topology file: {e}")))?;
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        // An integer beyond TOML's range: named by its key, not only its place.
        let oversized = e
            .span()
            .and_then(|s| crate::input::bigint::oversized_integer(&text, s));
        if let Some(o) = oversized {
            return InputError::with_key(origin.clone(), o.path.clone(), o.got());
        }
        // One line: position and the parser's message (its Display draws a snippet).
        let at = e.span().map_or(String::new(), |span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |nl| nl + 1) + 1;
            format!(" at line {line}, column {col}")
        });
        let msg = e.message().trim().replace('\n', " ");
        InputError::new(origin.clone(), format!("malformed TOML{at}: {msg}"))
    })?;
    let default_name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| origin.clone());
    let nested =
        |t: &Table, key: &str| -> Option<Table> { t.get(key).and_then(Value::as_table).cloned() };
    if let Some(topology) = nested(&table, "machine").and_then(|m| nested(&m, "topology")) {
        return from_table(&topology, &origin, "machine.topology", &default_name);
    }
    if let Some(topology) = nested(&table, "topology") {
        return from_table(&topology, &origin, "topology", &default_name);
    }
    from_table(&table, &origin, "", &default_name)
}

/// Build a machine from a topology table (e.g. a scenario's `[machine.topology]`).
/// `origin` names the file in errors, `prefix` is the table's dotted path (`""` for the top
/// level), `default_name` the machine's name when the table has no `name`.
pub fn from_table(
    table: &Table,
    origin: &str,
    prefix: &str,
    default_name: &str,
) -> InputResult<Machine> {
    let ctx = Ctx { origin, prefix };
    let explicit = table.contains_key("cpus");
    let accepted = if explicit {
        EXPLICIT_KEYS
    } else {
        REGULAR_KEYS
    };
    check_keys(&ctx, table, explicit, accepted)?;
    let name = ctx
        .string(table, "name")?
        .unwrap_or(default_name.to_string());
    let description = ctx
        .string(table, "description")?
        .unwrap_or_else(|| format!("topology file {origin}"));
    let (cpus, nr_nodes) = if explicit {
        explicit_cpus(&ctx, table)?
    } else {
        regular_cpus(&ctx, table)?
    };
    let distances = match table.get("distances") {
        Some(v) => ctx.distances(v, nr_nodes)?,
        None => default_distances(nr_nodes),
    };
    let mut machine = Machine::new(name, description, cpus, distances).map_err(|e| {
        let key = topology_error_key(&e, explicit);
        ctx.err(key, format!("impossible topology: {e}"))
    })?;
    if let Some(arch) = ctx.string(table, "arch")? {
        machine.arch = super::Arch::from_name(&arch).ok_or_else(|| {
            let names: Vec<&str> = super::Arch::ALL.iter().map(|(_, n)| *n).collect();
            ctx.err(
                "arch",
                format!(
                    "unknown architecture '{arch}' (accepted: {})",
                    names.join(", ")
                ),
            )
        })?;
    }
    if let Some(list) = ctx.string(table, "offline")? {
        machine
            .set_offline(&list)
            .map_err(|e| ctx.err("offline", e.to_string()))?;
    }
    Ok(machine)
}

/// Every key of a topology table is one of its form's (`accepted`), the first unknown one an
/// error.
fn check_keys(ctx: &Ctx, table: &Table, explicit: bool, accepted: &[&str]) -> InputResult<()> {
    for key in table.keys() {
        if !accepted.contains(&key.as_str()) {
            let msg = if explicit && REGULAR_KEYS.contains(&key.as_str()) {
                format!(
                    "cannot be combined with `cpus` (the explicit form accepts: {})",
                    EXPLICIT_KEYS.join(", ")
                )
            } else {
                format!("unknown key (accepted: {})", accepted.join(", "))
            };
            return Err(ctx.err(key, msg));
        }
    }
    Ok(())
}

/// The distances of `nr_nodes` nodes without a `distances` key: local, else remote.
fn default_distances(nr_nodes: usize) -> Vec<Vec<u32>> {
    (0..nr_nodes)
        .map(|i| {
            (0..nr_nodes)
                .map(|j| {
                    if i == j {
                        LOCAL_DISTANCE
                    } else {
                        REMOTE_DISTANCE
                    }
                })
                .collect()
        })
        .collect()
}

/// The key an impossible topology's error names: `distances`, or the key of the CPUs.
fn topology_error_key(e: &super::TopologyError, explicit: bool) -> &'static str {
    match e {
        super::TopologyError::DistanceNotSquare { .. }
        | super::TopologyError::DistanceNotLocal(..)
        | super::TopologyError::DistanceTooSmall(..) => "distances",
        super::TopologyError::BadCapacity { .. } => {
            if explicit {
                "cpus"
            } else {
                "capacities"
            }
        }
        _ => {
            if explicit {
                "cpus"
            } else {
                "cores_per_package"
            }
        }
    }
}

struct Ctx<'a> {
    origin: &'a str,
    prefix: &'a str,
}

impl Ctx<'_> {
    fn key(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    fn err(&self, key: &str, msg: impl Into<String>) -> InputError {
        InputError::with_key(self.origin, self.key(key), msg)
    }

    fn string(&self, t: &Table, key: &str) -> InputResult<Option<String>> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(
                key,
                format!("expected a string, found {}", other.type_str()),
            )),
        }
    }

    /// An integer in `min..=max` under `key` (`shown` is the key as written in errors).
    fn int_at(&self, v: &Value, shown: &str, min: i64, max: i64) -> InputResult<usize> {
        match v {
            Value::Integer(i) if (min..=max).contains(i) => Ok(*i as usize),
            Value::Integer(i) => Err(self.err(
                shown,
                format!("{i} is out of range (accepted: {min}..={max})"),
            )),
            other => Err(self.err(
                shown,
                format!(
                    "expected an integer in {min}..={max}, found {}",
                    other.type_str()
                ),
            )),
        }
    }

    fn int(&self, t: &Table, key: &str, default: Option<usize>, max: i64) -> InputResult<usize> {
        match t.get(key) {
            Some(v) => self.int_at(v, key, 1, max),
            None => default.ok_or_else(|| {
                self.err(
                    key,
                    format!("missing (required in the regular form; accepted: 1..={max})"),
                )
            }),
        }
    }

    fn distances(&self, v: &Value, nodes: usize) -> InputResult<Vec<Vec<u32>>> {
        let rows = v.as_array().ok_or_else(|| {
            self.err(
                "distances",
                "expected an array of arrays, e.g. [[10, 21], [21, 10]]",
            )
        })?;
        if rows.len() != nodes {
            return Err(self.err(
                "distances",
                format!("has {} rows but the machine has {nodes} nodes", rows.len()),
            ));
        }
        rows.iter()
            .enumerate()
            .map(|(i, row)| {
                let shown = format!("distances[{i}]");
                let row = row.as_array().ok_or_else(|| {
                    self.err(&shown, "expected an array of distances, e.g. [10, 21]")
                })?;
                row.iter()
                    .enumerate()
                    .map(|(j, d)| {
                        self.int_at(d, &format!("distances[{i}][{j}]"), 1, 255)
                            .map(|d| d as u32)
                    })
                    .collect()
            })
            .collect()
    }
}

/// The regular form: CPUs generated from counts.
fn regular_cpus(ctx: &Ctx, t: &Table) -> InputResult<(Vec<CpuTopology>, usize)> {
    let max = NR_CPUS_MAX as i64;
    let packages = ctx.int(t, "packages", Some(1), max)?;
    let cores = ctx.int(t, "cores_per_package", None, max)?;
    let threads = ctx.int(t, "threads_per_core", Some(1), 8)?;
    let nodes = ctx.int(t, "nodes", Some(packages), max)?;
    let nr = packages * cores * threads;
    if nr > NR_CPUS_MAX {
        return Err(ctx.err(
            "cores_per_package",
            format!(
                "{packages} packages x {cores} cores x {threads} threads = {nr} CPUs, more than \
the simulator's limit of {NR_CPUS_MAX}"
            ),
        ));
    }
    let (nodes_per_package, packages_per_node) = node_layout(ctx, packages, nodes, cores)?;
    let cores_per_node = cores / nodes_per_package;
    let per_llc = ctx.int(t, "cores_per_llc", Some(cores_per_node), max)?;
    if cores_per_node % per_llc != 0 {
        return Err(ctx.err(
            "cores_per_llc",
            format!(
                "{per_llc} does not divide the {cores_per_node} cores of a package's node (an \
LLC never crosses a node or package)"
            ),
        ));
    }
    let per_cluster = ctx.int(t, "cores_per_cluster", Some(1), max)?;
    if per_llc % per_cluster != 0 {
        return Err(ctx.err(
            "cores_per_cluster",
            format!("{per_cluster} does not divide cores_per_llc = {per_llc}"),
        ));
    }
    let core_major = match ctx.string(t, "numbering")?.as_deref() {
        None | Some("socket-major") => false,
        Some("core-major") => true,
        Some(other) => {
            return Err(ctx.err(
                "numbering",
                format!("'{other}' is not a numbering (accepted: socket-major, core-major)"),
            ));
        }
    };
    let shape = RegularShape {
        packages,
        cores,
        threads,
        nodes_per_package,
        packages_per_node,
        cores_per_node,
        per_llc,
        per_cluster,
        core_major,
    };
    let mut cpus = regular_layout(&shape);
    if let Some(v) = t.get("capacities") {
        apply_capacities(ctx, v, &mut cpus)?;
    }
    Ok((cpus, nodes))
}

/// The node layout of the regular form: (nodes per package (SNC), packages per node).
fn node_layout(
    ctx: &Ctx,
    packages: usize,
    nodes: usize,
    cores: usize,
) -> InputResult<(usize, usize)> {
    let (nodes_per_package, packages_per_node) = if nodes.is_multiple_of(packages) {
        (nodes / packages, 1)
    } else if packages.is_multiple_of(nodes) {
        (1, packages / nodes)
    } else {
        return Err(ctx.err(
            "nodes",
            format!(
                "{nodes} nodes cannot be laid over {packages} packages (accepted: a multiple or \
a divisor of packages)"
            ),
        ));
    };
    if !cores.is_multiple_of(nodes_per_package) {
        return Err(ctx.err(
            "nodes",
            format!("{nodes_per_package} nodes per package do not split {cores} cores evenly"),
        ));
    }
    Ok((nodes_per_package, packages_per_node))
}

/// The counts of the regular form, checked.
struct RegularShape {
    packages: usize,
    cores: usize,
    threads: usize,
    nodes_per_package: usize,
    packages_per_node: usize,
    cores_per_node: usize,
    per_llc: usize,
    per_cluster: usize,
    core_major: bool,
}

/// The CPUs of the regular form, numbered socket-major or core-major.
fn regular_layout(shape: &RegularShape) -> Vec<CpuTopology> {
    let RegularShape {
        packages,
        cores,
        threads,
        nodes_per_package,
        packages_per_node,
        cores_per_node,
        per_llc,
        per_cluster,
        core_major,
    } = *shape;
    let nr = packages * cores * threads;
    let total_cores = packages * cores;
    let mut cpus: Vec<Option<CpuTopology>> = vec![None; nr];
    for p in 0..packages {
        for c in 0..cores {
            let g = p * cores + c;
            for th in 0..threads {
                let cpu = if core_major {
                    g * threads + th
                } else {
                    th * total_cores + g
                };
                cpus[cpu] = Some(CpuTopology {
                    cpu,
                    core: g,
                    cluster: g / per_cluster,
                    llc: g / per_llc,
                    package: p,
                    node: p / packages_per_node * nodes_per_package + c / cores_per_node,
                    capacity: SCHED_CAPACITY_SCALE,
                });
            }
        }
    }
    cpus.into_iter()
        .map(|c| c.expect("all CPUs generated"))
        .collect()
}

/// `capacities = { "cpulist" = capacity, .. }`: each CPU's capacity, given at most once.
fn apply_capacities(ctx: &Ctx, v: &Value, cpus: &mut [CpuTopology]) -> InputResult<()> {
    let nr = cpus.len();
    let table = v.as_table().ok_or_else(|| {
        ctx.err(
            "capacities",
            "expected a table of cpulist = capacity, e.g. { \"0-3\" = 1024, \"4-7\" = 512 }",
        )
    })?;
    let mut seen = CpuMask::new();
    for (list, cap) in table {
        let shown = format!("capacities.\"{list}\"");
        let mask = CpuMask::parse_list_for_machine(list, nr)
            .map_err(|e| ctx.err(&shown, e.to_string()))?;
        if let Some(cpu) = mask.iter().find(|&c| c >= nr) {
            return Err(ctx.err(
                &shown,
                format!(
                    "CPU {cpu} does not exist (the machine has CPUs 0-{})",
                    nr - 1
                ),
            ));
        }
        if mask.intersects(&seen) {
            return Err(ctx.err(
                &shown,
                format!("CPUs {} are given a capacity twice", mask.and(&seen)),
            ));
        }
        seen = seen.or(&mask);
        let cap = ctx.int_at(cap, &shown, 1, i64::from(SCHED_CAPACITY_SCALE))? as u32;
        for cpu in mask.iter() {
            cpus[cpu].capacity = cap;
        }
    }
    Ok(())
}

/// The explicit form: one table per CPU.
fn explicit_cpus(ctx: &Ctx, t: &Table) -> InputResult<(Vec<CpuTopology>, usize)> {
    let list = t
        .get("cpus")
        .and_then(Value::as_array)
        .ok_or_else(|| ctx.err("cpus", "expected an array of tables, e.g. [{ core = 0 }]"))?;
    if list.is_empty() || list.len() > NR_CPUS_MAX {
        return Err(ctx.err(
            "cpus",
            format!("has {} entries (accepted: 1..={NR_CPUS_MAX})", list.len()),
        ));
    }
    let max = NR_CPUS_MAX as i64;
    let mut cpus = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let shown = format!("cpus[{i}]");
        let e = entry
            .as_table()
            .ok_or_else(|| ctx.err(&shown, "expected a table, e.g. { core = 0, llc = 0 }"))?;
        for key in e.keys() {
            if !CPU_KEYS.contains(&key.as_str()) {
                return Err(ctx.err(
                    &format!("{shown}.{key}"),
                    format!("unknown key (accepted: {})", CPU_KEYS.join(", ")),
                ));
            }
        }
        let field = |key: &str, default: Option<usize>, min: i64, hi: i64| -> InputResult<usize> {
            match e.get(key) {
                Some(v) => ctx.int_at(v, &format!("{shown}.{key}"), min, hi),
                None => default.ok_or_else(|| ctx.err(&format!("{shown}.{key}"), "missing")),
            }
        };
        if e.contains_key("cpu") {
            let cpu = field("cpu", None, 0, max)?;
            if cpu != i {
                return Err(ctx.err(
                    &format!("{shown}.cpu"),
                    format!("says CPU {cpu}, but entries must be CPUs 0..N in order"),
                ));
            }
        }
        let core = field("core", None, 0, max)?;
        let package = field("package", Some(0), 0, max)?;
        cpus.push(CpuTopology {
            cpu: i,
            core,
            cluster: field("cluster", Some(core), 0, max)?,
            llc: field("llc", Some(package), 0, max)?,
            package,
            node: field("node", Some(0), 0, max)?,
            capacity: field(
                "capacity",
                Some(SCHED_CAPACITY_SCALE as usize),
                1,
                i64::from(SCHED_CAPACITY_SCALE),
            )? as u32,
        });
    }
    let nodes = cpus.iter().map(|c| c.node).max().unwrap_or(0) + 1;
    Ok((cpus, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> InputResult<Machine> {
        let t: Table = text.parse().unwrap();
        from_table(&t, "t.toml", "machine.topology", "t")
    }

    #[test]
    fn socket_major_puts_second_threads_after_all_first_threads() {
        let m = parse(
            "packages = 2\ncores_per_package = 4\nthreads_per_core = 2\ndistances = [[10, 21], [21, 10]]",
        )
        .unwrap();
        assert_eq!(m.nr_cpus(), 16);
        assert_eq!(m.smt_mask(0).to_string(), "0,8");
        assert_eq!(m.node_mask(1).to_string(), "4-7,12-15");
        assert_eq!(m.llc_mask(3).to_string(), "0-3,8-11");
        assert_eq!(m.distance(0, 1), 21);
    }

    #[test]
    fn core_major_snc_clusters_and_capacities() {
        let m = parse(
            "packages = 1\ncores_per_package = 8\nthreads_per_core = 2\nnodes = 2\n\
             cores_per_cluster = 2\nnumbering = \"core-major\"\n\
             capacities = { \"0-7\" = 1024, \"8-15\" = 512 }\noffline = \"15\"",
        )
        .unwrap();
        assert_eq!(m.smt_mask(0).to_string(), "0-1");
        assert_eq!(m.cluster_mask(0).to_string(), "0-3");
        assert_eq!(m.llc_mask(0).to_string(), "0-7");
        assert_eq!(m.node_mask(1).to_string(), "8-15");
        assert_eq!(m.distance(0, 1), REMOTE_DISTANCE);
        assert_eq!(m.cpus[9].capacity, 512);
        assert_eq!(m.online.to_string(), "0-14");
    }

    #[test]
    fn explicit_form_describes_hybrid_machines() {
        // hybrid-10 style: 3 SMT2 cores then 4 single-thread cores.
        let mut cpus = String::new();
        for i in 0..10 {
            let (core, cap) = if i < 6 { (i / 2, 1024) } else { (i - 3, 512) };
            cpus.push_str(&format!("{{ core = {core}, capacity = {cap} }},"));
        }
        let m = parse(&format!("cpus = [{cpus}]")).unwrap();
        assert_eq!(m.smt_mask(4).to_string(), "4-5");
        assert_eq!(m.smt_mask(6).to_string(), "6");
        assert!(m.has_asym_capacity());
        assert_eq!(m.llc_mask(9).to_string(), "0-9");
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse("cores_per_package = 4\nthread_per_core = 2").unwrap_err();
        assert_eq!(e.origin, "t.toml");
        assert_eq!(e.key.as_deref(), Some("machine.topology.thread_per_core"));
        assert!(e.message.contains("threads_per_core"));
        let e = parse("packages = 2").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.cores_per_package"));
        let e = parse("cores_per_package = 6\ncores_per_llc = 4").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.cores_per_llc"));
        let e = parse("cores_per_package = 2\nnodes = 1\npackages = 2\ndistances = [[10, 20]]")
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.distances"));
        let e = parse("packages = 2\ncores_per_package = 2\ndistances = [[10, 5], [5, 10]]")
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.distances"));
        let e = parse("cores_per_package = 2\nnumbering = \"weird\"").unwrap_err();
        assert!(e.message.contains("core-major"));
        let e = parse("cpus = [{ core = 0 }]\npackages = 1").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.packages"));
        let e = parse("cpus = [{ core = 0, cpu = 1 }]").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.cpus[0].cpu"));
        let e = parse("cores_per_package = 2\ncapacities = { \"0-5\" = 100 }").unwrap_err();
        assert!(e.message.contains("CPU 2 does not exist"));
        let e = parse("cores_per_package = 2\narch = \"sparc\"").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("machine.topology.arch"));
        assert!(e.message.contains("x86, arm64, powerpc"), "{}", e.message);
        let m = parse("cores_per_package = 2\narch = \"powerpc\"").unwrap();
        assert_eq!(m.arch, crate::topology::Arch::Powerpc);
        assert_eq!(
            parse("cores_per_package = 2").unwrap().arch,
            crate::topology::Arch::Arm64
        );
    }

    proptest::proptest! {
        /// Whatever the counts and numbering, the generated machine has the requested SMT
        /// width, LLC and node sizes everywhere.
        #[test]
        fn regular_form_has_requested_shape(
            packages in 1usize..4,
            llcs_per_node in 1usize..3,
            cores_per_llc in 1usize..5,
            nodes_per_package in 1usize..3,
            threads in 1usize..4,
            core_major in proptest::bool::ANY,
        ) {
            let cores = nodes_per_package * llcs_per_node * cores_per_llc;
            let text = format!(
                "packages = {packages}\ncores_per_package = {cores}\nthreads_per_core = {threads}\n\
                 nodes = {}\ncores_per_llc = {cores_per_llc}\nnumbering = \"{}\"",
                packages * nodes_per_package,
                if core_major { "core-major" } else { "socket-major" },
            );
            let m = parse(&text).unwrap();
            proptest::prop_assert_eq!(m.nr_cpus(), packages * cores * threads);
            for cpu in 0..m.nr_cpus() {
                proptest::prop_assert_eq!(m.smt_mask(cpu).weight(), threads);
                proptest::prop_assert_eq!(m.llc_mask(cpu).weight(), cores_per_llc * threads);
                proptest::prop_assert!(m.llc_mask(cpu).is_subset_of(m.node_mask(m.cpus[cpu].node)));
                proptest::prop_assert!(m.node_mask(m.cpus[cpu].node).is_subset_of(m.package_mask(cpu)));
            }
        }
    }
}
