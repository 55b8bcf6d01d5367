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
