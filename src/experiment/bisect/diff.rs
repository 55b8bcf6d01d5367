//! The difference between a good and a bad configuration, as atomic changes.
//!
//! A *member* is one setting that differs: a feature ([`Feature`]), a tunable
//! ([`crate::kconfig::sysctl::SYSCTLS`]), the policy, a `[machine]`/`[workload]` key (when
//! the sides are scenario variants), or the release itself — the model code that reads the
//! kernel version instead of a feature bit, and with it the fair-class mode (CFS before
//! v6.6, EEVDF from v6.6), listed by [`VERSION_KEYED_CODE`]. A *change* is a member, or the
//! members of one [`ChangeGroup`] that differ. Each change is tagged with the release that
//! introduced it: the last toggle of a feature's history in the range, the first profile
//! with a tunable's new value, the newest version-keyed code point for the release change;
//! none when the difference comes from an override rather than from the releases.
//!
//! A [`Config`] is "good with some members switched to their bad values", plus the release
//! the model code follows. [`Difference::scenario`] turns it into a runnable scenario.

use serde::Serialize;

use crate::config::scenario::Scenario;
use crate::error::{InputError, InputResult};
use crate::kconfig::Policy;
use crate::kconfig::features::{ChangeGroup, VERSION_KEYED_CODE};
use crate::kconfig::profiles::PROFILES;
use crate::kconfig::sysctl::{self, SYSCTLS, SysctlInfo, SysctlValue};
use crate::kconfig::{Feature, KernelVersion, Profile, ResolvedKernel};

/// Most changes a bisect accepts (the registry has under 60 features; two releases far
/// apart with many overrides could exceed what a budget can attribute).
pub const MAX_CHANGES: usize = 64;

/// One setting that differs between good and bad.
#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    /// The release: version-keyed model code and the fair-class mode.
    Release {
        good: KernelVersion,
        bad: KernelVersion,
    },
    Feature {
        feature: Feature,
        bad: bool,
    },
    Sysctl {
        name: &'static str,
        good: SysctlValue,
        bad: SysctlValue,
    },
    Policy {
        good: Policy,
        bad: Policy,
    },
    /// A `[machine]` or `[workload]` key (`None`: absent on that side).
    Key {
        key: String,
        good: Option<toml::Value>,
        bad: Option<toml::Value>,
    },
}

impl Member {
    /// `DELAY_DEQUEUE 0->1`, `sched_base_slice_ns 750000->700000`, ...
    pub fn describe(&self) -> String {
        let text = |v: &Option<toml::Value>| v.as_ref().map_or("-".to_string(), |v| v.to_string());
        match self {
            Member::Release { good, bad } => format!("release {good}->{bad}"),
            Member::Feature { feature, bad } => {
                format!("{feature} {}->{}", u8::from(!bad), u8::from(*bad))
            }
            Member::Sysctl { name, good, bad } => format!("{name} {good}->{bad}"),
            Member::Policy { good, bad } => format!("policy {}->{}", good.name(), bad.name()),
            Member::Key { key, good, bad } => format!("{key} {}->{}", text(good), text(bad)),
        }
    }
}

/// One atomic change: a member, or the differing members of a group.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// Table name: the feature or tunable, the group, `release code`, or the key.
    pub name: String,
    /// What it switches, one entry per member (`DELAY_DEQUEUE 0->1`).
    pub switches: Vec<String>,
    /// The release that introduced it (`None`: an override, not a release difference).
    pub introduced: Option<KernelVersion>,
    /// The group it is declared in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<&'static str>,
    /// For the release change: the version-keyed code it moves; for a group: why.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Indices into [`Difference::members`].
    #[serde(skip)]
    pub members: Vec<usize>,
}

/// Good with some members switched to their bad values; the release the model code follows.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Config {
    pub release: KernelVersion,
    /// Per member of [`Difference::members`]: switched to the bad value.
    pub applied: Vec<bool>,
}

/// The two sides and every change between them.
#[derive(Clone, Debug)]
pub struct Difference {
    pub good_name: String,
    pub bad_name: String,
    pub good: Scenario,
    pub bad: Scenario,
    pub members: Vec<Member>,
    /// Release order (untagged last), the release change after the others of its release.
    pub changes: Vec<Change>,
}

/// The release in `(lo, hi]` (either order) where tunable `info`'s profile value last changed.
fn sysctl_changed_between(
    info: &SysctlInfo,
    lo: KernelVersion,
    hi: KernelVersion,
) -> Option<KernelVersion> {
    let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let mut prev: Option<SysctlValue> = None;
    let mut tag = None;
    for p in PROFILES.iter().filter(|p| p.version >= a && p.version <= b) {
        let value = (info.get)(&p.sysctls());
        if prev.as_ref().is_some_and(|v| *v != value) {
            tag = Some(p.version);
        }
        prev = Some(value);
    }
    tag
}

/// Leaves of `[machine]` and `[workload]` by dotted path.
fn scenario_keys(scn: &Scenario) -> std::collections::BTreeMap<String, toml::Value> {
    fn walk(
        prefix: &str,
        v: &toml::Value,
        out: &mut std::collections::BTreeMap<String, toml::Value>,
    ) {
        match v {
            toml::Value::Table(t) if !t.is_empty() => {
                for (k, v) in t {
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
            other => {
                out.insert(prefix.to_string(), other.clone());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for section in ["machine", "workload"] {
        if let Some(v) = scn.doc.table.get(section) {
            walk(section, v, &mut out);
        }
    }
    out
}

/// Every member that differs, with its release tag.
fn members_between(good: &Scenario, bad: &Scenario) -> Vec<(Member, Option<KernelVersion>)> {
    let (gk, bk) = (&good.kernel, &bad.kernel);
    let (lo, hi) = (gk.version, bk.version);
    let mut out = Vec::new();
    if lo != hi {
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let tag = VERSION_KEYED_CODE
            .iter()
            .filter(|(r, _)| a < *r && *r <= b)
            .map(|(r, _)| *r)
            .next_back()
            .unwrap_or(b);
        out.push((Member::Release { good: lo, bad: hi }, Some(tag)));
    }
    if gk.policy != bk.policy {
        let m = Member::Policy {
            good: gk.policy,
            bad: bk.policy,
        };
        out.push((m, None));
    }
    for &f in Feature::ALL {
        let (g, b) = (gk.features.on(f), bk.features.on(f));
        if g != b {
            let from_releases = f.value_at(lo) == g && f.value_at(hi) == b;
            let tag = from_releases.then(|| f.changed_between(lo, hi)).flatten();
            out.push((Member::Feature { feature: f, bad: b }, tag));
        }
    }
    let (gp, bp) = (profile_of(lo).sysctls(), profile_of(hi).sysctls());
    for info in SYSCTLS {
        let (g, b) = ((info.get)(&gk.sysctl), (info.get)(&bk.sysctl));
        if g != b {
            let from_releases = (info.get)(&gp) == g && (info.get)(&bp) == b;
            let tag = from_releases
                .then(|| sysctl_changed_between(info, lo, hi))
                .flatten();
            let m = Member::Sysctl {
                name: info.name,
                good: g,
                bad: b,
            };
            out.push((m, tag));
        }
    }
    let (gkeys, bkeys) = (scenario_keys(good), scenario_keys(bad));
    let mut keys: Vec<&String> = gkeys.keys().chain(bkeys.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (g, b) = (gkeys.get(key), bkeys.get(key));
        if g != b {
            let m = Member::Key {
                key: key.clone(),
                good: g.cloned(),
                bad: b.cloned(),
            };
            out.push((m, None));
        }
    }
    out
}

/// The profile of a release (every resolved kernel's version is a profile's).
fn profile_of(version: KernelVersion) -> &'static Profile {
    PROFILES
        .iter()
        .find(|p| p.version == version)
        .unwrap_or_else(Profile::default_profile)
}

/// The group a member is declared in.
fn group_of(m: &Member) -> Option<&'static ChangeGroup> {
    match m {
        Member::Feature { feature, .. } => ChangeGroup::of_feature(*feature),
        Member::Sysctl { name, .. } => ChangeGroup::of_sysctl(name),
        _ => None,
    }
}

/// Gather members into changes (one per group), tagged and in release order.
fn group_changes(members: &[(Member, Option<KernelVersion>)]) -> Vec<Change> {
    let mut changes: Vec<Change> = Vec::new();
    for (i, (m, tag)) in members.iter().enumerate() {
        let group = group_of(m);
        if let Some(g) = group
            && let Some(c) = changes.iter_mut().find(|c| c.group == Some(g.name))
        {
            c.members.push(i);
            c.switches.push(m.describe());
            c.introduced = match (c.introduced, *tag) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            continue;
        }
        let (name, note) = match (m, group) {
            (_, Some(g)) => (g.name.to_string(), g.why.to_string()),
            (Member::Release { good, bad }, _) => {
                let (a, b) = if good <= bad {
                    (good, bad)
                } else {
                    (bad, good)
                };
                let code: Vec<String> = VERSION_KEYED_CODE
                    .iter()
                    .filter(|(r, _)| a < r && r <= b)
                    .map(|(r, what)| format!("{r}: {what}"))
                    .collect();
                ("release code".to_string(), code.join("; "))
            }
            (Member::Feature { feature, .. }, _) => (feature.name().to_string(), String::new()),
            (Member::Sysctl { name, .. }, _) => (name.to_string(), String::new()),
            (Member::Policy { .. }, _) => ("policy".to_string(), String::new()),
            (Member::Key { key, .. }, _) => (key.clone(), String::new()),
        };
        changes.push(Change {
            name,
            switches: vec![m.describe()],
            introduced: *tag,
            group: group.map(|g| g.name),
            note,
            members: vec![i],
        });
    }
    // Release order; untagged last; within a release the release code after the switches.
    changes.sort_by_key(|c| {
        let release_code = c.name == "release code";
        (c.introduced.is_none(), c.introduced, release_code)
    });
    changes
}

impl Difference {
    /// Every change between `good` and `bad`. Errors when there are more than
    /// [`MAX_CHANGES`].
    pub fn between(
        good_name: &str,
        good: Scenario,
        bad_name: &str,
        bad: Scenario,
    ) -> InputResult<Difference> {
        let tagged = members_between(&good, &bad);
        let changes = group_changes(&tagged);
        if changes.is_empty() {
            // Nothing to bisect: the budget would be spent measuring one kernel twice.
            return Err(InputError::with_key(
                "command line",
                "--good/--bad",
                format!(
                    "{good_name} and {bad_name} are the same kernel (no feature, tunable or \
                     release differs); accepted: two sides that differ, e.g. --good v6.6 --bad v6.9"
                ),
            ));
        }
        if changes.len() > MAX_CHANGES {
            return Err(InputError::with_key(
                "command line",
                "--good/--bad",
                format!(
                    "{good_name} and {bad_name} differ in {} changes, more than the limit of \
                     {MAX_CHANGES} (MAX_CHANGES); accepted: two sides closer together, e.g. \
                     neighbouring profiles",
                    changes.len()
                ),
            ));
        }
        Ok(Difference {
            good_name: good_name.to_string(),
            bad_name: bad_name.to_string(),
            good,
            bad,
            members: tagged.into_iter().map(|(m, _)| m).collect(),
            changes,
        })
    }

    /// The good side as a configuration.
    pub fn good_config(&self) -> Config {
        Config {
            release: self.good.kernel.version,
            applied: vec![false; self.members.len()],
        }
    }

    /// The bad side as a configuration.
    pub fn bad_config(&self) -> Config {
        Config {
            release: self.bad.kernel.version,
            applied: vec![true; self.members.len()],
        }
    }

    /// `from` with the members of `changes` taken from `to`.
    pub fn blend(&self, from: &Config, to: &Config, changes: &[usize]) -> Config {
        let mut c = from.clone();
        for &i in changes {
            for &m in &self.changes[i].members {
                c.applied[m] = to.applied[m];
                if matches!(self.members[m], Member::Release { .. }) {
                    c.release = to.release;
                }
            }
        }
        c
    }

    /// Good with `changes` applied.
    pub fn with_changes(&self, changes: &[usize]) -> Config {
        self.blend(&self.good_config(), &self.bad_config(), changes)
    }

    /// Bad with change `i` reverted.
    pub fn without_change(&self, i: usize) -> Config {
        self.blend(&self.bad_config(), &self.good_config(), &[i])
    }

    /// The changes in which `a` and `b` differ, in [`Difference::changes`] order.
    pub fn changes_between(&self, a: &Config, b: &Config) -> Vec<usize> {
        (0..self.changes.len())
            .filter(|&i| {
                self.changes[i].members.iter().any(|&m| {
                    a.applied[m] != b.applied[m]
                        || (matches!(self.members[m], Member::Release { .. })
                            && a.release != b.release)
                })
            })
            .collect()
    }

    /// Good, each profile released between the two sides (in walk order), then bad: each
    /// intermediate profile as good with the release-tagged members whose value in that
    /// release is the bad one.
    pub fn profile_chain(&self) -> Vec<(String, Config)> {
        let (lo, hi) = (self.good.kernel.version, self.bad.kernel.version);
        let mut chain = vec![(self.good_name.clone(), self.good_config())];
        let mut between: Vec<&Profile> = PROFILES
            .iter()
            .filter(|p| p.version > lo.min(hi) && p.version < lo.max(hi))
            .collect();
        if lo > hi {
            between.reverse();
        }
        for p in between {
            let sys = p.sysctls();
            let applied = self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let tagged = self
                        .changes
                        .iter()
                        .any(|c| c.members.contains(&i) && c.introduced.is_some());
                    tagged
                        && match m {
                            Member::Feature { feature, bad } => feature.value_at(p.version) == *bad,
                            Member::Sysctl { name, bad, .. } => {
                                SysctlInfo::find(name).is_some_and(|info| (info.get)(&sys) == *bad)
                            }
                            _ => false,
                        }
                })
                .collect();
            let cfg = Config {
                release: p.version,
                applied,
            };
            chain.push((p.name.to_string(), cfg));
        }
        chain.push((self.bad_name.clone(), self.bad_config()));
        chain
    }

    /// The runnable scenario of a configuration: good's scenario, with the applied
    /// `[machine]`/`[workload]` keys, and a kernel resolved from the configuration's release
    /// with good's features and tunables, the applied ones at their bad values.
    pub fn scenario(&self, cfg: &Config) -> InputResult<Scenario> {
        let mut doc = self.good.doc.clone();
        let mut keys_applied = false;
        for (m, _) in self.members.iter().zip(&cfg.applied).filter(|(_, a)| **a) {
            if let Member::Key { key, bad, .. } = m {
                keys_applied = true;
                let path: Vec<String> = key.split('.').map(str::to_string).collect();
                match bad {
                    Some(v) => doc.set_path(&path, v.clone(), "bisect")?,
                    None => doc.remove_path(&key.split('.').collect::<Vec<_>>()),
                }
            }
        }
        let mut scn = if keys_applied {
            doc.remove_path(&["variant"]);
            Scenario::from_doc(doc)?
        } else {
            self.good.clone()
        };
        scn.kernel = self.kernel(cfg);
        scn.variant = None;
        scn.variants.clear();
        Ok(scn)
    }

    /// The resolved kernel of a configuration.
    pub fn kernel(&self, cfg: &Config) -> ResolvedKernel {
        let profile = profile_of(cfg.release);
        let g = &self.good.kernel;
        let mut k = ResolvedKernel::from_profile(profile);
        k.policy = g.policy;
        k.features = g.features;
        k.sysctl = g.sysctl.clone();
        for (m, _) in self.members.iter().zip(&cfg.applied).filter(|(_, a)| **a) {
            match m {
                Member::Feature { feature, bad } => k.features.set(*feature, *bad),
                Member::Sysctl { name, bad, .. } => {
                    if let Some(info) = SysctlInfo::find(name) {
                        (info.set)(&mut k.sysctl, bad.clone());
                    }
                }
                Member::Policy { bad, .. } => k.policy = *bad,
                Member::Release { .. } | Member::Key { .. } => {}
            }
        }
        let base = profile.features();
        k.feature_overrides = base
            .diff(&k.features)
            .into_iter()
            .map(|f| (f.name().to_string(), k.features.on(f)))
            .collect();
        k.sysctl_overrides = sysctl::diff(&profile.sysctls(), &k.sysctl);
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kconfig::version::v;

    fn scn(profile: &str) -> Scenario {
        Scenario::parse(
            &format!(
                "[machine]\npreset = \"hybrid-10\"\n[kernel]\nprofile = \"{profile}\"\n\
                 [workload]\nkind = \"pingpong\"\npairs = 2\n"
            ),
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn v6_9_to_v6_15_changes_are_grouped_and_tagged() {
        let d = Difference::between("v6.9", scn("v6.9"), "v6.15", scn("v6.15")).unwrap();
        let find = |n: &str| d.changes.iter().find(|c| c.name == n).unwrap();
        let dd = find("delay_dequeue");
        assert_eq!(dd.introduced, Some(v(6, 12)));
        assert_eq!(dd.switches, ["DELAY_DEQUEUE 0->1", "DELAY_ZERO 0->1"]);
        assert_eq!(find("fair_server").introduced, Some(v(6, 12)));
        assert_eq!(
            find("buddy").introduced,
            Some(v(6, 14)),
            "PICK_BUDDY 2a77e4be12cb"
        );
        assert_eq!(find("sched_base_slice_ns").introduced, Some(v(6, 15)));
        assert_eq!(find("PREEMPT_SHORT").introduced, Some(v(6, 12)));
        let rc = find("release code");
        assert_eq!(rc.introduced, Some(v(6, 14)));
        assert!(rc.note.contains("v6.12"), "{}", rc.note);
        // Release order.
        let tags: Vec<_> = d.changes.iter().map(|c| c.introduced).collect();
        let mut sorted = tags.clone();
        sorted.sort();
        assert_eq!(tags, sorted);
        // All changes applied to good give bad's kernel exactly.
        let all: Vec<usize> = (0..d.changes.len()).collect();
        assert_eq!(d.kernel(&d.with_changes(&all)), d.bad.kernel);
        assert_eq!(d.kernel(&d.good_config()).features, d.good.kernel.features);
    }

    #[test]
    fn profile_chain_matches_intermediate_profiles() {
        let d = Difference::between("v6.9", scn("v6.9"), "v6.17", scn("v6.17")).unwrap();
        let chain = d.profile_chain();
        let names: Vec<&str> = chain.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["v6.9", "v6.12", "v6.15", "v6.17"]);
        for (name, cfg) in &chain {
            let k = d.kernel(cfg);
            assert_eq!(k.features, scn(name).kernel.features, "{name}");
            assert_eq!(k.sysctl, scn(name).kernel.sysctl, "{name}");
        }
        // Reverse direction walks downwards.
        let r = Difference::between("v6.17", scn("v6.17"), "v6.9", scn("v6.9")).unwrap();
        let names: Vec<String> = r.profile_chain().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["v6.17", "v6.15", "v6.12", "v6.9"]);
    }

    #[test]
    fn identical_sides_are_refused_before_any_run() {
        let e = Difference::between("a", scn("v6.12"), "b", scn("v6.12")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("--good/--bad"));
        assert!(e.message.contains("are the same kernel"), "{}", e.message);
    }
}
