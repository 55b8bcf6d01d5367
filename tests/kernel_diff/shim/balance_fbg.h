/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): sched_balance_find_src_group()'s
 * environment: update_sd_lb_stats() hands over the statistics the test generated (set by
 * KD(find_src_group) in shim/balance_wrap.c), no energy model (is_rd_overutilized() is
 * true, rd->pd NULL).
 */
static struct sd_lb_stats kd_fbg_sds;
static void update_sd_lb_stats(struct lb_env *env, struct sd_lb_stats *sds)
{
	(void)env;
	*sds = kd_fbg_sds;
}
static inline bool is_rd_overutilized(struct root_domain *rd)
{
	(void)rd;
	return true;
}
#ifndef rcu_dereference
#define rcu_dereference(p) (p)
#endif
