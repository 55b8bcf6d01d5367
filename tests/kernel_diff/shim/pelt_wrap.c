/*
 * schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around the PELT functions of
 * kernel/sched/pelt.c, included after the extracted definitions. KD(name) prefixes the kernel
 * version. The Rust side passes a flat struct; it is copied into the kernel's own
 * struct sched_avg (extracted from include/linux/sched.h) and back.
 */
struct kd_sched_avg {
	u64 last_update_time, load_sum, runnable_sum, util_sum, period_contrib;
	u64 load_avg, runnable_avg, util_avg, util_est;
};

static void kd_to_kernel(struct sched_avg *k, const struct kd_sched_avg *r)
{
	k->last_update_time = r->last_update_time;
	k->load_sum = r->load_sum;
	k->runnable_sum = r->runnable_sum;
	k->util_sum = r->util_sum;
	k->period_contrib = r->period_contrib;
	k->load_avg = r->load_avg;
	k->runnable_avg = r->runnable_avg;
	k->util_avg = r->util_avg;
}

static void kd_from_kernel(struct kd_sched_avg *r, const struct sched_avg *k)
{
	r->last_update_time = k->last_update_time;
	r->load_sum = k->load_sum;
	r->runnable_sum = k->runnable_sum;
	r->util_sum = k->util_sum;
	r->period_contrib = k->period_contrib;
	r->load_avg = k->load_avg;
	r->runnable_avg = k->runnable_avg;
	r->util_avg = k->util_avg;
}

u64 KD(decay_load)(u64 val, u64 n) { return decay_load(val, n); }

u32 KD(accumulate_pelt_segments)(u64 periods, u32 d1, u32 d3)
{
	return __accumulate_pelt_segments(periods, d1, d3);
}

/* ___update_load_sum(), then ___update_load_avg(sa, avg_load) when it returned 1, as every
 * caller in pelt.c does; returns ___update_load_sum()'s result. */
int KD(update_load)(u64 now, struct kd_sched_avg *sa, unsigned long load, unsigned long runnable,
		    int running, unsigned long avg_load)
{
	struct sched_avg k = { 0 };
	int ret;

	kd_to_kernel(&k, sa);
	ret = ___update_load_sum(now, &k, load, runnable, running);
	if (ret)
		___update_load_avg(&k, avg_load);
	kd_from_kernel(sa, &k);
	return ret;
}

/* __update_load_avg_se()'s tail for a task entity: cfs_se_util_change() after a recomputed
 * average (it reads sched_feat(UTIL_EST)); `util_est` is in and out. */
int KD(update_load_se)(u64 now, struct kd_sched_avg *sa, unsigned long weight, int on_rq,
		       int runnable, int running, int util_est_feat)
{
	struct sched_avg k = { 0 };
	int ret;

	kd_sched_features = util_est_feat ? 1ULL << __SCHED_FEAT_UTIL_EST : 0;
	kd_to_kernel(&k, sa);
	k.util_est = sa->util_est;
	ret = ___update_load_sum(now, &k, on_rq, runnable, running);
	if (ret) {
		___update_load_avg(&k, weight);
		cfs_se_util_change(&k);
	}
	kd_from_kernel(sa, &k);
	sa->util_est = k.util_est;
	return ret;
}

unsigned long kd_cpu_capacity = 1024;

/* util_est_update(cfs_rq, p, task_sleep) with UTIL_EST on, on a task whose util_avg,
 * runnable_avg and util_est are given; returns the new util_est. */
u32 KD(util_est_update)(u64 util_avg, u64 runnable_avg, u32 util_est, int task_sleep,
			unsigned long cpu_capacity)
{
	struct task_struct p = { 0 };
	struct cfs_rq cfs_rq = { 0 };

	kd_sched_features = 1ULL << __SCHED_FEAT_UTIL_EST;
	kd_cpu_capacity = cpu_capacity;
	p.se.avg.util_avg = util_avg;
	p.se.avg.runnable_avg = runnable_avg;
	p.se.avg.util_est = util_est;
	util_est_update(&cfs_rq, &p, task_sleep);
	return p.se.avg.util_est;
}
