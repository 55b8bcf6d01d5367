/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around fair.c's wake_affine_idle()
 * and wake_affine_weight(), sched_balance_find_dst_group_cpu() and the idle-CPU scans with
 * select_idle_sibling(); the per-CPU arrays are filled by KD(wakeup_set_cpu). For 6.1
 * (KD_WAKEUP_61, shim/wakeup61.h) all but the wake_affine_*() ones: find_idlest_group_cpu(),
 * the same function before its v6.10 rename, and 6.1's scans and select_idle_sibling(). */

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

#ifndef KD_WAKEUP_61
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

#endif

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

/* The idle-CPU scans and select_idle_sibling(): 6.12 and 6.1 (there without the cluster
 * scan and prev_aff; its SIS_PROP stays off). */
int KD(sis_set_smt)(int cpu, const u64 *smt)
{
	memcpy(kd_rqs[cpu].kd_smt.bits, smt, sizeof(kd_rqs[cpu].kd_smt.bits));
	return 0;
}

struct kd_sis_in {
	u64 span[KD_MASK_WORDS], allowed[KD_MASK_WORDS], group_span[KD_MASK_WORDS];
	u32 target, has_idle_core, group_flags, cluster_active, has_sds, nr_idle_scan;
	u32 sis_util, nr_cpu_ids, has_idle_cores, op;
	/* 6.1's SIS_PROP: its bit, jiffies, the waking CPU's (CPU 0's) wake_avg_idle and
	 * wake_stamp, its LLC's avg_scan_cost (the scan's own domain here). */
	u32 sis_prop, pad;
	u64 jiffies, wake_avg_idle, wake_stamp, avg_scan_cost;
};

struct kd_sis_out {
	s32 cpu;
	u32 has_idle_cores;
	u64 wake_avg_idle, wake_stamp, avg_scan_cost;
};

/* op 0: select_idle_cpu(p, sd_llc, has_idle_core, target); op 1: select_idle_smt(p, sd,
 * target). Returns the CPU (-1: none) and the LLC's has_idle_cores afterwards. */
/* The LLC domain, its first group, p's affinity and the LLC's hints of a case. */
static void kd_sis_setup(const struct kd_sis_in *in, struct sched_group *sg,
			 struct sched_domain *sd, struct cpumask *allowed)
{
	*sg = (struct sched_group){ .flags = (int)in->group_flags };
	*sd = (struct sched_domain){ .groups = sg };
	memcpy(sg->cpumask, in->group_span, sizeof(sg->cpumask));
	memcpy(sd->kd_span, in->span, sizeof(sd->kd_span));
	for (int i = 0; i < KD_MASK_WORDS; i++)
		sd->span_weight += (unsigned int)__builtin_popcountll(in->span[i]);
	memcpy(allowed->bits, in->allowed, sizeof(allowed->bits));
	kd_has_sds = (int)in->has_sds;
	kd_sds.nr_idle_scan = (int)in->nr_idle_scan;
	kd_sds.has_idle_cores = (int)in->has_idle_cores;
	sched_cluster_active = (int)in->cluster_active;
	kd_nr_cpu_ids = (int)in->nr_cpu_ids;
	kd_sched_features = in->sis_util ? 1ULL << __SCHED_FEAT_SIS_UTIL : 0;
}

int KD(select_idle)(const struct kd_sis_in *in, struct kd_sis_out *out)
{
	struct sched_group sg;
	struct sched_domain sd;
	struct cpumask allowed;
	struct task_struct p = { .cpus_ptr = &allowed };

	kd_sis_setup(in, &sg, &sd, &allowed);
	sd.avg_scan_cost = in->avg_scan_cost;
	cpu_rq(0)->wake_avg_idle = in->wake_avg_idle;
	cpu_rq(0)->wake_stamp = (unsigned long)in->wake_stamp;
#ifdef KD_WAKEUP_61
	if (in->sis_prop)
		kd_sched_features |= 1ULL << __SCHED_FEAT_SIS_PROP;
	kd_sd_llc = &sd;
	kd_jiffies = (unsigned long)in->jiffies;
	kd_clock = 0;
#endif
	if (in->op == 0)
		out->cpu = select_idle_cpu(&p, &sd, in->has_idle_core, (int)in->target);
	else
		out->cpu = select_idle_smt(&p, &sd, (int)in->target);
	out->has_idle_cores = (u32)kd_sds.has_idle_cores;
	out->wake_avg_idle = cpu_rq(0)->wake_avg_idle;
	out->wake_stamp = cpu_rq(0)->wake_stamp;
	out->avg_scan_cost = sd.avg_scan_cost;
	return 0;
}

/* A CPU's LLC id (cpus_share_cache()) and sd_share_id (cpus_share_resources()). */
int KD(sis_set_ids)(int cpu, int llc, int share)
{
	kd_rqs[cpu].kd_llc = llc;
	kd_rqs[cpu].kd_share = share;
	return 0;
}

struct kd_sibling_out {
	s32 cpu;
	u32 has_idle_cores;
	s32 recent_used_cpu;
	u32 pad;
};

/* select_idle_sibling(p, prev, target) on the case of KD(select_idle) (its domain is the
 * target's sd_llc), with p->recent_used_cpu = recent and sched_smt_active() = smt_active:
 * the CPU, the LLC's has_idle_cores and p->recent_used_cpu afterwards. */
int KD(select_idle_sibling)(const struct kd_sis_in *in, int prev, int recent, int smt_active,
			    struct kd_sibling_out *out)
{
	struct sched_group sg;
	struct sched_domain sd;
	struct cpumask allowed;
	struct task_struct p = { .cpus_ptr = &allowed, .recent_used_cpu = recent };

	kd_sis_setup(in, &sg, &sd, &allowed);
	kd_sd_llc = &sd;
	kd_smt_active = smt_active;
	out->cpu = select_idle_sibling(&p, prev, (int)in->target);
	out->has_idle_cores = (u32)kd_sds.has_idle_cores;
	out->recent_used_cpu = p.recent_used_cpu;
	kd_sd_llc = NULL;
	return 0;
}
