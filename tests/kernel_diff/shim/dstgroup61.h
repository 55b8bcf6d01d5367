/* schedlab kernel_diff shim (MIT OR Apache-2.0): 6.1 names sched_balance_find_dst_group()
 * find_idlest_group() (renamed in v6.10); the wrapper calls it by the new name. */
#define sched_balance_find_dst_group find_idlest_group
