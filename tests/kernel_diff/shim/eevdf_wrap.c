/*
 * schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around the EEVDF functions of
 * kernel/sched/fair.c. Each call builds a cfs_rq from the Rust side's description with the
 * kernel's own __enqueue_entity() (avg_vruntime sums, augmented rbtree of lib/rbtree.c),
 * runs one operation and copies every entity and runqueue field back.
 */
#define KD_MAX_SE 64

struct kd_se {
	u64 weight, vruntime, deadline, slice;
	s64 vlag;
	u32 inv_weight;
	u8 queued, rel_deadline, custom_slice, pad;
};

struct kd_rq {
	u64 v0;          /* zero_vruntime / min_vruntime: the base of the sums */
	s64 curr;        /* index of cfs_rq->curr, -1: none */
	u64 features;    /* kd_sched_features bits */
	u64 base_slice;  /* sysctl_sched_base_slice */
	u64 tick_nsec;
};

enum { KD_OP_QUERY, KD_OP_LAG, KD_OP_DEADLINE, KD_OP_PLACE, KD_OP_REWEIGHT };

struct kd_out {
	u64 avg_vruntime;   /* avg_vruntime() (QUERY) */
	s64 pick;           /* pick_eevdf(): index, -1 NULL (QUERY) */
	u64 eligible;       /* bit i: entity_eligible(se i) (QUERY) */
	s64 ret;            /* vruntime_eligible(arg) (QUERY), update_deadline() (DEADLINE) */
	s64 avg_sum;        /* cfs_rq->avg_vruntime and avg_load after the build */
	u64 avg_load;
	u64 nr_running;
};

int KD(eevdf_op)(const struct kd_rq *r, struct kd_se *ks, int n, int op, int id, u64 arg,
		 struct kd_out *out)
{
	static struct sched_entity se[KD_MAX_SE];
	struct cfs_rq rq = { 0 };
	int i;

	if (n > KD_MAX_SE)
		return -1;
	kd_sched_features = r->features;
	sysctl_sched_base_slice = r->base_slice;
	kd_tick_nsec = r->tick_nsec;
	rq.zero_vruntime = rq.min_vruntime = r->v0;
	rq.tasks_timeline = RB_ROOT_CACHED;
	for (i = 0; i < n; i++) {
		struct sched_entity s = { 0 };

		s.load.weight = ks[i].weight;
		s.load.inv_weight = ks[i].inv_weight;
		s.vruntime = ks[i].vruntime;
		s.deadline = ks[i].deadline;
		s.slice = ks[i].slice;
		s.vlag = ks[i].vlag;
		s.rel_deadline = ks[i].rel_deadline;
		s.custom_slice = ks[i].custom_slice;
		s.on_rq = ks[i].queued;
		se[i] = s;
	}
	/* Insert in index order, as the Rust side does (equal deadlines: FIFO). */
	for (i = 0; i < n; i++) {
		if (!ks[i].queued)
			continue;
		rq.nr_running++;
		rq.load.weight += ks[i].weight;
		if (i != r->curr)
			__enqueue_entity(&rq, &se[i]);
	}
	rq.nr_queued = rq.nr_running;
	rq.curr = r->curr >= 0 ? &se[r->curr] : NULL;
	out->avg_sum = rq.avg_vruntime;
	out->avg_load = rq.avg_load;
	out->nr_running = rq.nr_running;

	switch (op) {
	case KD_OP_QUERY: {
		struct sched_entity *p;

		out->eligible = 0;
		for (i = 0; i < n; i++)
			if (entity_eligible(&rq, &se[i]))
				out->eligible |= 1ULL << i;
		out->ret = vruntime_eligible(&rq, arg);
		p = pick_eevdf(&rq);
		out->pick = p ? p - se : -1;
		out->avg_vruntime = avg_vruntime(&rq);
		break;
	}
	case KD_OP_LAG:
		update_entity_lag(&rq, &se[id]);
		break;
	case KD_OP_DEADLINE:
		out->ret = update_deadline(&rq, &se[id]);
		break;
	case KD_OP_PLACE:
		place_entity(&rq, &se[id], (int)arg);
		break;
	case KD_OP_REWEIGHT:
		/* reweight_task_fair(): arg = new weight | inv_weight << 32 */
		reweight_entity(&rq, &se[id], arg & 0xffffffffULL);
		se[id].load.inv_weight = arg >> 32;
		out->avg_vruntime = avg_vruntime(&rq);
		out->ret = rq.load.weight;
		break;
	}
	for (i = 0; i < n; i++) {
		ks[i].vruntime = se[i].vruntime;
		ks[i].deadline = se[i].deadline;
		ks[i].slice = se[i].slice;
		ks[i].vlag = se[i].vlag;
		ks[i].rel_deadline = se[i].rel_deadline;
		ks[i].inv_weight = se[i].load.inv_weight;
		ks[i].weight = se[i].load.weight;
	}
	return 0;
}
