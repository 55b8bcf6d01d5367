/* schedlab kernel_diff shim (MIT OR Apache-2.0): what select_idle_sibling() reads beyond
 * the scans' shim (wakeup_pre.h): the target's LLC domain (per_cpu(sd_llc)),
 * sched_smt_active(), cpus_share_resources() (per-CPU sd_share_id), p->recent_used_cpu. A
 * symmetric-capacity system: sched_asym_cpucap_active() is false, so the kernel's
 * asym_fits_cpu() is true and select_idle_capacity() is never reached; the waker is not a
 * per-CPU kthread (is_per_cpu_kthread(current) false). */
static struct sched_domain *kd_sd_llc;
static int kd_smt_active;
#define kd_pc_sd_llc(cpu) (kd_sd_llc)
#define kd_pc_sd_asym_cpucapacity(cpu) ((struct sched_domain *)NULL)
#define sched_smt_active() (kd_smt_active)
#define cpus_share_resources(a, b) ((a) == (b) || kd_rqs[a].kd_share == kd_rqs[b].kd_share)
#define sched_asym_cpucap_active() 0
#define sync_entity_load_avg(se) ((void)0)
#define task_util_est(p) 0UL
#define uclamp_eff_value(p, id) 0UL
#define asym_fits_cpu(util, umin, umax, cpu) true
#define select_idle_capacity(p, sd, target) (-1)
#define lockdep_assert_irqs_disabled() ((void)0)
#define is_per_cpu_kthread(p) 0
#define in_task() 1
#define smp_processor_id() 0
#define this_rq() cpu_rq(0)
