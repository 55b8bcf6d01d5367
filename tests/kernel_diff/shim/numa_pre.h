/* schedlab kernel_diff shim (MIT OR Apache-2.0): what numa_classify() and
 * load_too_imbalanced() need beyond their structs. */
struct task_struct;
#define abs(x) ((x) < 0 ? -(x) : (x))
