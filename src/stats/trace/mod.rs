//! Scheduling traces of a run, as the kernel's tracepoints would record them: `sched_switch`,
//! `sched_waking`, `sched_wakeup`, `sched_wakeup_new`, `sched_migrate_task` and
//! `sched_process_exit`, written as a Perfetto protobuf trace ([`perfetto`]) or as ftrace
//! text ([`ftrace`]), plus the per-task decision history of `--explain`
//! ([`crate::stats::explain`]).
//!
//! [`TraceRecorder`] is an engine [`Observer`]: the engine owns it as an
//! `Option<Box<dyn Observer>>` and calls it at its scheduling points
//! (`__schedule()`, `try_to_wake_up()`, `ttwu_do_activate()`, `wake_up_new_task()`,
//! `set_task_cpu()`, `do_exit()`); the recorder only reads, so it cannot influence a decision,
//! and when it is `None` each point costs one branch.
//!
//! Where each event is emitted mirrors the kernel: `sched_waking` on the waker's CPU with
//! `target_cpu` = the task's CPU before placement (`trace_sched_waking()` runs before
//! `select_task_rq()`); `sched_wakeup` on the CPU that activates the task (the waker for a
//! direct activation, the target for a wake-list IPI); `sched_wakeup_new` on the parent's
//! CPU; `sched_migrate_task` on the CPU that runs `set_task_cpu()`. Each event carries the
//! task current on its CPU (`FtraceEvent.pid`, the `TASK-PID` column).
//!
//! Approximations, each deliberate:
//! - Task pids are the task index + 1 ([`trace_pid`]), because pid 0 is the idle task
//!   (`swapper/N`); every task is its own process (tgid = pid), as in hackbench's process
//!   mode — the workload model has no thread groups.
//! - `prev_state` uses the encoding of kernels >= 4.14 (the trace's `SystemInfo` says
//!   release [`KERNEL_RELEASE`], so Perfetto decodes it that way): `S` (1) for a blocked
//!   task, `R+` (0x100, `TASK_REPORT_MAX`) for a preempted one, `R` (0) for a yield, `X`
//!   (0x10, `EXIT_DEAD`) for an exiting one. The kernel reports `R` (not `R+`) when a
//!   preemption is taken on return to user mode (`schedule()` in `exit_to_user_mode_loop`,
//!   not `SM_PREEMPT`); the model marks every preemption `R+` so that preemptions and yields
//!   stay distinguishable.
//! - Fork placement emits no `sched_migrate_task`: the kernel places a new task with
//!   `__set_task_cpu()`, which has no tracepoint; `sched_wakeup_new`'s `target_cpu` shows it.
//! - The migration reason, which no kernel tracepoint carries, is written as an ftrace
//!   `print` event in the atrace instant format (`I|pid|migrate <reason> <from>-><to>`),
//!   attributed to the migrated task so that Perfetto shows it as an instant on that task's
//!   thread track (and in the `slice` table).
//! - At the end of the run every CPU still running a task gets a final `sched_switch` to the
//!   idle task at the end time, so the last slice has an end (Perfetto leaves an unclosed
//!   slice with `dur = -1`), and per-CPU slice time adds up to the results' `busy_ns`.
//! - The trace covers the whole run, warm-up included (counters in the results cover only
//!   the measured interval).

pub mod ftrace;
pub mod ftrace_reader;
pub mod perfetto;
pub mod perfetto_reader;

use std::io::{self, Write};
use std::path::Path;

use crate::engine::observer::{MigrateEvent, Observer, PlacementEvent};
use crate::engine::{Engine, Task};
use crate::error::{InputError, InputResult};
use crate::sched::types::MigrationReason;
use crate::stats::explain::{ExplainLog, select_task};
use crate::stats::timeline::{Timeline, TimelineRecorder};

/// Kernel release written into the trace's `SystemInfo`, so that Perfetto's trace processor
/// decodes `prev_state` with the post-4.14 `TASK_REPORT` encoding (it assumes 4.4 otherwise).
pub const KERNEL_RELEASE: &str = "6.8.0-schedlab";

/// Nice 0 priority as the tracepoints print it (`p->prio`, 100 + 20).
pub const DEFAULT_PRIO: i32 = 120;

/// The pid a task has in traces: its index + 1 (pid 0 is the idle task).
pub fn trace_pid(task_index: usize) -> i32 {
    i32::try_from(task_index).expect("task index above i32::MAX: beyond the task limit") + 1
}

/// `comm` as the kernel stores it: at most 15 bytes (`TASK_COMM_LEN` - 1).
pub fn comm15(comm: &str) -> &str {
    let mut end = comm.len().min(15);
    while !comm.is_char_boundary(end) {
        end -= 1;
    }
    &comm[..end]
}

/// Which format a trace file gets, chosen by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// `.pftrace` / `.perfetto-trace`: Perfetto protobuf.
    Perfetto,
    /// `.txt` / `.ftrace`: ftrace text (`/sys/kernel/tracing/trace`).
    Ftrace,
}

impl TraceFormat {
    /// Extensions accepted by `--trace`, for error messages.
    pub const ACCEPTED: &'static str = ".pftrace or .perfetto-trace (Perfetto protobuf), \
                                        .txt or .ftrace (ftrace text)";

    pub fn from_path(path: &Path) -> Option<TraceFormat> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".pftrace") || name.ends_with(".perfetto-trace") {
            Some(TraceFormat::Perfetto)
        } else if name.ends_with(".txt") || name.ends_with(".ftrace") {
            Some(TraceFormat::Ftrace)
        } else {
            None
        }
    }
}

use crate::engine::observer::PrevState;

/// A task as a tracepoint sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who<'a> {
    pub pid: i32,
    pub comm: &'a str,
    pub prio: i32,
}

impl<'a> Who<'a> {
    pub fn task(t: &'a Task) -> Who<'a> {
        Who {
            pid: trace_pid(t.id.idx()),
            comm: comm15(&t.comm),
            prio: DEFAULT_PRIO + i32::from(t.nice),
        }
    }

    /// The idle task of a CPU, named as the kernel names it.
    pub fn idle(name: &'a str) -> Who<'a> {
        Who {
            pid: 0,
            comm: name,
            prio: DEFAULT_PRIO,
        }
    }
}

/// One tracepoint hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind<'a> {
    Switch {
        prev: Who<'a>,
        prev_state: PrevState,
        next: Who<'a>,
    },
    Waking {
        p: Who<'a>,
        target_cpu: usize,
    },
    Wakeup {
        p: Who<'a>,
        target_cpu: usize,
    },
    WakeupNew {
        p: Who<'a>,
        target_cpu: usize,
    },
    Migrate {
        p: Who<'a>,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    /// The reason annotation of a migration (an ftrace `print`, attributed to `p`).
    MigrateReason {
        p: Who<'a>,
        orig_cpu: usize,
        dest_cpu: usize,
        reason: MigrationReason,
    },
    Exit {
        p: Who<'a>,
    },
}

/// A tracepoint hit on `cpu` at `ts_ns`, with the task current there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event<'a> {
    pub ts_ns: u64,
    pub cpu: usize,
    pub curr: Who<'a>,
    pub kind: EventKind<'a>,
}

/// The text of the migration-reason annotation (an atrace instant event).
pub fn migrate_reason_buf(
    pid: i32,
    reason: MigrationReason,
    orig_cpu: usize,
    dest_cpu: usize,
) -> String {
    format!("I|{pid}|migrate {} {orig_cpu}->{dest_cpu}", reason.name())
}

/// A trace writer: the file header once, then events in time order.
pub(crate) enum Writer {
    Perfetto(perfetto_writer::PerfettoWriter),
    Ftrace(ftrace::FtraceWriter),
}

mod perfetto_writer;

impl Writer {
    fn new(
        format: TraceFormat,
        out: Box<dyn Write + Send>,
        nr_cpus: usize,
        threads: &[(i32, &str)],
    ) -> io::Result<Writer> {
        Ok(match format {
            TraceFormat::Perfetto => {
                Writer::Perfetto(perfetto_writer::PerfettoWriter::new(out, nr_cpus, threads)?)
            }
            TraceFormat::Ftrace => {
                Writer::Ftrace(ftrace::FtraceWriter::new(out, nr_cpus, threads)?)
            }
        })
    }

    fn event(&mut self, ev: &Event<'_>) -> io::Result<()> {
        match self {
            Writer::Perfetto(w) => w.event(ev),
            Writer::Ftrace(w) => w.event(ev),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        match self {
            Writer::Perfetto(w) => w.finish(),
            Writer::Ftrace(w) => w.finish(),
        }
    }
}

/// Write a whole trace of given events (in time order) for threads `(pid, comm)`: what the
/// recorder does during a run, for tools and tests that build events themselves.
pub fn write_trace(
    format: TraceFormat,
    out: Box<dyn Write + Send>,
    nr_cpus: usize,
    threads: &[(i32, &str)],
    events: &[Event<'_>],
) -> io::Result<()> {
    let mut w = Writer::new(format, out, nr_cpus, threads)?;
    for ev in events {
        w.event(ev)?;
    }
    w.finish()
}

/// Where the trace goes.
pub struct TraceSink {
    pub format: TraceFormat,
    pub out: Box<dyn Write + Send>,
    /// The file name, for error messages.
    pub label: String,
    /// The trace is written to a temporary file that becomes `label` only when the run
    /// completes ([`crate::output::Pending::commit`]); dropped uncommitted, it is removed.
    pub pending: Option<crate::output::Pending>,
}

impl TraceSink {
    /// Create the trace file `path` (as a temporary file next to it), its format chosen by
    /// the extension. Errors name the
    /// `--trace` option, the path and the accepted extensions.
    pub fn create(path: &Path) -> InputResult<TraceSink> {
        let label = path.display().to_string();
        let format = TraceFormat::from_path(path).ok_or_else(|| {
            InputError::with_key(
                "--trace",
                label.clone(),
                format!("unknown trace format; accepted: {}", TraceFormat::ACCEPTED),
            )
        })?;
        let (file, pending) = crate::output::Pending::create("--trace", path)?;
        Ok(TraceSink {
            format,
            out: Box::new(file),
            label,
            pending: Some(pending),
        })
    }
}

/// What to record in a run besides its statistics: a trace file and/or one task's decision
/// history (`--trace`, `--explain`).
#[derive(Default)]
pub struct Instruments {
    pub trace: Option<TraceSink>,
    /// `--explain TASK`: a pid (task index) or a comm.
    pub explain: Option<String>,
    /// Record the run's compact time series ([`crate::stats::timeline`], `--report`).
    pub timeline: bool,
}

impl Instruments {
    pub fn is_empty(&self) -> bool {
        self.trace.is_none() && self.explain.is_none() && !self.timeline
    }

    /// Attach a recorder to `engine` before it runs. The explained task is resolved here,
    /// against the run's tasks.
    pub fn attach(self, engine: &mut Engine) -> InputResult<()> {
        if self.is_empty() {
            return Ok(());
        }
        let explain = match &self.explain {
            Some(spec) => {
                let (task, note) = select_task(engine.tasks(), spec)
                    .map_err(|msg| InputError::with_key("--explain", spec.clone(), msg))?;
                let mut log = ExplainLog::new(task, engine.ping_pong().window_ns);
                log.note = note;
                Some(log)
            }
            None => None,
        };
        let label = self.trace.as_ref().map(|t| t.label.clone());
        let mut rec = TraceRecorder::new(engine.cpus().len(), self.trace, explain);
        if self.timeline {
            rec.timeline = Some(TimelineRecorder::new(engine.cpus().len()));
        }
        rec.start(engine.tasks(), engine.cpus().len());
        if let Some(label) = label {
            check_io(Some(&mut rec), &label)?;
        }
        engine.set_observer(Box::new(rec));
        Ok(())
    }
}

fn check_io(rec: Option<&mut TraceRecorder>, label: &str) -> InputResult<()> {
    if let Some(e) = rec.and_then(|r| r.error.take()) {
        return Err(InputError::with_key(
            "--trace",
            label.to_string(),
            format!("cannot write: {e}"),
        ));
    }
    Ok(())
}

/// Detach the recorder of a finished run: report a trace write error, and return the
/// `--explain` text (if a task was explained).
pub fn detach(engine: &mut Engine, trace_label: Option<&str>) -> InputResult<Option<String>> {
    detach_with_timeline(engine, trace_label).map(|(explanation, _)| explanation)
}

/// [`detach`], also returning the run's time series when one was recorded
/// ([`Instruments::timeline`]).
pub fn detach_with_timeline(
    engine: &mut Engine,
    trace_label: Option<&str>,
) -> InputResult<(Option<String>, Option<Timeline>)> {
    let Some(mut rec) = take_recorder(engine) else {
        return Ok((None, None));
    };
    let timeline = rec.finished_timeline.take();
    let (error, explain) = rec.into_parts();
    if let Some(e) = error {
        return Err(InputError::with_key(
            "--trace",
            trace_label.unwrap_or("trace").to_string(),
            format!("cannot write: {e}"),
        ));
    }
    Ok((
        explain.map(|log| crate::stats::explain::render(&log, engine)),
        timeline,
    ))
}

/// Detach the engine's observer after a run, as the [`TraceRecorder`] it is (`None` when no
/// recorder was attached).
pub fn take_recorder(engine: &mut Engine) -> Option<Box<TraceRecorder>> {
    engine.take_observer()?.into_any().downcast().ok()
}

/// The engine's observer: an optional trace writer and an optional `--explain` history.
pub struct TraceRecorder {
    writer: Option<Writer>,
    /// Pending output of `writer`, the first I/O error stops writing.
    error: Option<io::Error>,
    sink: Option<TraceSink>,
    explain: Option<ExplainLog>,
    /// `swapper/N` per CPU.
    idle_comms: Vec<String>,
    /// The time series being recorded (`--report`), and once the run finished, the series.
    timeline: Option<TimelineRecorder>,
    finished_timeline: Option<Timeline>,
}

impl TraceRecorder {
    /// A recorder for a machine with `nr_cpus` CPUs; the trace header is written by
    /// [`TraceRecorder::start`].
    pub fn new(nr_cpus: usize, sink: Option<TraceSink>, explain: Option<ExplainLog>) -> Self {
        TraceRecorder {
            writer: None,
            error: None,
            sink,
            explain,
            idle_comms: (0..nr_cpus).map(|c| format!("swapper/{c}")).collect(),
            timeline: None,
            finished_timeline: None,
        }
    }

    /// Whether anything is traced for task `p` beyond the global trace.
    fn explains(&self, p: &Task) -> bool {
        self.explain.as_ref().is_some_and(|e| e.task == p.id)
    }

    fn emit(&mut self, ev: &Event<'_>) {
        if let Some(w) = self.writer.as_mut()
            && let Err(e) = w.event(ev)
        {
            self.error = Some(e);
            self.writer = None;
        }
    }

    fn curr<'a>(idle_comms: &'a [String], cpu: usize, curr: Option<&'a Task>) -> Who<'a> {
        curr.map_or_else(|| Who::idle(&idle_comms[cpu]), Who::task)
    }

    /// After the run: the first trace I/O error, if any, and the `--explain` history.
    pub fn into_parts(self) -> (Option<io::Error>, Option<ExplainLog>) {
        (self.error, self.explain)
    }
}

impl Observer for TraceRecorder {
    /// Write the header (system info, process tree) before the first event.
    fn start(&mut self, tasks: &[Task], nr_cpus: usize) {
        let Some(sink) = self.sink.take() else {
            return;
        };
        let threads: Vec<(i32, &str)> = tasks
            .iter()
            .map(|t| (trace_pid(t.id.idx()), t.comm.as_str()))
            .collect();
        match Writer::new(sink.format, sink.out, nr_cpus, &threads) {
            Ok(w) => self.writer = Some(w),
            Err(e) => self.error = Some(e),
        }
    }

    /// `sched_switch` on `cpu` (`None` = the idle task).
    fn switch(
        &mut self,
        ts_ns: u64,
        cpu: usize,
        prev: Option<&Task>,
        prev_state: PrevState,
        next: Option<&Task>,
    ) {
        if let Some(tl) = self.timeline.as_mut() {
            tl.switch(ts_ns, cpu, next.map(|t| t.id.0 as usize));
        }
        if self.writer.is_none() {
            return;
        }
        let idle = std::mem::take(&mut self.idle_comms);
        {
            let prev_who = Self::curr(&idle, cpu, prev);
            let ev = Event {
                ts_ns,
                cpu,
                curr: prev_who,
                kind: EventKind::Switch {
                    prev: prev_who,
                    prev_state: if prev.is_some() {
                        prev_state
                    } else {
                        PrevState::Runnable
                    },
                    next: Self::curr(&idle, cpu, next),
                },
            };
            self.emit(&ev);
        }
        self.idle_comms = idle;
    }

    /// `sched_waking`, on the waker's `cpu`, before placement.
    fn waking(&mut self, ts_ns: u64, cpu: usize, curr: Option<&Task>, p: &Task) {
        if self.writer.is_none() {
            return;
        }
        let idle = std::mem::take(&mut self.idle_comms);
        let ev = Event {
            ts_ns,
            cpu,
            curr: Self::curr(&idle, cpu, curr),
            kind: EventKind::Waking {
                p: Who::task(p),
                target_cpu: p.cpu,
            },
        };
        self.emit(&ev);
        self.idle_comms = idle;
    }

    /// `sched_wakeup` (or `sched_wakeup_new` when `new`), on the activating `cpu`.
    fn wakeup(&mut self, ts_ns: u64, cpu: usize, curr: Option<&Task>, p: &Task, new: bool) {
        if self.writer.is_none() {
            return;
        }
        let idle = std::mem::take(&mut self.idle_comms);
        let (who, target_cpu) = (Who::task(p), p.cpu);
        let ev = Event {
            ts_ns,
            cpu,
            curr: Self::curr(&idle, cpu, curr),
            kind: if new {
                EventKind::WakeupNew { p: who, target_cpu }
            } else {
                EventKind::Wakeup { p: who, target_cpu }
            },
        };
        self.emit(&ev);
        self.idle_comms = idle;
    }

    /// `set_task_cpu()` on `cpu`: `sched_migrate_task` plus the reason annotation, and the
    /// explained task's history.
    fn migrate(&mut self, ev: &MigrateEvent<'_>) {
        let &MigrateEvent {
            ts_ns,
            cpu,
            curr,
            p,
            from,
            to,
            reason,
        } = ev;
        if self.explains(p)
            && let Some(e) = self.explain.as_mut()
        {
            e.migrate(ts_ns, from, to, reason);
        }
        // The timeline's migration series are the results' (`migrations`): the workloads'
        // tasks, not the background ones.
        if let Some(tl) = self.timeline.as_mut()
            && !p.system
        {
            tl.migrate(ts_ns, p.id.0 as usize, from, to, reason);
        }
        if self.writer.is_none() {
            return;
        }
        let idle = std::mem::take(&mut self.idle_comms);
        let who = Who::task(p);
        if reason != MigrationReason::Fork {
            let ev = Event {
                ts_ns,
                cpu,
                curr: Self::curr(&idle, cpu, curr),
                kind: EventKind::Migrate {
                    p: who,
                    orig_cpu: from,
                    dest_cpu: to,
                },
            };
            self.emit(&ev);
        }
        let ev = Event {
            ts_ns,
            cpu,
            curr: who,
            kind: EventKind::MigrateReason {
                p: who,
                orig_cpu: from,
                dest_cpu: to,
                reason,
            },
        };
        self.emit(&ev);
        self.idle_comms = idle;
    }

    /// `sched_process_exit`, on the exiting task's CPU.
    fn exit(&mut self, ts_ns: u64, cpu: usize, p: &Task) {
        if self.explains(p)
            && let Some(e) = self.explain.as_mut()
        {
            e.exit(ts_ns, cpu);
        }
        let who = Who::task(p);
        self.emit(&Event {
            ts_ns,
            cpu,
            curr: who,
            kind: EventKind::Exit { p: who },
        });
    }

    /// A placement decision (`select_task_rq()`), for `--explain` only: `fork` for
    /// `wake_up_new_task()`, else a wakeup done on `this_cpu` by `waker` (`None` = an
    /// interrupt, e.g. a timer).
    fn placement(&mut self, ev: &PlacementEvent<'_>) {
        let &PlacementEvent {
            ts_ns,
            p,
            fork,
            this_cpu,
            prev_cpu,
            waker,
            sync,
            placement,
            cpu,
        } = ev;
        if !self.explains(p) {
            return;
        }
        if let Some(e) = self.explain.as_mut() {
            e.placement(
                ts_ns,
                fork,
                this_cpu,
                prev_cpu,
                waker.map(|w| w.id),
                sync,
                placement,
                cpu,
            );
        }
    }

    /// A wakeup of a task that was still queued (`ttwu_runnable()`), for `--explain` only.
    fn wakeup_queued(&mut self, ts_ns: u64, p: &Task, this_cpu: usize, waker: Option<&Task>) {
        if !self.explains(p) {
            return;
        }
        if let Some(e) = self.explain.as_mut() {
            e.wakeup_queued(ts_ns, this_cpu, p.cpu, waker.map(|w| w.id));
        }
    }

    /// End of the run: close every busy CPU's last slice with a switch to the idle task and
    /// flush the writer.
    fn finish(&mut self, ts_ns: u64, running: &[(usize, &Task)]) {
        for &(cpu, t) in running {
            self.switch(ts_ns, cpu, Some(t), PrevState::Runnable, None);
        }
        self.finished_timeline = self.timeline.take().map(|tl| tl.finish(ts_ns));
        if let Some(w) = self.writer.as_mut()
            && let Err(e) = w.finish()
        {
            self.error = Some(e);
        }
        self.writer = None;
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
