//! What `-m host` can learn of the running kernel: HZ and the preemption model, read from
//! the kernel's own configuration (`/boot/config-$(uname -r)` or `/proc/config.gz`), the
//! boot command line (`preempt=` under PREEMPT_DYNAMIC) and debugfs
//! (`/sys/kernel/debug/sched/preempt`, usually not readable without root). Whatever cannot
//! be read is said in a note, and the profile's value stays.

use super::sysctl::PreemptModel;

/// The running kernel's settings, as far as they could be read.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct HostKernel {
    /// `uname -r`.
    pub release: Option<String>,
    pub hz: Option<u32>,
    pub preempt: Option<PreemptModel>,
    /// Where each value came from, and what could not be read.
    pub notes: Vec<String>,
}

fn read_config() -> Option<(String, String)> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let boot = format!("/boot/config-{}", release.trim());
    if let Ok(text) = std::fs::read_to_string(&boot) {
        return Some((text, boot));
    }
    // /proc/config.gz: decompressed by the system's gzip (no decompressor is linked in).
    let out = std::process::Command::new("gzip")
        .args(["-dc", "/proc/config.gz"])
        .output()
        .ok()?;
    out.status.success().then(|| {
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            "/proc/config.gz".into(),
        )
    })
}

fn preempt_from_name(name: &str) -> Option<PreemptModel> {
    match name {
        "none" => Some(PreemptModel::None),
        "voluntary" => Some(PreemptModel::Voluntary),
        "full" => Some(PreemptModel::Full),
        "lazy" => Some(PreemptModel::Lazy),
        _ => None,
    }
}

/// Parse a kernel config's HZ and preemption choice.
pub fn parse_config(text: &str) -> (Option<u32>, Option<PreemptModel>) {
    let mut hz = None;
    let mut preempt = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("CONFIG_HZ=") {
            hz = v.trim().parse().ok();
        }
        let choice = match line.trim() {
            "CONFIG_PREEMPT_NONE=y" => Some(PreemptModel::None),
            "CONFIG_PREEMPT_VOLUNTARY=y" => Some(PreemptModel::Voluntary),
            "CONFIG_PREEMPT=y" => Some(PreemptModel::Full),
            "CONFIG_PREEMPT_LAZY=y" => Some(PreemptModel::Lazy),
            _ => None,
        };
        preempt = preempt.or(choice);
    }
    (hz, preempt)
}

/// The active model in `/sys/kernel/debug/sched/preempt` ("none (voluntary) full lazy").
pub fn parse_debugfs_preempt(text: &str) -> Option<PreemptModel> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
        .and_then(preempt_from_name)
}

/// The note for `/proc/sys/kernel/sched_autogroup_enabled`: with autogroup on, every
/// session's tasks form a task group of their own, so the host's root runqueues hold group
/// entities whose weights are the group's shares split by load (`calc_group_shares()`),
/// and `wake_affine()` and the balancer compare those loads. The model has no task groups
/// (docs/fidelity.md), so a `-m host` run sees the flat loads of the same tasks. `None`
/// when autogroup is off or the value is not 0/1.
pub fn autogroup_note(text: &str) -> Option<String> {
    (text.trim() == "1").then(|| {
        "sched_autogroup_enabled=1: the host runs each session's tasks in an autogroup (a task \
         group); the model has no task groups, so its runqueue loads are flat"
            .to_string()
    })
}

/// Every `kernel.sched_*` tunable a mainline kernel has had under `/proc/sys/kernel/`
/// (v3.0 on, any config): `sched_*` files outside this list come from patches the model does
/// not have.
const UPSTREAM_SCHED_SYSCTLS: &[&str] = &[
    "sched_autogroup_enabled",
    "sched_cfs_bandwidth_slice_us",
    "sched_child_runs_first",
    "sched_compat_yield",
    "sched_deadline_period_max_us",
    "sched_deadline_period_min_us",
    "sched_domain",
    "sched_energy_aware",
    "sched_itmt_enabled",
    "sched_latency_ns",
    "sched_migration_cost_ns",
    "sched_min_granularity_ns",
    "sched_nr_migrate",
    "sched_numa_balancing_scan_delay_ms",
    "sched_numa_balancing_scan_period_max_ms",
    "sched_numa_balancing_scan_period_min_ms",
    "sched_numa_balancing_scan_size_mb",
    "sched_numa_balancing_settle_count",
    "sched_rr_timeslice_ms",
    "sched_rt_period_us",
    "sched_rt_runtime_us",
    "sched_schedstats",
    "sched_shares_window_ns",
    "sched_time_avg_ms",
    "sched_tunable_scaling",
    "sched_util_clamp_max",
    "sched_util_clamp_min",
    "sched_util_clamp_min_rt_default",
    "sched_wakeup_granularity_ns",
];

/// `(name, value)` of each `/proc/sys/kernel/sched_*` entry, sorted by name.
fn read_sched_sysctls() -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir("/proc/sys/kernel") else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = dir
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("sched_").then(|| {
                let value = std::fs::read_to_string(e.path()).unwrap_or_default();
                (name, value.trim().to_string())
            })
        })
        .collect();
    out.sort();
    out
}

/// A note naming the host's scheduler tunables that no mainline kernel has (a vendor's
/// patched scheduler: its rules are not in the model, so `-m host` may differ from the
/// machine by more than the model's error). `None` when all are mainline.
pub fn unknown_sched_sysctls_note(sysctls: &[(String, String)]) -> Option<String> {
    let unknown: Vec<String> = sysctls
        .iter()
        .filter(|(name, _)| !UPSTREAM_SCHED_SYSCTLS.contains(&name.as_str()))
        .map(|(name, value)| format!("kernel.{name} = {value}"))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "non-mainline scheduler tunables {} (a patched scheduler; the model follows \
             mainline)",
            unknown.join(", ")
        )
    })
}

/// What makes this host's kernel differ from the model beyond its settings: autogroup's
/// task groups and non-mainline scheduler tunables (the notes [`read`] also gives), for a
/// comparison of `-m host` with real runs to print beside its score.
pub fn model_caveats() -> Vec<String> {
    let autogroup = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .ok()
        .and_then(|text| autogroup_note(&text));
    autogroup
        .into_iter()
        .chain(unknown_sched_sysctls_note(&read_sched_sysctls()))
        .collect()
}

/// Read the running kernel's settings, once per process: every run of a `-m host` sweep
/// uses the same reading (and starts at most one `gzip` for /proc/config.gz).
pub fn read() -> HostKernel {
    static HOST: std::sync::OnceLock<HostKernel> = std::sync::OnceLock::new();
    HOST.get_or_init(read_uncached).clone()
}

/// Read the running kernel's settings now.
pub fn read_uncached() -> HostKernel {
    let mut host = HostKernel {
        release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string()),
        ..HostKernel::default()
    };
    match read_config() {
        Some((text, from)) => {
            let (hz, preempt) = parse_config(&text);
            match hz {
                Some(hz) => host.notes.push(format!("HZ={hz} from {from}")),
                None => host.notes.push(format!("no CONFIG_HZ in {from}")),
            }
            host.hz = hz;
            if let Some(p) = preempt {
                host.notes
                    .push(format!("preemption {p:?} from {from} (build default)"));
            }
            host.preempt = preempt;
        }
        None => host.notes.push(
            "could not read the kernel config (/boot/config-<release>, /proc/config.gz): \
             HZ and the build's preemption model stay as the profile says"
                .into(),
        ),
    }
    if let Ok(cmdline) = std::fs::read_to_string("/proc/cmdline")
        && let Some(p) = cmdline
            .split_whitespace()
            .find_map(|w| w.strip_prefix("preempt="))
            .and_then(preempt_from_name)
    {
        host.preempt = Some(p);
        host.notes
            .push(format!("preemption {p:?} from preempt= on /proc/cmdline"));
    }
    host.notes.extend(model_caveats());
    match std::fs::read_to_string("/sys/kernel/debug/sched/preempt") {
        Ok(text) => {
            if let Some(p) = parse_debugfs_preempt(&text) {
                host.preempt = Some(p);
                host.notes.push(format!(
                    "preemption {p:?} from /sys/kernel/debug/sched/preempt"
                ));
            }
        }
        Err(_) => host.notes.push(
            "could not read /sys/kernel/debug/sched/preempt (debugfs; a runtime preempt \
             change would be missed)"
                .into(),
        ),
    }
    host
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hz_and_preemption_from_a_config() {
        let cfg = "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n\
                   CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n";
        assert_eq!(parse_config(cfg), (Some(250), Some(PreemptModel::None)));
        assert_eq!(
            parse_config("CONFIG_PREEMPT=y\nCONFIG_HZ=1000\n"),
            (Some(1000), Some(PreemptModel::Full))
        );
        assert_eq!(
            parse_debugfs_preempt("none voluntary (full) lazy\n"),
            Some(PreemptModel::Full)
        );
    }

    #[test]
    fn only_non_mainline_sched_sysctls_are_noted() {
        let mainline = vec![
            ("sched_autogroup_enabled".to_string(), "1".to_string()),
            ("sched_rt_runtime_us".to_string(), "950000".to_string()),
        ];
        assert_eq!(unknown_sched_sysctls_note(&mainline), None);
        let mut patched = mainline;
        patched.push(("sched_vcpu_pack".to_string(), "15".to_string()));
        let note = unknown_sched_sysctls_note(&patched).unwrap();
        assert!(note.contains("kernel.sched_vcpu_pack = 15"), "{note}");
        assert!(!note.contains("sched_rt_runtime_us"), "{note}");
    }

    #[test]
    fn autogroup_is_noted_only_when_enabled() {
        assert!(autogroup_note("1\n").is_some_and(|n| n.contains("autogroup")));
        assert_eq!(autogroup_note("0\n"), None);
        assert_eq!(autogroup_note(""), None);
    }
}
