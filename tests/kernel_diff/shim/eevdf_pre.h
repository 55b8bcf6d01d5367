/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): the fields of struct sched_entity and
 * struct cfs_rq that the EEVDF functions read, under the kernel's field names (both
 * zero_vruntime, as in the 6.12.y stable tree, and min_vruntime, as before it), and the
 * tunables and flags they use.
 */
struct sched_entity {
	struct load_weight load;
	struct rb_node run_node;
	u64 deadline;
	u64 min_vruntime;
	u64 min_slice;
	int on_rq;
	unsigned char sched_delayed;
	unsigned char rel_deadline;
	unsigned char custom_slice;
	u64 vruntime;
	s64 vlag;
	u64 slice;
};

struct cfs_rq {
	struct load_weight load;
	unsigned int nr_running;
	unsigned int nr_queued;
	s64 avg_vruntime;
	u64 avg_load;
	u64 zero_vruntime;
	u64 min_vruntime;
	struct rb_root_cached tasks_timeline;
	struct sched_entity *curr;
};

#define ENQUEUE_INITIAL 0x80
extern unsigned int sysctl_sched_base_slice;
extern unsigned long long kd_tick_nsec;
#define TICK_NSEC kd_tick_nsec

/* reweight_entity(): the test runs it at the instant of the last update (update_curr()
 * has nothing to commit) and without CONFIG_SMP's PELT part (compared in the pelt unit). */
static inline void update_curr(struct cfs_rq *cfs_rq) { (void)cfs_rq; }
static inline void enqueue_load_avg(struct cfs_rq *cfs_rq, struct sched_entity *se)
{ (void)cfs_rq; (void)se; }
static inline void dequeue_load_avg(struct cfs_rq *cfs_rq, struct sched_entity *se)
{ (void)cfs_rq; (void)se; }
