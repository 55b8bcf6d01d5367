//! Observations of a run: latency histograms, perf-stat counters, summaries over runs.

pub mod compare;
pub mod histogram;
pub mod perf;
pub mod report;
pub mod summary;
