//! The task mover: `task_numa_migrate()` and its helpers (`update_numa_stats()`,
//! `numa_classify()`, `load_too_imbalanced()`, `numa_has_capacity()`,
//! `task_numa_compare()`, `task_numa_find_cpu()`, `task_numa_assign()`), and
//! `numa_migrate_preferred()`'s retry interval. The result is a decision — move to an idle
//! (or busy) CPU, swap with the task running on a CPU (`migrate_swap()`), or stay — that the
//! engine carries out with the stopper (`migrate_task_to()` / `migrate_swap_stop()`).
//!
//! Forms and switches ([`NumaVariant`], [`NumaForm`]):
//! - the preferred node is searched only if it has free capacity unless
//!   `NUMA_MIGRATE_PREFERRED_BUSY` (v3.17, a43455a1d572);
//! - every candidate node must pass `numa_has_capacity()` with `NUMA_HAS_CAPACITY` (v4.2),
//!   with `imbalance_pct` slack under `NUMA_HAS_CAPACITY_PCT` (v4.3);
//! - v3.13–v4.18 compare ("classic"): `imp ≥ best` wins, one-task-per-CPU pairs swap with no
//!   load check, idle targets refused only when the source is within its task capacity and
//!   the destination has none, `load_too_imbalanced` with 112% slack (capacity-normalised
//!   loads in v3.13–v3.17, capacity factors in v3.18+), and from v3.18 a pure move onto a
//!   *busy* CPU when moving beats swapping (`moveimp`);
//! - v4.19+ compare ("modern"): `maymove` from a strict `load_too_imbalanced`, swaps need
//!   `SMALLIMP` and beat the best by `SMALLIMP/2`, `numa_migrate_on` claims, preference
//!   biases for partners going home; with `NUMA_CLASSIFY` (v5.7) a destination with spare
//!   capacity takes a move only inside the load balancer's imbalance allowance (straight to
//!   the cached idle CPU) and never a same-group swap.
//!
//! Not modelled: the v6.16 kernel-thread swap skip (kernel threads have no NUMA state here
//! anyway unless the engine gives them some), `numa_nearest_node()` for CPU-less nodes.

use super::faults::TaskNuma;
use super::weight::{NumaTopologyType, group_weight, task_weight};
use super::{NumaEnv, NumaForm, NumaVariant};
use crate::sched::balance::find::adjust_numa_imbalance;
use crate::sched::types::{NumaMigrateDecision, NumaMove};
use crate::task::TaskId;

/// `SMALLIMP`: minimum swap improvement (scale 0..1998), v4.19+.
pub const SMALLIMP: i64 = 30;
/// `sd->smt_gain` of the SMT level (`SD_SIBLING_INIT` / `sd_init()`: 1178, "15 %"): until
/// the field was removed (2018, `[M]` v4.19/v4.20) an SMT sibling's `capacity_orig` was
/// `smt_gain / span_weight` (`default_scale_smt_capacity()`, later
/// `arch_scale_cpu_capacity(sd, cpu)`), 589 per thread of a 2-way core.
pub const SMT_GAIN: u64 = 1178;

/// `capacity_of(cpu)` as the v3.13–v4.18 kernels had it: the model's capacity (1024 on an
/// SMT x86 CPU, as today's kernels give it) scaled to `smt_gain / span_weight` of the SMT
/// domain. Only the NUMA mover's `update_numa_stats()` applies it (task_capacity, the
/// capacity-normalised loads); the load balancer keeps the model's capacity in every
/// profile (docs/fidelity.md).
pub fn smt_gain_capacity(capacity: u64, smt_weight: u32) -> u64 {
    if smt_weight > 1 {
        capacity * (SMT_GAIN / u64::from(smt_weight)) / CAP as u64
    } else {
        capacity
    }
}
/// `SCHED_CAPACITY_SCALE`.
const CAP: i64 = 1024;

/// `enum numa_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeType {
    HasSpare,
    FullyBusy,
    Overloaded,
}

/// `struct numa_stats` (the union of the fields of every form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumaStats {
    /// Σ load; capacity-normalised (`× 1024 / compute_capacity`) in the v3.13 form.
    pub load: i64,
    pub runnable: i64,
    pub util: i64,
    pub compute_capacity: i64,
    /// Σ `rq->nr_running` (≤ v4.18) or Σ CFS `h_nr_running` (v4.19+).
    pub nr_running: i64,
    /// CPUs in the node.
    pub weight: i64,
    /// v3.13: `round(capacity / 1024)`; v3.18+: `min(cores, round(capacity / 1024))`.
    pub task_capacity: i64,
    /// `nr_running < task_capacity`.
    pub has_free_capacity: bool,
    pub node_type: NodeType,
    /// Cached idle CPU (idle core first with SMT), v5.7+ destinations only.
    pub idle_cpu: Option<usize>,
}

/// `numa_classify(imbalance_pct, ns)`.
pub fn numa_classify(pct: i64, ns: &NumaStats) -> NodeType {
    if ns.nr_running > ns.weight
        && (ns.compute_capacity * 100 < ns.util * pct
            || ns.compute_capacity * pct < ns.runnable * 100)
    {
        return NodeType::Overloaded;
    }
    if ns.nr_running < ns.weight
        || (ns.compute_capacity * 100 > ns.util * pct
            && ns.compute_capacity * pct > ns.runnable * 100)
    {
        return NodeType::HasSpare;
    }
    NodeType::FullyBusy
}

/// `update_numa_stats(env, ns, nid, find_idle)` in the variant's form.
pub fn update_numa_stats<E: NumaEnv + ?Sized>(
    env: &E,
    p: TaskId,
    nid: usize,
    find_idle: bool,
    pct: i64,
    claimed: Option<usize>,
    v: &NumaVariant,
) -> NumaStats {
    let mut ns = NumaStats {
        load: 0,
        runnable: 0,
        util: 0,
        compute_capacity: 0,
        nr_running: 0,
        weight: 0,
        task_capacity: 0,
        has_free_capacity: false,
        node_type: NodeType::HasSpare,
        idle_cpu: None,
    };
    let modern = v.form >= NumaForm::V4_19;
    let mut idle_core: Option<usize> = None;
    let allowed = env.cpus_allowed(p);
    for cpu in env.topo().node_cpus[nid].iter() {
        ns.load += env.cpu_load(cpu) as i64;
        ns.runnable += env.cpu_runnable(cpu) as i64;
        ns.util += env.cpu_util(cpu) as i64;
        ns.nr_running += i64::from(if modern {
            env.h_nr_running(cpu)
        } else {
            env.nr_running(cpu)
        });
        ns.compute_capacity += if modern {
            env.capacity_of(cpu)
        } else {
            smt_gain_capacity(env.capacity_of(cpu), env.smt_weight(cpu))
        } as i64;
        ns.weight += 1;
        if find_idle && idle_core.is_none() && env.nr_running(cpu) == 0 && env.idle_cpu(cpu) {
            if env.numa_migrate_on(cpu) || claimed == Some(cpu) || !allowed.test(cpu) {
                continue;
            }
            if ns.idle_cpu.is_none() {
                ns.idle_cpu = Some(cpu);
            }
            if env.smt_present() && env.is_core_idle(cpu) {
                idle_core = Some(cpu);
            }
        }
    }
    if idle_core.is_some() {
        ns.idle_cpu = idle_core;
    }
    if ns.weight == 0 {
        return ns;
    }
    let cap = ns.compute_capacity.max(1);
    let round = (cap + CAP / 2) / CAP;
    if v.form == NumaForm::V3_13 {
        ns.load = ns.load * CAP / cap;
        ns.task_capacity = round;
    } else {
        // smt := ceil(cpus / capacity) (1 < smt_power < 2); cores = cpus / smt.
        let smt = (CAP * ns.weight + cap - 1) / cap;
        ns.task_capacity = (ns.weight / smt.max(1)).min(round);
    }
    ns.has_free_capacity = ns.nr_running < ns.task_capacity;
    ns.node_type = numa_classify(pct, &ns);
    ns
}

/// `struct task_numa_env` plus the search state.
#[derive(Clone, Debug)]
pub struct TaskNumaEnv {
    pub p: TaskId,
    pub src_cpu: usize,
    pub src_nid: usize,
    pub dst_cpu: usize,
    pub dst_nid: usize,
    pub imb_numa_nr: i64,
    pub src_stats: NumaStats,
    pub dst_stats: NumaStats,
    pub imbalance_pct: i64,
    pub dist: u32,
    pub best_task: Option<TaskId>,
    pub best_imp: i64,
    pub best_cpu: Option<usize>,
    /// The rq whose `numa_migrate_on` this search holds (v4.19+).
    pub claimed: Option<usize>,
}

/// `load_too_imbalanced()` in the variant's form. `src_load` / `dst_load` are the loads
/// after the move or swap; the originals come from `env`'s stats.
pub fn load_too_imbalanced(
    src_load: i64,
    dst_load: i64,
    env: &TaskNumaEnv,
    form: NumaForm,
) -> bool {
    let (osrc, odst) = (env.src_stats.load, env.dst_stats.load);
    match form {
        NumaForm::V3_13 => {
            let (mut s, mut d) = (src_load, dst_load);
            if d < s {
                std::mem::swap(&mut s, &mut d);
            }
            let imb = d * 100 - s * env.imbalance_pct;
            if imb <= 0 {
                return false;
            }
            let (mut os, mut od) = (osrc, odst);
            if od < os {
                std::mem::swap(&mut os, &mut od);
            }
            let old_imb = od * 100 - os * env.imbalance_pct;
            imb > old_imb
        }
        NumaForm::V3_18 => {
            let scap = env.src_stats.compute_capacity;
            let dcap = env.dst_stats.compute_capacity;
            let (mut s, mut d) = (src_load, dst_load);
            if d < s {
                std::mem::swap(&mut s, &mut d);
            }
            let imb = d * scap * 100 - s * dcap * env.imbalance_pct;
            if imb <= 0 {
                return false;
            }
            let (mut os, mut od) = (osrc, odst);
            if od < os {
                std::mem::swap(&mut os, &mut od);
            }
            let old_imb = od * scap * 100 - os * dcap * env.imbalance_pct;
            imb > old_imb
        }
        NumaForm::V4_19 | NumaForm::V5_7 => {
            let scap = env.src_stats.compute_capacity;
            let dcap = env.dst_stats.compute_capacity;
            let imb = (dst_load * scap - src_load * dcap).abs();
            let old_imb = (odst * scap - osrc * dcap).abs();
            imb > old_imb
        }
    }
}

/// `numa_has_capacity(env)` (v4.2–v4.18): the destination is considered only if it is not
/// full while the source has room, and the source is more loaded per unit of capacity
/// (with `imbalance_pct` slack when `pct`).
pub fn numa_has_capacity(env: &TaskNumaEnv, pct: bool) -> bool {
    let (src, dst) = (&env.src_stats, &env.dst_stats);
    if src.has_free_capacity && !dst.has_free_capacity {
        return false;
    }
    if pct {
        src.load * dst.compute_capacity * env.imbalance_pct > dst.load * src.compute_capacity * 100
    } else {
        src.load * dst.compute_capacity > dst.load * src.compute_capacity
    }
}

fn tn<E: NumaEnv + ?Sized>(env: &E, p: TaskId) -> &TaskNuma {
    env.task_numa(p)
}

fn tw<E: NumaEnv + ?Sized>(env: &E, p: TaskId, nid: usize, dist: u32, form: NumaForm) -> i64 {
    task_weight(tn(env, p), env.topo(), nid, dist, form)
}

fn gw<E: NumaEnv + ?Sized>(env: &E, p: TaskId, nid: usize, dist: u32, form: NumaForm) -> i64 {
    group_weight(env.group_of(p), env.topo(), nid, dist, form)
}

/// `numa_migrate_on` as this search sees it: another migration's claim or its own.
fn migrate_on<E: NumaEnv + ?Sized>(env: &E, s: &TaskNumaEnv, cpu: usize) -> bool {
    env.numa_migrate_on(cpu) || s.claimed == Some(cpu)
}

/// `task_numa_assign(env, p, imp)`: record the best candidate. v4.19+ claims the
/// destination rq's `numa_migrate_on` (or another idle CPU of the node whose flag is free)
/// and releases the previous best's claim.
fn task_numa_assign<E: NumaEnv + ?Sized>(
    env: &E,
    s: &mut TaskNumaEnv,
    cur: Option<TaskId>,
    imp: i64,
    v: &NumaVariant,
) {
    if v.form >= NumaForm::V4_19 {
        if s.best_cpu != Some(s.dst_cpu) && migrate_on(env, s, s.dst_cpu) {
            let mask = env.topo().node_cpus[s.dst_nid];
            let allowed = env.cpus_allowed(s.p);
            let mut found = false;
            for cpu in mask.iter_wrap(s.dst_cpu + 1) {
                if Some(cpu) == s.best_cpu || !env.idle_cpu(cpu) || !allowed.test(cpu) {
                    continue;
                }
                s.dst_cpu = cpu;
                if !migrate_on(env, s, cpu) {
                    found = true;
                    break;
                }
            }
            if !found {
                return;
            }
        }
        s.claimed = Some(s.dst_cpu);
    }
    s.best_task = cur;
    s.best_imp = imp;
    s.best_cpu = Some(s.dst_cpu);
}

/// `task_numa_compare()`, v3.13–v4.18.
fn compare_classic<E: NumaEnv + ?Sized>(
    env: &E,
    s: &mut TaskNumaEnv,
    taskimp: i64,
    groupimp: i64,
    v: &NumaVariant,
) {
    let form = v.form;
    let p = s.p;
    let p_ng = tn(env, p).group;
    let cur = env.curr(s.dst_cpu).filter(|&c| !env.is_exiting(c));
    if cur == Some(p) {
        return;
    }
    let mut imp = if form == NumaForm::V3_13 {
        if groupimp > 0 { groupimp } else { taskimp }
    } else if p_ng.is_some() {
        groupimp
    } else {
        taskimp
    };
    let moveimp = imp;
    let dist = s.dist;
    if let Some(c) = cur {
        if !env.cpus_allowed(c).test(s.src_cpu) {
            return;
        }
        let cur_ng = tn(env, c).group;
        if cur_ng == p_ng {
            imp = taskimp + tw(env, c, s.src_nid, dist, form) - tw(env, c, s.dst_nid, dist, form);
            if cur_ng.is_some() {
                imp -= imp / 16;
            }
        } else {
            if form == NumaForm::V3_13 {
                imp = if p_ng.is_some() { groupimp } else { taskimp };
            }
            imp += if cur_ng.is_some() {
                gw(env, c, s.src_nid, dist, form) - gw(env, c, s.dst_nid, dist, form)
            } else {
                tw(env, c, s.src_nid, dist, form) - tw(env, c, s.dst_nid, dist, form)
            };
        }
    }
    if form == NumaForm::V3_13 {
        if imp < s.best_imp {
            return;
        }
    } else if imp <= s.best_imp && moveimp <= s.best_imp {
        return;
    }
    match cur {
        None => {
            let blocked = if form == NumaForm::V3_13 {
                s.src_stats.has_free_capacity && !s.dst_stats.has_free_capacity
            } else {
                s.src_stats.nr_running <= s.src_stats.task_capacity
                    && !s.dst_stats.has_free_capacity
            };
            if blocked {
                return;
            }
        }
        Some(_) => {
            // Balance doesn't matter much if we're running a task per CPU.
            let pair = env.nr_running(s.src_cpu) == 1 && env.nr_running(s.dst_cpu) == 1;
            if pair && (form == NumaForm::V3_13 || imp > s.best_imp) {
                task_numa_assign(env, s, cur, imp, v);
                return;
            }
        }
    }
    let load = env.task_h_load(p) as i64;
    let mut dst_load = s.dst_stats.load + load;
    let mut src_load = s.src_stats.load - load;
    if form != NumaForm::V3_13 && moveimp > imp && moveimp > s.best_imp {
        // Moving p alone beats swapping: a pure move, onto this (possibly busy) CPU.
        if !load_too_imbalanced(src_load, dst_load, s, form) {
            task_numa_assign(env, s, None, moveimp - 1, v);
            return;
        }
    }
    if form != NumaForm::V3_13 && imp <= s.best_imp {
        return;
    }
    if let Some(c) = cur {
        let l = env.task_h_load(c) as i64;
        dst_load -= l;
        src_load += l;
    }
    if load_too_imbalanced(src_load, dst_load, s, form) {
        return;
    }
    if cur.is_none() && form != NumaForm::V3_13 {
        s.dst_cpu = env.select_idle_sibling(p, s.src_cpu, s.dst_cpu);
    }
    task_numa_assign(env, s, cur, imp, v);
}

/// `task_numa_compare()`, v4.19+. Returns "stop searching".
fn compare_modern<E: NumaEnv + ?Sized>(
    env: &E,
    s: &mut TaskNumaEnv,
    taskimp: i64,
    groupimp: i64,
    maymove: bool,
    v: &NumaVariant,
) -> bool {
    let form = v.form;
    let p = s.p;
    let p_ng = tn(env, p).group;
    if migrate_on(env, s, s.dst_cpu) {
        return false;
    }
    let mut cur = env.curr(s.dst_cpu).filter(|&c| !env.is_exiting(c));
    if cur == Some(p) {
        return true;
    }
    let pref = |t: TaskId| tn(env, t).preferred_nid;
    let mut imp = if p_ng.is_some() { groupimp } else { taskimp };
    let moveimp = imp;
    let dist = s.dist;
    let assign = 'decide: {
        let Some(c) = cur else {
            if maymove && moveimp >= s.best_imp {
                break 'decide true;
            }
            return false;
        };
        if !env.cpus_allowed(c).test(s.src_cpu) {
            return false;
        }
        if let Some(b) = s.best_task
            && pref(b) == Some(s.src_nid)
            && pref(c) != Some(s.src_nid)
        {
            return false;
        }
        let cur_ng = tn(env, c).group;
        if cur_ng == p_ng {
            if v.classify && s.dst_stats.node_type == NodeType::HasSpare {
                return false;
            }
            imp = taskimp + tw(env, c, s.src_nid, dist, form) - tw(env, c, s.dst_nid, dist, form);
            if cur_ng.is_some() {
                imp -= imp / 16;
            }
        } else if cur_ng.is_some() && p_ng.is_some() {
            imp += gw(env, c, s.src_nid, dist, form) - gw(env, c, s.dst_nid, dist, form);
        } else {
            imp += tw(env, c, s.src_nid, dist, form) - tw(env, c, s.dst_nid, dist, form);
        }
        if pref(c) == Some(s.dst_nid) {
            imp -= imp / 16;
        }
        if pref(c) == Some(s.src_nid) {
            imp += imp / 8;
        }
        if maymove && moveimp > imp && moveimp > s.best_imp {
            imp = moveimp;
            cur = None;
            break 'decide true;
        }
        if let Some(b) = s.best_task
            && pref(c) == Some(s.src_nid)
            && pref(b) != Some(s.src_nid)
        {
            break 'decide true;
        }
        if imp < SMALLIMP || imp <= s.best_imp + SMALLIMP / 2 {
            return false;
        }
        let load = env.task_h_load(p) as i64 - env.task_h_load(c) as i64;
        if load != 0 {
            let dst_load = s.dst_stats.load + load;
            let src_load = s.src_stats.load - load;
            if load_too_imbalanced(src_load, dst_load, s, form) {
                return false;
            }
        }
        true
    };
    debug_assert!(assign);
    if cur.is_none() {
        let mut cpu = s.dst_stats.idle_cpu.unwrap_or(s.dst_cpu);
        if !env.idle_cpu(cpu)
            && let Some(b) = s.best_cpu
            && env.idle_cpu(b)
        {
            cpu = b;
        }
        s.dst_cpu = cpu;
    }
    task_numa_assign(env, s, cur, imp, v);
    let mut stop = maymove && cur.is_none() && s.best_cpu.is_some_and(|b| env.idle_cpu(b));
    if !maymove && s.best_task.is_some_and(|b| pref(b) == Some(s.src_nid)) {
        stop = true;
    }
    stop
}

/// `task_numa_find_cpu(env, taskimp, groupimp)`: compare every allowed CPU of `dst_nid`.
pub fn task_numa_find_cpu<E: NumaEnv + ?Sized>(
    env: &E,
    s: &mut TaskNumaEnv,
    taskimp: i64,
    groupimp: i64,
    v: &NumaVariant,
) {
    let cpus = env.topo().node_cpus[s.dst_nid];
    let allowed = *env.cpus_allowed(s.p);
    if v.form < NumaForm::V4_19 {
        for cpu in cpus.iter() {
            if !allowed.test(cpu) {
                continue;
            }
            s.dst_cpu = cpu;
            compare_classic(env, s, taskimp, groupimp, v);
        }
        return;
    }
    let mut maymove = false;
    if v.classify && s.dst_stats.node_type == NodeType::HasSpare {
        let src_running = s.src_stats.nr_running - 1;
        let dst_running = s.dst_stats.nr_running + 1;
        let imbalance = (dst_running - src_running).max(0);
        let imbalance = adjust_numa_imbalance(imbalance, dst_running, s.imb_numa_nr);
        if imbalance == 0 {
            maymove = true;
            if let Some(idle) = s.dst_stats.idle_cpu {
                s.dst_cpu = idle;
                task_numa_assign(env, s, None, 0, v);
                return;
            }
        }
    } else {
        let load = env.task_h_load(s.p) as i64;
        maymove = !load_too_imbalanced(s.src_stats.load - load, s.dst_stats.load + load, s, v.form);
    }
    for cpu in cpus.iter() {
        if !allowed.test(cpu) {
            continue;
        }
        s.dst_cpu = cpu;
        if compare_modern(env, s, taskimp, groupimp, maymove, v) {
            break;
        }
    }
}

/// `task_numa_migrate(p)`: search the preferred node, then (if nothing was found, or the
/// task's group spans several active nodes from v3.18) the other nodes, for an idle CPU to
/// move to or a task to swap with.
pub fn task_numa_migrate<E: NumaEnv + ?Sized>(
    env: &E,
    p: TaskId,
    v: &NumaVariant,
) -> NumaMigrateDecision {
    let form = v.form;
    let src_cpu = env.task_cpu(p);
    let src_nid = env.cpu_to_node(src_cpu);
    let mut out = NumaMigrateDecision {
        action: NumaMove::Stay,
        set_preferred: None,
        reset_scan_period: false,
        claimed_cpu: None,
        best_imp: 0,
    };
    let Some((sd_pct, imb_numa_nr)) = env.sd_numa(src_cpu) else {
        out.action = NumaMove::NoNumaDomain;
        out.set_preferred = Some(src_nid);
        return out;
    };
    let Some(pref_nid) = tn(env, p).preferred_nid else {
        return out;
    };
    let topo = env.topo();
    let pct = 100 + (i64::from(sd_pct) - 100) / 2;
    let dist = topo.node_distance(src_nid, pref_nid);
    let mut s = TaskNumaEnv {
        p,
        src_cpu,
        src_nid,
        dst_cpu: src_cpu,
        dst_nid: pref_nid,
        imb_numa_nr: i64::from(imb_numa_nr),
        src_stats: update_numa_stats(env, p, src_nid, false, pct, None, v),
        dst_stats: update_numa_stats(env, p, pref_nid, v.classify, pct, None, v),
        imbalance_pct: pct,
        dist,
        best_task: None,
        best_imp: 0,
        best_cpu: None,
        claimed: None,
    };
    let mut taskweight = tw(env, p, src_nid, dist, form);
    let mut groupweight = gw(env, p, src_nid, dist, form);
    let taskimp = tw(env, p, pref_nid, dist, form) - taskweight;
    let groupimp = gw(env, p, pref_nid, dist, form) - groupweight;

    let preferred_ok = (v.migrate_preferred_busy || s.dst_stats.has_free_capacity)
        && (!v.has_capacity || numa_has_capacity(&s, v.has_capacity_pct));
    if preferred_ok {
        task_numa_find_cpu(env, &mut s, taskimp, groupimp, v);
    }

    let ng = env.group_of(p);
    let multi_active = form >= NumaForm::V3_18 && ng.is_some_and(|g| g.nr_active_nodes(v) > 1);
    if s.best_cpu.is_none() || multi_active {
        for nid in 0..topo.nr_nodes() {
            if nid == src_nid || nid == pref_nid {
                continue;
            }
            if form >= NumaForm::V4_19 && topo.node_cpus[nid].is_empty() {
                continue;
            }
            let mut d = s.dist;
            if form >= NumaForm::V3_18 {
                // The kernel measures from src to env.dst_nid (the previous node), not nid.
                d = topo.node_distance(src_nid, s.dst_nid);
                if topo.topology_type == NumaTopologyType::Backplane && d != s.dist {
                    taskweight = tw(env, p, src_nid, d, form);
                    groupweight = gw(env, p, src_nid, d, form);
                }
            }
            let ti = tw(env, p, nid, d, form) - taskweight;
            let gi = gw(env, p, nid, d, form) - groupweight;
            if ti < 0 && gi < 0 {
                continue;
            }
            s.dist = d;
            s.dst_nid = nid;
            s.dst_stats = update_numa_stats(env, p, nid, v.classify, pct, s.claimed, v);
            if v.has_capacity && !numa_has_capacity(&s, v.has_capacity_pct) {
                continue;
            }
            task_numa_find_cpu(env, &mut s, ti, gi, v);
        }
    }

    match form {
        NumaForm::V3_13 => {
            if s.best_cpu.is_some() && ng.is_some_and(|g| g.is_active_node(s.dst_nid, v)) {
                out.set_preferred = Some(s.dst_nid);
            }
        }
        NumaForm::V3_18 => {
            if let Some(g) = ng {
                let nid = if s.best_cpu.is_none() {
                    src_nid
                } else {
                    s.dst_nid
                };
                if g.is_active_node(nid, v) {
                    out.set_preferred = Some(s.dst_nid);
                }
            }
        }
        NumaForm::V4_19 | NumaForm::V5_7 => {
            if ng.is_some() {
                let nid = s.best_cpu.map_or(src_nid, |c| env.cpu_to_node(c));
                if Some(nid) != tn(env, p).preferred_nid {
                    out.set_preferred = Some(nid);
                }
            }
        }
    }
    out.claimed_cpu = s.claimed;
    out.best_imp = s.best_imp;
    let Some(best_cpu) = s.best_cpu else {
        return out;
    };
    out.reset_scan_period = v.reset_scan_period_on_migrate;
    out.action = match s.best_task {
        None => NumaMove::Move { dst_cpu: best_cpu },
        Some(other) => NumaMove::Swap {
            dst_cpu: best_cpu,
            other,
        },
    };
    out
}

/// `numa_migrate_preferred(p)`'s retry interval: `min(HZ, msecs_to_jiffies(period) / 16)`
/// jiffies, in ns.
pub fn numa_migrate_retry_interval_ns(scan_period_ms: u32, hz: u32) -> u64 {
    let hz = u64::from(hz.max(1));
    let jiffies = (u64::from(scan_period_ms) * hz).div_ceil(1000);
    hz.min(jiffies / 16) * (1_000_000_000 / hz)
}

/// What `numa_migrate_preferred(p)` does before calling `task_numa_migrate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigratePreferred {
    /// No preferred node or no statistics: nothing, the retry time is unchanged.
    NoStats,
    /// Already on the preferred node (retry time set).
    OnPreferred,
    /// Call `task_numa_migrate` (retry time set).
    Attempt,
}

/// `numa_migrate_preferred(p)`: set the retry time, then say whether to attempt a move.
pub fn numa_migrate_preferred(
    t: &mut TaskNuma,
    task_node: usize,
    now_ns: u64,
    hz: u32,
) -> MigratePreferred {
    let Some(pref) = t.preferred_nid else {
        return MigratePreferred::NoStats;
    };
    if t.faults.is_none() {
        return MigratePreferred::NoStats;
    }
    t.numa_migrate_retry_ns = now_ns + numa_migrate_retry_interval_ns(t.numa_scan_period_ms, hz);
    if task_node == pref {
        MigratePreferred::OnPreferred
    } else {
        MigratePreferred::Attempt
    }
}

/// Why a NUMA move or swap failed (the kernel's return codes; `sched_stick_numa`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateFail {
    /// `-EINVAL`: same CPU, inactive CPU or not allowed, found before stopping any CPU.
    Invalid,
    /// `-EAGAIN`: the tasks moved or their affinity changed before the stopper ran.
    Again,
}

/// `migrate_task_to(p, target_cpu)`: `Ok(false)` when already there (nothing to do),
/// `Ok(true)` when the source CPU's stopper must move it (`stop_one_cpu(curr_cpu,
/// migration_cpu_stop)`), `Err(Invalid)` when the target is not allowed.
pub fn migrate_task_to(
    curr_cpu: usize,
    target_cpu: usize,
    allowed: &crate::cpumask::CpuMask,
) -> Result<bool, MigrateFail> {
    if curr_cpu == target_cpu {
        return Ok(false);
    }
    if !allowed.test(target_cpu) {
        return Err(MigrateFail::Invalid);
    }
    Ok(true)
}

/// One side of a swap as `migrate_swap_stop()` finds it under both rq locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapSide {
    pub task: TaskId,
    /// The CPU the decision saw it on.
    pub cpu: usize,
    /// `task_cpu()` now.
    pub task_cpu: usize,
    /// `task_on_rq_queued()`: queued (running or runnable) rather than sleeping.
    pub queued: bool,
    /// Allowed on the other side's CPU.
    pub allowed_other: bool,
    /// `cpu_active(cpu)`.
    pub cpu_active: bool,
}

/// What `__migrate_swap_task(p, cpu)` does to one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapLeg {
    /// Queued: deactivate, `set_task_cpu`, activate on `to`, `wakeup_preempt`.
    Move { task: TaskId, to: usize },
    /// Sleeping: only `p->wake_cpu = cpu`, so its next wakeup is placed there.
    SetWakeCpu { task: TaskId, cpu: usize },
}

/// `migrate_swap(cur, p, target_cpu, curr_cpu)` + `migrate_swap_stop()`: the pre-checks
/// (`-EINVAL`), the re-checks under both rq locks when the stoppers run (`-EAGAIN`), and
/// the two legs. `src` is the task that asked (on `curr_cpu`), `dst` the partner.
pub fn migrate_swap(src: &SwapSide, dst: &SwapSide) -> Result<[SwapLeg; 2], MigrateFail> {
    if src.cpu == dst.cpu
        || !src.cpu_active
        || !dst.cpu_active
        || !src.allowed_other
        || !dst.allowed_other
    {
        return Err(MigrateFail::Invalid);
    }
    if dst.task_cpu != dst.cpu || src.task_cpu != src.cpu {
        return Err(MigrateFail::Again);
    }
    let leg = |s: &SwapSide, to: usize| {
        if s.queued {
            SwapLeg::Move { task: s.task, to }
        } else {
            SwapLeg::SetWakeCpu {
                task: s.task,
                cpu: to,
            }
        }
    };
    Ok([leg(src, dst.cpu), leg(dst, src.cpu)])
}
