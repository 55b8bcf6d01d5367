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

pub fn run(what: ListWhat) -> anyhow::Result<()> {
    match what {
        ListWhat::Machines => {
            for name in presets::names() {
                println!("{name:<16} {}", presets::description(name).unwrap_or(""));
            }
        }
        ListWhat::Features => print!("{}", crate::config::listing::features_table()),
        ListWhat::Profiles => print!("{}", crate::config::listing::profiles_table()),
        ListWhat::Workloads => {
            for (kind, what) in crate::workload::KINDS {
                println!("{kind:<10} {what}");
            }
            for (kind, what) in crate::experiment::workloads::BUILTIN_KINDS {
                println!("{kind:<10} {what}");
            }
            println!(
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
    Ok(())
}
