/* schedlab kernel_diff shim (MIT OR Apache-2.0): the group fields group_classify() reads
 * (sg_imbalanced(): group->sgc->imbalance); NUMA balancing built in, as distributions do. */
#define CONFIG_NUMA_BALANCING 1
struct sched_group_capacity {
	int imbalance;
};
struct sched_group {
	unsigned int cores;
	struct sched_group_capacity *sgc;
};
/* calculate_imbalance(): the domain's flags (our bits: the wrapper maps them) and
 * imb_numa_nr; lb_env's other members are not read. */
#define CONFIG_NUMA 1
#define SD_ASYM_CPUCAPACITY 0x1
#define SD_SHARE_LLC 0x2
#define SD_NUMA 0x4
struct sched_domain {
	int flags;
	unsigned int imb_numa_nr;
};
struct rq;
struct cpumask;
struct list_head {
	struct list_head *next, *prev;
};
