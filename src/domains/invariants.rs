//! Structural invariants of a built domain hierarchy: the checks
//! `kernel/sched/topology.c: sched_domain_debug_one()` runs (and prints as `ERROR:` lines)
//! for every CPU and level when `sched_verbose` is on.
//!
//! Per CPU and domain: the CPU is in the domain's span and in its first group; a flag
//! with `SDF_SHARED_CHILD` is also set on the child, one with `SDF_SHARED_PARENT` also on
//! the parent; groups are non-empty, do not overlap unless the level is `SD_OVERLAP`,
//! and together cover exactly the span; the first group equals the child's span; the
//! parent's span is a superset. Added here (the kernel's data structures make them
//! true by construction): group capacity > 0, `span_weight` matches the span, and the
//! per-CPU chain's parent/child links agree with the chain order.
//!
//! [`SchedDomains::check_invariants`] returns the violations as text (the runtime
//! checker and the soak test read it); `build_sched_domains_with` calls
//! [`debug_check`] once at the end of the build, which panics on a violation in builds
//! with debug assertions and costs nothing in release.

use super::{DomainId, SchedDomains, SdFlags};
use crate::cpumask::CpuMask;

/// `SD_*` flags with the `SDF_SHARED_PARENT` meta-flag (include/linux/sched/sd_flags.h).
pub const SD_SHARED_PARENT_MASK: SdFlags = SdFlags(
    SdFlags::SD_ASYM_CPUCAPACITY.0
        | SdFlags::SD_ASYM_CPUCAPACITY_FULL.0
        | SdFlags::SD_SERIALIZE.0
        | SdFlags::SD_OVERLAP.0
        | SdFlags::SD_NUMA.0,
);

impl SchedDomains {
    /// Every violation of `sched_domain_debug_one()`'s checks, one line each (empty when
    /// the hierarchy is sound).
    pub fn check_invariants(&self) -> Vec<String> {
        let mut out = Vec::new();
        for cpu in 0..self.nr_cpus() {
            let chain = self.cpu_domains(cpu);
            for (level, &id) in chain.iter().enumerate() {
                let sd = self.domain(id);
                let mut err = |what: String| {
                    out.push(format!("CPU{cpu} domain-{level} ({}): {what}", sd.name));
                };
                self.check_links(cpu, chain, level, &mut err);
                self.check_groups(cpu, id, &mut err);
            }
        }
        out
    }

    /// The checks of domain `chain[level]` of `cpu` against its span, its links and its
    /// flags; each violation goes to `err`.
    fn check_links(
        &self,
        cpu: usize,
        chain: &[DomainId],
        level: usize,
        err: &mut impl FnMut(String),
    ) {
        let sd = self.domain(chain[level]);
        if !sd.span.test(cpu) {
            err(format!(
                "domain->span {} does not contain CPU{cpu}",
                sd.span
            ));
        }
        if sd.span_weight != sd.span.weight() {
            err(format!(
                "span_weight {} but the span has {} CPUs",
                sd.span_weight,
                sd.span.weight()
            ));
        }
        let want_parent = chain.get(level + 1).copied();
        let want_child = level.checked_sub(1).map(|l| chain[l]);
        if sd.parent != want_parent || sd.child != want_child {
            err(format!(
                "parent/child links {:?}/{:?} disagree with the CPU's chain {:?}/{:?}",
                sd.parent, sd.child, want_parent, want_child
            ));
        }
        let child = sd.child.map(|c| self.domain(c));
        let parent = sd.parent.map(|p| self.domain(p));
        for (flag, name) in SdFlags::ALL {
            if !sd.flags.contains(flag) {
                continue;
            }
            if flag.intersects(SdFlags::SD_SHARED_CHILD_MASK)
                && child.is_some_and(|c| !c.flags.contains(flag))
            {
                err(format!("flag {name} set here but not in child"));
            }
            if flag.intersects(SD_SHARED_PARENT_MASK)
                && parent.is_some_and(|p| !p.flags.contains(flag))
            {
                err(format!("flag {name} set here but not in parent"));
            }
        }
    }

    /// The checks of domain `id`'s groups, for `cpu`; each violation goes to `err`.
    fn check_groups(&self, cpu: usize, id: DomainId, err: &mut impl FnMut(String)) {
        let sd = self.domain(id);
        let child = sd.child.map(|c| self.domain(c));
        let parent = sd.parent.map(|p| self.domain(p));
        let Some(&first) = sd.groups.first() else {
            err("group is NULL".to_string());
            return;
        };
        if !self.group(first).span.test(cpu) {
            err(format!("domain->groups does not contain CPU{cpu}"));
        }
        if let Some(c) = child
            && c.span != self.group(first).span
        {
            err(format!(
                "domain->groups {} does not match domain->child {}",
                self.group(first).span,
                c.span
            ));
        }
        let overlap = sd.flags.contains(SdFlags::SD_OVERLAP);
        let mut groupmask = CpuMask::new();
        for g in self.groups_of(id) {
            if g.span.is_empty() {
                err("empty group".to_string());
                break;
            }
            if !overlap && groupmask.intersects(&g.span) {
                err(format!("repeated CPUs {}", groupmask.and(&g.span)));
                break;
            }
            if g.capacity == 0 {
                err(format!("group {} has capacity 0", g.span));
            }
            groupmask = groupmask.or(&g.span);
        }
        if groupmask != sd.span {
            err(format!(
                "groups don't span domain->span: {groupmask} vs {}",
                sd.span
            ));
        }
        if let Some(p) = parent
            && !groupmask.is_subset_of(&p.span)
        {
            err(format!(
                "parent span {} is not a superset of domain->span {groupmask}",
                p.span
            ));
        }
    }
}

/// Panics with every violation when debug assertions are on; nothing in release.
pub fn debug_check(sds: &SchedDomains) {
    if cfg!(debug_assertions) {
        let errors = sds.check_invariants();
        assert!(
            errors.is_empty(),
            "sched domain invariants violated:\n{}",
            errors.join("\n")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::build_sched_domains;
    use crate::topology::presets;

    #[test]
    fn every_preset_hierarchy_is_sound() {
        for name in presets::names() {
            let machine = presets::by_name(name).expect("preset");
            let sds = build_sched_domains(&machine);
            assert_eq!(sds.check_invariants(), Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn a_corrupted_hierarchy_is_caught() {
        let machine = presets::by_name("hybrid-10").expect("preset");
        let mut sds = build_sched_domains(&machine);
        // Empty the first group of CPU 0's top domain: the CPU leaves its first group,
        // the groups no longer cover the span.
        let top = *sds.cpu_domains(0).last().unwrap();
        let g = sds.domains[top.0].groups[0];
        sds.groups[g.0].span = CpuMask::new();
        let errors = sds.check_invariants();
        assert!(
            errors.iter().any(|e| e.contains("does not contain CPU0")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("empty group")),
            "{errors:?}"
        );
        // Overlapping groups at a non-NUMA level.
        let mut sds = build_sched_domains(&machine);
        let top = *sds.cpu_domains(0).last().unwrap();
        let [a, b, ..] = sds.domains[top.0].groups[..] else {
            panic!("top level has two groups");
        };
        sds.groups[b.0].span = sds.groups[b.0].span.or(&sds.groups[a.0].span);
        let errors = sds.check_invariants();
        assert!(
            errors.iter().any(|e| e.contains("repeated CPUs")),
            "{errors:?}"
        );
    }
}
