/* schedlab kernel_diff shim (MIT OR Apache-2.0): sched_balance_find_dst_group() (6.1:
 * find_idlest_group()) with update_sg_wakeup_stats(), update_pick_idlest(), group_classify()
 * on per-CPU runqueues the test fills per case (KD(dstgroup_set_cpu)): cpu_load_without(),
 * cpu_util_without(), cpu_runnable_without() (the values without p, given per CPU),
 * capacity_of(), rq->nr_running, rq->curr (idle, p or another task), rq->ttwu_pending,
 * cpu_to_node(); the domain's circular group list with each group's sgc (capacity,
 * max_capacity, imbalance); the task's CPU, queued state, last_update_time, affinity,
 * util estimate and preferred node. No uclamp (uclamp_is_used() false), no core scheduling;
 * NUMA and NUMA balancing built in, as distributions do. */
#define CONFIG_NUMA 1
#define CONFIG_NUMA_BALANCING 1
#define CONFIG_SMP 1
#include "cpumask.h"
#define to_cpumask(bitmap) ((struct cpumask *)(bitmap))
/* NR_CPUS is the build's maximum (8192 on Debian's amd64): never a task's nr_cpus_allowed
 * on the machines compared. */
#define NR_CPUS 8192
#define NUMA_NO_NODE (-1)
#define fallthrough __attribute__((__fallthrough__))
/* include/linux/math.h's abs() on the unsigned int difference: converted to int first. */
#define abs(x) ({ int __kd_x = (int)(x); __kd_x < 0 ? -__kd_x : __kd_x; })
static inline unsigned int cpumask_weight(const struct cpumask *m)
{
	unsigned int w = 0;

	for (int i = 0; i < KD_MASK_WORDS; i++)
		w += (unsigned int)__builtin_popcountll(m->bits[i]);
	return w;
}
static inline void cpumask_and(struct cpumask *dst, const struct cpumask *a,
			       const struct cpumask *b)
{
	for (int i = 0; i < KD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}
static inline bool cpumask_intersects(const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < KD_MASK_WORDS; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}
struct sched_group_capacity {
	unsigned long capacity;
	unsigned long max_capacity;
	int imbalance;
};
struct sched_group {
	struct sched_group *next;
	unsigned int group_weight;
	struct sched_group_capacity *sgc;
	unsigned long cpumask[KD_MASK_WORDS];
};
/* our bits; the wrapper receives them from the Rust side */
#define SD_ASYM_CPUCAPACITY 0x1
#define SD_NUMA 0x4
struct sched_domain {
	int flags;
	unsigned int imbalance_pct;
	unsigned int imb_numa_nr;
	struct sched_group *groups;
};
struct sched_avg {
	u64 last_update_time;
};
struct sched_entity {
	struct sched_avg avg;
};
#define TASK_ON_RQ_QUEUED 1
struct task_struct {
	struct sched_entity se;
	int on_rq;
	int nr_cpus_allowed;
	int numa_preferred_nid;
	const struct cpumask *cpus_ptr;
	int kd_cpu;
	unsigned long kd_util;
};
struct cfs_rq {
	unsigned int h_nr_queued;
	unsigned int h_nr_running; /* the name before the v6.13 rename (6.1) */
};
struct rq {
	unsigned int nr_running;
	unsigned int ttwu_pending;
	struct cfs_rq cfs;
	struct task_struct *curr, *idle;
	/* the values of the helpers below */
	unsigned long kd_load, kd_util, kd_runnable, kd_capacity, kd_arch_cap;
	int kd_node, kd_curr; /* kd_curr: 0 the idle task, 1 p, 2 another task */
};
static struct rq kd_dg_rqs[KD_NR_CPUS];
static struct task_struct kd_dg_idle_tasks[KD_NR_CPUS], kd_dg_other_task;
static struct cpumask kd_dg_select_rq_mask;
#define cpu_rq(cpu) (&kd_dg_rqs[cpu])
#define task_cpu(p) ((p)->kd_cpu)
#define task_on_rq_queued(p) ((p)->on_rq == TASK_ON_RQ_QUEUED)
#define cpu_load_without(rq, p) ((rq)->kd_load)
#define cpu_runnable_without(rq, p) ((rq)->kd_runnable)
#define cpu_util_without(cpu, p) (kd_dg_rqs[cpu].kd_util)
#define capacity_of(cpu) (kd_dg_rqs[cpu].kd_capacity)
#define arch_scale_cpu_capacity(cpu) (kd_dg_rqs[cpu].kd_arch_cap)
#define capacity_orig_of(cpu) (kd_dg_rqs[cpu].kd_arch_cap)
#define get_actual_cpu_capacity(cpu) (kd_dg_rqs[cpu].kd_arch_cap)
#define arch_scale_thermal_pressure(cpu) 0UL
#define cpu_to_node(cpu) (kd_dg_rqs[cpu].kd_node)
#define this_cpu_cpumask_var_ptr(var) (&kd_dg_select_rq_mask)
#define sched_group_cookie_match(rq, p, group) true
/* No uclamp: task_fits_cpu() is util_fits_cpu()'s fits_capacity() of task_util_est(). */
enum uclamp_id { UCLAMP_MIN = 0, UCLAMP_MAX };
#define uclamp_is_used() false
#define uclamp_eff_value(p, id) ((id) == UCLAMP_MIN ? 0UL : (unsigned long)SCHED_CAPACITY_SCALE)
#define task_util_est(p) ((p)->kd_util)
