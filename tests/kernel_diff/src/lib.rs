//! Differential tests of schedlab's Rust mirrors against the kernel's own C.
//!
//! `build.rs` extracts the kernel functions from the installed Debian kernel source
//! tarballs (`/usr/src/linux-source-X.Y.tar.xz`) and compiles them with our shim into a
//! static library; [`ffi`] declares them. The tests (`kernel_diff::*`, built only under
//! `cargo test`) generate random valid states with proptest, run both sides on each and
//! compare every output field. See `README.md`.
//!
//! This crate is outside the library's `forbid(unsafe_code)`: calling C needs `unsafe`.

pub mod ffi;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::fmt::Debug;

include!(concat!(env!("OUT_DIR"), "/units.rs"));

/// The environment variable raising the number of random cases per property.
pub const CASES_ENV: &str = "SCHEDLAB_KDIFF_CASES";
/// Set to 1 (CI does when `scripts/install-kernel-source` succeeded) to fail instead of skip.
pub const REQUIRE_ENV: &str = "SCHEDLAB_REQUIRE_KERNEL_SOURCE";

/// Why `unit` of kernel `version` was not built, or None when it is available.
pub fn skip_reason(unit: &str, version: &str) -> Option<String> {
    match UNITS.iter().find(|(u, v, _)| *u == unit && *v == version) {
        Some((_, _, reason)) => reason.map(str::to_string),
        None => Some(format!(
            "no unit {unit} for linux {version} in kernel-{version}.spec"
        )),
    }
}

/// True when the kernel side of `unit` is available. Otherwise prints
/// `SKIPPED: <reason>` and returns false, or panics under `SCHEDLAB_REQUIRE_KERNEL_SOURCE=1`.
pub fn available(unit: &str, version: &str) -> bool {
    let Some(reason) = skip_reason(unit, version) else {
        return true;
    };
    let msg = format!("kernel_diff {unit} (linux {version}): {reason}");
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{REQUIRE_ENV}=1 but {msg}");
    }
    println!("SKIPPED: {msg}");
    false
}

/// The exact kernel release compiled for `version` (e.g. "6.12.118").
pub fn release(version: &str) -> &'static str {
    RELEASES
        .iter()
        .find(|(v, _)| *v == version)
        .map_or("unknown", |(_, r)| r)
}

/// Cases per property: `SCHEDLAB_KDIFF_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var(CASES_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One field-by-field comparison: Err names the outputs that differ.
pub fn compare<T: PartialEq + Debug>(what: &str, kernel: &T, rust: &T) -> Result<(), String> {
    if kernel == rust {
        Ok(())
    } else {
        Err(format!("{what}: kernel {kernel:?} != rust {rust:?}"))
    }
}

/// The outcome of a differential property.
#[derive(Debug)]
pub struct Outcome {
    /// Cases run.
    pub cases: u32,
    /// None, or the first mismatch after shrinking: the minimal input and what differed.
    pub mismatch: Option<String>,
}

/// Runs `check` on `cases` inputs drawn from `strategy` with a fixed seed (derived from
/// `name`, so each property has its own stream and reruns are identical); a mismatch is
/// shrunk to a minimal input. No regression file is written: the seed reproduces it.
pub fn diff<S, F>(name: &str, cases: u32, strategy: S, check: F) -> Outcome
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(&S::Value) -> Result<(), String>,
{
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 10_000,
        ..Config::default()
    };
    let mut seed = [0u8; 32];
    for (i, b) in name.bytes().enumerate() {
        seed[i % 32] = seed[i % 32].wrapping_mul(31).wrapping_add(b);
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let res = runner.run(&strategy, |input| {
        check(&input).map_err(TestCaseError::fail)
    });
    let mismatch = match res {
        Ok(()) => None,
        Err(TestError::Fail(why, input)) => Some(format!("{why}\n  minimal input: {input:?}")),
        Err(TestError::Abort(why)) => Some(format!("aborted: {why}")),
    };
    Outcome { cases, mismatch }
}

/// Runs [`diff`] and asserts 0 mismatches, printing the count line the report quotes.
pub fn assert_no_mismatch<S, F>(name: &str, version: &str, cases: u32, strategy: S, check: F)
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(&S::Value) -> Result<(), String>,
{
    let out = diff(name, cases, strategy, check);
    let n = u32::from(out.mismatch.is_some());
    println!(
        "kernel_diff {name} (linux {}): {} cases, {n} mismatches",
        release(version),
        out.cases
    );
    if let Some(m) = out.mismatch {
        panic!("{name} (linux {version}) differs from the kernel's C:\n  {m}");
    }
}

#[cfg(test)]
mod kernel_diff;
