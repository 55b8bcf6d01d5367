/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): a fixed-size struct cpumask (KD_NR_CPUS
 * bits) and the cpumask operations the compared functions use, with the kernel's iteration
 * semantics: for_each_cpu_and() re-reads both masks at every step (find_next_and_bit()), so
 * bits cleared during the walk are skipped, as in the kernel.
 */
#ifndef SCHEDLAB_KDIFF_CPUMASK_H
#define SCHEDLAB_KDIFF_CPUMASK_H

#ifndef KD_NR_CPUS
#define KD_NR_CPUS 512
#endif
#define KD_MASK_WORDS (KD_NR_CPUS / 64)

struct cpumask {
	u64 bits[KD_MASK_WORDS];
};

static inline int cpumask_test_cpu(int cpu, const struct cpumask *m)
{
	return (m->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static inline void cpumask_copy(struct cpumask *dst, const struct cpumask *src)
{
	*dst = *src;
}

static inline void cpumask_andnot(struct cpumask *dst, const struct cpumask *a,
				  const struct cpumask *b)
{
	for (int i = 0; i < KD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

/* The first CPU >= from set in a (and in b when b is not NULL); KD_NR_CPUS if none. */
static inline int kd_next_and(const struct cpumask *a, const struct cpumask *b, int from)
{
	for (int cpu = from; cpu < KD_NR_CPUS; cpu++)
		if (cpumask_test_cpu(cpu, a) && (!b || cpumask_test_cpu(cpu, b)))
			return cpu;
	return KD_NR_CPUS;
}

static inline int cpumask_first(const struct cpumask *m)
{
	return kd_next_and(m, NULL, 0);
}

#define for_each_cpu_and(cpu, a, b) \
	for ((cpu) = kd_next_and((a), (b), 0); (cpu) < KD_NR_CPUS; \
	     (cpu) = kd_next_and((a), (b), (cpu) + 1))
#define for_each_cpu(cpu, m) for_each_cpu_and(cpu, m, (const struct cpumask *)NULL)

#endif
