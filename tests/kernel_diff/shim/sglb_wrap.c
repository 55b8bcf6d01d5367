/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around fair.c's update_sg_lb_stats(). */
struct kd_sglb_cpu {
	u64 load, util, runnable, misfit, capacity, arch_capacity;
	u32 nr_running, h_nr_queued, nr_numa, nr_pref;
	s32 idle, overutil, prio, pad;
	u64 smt[KD_MASK_WORDS];
};

int KD(sglb_set_cpu)(int cpu, const struct kd_sglb_cpu *c)
{
	struct rq *rq = &kd_sglb_rqs[cpu];

	rq->cpu = cpu;
	rq->nr_running = c->nr_running;
	rq->nr_numa_running = c->nr_numa;
	rq->nr_preferred_running = c->nr_pref;
	rq->misfit_task_load = c->misfit;
	rq->cpu_capacity = c->capacity;
	rq->cfs.h_nr_queued = c->h_nr_queued;
	rq->cfs.h_nr_running = c->h_nr_queued;
	rq->kd_load = c->load;
	rq->kd_util = c->util;
	rq->kd_runnable = c->runnable;
	rq->kd_arch_cap = c->arch_capacity;
	rq->kd_idle = c->idle;
	rq->kd_overutil = c->overutil;
	rq->kd_prio = c->prio;
	memcpy(rq->kd_smt.bits, c->smt, sizeof(rq->kd_smt.bits));
	return 0;
}

struct kd_sglb_in {
	u64 span[KD_MASK_WORDS], cpus[KD_MASK_WORDS];
	u64 group_capacity;
	u32 group_weight, imbalance, group_flags, sd_flags, imbalance_pct, dst_cpu, idle, local;
	s32 asym_prefer_cpu, smt_active;
};

struct kd_sglb_out {
	u64 avg_load, group_load, group_capacity, group_util, group_runnable, group_misfit_task_load;
	u32 sum_nr_running, sum_h_nr_running, idle_cpus, group_weight, group_type;
	u32 group_asym_packing, group_smt_balance, nr_numa_running, nr_preferred_running;
	u32 sg_overloaded, sg_overutilized, pad;
};

int KD(update_sg_lb_stats)(const struct kd_sglb_in *in, struct kd_sglb_out *out)
{
	static struct sched_group group, other;
	struct sched_group_capacity sgc = { .capacity = in->group_capacity,
					    .imbalance = (int)in->imbalance };
	struct sched_domain sd = { .flags = (int)in->sd_flags, .imbalance_pct = in->imbalance_pct };
	struct sd_lb_stats sds = { 0 };
	struct sg_lb_stats sgs;
	struct cpumask cpus;
	struct lb_env env = { 0 };
	bool overloaded = false, overutilized = false;

	group = (struct sched_group){ .group_weight = in->group_weight,
				      .sgc = &sgc,
				      .asym_prefer_cpu = in->asym_prefer_cpu,
				      .flags = (int)in->group_flags };
	memcpy(group.cpumask, in->span, sizeof(group.cpumask));
	memcpy(cpus.bits, in->cpus, sizeof(cpus.bits));
	sds.local = in->local ? &group : &other;
	kd_sglb_smt_active = in->smt_active;
	env.sd = &sd;
	env.dst_cpu = (int)in->dst_cpu;
	env.idle = in->idle;
	env.cpus = &cpus;
	memset(&sgs, 0xa5, sizeof(sgs)); /* update_sg_lb_stats() clears it */
	update_sg_lb_stats(&env, &sds, &group, &sgs, &overloaded, &overutilized);
	out->avg_load = sgs.avg_load;
	out->group_load = sgs.group_load;
	out->group_capacity = sgs.group_capacity;
	out->group_util = sgs.group_util;
	out->group_runnable = sgs.group_runnable;
	out->group_misfit_task_load = sgs.group_misfit_task_load;
	out->sum_nr_running = sgs.sum_nr_running;
	out->sum_h_nr_running = sgs.sum_h_nr_running;
	out->idle_cpus = sgs.idle_cpus;
	out->group_weight = sgs.group_weight;
	out->group_type = sgs.group_type;
	out->group_asym_packing = sgs.group_asym_packing;
	out->group_smt_balance = sgs.group_smt_balance;
	out->nr_numa_running = sgs.nr_numa_running;
	out->nr_preferred_running = sgs.nr_preferred_running;
	out->sg_overloaded = overloaded;
	out->sg_overutilized = overutilized;
	return 0;
}
