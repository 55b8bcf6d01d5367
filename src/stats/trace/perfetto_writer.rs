//! The Perfetto trace file: a `SystemInfo` packet (kernel release, so `prev_state` decodes
//! with the modern encoding), a `ProcessTree` packet naming every task, then
//! `FtraceEventBundle` packets, one CPU each, appended whenever a CPU's buffer fills (like
//! traced's per-CPU ftrace readers) and at the end. Events within a bundle are in time order;
//! the trace processor sorts across bundles.

use std::io::{self, BufWriter, Write};

use super::perfetto::{Msg, TRACE_PACKET, ftrace, packet, process_tree, system_info};
use super::{Event, EventKind, KERNEL_RELEASE, Who, comm15, migrate_reason_buf, trace_pid};
use crate::engine::Task;

/// A CPU's pending events are written out as one bundle once they reach this size.
const BUNDLE_FLUSH_BYTES: usize = 64 * 1024;

/// `trusted_packet_sequence_id` of every packet: one writer, one sequence.
const SEQUENCE_ID: u64 = 1;

pub(crate) struct PerfettoWriter {
    out: BufWriter<Box<dyn Write + Send>>,
    /// Encoded `FtraceEventBundle.event` fields per CPU, not yet written.
    pending: Vec<Msg>,
    payload: Msg,
    event: Msg,
    bundle: Msg,
    packet: Msg,
    frame: Msg,
}

impl PerfettoWriter {
    pub fn new(
        out: Box<dyn Write + Send>,
        nr_cpus: usize,
        tasks: &[Task],
    ) -> io::Result<PerfettoWriter> {
        let mut w = PerfettoWriter {
            out: BufWriter::with_capacity(1 << 16, out),
            pending: vec![Msg::new(); nr_cpus],
            payload: Msg::new(),
            event: Msg::new(),
            bundle: Msg::new(),
            packet: Msg::new(),
            frame: Msg::new(),
        };
        // SystemInfo { utsname { sysname, version, release, machine }, num_cpus }.
        let mut uts = Msg::new();
        uts.string(system_info::UTS_SYSNAME, "Linux")
            .string(system_info::UTS_VERSION, "#1 SMP PREEMPT schedlab")
            .string(system_info::UTS_RELEASE, KERNEL_RELEASE)
            .string(system_info::UTS_MACHINE, "x86_64");
        let mut info = Msg::new();
        info.message(system_info::UTSNAME, &uts)
            .uint(system_info::NUM_CPUS, nr_cpus as u64);
        let mut p = Msg::new();
        p.message(packet::SYSTEM_INFO, &info)
            .uint(packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE_ID);
        w.write_packet_msg(&p)?;
        // ProcessTree: every task is a process with one thread.
        let mut tree = Msg::new();
        let mut item = Msg::new();
        for t in tasks {
            let pid = trace_pid(t.id.idx()) as i64;
            item.clear();
            item.int(process_tree::PROCESS_PID, pid)
                .int(process_tree::PROCESS_PPID, 0)
                .string(process_tree::PROCESS_CMDLINE, &t.comm);
            tree.message(process_tree::PROCESSES, &item);
        }
        for t in tasks {
            let pid = trace_pid(t.id.idx()) as i64;
            item.clear();
            item.int(process_tree::THREAD_TID, pid)
                .string(process_tree::THREAD_NAME, comm15(&t.comm))
                .int(process_tree::THREAD_TGID, pid);
            tree.message(process_tree::THREADS, &item);
        }
        let mut p = Msg::new();
        p.uint(packet::TIMESTAMP, 0)
            .message(packet::PROCESS_TREE, &tree)
            .uint(packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE_ID);
        w.write_packet_msg(&p)?;
        Ok(w)
    }

    fn write_packet_msg(&mut self, p: &Msg) -> io::Result<()> {
        self.frame.clear();
        self.frame.message(TRACE_PACKET, p);
        self.out.write_all(&self.frame.buf)
    }

    fn wake_payload(m: &mut Msg, p: &Who<'_>, target_cpu: usize) {
        m.string(ftrace::WAKE_COMM, p.comm)
            .int(ftrace::WAKE_PID, p.pid.into())
            .int(ftrace::WAKE_PRIO, p.prio.into())
            .int(ftrace::WAKE_SUCCESS, 1)
            .int(ftrace::WAKE_TARGET_CPU, target_cpu as i64);
    }

    pub fn event(&mut self, ev: &Event<'_>) -> io::Result<()> {
        let m = &mut self.payload;
        m.clear();
        let field = match ev.kind {
            EventKind::Switch {
                prev,
                prev_state,
                next,
            } => {
                m.string(ftrace::SWITCH_PREV_COMM, prev.comm)
                    .int(ftrace::SWITCH_PREV_PID, prev.pid.into())
                    .int(ftrace::SWITCH_PREV_PRIO, prev.prio.into())
                    .int(ftrace::SWITCH_PREV_STATE, prev_state.bits())
                    .string(ftrace::SWITCH_NEXT_COMM, next.comm)
                    .int(ftrace::SWITCH_NEXT_PID, next.pid.into())
                    .int(ftrace::SWITCH_NEXT_PRIO, next.prio.into());
                ftrace::EVENT_SCHED_SWITCH
            }
            EventKind::Waking { p, target_cpu } => {
                Self::wake_payload(m, &p, target_cpu);
                ftrace::EVENT_SCHED_WAKING
            }
            EventKind::Wakeup { p, target_cpu } => {
                Self::wake_payload(m, &p, target_cpu);
                ftrace::EVENT_SCHED_WAKEUP
            }
            EventKind::WakeupNew { p, target_cpu } => {
                Self::wake_payload(m, &p, target_cpu);
                ftrace::EVENT_SCHED_WAKEUP_NEW
            }
            EventKind::Migrate {
                p,
                orig_cpu,
                dest_cpu,
            } => {
                m.string(ftrace::MIGRATE_COMM, p.comm)
                    .int(ftrace::MIGRATE_PID, p.pid.into())
                    .int(ftrace::MIGRATE_PRIO, p.prio.into())
                    .int(ftrace::MIGRATE_ORIG_CPU, orig_cpu as i64)
                    .int(ftrace::MIGRATE_DEST_CPU, dest_cpu as i64);
                ftrace::EVENT_SCHED_MIGRATE_TASK
            }
            EventKind::MigrateReason {
                p,
                orig_cpu,
                dest_cpu,
                reason,
            } => {
                m.string(
                    ftrace::PRINT_BUF,
                    &migrate_reason_buf(p.pid, reason, orig_cpu, dest_cpu),
                );
                ftrace::EVENT_PRINT
            }
            EventKind::Exit { p } => {
                m.string(ftrace::EXIT_COMM, p.comm)
                    .int(ftrace::EXIT_PID, p.pid.into())
                    .int(ftrace::EXIT_TGID, p.pid.into())
                    .int(ftrace::EXIT_PRIO, p.prio.into());
                ftrace::EVENT_SCHED_PROCESS_EXIT
            }
        };
        self.event.clear();
        self.event
            .uint(ftrace::EVENT_TIMESTAMP, ev.ts_ns)
            .uint(ftrace::EVENT_PID, ev.curr.pid as u64)
            .message(field, &self.payload);
        self.pending[ev.cpu].message(ftrace::BUNDLE_EVENT, &self.event);
        if self.pending[ev.cpu].len() >= BUNDLE_FLUSH_BYTES {
            self.flush_cpu(ev.cpu)?;
        }
        Ok(())
    }

    fn flush_cpu(&mut self, cpu: usize) -> io::Result<()> {
        if self.pending[cpu].is_empty() {
            return Ok(());
        }
        self.bundle.clear();
        self.bundle.uint(ftrace::BUNDLE_CPU, cpu as u64);
        self.bundle.buf.extend_from_slice(&self.pending[cpu].buf);
        self.pending[cpu].clear();
        self.packet.clear();
        self.packet
            .message(packet::FTRACE_EVENTS, &self.bundle)
            .uint(packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE_ID);
        let p = std::mem::take(&mut self.packet);
        let r = self.write_packet_msg(&p);
        self.packet = p;
        r
    }

    pub fn finish(&mut self) -> io::Result<()> {
        for cpu in 0..self.pending.len() {
            self.flush_cpu(cpu)?;
        }
        self.out.flush()
    }
}
