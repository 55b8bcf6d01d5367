/*
 * schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around CFS functions of linux 6.1's
 * kernel/sched/fair.c. Each call builds the runqueue (the kernel's __enqueue_entity(), an
 * rbtree keyed by vruntime) and runs one operation.
 */
struct rq kd61_rq;
unsigned int sysctl_sched_latency;
unsigned int sysctl_sched_min_granularity;
unsigned int sysctl_sched_idle_min_granularity;
unsigned int sysctl_sched_wakeup_granularity;
unsigned int sched_nr_latency;

#define KD_MAX_SE 64

struct kd_cfs_se {
	u64 weight, vruntime, exec_start, sum_exec_runtime, prev_sum_exec_runtime;
	u32 inv_weight;
	u8 queued, idle, pad[2];
};

struct kd_cfs_rq {
	u64 min_vruntime, clock_task, features;
	u64 latency, min_gran, idle_min_gran, wakeup_gran, nr_latency;
	s64 curr;
};

enum { KD_CFS_SLICE, KD_CFS_PLACE, KD_CFS_TICK, KD_CFS_WAKEUP_PREEMPT };

/* Returns the operation's result: sched_slice(), the placed vruntime, resched (plus 2 when
 * clear_buddies() ran), wakeup_preempt_entity(id, arg). */
s64 KD(cfs_op)(const struct kd_cfs_rq *r, const struct kd_cfs_se *ks, int n, int op, int id,
	       u64 arg)
{
	static struct sched_entity se[KD_MAX_SE];
	struct cfs_rq *rq = &kd61_rq.cfs;
	int i;

	if (n > KD_MAX_SE)
		return -99;
	memset(&kd61_rq, 0, sizeof(kd61_rq));
	kd_sched_features = r->features;
	sysctl_sched_latency = r->latency;
	sysctl_sched_min_granularity = r->min_gran;
	sysctl_sched_idle_min_granularity = r->idle_min_gran;
	sysctl_sched_wakeup_granularity = r->wakeup_gran;
	sched_nr_latency = r->nr_latency;
	kd61_rq.clock_task = r->clock_task;
	rq->min_vruntime = r->min_vruntime;
	rq->tasks_timeline = RB_ROOT_CACHED;
	for (i = 0; i < n; i++) {
		struct sched_entity s = { 0 };

		s.load.weight = ks[i].weight;
		s.load.inv_weight = ks[i].inv_weight;
		s.vruntime = ks[i].vruntime;
		s.exec_start = ks[i].exec_start;
		s.sum_exec_runtime = ks[i].sum_exec_runtime;
		s.prev_sum_exec_runtime = ks[i].prev_sum_exec_runtime;
		s.kd_idle = ks[i].idle;
		s.on_rq = ks[i].queued;
		se[i] = s;
	}
	for (i = 0; i < n; i++) {
		if (!ks[i].queued)
			continue;
		/* account_entity_enqueue() */
		update_load_add(&rq->load, ks[i].weight);
		rq->nr_running++;
		rq->h_nr_running++;
		if (ks[i].idle) {
			rq->idle_nr_running++;
			rq->idle_h_nr_running++;
		}
		if (i != r->curr)
			__enqueue_entity(rq, &se[i]);
	}
	rq->curr = r->curr >= 0 ? &se[r->curr] : NULL;

	switch (op) {
	case KD_CFS_SLICE:
		return sched_slice(rq, &se[id]);
	case KD_CFS_PLACE:
		place_entity(rq, &se[id], (int)arg);
		return se[id].vruntime;
	case KD_CFS_TICK:
		check_preempt_tick(rq, &se[id]);
		return kd61_rq.kd_resched + 2 * kd61_rq.kd_clear_buddies;
	case KD_CFS_WAKEUP_PREEMPT:
		return wakeup_preempt_entity(&se[id], &se[arg]);
	}
	return -98;
}
