//! NUMA pages per node over time: a bounded series of samples of every process's (mm's)
//! resident pages per node and of the NUMA-balancing `/proc/vmstat` counters, for pictures
//! (`schedlab report`) and the results' `runs[].numa.pages_series`.
//!
//! Recorded only when the run has a memory model ([`super::numa::EngineNuma`]), the machine
//! has more than one node, and NUMA balancing runs or a memory-model task has a memory policy
//! other than MPOL_LOCAL — so the results of every other run are unchanged. It only reads the
//! memory model and the policy's vmstat counters
//! ([`crate::policy::numa_balancing::NumaBalancing`]): nothing it does reaches a decision.
//!
//! Sampling: the engine's event loop samples at every multiple of `step_ns` of simulated time
//! (the state before the first event at or after that time, which is the state at that time:
//! nothing changes between events), plus once at the run's end. The step starts at
//! [`NUMA_SERIES_STEP_NS_MIN`]; when the series would exceed [`NUMA_SERIES_SAMPLES_MAX`]
//! samples, every other sample is dropped and the step doubles, so a run of any length ends
//! with between half and all of the maximum, evenly spaced. The vmstat counters are kept
//! cumulative from the start of the run (the engine resets its own at the warm-up's end; the
//! series adds back what was counted before).
//!
//! Left out: the per-task page shares of tasks outside the memory model (their pages never
//! move; the results' `tasks[].numa_pages_pct` has them).

use super::Engine;
use crate::sched::types::Vmstat;

/// Most samples a series holds (the end-of-run sample included).
pub const NUMA_SERIES_SAMPLES_MAX: usize = 200;
/// The sampling step before any thinning.
pub const NUMA_SERIES_STEP_NS_MIN: u64 = 1_000_000;

/// One sample of the series.
#[derive(Clone, Debug, PartialEq)]
pub struct NumaPagesSample {
    pub time_ns: u64,
    /// Page groups per node of every mm (index = mm id), flattened `mm * nr_nodes + node`.
    pub mm_groups: Vec<u64>,
    /// Resident page groups of every mm (its groups with a home node), counted apart from
    /// `mm_groups`, so a reader can check that pages are conserved.
    pub mm_resident: Vec<u64>,
    /// The vmstat counters as the policy holds them (reset at the warm-up's end).
    pub vmstat: Vmstat,
    /// Whether the warm-up reset had happened (then [`NumaPagesSeries::vmstat_base`] adds).
    pub after_warmup: bool,
}

/// The series of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NumaPagesSeries {
    pub nr_nodes: usize,
    pub nr_mms: usize,
    /// The step between regular samples (a power-of-two multiple of the minimum).
    pub step_ns: u64,
    pub samples: Vec<NumaPagesSample>,
    /// The vmstat counters counted before the warm-up reset.
    pub vmstat_base: Vmstat,
    warmed_up: bool,
    ended: bool,
}

impl NumaPagesSeries {
    /// The time of the next regular sample.
    fn next_ns(&self) -> u64 {
        match self.samples.last() {
            None => 0,
            Some(s) => (s.time_ns / self.step_ns + 1) * self.step_ns,
        }
    }

    /// Drop every other sample and double the step (keeps the multiples of the new step).
    fn thin(&mut self) {
        self.step_ns *= 2;
        let step = self.step_ns;
        self.samples.retain(|s| s.time_ns.is_multiple_of(step));
    }
}

impl Engine {
    /// Start recording the series when this run qualifies (see the module docs). Called once,
    /// before the first event.
    pub(crate) fn numa_series_start(&mut self) {
        let Some(n) = self.numa.as_deref() else {
            return;
        };
        let policy = self
            .tasks
            .iter()
            .any(|t| n.task_mem(t.id).is_some() && t.mempolicy != crate::task::MemPolicy::Local);
        let balancing = self
            .policy
            .numa_balancing()
            .is_some_and(|nb| nb.balancing());
        if self.machine.nr_nodes() < 2 || !(balancing || policy) {
            return;
        }
        self.numa_series = Some(Box::new(NumaPagesSeries {
            nr_nodes: self.machine.nr_nodes(),
            nr_mms: n.mms.len(),
            step_ns: NUMA_SERIES_STEP_NS_MIN,
            ..NumaPagesSeries::default()
        }));
        self.numa_series_next_ns = 0;
    }

    /// Take the regular samples due up to `time_ns` (the time of the event about to run).
    pub(crate) fn numa_series_sample(&mut self, time_ns: u64) {
        let (Some(s), Some(n)) = (self.numa_series.as_deref_mut(), self.numa.as_deref()) else {
            self.numa_series_next_ns = u64::MAX;
            return;
        };
        let vmstat = policy_vmstat(&*self.policy);
        let mut at = s.next_ns();
        while at <= time_ns {
            push_sample(s, n, vmstat, at);
            at = s.next_ns();
        }
        self.numa_series_next_ns = at;
    }

    /// The warm-up reset is about to zero the vmstat counters: keep them as the base.
    pub(crate) fn numa_series_warmup(&mut self) {
        if let (Some(s), Some(_)) = (self.numa_series.as_deref_mut(), self.numa.as_deref()) {
            s.vmstat_base = policy_vmstat(&*self.policy);
            s.warmed_up = true;
        }
    }

    /// The last sample, at the run's end.
    pub(crate) fn numa_series_end(&mut self) {
        let now = self.clock.now();
        if let (Some(s), Some(n)) = (self.numa_series.as_deref_mut(), self.numa.as_deref())
            && !s.ended
        {
            if s.samples.last().is_some_and(|l| l.time_ns == now) {
                s.samples.pop();
            }
            s.ended = true;
            push_sample(s, n, policy_vmstat(&*self.policy), now);
        }
    }

    /// The run's series, when it recorded one.
    pub fn numa_pages_series(&self) -> Option<&NumaPagesSeries> {
        self.numa_series.as_deref()
    }
}

/// The policy's NUMA-balancing vmstat counters (zero without NUMA balancing).
fn policy_vmstat(policy: &dyn crate::policy::SchedPolicy) -> Vmstat {
    policy
        .numa_balancing()
        .map(|nb| nb.vmstat())
        .unwrap_or_default()
}

fn push_sample(s: &mut NumaPagesSeries, n: &super::numa::EngineNuma, vmstat: Vmstat, time_ns: u64) {
    let mut mm_groups = Vec::with_capacity(s.nr_mms * s.nr_nodes);
    let mut mm_resident = Vec::with_capacity(s.nr_mms);
    for mm in &n.mms {
        mm_groups.extend_from_slice(&mm.groups_per_node);
        mm_resident.push(mm.groups.iter().filter(|g| g.nid.is_some()).count() as u64);
    }
    s.samples.push(NumaPagesSample {
        time_ns,
        mm_groups,
        mm_resident,
        vmstat,
        after_warmup: s.warmed_up,
    });
    if s.samples.len() > NUMA_SERIES_SAMPLES_MAX {
        // Thin the regular samples; the one just taken stays if it is the run's end.
        let last = s.samples.pop().expect("over the maximum");
        s.thin();
        if s.ended || last.time_ns.is_multiple_of(s.step_ns) {
            s.samples.push(last);
        }
    }
}
