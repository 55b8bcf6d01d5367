/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around fair.c's numa_classify() and
 * load_too_imbalanced() (the v5.7+ form). */
struct kd_ns {
	u64 load, runnable, util, compute_capacity;
	u32 nr_running, weight;
};

static void kd_ns(struct numa_stats *k, const struct kd_ns *r)
{
	k->load = r->load;
	k->runnable = r->runnable;
	k->util = r->util;
	k->compute_capacity = r->compute_capacity;
	k->nr_running = r->nr_running;
	k->weight = r->weight;
}

u32 KD(numa_classify)(u32 imbalance_pct, const struct kd_ns *ns)
{
	struct numa_stats k = { 0 };

	kd_ns(&k, ns);
	return numa_classify(imbalance_pct, &k);
}

int KD(load_too_imbalanced)(long src_load, long dst_load, const struct kd_ns *src,
			    const struct kd_ns *dst)
{
	struct task_numa_env env = { 0 };

	kd_ns(&env.src_stats, src);
	kd_ns(&env.dst_stats, dst);
	return load_too_imbalanced(src_load, dst_load, &env);
}

/* A task, its mm and group, and the scan sysctls, for the scan-period functions. */
struct kd_scan {
	u64 rss, priv, shared, locality[3];
	u32 scan_size, period_min, period_max, refcount, has_group;
	u32 numa_scan_period, numa_scan_period_max;
};

struct kd_scan_out {
	u64 numa_next_scan;
	u64 locality[3]; /* p->numa_faults_locality after */
	u32 scan_min, scan_start, scan_max, numa_scan_period;
};

int KD(scan_period)(const struct kd_scan *in, u64 shared, u64 private, struct kd_scan_out *out)
{
	struct mm_struct mm = { .kd_rss = in->rss };
	struct numa_group ng = { .refcount = in->refcount, .kd_priv = in->priv,
				 .kd_shared = in->shared };
	struct task_struct p = { .mm = &mm };

	sysctl_numa_balancing_scan_size = in->scan_size;
	sysctl_numa_balancing_scan_period_min = in->period_min;
	sysctl_numa_balancing_scan_period_max = in->period_max;
	p.numa_group = in->has_group ? &ng : NULL;
	p.numa_scan_period = in->numa_scan_period;
	p.numa_scan_period_max = in->numa_scan_period_max;
	memcpy(p.numa_faults_locality, in->locality, sizeof(p.numa_faults_locality));
	out->scan_min = task_scan_min(&p);
	out->scan_start = task_scan_start(&p);
	out->scan_max = task_scan_max(&p);
	update_task_scan_period(&p, shared, private);
	out->numa_scan_period = p.numa_scan_period;
	out->numa_next_scan = mm.numa_next_scan;
	memcpy(out->locality, p.numa_faults_locality, sizeof(out->locality));
	return 0;
}

/* Node scores on one distance table: NR_NUMA_HINT_FAULT_TYPES x 4 regions x nodes faults
 * of the task and of its group. */
#define KD_FAULTS (2 * 4 * KD_MAX_NODES)
#define KD_LIMS 4
struct kd_nw_in {
	u64 task_faults[KD_FAULTS], group_faults[KD_FAULTS];
	u64 total_numa_faults, group_total_faults;
	s32 dist[KD_MAX_NODES][KD_MAX_NODES];
	s32 lim[KD_LIMS];
	u32 nr_nodes, has_faults, has_group;
};

struct kd_nw_out {
	u64 task_weight[KD_MAX_NODES][KD_LIMS], group_weight[KD_MAX_NODES][KD_LIMS];
	u32 topology_type;
};

/* sched_init_numa()'s inputs to init_numa_topology_type(): the number of distinct
 * distances (sched_domains_numa_levels) and the largest one. */
static void kd_numa_levels(void)
{
	int seen[256] = { 0 }, a, b;

	sched_domains_numa_levels = 0;
	sched_max_numa_distance = 0;
	for (a = 0; a < kd_nr_nodes; a++)
		for (b = 0; b < kd_nr_nodes; b++) {
			int d = kd_dist[a][b];

			if (!seen[d & 255]++)
				sched_domains_numa_levels++;
			sched_max_numa_distance = max(sched_max_numa_distance, d);
		}
}

int KD(numa_weights)(const struct kd_nw_in *in, struct kd_nw_out *out)
{
	unsigned long tf[KD_FAULTS], gf[KD_FAULTS];
	struct numa_group ng = { .total_faults = in->group_total_faults, .faults = gf };
	struct task_struct p = { 0 };

	memcpy(tf, in->task_faults, sizeof(tf));
	memcpy(gf, in->group_faults, sizeof(gf));
	memcpy(kd_dist, in->dist, sizeof(kd_dist));
	kd_nr_nodes = (int)in->nr_nodes;
	kd_numa_levels();
	init_numa_topology_type(NUMA_NO_NODE);
	out->topology_type = sched_numa_topology_type;
	p.numa_faults = in->has_faults ? tf : NULL;
	p.total_numa_faults = in->total_numa_faults;
	p.numa_group = in->has_group ? &ng : NULL;
	for (int nid = 0; nid < kd_nr_nodes; nid++)
		for (int l = 0; l < KD_LIMS; l++) {
			out->task_weight[nid][l] = task_weight(&p, nid, in->lim[l]);
			out->group_weight[nid][l] = group_weight(&p, nid, in->lim[l]);
		}
	return 0;
}

/* task_numa_find_cpu() (task_numa_compare() on every allowed CPU of dst_nid) on a case: up to 4 nodes of 1-8 CPUs (the node
 * masks from cpu_node[]), a task per CPU (or the idle task), the task p being placed (task 0),
 * up to two numa_groups; the search state of struct task_numa_env. */
#define KD_NC_CPUS 32
#define KD_NC_TASKS (KD_NC_CPUS + 1)
#define KD_NC_FAULTS (2 * 4 * 4)
struct kd_nc_task {
	u64 faults[KD_NC_FAULTS];
	u64 total_faults, h_load, cpus;
	s32 preferred_nid, group, exiting, has_faults;
};
struct kd_nc_stats {
	struct kd_ns ns;
	u32 node_type;
	s32 idle_cpu;
};
struct kd_nc_in {
	struct kd_nc_task task[KD_NC_TASKS];
	u64 group_faults[2][KD_NC_FAULTS];
	u64 group_total_faults[2];
	s32 dist[KD_MAX_NODES][KD_MAX_NODES];
	s32 cpu_node[KD_NC_CPUS];
	s32 curr[KD_NC_CPUS];  /* task index, -1: the idle task */
	u32 idle[KD_NC_CPUS], migrate_on[KD_NC_CPUS];
	struct kd_nc_stats src_stats, dst_stats;
	s64 best_imp, taskimp, groupimp;
	s32 nr_nodes, nr_cpus, src_cpu, src_nid, dst_cpu, dst_nid, imb_numa_nr, imbalance_pct;
	s32 dist_lim, best_task, best_cpu, pad;
};
struct kd_nc_out {
	s64 best_imp;
	u64 migrate_on;
	s32 best_task, best_cpu, dst_cpu, pad;
};

int KD(numa_find_cpu)(const struct kd_nc_in *in, struct kd_nc_out *out)
{
	static struct task_struct t[KD_NC_TASKS];
	static unsigned long tf[KD_NC_TASKS][KD_NC_FAULTS], gf[2][KD_NC_FAULTS];
	static struct cpumask cpus[KD_NC_TASKS];
	static struct numa_group ng[2];
	static struct task_struct idle = { .flags = PF_IDLE, .numa_preferred_nid = NUMA_NO_NODE };
	struct task_numa_env env = { 0 };
	int i;

	if (in->nr_cpus > KD_NC_CPUS || in->nr_nodes > 4)
		return -1;
	memcpy(kd_dist, in->dist, sizeof(kd_dist));
	kd_nr_nodes = in->nr_nodes;
	kd_numa_levels();
	init_numa_topology_type(NUMA_NO_NODE);
	memset(kd_node_mask, 0, sizeof(kd_node_mask));
	for (i = 0; i < in->nr_cpus; i++)
		kd_node_mask[in->cpu_node[i]].bits[0] |= 1ULL << i;
	for (i = 0; i < 2; i++) {
		memcpy(gf[i], in->group_faults[i], sizeof(gf[i]));
		ng[i] = (struct numa_group){ .total_faults = in->group_total_faults[i],
					     .faults = gf[i] };
	}
	for (i = 0; i < KD_NC_TASKS; i++) {
		const struct kd_nc_task *k = &in->task[i];

		memcpy(tf[i], k->faults, sizeof(tf[i]));
		memset(&cpus[i], 0, sizeof(cpus[i]));
		cpus[i].bits[0] = k->cpus;
		t[i] = (struct task_struct){
			.flags = k->exiting ? PF_EXITING : 0,
			.cpus_ptr = &cpus[i],
			.numa_preferred_nid = k->preferred_nid,
			.kd_h_load = k->h_load,
			.numa_faults = k->has_faults ? tf[i] : NULL,
			.total_numa_faults = k->total_faults,
			.numa_group = k->group >= 0 ? &ng[k->group] : NULL,
		};
	}
	for (i = 0; i < in->nr_cpus; i++) {
		kd_numa_rqs[i].curr = in->curr[i] >= 0 ? &t[in->curr[i]] : &idle;
		kd_numa_rqs[i].kd_idle = in->idle[i];
		kd_numa_rqs[i].numa_migrate_on = in->migrate_on[i];
	}
	env.p = &t[0];
	env.src_cpu = in->src_cpu;
	env.src_nid = in->src_nid;
	env.dst_cpu = in->dst_cpu;
	env.dst_nid = in->dst_nid;
	env.imb_numa_nr = in->imb_numa_nr;
	kd_ns(&env.src_stats, &in->src_stats.ns);
	env.src_stats.node_type = in->src_stats.node_type;
	env.src_stats.idle_cpu = in->src_stats.idle_cpu;
	kd_ns(&env.dst_stats, &in->dst_stats.ns);
	env.dst_stats.node_type = in->dst_stats.node_type;
	env.dst_stats.idle_cpu = in->dst_stats.idle_cpu;
	env.imbalance_pct = in->imbalance_pct;
	env.dist = in->dist_lim;
	env.best_task = in->best_task >= 0 ? &t[in->best_task] : NULL;
	env.best_imp = in->best_imp;
	env.best_cpu = in->best_cpu;
	task_numa_find_cpu(&env, in->taskimp, in->groupimp);
	out->best_task = env.best_task ? (int)(env.best_task - t) : -1;
	out->best_imp = env.best_imp;
	out->best_cpu = env.best_cpu;
	out->dst_cpu = env.dst_cpu;
	out->migrate_on = 0;
	for (i = 0; i < in->nr_cpus; i++)
		if (kd_numa_rqs[i].numa_migrate_on)
			out->migrate_on |= 1ULL << i;
	return 0;
}
