/* schedlab kernel_diff shim (MIT OR Apache-2.0): the 6.1 wakeup unit has
 * find_idlest_group_cpu(), named sched_balance_find_dst_group_cpu() from v6.10 on (the
 * wrapper calls it by the new name), and the idle-CPU scans with select_idle_sibling(); not
 * wake_affine_idle()/wake_affine_weight(). */
#define KD_WAKEUP_61 1
#define sched_balance_find_dst_group_cpu find_idlest_group_cpu
