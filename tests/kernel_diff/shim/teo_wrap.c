/*
 * schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around teo.c's teo_select() (with
 * teo_update()) and teo_reflect() on one CPU. struct kd_teo is struct teo_cpu widened to
 * 64 bits; it goes in and comes back. states[i] = {exit latency, target residency, polling}.
 */
struct kd_teo {
	s64 time_span_ns, sleep_length_ns;
	u64 bins[CPUIDLE_STATE_MAX][2]; /* intercepts, hits */
	u64 total, tick_hits;
};

struct kd_teo_in {
	u64 tick_nsec, tick_stopped, sleep_length_ns, delta_tick_ns;
	s64 latency_req_ns;
	s64 last_state_idx;
	u64 last_residency_ns;
	u64 now_ns;
	u64 got_tick;
};

static void kd_teo_load(struct teo_cpu *t, const struct kd_teo *c)
{
	int i;

	t->time_span_ns = c->time_span_ns;
	t->sleep_length_ns = c->sleep_length_ns;
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		t->state_bins[i].intercepts = c->bins[i][0];
		t->state_bins[i].hits = c->bins[i][1];
	}
	t->total = c->total;
	t->tick_hits = c->tick_hits;
}

static void kd_teo_store(struct kd_teo *c, const struct teo_cpu *t)
{
	int i;

	c->time_span_ns = t->time_span_ns;
	c->sleep_length_ns = t->sleep_length_ns;
	for (i = 0; i < CPUIDLE_STATE_MAX; i++) {
		c->bins[i][0] = t->state_bins[i].intercepts;
		c->bins[i][1] = t->state_bins[i].hits;
	}
	c->total = t->total;
	c->tick_hits = t->tick_hits;
}

/* teo_select(); in->last_state_idx: dev->last_state_idx (-1: no update). */
int KD(teo_select)(struct kd_teo *c, const u64 (*states)[3], int n,
		   const struct kd_teo_in *in, int *stop_tick)
{
	struct cpuidle_driver drv = { 0 };
	struct cpuidle_device dev = { 0 };
	struct teo_cpu t = { 0 };
	bool stop = true;
	int i, idx;

	if (n > CPUIDLE_STATE_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		drv.states[i].exit_latency_ns = states[i][0];
		drv.states[i].target_residency_ns = states[i][1];
		drv.states[i].flags = states[i][2] ? CPUIDLE_FLAG_POLLING : 0;
	}
	drv.state_count = n;
	dev.last_state_idx = in->last_state_idx;
	dev.last_residency_ns = in->last_residency_ns;
	kd_latency_req = in->latency_req_ns;
	kd_tick_stopped = in->tick_stopped;
	kd_sleep_length = in->sleep_length_ns;
	kd_delta_next = in->delta_tick_ns;
	kd_idle_tick_nsec = in->tick_nsec;
	kd_local_clock = in->now_ns;
	kd_teo_load(&t, c);
	kd_teo_cpu = &t;
	idx = teo_select(&drv, &dev, &stop);
	kd_teo_store(c, &t);
	*stop_tick = stop;
	return idx;
}

/* teo_reflect() after idle in state `state` (poll_time_limit clear). */
void KD(teo_reflect)(struct kd_teo *c, const struct kd_teo_in *in, int state)
{
	struct cpuidle_device dev = { 0 };
	struct teo_cpu t = { 0 };

	kd_idle_tick_nsec = in->tick_nsec;
	kd_local_clock = in->now_ns;
	kd_got_tick = in->got_tick;
	kd_teo_load(&t, c);
	kd_teo_cpu = &t;
	teo_reflect(&dev, state);
	kd_teo_store(c, &t);
}
