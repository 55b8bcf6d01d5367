//! Kernel profiles: named feature/tunable sets, one per kernel release that the
//! investigations this tool exists for compare (`-k v6.15`, `[kernel] profile = "v6.6"`).
//!
//! A profile is data (ARCHITECTURE.md §1.4): its fair-class implementation ([`SchedMode`]:
//! CFS before v6.6, EEVDF from v6.6), its feature values — derived from each feature's
//! history in [`super::features`], so a profile and the registry cannot disagree — and the
//! tunables that changed between releases. Each profile constant's doc comment lists what
//! changed in that release with the commits, and states what is uncertain.
//!
//! What a profile does *not* capture: code changes with no feature bit and no model switch
//! (e.g. the v6.17 `RUN_TO_PARITY` vprot rework, the v6.10 function renames, the v6.14
//! `h_nr_queued`/`h_nr_runnable` split). Model code that must differ for those reads
//! [`Profile::version`] — keep such checks few and name the commit next to them.

use super::features::{Feature, Features};
use super::sysctl::Sysctls;
use super::version::{KernelVersion, v};
use crate::error::{InputError, InputResult};

/// Which fair-class implementation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SchedMode {
    /// CFS: vruntime-ordered tree, `sched_latency`/`min_granularity` slices, wakeup
    /// granularity preemption, buddies (kernels before v6.6).
    Cfs,
    /// EEVDF: eligibility + virtual deadlines, base slice, lag (v6.6+; 147f3efaa241
    /// 'sched/fair: Implement an EEVDF-like scheduling policy', 5e963f2bd465 'sched/fair:
    /// Commit to EEVDF').
    Eevdf,
}

impl SchedMode {
    pub fn for_version(version: KernelVersion) -> SchedMode {
        if version >= v(6, 6) {
            SchedMode::Eevdf
        } else {
            SchedMode::Cfs
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SchedMode::Cfs => "cfs",
            SchedMode::Eevdf => "eevdf",
        }
    }
}

/// A named kernel profile.
#[derive(Debug)]
pub struct Profile {
    pub name: &'static str,
    pub version: KernelVersion,
    /// One line for `schedlab list profiles`: what defines this release for the scheduler.
    pub summary: &'static str,
}

/// v3.16 (Aug 2014). CFS; pre-4.9 `select_idle_sibling`; NUMA balancing of the 3.15–3.16
/// era (the seed regressions of the hackbench/numactl investigation). Features: the CFS set
/// (GENTLE_FAIR_SLEEPERS, START_DEBIT, LAST_BUDDY on, NEXT_BUDDY off), LB_BIAS on (cpu_load[]
/// based source/target load), TTWU_QUEUE on (cross-LLC only in this era),
/// NEWIDLE_MIGRATION_COST_GATE on. `NONTASK_CAPACITY` was called NONTASK_POWER then.
/// No SIS_PROP, SIS_UTIL, WA_IDLE, UTIL_EST, RT_PUSH_IPI (v4.1), ATTACH_AGE_LOAD.
pub const V3_16: Profile = Profile {
    name: "v3.16",
    version: v(3, 16),
    summary: "CFS, LB_BIAS, old select_idle_sibling, 3.16 NUMA balancing",
};

/// v3.17 (Oct 2014). Same SCHED_FEAT set as v3.16; the release differs in NUMA balancing:
/// `NUMA_MIGRATE_PREFERRED_BUSY` on (a43455a1d572, task_numa_migrate searches a busy
/// preferred node).
pub const V3_17: Profile = Profile {
    name: "v3.17",
    version: v(3, 17),
    summary: "CFS, as v3.16 with the 3.17 NUMA placement changes",
};

/// v4.2 (Aug 2015). CFS. Adds RT_PUSH_IPI (b6366f048e0c, v4.1; no fair effect). NUMA:
/// Rik van Riel's "Only consider less busy nodes as numa balancing destinations"
/// (6f9aad0bc372) era: `NUMA_HAS_CAPACITY` on. Still LB_BIAS, no SIS_PROP (v4.13), no WA_IDLE (v4.13),
/// no ATTACH_AGE_LOAD (assumed v4.8, uncertain).
pub const V4_2: Profile = Profile {
    name: "v4.2",
    version: v(4, 2),
    summary: "CFS, LB_BIAS, v4.2 NUMA destination selection",
};

/// v5.15 (Oct 2021, LTS). CFS. Since v4.x: SIS_PROP (1ad3aaf3fcd2, v4.13), WA_IDLE /
/// WA_WEIGHT / WA_BIAS (v4.13 wake_affine rewrite), UTIL_EST (v4.17), UTIL_EST_FASTUP
/// (v5.7), ALT_PERIOD / BASE_SLICE (0c2de3f054a5, v5.13), LB_BIAS off (fdf5f315d5cf, v4.20).
/// The last release with the `avg_idle < sysctl_sched_migration_cost` newidle gate
/// (NEWIDLE_MIGRATION_COST_GATE on; removed by c5b0a7eefc70 in v5.16). RT_RUNTIME_SHARE on
/// (disabled in v5.16, release of 2586af1ac187 uncertain; no fair effect).
pub const V5_15: Profile = Profile {
    name: "v5.15",
    version: v(5, 15),
    summary: "CFS, SIS_PROP, last with the newidle migration_cost gate",
};

/// v6.5 (Aug 2023). The last CFS release. Since v5.15: newidle gate removed (v5.16),
/// SIS_UTIL on / SIS_PROP off (70fb5ccf2ebb, v6.0), should_we_balance's newidle bail-out
/// (v6.0), asym-packing whole-core idle check (v6.5). No whole-core check in
/// should_we_balance yet (SHOULD_WE_BALANCE_IDLE_CORE off).
pub const V6_5: Profile = Profile {
    name: "v6.5",
    version: v(6, 5),
    summary: "last CFS release; SIS_UTIL, no newidle migration_cost gate",
};

/// v6.6 (Oct 2023, LTS). EEVDF replaces CFS (147f3efaa241, 5e963f2bd465 'Commit to
/// EEVDF'): PLACE_LAG, PLACE_DEADLINE_INITIAL, RUN_TO_PARITY on; GENTLE_FAIR_SLEEPERS,
/// START_DEBIT, LAST_BUDDY, ALT_PERIOD, BASE_SLICE gone; base slice 0.75 ms (normalized).
/// The next buddy is only picked with NEXT_BUDDY (off) until v6.14 (PICK_BUDDY off here).
/// should_we_balance() whole-core check (b1bfeab9b002, SHOULD_WE_BALANCE_IDLE_CORE on) and
/// group_smt_balance / sibling_imbalance arrive. HZ_BW added (88c56cfeaec4).
pub const V6_6: Profile = Profile {
    name: "v6.6",
    version: v(6, 6),
    summary: "EEVDF (PLACE_LAG, RUN_TO_PARITY), should_we_balance whole-core check",
};

/// v6.9 (May 2024). EEVDF as v6.6. SIS_PROP was removed (v6.7/v6.8, off anyway);
/// UTIL_EST_FASTUP made permanent (bit removed). The v6.9 reference point of the schbench
/// "RPS dropped after v6.9" investigation: no DELAY_DEQUEUE, no dl_server yet; RT throttling
/// (RT_DEFAULT_BANDWIDTH, 950 ms per 1 s) still protects fair tasks from RT hogs, as in
/// every earlier profile.
pub const V6_9: Profile = Profile {
    name: "v6.9",
    version: v(6, 9),
    summary: "EEVDF before delayed dequeue and the fair dl_server",
};

/// v6.12 (Nov 2024, LTS). DELAY_DEQUEUE and DELAY_ZERO (152e11f6df29, 54a58a787791),
/// PLACE_REL_DEADLINE (82e9d0456e06), PREEMPT_SHORT (85e511df3cec), custom slices, the fair
/// dl_server on by default (557a6bfc662c, DL_SERVER on) replacing the default RT throttling
/// (5f6bd380c7bd, RT_DEFAULT_BANDWIDTH off), sched_ext.
/// HZ_BW's bit removed (a58501fb8320), behaviour kept. Base slice still 0.75 ms in v6.12.0
/// (the 0.70 ms change 2ae891b82695 was backported to 6.12.31 stable; not modelled here).
pub const V6_12: Profile = Profile {
    name: "v6.12",
    version: v(6, 12),
    summary: "DELAY_DEQUEUE, PREEMPT_SHORT, PLACE_REL_DEADLINE, fair dl_server",
};

/// v6.15 (May 2025). Since v6.12: lazy preemption available (v6.13, `preempt=lazy`),
/// DOUBLE_TICK removed (e31488c9df27, v6.13, was off), PICK_BUDDY splits picking the next
/// buddy from NEXT_BUDDY (2a77e4be12cb, v6.14: PICK_BUDDY on), h_nr_queued/h_nr_runnable
/// split (v6.14), base slice 0.70 ms (2ae891b82695 'sched: Reduce the default slice to avoid
/// tasks getting an extra tick', v6.15). The ineligible-task filter of can_migrate_task is
/// believed to be from about this release (uncertain).
pub const V6_15: Profile = Profile {
    name: "v6.15",
    version: v(6, 15),
    summary: "PICK_BUDDY, 0.70 ms base slice, lazy preemption available",
};

/// v6.17 (Sep 2025). Newidle failure bump (155213a2aed4, NEWIDLE_FAIL_BUMP on), less
/// aggressive dl_server stop (cccb45d7c429, DL_SERVER_LAZY_STOP on), RUN_TO_PARITY bounded
/// by the smallest queued slice (vprot) and always resched at the end of protection
/// (0b9ca2dcabc3), SMP unconditional. The ttwu_queue controls (TTWU_QUEUE_DELAYED /
/// _DEFAULT) of the same 2025 series were *not* merged (off).
pub const V6_17: Profile = Profile {
    name: "v6.17",
    version: v(6, 17),
    summary: "newidle failure bump, lazy dl_server stop, vprot run-to-parity",
};

/// v6.18 (Nov 2025), as shipped by 6.18.y stable from 6.18.5: proportional newidle balance
/// (33cf66d88306, NI_RANDOM on) and the revert of the failure bump (d206fbad9328,
/// NEWIDLE_FAIL_BUMP off) — both mainline in v6.19 and backported to 6.18.5. Plain v6.18.0
/// still had the bump and no NI_RANDOM: model it with `NI_RANDOM = false,
/// NEWIDLE_FAIL_BUMP = true`. NEXT_BUDDY stays off (turned on in v6.19 by aceccac58ad7).
/// The newest profile and the default.
pub const V6_18: Profile = Profile {
    name: "v6.18",
    version: v(6, 18),
    summary: "proportional newidle balance (NI_RANDOM), bump reverted (6.18.5+)",
};

/// Every profile, oldest first.
pub static PROFILES: &[Profile] = &[
    V3_16, V3_17, V4_2, V5_15, V6_5, V6_6, V6_9, V6_12, V6_15, V6_17, V6_18,
];

/// The profile used when a scenario names none: the newest.
pub const DEFAULT_PROFILE: &str = "v6.18";

impl Profile {
    /// The profile called `name` (`v6.12`; `6.12` is accepted too).
    pub fn by_name(name: &str) -> Option<&'static Profile> {
        let version = KernelVersion::parse(name)?;
        PROFILES.iter().find(|p| p.version == version)
    }

    /// Like [`Profile::by_name`], with an [`InputError`] listing the profiles.
    pub fn lookup(name: &str, origin: &str, key: &str) -> InputResult<&'static Profile> {
        Profile::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
            InputError::with_key(
                origin,
                key,
                format!(
                    "unknown kernel profile '{}'{}; accepted: {} (see `schedlab list \
                     profiles`)",
                    crate::input::limits::clip(name),
                    super::did_you_mean(name, &names),
                    names.join(", ")
                ),
            )
        })
    }

    /// The newest profile.
    pub fn default_profile() -> &'static Profile {
        Profile::by_name(DEFAULT_PROFILE).expect("default profile exists")
    }

    pub fn mode(&self) -> SchedMode {
        SchedMode::for_version(self.version)
    }

    /// The feature values of this release.
    pub fn features(&self) -> Features {
        Features::at_version(self.version)
    }

    /// Whether `feat` is on in this release.
    pub fn feature(&self, feat: Feature) -> bool {
        feat.value_at(self.version)
    }

    /// The tunables of this release (kernel defaults; the ones that changed over time set
    /// per version).
    pub fn sysctls(&self) -> Sysctls {
        let mut s = Sysctls::default();
        // 2ae891b82695 (v6.15): 0.75 ms -> 0.70 ms normalized base slice.
        if self.version < v(6, 15) {
            s.sched_base_slice_ns = 750_000;
        }
        s
    }

    /// Whether `preempt=lazy` exists in this release (PREEMPT_LAZY, v6.13).
    pub fn has_lazy_preemption(&self) -> bool {
        self.version >= v(6, 13)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Feature::*;

    #[test]
    fn names_and_lookup() {
        for p in PROFILES {
            assert_eq!(Profile::by_name(p.name).unwrap().name, p.name);
            assert_eq!(p.name, p.version.to_string());
        }
        assert_eq!(Profile::by_name("6.12").unwrap().name, "v6.12");
        assert!(Profile::by_name("v6.7").is_none());
        let e = Profile::lookup("v6.1", "-k", "kernel.profile").unwrap_err();
        assert_eq!(e.origin, "-k");
        assert!(e.message.contains("v6.12"), "{}", e.message);
        assert_eq!(Profile::default_profile().name, "v6.18");
        let newest = PROFILES.iter().max_by_key(|p| p.version).unwrap();
        assert_eq!(newest.name, DEFAULT_PROFILE, "default must be the newest");
    }

    #[test]
    fn modes() {
        for p in PROFILES {
            let want = if p.version < v(6, 6) {
                SchedMode::Cfs
            } else {
                SchedMode::Eevdf
            };
            assert_eq!(p.mode(), want, "{}", p.name);
        }
        assert_eq!(Profile::by_name("v6.5").unwrap().mode(), SchedMode::Cfs);
        assert_eq!(Profile::by_name("v6.6").unwrap().mode(), SchedMode::Eevdf);
    }

    #[test]
    fn newest_profile_equals_features_h_defaults() {
        let p = Profile::default_profile();
        assert_eq!(p.features(), Features::defaults());
    }

    fn on(p: &str, f: Feature) -> bool {
        Profile::by_name(p).unwrap().feature(f)
    }

    #[test]
    fn release_facts() {
        // newidle gate: on up to v5.15 (removed by c5b0a7eefc70 in v5.16).
        assert!(on("v3.16", NEWIDLE_MIGRATION_COST_GATE));
        assert!(on("v5.15", NEWIDLE_MIGRATION_COST_GATE));
        assert!(!on("v6.5", NEWIDLE_MIGRATION_COST_GATE));
        assert!(!on("v6.6", NEWIDLE_MIGRATION_COST_GATE));
        // should_we_balance whole-core check from v6.6.
        assert!(!on("v6.5", SHOULD_WE_BALANCE_IDLE_CORE));
        assert!(on("v6.6", SHOULD_WE_BALANCE_IDLE_CORE));
        // EEVDF features.
        assert!(!on("v6.5", PLACE_LAG));
        assert!(on("v6.6", PLACE_LAG) && on("v6.6", RUN_TO_PARITY));
        assert!(!on("v6.9", DELAY_DEQUEUE) && !on("v6.9", PREEMPT_SHORT));
        assert!(on("v6.12", DELAY_DEQUEUE) && on("v6.12", PREEMPT_SHORT));
        assert!(!on("v6.9", DL_SERVER) && on("v6.12", DL_SERVER));
        // CFS-only features end with v6.5.
        assert!(on("v6.5", GENTLE_FAIR_SLEEPERS) && !on("v6.6", GENTLE_FAIR_SLEEPERS));
        assert!(on("v5.15", START_DEBIT) && on("v5.15", LAST_BUDDY));
        // newidle: bump only in v6.17; NI_RANDOM from v6.18.
        assert!(!on("v6.15", NEWIDLE_FAIL_BUMP));
        assert!(on("v6.17", NEWIDLE_FAIL_BUMP) && !on("v6.17", NI_RANDOM));
        assert!(!on("v6.18", NEWIDLE_FAIL_BUMP) && on("v6.18", NI_RANDOM));
        // TTWU_QUEUE everywhere; proposals off everywhere.
        for p in PROFILES {
            assert!(p.feature(TTWU_QUEUE), "{}", p.name);
            assert!(!p.feature(TTWU_QUEUE_DELAYED) && !p.feature(TTWU_QUEUE_DEFAULT));
            assert!(!p.feature(NEXT_BUDDY), "{}", p.name);
        }
        // Buddies: v6.6-v6.13 EEVDF ignored cfs_rq->next unless NEXT_BUDDY.
        assert!(on("v5.15", PICK_BUDDY) && !on("v6.12", PICK_BUDDY) && on("v6.15", PICK_BUDDY));
        // SIS
        assert!(!on("v4.2", SIS_PROP) && on("v5.15", SIS_PROP) && !on("v6.5", SIS_PROP));
        assert!(!on("v5.15", SIS_UTIL) && on("v6.5", SIS_UTIL));
        assert!(on("v4.2", LB_BIAS) && !on("v5.15", LB_BIAS));
        // NUMA balancing variants of the 2014-2015 web-server regression (issue 13).
        assert!(
            !on("v3.16", NUMA_MIGRATE_PREFERRED_BUSY) && on("v3.17", NUMA_MIGRATE_PREFERRED_BUSY)
        );
        assert!(!on("v3.17", NUMA_HAS_CAPACITY) && on("v4.2", NUMA_HAS_CAPACITY));
        assert!(!on("v4.2", NUMA_HAS_CAPACITY_PCT) && !on("v5.15", NUMA_HAS_CAPACITY));
        assert!(on("v3.16", NUMA_FAVOUR_HIGHER) && on("v4.2", NUMA_FAVOUR_HIGHER));
        assert!(!on("v5.15", NUMA_FAVOUR_HIGHER) && on("v5.15", NUMA_LOCALITY_TRISTATE));
        assert!(!on("v4.2", NUMA_CLASSIFY) && on("v5.15", NUMA_CLASSIFY));
        for p in PROFILES {
            assert!(!p.feature(NUMA_RESIST_LOWER), "{}", p.name);
        }
    }

    #[test]
    fn base_slice_per_release() {
        assert_eq!(
            Profile::by_name("v6.6")
                .unwrap()
                .sysctls()
                .sched_base_slice_ns,
            750_000
        );
        assert_eq!(
            Profile::by_name("v6.12")
                .unwrap()
                .sysctls()
                .sched_base_slice_ns,
            750_000
        );
        assert_eq!(
            Profile::by_name("v6.15")
                .unwrap()
                .sysctls()
                .sched_base_slice_ns,
            700_000
        );
        let s = Profile::by_name("v6.12").unwrap().sysctls();
        for (cpus, ms_x100) in [(1, 75), (2, 150), (4, 225), (8, 300), (224, 300)] {
            assert_eq!(
                s.scaled_base_slice_ns(cpus),
                ms_x100 * 10_000,
                "{cpus} CPUs"
            );
        }
    }
}
