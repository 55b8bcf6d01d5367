/* schedlab kernel_diff shim (MIT OR Apache-2.0): the 6.1 wakeup unit has only
 * find_idlest_group_cpu(), named sched_balance_find_dst_group_cpu() from v6.10 on
 * (the wrapper calls it by the new name). */
#define KD_WAKEUP_61 1
#define sched_balance_find_dst_group_cpu find_idlest_group_cpu
