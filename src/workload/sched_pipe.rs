//! `perf bench sched pipe` — two tasks ping-ponging one `int` over two pipes (Ingo Molnar's
//! pipe-test-1m, ported to perf as tools/perf/bench/sched-pipe.c), parsed from its real command
//! line, with its exact native output.
//!
//! The program: two pipes; worker 0 reads pipe 1 then writes pipe 2, worker 1 writes pipe 1
//! then reads pipe 2, `-l/--loop` times each (default 1 000 000), 4 bytes per write. By default
//! perf forks: the child is worker 0 and perf itself worker 1, and perf then `waitpid()`s the
//! child; with `-T/--threaded` perf creates both workers with `pthread_create()` and joins
//! them. The clock (`gettimeofday`, µs) starts before the fork/create and stops after the
//! wait/join, so the interval includes creating and reaping the workers. One "op" is one
//! round trip (a loop of worker 1).
//!
//! Accepted: perf 6.1's options `-l/--loop N` and `-T/--threaded`, after perf bench's own
//! `-f/--format default|simple`. Refused, each with its reason: `-G/--cgroups` (newer perf,
//! 2023: cgroups are not modelled), `-n/--nonblocking` (newer perf, 2024: `O_NONBLOCK` pipes
//! read after `epoll_wait()`, whose wakeup path — `ep_poll_callback()`, without WF_SYNC — is
//! not modelled), `-s/--write-size` (newer perf: payloads that spill into several pipe pages).
//! A loop count perf would take but that runs nothing (0 or negative: perf prints a negative
//! rate) is refused too.

use super::cmdline::{self, LongOpt, OptStyle, lo};
use super::hackbench::{HackbenchMode, PerfBenchFormat};
use crate::error::{InputError, InputResult};

/// perf's `LOOPS_DEFAULT`.
pub const DEFAULT_LOOPS: u32 = 1_000_000;
/// The largest `-l` (perf keeps the count in an `int`).
pub const MAX_LOOPS: u32 = crate::input::limits::MAX_SCHED_PIPE_LOOPS;
/// Bytes per write and per read: one `int`.
pub const PAYLOAD_BYTES: u64 = 4;

/// A parsed `perf bench sched pipe` invocation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchedPipeConfig {
    /// Round trips (`-l`).
    pub loops: u32,
    /// Forked processes (default) or threads (`-T`).
    pub mode: HackbenchMode,
    /// perf bench's `-f/--format`.
    pub perf_format: PerfBenchFormat,
}

impl Default for SchedPipeConfig {
    fn default() -> Self {
        SchedPipeConfig {
            loops: DEFAULT_LOOPS,
            mode: HackbenchMode::Process,
            perf_format: PerfBenchFormat::Default,
        }
    }
}

impl SchedPipeConfig {
    /// Simulated tasks: perf and its child (process mode), or perf's main thread and its two
    /// workers (`-T`).
    pub fn nr_tasks(&self) -> u64 {
        match self.mode {
            HackbenchMode::Process => 2,
            HackbenchMode::Thread => 3,
        }
    }

    /// The line `perf bench` prints before it runs a benchmark (not in the simple format).
    pub fn format_header(&self) -> String {
        match self.perf_format {
            PerfBenchFormat::Default => "# Running 'sched/pipe' benchmark:\n".into(),
            PerfBenchFormat::Simple => String::new(),
        }
    }
}

/// What the engine measured: the interval from before the fork/create until the workers were
/// reaped, at `gettimeofday`'s µs resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct SchedPipeResult {
    pub elapsed_ns: u64,
}

impl SchedPipeResult {
    /// `result_usec` of the program.
    pub fn usecs(&self) -> u64 {
        self.elapsed_ns / 1000
    }

    /// `usecs/op`: µs per round trip, as printed with `%lf`.
    pub fn usecs_per_op(&self, loops: u32) -> f64 {
        self.usecs() as f64 / f64::from(loops)
    }

    /// `ops/sec`: `(int)(loops / (usec / 1e6))`, truncated like the program's cast.
    pub fn ops_per_sec(&self, loops: u32) -> i64 {
        let v = f64::from(loops) / (self.usecs() as f64 / 1e6);
        if v.is_finite() { v as i64 } else { 0 }
    }
}

/// The program's complete stdout for one run (perf bench's header line included).
pub fn format_report(cfg: &SchedPipeConfig, res: &SchedPipeResult) -> String {
    let us = res.usecs();
    let t = format!("{}.{:03}", us / 1_000_000, (us % 1_000_000) / 1000);
    let mut out = cfg.format_header();
    match cfg.perf_format {
        PerfBenchFormat::Default => {
            let what = match cfg.mode {
                HackbenchMode::Thread => "threads",
                HackbenchMode::Process => "processes",
            };
            out.push_str(&format!(
                "# Executed {} pipe operations between two {what}\n\n",
                cfg.loops
            ));
            out.push_str(&format!(" {:>14}: {t} [sec]\n\n", "Total time"));
            out.push_str(&format!(
                " {:>14.6} usecs/op\n",
                res.usecs_per_op(cfg.loops)
            ));
            out.push_str(&format!(" {:>14} ops/sec\n", res.ops_per_sec(cfg.loops)));
        }
        PerfBenchFormat::Simple => out.push_str(&format!("{t}\n")),
    }
    out
}

const LONGOPTS: &[LongOpt] = &[
    lo("loop", true, 'l'),
    lo("threaded", false, 'T'),
    lo("nonblocking", false, 'n'),
    lo("cgroups", true, 'G'),
    lo("write-size", true, 's'),
];

/// What is accepted, for error messages.
const ACCEPTED: &str = "accepted: -l/--loop N (1 to 2147483647), -T/--threaded";

/// The loop count of `-l`: perf's `OPT_INTEGER` (a whole decimal `int`), and at least 1.
fn parse_loops(arg: &str) -> InputResult<u32> {
    let err = |m: String| InputError::new("perf", m);
    let v: i64 = arg.parse().map_err(|_| {
        err(format!(
            "Error: switch `l' expects a numerical value (accepted: 1 to {MAX_LOOPS} loops)"
        ))
    })?;
    if v < 1 || v > i64::from(MAX_LOOPS) {
        return Err(err(format!(
            "perf bench sched pipe: -l/--loop {v} is out of range; accepted: 1 to {MAX_LOOPS} \
             loops (perf runs no loop for 0 or less and prints a negative rate)"
        )));
    }
    Ok(v as u32)
}

/// The options after `perf bench [-f FMT] sched pipe`; `format` is perf bench's `-f`.
pub fn parse(args: &[String], format: PerfBenchFormat) -> InputResult<SchedPipeConfig> {
    let err = |m: String| InputError::new("perf", m);
    let p = cmdline::getopt_long("perf", args, "l:TnG:s:", LONGOPTS, OptStyle::Perf)
        .map_err(|m| err(format!("{m} ({ACCEPTED})")))?;
    let mut cfg = SchedPipeConfig {
        perf_format: format,
        ..SchedPipeConfig::default()
    };
    for o in &p.opts {
        match o.id {
            'l' => cfg.loops = parse_loops(o.arg.as_deref().unwrap_or(""))?,
            'T' => cfg.mode = HackbenchMode::Thread,
            'G' => {
                return Err(err(format!(
                    "perf bench sched pipe: {} (put the workers in cgroups) is not modelled: the \
                     simulator has no cgroups; {ACCEPTED}",
                    o.spelled
                )));
            }
            'n' => {
                return Err(err(format!(
                    "perf bench sched pipe: {} (O_NONBLOCK pipes read after epoll_wait()) is not \
                     modelled: epoll's wakeup path is not; {ACCEPTED}",
                    o.spelled
                )));
            }
            's' => {
                return Err(err(format!(
                    "perf bench sched pipe: {} is not modelled (only perf's 4-byte writes); \
                     {ACCEPTED}",
                    o.spelled
                )));
            }
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(w) = p.positional.first() {
        return Err(err(format!(
            "unexpected argument '{}' after `perf bench sched pipe`; {ACCEPTED}",
            crate::input::limits::clip(w)
        )));
    }
    Ok(cfg)
}

/// `[workload] kind = "sched-pipe"` keys: the command line's options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedPipeKeys {
    pub loops: Option<u32>,
    pub mode: Option<HackbenchMode>,
}

/// Apply `[workload]` keys to `base` (a parsed command line) or to the defaults.
/// `err(key, message)` builds the error for a key.
pub fn from_keys(
    base: Option<SchedPipeConfig>,
    keys: &SchedPipeKeys,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<SchedPipeConfig> {
    let mut cfg = base.unwrap_or_default();
    if let Some(l) = keys.loops {
        if !(1..=MAX_LOOPS).contains(&l) {
            return Err(err(
                "loops",
                crate::input::keys::expected(
                    &format!("an integer from 1 to {MAX_LOOPS}"),
                    format!("integer {l}"),
                ),
            ));
        }
        cfg.loops = l;
    }
    if let Some(m) = keys.mode {
        cfg.mode = m;
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
    fn defaults_loops_and_threads() {
        let c = parse(&[], PerfBenchFormat::Default).unwrap();
        assert_eq!(c, SchedPipeConfig::default());
        assert_eq!(
            (c.loops, c.mode, c.nr_tasks()),
            (1_000_000, HackbenchMode::Process, 2)
        );
        let c = parse(&w("-l 10000 -T"), PerfBenchFormat::Default).unwrap();
        assert_eq!(
            (c.loops, c.mode, c.nr_tasks()),
            (10_000, HackbenchMode::Thread, 3)
        );
        let c = parse(&w("--loop=5 --threaded"), PerfBenchFormat::Simple).unwrap();
        assert_eq!((c.loops, c.mode), (5, HackbenchMode::Thread));
        let c = parse(&w("-l7"), PerfBenchFormat::Default).unwrap();
        assert_eq!(c.loops, 7);
    }

    #[test]
    fn bad_options_name_the_option_and_what_is_accepted() {
        let e = |s: &str| parse(&w(s), PerfBenchFormat::Default).unwrap_err().message;
        // perf 6.1's own text for an unknown switch, then what we accept.
        assert_eq!(e("-x"), format!("Error: unknown switch `x' ({ACCEPTED})"));
        assert_eq!(
            e("-l abc"),
            "Error: switch `l' expects a numerical value (accepted: 1 to 2147483647 loops)"
        );
        assert!(e("-l 0").contains("-l/--loop 0 is out of range; accepted: 1 to 2147483647"));
        assert!(e("-l -5").contains("-l/--loop -5 is out of range"));
        assert!(e("-l 2147483648").contains("out of range"));
        assert!(e("-G a,b").contains("-G (put the workers in cgroups) is not modelled"));
        assert!(e("--cgroups=a,b").contains("--cgroups"));
        assert!(e("-n").contains("-n (O_NONBLOCK pipes read after epoll_wait()) is not modelled"));
        assert!(e("-s 4096").contains("-s is not modelled"));
        assert!(e("extra").contains("unexpected argument 'extra'"));
        assert!(ACCEPTED.contains(&MAX_LOOPS.to_string()));
        assert!(e("-l").contains("requires a value"));
    }

    /// Captured on this machine (perf 6.1.192): `perf bench sched pipe -l 100000` printed
    /// exactly these lines, `-T` the same with "threads", `-f simple` only the time.
    #[test]
    fn format_matches_capture() {
        let c = parse(&w("-l 100000"), PerfBenchFormat::Default).unwrap();
        let r = SchedPipeResult {
            elapsed_ns: 663_806_499,
        };
        assert_eq!(
            format_report(&c, &r),
            "# Running 'sched/pipe' benchmark:\n\
             # Executed 100000 pipe operations between two processes\n\
             \n     Total time: 0.663 [sec]\n\
             \n       6.638060 usecs/op\n         150646 ops/sec\n"
        );
        let c = parse(&w("-l 100000 -T"), PerfBenchFormat::Default).unwrap();
        let r = SchedPipeResult {
            elapsed_ns: 881_412_000,
        };
        assert_eq!(
            format_report(&c, &r),
            "# Running 'sched/pipe' benchmark:\n\
             # Executed 100000 pipe operations between two threads\n\
             \n     Total time: 0.881 [sec]\n\
             \n       8.814120 usecs/op\n         113454 ops/sec\n"
        );
        let c = parse(&w("-l 1000"), PerfBenchFormat::Simple).unwrap();
        let r = SchedPipeResult {
            elapsed_ns: 13_400_000,
        };
        assert_eq!(format_report(&c, &r), "0.013\n");
    }
}
