//! Observations of a run: latency histograms, perf-stat counters, summaries over runs.

// Lossy integer casts are refused here: convert with `try_from` or a named helper of
// `crate::units` that states why the value fits (docs/architecture.md, "Conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

pub mod compare;
pub mod dynamics;
pub mod explain;
pub mod perf;
pub mod report;
pub mod summary;
pub mod timeline;
pub mod trace;
