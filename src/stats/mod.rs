//! Observations of a run: latency histograms, perf-stat counters, summaries over runs.

pub mod compare;
pub mod explain;
pub mod perf;
pub mod report;
pub mod summary;
pub mod timeline;
pub mod trace;

/// The migration ping-pong detector is part of the engine's migration accounting
/// ([`crate::engine::pingpong`]); re-exported under its old path.
pub use crate::engine::pingpong;
/// Latency histograms live in the bottom layer ([`crate::hist`]); re-exported under their old
/// path.
pub use crate::hist as histogram;
