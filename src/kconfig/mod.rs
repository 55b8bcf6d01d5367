//! The kernel configuration a run simulates, in the bottom layer so the scheduler
//! mechanisms can read it: the SCHED_FEAT registry ([`features`], `kernel/sched/features.h`),
//! the tunables ([`sysctl`], the `sysctl_sched_*` variables and `update_sysctl()`), kernel
//! releases as profiles ([`profiles`]) and versions ([`version`]), and the kernel resolved
//! for one run ([`ResolvedKernel`]: profile values, then the scenario's overrides).
//!
//! Parsing scenario files and `--set` overrides is not here but in [`crate::config`], one
//! layer up; this module only names, validates and resolves kernel settings.

pub mod features;
pub mod host;
pub mod profiles;
pub mod sysctl;
pub mod version;

use std::collections::BTreeMap;

use serde::Serialize;

pub use features::{Feature, FeatureKind, Features};
pub use profiles::{Profile, SchedMode};
pub use sysctl::{PreemptModel, Sysctls};
pub use version::KernelVersion;

/// Which scheduling policy implementation runs the fair tasks.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub enum Policy {
    /// The Linux fair-class model.
    #[serde(rename = "linux-fair")]
    LinuxFair,
    /// A global FIFO: the trivial second policy that keeps the policy trait honest.
    #[serde(rename = "fifo")]
    Fifo,
}

impl Policy {
    pub const NAMES: &'static [&'static str] = &["linux-fair", "fifo"];

    /// The name a scenario uses for it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::LinuxFair => "linux-fair",
            Policy::Fifo => "fifo",
        }
    }
}

/// The kernel a run simulates: profile values, then the scenario's overrides.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ResolvedKernel {
    pub profile: String,
    pub version: KernelVersion,
    pub mode: SchedMode,
    pub policy: Policy,
    pub features: Features,
    pub sysctl: Sysctls,
    /// Features the scenario set to a value other than the profile's.
    pub feature_overrides: BTreeMap<String, bool>,
    /// Tunables that differ from the profile's (value as text).
    pub sysctl_overrides: BTreeMap<String, String>,
    /// Remarks, e.g. an EEVDF-only feature set in a CFS profile (it has no effect).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ResolvedKernel {
    /// The kernel's `sched_feat(f)`.
    #[inline]
    pub fn sched_feat(&self, f: Feature) -> bool {
        self.features.on(f)
    }

    /// A profile with no overrides.
    pub fn from_profile(p: &Profile) -> ResolvedKernel {
        ResolvedKernel {
            profile: p.name.to_string(),
            version: p.version,
            mode: p.mode(),
            policy: Policy::LinuxFair,
            features: p.features(),
            sysctl: p.sysctls(),
            feature_overrides: BTreeMap::new(),
            sysctl_overrides: BTreeMap::new(),
            notes: Vec::new(),
        }
    }
}

pub(crate) use crate::input::did_you_mean;
