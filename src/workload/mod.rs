//! Workloads: task programs for the engine.

pub mod builtin;
