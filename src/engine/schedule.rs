//! `__schedule()` as `kernel/sched/core.c` has it: applying the policy's actions, the
//! fallback CPU (`select_fallback_rq()`), the pick with newidle balancing, the context
//! switch, the idle loop (cpuidle governor, tick stop), and the speed a task runs at.
//!
//! Approximation (deliberate): perf's `context-switches` counts switches out of workload
//! tasks (what `perf stat CMD` counts); switches from the idle task to a task are not
//! counted, as with a per-task counter.

use super::{Engine, Event};
use crate::sched::types::{Migration, MigrationReason};
use crate::task::{TaskId, TaskState};
use crate::units::cpu_u32;

impl Engine {
    // ----- applying policy actions -------------------------------------------------------

    /// Charge the policy's work to `cpu`, record its migrations, send its kicks.
    pub(crate) fn apply_actions(&mut self, cpu: usize) {
        self.apply_actions_in(cpu, false);
    }

    /// [`Engine::apply_actions`] for work done in interrupt context (`in_irq`): the
    /// balancing of SCHED_SOFTIRQ, a policy hrtimer's handler. Under
    /// CONFIG_IRQ_TIME_ACCOUNTING that is interrupt time, not the current task's.
    pub(crate) fn apply_actions_in(&mut self, cpu: usize, in_irq: bool) {
        // Each migration is a detach_task() (dequeue) and an attach_task() (enqueue) done by
        // this CPU, plus what the policy did inside them (dl_server start/stop).
        let moves = self.act.migrations.len() as u64;
        let cost = self.act.cost_ns
            + moves * (self.cost.dequeue_task_ns + self.cost.enqueue_task_ns)
            + self.policy.take_cost_ns();
        self.act.cost_ns = 0;
        if in_irq {
            self.charge_irq(cpu, cost);
        } else {
            self.charge(cpu, cost);
        }
        for i in 0..self.act.migrations.len() {
            let m: Migration = self.act.migrations[i];
            self.tasks[m.task.idx()].cpu = m.to;
            self.count_migration(cpu, m.task, m.from, m.to, m.reason);
            if self.cpus[m.to].curr.is_none() && m.to != cpu {
                self.resched_curr(m.to, cpu);
            }
        }
        for i in 0..self.act.kicks.len() {
            let target = self.act.kicks[i];
            let (at, how) = self.send_ipi(cpu, target);
            self.clock.push(
                at,
                Event::KickIpi {
                    cpu: cpu_u32(target),
                    how,
                },
            );
        }
        for i in 0..self.act.resched.len() {
            let target = self.act.resched[i];
            self.resched_curr(target, cpu);
        }
        for i in 0..self.act.stop_cpus.len() {
            let target = self.act.stop_cpus[i];
            // stop_one_cpu_nowait(): the stopper is queued by IPI on the busiest CPU.
            let (at, how) = self.send_ipi(cpu, target);
            self.clock.push(
                at,
                Event::Stopper {
                    cpu: cpu_u32(target),
                    how,
                },
            );
        }
        self.act.clear();
    }

    /// `select_fallback_rq()` when a policy returns a CPU the task may not use.
    pub(super) fn allowed_or_fallback(&self, p: TaskId, cpu: usize) -> usize {
        let allowed = &self.tasks[p.idx()].cpus_allowed;
        if allowed.test(cpu) {
            return cpu;
        }
        let node = self.machine.cpus[cpu].node;
        allowed
            .and(self.machine.node_mask(node))
            .first()
            .or_else(|| allowed.first())
            .expect("validated: every task has an allowed online CPU")
    }

    // ----- __schedule() ------------------------------------------------------------------

    /// `__schedule()` on `cpu`: put back or drop the current task, pick the next one (newidle
    /// balancing first when nothing is queued), switch.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        // Asked to reschedule (a preemption), as opposed to blocking, exiting or yielding.
        let preempt = self.cpus[cpu].need_resched || self.cpus[cpu].need_resched_lazy;
        self.cpus[cpu].stats.sched_count += 1;
        self.cpus[cpu].need_resched = false;
        self.cpus[cpu].need_resched_lazy = false;
        let prev = self.cpus[cpu].curr;
        let mut prev_queued = None;
        if let Some(p) = prev {
            self.sync_progress(cpu);
            let t = &mut self.tasks[p.idx()];
            t.stats.counters.sum_exec_runtime_ns += self.clock.now() - t.exec_start_ns;
            t.exec_start_ns = self.clock.now();
            if t.state == TaskState::Running {
                t.state = TaskState::Runnable;
                t.runnable_since_ns = self.clock.now();
                prev_queued = Some(p);
            }
        }
        let mut next = policy!(self.pick_next_task(cpu, prev_queued));
        let work = self.policy.take_cost_ns();
        self.charge(cpu, work);
        if next.is_none() {
            self.act.clear();
            policy!(self.balance_newidle(cpu, &mut self.act));
            self.apply_actions(cpu);
            next = policy!(self.pick_next_task(cpu, None));
            let work = self.policy.take_cost_ns();
            self.charge(cpu, work);
        }
        // clear_tsk_need_resched(prev), after the pick: a resched set while picking (an
        // attach_task() of newly-idle balancing preempting the outgoing task) belongs to
        // `prev` and dies with this switch. Left set, it would make the next
        // resched_curr() of an idle CPU believe a reschedule is already on its way.
        self.cpus[cpu].need_resched = false;
        self.cpus[cpu].need_resched_lazy = false;
        match next {
            Some(n) => self.switch_to(cpu, prev, n),
            None => self.go_idle(cpu, prev),
        }
        if self.observer.is_some() && prev != next {
            self.trace_switch(cpu, prev, next, preempt);
        }
    }

    /// `sched_switch`: `prev_state` from the state `prev` left the CPU in.
    fn trace_switch(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
        next: Option<TaskId>,
        preempt: bool,
    ) {
        use super::observer::PrevState;
        let Some(rec) = self.observer.as_deref_mut() else {
            return;
        };
        let prev = prev.map(|p| &self.tasks[p.idx()]);
        let state = match prev.map(|t| t.state) {
            Some(TaskState::Blocked) => PrevState::Sleeping,
            Some(TaskState::Dead) => PrevState::Dead,
            _ if preempt => PrevState::Preempted,
            _ => PrevState::Runnable,
        };
        let next = next.map(|n| &self.tasks[n.idx()]);
        rec.switch(self.clock.now(), cpu, prev, state, next);
    }

    pub(super) fn count_switch_out(&mut self, cpu: usize, prev: TaskId) {
        self.cpus[cpu].stats.counters.nr_switches += 1;
        self.acct.context_switch(prev.idx());
        let t = &mut self.tasks[prev.idx()];
        t.stats.counters.nr_switches += 1;
        if t.state == TaskState::Runnable {
            t.stats.counters.nr_involuntary_switches += 1;
        } else {
            t.stats.counters.nr_voluntary_switches += 1;
        }
    }

    fn switch_to(&mut self, cpu: usize, prev: Option<TaskId>, next: TaskId) {
        if prev == Some(next) {
            self.tasks[next.idx()].state = TaskState::Running;
            self.plan_continue(cpu);
            return;
        }
        if let Some(p) = prev {
            self.count_switch_out(cpu, p);
        } else {
            self.cpus[cpu].stats.counters.nr_switches += 1;
        }
        let from_cpu = self.tasks[next.idx()].cpu;
        if from_cpu != cpu {
            // A policy dispatched a task queued for another CPU (global-queue policies).
            self.count_migration(cpu, next, from_cpu, cpu, MigrationReason::Dispatch);
            self.tasks[next.idx()].cpu = cpu;
        }
        let pick_ns = self.cost.set_next_entity_ns
            + if prev.is_some() {
                self.cost.put_prev_entity_ns
            } else {
                0
            };
        self.charge(cpu, self.cost.context_switch_ns + pick_ns);
        let now = self.clock.now();
        self.switch_in_task(cpu, next, now);
        self.numa_first_touch(cpu, next);
        let was_idle = prev.is_none();
        self.cpus[cpu].curr = Some(next);
        self.cpus[cpu].switching_to_idle = false;
        self.policy.cpu_state_changed(cpu);
        if was_idle {
            // Leaving the idle loop: the governor reflects, tick_nohz_idle_exit()
            // restarts the tick.
            self.cpuidle_reflect(cpu, false);
            self.cpus[cpu].tick_stopped = false;
            self.cpus[cpu].busy_since_ns = now;
            self.cpus[cpu].idle_stamp_ns = 0;
            self.arm_tick(cpu);
            self.update_sibling_speeds(cpu);
        }
        self.cpus[cpu].speed = self.speed_of(cpu);
        self.numa_running_changed(prev, Some(next));
        self.arm_hrtick(cpu);
        self.plan_continue(cpu);
    }

    /// The task side of a switch to `next` at `now`: running from now, its wait ended
    /// (schedstat `run_delay`, the schedule-delay and wakeup-latency histograms), perf's
    /// migration count, the cache refill owed after a move, and its first touch of memory.
    #[inline(always)]
    fn switch_in_task(&mut self, cpu: usize, next: TaskId, now: u64) {
        let refill = {
            let t = &self.tasks[next.idx()];
            match t.last_ran_cpu {
                Some(last) if last != cpu => self.cost.refill_ns(
                    crate::cost::CostModel::distance(&self.machine, last, cpu),
                    t.footprint_kib,
                ),
                _ => 0,
            }
        };
        {
            let t = &mut self.tasks[next.idx()];
            t.state = TaskState::Running;
            t.exec_start_ns = now;
            t.progress_mark_ns = now;
            t.stats.counters.wait_sum_ns += now - t.runnable_since_ns;
            t.stats.counters.wait_count += 1;
            self.cpus[cpu].stats.run_delay_ns += now - t.runnable_since_ns;
            self.acct
                .record_schedule_delay(next.idx(), now - t.runnable_since_ns);
            self.cpus[cpu].stats.pcount += 1;
            if let Some(woken) = t.woken_at_ns.take() {
                // Runnable → running: until the task's own code runs again, i.e. after the
                // context switch and any kernel work queued on this CPU (what schbench's
                // user-space timestamps see).
                let running_at = self.cpus[cpu].busy_until_ns.max(now);
                self.acct
                    .record_wakeup_latency(next.idx(), running_at - woken);
            }
            if t.perf_migrated {
                t.perf_migrated = false;
                self.acct.cpu_migration(next.idx());
            }
            t.refill_debt += refill;
            if t.in_run {
                t.remaining_work += t.refill_debt;
                t.refill_debt = 0;
            }
            t.last_ran_cpu = Some(cpu);
            if t.numa_pages.is_empty() {
                // First run: the task touches its memory (mm/mempolicy.c placement).
                let node = self.machine.cpus[cpu].node;
                t.numa_pages =
                    super::mempolicy::first_touch_pages(t.mempolicy, node, &self.machine);
            }
        }
    }

    fn go_idle(&mut self, cpu: usize, prev: Option<TaskId>) {
        let now = self.clock.now();
        let Some(p) = prev else {
            return;
        };
        self.count_switch_out(cpu, p);
        self.policy.cpu_state_changed(cpu);
        self.charge(cpu, self.cost.put_prev_entity_ns);
        let c = &mut self.cpus[cpu];
        c.stats.sched_goidle += 1;
        c.curr = None;
        c.idle_task_from_ns = now.max(c.busy_until_ns);
        c.switching_to_idle = c.idle_task_from_ns > now;
        if c.switching_to_idle {
            let at = c.idle_task_from_ns;
            self.clock
                .push(at, Event::IdleTaskRunning { cpu: cpu_u32(cpu) });
        }
        let c = &mut self.cpus[cpu];
        c.stats.counters.busy_ns += now - c.busy_since_ns;
        c.done_gen = c.done_gen.wrapping_add(1);
        c.continue_queued_at = None;
        self.stop_tick(cpu);
        self.update_sibling_speeds(cpu);
        self.numa_running_changed(Some(p), None);
        self.enter_idle(cpu);
    }

    /// `do_idle()` entry: stamp, the policy's idle hooks, then the first idle-loop
    /// iteration.
    pub(crate) fn enter_idle(&mut self, cpu: usize) {
        self.cpus[cpu].idle_stamp_ns = self.clock.now().max(1);
        self.cpus[cpu].idle_since_ns = self.clock.now();
        if !self.cpus[cpu].switching_to_idle {
            policy!(self.idle_enter(cpu));
        }
        self.cpuidle_idle_call(cpu);
    }

    /// The end of a switch to idle ([`CpuCore::switching_to_idle`]): from now on the CPU
    /// is `idle_cpu()` to wakeup placement and the load balancer, and `do_idle()`'s
    /// `__update_idle_core()` runs (`set_next_task_idle()`). Stale when the CPU took a task
    /// meanwhile or began another switch to idle.
    ///
    /// [`CpuCore::switching_to_idle`]: super::CpuCore::switching_to_idle
    pub(crate) fn idle_task_running(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        let current =
            c.switching_to_idle && c.curr.is_none() && c.idle_task_from_ns == self.clock.now();
        if !current {
            self.clock.superseded();
            return;
        }
        c.switching_to_idle = false;
        self.policy.cpu_state_changed(cpu);
        policy!(self.idle_enter(cpu));
    }

    /// One iteration of the idle loop, `cpuidle_idle_call()`: the governor picks a state
    /// and says whether to stop the tick; `tick_nohz_idle_stop_tick()` stops it (and, the
    /// first time in this idle period, `nohz_balance_enter_idle()` puts the CPU in the
    /// nohz idle mask), `tick_nohz_idle_retain_tick()` keeps it (the per-CPU tick event is
    /// re-armed at the next jiffy, reusing a still-queued one).
    pub(crate) fn cpuidle_idle_call(&mut self, cpu: usize) {
        let inp = self.idle_inputs(cpu);
        let now = self.clock.now();
        let c = &mut self.cpus[cpu];
        let sel = c.cpuidle.select(&self.cost.idle_states, &inp, now);
        c.idle_state = sel.state;
        c.idle_polling = self.cost.idle_states[sel.state].polling;
        c.idle_mwait = self.cost.idle_states[sel.state].mwait;
        c.idle_iter_start_ns = Some(now);
        if sel.stop_tick || c.tick_stopped {
            c.tick_armed = false;
            if !c.tick_stopped {
                c.tick_stopped = true;
                c.stats.idle_tick_stops += 1;
                policy!(self.nohz_tick_stopped(cpu));
            }
        } else {
            c.stats.idle_tick_retains += 1;
            self.arm_tick(cpu);
        }
    }

    /// The hardware exit of the idle state `cpu` sits in: the state's declared
    /// `exit_latency_ns`, or its core-only exit ([`crate::cpuidle::IdleState::core_exit_latency_ns`])
    /// unless the package-wide part was reachable, which needs every other online CPU idle in a
    /// state with such a part too (Intel: package C6 only once all CPUs of all sockets are in
    /// core C6). Offline CPUs count as there (they wait in the deepest state).
    pub(super) fn idle_exit_ns(&self, cpu: usize) -> u64 {
        let state = &self.cost.idle_states[self.cpus[cpu].idle_state];
        let Some(core_exit_ns) = state.core_exit_latency_ns else {
            return state.exit_latency_ns;
        };
        let now = self.clock.now();
        let package_idle = self.machine.online.iter().filter(|&o| o != cpu).all(|o| {
            let c = &self.cpus[o];
            c.in_idle_state(now)
                && self.cost.idle_states[c.idle_state]
                    .core_exit_latency_ns
                    .is_some()
        });
        if package_idle {
            state.exit_latency_ns
        } else {
            core_exit_ns
        }
    }

    /// `cpuidle_reflect()` when the idle-loop iteration on `cpu` ends (`got_tick`: the
    /// tick woke it).
    fn cpuidle_reflect(&mut self, cpu: usize, got_tick: bool) {
        let tick = self.tick_period_ns();
        let now = self.clock.now();
        let c = &mut self.cpus[cpu];
        if let Some(start) = c.idle_iter_start_ns.take() {
            c.cpuidle
                .reflect(c.idle_state, now - start, got_tick, tick, now);
        }
    }

    /// The kept tick fires on idle `cpu`: `sched_tick()` → `sched_balance_trigger()` →
    /// `sched_balance_domains(CPU_IDLE)` with the idle interval; if nothing was pulled the
    /// idle loop runs again and the governor re-evaluates (`tick_nohz_idle_stop_tick()`
    /// on this iteration, if it now says so). Approximation: the tick's own idle-exit
    /// latency is not charged.
    pub(super) fn idle_tick(&mut self, cpu: usize) {
        self.cpus[cpu].stats.idle_ticks += 1;
        self.cpuidle_reflect(cpu, true);
        self.act.clear();
        policy!(self.balance_tick(cpu, &mut self.act));
        self.apply_actions(cpu);
        if self.policy.nr_running(cpu) > 0 {
            self.cpus[cpu].need_resched = true;
            self.preempt_point(cpu);
        }
        if self.cpus[cpu].curr.is_none() {
            self.cpuidle_idle_call(cpu);
        }
    }

    /// The governor's inputs on `cpu` now: `tick_nohz_get_sleep_length()` (the next task
    /// hrtimer or policy timer on this CPU; none → [`crate::cpuidle::menu::NO_TIMER_NS`])
    /// and its `delta_next` (the next jiffy boundary while the tick runs).
    fn idle_inputs(&self, cpu: usize) -> crate::cpuidle::IdleInputs {
        let now = self.clock.now();
        let period = self.tick_period_ns();
        let c = &self.cpus[cpu];
        let mut next = c.policy_timer_at.unwrap_or(u64::MAX);
        if let Some(at) = self.task_timers.earliest(cpu) {
            next = next.min(at);
        }
        let sleep_length_ns = if next == u64::MAX {
            crate::cpuidle::menu::NO_TIMER_NS
        } else {
            next.saturating_sub(now)
        };
        let to_tick = (now / period + 1) * period - now;
        crate::cpuidle::IdleInputs {
            tick_nsec: period,
            tick_stopped: c.tick_stopped,
            sleep_length_ns,
            delta_tick_ns: if c.tick_stopped {
                sleep_length_ns
            } else {
                to_tick.min(sleep_length_ns)
            },
        }
    }
}
