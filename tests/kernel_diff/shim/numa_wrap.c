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
