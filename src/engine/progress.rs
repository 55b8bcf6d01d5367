//! Lazy progress of the running task, like the kernel's `update_curr()`: its remaining
//! work is advanced only when something happens on its CPU, at its current speed, and its
//! next program step is re-planned when the speed changes; kernel work is charged by pushing
//! the CPU's `busy_until_ns` horizon.

use super::{Engine, Event};
use crate::task::TaskId;
use crate::units::{cpu_u32, ns_saturating};

impl Engine {
    // ----- progress ------------------------------------------------------------------------

    /// Current speed of `cpu`'s task in 1/1024: capacity × SMT contention × the machine's
    /// `speed_pct` ÷ the memory locality time scale of the task's pages seen from this CPU's
    /// node.
    pub(crate) fn speed_of(&self, cpu: usize) -> u64 {
        let speed = self.cpus[cpu].smt_speed_base;
        debug_assert_eq!(
            speed,
            self.smt_speed_base_now(cpu),
            "stale SMT speed of CPU {cpu}"
        );
        if let Some(s) = self.numa_scaled_speed(cpu, speed) {
            return s;
        }
        match self.cpus[cpu].curr {
            Some(p) if self.tasks[p.idx()].mem_intensity_permille > 0 => {
                crate::cost::mem_scaled_speed(speed, self.mem_time_scale_ppm(cpu, p))
            }
            _ => speed,
        }
    }

    /// [`crate::cost::mem_time_scale_ppm`] of task `p` running on `cpu`.
    fn mem_time_scale_ppm(&self, cpu: usize, p: TaskId) -> u64 {
        let t = &self.tasks[p.idx()];
        let node = self.machine.cpus[cpu].node;
        let rows = t
            .numa_pages
            .iter()
            .enumerate()
            .map(|(n, &pages)| (pages, self.machine.distance(node, n)));
        crate::cost::mem_time_scale_ppm(t.mem_intensity_permille, rows)
    }

    /// [`super::smt_speed_base`] of `cpu` for its siblings' busy state now (walks the SMT
    /// mask; the cached value is [`super::CpuCore::smt_speed_base`]).
    fn smt_speed_base_now(&self, cpu: usize) -> u64 {
        let busy = self
            .machine
            .smt_mask(cpu)
            .iter()
            .filter(|&s| s == cpu || self.cpus[s].curr.is_some())
            .count();
        self.smt_speed_base_of(cpu, busy)
    }

    /// [`super::smt_speed_base`] of `cpu` with `busy` busy siblings (itself included),
    /// from the table built with the engine.
    #[inline]
    fn smt_speed_base_of(&self, cpu: usize, busy: usize) -> u64 {
        debug_assert!((1..=self.smt_speed_stride).contains(&busy), "busy {busy}");
        let v = self.smt_speed_table[cpu * self.smt_speed_stride + busy - 1];
        debug_assert_eq!(
            v,
            super::smt_speed_base(&self.machine, &self.cost, cpu, busy)
        );
        v
    }

    /// A CPU went busy or idle: its SMT siblings' speeds changed (and their cached SMT
    /// speed, busy or idle).
    pub(super) fn update_sibling_speeds(&mut self, cpu: usize) {
        let nr = self.smt_siblings[cpu].len();
        let nr_busy = (0..nr)
            .filter(|&k| self.cpus[self.smt_siblings[cpu][k] as usize].curr.is_some())
            .count();
        for k in 0..nr {
            let s = self.smt_siblings[cpu][k] as usize;
            if s == cpu {
                continue;
            }
            // `s` counts itself busy.
            let busy = nr_busy + usize::from(self.cpus[s].curr.is_none());
            self.cpus[s].smt_speed_base = self.smt_speed_base_of(s, busy);
            if self.cpus[s].curr.is_none() {
                continue;
            }
            self.sync_progress(s);
            self.cpus[s].speed = self.speed_of(s);
            if self.tasks[self.cpus[s].curr.expect("checked").idx()].in_run {
                self.plan_continue(s);
            }
        }
    }

    /// Account the current task's progress up to now (`update_curr()`'s role for work).
    pub(crate) fn sync_progress(&mut self, cpu: usize) {
        let Some(p) = self.cpus[cpu].curr else {
            return;
        };
        let now = self.clock.now();
        let busy_until = self.cpus[cpu].busy_until_ns;
        let speed = self.cpus[cpu].speed;
        let t = &mut self.tasks[p.idx()];
        if t.in_run {
            let from = t.progress_mark_ns.max(busy_until);
            if now > from {
                t.remaining_work = t
                    .remaining_work
                    .saturating_sub(work_done(now - from, speed));
            }
        }
        t.progress_mark_ns = now;
    }

    /// Charge `ns` of kernel work to `cpu`: no task progresses there until it is done.
    pub(crate) fn charge(&mut self, cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        self.sync_progress(cpu);
        let c = &mut self.cpus[cpu];
        c.busy_until_ns = c.busy_until_ns.max(self.clock.now()) + ns;
        c.stats.counters.kernel_work_ns += ns;
        if c.curr.is_some() {
            self.plan_continue(cpu);
        }
    }

    /// [`Engine::charge`] hard or soft interrupt work (a handler, SCHED_SOFTIRQ's
    /// balancing): under CONFIG_IRQ_TIME_ACCOUNTING the policy keeps it out of the
    /// runqueue's task clock (`irqtime_account_irq()`), so it is not the current task's
    /// runtime; without it, it is, as in the kernel.
    pub(crate) fn charge_irq(&mut self, cpu: usize, ns: u64) {
        self.charge(cpu, ns);
        if self.cfg.irq_time_accounting && ns > 0 {
            self.policy.account_irq_time(cpu, ns);
        }
    }

    /// (Re)plan the next program step of `cpu`'s current task.
    pub(crate) fn plan_continue(&mut self, cpu: usize) {
        let Some(p) = self.cpus[cpu].curr else {
            return;
        };
        let start = self.clock.now().max(self.cpus[cpu].busy_until_ns);
        let t = &self.tasks[p.idx()];
        let at = match (t.in_run, t.spin_deadline_ns) {
            (true, Some(deadline)) => start.max(deadline),
            (true, None) => start + work_to_ns(t.remaining_work, self.cpus[cpu].speed.max(1)),
            (false, _) => start,
        };
        let c = &mut self.cpus[cpu];
        c.continue_at_ns = at;
        if matches!(c.continue_queued_at, Some(queued) if queued <= at) {
            return;
        }
        c.done_gen = c.done_gen.wrapping_add(1);
        c.continue_queued_at = Some(at);
        let generation = c.done_gen;
        self.clock.push(
            at,
            Event::Continue {
                cpu: cpu_u32(cpu),
                generation,
            },
        );
    }

    /// The current task of `cpu` reached its planned step.
    pub(crate) fn continue_curr(&mut self, cpu: usize) {
        let p = self.cpus[cpu]
            .curr
            .expect("Continue only planned for busy CPUs");
        self.sync_progress(cpu);
        let now = self.clock.now();
        let t = &mut self.tasks[p.idx()];
        if t.in_run {
            let unfinished = match t.spin_deadline_ns {
                Some(deadline) => now < deadline,
                None => t.remaining_work > 0,
            };
            if unfinished {
                self.plan_continue(cpu);
                return;
            }
            t.in_run = false;
            t.spin_deadline_ns = None;
            t.pc += 1;
        }
        self.run_ops(cpu);
    }
}

/// Time to do `work` (ns at speed 1024) at `speed`: `ceil(work × 1024 / speed)`. In `u64`
/// when `work × 1024` fits (every realistic case), else in `u128`: the same value either
/// way, without the 128-bit division call on the hot path (saturated at `u64::MAX` ns).
#[inline]
fn work_to_ns(work: u64, speed: u64) -> u64 {
    if work < 1 << 54 {
        (work << 10).div_ceil(speed)
    } else {
        ns_saturating((u128::from(work) << 10).div_ceil(u128::from(speed)))
    }
}

/// Work done in `ns` at `speed` (ns at speed 1024): `floor(ns × speed / 1024)`, in `u64`
/// when the product fits, else in `u128` (the same value, saturated at `u64::MAX`).
#[inline]
fn work_done(ns: u64, speed: u64) -> u64 {
    match ns.checked_mul(speed) {
        Some(x) => x >> 10,
        None => ns_saturating((u128::from(ns) * u128::from(speed)) >> 10),
    }
}

#[cfg(test)]
mod tests {
    use super::{work_done, work_to_ns};
    use proptest::prelude::*;

    proptest! {
        /// The `u64` fast paths give the former `u128` formulas' values, small and huge
        /// (saturated at `u64::MAX`, where the `u128` value does not fit).
        #[test]
        fn progress_arithmetic_matches_u128(
            work in prop_oneof![0u64..1 << 40, any::<u64>()],
            ns in prop_oneof![0u64..1 << 40, any::<u64>()],
            speed in 1u64..4096,
        ) {
            let want_ns = u64::try_from((work as u128 * 1024).div_ceil(speed as u128));
            prop_assert_eq!(work_to_ns(work, speed), want_ns.unwrap_or(u64::MAX));
            let want_done = u64::try_from(ns as u128 * speed as u128 / 1024);
            prop_assert_eq!(work_done(ns, speed), want_done.unwrap_or(u64::MAX));
        }
    }
}
