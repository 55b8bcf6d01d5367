//! The load balancer's side of NUMA balancing, as pure functions: which tasks it should
//! prefer to leave or take (`migrate_improves_locality()` / `migrate_degrades_locality()`,
//! used by `can_migrate_task()`), the per-rq counters behind `fbq_type`
//! (`account_numa_enqueue/dequeue()`), and `fbq_classify_*` on them.
//!
//! Two forms of the locality predicate:
//! - v3.13–v4.2: two booleans gated by `SCHED_FEAT`s. `migrate_improves_locality`
//!   (NUMA_FAVOUR_HIGHER, default on) lets a cache-hot task move when the move improves its
//!   locality; `migrate_degrades_locality` (NUMA_RESIST_LOWER, default **off**) would make a
//!   locality-degrading move count as cache hot. With the defaults the balancer never
//!   resists pulling a task off its preferred node.
//! - v4.3+ (NUMA_LOCALITY_TRISTATE): one tri-state function that overrides `task_hot()`:
//!   degrades when leaving the preferred node while the source rq has worse-placed tasks,
//!   improves when going to it, don't care when the destination is idle, else by weight.
//!
//! [`Locality::lb_env_value`] maps the answer onto the convention of
//! `sched::balance::LbEnv::migrate_degrades_locality` (> 0 degrades, < 0 improves, 0 let
//! `task_hot()` decide), so the engine can answer that hook from this module.

use super::faults::TaskNuma;
use super::weight::{NumaTopo, group_weight, task_weight};
use super::{NumaForm, NumaGroup, NumaVariant};
use crate::sched::balance::FbqType;

/// The tri-state answer (`migrate_degrades_locality()`: 1, 0, −1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locality {
    /// 1: moving hurts locality (treat as cache hot).
    Degrades,
    /// 0: moving helps locality (migrate even if cache hot).
    Improves,
    /// −1: locality does not care; `task_hot()` decides.
    DontCare,
}

impl Locality {
    /// The `LbEnv::migrate_degrades_locality` convention.
    pub fn lb_env_value(self) -> i32 {
        match self {
            Locality::Degrades => 1,
            Locality::Improves => -1,
            Locality::DontCare => 0,
        }
    }
}

/// The task and machine facts the predicates read.
#[derive(Clone, Copy, Debug)]
pub struct LocalityCtx<'a> {
    pub t: &'a TaskNuma,
    pub group: Option<&'a NumaGroup>,
    pub topo: &'a NumaTopo,
    pub src_nid: usize,
    pub dst_nid: usize,
    /// `sched_numa_balancing` / `sched_feat(NUMA)`: balancing is enabled.
    pub numa_enabled: bool,
    /// The balancing domain has SD_NUMA.
    pub sd_numa: bool,
    /// `env->src_rq->nr_running` and `nr_preferred_running`.
    pub src_nr_running: u32,
    pub src_nr_preferred_running: u32,
    /// `env->idle == CPU_IDLE` (not newly idle, not busy).
    pub dst_idle: bool,
}

/// `migrate_improves_locality()` (v3.13–v4.2).
pub fn migrate_improves_locality(c: &LocalityCtx, v: &NumaVariant) -> bool {
    if !c.numa_enabled || !v.favour_higher || c.t.faults.is_none() || !c.sd_numa {
        return false;
    }
    if c.src_nid == c.dst_nid {
        return false;
    }
    if let Some(ng) = c.group {
        if ng.is_active_node(c.src_nid, v) {
            return false;
        }
        if ng.is_active_node(c.dst_nid, v) {
            return true;
        }
        return ng.group_faults(c.dst_nid) > ng.group_faults(c.src_nid);
    }
    if Some(c.dst_nid) == c.t.preferred_nid {
        return true;
    }
    c.t.task_faults(c.dst_nid) > c.t.task_faults(c.src_nid)
}

/// `migrate_degrades_locality()` (v3.13–v4.2 boolean form, NUMA_RESIST_LOWER).
pub fn migrate_degrades_locality_v3(c: &LocalityCtx, v: &NumaVariant) -> bool {
    if !c.numa_enabled || !v.resist_lower || c.t.faults.is_none() || !c.sd_numa {
        return false;
    }
    if c.src_nid == c.dst_nid {
        return false;
    }
    if let Some(ng) = c.group {
        if ng.is_active_node(c.dst_nid, v) {
            return false;
        }
        if ng.is_active_node(c.src_nid, v) {
            return true;
        }
        return ng.group_faults(c.dst_nid) < ng.group_faults(c.src_nid);
    }
    if Some(c.src_nid) == c.t.preferred_nid {
        return true;
    }
    c.t.task_faults(c.dst_nid) < c.t.task_faults(c.src_nid)
}

/// `migrate_degrades_locality()` (v4.3+ tri-state, as in v6.11–v6.12).
pub fn migrate_degrades_locality(c: &LocalityCtx, form: NumaForm) -> Locality {
    if !c.numa_enabled || c.t.faults.is_none() || !c.sd_numa || c.src_nid == c.dst_nid {
        return Locality::DontCare;
    }
    if Some(c.src_nid) == c.t.preferred_nid {
        return if c.src_nr_running > c.src_nr_preferred_running {
            Locality::Degrades
        } else {
            Locality::DontCare
        };
    }
    if Some(c.dst_nid) == c.t.preferred_nid {
        return Locality::Improves;
    }
    if c.dst_idle {
        return Locality::DontCare;
    }
    let dist = c.topo.node_distance(c.src_nid, c.dst_nid);
    let (src_w, dst_w) = if c.group.is_some() {
        (
            group_weight(c.group, c.topo, c.src_nid, dist, form),
            group_weight(c.group, c.topo, c.dst_nid, dist, form),
        )
    } else {
        (
            task_weight(c.t, c.topo, c.src_nid, dist, form),
            task_weight(c.t, c.topo, c.dst_nid, dist, form),
        )
    };
    if dst_w < src_w {
        Locality::Degrades
    } else {
        Locality::Improves
    }
}

/// The locality answer `can_migrate_task()` acts on, in the variant's form. For v3.x
/// (`hot = task_hot() || degrades; if improves → migrate`) the two booleans map onto the
/// same three outcomes: improves → migrate even if hot, degrades → hot, else `task_hot()`.
pub fn can_migrate_locality(c: &LocalityCtx, v: &NumaVariant) -> Locality {
    if v.locality_tristate {
        return migrate_degrades_locality(c, v.form);
    }
    if migrate_improves_locality(c, v) {
        Locality::Improves
    } else if migrate_degrades_locality_v3(c, v) {
        Locality::Degrades
    } else {
        Locality::DontCare
    }
}

/// The per-rq NUMA counters (`rq->nr_numa_running`, `rq->nr_preferred_running`), counted
/// over queued CFS tasks including the running one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqNumaCounters {
    pub nr_numa_running: u32,
    pub nr_preferred_running: u32,
}

impl RqNumaCounters {
    /// `account_numa_enqueue(rq, p)` for a task whose preferred node is `preferred` on a rq
    /// of node `rq_nid`.
    pub fn enqueue(&mut self, preferred: Option<usize>, rq_nid: usize) {
        self.nr_numa_running += u32::from(preferred.is_some());
        self.nr_preferred_running += u32::from(preferred == Some(rq_nid));
    }

    /// `account_numa_dequeue(rq, p)`.
    pub fn dequeue(&mut self, preferred: Option<usize>, rq_nid: usize) {
        assert!(
            !(preferred.is_some() && self.nr_numa_running == 0),
            "nr_numa_running underflow"
        );
        assert!(
            !(preferred == Some(rq_nid) && self.nr_preferred_running == 0),
            "nr_preferred_running underflow"
        );
        self.nr_numa_running -= u32::from(preferred.is_some());
        self.nr_preferred_running -= u32::from(preferred == Some(rq_nid));
    }
}

/// `fbq_classify_rq()` / `fbq_classify_group()` on counts: `regular` when some task has no
/// NUMA preference, `remote` when some NUMA task is off its preferred node, else `all`.
pub fn fbq_classify(nr_running: u32, nr_numa_running: u32, nr_preferred_running: u32) -> FbqType {
    if nr_running > nr_numa_running {
        FbqType::Regular
    } else if nr_running > nr_preferred_running {
        FbqType::Remote
    } else {
        FbqType::All
    }
}
