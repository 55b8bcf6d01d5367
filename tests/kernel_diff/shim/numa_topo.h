/* schedlab kernel_diff shim (MIT OR Apache-2.0): the topology type variable, after the
 * kernel's enum numa_topology_type. */
static enum numa_topology_type sched_numa_topology_type;
