/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): what the CFS functions of linux 6.1 read,
 * without cgroups (for_each_sched_entity visits the task's entity only; cfs_rq_of() and
 * rq_of() are the one runqueue), and the tunables set per case from the Rust parameters.
 */
struct sched_entity {
	struct load_weight load;
	struct rb_node run_node;
	unsigned int on_rq;
	u64 exec_start;
	u64 sum_exec_runtime;
	u64 vruntime;
	u64 prev_sum_exec_runtime;
	int kd_idle; /* task_has_idle_policy() */
};

struct cfs_rq {
	struct load_weight load;
	unsigned int nr_running;
	unsigned int h_nr_running;
	unsigned int idle_nr_running;
	unsigned int idle_h_nr_running;
	u64 min_vruntime;
	struct rb_root_cached tasks_timeline;
	struct sched_entity *curr;
};

struct rq {
	struct cfs_rq cfs;
	u64 clock_task;
	int kd_resched;
	int kd_clear_buddies;
};

extern struct rq kd61_rq;
#define rq_of(cfs_rq) (&kd61_rq)
#define cfs_rq_of(se) (&kd61_rq.cfs)
#define rq_clock_task(rq) ((rq)->clock_task)
#define for_each_sched_entity(se) for (; se; se = NULL)
#define se_is_idle(se) ((se)->kd_idle)
#define resched_curr(rq) ((rq)->kd_resched = 1)
/* check_preempt_tick()'s clear_buddies(cfs_rq, curr): no buddies are set here; count it. */
#define clear_buddies(cfs_rq, se) (kd61_rq.kd_clear_buddies++)

extern unsigned int sysctl_sched_latency;
extern unsigned int sysctl_sched_min_granularity;
extern unsigned int sysctl_sched_idle_min_granularity;
extern unsigned int sysctl_sched_wakeup_granularity;
extern unsigned int sched_nr_latency;
