//! schedlab: a deterministic simulator of the Linux CPU scheduler (fair class) on any
//! machine topology. See `../shared/design/ARCHITECTURE.md` and `docs/fidelity.md`.
#![forbid(unsafe_code)]

pub mod cli;
pub mod config;
pub mod cost;
pub mod cpuidle;
pub mod cpumask;
pub mod domains;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod hist;
pub mod input;
pub mod kconfig;
pub mod memory;
pub mod output;
pub mod policy;
pub mod report;
pub mod rng;
pub mod sched;
pub mod stats;
pub mod task;
pub mod topology;
pub mod units;
pub mod workload;
