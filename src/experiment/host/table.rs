//! The host table: real measurements of [`super::rows::ROWS`] on one machine, as JSON
//! (`validation/host/<machine>.json`), with the machine's identity and the conditions of
//! every run so that a disturbed measurement can be recognised.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{InputError, InputResult};

/// Format version of the host table file.
pub const TABLE_FORMAT: u32 = 1;

/// What identifies the machine a table (or a calibration) was measured on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostId {
    /// `/proc/cpuinfo` "model name" of CPU 0.
    pub cpu_model: String,
    /// Online CPUs.
    pub nr_cpus: usize,
    /// `uname -r`.
    pub kernel_release: String,
}

impl HostId {
    /// This machine.
    pub fn current() -> HostId {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let kernel_release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        HostId {
            cpu_model,
            nr_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel_release,
        }
    }

    /// Why `self` (where something was measured) cannot stand for `other` (this machine),
    /// or None when they are the same kind of machine. The kernel release may differ.
    pub fn mismatch(&self, other: &HostId) -> Option<String> {
        if self.cpu_model != other.cpu_model || self.nr_cpus != other.nr_cpus {
            return Some(format!(
                "measured on '{}' with {} CPUs, this machine is '{}' with {} CPUs",
                self.cpu_model, self.nr_cpus, other.cpu_model, other.nr_cpus
            ));
        }
        None
    }

    /// A file-name slug: the CPU model's words and the CPU count.
    pub fn slug(&self) -> String {
        let words: String = self
            .cpu_model
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let words: Vec<&str> = words.split('-').filter(|w| !w.is_empty()).collect();
        format!("{}-{}cpu", words.join("-"), self.nr_cpus)
    }
}

/// One real run of a row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RealRun {
    pub elapsed_s: f64,
    pub task_clock_ms: f64,
    pub context_switches: f64,
    pub cpu_migrations: f64,
    /// The benchmark's own throughput where the row is judged by it (schbench's average rps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<f64>,
    /// 1-minute load average just before the run.
    pub loadavg_before: f64,
    /// Share of CPU time the hypervisor stole during the run (`/proc/stat`), percent.
    pub steal_pct: f64,
    /// Voluntary context switches of the run's process tree: the `ru_nvcsw` that GNU time
    /// reports (`%w`) for perf and every child it reaped, the count LKP's reports call
    /// `time.voluntary_context_switches`. Absent where GNU time was not on PATH (tables
    /// measured before 2026-12-06 have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_switches: Option<f64>,
    /// Involuntary context switches of the same tree (`ru_nivcsw`, GNU time's `%c`): the
    /// running task was preempted (a wakeup's preemption or the tick), LKP's
    /// `time.involuntary_context_switches`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_switches: Option<f64>,
}

impl RealRun {
    pub fn context_switches_per_s(&self) -> f64 {
        self.context_switches / self.elapsed_s.max(1e-9)
    }

    pub fn migrations_per_s(&self) -> f64 {
        self.cpu_migrations / self.elapsed_s.max(1e-9)
    }

    pub fn involuntary_switches_per_s(&self) -> Option<f64> {
        self.involuntary_switches
            .map(|n| n / self.elapsed_s.max(1e-9))
    }
}

/// One row's measurements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowResult {
    pub id: String,
    pub command: String,
    pub primary: Option<super::rows::Primary>,
    pub runs: Vec<RealRun>,
    /// Why the row has no runs (a program missing, every run failed), when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The host table file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostTable {
    pub format: u32,
    pub host: HostId,
    /// When the runs started, RFC 3339 UTC.
    pub measured_at: String,
    pub schedlab_version: String,
    /// Whether real runs had autogroup nice -20 (see the module doc of [`super`]).
    pub isolated: bool,
    pub rows: Vec<RowResult>,
}

impl HostTable {
    /// Read and check a table file.
    pub fn read(path: &Path) -> InputResult<HostTable> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| InputError::new(&origin, format!("cannot read the host table: {e}")))?;
        let table: HostTable = serde_json::from_str(&text).map_err(|e| {
            InputError::new(
                &origin,
                format!("not a host table (written by `schedlab host-measure`): {e}"),
            )
        })?;
        if table.format != TABLE_FORMAT {
            return Err(InputError::with_key(
                &origin,
                "format",
                format!(
                    "format {} is not supported; accepted: {TABLE_FORMAT}",
                    table.format
                ),
            ));
        }
        Ok(table)
    }

    pub fn row(&self, id: &str) -> Option<&RowResult> {
        self.rows.iter().find(|r| r.id == id)
    }
}

/// The newest table (by `measured_at`) among `dir/*.json` measured on a machine like
/// `host`, or None.
pub fn latest_for(
    dir: &Path,
    host: &HostId,
) -> InputResult<Option<(std::path::PathBuf, HostTable)>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut best: Option<(std::path::PathBuf, HostTable)> = None;
    for p in paths {
        let t = HostTable::read(&p)?;
        if t.host.mismatch(host).is_some() {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(_, b)| t.measured_at > b.measured_at)
        {
            best = Some((p, t));
        }
    }
    Ok(best)
}

/// `t` (seconds since the epoch) as RFC 3339 UTC, e.g. `2026-12-04T23:10:00Z`.
pub fn rfc3339_utc(t: u64) -> String {
    let (days, secs) = (t / 86_400, t % 86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Now, as [`rfc3339_utc`].
pub fn now_rfc3339() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_utc(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_and_mismatch() {
        let a = HostId {
            cpu_model: "AMD EPYC 7B13 64-Core Processor".into(),
            nr_cpus: 2,
            kernel_release: "6.18.44".into(),
        };
        assert_eq!(a.slug(), "amd-epyc-7b13-64-core-processor-2cpu");
        let mut b = a.clone();
        b.kernel_release = "6.12".into();
        assert_eq!(a.mismatch(&b), None);
        b.nr_cpus = 4;
        assert!(a.mismatch(&b).unwrap().contains("4 CPUs"));
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // `date -u -d @1796425200`.
        assert_eq!(rfc3339_utc(1_796_425_200), "2026-12-04T23:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    }
}
