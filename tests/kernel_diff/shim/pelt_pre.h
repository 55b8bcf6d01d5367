/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): the task and runqueue that util_est_update()
 * reads: p->se.avg, and arch_scale_cpu_capacity() of the runqueue's CPU (set per case).
 */
struct sched_entity {
	struct sched_avg avg;
};
struct task_struct {
	struct sched_entity se;
};
struct cfs_rq {
	int cpu;
};
extern unsigned long kd_cpu_capacity;
#define rq_of(cfs_rq) (cfs_rq)
#define cpu_of(rq) ((rq)->cpu)
#define arch_scale_cpu_capacity(cpu) ((void)(cpu), kd_cpu_capacity)
#define trace_sched_util_est_se_tp(se) ((void)(se))
