/* schedlab kernel_diff shim (MIT OR Apache-2.0): the per-CPU state task_numa_compare(),
 * task_numa_find_cpu() and task_numa_assign() read, from arrays the wrapper fills per case:
 * rq->curr (the idle task when none), rq->numa_migrate_on, idle_cpu(), the nodes' CPU masks
 * (cpumask_of_node()); xchg() on the flag as a plain exchange (one thread); the bit search
 * behind for_each_cpu_wrap() (the kernel's find_next_bit_wrap() and __for_each_wrap() are
 * extracted after this header). */
#define KD_NR_CPUS 64
#include "cpumask.h"
#define PF_IDLE 0x00000002
#define PF_EXITING 0x00000004
#define is_idle_task(p) (!!((p)->flags & PF_IDLE))
#define get_task_struct(p) ((void)(p))
#define put_task_struct(p) ((void)(p))
#define task_h_load(p) ((p)->kd_h_load)
#define xchg(ptr, v) ({ __typeof__(*(ptr)) __old = *(ptr); *(ptr) = (v); __old; })
struct rq {
	struct task_struct *curr;
	int numa_migrate_on;
	int kd_idle;
};
static struct rq kd_numa_rqs[KD_NR_CPUS];
static struct cpumask kd_node_mask[KD_MAX_NODES];
#define cpu_rq(cpu) (&kd_numa_rqs[cpu])
#define idle_cpu(cpu) (kd_numa_rqs[cpu].kd_idle)
#define cpumask_of_node(nid) (&kd_node_mask[nid])
#define cpumask_bits(m) ((m)->bits)
#define small_cpumask_bits ((unsigned long)KD_NR_CPUS)
#define nr_cpumask_bits KD_NR_CPUS /* 6.1: for_each_cpu_wrap() over nr_cpumask_bits */
static inline unsigned long find_next_bit(const unsigned long *addr, unsigned long size,
					  unsigned long offset)
{
	for (unsigned long b = offset; b < size; b++)
		if ((addr[b / 64] >> (b % 64)) & 1)
			return b;
	return size;
}
#define find_first_bit(addr, size) find_next_bit((addr), (size), 0)
