//! NUMA balancing of one run: whether it runs and which variant (phase 2 entry point of
//! docs/numa.md; the per-mm scan, fault and move hooks are to be added here, called by
//! one-line hooks in `core.rs`).
//!
//! The kernel turns NUMA balancing on when `kernel.numa_balancing` has
//! `NUMA_BALANCING_NORMAL` (bit 0) set — the default, which `check_numabalancing_enable()`
//! leaves on only when more than one node is online. `NUMA_BALANCING_MEMORY_TIERING` (bit 1)
//! alone promotes slow-tier pages, which is not modelled (no memory tiers): it counts as off.

use crate::kconfig::ResolvedKernel;
use crate::sched::numa::features::NumaVariant;
use crate::topology::Machine;

/// `NUMA_BALANCING_NORMAL`.
pub const NUMA_BALANCING_NORMAL: u32 = 1;

/// NUMA balancing as configured for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaRun {
    /// The release form and the resolved switches.
    pub variant: NumaVariant,
}

/// `Some` when NUMA balancing runs on `machine` under `kernel`: the sysctl's normal bit
/// and more than one node; the variant from the profile's version and resolved features.
pub fn numa_run(kernel: &ResolvedKernel, machine: &Machine) -> Option<NumaRun> {
    let on = kernel.sysctl.numa_balancing & NUMA_BALANCING_NORMAL != 0 && machine.nr_nodes() > 1;
    on.then(|| NumaRun {
        variant: NumaVariant::from_kernel(kernel.version, &kernel.features),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kconfig::{Feature, Profile};
    use crate::topology::CpuTopology;

    fn machine(nodes: usize) -> Machine {
        let cpus = (0..4)
            .map(|cpu| CpuTopology {
                cpu,
                core: cpu,
                cluster: cpu,
                llc: cpu * nodes / 4,
                package: cpu * nodes / 4,
                node: cpu * nodes / 4,
                capacity: 1024,
            })
            .collect();
        let d = (0..nodes)
            .map(|a| (0..nodes).map(|b| if a == b { 10 } else { 21 }).collect())
            .collect();
        Machine::new("t", "", cpus, d).unwrap()
    }

    #[test]
    fn on_by_default_on_multi_node_only_and_follows_the_sysctl() {
        let p = Profile::by_name("v3.17").unwrap();
        let mut k = ResolvedKernel::from_profile(p);
        assert_eq!(k.sysctl.numa_balancing, 1, "default sysctl is 1");
        assert!(numa_run(&k, &machine(1)).is_none(), "one node: off");
        let run = numa_run(&k, &machine(2)).expect("two nodes: on");
        assert!(run.variant.migrate_preferred_busy && !run.variant.has_capacity);
        // A scenario override of a switch reaches the variant.
        k.features.set(Feature::NUMA_MIGRATE_PREFERRED_BUSY, false);
        assert!(
            !numa_run(&k, &machine(2))
                .unwrap()
                .variant
                .migrate_preferred_busy
        );
        // numa_balancing=0 and tiering-only (2) are off; 3 has the normal bit.
        for (val, on) in [(0, false), (2, false), (3, true)] {
            k.sysctl.numa_balancing = val;
            assert_eq!(
                numa_run(&k, &machine(2)).is_some(),
                on,
                "numa_balancing={val}"
            );
        }
    }
}
