//! Placement controls: CPU affinity and NUMA memory policy for a whole benchmark or for each
//! of its task groups — the `taskset` and `numactl` command-line prefixes, parsed like the
//! real tools (util-linux taskset, numactl 2.0), and the `[workload]` placement keys.
//!
//! What they set on every task of the benchmark, as a process started under `taskset` or
//! `numactl` passes them to all its children:
//! - the CPUs it may use: `taskset MASK` / `taskset -c LIST`, `numactl --physcpubind` /
//!   `--cpunodebind`, `[workload] cpus` / `cpunodebind`; several restrictions intersect
//!   (libnuma checks `--cpunodebind` against the affinity it inherited, and a command under
//!   `taskset` cannot leave its mask);
//! - the memory policy: `--membind` (MPOL_BIND), `--preferred` (MPOL_PREFERRED),
//!   `--interleave` (MPOL_INTERLEAVE), `--localalloc` (MPOL_LOCAL); the last one given wins,
//!   as each numactl option calls `set_mempolicy()` in turn;
//! - `[workload] mem_intensity_pct`: the memory-stall share of the tasks' run time
//!   ([`crate::cost::mem_time_scale_ppm`]), a property of the workload, not of numactl.
//!
//! Per-group keys (`group_cpus`, `group_nodes`) bind each task group — a hackbench group, a
//! schbench message thread with its workers, a netperf/tbench client-server pair, a
//! stress-ng worker, an rt-app task, a `spin` hog, a `pingpong` pair — to entry `i mod len`
//! of the list. `group_nodes` binds the group's CPUs and memory to the nodes (like
//! `numactl -N n -m n` per group); `group_cpus` binds CPUs only.
//!
//! Approximation (with its reason): the CPU restriction is applied as the tasks' cpuset
//! (`TaskSpec::cpuset`), so masks the benchmark sets itself (schbench `-M`/`-W`, rt-app
//! `cpus`) are intersected with it rather than replacing it as a real `sched_setaffinity()`
//! under `taskset` would. That keeps "run this benchmark on these CPUs" true for every
//! thread, which is what users of the prefixes mean; an empty intersection is an error.

use super::cmdline::{self, LongOpt, OptStyle, getopt_long, lo};
use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::engine::WorkloadPlan;
use crate::error::{InputError, InputResult};
use crate::task::MemPolicy;
use crate::topology::Machine;

/// The `[workload]` placement keys (accepted for every workload kind).
pub const PLACEMENT_KEYS: &[&str] = &[
    "cpus",
    "cpunodebind",
    "membind",
    "preferred",
    "interleave",
    "mem_intensity_pct",
    "group_cpus",
    "group_nodes",
];

/// Where a placement request came from, for error messages.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Taskset,
    Numactl,
    Key { origin: String, key: &'static str },
}

impl Source {
    /// An error worded for this source: the tool's own wording for a prefix, the key for a
    /// scenario key.
    fn err(&self, tool_msg: String, key_msg: String) -> InputError {
        match self {
            // The tool's own text starts with its name, which the error's origin already
            // says: once (`taskset: failed to ...`, not `taskset: taskset: failed to ...`).
            Source::Taskset => InputError::new("taskset", without_name("taskset", tool_msg)),
            Source::Numactl => InputError::new("numactl", without_name("numactl", tool_msg)),
            Source::Key { origin, key } => {
                InputError::with_key(origin.clone(), format!("workload.{key}"), key_msg)
            }
        }
    }
}

/// One CPU restriction, before it is checked against a machine.
#[derive(Debug, Clone, PartialEq)]
enum CpuLimit {
    /// A CPU mask already (taskset).
    Mask(CpuMask),
    /// A CPU list (`numactl --physcpubind`, `[workload] cpus`).
    List(String),
    /// A node list whose CPUs are allowed (`--cpunodebind`, `[workload] cpunodebind`).
    Nodes(String),
}

/// A memory policy request, before its nodes are checked.
#[derive(Debug, Clone, PartialEq)]
enum MemArg {
    Local,
    Bind(String),
    Preferred(String),
    Interleave(String),
}

/// Placement requests as given (prefixes and keys), machine-independent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlacementArgs {
    cpu_limits: Vec<(Source, CpuLimit)>,
    mem: Option<(Source, MemArg)>,
    mem_intensity_permille: u16,
    group_cpus: Vec<String>,
    group_nodes: Vec<String>,
    origin: String,
    /// The prefix words as typed (`taskset -c 0-3 numactl -m 0`).
    prefix: Vec<String>,
}

/// Placement resolved against a machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResolvedPlacement {
    /// CPUs every task may use (`None` = all).
    pub cpus: Option<CpuMask>,
    /// Memory policy of every task (`None` = the default, MPOL_LOCAL).
    pub mempolicy: Option<MemPolicy>,
    pub mem_intensity_permille: u16,
    /// Per-group CPU restrictions (`group_cpus`, and the CPUs of `group_nodes`), by entry.
    pub group_cpus: Vec<CpuMask>,
    /// Per-group node sets (`group_nodes`), by entry, as node bitmasks.
    pub group_nodes: Vec<u64>,
    /// The command-line prefix words.
    pub prefix: String,
}

// ----- taskset --------------------------------------------------------------------------

const TASKSET_TRY: &str = "Try 'taskset --help' for more information.";

const TASKSET_LONGOPTS: &[LongOpt] = &[
    lo("all-tasks", false, 'a'),
    lo("pid", false, 'p'),
    lo("cpu-list", false, 'c'),
    lo("help", false, 'h'),
    lo("version", false, 'V'),
];

/// util-linux `cpumask_parse()`: hex digits, least significant last, an optional `0x`,
/// commas between 32-bit words ignored.
pub fn parse_hex_mask(text: &str) -> Option<CpuMask> {
    let body = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if body.is_empty() {
        return None;
    }
    let mut mask = CpuMask::new();
    let mut bit = 0usize;
    for c in body.chars().rev() {
        if c == ',' {
            continue;
        }
        let v = c.to_digit(16)?;
        for b in 0..4 {
            if v & (1 << b) != 0 {
                if bit + b >= NR_CPUS_MAX {
                    return None;
                }
                mask.set(bit + b);
            }
        }
        bit += 4;
    }
    Some(mask)
}

/// `tool_msg` without its leading `tool: ` (the error's origin names the tool).
fn without_name(tool: &str, tool_msg: String) -> String {
    match tool_msg.strip_prefix(&format!("{tool}: ")) {
        Some(rest) => rest.to_string(),
        None => tool_msg,
    }
}

/// `taskset [-a] [-c] MASK|LIST command...`: returns the words after the prefix. Error
/// messages are taskset's own output (its name is the error's origin).
fn parse_taskset<'w>(args: &'w [String], out: &mut PlacementArgs) -> InputResult<&'w [String]> {
    let err = |m: String| InputError::new("taskset", without_name("taskset", m));
    let errx = |m: String| InputError::new("taskset", m);
    let parsed = getopt_long("taskset", args, "+acphV", TASKSET_LONGOPTS, OptStyle::Glibc)
        .map_err(|m| err(format!("{m}\n{TASKSET_TRY}")))?;
    let mut list = false;
    for o in &parsed.opts {
        match o.id {
            'a' => {} // every thread: what the model does anyway
            'c' => list = true,
            'p' => {
                return Err(errx(
                    "-p (change an existing pid) is not simulated: give the command to run".into(),
                ));
            }
            _ => {
                return Err(errx(format!(
                    "{} is not simulated\n{TASKSET_TRY}",
                    o.spelled
                )));
            }
        }
    }
    let [mask_text, command @ ..] = parsed.positional.as_slice() else {
        return Err(errx(format!("bad usage\n{TASKSET_TRY}")));
    };
    if command.is_empty() {
        return Err(errx(format!("bad usage\n{TASKSET_TRY}")));
    }
    let mask = if list {
        CpuMask::parse_util_linux(mask_text)
            .map_err(|_| errx(format!("failed to parse CPU list: {mask_text}")))?
    } else {
        parse_hex_mask(mask_text)
            .ok_or_else(|| errx(format!("failed to parse CPU mask: {mask_text}")))?
    };
    out.cpu_limits.push((Source::Taskset, CpuLimit::Mask(mask)));
    let used = args.len() - command.len();
    out.prefix.push("taskset".into());
    out.prefix.extend(args[..used].iter().cloned());
    Ok(&args[used..])
}

// ----- numactl --------------------------------------------------------------------------

/// The policy part of numactl's usage text (what it prints after a bad option).
const NUMACTL_USAGE: &str = "usage: numactl [--all | -a] [--interleave= | -i <nodes>] [--preferred= | -p <node>]\n\
    \x20              [--physcpubind= | -C <cpus>] [--cpunodebind= | -N <nodes>]\n\
    \x20              [--membind= | -m <nodes>] [--localalloc | -l] command args ...";

const NUMACTL_LONGOPTS: &[LongOpt] = &[
    lo("all", false, 'a'),
    lo("interleave", true, 'i'),
    lo("weighted-interleave", true, 'w'),
    lo("preferred", true, 'p'),
    lo("preferred-many", true, 'P'),
    lo("cpubind", true, 'c'),
    lo("cpunodebind", true, 'N'),
    lo("physcpubind", true, 'C'),
    lo("membind", true, 'm'),
    lo("show", false, 's'),
    lo("localalloc", false, 'l'),
    lo("balancing", false, 'b'),
    lo("hardware", false, 'H'),
    lo("shm", true, 'S'),
    lo("file", true, 'f'),
    lo("offset", true, 'o'),
    lo("length", true, 'L'),
    lo("strict", false, 't'),
    lo("shmmode", true, 'M'),
    lo("dump", false, 'd'),
    lo("dump-nodes", false, 'D'),
    lo("shmid", true, 'I'),
    lo("huge", false, 'u'),
    lo("touch", false, 'T'),
    lo("version", false, 'v'),
];

/// `numactl [options] command...`: returns the words after the prefix.
fn parse_numactl<'w>(args: &'w [String], out: &mut PlacementArgs) -> InputResult<&'w [String]> {
    let err = |m: String| InputError::new("numactl", m);
    let optstring = "+abc:C:dDf:Hi:I:lL:m:M:N:o:p:P:sS:tTuVw:";
    let parsed = getopt_long(
        "numactl",
        args,
        optstring,
        NUMACTL_LONGOPTS,
        OptStyle::Glibc,
    )
    .map_err(|m| err(format!("{m}\n{NUMACTL_USAGE}")))?;
    for o in &parsed.opts {
        let arg = || o.arg.clone().unwrap_or_default();
        match o.id {
            'a' => {} // cpuset-relative checks: every node is in the (single) cpuset here
            'N' | 'c' => out
                .cpu_limits
                .push((Source::Numactl, CpuLimit::Nodes(arg()))),
            'C' => out
                .cpu_limits
                .push((Source::Numactl, CpuLimit::List(arg()))),
            'm' => out.mem = Some((Source::Numactl, MemArg::Bind(arg()))),
            'p' => out.mem = Some((Source::Numactl, MemArg::Preferred(arg()))),
            'i' => out.mem = Some((Source::Numactl, MemArg::Interleave(arg()))),
            'l' => out.mem = Some((Source::Numactl, MemArg::Local)),
            _ => {
                return Err(err(format!(
                    "{} is not simulated by schedlab (accepted: --cpunodebind/-N, \
                     --physcpubind/-C, --membind/-m, --preferred/-p, --interleave/-i, \
                     --localalloc/-l, --all/-a)",
                    o.spelled
                )));
            }
        }
    }
    if parsed.positional.is_empty() {
        return Err(err(NUMACTL_USAGE.to_string()));
    }
    let used = args.len() - parsed.positional.len();
    out.prefix.push("numactl".into());
    out.prefix.extend(args[..used].iter().cloned());
    Ok(&args[used..])
}

/// Split `taskset` / `numactl` prefixes (in any number and order) off a command line;
/// returns the placement they ask for and the benchmark's own words.
pub fn parse_prefixes(words: &[String]) -> InputResult<(PlacementArgs, &[String])> {
    let mut args = PlacementArgs::default();
    let mut rest = words;
    loop {
        let tail = rest.get(1..).unwrap_or_default();
        rest = match rest.first().map(|w| cmdline::basename(w)) {
            Some("taskset") => parse_taskset(tail, &mut args)?,
            Some("numactl") => parse_numactl(tail, &mut args)?,
            _ => return Ok((args, rest)),
        };
    }
}

// ----- node and CPU lists --------------------------------------------------------------

/// Node ids in a node bitmask, as a list string ("0-1").
pub fn nodes_to_string(nodes: u64) -> String {
    (0..64)
        .filter(|n| nodes & (1 << n) != 0)
        .collect::<CpuMask>()
        .to_string()
}

/// libnuma's `numa_parse_nodestring()`: `all`, or comma lists of N and A-B, optionally
/// inverted with `!` and cpuset-relative with `+` (every node is in the cpuset here).
/// Errors are libnuma's and numactl's wording.
fn parse_nodes(text: &str, nr_nodes: usize) -> Result<u64, String> {
    let invalid = format!("<{text}> is invalid");
    let all = if nr_nodes >= 64 {
        u64::MAX
    } else {
        (1u64 << nr_nodes) - 1
    };
    let (invert, body) = match text.strip_prefix('!') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let body = body.strip_prefix('+').unwrap_or(body);
    let mask = if body == "all" {
        all
    } else {
        let list = CpuMask::parse_util_linux(body).map_err(|_| {
            format!("libnuma: Warning: unparseable node description `{text}'\n{invalid}")
        })?;
        if body.trim().is_empty() {
            return Err(format!(
                "libnuma: Warning: unparseable node description `{text}'\n{invalid}"
            ));
        }
        if let Some(bad) = list.iter().find(|&n| n >= nr_nodes.min(64)) {
            // libnuma's two lines, then which nodes exist (libnuma leaves that to the user).
            return Err(format!(
                "libnuma: Warning: node argument {bad} is out of range\n{invalid}; this \
                 machine has node{} 0{}",
                if nr_nodes > 1 { "s" } else { "" },
                if nr_nodes > 1 {
                    format!("-{}", nr_nodes - 1)
                } else {
                    String::new()
                }
            ));
        }
        list.iter().fold(0u64, |m, n| m | 1 << n)
    };
    let mask = if invert { all & !mask } else { mask };
    if mask == 0 {
        return Err(invalid);
    }
    Ok(mask)
}

/// libnuma's `numa_parse_cpustring()`: like node lists, over CPU numbers.
fn parse_cpus(text: &str, machine: &Machine) -> Result<CpuMask, String> {
    let invalid = format!("<{text}> is invalid");
    let all = CpuMask::first_n(machine.nr_cpus());
    let (invert, body) = match text.strip_prefix('!') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let body = body.strip_prefix('+').unwrap_or(body);
    let mask = if body == "all" {
        all
    } else {
        let list = CpuMask::parse_util_linux(body)
            .ok()
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                format!("libnuma: Warning: unparseable cpu description `{text}'\n{invalid}")
            })?;
        if let Some(bad) = list.iter().find(|&c| c >= machine.nr_cpus()) {
            return Err(format!(
                "libnuma: Warning: cpu argument {bad} is out of range\n{invalid}; this \
                 machine has CPUs 0-{}",
                machine.nr_cpus() - 1
            ));
        }
        list
    };
    Ok(if invert { all.andnot(&mask) } else { mask })
}

/// The CPUs of the nodes in `nodes`.
fn cpus_of_nodes(nodes: u64, machine: &Machine) -> CpuMask {
    (0..machine.nr_nodes().min(64))
        .filter(|n| nodes & (1 << n) != 0)
        .fold(CpuMask::new(), |m, n| m.or(machine.node_mask(n)))
}

const NODE_LIST_HELP: &str =
    "accepted: node numbers, A-B ranges and comma lists of them, 'all', '!' to invert";

impl PlacementArgs {
    /// Whether nothing was asked for.
    pub fn is_empty(&self) -> bool {
        self.cpu_limits.is_empty()
            && self.mem.is_none()
            && self.mem_intensity_permille == 0
            && self.group_cpus.is_empty()
            && self.group_nodes.is_empty()
    }

    /// Add a command line's prefixes (they follow the `[workload]` keys).
    pub fn merge_prefix(&mut self, other: PlacementArgs) {
        self.cpu_limits.extend(other.cpu_limits);
        if other.mem.is_some() {
            self.mem = other.mem;
        }
        self.prefix.extend(other.prefix);
    }

    fn node_list(&self, src: &Source, text: &str, machine: &Machine) -> InputResult<u64> {
        parse_nodes(text, machine.nr_nodes()).map_err(|m| {
            let nodes = format!("0-{}", machine.nr_nodes() - 1);
            src.err(
                format!("{m}\n{NUMACTL_USAGE}"),
                format!(
                    "'{text}' is not a node list of this machine (nodes {nodes}); {NODE_LIST_HELP}"
                ),
            )
        })
    }

    fn cpu_limit(&self, src: &Source, limit: &CpuLimit, machine: &Machine) -> InputResult<CpuMask> {
        match limit {
            CpuLimit::Mask(m) => Ok(*m),
            CpuLimit::Nodes(text) => {
                Ok(cpus_of_nodes(self.node_list(src, text, machine)?, machine))
            }
            CpuLimit::List(text) => parse_cpus(text, machine).map_err(|m| {
                src.err(
                    format!("{m}\n{NUMACTL_USAGE}"),
                    format!(
                        "'{text}' is not a CPU list of this machine (CPUs 0-{}); accepted: a \
                         kernel cpulist such as 0-7,16",
                        machine.nr_cpus() - 1
                    ),
                )
            }),
        }
    }

    /// The CPUs every task may use: the intersection of all restrictions with the online
    /// CPUs (error when nothing is left, as `sched_setaffinity()` fails then).
    fn resolve_cpus(&self, machine: &Machine) -> InputResult<Option<CpuMask>> {
        let mut cpus: Option<CpuMask> = None;
        for (src, limit) in &self.cpu_limits {
            let m = self.cpu_limit(src, limit, machine)?;
            let next = cpus.unwrap_or(machine.online).and(&m);
            if next.is_empty() {
                return Err(src.err(
                    match src {
                        Source::Taskset => {
                            "taskset: failed to set pid 0's affinity: Invalid argument"
                        }
                        _ => "sched_setaffinity: Invalid argument",
                    }
                    .to_string()
                        + &format!(
                            " (CPUs '{m}' leave no online CPU of '{}')",
                            cpus.unwrap_or(machine.online)
                        ),
                    format!(
                        "CPUs '{m}' leave no online CPU of '{}'",
                        cpus.unwrap_or(machine.online)
                    ),
                ));
            }
            cpus = Some(next);
        }
        Ok(cpus)
    }

    fn resolve_mem(&self, machine: &Machine) -> InputResult<Option<MemPolicy>> {
        let Some((src, mem)) = &self.mem else {
            return Ok(None);
        };
        Ok(Some(match mem {
            MemArg::Local => MemPolicy::Local,
            MemArg::Bind(t) => MemPolicy::Bind {
                nodes: self.node_list(src, t, machine)?,
            },
            MemArg::Interleave(t) => MemPolicy::Interleave {
                nodes: self.node_list(src, t, machine)?,
            },
            MemArg::Preferred(t) => {
                let nodes = self.node_list(src, t, machine)?;
                if nodes.count_ones() != 1 {
                    return Err(src.err(
                        format!("<{t}> is invalid: --preferred takes one node\n{NUMACTL_USAGE}"),
                        format!("'{t}': accepted: one node number"),
                    ));
                }
                MemPolicy::Preferred {
                    node: nodes.trailing_zeros(),
                }
            }
        }))
    }

    /// Check every request against `machine`.
    pub fn resolve(&self, machine: &Machine) -> InputResult<ResolvedPlacement> {
        let key = |key| Source::Key {
            origin: self.origin.clone(),
            key,
        };
        let group_cpus = self
            .group_cpus
            .iter()
            .map(|t| self.cpu_limit(&key("group_cpus"), &CpuLimit::List(t.clone()), machine))
            .collect::<InputResult<Vec<_>>>()?;
        let group_nodes = self
            .group_nodes
            .iter()
            .map(|t| self.node_list(&key("group_nodes"), t, machine))
            .collect::<InputResult<Vec<_>>>()?;
        Ok(ResolvedPlacement {
            cpus: self.resolve_cpus(machine)?,
            mempolicy: self.resolve_mem(machine)?,
            mem_intensity_permille: self.mem_intensity_permille,
            group_cpus,
            group_nodes,
            prefix: self.prefix.join(" "),
        })
    }
}

// ----- [workload] keys ------------------------------------------------------------------

/// A node list key: a string, or one node as an integer.
fn node_key(t: &toml::Table, origin: &str, key: &str) -> InputResult<Option<String>> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(toml::Value::Integer(n)) if *n >= 0 => Ok(Some(n.to_string())),
        Some(v) => Err(InputError::with_key(
            origin,
            format!("workload.{key}"),
            crate::input::keys::expected(
                &format!(
                    "{} (a string, or one node as an integer)",
                    NODE_LIST_HELP.trim_start_matches("accepted: ")
                ),
                crate::input::describe(v),
            ),
        )),
    }
}

/// A list-of-lists key (`group_cpus`, `group_nodes`).
fn list_key(t: &toml::Table, origin: &str, key: &str) -> InputResult<Vec<String>> {
    let bad = |v: &toml::Value| {
        InputError::with_key(
            origin,
            format!("workload.{key}"),
            crate::input::keys::expected(
                "a non-empty array of lists, e.g. [\"0-7\", \"8-15\"]",
                crate::input::describe(v),
            ),
        )
    };
    match t.get(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s.clone()),
                toml::Value::Integer(n) if *n >= 0 => Ok(n.to_string()),
                other => Err(bad(other)),
            })
            .collect(),
        Some(v) => Err(bad(v)),
    }
}

/// `mem_intensity_pct`: percent (0..=100, integer or float) → permille.
fn intensity_key(t: &toml::Table, origin: &str) -> InputResult<u16> {
    let pct = match t.get("mem_intensity_pct") {
        None => return Ok(0),
        Some(toml::Value::Integer(n)) => *n as f64,
        Some(toml::Value::Float(x)) => *x,
        Some(_) => f64::NAN,
    };
    if !(0.0..=100.0).contains(&pct) {
        return Err(InputError::with_key(
            origin,
            "workload.mem_intensity_pct",
            crate::input::keys::expected(
                "the memory-stall share of run time in percent, 0 to 100",
                crate::input::describe(&t["mem_intensity_pct"]),
            ),
        ));
    }
    Ok((pct * 10.0).round() as u16)
}

/// Take the placement keys out of a `[workload]` table: returns the remaining table (for the
/// benchmark's own parser) and the placement they ask for.
pub fn from_toml(table: &toml::Table, origin: &str) -> InputResult<(toml::Table, PlacementArgs)> {
    let mut args = PlacementArgs {
        origin: origin.to_string(),
        ..PlacementArgs::default()
    };
    let src = |key| Source::Key {
        origin: origin.to_string(),
        key,
    };
    if let Some(c) = table
        .get("cpus")
        .map(|v| crate::input::keys::from_value::<String>(v, "workload.cpus", origin))
        .transpose()?
    {
        args.cpu_limits.push((src("cpus"), CpuLimit::List(c)));
    }
    if let Some(n) = node_key(table, origin, "cpunodebind")? {
        args.cpu_limits
            .push((src("cpunodebind"), CpuLimit::Nodes(n)));
    }
    let mems: Vec<(&'static str, String)> = ["membind", "preferred", "interleave"]
        .into_iter()
        .filter_map(|k| {
            node_key(table, origin, k)
                .transpose()
                .map(|v| v.map(|v| (k, v)))
        })
        .collect::<InputResult<_>>()?;
    if mems.len() > 1 {
        return Err(InputError::with_key(
            origin,
            format!("workload.{}", mems[1].0),
            format!(
                "cannot be combined with workload.{}: a task has one memory policy",
                mems[0].0
            ),
        ));
    }
    args.mem = mems.into_iter().next().map(|(k, v)| {
        let arg = match k {
            "membind" => MemArg::Bind(v),
            "preferred" => MemArg::Preferred(v),
            _ => MemArg::Interleave(v),
        };
        (src(k), arg)
    });
    args.mem_intensity_permille = intensity_key(table, origin)?;
    args.group_cpus = list_key(table, origin, "group_cpus")?;
    args.group_nodes = list_key(table, origin, "group_nodes")?;
    let mut rest = table.clone();
    for k in PLACEMENT_KEYS {
        rest.remove(*k);
    }
    Ok((rest, args))
}

// ----- applying to a plan ---------------------------------------------------------------

impl ResolvedPlacement {
    /// Whether nothing is to change.
    pub fn is_default(&self) -> bool {
        *self == ResolvedPlacement::default()
    }

    /// CPU restriction and memory policy of a task in `group`.
    fn for_group(
        &self,
        group: Option<u32>,
        machine: &Machine,
    ) -> (Option<CpuMask>, Option<MemPolicy>) {
        let mut cpus = self.cpus;
        let mut mem = self.mempolicy;
        if let Some(g) = group.map(|g| g as usize) {
            if !self.group_cpus.is_empty() {
                let m = self.group_cpus[g % self.group_cpus.len()];
                cpus = Some(cpus.map_or(m, |c| c.and(&m)));
            }
            if !self.group_nodes.is_empty() {
                let nodes = self.group_nodes[g % self.group_nodes.len()];
                let m = cpus_of_nodes(nodes, machine);
                cpus = Some(cpus.map_or(m, |c| c.and(&m)));
                mem = Some(MemPolicy::Bind { nodes });
            }
        }
        (cpus, mem)
    }

    /// Set every task's cpuset, memory policy and memory intensity. Errors when a task's own
    /// CPUs (a benchmark option such as schbench `-M`) leave it no CPU of its placement.
    pub fn apply(
        &self,
        plan: &mut WorkloadPlan,
        machine: &Machine,
        origin: &str,
    ) -> InputResult<()> {
        if self.is_default() {
            return Ok(());
        }
        for i in 0..plan.tasks.len() {
            let group = plan.task_groups.get(i).copied().flatten();
            let (cpus, mem) = self.for_group(group, machine);
            let t = &mut plan.tasks[i];
            if let Some(limit) = cpus {
                let cpuset = t.cpuset.map_or(limit, |s| s.and(&limit));
                let own = t.cpus_allowed.unwrap_or(machine.online);
                let usable = own.and(&cpuset).and(&machine.online);
                if usable.is_empty() {
                    return Err(InputError::with_key(
                        origin,
                        "workload",
                        format!(
                            "task '{}'{}: its own CPUs '{own}' and the placement's CPUs \
                             '{cpuset}' have no online CPU in common",
                            t.comm,
                            group.map(|g| format!(" (group {g})")).unwrap_or_default()
                        ),
                    ));
                }
                if !usable.test(t.parent_cpu) {
                    // The creator runs inside the placement too: on its first usable CPU.
                    t.parent_cpu = usable.first().expect("checked non-empty");
                }
                t.cpuset = Some(cpuset);
            }
            if let Some(m) = mem {
                t.mempolicy = m;
            }
            if self.mem_intensity_permille > 0 {
                t.mem_intensity_permille = self.mem_intensity_permille;
            }
        }
        Ok(())
    }

    /// The resolved placement for the results' scenario block.
    pub fn to_json(&self) -> serde_json::Value {
        let (policy, nodes) = match self.mempolicy {
            None | Some(MemPolicy::Local) => ("local", None),
            Some(MemPolicy::Bind { nodes }) => ("bind", Some(nodes)),
            Some(MemPolicy::Preferred { node }) => ("preferred", Some(1u64 << node)),
            Some(MemPolicy::Interleave { nodes }) => ("interleave", Some(nodes)),
        };
        serde_json::json!({
            "command_prefix": self.prefix,
            "cpus": self.cpus.map(|c| c.to_string()),
            "mempolicy": policy,
            "mem_nodes": nodes.map(nodes_to_string),
            "mem_intensity_pct": f64::from(self.mem_intensity_permille) / 10.0,
            "group_cpus": self.group_cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "group_nodes": self.group_nodes.iter().map(|&n| nodes_to_string(n)).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        cmdline::split_words(s).unwrap()
    }

    fn nehalem() -> Machine {
        crate::topology::resolve_machine_with(Some("nehalem-2s"), None, None).unwrap()
    }

    #[test]
    fn taskset_hex_mask_and_cpu_list_agree() {
        let w = words("taskset 0xf0 hackbench 2");
        let (a, rest) = parse_prefixes(&w).unwrap();
        assert_eq!(rest, &w[2..]);
        let w2 = words("taskset -c 4-7 hackbench 2");
        let (b, rest2) = parse_prefixes(&w2).unwrap();
        assert_eq!(rest2, &w2[3..]);
        let m = nehalem();
        assert_eq!(
            a.resolve(&m).unwrap().cpus,
            Some(CpuMask::parse("4-7").unwrap())
        );
        assert_eq!(a.resolve(&m).unwrap().cpus, b.resolve(&m).unwrap().cpus);
        assert_eq!(parse_hex_mask("ff,00000000"), CpuMask::parse("32-39").ok());
        assert_eq!(parse_hex_mask("F"), CpuMask::parse("0-3").ok());
    }

    #[test]
    fn taskset_errors_are_util_linux_wording() {
        let e = parse_prefixes(&words("taskset -x 1 hackbench")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "taskset: invalid option -- 'x'\nTry 'taskset --help' for more information."
        );
        let e = parse_prefixes(&words("taskset zz hackbench")).unwrap_err();
        assert_eq!(e.to_string(), "taskset: failed to parse CPU mask: zz");
        let e = parse_prefixes(&words("taskset -c 3-1 hackbench")).unwrap_err();
        assert_eq!(e.to_string(), "taskset: failed to parse CPU list: 3-1");
        let e = parse_prefixes(&words("taskset 0x3")).unwrap_err();
        assert!(e.to_string().starts_with("taskset: bad usage\nTry"), "{e}");
    }

    #[test]
    fn numactl_options_and_combined_prefixes() {
        let w = words("taskset -c 0-3 numactl --cpunodebind=1 -m 0 -- hackbench 2");
        let (a, rest) = parse_prefixes(&w).unwrap();
        assert_eq!(rest[0], "hackbench");
        let r = a.resolve(&nehalem()).unwrap();
        // Node 1 of nehalem-2s is the odd CPUs; ∩ 0-3.
        assert_eq!(r.cpus, Some(CpuMask::parse("1,3").unwrap()));
        assert_eq!(r.mempolicy, Some(MemPolicy::Bind { nodes: 1 }));
        assert_eq!(r.prefix, "taskset -c 0-3 numactl --cpunodebind=1 -m 0 --");
        let (b, _) = parse_prefixes(&words("numactl -i all -l -p 1 hackbench")).unwrap();
        // The last memory option wins.
        assert_eq!(
            b.resolve(&nehalem()).unwrap().mempolicy,
            Some(MemPolicy::Preferred { node: 1 })
        );
        let (c, _) = parse_prefixes(&words("numactl --interleave=0-1 hackbench")).unwrap();
        assert_eq!(
            c.resolve(&nehalem()).unwrap().mempolicy,
            Some(MemPolicy::Interleave { nodes: 0b11 })
        );
    }

    #[test]
    fn numactl_errors_are_numactl_wording() {
        let e = parse_prefixes(&words("numactl --bogus hackbench")).unwrap_err();
        assert!(
            e.message
                .starts_with("numactl: unrecognized option '--bogus'\nusage: numactl [--all | -a]"),
            "{e}"
        );
        let (a, _) = parse_prefixes(&words("numactl -m 5 hackbench")).unwrap();
        let e = a.resolve(&nehalem()).unwrap_err();
        assert!(
            e.message
                .starts_with("libnuma: Warning: node argument 5 is out of range\n<5> is invalid"),
            "{e}"
        );
        let e = parse_prefixes(&words("numactl -m 0")).unwrap_err();
        assert!(e.message.starts_with("usage: numactl"), "{e}");
        let (a, _) = parse_prefixes(&words("taskset -c 0 numactl -N 1 hackbench")).unwrap();
        let e = a.resolve(&nehalem()).unwrap_err();
        assert_eq!(e.origin, "numactl");
        assert!(
            e.message.starts_with("sched_setaffinity: Invalid argument"),
            "{e}"
        );
    }

    #[test]
    fn toml_keys_are_taken_out_and_checked() {
        let t: toml::Table =
            "groups = 2\ncpus = '0-3'\nmembind = 1\nmem_intensity_pct = 12.5\ngroup_nodes = ['0', 1]"
                .parse()
                .unwrap();
        let (rest, a) = from_toml(&t, "s.toml").unwrap();
        assert_eq!(rest.keys().collect::<Vec<_>>(), vec!["groups"]);
        let r = a.resolve(&nehalem()).unwrap();
        assert_eq!(r.cpus, Some(CpuMask::parse("0-3").unwrap()));
        assert_eq!(r.mem_intensity_permille, 125);
        assert_eq!(r.group_nodes, vec![1, 2]);
        let t: toml::Table = "membind = '0'\ninterleave = 'all'".parse().unwrap();
        let e = from_toml(&t, "s.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.interleave"));
        let t: toml::Table = "mem_intensity_pct = 150".parse().unwrap();
        assert!(from_toml(&t, "s.toml").is_err());
        let t: toml::Table = "cpunodebind = '3'".parse().unwrap();
        let (_, a) = from_toml(&t, "s.toml").unwrap();
        let e = a.resolve(&nehalem()).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.cpunodebind"));
    }
}
