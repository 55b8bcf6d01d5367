//! Idle-state tables per machine, as the kernel's cpuidle driver registers them, and the
//! host's table read from sysfs.
//!
//! Sources (v6.12 unless said):
//! - Intel: `drivers/idle/intel_idle.c` (`nehalem_cstates`, `hsw_cstates` — Haswell-EP
//!   exposes C1/C1E/C3/C6 only, the client C7s–C10 need MWAIT sub-states servers lack —,
//!   `skx_cstates`, `icx_cstates`, `spr_cstates`), preceded by the `POLL` state
//!   (`cpuidle_poll_state_init()`, 0/0, polling).
//! - AMD EPYC: `acpi_idle` (`drivers/acpi/processor_idle.c`): POLL, then the firmware's
//!   `_CST` entries with `target_residency = latency × latency_factor (2)`. C1 (FFH MWAIT)
//!   latency 1 µs and C2 (I/O port) latency 400 µs are the values EPYC 7003 (Milan)
//!   firmware reports; Turin is given the same table (an assumption: its `_CST` latencies
//!   are firmware data, not in the kernel tree).
//! - POWER (pseries dedicated LPAR): `drivers/cpuidle/cpuidle-pseries.c`
//!   `dedicated_states[]`: snooze 0/0 (polling loop) and CEDE 10/100 µs.
//! - arm64: `drivers/cpuidle/cpuidle-psci.c` state 0 `WFI` (1/1 µs, not polling), then the
//!   DT `arm,idle-state` nodes with `exit_latency = entry + exit latency`,
//!   `target_residency = min-residency`. Ampere Altra describes its states in ACPI `_LPI`
//!   (firmware data); the values used are the arm64 reference platform's
//!   (`arch/arm64/boot/dts/arm/juno.dts`: cpu-sleep-0 300+1200/2000 µs, cluster-sleep-0
//!   400+1200/2500 µs) — an approximation of a core power-down and a cluster state.
//! - `hybrid-10` and `adl-i9` (Alder Lake) use `skx_cstates` as before; `adl_cstates`
//!   adds client C8/C10 states the scheduler workloads here never reach.

use serde::{Deserialize, Serialize};

use crate::topology::{Arch, Machine};

use super::Governor;

/// One idle state as cpuidle describes it (`struct cpuidle_state`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    pub name: String,
    /// Time from the wake-up signal to the CPU running code again.
    pub exit_latency_ns: u64,
    /// Minimum residency for the state to pay off (`target_residency_ns`).
    pub target_residency_ns: u64,
    /// `CPUIDLE_FLAG_POLLING`: the CPU spins with TIF_POLLING_NRFLAG set, so a wakeup needs
    /// no IPI and costs no exit latency.
    #[serde(default)]
    pub polling: bool,
    /// The state waits in MWAIT on the idle task's thread flags with TIF_POLLING_NRFLAG set
    /// (`mwait_idle_with_hints()`: intel_idle's states, acpi_idle's FFH MWAIT states), so a
    /// remote wakeup or kick only sets need_resched (`set_nr_if_polling()`,
    /// `set_nr_and_not_polling()`): no IPI is sent or handled, but the CPU still pays the
    /// state's exit latency. False for HLT, I/O-port, H_CEDE and WFI states, which clear the
    /// flag first (`call_cpuidle()`'s `current_clr_polling_and_test()`) and need an IPI.
    #[serde(default)]
    pub mwait: bool,
    /// The hardware exit when the state's package-wide part is not reached, where that
    /// differs from `exit_latency_ns`. Intel server C6 (Skylake-SP to Emerald Rapids) is
    /// core C6 (CC6) or package C6 (PC6), and PC6 is entered "only when all CPUs across all
    /// sockets (packages) have transitioned to CC6" (Intel pepc documentation, "C6P",
    /// Artem Bityutskiy, 2025); intel_idle declares PC6's exit as the state's
    /// `exit_latency` ("assuming the worst case"), which the governors, PM QoS and
    /// `find_idlest_cpu()` keep using. The engine charges this exit instead whenever some
    /// other CPU is not in a state with a package part: on a machine running a benchmark,
    /// nearly always. `None`: the declared exit is the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_exit_latency_ns: Option<u64>,
}

fn st(name: &str, exit_us: u64, residency_us: u64, polling: bool) -> IdleState {
    IdleState {
        name: name.into(),
        exit_latency_ns: exit_us * 1000,
        target_residency_ns: residency_us * 1000,
        polling,
        mwait: false,
        core_exit_latency_ns: None,
    }
}

/// An MWAIT state (see [`IdleState::mwait`]).
fn mw(name: &str, exit_us: u64, residency_us: u64) -> IdleState {
    IdleState {
        mwait: true,
        ..st(name, exit_us, residency_us, false)
    }
}

/// `POLL` (`drivers/cpuidle/poll_state.c`).
fn poll() -> IdleState {
    st("POLL", 0, 0, true)
}

/// intel_idle `skx_cstates` (Skylake-SP).
pub fn skx() -> Vec<IdleState> {
    vec![
        poll(),
        mw("C1", 2, 2),
        mw("C1E", 10, 20),
        mw("C6", 133, 600),
    ]
}

/// intel_idle `icx_cstates` (Ice Lake-SP).
pub fn icx() -> Vec<IdleState> {
    vec![poll(), mw("C1", 1, 1), mw("C1E", 4, 4), mw("C6", 170, 600)]
}

/// intel_idle `spr_cstates` (Sapphire Rapids). C6's declared 290 µs is package C6's exit;
/// core C6 alone exits in ~200 µs, both at the 99.99th percentile as Intel's pepc notes
/// ("C6P": "~200µs at 99.99th precentile on Sapphire Rapids Xeon" for CC6, "~300µs" for
/// PC6) give them ([`IdleState::core_exit_latency_ns`]).
pub fn spr() -> Vec<IdleState> {
    vec![
        poll(),
        mw("C1", 1, 1),
        mw("C1E", 2, 4),
        IdleState {
            core_exit_latency_ns: Some(200_000),
            ..mw("C6", 290, 800)
        },
    ]
}

/// intel_idle `hsw_cstates` as far as Haswell-EP enables them.
pub fn hsx() -> Vec<IdleState> {
    vec![
        poll(),
        mw("C1", 2, 2),
        mw("C1E", 10, 20),
        mw("C3", 33, 100),
        mw("C6", 133, 400),
    ]
}

/// intel_idle `nehalem_cstates`.
pub fn nehalem() -> Vec<IdleState> {
    vec![
        poll(),
        mw("C1", 3, 6),
        mw("C1E", 10, 20),
        mw("C3", 20, 80),
        mw("C6", 200, 800),
    ]
}

/// acpi_idle on AMD EPYC as the firmware's `_CST` declares it (Milan; Turin assumed alike):
/// what sysfs shows, with no core-only exit.
pub fn amd_epyc() -> Vec<IdleState> {
    vec![poll(), mw("C1", 1, 2), st("C2", 400, 800, false)]
}

/// Wakeup out of C2 on Zen 3 (Milan) when the package-wide part is not reached, in µs:
/// fitted per machine family (docs/validation.md, "AMD C2: the core's own exit"). Source: K
/// Prateek Nayak's old-schbench `-m 2 -t 2 -r 30` p99 wakeup latency on his Milan machine,
/// 33.0 µs on a 5.19-rc2 tip:sched/core with SIS_PROP (the base of the unscored case
/// `validation/cases/milan-schbench-2w-sis-util.toml`, which runs on v6.5). Each worker's
/// CPU is in C2 after its sleep and nothing else waits, so the p99 is the idle exit plus the
/// wakeup path; the model reproduces it with 26 µs.
pub const MILAN_C2_CORE_EXIT_US: u64 = 26;
/// The same for Zen 4/5 (turin-2s): Swapnil Sapkal's old-schbench p99 with 1 worker on a 2 x
/// 128C 4th-generation EPYC, 6.5-rc1, is 56 µs (the mail of the Turin TTWU_QUEUE_L2C cases);
/// reproduced with a 49 µs core exit. Fitted on Zen 4 and assumed for Zen 5.
pub const TURIN_C2_CORE_EXIT_US: u64 = 49;

/// The fitted C2 core exit of a preset and what it was fitted to (one home for both, read by
/// [`table_for`] and [`fitted_inputs`]); None for presets without one.
fn fitted_c2_core_exit(machine_name: &str) -> Option<(u64, &'static str)> {
    match machine_name {
        "milan-2s" => Some((
            MILAN_C2_CORE_EXIT_US,
            "fitted to old schbench -m 2 -t 2 p99 33.0 us on Milan, the base of \
             milan-schbench-2w-sis-util",
        )),
        "turin-2s" | "turin-dense-2s" => Some((
            TURIN_C2_CORE_EXIT_US,
            "fitted to old schbench -m 2 -t 1 p99 56 us on a 4th-generation EPYC \
             (Swapnil Sapkal, 6.5-rc1)",
        )),
        _ => None,
    }
}

/// The fitted inputs among `states`, the idle states `machine_name` runs with, one line each
/// for the validation scoreboard (validation/README.md: a fitted input is global per machine
/// family and names what it was fitted to). A scenario's own table that does not carry the
/// fitted value does not use it.
pub fn fitted_inputs(machine_name: &str, states: &[IdleState]) -> Vec<String> {
    let Some((us, fitted_to)) = fitted_c2_core_exit(machine_name) else {
        return Vec::new();
    };
    let used = states
        .iter()
        .any(|s| s.name == "C2" && s.core_exit_latency_ns == Some(us * 1000));
    if used {
        vec![format!("{machine_name} C2 core exit {us} us ({fitted_to})")]
    } else {
        Vec::new()
    }
}

/// [`amd_epyc`] with C2's core-only exit ([`IdleState::core_exit_latency_ns`]): the declared
/// 400 µs is taken as the package-wide exit (package C6 once every core is in CC6, as
/// intel_idle declares PC6's), charged only when every other CPU is in C2 too; otherwise
/// the measured wakeups say the core exits in tens of microseconds.
pub fn amd_epyc_with_core_exit(core_exit_us: u64) -> Vec<IdleState> {
    let mut states = amd_epyc();
    for s in states.iter_mut().filter(|s| s.name == "C2") {
        s.core_exit_latency_ns = Some(core_exit_us * 1000);
    }
    states
}

/// cpuidle-pseries dedicated-processor states.
pub fn pseries_dedicated() -> Vec<IdleState> {
    vec![st("snooze", 0, 0, true), st("CEDE", 10, 100, false)]
}

/// cpuidle-psci: WFI + a CPU and a cluster power-down state (Juno DT values).
pub fn arm64_psci() -> Vec<IdleState> {
    vec![
        st("WFI", 1, 1, false),
        st("cpu-sleep-0", 1500, 2000, false),
        st("cluster-sleep-0", 1600, 2500, false),
    ]
}

/// The idle-state table of `machine`: by preset name, else by architecture (see below).
pub fn table_for(machine: &Machine) -> Vec<IdleState> {
    // Milan and Turin: acpi_idle's table with C2's fitted core exit.
    if let Some((core_exit_us, _)) = fitted_c2_core_exit(&machine.name) {
        return amd_epyc_with_core_exit(core_exit_us);
    }
    match machine.name.as_str() {
        "nehalem-2s" => nehalem(),
        "haswell-2s" | "haswell-4s" => hsx(),
        "skl-2s" | "hybrid-10" | "adl-i9" => skx(),
        "spr-2s" => spr(),
        "power10-96" => pseries_dedicated(),
        "altra-2s" => arm64_psci(),
        // Topology files and test machines: powerpc ones get pseries' table; the others
        // keep the Skylake-SP table every machine used before (`Arch::Arm64` is also the
        // default of machines that do not name their architecture, so it cannot select the
        // psci table with its millisecond exit latencies).
        _ => match machine.arch {
            Arch::Powerpc => pseries_dedicated(),
            Arch::X86 => skx(),
            // arm64 has no MWAIT: the same latencies, each state woken by an IPI.
            Arch::Arm64 => skx()
                .into_iter()
                .map(|s| IdleState { mwait: false, ..s })
                .collect(),
        },
    }
}

/// What `-m host` read from sysfs.
#[derive(Debug, Clone, PartialEq)]
pub struct HostIdle {
    pub states: Vec<IdleState>,
    pub governor: Option<Governor>,
    /// The raw `current_governor` text (also when not modelled).
    pub governor_name: Option<String>,
    pub driver: Option<String>,
}

/// Read CPU 0's idle states (`/sys/devices/system/cpu/cpu0/cpuidle/state*/{name,latency,
/// residency}`, µs) and the governor (`/sys/devices/system/cpu/cpuidle/current_governor`,
/// else `current_governor_ro`) under `root` (normally `/sys/devices/system/cpu`). None when
/// the host exposes no cpuidle states. States named `POLL` (poll_state.c) or `snooze` are
/// polling states; a state whose `desc` names MWAIT is an [`IdleState::mwait`] state.
pub fn read_host(root: &std::path::Path) -> Option<HostIdle> {
    let read = |p: std::path::PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mut states = Vec::new();
    for i in 0..32 {
        let dir = root.join(format!("cpu0/cpuidle/state{i}"));
        let Some(name) = read(dir.join("name")) else {
            break;
        };
        let lat: u64 = read(dir.join("latency"))?.parse().ok()?;
        let res: u64 = read(dir.join("residency"))?.parse().ok()?;
        let polling = name == "POLL" || name == "snooze";
        // intel_idle names its states' desc "MWAIT 0x..", acpi_idle "ACPI FFH MWAIT 0x..".
        let mwait = read(dir.join("desc")).is_some_and(|d| d.contains("MWAIT"));
        states.push(IdleState {
            mwait,
            ..st(&name, lat, res, polling)
        });
    }
    if states.is_empty() {
        return None;
    }
    let gov_dir = root.join("cpuidle");
    let governor_name = read(gov_dir.join("current_governor"))
        .or_else(|| read(gov_dir.join("current_governor_ro")));
    Some(HostIdle {
        states,
        governor: governor_name.as_deref().and_then(Governor::from_name),
        governor_name,
        driver: read(gov_dir.join("current_driver")),
    })
}

/// One line saying what `-m host` took from the cpuidle sysfs under `root`.
pub fn host_summary(root: &std::path::Path) -> String {
    match read_host(root) {
        None => format!(
            "host cpuidle: no idle states under {} (using the {} table; governor menu)",
            root.display(),
            Arch::host().name()
        ),
        Some(h) => {
            let states: Vec<String> = h
                .states
                .iter()
                .map(|s| {
                    format!(
                        "{} {}/{} us{}",
                        s.name,
                        s.exit_latency_ns / 1000,
                        s.target_residency_ns / 1000,
                        if s.polling {
                            " polling"
                        } else if s.mwait {
                            " mwait"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            let gov = match (&h.governor_name, h.governor) {
                (Some(n), Some(_)) => format!("governor {n}"),
                (Some(n), None) => format!("governor {n} (not modelled; using menu)"),
                (None, _) => "no governor file (using menu)".to_string(),
            };
            format!(
                "host cpuidle (sysfs): driver {}, {gov}, states {}",
                h.driver.as_deref().unwrap_or("?"),
                states.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_table_and_governor_read_from_a_sysfs_tree() {
        let dir = std::env::temp_dir().join(format!("schedlab-cpuidle-{}", std::process::id()));
        let write = |rel: &str, text: &str| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        for (i, (name, desc, lat, res)) in [
            ("POLL", "CPUIDLE CORE POLL IDLE", 0, 0),
            ("C1", "ACPI FFH MWAIT 0x0", 1, 2),
            ("C2", "ACPI IOPORT 0x814", 400, 800),
        ]
        .iter()
        .enumerate()
        {
            write(&format!("cpu0/cpuidle/state{i}/name"), &format!("{name}\n"));
            write(&format!("cpu0/cpuidle/state{i}/desc"), &format!("{desc}\n"));
            write(
                &format!("cpu0/cpuidle/state{i}/latency"),
                &format!("{lat}\n"),
            );
            write(
                &format!("cpu0/cpuidle/state{i}/residency"),
                &format!("{res}\n"),
            );
        }
        write("cpuidle/current_governor", "teo\n");
        write("cpuidle/current_driver", "acpi_idle\n");
        let h = read_host(&dir).unwrap();
        assert_eq!(h.states, amd_epyc());
        assert_eq!(h.governor, Some(Governor::Teo));
        assert!(
            host_summary(&dir)
                .contains("driver acpi_idle, governor teo, states POLL 0/0 us polling, C1 1/2 us mwait, C2 400/800 us")
        );
        // An unknown governor is reported but not used.
        write("cpuidle/current_governor", "ladder\n");
        assert_eq!(read_host(&dir).unwrap().governor, None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(read_host(&dir).is_none());
    }
}

#[cfg(test)]
mod fitted_tests {
    use super::*;
    use crate::topology::presets::by_name;

    /// The AMD presets carry their fitted C2 core exit and say so; the firmware table sysfs
    /// shows (`-m host`) and the Intel tables carry none.
    #[test]
    fn amd_presets_name_their_fitted_c2_exit_and_others_none() {
        let milan = table_for(&by_name("milan-2s").unwrap());
        let c2 = milan.iter().find(|s| s.name == "C2").unwrap();
        assert_eq!(
            (c2.exit_latency_ns, c2.core_exit_latency_ns),
            (400_000, Some(26_000))
        );
        let lines = fitted_inputs("milan-2s", &milan);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("milan-2s C2 core exit 26 us (fitted to"),
            "{lines:?}"
        );
        let turin = table_for(&by_name("turin-2s").unwrap());
        assert!(fitted_inputs("turin-2s", &turin)[0].contains("49 us"));
        assert!(fitted_inputs("milan-2s", &amd_epyc()).is_empty());
        let skl = table_for(&by_name("skl-2s").unwrap());
        assert!(fitted_inputs("skl-2s", &skl).is_empty());
    }
}
