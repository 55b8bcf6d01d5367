//! `schedlab list machines|workloads|features|profiles`.

use crate::topology::presets;

/// What `schedlab list` can list.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListWhat {
    Machines,
    Workloads,
    Features,
    Profiles,
}

/// Print the listing on stdout (a full stdout is an error naming stdout, exit code 2; a
/// closed pipe is not an error).
pub fn run(what: ListWhat) -> anyhow::Result<()> {
    Ok(crate::output::write_stdout(&listing(what))?)
}

/// The text of `schedlab list WHAT`.
pub fn listing(what: ListWhat) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    match what {
        ListWhat::Machines => {
            for name in presets::names() {
                let _ = writeln!(
                    out,
                    "{name:<16} {}",
                    presets::description(name).unwrap_or("")
                );
            }
        }
        ListWhat::Features => out.push_str(&crate::config::listing::features_table()),
        ListWhat::Profiles => out.push_str(&crate::config::listing::profiles_table()),
        ListWhat::Workloads => {
            for (kind, what) in crate::workload::KINDS {
                let _ = writeln!(out, "{kind:<10} {what}");
            }
            for (kind, what) in crate::experiment::workloads::BUILTIN_KINDS {
                let _ = writeln!(out, "{kind:<10} {what}");
            }
            let _ = writeln!(
                out,
                "\nPrefixes (any command line): taskset [-c] MASK|CPULIST, numactl \
                 [--cpunodebind=N|-N N] [--physcpubind=CPUS|-C CPUS] [--membind=N|-m N] \
                 [--preferred=N|-p N] [--interleave=N|-i N] [--localalloc|-l] [--], \
                 e.g. `numactl -N 1 -m 1 hackbench 10`.\n\
                 Placement keys (every kind): {}; group_* bind each task group \
                 (hackbench group, schbench message thread + workers, netperf pair, stress-ng \
                 worker, rt-app task, spin hog, pingpong pair, web worker, jbb instance) to entry i mod len.",
                crate::workload::placement::PLACEMENT_KEYS.join(", ")
            );
        }
    }
    out
}
