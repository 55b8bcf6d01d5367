/* schedlab kernel_diff shim (MIT OR Apache-2.0): what 6.1's select_idle_cpu() names beyond
 * the 6.12 scans' shim. 6.1 still has SIS_PROP (the scan limit from the waking CPU's
 * wake_avg_idle against the LLC's avg_scan_cost); it is off in 6.1's features.h and in every
 * case (its sched_feat() bit is never set), so these stand-ins are only compiled, never run:
 * the waking CPU's sd_llc, jiffies, cpu_clock() and update_avg(). (The shim's this_rq() and
 * smp_processor_id(), CPU 0, are wakeup_sis_pre.h's, included before the scans for 6.1.) */
#define this_cpu_ptr(p) (&kd_sd_llc)
#define jiffies 0UL
#define cpu_clock(cpu) 0ULL
#define update_avg(avg, sample) ((void)(avg), (void)(sample))
