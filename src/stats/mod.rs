//! Observations of a run: latency histograms, perf-stat counters, summaries over runs.

pub mod compare;
pub mod explain;
pub mod histogram;
pub mod perf;
pub mod pingpong;
pub mod report;
pub mod summary;
pub mod trace;
