//! Reading ftrace text back: the scheduler tracepoints of a `/sys/kernel/tracing/trace` file
//! (a real kernel's) or of a `--trace X.txt` file (the model's, [`super::ftrace`]), as plain
//! records for [`crate::stats::dynamics`].
//!
//! A line is `TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: ARGS`, with ARGS as the event's kernel
//! `TP_printk` prints it. What is read, by event:
//! - `sched_switch`: `prev_pid`, `prev_state` (runnable = starts with `R`: a preemption or a
//!   yield, which the kernel counts as involuntary) and `next_pid`;
//! - `sched_waking`, `sched_wakeup`, `sched_wakeup_new`: `pid` and `target_cpu`;
//! - `sched_migrate_task`: `pid`, `orig_cpu`, `dest_cpu`;
//! - `sched_process_fork`: `pid` (the parent) and `child_pid`.
//!
//! Other lines (comments, other events, `tracing_mark_write` annotations) are skipped. A
//! `comm` may hold spaces (`opt cgu.0`), so the task column is not split on whitespace: the
//! CPU column (`[NNN]`, digits only) anchors the line, and `comm=` values end at the next
//! key the format prints after them. Timestamps are seconds with 6 (tracefs) or 9 (the
//! model, `trace-cmd report -t`) decimals, read exactly into nanoseconds.

use std::io::BufRead;

use crate::error::{InputError, InputResult};

/// Most lines a trace may have (a real trace of a 90 s hackbench on 2 CPUs is ~10 M lines).
pub const MAX_TRACE_LINES: u64 = 500_000_000;

/// One scheduler tracepoint hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    pub ts_ns: u64,
    /// The CPU the event was recorded on.
    pub cpu: usize,
    pub event: SchedEvent,
}

/// The scheduler events [`read_records`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedEvent {
    Switch {
        prev_pid: u32,
        /// `prev_state` starts with `R`: the task was still runnable (preempted or yielded).
        prev_runnable: bool,
        next_pid: u32,
    },
    /// `sched_waking`: on the waker's CPU; `target_cpu` = the task's CPU before placement.
    Waking {
        pid: u32,
        target_cpu: usize,
    },
    /// `sched_wakeup`: `target_cpu` = the CPU the task was placed on.
    Wakeup {
        pid: u32,
        target_cpu: usize,
    },
    WakeupNew {
        pid: u32,
        target_cpu: usize,
    },
    Migrate {
        pid: u32,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    Fork {
        parent_pid: u32,
        child_pid: u32,
    },
}

/// Every scheduler record of a trace, in file order (tracefs' `trace` file merges the
/// per-CPU buffers in time order; the model writes in time order).
pub fn read_records(input: impl BufRead, name: &str) -> InputResult<Vec<TraceRecord>> {
    let mut records = Vec::new();
    for (index, line) in input.lines().enumerate() {
        let line_no = index as u64 + 1;
        if line_no > MAX_TRACE_LINES {
            return Err(InputError::new(
                name,
                format!("more than {MAX_TRACE_LINES} lines (MAX_TRACE_LINES); trace a shorter run"),
            ));
        }
        let line = line.map_err(|e| InputError::new(name, format!("cannot read: {e}")))?;
        match parse_line(&line) {
            Ok(Some(r)) => records.push(r),
            Ok(None) => {}
            Err(why) => {
                return Err(InputError::new(
                    name,
                    format!(
                        "line {line_no}: {why}: {}",
                        crate::input::limits::clip(&line)
                    ),
                ));
            }
        }
    }
    Ok(records)
}

/// One line: `Ok(None)` for a line that is not a scheduler event this reader keeps.
pub fn parse_line(line: &str) -> Result<Option<TraceRecord>, String> {
    if line.trim_start().starts_with('#') {
        return Ok(None);
    }
    let Some((cpu, rest)) = split_at_cpu_column(line) else {
        return Ok(None);
    };
    let mut tokens = rest.split_whitespace();
    // FLAGS (absent in the irq-info-less format), then `SECONDS:`.
    let Some(ts_token) = tokens.by_ref().find(|t| t.ends_with(':')) else {
        return Ok(None);
    };
    let Some(event) = tokens.next().and_then(|t| t.strip_suffix(':')) else {
        return Ok(None);
    };
    let args = match rest.find(&format!(" {event}: ")) {
        Some(at) => &rest[at + event.len() + 3..],
        None => return Ok(None),
    };
    let event = match event {
        "sched_switch" => SchedEvent::Switch {
            prev_pid: num(args, "prev_pid")?,
            prev_runnable: value(args, "prev_state")?.starts_with('R'),
            next_pid: num(args, "next_pid")?,
        },
        "sched_waking" => SchedEvent::Waking {
            pid: num(args, "pid")?,
            target_cpu: num(args, "target_cpu")?,
        },
        "sched_wakeup" => SchedEvent::Wakeup {
            pid: num(args, "pid")?,
            target_cpu: num(args, "target_cpu")?,
        },
        "sched_wakeup_new" => SchedEvent::WakeupNew {
            pid: num(args, "pid")?,
            target_cpu: num(args, "target_cpu")?,
        },
        "sched_migrate_task" => SchedEvent::Migrate {
            pid: num(args, "pid")?,
            orig_cpu: num(args, "orig_cpu")?,
            dest_cpu: num(args, "dest_cpu")?,
        },
        "sched_process_fork" => SchedEvent::Fork {
            parent_pid: num(args, "pid")?,
            child_pid: num(args, "child_pid")?,
        },
        _ => return Ok(None),
    };
    let ts_ns = seconds_to_ns(ts_token.trim_end_matches(':'))
        .ok_or_else(|| format!("timestamp '{ts_token}' is not SECONDS.FRACTION"))?;
    Ok(Some(TraceRecord { ts_ns, cpu, event }))
}

/// The CPU column `[NNN]` (the first bracketed all-digit token followed by a space) and the
/// text after it.
fn split_at_cpu_column(line: &str) -> Option<(usize, &str)> {
    let mut from = 0;
    while let Some(open) = line[from..].find('[').map(|i| i + from) {
        let close = line[open..].find(']').map(|i| i + open)?;
        let inner = &line[open + 1..close];
        let after = &line[close + 1..];
        if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) && after.starts_with(' ')
        {
            return Some((inner.parse().ok()?, after));
        }
        from = open + 1;
    }
    None
}

/// The value of `key=` in `args`, up to the next space. Keys are matched at the start or
/// after a space, so `pid` does not match inside `prev_pid`. No `comm` value is read.
fn value<'a>(args: &'a str, key: &str) -> Result<&'a str, String> {
    let start = key_start(args, key).ok_or_else(|| format!("no '{key}=' field"))?;
    let tail = &args[start..];
    let end = tail.find(' ').unwrap_or(tail.len());
    Ok(&tail[..end])
}

fn key_start(args: &str, key: &str) -> Option<usize> {
    let pat = format!("{key}=");
    if args.starts_with(&pat) {
        return Some(pat.len());
    }
    // The last ` key=` is the field: every format read here prints its numeric keys after
    // the comm values, so a comm holding ` pid=` text cannot be taken for the field.
    args.rfind(&format!(" {pat}")).map(|i| i + pat.len() + 1)
}

fn num<T: std::str::FromStr>(args: &str, key: &str) -> Result<T, String> {
    let v = value(args, key)?;
    v.parse()
        .map_err(|_| format!("'{key}={v}' is not a non-negative integer"))
}

/// `SECONDS.FRACTION` (1 to 9 decimals) in nanoseconds, exactly.
fn seconds_to_ns(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.trim().parse().ok()?;
    let frac_ns: u64 = format!("{frac:0<9}").parse().ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_tracefs_switch_with_a_spaced_comm_is_read() {
        let line = "       opt cgu.0-19755   [001] dNh2.  4604.820223: sched_switch: \
                    prev_comm=opt cgu.0 prev_pid=19755 prev_prio=120 prev_state=R+ ==> \
                    next_comm=schbench-worker next_pid=20214 next_prio=120";
        let r = parse_line(line).unwrap().unwrap();
        assert_eq!(r.cpu, 1);
        assert_eq!(r.ts_ns, 4_604_820_223_000);
        assert_eq!(
            r.event,
            SchedEvent::Switch {
                prev_pid: 19755,
                prev_runnable: true,
                next_pid: 20214
            }
        );
    }

    #[test]
    fn the_models_nanosecond_lines_are_read() {
        let waking = "    sched-pipe-0-2       [000] d..2.     0.180760018: sched_waking: \
                      comm=perf pid=1 prio=120 target_cpu=001";
        let r = parse_line(waking).unwrap().unwrap();
        assert_eq!(r.ts_ns, 180_760_018);
        assert_eq!(
            r.event,
            SchedEvent::Waking {
                pid: 1,
                target_cpu: 1
            }
        );
        let migrate = "    sched-pipe-0-2       [000] d..2.     0.180760018: sched_migrate_task: \
                       comm=perf pid=1 prio=120 orig_cpu=1 dest_cpu=0";
        assert_eq!(
            parse_line(migrate).unwrap().unwrap().event,
            SchedEvent::Migrate {
                pid: 1,
                orig_cpu: 1,
                dest_cpu: 0
            }
        );
        let sleep = "    sched-pipe-0-2       [000] d..2.     0.180760476: sched_switch: \
                     prev_comm=sched-pipe-0 prev_pid=2 prev_prio=120 prev_state=S ==> \
                     next_comm=perf next_pid=1 next_prio=120";
        assert_eq!(
            parse_line(sleep).unwrap().unwrap().event,
            SchedEvent::Switch {
                prev_pid: 2,
                prev_runnable: false,
                next_pid: 1
            }
        );
    }

    #[test]
    fn forks_comments_and_other_events_are_told_apart() {
        let fork = "            bash-812     [000] ..... 12.500000: sched_process_fork: \
                    comm=bash pid=812 child_comm=bash child_pid=813";
        assert_eq!(
            parse_line(fork).unwrap().unwrap().event,
            SchedEvent::Fork {
                parent_pid: 812,
                child_pid: 813
            }
        );
        assert_eq!(parse_line("# tracer: nop").unwrap(), None);
        assert_eq!(
            parse_line(
                "   perf-1       [000] .....     0.000063781: tracing_mark_write: I|1|migrate wakeup 0->1"
            )
            .unwrap(),
            None
        );
        assert_eq!(parse_line("").unwrap(), None);
    }

    #[test]
    fn a_scheduler_line_without_its_fields_is_an_error_naming_the_line() {
        let text = "# tracer: nop\n  a-1 [000] d..2. 1.000001: sched_wakeup: comm=a prio=120\n";
        let err = read_records(text.as_bytes(), "t.txt").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(err.to_string().contains("no 'pid=' field"), "{err}");
        let bad_ts = "  a-1 [000] d..2. 1.0000000001: sched_wakeup: comm=a pid=1 target_cpu=000";
        assert!(parse_line(bad_ts).unwrap_err().contains("timestamp"));
    }

    #[test]
    fn timestamps_are_exact_nanoseconds() {
        assert_eq!(seconds_to_ns("4747.296011"), Some(4_747_296_011_000));
        assert_eq!(seconds_to_ns("0.000000001"), Some(1));
        assert_eq!(seconds_to_ns("12.5"), Some(12_500_000_000));
        assert_eq!(seconds_to_ns("12"), None);
        assert_eq!(seconds_to_ns("1.x"), None);
    }
}
