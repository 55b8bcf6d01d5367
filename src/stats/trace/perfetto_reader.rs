//! Reading back the Perfetto protobuf traces schedlab writes (`super::perfetto_writer`),
//! for `schedlab report --trace X.pftrace`: the `sched_switch` events give the per-CPU slices,
//! the migration-reason `print` events (`I|pid|migrate <reason> <from>-><to>`) the
//! migrations, and both feed the same [`TimelineRecorder`] the run itself would have fed.
//!
//! Only what our writer produces is decoded (with [`super::perfetto::decode`]: varint and
//! length-delimited fields): `Trace.packet` → `TracePacket.ftrace_events` →
//! `FtraceEventBundle { cpu, event[] }` → `FtraceEvent { timestamp, sched_switch | print }`.
//! Other packets (`SystemInfo`, `ProcessTree`) and other events are skipped. Bundles hold one
//! CPU's events in time order, and a CPU's bundles come in time order, but bundles of
//! different CPUs interleave; the events are therefore sorted by time (stably, so events of
//! one CPU keep their order) before they are replayed. Events of different CPUs at the same
//! nanosecond may replay in another order than the run emitted them: that only changes which
//! migrations the bounded mark sample keeps once it is full, never a count.

use super::perfetto::{Field, TRACE_PACKET, decode, ftrace, packet};
use crate::sched::types::MigrationReason;
use crate::stats::timeline::{Timeline, TimelineRecorder};
use crate::units::usize_from_u64;

/// A replayed event: a switch to `next` (trace pid, 0 = idle) or a migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    Switch {
        next_pid: u64,
    },
    Migrate {
        pid: u64,
        from: usize,
        to: usize,
        reason: MigrationReason,
    },
}

fn fields<'a>(b: &'a [u8], what: &str) -> Result<Vec<(u32, Field<'a>)>, String> {
    decode(b).ok_or_else(|| format!("malformed protobuf in a {what}"))
}

fn varint(fs: &[(u32, Field<'_>)], n: u32) -> Option<u64> {
    fs.iter().find_map(|(k, f)| match f {
        Field::Varint(v) if *k == n => Some(*v),
        _ => None,
    })
}

fn bytes<'a>(fs: &[(u32, Field<'a>)], n: u32) -> Option<&'a [u8]> {
    fs.iter().find_map(|(k, f)| match f {
        Field::Len(b) if *k == n => Some(*b),
        _ => None,
    })
}

/// `I|pid|migrate <reason> <from>-><to>` (see [`super::migrate_reason_buf`]).
fn parse_migrate(buf: &str) -> Option<Replay> {
    let rest = buf.strip_prefix("I|")?;
    let (pid, what) = rest.split_once('|')?;
    let mut w = what.strip_prefix("migrate ")?.split_whitespace();
    let (reason, route) = (w.next()?, w.next()?);
    let (from, to) = route.split_once("->")?;
    Some(Replay::Migrate {
        pid: pid.parse().ok()?,
        from: from.parse().ok()?,
        to: to.parse().ok()?,
        reason: MigrationReason::ALL
            .iter()
            .copied()
            .find(|r| r.name() == reason)?,
    })
}

/// One `FtraceEvent`: its timestamp and the replayed event (`None` for events the timeline
/// ignores).
fn event(b: &[u8]) -> Result<(u64, Option<Replay>), String> {
    let fs = fields(b, "ftrace event")?;
    let ts = varint(&fs, ftrace::EVENT_TIMESTAMP).ok_or("an ftrace event without timestamp")?;
    if let Some(sw) = bytes(&fs, ftrace::EVENT_SCHED_SWITCH) {
        let sw = fields(sw, "sched_switch")?;
        let next_pid =
            varint(&sw, ftrace::SWITCH_NEXT_PID).ok_or("sched_switch without next_pid")?;
        return Ok((ts, Some(Replay::Switch { next_pid })));
    }
    if let Some(p) = bytes(&fs, ftrace::EVENT_PRINT) {
        let p = fields(p, "print event")?;
        let buf = bytes(&p, ftrace::PRINT_BUF).unwrap_or_default();
        let text = std::str::from_utf8(buf).map_err(|_| "a print event that is not UTF-8")?;
        if text.contains("|migrate ") {
            let m = parse_migrate(text)
                .ok_or_else(|| format!("a migration annotation that does not parse: {text:.80}"))?;
            return Ok((ts, Some(m)));
        }
    }
    Ok((ts, None))
}

/// Rebuild a run's [`Timeline`] from its Perfetto protobuf trace (`schedlab run --trace
/// X.pftrace`), the same as [`crate::stats::timeline::from_ftrace`] does from the text form.
/// Trace pids are task index + 1 (pid 0 is idle); the timeline uses the results' pids (the
/// index). `Err` says what does not decode.
pub fn timeline_from_perfetto(bytes_in: &[u8], nr_cpus: usize) -> Result<Timeline, String> {
    let trace = decode(bytes_in).ok_or("not a Perfetto protobuf trace (malformed protobuf)")?;
    let mut events: Vec<(u64, usize, Replay)> = Vec::new();
    let mut last = 0;
    for (k, f) in &trace {
        let Field::Len(p) = f else {
            return Err("not a Perfetto trace: a top-level field that is not a packet".into());
        };
        if *k != TRACE_PACKET {
            return Err(format!("not a Perfetto trace: top-level field {k}"));
        }
        let p = fields(p, "trace packet")?;
        let Some(bundle) = bytes(&p, packet::FTRACE_EVENTS) else {
            continue;
        };
        let bundle = fields(bundle, "ftrace event bundle")?;
        let cpu =
            usize_from_u64(varint(&bundle, ftrace::BUNDLE_CPU).ok_or("a bundle without cpu")?);
        if cpu >= nr_cpus {
            return Err(format!("CPU {cpu}, but the results have {nr_cpus} CPUs"));
        }
        for (k, e) in &bundle {
            if let (ftrace::BUNDLE_EVENT, Field::Len(e)) = (*k, e) {
                let (ts, r) = event(e)?;
                last = last.max(ts);
                if let Some(r) = r {
                    events.push((ts, cpu, r));
                }
            }
        }
    }
    if events.is_empty() {
        return Err("no sched_switch event in this Perfetto trace".into());
    }
    events.sort_by_key(|e| e.0);
    let mut rec = TimelineRecorder::new(nr_cpus);
    for (ts, cpu, r) in events {
        match r {
            Replay::Switch { next_pid } => {
                rec.switch(ts, cpu, usize_from_u64(next_pid).checked_sub(1));
            }
            Replay::Migrate {
                pid,
                from,
                to,
                reason,
            } => rec.migrate(ts, usize_from_u64(pid).saturating_sub(1), from, to, reason),
        }
    }
    Ok(rec.finish(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_annotations_parse_and_others_do_not() {
        assert_eq!(
            parse_migrate("I|5|migrate load_balance 1->0"),
            Some(Replay::Migrate {
                pid: 5,
                from: 1,
                to: 0,
                reason: MigrationReason::LoadBalance
            })
        );
        assert_eq!(parse_migrate("I|5|migrate no_such_reason 1->0"), None);
        assert_eq!(parse_migrate("I|5|migrate load_balance 1-0"), None);
        assert!(timeline_from_perfetto(&[0x0a, 0x05, 0x01], 2).is_err());
        assert!(timeline_from_perfetto(b"# tracer: nop\n", 2).is_err());
    }
}
