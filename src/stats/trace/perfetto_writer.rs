//! The Perfetto trace file: a `SystemInfo` packet (kernel release, so `prev_state` decodes
//! with the modern encoding), a `ProcessTree` packet naming every task, then
//! `FtraceEventBundle` packets, one CPU each, appended whenever a CPU's buffer fills (like
//! traced's per-CPU ftrace readers) and at the end. Events within a bundle are in time order;
//! the trace processor sorts across bundles.

use std::io::{self, BufWriter, Write};

use super::perfetto::{Msg, TRACE_PACKET, ftrace, packet, process_tree, system_info};
use super::{Event, EventKind, KERNEL_RELEASE, Who, comm15, migrate_reason_buf};

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
        threads: &[(i32, &str)],
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
        for &(pid, comm) in threads {
            item.clear();
            item.int(process_tree::PROCESS_PID, pid.into())
                .int(process_tree::PROCESS_PPID, 0)
                .string(process_tree::PROCESS_CMDLINE, comm);
            tree.message(process_tree::PROCESSES, &item);
        }
        for &(pid, comm) in threads {
            item.clear();
            item.int(process_tree::THREAD_TID, pid.into())
                .string(process_tree::THREAD_NAME, comm15(comm))
                .int(process_tree::THREAD_TGID, pid.into());
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
        self.payload.clear();
        let field = Self::fill_payload(&mut self.payload, ev.kind);
        self.event.clear();
        self.event
            .uint(ftrace::EVENT_TIMESTAMP, ev.ts_ns)
            .int(ftrace::EVENT_PID, i64::from(ev.curr.pid))
            .message(field, &self.payload);
        self.pending[ev.cpu].message(ftrace::BUNDLE_EVENT, &self.event);
        if self.pending[ev.cpu].len() >= BUNDLE_FLUSH_BYTES {
            self.flush_cpu(ev.cpu)?;
        }
        Ok(())
    }

    /// Write the tracepoint's fields of `kind` into `m`; returns the event field it goes in.
    /// Separate from [`Self::event`]'s bundling as one payload per tracepoint.
    fn fill_payload(m: &mut Msg, kind: EventKind<'_>) -> u32 {
        match kind {
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
        }
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

#[cfg(test)]
mod tests {
    use super::super::perfetto::{Field, decode};
    use super::super::{PrevState, TraceFormat, write_trace};
    use super::*;
    use crate::sched::types::MigrationReason;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn msg(f: &Field<'_>) -> Vec<(u32, Field<'static>)> {
        let Field::Len(b) = f else {
            panic!("expected a message, got {f:?}")
        };
        let leaked: &'static [u8] = Box::leak(b.to_vec().into_boxed_slice());
        decode(leaked).expect("valid protobuf")
    }

    fn get<'a>(fields: &'a [(u32, Field<'static>)], n: u32) -> Vec<&'a Field<'static>> {
        fields
            .iter()
            .filter(|(k, _)| *k == n)
            .map(|(_, f)| f)
            .collect()
    }

    #[test]
    fn packets_carry_perfetto_field_numbers() {
        let a = Who {
            pid: 5,
            comm: "a",
            prio: 120,
        };
        let idle = Who::idle("swapper/1");
        let events = [
            Event {
                ts_ns: 100,
                cpu: 1,
                curr: a,
                kind: EventKind::Switch {
                    prev: a,
                    prev_state: PrevState::Preempted,
                    next: idle,
                },
            },
            Event {
                ts_ns: 200,
                cpu: 0,
                curr: a,
                kind: EventKind::Migrate {
                    p: a,
                    orig_cpu: 1,
                    dest_cpu: 0,
                },
            },
            Event {
                ts_ns: 200,
                cpu: 0,
                curr: a,
                kind: EventKind::MigrateReason {
                    p: a,
                    orig_cpu: 1,
                    dest_cpu: 0,
                    reason: MigrationReason::LoadBalance,
                },
            },
        ];
        let buf = Shared::default();
        write_trace(
            TraceFormat::Perfetto,
            Box::new(buf.clone()),
            2,
            &[(5, "a")],
            &events,
        )
        .unwrap();
        let bytes = buf.0.lock().unwrap().clone();
        let trace = decode(&bytes).unwrap();
        assert!(trace.iter().all(|(k, _)| *k == TRACE_PACKET));
        let packets: Vec<_> = trace.iter().map(|(_, f)| msg(f)).collect();
        // SystemInfo first: utsname.release tells the trace processor the kernel version.
        let info = msg(get(&packets[0], packet::SYSTEM_INFO)[0]);
        let uts = msg(get(&info, system_info::UTSNAME)[0]);
        assert_eq!(
            get(&uts, system_info::UTS_RELEASE),
            [&Field::Len(KERNEL_RELEASE.as_bytes())]
        );
        assert_eq!(get(&info, system_info::NUM_CPUS), [&Field::Varint(2)]);
        // ProcessTree: one process and one thread per task.
        let tree = msg(get(&packets[1], packet::PROCESS_TREE)[0]);
        let thread = msg(get(&tree, process_tree::THREADS)[0]);
        assert_eq!(
            thread,
            vec![
                (process_tree::THREAD_TID, Field::Varint(5)),
                (process_tree::THREAD_NAME, Field::Len(b"a")),
                (process_tree::THREAD_TGID, Field::Varint(5)),
            ]
        );
        // Then one bundle per CPU (CPU 0's first: flushed in CPU order at the end).
        let bundles: Vec<_> = packets[2..]
            .iter()
            .map(|p| msg(get(p, packet::FTRACE_EVENTS)[0]))
            .collect();
        assert_eq!(bundles.len(), 2);
        assert_eq!(get(&bundles[0], ftrace::BUNDLE_CPU), [&Field::Varint(0)]);
        let cpu0: Vec<_> = get(&bundles[0], ftrace::BUNDLE_EVENT)
            .into_iter()
            .map(msg)
            .collect();
        let migrate = msg(get(&cpu0[0], ftrace::EVENT_SCHED_MIGRATE_TASK)[0]);
        assert_eq!(get(&migrate, ftrace::MIGRATE_ORIG_CPU), [&Field::Varint(1)]);
        assert_eq!(get(&migrate, ftrace::MIGRATE_DEST_CPU), [&Field::Varint(0)]);
        let print = msg(get(&cpu0[1], ftrace::EVENT_PRINT)[0]);
        assert_eq!(
            get(&print, ftrace::PRINT_BUF),
            [&Field::Len(b"I|5|migrate load_balance 1->0")]
        );
        let cpu1: Vec<_> = get(&bundles[1], ftrace::BUNDLE_EVENT)
            .into_iter()
            .map(msg)
            .collect();
        assert_eq!(
            get(&cpu1[0], ftrace::EVENT_TIMESTAMP),
            [&Field::Varint(100)]
        );
        assert_eq!(get(&cpu1[0], ftrace::EVENT_PID), [&Field::Varint(5)]);
        let sw = msg(get(&cpu1[0], ftrace::EVENT_SCHED_SWITCH)[0]);
        // TASK_REPORT_MAX: preempted.
        assert_eq!(get(&sw, ftrace::SWITCH_PREV_STATE), [&Field::Varint(0x100)]);
        assert_eq!(
            get(&sw, ftrace::SWITCH_NEXT_COMM),
            [&Field::Len(b"swapper/1")]
        );
        assert_eq!(get(&sw, ftrace::SWITCH_NEXT_PID), [&Field::Varint(0)]);
    }

    #[test]
    fn full_cpu_buffers_are_flushed_as_bundles_in_time_order() {
        let a = Who {
            pid: 1,
            comm: "a",
            prio: 120,
        };
        let events: Vec<Event<'_>> = (0..10_000u64)
            .map(|i| Event {
                ts_ns: i * 10,
                cpu: 0,
                curr: a,
                kind: EventKind::Waking {
                    p: a,
                    target_cpu: 0,
                },
            })
            .collect();
        let buf = Shared::default();
        write_trace(
            TraceFormat::Perfetto,
            Box::new(buf.clone()),
            1,
            &[(1, "a")],
            &events,
        )
        .unwrap();
        let bytes = buf.0.lock().unwrap().clone();
        let packets: Vec<_> = decode(&bytes)
            .unwrap()
            .iter()
            .map(|(_, f)| msg(f))
            .collect();
        let mut ts = Vec::new();
        let mut nr_bundles = 0;
        for p in &packets[2..] {
            let b = msg(get(p, packet::FTRACE_EVENTS)[0]);
            nr_bundles += 1;
            for e in get(&b, ftrace::BUNDLE_EVENT) {
                let e = msg(e);
                if let [Field::Varint(t)] = get(&e, ftrace::EVENT_TIMESTAMP)[..] {
                    ts.push(*t);
                }
            }
        }
        assert!(nr_bundles > 1, "a 64 KiB buffer cannot hold 10000 events");
        assert_eq!(ts, (0..10_000u64).map(|i| i * 10).collect::<Vec<_>>());
    }
}
