//! The run's accounting: migrations counted and logged (`set_task_cpu()`'s bookkeeping),
//! the end of the run, the warm-up reset, and the policy's invariant checks.

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

impl Engine {
    /// Bookkeeping of `set_task_cpu()`, done on `this_cpu`: counters, perf's migrated flag,
    /// the ping-pong detector, the trace, the log.
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
        t.stats.nr_migrations += 1;
        t.stats.migrations_by_reason[i] += 1;
        t.perf_migrated = true;
        self.counters.migrations_by_reason[i] += 1;
        self.ping_pong
            .record(&mut t.last_move, self.now_ns, from, to, reason);
        self.numa_record_move(p, from, to, reason);
        if let Some(rec) = self.observer.as_deref_mut() {
            let curr = self.cpus[this_cpu].curr.map(|c| &self.tasks[c.idx()]);
            let t = &self.tasks[p.idx()];
            rec.migrate(self.now_ns, this_cpu, curr, t, from, to, reason);
        }
        if self.migration_log.len() >= MIGRATION_LOG_MAX {
            self.migration_log_dropped += 1;
            return;
        }
        self.migration_log.push(MigrationRecord {
            time_ns: self.now_ns,
            task: p,
            from,
            to,
            reason,
        });
    }

    // ----- end of run, warm-up, invariants -------------------------------------------------

    /// Close the books at the end: account running tasks and busy CPUs up to now.
    pub(crate) fn finish(&mut self) {
        let now = self.now_ns;
        self.end_ns = Some(now);
        for cpu in 0..self.cpus.len() {
            if let Some(p) = self.cpus[cpu].curr {
                let t = &mut self.tasks[p.idx()];
                t.stats.sum_exec_runtime_ns += now - t.exec_start_ns;
                t.exec_start_ns = now;
                let c = &mut self.cpus[cpu];
                c.stats.busy_ns += now - c.busy_since_ns;
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
        let now = self.now_ns;
        self.stats_start_ns = now;
        self.counters = Default::default();
        self.wakeup_latency = Default::default();
        self.schedule_delay = Default::default();
        for h in &mut self.metrics {
            *h = Default::default();
        }
        self.ops_done = 0;
        self.migration_log.clear();
        self.migration_log_dropped = 0;
        self.ping_pong.reset_counts();
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
                    self.now_ns, t.comm, t.state, t.cpu, self.cpus[t.cpu].curr
                ));
            }
        }
        for c in &self.cpus {
            if let Some(p) = c.curr
                && self.tasks[p.idx()].state != TaskState::Running
            {
                self.invariant_violations.push(format!(
                    "t={} CPU {} runs task {} in state {:?}",
                    self.now_ns,
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
        self.now_ns
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// Of [`Self::events`], the popped entries that did nothing (superseded).
    pub fn superseded_events(&self) -> u64 {
        self.superseded
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub fn cpus(&self) -> &[CpuCore] {
        &self.cpus
    }

    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    pub fn counters(&self) -> &RunCounters {
        &self.counters
    }

    pub fn wakeup_latency(&self) -> &Histogram {
        &self.wakeup_latency
    }

    /// Each run-queue wait since the statistics started (one sample per switch-in).
    pub fn schedule_delay(&self) -> &Histogram {
        &self.schedule_delay
    }

    /// Latency histograms of the workload's metrics, with their names.
    pub fn metrics(&self) -> impl Iterator<Item = (&str, &Histogram)> {
        self.metric_names
            .iter()
            .map(String::as_str)
            .zip(self.metrics.iter())
    }

    /// Completed workload operations (`Op::CountOp`).
    pub fn ops_done(&self) -> u64 {
        self.ops_done
    }

    /// Every `Op::CountOp` since the start, warm-up included.
    pub fn ops_total(&self) -> u64 {
        self.ops_total
    }

    /// Snapshots taken by `Op::Snapshot`, in time order.
    pub fn snapshots(&self) -> &[Snapshot] {
        &self.snapshots
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
        &self.migration_log
    }

    /// Migration ping-pongs of the measured interval.
    pub fn ping_pong(&self) -> &PingPong {
        &self.ping_pong
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
        use crate::sched::balance::schedstat::RqSchedstat;
        let rq: Vec<RqSchedstat> = self
            .cpus
            .iter()
            .map(|c| RqSchedstat {
                yld_count: c.stats.yld_count,
                sched_count: c.stats.sched_count,
                sched_goidle: c.stats.sched_goidle,
                ttwu_count: c.stats.ttwu_count,
                ttwu_local: c.stats.ttwu_local,
                rq_cpu_time: c.stats.busy_ns,
                run_delay: c.stats.run_delay_ns,
                pcount: c.stats.pcount,
            })
            .collect();
        let jiffies = self.now_ns / (1_000_000_000 / self.cfg.hz as u64);
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
        self.end_ns.unwrap_or(self.now_ns)
    }

    /// Whether every task exited before the cap.
    pub fn all_exited(&self) -> bool {
        self.live_tasks == 0
    }
}
