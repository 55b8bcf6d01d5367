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

pub mod builtin;
pub mod cmdline;
pub mod generate;
pub mod hackbench;
pub mod netperf;
pub mod placement;
pub mod results;
pub mod rtapp;
pub mod schbench;
pub mod stressng;

use std::path::{Path, PathBuf};

use crate::error::{InputError, InputResult};

pub use hackbench::HackbenchConfig;
pub use netperf::NetperfRrConfig;
pub use rtapp::RtAppSpec;
pub use schbench::SchbenchConfig;
pub use stressng::StressNgConfig;

/// Workload kinds accepted as `[workload] kind = ...`, with one line each (for
/// `schedlab list workloads`).
pub const KINDS: &[(&str, &str)] = &[
    (
        "hackbench",
        "G groups of F senders × F receivers over socketpairs/pipes; `hackbench 10 process 100`, rt-tests `hackbench -g 10 -l 100`, `perf bench sched messaging`",
    ),
    (
        "schbench",
        "message threads waking worker pools, wakeup/request latency percentiles and RPS; `schbench -m 4 -t 128 -r 60` (version = \"classic\" for the pre-2020 p99 program)",
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
];

/// A fully parsed workload.
// Built once per run and never stored in bulk, so the size spread between variants (schbench's
// config is the largest) costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    Hackbench(HackbenchConfig),
    Schbench(SchbenchConfig),
    StressNg(StressNgConfig),
    RtApp(RtAppSpec),
    NetperfRr(NetperfRrConfig),
}

impl WorkloadSpec {
    /// The kind name (`hackbench`, `schbench`, `stress-ng`, `rtapp`, `netperf`, `tbench`).
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Hackbench(_) => "hackbench",
            WorkloadSpec::Schbench(_) => "schbench",
            WorkloadSpec::StressNg(_) => "stress-ng",
            WorkloadSpec::RtApp(_) => "rtapp",
            WorkloadSpec::NetperfRr(c) => match c.flavor {
                netperf::RrFlavor::Netperf => "netperf",
                netperf::RrFlavor::Tbench => "tbench",
            },
        }
    }

    /// Parse a benchmark command line exactly as its users type it, e.g.
    /// `hackbench 100 process 20000`, `perf bench sched messaging -g 20`,
    /// `schbench -L -m 4 -M auto -t 128 -n 0 -r 60`, `stress-ng --cpu 0 -l 50`,
    /// `rt-app file.json`, `netperf -t TCP_RR -- -r 64,64`, `tbench 8`.
    /// `nr_cpus` is the simulated machine's CPU count (for defaults such as schbench's `-t`
    /// and stress-ng's `--cpu 0`). Program names may be paths. `schbench-classic` /
    /// `schbench-2016` select the classic schbench (pre-2020 output).
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
        let Some(prog) = words.first() else {
            return Err(InputError::new("command line", "empty command"));
        };
        let args = &words[1..];
        let name = cmdline::basename(prog);
        Ok(match name {
            "hackbench" => WorkloadSpec::Hackbench(hackbench::parse_hackbench(args)?),
            "perf" => WorkloadSpec::Hackbench(hackbench::parse_perf(args)?),
            "schbench" => WorkloadSpec::Schbench(schbench::parse_current(args, nr_cpus)?),
            "schbench-classic" => WorkloadSpec::Schbench(schbench::parse_classic(
                args,
                schbench::SchbenchVersion::Classic,
            )?),
            "schbench-2016" => WorkloadSpec::Schbench(schbench::parse_classic(
                args,
                schbench::SchbenchVersion::Classic2016,
            )?),
            "stress-ng" => WorkloadSpec::StressNg(stressng::parse(args, nr_cpus)?),
            "rt-app" => {
                let file = match args {
                    [f] => f,
                    _ => return Err(InputError::new("rt-app", "usage: rt-app <taskset.json>")),
                };
                WorkloadSpec::RtApp(rtapp::load(&resolve(file, base_dir), nr_cpus)?)
            }
            "netperf" => WorkloadSpec::NetperfRr(netperf::parse_netperf(args, nr_cpus)?),
            "tbench" => WorkloadSpec::NetperfRr(netperf::parse_tbench(args)?),
            other => {
                return Err(InputError::new(
                    "command line",
                    format!(
                        "unknown benchmark program '{other}'; accepted: hackbench, perf (bench sched messaging), \
                         schbench, schbench-classic, schbench-2016, stress-ng, rt-app, netperf, tbench, \
                         each optionally after taskset / numactl prefixes"
                    ),
                ));
            }
        })
    }

    /// Build from a `[workload]` table. `kind` is the table's `kind` value; the table may also
    /// contain `kind` itself and, instead of structured keys, `command = "..."` (the quick form).
    /// `origin` is the scenario file's path: relative rt-app `file` paths are resolved against
    /// its directory.
    pub fn from_toml(
        kind: &str,
        table: &toml::Table,
        origin: &str,
        nr_cpus: usize,
    ) -> InputResult<Self> {
        let mut t = table.clone();
        t.remove("kind");
        let base_dir = Path::new(origin)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        if let Some(cmd) = t.remove("command") {
            let toml::Value::String(cmd) = cmd else {
                return Err(InputError::with_key(
                    origin,
                    "workload.command",
                    "must be a string",
                ));
            };
            if let Some(k) = t.keys().next() {
                return Err(InputError::with_key(
                    origin,
                    format!("workload.{k}"),
                    "cannot be combined with workload.command (give either a command line or structured keys)",
                ));
            }
            let words = cmdline::split_words(&cmd)
                .map_err(|m| InputError::with_key(origin, "workload.command", m))?;
            let spec = Self::from_words(&words, nr_cpus, base_dir)?;
            let matches = spec.kind() == kind
                || (kind == "hackbench" && matches!(spec, WorkloadSpec::Hackbench(_)));
            if !kind.is_empty() && !matches {
                return Err(InputError::with_key(
                    origin,
                    "workload.kind",
                    format!(
                        "kind '{kind}' does not match the command, which runs {}",
                        spec.kind()
                    ),
                ));
            }
            return Ok(spec);
        }
        Ok(match kind {
            "hackbench" => WorkloadSpec::Hackbench(hackbench::from_toml(&t, origin)?),
            "schbench" => WorkloadSpec::Schbench(schbench::from_toml(&t, origin, nr_cpus)?),
            "stress-ng" => WorkloadSpec::StressNg(stressng::from_toml(&t, origin, nr_cpus)?),
            "rtapp" => {
                toml_util::reject_unknown(&t, origin, &["file"])?;
                let file = toml_util::get_str(&t, origin, "file")?.ok_or_else(|| {
                    InputError::with_key(
                        origin,
                        "workload.file",
                        "missing: the rt-app JSON file to run",
                    )
                })?;
                WorkloadSpec::RtApp(rtapp::load(&resolve(&file, base_dir), nr_cpus)?)
            }
            "netperf" | "tbench" => {
                WorkloadSpec::NetperfRr(netperf::from_toml(kind, &t, origin, nr_cpus)?)
            }
            other => {
                let names: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
                return Err(InputError::with_key(
                    origin,
                    "workload.kind",
                    format!(
                        "unknown workload kind '{other}'; accepted: {}",
                        names.join(", ")
                    ),
                ));
            }
        })
    }
}

fn resolve(file: &str, base_dir: Option<&Path>) -> PathBuf {
    let p = Path::new(file);
    match base_dir {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    }
}

/// Typed access to `[workload]` keys with errors naming `workload.<key>`.
pub(crate) mod toml_util {
    use crate::error::{InputError, InputResult};

    fn bad(origin: &str, key: &str, want: &str, v: &toml::Value) -> InputError {
        InputError::with_key(
            origin,
            format!("workload.{key}"),
            format!("expected {want}, found {}", v.type_str()),
        )
    }

    /// Error on any key not in `accepted`, listing the accepted ones.
    pub fn reject_unknown(t: &toml::Table, origin: &str, accepted: &[&str]) -> InputResult<()> {
        for k in t.keys() {
            if !accepted.contains(&k.as_str()) {
                return Err(InputError::with_key(
                    origin,
                    format!("workload.{k}"),
                    format!(
                        "unknown key; accepted: kind, command, {}; placement: {}",
                        accepted.join(", "),
                        super::placement::PLACEMENT_KEYS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn get_str(t: &toml::Table, origin: &str, key: &str) -> InputResult<Option<String>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(bad(origin, key, "a string", v)),
        }
    }

    pub fn get_bool(t: &toml::Table, origin: &str, key: &str) -> InputResult<Option<bool>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(bad(origin, key, "true or false", v)),
        }
    }

    pub fn get_i64(t: &toml::Table, origin: &str, key: &str) -> InputResult<Option<i64>> {
        match t.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(*i)),
            Some(v) => Err(bad(origin, key, "an integer", v)),
        }
    }

    pub fn get_u64(t: &toml::Table, origin: &str, key: &str) -> InputResult<Option<u64>> {
        match get_i64(t, origin, key)? {
            None => Ok(None),
            Some(i) if i >= 0 => Ok(Some(i as u64)),
            Some(i) => Err(InputError::with_key(
                origin,
                format!("workload.{key}"),
                format!("must not be negative, got {i}"),
            )),
        }
    }

    pub fn get_u32(t: &toml::Table, origin: &str, key: &str, min: u32) -> InputResult<Option<u32>> {
        match get_u64(t, origin, key)? {
            None => Ok(None),
            Some(v) if v >= u64::from(min) && v <= u64::from(u32::MAX) => Ok(Some(v as u32)),
            Some(v) => Err(InputError::with_key(
                origin,
                format!("workload.{key}"),
                format!("must be between {min} and {}, got {v}", u32::MAX),
            )),
        }
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
                .contains("accepted: kind, command, variant, groups"),
            "{e}"
        );
        let e =
            WorkloadSpec::from_toml("schbench", &table("threads = 4"), "s.toml", 8).unwrap_err();
        assert!(e.message.contains("message_threads"), "{e}");
        let e = WorkloadSpec::from_toml("fio", &table(""), "s.toml", 8).unwrap_err();
        assert!(
            e.message
                .contains("unknown workload kind 'fio'; accepted: hackbench, schbench"),
            "{e}"
        );
        let e =
            WorkloadSpec::from_toml("hackbench", &table("groups = 'x'"), "s.toml", 8).unwrap_err();
        assert_eq!(e.message, "expected an integer, found string");
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
