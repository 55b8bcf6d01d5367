/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): the cpuidle driver and device fields the
 * governors read (menu_select(), teo_select() and their helpers), the governors' residency
 * threshold (drivers/cpuidle/governors/gov.h), and the per-case answers of the PM QoS
 * latency request and the nohz code, set by the wrappers.
 */
#ifndef SCHEDLAB_KDIFF_CPUIDLE_H
#define SCHEDLAB_KDIFF_CPUIDLE_H
typedef s64 ktime_t;
#define KTIME_MAX ((s64)~((u64)1 << 63))
#define ktime_to_us(t) ((s64)(t) / 1000)
#define RESIDENCY_THRESHOLD_NS (15 * NSEC_PER_USEC)
#define CPUIDLE_FLAG_POLLING (1UL << 0)
#define CPUIDLE_STATE_MAX 10

struct cpuidle_state {
	u64 exit_latency_ns;
	u64 target_residency_ns;
	unsigned int flags;
};

struct cpuidle_state_usage {
	unsigned long long disable;
};

struct cpuidle_driver {
	struct cpuidle_state states[CPUIDLE_STATE_MAX];
	int state_count;
};

struct cpuidle_device {
	unsigned int cpu;
	unsigned int poll_time_limit:1;
	int last_state_idx;
	u64 last_residency_ns;
	struct cpuidle_state_usage states_usage[CPUIDLE_STATE_MAX];
};

static s64 kd_latency_req;
static bool kd_tick_stopped, kd_got_tick;
static ktime_t kd_sleep_length, kd_delta_next;
static u64 kd_idle_tick_nsec, kd_local_clock;
#define TICK_NSEC kd_idle_tick_nsec

static inline s64 cpuidle_governor_latency_req(unsigned int cpu)
{
	(void)cpu;
	return kd_latency_req;
}
static inline bool tick_nohz_tick_stopped(void) { return kd_tick_stopped; }
static inline bool tick_nohz_idle_got_tick(void) { return kd_got_tick; }
static inline u64 local_clock(void) { return kd_local_clock; }
static inline ktime_t tick_nohz_get_sleep_length(ktime_t *delta_next)
{
	*delta_next = kd_delta_next;
	return kd_sleep_length;
}
#endif
