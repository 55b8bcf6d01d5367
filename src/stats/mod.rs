//! Observations of a run: latency histograms, perf-stat counters, summaries over runs.

pub mod compare;
pub mod explain;
pub mod perf;
pub mod report;
pub mod summary;
pub mod timeline;
pub mod trace;
