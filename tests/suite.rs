//! The integration tests, one module per file of `tests/` (one test binary: compiling and
//! linking 39 binaries against the library took most of CI's build time).
//!
//! Select with nextest's filters on the module path, e.g. `-E 'test(/^soak::/)'` or
//! `-E 'test(/^fuzz_/)'`.

// Shared helpers (one copy each, used by several test modules).
#[path = "support/costs.rs"]
mod costs;
#[allow(dead_code)] // not every test module uses every helper
#[path = "support/fake_lb_env.rs"]
mod fake_lb_env;
mod fuzz_common;
#[allow(dead_code)]
#[path = "support/machines.rs"]
mod machines;

mod background;
mod balance;
mod balance_sim;
mod balance_sums;
mod bench;
mod bisect;
mod cli_run;
mod compare;
mod config;
mod conventions;
mod cpuidle;
mod fair_sim;
mod fuzz_cmdline;
mod fuzz_cpulist;
mod fuzz_report;
mod fuzz_rtapp;
mod fuzz_scenario;
mod fuzz_topology;
mod generate;
mod hackbench_numa;
mod host;
mod import;
mod inputs;
mod multi_workload;
mod numa_engine;
mod numa_workloads;
mod outputs;
mod placement;
mod report;
mod resolve;
mod results_schema;
mod results_stream;
mod rt_class;
mod sched_pipe;
mod silent_inputs;
mod soak;
mod stressng;
mod sweep;
mod sweep_slurm;
mod task_ops;
mod topo;
mod trace;
mod trust;
mod ttwu;
mod validate;
mod variation;
mod wakeup;
mod wakeup_schedstat;
mod workload_rtapp_fixtures;
mod workload_user_work;
