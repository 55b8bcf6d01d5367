/* schedlab kernel_diff shim (MIT OR Apache-2.0): the 6.1 balance unit has should_we_balance(),
 * update_sd_pick_busiest(), can_migrate_task() with task_hot() and detach_tasks() (and the
 * group helpers they call). */
#define KD_BALANCE_61 1
