//! ftrace text export: the `/sys/kernel/tracing/trace` / `trace-cmd report` line format,
//! with each event printed by its kernel `TP_printk` format:
//!
//! ```text
//! # tracer: nop
//! #
//! #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
//! #              | |         |   |||||     |         |
//!           <idle>-0       [002] d..2.     0.000012345: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=hackbench next_pid=12 next_prio=120
//! ```
//!
//! Perfetto, trace-cmd-free tools such as LISA, and people read it. Differences from a real
//! trace, each deliberate: timestamps have nanosecond precision (9 decimals, as `trace-cmd
//! report -t` prints them), because simulated events are often less than a microsecond
//! apart; the flags column is a fixed `d..2.` for scheduler events (interrupts off, the
//! runqueue lock held) and `.....` for the reason annotations, since the model has no
//! interrupt or preemption-count state; the migration reason is a `tracing_mark_write` line
//! in the atrace instant format (see [`super`]).

use std::io::{self, BufWriter, Write};

use super::{Event, EventKind, migrate_reason_buf};

pub(crate) struct FtraceWriter {
    out: BufWriter<Box<dyn Write + Send>>,
}

/// The header `/sys/kernel/tracing/trace` starts with (the `nop` tracer, events only).
pub const HEADER: &str = "# tracer: nop\n\
#\n\
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
#              | |         |   |||||     |         |\n";

/// The last line of a whole trace: `schedlab report --trace` refuses a file without it (a
/// copy cut short would otherwise draw a shorter run without a word). A comment line, which
/// ftrace text readers skip.
pub const END_MARKER: &str = "# schedlab: end of trace\n";

impl FtraceWriter {
    pub fn new(
        out: Box<dyn Write + Send>,
        _nr_cpus: usize,
        _threads: &[(i32, &str)],
    ) -> io::Result<FtraceWriter> {
        let mut out = BufWriter::with_capacity(1 << 16, out);
        out.write_all(HEADER.as_bytes())?;
        Ok(FtraceWriter { out })
    }

    pub fn event(&mut self, ev: &Event<'_>) -> io::Result<()> {
        write_line(&mut self.out, ev)
    }

    pub fn finish(&mut self) -> io::Result<()> {
        self.out.write_all(END_MARKER.as_bytes())?;
        self.out.flush()
    }
}

/// Write one event as a trace line.
pub fn write_line(out: &mut impl Write, ev: &Event<'_>) -> io::Result<()> {
    let task = if ev.curr.pid == 0 {
        "<idle>"
    } else {
        ev.curr.comm
    };
    let flags = match ev.kind {
        EventKind::MigrateReason { .. } => ".....",
        _ => "d..2.",
    };
    write!(
        out,
        "{task:>16}-{pid:<7} [{cpu:03}] {flags} {secs:5}.{frac:09}: ",
        pid = ev.curr.pid,
        cpu = ev.cpu,
        secs = ev.ts_ns / 1_000_000_000,
        frac = ev.ts_ns % 1_000_000_000,
    )?;
    write_tp_printk(out, ev.kind)
}

/// The event's own text after the common prefix, as its kernel `TP_printk` format prints
/// it; separate from [`write_line`]'s prefix as one line per tracepoint.
fn write_tp_printk(out: &mut impl Write, kind: EventKind<'_>) -> io::Result<()> {
    match kind {
        EventKind::Switch {
            prev,
            prev_state,
            next,
        } => writeln!(
            out,
            "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> \
             next_comm={} next_pid={} next_prio={}",
            prev.comm,
            prev.pid,
            prev.prio,
            prev_state.letters(),
            next.comm,
            next.pid,
            next.prio
        ),
        EventKind::Waking { p, target_cpu } => writeln!(
            out,
            "sched_waking: comm={} pid={} prio={} target_cpu={target_cpu:03}",
            p.comm, p.pid, p.prio
        ),
        EventKind::Wakeup { p, target_cpu } => writeln!(
            out,
            "sched_wakeup: comm={} pid={} prio={} target_cpu={target_cpu:03}",
            p.comm, p.pid, p.prio
        ),
        EventKind::WakeupNew { p, target_cpu } => writeln!(
            out,
            "sched_wakeup_new: comm={} pid={} prio={} target_cpu={target_cpu:03}",
            p.comm, p.pid, p.prio
        ),
        EventKind::Migrate {
            p,
            orig_cpu,
            dest_cpu,
        } => writeln!(
            out,
            "sched_migrate_task: comm={} pid={} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
            p.comm, p.pid, p.prio
        ),
        EventKind::MigrateReason {
            p,
            orig_cpu,
            dest_cpu,
            reason,
        } => writeln!(
            out,
            "tracing_mark_write: {}",
            migrate_reason_buf(p.pid, reason, orig_cpu, dest_cpu)
        ),
        EventKind::Exit { p } => writeln!(
            out,
            "sched_process_exit: comm={} pid={} prio={}",
            p.comm, p.pid, p.prio
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PrevState, Who};
    use super::*;
    use crate::sched::types::MigrationReason;

    fn line(ev: &Event<'_>) -> String {
        let mut v = Vec::new();
        write_line(&mut v, ev).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn switch_line_has_the_kernel_layout() {
        let hb = Who {
            pid: 1234,
            comm: "hackbench",
            prio: 120,
        };
        let ev = Event {
            ts_ns: 5_075_958_079_000,
            cpu: 2,
            curr: Who::idle("swapper/2"),
            kind: EventKind::Switch {
                prev: Who::idle("swapper/2"),
                prev_state: PrevState::Runnable,
                next: hb,
            },
        };
        // The reference line of /sys/kernel/tracing/trace, with 9 decimals.
        assert_eq!(
            line(&ev),
            "          <idle>-0       [002] d..2.  5075.958079000: sched_switch: \
             prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> \
             next_comm=hackbench next_pid=1234 next_prio=120\n"
        );
        let ev = Event {
            ts_ns: 1_500,
            cpu: 3,
            curr: hb,
            kind: EventKind::Waking {
                p: Who { pid: 7, ..hb },
                target_cpu: 2,
            },
        };
        assert_eq!(
            line(&ev),
            "       hackbench-1234    [003] d..2.     0.000001500: sched_waking: \
             comm=hackbench pid=7 prio=120 target_cpu=002\n"
        );
    }

    #[test]
    fn preempted_and_reason_lines() {
        let a = Who {
            pid: 3,
            comm: "a",
            prio: 125,
        };
        let ev = Event {
            ts_ns: 10,
            cpu: 0,
            curr: a,
            kind: EventKind::Switch {
                prev: a,
                prev_state: PrevState::Preempted,
                next: Who::idle("swapper/0"),
            },
        };
        assert!(line(&ev).contains("prev_prio=125 prev_state=R+ ==> next_comm=swapper/0"));
        let ev = Event {
            ts_ns: 10,
            cpu: 0,
            curr: a,
            kind: EventKind::MigrateReason {
                p: a,
                orig_cpu: 4,
                dest_cpu: 0,
                reason: MigrationReason::NewidleBalance,
            },
        };
        assert!(line(&ev).ends_with("tracing_mark_write: I|3|migrate newidle_balance 4->0\n"));
    }
}
