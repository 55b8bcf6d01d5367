//! The NUMA-balancing variants as switches, each with the commit it mirrors and the
//! releases that had it, and [`NumaVariant`]: the switches plus the release-keyed details
//! that have no switch.
//!
//! The switches are kept here as a self-contained const table ([`NUMA_FEATURES`]) rather
//! than in the SCHED_FEAT registry, because that registry is being moved
//! (config/features.rs → kconfig/features.rs) while this is written.
//! TODO(integrator): add the seven names below to the `Feature` registry as
//! `FeatureKind::Model` (NUMA_FAVOUR_HIGHER / NUMA_RESIST_LOWER as `OtherKernel`, they were
//! real v3.13–v4.3 `SCHED_FEAT`s), with these histories, and build the run's
//! [`NumaVariant`] with [`NumaVariant::for_version`] + [`NumaVariant::set`] from the profile's
//! resolved feature values.
//!
//! Hash and release notes: a43455a1d572 was read in the tree; the others are from the
//! digest (`shared/reference/kernel-numa-balancing.md`), marked [M] where only remembered.

use super::NumaForm;
use crate::memory::migrate::RateLimit;

/// One NUMA variant switch.
#[derive(Debug)]
pub struct NumaFeatureInfo {
    pub name: &'static str,
    /// One line: what turning it on changes.
    pub doc: &'static str,
    /// From each listed release on, the behaviour is on (`true`) or off; off before the
    /// first entry. `(3, 0)` stands for every release before v3.16.
    pub history: &'static [((u16, u16), bool)],
    pub provenance: &'static str,
}

/// The switches.
pub const NUMA_FEATURES: &[NumaFeatureInfo] = &[
    NumaFeatureInfo {
        name: "NUMA_MIGRATE_PREFERRED_BUSY",
        doc: "task_numa_migrate searches the preferred node even when it has no free capacity \
              (off: the v3.16 rule, preferred node only if nr_running < task_capacity)",
        history: &[((3, 17), true)],
        provenance: "a43455a1d572 'sched/numa: Ensure task_numa_migrate() checks the preferred \
                     node' (Rik van Riel, v3.17)",
    },
    NumaFeatureInfo {
        name: "NUMA_HAS_CAPACITY",
        doc: "numa_has_capacity(): a destination node (preferred or other) is searched only if \
              the source is more loaded per unit of compute capacity (and not src has free \
              capacity while dst has none)",
        history: &[((4, 2), true), ((4, 19), false)],
        provenance: "6f9aad0bc372 [M] 'sched/numa: Only consider less busy nodes as numa \
                     balancing destinations' (Rik van Riel, 2015, v4.2); removed with \
                     task_capacity in Srikar Dronamraju's 2018 series (v4.19 [M])",
    },
    NumaFeatureInfo {
        name: "NUMA_HAS_CAPACITY_PCT",
        doc: "numa_has_capacity() compares loads with imbalance_pct slack (dst may be up to \
              ~12% busier per capacity)",
        history: &[((4, 3), true), ((4, 19), false)],
        provenance: "'sched/numa: Consider imbalance_pct when comparing loads in \
                     numa_has_capacity()' (Srikar Dronamraju, v4.3 [M]); every indexed 4.x tree \
                     has this form",
    },
    NumaFeatureInfo {
        name: "NUMA_CLASSIFY",
        doc: "numa_classify() node types: with spare capacity, move only if the load \
              balancer's imbalance allowance (adjust_numa_imbalance) accepts it, straight to \
              the cached idle CPU, and no swaps within a group / between ungrouped tasks",
        history: &[((5, 7), true)],
        provenance: "Mel Gorman's 'sched/numa: Reconcile NUMA balancing decisions with the \
                     load balancer' series, v5.7 (fb86f5b21192 [M] 'Use similar logic to the \
                     load balancer for moving between domains with spare capacity')",
    },
    NumaFeatureInfo {
        name: "NUMA_FAVOUR_HIGHER",
        doc: "can_migrate_task migrates a task even if cache hot when the move improves its \
              NUMA locality (migrate_improves_locality)",
        history: &[((3, 0), true), ((4, 3), false)],
        provenance: "SCHED_FEAT(NUMA_FAVOUR_HIGHER, true), v3.13 (3a7053b3224f 'sched/numa: \
                     Favour moving tasks towards the preferred node'); folded into the tri-state \
                     migrate_degrades_locality in v4.3 (see NUMA_LOCALITY_TRISTATE)",
    },
    NumaFeatureInfo {
        name: "NUMA_RESIST_LOWER",
        doc: "can_migrate_task treats a move that degrades NUMA locality as cache hot",
        history: &[],
        provenance: "SCHED_FEAT(NUMA_RESIST_LOWER, false), v3.13-v4.2 ('potential to prevent a \
                     task ever migrating to a new node due to CPU overload')",
    },
    NumaFeatureInfo {
        name: "NUMA_LOCALITY_TRISTATE",
        doc: "migrate_degrades_locality() returns degrade / improve / don't care and \
              overrides task_hot(); resists pulling a task off its preferred node while the \
              source rq has worse-placed tasks",
        history: &[((4, 3), true)],
        provenance: "'sched/numa: Prefer NUMA hotness over cache hotness' (Srikar Dronamraju, \
                     v4.3 [M]); the CPU_IDLE override as in v6.11-6.12",
    },
];

/// Value of a switch at a release, from its history.
pub fn feature_at(info: &NumaFeatureInfo, major: u16, minor: u16) -> bool {
    info.history
        .iter()
        .rev()
        .find(|&&(ver, _)| ver <= (major, minor))
        .is_some_and(|&(_, on)| on)
}

/// The NUMA-balancing behaviour of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaVariant {
    /// Release form of the shared code (no switch).
    pub form: NumaForm,
    pub migrate_preferred_busy: bool,
    pub has_capacity: bool,
    pub has_capacity_pct: bool,
    pub classify: bool,
    pub favour_higher: bool,
    pub resist_lower: bool,
    pub locality_tristate: bool,
    /// v3.15–v4.5 active-node mask with hysteresis (else the v4.6+ count).
    pub active_nodes_mask: bool,
    /// `NUMA_PERIOD_THRESHOLD`: 3 before v3.18, then 7.
    pub period_threshold: i64,
    /// `update_task_scan_period` slows down on migration failures (`locality[2]`, v4.0 [M]).
    pub scan_period_failed_term: bool,
    /// `update_task_scan_period` uses the private/shared ratio as a slow-down trigger
    /// (v4.14 [M]); before, it only scales speed-ups.
    pub scan_period_ps_ratio: bool,
    /// `task_numa_migrate` resets the scan period to `task_scan_min` on success (to v4.18).
    pub reset_scan_period_on_migrate: bool,
    /// The per-destination-node page migration rate limit (v3.8–v4.18).
    pub rate_limit: Option<RateLimit>,
}

impl NumaVariant {
    /// The behaviour of mainline release `major.minor`.
    pub fn for_version(major: u16, minor: u16) -> NumaVariant {
        let at = |ma: u16, mi: u16| (major, minor) >= (ma, mi);
        let form = if !at(3, 18) {
            NumaForm::V3_13
        } else if !at(4, 19) {
            NumaForm::V3_18
        } else if !at(5, 7) {
            NumaForm::V4_19
        } else {
            NumaForm::V5_7
        };
        let f = |name: &str| {
            let info = NUMA_FEATURES
                .iter()
                .find(|i| i.name == name)
                .expect("known feature");
            feature_at(info, major, minor)
        };
        NumaVariant {
            form,
            migrate_preferred_busy: f("NUMA_MIGRATE_PREFERRED_BUSY"),
            has_capacity: f("NUMA_HAS_CAPACITY"),
            has_capacity_pct: f("NUMA_HAS_CAPACITY_PCT"),
            classify: f("NUMA_CLASSIFY"),
            favour_higher: f("NUMA_FAVOUR_HIGHER"),
            resist_lower: f("NUMA_RESIST_LOWER"),
            locality_tristate: f("NUMA_LOCALITY_TRISTATE"),
            active_nodes_mask: !at(4, 6),
            period_threshold: if at(3, 18) { 7 } else { 3 },
            scan_period_failed_term: at(4, 0),
            scan_period_ps_ratio: at(4, 14),
            reset_scan_period_on_migrate: !at(4, 19),
            rate_limit: (!at(4, 19)).then_some(RateLimit::KERNEL_3_8),
        }
    }

    /// Switch `name` on or off. Unknown names are an error listing the accepted ones.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), String> {
        let slot = match name {
            "NUMA_MIGRATE_PREFERRED_BUSY" => &mut self.migrate_preferred_busy,
            "NUMA_HAS_CAPACITY" => &mut self.has_capacity,
            "NUMA_HAS_CAPACITY_PCT" => &mut self.has_capacity_pct,
            "NUMA_CLASSIFY" => &mut self.classify,
            "NUMA_FAVOUR_HIGHER" => &mut self.favour_higher,
            "NUMA_RESIST_LOWER" => &mut self.resist_lower,
            "NUMA_LOCALITY_TRISTATE" => &mut self.locality_tristate,
            _ => {
                let names: Vec<&str> = NUMA_FEATURES.iter().map(|i| i.name).collect();
                return Err(format!(
                    "unknown NUMA feature '{name}' (accepted: {})",
                    names.join(", ")
                ));
            }
        };
        *slot = on;
        Ok(())
    }

    /// Value of switch `name`.
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "NUMA_MIGRATE_PREFERRED_BUSY" => self.migrate_preferred_busy,
            "NUMA_HAS_CAPACITY" => self.has_capacity,
            "NUMA_HAS_CAPACITY_PCT" => self.has_capacity_pct,
            "NUMA_CLASSIFY" => self.classify,
            "NUMA_FAVOUR_HIGHER" => self.favour_higher,
            "NUMA_RESIST_LOWER" => self.resist_lower,
            "NUMA_LOCALITY_TRISTATE" => self.locality_tristate,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_of_the_2015_investigation() {
        let v316 = NumaVariant::for_version(3, 16);
        let v317 = NumaVariant::for_version(3, 17);
        let v42 = NumaVariant::for_version(4, 2);
        let v615 = NumaVariant::for_version(6, 15);
        assert!(!v316.migrate_preferred_busy && v317.migrate_preferred_busy);
        assert!(!v317.has_capacity && v42.has_capacity && !v42.has_capacity_pct);
        assert!(NumaVariant::for_version(4, 3).has_capacity_pct);
        assert_eq!(v316.form, NumaForm::V3_13);
        assert_eq!(v42.form, NumaForm::V3_18);
        assert_eq!(v615.form, NumaForm::V5_7);
        assert!(v615.classify && !v615.has_capacity && v615.locality_tristate);
        assert!(v316.favour_higher && !v316.resist_lower && !v316.locality_tristate);
        assert_eq!((v316.period_threshold, v42.period_threshold), (3, 7));
        assert!(v42.rate_limit.is_some() && v615.rate_limit.is_none());
        assert!(v42.active_nodes_mask && !v615.active_nodes_mask);
        // Every switch can be read and set by name; others are refused with the list.
        let mut v = v42;
        for info in NUMA_FEATURES {
            let was = v.get(info.name).unwrap();
            v.set(info.name, !was).unwrap();
            assert_eq!(v.get(info.name), Some(!was));
        }
        let err = v.set("NUMA_BOGUS", true).unwrap_err();
        assert!(err.contains("NUMA_HAS_CAPACITY") && err.contains("NUMA_BOGUS"));
    }
}
