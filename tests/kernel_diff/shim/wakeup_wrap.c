/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around fair.c's wake_affine_idle()
 * and wake_affine_weight(); the per-CPU arrays are filled by KD(wakeup_set_cpu). */
struct rq kd_rqs[KD_NR_CPUS];
struct task_struct *kd_current;

int KD(wakeup_set_cpu)(int cpu, u32 nr_running, u32 h_nr_queued, u32 h_nr_runnable,
			u64 load, u64 capacity, int idle, int llc)
{
	struct rq *rq = &kd_rqs[cpu];

	rq->nr_running = nr_running;
	rq->cfs.h_nr_queued = h_nr_queued;
	rq->cfs.h_nr_runnable = h_nr_runnable;
	rq->kd_load = load;
	rq->kd_capacity = capacity;
	rq->kd_idle = idle;
	rq->kd_llc = llc;
	return 0;
}

/* Returns the target CPU, or -1 for nr_cpumask_bits (no decision). */
int KD(wake_affine_idle)(int this_cpu, int prev_cpu, int sync)
{
	int r = wake_affine_idle(this_cpu, prev_cpu, sync);

	return r == nr_cpumask_bits ? -1 : r;
}

int KD(wake_affine_weight)(u32 imbalance_pct, u64 p_load, u64 current_load, int this_cpu,
			   int prev_cpu, int sync, int wa_bias)
{
	struct sched_domain sd = { .imbalance_pct = imbalance_pct };
	struct task_struct p = { .kd_h_load = p_load };
	struct task_struct curr = { .kd_h_load = current_load };
	int r;

	kd_sched_features = wa_bias ? 1ULL << __SCHED_FEAT_WA_BIAS : 0;
	kd_current = &curr;
	r = wake_affine_weight(&sd, &p, this_cpu, prev_cpu, sync);
	return r == nr_cpumask_bits ? -1 : r;
}

/* The idle-state fields of one CPU for sched_balance_find_dst_group_cpu(): exit latency
 * (us) when has_state, the idle stamp, sched_idle_cpu(). */
int KD(wakeup_set_idle)(int cpu, int has_state, u32 exit_latency, u64 idle_stamp, int sched_idle)
{
	struct rq *rq = &kd_rqs[cpu];

	rq->kd_has_state = has_state;
	rq->kd_state.exit_latency = exit_latency;
	rq->idle_stamp = idle_stamp;
	rq->kd_sched_idle = sched_idle;
	return 0;
}

int KD(find_dst_group_cpu)(const u64 *span, u32 group_weight, const u64 *allowed, int this_cpu)
{
	struct sched_group sg = { .group_weight = group_weight };
	struct cpumask cpus;
	struct task_struct p = { .cpus_ptr = &cpus };

	memcpy(sg.cpumask, span, sizeof(sg.cpumask));
	memcpy(cpus.bits, allowed, sizeof(cpus.bits));
	return sched_balance_find_dst_group_cpu(&sg, &p, this_cpu);
}
