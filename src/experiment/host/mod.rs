//! This machine, measured and modelled: `schedlab host-measure` runs the real benchmarks
//! here under `perf stat` and writes a host table ([`table`]); `schedlab calibrate` fits the
//! `host` machine's speed and scheduler-cost inputs from microbenchmarks ([`calibrate`]) into
//! a calibration file that `-m host` applies ([`calibration`]); [`compare`] simulates every
//! row of a host table on `-m host` and scores the model against it (the host section of
//! `schedlab validate`).
//!
//! What this leaves out: the real runs share the machine with whatever else runs on it.
//! Each real run is started in its own session with autogroup nice -20 (root only), which
//! leaves other sessions about 1 % of a CPU while the benchmark is runnable, and every run
//! records the load average and steal time around it so a disturbed table can be seen.

pub mod calibrate;
pub mod calibration;
pub mod compare;
pub mod measure;
pub mod rows;
pub mod table;
pub mod trace;
