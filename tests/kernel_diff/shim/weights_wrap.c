/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrappers around fair.c's __calc_delta() and
 * core.c's weight tables. inv_weight 0 asks __update_inv_weight() to compute it. */
u64 KD(calc_delta)(u64 delta_exec, unsigned long weight, unsigned long lw_weight, u32 *inv_weight)
{
	struct load_weight lw = { .weight = lw_weight, .inv_weight = *inv_weight };
	u64 r = __calc_delta(delta_exec, weight, &lw);

	*inv_weight = lw.inv_weight;
	return r;
}

int KD(prio_to_weight)(int i) { return sched_prio_to_weight[i]; }
u32 KD(prio_to_wmult)(int i) { return sched_prio_to_wmult[i]; }
