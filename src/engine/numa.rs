//! Dynamic process memory in a run and the engine's side of NUMA balancing (docs/numa.md,
//! "Phase 2").
//!
//! The per-process memory of the tasks that declare one (`TaskSpec::memory`): one [`Mm`]
//! per process with a shared region and one private region per thread, first-touched under
//! the task's memory policy when the task first runs; the speed model that turns page
//! placement and per-node bandwidth congestion into a running task's progress rate; the
//! access sampling that turns run time into hinting faults; and the counters of the NUMA
//! moves the engine carried out. The scheduler's side of NUMA balancing (fault statistics,
//! groups, scan state, vmstat, the variant) is the policy's
//! ([`crate::policy::numa_balancing::NumaBalancing`]): the hooks of `engine/numa_hooks.rs`
//! report facts to it and apply the decisions it returns.
//!
//! Tasks with a default `TaskMemory` (no private or shared working set) are not part of this
//! model: they keep the per-task page shares of [`super::mempolicy`] and a run without any
//! memory-model task has no [`EngineNuma`] at all (results identical to before).
//!
//! **Hinting-fault sampling model** (an approximation, docs/fidelity.md): a running task
//! accesses page groups at `access_mib_s` = max(its `bandwidth_mib_s`,
//! [`MIN_ACCESS_MIB_S`]) / 2 MiB groups per second of run time. At each tick the accesses
//! of the run time since the last sample (with a fractional carry; at most
//! [`MAX_ACCESSES_PER_TICK`]) are drawn from the task's own NUMA random stream: the shared
//! region with probability `shared_access_permille`, else its private region, then a
//! uniform page group of that region. A drawn group that is PROT_NONE takes a hinting
//! fault (`do_numa_page()` → `task_numa_fault()`), in draw order.

use std::collections::BTreeMap;

use crate::cost::CostModel;
use crate::memory::bandwidth::{TaskMemDemand, node_congestion_into};
use crate::memory::migrate::MigrateCost;
use crate::memory::{Mm, MmId, PAGE_GROUP_BYTES};
use crate::policy::SchedPolicy;
use crate::policy::numa_balancing::NumaBalancing;
use crate::rng::{RngStream, StreamKind};
use crate::sched::types::{MigrationReason, NumaMove};
use crate::task::{TaskId, TaskSpec};
use crate::topology::Machine;
use crate::units::{count_floor, ppm_round, usize_from_u64};

/// The id of the mm at `idx` of the mm table. Fits: one mm per process, so fewer than tasks.
fn mm_id(idx: usize) -> MmId {
    MmId(u32::try_from(idx).expect("mm index above u32::MAX: beyond the task limit"))
}

/// Lowest access rate of a memory-model task (MiB/s of page-group touches): a task that is
/// not bandwidth-bound still walks its working set.
pub const MIN_ACCESS_MIB_S: f64 = 512.0;
/// Bound on the accesses drawn per tick (keeps a tick's fault sampling cheap).
pub const MAX_ACCESSES_PER_TICK: u64 = 64;
/// Cost of one NUMA hinting fault (trap, `do_numa_page()`, PTE restore): an estimate of
/// `shared/reference/kernel-numa-balancing.md` §7.3 (1–3 µs).
pub const HINT_FAULT_NS: u64 = 2_000;
/// Cost of `task_numa_work()`: per marked page group (a PMD `change_prot_numa()` update)
/// and per pass (VMA walk, TLB flush), estimates.
pub const SCAN_GROUP_NS: u64 = 400;
pub const SCAN_BASE_NS: u64 = 5_000;
/// Memory-stall share of a task whose working set misses the LLC entirely (top-down
/// analyses put memory-bound codes at 60–80 % backend-memory stalls; docs/fidelity.md).
pub const STALL_SHARE_MAX: f64 = 0.7;

/// Memory-stall share `m` of a task with a working set of `ws_kib` and `llc_kib` of last
/// level cache to itself: the capacity-miss ratio of a uniformly accessed working set,
/// `1 − min(1, llc / ws)`, times [`STALL_SHARE_MAX`].
pub fn stall_share_from_footprint(ws_kib: u64, llc_kib: u64) -> f64 {
    if ws_kib == 0 {
        return 0.0;
    }
    let miss = 1.0 - (llc_kib as f64 / ws_kib as f64).min(1.0);
    STALL_SHARE_MAX * miss
}

/// One memory-model task's memory: its mm, regions and access pattern.
#[derive(Clone, Debug)]
pub struct TaskMem {
    pub mm: MmId,
    pub private_region: usize,
    pub shared_region: Option<usize>,
    /// Share of accesses to the shared region (0..=1).
    pub shared_share: f64,
    /// MiB/s moved at full local speed (0 = not bandwidth-bound).
    pub bw_mb_s: f64,
    /// `m` of the bandwidth model.
    pub stall_share: f64,
    /// First touch done.
    pub touched: bool,
    /// Run time up to which accesses were sampled.
    pub sampled_runtime_ns: u64,
    access_carry: f64,
    rng: RngStream,
}

/// A shared memory object (`MAP_SHARED` shm) mapped by several processes: where each of
/// its page groups lives (the page's node, one per page), and the mms mapping it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShmObject {
    /// `TaskMemory::shm_key`.
    pub key: u32,
    /// Node of each page group once touched.
    pub nid: Vec<Option<u16>>,
    /// `(mm index, index of the mapping region in that mm)`.
    pub maps: Vec<(u32, usize)>,
}

/// Counters of NUMA task moves (the kernel's `sched_move_numa` / `sched_swap_numa` /
/// `sched_stick_numa` tracepoints, counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NumaMoveCounts {
    pub numa_move: u64,
    pub numa_swap: u64,
    pub numa_stick: u64,
    /// Decisions that could not be applied (the task or its partner moved, -EAGAIN).
    pub numa_move_fail: u64,
}

/// Window of the node-level ping-pong detector: NUMA balancing acts at most every
/// `numa_migrate_retry` (≥ 1/16 of a scan period, 62.5 ms at the 1 s minimum), so its
/// fights with the load balancer play out over up to a second.
pub const NODE_PINGPONG_WINDOW_NS: u64 = 1_000_000_000;

pub(super) const NR_REASONS: usize = MigrationReason::COUNT;

fn reason_idx(r: MigrationReason) -> usize {
    MigrationReason::ALL
        .iter()
        .position(|&x| x == r)
        .expect("every reason is listed")
}

fn is_numa(r: MigrationReason) -> bool {
    matches!(r, MigrationReason::Numa | MigrationReason::NumaSwap)
}

/// A task's cross-node move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeMove {
    pub time_ns: u64,
    pub from: usize,
    pub to: usize,
    pub reason: MigrationReason,
}

/// The node-level ping-pong detector of NUMA balancing against the other mechanisms: a
/// task moved node A→B and back B→A within [`NODE_PINGPONG_WINDOW_NS`] by two different
/// mechanisms, at least one of them NUMA balancing (`numa`/`numa_swap`), counts as the pair
/// `first->second`; a NUMA move undone by another mechanism and then redone by NUMA
/// balancing (A→B numa, B→A other, A→B numa, within two windows) counts one
/// `numa->X->numa` cycle. (The engine's CPU-level detector compares CPUs and misses these
/// when the tasks land on different CPUs of the same nodes.)
#[derive(Clone, Debug)]
pub struct NodePingPong {
    /// Per task: the last two cross-node moves (latest first).
    last: Vec<[Option<NodeMove>; 2]>,
    /// `[first reason][second reason]`, indices of `MigrationReason::ALL`.
    pub by_pair: [[u64; NR_REASONS]; NR_REASONS],
    /// `numa -> X -> numa` cycles by the middle mechanism X.
    pub cycles_by_middle: [u64; NR_REASONS],
}

impl NodePingPong {
    fn new(nr_tasks: usize) -> NodePingPong {
        NodePingPong {
            last: vec![[None, None]; nr_tasks],
            by_pair: [[0; NR_REASONS]; NR_REASONS],
            cycles_by_middle: [0; NR_REASONS],
        }
    }

    /// Record a cross-node move of `p`.
    pub fn record(&mut self, p: TaskId, now_ns: u64, from: usize, to: usize, r: MigrationReason) {
        let Some(slot) = self.last.get_mut(p.idx()) else {
            return;
        };
        let [prev, prev2] = *slot;
        if let Some(m1) = prev
            && m1.from == to
            && m1.to == from
            && m1.reason != r
            && now_ns - m1.time_ns <= NODE_PINGPONG_WINDOW_NS
            && (is_numa(m1.reason) || is_numa(r))
        {
            self.by_pair[reason_idx(m1.reason)][reason_idx(r)] += 1;
            if let Some(m0) = prev2
                && is_numa(r)
                && is_numa(m0.reason)
                && !is_numa(m1.reason)
                && m0.from == from
                && m0.to == to
                && now_ns - m0.time_ns <= 2 * NODE_PINGPONG_WINDOW_NS
            {
                self.cycles_by_middle[reason_idx(m1.reason)] += 1;
            }
        }
        let m = NodeMove {
            time_ns: now_ns,
            from,
            to,
            reason: r,
        };
        *slot = [Some(m), prev];
    }

    /// Non-zero pairs as `first->second` (results order: `MigrationReason::ALL`).
    pub fn pairs(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for (i, row) in self.by_pair.iter().enumerate() {
            for (j, &c) in row.iter().enumerate() {
                if c > 0 {
                    let (a, b) = (MigrationReason::ALL[i], MigrationReason::ALL[j]);
                    out.push((format!("{}->{}", a.name(), b.name()), c));
                }
            }
        }
        out
    }

    /// Non-zero `numa->X->numa` cycles.
    pub fn cycles(&self) -> Vec<(String, u64)> {
        self.cycles_by_middle
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| (format!("numa->{}->numa", MigrationReason::ALL[i].name()), c))
            .collect()
    }
}

/// A decided NUMA move, applied at the end of the tick that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingNumaMove {
    pub p: TaskId,
    pub action: NumaMove,
    /// The rq whose `numa_migrate_on` the decision holds (v4.19+), released when the move
    /// has been applied or has failed.
    pub claimed: Option<usize>,
}

/// One per-task sample of the NUMA history (for `--explain`): at a placement.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NumaSample {
    pub time_ns: u64,
    pub task: TaskId,
    pub preferred_nid: Option<usize>,
    /// Page groups of the task's mm per node.
    pub groups_per_node: Vec<u64>,
}

/// The engine's NUMA state of one run: the memory model and the counts of what the engine
/// did for NUMA balancing.
#[derive(Clone, Debug)]
pub struct EngineNuma {
    pub mms: Vec<Mm>,
    /// By task index; `None` = not a memory-model task.
    pub tm: Vec<Option<TaskMem>>,
    /// Per-node memory bandwidth (MiB/s).
    pub node_bw_mb_s: Vec<f64>,
    /// Per-node congestion factor `c_n` (1 = uncongested), solved by `memory::bandwidth`.
    pub congestion: Vec<f64>,
    pub migrate_cost: MigrateCost,
    pub moves: NumaMoveCounts,
    pub history: Vec<NumaSample>,
    pub ping_pong: NodePingPong,
    /// Per task: run time before the warm-up reset of `TaskStats` (NUMA balancing reads
    /// the task's whole `sum_exec_runtime`).
    pub(super) runtime_base_ns: Vec<u64>,
    scratch: Vec<TaskMemDemand>,
    congestion_new: Vec<f64>,
    /// What each CPU runs (by CPU), refilled where needed (congestion, the NUMA tick).
    pub(super) curr_buf_tasks: Vec<Option<TaskId>>,
    /// Shared memory objects mapped by several mms (by object index).
    pub shm: Vec<ShmObject>,
    /// By task index: `p->wake_cpu` when it differs from `task_cpu(p)` — set by
    /// `migrate_swap()` for a partner that was asleep when the stoppers ran
    /// (`__migrate_swap_task()`), consumed by its next wakeup as `prev_cpu`, cleared by any
    /// `set_task_cpu()`.
    pub(super) wake_cpu: Vec<Option<usize>>,
}

/// The memory of a plan's tasks: one mm per process, the task memories, the shared memory
/// objects.
struct TaskMemories {
    mms: Vec<Mm>,
    tm: Vec<Option<TaskMem>>,
    shm: Vec<ShmObject>,
}

/// Every task's memory (none for a task without a working set) and its process's mm
/// (created by the process's first task, which maps the shared region).
fn task_memories(machine: &Machine, specs: &[TaskSpec], seed: u64, llc_kib: u64) -> TaskMemories {
    let has = |s: &TaskSpec| s.memory.private_mib > 0 || s.memory.shared_mib > 0;
    let nr_nodes = machine.nr_nodes();
    let mut mms: Vec<Mm> = Vec::new();
    let mut by_process: BTreeMap<u32, usize> = BTreeMap::new();
    let mut shm: Vec<ShmObject> = Vec::new();
    let mut tm = Vec::with_capacity(specs.len());
    for (i, s) in specs.iter().enumerate() {
        if !has(s) {
            tm.push(None);
            continue;
        }
        let m = &s.memory;
        let existing = m.process.and_then(|p| by_process.get(&p).copied());
        let mm_idx = existing.unwrap_or_else(|| new_mm(&mut mms, &mut by_process, m, nr_nodes));
        if existing.is_some() {
            mms[mm_idx].mm_users += 1;
        }
        if existing.is_none() && m.shared_mib > 0 {
            map_shared(&mut mms[mm_idx], &mut shm, m);
        }
        tm.push(Some(new_task_mem(
            &mut mms[mm_idx],
            mm_idx,
            s,
            i,
            seed,
            llc_kib,
        )));
    }
    TaskMemories { mms, tm, shm }
}

/// A new mm for the first task of its process (`m.process`; none = a process of its own),
/// registered under that process; its index.
fn new_mm(
    mms: &mut Vec<Mm>,
    by_process: &mut BTreeMap<u32, usize>,
    m: &crate::task::TaskMemory,
    nr_nodes: usize,
) -> usize {
    let idx = mms.len();
    mms.push(Mm::new(mm_id(idx), nr_nodes));
    if let Some(p) = m.process {
        by_process.insert(p, idx);
    }
    idx
}

/// Task `i`'s memory in its process's `mm` (index `mm_idx`): its private region mapped, the
/// shared region's share of its accesses, its stall share (from `mem_intensity_permille`,
/// else from its working set against the LLC), its own NUMA random stream.
fn new_task_mem(
    mm: &mut Mm,
    mm_idx: usize,
    s: &TaskSpec,
    i: usize,
    seed: u64,
    llc_kib: u64,
) -> TaskMem {
    let m = &s.memory;
    let shared_region = (!mm.regions.is_empty() && m.shared_mib > 0).then_some(0);
    let private_region = mm.map(u64::from(m.private_mib) << 20, false, true);
    let ws_kib = (u64::from(m.private_mib) + u64::from(m.shared_mib)) << 10;
    let stall_share = if s.mem_intensity_permille > 0 {
        f64::from(s.mem_intensity_permille.min(1000)) / 1000.0
    } else {
        stall_share_from_footprint(ws_kib, llc_kib)
    };
    let shared_share = if shared_region.is_some() {
        f64::from(m.shared_access_permille.min(1000)) / 1000.0
    } else {
        0.0
    };
    TaskMem {
        mm: mm_id(mm_idx),
        private_region,
        shared_region,
        shared_share,
        bw_mb_s: f64::from(m.bandwidth_mib_s),
        stall_share,
        touched: false,
        sampled_runtime_ns: 0,
        access_carry: 0.0,
        rng: RngStream::new(seed, StreamKind::Numa, i as u64),
    }
}

/// Map a new mm's shared region (region 0): the process's own anonymous shared memory, or
/// with `shm_key` a mapping of the shared memory object of that key (created by its first
/// mapper, at the size that one gives).
fn map_shared(mm: &mut Mm, shm: &mut Vec<ShmObject>, m: &crate::task::TaskMemory) {
    let bytes = u64::from(m.shared_mib) << 20;
    let Some(key) = m.shm_key else {
        mm.map(bytes, false, true);
        return;
    };
    let o = match shm.iter().position(|o| o.key == key) {
        Some(o) => o,
        None => {
            let len = usize_from_u64(bytes.div_ceil(PAGE_GROUP_BYTES).max(1));
            shm.push(ShmObject {
                key,
                nid: vec![None; len],
                maps: Vec::new(),
            });
            shm.len() - 1
        }
    };
    let obj = &mut shm[o];
    let o32 = u32::try_from(o).expect("shared objects above u32::MAX: at most one per task");
    let r = mm.map_object(obj.nid.len() as u64 * PAGE_GROUP_BYTES, o32);
    obj.maps.push((mm.id.0, r));
}

/// After a hinting fault on page group `g` of `mm_idx`'s mapping of a shared memory object:
/// the page's node and `last_cpupid` are the object's, so every other mapping sees them.
pub(super) fn shm_propagate(mms: &mut [Mm], shm: &mut [ShmObject], mm_idx: usize, g: usize) {
    let (pg, first, o) = {
        let mm = &mms[mm_idx];
        let pg = mm.groups[g];
        let r = &mm.regions[pg.region as usize];
        let Some(o) = r.object else {
            return;
        };
        (pg, r.first, o as usize)
    };
    let off = g - first;
    let obj = &mut shm[o];
    obj.nid[off] = pg.nid;
    for &(m2, r2) in &obj.maps {
        let mm2 = &mut mms[m2 as usize];
        let g2 = mm2.regions[r2].first + off;
        mm2.groups[g2].last_cpupid = pg.last_cpupid;
        let here = mm2.groups[g2].nid;
        if let (Some(old), Some(new)) = (here, pg.nid)
            && old != new
        {
            mm2.move_group(g2, usize::from(new));
        }
    }
}

/// The memory model of a plan ([`EngineNuma::from_plan`] under `cost`'s LLC share and node
/// bandwidth), `None` when no task declares a working set; with one, `policy` gets the
/// NUMA-balancing state of the run (balancing off until `Engine::set_numa`).
pub(super) fn memory_model(
    machine: &Machine,
    specs: &[TaskSpec],
    seed: u64,
    cost: &CostModel,
    policy: &mut dyn SchedPolicy,
) -> Option<Box<EngineNuma>> {
    let llc_kib = cost.llc_kib_per_cpu;
    let node_bw_mb_s = cost.mem_bw_mib_s_per_node as f64;
    let numa = EngineNuma::from_plan(machine, specs, seed, llc_kib, node_bw_mb_s)?;
    policy.set_numa_balancing(Box::new(NumaBalancing::new(machine, &numa.task_mms())));
    Some(numa)
}

/// Samples kept in [`EngineNuma::history`].
pub const HISTORY_MAX: usize = 10_000;

impl EngineNuma {
    /// The memory model of a plan, `None` when no task declares a working set.
    /// `llc_kib` is the last-level cache a task has to itself, `node_bw_mb_s` each node's
    /// memory bandwidth.
    pub fn from_plan(
        machine: &Machine,
        specs: &[TaskSpec],
        seed: u64,
        llc_kib: u64,
        node_bw_mb_s: f64,
    ) -> Option<Box<EngineNuma>> {
        let has = |s: &TaskSpec| s.memory.private_mib > 0 || s.memory.shared_mib > 0;
        if !specs.iter().any(has) {
            return None;
        }
        let nr_nodes = machine.nr_nodes();
        let TaskMemories { mms, tm, shm } = task_memories(machine, specs, seed, llc_kib);
        Some(Box::new(EngineNuma {
            mms,
            tm,
            node_bw_mb_s: vec![node_bw_mb_s; nr_nodes],
            congestion: vec![1.0; nr_nodes],
            migrate_cost: MigrateCost::default(),
            moves: NumaMoveCounts::default(),
            history: Vec::new(),
            ping_pong: NodePingPong::new(specs.len()),
            runtime_base_ns: vec![0; specs.len()],
            scratch: Vec::new(),
            congestion_new: vec![1.0; nr_nodes],
            curr_buf_tasks: Vec::with_capacity(machine.nr_cpus()),
            wake_cpu: vec![None; specs.len()],
            shm,
        }))
    }

    /// Each task's mm (`None`: not a memory-model task), by task index: what the policy's
    /// NUMA-balancing state is set up from.
    pub fn task_mms(&self) -> Vec<Option<MmId>> {
        self.tm.iter().map(|t| t.as_ref().map(|t| t.mm)).collect()
    }

    /// `p`'s placement changed at `now`: its preferred node and its mm's pages per node go
    /// into the history (the first [`HISTORY_MAX`] changes).
    /// `preferred_nid` is the task's new preferred node.
    pub(super) fn record_placement(
        &mut self,
        now: u64,
        p: TaskId,
        mm: usize,
        preferred_nid: Option<usize>,
    ) {
        if self.history.len() < HISTORY_MAX {
            let sample = NumaSample {
                time_ns: now,
                task: p,
                preferred_nid,
                groups_per_node: self.mms[mm].groups_per_node.clone(),
            };
            self.history.push(sample);
        }
    }

    /// The task's memory, if it is a memory-model task.
    pub fn task_mem(&self, p: TaskId) -> Option<&TaskMem> {
        self.tm.get(p.idx()).and_then(Option::as_ref)
    }

    /// Share of task `p`'s accesses that go to node `n`'s pages (sums to 1 over nodes once
    /// touched; 0 everywhere before).
    fn access_share(&self, tm: &TaskMem, n: usize) -> f64 {
        let mm = &self.mms[tm.mm.0 as usize];
        let frac = |r: usize| {
            let g = &mm.regions[r].groups_per_node;
            let total: u64 = g.iter().sum();
            (total > 0).then(|| g[n] as f64 / total as f64)
        };
        let private = frac(tm.private_region);
        let shared = tm.shared_region.and_then(frac);
        match (private, shared) {
            (Some(p), Some(s)) => (1.0 - tm.shared_share) * p + tm.shared_share * s,
            (Some(p), None) => p,
            (None, Some(s)) => s,
            (None, None) => 0.0,
        }
    }

    /// The bandwidth model's `time_scale` of task `p` running on a CPU of `cpu_node` of
    /// `machine` under the current congestion (1.0 = all local, uncongested); `None` for
    /// other tasks.
    pub fn time_scale(&self, p: TaskId, cpu_node: usize, machine: &Machine) -> Option<f64> {
        let tm = self.task_mem(p)?;
        let d = &machine.node_distance;
        let mut stretch = 0.0;
        let mut any = false;
        for (n, &c) in self.congestion.iter().enumerate() {
            let s = self.access_share(tm, n);
            if s > 0.0 {
                any = true;
                stretch += s * f64::from(d[cpu_node][n]) / 10.0 * c;
            }
        }
        if !any {
            return Some(1.0);
        }
        Some((1.0 - tm.stall_share) + tm.stall_share * stretch)
    }

    /// Solve the per-node congestion for the bandwidth-bound tasks running now
    /// (`running[cpu]`) on `machine`; returns whether it changed. Allocation-free once
    /// warmed up.
    pub(super) fn solve_congestion(
        &mut self,
        running: &[Option<TaskId>],
        machine: &Machine,
    ) -> bool {
        let nr_nodes = self.congestion.len();
        let mut k = 0;
        for (cpu, p) in running.iter().enumerate() {
            let Some(tm) = p.and_then(|p| self.task_mem(p)) else {
                continue;
            };
            if tm.bw_mb_s <= 0.0 {
                continue;
            }
            let (m, bw) = (tm.stall_share, tm.bw_mb_s);
            let mut pages = std::mem::take(self.scratch_pages(k));
            pages.clear();
            let tm = p.and_then(|p| self.task_mem(p)).expect("checked");
            for n in 0..nr_nodes {
                pages.push(ppm_round(self.access_share(tm, n) * 1e6));
            }
            let cpu_node = machine.cpus[cpu].node;
            let slot = &mut self.scratch[k];
            slot.cpu_node = cpu_node;
            slot.stall_share = m;
            slot.bw_mb_per_s = bw;
            slot.pages_per_node = pages;
            k += 1;
        }
        let mut c = std::mem::take(&mut self.congestion_new);
        if k == 0 {
            c.iter_mut().for_each(|x| *x = 1.0);
        } else {
            node_congestion_into(
                &self.scratch[..k],
                &machine.node_distance,
                &self.node_bw_mb_s,
                &ZERO_BACKGROUND[..nr_nodes],
                &mut c,
            );
        }
        let changed = c
            .iter()
            .zip(&self.congestion)
            .any(|(a, b)| (a - b).abs() > 1e-9);
        if changed {
            std::mem::swap(&mut self.congestion, &mut c);
        }
        self.congestion_new = c;
        changed
    }

    /// Slot `k` of the solver's scratch table (grown on first use), its page buffer taken.
    fn scratch_pages(&mut self, k: usize) -> &mut Vec<u64> {
        while self.scratch.len() <= k {
            self.scratch.push(TaskMemDemand {
                cpu_node: 0,
                stall_share: 0.0,
                bw_mb_per_s: 0.0,
                pages_per_node: Vec::new(),
            });
        }
        &mut self.scratch[k].pages_per_node
    }
}

/// Background traffic of the solver: none (page-migration traffic is not added; see
/// docs/fidelity.md). Sized for any machine this simulator builds.
const ZERO_BACKGROUND: [f64; 64] = [0.0; 64];

/// What one tick's hinting faults did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FaultBatch {
    pub(super) cost_ns: u64,
    pub(super) migrated: bool,
    pub(super) attempt_migrate: bool,
    pub(super) placement_changed: bool,
}

/// The hinting faults of task `p` for its run time up to `runtime_ns` (see the module
/// doc's sampling model), each reported to the policy's NUMA balancing `nb`, whose
/// `task_tick()` for `p` came just before.
pub(super) fn sample_faults(
    n: &mut EngineNuma,
    nb: &mut NumaBalancing,
    p: TaskId,
    runtime_ns: u64,
) -> FaultBatch {
    let mut out = FaultBatch::default();
    let EngineNuma {
        mms,
        tm,
        migrate_cost,
        shm,
        ..
    } = n;
    let Some(tm) = tm[p.idx()].as_mut() else {
        return out;
    };
    let d = runtime_ns.saturating_sub(tm.sampled_runtime_ns);
    tm.sampled_runtime_ns = runtime_ns;
    let groups_per_s = tm.bw_mb_s.max(MIN_ACCESS_MIB_S) / (PAGE_GROUP_BYTES >> 20) as f64;
    let acc = d as f64 * groups_per_s / 1e9 + tm.access_carry;
    let mut k = count_floor(acc);
    tm.access_carry = acc - acc.floor();
    if k > MAX_ACCESSES_PER_TICK {
        k = MAX_ACCESSES_PER_TICK;
        tm.access_carry = 0.0;
    }
    let mm_idx = tm.mm.0 as usize;
    for _ in 0..k {
        let mm = &mut mms[mm_idx];
        let region = match tm.shared_region {
            Some(r) if tm.rng.next_f64() < tm.shared_share => r,
            _ => tm.private_region,
        };
        let (first, len, writable, object) = {
            let r = &mm.regions[region];
            (r.first, r.len, r.writable, r.object)
        };
        let g = first + usize_from_u64(tm.rng.below(len as u64));
        let pg = mm.groups[g];
        if !pg.prot_none || pg.nid.is_none() {
            continue;
        }
        // TNF_SHARED: VM_SHARED and the page mapped by more than one mm.
        let shared = object.is_some_and(|o| shm[o as usize].maps.len() > 1);
        let f = nb.hint_fault(mm, g, writable, shared);
        if object.is_some() {
            shm_propagate(mms, shm, mm_idx, g);
        }
        out.cost_ns += HINT_FAULT_NS;
        if f.migrated {
            out.migrated = true;
            out.cost_ns += migrate_cost.time_ns(1, PAGE_GROUP_BYTES);
        }
        out.attempt_migrate |= f.attempt_migrate;
        out.placement_changed |= f.placement_changed;
    }
    out
}

#[cfg(test)]
mod tests;
