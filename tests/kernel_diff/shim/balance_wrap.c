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
#ifndef KD_BALANCE_61
	sgs.group_smt_balance = k->group_smt_balance;
#endif
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

#ifndef KD_BALANCE_61 /* 6.1: no calculate_imbalance()/find_src_group() wrappers */
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

/* sched_balance_find_src_group() on the statistics of calculate_imbalance()'s input (no
 * busiest group when has_busiest is 0); the groups' SD_SHARE_CPUCAPACITY flags and the
 * domain's imbalance_pct. Returns 1 when it returned the busiest group. */
struct kd_fbg_in {
	struct kd_imb_in imb;
	u32 has_busiest, busiest_flags, local_flags, imbalance_pct;
};

int KD(find_src_group)(const struct kd_fbg_in *in, struct kd_imb_out *out)
{
	static struct sched_group busiest, local;
	struct sched_domain sd = { .flags = (int)in->imb.sd_flags,
				   .imb_numa_nr = in->imb.imb_numa_nr,
				   .imbalance_pct = in->imbalance_pct };
	struct root_domain rd = { 0 };
	struct rq dst = { .rd = &rd };
	struct lb_env env = { 0 };
	struct sched_group *ret;

	busiest = (struct sched_group){ .cores = in->imb.busiest_cores,
					.flags = (int)in->busiest_flags };
	local = (struct sched_group){ .cores = in->imb.local_cores, .flags = (int)in->local_flags };
	init_sd_lb_stats(&kd_fbg_sds);
	kd_fbg_sds.busiest = in->has_busiest ? &busiest : NULL;
	kd_fbg_sds.local = &local;
	kd_fbg_sds.total_load = in->imb.total_load;
	kd_fbg_sds.total_capacity = in->imb.total_capacity;
	kd_fbg_sds.prefer_sibling = in->imb.prefer_sibling;
	kd_fbg_sds.avg_load = in->imb.avg_load;
	if (in->has_busiest)
		kd_sgs_full(&kd_fbg_sds.busiest_stat, &in->imb.busiest);
	kd_sgs_full(&kd_fbg_sds.local_stat, &in->imb.local);
	env.sd = &sd;
	env.dst_rq = &dst;
	env.idle = in->imb.idle;
	env.migration_type = migrate_load;
	env.imbalance = 0;
	ret = sched_balance_find_src_group(&env);
	out->imbalance = env.imbalance;
	out->migration_type = env.migration_type;
	out->local_avg_load = 0;
	out->sds_avg_load = 0;
	return ret == &busiest;
}

#endif

/* The per-CPU state of should_we_balance() and update_sd_pick_busiest(): idle_cpu(),
 * arch_asym_cpu_priority(), capacity_of() and cpu_smt_mask() of one CPU. */
int KD(lb_set_cpu)(int cpu, int idle, int prio, u64 capacity, const u64 *smt)
{
	struct kd_lb_cpu *c = &kd_lb_cpus[cpu];

	c->idle = idle;
	c->prio = prio;
	c->capacity = capacity;
	memcpy(c->smt.bits, smt, sizeof(c->smt.bits));
	return 0;
}

struct kd_swb_in {
	u64 balance_mask[KD_MASK_WORDS];
	u64 cpus[KD_MASK_WORDS];
	u32 dst_cpu, idle, sd_flags, nr_running, ttwu_pending;
};

/* should_we_balance() for the local group (its balance mask) of a domain of dst_cpu. */
int KD(should_we_balance)(const struct kd_swb_in *in)
{
	struct sched_group_capacity sgc = { 0 };
	struct sched_group sg = { .sgc = &sgc };
	struct sched_domain sd = { .flags = (int)in->sd_flags };
	struct rq dst_rq = { .nr_running = in->nr_running, .ttwu_pending = in->ttwu_pending };
	struct cpumask cpus;
	struct lb_env env = { 0 };

	memcpy(sgc.cpumask, in->balance_mask, sizeof(sgc.cpumask));
	memcpy(cpus.bits, in->cpus, sizeof(cpus.bits));
	sd.groups = &sg;
	env.sd = &sd;
	env.dst_cpu = (int)in->dst_cpu;
	env.dst_rq = &dst_rq;
	env.idle = in->idle;
	env.cpus = &cpus;
	return should_we_balance(&env);
}

/* A group as update_sd_pick_busiest() reads it. */
struct kd_sg {
	u64 min_capacity, max_capacity;
	s32 asym_prefer_cpu, flags;
};

struct kd_pick_in {
	struct kd_sgs_full sgs, busiest_stat;
	struct kd_sg sg, busiest;
	u32 has_busiest, local_group_type, sd_flags, dst_cpu, dst_core_idle;
};

static void kd_sg(struct sched_group *g, struct sched_group_capacity *c, const struct kd_sg *r)
{
	c->min_capacity = r->min_capacity;
	c->max_capacity = r->max_capacity;
	g->sgc = c;
	g->asym_prefer_cpu = r->asym_prefer_cpu;
	g->flags = r->flags;
}

int KD(update_sd_pick_busiest)(const struct kd_pick_in *in)
{
	struct sched_group_capacity sgc = { 0 }, bsgc = { 0 };
	struct sched_group sg = { 0 }, busiest = { 0 };
	struct sched_domain sd = { .flags = (int)in->sd_flags };
	struct sd_lb_stats sds = { 0 };
	struct sg_lb_stats sgs = { 0 };
	struct lb_env env = { 0 };

	kd_sg(&sg, &sgc, &in->sg);
	kd_sg(&busiest, &bsgc, &in->busiest);
	sds.busiest = in->has_busiest ? &busiest : NULL;
	kd_sgs_full(&sds.busiest_stat, &in->busiest_stat);
	sds.local_stat.group_type = in->local_group_type;
	kd_sgs_full(&sgs, &in->sgs);
	env.sd = &sd;
	env.dst_cpu = (int)in->dst_cpu;
	env.dst_core_idle = in->dst_core_idle;
	return update_sd_pick_busiest(&env, &sds, &sg, &sgs);
}


/* The kernel's migrate_degrades_locality() returns -1 outside SD_NUMA domains; on them the
 * case's answer (1 degrades, 0 improves, -1 unaffected). */
static int migrate_degrades_locality(struct task_struct *p, struct lb_env *env)
{
	if (!(env->sd->flags & SD_NUMA))
		return -1;
	return p->kd_mdl;
}

struct kd_cmt_in {
	u64 grpmask[KD_MASK_WORDS], cpus[KD_MASK_WORDS], allowed[KD_MASK_WORDS];
	u64 clock_task, exec_start;
	u32 migration_cost, src_cpu, dst_cpu, idle, flags, nr_balance_failed, cache_nice_tries;
	u32 sd_flags, dst_nr_running, running, idle_policy, next_buddy, cache_hot_buddy;
	s32 mdl;
};

struct kd_cmt_out {
	u64 affine, running, hot, forced;
	u32 ret, flags, new_dst_cpu, sched_task_hot;
};

int KD(can_migrate_task)(const struct kd_cmt_in *in, struct kd_cmt_out *out)
{
	struct cpumask grpmask, cpus, allowed;
	struct sched_domain sd = { .flags = (int)in->sd_flags,
				   .nr_balance_failed = in->nr_balance_failed,
				   .cache_nice_tries = in->cache_nice_tries };
	struct rq src_rq = { .kd_clock_task = in->clock_task };
	struct rq dst_rq = { .nr_running = in->dst_nr_running };
	struct task_struct p = { .sched_class = &fair_sched_class, .cpus_ptr = &allowed };
	struct lb_env env = { 0 };

	memcpy(grpmask.bits, in->grpmask, sizeof(grpmask.bits));
	memcpy(cpus.bits, in->cpus, sizeof(cpus.bits));
	memcpy(allowed.bits, in->allowed, sizeof(allowed.bits));
	p.se.exec_start = in->exec_start;
	p.kd_running = (int)in->running;
	p.kd_idle_policy = (int)in->idle_policy;
	p.kd_mdl = in->mdl;
	kd_cfs_rq.next = in->next_buddy ? &p.se : NULL;
	sysctl_sched_migration_cost = in->migration_cost;
	kd_sched_features = in->cache_hot_buddy ? 1ULL << __SCHED_FEAT_CACHE_HOT_BUDDY : 0;
	env.sd = &sd;
	env.src_rq = &src_rq;
	env.src_cpu = (int)in->src_cpu;
	env.dst_cpu = (int)in->dst_cpu;
	env.dst_rq = &dst_rq;
	env.dst_grpmask = &grpmask;
	env.new_dst_cpu = (int)in->dst_cpu;
	env.idle = in->idle;
	env.cpus = &cpus;
	env.flags = in->flags;
	out->ret = (u32)can_migrate_task(&p, &env);
	out->flags = env.flags;
	out->new_dst_cpu = (u32)env.new_dst_cpu;
	out->sched_task_hot = (u32)p.sched_task_hot;
	out->affine = p.stats.nr_failed_migrations_affine;
	out->running = p.stats.nr_failed_migrations_running;
	out->hot = p.stats.nr_failed_migrations_hot;
	out->forced = p.stats.nr_forced_migrations;
	return 0;
}

/* detach_tasks() on a list of n tasks (tasks[0] the least recently run: the list's
 * tail), each movable (allowed everywhere, cold) or pinned to the source CPU. */
#define KD_DETACH_MAX 64
struct kd_dt_task {
	u64 h_load, util;
	u32 fits, pinned, detached, failed_hot;
};

struct kd_dt_in {
	u64 grpmask[KD_MASK_WORDS], cpus[KD_MASK_WORDS], onlysrc[KD_MASK_WORDS];
	s64 imbalance;
	u32 src_cpu, dst_cpu, idle, flags, nr_balance_failed, sd_flags, src_nr_running;
	u32 migration_type, loop_max, loop_break, lb_min, n;
};

struct kd_dt_out {
	s64 imbalance;
	u32 detached, flags, loop, loop_break, src_nr_running, new_dst_cpu;
	u32 order[KD_DETACH_MAX]; /* the list after, from the tail */
};

int KD(detach_tasks)(const struct kd_dt_in *in, struct kd_dt_task *t, struct kd_dt_out *out)
{
	static struct task_struct p[KD_DETACH_MAX];
	struct cpumask grpmask, cpus, all, onlysrc;
	struct sched_domain sd = { .flags = (int)in->sd_flags,
				   .nr_balance_failed = in->nr_balance_failed };
	struct rq src_rq = { .kd_clock_task = 10000000000ULL, .nr_running = in->src_nr_running };
	struct rq dst_rq = { 0 };
	struct lb_env env = { 0 };
	struct list_head *e;
	u32 i, k;

	if (in->n > KD_DETACH_MAX)
		return -1;
	memcpy(grpmask.bits, in->grpmask, sizeof(grpmask.bits));
	memcpy(cpus.bits, in->cpus, sizeof(cpus.bits));
	memset(all.bits, 0xff, sizeof(all.bits));
	memcpy(onlysrc.bits, in->onlysrc, sizeof(onlysrc.bits));
	INIT_LIST_HEAD(&src_rq.cfs_tasks);
	for (i = 0; i < in->n; i++) {
		p[i] = (struct task_struct){ .sched_class = &fair_sched_class };
		p[i].cpus_ptr = t[i].pinned ? &onlysrc : &all;
		p[i].se.exec_start = 0;
		p[i].kd_mdl = -1;
		p[i].kd_h_load = t[i].h_load;
		p[i].kd_util = t[i].util;
		p[i].kd_fits = (int)t[i].fits;
		/* tasks[0] at the tail: list_last_entry() takes it first */
		list_add(&p[i].se.group_node, &src_rq.cfs_tasks);
	}
	kd_cfs_rq.next = NULL;
	sysctl_sched_migration_cost = 500000;
	kd_sched_features = in->lb_min ? 1ULL << __SCHED_FEAT_LB_MIN : 0;
	env.sd = &sd;
	env.src_rq = &src_rq;
	env.src_cpu = (int)in->src_cpu;
	env.dst_cpu = (int)in->dst_cpu;
	env.dst_rq = &dst_rq;
	env.dst_grpmask = &grpmask;
	env.new_dst_cpu = (int)in->dst_cpu;
	env.idle = in->idle;
	env.cpus = &cpus;
	env.flags = in->flags;
	env.imbalance = in->imbalance;
	env.migration_type = in->migration_type;
	env.loop_max = in->loop_max;
	env.loop_break = in->loop_break;
	INIT_LIST_HEAD(&env.tasks);
	out->detached = (u32)detach_tasks(&env);
	out->imbalance = env.imbalance;
	out->flags = env.flags;
	out->loop = env.loop;
	out->loop_break = env.loop_break;
	out->src_nr_running = src_rq.nr_running;
	out->new_dst_cpu = (u32)env.new_dst_cpu;
	for (i = 0; i < in->n; i++) {
		t[i].detached = (u32)p[i].kd_detached;
		t[i].failed_hot = (u32)p[i].stats.nr_failed_migrations_hot;
	}
	k = 0;
	for (e = src_rq.cfs_tasks.prev; e != &src_rq.cfs_tasks && k < KD_DETACH_MAX; e = e->prev)
		out->order[k++] = (u32)(list_entry(e, struct task_struct, se.group_node) - p);
	for (; k < KD_DETACH_MAX; k++)
		out->order[k] = ~0u;
	return 0;
}
