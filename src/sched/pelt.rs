//! PELT: per-entity load tracking, util_est, and the capacity-invariant PELT clock.
//!
//! Mirrors `kernel/sched/pelt.c` (`decay_load`, `__accumulate_pelt_segments`,
//! `accumulate_sum`, `___update_load_sum`, `___update_load_avg`, `__update_load_avg_se`,
//! `__update_load_avg_blocked_se`, `__update_load_avg_cfs_rq`), `kernel/sched/pelt.h`
//! (`get_pelt_divider`, `update_rq_clock_pelt`, `update_idle_rq_clock_pelt`,
//! `rq_clock_pelt`), `kernel/sched/sched-pelt.h` (`runnable_avg_yN_inv`, `LOAD_AVG_MAX`)
//! and the PELT/util_est parts of `kernel/sched/fair.c` (`init_entity_runnable_average`,
//! `post_init_entity_util_avg`, `attach_entity_load_avg`, `detach_entity_load_avg`,
//! `enqueue_load_avg`/`dequeue_load_avg`, `update_cfs_rq_load_avg` with `removed`,
//! `remove_entity_load_avg`, `util_est_enqueue`/`util_est_dequeue`/`util_est_update`,
//! `cfs_se_util_change`). Semantics follow the v6.9+ kernels (single-word `util_est`
//! with the `UTIL_AVG_UNCHANGED` flag; `UTIL_EST_FASTUP` gone).
//!
//! Time is "PELT time": nanoseconds of `rq_clock_pelt()`, consumed in 1024 ns units;
//! a period is 1024 units (~1 ms). The decay factor y satisfies y^32 = 1/2.
//!
//! Left out (and why):
//! - Group-entity propagation (`propagate_entity_load_avg`, `update_tg_load_avg`,
//!   `calc_group_shares`): the simulator has no cgroups, so every entity is a task and
//!   the only cfs_rq is the root one.
//! - rt/dl/irq/hw-pressure averages: only the fair class is simulated; their utilization
//!   is 0, which is what `update_idle_rq_clock_pelt` then sums.
//! - Frequency invariance: simulated CPUs run at their maximum frequency, so
//!   `arch_scale_freq_capacity() == 1024` and only CPU capacity scales the PELT clock.
//! - CFS-bandwidth throttled time in `cfs_rq_clock_pelt` (no bandwidth control).

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

use crate::units::usize_from_u64;

/// `SCHED_CAPACITY_SHIFT`.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// `SCHED_CAPACITY_SCALE`.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;
/// `LOAD_AVG_PERIOD`: y^32 = 1/2.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// `LOAD_AVG_MAX`: the fixed point of `max = (max * y_inv >> 32) + 1024` (checked at
/// compile time against [`converged_load_avg_max`]).
pub const LOAD_AVG_MAX: u64 = 47742;
/// `PELT_MIN_DIVIDER`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// `UTIL_EST_WEIGHT_SHIFT`: the ewma keeps 3/4 of the old estimate.
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// `UTIL_EST_MARGIN`: 1% of `SCHED_CAPACITY_SCALE`.
pub const UTIL_EST_MARGIN: u32 = 10;
const _: () = assert!(UTIL_EST_MARGIN as u64 == SCHED_CAPACITY_SCALE / 100);
/// `UTIL_AVG_UNCHANGED`: set in `util_est` when util_avg has not been recomputed since
/// the last `util_est_update`.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;

/// Offset added to `rq_clock_pelt()`. The kernel's clocks count from boot and are never
/// 0 at a scheduling event, while PELT uses `last_update_time == 0` to mean "not
/// attached". We model a machine that booted this long before simulated time 0 so that
/// simulated time 0 is an ordinary timestamp.
pub const PELT_BOOT_OFFSET_NS: u64 = 1_000_000_000;

// ---------------------------------------------------------------------------------
// The decay table, derived at compile time from y^32 = 1/2.

/// Fixed point with 62 fractional bits (values in [0, 1] fit; products fit in u128).
const Q: u32 = 62;
const ONE_Q: u128 = 1 << Q;

const fn q_mul(a: u128, b: u128) -> u128 {
    (a * b) >> Q
}

/// y = 2^(-1/32) in Q62, by bisection on y^32 = 1/2 (y^32 via five squarings).
const fn y_q62() -> u128 {
    let half = ONE_Q >> 1;
    let mut lo = half;
    let mut hi = ONE_Q;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let mut p = mid;
        let mut i = 0;
        while i < 5 {
            p = q_mul(p, p);
            i += 1;
        }
        if p <= half {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

const fn yn_inv_table() -> [u32; 32] {
    let y = y_q62();
    let mut t = [0u32; 32];
    let mut yn = ONE_Q;
    let mut n = 0;
    while n < 32 {
        // runnable_avg_yN_inv[n] = floor((2^32 - 1) * y^n)
        // At most 2^32 - 1 (y^n <= 1): the mask drops nothing, it states the range.
        t[n] = (((0xffff_ffffu128 * yn) >> Q) & 0xffff_ffff) as u32;
        yn = (yn * y + (ONE_Q >> 1)) >> Q;
        n += 1;
    }
    t
}

/// `runnable_avg_yN_inv[n] = floor((2^32 - 1) * y^n)`, n = 0..31, computed at compile
/// time from the definition (not copied).
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = yn_inv_table();

/// `LOAD_AVG_MAX` derived as `Documentation/scheduler/sched-pelt.c` does: iterate
/// `max = (max * y_inv >> 32) + 1024` until it stops changing.
pub const fn converged_load_avg_max() -> u64 {
    let y_inv = RUNNABLE_AVG_YN_INV[1] as u64;
    let mut max = 1024u64;
    let mut last = 0u64;
    while last != max {
        last = max;
        max = ((max * y_inv) >> 32) + 1024;
    }
    max
}

const _: () = assert!(converged_load_avg_max() == LOAD_AVG_MAX);

/// `decay_load(val, n)`: val * y^n, in the kernel's integer arithmetic.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut val = val;
    let mut local_n = n;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    // mul_u64_u32_shr(val, runnable_avg_yN_inv[local_n], 32): val * y^n <= val, fits u64.
    let inv = u128::from(RUNNABLE_AVG_YN_INV[usize_from_u64(local_n)]);
    u64::try_from((u128::from(val) * inv) >> 32).expect("val * y^n <= val")
}

/// `__accumulate_pelt_segments(periods, d1, d3)`: d1 decayed by `periods`, the full
/// periods in between (1024 * sum y^1..y^(p-1)), and d3 undecayed. Public for the
/// differential tests against the kernel's C (tests/kernel_diff).
#[doc(hidden)]
pub fn accumulate_pelt_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + d3
}

/// `struct sched_avg`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SchedAvg {
    /// PELT time (ns) of the last accumulation; 0 for an entity means "not attached to
    /// any cfs_rq" (fork, wakeup migration).
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    /// Part of the current period (in 1024 ns units) already accumulated.
    pub period_contrib: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// `util_est`: the ewma (task) or the sum of enqueued ewmas (root cfs_rq), possibly
    /// with [`UTIL_AVG_UNCHANGED`] set on a task.
    pub util_est: u32,
}

impl SchedAvg {
    /// `get_pelt_divider()`.
    pub fn pelt_divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib
    }

    /// `accumulate_sum()`; returns the number of period boundaries crossed.
    fn accumulate_sum(&mut self, delta: u64, load: u64, runnable: u64, running: bool) -> u64 {
        let mut contrib = delta;
        let mut delta = delta + self.period_contrib;
        let periods = delta / 1024;
        if periods != 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            delta %= 1024;
            if load != 0 {
                // This relies on `!load` implying `!runnable && !running`.
                contrib = accumulate_pelt_segments(periods, 1024 - self.period_contrib, delta);
            }
        }
        self.period_contrib = delta;
        if load != 0 {
            self.load_sum += load * contrib;
        }
        if runnable != 0 {
            self.runnable_sum += (runnable * contrib) << SCHED_CAPACITY_SHIFT;
        }
        if running {
            self.util_sum += contrib << SCHED_CAPACITY_SHIFT;
        }
        periods
    }

    /// `___update_load_sum(now, sa, load, runnable, running)`: returns true when at
    /// least one period boundary was crossed (only then are the averages recomputed).
    pub fn update_load_sum(&mut self, now: u64, load: u64, runnable: u64, running: bool) -> bool {
        if now < self.last_update_time {
            // Time went backwards (the kernel's `(s64)delta < 0` case): resync.
            self.last_update_time = now;
            return false;
        }
        let delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 {
            (0, false)
        } else {
            (runnable, running)
        };
        self.accumulate_sum(delta, load, runnable, running) != 0
    }

    /// `___update_load_avg(sa, load)`.
    pub fn update_load_avg(&mut self, load: u64) {
        let divider = self.pelt_divider();
        self.load_avg = load * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum / divider;
    }

    /// `init_entity_runnable_average()` for a task: everything zero except
    /// `load_avg = se_weight`, so a new task looks heavy until it has history.
    pub fn init_entity_runnable_average(se_weight: u64) -> Self {
        SchedAvg {
            load_avg: se_weight,
            ..SchedAvg::default()
        }
    }

    /// `_task_util_est()`: the ewma without the flag.
    pub fn task_util_est_ewma(&self) -> u32 {
        self.util_est & !UTIL_AVG_UNCHANGED
    }

    /// `task_util_est()`: max(util_avg, ewma).
    pub fn task_util_est(&self) -> u64 {
        self.util_avg.max(self.task_util_est_ewma() as u64)
    }
}

/// `sub_positive()`: subtract, clamping at 0.
fn sub_positive(v: &mut u64, d: u64) {
    *v = v.saturating_sub(d);
}

/// `cfs_se_util_change()`: util_avg was recomputed, clear `UTIL_AVG_UNCHANGED`.
fn cfs_se_util_change(sa: &mut SchedAvg, util_est_feature: bool) {
    if util_est_feature && sa.util_est & UTIL_AVG_UNCHANGED != 0 {
        sa.util_est &= !UTIL_AVG_UNCHANGED;
    }
}

/// `__update_load_avg_se(now, cfs_rq, se)`: `on_rq` = `!!se->on_rq` (1 even while
/// sched_delayed), `runnable` = `se_runnable(se)` (0 while sched_delayed), `running` =
/// `cfs_rq->curr == se`; `se_weight` = scaled-down weight. Returns whether it decayed.
pub fn update_load_avg_se(
    now: u64,
    sa: &mut SchedAvg,
    se_weight: u64,
    on_rq: bool,
    runnable: bool,
    running: bool,
    util_est_feature: bool,
) -> bool {
    if sa.update_load_sum(now, on_rq as u64, runnable as u64, running) {
        sa.update_load_avg(se_weight);
        cfs_se_util_change(sa, util_est_feature);
        debug_check_se(sa, se_weight);
        return true;
    }
    false
}

/// PELT bounds of a task entity, checked after each recomputation: `util_avg`,
/// `runnable_avg <= SCHED_CAPACITY_SCALE` and `load_avg <= weight` — the bounds
/// `cpu_util()` and the load balancer rely on. The sums are not bounded by the current
/// divider: `attach_entity_load_avg()` rebuilds them as `avg * divider` with the
/// cfs_rq's `period_contrib`, so after a migration they may exceed
/// `divider << SCHED_CAPACITY_SHIFT` by part of a period (the ci-debug pass measured
/// 0.4 period) until they decay; only their quotients are bounded. Only the entity's own series is bounded: a cfs_rq's sums are
/// raised by attaching migrated entities and may exceed them. Panics when debug
/// assertions are on; nothing in release.
#[inline]
fn debug_check_se(sa: &SchedAvg, se_weight: u64) {
    if cfg!(debug_assertions) {
        assert!(
            sa.util_avg <= SCHED_CAPACITY_SCALE
                && sa.runnable_avg <= SCHED_CAPACITY_SCALE
                && sa.load_avg <= se_weight,
            "PELT averages beyond their maximum (weight {se_weight}): {sa:?}"
        );
    }
}

/// `__update_load_avg_blocked_se(now, se)`: decay a sleeping entity.
pub fn update_load_avg_blocked_se(
    now: u64,
    sa: &mut SchedAvg,
    se_weight: u64,
    util_est_feature: bool,
) -> bool {
    if sa.update_load_sum(now, 0, 0, false) {
        sa.update_load_avg(se_weight);
        cfs_se_util_change(sa, util_est_feature);
        debug_check_se(sa, se_weight);
        return true;
    }
    false
}

/// `__update_load_avg_cfs_rq(now, cfs_rq)`: `load` = scaled-down `cfs_rq->load.weight`,
/// `runnable` = `h_nr_runnable`, `running` = `cfs_rq->curr != NULL`.
pub fn update_load_avg_cfs_rq(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    h_nr_runnable: u64,
    running: bool,
) -> bool {
    if sa.update_load_sum(now, load, h_nr_runnable, running) {
        sa.update_load_avg(1);
        return true;
    }
    false
}

/// `cfs_rq->removed`: averages of entities that left this cfs_rq while not queued
/// (wakeup migration, death), subtracted lazily at the next update.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RemovedLoad {
    pub nr: u32,
    pub load_avg: u64,
    pub util_avg: u64,
    pub runnable_avg: u64,
}

/// The removed-load part of `update_cfs_rq_load_avg()`; returns true if anything was
/// removed ("decayed" for the caller).
pub fn apply_removed_load(sa: &mut SchedAvg, removed: &mut RemovedLoad) -> bool {
    if removed.nr == 0 {
        return false;
    }
    let divider = sa.pelt_divider();
    let r = std::mem::take(removed);
    sub_positive(&mut sa.load_avg, r.load_avg);
    sub_positive(&mut sa.load_sum, r.load_avg * divider);
    // See the util_sum comment in the kernel: keep sums consistent with the averages.
    sa.load_sum = sa.load_sum.max(sa.load_avg * PELT_MIN_DIVIDER);
    sub_positive(&mut sa.util_avg, r.util_avg);
    sub_positive(&mut sa.util_sum, r.util_avg * divider);
    sa.util_sum = sa.util_sum.max(sa.util_avg * PELT_MIN_DIVIDER);
    sub_positive(&mut sa.runnable_avg, r.runnable_avg);
    sub_positive(&mut sa.runnable_sum, r.runnable_avg * divider);
    sa.runnable_sum = sa.runnable_sum.max(sa.runnable_avg * PELT_MIN_DIVIDER);
    true
}

/// `enqueue_load_avg()`.
pub fn enqueue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    cfs.load_avg += se.load_avg;
    cfs.load_sum += se_weight * se.load_sum;
}

/// `dequeue_load_avg()`.
pub fn dequeue_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    sub_positive(&mut cfs.load_avg, se.load_avg);
    sub_positive(&mut cfs.load_sum, se_weight * se.load_sum);
    cfs.load_sum = cfs.load_sum.max(cfs.load_avg * PELT_MIN_DIVIDER);
}

/// `attach_entity_load_avg(cfs_rq, se)`: align the entity's window with the cfs_rq's,
/// rebuild its sums from its averages, and add it to the cfs_rq.
pub fn attach_entity_load_avg(cfs: &mut SchedAvg, se: &mut SchedAvg, se_weight: u64) {
    let divider = cfs.pelt_divider();
    se.last_update_time = cfs.last_update_time;
    se.period_contrib = cfs.period_contrib;
    se.util_sum = se.util_avg * divider;
    se.runnable_sum = se.runnable_avg * divider;
    se.load_sum = se.load_avg * divider;
    if se_weight < se.load_sum {
        se.load_sum /= se_weight;
    } else {
        se.load_sum = 1;
    }
    enqueue_load_avg(cfs, se, se_weight);
    cfs.util_avg += se.util_avg;
    cfs.util_sum += se.util_sum;
    cfs.runnable_avg += se.runnable_avg;
    cfs.runnable_sum += se.runnable_sum;
}

/// `detach_entity_load_avg(cfs_rq, se)`.
pub fn detach_entity_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    dequeue_load_avg(cfs, se, se_weight);
    sub_positive(&mut cfs.util_avg, se.util_avg);
    sub_positive(&mut cfs.util_sum, se.util_sum);
    cfs.util_sum = cfs.util_sum.max(cfs.util_avg * PELT_MIN_DIVIDER);
    sub_positive(&mut cfs.runnable_avg, se.runnable_avg);
    sub_positive(&mut cfs.runnable_sum, se.runnable_sum);
    cfs.runnable_sum = cfs.runnable_sum.max(cfs.runnable_avg * PELT_MIN_DIVIDER);
}

/// `post_init_entity_util_avg()` for a fair task placed on a CPU of capacity
/// `cpu_capacity` whose cfs_rq has averages `cfs`: the new task gets half of the spare
/// capacity, or less if the cfs_rq's util per unit of load says so.
pub fn post_init_entity_util_avg(
    se: &mut SchedAvg,
    se_weight: u64,
    cfs: &SchedAvg,
    cpu_capacity: u64,
) {
    let cap = (cpu_capacity as i64 - cfs.util_avg as i64) / 2;
    if cap > 0 {
        let cap = cap.unsigned_abs();
        if cfs.util_avg != 0 {
            se.util_avg = (cfs.util_avg * se_weight / (cfs.load_avg + 1)).min(cap);
        } else {
            se.util_avg = cap;
        }
    }
    se.runnable_avg = se.util_avg;
}

/// `util_est_enqueue()`: add the task's ewma to the root cfs_rq's estimate.
pub fn util_est_enqueue(cfs: &mut SchedAvg, task: &SchedAvg) {
    cfs.util_est = cfs.util_est.wrapping_add(task.task_util_est_ewma());
}

/// `util_est_dequeue()`.
pub fn util_est_dequeue(cfs: &mut SchedAvg, task: &SchedAvg) {
    let e = task.task_util_est_ewma();
    cfs.util_est -= cfs.util_est.min(e);
}

/// A task's `util_avg` as the `unsigned int` `util_est_update()` keeps it in. Fits: PELT
/// utilization is at most `SCHED_CAPACITY_SCALE`.
fn util_u32(util: u64) -> u32 {
    u32::try_from(util).expect("util_avg above u32::MAX: PELT keeps it <= SCHED_CAPACITY_SCALE")
}

/// `util_est_update()` at dequeue: only on a sleep, only if util_avg changed since the
/// last update; instant ramp-up, 1% margin, skip when the task did not get all the CPU
/// it wanted, otherwise ewma -= (ewma - util) / 4.
pub fn util_est_update(task: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
    if !task_sleep {
        return;
    }
    let mut ewma = task.util_est;
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let dequeued = task.util_avg;
    'done: {
        if ewma as u64 <= dequeued {
            ewma = util_u32(dequeued);
            break 'done;
        }
        let last_ewma_diff = ewma - util_u32(dequeued);
        if last_ewma_diff < UTIL_EST_MARGIN {
            break 'done;
        }
        if dequeued > cpu_capacity {
            return;
        }
        if dequeued + (UTIL_EST_MARGIN as u64) < task.runnable_avg {
            break 'done;
        }
        ewma <<= UTIL_EST_WEIGHT_SHIFT;
        ewma -= last_ewma_diff;
        ewma >>= UTIL_EST_WEIGHT_SHIFT;
    }
    task.util_est = ewma | UTIL_AVG_UNCHANGED;
}

/// The per-CPU clocks PELT needs (`rq->clock_task`, `rq->clock_pelt`,
/// `rq->lost_idle_time`) and the CPU's `arch_scale_cpu_capacity()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RqClock {
    /// `rq->clock_task`: simulated time less the interrupt time reported by
    /// [`RqClock::account_irq_time`] (none without `CONFIG_IRQ_TIME_ACCOUNTING`; steal time
    /// is not modelled).
    pub clock_task: u64,
    /// `rq->clock_pelt`: advances at `capacity/1024` speed while busy, synced to
    /// `clock_task` while idle.
    pub clock_pelt: u64,
    /// `rq->lost_idle_time`.
    pub lost_idle_time: u64,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub cpu_capacity: u64,
    /// `irq_time_read(cpu)`: interrupt time of this CPU so far, which `clock_task` leaves
    /// out. Not serialized: always 0 without `CONFIG_IRQ_TIME_ACCOUNTING`.
    #[serde(skip)]
    pub irq_time: u64,
}

impl RqClock {
    pub fn new(cpu_capacity: u64) -> Self {
        RqClock {
            clock_task: 0,
            clock_pelt: 0,
            lost_idle_time: 0,
            cpu_capacity,
            irq_time: 0,
        }
    }

    /// `clock_task` as `update_rq_clock()` would leave it at `now_ns`: the time less the
    /// interrupt time, never before the last update.
    pub fn clock_task_at(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.irq_time).max(self.clock_task)
    }

    /// `irqtime_account_irq()`: `ns` of hard or soft interrupt work ran on this CPU. The
    /// kernel adds it at the interrupt's exit and `update_rq_clock_task()` subtracts it from
    /// the next clock delta (never letting the clock go back); here it is added when the
    /// work is charged, and [`RqClock::update`] subtracts it the same way.
    pub fn account_irq_time(&mut self, ns: u64) {
        self.irq_time += ns;
    }

    /// `update_rq_clock()` → `update_rq_clock_pelt()`: advance to `now_ns`; `idle` says
    /// whether the idle task was running over the elapsed interval.
    pub fn update(&mut self, now_ns: u64, idle: bool) {
        let now_task = self.clock_task_at(now_ns);
        if now_task <= self.clock_task {
            return;
        }
        let delta = now_task - self.clock_task;
        self.clock_task = now_task;
        if idle {
            // _update_idle_rq_clock_pelt(): resync.
            self.clock_pelt = self.clock_task;
            return;
        }
        // cap_scale(delta, capacity); cap_scale(delta, freq = 1024) is the identity.
        self.clock_pelt += (delta * self.cpu_capacity) >> SCHED_CAPACITY_SHIFT;
    }

    /// `update_idle_rq_clock_pelt()`: the CPU goes idle. If it was saturated (the summed
    /// util_sum shows no idle time), the time the PELT clock lags behind is lost rather
    /// than counted as idle.
    pub fn update_idle(&mut self, util_sum: u64) {
        let divider = ((LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX;
        if util_sum >= divider {
            self.lost_idle_time += self.clock_task - self.clock_pelt;
        }
        self.clock_pelt = self.clock_task;
    }

    /// `rq_clock_pelt()` (plus [`PELT_BOOT_OFFSET_NS`]).
    pub fn rq_clock_pelt(&self) -> u64 {
        self.clock_pelt + PELT_BOOT_OFFSET_NS - self.lost_idle_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_table_matches_kernel_entries() {
        // Entries quoted from sched-pelt.h (a sample; the table itself is derived).
        assert_eq!(RUNNABLE_AVG_YN_INV[0], 0xffff_ffff);
        assert_eq!(RUNNABLE_AVG_YN_INV[1], 0xfa83_b2da);
        assert_eq!(RUNNABLE_AVG_YN_INV[7], 0xdbfb_b796);
        assert_eq!(RUNNABLE_AVG_YN_INV[8], 0xd744_fcc9);
        assert_eq!(RUNNABLE_AVG_YN_INV[16], 0xb504_f333);
        assert_eq!(RUNNABLE_AVG_YN_INV[23], 0x9b8d_39b9);
        assert_eq!(RUNNABLE_AVG_YN_INV[31], 0x82cd_8698);
        for n in 1..32 {
            assert!(RUNNABLE_AVG_YN_INV[n] < RUNNABLE_AVG_YN_INV[n - 1]);
        }
    }

    #[test]
    fn load_avg_max_and_divider() {
        assert_eq!(converged_load_avg_max(), 47742);
        assert_eq!(PELT_MIN_DIVIDER, 46718);
        assert_eq!(UTIL_EST_MARGIN, 10);
    }

    #[test]
    fn decay_halves_every_32_periods() {
        let half = decay_load(LOAD_AVG_MAX, 32);
        assert!(
            (half as i64 - (LOAD_AVG_MAX / 2) as i64).abs() <= 1,
            "{half}"
        );
        assert_eq!(
            decay_load(1 << 20, 64),
            u64::try_from(((1u128 << 18) * 0xffff_ffff) >> 32).unwrap()
        );
        assert_eq!(decay_load(u64::MAX, 32 * 63 + 1), 0);
        assert_eq!(decay_load(1000, 0), 999);
    }

    fn run_pattern(on_ns: u64, off_ns: u64, total_ns: u64, capacity: u64) -> SchedAvg {
        // One task alone on a CPU, updated every 128 us; the PELT clock follows capacity
        // while it runs and resyncs while idle.
        let mut clk = RqClock::new(capacity);
        let mut sa = SchedAvg::init_entity_runnable_average(1024);
        sa.last_update_time = clk.rq_clock_pelt();
        let step = 128_000;
        let mut t = 0;
        while t < total_ns {
            let running = (t % (on_ns + off_ns)) < on_ns;
            t += step;
            clk.update(t, !running);
            let now = clk.rq_clock_pelt();
            if running {
                update_load_avg_se(now, &mut sa, 1024, true, true, true, true);
            } else {
                update_load_avg_blocked_se(now, &mut sa, 1024, true);
            }
        }
        sa
    }

    #[test]
    fn always_running_converges_to_full_util() {
        let sa = run_pattern(1, 0, 2_000_000_000, 1024);
        assert!(
            sa.util_avg >= 1000 && sa.util_avg <= 1024,
            "util {}",
            sa.util_avg
        );
        assert!(
            sa.load_avg >= 1000 && sa.load_avg <= 1024,
            "load {}",
            sa.load_avg
        );
        assert!(sa.runnable_avg >= 1000 && sa.runnable_avg <= 1024);
        // Half-life: ~32 ms of running from zero gives about half.
        let mut sa = run_pattern(1, 0, 32 * 1_048_576, 1024);
        sa.update_load_avg(1024);
        assert!(
            (480..=540).contains(&sa.util_avg),
            "util after 32 periods {}",
            sa.util_avg
        );
    }

    #[test]
    fn half_duty_cycle_gives_half_util() {
        let sa = run_pattern(4_000_000, 4_000_000, 2_000_000_000, 1024);
        assert!(
            (512 - 40..=512 + 40).contains(&sa.util_avg),
            "util {}",
            sa.util_avg
        );
    }

    #[test]
    fn capacity_invariance() {
        // 25% busy on a half-capacity CPU is 12.5% of the biggest CPU's work.
        let sa = run_pattern(2_000_000, 6_000_000, 2_000_000_000, 512);
        assert!(
            (128 - 25..=128 + 25).contains(&sa.util_avg),
            "util {}",
            sa.util_avg
        );
        // Same duty on a full-capacity CPU: 25%.
        let sa = run_pattern(2_000_000, 6_000_000, 2_000_000_000, 1024);
        assert!(
            (256 - 35..=256 + 35).contains(&sa.util_avg),
            "util {}",
            sa.util_avg
        );
    }

    #[test]
    fn lost_idle_time_on_saturated_cpu() {
        let mut clk = RqClock::new(512);
        clk.update(10_000_000, false);
        assert_eq!(clk.clock_pelt, 5_000_000);
        // Saturated: the 5 ms lag is lost, the PELT clock does not jump.
        let before = clk.rq_clock_pelt();
        clk.update_idle(u64::MAX);
        assert_eq!(clk.rq_clock_pelt(), before);
        assert_eq!(clk.lost_idle_time, 5_000_000);
        // Not saturated: the lag counts as idle time.
        let mut clk = RqClock::new(512);
        clk.update(10_000_000, false);
        clk.update_idle(0);
        assert_eq!(clk.rq_clock_pelt(), 10_000_000 + PELT_BOOT_OFFSET_NS);
    }

    #[test]
    fn averages_update_only_at_period_boundaries() {
        let mut sa = SchedAvg {
            last_update_time: 1 << 20,
            ..Default::default()
        };
        // 500 us: within the first period, no average recomputation.
        assert!(!sa.update_load_sum((1 << 20) + 500 * 1024, 1, 1, true));
        assert_eq!(sa.period_contrib, 500);
        assert_eq!(sa.util_sum, 500 << 10);
        // Crossing the boundary decays and recomputes.
        assert!(sa.update_load_sum((1 << 20) + 1500 * 1024, 1, 1, true));
        // Less than 1024 ns elapsed: nothing.
        let lut = sa.last_update_time;
        assert!(!sa.update_load_sum(lut + 1023, 1, 1, true));
        assert_eq!(sa.last_update_time, lut);
        // Time going backwards resyncs.
        assert!(!sa.update_load_sum(lut - 5000, 1, 1, true));
        assert_eq!(sa.last_update_time, lut - 5000);
    }

    #[test]
    fn post_init_gives_half_the_spare_capacity() {
        let mut cfs = SchedAvg {
            last_update_time: PELT_BOOT_OFFSET_NS,
            ..Default::default()
        };
        let expect = [512u64, 256, 128, 64];
        for want in expect {
            let mut se = SchedAvg::init_entity_runnable_average(1024);
            assert_eq!(se.load_avg, 1024);
            post_init_entity_util_avg(&mut se, 1024, &cfs, 1024);
            assert_eq!(se.util_avg, want);
            assert_eq!(se.runnable_avg, want);
            attach_entity_load_avg(&mut cfs, &mut se, 1024);
        }
        assert_eq!(cfs.util_avg, 960);
        // A full CPU gives nothing.
        let full = SchedAvg {
            util_avg: 1024,
            load_avg: 1024,
            ..Default::default()
        };
        let mut se = SchedAvg::init_entity_runnable_average(1024);
        post_init_entity_util_avg(&mut se, 1024, &full, 1024);
        assert_eq!(se.util_avg, 0);
    }

    #[test]
    fn attach_detach_roundtrip() {
        let mut cfs = SchedAvg {
            last_update_time: PELT_BOOT_OFFSET_NS,
            period_contrib: 300,
            ..Default::default()
        };
        let mut se = SchedAvg {
            load_avg: 700,
            util_avg: 400,
            runnable_avg: 450,
            ..Default::default()
        };
        attach_entity_load_avg(&mut cfs, &mut se, 1024);
        assert_eq!(se.last_update_time, cfs.last_update_time);
        assert_eq!(se.period_contrib, 300);
        let divider = PELT_MIN_DIVIDER + 300;
        assert_eq!(se.util_sum, 400 * divider);
        assert_eq!(se.load_sum, 700 * divider / 1024);
        assert_eq!(
            (cfs.load_avg, cfs.util_avg, cfs.runnable_avg),
            (700, 400, 450)
        );
        detach_entity_load_avg(&mut cfs, &se, 1024);
        assert_eq!((cfs.load_avg, cfs.util_avg, cfs.runnable_avg), (0, 0, 0));
        assert_eq!(cfs.util_sum, 0);
    }

    #[test]
    fn removed_load_is_subtracted_lazily() {
        let mut cfs = SchedAvg {
            load_avg: 1000,
            util_avg: 800,
            runnable_avg: 900,
            load_sum: 1000 * PELT_MIN_DIVIDER,
            util_sum: 800 * PELT_MIN_DIVIDER,
            runnable_sum: 900 * PELT_MIN_DIVIDER,
            ..Default::default()
        };
        let mut removed = RemovedLoad {
            nr: 1,
            load_avg: 300,
            util_avg: 200,
            runnable_avg: 1000,
        };
        assert!(apply_removed_load(&mut cfs, &mut removed));
        assert_eq!(removed, RemovedLoad::default());
        assert_eq!(
            (cfs.load_avg, cfs.util_avg, cfs.runnable_avg),
            (700, 600, 0)
        );
        assert_eq!(cfs.util_sum, 600 * PELT_MIN_DIVIDER);
        assert!(!apply_removed_load(&mut cfs, &mut removed));
    }

    #[test]
    fn util_est_rules() {
        let mut t = SchedAvg {
            util_avg: 300,
            runnable_avg: 300,
            ..Default::default()
        };
        // Ramp up instantly.
        util_est_update(&mut t, true, 1024);
        assert_eq!(t.util_est, 300 | UTIL_AVG_UNCHANGED);
        // Flag set: no update until util_avg is recomputed.
        t.util_avg = 100;
        util_est_update(&mut t, true, 1024);
        assert_eq!(t.task_util_est_ewma(), 300);
        cfs_se_util_change(&mut t, true);
        assert_eq!(t.util_est, 300);
        // Not a sleep: skipped.
        util_est_update(&mut t, false, 1024);
        assert_eq!(t.util_est, 300);
        // Decrease by a quarter of the difference: 300 - 200/4 = 250.
        t.runnable_avg = 100;
        util_est_update(&mut t, true, 1024);
        assert_eq!(t.task_util_est_ewma(), 250);
        // Within the 1% margin: kept.
        t.util_est = 105;
        util_est_update(&mut t, true, 1024);
        assert_eq!(t.util_est, 105 | UTIL_AVG_UNCHANGED);
        // Task waited for the CPU (runnable well above util): kept.
        t.util_est = 300;
        t.runnable_avg = 200;
        util_est_update(&mut t, true, 1024);
        assert_eq!(t.task_util_est_ewma(), 300);
        assert_eq!(t.task_util_est(), 300);
        // Root cfs_rq sum.
        let mut cfs = SchedAvg::default();
        util_est_enqueue(&mut cfs, &t);
        util_est_enqueue(&mut cfs, &t);
        assert_eq!(cfs.util_est, 600);
        util_est_dequeue(&mut cfs, &t);
        assert_eq!(cfs.util_est, 300);
    }

    /// `update_rq_clock_task()` under CONFIG_IRQ_TIME_ACCOUNTING: interrupt time is not task
    /// time, and the task clock never goes back (an interrupt longer than the delta since
    /// the last update leaves it where it was; the rest comes off the next deltas).
    #[test]
    fn clock_task_leaves_out_interrupt_time_and_never_goes_back() {
        let mut c = RqClock::new(1024);
        c.update(1_000_000, false);
        assert_eq!(c.clock_task, 1_000_000);
        // A 5 µs interrupt charged at 1 ms, then the next update 2 µs later: no progress.
        c.account_irq_time(5_000);
        c.update(1_002_000, false);
        assert_eq!(c.clock_task, 1_000_000);
        // 1 ms after the interrupt: 1 ms of task time, less the 5 µs.
        c.update(2_000_000, false);
        assert_eq!(c.clock_task, 1_995_000);
        // PELT's clock followed the task clock, not the wall clock.
        assert_eq!(c.clock_pelt, 1_995_000);
        // Without interrupt time, the task clock is the wall clock.
        let mut plain = RqClock::new(1024);
        plain.update(2_000_000, false);
        assert_eq!(plain.clock_task, 2_000_000);
    }
}
