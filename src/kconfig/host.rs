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
}
