//! Preferred-node selection: `task_numa_placement()` (decay the statistics once per
//! completed mm scan pass, pick the node with the most memory faults — the group's when
//! grouped) and `preferred_group_nid()` for GLUELESS_MESH / BACKPLANE machines.
//!
//! Decay (per node and private/shared): `mem += membuf − mem/2` (halves per pass), and the
//! CPU side `cpu += f_weight − cpu/2` with `f_weight = (runtime << 16) / (period + 1) ×
//! cpubuf / (total_locality_faults + 1)` — CPU-side faults weighted by the task's share of
//! CPU time since the last placement.
//!
//! Forms: v3.13–v3.17 combine the task's and the group's argmax by `task_weight +
//! group_weight` when they differ and call `numa_migrate_preferred()` right after a change;
//! v3.18–v4.18 use `preferred_group_nid()` and call it whenever the task is off its preferred
//! node (`[M]` for the exact release text); v4.19+ only set the node (the caller runs
//! `numa_migrate_preferred()` after placement, both gated by the retry time).

use super::faults::{NumaFaultsStats, TaskNuma};
use super::scan::kernel_uint;
use super::weight::{NumaTopo, NumaTopologyType, group_weight, task_weight};
use super::{LOCAL_DISTANCE, NumaForm, NumaGroup, NumaGroups, NumaVariant};

/// What `task_numa_placement()` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The mm scan sequence had advanced: statistics were decayed.
    pub ran: bool,
    /// `sched_setnuma()` was called (the caller re-accounts the rq NUMA counters).
    pub preferred_changed: bool,
    /// The form calls `numa_migrate_preferred()` from inside placement (v3.x–v4.18).
    pub migrate_now: bool,
    /// `mm->numa_next_scan` pushed out by the scan-period update, if it did.
    pub numa_next_scan_ns: Option<u64>,
    /// Shared and private MEMBUF faults folded in (`fault_types`).
    pub fault_types: [i64; 2],
}

/// `numa_get_avg_runtime(p, &period)`: runtime and wall time since the last placement
/// (`exec_start` is the start of the current slice); the first time, the PELT
/// `(load_sum, LOAD_AVG_MAX)` pair the caller passes.
pub fn numa_get_avg_runtime(
    t: &mut TaskNuma,
    exec_start_ns: u64,
    sum_exec_runtime_ns: u64,
    first: (u64, u64),
) -> (u64, u64) {
    let (delta, period) = if t.last_task_numa_placement_ns != 0 {
        (
            sum_exec_runtime_ns - t.last_sum_exec_runtime_ns,
            exec_start_ns.saturating_sub(t.last_task_numa_placement_ns),
        )
    } else {
        first
    };
    t.last_sum_exec_runtime_ns = sum_exec_runtime_ns;
    t.last_task_numa_placement_ns = exec_start_ns;
    (delta, period)
}

/// `preferred_group_nid(p, nid)`.
pub fn preferred_group_nid(ng: &NumaGroup, topo: &NumaTopo, nid: usize, form: NumaForm) -> usize {
    match topo.topology_type {
        NumaTopologyType::Direct => nid,
        NumaTopologyType::GluelessMesh => {
            let dist = topo.max_distance;
            let (mut max_score, mut max_node) = (0, nid);
            for node in 0..topo.nr_nodes() {
                let score = group_weight(Some(ng), topo, node, dist, form);
                if score > max_score {
                    max_score = score;
                    max_node = node;
                }
            }
            max_node
        }
        NumaTopologyType::Backplane => {
            let mut nid = nid;
            let mut nodes: u64 = (1u64 << topo.nr_nodes()) - 1;
            let mut dist = topo.max_distance;
            while dist > LOCAL_DISTANCE {
                if topo.find_numa_distance(dist) {
                    let mut max_faults = 0;
                    let mut max_group = 0u64;
                    for a in 0..topo.nr_nodes() {
                        if nodes & (1 << a) == 0 {
                            continue;
                        }
                        let mut faults = 0;
                        let mut this_group = 0u64;
                        for b in 0..topo.nr_nodes() {
                            if nodes & (1 << b) != 0 && topo.node_distance(a, b) < dist {
                                faults += ng.group_faults(b);
                                this_group |= 1 << b;
                                nodes &= !(1 << b);
                            }
                        }
                        if faults > max_faults {
                            max_faults = faults;
                            max_group = this_group;
                            nid = a;
                        }
                    }
                    if max_faults == 0 {
                        break;
                    }
                    nodes = max_group;
                }
                dist -= 1;
            }
            nid
        }
    }
}

/// Inputs of one `task_numa_placement()` besides the task and groups.
#[derive(Clone, Copy, Debug)]
pub struct PlacementCtx {
    /// `mm->numa_scan_seq`.
    pub mm_scan_seq: u32,
    pub exec_start_ns: u64,
    pub sum_exec_runtime_ns: u64,
    /// PELT `(load_sum, LOAD_AVG_MAX)` for a first placement.
    pub first_runtime: (u64, u64),
    /// `task_scan_min(p)` / `task_scan_max(p)` (ms) for the period update.
    pub scan_min_ms: u64,
    pub scan_max_ms: u64,
    /// The task's current node.
    pub task_node: usize,
    pub now_ns: u64,
}

/// `task_numa_placement(p)`.
pub fn task_numa_placement(
    t: &mut TaskNuma,
    groups: &mut NumaGroups,
    topo: &NumaTopo,
    ctx: &PlacementCtx,
    v: &NumaVariant,
) -> Placement {
    let mut out = Placement::default();
    if t.numa_scan_seq == ctx.mm_scan_seq || t.faults.is_none() {
        return out;
    }
    out.ran = true;
    t.numa_scan_seq = ctx.mm_scan_seq;
    t.numa_scan_period_max_ms = kernel_uint(ctx.scan_max_ms);
    let total_faults = t.faults_locality[0] + t.faults_locality[1];
    let (runtime, period) = numa_get_avg_runtime(
        t,
        ctx.exec_start_ns,
        ctx.sum_exec_runtime_ns,
        ctx.first_runtime,
    );
    let gid = t.group;
    let nr = topo.nr_nodes();
    let (mut max_faults, mut max_nid) = (0i64, None);
    let (mut max_group_faults, mut max_group_nid) = (0i64, None);
    {
        let f = t.faults.as_mut().expect("checked");
        for nid in 0..nr {
            let (mut faults, mut gfaults) = (0i64, 0i64);
            for private in [false, true] {
                use NumaFaultsStats::*;
                let membuf = f.get(MemBuf, nid, private);
                let mem = f.get(Mem, nid, private);
                let diff = membuf - mem / 2;
                out.fault_types[usize::from(private)] += membuf;
                f.add(MemBuf, nid, private, -membuf);
                // Saturated where a bare cast would wrap (runtime <= period keeps it below 2^17).
                let f_weight =
                    i64::try_from((u128::from(runtime) << 16) / (u128::from(period) + 1))
                        .unwrap_or(i64::MAX);
                // The kernel's unsigned long product; runtime ≤ period keeps it far below
                // 2^63, and i128 keeps a clock skew from overflowing (clamped, not wrapped).
                let f_weight = (i128::from(f_weight) * i128::from(f.get(CpuBuf, nid, private))
                    / i128::from(total_faults + 1))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX));
                let f_weight = i64::try_from(f_weight).expect("clamped to the i64 range");
                let f_diff = f_weight - f.get(Cpu, nid, private) / 2;
                let cpubuf = f.get(CpuBuf, nid, private);
                f.add(CpuBuf, nid, private, -cpubuf);
                f.add(Mem, nid, private, diff);
                f.add(Cpu, nid, private, f_diff);
                faults += f.get(Mem, nid, private);
                t.total_numa_faults += diff;
                if let Some(g) = gid {
                    let ng = groups.get_mut(g);
                    ng.add(Mem, nid, private, diff);
                    ng.add(Cpu, nid, private, f_diff);
                    ng.total_faults += diff;
                    let i = 2 * nid + usize::from(private);
                    gfaults += ng.faults[i];
                }
            }
            if faults > max_faults {
                max_faults = faults;
                max_nid = Some(nid);
            }
            if gfaults > max_group_faults {
                max_group_faults = gfaults;
                max_group_nid = Some(nid);
            }
        }
    }
    let ng_ref = gid.map(|g| groups.get(g).clone());
    let scan_update = |t: &mut TaskNuma, out: &mut Placement| {
        out.numa_next_scan_ns = super::scan::update_task_scan_period(
            t,
            out.fault_types[0],
            out.fault_types[1],
            ctx.scan_min_ms,
            ctx.scan_max_ms,
            ctx.now_ns,
            v,
        );
    };
    match v.form {
        NumaForm::V3_13 => {
            scan_update(t, &mut out);
            if let Some(g) = gid {
                groups.get_mut(g).update_active_nodes(v);
                if max_nid != max_group_nid {
                    let ng = groups.get(g).clone();
                    let mut max_weight = 0;
                    for nid in 0..nr {
                        let w = task_weight(t, topo, nid, 0, v.form)
                            + group_weight(Some(&ng), topo, nid, 0, v.form);
                        if w > max_weight {
                            max_weight = w;
                            max_nid = Some(nid);
                        }
                    }
                }
            }
            if max_faults != 0 && max_nid != t.preferred_nid {
                t.preferred_nid = max_nid;
                out.preferred_changed = true;
                out.migrate_now = true;
            }
        }
        NumaForm::V3_18 => {
            scan_update(t, &mut out);
            if let Some(g) = gid {
                groups.get_mut(g).update_active_nodes(v);
                let ng = groups.get(g);
                max_nid = max_group_nid.map(|n| preferred_group_nid(ng, topo, n, v.form));
            }
            if max_faults != 0 {
                if max_nid != t.preferred_nid {
                    t.preferred_nid = max_nid;
                    out.preferred_changed = true;
                }
                out.migrate_now = Some(ctx.task_node) != t.preferred_nid;
            }
        }
        NumaForm::V4_19 | NumaForm::V5_7 => {
            let mut best = if ng_ref.is_some() {
                max_group_faults
            } else {
                max_faults
            };
            let mut nid = if ng_ref.is_some() {
                max_group_nid
            } else {
                max_nid
            };
            if let Some(g) = gid {
                groups.get_mut(g).update_active_nodes(v);
                let ng = groups.get(g);
                nid = nid.map(|n| preferred_group_nid(ng, topo, n, v.form));
            }
            if ng_ref.is_none() {
                best = max_faults;
            }
            if best != 0 && nid != t.preferred_nid {
                t.preferred_nid = nid;
                out.preferred_changed = true;
            }
            scan_update(t, &mut out);
        }
    }
    out
}
