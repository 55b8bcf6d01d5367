/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): teo.c's environment (shim/cpuidle.h); one
 * CPU: per_cpu_ptr() is the teo_cpu the wrapper points at.
 */
#include "cpuidle.h"

struct teo_cpu;
static struct teo_cpu *kd_teo_cpu;
#define per_cpu_ptr(p, cpu) (kd_teo_cpu)
