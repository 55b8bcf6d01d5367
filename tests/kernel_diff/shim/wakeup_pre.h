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
	int flags;
	unsigned long cpumask[KD_MASK_WORDS];
};
/* select_idle_cpu(), select_idle_core(), select_idle_smt(): the LLC domain's span and first
 * group (SD_CLUSTER), the LLC's shared hints (has_idle_cores, nr_idle_scan; NULL when the
 * case says so), sched_cluster_active, cpu_smt_mask(), nr_cpu_ids, the per-CPU scan mask;
 * the bit search for_each_cpu_wrap() uses (the kernel's find_next_bit_wrap() and
 * __for_each_wrap() are extracted). */
#define SD_CLUSTER 0x1
struct sched_domain_shared {
	int has_idle_cores;
	int nr_idle_scan;
};
static struct sched_domain_shared kd_sds;
static int kd_has_sds, kd_nr_cpu_ids = KD_NR_CPUS;
static int sched_cluster_active;
static struct cpumask kd_sis_mask;
/* per_cpu(var, cpu) by variable: the LLC's shared hints here, sd_llc and
 * sd_asym_cpucapacity in wakeup_sis_pre.h. */
#define per_cpu(var, cpu) kd_pc_##var(cpu)
#define kd_pc_sd_llc_shared(cpu) (kd_has_sds ? &kd_sds : NULL)
#define rcu_dereference(p) (p)
#define static_branch_unlikely(key) (*(key))
#define this_cpu_cpumask_var_ptr(var) (&kd_sis_mask)
#define sched_cpu_cookie_match(rq, p) true
#define sched_domain_span(sd) to_cpumask((sd)->kd_span)
#define cpumask_bits(m) ((m)->bits)
#define small_cpumask_bits ((unsigned long)kd_nr_cpu_ids)
static inline unsigned long find_next_bit(const unsigned long *addr, unsigned long size,
					  unsigned long offset)
{
	for (unsigned long b = offset; b < size; b++)
		if ((addr[b / 64] >> (b % 64)) & 1)
			return b;
	return size;
}
#define find_first_bit(addr, size) find_next_bit((addr), (size), 0)
static inline void cpumask_and(struct cpumask *dst, const struct cpumask *a,
			       const struct cpumask *b)
{
	for (int i = 0; i < KD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}
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
	int kd_share; /* sd_share_id: cpus_share_resources() */
	int kd_sched_idle;
	u64 idle_stamp;
	struct cpuidle_state kd_state;
	int kd_has_state;
	struct cpumask kd_smt;
	/* 6.1's SIS_PROP (off: features.h and every case): read only behind sched_feat(SIS_PROP) */
	unsigned long wake_stamp;
	u64 wake_avg_idle;
};
struct task_struct {
	unsigned long kd_h_load;
	const struct cpumask *cpus_ptr;
	int recent_used_cpu;
};
struct sched_domain {
	unsigned int imbalance_pct;
	unsigned int span_weight;
	u64 avg_scan_cost; /* 6.1's SIS_PROP (off) */
	unsigned long kd_span[KD_MASK_WORDS];
	struct sched_group *groups;
};
/* Internal linkage: the 6.12 and 6.1 units link into one test binary. */
static struct rq kd_rqs[KD_NR_CPUS];
static struct task_struct *kd_current;
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
#define cpu_smt_mask(cpu) (&kd_rqs[cpu].kd_smt)
