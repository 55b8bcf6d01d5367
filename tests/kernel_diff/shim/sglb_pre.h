/* schedlab kernel_diff shim (MIT OR Apache-2.0): update_sg_lb_stats() on per-CPU runqueues
 * the test fills per case (kd612_sglb_set_cpu): cpu_load(), cpu_util_cfs(), cpu_runnable(),
 * cpu_overutilized(), idle_cpu(), capacity (rq->cpu_capacity, arch_scale_cpu_capacity()),
 * arch_asym_cpu_priority(), cpu_smt_mask(); sched_smt_active() per case. */
#define CONFIG_NUMA_BALANCING 1
#define CONFIG_SCHED_SMT 1
#include "cpumask.h"
#define to_cpumask(bitmap) ((struct cpumask *)(bitmap))
struct list_head {
	struct list_head *next, *prev;
};
struct sched_group_capacity {
	unsigned long capacity;
	int imbalance;
};
struct sched_group {
	unsigned int group_weight;
	struct sched_group_capacity *sgc;
	int asym_prefer_cpu;
	int flags;
	unsigned long cpumask[KD_MASK_WORDS];
};
/* our bits; the wrapper receives them from the Rust side */
#define SD_ASYM_CPUCAPACITY 0x1
#define SD_SHARE_CPUCAPACITY 0x8
#define SD_ASYM_PACKING 0x10
struct sched_domain {
	int flags;
	unsigned int imbalance_pct;
};
struct cfs_rq {
	unsigned int h_nr_queued;
	unsigned int h_nr_running; /* the name before the v6.13 rename, if a release has it */
};
struct rq {
	int cpu;
	unsigned int nr_running;
	unsigned int nr_numa_running, nr_preferred_running;
	unsigned long misfit_task_load;
	unsigned long cpu_capacity;
	struct cfs_rq cfs;
	/* the values of the helpers below */
	unsigned long kd_load, kd_util, kd_runnable, kd_arch_cap;
	int kd_idle, kd_overutil, kd_prio;
	struct cpumask kd_smt;
};
static struct rq kd_sglb_rqs[KD_NR_CPUS];
static int kd_sglb_smt_active;
#define cpu_rq(cpu) (&kd_sglb_rqs[cpu])
#define cpu_of(rq) ((rq)->cpu)
#define cpu_load(rq) ((rq)->kd_load)
#define cpu_runnable(rq) ((rq)->kd_runnable)
#define cpu_util_cfs(cpu) (kd_sglb_rqs[cpu].kd_util)
#define cpu_overutilized(cpu) (kd_sglb_rqs[cpu].kd_overutil)
#define idle_cpu(cpu) (kd_sglb_rqs[cpu].kd_idle)
#define cpu_smt_mask(cpu) (&kd_sglb_rqs[cpu].kd_smt)
#define arch_scale_cpu_capacity(cpu) (kd_sglb_rqs[cpu].kd_arch_cap)
#define arch_asym_cpu_priority(cpu) (kd_sglb_rqs[cpu].kd_prio)
#define sched_smt_active() (kd_sglb_smt_active)
