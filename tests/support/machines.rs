//! Small constructed machines for tests.

use schedlab::topology::{CpuTopology, Machine};

/// One CPU per node (its own core, cluster, LLC and package), with the SLIT `distances`.
pub fn numa_machine(distances: Vec<Vec<u32>>) -> Machine {
    let cpus = (0..distances.len())
        .map(|i| CpuTopology {
            cpu: i,
            core: i,
            cluster: i,
            llc: i,
            package: i,
            node: i,
            capacity: 1024,
        })
        .collect();
    Machine::new("numa-test", "test", cpus, distances).expect("machine")
}
