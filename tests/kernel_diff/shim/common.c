/* schedlab kernel_diff shim (MIT OR Apache-2.0): globals shared by the wrapped units. */
#include "shim.h"
unsigned long long kd_sched_features;
unsigned int sysctl_sched_base_slice = 750000;
unsigned long long kd_tick_nsec = 4000000;
