//! `schedlab run --explain TASK`: one task's scheduling decision history — every placement
//! (`wake_up_new_task()` / `try_to_wake_up()`: which CPU, which `select_task_rq()` path), every
//! migration with its reason and whether it reversed the previous one (a ping-pong, see
//! [`crate::engine::pingpong`]), then its `/proc/PID/sched` counters: switches, wakeups,
//! runtime, wait time.
//!
//! The task is chosen before the run and only its decisions are recorded, in a history
//! bounded at [`EXPLAIN_HISTORY_MAX`] entries (later ones are counted, not kept), so
//! explaining costs nothing for the other tasks and bounded memory on long runs. The counters
//! come from the task's statistics, which cover the measured interval (after warm-up); the
//! history covers the whole run.

use std::fmt::Write as _;

use crate::engine::pingpong::{LastMove, PingPong};
use crate::engine::{Engine, Task, TaskStats};
use crate::sched::types::{MigrationReason, Placement, PlacementPath};
use crate::stats::trace::trace_pid;
use crate::task::{TaskId, TaskState};
use crate::units::usize_from_u64;

/// Decisions kept for the explained task.
pub const EXPLAIN_HISTORY_MAX: usize = 10_000;

/// One decision about the explained task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// `wake_up_new_task()`: fork placement from the parent's CPU.
    Fork {
        parent_cpu: usize,
        cpu: usize,
        path: PlacementPath,
    },
    /// `try_to_wake_up()` of a dequeued task: placement by `select_task_rq()`.
    Wakeup {
        this_cpu: usize,
        prev_cpu: usize,
        cpu: usize,
        path: PlacementPath,
        waker: Option<TaskId>,
        sync: bool,
    },
    /// `ttwu_runnable()`: woken while still queued (delayed dequeue), no placement.
    WakeupQueued {
        this_cpu: usize,
        cpu: usize,
        waker: Option<TaskId>,
    },
    /// `set_task_cpu()` to another CPU.
    Migrate {
        from: usize,
        to: usize,
        reason: MigrationReason,
        /// The (first, second) mechanisms when this move reversed the previous one.
        ping_pong: Option<(MigrationReason, MigrationReason)>,
    },
    /// `do_exit()`.
    Exit { cpu: usize },
}

/// A decision and when it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub time_ns: u64,
    pub decision: Decision,
}

/// The explained task's history.
#[derive(Debug, Clone)]
pub struct ExplainLog {
    pub task: TaskId,
    pub entries: Vec<Entry>,
    /// Decisions after the first [`EXPLAIN_HISTORY_MAX`].
    pub dropped: u64,
    /// The task's own ping-pongs (whole run).
    pub ping_pong: PingPong,
    /// How the task was chosen, when that needs saying (an ambiguous name).
    pub note: Option<String>,
    last_move: Option<LastMove>,
}

impl ExplainLog {
    pub fn new(task: TaskId, pingpong_window_ns: u64) -> ExplainLog {
        ExplainLog {
            task,
            entries: Vec::new(),
            dropped: 0,
            ping_pong: PingPong::new(pingpong_window_ns),
            note: None,
            last_move: None,
        }
    }

    fn push(&mut self, time_ns: u64, decision: Decision) {
        if self.entries.len() >= EXPLAIN_HISTORY_MAX {
            self.dropped += 1;
        } else {
            self.entries.push(Entry { time_ns, decision });
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn placement(
        &mut self,
        time_ns: u64,
        fork: bool,
        this_cpu: usize,
        prev_cpu: usize,
        waker: Option<TaskId>,
        sync: bool,
        placement: Placement,
        cpu: usize,
    ) {
        let d = if fork {
            Decision::Fork {
                parent_cpu: this_cpu,
                cpu,
                path: placement.path,
            }
        } else {
            Decision::Wakeup {
                this_cpu,
                prev_cpu,
                cpu,
                path: placement.path,
                waker,
                sync,
            }
        };
        self.push(time_ns, d);
    }

    pub(crate) fn wakeup_queued(
        &mut self,
        time_ns: u64,
        this_cpu: usize,
        cpu: usize,
        waker: Option<TaskId>,
    ) {
        self.push(
            time_ns,
            Decision::WakeupQueued {
                this_cpu,
                cpu,
                waker,
            },
        );
    }

    pub(crate) fn migrate(
        &mut self,
        time_ns: u64,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) {
        let ping_pong = self
            .ping_pong
            .record(&mut self.last_move, time_ns, from, to, reason);
        self.push(
            time_ns,
            Decision::Migrate {
                from,
                to,
                reason,
                ping_pong,
            },
        );
    }

    pub(crate) fn exit(&mut self, time_ns: u64, cpu: usize) {
        self.push(time_ns, Decision::Exit { cpu });
    }
}

/// Resolve `--explain TASK`: a pid as the results JSON numbers tasks (`tasks[].pid`, the task
/// index), or a `comm` (the first task with that name). Returns the task and, when the name
/// was ambiguous, a note saying which one was taken. The error text lists what is accepted.
pub fn select_task(tasks: &[Task], spec: &str) -> Result<(TaskId, Option<String>), String> {
    let spec = spec.trim();
    if let Ok(pid) = spec.parse::<u64>() {
        return if usize_from_u64(pid) < tasks.len() {
            Ok((TaskId::from_index(usize_from_u64(pid)), None))
        } else {
            Err(format!(
                "no task with pid {pid}; accepted: a pid 0-{} (the results' tasks[].pid) or a \
                 task name",
                tasks.len().saturating_sub(1)
            ))
        };
    }
    let mut matches = tasks.iter().filter(|t| t.comm == spec);
    match matches.next() {
        Some(first) => {
            let others = matches.count();
            let note = (others > 0).then(|| {
                format!(
                    "{} tasks are named '{spec}'; explaining the first, pid {} (give a pid to \
                     pick another)",
                    others + 1,
                    first.id.0
                )
            });
            Ok((first.id, note))
        }
        None => {
            let mut names: Vec<&str> = tasks.iter().map(|t| t.comm.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            let shown: Vec<&str> = names.iter().take(12).copied().collect();
            Err(format!(
                "no task named '{spec}'; accepted: a pid 0-{} or one of the names {}{}",
                tasks.len().saturating_sub(1),
                shown.join(", "),
                if names.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                }
            ))
        }
    }
}

/// How a placement path is named in explanations (kernel function names).
pub fn path_name(path: PlacementPath) -> &'static str {
    match path {
        PlacementPath::Pinned => "pinned (one allowed CPU)",
        PlacementPath::SelectIdleSibling => "select_idle_sibling (fast path)",
        PlacementPath::FindIdlest => "sched_balance_find_dst_cpu (slow path)",
        PlacementPath::Other => "the policy's own select_task_rq",
    }
}

fn ms(ns: u64) -> String {
    format!("{}.{:06} ms", ns / 1_000_000, ns % 1_000_000)
}

fn who(engine: &Engine, t: Option<TaskId>) -> String {
    match t {
        Some(id) => format!("pid {} '{}'", id.0, engine.tasks()[id.idx()].comm),
        None => "an interrupt (timer)".to_string(),
    }
}

/// The explanation text of a finished run.
pub fn render(log: &ExplainLog, engine: &Engine) -> String {
    let t = &engine.tasks()[log.task.idx()];
    let s = &t.stats;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Explain pid {} '{}' (trace pid {}), nice {}, cpus_allowed {}:",
        t.id.0,
        t.comm,
        trace_pid(t.id.idx()),
        t.nice,
        t.cpus_allowed
    );
    if let Some(note) = &log.note {
        let _ = writeln!(out, "  ({note})");
    }
    decision_lines(log, engine, &mut out);
    migration_lines(log, s, &mut out);
    let _ = writeln!(
        out,
        "  switches: {} (voluntary {}, involuntary {})",
        s.counters.nr_switches,
        s.counters.nr_voluntary_switches,
        s.counters.nr_involuntary_switches
    );
    let _ = writeln!(
        out,
        "  wakeups: {} (local {}, remote {}, migrated {}, sync {})",
        s.counters.nr_wakeups,
        s.counters.nr_wakeups_local,
        s.counters.nr_wakeups_remote,
        s.counters.nr_wakeups_migrate,
        s.counters.nr_wakeups_sync
    );
    let avg = s
        .counters
        .wait_sum_ns
        .checked_div(s.counters.wait_count)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "  runtime: {}; wait: {} over {} waits (avg {})",
        ms(s.counters.sum_exec_runtime_ns),
        ms(s.counters.wait_sum_ns),
        s.counters.wait_count,
        ms(avg)
    );
    let state = match t.state {
        TaskState::Dead => "exited".to_string(),
        TaskState::New => "never forked".to_string(),
        other => format!("{other:?} on CPU {}", t.cpu).to_lowercase(),
    };
    numa_lines(engine, t.id, &mut out);
    let _ = writeln!(out, "  at the end: {state}");
    out
}

/// The decision history block: a count line, then one line per recorded decision; separate
/// as one printed block of [`render`].
fn decision_lines(log: &ExplainLog, engine: &Engine, out: &mut String) {
    let _ = writeln!(
        out,
        "  decisions ({}{}):",
        log.entries.len() as u64 + log.dropped,
        if log.dropped > 0 {
            format!(", the first {EXPLAIN_HISTORY_MAX} shown")
        } else {
            String::new()
        }
    );
    for e in &log.entries {
        let line = decision_line(engine, e.decision);
        let _ = writeln!(out, "  {:>16}  {line}", ms(e.time_ns));
    }
}

/// The migrations line (by reason) and the ping-pongs line (by CPU pair); separate as one
/// printed block of [`render`].
fn migration_lines(log: &ExplainLog, s: &TaskStats, out: &mut String) {
    let mut reasons = Vec::new();
    for (i, r) in MigrationReason::ALL.iter().enumerate() {
        if s.migrations_by_reason[i] > 0 {
            reasons.push(format!("{} {}", r.name(), s.migrations_by_reason[i]));
        }
    }
    // The moves by reason, fork placements included (nr_migrations leaves those out, as
    // the kernel's `se.nr_migrations` does).
    let moves: u64 = s.migrations_by_reason.iter().sum();
    let _ = writeln!(
        out,
        "  migrations: {}{}",
        moves,
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        }
    );
    let pairs: Vec<String> = log
        .ping_pong
        .pairs()
        .into_iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "  ping-pongs (window {} ms): {}{}",
        log.ping_pong.window_ns as f64 / 1e6,
        log.ping_pong.total,
        if pairs.is_empty() {
            String::new()
        } else {
            format!(" ({})", pairs.join(", "))
        }
    );
}

/// The task's NUMA balancing history (a task with a working set): its preferred node and
/// its process's pages per node at each preferred-node change, then the state at the end.
fn numa_lines(engine: &Engine, p: crate::task::TaskId, out: &mut String) {
    let (Some(n), Some(nb)) = (engine.numa(), engine.policy().numa_balancing()) else {
        return;
    };
    let Some(tm) = n.task_mem(p) else {
        return;
    };
    let pages = |g: &[u64]| -> Vec<u64> {
        g.iter()
            .map(|x| x * crate::memory::PAGES_PER_GROUP)
            .collect()
    };
    let tn = &nb.sched.state.tasks[p.idx()];
    let nid = |x: Option<usize>| x.map_or("none".to_string(), |v| v.to_string());
    let _ = writeln!(
        out,
        "  numa: balancing {}, preferred node {}, scan period {} ms, {} pages migrated by its faults",
        if nb.balancing() { "on" } else { "off" },
        nid(tn.preferred_nid),
        tn.numa_scan_period_ms,
        tn.numa_pages_migrated
    );
    for s in n.history.iter().filter(|s| s.task == p) {
        let _ = writeln!(
            out,
            "  {:>16}  numa     preferred node {}, mm pages per node {:?}",
            ms(s.time_ns),
            nid(s.preferred_nid),
            pages(&s.groups_per_node)
        );
    }
    let mm = &n.mms[tm.mm.0 as usize];
    let _ = writeln!(
        out,
        "  numa at the end: mm pages per node {:?}, faults per node {:?}",
        pages(&mm.groups_per_node),
        (0..mm.groups_per_node.len())
            .map(|nid| tn.task_faults(nid))
            .collect::<Vec<_>>()
    );
}

/// One line of the decision history: where the task went and which path chose it.
fn decision_line(engine: &Engine, decision: Decision) -> String {
    match decision {
        Decision::Fork {
            parent_cpu,
            cpu,
            path,
        } => format!(
            "fork     from CPU {parent_cpu} -> CPU {cpu} via {}",
            path_name(path)
        ),
        Decision::Wakeup {
            this_cpu,
            prev_cpu,
            cpu,
            path,
            waker,
            sync,
        } => format!(
            "wakeup   by {} on CPU {this_cpu}: prev CPU {prev_cpu} -> CPU {cpu} via {}{}",
            who(engine, waker),
            path_name(path),
            if sync { ", WF_SYNC" } else { "" }
        ),
        Decision::WakeupQueued {
            this_cpu,
            cpu,
            waker,
        } => format!(
            "wakeup   by {} on CPU {this_cpu}: still queued on CPU {cpu} (ttwu_runnable, no \
             placement)",
            who(engine, waker)
        ),
        Decision::Migrate {
            from,
            to,
            reason,
            ping_pong,
        } => format!(
            "migrate  CPU {from} -> CPU {to} by {}{}",
            reason.name(),
            match ping_pong {
                Some((a, b)) => format!(" (ping-pong: {}->{})", a.name(), b.name()),
                None => String::new(),
            }
        ),
        Decision::Exit { cpu } => format!("exit     on CPU {cpu}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_bounded_and_counts_ping_pongs() {
        let mut log = ExplainLog::new(TaskId(3), 10_000_000);
        log.migrate(100, 0, 4, MigrationReason::Wakeup);
        log.migrate(200, 4, 0, MigrationReason::LoadBalance);
        assert_eq!(log.ping_pong.total, 1);
        assert_eq!(
            log.entries[1].decision,
            Decision::Migrate {
                from: 4,
                to: 0,
                reason: MigrationReason::LoadBalance,
                ping_pong: Some((MigrationReason::Wakeup, MigrationReason::LoadBalance)),
            }
        );
        for i in 0..EXPLAIN_HISTORY_MAX as u64 {
            log.exit(300 + i, 1);
        }
        assert_eq!(log.entries.len(), EXPLAIN_HISTORY_MAX);
        assert_eq!(log.dropped, 2);
    }

    #[test]
    fn ms_has_nanosecond_digits() {
        assert_eq!(ms(1_234_567_891), "1234.567891 ms");
        assert_eq!(ms(5), "0.000005 ms");
    }
}
