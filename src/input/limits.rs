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

/// Largest input file read: scenario TOML, rt-app JSON, hwloc XML, topology TOML, and every
/// file of a sysfs snapshot.
pub const MAX_INPUT_FILE_BYTES: u64 = 16 << 20;

/// Most runs of one scenario (`run.runs`, `--runs`).
pub const MAX_RUNS: u64 = 100_000;

/// Most copies of one rt-app task (`"instance"`).
pub const MAX_RTAPP_INSTANCES: u64 = 100_000;

/// Most client/server pairs of tbench (`tbench N`, `clients`).
pub const MAX_CLIENTS: u64 = 100_000;

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
    let words: Vec<_> = text.split(' ').map(clip).collect();
    std::borrow::Cow::Owned(words.join(" "))
}

/// Read a text file of at most [`MAX_INPUT_FILE_BYTES`] with a bounded reader (so
/// `/dev/zero` or a FIFO fails cleanly instead of filling memory). The error is the text
/// after `origin: ` — callers add the origin and key.
pub fn read_text(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let mut buf = Vec::new();
    file.take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if buf.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "file is larger than the input limit of {} MiB (accepted: a regular text file)",
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(buf).map_err(|_| "file is not UTF-8 text".to_string())
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
    fn long_names_are_clipped() {
        let long = "x".repeat(100_000);
        let c = clip(&long);
        assert!(c.len() < 100, "{c}");
        assert!(c.ends_with("(100000 bytes)"));
        assert_eq!(clip("skl-2s"), "skl-2s");
        assert_eq!(DEFAULT_MAX_TASKS, 174_762);
    }
}
