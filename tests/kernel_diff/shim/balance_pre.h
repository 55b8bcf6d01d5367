/* schedlab kernel_diff shim (MIT OR Apache-2.0): the group fields group_classify() reads
 * (sg_imbalanced(): group->sgc->imbalance); NUMA balancing built in, as distributions do. */
#define CONFIG_NUMA_BALANCING 1
#define CONFIG_SCHED_SMT 1
#include "cpumask.h"
#define to_cpumask(bitmap) ((struct cpumask *)(bitmap))
#define fallthrough __attribute__((__fallthrough__))
struct sched_group_capacity {
	unsigned long min_capacity, max_capacity;
	int imbalance;
	unsigned long cpumask[KD_MASK_WORDS]; /* the balance mask */
};
struct sched_group {
	unsigned int group_weight;
	unsigned int cores;
	struct sched_group_capacity *sgc;
	int asym_prefer_cpu;
	int flags;
	unsigned long cpumask[KD_MASK_WORDS];
};
/* calculate_imbalance(): the domain's flags (our bits: the wrapper maps them) and
 * imb_numa_nr; should_we_balance(): its local group. lb_env's other members are not read. */
#define CONFIG_NUMA 1
#define SD_ASYM_CPUCAPACITY 0x1
#define SD_SHARE_LLC 0x2
#define SD_NUMA 0x4
#define SD_SHARE_CPUCAPACITY 0x8
struct sched_domain {
	int flags;
	unsigned int imb_numa_nr;
	struct sched_group *groups;
};
/* should_we_balance(): the destination runqueue's fields it reads. */
struct rq {
	unsigned int nr_running;
	unsigned int ttwu_pending;
};
/* The per-CPU state should_we_balance() and update_sd_pick_busiest() read (idle_cpu(),
 * cpu_smt_mask(), capacity_of(), arch_asym_cpu_priority()), set per case by the wrapper,
 * and should_we_balance()'s per-CPU scratch mask. */
struct kd_lb_cpu {
	int idle;
	int prio;
	unsigned long capacity;
	struct cpumask smt;
};
static struct kd_lb_cpu kd_lb_cpus[KD_NR_CPUS];
static struct cpumask kd_swb_tmpmask;
#define idle_cpu(cpu) (kd_lb_cpus[cpu].idle)
#define cpu_smt_mask(cpu) (&kd_lb_cpus[cpu].smt)
#define capacity_of(cpu) (kd_lb_cpus[cpu].capacity)
#define arch_asym_cpu_priority(cpu) (kd_lb_cpus[cpu].prio)
#define this_cpu_cpumask_var_ptr(var) (&kd_swb_tmpmask)
struct list_head {
	struct list_head *next, *prev;
};
