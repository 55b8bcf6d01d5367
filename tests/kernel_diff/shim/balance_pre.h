/* schedlab kernel_diff shim (MIT OR Apache-2.0): the group fields group_classify() reads
 * (sg_imbalanced(): group->sgc->imbalance); NUMA balancing built in, as distributions do. */
#define CONFIG_NUMA_BALANCING 1
struct sched_group_capacity {
	int imbalance;
};
struct sched_group {
	struct sched_group_capacity *sgc;
};
