//! Observations of a run: latency histograms, counters, reports.

pub mod histogram;
