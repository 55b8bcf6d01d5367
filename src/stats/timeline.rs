//! A compact time series of one run for pictures (`schedlab report`): per-CPU busy time and
//! the task that ran longest, per time bucket; migrations by reason per bucket; and a bounded
//! sample of individual migrations (time, task, from, to, reason) to mark on a timeline.
//!
//! It is fed by the same observation points as the trace (`sched_switch`,
//! `sched_migrate_task`), through [`crate::stats::trace::TraceRecorder`], and only when a
//! report was asked for (`--report`): results without it are unchanged, byte for byte.
//!
//! Bounded size, whatever the run length: the run is cut into at most
//! [`TIMELINE_BUCKETS_MAX`] buckets. Buckets start [`TIMELINE_BUCKET_NS_MIN`] wide; when the
//! run outgrows them, neighbouring buckets are merged in pairs and the width doubles (so the
//! final width is the smallest power-of-two multiple of the minimum that covers the run).
//! At most [`MIGRATION_MARKS_MAX`] migrations are kept; past that, every other one is
//! dropped and only every second one after is kept (a deterministic thinning), and the number
//! dropped is recorded.
//!
//! Approximations: "the task that ran longest" in a merged bucket is the longer of the two
//! halves' longest runners (not re-summed per task); the series covers the whole run,
//! warm-up included (the results' counters cover only the measured interval).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sched::types::MigrationReason;
use crate::units::usize_from_u64;

/// Most time buckets a timeline holds.
pub const TIMELINE_BUCKETS_MAX: usize = 256;
/// Width of a bucket before any merging.
pub const TIMELINE_BUCKET_NS_MIN: u64 = 100_000;
/// Most individual migrations a timeline keeps.
pub const MIGRATION_MARKS_MAX: usize = 4096;

/// One migration, as `sched_migrate_task` reports it, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MigrationMark {
    pub ts_ns: u64,
    /// The task's pid as the results' `tasks[].pid` gives it.
    pub pid: usize,
    pub from: usize,
    pub to: usize,
    pub reason: String,
}

/// The time series of one run (the results' optional `runs[].timeline`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Timeline {
    /// Width of every bucket; bucket `i` covers `[i * bucket_ns, (i + 1) * bucket_ns)`.
    pub bucket_ns: u64,
    /// Simulated time the series ends at (the run's end, warm-up included).
    pub end_ns: u64,
    /// Per CPU (index = CPU id), per bucket: time a task ran.
    pub cpu_busy_ns: Vec<Vec<u64>>,
    /// Per CPU, per bucket: the pid that ran longest (`None`: idle all bucket).
    pub cpu_top_pid: Vec<Vec<Option<usize>>>,
    /// Per migration reason that occurred, per bucket: the number of migrations.
    pub migrations_by_reason: BTreeMap<String, Vec<u64>>,
    /// A bounded sample of individual migrations (see the module docs).
    pub migration_marks: Vec<MigrationMark>,
    /// Migrations not kept in `migration_marks`.
    pub migration_marks_dropped: u64,
}

impl Timeline {
    /// How many buckets the series has.
    pub fn buckets(&self) -> usize {
        self.cpu_busy_ns.first().map_or(0, Vec::len)
    }

    /// Busy fraction (0..=1) of `cpu` in bucket `b` (the last bucket may be partial).
    pub fn busy_fraction(&self, cpu: usize, b: usize) -> f64 {
        let start = b as u64 * self.bucket_ns;
        let width = self.end_ns.saturating_sub(start).min(self.bucket_ns).max(1);
        (self.cpu_busy_ns[cpu][b] as f64 / width as f64).min(1.0)
    }
}

/// Builds a [`Timeline`] from scheduling events, in time order.
#[derive(Debug, Clone)]
pub struct TimelineRecorder {
    tl: Timeline,
    /// Per CPU: the pid running and since when.
    running: Vec<Option<(usize, u64)>>,
    /// Per CPU: the bucket being accumulated and its runtime per pid (few entries).
    open: Vec<(usize, Vec<(usize, u64)>)>,
    /// The longest runner's time per CPU per bucket (parallel to `cpu_top_pid`).
    top_ns: Vec<Vec<u64>>,
    /// Keep one migration in `keep_every` once the marks are full.
    keep_every: u64,
    seen_marks: u64,
}

impl TimelineRecorder {
    pub fn new(nr_cpus: usize) -> Self {
        TimelineRecorder {
            tl: Timeline {
                bucket_ns: TIMELINE_BUCKET_NS_MIN,
                cpu_busy_ns: vec![vec![0]; nr_cpus],
                cpu_top_pid: vec![vec![None]; nr_cpus],
                ..Timeline::default()
            },
            running: vec![None; nr_cpus],
            open: vec![(0, Vec::new()); nr_cpus],
            top_ns: vec![vec![0]; nr_cpus],
            keep_every: 1,
            seen_marks: 0,
        }
    }

    /// Grow the series to cover `ts_ns`, merging buckets in pairs while it would exceed
    /// [`TIMELINE_BUCKETS_MAX`].
    fn cover(&mut self, ts_ns: u64) {
        while ts_ns / self.tl.bucket_ns >= TIMELINE_BUCKETS_MAX as u64 {
            self.merge_pairs();
        }
        let need = usize_from_u64(ts_ns / self.tl.bucket_ns) + 1;
        if need > self.tl.buckets() {
            for c in 0..self.tl.cpu_busy_ns.len() {
                self.tl.cpu_busy_ns[c].resize(need, 0);
                self.tl.cpu_top_pid[c].resize(need, None);
                self.top_ns[c].resize(need, 0);
            }
            for v in self.tl.migrations_by_reason.values_mut() {
                v.resize(need, 0);
            }
        }
    }

    fn merge_pairs(&mut self) {
        self.tl.bucket_ns *= 2;
        for c in 0..self.tl.cpu_busy_ns.len() {
            let busy = &self.tl.cpu_busy_ns[c];
            let merged: Vec<u64> = busy.chunks(2).map(|p| p.iter().sum()).collect();
            let tops: Vec<(Option<usize>, u64)> = self.tl.cpu_top_pid[c]
                .chunks(2)
                .zip(self.top_ns[c].chunks(2))
                .map(|(pids, ns)| {
                    let i = if ns.len() == 2 && ns[1] > ns[0] { 1 } else { 0 };
                    (pids[i], ns[i])
                })
                .collect();
            self.tl.cpu_busy_ns[c] = merged;
            self.tl.cpu_top_pid[c] = tops.iter().map(|t| t.0).collect();
            self.top_ns[c] = tops.iter().map(|t| t.1).collect();
            self.open[c].0 /= 2;
        }
        for v in self.tl.migrations_by_reason.values_mut() {
            *v = v.chunks(2).map(|p| p.iter().sum()).collect();
        }
    }

    /// Close `cpu`'s open bucket: its longest runner competes with the bucket's current one.
    fn close_open(&mut self, cpu: usize) {
        let (b, runs) = &mut self.open[cpu];
        if let Some(&(pid, ns)) = runs.iter().max_by_key(|(pid, ns)| (*ns, usize::MAX - pid))
            && ns > self.top_ns[cpu][*b]
        {
            self.top_ns[cpu][*b] = ns;
            self.tl.cpu_top_pid[cpu][*b] = Some(pid);
        }
        runs.clear();
    }

    /// Account `pid` running on `cpu` over `[from, to)`.
    fn account(&mut self, cpu: usize, pid: usize, from: u64, to: u64) {
        if to <= from {
            return;
        }
        self.cover(to.saturating_sub(1));
        let mut t = from;
        while t < to {
            let w = self.tl.bucket_ns;
            let b = usize_from_u64(t / w);
            let end = ((b as u64 + 1) * w).min(to);
            self.tl.cpu_busy_ns[cpu][b] += end - t;
            if self.open[cpu].0 != b {
                self.close_open(cpu);
                self.open[cpu].0 = b;
            }
            let runs = &mut self.open[cpu].1;
            match runs.iter_mut().find(|(p, _)| *p == pid) {
                Some(e) => e.1 += end - t,
                None => runs.push((pid, end - t)),
            }
            t = end;
        }
    }

    /// `sched_switch` on `cpu` at `ts_ns` to `next` (`None`: idle).
    pub fn switch(&mut self, ts_ns: u64, cpu: usize, next_pid: Option<usize>) {
        if let Some((pid, since)) = self.running[cpu].take() {
            self.account(cpu, pid, since, ts_ns);
        }
        self.running[cpu] = next_pid.map(|pid| (pid, ts_ns));
    }

    /// `sched_migrate_task` of task `pid` from `from` to `to`.
    pub fn migrate(&mut self, ts_ns: u64, pid: usize, from: usize, to: usize, r: MigrationReason) {
        self.cover(ts_ns);
        let n = self.tl.buckets();
        let b = usize_from_u64(ts_ns / self.tl.bucket_ns);
        self.tl
            .migrations_by_reason
            .entry(r.name().to_string())
            .or_insert_with(|| vec![0; n])[b] += 1;
        self.seen_marks += 1;
        if !self.seen_marks.is_multiple_of(self.keep_every) {
            self.tl.migration_marks_dropped += 1;
            return;
        }
        if self.tl.migration_marks.len() >= MIGRATION_MARKS_MAX {
            let before = self.tl.migration_marks.len();
            let mut i = 0;
            self.tl.migration_marks.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.tl.migration_marks_dropped += (before - self.tl.migration_marks.len()) as u64;
            self.keep_every *= 2;
        }
        self.tl.migration_marks.push(MigrationMark {
            ts_ns,
            pid,
            from,
            to,
            reason: r.name().to_string(),
        });
    }

    /// End of the run at `ts_ns`: close every running slice and bucket.
    pub fn finish(mut self, ts_ns: u64) -> Timeline {
        for cpu in 0..self.running.len() {
            if let Some((pid, since)) = self.running[cpu].take() {
                self.account(cpu, pid, since, ts_ns);
            }
        }
        self.cover(ts_ns.saturating_sub(1));
        for cpu in 0..self.open.len() {
            self.close_open(cpu);
        }
        self.tl.end_ns = ts_ns;
        self.tl
    }
}

/// One line of an ftrace text trace as [`crate::stats::trace::ftrace`] writes it: the CPU,
/// the timestamp and the rest after `: ` (`sched_switch: ...`); `None` for other lines.
fn ftrace_fields(line: &str) -> Option<(usize, u64, &str)> {
    let open = line.find(" [")?;
    let rest = &line[open + 2..];
    let close = rest.find(']')?;
    let cpu: usize = rest[..close].trim().parse().ok()?;
    let mut words = rest[close + 1..].split_whitespace();
    let _flags = words.next()?;
    let ts = words.next()?.strip_suffix(':')?;
    let (secs, frac) = ts.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns = frac.parse::<u64>().ok()?
        * 10u64.pow(9 - u32::try_from(frac.len()).expect("checked: at most 9 digits"));
    let ns = secs
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac_ns)?;
    let at = line.find(ts)? + ts.len() + 2;
    Some((cpu, ns, line.get(at..)?))
}

/// The value of `key=` in a `TP_printk` line.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.split_whitespace().find_map(|w| w.strip_prefix(key))
}

/// Rebuild a run's [`Timeline`] from its ftrace text trace (`schedlab run --trace X.txt`):
/// `sched_switch` lines give the per-CPU slices, the `migrate <reason> <from>-><to>`
/// annotations the migrations. Trace pids are task index + 1 (pid 0 is idle); the timeline
/// uses the results' pids (the index). `Err` names the first line that does not parse.
pub fn from_ftrace(r: impl std::io::BufRead, nr_cpus: usize) -> Result<Timeline, String> {
    let mut rec = TimelineRecorder::new(nr_cpus);
    let mut last = 0;
    for (no, line) in r.lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read: {e}"))?;
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = || format!("line {}: not a schedlab ftrace line: {:.80}", no + 1, line);
        let (cpu, ts, text) = ftrace_fields(&line).ok_or_else(bad)?;
        if cpu >= nr_cpus {
            return Err(format!(
                "line {}: CPU {cpu}, but the results have {nr_cpus} CPUs",
                no + 1
            ));
        }
        last = last.max(ts);
        if let Some(sw) = text.strip_prefix("sched_switch: ") {
            let next: usize = field(sw, "next_pid=")
                .and_then(|p| p.parse().ok())
                .ok_or_else(bad)?;
            rec.switch(ts, cpu, next.checked_sub(1));
        } else if let Some(mark) = text.strip_prefix("tracing_mark_write: I|") {
            let (pid, what) = mark.split_once('|').ok_or_else(bad)?;
            let Some(m) = what.strip_prefix("migrate ") else {
                continue;
            };
            let mut w = m.split_whitespace();
            let (reason, route) = (w.next().ok_or_else(bad)?, w.next().ok_or_else(bad)?);
            let (from, to) = route.split_once("->").ok_or_else(bad)?;
            let reason = MigrationReason::ALL
                .iter()
                .copied()
                .find(|r| r.name() == reason)
                .ok_or_else(bad)?;
            let pid: usize = pid.parse().map_err(|_| bad())?;
            let (from, to) = (
                from.parse().map_err(|_| bad())?,
                to.parse().map_err(|_| bad())?,
            );
            rec.migrate(ts, pid.saturating_sub(1), from, to, reason);
        }
    }
    Ok(rec.finish(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_adds_up_and_buckets_stay_bounded() {
        let mut r = TimelineRecorder::new(2);
        let (a, b) = (Some(1), Some(2));
        // CPU 0 runs a for 1 s, CPU 1 runs b half the time, in 1 ms slices.
        r.switch(0, 0, a);
        for i in 0..1000u64 {
            r.switch(i * 1_000_000, 1, b);
            r.switch(i * 1_000_000 + 500_000, 1, None);
        }
        let tl = r.finish(1_000_000_000);
        assert!(tl.buckets() <= TIMELINE_BUCKETS_MAX);
        assert!(tl.buckets() * usize_from_u64(tl.bucket_ns) >= 1_000_000_000);
        assert_eq!(tl.cpu_busy_ns[0].iter().sum::<u64>(), 1_000_000_000);
        assert_eq!(tl.cpu_busy_ns[1].iter().sum::<u64>(), 500_000_000);
        assert!(tl.cpu_top_pid[0].iter().all(|p| *p == Some(1)));
        // Buckets are 6.4 ms wide (100 µs doubled until 1 s fits in 256): 6.4 half-busy
        // periods each, so between 3.0 and 3.5 ms busy.
        assert_eq!(tl.bucket_ns, 6_400_000);
        for b in 0..tl.buckets() - 1 {
            let f = tl.busy_fraction(1, b);
            assert!((0.46..=0.55).contains(&f), "bucket {b}: {f}");
            assert_eq!(tl.busy_fraction(0, b), 1.0);
        }
    }

    #[test]
    fn ftrace_lines_parse_and_bad_ones_are_named() {
        let text = "# tracer: nop\n          <idle>-0       [001] d..2.     0.000194500: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=r next_pid=2 next_prio=120\n               r-2       [001] d..2.     0.001194500: sched_switch: prev_comm=r prev_pid=2 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n               r-2       [000] .....     0.000060000: tracing_mark_write: I|2|migrate fork 0->1\n";
        let tl = from_ftrace(text.as_bytes(), 2).unwrap();
        assert_eq!(tl.cpu_busy_ns[1].iter().sum::<u64>(), 1_000_000);
        assert_eq!(tl.migrations_by_reason["fork"].iter().sum::<u64>(), 1);
        assert_eq!(tl.migration_marks[0].pid, 1, "trace pid 2 is task index 1");
        for bad in [
            "x-1 [000] d..2. 0.é0: sched_switch: next_pid=1",
            "x-1 [000] d..2. 99999999999999999999.0: sched_switch: next_pid=1",
            "x-1 [000] d..2. 1.0: sched_switch: next_pid=zz",
        ] {
            let e = from_ftrace(bad.as_bytes(), 2).unwrap_err();
            assert!(e.starts_with("line 1: "), "{e}");
        }
        assert!(
            from_ftrace(
                "x-1 [005] d..2. 1.0: sched_switch: next_pid=1".as_bytes(),
                2
            )
            .is_err()
        );
    }

    #[test]
    fn migration_marks_are_thinned_and_counted() {
        let mut r = TimelineRecorder::new(2);
        let n = MIGRATION_MARKS_MAX as u64 * 3;
        for i in 0..n {
            r.migrate(i * 1000, 1, 0, 1, MigrationReason::Wakeup);
        }
        let tl = r.finish(n * 1000);
        let kept = tl.migration_marks.len() as u64;
        assert!(kept <= MIGRATION_MARKS_MAX as u64);
        assert_eq!(kept + tl.migration_marks_dropped, n);
        assert_eq!(tl.migrations_by_reason["wakeup"].iter().sum::<u64>(), n);
    }
}
