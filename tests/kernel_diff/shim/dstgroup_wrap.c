/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around fair.c's
 * sched_balance_find_dst_group() (find_idlest_group() in 6.1, shim/dstgroup61.h) and
 * update_sg_wakeup_stats() on the per-CPU runqueues of shim/dstgroup_pre.h. */

struct kd_dg_cpu {
	u64 load, util, runnable, capacity, arch_capacity;
	u32 nr_running, h_nr_queued, ttwu_pending, curr; /* curr: 0 idle, 1 p, 2 another */
	s32 node, pad;
};

int KD(dstgroup_set_cpu)(int cpu, const struct kd_dg_cpu *c)
{
	struct rq *rq = &kd_dg_rqs[cpu];

	rq->nr_running = c->nr_running;
	rq->cfs.h_nr_queued = c->h_nr_queued;
	rq->cfs.h_nr_running = c->h_nr_queued;
	rq->ttwu_pending = c->ttwu_pending;
	rq->kd_load = c->load;
	rq->kd_util = c->util;
	rq->kd_runnable = c->runnable;
	rq->kd_capacity = c->capacity;
	rq->kd_arch_cap = c->arch_capacity;
	rq->kd_node = c->node;
	rq->kd_curr = (int)c->curr;
	rq->idle = &kd_dg_idle_tasks[cpu];
	return 0;
}

#define KD_DG_MAX_GROUPS 64

/* One group of the domain, in the domain's circular order (the local group first). */
struct kd_dg_group {
	u64 span[KD_MASK_WORDS];
	u64 capacity, max_capacity;
	u32 group_weight, imbalance;
};

struct kd_dg_in {
	struct kd_dg_group groups[KD_DG_MAX_GROUPS];
	u64 allowed[KD_MASK_WORDS];
	u64 last_update_time, task_util;
	u32 nr_groups, sd_flags, imbalance_pct, imb_numa_nr;
	s32 this_cpu, task_cpu, on_rq, numa_preferred_nid;
};

/* update_sg_wakeup_stats()'s result for one group (computed: the group has allowed CPUs). */
struct kd_dg_sgs {
	u64 avg_load, group_load, group_capacity, group_util, group_runnable, group_misfit_task_load;
	u32 sum_nr_running, idle_cpus, group_weight, group_type, computed, pad;
};

struct kd_dg_out {
	struct kd_dg_sgs sgs[KD_DG_MAX_GROUPS];
	s32 chosen; /* the index of the returned group, -1 for NULL */
	u32 pad;
};

int KD(find_dst_group)(const struct kd_dg_in *in, struct kd_dg_out *out)
{
	static struct sched_group groups[KD_DG_MAX_GROUPS];
	static struct sched_group_capacity sgcs[KD_DG_MAX_GROUPS];
	struct sched_domain sd = { .flags = (int)in->sd_flags,
				   .imbalance_pct = in->imbalance_pct,
				   .imb_numa_nr = in->imb_numa_nr,
				   .groups = &groups[0] };
	struct cpumask allowed;
	struct task_struct p = { .se.avg.last_update_time = in->last_update_time,
				 .on_rq = in->on_rq ? TASK_ON_RQ_QUEUED : 0,
				 .numa_preferred_nid = in->numa_preferred_nid,
				 .cpus_ptr = &allowed,
				 .kd_cpu = in->task_cpu,
				 .kd_util = in->task_util };
	struct sched_group *r;
	u32 n = in->nr_groups;

	if (n == 0 || n > KD_DG_MAX_GROUPS)
		return -1;
	memcpy(allowed.bits, in->allowed, sizeof(allowed.bits));
	p.nr_cpus_allowed = (int)cpumask_weight(&allowed);
	for (int c = 0; c < KD_NR_CPUS; c++) {
		struct rq *rq = &kd_dg_rqs[c];

		rq->curr = rq->kd_curr == 1 ? &p : rq->kd_curr == 2 ? &kd_dg_other_task : rq->idle;
	}
	for (u32 i = 0; i < n; i++) {
		sgcs[i] = (struct sched_group_capacity){ .capacity = in->groups[i].capacity,
							 .max_capacity = in->groups[i].max_capacity,
							 .imbalance = (int)in->groups[i].imbalance };
		groups[i] = (struct sched_group){ .next = &groups[(i + 1) % n],
						  .group_weight = in->groups[i].group_weight,
						  .sgc = &sgcs[i] };
		memcpy(groups[i].cpumask, in->groups[i].span, sizeof(groups[i].cpumask));
	}
	for (u32 i = 0; i < n; i++) {
		struct sg_lb_stats sgs;
		struct kd_dg_sgs *o = &out->sgs[i];

		memset(o, 0, sizeof(*o));
		if (!cpumask_intersects(sched_group_span(&groups[i]), p.cpus_ptr))
			continue;
		memset(&sgs, 0xa5, sizeof(sgs)); /* update_sg_wakeup_stats() clears it */
		update_sg_wakeup_stats(&sd, &groups[i], &sgs, &p);
		o->avg_load = sgs.avg_load;
		o->group_load = sgs.group_load;
		o->group_capacity = sgs.group_capacity;
		o->group_util = sgs.group_util;
		o->group_runnable = sgs.group_runnable;
		o->group_misfit_task_load = sgs.group_misfit_task_load;
		o->sum_nr_running = sgs.sum_nr_running;
		o->idle_cpus = sgs.idle_cpus;
		o->group_weight = sgs.group_weight;
		o->group_type = sgs.group_type;
		o->computed = 1;
	}
	r = sched_balance_find_dst_group(&sd, &p, in->this_cpu);
	out->chosen = r ? (s32)(r - groups) : -1;
	return 0;
}
