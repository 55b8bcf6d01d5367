//! Fork and wakeup, as `kernel/sched/core.c` has them: `wake_up_new_task()`,
//! `try_to_wake_up()` with `select_task_rq()`, the wake-list / remote-lock choice
//! (`ttwu_queue_cond`), delayed-dequeue wakeups, IPIs sent and taken, `ttwu_do_activate()`
//! and `wakeup_preempt()`.
//!
//! **The placement race.** `select_idle_sibling()` reads other CPUs' state without locks,
//! and a waker publishes its choice (`WRITE_ONCE(rq->ttwu_pending, 1)` in
//! `__ttwu_queue_wakelist()`) only after its selection work, the store reaching another
//! CPU's cache a line transfer later. Two wakers on different CPUs that both find CPU X idle
//! in that window both queue to X, which then runs one and keeps the other runnable (and
//! `add_nr_running()` sets `rd->overloaded`). The model makes each wakeup's choice at the
//! event's instant, so it hides a fresh wake-list entry from other CPUs' reads until
//! `now + selection work + cacheline_ns(waker, target)`
//! ([`crate::engine::CpuCore::ttwu_pending_seen_at`]); the waker's own CPU sees it at once
//! (program order). The load balancer's idle tests read locklessly too and see the entry
//! once published, whoever balances; when it is, the engine reports the CPU changed to the
//! policy ([`Engine::publish_wake_lists`], before any event at that time), so cached group
//! sums follow the time-dependent test.
//! Approximation: only the wake-list path publishes late; a direct remote activation
//! (target busy or TTWU_QUEUE off) enqueues at the event's instant, as before, and a
//! target that was busy is not idle to anyone anyway.
//!
//! Approximation (deliberate): the runqueue lock is modelled only where it is contended
//! across CPUs: a waker doing a direct remote activation waits for the target's lock if
//! another remote activation holds it. A CPU's own `__schedule()` does not take it in the
//! model.

use super::observer::PlacementEvent;
use super::{Engine, Event, IpiWake, TtwuQueueRule};
use crate::policy::EnqueueFlags;
use crate::sched::types::{MigrationReason, WakeCtx, WakeFlags};
use crate::task::{TaskId, TaskState};
use crate::units::cpu_u32;

impl Engine {
    // ----- fork, wakeup -------------------------------------------------------------

    /// `wake_up_new_task()`: place a forked task with the fork path of `select_task_rq()`.
    pub(crate) fn wake_up_new_task(&mut self, p: TaskId) {
        self.tasks[p.idx()].forked = true;
        let parent_cpu = {
            let t = &self.tasks[p.idx()];
            if self.machine.online.test(t.cpu) {
                t.cpu
            } else {
                self.machine.online.first().expect("some CPU is online")
            }
        };
        policy!(self.task_fork(p));
        let ctx = WakeCtx {
            this_cpu: parent_cpu,
            waker: None,
            flags: WakeFlags {
                fork: true,
                ..WakeFlags::default()
            },
        };
        let (placement, cpu) = self.select_task_rq(p, parent_cpu, parent_cpu, ctx);
        {
            let t = &mut self.tasks[p.idx()];
            t.cpu = cpu;
            t.state = TaskState::Runnable;
            t.on_rq = true;
            t.runnable_since_ns = self.clock.now();
            t.progress_mark_ns = self.clock.now();
        }
        if let Some(rec) = self.observer.as_deref_mut() {
            rec.placement(&PlacementEvent {
                ts_ns: self.clock.now(),
                p: &self.tasks[p.idx()],
                fork: true,
                this_cpu: parent_cpu,
                prev_cpu: parent_cpu,
                waker: None,
                sync: false,
                placement,
                cpu,
            });
        }
        if cpu != parent_cpu {
            self.count_migration(parent_cpu, p, parent_cpu, cpu, MigrationReason::Fork);
        }
        let flags = EnqueueFlags {
            initial: true,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, flags));
        self.charge_enqueue(parent_cpu, cpu);
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[parent_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.wakeup(
                self.clock.now(),
                parent_cpu,
                curr,
                &self.tasks[p.idx()],
                true,
            );
        }
        self.check_preempt(cpu, p, parent_cpu, ctx.flags);
        self.preempt_point(parent_cpu);
    }

    /// `try_to_wake_up()` of a blocked task `p`, done on `this_cpu`.
    pub(crate) fn try_to_wake_up(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) {
        debug_assert_eq!(self.tasks[p.idx()].state, TaskState::Blocked);
        let flags = WakeFlags {
            sync,
            ttwu: true,
            ..WakeFlags::default()
        };
        {
            let t = &mut self.tasks[p.idx()];
            t.woken_at_ns = Some(self.clock.now());
            t.stats.counters.nr_wakeups += 1;
            t.stats.counters.nr_wakeups_sync += sync as u64;
        }
        self.acct.wakeup(p.idx());
        self.cpus[this_cpu].stats.counters.ttwu_count += 1;
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.waking(self.clock.now(), this_cpu, curr, &self.tasks[p.idx()]);
        }

        if self.tasks[p.idx()].on_rq {
            if self.policy.task_on_rq(p) {
                if let Some(rec) = self.observer.as_deref_mut() {
                    let w = waker.map(|w| &self.tasks[w.idx()]);
                    rec.wakeup_queued(self.clock.now(), &self.tasks[p.idx()], this_cpu, w);
                }
                if !self.cfg.ttwu_queue_delayed {
                    self.ttwu_runnable(p, this_cpu, flags);
                    return;
                }
                if self.ttwu_queue_delayed(p, this_cpu) {
                    return;
                }
                // "Change ttwu_runnable() vs sched_delayed" (the companion of
                // TTWU_QUEUE_DELAYED): complete the delayed dequeue under the task's runqueue
                // lock and continue down the normal path, CPU selection included.
                let cpu = self.tasks[p.idx()].cpu;
                self.lock_remote_rq(this_cpu, cpu);
                self.complete_delayed_dequeue(this_cpu, cpu, p);
            } else {
                // The policy completed the delayed dequeue on its own (at a pick).
                self.tasks[p.idx()].on_rq = false;
            }
        }
        if self.ttwu_on_cpu(p, this_cpu) {
            return;
        }
        let ctx = WakeCtx {
            this_cpu,
            waker,
            flags,
        };
        let (cpu, migrated) = self.select_wakeup_cpu(p, this_cpu, ctx);
        // The selection's work (charged to the waker) comes before the waker writes
        // `ttwu_pending`: the placement race.
        let select_ns = self.act.cost_ns;
        if self.cfg.ttwu_queue && self.ttwu_queue_cond(p, cpu, this_cpu, false) {
            self.ttwu_queue_wakelist(p, cpu, this_cpu, select_ns);
        } else {
            self.lock_remote_rq(this_cpu, cpu);
            self.ttwu_do_activate(cpu, p, this_cpu, flags, migrated);
        }
    }

    /// core.c's `select_task_rq()`: the policy's choice for `p` (previous CPU `prev_cpu`),
    /// its scan work charged to `run_cpu`, then `select_fallback_rq()` if the choice is not
    /// allowed. Returns the policy's placement (for traces) and the CPU to use.
    pub(super) fn select_task_rq(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        run_cpu: usize,
        ctx: WakeCtx,
    ) -> (crate::sched::types::Placement, usize) {
        self.act.clear();
        let placement = policy!(self.select_task_rq(p, prev_cpu, ctx, &mut self.act));
        let cost = self.act.cost_ns;
        self.charge(run_cpu, cost);
        (placement, self.allowed_or_fallback(p, placement.cpu))
    }

    /// `select_task_rq()` + `set_task_cpu()` of a wakeup, run on `run_cpu` (which pays for the
    /// scan) on behalf of the waker described by `ctx`. Returns the CPU and whether it
    /// differs from the task's previous one.
    fn select_wakeup_cpu(&mut self, p: TaskId, run_cpu: usize, ctx: WakeCtx) -> (usize, bool) {
        // select_task_rq(p, p->wake_cpu, ...): a NUMA swap may have redirected a sleeper.
        let task_cpu = self.tasks[p.idx()].cpu;
        let prev_cpu = self.numa_take_wake_cpu(p).unwrap_or(task_cpu);
        let (placement, cpu) = self.select_task_rq(p, prev_cpu, run_cpu, ctx);
        if let Some(rec) = self.observer.as_deref_mut() {
            rec.placement(&PlacementEvent {
                ts_ns: self.clock.now(),
                p: &self.tasks[p.idx()],
                fork: false,
                this_cpu: ctx.this_cpu,
                prev_cpu,
                waker: ctx.waker.map(|w| &self.tasks[w.idx()]),
                sync: ctx.flags.sync,
                placement,
                cpu,
            });
        }
        let migrated = cpu != task_cpu;
        if migrated {
            policy!(self.migrate_task_rq(p, task_cpu, cpu));
            self.count_migration(run_cpu, p, task_cpu, cpu, MigrationReason::Wakeup);
            self.tasks[p.idx()].cpu = cpu;
            self.tasks[p.idx()].stats.counters.nr_wakeups_migrate += 1;
        }
        if cpu == ctx.this_cpu {
            self.tasks[p.idx()].stats.counters.nr_wakeups_local += 1;
            self.cpus[ctx.this_cpu].stats.counters.ttwu_local += 1;
        } else {
            self.ttwu_stat_remote(p, ctx.this_cpu, cpu);
        }
        (cpu, migrated)
    }

    /// The `p->on_cpu` step of `try_to_wake_up()`: if `p` is still switching out on its CPU
    /// at the waker's time, either queue it to that CPU's wake list (TTWU_QUEUE_ON_CPU, when
    /// `ttwu_queue_cond()` allows; no CPU selection) and return true, or spin until the
    /// switch is over (`smp_cond_load_acquire(&p->on_cpu, !VAL)`), charged to the waker.
    fn ttwu_on_cpu(&mut self, p: TaskId, this_cpu: usize) -> bool {
        let cpu = self.tasks[p.idx()].cpu;
        let waker_at = self.clock.now().max(self.cpus[this_cpu].busy_until_ns);
        let on_cpu_until = self.tasks[p.idx()].on_cpu_until_ns;
        if cpu == this_cpu || on_cpu_until <= waker_at {
            return false;
        }
        if self.cfg.ttwu_queue
            && self.cfg.ttwu_queue_on_cpu
            && self.ttwu_queue_cond(p, cpu, this_cpu, true)
        {
            self.cpus[this_cpu].stats.counters.ttwu_on_cpu_queued += 1;
            self.ttwu_stat_remote(p, this_cpu, cpu);
            self.ttwu_queue_wakelist(p, cpu, this_cpu, 0);
            return true;
        }
        let spin_ns = self.on_cpu_spin_ns(this_cpu, cpu, waker_at, on_cpu_until);
        self.cpus[this_cpu].stats.counters.on_cpu_spins += 1;
        self.cpus[this_cpu].stats.counters.on_cpu_spin_ns += spin_ns;
        self.charge(this_cpu, spin_ns);
        false
    }

    /// How long a waker on `this_cpu` spins in `smp_cond_load_acquire(&p->on_cpu, !VAL)`
    /// when it starts at `waker_at` and `cpu` clears `p->on_cpu` at `on_cpu_until`. The
    /// line holding `p->on_cpu` lives in `cpu`'s cache: the first load misses to it (one
    /// cache-line transfer `t` at the pair's distance); the clearing store must invalidate
    /// the spinner's shared copy (another `t` before it is visible), and the spinner's
    /// next load misses again (`t`). So the spin ends at
    /// `max(waker_at + t, on_cpu_until + t) + t`: within an LLC this adds a few tens of ns
    /// to the remaining switch time, across a socket interconnect the interconnect's round
    /// trips. Not modelled: several wakers spinning on the same line (each store then
    /// invalidates every copy), and x86's `cpu_relax()` pacing of the polls.
    pub(crate) fn on_cpu_spin_ns(
        &self,
        this_cpu: usize,
        cpu: usize,
        waker_at: u64,
        on_cpu_until: u64,
    ) -> u64 {
        let t = self.cost.cacheline_ns(&self.machine, this_cpu, cpu);
        (waker_at + t).max(on_cpu_until + t) + t - waker_at
    }

    /// TTWU_QUEUE_DELAYED: queue a delayed-dequeue wakee to its own CPU's wake list
    /// (`WF_DELAYED` forces the queue unless that CPU is this one or not allowed); the dequeue
    /// completes and the CPU is chosen there ([`Engine::ttwu_delayed`]). False when the
    /// wakeup must be done here.
    fn ttwu_queue_delayed(&mut self, p: TaskId, this_cpu: usize) -> bool {
        let cpu = self.tasks[p.idx()].cpu;
        if !self.cfg.ttwu_queue || cpu == this_cpu || !self.tasks[p.idx()].cpus_allowed.test(cpu) {
            return false;
        }
        self.tasks[p.idx()].wake_delayed_from = Some(this_cpu);
        self.cpus[this_cpu].stats.counters.ttwu_delayed_queued += 1;
        self.ttwu_queue_wakelist(p, cpu, this_cpu, 0);
        true
    }

    /// `ttwu_delayed()` on `cpu`, from its wake list: complete the delayed dequeue (taking
    /// the task's runqueue lock if a balancer moved it meanwhile), select a CPU as the waker
    /// on `waker_cpu` would, then activate here or forward to the chosen CPU's wake list.
    fn ttwu_delayed(&mut self, cpu: usize, p: TaskId, waker_cpu: usize) {
        let task_cpu = self.tasks[p.idx()].cpu;
        if task_cpu != cpu {
            self.lock_remote_rq(cpu, task_cpu);
        }
        if self.policy.task_on_rq(p) {
            self.complete_delayed_dequeue(cpu, task_cpu, p);
        } else {
            self.tasks[p.idx()].on_rq = false;
        }
        let flags = WakeFlags {
            ttwu: true,
            ..WakeFlags::default()
        };
        let ctx = WakeCtx {
            this_cpu: waker_cpu,
            waker: None,
            flags,
        };
        let (dest, migrated) = self.select_wakeup_cpu(p, cpu, ctx);
        if dest == cpu {
            self.ttwu_do_activate(cpu, p, cpu, flags, migrated);
        } else {
            self.cpus[cpu].stats.counters.ttwu_delayed_forwarded += 1;
            self.ttwu_queue_wakelist(p, dest, cpu, self.act.cost_ns);
        }
    }

    /// `dequeue_task(DEQUEUE_SLEEP | DEQUEUE_DELAYED)` of `p` on `rq_cpu`, done by `this_cpu`:
    /// the task is off every runqueue afterwards.
    fn complete_delayed_dequeue(&mut self, this_cpu: usize, rq_cpu: usize, p: TaskId) {
        policy!(self.dequeue_delayed(rq_cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(this_cpu, rq_cpu, work);
        self.tasks[p.idx()].on_rq = false;
    }

    /// `ttwu_runnable()`: `p` is still queued (its dequeue was delayed): requeue it in place
    /// on its CPU, under that CPU's lock. No CPU selection, no migration.
    fn ttwu_runnable(&mut self, p: TaskId, this_cpu: usize, flags: WakeFlags) {
        let cpu = self.tasks[p.idx()].cpu;
        self.cpus[this_cpu].stats.counters.delayed_requeues += 1;
        self.lock_remote_rq(this_cpu, cpu);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Runnable;
        t.runnable_since_ns = self.clock.now();
        let flags_enq = EnqueueFlags {
            delayed: true,
            wakeup: true,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, flags_enq));
        self.charge_enqueue(this_cpu, cpu);
        self.trace_wakeup(this_cpu, p);
        if cpu == this_cpu {
            self.tasks[p.idx()].stats.counters.nr_wakeups_local += 1;
            self.cpus[this_cpu].stats.counters.ttwu_local += 1;
        } else {
            self.ttwu_stat_remote(p, this_cpu, cpu);
        }
        self.check_preempt(cpu, p, this_cpu, flags);
    }

    /// `ttwu_stat()` of a wakeup done on `this_cpu` that activates `p` on another CPU,
    /// `cpu`: the task's `nr_wakeups_remote` and the domain's `ttwu_wake_remote`.
    fn ttwu_stat_remote(&mut self, p: TaskId, this_cpu: usize, cpu: usize) {
        debug_assert_ne!(this_cpu, cpu);
        self.tasks[p.idx()].stats.counters.nr_wakeups_remote += 1;
        policy!(self.ttwu_wake_remote(this_cpu, cpu));
    }

    /// `sched_wakeup` (`ttwu_do_wakeup()`), on the CPU doing the activation.
    fn trace_wakeup(&mut self, this_cpu: usize, p: TaskId) {
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            rec.wakeup(
                self.clock.now(),
                this_cpu,
                curr,
                &self.tasks[p.idx()],
                false,
            );
        }
    }

    /// `ttwu_queue_cond()`: queue the wakeup of `p` to `cpu`'s wake list rather than take its
    /// runqueue lock? Cross-LLC wakeups always are (with TTWU_QUEUE_L2C, every wakeup to a
    /// CPU outside the waker's L2 / cluster); inside the LLC it depends on the release
    /// ([`TtwuQueueRule`]); `on_cpu` marks the `p->on_cpu` shortcut (`WF_ON_CPU`).
    fn ttwu_queue_cond(&self, p: TaskId, cpu: usize, this_cpu: usize, on_cpu: bool) -> bool {
        if !self.tasks[p.idx()].cpus_allowed.test(cpu) {
            return false;
        }
        if !self.cpus_share_wake_cache(cpu, this_cpu) {
            return true;
        }
        match self.cfg.ttwu_queue_rule {
            TtwuQueueRule::CrossLlcOnly => false,
            TtwuQueueRule::OnCpuNrRunningLe1 => on_cpu && self.policy.nr_running(cpu) <= 1,
            TtwuQueueRule::IdleTarget => {
                if cpu == this_cpu {
                    return false;
                }
                self.policy.nr_running(cpu) == 0 || self.cfg.ttwu_queue_default
            }
        }
    }

    /// The cache test of `ttwu_queue_cond()`: `cpus_share_cache()` (the LLC) in mainline;
    /// `cpus_share_l2c()` (the cluster mask, `topology_cluster_cpumask()`: the SMT siblings
    /// on x86 parts whose L2 is per core) with TTWU_QUEUE_L2C. A CPU shares both with itself.
    fn cpus_share_wake_cache(&self, cpu: usize, this_cpu: usize) -> bool {
        let (a, b) = (&self.machine.cpus[cpu], &self.machine.cpus[this_cpu]);
        if self.cfg.ttwu_queue_l2c {
            a.cluster == b.cluster
        } else {
            a.llc == b.llc
        }
    }

    /// `__ttwu_queue_wakelist()`: add `p` to `cpu`'s wake list; the first entry sends the IPI
    /// (or, for a polling idle CPU, just sets need_resched).
    /// `select_ns`: the `select_task_rq()` work the waker did for this wakeup (0 when it
    /// chose no CPU).
    fn ttwu_queue_wakelist(&mut self, p: TaskId, cpu: usize, this_cpu: usize, select_ns: u64) {
        self.tasks[p.idx()].state = TaskState::Waking;
        self.cpus[this_cpu].stats.counters.ttwu_queued += 1;
        let was_empty = self.cpus[cpu].wake_list.is_empty();
        if was_empty {
            let visible_at =
                self.clock.now() + self.ttwu_pending_publish_ns(this_cpu, cpu, select_ns);
            self.cpus[cpu].wake_list_visible_at_ns = visible_at;
            self.cpus[cpu].wake_list_published_by = this_cpu;
            if visible_at > self.clock.now() {
                self.unpublished_wake_lists.push((visible_at, cpu));
                self.wake_list_publish_next_ns = self.wake_list_publish_next_ns.min(visible_at);
            }
        }
        self.cpus[cpu].wake_list.push(p);
        self.policy.cpu_state_changed(cpu);
        if was_empty && !self.cpus[cpu].ipi_pending {
            self.cpus[cpu].ipi_pending = true;
            let (at, how) = self.send_ipi(this_cpu, cpu);
            self.clock.push(
                at,
                Event::WakeListIpi {
                    cpu: cpu_u32(cpu),
                    how,
                },
            );
        }
    }

    /// The wake-list entries visible by `now` become so for the policy too: each such CPU
    /// is reported changed (its cached idle counts are re-read), before any event at `now`.
    pub(super) fn publish_wake_lists(&mut self, now: u64) {
        let mut next = u64::MAX;
        let mut i = 0;
        while i < self.unpublished_wake_lists.len() {
            let (at, cpu) = self.unpublished_wake_lists[i];
            if at <= now {
                self.policy.cpu_state_changed(cpu);
                self.unpublished_wake_lists.swap_remove(i);
            } else {
                next = next.min(at);
                i += 1;
            }
        }
        self.wake_list_publish_next_ns = next;
    }

    /// How long after the wakeup's event other CPUs see `cpu`'s `ttwu_pending` set by a waker
    /// on `this_cpu` (the placement race, module docs): the waker's selection work, then one
    /// cache-line transfer of the store from the waker to the reader (taken at the
    /// waker-to-target distance; the readers are the target's neighbours in the scan).
    fn ttwu_pending_publish_ns(&self, this_cpu: usize, cpu: usize, select_ns: u64) -> u64 {
        select_ns + self.cost.cacheline_ns(&self.machine, this_cpu, cpu)
    }

    /// Sending an IPI from `from` to `to`: the sender pays `ipi_send_ns`; the handler runs
    /// after the delivery latency plus, when the target sits in an idle state, its exit
    /// latency. An idle target whose idle task polls needs no IPI (`set_nr_if_polling()`):
    /// in a polling state it reacts at once, in an MWAIT state after the state's exit
    /// latency. A CPU still doing kernel work before its idle loop (the switch, newly-idle
    /// balancing with interrupts off) is not polling: it gets an interrupt, handled once
    /// that work is done. Returns when the handler (or the idle loop) runs, and how.
    pub(super) fn send_ipi(&mut self, from: usize, to: usize) -> (u64, IpiWake) {
        let now = self.clock.now();
        let c = &self.cpus[to];
        let idle = c.in_idle_state(now);
        let exit = if idle { self.idle_exit_ns(to) } else { 0 };
        if idle && c.idle_polling {
            return (now, IpiWake::Polling);
        }
        if idle && c.idle_mwait {
            return (now + exit, IpiWake::Monitor);
        }
        self.charge(from, self.cost.ipi_send_ns);
        self.cpus[from].stats.counters.ipis_sent += 1;
        let latency = self.cost.ipi_latency(&self.machine, from, to) + exit;
        (now + latency, IpiWake::Interrupt { idle })
    }

    /// The receiving side of a request sent by [`Engine::send_ipi`]: an interrupt costs its
    /// handler; leaving a non-polling idle state counts an idle exit.
    pub(super) fn take_ipi(&mut self, cpu: usize, how: IpiWake) {
        match how {
            IpiWake::Polling => {}
            IpiWake::Monitor => self.cpus[cpu].stats.counters.idle_exits += 1,
            IpiWake::Interrupt { idle } => {
                self.cpus[cpu].stats.counters.ipis_received += 1;
                if idle {
                    self.cpus[cpu].stats.counters.idle_exits += 1;
                }
                self.charge_irq(cpu, self.cost.ipi_handle_ns);
            }
        }
    }

    /// `sched_ttwu_pending()`: activate everything on the wake list.
    pub(crate) fn handle_wake_list_ipi(&mut self, cpu: usize, how: IpiWake) {
        self.cpus[cpu].ipi_pending = false;
        self.take_ipi(cpu, how);
        let mut list = std::mem::take(&mut self.cpus[cpu].wake_list);
        self.policy.cpu_state_changed(cpu);
        for &p in &list {
            if let Some(waker_cpu) = self.tasks[p.idx()].wake_delayed_from.take() {
                self.ttwu_delayed(cpu, p, waker_cpu);
                continue;
            }
            // The wake list forgets WF_SYNC: only "migrated" survives (sched_remote_wakeup).
            let flags = WakeFlags {
                ttwu: true,
                ..WakeFlags::default()
            };
            let migrated = self.tasks[p.idx()].perf_migrated;
            self.ttwu_do_activate(cpu, p, cpu, flags, migrated);
        }
        list.clear();
        if self.cpus[cpu].wake_list.is_empty() {
            self.cpus[cpu].wake_list = list;
        }
        self.preempt_point(cpu);
    }

    /// Direct remote activation: the waker takes `cpu`'s runqueue lock, waiting if another
    /// remote activation holds it.
    fn lock_remote_rq(&mut self, this_cpu: usize, cpu: usize) {
        if cpu == this_cpu {
            return;
        }
        let base = self.cost.remote_lock_ns(&self.machine, this_cpu, cpu);
        let start = self.clock.now().max(self.cpus[this_cpu].busy_until_ns);
        let wait = self.cpus[cpu].rq_lock_free_at_ns.saturating_sub(start);
        self.cpus[cpu].rq_lock_free_at_ns = start + wait + self.cost.rq_lock_hold_ns;
        self.cpus[this_cpu].stats.counters.ttwu_remote_locked += 1;
        self.cpus[this_cpu].stats.counters.remote_lock_wait_ns += wait;
        self.charge(this_cpu, base + wait);
    }

    /// Charge `ns` of work done on `rq_cpu`'s runqueue under its lock to `this_cpu` (the CPU
    /// doing it): it also holds that lock for as long, so a remote activation that wants the
    /// lock meanwhile waits ([`Engine::lock_remote_rq`]).
    pub(crate) fn charge_under_rq_lock(&mut self, this_cpu: usize, rq_cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        let start = self.clock.now().max(self.cpus[this_cpu].busy_until_ns);
        let c = &mut self.cpus[rq_cpu];
        c.rq_lock_free_at_ns = c.rq_lock_free_at_ns.max(start) + ns;
        self.charge(this_cpu, ns);
    }

    /// The work of the `enqueue_task()` just made on `rq_cpu` by `this_cpu`:
    /// `enqueue_task_ns` plus what the policy did inside it (the fair dl_server's start),
    /// charged to `this_cpu` inside `rq_cpu`'s lock window.
    fn charge_enqueue(&mut self, this_cpu: usize, rq_cpu: usize) {
        let work = self.cost.enqueue_task_ns + self.policy.take_cost_ns();
        self.charge_under_rq_lock(this_cpu, rq_cpu, work);
    }

    /// `ttwu_do_activate()`: enqueue on `cpu`, update `avg_idle`, check preemption.
    fn ttwu_do_activate(
        &mut self,
        cpu: usize,
        p: TaskId,
        this_cpu: usize,
        flags: WakeFlags,
        migrated: bool,
    ) {
        {
            let t = &mut self.tasks[p.idx()];
            t.state = TaskState::Runnable;
            t.on_rq = true;
            t.runnable_since_ns = self.clock.now();
        }
        let enq = EnqueueFlags {
            wakeup: true,
            migrated,
            ..EnqueueFlags::default()
        };
        policy!(self.enqueue_task(cpu, p, enq));
        self.charge_enqueue(this_cpu, cpu);
        self.trace_wakeup(this_cpu, p);
        self.update_avg_idle(cpu);
        self.check_preempt(cpu, p, this_cpu, flags);
    }

    /// `rq->avg_idle` update in `ttwu_do_activate()`: a running average (1/8 weight) of idle
    /// durations, capped at twice the migration cost (`2 * rq->max_idle_balance_cost`, whose
    /// starting value is sysctl_sched_migration_cost).
    fn update_avg_idle(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        if c.curr.is_some() || c.idle_stamp_ns == 0 {
            return;
        }
        let sample = self.clock.now() - c.idle_stamp_ns;
        let avg = c.avg_idle_ns as i64;
        let next = avg + (sample as i64 - avg) / 8;
        // A negative average (not reachable: both terms are non-negative) would clamp to 0.
        c.avg_idle_ns = u64::try_from(next)
            .unwrap_or(0)
            .min(2 * self.cfg.migration_cost_ns);
        c.idle_stamp_ns = 0;
        let avg_idle_ns = c.avg_idle_ns;
        self.policy
            .avg_idle_updated(cpu, avg_idle_ns, self.clock.now());
    }

    /// `wakeup_preempt()` plus waking an idle CPU.
    fn check_preempt(&mut self, cpu: usize, p: TaskId, this_cpu: usize, flags: WakeFlags) {
        if self.cpus[cpu].curr.is_none() {
            self.resched_curr(cpu, this_cpu);
            return;
        }
        if self.cpus[cpu].curr == Some(p) {
            return;
        }
        if policy!(self.wakeup_preempt(cpu, p, flags)) {
            if self.cfg.preempt == crate::kconfig::sysctl::PreemptModel::Lazy
                && self.policy.wakeup_preempt_lazy(p)
            {
                self.cpus[cpu].need_resched_lazy = true;
            } else {
                self.resched_curr(cpu, this_cpu);
            }
        }
    }
}
