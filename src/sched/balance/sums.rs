//! Per-group running sums of the per-CPU quantities `update_sg_lb_stats()` adds up, so a
//! balance pass costs per group instead of per CPU (a simulator speed-up; the kernel walks
//! every CPU of the group).
//!
//! Each CPU's contribution (`cpu_load`, `cpu_util_cfs`, `cpu_runnable`, `h_nr_runnable`,
//! `nr_running`, whether it is idle, whether it runs more than one task, whether its single
//! task sits on a capacity-reduced CPU) is kept as last read; each `sched_group_capacity`
//! (one per distinct group span) keeps the sum over its CPUs. The environment reports which
//! CPUs may have changed since the last pass ([`super::LbEnv::take_changed_cpus`]); the
//! refresh at the start of a pass re-reads those of them inside the groups of the domain
//! being balanced (the others stay marked) and applies the difference to their groups, so
//! every group the pass reads is current. The sums are
//! integers, so they equal the per-CPU walk exactly: `find_busiest_group()` decides as
//! before. Under `debug_assertions` every group answered from the sums is re-walked and
//! compared.
//!
//! Values are read as the kernel's walk reads them at the time of the pass (the stored
//! PELT averages, no decay on read), so a sum refreshed at the start of the pass equals
//! the walk's. Left to the walk: groups not wholly inside `env->cpus` (after an
//! all-pinned retry), domains with `SD_ASYM_CPUCAPACITY` (per-CPU misfit maximum), the
//! reduced-capacity misfit maximum when some CPU of the group is capacity-reduced. The NUMA
//! counts (`nr_numa_running`, `nr_preferred_running`) are summed too: the environment keeps
//! them per CPU as the kernel does (`account_numa_enqueue()`), so the busiest group's
//! `fbq_classify_group()` costs per group as well.

use crate::cpumask::CpuMask;
use crate::domains::SchedDomains;
use crate::units::cpu_count_u32;

/// An index into the flattened per-CPU / per-domain tables. Fits: sched-group capacities,
/// domains and their CPU lists number at most NR_CPUS_MAX x NR_CPUS_MAX (2^20).
fn table_u32(i: usize) -> u32 {
    u32::try_from(i).expect("a sched-domain table above u32::MAX entries")
}

/// One CPU's contribution to its groups' sums, as last read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuContrib {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub h_nr_runnable: u32,
    pub nr_running: u32,
    /// `nr_running == 0 && idle_cpu()`.
    pub idle: bool,
    /// `nr_running > 1` (the root domain's overload test).
    pub overloaded: bool,
    /// Not idle, one CFS task, and capacity reduced below the least `imbalance_pct` of
    /// any domain (a superset of `check_cpu_capacity()` at every level).
    pub single_reduced: bool,
    /// `rq->nr_numa_running` (0 when idle: the walk skips idle CPUs).
    pub nr_numa_running: u32,
    /// `rq->nr_preferred_running` (0 when idle).
    pub nr_preferred_running: u32,
}

/// The sums of one group span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupSums {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub h_nr_runnable: u32,
    pub nr_running: u32,
    pub idle_cpus: u32,
    /// CPUs with `nr_running > 1`.
    pub nr_overloaded: u32,
    /// CPUs with [`CpuContrib::single_reduced`].
    pub nr_single_reduced: u32,
    /// CPUs in the span.
    pub weight: u32,
    pub nr_numa_running: u32,
    pub nr_preferred_running: u32,
}

impl GroupSums {
    fn add(&mut self, c: &CpuContrib) {
        self.load = self.load.wrapping_add(c.load);
        self.util = self.util.wrapping_add(c.util);
        self.runnable = self.runnable.wrapping_add(c.runnable);
        self.h_nr_runnable = self.h_nr_runnable.wrapping_add(c.h_nr_runnable);
        self.nr_running = self.nr_running.wrapping_add(c.nr_running);
        self.idle_cpus = self.idle_cpus.wrapping_add(u32::from(c.idle));
        self.nr_overloaded = self.nr_overloaded.wrapping_add(u32::from(c.overloaded));
        self.nr_single_reduced = self
            .nr_single_reduced
            .wrapping_add(u32::from(c.single_reduced));
        self.nr_numa_running = self.nr_numa_running.wrapping_add(c.nr_numa_running);
        self.nr_preferred_running = self
            .nr_preferred_running
            .wrapping_add(c.nr_preferred_running);
    }

    /// Add another span's sums field by field (`weight` excepted).
    fn apply(&mut self, d: &GroupSums) {
        self.load = self.load.wrapping_add(d.load);
        self.util = self.util.wrapping_add(d.util);
        self.runnable = self.runnable.wrapping_add(d.runnable);
        self.h_nr_runnable = self.h_nr_runnable.wrapping_add(d.h_nr_runnable);
        self.nr_running = self.nr_running.wrapping_add(d.nr_running);
        self.idle_cpus = self.idle_cpus.wrapping_add(d.idle_cpus);
        self.nr_overloaded = self.nr_overloaded.wrapping_add(d.nr_overloaded);
        self.nr_single_reduced = self.nr_single_reduced.wrapping_add(d.nr_single_reduced);
        self.nr_numa_running = self.nr_numa_running.wrapping_add(d.nr_numa_running);
        self.nr_preferred_running = self
            .nr_preferred_running
            .wrapping_add(d.nr_preferred_running);
    }

    fn sub(&mut self, c: &CpuContrib) {
        self.load = self.load.wrapping_sub(c.load);
        self.util = self.util.wrapping_sub(c.util);
        self.runnable = self.runnable.wrapping_sub(c.runnable);
        self.h_nr_runnable = self.h_nr_runnable.wrapping_sub(c.h_nr_runnable);
        self.nr_running = self.nr_running.wrapping_sub(c.nr_running);
        self.idle_cpus = self.idle_cpus.wrapping_sub(u32::from(c.idle));
        self.nr_overloaded = self.nr_overloaded.wrapping_sub(u32::from(c.overloaded));
        self.nr_single_reduced = self
            .nr_single_reduced
            .wrapping_sub(u32::from(c.single_reduced));
        self.nr_numa_running = self.nr_numa_running.wrapping_sub(c.nr_numa_running);
        self.nr_preferred_running = self
            .nr_preferred_running
            .wrapping_sub(c.nr_preferred_running);
    }
}

/// Running sums per `sched_group_capacity` id, with the per-CPU contributions they hold.
#[derive(Clone, Debug)]
pub struct LbSums {
    /// False when two groups share an `sgc` id but not a span (then every pass walks).
    enabled: bool,
    contrib: Vec<CpuContrib>,
    /// Per `sgc` id.
    groups: Vec<GroupSums>,
    /// The `sgc` ids whose span holds each CPU: `cpu_sgc[cpu_start[cpu]..cpu_start[cpu + 1]]`.
    cpu_start: Vec<u32>,
    cpu_sgc: Vec<u32>,
    /// Least `imbalance_pct` over all domains (the `single_reduced` threshold).
    pub pct_min: u32,
    /// CPUs to re-read at the next refresh (all of them at first).
    dirty: CpuMask,
    /// CPUs with queued CFS tasks (`h_nr_runnable > 0`), as last read.
    cfs: CpuMask,
    /// CPUs with more than one queued CFS task (`h_nr_runnable > 1`), as last read: the
    /// only candidates of a task- or util-type busiest-queue search that finds any.
    multi: CpuMask,
    /// CPUs not idle (`!idle`), as last read.
    busy: CpuMask,
    /// The sums match the environment: set by a refresh at the start of a pass, cleared as
    /// soon as the pass may change runqueues.
    pub fresh: bool,
    /// Set with `fresh` by `update_sd_lb_stats()` when every group of the pass lies wholly
    /// inside `env->cpus` (and the domain has no `SD_ASYM_CPUCAPACITY`), so the sums answer
    /// for each of them without a per-group subset test. Cleared with `fresh`.
    pub cover_all: bool,
    /// Per domain id: index into `within_extra` of the union of its groups' spans when
    /// that union is not the domain's span (overlapping NUMA groups), else `u32::MAX`.
    within_idx: Vec<u32>,
    within_extra: Vec<CpuMask>,
}

impl LbSums {
    /// Empty sums over the groups of `domains`; every CPU is read at the first refresh.
    pub fn new(domains: &SchedDomains) -> LbSums {
        let nr = domains.nr_cpus();
        let mut spans: Vec<Option<CpuMask>> = vec![None; domains.nr_sgc];
        let mut enabled = true;
        for g in &domains.groups {
            match &spans[g.sgc] {
                None => spans[g.sgc] = Some(g.span),
                Some(s) if *s == g.span => {}
                Some(_) => enabled = false,
            }
        }
        let mut per_cpu: Vec<Vec<u32>> = vec![Vec::new(); nr];
        let mut groups = vec![GroupSums::default(); domains.nr_sgc];
        for (s, span) in spans.iter().enumerate() {
            let Some(span) = span else { continue };
            groups[s].weight = cpu_count_u32(span.weight());
            for cpu in span.iter().filter(|&c| c < nr) {
                per_cpu[cpu].push(table_u32(s));
            }
        }
        let mut cpu_start = Vec::with_capacity(nr + 1);
        let mut cpu_sgc = Vec::new();
        for list in &per_cpu {
            cpu_start.push(table_u32(cpu_sgc.len()));
            cpu_sgc.extend_from_slice(list);
        }
        cpu_start.push(table_u32(cpu_sgc.len()));
        let pct_min = domains
            .domains
            .iter()
            .map(|d| d.imbalance_pct)
            .min()
            .unwrap_or(100);
        let mut within_idx = Vec::with_capacity(domains.domains.len());
        let mut within_extra = Vec::new();
        for d in &domains.domains {
            let mut within = d.span;
            for &g in &d.groups {
                within = within.or(&domains.group(g).span);
            }
            if within == d.span {
                within_idx.push(u32::MAX);
            } else {
                within_idx.push(table_u32(within_extra.len()));
                within_extra.push(within);
            }
        }
        LbSums {
            enabled,
            contrib: vec![CpuContrib::default(); nr],
            groups,
            cpu_start,
            cpu_sgc,
            pct_min,
            dirty: CpuMask::first_n(nr),
            cfs: CpuMask::new(),
            multi: CpuMask::new(),
            busy: CpuMask::first_n(nr),
            fresh: false,
            cover_all: false,
            within_idx,
            within_extra,
        }
    }

    /// The CPUs a balance pass at domain `sd` (of `domains`, the hierarchy these sums were
    /// built for) may read: its span and its groups' spans. Precomputed because a pass
    /// used to OR every group's 1024-bit span together (56 groups at spr-2s's MC level).
    pub fn within<'a>(
        &'a self,
        domains: &'a SchedDomains,
        sd: crate::domains::DomainId,
    ) -> &'a CpuMask {
        match self.within_idx.get(sd.0) {
            Some(&i) if i != u32::MAX => &self.within_extra[i as usize],
            _ => &domains.domain(sd).span,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The set of CPUs to re-read, for [`super::LbEnv::take_changed_cpus`] to OR into.
    pub fn dirty_mut(&mut self) -> &mut CpuMask {
        &mut self.dirty
    }

    /// The CPUs of `within` to re-read, removed from the set (the others stay marked until
    /// a pass reads their groups).
    pub fn take_dirty_in(&mut self, within: &CpuMask) -> CpuMask {
        let todo = self.dirty.and(within);
        self.dirty = self.dirty.andnot(within);
        todo
    }

    /// Replace `cpu`'s contribution by `c` in every group holding it.
    pub fn update(&mut self, cpu: usize, c: CpuContrib) {
        let Some(old) = self.contrib.get(cpu).copied() else {
            return;
        };
        if c.h_nr_runnable > 0 {
            self.cfs.set(cpu);
        } else {
            self.cfs.clear(cpu);
        }
        if c.h_nr_runnable > 1 {
            self.multi.set(cpu);
        } else {
            self.multi.clear(cpu);
        }
        if c.idle {
            self.busy.clear(cpu);
        } else {
            self.busy.set(cpu);
        }
        if old == c {
            return;
        }
        let (a, b) = (
            self.cpu_start[cpu] as usize,
            self.cpu_start[cpu + 1] as usize,
        );
        // The change once, then added at every level (wrapping arithmetic: the same sums
        // as subtracting the old and adding the new contribution per group).
        let mut delta = GroupSums::default();
        delta.add(&c);
        delta.sub(&old);
        for &s in &self.cpu_sgc[a..b] {
            self.groups[s as usize].apply(&delta);
        }
        self.contrib[cpu] = c;
    }

    /// The sums of the span of `sgc` id `sgc`.
    pub fn group(&self, sgc: usize) -> &GroupSums {
        &self.groups[sgc]
    }

    /// CPUs with queued CFS tasks (`h_nr_runnable > 0`), as last read.
    pub fn cfs_cpus(&self) -> &CpuMask {
        &self.cfs
    }

    /// CPUs with more than one queued CFS task (`h_nr_runnable > 1`), as last read.
    pub fn multi_cpus(&self) -> &CpuMask {
        &self.multi
    }

    /// CPUs that are not idle (`nr_running > 0 || !idle_cpu()`), as last read.
    pub fn busy_cpus(&self) -> &CpuMask {
        &self.busy
    }

    /// `cpu`'s contribution as last read.
    pub fn contrib(&self, cpu: usize) -> &CpuContrib {
        &self.contrib[cpu]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::build_sched_domains;
    use crate::topology::presets;

    fn contrib(load: u64, nr: u32) -> CpuContrib {
        CpuContrib {
            load,
            util: load / 2,
            runnable: load + 1,
            h_nr_runnable: nr,
            nr_running: nr,
            idle: nr == 0,
            overloaded: nr > 1,
            single_reduced: false,
            nr_numa_running: nr / 2,
            nr_preferred_running: nr / 3,
        }
    }

    /// Deltas applied in any order leave every group's sums equal to the sum of its CPUs'
    /// current contributions (integer sums are exact, so no drift over many updates).
    #[test]
    fn sums_equal_recomputed_sums_after_many_updates() {
        let m = presets::by_name("milan-2s").expect("preset");
        let d = build_sched_domains(&m);
        let mut s = LbSums::new(&d);
        assert!(s.enabled(), "groups sharing an sgc share a span");
        let nr = d.nr_cpus();
        let mut x = 12345u64;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let cpu = (x >> 33) as usize % nr;
            let nr_running = ((x >> 20) % 4) as u32;
            s.update(cpu, contrib((x >> 40) % 3000 + step % 7, nr_running));
        }
        for g in &d.groups {
            let mut want = GroupSums {
                weight: cpu_count_u32(g.span.weight()),
                ..GroupSums::default()
            };
            for cpu in g.span.iter() {
                want.add(s.contrib(cpu));
            }
            assert_eq!(*s.group(g.sgc), want, "group {:?}", g.span);
        }
        for cpu in 0..nr {
            let c = s.contrib(cpu);
            assert_eq!(
                s.cfs_cpus().test(cpu),
                c.h_nr_runnable > 0,
                "cfs mask, CPU {cpu}"
            );
            assert_eq!(s.busy_cpus().test(cpu), !c.idle, "busy mask, CPU {cpu}");
        }
    }
}
