/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): the per-CPU state wake_affine_idle() and
 * wake_affine_weight() read, from arrays the wrapper fills per case: available_idle_cpu(),
 * cpus_share_cache() (same LLC id), rq->nr_running and the cfs counts, cpu_load(),
 * capacity_of(), task_h_load(), current, sd->imbalance_pct.
 */
#define KD_NR_CPUS 512
#include "cpumask.h"
#define to_cpumask(bitmap) ((struct cpumask *)(bitmap))
/* sched_balance_find_dst_group_cpu(): the idle state's exit latency (us), the idle stamp,
 * sched_idle_cpu(), the group's span and weight, p->cpus_ptr; no core scheduling. */
struct cpuidle_state {
	unsigned int exit_latency;
};
struct sched_group {
	unsigned int group_weight;
	unsigned long cpumask[KD_MASK_WORDS];
};
struct cfs_rq {
	unsigned int h_nr_queued;
	unsigned int h_nr_runnable;
};
struct rq {
	unsigned int nr_running;
	struct cfs_rq cfs;
	unsigned long kd_load;
	unsigned long kd_capacity;
	int kd_idle;
	int kd_llc;
	int kd_sched_idle;
	u64 idle_stamp;
	struct cpuidle_state kd_state;
	int kd_has_state;
};
struct task_struct {
	unsigned long kd_h_load;
	const struct cpumask *cpus_ptr;
};
struct sched_domain {
	unsigned int imbalance_pct;
};
extern struct rq kd_rqs[KD_NR_CPUS];
extern struct task_struct *kd_current;
#define current kd_current
#define nr_cpumask_bits KD_NR_CPUS
#define cpu_rq(cpu) (&kd_rqs[cpu])
#define available_idle_cpu(cpu) (kd_rqs[cpu].kd_idle)
#define cpus_share_cache(a, b) ((a) == (b) || kd_rqs[a].kd_llc == kd_rqs[b].kd_llc)
#define cpu_load(rq) ((rq)->kd_load)
#define capacity_of(cpu) (kd_rqs[cpu].kd_capacity)
#define task_h_load(p) ((p)->kd_h_load)
#define sched_idle_cpu(cpu) (kd_rqs[cpu].kd_sched_idle)
#define idle_get_state(rq) ((rq)->kd_has_state ? &(rq)->kd_state : NULL)
#define sched_core_cookie_match(rq, p) true
