/* schedlab kernel_diff shim (MIT OR Apache-2.0): what 6.1's select_idle_cpu() names beyond
 * the 6.12 scans' shim. 6.1 still has SIS_PROP (the scan limit from the waking CPU's
 * wake_avg_idle against the LLC's avg_scan_cost); it is off in 6.1's features.h and in every
 * case (its sched_feat() bit is never set), so these stand-ins are only compiled, never run:
 * the waking CPU's sd_llc, jiffies, cpu_clock() and update_avg(). (The shim's this_rq() and
 * smp_processor_id(), CPU 0, are wakeup_sis_pre.h's, included before the scans for 6.1.) */
#define this_cpu_ptr(p) (&kd_sd_llc)
/* jiffies from the case; cpu_clock() a counter that every available_idle_cpu() read
 * advances by the mirror's idle_scan_step_ns (40 ns): __select_idle_cpu() reads it once per
 * CPU examined, so a scan's "time" is the mirror's count of examined CPUs x 40 ns. */
static unsigned long kd_jiffies;
static u64 kd_clock;
#define KD_SCAN_STEP_NS 40ULL
#define jiffies kd_jiffies
#define cpu_clock(cpu) (kd_clock)
#undef available_idle_cpu
#define available_idle_cpu(cpu) (kd_clock += KD_SCAN_STEP_NS, kd_rqs[cpu].kd_idle)
static inline void update_avg(u64 *avg, u64 sample)
{
	s64 diff = (s64)(sample - *avg);

	*avg += (u64)(diff / 8);
}
