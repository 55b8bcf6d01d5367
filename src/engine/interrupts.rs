//! What arrives at a CPU from outside its task: reschedule and kick IPIs (`resched_curr()`,
//! `scheduler_ipi()`), the stopper (`migration_cpu_stop()`, active balancing), the policy's
//! pinned hrtimers, task hrtimers, and the tick (`sched_tick()`, HRTICK).
//!
//! Approximations (each deliberate):
//! - The tick itself costs no time; its effect is what the policy does in it.
//! - Timer interrupts fire exactly at expiry + slack (the hrtimer slack range's upper end,
//!   where an otherwise quiet CPU's timer lands).

use super::{Engine, Event, IpiWake};
use crate::sched::types::MigrationReason;
use crate::task::{TaskId, TaskState};
use crate::units::cpu_u32;

impl Engine {
    /// `resched_curr()`: set need_resched on `cpu`; a remote CPU gets a reschedule IPI (none
    /// if it is polling idle). The local CPU reschedules at its next preemption point.
    pub(crate) fn resched_curr(&mut self, cpu: usize, this_cpu: usize) {
        if self.cpus[cpu].need_resched {
            return;
        }
        self.cpus[cpu].need_resched = true;
        if cpu == this_cpu {
            return;
        }
        if !self.cpus[cpu].resched_ipi_pending {
            self.cpus[cpu].resched_ipi_pending = true;
            let (at, how) = self.send_ipi(this_cpu, cpu);
            self.clock.push(
                at,
                Event::ReschedIpi {
                    cpu: cpu_u32(cpu),
                    how,
                },
            );
        }
    }

    pub(crate) fn handle_resched_ipi(&mut self, cpu: usize, how: IpiWake) {
        self.cpus[cpu].resched_ipi_pending = false;
        if !self.cpus[cpu].need_resched {
            return;
        }
        self.take_ipi(cpu, how);
        self.preempt_point(cpu);
    }

    pub(crate) fn handle_kick_ipi(&mut self, cpu: usize, how: IpiWake) {
        self.take_ipi(cpu, how);
        if self.cpus[cpu].curr.is_some() {
            return;
        }
        self.act.clear();
        policy!(self.nohz_idle_balance(cpu, &mut self.act));
        self.apply_actions_in(cpu, true);
        if self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
        }
        self.preempt_point(cpu);
    }

    /// The stopper (highest class) preempts `cpu`'s task, runs active balancing, and the
    /// CPU then schedules as after any preemption.
    pub(crate) fn handle_stopper(&mut self, cpu: usize, how: IpiWake) {
        self.take_ipi(cpu, how);
        self.stopper_preempt_curr(cpu);
        self.act.clear();
        policy!(self.active_balance(cpu, &mut self.act));
        self.apply_actions(cpu);
        self.schedule(cpu);
        if self.cpus[cpu].curr.is_none() {
            self.enter_idle(cpu);
        }
    }

    /// `migration_cpu_stop()` on `cpu` for its current task `p` (after an affinity change
    /// that excludes `cpu`): the stopper preempts `p`, `move_queued_task()` moves it to
    /// `dest` (waking or preempting `dest` as needed), and `cpu` schedules.
    pub(crate) fn migration_cpu_stop(
        &mut self,
        cpu: usize,
        p: TaskId,
        dest: usize,
        reason: MigrationReason,
    ) {
        // Switching to the stopper thread and running it.
        self.charge(cpu, self.cost.context_switch_ns);
        self.stopper_preempt_curr(cpu);
        let preempt = policy!(self.move_queued_task(p, cpu, dest));
        self.tasks[p.idx()].cpu = dest;
        self.count_migration(cpu, p, cpu, dest, reason);
        if preempt || self.cpus[dest].curr.is_none() {
            self.resched_curr(dest, cpu);
        }
        self.schedule(cpu);
        if self.cpus[cpu].curr.is_none() {
            self.enter_idle(cpu);
        }
    }

    /// The stop class preempts `cpu`'s current task: it stays runnable and queued
    /// (`put_prev_task()`), the CPU is the stopper's until it schedules again.
    pub(crate) fn stopper_preempt_curr(&mut self, cpu: usize) {
        if let Some(p) = self.cpus[cpu].curr {
            self.sync_progress(cpu);
            let now = self.clock.now();
            let t = &mut self.tasks[p.idx()];
            t.stats.counters.sum_exec_runtime_ns += now - t.exec_start_ns;
            t.exec_start_ns = now;
            t.state = TaskState::Runnable;
            t.runnable_since_ns = now;
            self.count_switch_out(cpu, p);
            policy!(self.put_prev_task(cpu, p));
            self.policy.cpu_state_changed(cpu);
            let c = &mut self.cpus[cpu];
            c.curr = None;
            c.stats.counters.busy_ns += now - c.busy_since_ns;
            c.busy_since_ns = now;
            c.done_gen = c.done_gen.wrapping_add(1);
            c.continue_queued_at = None;
            self.stop_tick(cpu);
            self.update_sibling_speeds(cpu);
            self.numa_running_changed(Some(p), None);
        }
    }

    /// A policy hrtimer pinned to `cpu` fired (RT period timer, dl_server timer): run the
    /// policy's handler, then reschedule wherever it asked. Approximation: an idle CPU runs
    /// the handler without paying its idle-exit latency (these timers fire about once a
    /// second; the latency is microseconds).
    pub(crate) fn policy_timer(&mut self, cpu: usize) {
        self.cpus[cpu].policy_timer_at = None;
        // The handler re-arms through take_timer_changes (it marks `cpu` changed).
        self.act.clear();
        policy!(self.timer_expired(cpu, &mut self.act));
        self.apply_actions_in(cpu, true);
        if self.cpus[cpu].curr.is_none() && self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
        }
        self.preempt_point(cpu);
    }

    /// Arm (or re-arm, or cancel) the policy timers whose expiry changed during the last
    /// event. Done once per event: expiries are absolute, so arming at the end of the
    /// event's handling is the same as arming where the policy decided it.
    pub(crate) fn sync_policy_timers(&mut self) {
        // Nearly every event changes no policy timer: read the list in place and leave it
        // at once when it is empty (no take/put-back of the Vec per event).
        self.policy.take_timer_changes(&mut self.timer_changes);
        if self.timer_changes.is_empty() {
            return;
        }
        let changed = std::mem::take(&mut self.timer_changes);
        for &cpu in &changed {
            let want = self
                .policy
                .next_timer_ns(cpu)
                .map(|at| at.max(self.clock.now()));
            let c = &mut self.cpus[cpu];
            c.policy_timer_at = want;
            let Some(at) = want else { continue };
            if matches!(c.policy_timer_queued, Some((queued, _)) if queued <= at) {
                continue;
            }
            c.policy_timer_gen = c.policy_timer_gen.wrapping_add(1);
            let generation = c.policy_timer_gen;
            c.policy_timer_queued = Some((at, generation));
            self.clock.push(
                at,
                Event::PolicyTimer {
                    cpu: cpu_u32(cpu),
                    generation,
                },
            );
        }
        self.timer_changes = changed;
        self.timer_changes.clear();
    }

    /// Reschedule `cpu` if it was asked to.
    pub(crate) fn preempt_point(&mut self, cpu: usize) {
        if self.cpus[cpu].need_resched && !self.in_wake_walk(cpu) {
            self.schedule(cpu);
        }
    }

    /// Whether `cpu`'s current task is inside an `Op::UpMany` wait-queue walk, where the
    /// kernel holds the wait-queue lock with interrupts off: a reschedule waits for the
    /// walk's end, where the op asks for it ([`Engine::op_up_many`]).
    pub(crate) fn in_wake_walk(&self, cpu: usize) -> bool {
        self.cpus[cpu]
            .curr
            .is_some_and(|p| self.tasks[p.idx()].ups_left > 0)
    }

    // ----- timers ---------------------------------------------------------------------

    /// An hrtimer of a sleeping task fires on `cpu`. An idle CPU must leave its idle state
    /// before the handler runs.
    pub(crate) fn hrtimer_expire(&mut self, p: TaskId, cpu: usize, generation: u32) {
        let c = &self.cpus[cpu];
        if c.in_idle_state(self.clock.now()) && !c.idle_polling {
            let exit = self.idle_exit_ns(cpu);
            self.cpus[cpu].stats.counters.idle_exits += 1;
            self.clock.push(
                self.clock.now() + exit,
                Event::TimerWake {
                    task: p,
                    cpu: cpu_u32(cpu),
                    generation,
                },
            );
            return;
        }
        self.timer_wakeup(p, cpu);
    }

    pub(crate) fn timer_wakeup(&mut self, p: TaskId, cpu: usize) {
        // hrtimer_interrupt(): interrupt entry, the timerqueue, the reprogram.
        self.charge_irq(cpu, self.cost.hrtimer_expire_ns);
        self.tasks[p.idx()].timer_gen += 1;
        self.try_to_wake_up(p, cpu, None, false);
        self.preempt_point(cpu);
    }

    // ----- the tick ---------------------------------------------------------------------

    pub(super) fn tick_period_ns(&self) -> u64 {
        1_000_000_000 / self.cfg.hz as u64
    }

    /// Arm the tick of a CPU that just became busy, at the next jiffy boundary (ticks of all
    /// CPUs are aligned, as without `skew_tick`). A tick event still queued for that boundary
    /// (the CPU idled briefly inside the jiffy) is reused rather than queued again, so short
    /// idle periods do not fill the queue with stale ticks.
    pub(super) fn arm_tick(&mut self, cpu: usize) {
        let period = self.tick_period_ns();
        let next = (self.clock.now() / period + 1) * period;
        let c = &mut self.cpus[cpu];
        c.tick_armed = true;
        if c.tick_queued_at == Some(next) {
            return;
        }
        c.tick_gen = c.tick_gen.wrapping_add(1);
        c.tick_queued_at = Some(next);
        let generation = c.tick_gen;
        self.clock.push(
            next,
            Event::Tick {
                cpu: cpu_u32(cpu),
                generation,
            },
        );
    }

    /// NOHZ: an idle CPU does not tick. Its queued tick, if any, is dropped when it fires
    /// unless the CPU is busy again by then.
    pub(super) fn stop_tick(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.hrtick_gen = c.hrtick_gen.wrapping_add(1);
        c.tick_armed = false;
    }

    /// `hrtick_start_fair()`: arm (or re-arm) the high-resolution tick at the current
    /// task's slice end, when the policy asks for one (HRTICK).
    pub(super) fn arm_hrtick(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        c.hrtick_gen = c.hrtick_gen.wrapping_add(1);
        let generation = c.hrtick_gen;
        if let Some(delay) = self.policy.hrtick_delay_ns(cpu) {
            self.clock.push(
                self.clock.now() + delay,
                Event::HrTick {
                    cpu: cpu_u32(cpu),
                    generation,
                },
            );
        }
    }

    /// `hrtick()`: the slice-end timer fired; `task_tick(queued = 1)`.
    pub(crate) fn hrtick(&mut self, cpu: usize) {
        let Some(curr) = self.cpus[cpu].curr else {
            return;
        };
        self.sync_progress(cpu);
        if policy!(self.task_tick(cpu, curr)) {
            self.cpus[cpu].need_resched = true;
            self.preempt_point(cpu);
        } else {
            self.arm_hrtick(cpu);
        }
    }

    /// `sched_tick()`: the policy's `task_tick`, lazy-preemption promotion, balancing.
    pub(crate) fn sched_tick(&mut self, cpu: usize) {
        let Some(curr) = self.cpus[cpu].curr else {
            self.cpus[cpu].tick_armed = false;
            if !self.cpus[cpu].tick_stopped && self.cpus[cpu].idle_iter_start_ns.is_some() {
                self.idle_tick(cpu);
            }
            return;
        };
        self.sync_progress(cpu);
        // The timer interrupt itself (`hrtimer_interrupt()`: entry, the timerqueue, the
        // reprogram, as for every hrtimer) and the housekeeping interrupts of this tick.
        let irq_ns = self.cost.hrtimer_expire_ns + self.noise.tick_irq_ns(cpu, self.cfg.hz);
        self.charge_irq(cpu, irq_ns);
        let mut resched = policy!(self.task_tick(cpu, curr));
        let numa_move = self.numa_tick(cpu, curr);
        if self.cpus[cpu].need_resched_lazy {
            resched = true;
        }
        self.act.clear();
        policy!(self.balance_tick(cpu, &mut self.act));
        self.apply_actions_in(cpu, true);
        self.arm_tick(cpu);
        if resched {
            self.cpus[cpu].need_resched = true;
        } else {
            self.arm_hrtick(cpu);
        }
        self.preempt_point(cpu);
        self.numa_apply_move(cpu, numa_move);
    }
}
