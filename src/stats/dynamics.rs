//! Scheduling dynamics of a traced run, read from its scheduler tracepoints
//! ([`crate::stats::trace::ftrace_reader`]): how often a workload's tasks block and are
//! preempted, where each wakeup puts the wakee relative to the waker's CPU and the wakee's
//! previous CPU, how long a woken task waits before it runs, and how long it runs before it
//! sleeps or is preempted. The same numbers from a real kernel's trace and from the model's
//! trace of the same command (`schedlab host-trace`) say *which* decision differs when a
//! count like context switches/s does not match.
//!
//! What it leaves out: tasks outside `tasks` (the workload's own; other processes only
//! appear as the CPU's current task), wakeups whose `sched_waking` precedes the trace, and
//! fork placement (no tracepoint names the parent's choice beyond `sched_wakeup_new`).
//! A `sched_switch` from a runnable task to the idle task at the trace's last timestamp is
//! the model's closing of a still-running slice at the end of a run, not a switch, and is
//! not counted.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::stats::trace::ftrace_reader::{SchedEvent, TraceRecord};

/// The dynamics of the tracked tasks over their span.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dynamics {
    /// Tracked tasks that appear in the trace.
    pub tasks: usize,
    pub cpus: usize,
    /// First to last event of a tracked task (summed over pooled runs).
    pub span_s: f64,
    /// Switches away from a tracked task that blocked.
    pub switches_voluntary: u64,
    /// Switches away from a tracked task still runnable (preempted, or yielded).
    pub switches_involuntary: u64,
    pub wakeups: Placements,
    /// `sched_migrate_task` of a tracked task between its `sched_waking` and `sched_wakeup`.
    /// Migrations here are tracepoint hits (`se.nr_migrations`, every `set_task_cpu()`);
    /// perf's `cpu-migrations` counts a task moved twice before it runs once.
    pub migrations_at_wakeup: u64,
    /// Every other migration of a tracked task (load balancing, newly-idle pulls, pushes).
    pub migrations_other: u64,
    /// From `sched_wakeup` to the task's next switch-in.
    pub wait_after_wakeup_us: Quantiles,
    /// From a switch-in to a switch-out where the task blocked.
    pub run_until_sleep_us: Quantiles,
    /// From a switch-in to a switch-out where the task was still runnable.
    pub run_until_preempted_us: Quantiles,
    /// Share of the CPUs' time over the span spent in the idle task.
    pub idle_pct: f64,
}

/// Where wakeups of tracked tasks put them. "Local": the waker runs on the wakee's previous
/// CPU (`sched_waking`'s CPU = its `target_cpu`); "remote": another CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Placements {
    pub local_to_waker: u64,
    pub local_elsewhere: u64,
    pub remote_to_previous: u64,
    pub remote_to_waker: u64,
    pub remote_elsewhere: u64,
}

impl Placements {
    pub fn total(&self) -> u64 {
        self.local_to_waker
            + self.local_elsewhere
            + self.remote_to_previous
            + self.remote_to_waker
            + self.remote_elsewhere
    }

    fn count(&mut self, waker_cpu: usize, previous_cpu: usize, target_cpu: usize) {
        let slot = match (waker_cpu == previous_cpu, target_cpu) {
            (true, t) if t == waker_cpu => &mut self.local_to_waker,
            (true, _) => &mut self.local_elsewhere,
            (false, t) if t == previous_cpu => &mut self.remote_to_previous,
            (false, t) if t == waker_cpu => &mut self.remote_to_waker,
            (false, _) => &mut self.remote_elsewhere,
        };
        *slot += 1;
    }
}

/// A distribution's size, percentiles (nearest rank) and mean, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Quantiles {
    pub n: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
}

impl Quantiles {
    pub fn of_ns(mut samples: Vec<u64>) -> Quantiles {
        if samples.is_empty() {
            return Quantiles::default();
        }
        samples.sort_unstable();
        let n = samples.len();
        let rank = |q: f64| *crate::stats::summary::nearest_rank(&samples, q) as f64 / 1e3;
        let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
        Quantiles {
            n: n as u64,
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            mean: sum as f64 / n as f64 / 1e3,
        }
    }
}

/// Per-task state of the replay of one trace.
#[derive(Default)]
struct Replay {
    /// Pending `sched_waking` of a tracked task: (waker's CPU, previous CPU).
    waking: BTreeMap<u32, (usize, usize)>,
    woken_at_ns: BTreeMap<u32, u64>,
    on_cpu_since_ns: BTreeMap<u32, u64>,
    seen: BTreeSet<u32>,
}

/// The distributions' samples, pooled over every trace of a [`Dynamics::of_runs`].
#[derive(Default)]
struct Samples {
    waits_ns: Vec<u64>,
    runs_to_sleep_ns: Vec<u64>,
    runs_to_preempt_ns: Vec<u64>,
}

impl Dynamics {
    /// The dynamics of `tasks` (pids) in `records` (in time order).
    pub fn of(records: &[TraceRecord], tasks: &BTreeSet<u32>) -> Dynamics {
        Dynamics::of_runs(&[(records, tasks)])
    }

    /// The dynamics of several traced runs of one command pooled: counts and spans added (so
    /// rates are over the runs' total time), distributions over every run's samples, idle
    /// time over every run's CPU time, `tasks` the most any run had.
    pub fn of_runs(runs: &[(&[TraceRecord], &BTreeSet<u32>)]) -> Dynamics {
        let cpus = runs
            .iter()
            .flat_map(|(records, _)| records.iter().map(|r| r.cpu + 1))
            .max()
            .unwrap_or(0);
        let mut d = Dynamics::empty(cpus, 0);
        let mut samples = Samples::default();
        let (mut idle_ns, mut cpu_ns) = (0.0, 0.0);
        for &(records, tasks) in runs {
            let (first_ns, last_ns) = tracked_span(records, tasks);
            let end_ns = records.last().map_or(0, |r| r.ts_ns);
            let mut s = Replay::default();
            for r in records {
                let closing = matches!(r.event,
                    SchedEvent::Switch { prev_runnable: true, next_pid: 0, .. } if r.ts_ns == end_ns);
                if !closing {
                    d.replay(&mut s, &mut samples, r, tasks);
                }
            }
            d.tasks = d.tasks.max(s.seen.len());
            let span_ns = last_ns.saturating_sub(first_ns) as f64;
            d.span_s += span_ns / 1e9;
            idle_ns += idle_pct(records, cpus, first_ns, last_ns) / 100.0 * span_ns * cpus as f64;
            cpu_ns += span_ns * cpus as f64;
        }
        d.wait_after_wakeup_us = Quantiles::of_ns(samples.waits_ns);
        d.run_until_sleep_us = Quantiles::of_ns(samples.runs_to_sleep_ns);
        d.run_until_preempted_us = Quantiles::of_ns(samples.runs_to_preempt_ns);
        d.idle_pct = if cpu_ns > 0.0 {
            100.0 * idle_ns / cpu_ns
        } else {
            0.0
        };
        d
    }

    fn empty(cpus: usize, span_ns: u64) -> Dynamics {
        Dynamics {
            tasks: 0,
            cpus,
            span_s: span_ns as f64 / 1e9,
            switches_voluntary: 0,
            switches_involuntary: 0,
            wakeups: Placements::default(),
            migrations_at_wakeup: 0,
            migrations_other: 0,
            wait_after_wakeup_us: Quantiles::default(),
            run_until_sleep_us: Quantiles::default(),
            run_until_preempted_us: Quantiles::default(),
            idle_pct: 0.0,
        }
    }

    /// One record's effect on the counts of tracked tasks.
    fn replay(
        &mut self,
        s: &mut Replay,
        pool: &mut Samples,
        r: &TraceRecord,
        tasks: &BTreeSet<u32>,
    ) {
        for pid in event_pids(&r.event) {
            if tasks.contains(&pid) {
                s.seen.insert(pid);
            }
        }
        match r.event {
            SchedEvent::Waking { pid, target_cpu } if tasks.contains(&pid) => {
                s.waking.insert(pid, (r.cpu, target_cpu));
            }
            SchedEvent::Wakeup { pid, target_cpu } if tasks.contains(&pid) => {
                if let Some((waker_cpu, previous_cpu)) = s.waking.remove(&pid) {
                    self.wakeups.count(waker_cpu, previous_cpu, target_cpu);
                }
                s.woken_at_ns.insert(pid, r.ts_ns);
            }
            SchedEvent::Migrate { pid, .. } if tasks.contains(&pid) => {
                if s.waking.contains_key(&pid) {
                    self.migrations_at_wakeup += 1;
                } else {
                    self.migrations_other += 1;
                }
            }
            SchedEvent::Switch {
                prev_pid,
                prev_runnable,
                next_pid,
            } => self.switch((s, pool), r.ts_ns, prev_pid, prev_runnable, next_pid, tasks),
            _ => {}
        }
    }

    fn switch(
        &mut self,
        (s, pool): (&mut Replay, &mut Samples),
        ts_ns: u64,
        prev_pid: u32,
        prev_runnable: bool,
        next_pid: u32,
        tasks: &BTreeSet<u32>,
    ) {
        if tasks.contains(&prev_pid) {
            let ran = s
                .on_cpu_since_ns
                .remove(&prev_pid)
                .map(|t| ts_ns.saturating_sub(t));
            if prev_runnable {
                self.switches_involuntary += 1;
                pool.runs_to_preempt_ns.extend(ran);
            } else {
                self.switches_voluntary += 1;
                pool.runs_to_sleep_ns.extend(ran);
            }
        }
        if tasks.contains(&next_pid) {
            s.on_cpu_since_ns.insert(next_pid, ts_ns);
            if let Some(woken) = s.woken_at_ns.remove(&next_pid) {
                pool.waits_ns.push(ts_ns.saturating_sub(woken));
            }
        }
    }
}

/// First and last timestamp of an event naming a tracked task.
fn tracked_span(records: &[TraceRecord], tasks: &BTreeSet<u32>) -> (u64, u64) {
    let involves = |r: &&TraceRecord| event_pids(&r.event).iter().any(|p| tasks.contains(p));
    let first = records.iter().find(involves).map_or(0, |r| r.ts_ns);
    let last = records.iter().rev().find(involves).map_or(0, |r| r.ts_ns);
    (first, last)
}

/// The pids an event names (the task it is about; both sides of a switch or a fork).
fn event_pids(e: &SchedEvent) -> Vec<u32> {
    match *e {
        SchedEvent::Switch {
            prev_pid, next_pid, ..
        } => vec![prev_pid, next_pid],
        SchedEvent::Waking { pid, .. }
        | SchedEvent::Wakeup { pid, .. }
        | SchedEvent::WakeupNew { pid, .. }
        | SchedEvent::Migrate { pid, .. } => vec![pid],
        SchedEvent::Fork {
            parent_pid,
            child_pid,
        } => vec![parent_pid, child_pid],
    }
}

/// Idle share of `cpus` CPUs' time in `[from_ns, to_ns]`: the idle task's slices (a CPU
/// whose first switch leaves the idle task was idle since the trace's first record).
fn idle_pct(records: &[TraceRecord], cpus: usize, from_ns: u64, to_ns: u64) -> f64 {
    if cpus == 0 || to_ns <= from_ns {
        return 0.0;
    }
    let start_ns = records.first().map_or(0, |r| r.ts_ns);
    let mut idle_since: Vec<Option<u64>> = vec![None; cpus];
    let mut seen = vec![false; cpus];
    let mut idle_ns = 0u64;
    let clipped = |a: u64, b: u64| b.min(to_ns).saturating_sub(a.max(from_ns));
    for r in records {
        let SchedEvent::Switch {
            prev_pid, next_pid, ..
        } = r.event
        else {
            continue;
        };
        if !seen[r.cpu] && prev_pid == 0 {
            idle_since[r.cpu] = Some(start_ns);
        }
        seen[r.cpu] = true;
        if prev_pid == 0
            && let Some(since) = idle_since[r.cpu].take()
        {
            idle_ns += clipped(since, r.ts_ns);
        }
        if next_pid == 0 {
            idle_since[r.cpu] = Some(r.ts_ns);
        }
    }
    for since in idle_since.into_iter().flatten() {
        idle_ns += clipped(since, to_ns);
    }
    100.0 * idle_ns as f64 / (cpus as f64 * (to_ns - from_ns) as f64)
}

/// The real and simulated dynamics side by side, with rates per second of each side's span
/// and the simulated/real ratio.
pub fn render_pair(real: &Dynamics, sim: &Dynamics) -> String {
    let mut out = format!(
        "{:<44} {:>12} {:>12} {:>7}\n",
        "", "real", "sim", "sim/real"
    );
    for ((name, r), (_, s)) in real.lines().into_iter().zip(sim.lines()) {
        let ratio = if r > 0.0 {
            format!("{:.2}", s / r)
        } else {
            "-".into()
        };
        out.push_str(&format!("{name:<44} {r:>12.1} {s:>12.1} {ratio:>7}\n"));
    }
    out
}

impl Dynamics {
    /// The rows of [`render_pair`] for one side: name and value.
    fn lines(&self) -> Vec<(String, f64)> {
        let rate = |n: u64| n as f64 / self.span_s.max(1e-9);
        let w = &self.wakeups;
        let share = |n: u64| 100.0 * n as f64 / w.total().max(1) as f64;
        let mut v: Vec<(String, f64)> = [
            ("span (s)", self.span_s),
            ("tasks", self.tasks as f64),
            ("idle (% of CPU time)", self.idle_pct),
            ("voluntary switches/s", rate(self.switches_voluntary)),
            ("involuntary switches/s", rate(self.switches_involuntary)),
            ("wakeups/s", rate(w.total())),
            (
                "  local: stays on the waker's CPU (%)",
                share(w.local_to_waker),
            ),
            ("  local: moved elsewhere (%)", share(w.local_elsewhere)),
            (
                "  remote: on its previous CPU (%)",
                share(w.remote_to_previous),
            ),
            (
                "  remote: pulled to the waker's CPU (%)",
                share(w.remote_to_waker),
            ),
            ("  remote: a third CPU (%)", share(w.remote_elsewhere)),
            ("migrations at wakeup/s", rate(self.migrations_at_wakeup)),
            ("other migrations/s", rate(self.migrations_other)),
        ]
        .map(|(name, value)| (name.to_string(), value))
        .into();
        for (name, q) in [
            ("wait after wakeup", &self.wait_after_wakeup_us),
            ("run until sleep", &self.run_until_sleep_us),
            ("run until preempted", &self.run_until_preempted_us),
        ] {
            v.push((format!("{name} p50 (us)"), q.p50));
            v.push((format!("{name} p90 (us)"), q.p90));
            v.push((format!("{name} mean (us)"), q.mean));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::trace::ftrace_reader::read_records;

    /// Two CPUs; task 10 wakes task 11 (previous CPU 1) from CPU 0 and pulls it over, 11
    /// preempts 10, runs 3 us, sleeps; 10 runs again; later 11 is woken remotely on CPU 1
    /// and waits 5 us there; at the end the model closes 10's slice.
    const TRACE: &str = "\
# tracer: nop
  <idle>-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
  a-10 [000] d..2. 1.000010: sched_waking: comm=b pid=11 prio=120 target_cpu=001
  a-10 [000] d..2. 1.000010: sched_migrate_task: comm=b pid=11 prio=120 orig_cpu=1 dest_cpu=0
  a-10 [000] d..2. 1.000010: sched_wakeup: comm=b pid=11 prio=120 target_cpu=000
  a-10 [000] d..2. 1.000012: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=b next_pid=11 next_prio=120
  b-11 [000] d..2. 1.000015: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=a next_pid=10 next_prio=120
  a-10 [000] d..2. 1.000020: sched_waking: comm=b pid=11 prio=120 target_cpu=000
  a-10 [000] d..2. 1.000020: sched_migrate_task: comm=b pid=11 prio=120 orig_cpu=0 dest_cpu=1
  <idle>-0 [001] d..2. 1.000021: sched_wakeup: comm=b pid=11 prio=120 target_cpu=001
  <idle>-0 [001] d..2. 1.000026: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120
  b-11 [001] d..2. 1.000030: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
  a-10 [000] d..2. 1.000040: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    #[test]
    fn a_small_trace_replays_to_its_counts() {
        let records = read_records(TRACE.as_bytes(), "t").unwrap();
        let d = Dynamics::of(&records, &BTreeSet::from([10, 11]));
        assert_eq!(d.tasks, 2);
        assert_eq!(d.cpus, 2);
        // The closing switch at the last timestamp is not a switch.
        assert_eq!((d.switches_voluntary, d.switches_involuntary), (2, 1));
        assert_eq!(
            d.wakeups,
            Placements {
                local_to_waker: 0,
                local_elsewhere: 1,
                remote_to_previous: 0,
                remote_to_waker: 1,
                remote_elsewhere: 0,
            }
        );
        assert_eq!((d.migrations_at_wakeup, d.migrations_other), (2, 0));
        // Waits: 2 us (woken at 10, on CPU at 12) and 5 us (21 -> 26).
        assert_eq!(d.wait_after_wakeup_us.n, 2);
        assert_eq!(d.wait_after_wakeup_us.p50, 2.0);
        assert_eq!(d.wait_after_wakeup_us.p99, 5.0);
        assert_eq!(d.wait_after_wakeup_us.mean, 3.5);
        // Runs until sleep: 11 for 3 us and 4 us; 10 preempted after 12 us.
        assert_eq!(d.run_until_sleep_us.n, 2);
        assert_eq!(d.run_until_sleep_us.mean, 3.5);
        assert_eq!(d.run_until_preempted_us.n, 1);
        assert_eq!(d.run_until_preempted_us.p50, 12.0);
        // Span 1.000000 .. 1.000040 s; CPU 1 idle from the start until 26 us and after 30:
        // 36 us of 80 us of CPU time.
        assert!((d.span_s - 40e-6).abs() < 1e-12);
        assert!((d.idle_pct - 45.0).abs() < 1e-9, "{}", d.idle_pct);
    }

    #[test]
    fn pooled_runs_add_counts_and_spans_and_pool_samples() {
        let records = read_records(TRACE.as_bytes(), "t").unwrap();
        let tasks = BTreeSet::from([10, 11]);
        let one = Dynamics::of(&records, &tasks);
        let two = Dynamics::of_runs(&[(&records, &tasks), (&records, &tasks)]);
        assert_eq!(two.switches_voluntary, 2 * one.switches_voluntary);
        assert_eq!(two.wakeups.total(), 2 * one.wakeups.total());
        assert!((two.span_s - 2.0 * one.span_s).abs() < 1e-12);
        assert_eq!(two.wait_after_wakeup_us.n, 2 * one.wait_after_wakeup_us.n);
        assert_eq!(two.wait_after_wakeup_us.mean, one.wait_after_wakeup_us.mean);
        assert!((two.idle_pct - one.idle_pct).abs() < 1e-9);
        assert_eq!(two.tasks, one.tasks);
    }

    #[test]
    fn untracked_tasks_are_not_counted() {
        let records = read_records(TRACE.as_bytes(), "t").unwrap();
        let d = Dynamics::of(&records, &BTreeSet::from([10]));
        assert_eq!(d.tasks, 1);
        assert_eq!(d.wakeups.total(), 0);
        assert_eq!(d.migrations_at_wakeup + d.migrations_other, 0);
        assert_eq!((d.switches_voluntary, d.switches_involuntary), (0, 1));
    }

    #[test]
    fn the_pair_is_rendered_row_by_row_with_its_ratio() {
        let records = read_records(TRACE.as_bytes(), "t").unwrap();
        let d = Dynamics::of(&records, &BTreeSet::from([10, 11]));
        let text = render_pair(&d, &d);
        let row = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
                .split_whitespace()
                .last()
                .unwrap()
                .to_string()
        };
        assert_eq!(row("wakeups/s"), "1.00");
        // No wakeup stayed remote on its previous CPU: no ratio.
        assert_eq!(row("  remote: on its previous CPU (%)"), "-");
        assert_eq!(text.lines().count(), 1 + 13 + 9);
    }

    #[test]
    fn quantiles_take_the_nearest_rank() {
        let q = Quantiles::of_ns((1..=100).map(|i| i * 1000).collect());
        assert_eq!((q.n, q.p50, q.p90, q.p99), (100, 50.0, 90.0, 99.0));
        assert_eq!(q.mean, 50.5);
        assert_eq!(Quantiles::of_ns(vec![]), Quantiles::default());
    }
}
