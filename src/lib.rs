//! schedlab: a deterministic simulator of the Linux CPU scheduler (fair class) on any
//! machine topology. See `../shared/design/ARCHITECTURE.md` and `docs/fidelity.md`.
#![deny(warnings)]
#![forbid(unsafe_code)]

pub mod cli;
pub mod cpumask;
pub mod error;
pub mod topology;
pub mod workload;
