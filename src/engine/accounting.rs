//! The run's accounting: migrations counted and logged (`set_task_cpu()`'s bookkeeping),
//! the end of the run, the warm-up reset, and the policy's invariant checks.

use super::observer::MigrateEvent;
use super::observer::{IntervalHook, Observer};
use super::pingpong::PingPong;
use super::{CpuCore, Engine, MigrationRecord, RunCounters, Snapshot, Task, control};
use crate::hist::Histogram;
use crate::policy::SchedPolicy;
use crate::sched::types::MigrationReason;
use crate::task::SemId;
use crate::task::{TaskId, TaskState};
use crate::topology::Machine;

/// Migrations kept in the log (the first ones of the measured interval; later ones are only
/// counted), so memory stays bounded on long runs.
pub const MIGRATION_LOG_MAX: usize = 100_000;

/// Invariant violations kept per run (the first ones; later ones are not recorded).
pub const INVARIANT_VIOLATIONS_MAX: usize = 1000;

fn reason_index(reason: MigrationReason) -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&r| r == reason)
        .expect("every reason is listed")
}

/// The engine's accounting part: the run's perf-stat counters, latency histograms, workload
/// metrics and op counts, snapshots, the migration log and the ping-pong detector. Its
/// fields are private: the other parts report through the methods below, and the run's
/// read-outs ([`Engine::counters`], ...) read through the accessors.
pub(crate) struct Accounting {
    counters: RunCounters,
    wakeup_latency: Histogram,
    /// Each run-queue wait, runnable to running (the distribution of schedstat's
    /// `run_delay` / `pcount`: one sample per switch-in).
    schedule_delay: Histogram,
    metrics: Vec<Histogram>,
    metric_names: Vec<String>,
    ops_done: u64,
    /// `ops_done` without warm-up resets.
    ops_total: u64,
    /// The workload of each task when several run together (empty: one workload).
    task_workload: Vec<u16>,
    /// `(ops_done, ops_total)` of each workload when several run together.
    workload_ops: Vec<(u64, u64)>,
    /// Tasks from this index on are system tasks (background kernel threads and daemons,
    /// [`Engine::set_system_tasks`]): not counted in the run's perf-stat counters, latency
    /// histograms or migration records, as `perf stat -- CMD` counts only the command.
    system_from: usize,
    snapshots: Vec<Snapshot>,
    migration_log: Vec<MigrationRecord>,
    migration_log_dropped: u64,
    /// Migration ping-pongs (every migration, not only the logged ones).
    ping_pong: PingPong,
}

impl Accounting {
    /// Empty books for a run with these workload metrics.
    pub(super) fn new(metric_names: Vec<String>, pingpong_window_ns: u64) -> Accounting {
        Accounting {
            counters: RunCounters::default(),
            wakeup_latency: Histogram::new(),
            schedule_delay: Histogram::new(),
            metrics: metric_names.iter().map(|_| Histogram::new()).collect(),
            metric_names,
            ops_done: 0,
            ops_total: 0,
            task_workload: Vec::new(),
            workload_ops: Vec::new(),
            system_from: usize::MAX,
            snapshots: Vec::new(),
            migration_log: Vec::new(),
            migration_log_dropped: 0,
            ping_pong: PingPong::new(pingpong_window_ns),
        }
    }

    /// Whether task index `task` belongs to the measured workloads (not a system task).
    pub(super) fn counts(&self, task: usize) -> bool {
        task < self.system_from
    }

    /// The first system task's index (`usize::MAX` without any).
    pub(super) fn system_from(&self) -> usize {
        self.system_from
    }

    /// Tasks from index `from` on are system tasks.
    pub(super) fn set_system_from(&mut self, from: usize) {
        self.system_from = from;
    }

    /// A context switch out of task index `task` (perf's `context-switches`).
    pub(super) fn context_switch(&mut self, task: usize) {
        if self.counts(task) {
            self.counters.context_switches += 1;
        }
    }

    /// Migrated task index `task` ran (perf's `cpu-migrations`).
    pub(super) fn cpu_migration(&mut self, task: usize) {
        if self.counts(task) {
            self.counters.cpu_migrations += 1;
        }
    }

    /// A wakeup of task index `task` (`try_to_wake_up()` that woke it).
    pub(super) fn wakeup(&mut self, task: usize) {
        if self.counts(task) {
            self.counters.wakeups += 1;
        }
    }

    pub(super) fn record_schedule_delay(&mut self, task: usize, ns: u64) {
        if self.counts(task) {
            self.schedule_delay.record(ns);
        }
    }

    pub(super) fn record_wakeup_latency(&mut self, task: usize, ns: u64) {
        if self.counts(task) {
            self.wakeup_latency.record(ns);
        }
    }

    /// Several workloads in one run: `of_task[i]` is the workload of task `i`.
    pub(super) fn set_task_workloads(&mut self, of_task: Vec<u16>) {
        let nr = of_task
            .iter()
            .map(|&w| usize::from(w) + 1)
            .max()
            .unwrap_or(0);
        self.workload_ops = vec![(0, 0); nr];
        self.task_workload = of_task;
    }

    /// The workload of task index `task` (0 when one workload runs).
    pub(super) fn workload_of(&self, task: usize) -> usize {
        self.task_workload.get(task).map_or(0, |&w| usize::from(w))
    }

    /// `Op::CountOp` of task index `task`.
    pub(super) fn count_op(&mut self, task: usize) {
        self.ops_done += 1;
        self.ops_total += 1;
        if let Some(&w) = self.task_workload.get(task) {
            let ops = &mut self.workload_ops[usize::from(w)];
            ops.0 += 1;
            ops.1 += 1;
        }
    }

    /// `(ops_done, ops_total)` of workload `w` (the run's when it has one workload).
    pub(super) fn workload_ops(&self, w: usize) -> (u64, u64) {
        match self.workload_ops.get(w) {
            Some(&ops) => ops,
            None => (self.ops_done, self.ops_total),
        }
    }

    /// `Op::Sample`: `ns` into workload metric `metric`.
    pub(super) fn sample(&mut self, metric: usize, ns: u64) {
        self.metrics[metric].record(ns);
    }

    /// Record a [`Snapshot`] at `time_ns` (with `full`: the metrics and these per-task
    /// waits); returns its index.
    pub(super) fn take_snapshot(
        &mut self,
        time_ns: u64,
        full: bool,
        task_waits: Vec<(u64, u64)>,
        workload: usize,
    ) -> usize {
        self.snapshots.push(Snapshot {
            time_ns,
            ops_total: self.workload_ops(workload).1,
            workload,
            metrics: if full {
                self.metrics.clone()
            } else {
                Vec::new()
            },
            task_waits,
        });
        self.snapshots.len() - 1
    }

    /// A migration (reason index `reason_i`): counted, fed to the ping-pong detector with
    /// the task's last move, logged while the log has room.
    pub(super) fn migration(
        &mut self,
        reason_i: usize,
        last_move: &mut Option<super::pingpong::LastMove>,
        record: MigrationRecord,
    ) {
        if !self.counts(record.task.idx()) {
            return;
        }
        self.counters.migrations_by_reason[reason_i] += 1;
        let MigrationRecord {
            time_ns,
            from,
            to,
            reason,
            ..
        } = record;
        self.ping_pong.record(last_move, time_ns, from, to, reason);
        if self.migration_log.len() >= MIGRATION_LOG_MAX {
            self.migration_log_dropped += 1;
            return;
        }
        self.migration_log.push(record);
    }

    /// End of warm-up: the measured interval's counters restart (`ops_total` and the
    /// snapshots keep going).
    pub(super) fn reset(&mut self) {
        self.counters = Default::default();
        self.wakeup_latency = Default::default();
        self.schedule_delay = Default::default();
        for h in &mut self.metrics {
            *h = Default::default();
        }
        self.ops_done = 0;
        for ops in &mut self.workload_ops {
            ops.0 = 0;
        }
        self.migration_log.clear();
        self.migration_log_dropped = 0;
        self.ping_pong.reset_counts();
    }

    pub(super) fn counters(&self) -> &RunCounters {
        &self.counters
    }

    pub(super) fn wakeup_latency(&self) -> &Histogram {
        &self.wakeup_latency
    }

    pub(super) fn schedule_delay(&self) -> &Histogram {
        &self.schedule_delay
    }

    pub(super) fn metrics(&self) -> impl Iterator<Item = (&str, &Histogram)> {
        self.metric_names
            .iter()
            .map(String::as_str)
            .zip(self.metrics.iter())
    }

    pub(super) fn ops_done(&self) -> u64 {
        self.ops_done
    }

    pub(super) fn ops_total(&self) -> u64 {
        self.ops_total
    }

    pub(super) fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
    }

    pub(super) fn migration_log(&self) -> &[MigrationRecord] {
        &self.migration_log
    }

    pub(super) fn ping_pong(&self) -> &PingPong {
        &self.ping_pong
    }
}

impl Engine {
    /// Bookkeeping of `set_task_cpu()`, done on `this_cpu`: counters, perf's migrated flag,
    /// the ping-pong detector, the trace, the log.
    ///
    /// A fork placement is logged and counted by reason (`fork`) like a move, but since v4.7
    /// it is not a `set_task_cpu()`: `wake_up_new_task()` places the child with
    /// `__set_task_cpu()`, so the kernel counts it neither in `se.nr_migrations` nor as
    /// perf's `cpu-migrations` (`perf_event_task_migrate()`), and neither does the model
    /// (`EngineConfig::fork_counts_as_migration` for older kernels).
    pub(crate) fn count_migration(
        &mut self,
        this_cpu: usize,
        p: TaskId,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) {
        let i = reason_index(reason);
        let t = &mut self.tasks[p.idx()];
        t.stats.migrations_by_reason[i] += 1;
        if reason != MigrationReason::Fork || self.cfg.fork_counts_as_migration {
            t.stats.counters.nr_migrations += 1;
            t.perf_migrated = true;
        }
        let record = MigrationRecord {
            time_ns: self.clock.now(),
            task: p,
            from,
            to,
            reason,
        };
        self.acct.migration(i, &mut t.last_move, record);
        self.numa_record_move(p, from, to, reason);
        if let Some(rec) = self.observer.as_deref_mut() {
            rec.migrate(&MigrateEvent {
                ts_ns: self.clock.now(),
                cpu: this_cpu,
                curr: self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]),
                p: &self.tasks[p.idx()],
                from,
                to,
                reason,
            });
        }
    }

    // ----- end of run, warm-up, invariants -------------------------------------------------

    /// Close the books at the end: account running tasks and busy CPUs up to now.
    pub(crate) fn finish(&mut self) {
        let now = self.clock.now();
        self.end_ns = Some(now);
        for cpu in 0..self.cpus.len() {
            if let Some(p) = self.cpus[cpu].curr {
                let t = &mut self.tasks[p.idx()];
                t.stats.counters.sum_exec_runtime_ns += now - t.exec_start_ns;
                t.exec_start_ns = now;
                let c = &mut self.cpus[cpu];
                c.stats.counters.busy_ns += now - c.busy_since_ns;
                c.busy_since_ns = now;
            }
        }
        if let Some(rec) = self.observer.as_deref_mut() {
            let running: Vec<(usize, &super::Task)> = self
                .cpus
                .iter()
                .filter_map(|c| c.curr.map(|p| (c.cpu, &self.tasks[p.idx()])))
                .collect();
            rec.finish(now, &running);
        }
    }

    /// End of warm-up: statistics restart from now.
    pub(crate) fn reset_counters(&mut self) {
        self.numa_series_warmup();
        self.numa_reset_counters();
        let now = self.clock.now();
        self.stats_start_ns = now;
        self.acct.reset();
        for t in &mut self.tasks {
            t.stats = Default::default();
            t.exec_start_ns = now;
        }
        for c in &mut self.cpus {
            c.stats = Default::default();
            c.busy_since_ns = now;
        }
    }

    /// The invariants of ARCHITECTURE.md §6 that can be checked at any instant.
    pub(crate) fn check_invariants(&mut self) {
        for (i, t) in self.tasks.iter().enumerate() {
            let is_curr = self.cpus[t.cpu].curr == Some(t.id);
            let bad = match t.state {
                TaskState::Running => !is_curr,
                TaskState::Runnable => is_curr || !t.on_rq,
                // A delayed wakee may be moved by a balancer while on its old CPU's list.
                TaskState::Waking => !self.cpus.iter().any(|c| c.wake_list.contains(&t.id)),
                TaskState::Blocked | TaskState::Dead | TaskState::New => is_curr,
            };
            if bad {
                self.invariant_violations.push(format!(
                    "t={} task {i} ('{}') in state {:?} on CPU {} (curr {:?})",
                    self.clock.now(),
                    t.comm,
                    t.state,
                    t.cpu,
                    self.cpus[t.cpu].curr
                ));
            }
        }
        for c in &self.cpus {
            if let Some(p) = c.curr
                && self.tasks[p.idx()].state != TaskState::Running
            {
                self.invariant_violations.push(format!(
                    "t={} CPU {} runs task {} in state {:?}",
                    self.clock.now(),
                    c.cpu,
                    p.0,
                    self.tasks[p.idx()].state
                ));
            }
        }
    }
}

/// What a run exposes once it has run (or while it runs, for tests): the clock, the tasks
/// and CPUs, the counters, histograms and logs, and the policy's own report.
impl Engine {
    /// Simulated time now.
    pub fn now_ns(&self) -> u64 {
        self.clock.now()
    }

    pub fn events(&self) -> u64 {
        self.clock.events()
    }

    /// Of [`Self::events`], the popped entries that did nothing (superseded).
    pub fn superseded_events(&self) -> u64 {
        self.clock.superseded_events()
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// CPU time of every task (`sum_exec_runtime`) and busy time of every CPU, summed: the
    /// two sides of the accounting identity the tests check (every busy nanosecond is some
    /// task's run time).
    pub fn runtime_and_busy_ns(&self) -> (u64, u64) {
        let runtime = self
            .tasks
            .iter()
            .map(|t| t.stats.counters.sum_exec_runtime_ns);
        let busy = self.cpus.iter().map(|c| c.stats.counters.busy_ns);
        (runtime.sum(), busy.sum())
    }

    pub fn cpus(&self) -> &[CpuCore] {
        &self.cpus
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    pub fn counters(&self) -> &RunCounters {
        self.acct.counters()
    }

    pub fn wakeup_latency(&self) -> &Histogram {
        self.acct.wakeup_latency()
    }

    /// Each run-queue wait since the statistics started (one sample per switch-in).
    pub fn schedule_delay(&self) -> &Histogram {
        self.acct.schedule_delay()
    }

    /// Latency histograms of the workload's metrics, with their names.
    pub fn metrics(&self) -> impl Iterator<Item = (&str, &Histogram)> {
        self.acct.metrics()
    }

    /// Completed workload operations (`Op::CountOp`).
    pub fn ops_done(&self) -> u64 {
        self.acct.ops_done()
    }

    /// Every `Op::CountOp` since the start, warm-up included.
    pub fn ops_total(&self) -> u64 {
        self.acct.ops_total()
    }

    /// Several workloads in one run: `of_task[i]` is the workload of task `i` (every task
    /// has one). Set before [`Engine::run`]; operations (`Op::CountOp`) and snapshots are
    /// then also counted per workload ([`Engine::workload_ops`]).
    pub fn set_task_workloads(&mut self, of_task: Vec<u16>) {
        assert_eq!(of_task.len(), self.tasks.len(), "one workload per task");
        self.acct.set_task_workloads(of_task);
    }

    /// Tasks from index `from` of the plan on are system tasks: background kernel threads
    /// and daemons (the workload layer's `background` module) that run beside the
    /// workloads. They are scheduled like every task, but the run ends when the workloads'
    /// own tasks have exited, and perf-stat counters, latency histograms and the migration
    /// log count the workloads' tasks only. Set before [`Engine::run`].
    pub fn set_system_tasks(&mut self, from: usize) {
        assert!(
            from <= self.tasks.len(),
            "system tasks start inside the plan"
        );
        assert!(self.clock.now() == 0 && self.live_tasks == self.tasks.len());
        self.live_tasks = from;
        self.acct.set_system_from(from);
        for t in &mut self.tasks[from..] {
            t.system = true;
        }
    }

    /// The workloads' own tasks (every task but the system tasks), in plan order.
    pub fn workload_tasks(&self) -> &[Task] {
        &self.tasks[..self.first_system_task()]
    }

    /// The system tasks ([`Engine::set_system_tasks`]); empty without any.
    pub fn system_tasks(&self) -> &[Task] {
        &self.tasks[self.first_system_task()..]
    }

    /// The index of the first system task (the number of tasks without any).
    fn first_system_task(&self) -> usize {
        self.acct.system_from().min(self.tasks.len())
    }

    /// `(ops_done, ops_total)` of workload `w` ([`Engine::ops_done`], [`Engine::ops_total`]
    /// when the run has one workload).
    pub fn workload_ops(&self, w: usize) -> (u64, u64) {
        self.acct.workload_ops(w)
    }

    /// Snapshots taken by `Op::Snapshot`, in time order.
    pub fn snapshots(&self) -> &[Snapshot] {
        self.acct.snapshots()
    }

    /// Units currently held by semaphore `sem` (a per-task counter when only posted).
    pub fn sem_count(&self, sem: SemId) -> u64 {
        self.sems[sem as usize].count
    }

    /// Attach a stop/progress control before [`Engine::run`] (it only observes unless a stop
    /// is requested).
    pub fn set_control(&mut self, c: control::RunControl) {
        self.control = Some(c);
    }

    /// Whether a stop request (SIGINT/SIGTERM) cut the run short.
    pub fn interrupted(&self) -> bool {
        self.control
            .as_ref()
            .is_some_and(control::RunControl::stopped)
    }

    /// Whether an `Op::Stop` ended the run.
    pub fn stopped(&self) -> bool {
        self.stop_requested
    }

    pub fn migration_log(&self) -> &[MigrationRecord] {
        self.acct.migration_log()
    }

    /// Migration ping-pongs of the measured interval.
    pub fn ping_pong(&self) -> &PingPong {
        self.acct.ping_pong()
    }

    /// Attach an observer (a trace / `--explain` recorder) before [`Engine::run`]; the
    /// caller has called its [`Observer::start`]. It only observes: the run's decisions are
    /// the same with or without it.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        self.observer = Some(observer);
    }

    /// Attach a benchmark's interval output (e.g. schbench's periodic reports) before
    /// [`Engine::run`]; it is called at each snapshot a task program takes.
    pub fn set_interval_hook(&mut self, hook: Box<dyn IntervalHook>) {
        self.interval_hook = Some(hook);
    }

    /// Detach the observer after the run (for a recorder: its trace is complete and flushed).
    pub fn take_observer(&mut self) -> Option<Box<dyn Observer>> {
        self.observer.take()
    }

    /// The recorded invariant violations (the first
    /// [`invariants::VIOLATIONS_KEPT`]; see [`Engine::invariant_violations_dropped`]).
    ///
    /// [`invariants::VIOLATIONS_KEPT`]: super::invariants::VIOLATIONS_KEPT
    pub fn invariant_violations(&self) -> &[String] {
        self.invariant_violations.kept()
    }

    /// Violations beyond the kept ones (only counted, so memory stays bounded).
    pub fn invariant_violations_dropped(&self) -> u64 {
        self.invariant_violations.dropped()
    }

    /// `/proc/schedstat` version 17 text of the run so far (None for policies without
    /// schedstats).
    pub fn schedstat_text(&self) -> Option<String> {
        use crate::sched::types::RqSchedstat;
        let rq: Vec<RqSchedstat> = self
            .cpus
            .iter()
            .map(|c| RqSchedstat {
                yld_count: c.stats.yld_count,
                sched_count: c.stats.sched_count,
                sched_goidle: c.stats.sched_goidle,
                ttwu_count: c.stats.counters.ttwu_count,
                ttwu_local: c.stats.counters.ttwu_local,
                rq_cpu_time: c.stats.counters.busy_ns,
                run_delay: c.stats.run_delay_ns,
                pcount: c.stats.pcount,
            })
            .collect();
        let jiffies = self.clock.now() / (1_000_000_000 / self.cfg.hz as u64);
        self.policy.schedstat_text(&rq, jiffies)
    }

    pub fn policy(&self) -> &dyn SchedPolicy {
        self.policy.as_ref()
    }

    /// Start of the measured interval (end of warm-up).
    pub fn stats_start_ns(&self) -> u64 {
        self.stats_start_ns
    }

    /// When the run ended (all tasks exited, or the duration cap).
    pub fn end_ns(&self) -> u64 {
        self.end_ns.unwrap_or(self.clock.now())
    }

    /// Whether every task exited before the cap.
    pub fn all_exited(&self) -> bool {
        self.live_tasks == 0
    }
}
