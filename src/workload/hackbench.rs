//! hackbench — the three programs users mean by it, parsed from their real command lines,
//! with their structure facts and their exact native output.
//!
//! * **classic** (Rusty Russell / Ingo Molnar, also in LTP): `hackbench [-pipe] <num groups>
//!   [process|thread] [loops]`, e.g. `hackbench 100 process 20000`. F = 20 fds, 100-byte
//!   messages, 100 loops by default.
//! * **rt-tests** `hackbench [-p|--pipe] [-i|--inet] [-T|--threads] [-P|--process(es)] [-g N]
//!   [-l N] [-s N] [-f N] [-F|--fifo]`.
//! * **perf** `perf bench [-f simple] sched messaging [-p] [-t] [-g N] [-l N]` (F = 20 and
//!   DATASIZE = 100 are fixed there).
//!
//! The structure is the same in all three (reference/workloads.md §2): G groups, each of F
//! receivers and F senders; every sender writes `loops` messages to every receiver of its
//! group; a receiver reads `F·loops` messages. The engine builds the tasks from
//! [`HackbenchConfig`]'s structure methods and fills a [`HackbenchResult`]; this module prints
//! the report each program prints (to stdout in all three).
//!
//! Left out: rt-tests' SIGINT handling and partial-start error paths.

use super::cmdline::{self, LongOpt, OptStyle, lo};
use crate::error::{InputError, InputResult};

/// Which hackbench program the command line names (its output format differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HackbenchVariant {
    /// `hackbench [-pipe] <groups> [process|thread] [loops]`.
    Classic,
    /// rt-tests `hackbench` with getopt options.
    RtTests,
    /// `perf bench sched messaging` (key value `perf-bench` or `perf`).
    #[serde(alias = "perf")]
    PerfBench,
}

/// Process (fork) or thread (pthread_create) workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HackbenchMode {
    Process,
    #[serde(alias = "threads")]
    Thread,
}

/// The kind of fd pair each receiver reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HackbenchIpc {
    /// `socketpair(AF_UNIX, SOCK_STREAM)` — the default everywhere.
    Socket,
    /// `pipe()` (`-p`/`--pipe`/`-pipe`).
    Pipe,
    /// TCP over 127.0.0.1 (rt-tests `-i`/`--inet` only).
    Inet,
}

/// perf bench's `-f/--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PerfBenchFormat {
    Default,
    Simple,
}

/// A parsed hackbench invocation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HackbenchConfig {
    pub variant: HackbenchVariant,
    pub groups: u32,
    /// F: receivers per group, and also senders per group.
    pub fds: u32,
    /// Messages each sender writes to each receiver.
    pub loops: u32,
    pub data_size_bytes: u32,
    pub mode: HackbenchMode,
    pub ipc: HackbenchIpc,
    /// rt-tests `-F`: the parent becomes SCHED_FIFO priority 1 before the start barrier.
    pub fifo: bool,
    /// Only meaningful for perf bench.
    pub perf_format: PerfBenchFormat,
}

/// Defaults shared by all three programs (F = 20, 100-byte messages, 100 loops, 10 groups).
pub const DEFAULT_GROUPS: u32 = 10;
pub const DEFAULT_FDS: u32 = 20;
pub const DEFAULT_LOOPS: u32 = 100;
pub const DEFAULT_DATA_SIZE_BYTES: u32 = 100;

impl HackbenchConfig {
    /// The defaults of `variant` with nothing on the command line.
    pub fn defaults(variant: HackbenchVariant) -> Self {
        HackbenchConfig {
            variant,
            groups: DEFAULT_GROUPS,
            fds: DEFAULT_FDS,
            loops: DEFAULT_LOOPS,
            data_size_bytes: DEFAULT_DATA_SIZE_BYTES,
            mode: HackbenchMode::Process,
            ipc: HackbenchIpc::Socket,
            fifo: false,
            perf_format: PerfBenchFormat::Default,
        }
    }

    /// Worker tasks: G × 2 × F (the parent not counted).
    pub fn nr_tasks(&self) -> u64 {
        u64::from(self.groups) * 2 * u64::from(self.fds)
    }

    /// Senders per group (= F).
    pub fn senders_per_group(&self) -> u32 {
        self.fds
    }

    /// Receivers per group (= F).
    pub fn receivers_per_group(&self) -> u32 {
        self.fds
    }

    /// Messages one sender writes: loops × receivers (round-robin over the group's receivers).
    pub fn messages_per_sender(&self) -> u64 {
        u64::from(self.loops) * u64::from(self.fds)
    }

    /// Messages one receiver reads: F senders × loops.
    pub fn messages_per_receiver(&self) -> u64 {
        u64::from(self.loops) * u64::from(self.fds)
    }

    /// All messages: groups × senders × receivers × loops.
    pub fn total_messages(&self) -> u64 {
        u64::from(self.groups) * u64::from(self.fds) * u64::from(self.fds) * u64::from(self.loops)
    }

    /// All payload bytes moved.
    pub fn total_bytes(&self) -> u64 {
        self.total_messages() * u64::from(self.data_size_bytes)
    }

    /// The header lines the program prints before it starts (classic and rt-tests print them
    /// at start; perf prints its `#` lines at the end, see [`format_report`]).
    pub fn format_header(&self) -> String {
        match self.variant {
            HackbenchVariant::Classic => {
                // The classic program hard-codes "*40" and "groups * 40" (F = 20).
                format!(
                    "Running with {}*40 (== {}) tasks.\n",
                    self.groups,
                    u64::from(self.groups) * 40
                )
            }
            HackbenchVariant::RtTests => format!(
                "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n\
                 Each sender will pass {} messages of {} bytes\n",
                match self.mode {
                    HackbenchMode::Thread => "threaded",
                    HackbenchMode::Process => "process",
                },
                self.groups,
                2 * u64::from(self.fds),
                self.nr_tasks(),
                self.loops,
                self.data_size_bytes
            ),
            // `perf bench` itself prints this line before running the benchmark.
            HackbenchVariant::PerfBench => match self.perf_format {
                PerfBenchFormat::Default => "# Running 'sched/messaging' benchmark:\n".into(),
                PerfBenchFormat::Simple => String::new(),
            },
        }
    }
}

/// What the engine measured: the interval from just before the start-barrier herd wakeup
/// until the last child was reaped (`gettimeofday` in the programs, so µs resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct HackbenchResult {
    pub elapsed_ns: u64,
}

/// `%lu.%03lu` of (sec, usec/1000): milliseconds are truncated, never rounded.
fn sec_msec(elapsed_ns: u64) -> String {
    let us = elapsed_ns / 1000;
    format!("{}.{:03}", us / 1_000_000, (us % 1_000_000) / 1000)
}

/// The program's complete stdout for one run: header, then the time line(s).
pub fn format_report(cfg: &HackbenchConfig, res: &HackbenchResult) -> String {
    let mut out = cfg.format_header();
    let t = sec_msec(res.elapsed_ns);
    match cfg.variant {
        HackbenchVariant::Classic | HackbenchVariant::RtTests => {
            out.push_str(&format!("Time: {t}\n"));
        }
        HackbenchVariant::PerfBench => match cfg.perf_format {
            PerfBenchFormat::Default => {
                let what = match cfg.mode {
                    HackbenchMode::Thread => "threads",
                    HackbenchMode::Process => "processes",
                };
                out.push_str(&format!(
                    "# {} sender and receiver {what} per group\n",
                    cfg.fds
                ));
                out.push_str(&format!(
                    "# {} groups == {} {what} run\n\n",
                    cfg.groups,
                    cfg.nr_tasks()
                ));
                out.push_str(&format!(" {:>14}: {t} [sec]\n", "Total time"));
            }
            PerfBenchFormat::Simple => out.push_str(&format!("{t}\n")),
        },
    }
    out
}

const CLASSIC_USAGE: &str = "Usage: hackbench [-pipe] <num groups> [process|thread] [loops]";

/// `hackbench ...` — classic positional syntax if the words are all positional (or start
/// with `-pipe`), rt-tests getopt syntax otherwise. Mixing the two is refused: rt-tests would
/// silently ignore the positional words, which is never what the user meant.
pub fn parse_hackbench(args: &[String]) -> InputResult<HackbenchConfig> {
    let classic =
        args.first().is_some_and(|a| a == "-pipe") || args.iter().all(|a| !a.starts_with('-'));
    if classic {
        parse_classic(args)
    } else {
        parse_rt_tests(args)
    }
}

/// Classic hackbench: `[-pipe] <num groups> [process|thread] [loops]`.
pub fn parse_classic(args: &[String]) -> InputResult<HackbenchConfig> {
    let mut cfg = HackbenchConfig::defaults(HackbenchVariant::Classic);
    let mut rest = args;
    if rest.first().is_some_and(|a| a == "-pipe") {
        cfg.ipc = HackbenchIpc::Pipe;
        rest = &rest[1..];
    }
    let usage = |what: &str| InputError::new("hackbench", format!("{what}; {CLASSIC_USAGE}"));
    if let Some(g) = rest.first() {
        // atoi() == 0 → usage, as the program does; negative values would wrap in its unsigned
        // variable, which we refuse instead.
        let v = cmdline::atoi(g);
        if v <= 0 || v > i64::from(u32::MAX) {
            return Err(usage(&format!("bad number of groups '{g}'")));
        }
        cfg.groups = v as u32;
    }
    if let Some(m) = rest.get(1) {
        cfg.mode = match m.as_str() {
            "process" => HackbenchMode::Process,
            "thread" => HackbenchMode::Thread,
            _ => return Err(usage(&format!("bad mode '{m}' (process or thread)"))),
        };
    }
    if let Some(l) = rest.get(2) {
        let v = cmdline::atoi(l);
        if v < 0 || v > i64::from(u32::MAX) {
            return Err(usage(&format!("bad loops '{l}'")));
        }
        cfg.loops = v as u32;
    }
    if rest.len() > 3 {
        // The program ignores extra words; we flag them since they are surely a mistake.
        return Err(usage(&format!("unexpected argument '{}'", rest[3])));
    }
    Ok(cfg)
}

const RT_TESTS_LONGOPTS: &[LongOpt] = &[
    lo("fds", true, 'f'),
    lo("fifo", false, 'F'),
    lo("groups", true, 'g'),
    lo("help", false, 'h'),
    lo("loops", true, 'l'),
    lo("pipe", false, 'p'),
    lo("inet", false, 'i'),
    lo("datasize", true, 's'),
    lo("threads", false, 'T'),
    lo("processes", false, 'P'),
];

/// rt-tests hackbench: `getopt_long(argc, argv, "f:Fg:hl:pis:TP", ...)`.
pub fn parse_rt_tests(args: &[String]) -> InputResult<HackbenchConfig> {
    let mut cfg = HackbenchConfig::defaults(HackbenchVariant::RtTests);
    let err = |m: String| InputError::new("hackbench", m);
    let p = cmdline::getopt_long(
        "hackbench",
        args,
        "f:Fg:hl:pis:TP",
        RT_TESTS_LONGOPTS,
        OptStyle::Glibc,
    )
    .map_err(err)?;
    let mut pipe = false;
    let mut inet = false;
    for o in &p.opts {
        let positive = |name: &str| -> InputResult<u32> {
            let v = cmdline::atoi(o.arg.as_deref().unwrap_or(""));
            if v <= 0 || v > i64::from(u32::MAX) {
                Err(err(format!("hackbench: {name} requires an integer > 0")))
            } else {
                Ok(v as u32)
            }
        };
        match o.id {
            'f' => cfg.fds = positive("--fds|-f")?,
            'F' => cfg.fifo = true,
            'g' => cfg.groups = positive("--groups|-g")?,
            'l' => cfg.loops = positive("--loops|-l")?,
            's' => cfg.data_size_bytes = positive("--datasize|-s")?,
            'p' => pipe = true,
            'i' => inet = true,
            'T' => cfg.mode = HackbenchMode::Thread,
            'P' => cfg.mode = HackbenchMode::Process,
            'h' => return Err(err("-h/--help prints usage; nothing to simulate".into())),
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if pipe && inet {
        return Err(err(
            "hackbench: --pipe|-p and --inet|-i cannot be used together".into(),
        ));
    }
    cfg.ipc = if pipe {
        HackbenchIpc::Pipe
    } else if inet {
        HackbenchIpc::Inet
    } else {
        HackbenchIpc::Socket
    };
    if let Some(w) = p.positional.first() {
        // rt-tests ignores positional words; mixing syntaxes is refused (see parse_hackbench).
        return Err(err(format!(
            "unexpected argument '{w}': rt-tests hackbench takes only options \
             (classic syntax is `hackbench [-pipe] <groups> [process|thread] [loops]` without options)"
        )));
    }
    Ok(cfg)
}

const PERF_MESSAGING_LONGOPTS: &[LongOpt] = &[
    lo("pipe", false, 'p'),
    lo("thread", false, 't'),
    lo("group", true, 'g'),
    lo("nr_loops", true, 'l'),
];

/// What `perf bench` modes are modelled, for error messages.
pub const PERF_BENCH_MODELLED: &str =
    "only `perf bench sched messaging` and `perf bench sched pipe` are modelled";

/// `perf bench [-f default|simple] COLLECTION BENCHMARK ARGS...` taken apart: perf bench's own
/// format option, the collection and benchmark names, and the benchmark's own words.
#[derive(Debug, Clone, Copy)]
pub struct PerfBench<'a> {
    pub format: PerfBenchFormat,
    pub collection: &'a str,
    pub bench: &'a str,
    pub args: &'a [String],
}

/// Split the words after `perf` into a [`PerfBench`]; anything but `perf bench` with a
/// collection and a benchmark name is an error naming what is modelled.
pub fn parse_perf_bench(args: &[String]) -> InputResult<PerfBench<'_>> {
    let err = |m: String| InputError::new("perf", m);
    let unmodelled = || {
        err(format!(
            "{PERF_BENCH_MODELLED}, got `perf {}`",
            crate::input::limits::clip_words(&args.join(" "))
        ))
    };
    let mut format = PerfBenchFormat::Default;
    let mut i = 0;
    if args.get(i).map(String::as_str) != Some("bench") {
        return Err(unmodelled());
    }
    i += 1;
    // perf bench's own options come before the collection name.
    while let Some(a) = args.get(i) {
        let fmt = if a == "-f" || a == "--format" {
            i += 1;
            args.get(i).cloned()
        } else if let Some(v) = a.strip_prefix("--format=") {
            Some(v.to_string())
        } else if let Some(v) = a.strip_prefix("-f").filter(|v| !v.is_empty()) {
            Some(v.to_string())
        } else {
            break;
        };
        format = match fmt.as_deref() {
            Some("default") => PerfBenchFormat::Default,
            Some("simple") => PerfBenchFormat::Simple,
            Some(other) => {
                return Err(err(format!(
                    "Unknown format descriptor: '{other}' (default or simple)"
                )));
            }
            None => return Err(err("Error: option `format' requires a value".into())),
        };
        i += 1;
    }
    match (args.get(i), args.get(i + 1)) {
        (Some(collection), Some(bench)) => Ok(PerfBench {
            format,
            collection,
            bench,
            args: &args[i + 2..],
        }),
        _ => Err(unmodelled()),
    }
}

/// `perf bench [-f default|simple] sched messaging [options]`; `args` are the words after
/// `perf`.
pub fn parse_perf(args: &[String]) -> InputResult<HackbenchConfig> {
    let cmd = parse_perf_bench(args)?;
    if (cmd.collection, cmd.bench) != ("sched", "messaging") {
        return Err(InputError::new(
            "perf",
            format!(
                "{PERF_BENCH_MODELLED}, got `perf {}`",
                crate::input::limits::clip_words(&args.join(" "))
            ),
        ));
    }
    parse_perf_messaging(cmd.args, cmd.format)
}

/// The options after `perf bench [-f FMT] sched messaging`.
pub fn parse_perf_messaging(
    rest: &[String],
    format: PerfBenchFormat,
) -> InputResult<HackbenchConfig> {
    let err = |m: String| InputError::new("perf", m);
    let mut cfg = HackbenchConfig::defaults(HackbenchVariant::PerfBench);
    cfg.perf_format = format;
    let p = cmdline::getopt_long(
        "perf",
        rest,
        "ptg:l:",
        PERF_MESSAGING_LONGOPTS,
        OptStyle::Perf,
    )
    .map_err(err)?;
    for o in &p.opts {
        let uint = |c: char| -> InputResult<u32> {
            let a = o.arg.as_deref().unwrap_or("");
            if a.starts_with('-') {
                return Err(err(format!(
                    "Error: switch `{c}' expects an unsigned numerical value"
                )));
            }
            a.parse::<u32>()
                .map_err(|_| err(format!("Error: switch `{c}' expects a numerical value")))
        };
        match o.id {
            'p' => cfg.ipc = HackbenchIpc::Pipe,
            't' => cfg.mode = HackbenchMode::Thread,
            'g' => cfg.groups = uint('g')?,
            'l' => cfg.loops = uint('l')?,
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(w) = p.positional.first() {
        return Err(err(format!(
            "unexpected argument '{w}' after `perf bench sched messaging`"
        )));
    }
    Ok(cfg)
}

/// A `[workload]` count that must be at least 1 (`groups`, `fds`, `data_size`).
pub type PositiveU32 = crate::input::keys::UInt<1, { u32::MAX as u64 }>;

/// `[workload] kind = "hackbench"` keys: the same [`HackbenchConfig`] fields as the command
/// line's options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HackbenchKeys {
    pub variant: Option<HackbenchVariant>,
    pub groups: Option<PositiveU32>,
    pub fds: Option<PositiveU32>,
    pub loops: Option<u32>,
    pub data_size: Option<PositiveU32>,
    pub mode: Option<HackbenchMode>,
    pub ipc: Option<HackbenchIpc>,
    pub fifo: Option<bool>,
}

/// Apply `[workload]` keys to `base` (a parsed command line) or, without one, to the defaults
/// of the `variant` key (rt-tests by default). `err(key, message)` builds the error for a key.
pub fn from_keys(
    base: Option<HackbenchConfig>,
    keys: &HackbenchKeys,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<HackbenchConfig> {
    let variant = keys.variant;
    let mut cfg = match base {
        Some(mut c) => {
            if let Some(v) = variant {
                c.variant = v;
            }
            c
        }
        None => HackbenchConfig::defaults(variant.unwrap_or(HackbenchVariant::RtTests)),
    };
    let positive = |v: PositiveU32| u32::try_from(v.get()).expect("PositiveU32 fits u32");
    if let Some(v) = keys.groups {
        cfg.groups = positive(v);
    }
    if let Some(v) = keys.fds {
        cfg.fds = positive(v);
    }
    if let Some(v) = keys.loops {
        cfg.loops = v;
    }
    if let Some(v) = keys.data_size {
        cfg.data_size_bytes = positive(v);
    }
    if let Some(m) = keys.mode {
        cfg.mode = m;
    }
    if let Some(ipc) = keys.ipc {
        cfg.ipc = ipc;
    }
    if let Some(b) = keys.fifo {
        cfg.fifo = b;
    }
    if cfg.variant != HackbenchVariant::RtTests
        && (cfg.fds != DEFAULT_FDS || cfg.data_size_bytes != DEFAULT_DATA_SIZE_BYTES || cfg.fifo)
    {
        return Err(err(
            "variant",
            "fds, data_size and fifo can only be changed in the rt-tests variant (classic and perf fix F = 20, 100 bytes)".into(),
        ));
    }
    if cfg.ipc == HackbenchIpc::Inet && cfg.variant != HackbenchVariant::RtTests {
        return Err(err(
            "ipc",
            "inet exists only in the rt-tests variant".into(),
        ));
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        cmdline::split_words(s).unwrap()
    }

    #[test]
    fn classic_issue_example() {
        let c = parse_hackbench(&w("100 process 20000")).unwrap();
        assert_eq!(c.variant, HackbenchVariant::Classic);
        assert_eq!((c.groups, c.fds, c.loops), (100, 20, 20000));
        assert_eq!(c.mode, HackbenchMode::Process);
        assert_eq!(c.nr_tasks(), 4000);
        assert_eq!(c.messages_per_sender(), 400_000);
        assert_eq!(c.total_messages(), 100 * 20 * 20 * 20000);
        let c = parse_hackbench(&w("-pipe 50 thread")).unwrap();
        assert_eq!(
            (c.ipc, c.mode, c.groups, c.loops),
            (HackbenchIpc::Pipe, HackbenchMode::Thread, 50, 100)
        );
    }

    #[test]
    fn classic_errors() {
        let e = parse_hackbench(&w("0")).unwrap_err();
        assert!(e.message.contains(CLASSIC_USAGE), "{e}");
        let e = parse_hackbench(&w("10 fork")).unwrap_err();
        assert!(e.message.contains("bad mode 'fork'"), "{e}");
    }

    #[test]
    fn rt_tests_options() {
        let c = parse_hackbench(&w("-p -T -g 4 -l 1000 -s 512 -f 10")).unwrap();
        assert_eq!(c.variant, HackbenchVariant::RtTests);
        assert_eq!(
            (c.groups, c.fds, c.loops, c.data_size_bytes),
            (4, 10, 1000, 512)
        );
        assert_eq!((c.ipc, c.mode), (HackbenchIpc::Pipe, HackbenchMode::Thread));
        let c = parse_hackbench(&w("--groups=2 --threads --processes --fifo")).unwrap();
        assert_eq!(
            (c.groups, c.mode, c.fifo),
            (2, HackbenchMode::Process, true)
        );
        assert_eq!(c.nr_tasks(), 80);
    }

    #[test]
    fn rt_tests_errors_use_program_text() {
        assert_eq!(
            parse_hackbench(&w("-g 0")).unwrap_err().message,
            "hackbench: --groups|-g requires an integer > 0"
        );
        assert_eq!(
            parse_hackbench(&w("-x")).unwrap_err().message,
            "hackbench: invalid option -- 'x'"
        );
        assert_eq!(
            parse_hackbench(&w("-p -i")).unwrap_err().message,
            "hackbench: --pipe|-p and --inet|-i cannot be used together"
        );
        assert!(parse_hackbench(&w("-g 4 10")).is_err());
    }

    #[test]
    fn perf_options_and_errors() {
        let c = parse_perf(&w("bench sched messaging -p -t -g 20 -l 10000")).unwrap();
        assert_eq!(c.variant, HackbenchVariant::PerfBench);
        assert_eq!((c.groups, c.loops, c.fds), (20, 10000, 20));
        assert_eq!((c.ipc, c.mode), (HackbenchIpc::Pipe, HackbenchMode::Thread));
        let c = parse_perf(&w("bench -f simple sched messaging")).unwrap();
        assert_eq!(
            (c.groups, c.loops, c.perf_format),
            (10, 100, PerfBenchFormat::Simple)
        );
        // Texts as perf 6.1 prints them on this machine (`perf bench sched messaging -x`).
        assert_eq!(
            parse_perf(&w("bench sched messaging -x"))
                .unwrap_err()
                .message,
            "Error: unknown switch `x'"
        );
        assert_eq!(
            parse_perf(&w("bench sched messaging -g abc"))
                .unwrap_err()
                .message,
            "Error: switch `g' expects a numerical value"
        );
        assert!(parse_perf(&w("bench sched pipe")).is_err());
    }

    #[test]
    fn time_is_truncated_to_ms() {
        assert_eq!(sec_msec(1_234_999_999), "1.234");
        assert_eq!(sec_msec(172_000_000), "0.172");
        assert_eq!(sec_msec(5_000_000_000), "5.000");
    }

    /// Captured on this machine (perf 6.1.187): `perf bench sched messaging -l 10` printed
    /// exactly these lines (the measured time differs: 0.250).
    #[test]
    fn perf_format_matches_capture() {
        let c = parse_perf(&w("bench sched messaging -l 10")).unwrap();
        let out = format_report(
            &c,
            &HackbenchResult {
                elapsed_ns: 250_400_000,
            },
        );
        assert_eq!(
            out,
            "# Running 'sched/messaging' benchmark:\n\
             # 20 sender and receiver processes per group\n\
             # 10 groups == 400 processes run\n\
             \n     Total time: 0.250 [sec]\n"
        );
        let c = parse_perf(&w("bench sched messaging -t -g 2 -l 10")).unwrap();
        let out = format_report(
            &c,
            &HackbenchResult {
                elapsed_ns: 13_000_000,
            },
        );
        assert!(out.contains(
            "# 20 sender and receiver threads per group\n# 2 groups == 80 threads run\n"
        ));
        let c = parse_perf(&w("bench -f simple sched messaging -g 1 -l 5")).unwrap();
        assert_eq!(
            format_report(
                &c,
                &HackbenchResult {
                    elapsed_ns: 25_000_000
                }
            ),
            "0.025\n"
        );
    }

    /// Transcribed from the programs' printf formats (reference/workloads.md §2.6).
    #[test]
    fn rt_tests_and_classic_formats() {
        let c = parse_hackbench(&w("-g 10")).unwrap();
        assert_eq!(
            format_report(
                &c,
                &HackbenchResult {
                    elapsed_ns: 172_400_000
                }
            ),
            "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\n\
             Each sender will pass 100 messages of 100 bytes\nTime: 0.172\n"
        );
        let c = parse_hackbench(&w("-T")).unwrap();
        assert!(
            format_report(&c, &HackbenchResult::default()).starts_with("Running in threaded mode")
        );
        let c = parse_hackbench(&w("10")).unwrap();
        assert_eq!(
            format_report(
                &c,
                &HackbenchResult {
                    elapsed_ns: 1_234_000_000
                }
            ),
            "Running with 10*40 (== 400) tasks.\nTime: 1.234\n"
        );
    }
}
