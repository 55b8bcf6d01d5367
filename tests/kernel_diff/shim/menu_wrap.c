/* schedlab kernel_diff (MIT OR Apache-2.0): FFI wrapper around menu.c's get_typical_interval(). */
unsigned int KD(get_typical_interval)(const unsigned int intervals[8])
{
	struct menu_device d = { 0 };
	unsigned int i;

	for (i = 0; i < INTERVALS; i++)
		d.intervals[i] = intervals[i];
	return get_typical_interval(&d);
}
