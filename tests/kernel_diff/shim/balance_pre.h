/* schedlab kernel_diff shim (MIT OR Apache-2.0): the group fields group_classify() reads
 * (sg_imbalanced(): group->sgc->imbalance); NUMA balancing built in, as distributions do. */
#define CONFIG_NUMA_BALANCING 1
#define CONFIG_SCHED_SMT 1
#include "cpumask.h"
#define to_cpumask(bitmap) ((struct cpumask *)(bitmap))
#define fallthrough __attribute__((__fallthrough__))
struct list_head {
	struct list_head *next, *prev;
};
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
	unsigned int imbalance_pct;
	struct sched_group *groups;
	unsigned int nr_balance_failed, cache_nice_tries;
};
/* should_we_balance(): the destination runqueue's fields it reads; task_hot(): the source
 * runqueue's clock. */
/* sched_balance_find_src_group(): no energy model (rd->pd NULL). */
struct root_domain {
	void *pd;
};
struct rq {
	struct root_domain *rd;
	struct list_head cfs_tasks; /* detach_tasks() */
	unsigned int nr_running;
	unsigned int ttwu_pending;
	u64 kd_clock_task;
};
/* can_migrate_task() and task_hot(): the task (affinity, running, exec_start, next buddy,
 * SCHED_IDLE policy, schedstats), no cgroups or per-CPU kthreads or core scheduling; the
 * NUMA locality answer is the per-case kd_mdl, on SD_NUMA domains only as the kernel's
 * migrate_degrades_locality() starts. */
struct sched_class {
	int kd_unused;
};
static const struct sched_class fair_sched_class;
struct sched_entity {
	u64 exec_start;
	struct list_head group_node; /* detach_tasks() */
};
struct cfs_rq {
	struct sched_entity *next;
	struct sched_entity *last; /* 6.1's task_hot(): CACHE_HOT_BUDDY with the last buddy */
};
struct kd_task_stats {
	u64 nr_failed_migrations_affine, nr_failed_migrations_running, nr_failed_migrations_hot;
	u64 nr_forced_migrations;
};
struct task_struct {
	const struct sched_class *sched_class;
	struct sched_entity se;
	const struct cpumask *cpus_ptr;
	struct kd_task_stats stats;
	int sched_task_hot;
	int kd_running, kd_idle_policy, kd_mdl;
	u64 kd_h_load, kd_util; /* detach_tasks(): task_h_load(), task_util_est() */
	int kd_fits, kd_detached;
};
static struct cfs_rq kd_cfs_rq;
static struct rq kd_other_rq __maybe_unused;
static unsigned int sysctl_sched_migration_cost = 500000;
#define schedstat_inc(var) ((var)++)
#define throttled_lb_pair(tg, src, dst) 0
#define task_group(p) NULL
#define kthread_is_per_cpu(p) 0
#define task_on_cpu(rq, p) ((p)->kd_running)
#define task_has_idle_policy(p) ((p)->kd_idle_policy)
#define cfs_rq_of(se) (&kd_cfs_rq)
#define cpu_rq(cpu) (&kd_other_rq)
#define sched_core_cookie_match(rq, p) true
#define rq_clock_task(rq) ((rq)->kd_clock_task)
struct lb_env;
static int migrate_degrades_locality(struct task_struct *p, struct lb_env *env);
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
