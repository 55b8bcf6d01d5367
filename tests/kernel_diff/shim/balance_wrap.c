/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around fair.c's group_classify(),
 * group_is_overloaded(), group_has_capacity() and fbq_classify_group(). */
struct kd_sgs {
	u64 group_capacity, group_util, group_runnable, group_misfit_task_load;
	u32 sum_nr_running, sum_h_nr_running, group_weight, group_asym_packing, group_smt_balance;
	u32 nr_numa_running, nr_preferred_running, sg_imbalanced;
};

/* Returns group_classify() | group_is_overloaded() << 8 | group_has_capacity() << 9 |
 * fbq_classify_group() << 10. */
u32 KD(group_classify)(const struct kd_sgs *k, u32 imbalance_pct)
{
	struct sched_group_capacity sgc = { .imbalance = (int)k->sg_imbalanced };
	struct sched_group group = { .sgc = &sgc };
	struct sg_lb_stats sgs = { 0 };

	sgs.group_capacity = k->group_capacity;
	sgs.group_util = k->group_util;
	sgs.group_runnable = k->group_runnable;
	sgs.group_misfit_task_load = k->group_misfit_task_load;
	sgs.sum_nr_running = k->sum_nr_running;
	sgs.sum_h_nr_running = k->sum_h_nr_running;
	sgs.group_weight = k->group_weight;
	sgs.group_asym_packing = k->group_asym_packing;
	sgs.group_smt_balance = k->group_smt_balance;
	sgs.nr_numa_running = k->nr_numa_running;
	sgs.nr_preferred_running = k->nr_preferred_running;
	return (u32)group_classify(imbalance_pct, &group, &sgs) |
	       (u32)group_is_overloaded(imbalance_pct, &sgs) << 8 |
	       (u32)group_has_capacity(imbalance_pct, &sgs) << 9 |
	       (u32)fbq_classify_group(&sgs) << 10;
}

/* sg_lb_stats in full, for calculate_imbalance(). */
struct kd_sgs_full {
	u64 avg_load, group_load, group_capacity, group_util, group_misfit_task_load;
	u32 sum_nr_running, sum_h_nr_running, idle_cpus, group_weight, group_type;
};

struct kd_imb_in {
	struct kd_sgs_full busiest, local;
	u64 total_load, total_capacity;
	u32 busiest_cores, local_cores, prefer_sibling, sd_flags, imb_numa_nr, idle;
	u64 avg_load; /* sds->avg_load as find_busiest_group() left it */
};

struct kd_imb_out {
	s64 imbalance;
	u64 local_avg_load, sds_avg_load;
	u32 migration_type;
};

static void kd_sgs_full(struct sg_lb_stats *k, const struct kd_sgs_full *r)
{
	k->avg_load = r->avg_load;
	k->group_load = r->group_load;
	k->group_capacity = r->group_capacity;
	k->group_util = r->group_util;
	k->group_misfit_task_load = r->group_misfit_task_load;
	k->sum_nr_running = r->sum_nr_running;
	k->sum_h_nr_running = r->sum_h_nr_running;
	k->idle_cpus = r->idle_cpus;
	k->group_weight = r->group_weight;
	k->group_type = r->group_type;
}

int KD(calculate_imbalance)(const struct kd_imb_in *in, struct kd_imb_out *out)
{
	struct sched_group busiest = { .cores = in->busiest_cores };
	struct sched_group local = { .cores = in->local_cores };
	struct sched_domain sd = { .flags = (int)in->sd_flags, .imb_numa_nr = in->imb_numa_nr };
	struct sd_lb_stats sds = { 0 };
	struct lb_env env = { 0 };

	sds.busiest = &busiest;
	sds.local = &local;
	sds.total_load = in->total_load;
	sds.total_capacity = in->total_capacity;
	sds.prefer_sibling = in->prefer_sibling;
	sds.avg_load = in->avg_load;
	kd_sgs_full(&sds.busiest_stat, &in->busiest);
	kd_sgs_full(&sds.local_stat, &in->local);
	env.sd = &sd;
	env.idle = in->idle;
	env.migration_type = migrate_load;
	calculate_imbalance(&env, &sds);
	out->imbalance = env.imbalance;
	out->migration_type = env.migration_type;
	out->local_avg_load = sds.local_stat.avg_load;
	out->sds_avg_load = sds.avg_load;
	return 0;
}
