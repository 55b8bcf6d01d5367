//! The RT scheduling class (`kernel/sched/rt.c`, `cpupri.c`), reduced to what decides who
//! runs and for how long: one RT runqueue per CPU, the default RT bandwidth (throttling) of
//! kernels before v6.12, and the RT share of a CPU as PELT sees it (`rq->avg_rt`).
//!
//! Mirrored:
//! - `struct rt_prio_array`: 100 FIFO lists with a bitmap; `enqueue_rt_entity` at the tail
//!   (head with ENQUEUE_HEAD), `pick_next_rt_entity` = first task of the lowest set bit,
//!   `requeue_task_rt` (RR expiry, `sched_yield`). As in the kernel the running RT task
//!   stays in its list, so a preempted RT task keeps its place at the head of its priority.
//! - `task_tick_rt`: the SCHED_RR slice counted in ticks (`sched_rr_timeslice`, 100 ms),
//!   requeued at the tail only when another task of the same priority waits.
//! - `convert_prio` / `cpupri_find`: the priority level of each CPU and the lowest level
//!   below a task's (computed on demand from the runqueues; the kernel keeps the vectors
//!   incrementally — same answers).
//! - `update_curr_rt` → `sched_rt_runtime_exceeded`, and `do_sched_rt_period_timer`: the
//!   per-CPU `rt_time` budget of `sched_rt_runtime_us` per `sched_rt_period_us`.
//! - `update_rt_rq_load_avg`: `rq->avg_rt`, whose `util_avg` `scale_rt_capacity()` takes
//!   from the fair class's capacity.
//!
//! Left out (with reasons):
//! - Push/pull balancing (`push_rt_tasks`, `pull_rt_task`, RT_PUSH_IPI) and
//!   `check_preempt_equal_prio`: an RT task that wakes where a higher-priority RT task runs
//!   is placed by `find_lowest_rq` at wakeup, but a queued RT task that becomes
//!   preempted later waits instead of being pushed to a CPU running lower-priority work.
//!   Push/pull is its own mechanism (IPIs, root-domain overload masks) and no modelled
//!   workload so far mixes several RT priorities across CPUs.
//! - RT_GROUP_SCHED (per-cgroup RT bandwidth) and RT_RUNTIME_SHARE (borrowing runtime from
//!   other CPUs; off by default since v5.16): no cgroups are modelled; with the feature on
//!   the model still throttles per CPU.
//! - `rt_task_fits_capacity` (uclamp on asymmetric machines): no uclamp is modelled.
//! - The RT watchdog (RLIMIT_RTTIME) and priority inheritance.

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

use std::collections::VecDeque;

use super::pelt::SchedAvg;

/// `MAX_RT_PRIO`: kernel priorities 0..=99 are RT.
pub const MAX_RT_PRIO: usize = 100;
/// [`MAX_RT_PRIO`] as the `u8` RT priorities are kept in.
const MAX_RT_PRIO_U8: u8 = 100;
const _: () = assert!(MAX_RT_PRIO_U8 as usize == MAX_RT_PRIO);

/// cpupri levels (`kernel/sched/cpupri.h`): idle and fair CPUs share `CPUPRI_NORMAL` (the
/// separate idle level was removed in v5.10); 1..=99 are RT priorities.
pub const CPUPRI_NORMAL: u32 = 0;

/// The index of a set bit of a non-zero `u64` bitmap word (`trailing_zeros() < 64`).
#[inline]
fn bit_u8(tz: u32) -> u8 {
    u8::try_from(tz).expect("a bit index of a non-zero u64 is below 64")
}

/// Kernel `p->prio` of an RT task (`MAX_RT_PRIO - 1 - rt_priority`): lower runs first.
pub fn rt_prio(rt_priority: u8) -> u8 {
    (MAX_RT_PRIO_U8 - 1) - rt_priority.clamp(1, 99)
}

/// `convert_prio()`: a runqueue's highest RT priority (99 = none queued) to its cpupri
/// level, higher level = more important work running there.
pub fn convert_prio(prio: u8) -> u32 {
    if prio as usize >= MAX_RT_PRIO - 1 {
        CPUPRI_NORMAL
    } else {
        u32::from((MAX_RT_PRIO_U8 - 1) - prio)
    }
}

/// Per-task RT state (`struct sched_rt_entity` plus `p->prio` / `p->policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtEntity {
    /// Kernel priority 0..=98.
    pub prio: u8,
    /// SCHED_RR (else SCHED_FIFO).
    pub rr: bool,
    /// `rt.time_slice` in ticks (RR only).
    pub time_slice_ticks: u32,
    pub on_rq: bool,
}

impl RtEntity {
    /// `__sched_fork()`: a full RR slice.
    pub fn new(rt_priority: u8, rr: bool, rr_timeslice_ticks: u32) -> RtEntity {
        RtEntity {
            prio: rt_prio(rt_priority),
            rr,
            time_slice_ticks: rr_timeslice_ticks,
            on_rq: false,
        }
    }
}

/// `struct rt_rq` of a CPU (the root one).
#[derive(Debug, Clone)]
pub struct RtRq {
    /// `active.queue[prio]`: task indices, head first.
    queue: Vec<VecDeque<u32>>,
    /// `active.bitmap`: bit `prio` set while `queue[prio]` is non-empty.
    bitmap: [u64; 2],
    rt_nr_running: u32,
    /// `rt_rq->rt_time`: RT runtime consumed in the current bandwidth period.
    pub rt_time_ns: u64,
    /// `rt_rq->rt_throttled`: RT tasks are not picked until the period timer refills.
    pub rt_throttled: bool,
    /// `rq->avg_rt`: PELT of the time RT tasks ran here.
    pub avg_rt: SchedAvg,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            queue: vec![VecDeque::new(); MAX_RT_PRIO],
            bitmap: [0; 2],
            rt_nr_running: 0,
            rt_time_ns: 0,
            rt_throttled: false,
            avg_rt: SchedAvg::default(),
        }
    }
}

impl RtRq {
    /// `rt_rq->rt_nr_running`: queued RT tasks, the running one included.
    pub fn rt_nr_running(&self) -> u32 {
        self.rt_nr_running
    }

    /// What the RT class adds to `rq->nr_running`: nothing while throttled
    /// (`dequeue_top_rt_rq` subtracts the throttled tasks).
    pub fn nr_running_visible(&self) -> u32 {
        if self.rt_throttled {
            0
        } else {
            self.rt_nr_running
        }
    }

    /// `__enqueue_rt_entity()`: at the tail of its priority list, or the head.
    pub fn enqueue(&mut self, id: u32, prio: u8, head: bool) {
        let list = &mut self.queue[prio as usize];
        debug_assert!(!list.contains(&id), "RT task {id} queued twice");
        if head {
            list.push_front(id);
        } else {
            list.push_back(id);
        }
        self.bitmap[prio as usize / 64] |= 1 << (prio % 64);
        self.rt_nr_running += 1;
    }

    /// `__dequeue_rt_entity()`.
    pub fn dequeue(&mut self, id: u32, prio: u8) {
        let list = &mut self.queue[prio as usize];
        if let Some(pos) = list.iter().position(|&x| x == id) {
            list.remove(pos);
            self.rt_nr_running -= 1;
        }
        if list.is_empty() {
            self.bitmap[prio as usize / 64] &= !(1 << (prio % 64));
        }
    }

    /// `requeue_rt_entity()`: move `id` to the tail (or head) of its list.
    pub fn requeue(&mut self, id: u32, prio: u8, head: bool) {
        self.dequeue(id, prio);
        self.enqueue(id, prio, head);
    }

    /// `sched_find_first_bit()`: the highest queued priority (lowest number).
    fn first_prio(&self) -> Option<u8> {
        if self.bitmap[0] != 0 {
            Some(bit_u8(self.bitmap[0].trailing_zeros()))
        } else if self.bitmap[1] != 0 {
            Some(64 + bit_u8(self.bitmap[1].trailing_zeros()))
        } else {
            None
        }
    }

    /// `rt_rq->highest_prio.curr`: `MAX_RT_PRIO - 1` when nothing is queued.
    pub fn highest_prio(&self) -> u8 {
        self.first_prio().unwrap_or(MAX_RT_PRIO_U8 - 1)
    }

    /// `pick_next_rt_entity()`: the head of the highest-priority list.
    pub fn pick_first(&self) -> Option<u32> {
        let prio = self.first_prio()?;
        self.queue[prio as usize].front().copied()
    }

    /// Whether another task waits in `id`'s priority list (`run_list.prev != next`).
    pub fn has_peer(&self, prio: u8) -> bool {
        self.queue[prio as usize].len() > 1
    }

    /// `update_rt_rq_load_avg(now, rq, running)`: accumulate `avg_rt` up to `now_ns`,
    /// `running` telling whether an RT task ran over the elapsed interval.
    pub fn update_rt_rq_load_avg(&mut self, now_ns: u64, running: bool) {
        let r = running as u64;
        if self.avg_rt.update_load_sum(now_ns, r, r, running) {
            self.avg_rt.update_load_avg(1);
        }
    }

    /// `rt_time += delta` then `sched_rt_runtime_exceeded()`: true when the runqueue is
    /// (now) throttled. `runtime_ns >= period_ns` means no limit (the kernel's check).
    pub fn account_rt_time(&mut self, delta_ns: u64, bw: &RtBandwidth) -> bool {
        if !bw.enabled() {
            return false;
        }
        self.rt_time_ns += delta_ns;
        if self.rt_throttled {
            return true;
        }
        if self.rt_time_ns > bw.runtime_ns && bw.runtime_ns > 0 {
            self.rt_throttled = true;
        }
        self.rt_throttled
    }

    /// One CPU's part of `do_sched_rt_period_timer(overrun)`: refill `overrun` periods of
    /// runtime. Returns (unthrottled now, still busy = keep the timer running).
    pub fn period_refill(&mut self, overrun: u64, bw: &RtBandwidth) -> (bool, bool) {
        let mut unthrottled = false;
        let mut busy = false;
        if self.rt_time_ns > 0 {
            self.rt_time_ns -= self.rt_time_ns.min(overrun * bw.runtime_ns);
            if self.rt_throttled && self.rt_time_ns < bw.runtime_ns {
                self.rt_throttled = false;
                unthrottled = self.rt_nr_running > 0;
            }
            busy = self.rt_time_ns > 0 || self.rt_nr_running > 0;
        } else if self.rt_nr_running > 0 {
            busy = true;
        }
        (unthrottled, busy)
    }
}

/// The default RT bandwidth (`def_rt_bandwidth`) and its period timer, one for the whole
/// machine as in the kernel (the timer covers every CPU's `rt_rq`; it is pinned to the CPU
/// that started it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtBandwidth {
    /// Throttling modelled at all (kernels before 5f6bd380c7bd, v6.12).
    pub on: bool,
    pub runtime_ns: u64,
    pub period_ns: u64,
    /// `rt_period_active`, with the timer's next expiry and its CPU.
    pub timer: Option<(u64, usize)>,
}

impl RtBandwidth {
    /// `rt_bandwidth_enabled()` and a finite runtime below the period.
    pub fn enabled(&self) -> bool {
        self.on && self.runtime_ns < self.period_ns
    }

    /// `start_rt_bandwidth()` on an RT enqueue from `cpu`: an inactive timer is started at
    /// once (`hrtimer_forward_now(timer, 0)`), which then forwards itself by the period.
    pub fn start(&mut self, now_ns: u64, cpu: usize) {
        if self.enabled() && self.timer.is_none() {
            self.timer = Some((now_ns, cpu));
        }
    }

    /// `hrtimer_forward_now(timer, period)` at expiry: the number of periods that passed
    /// (the overrun) and the next expiry.
    pub fn forward(&self, expires_ns: u64, now_ns: u64) -> (u64, u64) {
        let period = self.period_ns.max(1);
        let overrun = (now_ns - expires_ns) / period + 1;
        (overrun, expires_ns + overrun * period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_priority_inverts_into_kernel_prio_and_cpupri() {
        // sched_setscheduler(SCHED_FIFO, 99) gives p->prio 0; rt_priority 1 gives 98.
        assert_eq!(rt_prio(99), 0);
        assert_eq!(rt_prio(1), 98);
        assert_eq!(rt_prio(50), 49);
        // cpupri: prio 0 -> level 99, prio 98 -> 1, no RT (99) -> CPUPRI_NORMAL.
        assert_eq!(convert_prio(0), 99);
        assert_eq!(convert_prio(98), 1);
        assert_eq!(convert_prio(99), CPUPRI_NORMAL);
    }

    #[test]
    fn prio_array_picks_highest_then_fifo_order() {
        let mut rq = RtRq::default();
        assert_eq!(rq.pick_first(), None);
        assert_eq!(rq.highest_prio(), 99);
        rq.enqueue(1, 89, false);
        rq.enqueue(2, 49, false);
        rq.enqueue(3, 49, false);
        rq.enqueue(4, 70, false);
        assert_eq!(rq.rt_nr_running(), 4);
        assert_eq!(rq.highest_prio(), 49);
        assert_eq!(rq.pick_first(), Some(2));
        // RR expiry: requeue at the tail of the same list.
        assert!(rq.has_peer(49));
        rq.requeue(2, 49, false);
        assert_eq!(rq.pick_first(), Some(3));
        rq.dequeue(3, 49);
        rq.dequeue(2, 49);
        assert!(!rq.has_peer(70));
        assert_eq!(rq.pick_first(), Some(4));
        // ENQUEUE_HEAD puts a task first in its list.
        rq.enqueue(5, 70, true);
        assert_eq!(rq.pick_first(), Some(5));
        // Bits above 63 work too.
        rq.enqueue(6, 98, false);
        rq.dequeue(5, 70);
        rq.dequeue(4, 70);
        rq.dequeue(1, 89);
        assert_eq!(rq.pick_first(), Some(6));
        assert_eq!(rq.highest_prio(), 98);
    }

    #[test]
    fn avg_rt_saturates_while_rt_runs_and_halves_in_32_ms() {
        let mut rq = RtRq::default();
        rq.update_rt_rq_load_avg(0, false);
        rq.update_rt_rq_load_avg(1_000_000_000, true);
        let full = rq.avg_rt.util_avg;
        assert!((1000..=1024).contains(&full), "util {full}");
        // PELT's half-life is 32 periods of 1024 us (~33.5 ms).
        rq.update_rt_rq_load_avg(1_000_000_000 + 32 * 1024 * 1024, false);
        let half = rq.avg_rt.util_avg;
        assert!(
            (full / 2 - 8..=full / 2 + 8).contains(&half),
            "{full} -> {half}"
        );
    }

    #[test]
    fn throttles_past_runtime_and_refills_by_period() {
        let bw = RtBandwidth {
            on: true,
            runtime_ns: 950_000_000,
            period_ns: 1_000_000_000,
            timer: None,
        };
        let mut rq = RtRq::default();
        rq.enqueue(0, 49, false);
        // 950 ms exactly is not "exceeded" (rt_time > runtime).
        assert!(!rq.account_rt_time(950_000_000, &bw));
        assert!(rq.account_rt_time(4_000_000, &bw));
        assert!(rq.rt_throttled);
        assert_eq!(rq.nr_running_visible(), 0);
        // The period timer takes one runtime's worth: 4 ms left, unthrottled.
        assert_eq!(rq.period_refill(1, &bw), (true, true));
        assert_eq!(rq.rt_time_ns, 4_000_000);
        assert!(!rq.rt_throttled);
        // runtime >= period disables the limit (sched_rt_runtime_us = -1 / = period).
        let off = RtBandwidth {
            runtime_ns: 1_000_000_000,
            ..bw.clone()
        };
        let mut rq2 = RtRq::default();
        assert!(!rq2.account_rt_time(5_000_000_000, &off));
        assert_eq!(bw.forward(0, 2_500_000_000), (3, 3_000_000_000));
    }
}
