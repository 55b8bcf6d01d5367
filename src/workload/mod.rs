//! Benchmarks as their users run them: command lines and `[workload]` TOML keys turned into
//! typed configurations, structure facts the engine needs to build the task programs, and each
//! program's exact native report printed from a typed result.
//!
//! This half of the workload layer is engine-independent: it models the *benchmarks* (their
//! option parsing, defaults, thread structure, arithmetic and output formats — hackbench,
//! schbench, stress-ng's cpu stressor, rt-app files, netperf TCP_RR and tbench), not the kernel.
//! The engine turns a [`WorkloadSpec`] into task programs, runs them, and fills the per-benchmark
//! result structs (`HackbenchResult`, `SchbenchResult`, `StressNgResult`, `NetperfRrResult`)
//! whose `format_report` functions print what the real program prints.
//!
//! The programs' sources are the authority (masoncl/schbench, the kernel's
//! tools/perf/bench/sched-messaging.c, rt-tests and classic hackbench, ColinIanKing/stress-ng,
//! scheduler-tools/rt-app, HewlettPackard/netperf, dbench/tbench); each submodule documents what
//! it keeps and what it simplifies. See also docs/fidelity.md, "Workloads".

pub mod background;
pub mod builtin;
pub mod cmdline;
pub mod generate;
pub mod hackbench;
pub mod jbb;
pub mod linpack;
pub mod merge;
pub mod netperf;
pub mod placement;
pub mod results;
pub mod rtapp;
pub mod schbench;
pub mod sched_pipe;
pub mod stream;
pub mod stressng;
pub mod view;
pub mod web;

use std::path::{Path, PathBuf};

use crate::error::{InputError, InputResult};
use crate::input;

pub use hackbench::HackbenchConfig;
pub use jbb::JbbConfig;
pub use linpack::LinpackConfig;
pub use netperf::NetperfRrConfig;
pub use rtapp::RtAppSpec;
pub use schbench::SchbenchConfig;
pub use sched_pipe::SchedPipeConfig;
pub use stream::StreamConfig;
pub use stressng::StressNgConfig;
pub use web::WebConfig;

/// Workload kinds accepted as `[workload] kind = ...`, with one line each (for
/// `schedlab list workloads`).
pub const KINDS: &[(&str, &str)] = &[
    (
        "hackbench",
        "G groups of F senders × F receivers over socketpairs/pipes; `hackbench 10 process 100`, rt-tests `hackbench -g 10 -l 100`, `perf bench sched messaging`",
    ),
    (
        "sched-pipe",
        "two tasks ping-ponging an int over two pipes, loops round trips; `perf bench sched pipe -l 100000 [-T]`",
    ),
    (
        "schbench",
        "message threads waking worker pools, wakeup/request latency percentiles and RPS; `schbench -m 4 -t 128 -r 60` (version = \"classic\" or `schbench-classic` for the pre-2020 p99 program, \"interim2021\" or `schbench-2021` for the Oct 2020 - Dec 2021 one)",
    ),
    (
        "stress-ng",
        "N single-threaded cpu stressor instances with duty-cycle load control; `stress-ng --cpu 72 -l 50 --cpu-ops 100000 --metrics-brief`",
    ),
    (
        "rtapp",
        "rt-app JSON use case (file = \"...\"): periodic/phased tasks with run, sleep, timer, locks, barriers, suspend/resume, fork",
    ),
    (
        "netperf",
        "netperf TCP_RR/UDP_RR: one client/server ping-pong pair; `netperf -t TCP_RR -l 10 -- -r 1,1`",
    ),
    (
        "tbench",
        "tbench N: N client/server ping-pong pairs over loopback TCP; `tbench 8`",
    ),
    (
        "web",
        "nginx-like server: worker processes/threads on a shared accept queue, open-loop (rate_per_s) or closed-loop (clients, think_us) load; response time percentiles, requests/s",
    ),
    (
        "jbb",
        "SPECjbb-like JVMs: warehouse threads sharing a heap, stop-the-world GC threads; instances, warehouses; bops",
    ),
    (
        "stream",
        "STREAM copy/scale/add/triad threads over arrays of array_mib; bandwidth-bound; MB/s per kernel and total",
    ),
    (
        "linpack",
        "blocked LU solver threads (n, nb), a barrier per step; compute-bound; GFLOPS",
    ),
];

/// A fully parsed workload.
// Built once per run and never stored in bulk, so the size spread between variants (schbench's
// config is the largest) costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    Hackbench(HackbenchConfig),
    SchedPipe(SchedPipeConfig),
    Schbench(SchbenchConfig),
    StressNg(StressNgConfig),
    RtApp(RtAppSpec),
    NetperfRr(NetperfRrConfig),
    Web(WebConfig),
    Jbb(JbbConfig),
    Stream(StreamConfig),
    Linpack(LinpackConfig),
}

impl WorkloadSpec {
    /// The kind name (`hackbench`, `schbench`, `stress-ng`, `rtapp`, `netperf`, `tbench`).
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Hackbench(_) => "hackbench",
            WorkloadSpec::SchedPipe(_) => "sched-pipe",
            WorkloadSpec::Schbench(_) => "schbench",
            WorkloadSpec::StressNg(_) => "stress-ng",
            WorkloadSpec::RtApp(_) => "rtapp",
            WorkloadSpec::NetperfRr(c) => match c.flavor {
                netperf::RrFlavor::Netperf => "netperf",
                netperf::RrFlavor::Tbench => "tbench",
            },
            WorkloadSpec::Web(_) => "web",
            WorkloadSpec::Jbb(_) => "jbb",
            WorkloadSpec::Stream(_) => "stream",
            WorkloadSpec::Linpack(_) => "linpack",
        }
    }

    /// Simulated tasks the benchmark creates (its threads/processes, parent included), known
    /// before any is allocated, for the `run.max_tasks` limit.
    pub fn nr_tasks(&self) -> u64 {
        match self {
            WorkloadSpec::Hackbench(c) => c.nr_tasks() + 1,
            WorkloadSpec::SchedPipe(c) => c.nr_tasks(),
            WorkloadSpec::Schbench(c) => c.nr_threads(),
            WorkloadSpec::StressNg(c) => u64::from(c.instances) + 1,
            WorkloadSpec::RtApp(s) => s.nr_threads(),
            WorkloadSpec::NetperfRr(c) => c.nr_tasks(),
            WorkloadSpec::Web(c) => c.nr_tasks(),
            WorkloadSpec::Jbb(c) => c.nr_tasks(),
            WorkloadSpec::Stream(c) => u64::from(c.threads),
            WorkloadSpec::Linpack(c) => u64::from(c.threads),
        }
    }

    /// Parse a benchmark command line exactly as its users type it, e.g.
    /// `hackbench 100 process 20000`, `perf bench sched messaging -g 20`,
    /// `perf bench sched pipe -l 100000`,
    /// `schbench -L -m 4 -M auto -t 128 -n 0 -r 60`, `stress-ng --cpu 0 -l 50`,
    /// `rt-app file.json`, `netperf -t TCP_RR -- -r 64,64`, `tbench 8`.
    /// `nr_cpus` is the simulated machine's CPU count (for defaults such as schbench's `-t`
    /// and stress-ng's `--cpu 0`). Program names may be paths. `schbench-classic` /
    /// `schbench-2016` select the classic schbench (pre-2020 output), `schbench-2021` the Oct 2020 –
    /// Dec 2021 one (commit e4aa540).
    /// Prefixes (`taskset`, `numactl`) are rejected here: see [`Self::from_command_placed`].
    pub fn from_command(cmdline: &str, nr_cpus: usize) -> InputResult<Self> {
        let (spec, placement) = Self::from_command_placed(cmdline, nr_cpus)?;
        if !placement.is_empty() {
            return Err(InputError::new(
                "command line",
                "taskset/numactl prefixes need a placement-aware caller (from_command_placed)",
            ));
        }
        Ok(spec)
    }

    /// [`Self::from_command`] with `taskset` / `numactl` prefixes allowed (e.g.
    /// `numactl --cpunodebind=1 --membind=1 hackbench 10`): returns the benchmark and the
    /// placement the prefixes ask for (see [`placement`]).
    pub fn from_command_placed(
        cmdline: &str,
        nr_cpus: usize,
    ) -> InputResult<(Self, placement::PlacementArgs)> {
        let words =
            cmdline::split_words(cmdline).map_err(|m| InputError::new("command line", m))?;
        let (placement, rest) = placement::parse_prefixes(&words)?;
        Ok((Self::from_words(rest, nr_cpus, None)?, placement))
    }

    fn from_words(words: &[String], nr_cpus: usize, base_dir: Option<&Path>) -> InputResult<Self> {
        let parsed = CommandLine::parse(words, nr_cpus, base_dir)?;
        let none = |_: &str, m: String| InputError::new("command line", m);
        parsed.finish(&toml::Table::new(), nr_cpus, &|_| String::new(), &none)
    }

    /// Build from a `[workload]` table with `kind` (and its keys) or `command` (the quick
    /// form). Compatibility form of [`Self::from_section`] for one origin: every key comes from
    /// `origin`, so `command` with other keys is an error. Relative rt-app `file` paths are
    /// resolved against `origin`'s directory.
    pub fn from_toml(
        kind: &str,
        table: &toml::Table,
        origin: &str,
        nr_cpus: usize,
    ) -> InputResult<Self> {
        let mut keys = table.clone();
        keys.remove("kind");
        let command = match keys.remove("command") {
            None => None,
            Some(v) => Some(input::keys::from_value::<String>(
                &v,
                "workload.command",
                origin,
            )?),
        };
        let base_dir = Path::new(origin)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        let (spec, placement) = Self::from_section(&SectionInput {
            kind: if command.is_some() || kind.is_empty() {
                None
            } else {
                Some(kind)
            },
            command: command.as_deref(),
            keys: &keys,
            origin_of: &|_| origin.to_string(),
            base_dir,
            nr_cpus,
        })?;
        if command.is_some() && !kind.is_empty() {
            let matches = spec.kind() == kind
                || (kind == "hackbench" && matches!(spec, WorkloadSpec::Hackbench(_)));
            if !matches {
                return Err(InputError::with_key(
                    origin,
                    "workload.kind",
                    format!(
                        "kind '{kind}' does not match the command, which runs {}",
                        spec.kind()
                    ),
                ));
            }
        }
        if !placement.is_empty() {
            return Err(InputError::new(
                origin,
                "taskset/numactl prefixes need a placement-aware caller (from_section)",
            ));
        }
        Ok(spec)
    }

    /// Build from the `[workload]` section: `kind` with its keys, or `command` (the
    /// benchmark's own command line) — both map to the same typed configuration.
    ///
    /// How they compose: the command line is parsed first; keys given in the same place as
    /// `command` (the same file, the same `--set`, the same variant) are an error (give one
    /// form); keys from another place (`--set`, a `[[variant]]`, `compare --variant`) are
    /// applied on top of the command, as if their options followed it. Returns the benchmark
    /// and the placement asked for by `taskset`/`numactl` prefixes.
    pub fn from_section(inp: &SectionInput) -> InputResult<(Self, placement::PlacementArgs)> {
        let origin_of = |k: &str| (inp.origin_of)(k);
        let err = |k: &str, m: String| {
            let key = format!("workload.{k}");
            InputError::with_key(origin_of(&key), key, m)
        };
        let Some(cmd) = inp.command else {
            let kind = inp.kind.unwrap_or_default();
            let parsed = CommandLine::defaults(kind, origin_of("workload.kind"))?;
            let base_dir = inp
                .base_dir
                .filter(|_| origin_of("workload.file") == origin_of("workload"));
            let spec =
                parsed
                    .with_base_dir(base_dir)
                    .finish(inp.keys, inp.nr_cpus, &origin_of, &err)?;
            return Ok((spec, placement::PlacementArgs::default()));
        };
        let cmd_origin = origin_of("workload.command");
        if let Some(k) = inp
            .keys
            .keys()
            .find(|k| origin_of(&format!("workload.{k}")) == cmd_origin)
        {
            return Err(err(
                k,
                "cannot be combined with workload.command given in the same place (give either \
                 the command line or structured keys; keys from --set or a variant are applied \
                 on top of the command)"
                    .into(),
            ));
        }
        let cmd_err = |mut e: InputError| {
            // The programs' own texts start with their name (`taskset: invalid option`): say
            // it once.
            if let Some(rest) = e.message.strip_prefix(&format!("{}: ", e.origin)) {
                e.message = rest.to_string();
            }
            e.origin = format!("{cmd_origin}: workload.command: {}", e.origin);
            e
        };
        let words = cmdline::split_words(cmd)
            .map_err(|m| InputError::with_key(&cmd_origin, "workload.command", m))?;
        let (prefix, rest) = placement::parse_prefixes(&words).map_err(cmd_err)?;
        let base_dir = inp.base_dir.filter(|_| cmd_origin == origin_of("workload"));
        let parsed = CommandLine::parse(rest, inp.nr_cpus, base_dir).map_err(cmd_err)?;
        let spec = parsed
            .finish(inp.keys, inp.nr_cpus, &origin_of, &err)
            .map_err(|e| if e.key.is_none() { cmd_err(e) } else { e })?;
        Ok((spec, prefix))
    }
}

/// The `[workload]` section as [`WorkloadSpec::from_section`] reads it.
pub struct SectionInput<'a> {
    /// `kind`, when the section names one (never together with `command`).
    pub kind: Option<&'a str>,
    /// `command`: the benchmark's command line, optionally after taskset/numactl prefixes.
    pub command: Option<&'a str>,
    /// The benchmark's keys (placement keys, `kind` and `command` already taken out).
    pub keys: &'a toml::Table,
    /// Where a dotted key came from (file path, `--set`, `FILE [variant NAME]`, ...).
    pub origin_of: &'a dyn Fn(&str) -> String,
    /// The scenario file's directory: relative rt-app paths given in the file resolve here.
    pub base_dir: Option<&'a Path>,
    /// Online CPUs of the simulated machine (defaults such as schbench's `-t`).
    pub nr_cpus: usize,
}

/// A benchmark command line split by program, before keys are applied.
enum CommandLine<'a> {
    Hackbench(Option<HackbenchConfig>),
    SchedPipe(Option<SchedPipeConfig>),
    Schbench(Option<(schbench::SchbenchVersion, Vec<String>)>),
    StressNg(Option<Vec<String>>),
    RtApp(Option<PathBuf>, Option<&'a Path>),
    Netperf(&'static str, Option<NetperfRrConfig>),
    /// The NUMA-balancing workloads (web, jbb, stream, linpack): keys only, no command line.
    Keyed(&'static str),
}

impl<'a> CommandLine<'a> {
    /// A kind with nothing on a command line.
    fn defaults(kind: &str, origin: String) -> InputResult<Self> {
        Ok(match kind {
            "hackbench" => CommandLine::Hackbench(None),
            "sched-pipe" => CommandLine::SchedPipe(None),
            "schbench" => CommandLine::Schbench(None),
            "stress-ng" => CommandLine::StressNg(None),
            "rtapp" => CommandLine::RtApp(None, None),
            "netperf" => CommandLine::Netperf("netperf", None),
            "tbench" => CommandLine::Netperf("tbench", None),
            "web" => CommandLine::Keyed("web"),
            "jbb" => CommandLine::Keyed("jbb"),
            "stream" => CommandLine::Keyed("stream"),
            "linpack" => CommandLine::Keyed("linpack"),
            other => {
                let mut names: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
                names.extend(["spin", "pingpong"]);
                return Err(InputError::with_key(
                    origin,
                    "workload.kind",
                    format!(
                        "unknown workload kind '{}'{}; accepted: {}",
                        input::limits::clip(other),
                        input::did_you_mean(other, &names),
                        names.join(", ")
                    ),
                ));
            }
        })
    }

    fn with_base_dir(self, dir: Option<&'a Path>) -> Self {
        match self {
            CommandLine::RtApp(f, _) => CommandLine::RtApp(f, dir),
            other => other,
        }
    }

    /// Split `words` (program first) by program and parse what does not depend on keys.
    fn parse(words: &[String], nr_cpus: usize, base_dir: Option<&'a Path>) -> InputResult<Self> {
        let Some(prog) = words.first() else {
            return Err(InputError::new("command line", "empty command"));
        };
        let args = &words[1..];
        let name = cmdline::basename(prog);
        Ok(match name {
            "hackbench" => CommandLine::Hackbench(Some(hackbench::parse_hackbench(args)?)),
            "perf" => perf_bench(args)?,
            "schbench" => {
                CommandLine::Schbench(Some((schbench::SchbenchVersion::Current, args.to_vec())))
            }
            "schbench-classic" => {
                CommandLine::Schbench(Some((schbench::SchbenchVersion::Classic, args.to_vec())))
            }
            "schbench-2016" => CommandLine::Schbench(Some((
                schbench::SchbenchVersion::Classic2016,
                args.to_vec(),
            ))),
            "schbench-2021" => CommandLine::Schbench(Some((
                schbench::SchbenchVersion::Interim2021,
                args.to_vec(),
            ))),
            "stress-ng" => CommandLine::StressNg(Some(args.to_vec())),
            "rt-app" => match args {
                [f] => CommandLine::RtApp(Some(PathBuf::from(f)), base_dir),
                _ => return Err(InputError::new("rt-app", "usage: rt-app <taskset.json>")),
            },
            "netperf" => {
                CommandLine::Netperf("netperf", Some(netperf::parse_netperf(args, nr_cpus)?))
            }
            "tbench" => CommandLine::Netperf("tbench", Some(netperf::parse_tbench(args)?)),
            other => {
                let progs = [
                    "hackbench",
                    "perf",
                    "schbench",
                    "schbench-classic",
                    "schbench-2016",
                    "schbench-2021",
                    "stress-ng",
                    "rt-app",
                    "netperf",
                    "tbench",
                ];
                return Err(InputError::new(
                    "command line",
                    format!(
                        "unknown benchmark program '{}'{}; accepted: hackbench, perf (bench sched messaging|pipe), \
                         schbench, schbench-classic, schbench-2016, schbench-2021, stress-ng, rt-app, netperf, tbench, \
                         each optionally after taskset / numactl prefixes",
                        input::limits::clip(other),
                        input::did_you_mean(other, &progs)
                    ),
                ));
            }
        })
    }

    /// Apply `keys` (typed per kind; unknown keys are errors with a did-you-mean) and finish.
    fn finish(
        self,
        keys: &toml::Table,
        nr_cpus: usize,
        origin_of: &dyn Fn(&str) -> String,
        err: &dyn Fn(&str, String) -> InputError,
    ) -> InputResult<WorkloadSpec> {
        Ok(match self {
            CommandLine::Hackbench(base) => WorkloadSpec::Hackbench(hackbench::from_keys(
                base,
                &read_keys(keys, origin_of)?,
                err,
            )?),
            CommandLine::SchedPipe(base) => WorkloadSpec::SchedPipe(sched_pipe::from_keys(
                base,
                &read_keys(keys, origin_of)?,
                err,
            )?),
            CommandLine::Schbench(base) => WorkloadSpec::Schbench(schbench::from_keys(
                base,
                &read_keys(keys, origin_of)?,
                nr_cpus,
                err,
            )?),
            CommandLine::StressNg(base) => WorkloadSpec::StressNg(stressng::from_keys(
                base,
                &read_keys(keys, origin_of)?,
                nr_cpus,
                err,
            )?),
            CommandLine::RtApp(file, base_dir) => {
                let k: RtAppKeys = read_keys(keys, origin_of)?;
                let file = match (k.file, file) {
                    (Some(f), _) => PathBuf::from(f),
                    (None, Some(f)) => f,
                    (None, None) => {
                        return Err(err("file", "missing: the rt-app JSON file to run".into()));
                    }
                };
                WorkloadSpec::RtApp(rtapp::load(&resolve(&file, base_dir), nr_cpus)?)
            }
            CommandLine::Netperf(kind, base) => WorkloadSpec::NetperfRr(netperf::from_keys(
                kind,
                base,
                &read_keys(keys, origin_of)?,
                nr_cpus,
                err,
            )?),
            CommandLine::Keyed(kind) => keyed_spec(kind, keys, nr_cpus, origin_of, err)?,
        })
    }
}

/// `perf bench ...`: the modelled benchmarks of perf bench's collections.
fn perf_bench<'a>(args: &[String]) -> InputResult<CommandLine<'a>> {
    let cmd = hackbench::parse_perf_bench(args)?;
    Ok(match (cmd.collection, cmd.bench) {
        ("sched", "messaging") => {
            CommandLine::Hackbench(Some(hackbench::parse_perf_messaging(cmd.args, cmd.format)?))
        }
        ("sched", "pipe") => CommandLine::SchedPipe(Some(sched_pipe::parse(cmd.args, cmd.format)?)),
        _ => {
            return Err(InputError::new(
                "perf",
                format!(
                    "{}, got `perf {}`",
                    hackbench::PERF_BENCH_MODELLED,
                    input::limits::clip_words(&args.join(" "))
                ),
            ));
        }
    })
}

/// A keys-only kind from its typed keys.
fn keyed_spec(
    kind: &str,
    keys: &toml::Table,
    nr_cpus: usize,
    origin_of: &dyn Fn(&str) -> String,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<WorkloadSpec> {
    Ok(match kind {
        "web" => WorkloadSpec::Web(web::from_keys(&read_keys(keys, origin_of)?, nr_cpus, err)?),
        "jbb" => WorkloadSpec::Jbb(jbb::from_keys(&read_keys(keys, origin_of)?, nr_cpus, err)?),
        "stream" => WorkloadSpec::Stream(stream::from_keys(
            &read_keys(keys, origin_of)?,
            nr_cpus,
            err,
        )?),
        _ => WorkloadSpec::Linpack(linpack::from_keys(
            &read_keys(keys, origin_of)?,
            nr_cpus,
            err,
        )?),
    })
}

/// `[workload] kind = "rtapp"` keys.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RtAppKeys {
    file: Option<String>,
}

/// A kind's typed keys from the `[workload]` table; an unknown key's message also lists (and
/// may suggest) the keys every kind accepts: kind, command and the placement keys.
fn read_keys<T: serde::de::DeserializeOwned>(
    keys: &toml::Table,
    origin_of: &dyn Fn(&str) -> String,
) -> InputResult<T> {
    input::keys::from_table_also(
        keys,
        "workload",
        origin_of,
        &[
            ("also", &["kind", "command"]),
            ("placement", placement::PLACEMENT_KEYS),
        ],
    )
}

/// Parse `base` followed by the option words of each key; when that fails but `base` alone
/// does not, the error names the first key whose options make it fail.
pub(crate) fn parse_with_key_words<T>(
    base: &[String],
    words: &[(&str, Vec<String>)],
    parse: impl Fn(&[String]) -> InputResult<T>,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<T> {
    let mut args = base.to_vec();
    args.extend(words.iter().flat_map(|(_, w)| w.iter().cloned()));
    let e = match parse(&args) {
        Ok(c) => return Ok(c),
        Err(e) => e,
    };
    if words.is_empty() {
        return Err(e);
    }
    let mut args = base.to_vec();
    if !base.is_empty()
        && let Err(e) = parse(&args)
    {
        return Err(e);
    }
    for (k, w) in words {
        args.extend(w.iter().cloned());
        if let Err(e) = parse(&args) {
            let flag = w[0].split('=').next().unwrap_or_default();
            return Err(err(
                k,
                format!("{} (workload.{k} is the program's {flag})", e.message),
            ));
        }
    }
    Err(err(words[words.len() - 1].0, e.message))
}

fn resolve(file: &Path, base_dir: Option<&Path>) -> PathBuf {
    match base_dir {
        Some(b) if file.is_relative() => b.join(file),
        _ => file.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse::<toml::Table>().unwrap()
    }

    #[test]
    fn from_command_dispatches_on_program() {
        assert_eq!(
            WorkloadSpec::from_command("hackbench 100 process 20000", 8)
                .unwrap()
                .kind(),
            "hackbench"
        );
        assert_eq!(
            WorkloadSpec::from_command("/usr/bin/perf bench sched messaging -g 2", 8)
                .unwrap()
                .kind(),
            "hackbench"
        );
        assert_eq!(
            WorkloadSpec::from_command("schbench -m 2", 8)
                .unwrap()
                .kind(),
            "schbench"
        );
        assert_eq!(
            WorkloadSpec::from_command(
                "stress-ng --cpu=72 -l 50 --cpu-ops=100000 --cpu-load-slice=1",
                72
            )
            .unwrap()
            .kind(),
            "stress-ng"
        );
        assert_eq!(
            WorkloadSpec::from_command("tbench 4", 8).unwrap().kind(),
            "tbench"
        );
        assert_eq!(
            WorkloadSpec::from_command("netperf -t TCP_RR", 8)
                .unwrap()
                .kind(),
            "netperf"
        );
        assert_eq!(
            WorkloadSpec::from_command("perf bench -f simple sched pipe -l 5 -T", 8)
                .unwrap()
                .kind(),
            "sched-pipe"
        );
        let (s, placed) =
            WorkloadSpec::from_command_placed("taskset -c 0 perf bench sched pipe", 8).unwrap();
        assert_eq!(
            (s.kind(), s.nr_tasks(), placed.is_empty()),
            ("sched-pipe", 2, false)
        );
        let e = WorkloadSpec::from_command("perf bench sched numa", 8).unwrap_err();
        assert!(
            e.message
                .starts_with("only `perf bench sched messaging` and"),
            "{e}"
        );
        let e = WorkloadSpec::from_command("sysbench cpu run", 8).unwrap_err();
        assert!(
            e.message.contains("unknown benchmark program 'sysbench'"),
            "{e}"
        );
        let e = WorkloadSpec::from_command("hackbench 'oops", 8).unwrap_err();
        assert_eq!(e.message, "unterminated single quote");
    }

    #[test]
    fn from_toml_structured_keys() {
        let t = table(
            "kind = 'hackbench'\ngroups = 4\nfds = 10\nloops = 50\ndata_size = 200\nmode = 'thread'\nipc = 'pipe'",
        );
        let WorkloadSpec::Hackbench(h) =
            WorkloadSpec::from_toml("hackbench", &t, "s.toml", 8).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (h.groups, h.fds, h.loops, h.data_size_bytes),
            (4, 10, 50, 200)
        );
        assert_eq!(h.nr_tasks(), 80);
        assert_eq!(h.total_messages(), 4 * 10 * 10 * 50);

        let t = table(
            "message_threads = 4\nworkers_per_message_thread = 128\nruntime_s = 5\nmessage_cpus = 'auto'\nno_locking = true",
        );
        let WorkloadSpec::Schbench(s) =
            WorkloadSpec::from_toml("schbench", &t, "s.toml", 80).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (
                s.message_threads,
                s.workers_per_message_thread,
                s.runtime_s,
                s.skip_locking
            ),
            (4, 128, 5, true)
        );
        assert_eq!(s.message_thread_cpu(3), Some(3));

        let t = table("cpu = 0\ncpu_load_pct = 50\ncpu_ops = 1000\nmetrics = 'brief'");
        let WorkloadSpec::StressNg(c) =
            WorkloadSpec::from_toml("stress-ng", &t, "s.toml", 16).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (c.instances, c.cpu_load_pct, c.ops_per_instance()),
            (16, 50, Some(63))
        );

        let t = table("clients = 8\nduration_s = 30");
        let WorkloadSpec::NetperfRr(n) =
            WorkloadSpec::from_toml("tbench", &t, "s.toml", 16).unwrap()
        else {
            panic!()
        };
        assert_eq!((n.clients, n.nr_tasks()), (8, 16));
    }

    #[test]
    fn from_toml_errors_list_accepted_keys() {
        let e = WorkloadSpec::from_toml("hackbench", &table("group = 4"), "s.toml", 8).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.group"));
        assert!(
            e.message
                .contains("unknown key (did you mean one of groups, group_cpus, group_nodes?); accepted: variant, groups"),
            "{e}"
        );
        let e =
            WorkloadSpec::from_toml("schbench", &table("threads = 4"), "s.toml", 8).unwrap_err();
        assert!(e.message.contains("message_threads"), "{e}");
        let e = WorkloadSpec::from_toml("fio", &table(""), "s.toml", 8).unwrap_err();
        assert!(
            e.message
                .contains("unknown workload kind 'fio'; accepted: hackbench, sched-pipe, schbench"),
            "{e}"
        );
        let e =
            WorkloadSpec::from_toml("hackbench", &table("groups = 'x'"), "s.toml", 8).unwrap_err();
        assert_eq!(
            e.message,
            "got string \"x\"; accepted: an integer from 1 to 4294967295"
        );
        let e = WorkloadSpec::from_toml("rtapp", &table(""), "s.toml", 8).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.file"));
    }

    #[test]
    fn from_toml_command_form() {
        let t = table("kind = 'schbench'\ncommand = 'schbench -L -m 4 -M auto -t 128 -n 0 -r 60'");
        let s = WorkloadSpec::from_toml("schbench", &t, "s.toml", 80).unwrap();
        let WorkloadSpec::Schbench(c) = s else {
            panic!()
        };
        assert_eq!(c.nr_workers(), 512);
        let t = table("command = 'tbench 4'");
        assert!(WorkloadSpec::from_toml("schbench", &t, "s.toml", 8).is_err());
        let t = table("command = 'hackbench 4'\ngroups = 5");
        assert!(WorkloadSpec::from_toml("hackbench", &t, "s.toml", 8).is_err());
    }
}
