//! Shared driver of the `tests/fuzz_*.rs` targets: proptest strategies for arbitrary and
//! mutated-valid inputs, the error-message check, and the time-bounded loop.
//!
//! Every target feeds inputs to a public parse entry point and asserts that it returns
//! (no panic, no abort) and that an `Err` carries a non-empty message on one line.
//! In a normal test run each target runs its fixed case count (a few seconds in
//! release). With `SCHEDLAB_FUZZ_SECS=N` each target keeps drawing fresh batches for N
//! seconds, e.g. an hour:
//!
//! ```text
//! SCHEDLAB_FUZZ_SECS=3600 cargo nextest run --release -E 'test(/^fuzz_/)' --no-capture
//! ```
//!
//! A failure prints the shrunk input; every crash found becomes a named regression test
//! in the target's file.
#![allow(dead_code)]

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Seconds each fuzz target runs for (fresh batches until the time is up).
pub const FUZZ_SECS_ENV: &str = "SCHEDLAB_FUZZ_SECS";

/// Run `test` on `cases` inputs from `strategy` (repeated for `SCHEDLAB_FUZZ_SECS`
/// seconds when set). Panics with the shrunk failing input.
pub fn fuzz<S>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    let secs: Option<u64> = std::env::var(FUZZ_SECS_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok());
    let deadline = secs.map(|s| Instant::now() + Duration::from_secs(s));
    let mut total = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 2000,
            ..Config::default()
        });
        if let Err(e) = runner.run(&strategy, &test) {
            panic!("fuzz target {name}: {e}");
        }
        total += u64::from(cases);
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    eprintln!("fuzz target {name}: {total} cases, no crash");
}

/// An error must say something, on one line.
pub fn one_line(e: &impl Display) -> Result<(), TestCaseError> {
    let msg = e.to_string();
    prop_assert!(!msg.trim().is_empty(), "empty error message");
    prop_assert!(
        !msg.contains('\n'),
        "error message on several lines: {msg:?}"
    );
    Ok(())
}

/// An error of an emulated tool: non-empty first line (the real tool may print a usage
/// or "Try ..." line after it).
pub fn tool_error(e: &impl Display) -> Result<(), TestCaseError> {
    let msg = e.to_string();
    let first = msg.lines().next().unwrap_or("");
    prop_assert!(!first.trim().is_empty(), "empty first line: {msg:?}");
    Ok(())
}

/// Tokens that stress parsers: extreme numbers, separators, quotes, units, non-ASCII.
pub const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "-0",
    "00",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e308",
    "1e-308",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "1.",
    ".5",
    "0x10",
    "N",
    "all",
    "",
    " ",
    "\n",
    "\t",
    ",",
    "-",
    ":",
    "/",
    "=",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    "[[",
    "]]",
    "\\",
    "#",
    "..",
    "%",
    "ms",
    "s",
    "us",
    "k",
    "K",
    "M",
    "G",
    "true",
    "false",
    "null",
    "é",
    "\u{0}",
    "𝄞",
    "<",
    ">",
    "</",
    "/>",
    "&",
    "&amp;",
    "--",
    "-m",
    "-t",
    "-r",
    "-g",
    "-l",
    "-c",
    "-n",
];

/// A corpus text with up to `max_mutations` edits: insert a token, delete a run of
/// characters, replace a character by a token, or truncate.
pub fn mutated(corpus: Vec<String>, max_mutations: usize) -> impl Strategy<Value = String> {
    let n = corpus.len();
    assert!(n > 0, "empty corpus");
    (
        0..n,
        proptest::collection::vec(
            (
                any::<Index>(),
                0u8..4,
                proptest::sample::select(TOKENS),
                1usize..16,
            ),
            0..=max_mutations,
        ),
    )
        .prop_map(move |(i, muts)| {
            let mut chars: Vec<char> = corpus[i].chars().collect();
            for (at, kind, token, len) in muts {
                let pos = if chars.is_empty() {
                    0
                } else {
                    at.index(chars.len() + 1)
                };
                match kind {
                    0 => {
                        chars.splice(pos..pos, token.chars());
                    }
                    1 => {
                        let end = (pos + len).min(chars.len());
                        chars.drain(pos.min(end)..end);
                    }
                    2 => {
                        let end = (pos + 1).min(chars.len());
                        chars.splice(pos.min(end)..end, token.chars());
                    }
                    _ => chars.truncate(pos),
                }
            }
            chars.into_iter().collect()
        })
}

/// Words from [`TOKENS`] and `extra`, joined by `sep`.
pub fn token_soup(
    extra: &'static [&'static str],
    sep: &'static str,
) -> impl Strategy<Value = String> {
    let all: Vec<&'static str> = TOKENS.iter().chain(extra.iter()).copied().collect();
    proptest::collection::vec(proptest::sample::select(all), 0..24).prop_map(move |w| w.join(sep))
}

/// `shared/fixtures`, found by walking up from the crate root.
pub fn fixtures() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let candidate = dir.join("shared/fixtures");
        if candidate.is_dir() {
            return candidate;
        }
        assert!(dir.pop(), "no shared/fixtures above the crate");
    }
}

/// The text of every file in `dir` whose name ends in `ext`, sorted by name.
pub fn corpus_dir(dir: &Path, ext: &str) -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// A scratch directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "schedlab-fuzz-{}-{}-{tag}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
