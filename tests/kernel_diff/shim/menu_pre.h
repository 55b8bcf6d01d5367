/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): menu.c's environment (shim/cpuidle.h);
 * one CPU: this_cpu_ptr() is its menu_device.
 */
#include "cpuidle.h"

static struct menu_device kd_menu_data;
#define this_cpu_ptr(p) (&kd_menu_data)
