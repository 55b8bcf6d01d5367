/*
 * schedlab kernel_diff shim (our own code, MIT OR Apache-2.0): the few kernel types, macros
 * and helpers that the extracted kernel functions use, re-expressed for user space. No kernel
 * source is included here; build.rs includes the extracted definitions after this header.
 *
 * Weights follow the simulator's representation: the scaled-down load weight (1024 at nice 0).
 * A 64-bit kernel keeps 10 more bits of resolution in se->load.weight and removes them with
 * scale_load_down() in every function compared here, so scale_load() / scale_load_down() are
 * the identity and NICE_0_LOAD is 1024 (the 32-bit kernels' configuration).
 */
#ifndef SCHEDLAB_KDIFF_SHIM_H
#define SCHEDLAB_KDIFF_SHIM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#ifndef U64_MAX
#define U64_MAX ((u64)~0ULL)
#endif
#define S64_MAX ((s64)(U64_MAX >> 1))
#define S64_MIN (-S64_MAX - 1)
#define BITS_PER_LONG 64

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __maybe_unused __attribute__((unused))
#define ____cacheline_aligned
#define WRITE_ONCE(x, v) ((x) = (v))
#define READ_ONCE(x) (x)
#define WARN_ON_ONCE(c) (!!(c))
#define SCHED_WARN_ON(c) (!!(c))
#define lockdep_assert_rq_held(rq) ((void)(rq))
#define trace_pelt_se_tp(se) ((void)(se))
#define trace_pelt_cfs_tp(c) ((void)(c))

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define clamp(v, lo, hi) min(max(v, lo), hi)

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define SCHED_FIXEDPOINT_SHIFT 10
#define SCHED_CAPACITY_SHIFT SCHED_FIXEDPOINT_SHIFT
#define SCHED_CAPACITY_SCALE (1L << SCHED_CAPACITY_SHIFT)
#define scale_load(w) (w)
#define scale_load_down(w) (w)
#define NICE_0_LOAD (1L << SCHED_FIXEDPOINT_SHIFT)

/* include/linux/math64.h, as the generic (non-asm) versions compute them */
static inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}
static inline u64 mul_u32_u32(u32 a, u32 b) { return (u64)a * b; }
static inline u64 div_u64(u64 dividend, u32 divisor) { return dividend / divisor; }
static inline s64 div_s64(s64 dividend, s32 divisor) { return dividend / divisor; }
static inline u64 div64_u64(u64 dividend, u64 divisor) { return dividend / divisor; }
static inline s64 div64_s64(s64 dividend, s64 divisor) { return dividend / divisor; }
static inline u64 div64_ul(u64 dividend, unsigned long divisor) { return dividend / divisor; }
#define do_div(n, base) ({ u32 __rem = (n) % (base); (n) = (n) / (base); __rem; })
static inline int fls(unsigned int x) { return x ? 32 - __builtin_clz(x) : 0; }

/*
 * sched_feat(): the features the compared functions test, read from a global that each
 * wrapper sets from the Rust side's parameters before the call.
 */
extern unsigned long long kd_sched_features;
enum { __SCHED_FEAT_UTIL_EST, __SCHED_FEAT_PLACE_LAG, __SCHED_FEAT_PLACE_DEADLINE_INITIAL,
       __SCHED_FEAT_PLACE_REL_DEADLINE, __SCHED_FEAT_RUN_TO_PARITY, __SCHED_FEAT_PREEMPT_SHORT,
       __SCHED_FEAT_GENTLE_FAIR_SLEEPERS, __SCHED_FEAT_START_DEBIT, __SCHED_FEAT_WAKEUP_PREEMPTION,
       __SCHED_FEAT_DELAY_DEQUEUE, __SCHED_FEAT_ALT_PERIOD, __SCHED_FEAT_BASE_SLICE,
       __SCHED_FEAT_WA_BIAS, __SCHED_FEAT_CACHE_HOT_BUDDY, __SCHED_FEAT_SIS_UTIL,
       __SCHED_FEAT_LB_MIN, __SCHED_FEAT_SIS_PROP, __SCHED_FEAT_NR };
#define sched_feat(x) (!!(kd_sched_features & (1ULL << __SCHED_FEAT_##x)))

#endif
