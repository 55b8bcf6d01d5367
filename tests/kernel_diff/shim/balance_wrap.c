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
