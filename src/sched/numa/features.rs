//! The NUMA-balancing variants as switches and [`NumaVariant`]: the switches plus the
//! release-keyed details that have no switch.
//!
//! The switches live in the SCHED_FEAT registry ([`crate::kconfig::features`], listed by
//! `schedlab list features` with the commit each mirrors): `NUMA_FAVOUR_HIGHER` /
//! `NUMA_RESIST_LOWER` (real v3.13–v4.2 `SCHED_FEAT`s) and the model switches
//! `NUMA_MIGRATE_PREFERRED_BUSY`, `NUMA_HAS_CAPACITY`, `NUMA_HAS_CAPACITY_PCT`,
//! `NUMA_CLASSIFY`, `NUMA_LOCALITY_TRISTATE`. A run's variant is
//! [`NumaVariant::from_kernel`]: the release form plus the resolved feature values, so a
//! profile, a scenario's `[kernel.features]` and `--set` all reach the NUMA model.
//!
//! Hash and release notes: a43455a1d572 was read in the tree; the others are from the
//! digest (`shared/reference/kernel-numa-balancing.md`), marked `[M]` where only remembered.

use super::NumaForm;
use crate::kconfig::features::{Feature, Features};
use crate::kconfig::version::{KernelVersion, v};
use crate::memory::migrate::RateLimit;

/// The NUMA switches of the registry.
pub const NUMA_FEATURES: &[Feature] = &[
    Feature::NUMA_MIGRATE_PREFERRED_BUSY,
    Feature::NUMA_HAS_CAPACITY,
    Feature::NUMA_HAS_CAPACITY_PCT,
    Feature::NUMA_CLASSIFY,
    Feature::NUMA_FAVOUR_HIGHER,
    Feature::NUMA_RESIST_LOWER,
    Feature::NUMA_LOCALITY_TRISTATE,
];

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
    /// `update_task_scan_period` slows down on migration failures (`locality[2]`, v4.0 `[M]`).
    pub scan_period_failed_term: bool,
    /// `update_task_scan_period` uses the private/shared ratio as a slow-down trigger
    /// (v4.14 `[M]`); before, it only scales speed-ups.
    pub scan_period_ps_ratio: bool,
    /// `task_numa_migrate` resets the scan period to `task_scan_min` on success (to v4.18).
    pub reset_scan_period_on_migrate: bool,
    /// The per-destination-node page migration rate limit (v3.8–v4.18).
    pub rate_limit: Option<RateLimit>,
}

impl NumaVariant {
    /// The behaviour of mainline release `major.minor` (every switch at its history).
    pub fn for_version(major: u16, minor: u16) -> NumaVariant {
        let version = v(major, minor);
        NumaVariant::from_kernel(version, &Features::at_version(version))
    }

    /// The behaviour of a run: the release form of `version` with the switches as resolved
    /// in `features` (profile values plus the scenario's overrides).
    pub fn from_kernel(version: KernelVersion, features: &Features) -> NumaVariant {
        let at = |ma: u16, mi: u16| version >= v(ma, mi);
        let form = if !at(3, 18) {
            NumaForm::V3_13
        } else if !at(4, 19) {
            NumaForm::V3_18
        } else if !at(5, 7) {
            NumaForm::V4_19
        } else {
            NumaForm::V5_7
        };
        let f = |feat: Feature| features.on(feat);
        NumaVariant {
            form,
            migrate_preferred_busy: f(Feature::NUMA_MIGRATE_PREFERRED_BUSY),
            has_capacity: f(Feature::NUMA_HAS_CAPACITY),
            has_capacity_pct: f(Feature::NUMA_HAS_CAPACITY_PCT),
            classify: f(Feature::NUMA_CLASSIFY),
            favour_higher: f(Feature::NUMA_FAVOUR_HIGHER),
            resist_lower: f(Feature::NUMA_RESIST_LOWER),
            locality_tristate: f(Feature::NUMA_LOCALITY_TRISTATE),
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
                let names: Vec<&str> = NUMA_FEATURES.iter().map(|f| f.name()).collect();
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
        let mut var = v42;
        for f in NUMA_FEATURES {
            let was = var.get(f.name()).unwrap();
            var.set(f.name(), !was).unwrap();
            assert_eq!(var.get(f.name()), Some(!was));
        }
        // A run's variant follows its resolved features (a scenario override reaches it).
        let mut feats = Features::at_version(v(4, 2));
        feats.set(Feature::NUMA_HAS_CAPACITY, false);
        let run = NumaVariant::from_kernel(v(4, 2), &feats);
        assert!(!run.has_capacity && run.migrate_preferred_busy);
        assert_eq!(run.form, NumaForm::V3_18);
        let err = var.set("NUMA_BOGUS", true).unwrap_err();
        assert!(err.contains("NUMA_HAS_CAPACITY") && err.contains("NUMA_BOGUS"));
    }
}
