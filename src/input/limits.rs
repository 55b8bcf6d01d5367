//! Named limits on everything a user can size, in one place (README, "Limits").
//!
//! Each limit is checked before the work it bounds is done (before tasks are allocated,
//! before a file is read past the limit), and a breach is one [`InputError`] naming the key
//! and the limit. The limits a user may legitimately need to raise are scenario keys
//! (`run.max_tasks`, `run.max_duration_s`); the others guard against input that no real
//! benchmark or machine description needs.

use std::io::Read;
use std::path::Path;

use crate::error::{InputError, InputResult};

/// Simulator memory per simulated task, measured: `hackbench -g 1000 -l 1` (40 000 tasks)
/// peaks at 466 MB resident, `schbench -m 10 -t 1000` (10 010 tasks) at 112 MB: about
/// 11.5 KiB per task, rounded up.
pub const BYTES_PER_TASK: u64 = 12 * 1024;

/// The default memory budget of one run: 2 GiB. Parallel runs (`--runs N`) each use one.
pub const DEFAULT_MEMORY_BUDGET_BYTES: u64 = 2 << 30;

/// Default of `run.max_tasks`: the tasks that fit the default memory budget (174 762).
pub const DEFAULT_MAX_TASKS: u64 = DEFAULT_MEMORY_BUDGET_BYTES / BYTES_PER_TASK;

/// Hard ceiling of `run.max_tasks` (64 GiB of simulator memory).
pub const MAX_TASKS_CEILING: u64 = (64 << 30) / BYTES_PER_TASK;

/// Default of `run.max_duration_s`: one simulated day, the longest default length of a
/// modelled benchmark (stress-ng without `--timeout`).
pub const DEFAULT_MAX_DURATION_S: f64 = 86_400.0;

/// Hard ceiling of `run.max_duration_s` (one simulated year): simulated nanoseconds stay
/// far from `u64` overflow.
pub const MAX_DURATION_CEILING_S: f64 = 365.0 * 86_400.0;
/// The shortest `run.duration_s` / `run.max_duration_s`: one microsecond. The simulated clock
/// counts nanoseconds, and a shorter run would round to (almost) nothing.
pub const MIN_DURATION_S: f64 = 1e-6;

/// Largest `[machine.cost]` time (every `*_ns` key): one second. No single kernel operation
/// the cost model charges comes near it; a larger value only makes the simulated time cap
/// end the run.
pub const MAX_COST_NS: u64 = 1_000_000_000;

/// Largest input file read: scenario TOML, rt-app JSON, hwloc XML, topology TOML, and every
/// file of a sysfs snapshot.
pub const MAX_INPUT_FILE_BYTES: u64 = 16 << 20;

/// Largest results JSON read back (`schedlab report`): results carry every task of every
/// run (about 750 bytes per task and run), so they may be far larger than a scenario.
pub const MAX_RESULTS_FILE_BYTES: u64 = 1 << 30;

/// Longest line of a text trace read back (`schedlab report --trace`); a schedlab ftrace
/// line is under 200 bytes.
pub const MAX_TRACE_LINE_BYTES: usize = 4096;

/// Most runs of one scenario (`run.runs`, `--runs`).
pub const MAX_RUNS: u64 = 100_000;

/// Most copies of one rt-app task (`"instance"`).
pub const MAX_RTAPP_INSTANCES: u64 = 100_000;

/// Most client/server pairs of tbench (`tbench N`, `clients`).
pub const MAX_CLIENTS: u64 = 100_000;

/// Most round trips of `perf bench sched pipe` (`-l`, `loops`): perf keeps the count in an
/// `int`.
pub const MAX_SCHED_PIPE_LOOPS: u32 = i32::MAX as u32;

/// Characters of a user-given name echoed in a message; longer names are clipped.
pub const MAX_ECHOED_NAME_CHARS: usize = 64;

/// Longest variant name (it heads a column of the compare table and names runs in JSON).
pub const MAX_VARIANT_NAME_CHARS: usize = 64;

/// Why `name` cannot name a variant: empty, longer than [`MAX_VARIANT_NAME_CHARS`], or holding
/// a control character (a newline would break the table and every one-line message).
pub fn variant_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a variant name cannot be empty".into());
    }
    if name.chars().count() > MAX_VARIANT_NAME_CHARS {
        return Some(format!(
            "variant name '{}' is longer than {MAX_VARIANT_NAME_CHARS} characters",
            clip(name)
        ));
    }
    if name.chars().any(char::is_control) {
        return Some(format!(
            "variant name '{}' holds a control character; accepted: printable text",
            clip(name)
        ));
    }
    None
}

/// `name` clipped to [`MAX_ECHOED_NAME_CHARS`] for a message (`abc…` plus its full length; a
/// path keeps its end instead, `…/cpu1/topology/core_id`, since the file is what matters;
/// control characters are escaped).
pub fn clip(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().any(char::is_control) {
        // A newline or other control character in a user-given name is written as its
        // escape (`\n`), so the message stays on one line.
        let escaped = crate::error::escape_controls(name).into_owned();
        return std::borrow::Cow::Owned(clip(&escaped).into_owned());
    }
    if name.chars().count() <= MAX_ECHOED_NAME_CHARS {
        return std::borrow::Cow::Borrowed(name);
    }
    if name.contains('/') {
        // A path: its end (the file) is what tells the user where to look.
        let n = name.chars().count();
        let tail: String = name.chars().skip(n - MAX_ECHOED_NAME_CHARS).collect();
        return std::borrow::Cow::Owned(format!("...{tail} ({} bytes)", name.len()));
    }
    let head: String = name.chars().take(MAX_ECHOED_NAME_CHARS).collect();
    std::borrow::Cow::Owned(format!("{head}... ({} bytes)", name.len()))
}

/// `text` with every word longer than [`MAX_ECHOED_NAME_CHARS`] clipped by [`clip`]: a
/// message never echoes a huge user-given name whole.
pub fn clip_words(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .split(' ')
        .any(|w| w.chars().count() > MAX_ECHOED_NAME_CHARS)
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let words: Vec<_> = text.split(' ').map(clip_word).collect();
    std::borrow::Cow::Owned(words.join(" "))
}

/// [`clip`] for one word of a message: the quotes, brackets and punctuation around the name
/// stay around its clipped form (`'xxx... (100000 bytes)';`), and a name already clipped
/// (its `...` is trailing punctuation) is not clipped twice.
fn clip_word(word: &str) -> std::borrow::Cow<'_, str> {
    const OPEN: &[char] = &['\'', '"', '(', '[', '`'];
    const CLOSE: &[char] = &['\'', '"', ')', ']', '`', ',', ';', ':', '.'];
    let inner = word.trim_start_matches(OPEN);
    let core = inner.trim_end_matches(CLOSE);
    if core.chars().count() <= MAX_ECHOED_NAME_CHARS {
        return std::borrow::Cow::Borrowed(word);
    }
    let open = &word[..word.len() - inner.len()];
    let close = &inner[core.len()..];
    std::borrow::Cow::Owned(format!("{open}{}{close}", clip(core)))
}

/// Read a text file of at most [`MAX_INPUT_FILE_BYTES`] with a bounded reader (so
/// `/dev/zero` or a FIFO fails cleanly instead of filling memory). The error is the text
/// after `origin: ` — callers add the origin and key.
pub fn read_text(path: &Path) -> Result<String, String> {
    read_text_limited(path, MAX_INPUT_FILE_BYTES)
}

/// [`read_text`] with another size limit (`limit` bytes).
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let mut buf = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if buf.len() as u64 > limit {
        return Err(format!(
            "file is larger than the input limit of {} MiB (accepted: a regular text file)",
            limit >> 20
        ));
    }
    String::from_utf8(buf).map_err(|_| "file is not UTF-8 text".to_string())
}

/// A buffered reader whose lines are at most `max` bytes: a longer line (a binary file,
/// `/dev/zero`) is an `InvalidData` error once `max` bytes have passed without a newline,
/// instead of a line that grows until memory runs out. Total size is not bounded.
pub struct BoundedLines<R> {
    inner: R,
    since_newline: usize,
    max: usize,
}

impl<R: std::io::BufRead> BoundedLines<R> {
    pub fn new(inner: R, max: usize) -> Self {
        BoundedLines {
            inner,
            since_newline: 0,
            max,
        }
    }
}

impl<R: std::io::BufRead> Read for BoundedLines<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        let n = {
            let avail = self.fill_buf()?;
            let n = avail.len().min(out.len());
            out[..n].copy_from_slice(&avail[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for BoundedLines<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.since_newline > self.max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line is longer than {} bytes", self.max),
            ));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        // The bytes being consumed are still in the inner buffer (no I/O here).
        if let Ok(buf) = self.inner.fill_buf() {
            let chunk = &buf[..amt.min(buf.len())];
            self.since_newline = match chunk.iter().rposition(|&b| b == b'\n') {
                Some(i) => chunk.len() - i - 1,
                None => self.since_newline + chunk.len(),
            };
        }
        self.inner.consume(amt);
    }
}

/// [`read_text`] with the error as an [`InputError`] of `origin`.
pub fn read_input(path: &Path, origin: &str) -> InputResult<String> {
    read_text(path).map_err(|m| InputError::new(origin, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_zero_is_refused_without_reading_it_all() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.contains("larger than the input limit of 16 MiB"), "{e}");
    }

    #[test]
    fn dev_zero_lines_are_refused_without_reading_it_all() {
        use std::io::BufRead;
        let zero = std::fs::File::open("/dev/zero").unwrap();
        let r = BoundedLines::new(std::io::BufReader::new(zero), MAX_TRACE_LINE_BYTES);
        let e = r.lines().next().unwrap().unwrap_err();
        assert!(e.to_string().contains("longer than 4096 bytes"), "{e}");
        // Ordinary lines pass whole, whatever the total size.
        let text = "a\n".repeat(10_000) + &"b".repeat(4000);
        let r = BoundedLines::new(text.as_bytes(), MAX_TRACE_LINE_BYTES);
        let lines: Vec<String> = r.lines().collect::<Result<_, _>>().unwrap();
        assert_eq!(lines.len(), 10_001);
        assert_eq!(lines[10_000].len(), 4000);
    }

    #[test]
    fn clipped_words_keep_their_quotes_and_are_clipped_once() {
        let name = "x".repeat(100_000);
        let msg = format!("unknown machine '{name}'; accepted: a preset");
        let c = clip_words(&msg);
        assert!(
            c.ends_with("... (100000 bytes)'; accepted: a preset"),
            "{c}"
        );
        // A message built around an already clipped name is left as it is.
        let once = format!("unknown feature '{}'", clip(&name));
        assert_eq!(clip_words(&once), once);
        let path = format!("(/{}/f.json);", "d".repeat(100));
        let c = clip_words(&path);
        assert!(
            c.starts_with("(...") && c.ends_with("/f.json (108 bytes));"),
            "{c}"
        );
    }

    #[test]
    fn long_names_are_clipped() {
        let long = "x".repeat(100_000);
        let c = clip(&long);
        assert!(c.len() < 100, "{c}");
        assert!(c.ends_with("(100000 bytes)"));
        assert_eq!(clip("skl-2s"), "skl-2s");
        assert_eq!(DEFAULT_MAX_TASKS, 174_762);
    }
}
