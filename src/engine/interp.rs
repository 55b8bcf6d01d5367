//! The task program interpreter: runs a task's ops (`Run`, semaphores, barriers, timers,
//! spin locks, affinity, fork, exit, ...) until it computes, blocks, yields or exits.

use super::{Engine, Event};
use crate::sched::types::{MigrationReason, WakeCtx, WakeFlags};
use crate::task::{Op, SemId, TaskId, TaskState};
use crate::units::{cpu_u32, ns_trunc};

/// Zero-time ops one task may run back to back before the engine declares a livelock.
const ZERO_TIME_OPS_MAX: u32 = 1_000_000;

/// `MAX_SLACK` of fs/select.c: the largest slack `select_estimate_accuracy()` gives (100 ms).
const SELECT_MAX_SLACK_NS: u64 = 100_000_000;
/// What the interpreter's loop in `run_ops` does after one op (returned by the op-family
/// helpers; the loop keeps every exit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on with the task's next op.
    Next,
    /// Go on with the task's next op; this one changed nothing the interpreter's
    /// preemption and kernel-work checks read (it woke no task, charged no kernel work,
    /// requested no reschedule), so they need not run again before the next op.
    Pure,
    /// The op may have woken a task: reschedule if that set `need_resched`, else go on.
    Resched,
    /// Reschedule now (`sched_yield()`).
    Schedule,
    /// The task blocks on this op (its wait or timer is already queued).
    Block,
    /// The task exits.
    Exit,
    /// The CPU's next event is already planned (the task computes, spins, or was moved).
    Planned,
}

impl Engine {
    // ----- the program interpreter ----------------------------------------------------------

    /// Run `cpu`'s current task's program until it computes, blocks or exits. The loop and
    /// its exits live here; each op family is interpreted by one helper returning a [`Step`].
    pub(super) fn run_ops(&mut self, cpu: usize) {
        let p = self.cpus[cpu].curr.expect("run_ops on a busy CPU");
        let mut steps = 0u32;
        // Whether the checks below must run before this op: false only after a `Pure`
        // op that followed a full check (the first op's lazy test is skipped, so a pure
        // first op does not count).
        let mut check = true;
        loop {
            if check {
                if steps > 0 && self.cpus[cpu].need_resched_lazy && !self.in_wake_walk(cpu) {
                    // Return to user space after a system call acts on
                    // TIF_NEED_RESCHED_LAZY (preempt=lazy): the task is preempted before
                    // its next action.
                    self.schedule(cpu);
                    return;
                }
                if self.cpus[cpu].busy_until_ns > self.clock.now() {
                    // Kernel work (a wakeup it just did, a switch) delays the next action.
                    self.plan_continue(cpu);
                    return;
                }
            } else {
                debug_assert!(
                    !self.cpus[cpu].need_resched_lazy
                        && self.cpus[cpu].busy_until_ns <= self.clock.now(),
                    "a Pure op changed the interpreter's checks"
                );
            }
            steps += 1;
            if steps > ZERO_TIME_OPS_MAX {
                self.stop_livelocked(cpu, p);
                return;
            }
            let t = &self.tasks[p.idx()];
            let op = self.ops[(t.op_base + t.pc) as usize];
            let step = self.exec_op(cpu, p, op);
            check = true;
            match step {
                Step::Pure => check = steps == 1,
                Step::Next => {}
                Step::Resched => {
                    if self.cpus[cpu].need_resched {
                        self.schedule(cpu);
                        return;
                    }
                }
                Step::Schedule => {
                    self.schedule(cpu);
                    return;
                }
                Step::Block => {
                    self.block(cpu, p);
                    return;
                }
                Step::Exit => {
                    self.exit_task(cpu, p);
                    return;
                }
                Step::Planned => return,
            }
        }
    }
    /// Interpret one op of `p` (on `cpu`). The frequent ops dispatch straight to their
    /// handler: one indirect jump per op instead of a family jump and then the family's own
    /// (the interpreter's jumps were most of hackbench's indirect-branch mispredicts, issue
    /// 14). Inlined into the loop of [`Self::run_ops`], as when it was written there.
    #[inline(always)]
    fn exec_op(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::Run { work_ns } => self.op_run(cpu, p, work_ns),
            Op::SpinWall { ns } => self.op_spin_wall(cpu, p, ns),
            Op::Down { sem } => self.op_down(p, sem),
            Op::Up { sem, sync } => self.op_up(cpu, p, sem, sync),
            Op::UpThreshold {
                sem,
                sync,
                min_count,
            } => self.op_up_threshold(cpu, p, sem, sync, min_count),
            Op::UpPage { sem, sync, page } => self.op_up_page(cpu, p, sem, sync, page),
            Op::WakeNext { sem, sync } => self.op_wake_next(cpu, p, sem, sync),
            Op::Loop { to, times, slot } => self.op_loop(p, to, times, slot),
            Op::CountOp => self.op_count(p),
            Op::Mark { slot } => self.op_mark(p, slot),
            Op::Sample { slot, metric } => self.op_sample(p, slot, metric),
            Op::RunExp { .. }
            | Op::Sleep { .. }
            | Op::SleepExp { .. }
            | Op::TimerStart { .. }
            | Op::TimerWait { .. }
            | Op::DutyStart { .. }
            | Op::DutyCall { .. } => self.op_time(cpu, p, op),
            Op::TryDown { .. }
            | Op::DownAll { .. }
            | Op::UpMany { .. }
            | Op::UpStamped { .. }
            | Op::Wake { .. }
            | Op::Barrier { .. } => self.op_sync(cpu, p, op),
            Op::Jump { .. } | Op::Snapshot { .. } => self.op_flow(p, op),
            Op::Yield
            | Op::SetNice { .. }
            | Op::SetAffinity { .. }
            | Op::Fork { .. }
            | Op::Exec => self.op_task(cpu, p, op),
            Op::SpinLock { .. }
            | Op::SpinUnlock { .. }
            | Op::PerCpuSpinLock { .. }
            | Op::PerCpuSpinUnlock => self.op_spin(cpu, p, op),
            Op::Exit => Step::Exit,
            Op::Stop => {
                self.stop_requested = true;
                Step::Exit
            }
        }
    }

    /// A task ran [`ZERO_TIME_OPS_MAX`] ops without computing or blocking: record the
    /// livelock and stop the task.
    fn stop_livelocked(&mut self, cpu: usize, p: TaskId) {
        let t = &self.tasks[p.idx()];
        self.invariant_violations.push(format!(
            "t={} task {} ('{}'): {ZERO_TIME_OPS_MAX} actions without computing or \
             blocking; task stopped",
            self.clock.now(),
            p.0,
            t.comm
        ));
        self.exit_task(cpu, p);
    }

    /// `Run`: compute `work_ns` (stretched by the run's noise).
    fn op_run(&mut self, cpu: usize, p: TaskId, work_ns: u64) -> Step {
        let work_ns = self.noise.run_work_ns(p.idx(), work_ns);
        self.start_run(cpu, p, work_ns);
        Step::Planned
    }

    /// `SpinWall`: spin until `ns` of wall time from now. The run ends at the deadline (or at
    /// once when the task first runs past it): [`Self::plan_continue`] plans it by the clock,
    /// not by work, so neither the CPU's speed nor a cache refill stretches it.
    fn op_spin_wall(&mut self, cpu: usize, p: TaskId, ns: u64) -> Step {
        let deadline = self.clock.now().saturating_add(ns);
        self.tasks[p.idx()].spin_deadline_ns = Some(deadline);
        self.start_run(cpu, p, 0);
        Step::Planned
    }

    /// `Down`: take a unit of `sem` or block on it.
    fn op_down(&mut self, p: TaskId, sem: SemId) -> Step {
        if self.sem_try_down(p, sem) {
            return Step::Pure;
        }
        self.sems[sem as usize].waiters.push_back(p);
        self.tasks[p.idx()].waited_on = Some(sem);
        Step::Block
    }

    /// `Up`: post a unit of `sem`, waking its first waiter.
    fn op_up(&mut self, cpu: usize, p: TaskId, sem: SemId, sync: bool) -> Step {
        self.tasks[p.idx()].pc += 1;
        self.sem_up(cpu, p, sem, sync);
        Step::Resched
    }

    /// `UpThreshold`: post a unit of `sem`; wake waiters only once `min_count` units are
    /// there (then as many as there are units).
    fn op_up_threshold(
        &mut self,
        cpu: usize,
        p: TaskId,
        sem: SemId,
        sync: bool,
        min_count: u32,
    ) -> Step {
        self.tasks[p.idx()].pc += 1;
        let s = &mut self.sems[sem as usize];
        s.count += 1;
        s.last_post_cpu = Some(cpu_u32(cpu));
        if s.count >= u64::from(min_count) {
            while self.sems[sem as usize].count > 0 {
                let s = &mut self.sems[sem as usize];
                let Some(w) = s.waiters.pop_front() else {
                    break;
                };
                s.count -= 1;
                self.tasks[w.idx()].pc += 1;
                self.take_handoff(w, sem, Some(cpu_u32(cpu)));
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
        }
        Step::Resched
    }

    /// `UpPage`: a pipe read's release of room (see [`Op::UpPage`]). Every `page`-th read,
    /// `page` units of room appear (the page is freed). Who is woken, from v5.5
    /// (`pipe_exclusive_waits`, `pipe_read()`'s end):
    /// - room left before the read: no writer waits for it, nobody is woken;
    /// - no room before the read (`was_full`), a waiter: wake the first one, without a unit
    ///   (it re-checks in its `Down`), whether or not this read completed a page; from v6.14
    ///   (`pipe_wake_on_free`) only if it did (the pipe is no longer full).
    ///
    /// Before v5.5: a read that freed a page wakes every waiter (each re-checks), one that
    /// freed none wakes nobody.
    fn op_up_page(&mut self, cpu: usize, p: TaskId, sem: SemId, sync: bool, page: u32) -> Step {
        debug_assert!(page > 0, "UpPage with an empty page");
        self.tasks[p.idx()].pc += 1;
        let exclusive = self.cfg.pipe_exclusive_waits;
        let s = &mut self.sems[sem as usize];
        let was_full = s.count == 0;
        s.last_post_cpu = Some(cpu_u32(cpu));
        s.partial += 1;
        let freed = s.partial >= u64::from(page);
        if freed {
            s.partial = 0;
            s.count += u64::from(page);
        }
        if exclusive {
            let wake = was_full && (freed || !self.cfg.pipe_wake_on_free);
            if wake && let Some(w) = s.waiters.pop_front() {
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
        } else if freed {
            // Each waiter re-checks when it runs, so none re-queues while this loop pops.
            while let Some(w) = self.sems[sem as usize].waiters.pop_front() {
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
        }
        Step::Resched
    }

    /// `WakeNext`: `pipe_write()`'s `wake_next_writer` (see [`Op::WakeNext`]).
    fn op_wake_next(&mut self, cpu: usize, p: TaskId, sem: SemId, sync: bool) -> Step {
        let t = &mut self.tasks[p.idx()];
        t.pc += 1;
        if !self.cfg.pipe_exclusive_waits || t.waited_on != Some(sem) {
            return Step::Pure;
        }
        t.waited_on = None;
        let s = &mut self.sems[sem as usize];
        if s.count == 0 {
            return Step::Pure;
        }
        match s.waiters.pop_front() {
            Some(w) => {
                self.try_to_wake_up(w, cpu, Some(p), sync);
                Step::Resched
            }
            None => Step::Pure,
        }
    }

    /// `Loop`: jump back to `to` until this op has been passed `times` times.
    fn op_loop(&mut self, p: TaskId, to: u32, times: u32, slot: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        let n = t.loop_counts[slot as usize] + 1;
        if n < times {
            t.loop_counts[slot as usize] = n;
            t.pc = to;
        } else {
            t.loop_counts[slot as usize] = 0;
            t.pc += 1;
        }
        Step::Pure
    }

    /// `CountOp`: one completed operation of the workload.
    fn op_count(&mut self, p: TaskId) -> Step {
        self.tasks[p.idx()].pc += 1;
        self.acct.count_op(p.idx());
        Step::Pure
    }

    /// `Mark`: record now in mark `slot`.
    fn op_mark(&mut self, p: TaskId, slot: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        t.marks_ns[slot as usize] = self.clock.now();
        t.pc += 1;
        Step::Pure
    }

    /// `Sample`: record now minus mark `slot` into workload metric `metric` (from the
    /// start of the measured interval on).
    fn op_sample(&mut self, p: TaskId, slot: u8, metric: u8) -> Step {
        let t = &mut self.tasks[p.idx()];
        let start = t.marks_ns[slot as usize];
        t.pc += 1;
        if start >= self.stats_start_ns {
            self.acct.sample(metric as usize, self.clock.now() - start);
        }
        Step::Pure
    }

    /// Sleep and timer ops other than `Run` (`RunExp`, `Sleep`, `SleepExp`, `TimerStart`, `TimerWait`,
    /// `DutyStart`, `DutyCall`) of task `p` on `cpu`.
    fn op_time(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::RunExp { mean_work_ns } => {
                let u = self.tasks[p.idx()].rng.next_f64();
                let work = ns_trunc(-(1.0 - u).ln() * mean_work_ns as f64);
                self.start_run(cpu, p, work.max(1));
                Step::Planned
            }
            Op::Sleep { ns } => {
                self.tasks[p.idx()].pc += 1;
                self.arm_sleep_timer(p, cpu, ns);
                Step::Block
            }
            Op::SleepExp { mean_ns } => {
                let t = &mut self.tasks[p.idx()];
                t.pc += 1;
                let u = t.rng.next_f64();
                let ns = ns_trunc(-(1.0 - u).ln() * mean_ns as f64);
                self.arm_sleep_timer(p, cpu, ns);
                Step::Block
            }
            Op::TimerStart { timer } => {
                self.tasks[p.idx()].pc += 1;
                let t = &mut self.timers[timer as usize];
                if t.is_none() {
                    *t = Some(self.clock.now());
                }
                Step::Next
            }
            Op::TimerWait {
                timer,
                period_ns,
                absolute,
            } => {
                self.tasks[p.idx()].pc += 1;
                let now = self.clock.now();
                let next = self.timers[timer as usize].unwrap_or(now) + period_ns;
                if now < next {
                    self.timers[timer as usize] = Some(next);
                    self.arm_timer_at(p, cpu, next);
                    return Step::Block;
                }
                self.timers[timer as usize] = Some(if absolute { next } else { now });
                Step::Next
            }
            Op::DutyStart { slice_ms } => {
                self.tasks[p.idx()].pc += 1;
                self.duty_slice_start(p, slice_ms);
                Step::Next
            }
            Op::DutyCall {
                load_pct,
                slice_ms,
                exit_to,
                stop_calls,
            } => self.duty_call(cpu, p, load_pct, slice_ms, exit_to, stop_calls),
            _ => unreachable!("op_time: {op:?}"),
        }
    }

    /// The less frequent semaphore, pipe-wakeup and barrier ops (`TryDown`, `DownAll`,
    /// `UpMany`, `UpStamped`, `Wake`, `Barrier`) of task `p` on `cpu`.
    fn op_sync(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::TryDown { sem, else_to } => {
                if !self.sem_try_down(p, sem) {
                    self.tasks[p.idx()].pc = else_to;
                }
                Step::Next
            }
            Op::DownAll { sem, into } => {
                self.tasks[p.idx()].pc += 1;
                let s = &mut self.sems[sem as usize];
                let n = std::mem::take(&mut s.count);
                let mut stamps = std::mem::take(&mut s.stamps);
                for _ in 0..n {
                    let stamp = stamps.pop_front();
                    self.post(cpu, p, into, false, stamp);
                }
                Step::Resched
            }
            Op::UpMany { sem, n, sync } => self.op_up_many(cpu, p, sem, n, sync),
            Op::UpStamped { sem, sync, slot } => {
                let t = &mut self.tasks[p.idx()];
                t.pc += 1;
                let at = t.marks_ns[slot as usize];
                self.post(cpu, p, sem, sync, Some((slot, at)));
                Step::Resched
            }
            Op::Wake { sem, all } => {
                self.tasks[p.idx()].pc += 1;
                while let Some(w) = self.sems[sem as usize].waiters.pop_front() {
                    self.tasks[w.idx()].pc += 1;
                    self.try_to_wake_up(w, cpu, Some(p), false);
                    if !all {
                        break;
                    }
                }
                Step::Resched
            }
            Op::Barrier { id, count } => {
                let b = &mut self.barriers[id as usize];
                if b.waiters.len() + 1 < count as usize {
                    b.waiters.push(p);
                    return Step::Block;
                }
                let waiters = std::mem::take(&mut b.waiters);
                self.tasks[p.idx()].pc += 1;
                for &w in &waiters {
                    self.tasks[w.idx()].pc += 1;
                    self.try_to_wake_up(w, cpu, Some(p), false);
                }
                Step::Resched
            }
            _ => unreachable!("op_sync: {op:?}"),
        }
    }

    /// `UpMany`: post `n` units of `sem`, waking a waiter with each while there are any.
    ///
    /// `__wake_up_common()` wakes the waiters one after the other, and each
    /// `try_to_wake_up()` takes its time on the waker's CPU; the kernel's later wakeups see
    /// the machine as the earlier ones left it some microseconds before (a CPU woken first
    /// may have run its wakee and gone idle again). So this op wakes one waiter per step and
    /// stays at the same program position until every unit is posted: the interpreter's
    /// loop waits out the work each wakeup charged before the next one. The waker holds the
    /// wait-queue lock with interrupts off for the whole walk, so no reschedule is acted on
    /// before the last wakeup ([`Step::Next`] until then). Posts that charge no work (no
    /// waiter left) go at once.
    fn op_up_many(&mut self, cpu: usize, p: TaskId, sem: u32, n: u32, sync: bool) -> Step {
        let mut left = match self.tasks[p.idx()].ups_left {
            0 => n,
            left => left,
        };
        while left > 0 {
            self.sem_up(cpu, p, sem, sync);
            left -= 1;
            if self.cpus[cpu].busy_until_ns > self.clock.now() {
                break;
            }
        }
        self.tasks[p.idx()].ups_left = left;
        if left > 0 {
            return Step::Next;
        }
        self.tasks[p.idx()].pc += 1;
        Step::Resched
    }

    /// Take one unit of semaphore `sem` for `p` if it has one (advancing `p` past the op and
    /// taking over the unit's time stamp); false when the count is zero.
    #[inline]
    fn sem_try_down(&mut self, p: TaskId, sem: u32) -> bool {
        let s = &mut self.sems[sem as usize];
        if s.count == 0 {
            return false;
        }
        s.count -= 1;
        let stamp = s.stamps.pop_front();
        let from = s.last_post_cpu;
        self.take_handoff(p, sem, from);
        let t = &mut self.tasks[p.idx()];
        if let Some((slot, at)) = stamp {
            t.marks_ns[slot as usize] = at;
        }
        t.pc += 1;
        true
    }

    /// The less frequent control-flow ops that take no time (`Jump`, `Snapshot`) of task `p`.
    fn op_flow(&mut self, p: TaskId, op: Op) -> Step {
        match op {
            Op::Jump { to } => self.tasks[p.idx()].pc = to,
            Op::Snapshot { full } => {
                self.tasks[p.idx()].pc += 1;
                self.take_snapshot(p, full);
            }
            _ => unreachable!("op_flow: {op:?}"),
        }
        Step::Next
    }

    /// Record a [`super::Snapshot`] of the run's counters (and, when `full`, its metrics and
    /// per-task waits) for a benchmark's interval report.
    fn take_snapshot(&mut self, p: TaskId, full: bool) {
        let task_waits = if full {
            self.tasks
                .iter()
                .map(|t| (t.stats.counters.wait_sum_ns, t.stats.counters.wait_count))
                .collect()
        } else {
            Vec::new()
        };
        let workload = self.acct.workload_of(p.idx());
        let index = (self.acct).take_snapshot(self.clock.now(), full, task_waits, workload);
        if let Some(hook) = self.interval_hook.as_deref_mut() {
            hook.snapshot(index, &self.acct.snapshots()[index]);
        }
    }

    /// Scheduler-facing task ops (`Yield`, `SetNice`, `SetAffinity`, `Fork`, `Exec`,
    /// `SpinLock`, `SpinUnlock`) of task `p` on `cpu`.
    fn op_task(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::Yield => {
                self.tasks[p.idx()].pc += 1;
                self.cpus[cpu].stats.yld_count += 1;
                policy!(self.yield_task(cpu, p));
                Step::Schedule
            }
            Op::SetNice { nice } => {
                self.tasks[p.idx()].pc += 1;
                self.tasks[p.idx()].nice = nice;
                policy!(self.set_nice(p, nice));
                Step::Next
            }
            Op::SetAffinity { mask } => {
                self.tasks[p.idx()].pc += 1;
                if self.sched_setaffinity(cpu, p, mask) {
                    return Step::Planned;
                }
                Step::Next
            }
            Op::Fork { task } => {
                self.tasks[p.idx()].pc += 1;
                let child = TaskId(task);
                if !self.tasks[child.idx()].forked {
                    self.tasks[child.idx()].cpu = cpu;
                    self.wake_up_new_task(child);
                }
                Step::Resched
            }
            Op::Exec => {
                self.tasks[p.idx()].pc += 1;
                if self.sched_exec(cpu, p) {
                    return Step::Planned;
                }
                Step::Next
            }
            _ => unreachable!("op_task: {op:?}"),
        }
    }

    /// `sched_exec()` at `execve()` of the running task `p`: `select_task_rq(WF_EXEC)` from
    /// its CPU (the fork/exec slow path where a domain has SD_BALANCE_EXEC); when that is
    /// another CPU, the migration stopper moves `p` there (true: `cpu` rescheduled).
    fn sched_exec(&mut self, cpu: usize, p: TaskId) -> bool {
        let ctx = WakeCtx {
            this_cpu: cpu,
            waker: None,
            flags: WakeFlags {
                exec: true,
                ..WakeFlags::default()
            },
        };
        let (_, dest) = self.select_task_rq(p, cpu, cpu, ctx);
        if dest == cpu || !self.machine.online.test(dest) {
            return false;
        }
        self.migration_cpu_stop(cpu, p, dest, MigrationReason::Exec);
        true
    }

    /// `taker` took a unit of `sem` posted from CPU `from`: it will read the lines the post
    /// left dirty, paid at its next `Run` by the distance to the CPU it runs on then (where
    /// it reads them; a wakee's CPU is not chosen yet when its unit is handed over).
    fn take_handoff(&mut self, taker: TaskId, sem: u32, from: Option<u32>) {
        let lines = self.sems[sem as usize].handoff_lines;
        let Some(from) = from.filter(|_| lines > 0) else {
            return;
        };
        let t = &mut self.tasks[taker.idx()];
        let pending = t.handoff.map_or(0, |(_, l)| l);
        t.handoff = Some((from, pending.saturating_add(lines)));
    }

    /// The hand-off lines `p` owes, read on `cpu` ([`crate::cost::CostModel::handoff_line_ns`]).
    fn handoff_ns(&mut self, cpu: usize, p: TaskId) -> u64 {
        match self.tasks[p.idx()].handoff.take() {
            Some((from, lines)) => {
                u64::from(lines) * self.cost.handoff_line_ns(&self.machine, from as usize, cpu)
            }
            None => 0,
        }
    }

    fn start_run(&mut self, cpu: usize, p: TaskId, work_ns: u64) {
        let handoff = self.handoff_ns(cpu, p);
        let t = &mut self.tasks[p.idx()];
        t.in_run = true;
        t.remaining_work = work_ns + t.refill_debt + handoff;
        t.refill_debt = 0;
        t.progress_mark_ns = self.clock.now();
        self.plan_continue(cpu);
    }

    /// CPU time `p` has consumed (`CLOCK_THREAD_CPUTIME_ID`), including its current run.
    fn task_cpu_time(&self, p: TaskId) -> u64 {
        let t = &self.tasks[p.idx()];
        let running = if t.state == TaskState::Running {
            self.clock.now() - t.exec_start_ns
        } else {
            0
        };
        t.stats.counters.sum_exec_runtime_ns + running
    }

    /// stress-ng's load-slice loop top: `t1_wall_clock`, `t1_cpu_clock`, and for
    /// `--cpu-load-slice` ≥ 0 the slice's CPU-time length (0: `stress_mwc16() / 131072` s).
    fn duty_slice_start(&mut self, p: TaskId, slice_ms: i16) {
        let now = self.clock.now();
        let cpu_time = self.task_cpu_time(p);
        let t = &mut self.tasks[p.idx()];
        t.duty.wall_start_ns = now;
        t.duty.cpu_start_ns = cpu_time;
        t.duty.slice_calls = 0;
        t.duty.slice_cpu_ns = match slice_ms {
            0 => (t.rng.next_u64() & 0xffff) * 1_000_000_000 / 131_072,
            ms if ms > 0 => u64::from(ms.unsigned_abs()) * 1_000_000,
            _ => 0,
        };
    }

    /// `Op::DutyCall`: one method call done; end the slice when its rule says so (sleep, or
    /// after the sleep check `stress_continue()` and start the next). Returns `Step::Block`
    /// when the task sleeps in select().
    fn duty_call(
        &mut self,
        cpu: usize,
        p: TaskId,
        load_pct: u8,
        slice_ms: i16,
        exit_to: u32,
        stop_calls: u64,
    ) -> Step {
        let now = self.clock.now();
        let cpu_time = self.task_cpu_time(p);
        let t = &mut self.tasks[p.idx()];
        if let Some((start, requested)) = t.duty.sleeping.take() {
            // Back from select(): bias = (t3 − t2) − delay.
            t.duty.bias_ns = (now - start) as i64 - requested;
        } else {
            t.duty.calls += 1;
            t.duty.slice_calls += 1;
            let busy_cpu = cpu_time.saturating_sub(t.duty.cpu_start_ns);
            let over = if slice_ms < 0 {
                t.duty.slice_calls >= u32::from(slice_ms.unsigned_abs())
            } else {
                busy_cpu >= t.duty.slice_cpu_ns
            };
            if !over {
                t.pc += 1;
                return Step::Next;
            }
            let busy_cpu = busy_cpu as i64;
            let busy_wall = (now - t.duty.wall_start_ns) as i64;
            let pct = i64::from(load_pct);
            let delay = busy_cpu * (100 - pct) / pct + (busy_cpu - busy_wall) - t.duty.bias_ns;
            if delay < 0 {
                t.duty.bias_ns = 0;
            } else {
                t.duty.sleeping = Some((now, delay));
                // select() takes a timeval (whole µs) and sleeps with the slack
                // select_estimate_accuracy() gives: delay/1000, at least timer_slack_ns.
                let sleep_ns = delay.unsigned_abs() / 1000 * 1000;
                let extra_slack = if self.tasks[p.idx()].policy.is_rt() {
                    0
                } else {
                    (sleep_ns / 1000)
                        .min(SELECT_MAX_SLACK_NS)
                        .saturating_sub(self.cfg.timer_slack_ns)
                };
                self.arm_timer_at(p, cpu, now + sleep_ns + extra_slack);
                return Step::Block;
            }
        }
        let t = &mut self.tasks[p.idx()];
        if stop_calls > 0 && t.duty.calls >= stop_calls {
            t.pc = exit_to;
        } else {
            t.pc += 1;
            self.duty_slice_start(p, slice_ms);
        }
        Step::Next
    }

    /// Post one unit of `sem`, optionally with a timestamp for the receiver's mark.
    fn post(&mut self, cpu: usize, p: TaskId, sem: u32, sync: bool, stamp: Option<(u8, u64)>) {
        let s = &mut self.sems[sem as usize];
        s.last_post_cpu = Some(cpu_u32(cpu));
        match s.waiters.pop_front() {
            Some(w) => {
                let t = &mut self.tasks[w.idx()];
                t.pc += 1;
                if let Some((slot, at)) = stamp {
                    t.marks_ns[slot as usize] = at;
                }
                self.take_handoff(w, sem, Some(cpu_u32(cpu)));
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
            None => {
                s.count += 1;
                if let Some(st) = stamp {
                    s.stamps.push_back(st);
                }
            }
        }
    }

    fn sem_up(&mut self, cpu: usize, p: TaskId, sem: u32, sync: bool) {
        let s = &mut self.sems[sem as usize];
        s.last_post_cpu = Some(cpu_u32(cpu));
        match s.waiters.pop_front() {
            Some(w) => {
                // The waiter's Down completes with this unit.
                self.tasks[w.idx()].pc += 1;
                self.take_handoff(w, sem, Some(cpu_u32(cpu)));
                self.try_to_wake_up(w, cpu, Some(p), sync);
            }
            None => s.count += 1,
        }
    }

    /// `p`'s armed hrtimer fired or is replaced: it no longer counts for its CPU's next
    /// timer event.
    pub(crate) fn timer_fired(&mut self, p: TaskId) {
        if self.tasks[p.idx()].timer_armed.take().is_some() {
            self.task_timers.disarm(p.idx());
        }
    }

    /// A relative sleep (`nanosleep`): `hrtimer_start_range_ns()` is paid by `cpu` before
    /// the task blocks, and the expiry counts from the call.
    fn arm_sleep_timer(&mut self, p: TaskId, cpu: usize, ns: u64) {
        self.arm_timer_at(p, cpu, self.clock.now() + ns);
    }

    /// Arm `p`'s hrtimer to expire at `at` (plus the timer slack: none for an RT task, as
    /// `hrtimer_nanosleep()` and `select_estimate_accuracy()` give them).
    fn arm_timer_at(&mut self, p: TaskId, cpu: usize, at: u64) {
        self.charge(cpu, self.cost.hrtimer_start_ns);
        self.timer_fired(p);
        let slack_ns = if self.tasks[p.idx()].policy.is_rt() {
            0
        } else {
            self.cfg.timer_slack_ns
        };
        let expires_ns = at + slack_ns + self.noise.timer_jitter_ns(p.idx());
        let t = &mut self.tasks[p.idx()];
        t.timer_gen = t.timer_gen.wrapping_add(1);
        let generation = t.timer_gen;
        t.timer_armed = Some((cpu_u32(cpu), expires_ns));
        self.task_timers.arm(cpu, p.idx(), expires_ns);
        self.clock.push(
            expires_ns,
            Event::Timer {
                task: p,
                cpu: cpu_u32(cpu),
                generation,
            },
        );
    }

    /// The current task blocks: dequeue (perhaps delayed) and reschedule.
    fn block(&mut self, cpu: usize, p: TaskId) {
        let dequeued = policy!(self.dequeue_sleep(cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(cpu, cpu, work);
        self.cpus[cpu].stats.counters.delayed_dequeues += u64::from(!dequeued);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Blocked;
        t.on_rq = !dequeued;
        self.schedule(cpu);
        // p->on_cpu is cleared by finish_task() once the switch away from p is over: after
        // the scheduler work charged to this CPU by the schedule() just done.
        self.tasks[p.idx()].on_cpu_until_ns = self.clock.now().max(self.cpus[cpu].busy_until_ns);
    }

    fn exit_task(&mut self, cpu: usize, p: TaskId) {
        if let Some(rec) = self.observer.as_deref_mut() {
            rec.exit(self.clock.now(), cpu, &self.tasks[p.idx()]);
        }
        policy!(self.dequeue_exit(cpu, p));
        let work = self.policy.take_cost_ns() + self.cost.dequeue_task_ns;
        self.charge_under_rq_lock(cpu, cpu, work);
        let t = &mut self.tasks[p.idx()];
        t.state = TaskState::Dead;
        t.on_rq = false;
        t.in_run = false;
        // A system task's exit does not bring the run's end nearer (none exits today).
        if self.acct.counts(p.idx()) {
            self.live_tasks -= 1;
        }
        self.schedule(cpu);
    }
}

/// A counting semaphore with a FIFO wait list.
#[derive(Debug, Clone, Default)]
pub(crate) struct Semaphore {
    pub count: u64,
    pub waiters: std::collections::VecDeque<TaskId>,
    /// Timestamps handed along with units posted by `Op::UpStamped` and not yet taken:
    /// (mark slot, time).
    pub stamps: std::collections::VecDeque<(u8, u64)>,
    /// Cache lines a post leaves dirty for the taker (`WorkloadPlan::sem_handoff_lines`).
    pub handoff_lines: u16,
    /// CPU of the latest post (none yet: the initial units are clean). Approximation: a
    /// unit taken later is charged as if the latest poster wrote it (units are not told
    /// apart by who posted them).
    pub last_post_cpu: Option<u32>,
    /// `Op::UpPage`: reads since the last page of room was released (below its `page`).
    pub partial: u64,
}

impl Semaphore {
    /// A semaphore holding `count` units, nobody waiting, whose posts leave
    /// `handoff_lines` cache lines for their taker.
    pub(super) fn new(count: u64, handoff_lines: u16) -> Semaphore {
        Semaphore {
            count,
            waiters: Default::default(),
            stamps: Default::default(),
            handoff_lines,
            last_post_cpu: None,
            partial: 0,
        }
    }
}

/// A barrier: releases everyone when `count` tasks have arrived.
#[derive(Debug, Clone, Default)]
pub(crate) struct Barrier {
    pub waiters: Vec<TaskId>,
}

/// A user-space spin lock: its holder and the tasks spinning on it, in arrival order.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpinLockState {
    pub owner: Option<TaskId>,
    pub spinners: std::collections::VecDeque<TaskId>,
}
