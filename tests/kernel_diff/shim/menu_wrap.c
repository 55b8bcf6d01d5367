/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around menu.c's get_typical_interval(). */
unsigned int KD(get_typical_interval)(const unsigned int intervals[8])
{
	struct menu_device d = { 0 };
	unsigned int i;

	for (i = 0; i < INTERVALS; i++)
		d.intervals[i] = intervals[i];
	return get_typical_interval(&d);
}

/* menu_select() on one CPU. The device state (struct kd_menu, the fields of struct
 * menu_device widened to u64) goes in and comes back; states[i] = {exit latency, target
 * residency, polling}; returns the state index, *stop_tick its answer. */
struct kd_menu {
	u64 needs_update, tick_wakeup, next_timer_ns, bucket;
	u64 correction_factor[BUCKETS];
	u64 intervals[INTERVALS];
	u64 interval_ptr;
};

struct kd_idle_in {
	u64 tick_nsec, tick_stopped, sleep_length_ns, delta_tick_ns;
	s64 latency_req_ns;
	s64 last_state_idx;
	u64 last_residency_ns;
};

int KD(menu_select)(struct kd_menu *m, const u64 (*states)[3], int n,
		    const struct kd_idle_in *in, int *stop_tick)
{
	struct cpuidle_driver drv = { 0 };
	struct cpuidle_device dev = { 0 };
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
	kd_menu_data.needs_update = m->needs_update;
	kd_menu_data.tick_wakeup = m->tick_wakeup;
	kd_menu_data.next_timer_ns = m->next_timer_ns;
	kd_menu_data.bucket = m->bucket;
	for (i = 0; i < BUCKETS; i++)
		kd_menu_data.correction_factor[i] = m->correction_factor[i];
	for (i = 0; i < INTERVALS; i++)
		kd_menu_data.intervals[i] = m->intervals[i];
	kd_menu_data.interval_ptr = m->interval_ptr;

	idx = menu_select(&drv, &dev, &stop);

	m->needs_update = kd_menu_data.needs_update;
	m->tick_wakeup = kd_menu_data.tick_wakeup;
	m->next_timer_ns = kd_menu_data.next_timer_ns;
	m->bucket = kd_menu_data.bucket;
	for (i = 0; i < BUCKETS; i++)
		m->correction_factor[i] = kd_menu_data.correction_factor[i];
	for (i = 0; i < INTERVALS; i++)
		m->intervals[i] = kd_menu_data.intervals[i];
	m->interval_ptr = kd_menu_data.interval_ptr;
	*stop_tick = stop;
	return idx;
}
