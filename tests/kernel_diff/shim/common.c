/* schedlab kernel_diff shim (MIT OR Apache-2.0): globals shared by the wrapped units. */
#include "shim.h"
unsigned long long kd_sched_features;
