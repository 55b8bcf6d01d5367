//! `schedlab host-trace`: one command run twice, on this machine's kernel with its scheduler
//! tracepoints recorded through tracefs, and on the model's `-m host` with `--trace`, and
//! the two traces read into the same [`Dynamics`] — so a count that differs (context
//! switches/s, migrations/s) can be followed to the decision that makes it differ: where
//! wakeups place the wakee, how long a woken task waits, how long tasks run before they
//! block or are preempted.
//!
//! The real side needs root and tracefs (`/sys/kernel/tracing`, or the older
//! `/sys/kernel/debug/tracing`). It records `sched_switch`, `sched_waking`, `sched_wakeup`,
//! `sched_wakeup_new`, `sched_migrate_task` and `sched_process_fork`; the command's tasks are
//! its process tree, found from the fork events. Tracing costs the real run a little time
//! (each event is a few hundred nanoseconds), so compare shapes and ratios, not the
//! elapsed time: `host-measure` measures that untraced. The tracing settings it changes
//! (`set_event`, `buffer_size_kb`, `tracing_on`) are restored afterwards, and a full
//! ring buffer (events lost) is reported, never silently read as a shorter run.
//!
//! [`Dynamics`]: crate::stats::dynamics::Dynamics

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{InputError, InputResult};
use crate::stats::trace::ftrace_reader::{SchedEvent, TraceRecord};

/// Where tracefs may be mounted, newest first.
pub const TRACEFS_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The tracepoints recorded.
pub const EVENTS: [&str; 6] = [
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_wakeup_new",
    "sched:sched_migrate_task",
    "sched:sched_process_fork",
];

/// Default ring buffer per CPU (KiB): ~1.3 M events per CPU, a 5 s hackbench on 2 CPUs.
pub const BUFFER_KB_DEFAULT: u64 = 65_536;

/// Largest ring buffer per CPU `--buffer-kb` accepts (KiB).
pub const BUFFER_KB_MAX: u64 = 4_194_304;

/// Most runs a side `host-trace --runs` accepts.
pub const MAX_RUNS: usize = 20;

/// What a real traced run left besides the trace file (saved beside it in
/// `real-runs.json`, so a later `host-trace --reuse-real` can read the same runs).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RealRun {
    /// The command as run.
    pub command: String,
    /// Its trace's file name (in the same directory as this record).
    pub trace: String,
    /// The command's pid: the root of its process tree.
    pub root_pid: u32,
    pub elapsed_s: f64,
    /// Events the ring buffer dropped (`entries-written` − `entries-in-buffer`).
    pub lost_events: u64,
}

/// The mounted tracefs directory, or why there is none usable.
pub fn tracefs_dir() -> InputResult<PathBuf> {
    TRACEFS_DIRS
        .iter()
        .map(PathBuf::from)
        .find(|d| d.join("set_event").exists())
        .ok_or_else(|| {
            InputError::new(
                "host-trace",
                format!(
                    "no tracefs at {} (mount it: mount -t tracefs nodev /sys/kernel/tracing; \
                     needs root)",
                    TRACEFS_DIRS.join(" or ")
                ),
            )
        })
}

/// Run `argv` with the scheduler tracepoints on and write tracefs' `trace` file to `out`;
/// the command's own output goes to `out` with `.out` appended.
pub fn capture(argv: &[String], out: &Path, buffer_kb: u64) -> InputResult<RealRun> {
    assert!((1..=BUFFER_KB_MAX).contains(&buffer_kb));
    let program = argv
        .first()
        .ok_or_else(|| InputError::new("host-trace", "no command to run after `--`"))?;
    let dir = tracefs_dir()?;
    check_events(&dir)?;
    let guard = Settings::save(&dir)?;
    guard.write("tracing_on", "0")?;
    guard.write("set_event", &EVENTS.join(" "))?;
    guard.write("buffer_size_kb", &buffer_kb.to_string())?;
    guard.write("trace", "")?;
    let log_path = PathBuf::from(format!("{}.out", out.display()));
    let log = std::fs::File::create(&log_path).map_err(|e| file_error(&log_path, &e))?;
    let log_err = log.try_clone().map_err(|e| file_error(&log_path, &e))?;
    guard.write("tracing_on", "1")?;
    let started = std::time::Instant::now();
    let child = Command::new(program)
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn();
    let status = child.and_then(|mut c| c.wait().map(|s| (c.id(), s)));
    let elapsed_s = started.elapsed().as_secs_f64();
    guard.write("tracing_on", "0")?;
    let (root_pid, status) =
        status.map_err(|e| InputError::new("host-trace", format!("cannot run {program}: {e}")))?;
    if !status.success() {
        return Err(InputError::new(
            "host-trace",
            format!(
                "`{}` failed ({status}); its output: {}",
                argv.join(" "),
                log_path.display()
            ),
        ));
    }
    let lost_events = copy_trace(&dir.join("trace"), out)?;
    drop(guard);
    Ok(RealRun {
        command: argv.join(" "),
        trace: out
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        root_pid,
        elapsed_s,
        lost_events,
    })
}

/// `root` and every task forked from it, from the trace's `sched_process_fork` events.
pub fn process_tree(records: &[TraceRecord], root: u32) -> BTreeSet<u32> {
    let mut tree = BTreeSet::from([root]);
    for r in records {
        if let SchedEvent::Fork {
            parent_pid,
            child_pid,
        } = r.event
            && tree.contains(&parent_pid)
        {
            tree.insert(child_pid);
        }
    }
    tree
}

fn check_events(dir: &Path) -> InputResult<()> {
    let path = dir.join("available_events");
    let text = std::fs::read_to_string(&path).map_err(|e| file_error(&path, &e))?;
    let available: BTreeSet<&str> = text.lines().collect();
    match EVENTS.iter().find(|e| !available.contains(*e)) {
        Some(missing) => Err(InputError::new(
            path.display().to_string(),
            format!("this kernel has no tracepoint {missing}"),
        )),
        None => Ok(()),
    }
}

/// Copy tracefs' `trace` file to `out`; returns the events the ring buffer dropped, from its
/// header line `# entries-in-buffer/entries-written: IN/WRITTEN   #P:N`.
fn copy_trace(from: &Path, out: &Path) -> InputResult<u64> {
    let text = std::fs::read(from).map_err(|e| file_error(from, &e))?;
    crate::output::write_atomic("--out", out, &text)?;
    let header = BufReader::new(&text[..])
        .lines()
        .map_while(Result::ok)
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| entries_lost(&l));
    Ok(header.unwrap_or(0))
}

/// `# entries-in-buffer/entries-written: 1000/1200   #P:2` -> 200.
fn entries_lost(line: &str) -> Option<u64> {
    let rest = line.split("entries-written:").nth(1)?;
    let (kept, written) = rest.split_whitespace().next()?.split_once('/')?;
    Some(
        written
            .parse::<u64>()
            .ok()?
            .saturating_sub(kept.parse().ok()?),
    )
}

/// The size to write back to `buffer_size_kb` from what it read: `1408`, or, before the
/// buffer was first used, `7 (expanded: 1408)` (the size it will have: 1408).
fn buffer_size_to_restore(read: &str) -> String {
    match read.split_once("(expanded:") {
        Some((_, rest)) => rest.trim().trim_end_matches(')').trim().to_string(),
        None => read.split_whitespace().next().unwrap_or("").to_string(),
    }
}

fn file_error(path: &Path, e: &std::io::Error) -> InputError {
    InputError::new(path.display().to_string(), e.to_string())
}

/// The tracefs settings `capture` changes, restored when dropped.
struct Settings {
    dir: PathBuf,
    saved: Vec<(&'static str, String)>,
}

impl Settings {
    fn save(dir: &Path) -> InputResult<Settings> {
        let mut saved = Vec::new();
        for name in ["tracing_on", "set_event", "buffer_size_kb"] {
            let path = dir.join(name);
            let value = std::fs::read_to_string(&path).map_err(|e| file_error(&path, &e))?;
            saved.push((name, value));
        }
        Ok(Settings {
            dir: dir.to_path_buf(),
            saved,
        })
    }

    fn write(&self, name: &str, value: &str) -> InputResult<()> {
        let path = self.dir.join(name);
        std::fs::write(&path, value).map_err(|e| {
            InputError::new(
                path.display().to_string(),
                format!("cannot write '{value}': {e} (host-trace needs root)"),
            )
        })
    }
}

impl Drop for Settings {
    fn drop(&mut self) {
        for (name, value) in &self.saved {
            // `set_event` lists one event a line; writing the list back re-enables them
            // (an empty list disables every event).
            let value = match *name {
                "set_event" => value.split_whitespace().collect::<Vec<_>>().join(" "),
                "buffer_size_kb" => buffer_size_to_restore(value),
                _ => value.split_whitespace().next().unwrap_or("").to_string(),
            };
            // Best effort: the run's result stands even if a setting cannot be put back.
            let _ = std::fs::write(self.dir.join(name), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::trace::ftrace_reader::read_records;

    #[test]
    fn the_process_tree_follows_forks_from_the_root_only() {
        let text = "\
  sh-100 [000] ..... 1.000000: sched_process_fork: comm=sh pid=100 child_comm=sh child_pid=101
  sh-101 [000] ..... 1.000001: sched_process_fork: comm=sh pid=101 child_comm=perf child_pid=102
  cron-50 [001] ..... 1.000002: sched_process_fork: comm=cron pid=50 child_comm=cron child_pid=103
  perf-102 [001] ..... 1.000003: sched_process_fork: comm=perf pid=102 child_comm=perf child_pid=104
";
        let records = read_records(text.as_bytes(), "t").unwrap();
        assert_eq!(process_tree(&records, 101), BTreeSet::from([101, 102, 104]));
    }

    #[test]
    fn the_buffer_size_restored_is_the_expanded_one() {
        assert_eq!(buffer_size_to_restore("7 (expanded: 1408)\n"), "1408");
        assert_eq!(buffer_size_to_restore("16384\n"), "16384");
    }

    #[test]
    fn lost_events_come_from_the_header() {
        assert_eq!(
            entries_lost("# entries-in-buffer/entries-written: 1000/1200   #P:2"),
            Some(200)
        );
        assert_eq!(
            entries_lost("# entries-in-buffer/entries-written: 5/5   #P:2"),
            Some(0)
        );
        assert_eq!(entries_lost("# tracer: nop"), None);
    }
}
