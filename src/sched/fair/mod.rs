//! The fair class's per-runqueue core: EEVDF (v6.6+) and CFS (pre-6.6), with PELT.
//!
//! Mirrors the per-cfs_rq half of `kernel/sched/fair.c`: `update_curr`,
//! `enqueue_entity`/`enqueue_task_fair`, `dequeue_entity`/`dequeue_entities`/
//! `dequeue_task_fair`, `pick_next_entity`/`pick_task_fair`/`pick_next_task_fair`,
//! `set_next_entity`, `put_prev_entity`, `entity_tick`, `check_preempt_wakeup_fair`
//! (`check_preempt_wakeup` before 6.6), `yield_task_fair`, `reweight_entity`,
//! `task_fork_fair`, `migrate_task_rq_fair`, `task_dead_fair`, `update_load_avg`,
//! `hrtick_start_fair`, and the core.c `set_user_nice` sequence. EEVDF specifics live in
//! [`eevdf`], CFS specifics in [`cfs`], weights in [`weights`], PELT in
//! [`crate::sched::pelt`].
//!
//! # Data model
//! Plain data, index-based: the policy owns a `Vec<SchedEntity>` indexed by task index
//! and one [`CfsRq`] per CPU; every operation takes `&mut [SchedEntity]`, the entity
//! index, the [`FairParams`] and `now_ns`, and returns decisions. Nothing here knows the
//! engine. The kernel's augmented rb-tree is an augmented treap whose links live in the
//! entities (`tree`; `curr` is kept out of it, as the kernel keeps `curr` out of the
//! tree); picks, inserts and removals are O(log n) as in the kernel. Ties on the tree key
//! are broken by insertion order, as the rb-tree does (an equal key is inserted to the
//! right). No allocation happens per operation.
//!
//! # Counters (what includes delayed entities — matters for load balancing)
//! - `nr_queued`: entities on this cfs_rq, **including** `curr` and `sched_delayed` ones.
//! - `h_nr_queued`: tasks, including delayed ones. Without cgroups it equals `nr_queued`;
//!   the fair part of `rq->nr_running` equals it (so `idle_cpu()` sees a CPU holding
//!   only delayed tasks as busy, and `update_sg_lb_stats` counts them in
//!   `sum_nr_running`).
//! - `h_nr_runnable`: tasks **excluding** delayed ones (6.14+ naming; `h_nr_running -
//!   h_nr_delayed` in 6.12/6.13). It is the PELT runnable input of the cfs_rq and the
//!   load balancer's `sum_h_nr_running`.
//! - `h_nr_idle`: queued `SCHED_IDLE` tasks (delayed ones included).
//! - `load`: the sum of queued weights, including `curr` and delayed entities.
//!
//! # Resched
//! Operations that would call `resched_curr()` / `resched_curr_lazy()` set a flag the
//! policy reads with [`CfsRq::need_resched`]; how soon it takes effect (preemption model,
//! IPI, lazy upgrade at the tick) is the policy's business. [`CfsRq::pick_next_task_fair`]
//! clears it, as `__schedule` clears TIF_NEED_RESCHED after picking.
//!
//! # Left out (and why)
//! - Group scheduling (cgroups, group entities, `update_cfs_group`, hierarchical
//!   walks): the simulator has no cgroups, so every entity is a task on the root cfs_rq
//!   and `enqueue_entity` and `enqueue_task_fair` collapse into one operation.
//! - CFS bandwidth control (throttling), core scheduling, schedstats, NUMA accounting,
//!   misfit/overutilized status (the load balancer's side).
//! - The kernel's ~60 s long-sleeper vruntime reset in CFS `place_entity`
//!   (`entity_is_long_sleeper`): it only matters for sleeps of about 104 days.
//! - `sysctl_sched_child_runs_first` (CFS; default 0).

// Lossy integer casts are refused here, as in engine, policy, stats and the rest of sched
// (docs/architecture.md, "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

pub mod cfs;
pub mod eevdf;
mod invariants;
mod tree;
pub mod weights;

use crate::sched::pelt::{
    self, RemovedLoad, RqClock, SchedAvg, attach_entity_load_avg, detach_entity_load_avg,
    update_load_avg_blocked_se, update_load_avg_cfs_rq, update_load_avg_se,
};
pub use weights::{LoadWeight, NICE_0_LOAD, calc_delta, calc_delta_fair, weight_of_nice};

// ---------------------------------------------------------------------------------
// Flags (kernel/sched/sched.h values, 6.12+).

/// `ENQUEUE_WAKEUP`: the task wakes up from sleep.
pub const ENQUEUE_WAKEUP: u32 = 0x01;
/// `ENQUEUE_RESTORE`: re-enqueue after a `DEQUEUE_SAVE` (nice change, class change...).
pub const ENQUEUE_RESTORE: u32 = 0x02;
/// `ENQUEUE_MOVE`.
pub const ENQUEUE_MOVE: u32 = 0x04;
/// `ENQUEUE_NOCLOCK` (accepted and ignored: the caller passes `now_ns`).
pub const ENQUEUE_NOCLOCK: u32 = 0x08;
/// `ENQUEUE_MIGRATED`: the task changed CPU since it last ran here.
pub const ENQUEUE_MIGRATED: u32 = 0x40;
/// `ENQUEUE_INITIAL`: first enqueue of a forked task (`wake_up_new_task`).
pub const ENQUEUE_INITIAL: u32 = 0x80;
/// `ENQUEUE_MIGRATING`: `task_on_rq_migrating()` (load-balancer move).
pub const ENQUEUE_MIGRATING: u32 = 0x100;
/// `ENQUEUE_DELAYED`: wakeup of a still-queued `sched_delayed` task (`ttwu_runnable`).
pub const ENQUEUE_DELAYED: u32 = 0x200;

/// `DEQUEUE_SLEEP`: the task blocks.
pub const DEQUEUE_SLEEP: u32 = 0x01;
/// `DEQUEUE_SAVE`: temporary dequeue around an attribute change.
pub const DEQUEUE_SAVE: u32 = 0x02;
/// `DEQUEUE_MOVE`.
pub const DEQUEUE_MOVE: u32 = 0x04;
/// `DEQUEUE_NOCLOCK` (accepted and ignored).
pub const DEQUEUE_NOCLOCK: u32 = 0x08;
/// `DEQUEUE_SPECIAL`: special task states (stopped, traced, dead) that must not be
/// delayed, because DELAY_DEQUEUE relies on spurious wakeups.
pub const DEQUEUE_SPECIAL: u32 = 0x10;
/// `DEQUEUE_MIGRATING`: the task is being moved by the load balancer
/// (`task_on_rq_migrating()`); PELT detaches it from this cfs_rq.
pub const DEQUEUE_MIGRATING: u32 = 0x100;
/// `DEQUEUE_DELAYED`: complete the dequeue of a `sched_delayed` entity.
pub const DEQUEUE_DELAYED: u32 = 0x200;

/// `WF_EXEC`.
pub const WF_EXEC: u32 = 0x02;
/// `WF_FORK`: wakeup of a new task.
pub const WF_FORK: u32 = 0x04;
/// `WF_TTWU`.
pub const WF_TTWU: u32 = 0x08;
/// `WF_SYNC`: the waker is about to sleep.
pub const WF_SYNC: u32 = 0x10;
/// `WF_MIGRATED`.
pub const WF_MIGRATED: u32 = 0x20;

// update_load_avg() flags (fair.c).
const UPDATE_TG: u32 = 0x1;
const SKIP_AGE_LOAD: u32 = 0x2;
const DO_ATTACH: u32 = 0x4;
const DO_DETACH: u32 = 0x8;

/// `sched_setattr` custom slice bounds (`__setparam_fair`): 0.1 ms .. 100 ms.
pub const CUSTOM_SLICE_MIN_NS: u64 = 100_000;
/// See [`CUSTOM_SLICE_MIN_NS`].
pub const CUSTOM_SLICE_MAX_NS: u64 = 100_000_000;

// ---------------------------------------------------------------------------------
// Parameters.

/// Which pick/placement algorithm the runqueue runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum FairMode {
    /// EEVDF (v6.6+): earliest eligible virtual deadline first.
    Eevdf,
    /// CFS (before v6.6): smallest vruntime first, with wakeup granularity and buddies;
    /// modelled on v6.5 (5.13+ `ALT_PERIOD`/`BASE_SLICE` semantics).
    Cfs,
}

/// The EEVDF generation, for the mechanisms that changed shape rather than being
/// switched by a feature flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum EevdfVersion {
    /// 6.6–6.11: run-to-parity via the deadline stashed in `vlag` at pick; update_curr
    /// reschedules only on slice expiry; wakeup preemption iff `pick_eevdf() == p`.
    V6_6,
    /// 6.12–6.16: adds PREEMPT_SHORT (`do_preempt_short`/`did_preempt_short`), custom
    /// slices, DELAY_DEQUEUE, PLACE_REL_DEADLINE (those three are feature flags).
    V6_12,
    /// 6.17+: `se->vprot` protection limited to the smallest queued slice
    /// (`set_protect_slice`/`update_protect_slice`), `__pick_eevdf(protect)`,
    /// "resched at the end of the protected period", yield forfeits the slice.
    V6_17,
}

/// Scheduler features (`kernel/sched/features.h`), by their kernel names in lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FairFeatures {
    /// PLACE_LAG (EEVDF): keep lag across sleep/migration.
    pub place_lag: bool,
    /// PLACE_DEADLINE_INITIAL (EEVDF): forked tasks start with half a slice.
    pub place_deadline_initial: bool,
    /// PLACE_REL_DEADLINE (EEVDF 6.12+): keep the deadline relative across a non-sleep
    /// dequeue (migration, attribute change).
    pub place_rel_deadline: bool,
    /// RUN_TO_PARITY (EEVDF): protect curr from preemption until its slice (6.17: the
    /// smallest queued slice) is used.
    pub run_to_parity: bool,
    /// PREEMPT_SHORT (EEVDF 6.12+): a waking task with a shorter slice may cut curr's
    /// protection.
    pub preempt_short: bool,
    /// DELAY_DEQUEUE (EEVDF 6.12+): an ineligible task that blocks stays queued until
    /// its lag is paid back.
    pub delay_dequeue: bool,
    /// DELAY_ZERO: clip positive lag to 0 when a delayed entity finally leaves or is
    /// requeued.
    pub delay_zero: bool,
    /// NEXT_BUDDY: set the wakee as `cfs_rq->next` at wakeup.
    pub next_buddy: bool,
    /// PICK_BUDDY (EEVDF 6.14+; gated by NEXT_BUDDY in 6.12/6.13 and 6.6–6.11, so set it
    /// equal to `next_buddy` there): pick an eligible `cfs_rq->next` first.
    pub pick_buddy: bool,
    /// REWEIGHT_PLACE (model switch, EEVDF v6.13+, 6d71a9c61604): `reweight_entity()`
    /// re-places a queued entity from its scaled lag and relative deadline; off, the
    /// v6.7–v6.12 `reweight_eevdf()` scales vruntime and deadline around V.
    pub reweight_place: bool,
    /// WAKEUP_PREEMPTION.
    pub wakeup_preemption: bool,
    /// GENTLE_FAIR_SLEEPERS (CFS): sleeper credit is half a latency period.
    pub gentle_fair_sleepers: bool,
    /// START_DEBIT (CFS): a forked task starts one vslice behind.
    pub start_debit: bool,
    /// LAST_BUDDY (CFS): prefer to run the task preempted by a wakeup again.
    pub last_buddy: bool,
    /// BASE_SLICE (CFS 5.13+): `sched_slice()` is at least `min_granularity`, and (same
    /// commit, 0c2de3f054a5) `check_preempt_tick` caps the ideal runtime at the latency.
    pub base_slice: bool,
    /// UTIL_EST.
    pub util_est: bool,
}

impl FairFeatures {
    /// The 6.17 defaults (features.h).
    pub fn v6_17() -> Self {
        FairFeatures {
            place_lag: true,
            place_deadline_initial: true,
            place_rel_deadline: true,
            run_to_parity: true,
            preempt_short: true,
            delay_dequeue: true,
            delay_zero: true,
            next_buddy: false,
            pick_buddy: true,
            reweight_place: true,
            wakeup_preemption: true,
            gentle_fair_sleepers: true,
            start_debit: true,
            last_buddy: true,
            base_slice: true,
            util_est: true,
        }
    }

    /// Build from a lookup by kernel feature name (`"PLACE_LAG"`, `"RUN_TO_PARITY"`, ...),
    /// e.g. the configuration's resolved feature set. Every field is looked up once.
    pub fn from_lookup(is_on: impl Fn(&str) -> bool) -> Self {
        FairFeatures {
            place_lag: is_on("PLACE_LAG"),
            place_deadline_initial: is_on("PLACE_DEADLINE_INITIAL"),
            place_rel_deadline: is_on("PLACE_REL_DEADLINE"),
            run_to_parity: is_on("RUN_TO_PARITY"),
            preempt_short: is_on("PREEMPT_SHORT"),
            delay_dequeue: is_on("DELAY_DEQUEUE"),
            delay_zero: is_on("DELAY_ZERO"),
            next_buddy: is_on("NEXT_BUDDY"),
            pick_buddy: is_on("PICK_BUDDY"),
            reweight_place: is_on("REWEIGHT_PLACE"),
            wakeup_preemption: is_on("WAKEUP_PREEMPTION"),
            gentle_fair_sleepers: is_on("GENTLE_FAIR_SLEEPERS"),
            start_debit: is_on("START_DEBIT"),
            last_buddy: is_on("LAST_BUDDY"),
            base_slice: is_on("BASE_SLICE"),
            util_est: is_on("UTIL_EST"),
        }
    }

    /// 6.6–6.11 defaults: no DELAY_DEQUEUE, PLACE_REL_DEADLINE or PREEMPT_SHORT; the
    /// buddy pick is gated by NEXT_BUDDY (off).
    pub fn v6_6() -> Self {
        FairFeatures {
            place_rel_deadline: false,
            preempt_short: false,
            delay_dequeue: false,
            delay_zero: false,
            pick_buddy: false,
            reweight_place: false,
            ..Self::v6_17()
        }
    }

    /// 6.12 defaults (the buddy pick still gated by NEXT_BUDDY, off, until 6.14; the
    /// `reweight_eevdf()` form of `reweight_entity()`, REWEIGHT_PLACE from 6.13).
    pub fn v6_12() -> Self {
        FairFeatures {
            pick_buddy: false,
            reweight_place: false,
            ..Self::v6_17()
        }
    }
}

/// Everything the fair runqueue needs from the configuration. Times in ns, already
/// scaled by the CPU-count factor where the kernel scales them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FairParams {
    pub mode: FairMode,
    pub eevdf_version: EevdfVersion,
    /// `sysctl_sched_base_slice` (EEVDF request size), scaled.
    pub base_slice_ns: u64,
    /// `normalized_sysctl_sched_base_slice` (750 µs): the 6.17 minimum protected quantum.
    pub normalized_base_slice_ns: u64,
    /// `sysctl_sched_latency` (CFS), scaled.
    pub sched_latency_ns: u64,
    /// `sysctl_sched_min_granularity` (CFS), scaled.
    pub min_granularity_ns: u64,
    /// `sysctl_sched_wakeup_granularity` (CFS), scaled.
    pub wakeup_granularity_ns: u64,
    /// `TICK_NSEC` (1e9 / HZ): the EEVDF lag clamp floor.
    pub tick_nsec: u64,
    pub features: FairFeatures,
}

impl FairParams {
    /// `get_update_sysctl_factor()` with SCHED_TUNABLESCALING_LOG: 1 + ilog2(min(n, 8)).
    pub fn sysctl_factor(nr_online_cpus: u32) -> u64 {
        let n = nr_online_cpus.clamp(1, 8);
        1 + n.ilog2() as u64
    }

    /// An EEVDF kernel of the given generation with its default features and tunables
    /// (normalized base slice 0.75 ms; v6.15+ use 0.70 ms — set `base_slice_ns` and
    /// `normalized_base_slice_ns` from the configuration). Profile → generation:
    /// v6.6/v6.9 → `V6_6`, v6.12/v6.15 → `V6_12`, v6.17+ → `V6_17`.
    pub fn eevdf(version: EevdfVersion, nr_online_cpus: u32, hz: u64) -> Self {
        let f = Self::sysctl_factor(nr_online_cpus);
        let features = match version {
            EevdfVersion::V6_6 => FairFeatures::v6_6(),
            EevdfVersion::V6_12 => FairFeatures::v6_12(),
            EevdfVersion::V6_17 => FairFeatures::v6_17(),
        };
        FairParams {
            mode: FairMode::Eevdf,
            eevdf_version: version,
            base_slice_ns: 750_000 * f,
            normalized_base_slice_ns: 750_000,
            sched_latency_ns: 6_000_000 * f,
            min_granularity_ns: 750_000 * f,
            wakeup_granularity_ns: 1_000_000 * f,
            tick_nsec: 1_000_000_000 / hz.max(1),
            features,
        }
    }

    /// A pre-6.6 CFS kernel (v6.5 semantics) with default features and tunables.
    pub fn cfs(nr_online_cpus: u32, hz: u64) -> Self {
        FairParams {
            mode: FairMode::Cfs,
            features: FairFeatures {
                place_lag: false,
                place_deadline_initial: false,
                place_rel_deadline: false,
                run_to_parity: false,
                preempt_short: false,
                delay_dequeue: false,
                delay_zero: false,
                pick_buddy: false,
                reweight_place: false,
                ..FairFeatures::v6_17()
            },
            ..Self::eevdf(EevdfVersion::V6_6, nr_online_cpus, hz)
        }
    }

    /// `sched_nr_latency` = DIV_ROUND_UP(latency, min_granularity) (8 by default).
    pub fn sched_nr_latency(&self) -> u64 {
        self.sched_latency_ns
            .div_ceil(self.min_granularity_ns.max(1))
    }
}

// ---------------------------------------------------------------------------------
// Entities.

/// The task's scheduling policy, as far as the fair class cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum SchedPolicy {
    /// SCHED_NORMAL (SCHED_OTHER).
    Normal,
    /// SCHED_BATCH: never wakeup-preempts.
    Batch,
    /// SCHED_IDLE: weight 3, preempted by any non-idle wakeup.
    Idle,
}

/// `struct sched_entity` of a task.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SchedEntity {
    /// `se->load` (scaled down: 1024 at nice 0).
    pub load: LoadWeight,
    pub policy: SchedPolicy,
    /// `se->vruntime` (u64, compared through signed differences; wraps).
    pub vruntime: u64,
    /// `se->deadline` (EEVDF virtual deadline; relative while `rel_deadline`).
    pub deadline: u64,
    /// `se->vlag`: V − v at the last dequeue (EEVDF); 6.6–6.16 also stash the deadline
    /// here while running (run-to-parity marker).
    pub vlag: i64,
    /// `se->vprot` (6.17+): vruntime up to which curr is protected.
    pub vprot: u64,
    /// `se->slice`: the request size in ns.
    pub slice: u64,
    /// `se->custom_slice`: set by `sched_setattr(sched_runtime)`.
    pub custom_slice: bool,
    /// `se->rel_deadline`: `deadline` holds `deadline − vruntime`.
    pub rel_deadline: bool,
    /// `se->on_rq`: queued (including while `sched_delayed`).
    pub on_rq: bool,
    /// `se->sched_delayed`: blocked but still queued (DELAY_DEQUEUE).
    pub sched_delayed: bool,
    /// `se->exec_start`: `clock_task` when it last started running (0 after migration).
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    /// `sum_exec_runtime` at the last `set_next_entity`.
    pub prev_sum_exec_runtime: u64,
    pub nr_migrations: u64,
    /// `se->avg`: PELT.
    pub avg: SchedAvg,
    /// Insertion order in the runqueue's tree (tie-break for equal keys).
    tree_seq: u64,
    /// Links and subtree aggregates in the runqueue's tree (`se->run_node`).
    #[serde(skip)]
    node: tree::RunNode,
}

impl SchedEntity {
    /// A freshly forked task (`__sched_fork` + `sched_fork` + `set_load_weight` +
    /// `init_entity_runnable_average`): zero vruntime/lag/runtime, `slice` = base slice,
    /// PELT load_avg = weight.
    pub fn new(nice: i32, policy: SchedPolicy, params: &FairParams) -> Self {
        let load = match policy {
            SchedPolicy::Idle => LoadWeight::idle(),
            _ => LoadWeight::from_nice(nice),
        };
        SchedEntity {
            load,
            policy,
            vruntime: 0,
            deadline: 0,
            vlag: 0,
            vprot: 0,
            slice: params.base_slice_ns,
            custom_slice: false,
            rel_deadline: false,
            on_rq: false,
            sched_delayed: false,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            nr_migrations: 0,
            avg: SchedAvg::init_entity_runnable_average(load.weight),
            tree_seq: 0,
            node: tree::RunNode::default(),
        }
    }

    /// `__setparam_fair()` slice part: `Some(runtime)` sets a custom slice clamped to
    /// [0.1 ms, 100 ms]; `None` (sched_runtime = 0) returns to the base slice.
    pub fn set_custom_slice(&mut self, runtime_ns: Option<u64>, params: &FairParams) {
        match runtime_ns {
            Some(r) if r > 0 => {
                self.custom_slice = true;
                self.slice = r.clamp(CUSTOM_SLICE_MIN_NS, CUSTOM_SLICE_MAX_NS);
            }
            _ => {
                self.custom_slice = false;
                self.slice = params.base_slice_ns;
            }
        }
    }

    /// `se_runnable()`: queued and not delayed.
    pub fn runnable(&self) -> bool {
        self.on_rq && !self.sched_delayed
    }
}

/// The low 64 bits of `x`, two's complement: exact when `x` fits in `i64`, and otherwise
/// the wrap of C's s64 arithmetic.
// Kernel mirror: `div_s64(se->deadline * se->load.weight, weight)` in reweight_entity()
// wraps its s64 product instead of widening it; the mirror widens, then wraps the quotient.
#[allow(clippy::cast_possible_truncation)]
fn wrap_s64(x: i128) -> i64 {
    x as i64
}

/// `(s64)(a - b) < 0`: vruntime/deadline order with wraparound.
pub fn vruntime_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// What `dequeue_task` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DequeueResult {
    /// The entity left the runqueue (the task is off the rq: `__block_task`).
    Removed,
    /// DELAY_DEQUEUE kept it queued as `sched_delayed` (`p->on_rq` stays 1).
    Delayed,
}

/// What one `pick_next_entity` attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Pick {
    /// Run this entity.
    Entity(usize),
    /// The pick landed on a delayed entity; its dequeue was completed (the task is now
    /// blocked: the caller runs its `__block_task` side) and the caller must pick again.
    DelayedDequeued(usize),
    /// Nothing queued.
    Empty,
}

// ---------------------------------------------------------------------------------
// The runqueue.

/// `struct cfs_rq` (the root one of a CPU; see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CfsRq {
    mode: FairMode,
    /// The kernel's rb-tree ([`tree`]): queued entities except `curr`. Root entity,
    /// cached leftmost entity (`u32::MAX`: none), entity count.
    root: u32,
    leftmost: u32,
    nr_tree: u32,
    tree_seq: u64,
    curr: Option<usize>,
    next: Option<usize>,
    last: Option<usize>,
    skip: Option<usize>,
    load: LoadWeight,
    nr_queued: u32,
    h_nr_queued: u32,
    h_nr_runnable: u32,
    h_nr_idle: u32,
    /// `min_vruntime` (v0 of the EEVDF sums; monotonic).
    min_vruntime: u64,
    /// `avg_vruntime`: Σ (v_i − v0)·w_i over the tree (i128: exact, never overflows).
    avg_vruntime: i128,
    /// `avg_load`: Σ w_i over the tree.
    avg_load: u64,
    /// PELT of the cfs_rq; `avg.util_est` is the root cfs_rq's util_est sum.
    avg: SchedAvg,
    removed: RemovedLoad,
    clock: RqClock,
    need_resched: bool,
}

impl CfsRq {
    /// `init_cfs_rq()`: empty, `min_vruntime = -(1 << 20)` (so wraparound happens early,
    /// as in the kernel). `cpu_capacity` is `arch_scale_cpu_capacity(cpu)`.
    pub fn new(params: &FairParams, cpu_capacity: u64) -> Self {
        CfsRq {
            mode: params.mode,
            root: u32::MAX,
            leftmost: u32::MAX,
            nr_tree: 0,
            tree_seq: 0,
            curr: None,
            next: None,
            last: None,
            skip: None,
            load: LoadWeight::new(0),
            nr_queued: 0,
            h_nr_queued: 0,
            h_nr_runnable: 0,
            h_nr_idle: 0,
            // The kernel's `(u64)(-(1LL << 20))`: 2^64 - 2^20, so that vruntimes wrap early.
            min_vruntime: (-(1i64 << 20)).cast_unsigned(),
            avg_vruntime: 0,
            avg_load: 0,
            avg: SchedAvg::default(),
            removed: RemovedLoad::default(),
            clock: RqClock::new(cpu_capacity),
            need_resched: false,
        }
    }

    /// For the differential tests against the kernel's C (tests/kernel_diff) only: a
    /// runqueue with v0 = `min_vruntime` holding `queued` (inserted in that order, at the
    /// vruntimes and deadlines they have: no placement) and `curr` as the running entity,
    /// queued when it is in `queued` (then kept out of the tree, as the kernel does) or
    /// already dequeued. Not used by the simulator.
    #[doc(hidden)]
    pub fn kdiff_from_parts(
        params: &FairParams,
        min_vruntime: u64,
        ents: &mut [SchedEntity],
        queued: &[usize],
        curr: Option<usize>,
    ) -> Self {
        let mut rq = CfsRq::new(params, 1024);
        rq.min_vruntime = min_vruntime;
        for &id in queued {
            if Some(id) != curr {
                rq.enqueue_tree(ents, id);
            }
            rq.account_entity_enqueue(ents, id);
            ents[id].on_rq = true;
        }
        rq.curr = curr;
        rq
    }

    // ---- read-only accessors ----

    pub fn mode(&self) -> FairMode {
        self.mode
    }
    /// `cfs_rq->curr`: the running entity (possibly no longer `on_rq` between a sleep
    /// dequeue and the next pick).
    pub fn curr(&self) -> Option<usize> {
        self.curr
    }
    /// `cfs_rq->next` buddy.
    pub fn next_buddy(&self) -> Option<usize> {
        self.next
    }
    /// `cfs_rq->last` buddy (CFS).
    pub fn last_buddy(&self) -> Option<usize> {
        self.last
    }
    /// Whether `id` is queued here (tree or curr), delayed ones included.
    pub fn contains(&self, ents: &[SchedEntity], id: usize) -> bool {
        ents[id].on_rq && (self.curr == Some(id) || self.tree_contains(ents, id))
    }
    pub fn nr_queued(&self) -> u32 {
        self.nr_queued
    }
    pub fn h_nr_queued(&self) -> u32 {
        self.h_nr_queued
    }
    pub fn h_nr_runnable(&self) -> u32 {
        self.h_nr_runnable
    }
    pub fn h_nr_idle(&self) -> u32 {
        self.h_nr_idle
    }
    /// `cfs_rq->load`: Σ queued weights.
    pub fn load(&self) -> LoadWeight {
        self.load
    }
    pub fn min_vruntime(&self) -> u64 {
        self.min_vruntime
    }
    /// (`avg_vruntime`, `avg_load`) sums over the tree.
    pub fn avg_vruntime_sums(&self) -> (i128, u64) {
        (self.avg_vruntime, self.avg_load)
    }
    /// PELT averages of the cfs_rq (`cfs_rq->avg`).
    pub fn avg(&self) -> &SchedAvg {
        &self.avg
    }
    pub fn clock(&self) -> &RqClock {
        &self.clock
    }
    /// `ns` of interrupt work ran on this CPU (`CONFIG_IRQ_TIME_ACCOUNTING`): the task clock
    /// leaves it out from the next update on.
    pub fn account_irq_time(&mut self, ns: u64) {
        self.clock.account_irq_time(ns);
    }
    /// A reschedule of curr was requested since the last pick.
    pub fn need_resched(&self) -> bool {
        self.need_resched
    }
    /// Clear the resched request (the policy did `__schedule` without
    /// [`CfsRq::pick_next_task_fair`]).
    pub fn clear_need_resched(&mut self) {
        self.need_resched = false;
    }
    /// Request a reschedule (`resched_curr`), e.g. a higher class preempts.
    pub fn resched_curr(&mut self) {
        self.need_resched = true;
    }

    /// `cpu_load()`: `cfs.avg.load_avg`.
    pub fn cpu_load(&self) -> u64 {
        self.avg.load_avg
    }
    /// `cpu_runnable()`: `cfs.avg.runnable_avg`.
    pub fn cpu_runnable(&self) -> u64 {
        self.avg.runnable_avg
    }
    /// `cpu_util_cfs()`: max(util_avg, util_est) (with UTIL_EST) capped at capacity.
    pub fn cpu_util_cfs(&self, params: &FairParams) -> u64 {
        let mut util = self.avg.util_avg;
        if params.features.util_est {
            util = util.max(self.avg.util_est as u64);
        }
        util.min(self.clock.cpu_capacity)
    }
}

// ---------------------------------------------------------------------------------
// Internal plumbing shared by both modes.

impl CfsRq {
    /// `update_rq_clock()`: advance clock_task/clock_pelt to `now_ns`. The interval since
    /// the last update counts as idle for the PELT clock when nothing was running.
    fn update_clock(&mut self, now_ns: u64) {
        let idle = self.curr.is_none();
        self.clock.update(now_ns, idle);
    }

    /// `entity_key()`: v − v0.
    fn entity_key(&self, v: u64) -> i64 {
        v.wrapping_sub(self.min_vruntime) as i64
    }

    /// `__enqueue_entity()`: insert into the tree and the `avg_vruntime` sums.
    fn enqueue_tree(&mut self, ents: &mut [SchedEntity], id: usize) {
        debug_assert!(
            !self.tree_contains(ents, id),
            "entity {id} already in the tree"
        );
        self.tree_insert(ents, id);
        let w = ents[id].load.weight;
        self.avg_vruntime += self.entity_key(ents[id].vruntime) as i128 * w as i128;
        self.avg_load += w;
    }

    /// `__dequeue_entity()`.
    fn dequeue_tree(&mut self, ents: &mut [SchedEntity], id: usize) {
        debug_assert!(self.tree_contains(ents, id), "entity {id} not in tree");
        self.tree_erase(ents, id);
        let w = ents[id].load.weight;
        self.avg_vruntime -= self.entity_key(ents[id].vruntime) as i128 * w as i128;
        self.avg_load -= w;
    }

    /// `update_min_vruntime()`: v0 = max(v0, min(curr, tree minimum)); when v0 moves by
    /// d, `avg_vruntime -= avg_load * d` (`avg_vruntime_update`).
    fn update_min_vruntime(&mut self, ents: &[SchedEntity]) {
        let mut vruntime = self.min_vruntime;
        let curr = self.curr.filter(|&c| ents[c].on_rq);
        if let Some(c) = curr {
            vruntime = ents[c].vruntime;
        }
        let tree_min = self.tree_min_vruntime(ents);
        if let Some(m) = tree_min
            && (curr.is_none() || vruntime_before(m, vruntime))
        {
            vruntime = m;
        }
        let delta = vruntime.wrapping_sub(self.min_vruntime) as i64;
        // min_vruntime only moves forward (wrapping order): `delta > 0` guards the update.
        if delta > 0 {
            debug_assert!(vruntime_before(self.min_vruntime, vruntime));
            self.avg_vruntime -= self.avg_load as i128 * delta as i128;
            self.min_vruntime = vruntime;
        }
    }

    /// `account_entity_enqueue()`.
    fn account_entity_enqueue(&mut self, ents: &[SchedEntity], id: usize) {
        self.load = LoadWeight::new(self.load.weight + ents[id].load.weight);
        self.nr_queued += 1;
    }

    /// `account_entity_dequeue()`.
    fn account_entity_dequeue(&mut self, ents: &[SchedEntity], id: usize) {
        self.load = LoadWeight::new(self.load.weight - ents[id].load.weight);
        self.nr_queued -= 1;
    }

    /// `clear_buddies()`.
    fn clear_buddies(&mut self, id: usize) {
        if self.next == Some(id) {
            self.next = None;
        }
        if self.last == Some(id) {
            self.last = None;
        }
        if self.skip == Some(id) {
            self.skip = None;
        }
    }

    /// `set_next_buddy()`: not for SCHED_IDLE entities.
    fn set_next_buddy(&mut self, ents: &[SchedEntity], id: usize) {
        if ents[id].policy == SchedPolicy::Idle || !ents[id].on_rq {
            return;
        }
        self.next = Some(id);
    }

    /// `update_load_avg(cfs_rq, se, flags)`.
    fn update_load_avg(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
        flags: u32,
    ) {
        let now = self.clock.rq_clock_pelt();
        let util_est = params.features.util_est;
        let running = self.curr == Some(id);
        let se = &mut ents[id];
        let w = se.load.weight;
        if se.avg.last_update_time != 0 && flags & SKIP_AGE_LOAD == 0 {
            let (on_rq, runnable) = (se.on_rq, se.runnable());
            update_load_avg_se(now, &mut se.avg, w, on_rq, runnable, running, util_est);
        }
        self.update_cfs_rq_load_avg(now);
        if se.avg.last_update_time == 0 && flags & DO_ATTACH != 0 {
            attach_entity_load_avg(&mut self.avg, &mut se.avg, w);
        } else if flags & DO_DETACH != 0 {
            detach_entity_load_avg(&mut self.avg, &se.avg, w);
        }
    }

    /// `update_cfs_rq_load_avg(now, cfs_rq)`: apply removed load, then accumulate.
    fn update_cfs_rq_load_avg(&mut self, now_pelt: u64) -> bool {
        let mut decayed = pelt::apply_removed_load(&mut self.avg, &mut self.removed);
        decayed |= update_load_avg_cfs_rq(
            now_pelt,
            &mut self.avg,
            self.load.weight,
            self.h_nr_runnable as u64,
            self.curr.is_some(),
        );
        decayed
    }

    /// The `resched_curr_lazy(rq); clear_buddies(cfs_rq, curr)` pair of update_curr.
    fn resched_and_clear_buddies(&mut self, curr: usize) {
        self.need_resched = true;
        self.clear_buddies(curr);
    }
}

// ---------------------------------------------------------------------------------
// Operations (both modes).

impl CfsRq {
    /// `update_curr()`: charge the time curr ran since `exec_start`, advance its
    /// vruntime, and (EEVDF) its deadline; may request a reschedule. Returns the
    /// `delta_exec` charged (0 if nothing ran), for the caller's runtime accounting.
    pub fn update_curr(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
    ) -> u64 {
        self.update_clock(now_ns);
        let Some(c) = self.curr else { return 0 };
        let now = self.clock.clock_task;
        let se = &mut ents[c];
        let delta = now as i64 - se.exec_start as i64;
        if delta <= 0 {
            return 0;
        }
        let delta = u64::try_from(delta).expect("positive: checked just above");
        se.exec_start = now;
        se.sum_exec_runtime += delta;
        se.vruntime = se.vruntime.wrapping_add(calc_delta_fair(delta, &se.load));
        match self.mode {
            FairMode::Eevdf => self.update_curr_eevdf(ents, params, c),
            FairMode::Cfs => self.update_min_vruntime(ents),
        }
        delta
    }

    /// `enqueue_task_fair()` for a task (= `enqueue_entity` on the root cfs_rq plus the
    /// task counters and util_est). `flags`: `ENQUEUE_*`.
    pub fn enqueue_task(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) {
        self.update_clock(now_ns);
        let delayed = ents[id].sched_delayed;
        if params.features.util_est && (!delayed || flags & ENQUEUE_DELAYED != 0) {
            pelt::util_est_enqueue(&mut self.avg, &ents[id].avg);
        }
        if flags & ENQUEUE_DELAYED != 0 {
            debug_assert!(delayed && ents[id].on_rq);
            self.requeue_delayed_entity(ents, params, id);
            self.debug_check(ents, params);
            return;
        }
        debug_assert!(!ents[id].on_rq, "enqueue of queued entity {id}");
        match self.mode {
            FairMode::Eevdf => self.enqueue_entity_eevdf(ents, params, now_ns, id, flags),
            FairMode::Cfs => self.enqueue_entity_cfs(ents, params, now_ns, id, flags),
        }
        self.h_nr_queued += 1;
        if !ents[id].sched_delayed {
            self.h_nr_runnable += 1;
        }
        if ents[id].policy == SchedPolicy::Idle {
            self.h_nr_idle += 1;
        }
        self.debug_check(ents, params);
    }

    /// `dequeue_task_fair()`: util_est bookkeeping, then `dequeue_entities()`. With
    /// DELAY_DEQUEUE a sleeping ineligible task stays queued ([`DequeueResult::Delayed`]).
    pub fn dequeue_task(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) -> DequeueResult {
        self.update_clock(now_ns);
        if params.features.util_est {
            if !ents[id].sched_delayed {
                pelt::util_est_dequeue(&mut self.avg, &ents[id].avg);
            }
            pelt::util_est_update(
                &mut ents[id].avg,
                flags & DEQUEUE_SLEEP != 0,
                self.clock.cpu_capacity,
            );
        }
        let r = self.dequeue_entities(ents, params, now_ns, id, flags);
        self.debug_check(ents, params);
        r
    }

    /// `dequeue_entities()` for a task: `dequeue_entity` plus the task counters.
    fn dequeue_entities(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) -> DequeueResult {
        debug_assert!(ents[id].on_rq, "dequeue of unqueued entity {id}");
        let was_delayed = ents[id].sched_delayed;
        let r = match self.mode {
            FairMode::Eevdf => self.dequeue_entity_eevdf(ents, params, now_ns, id, flags),
            FairMode::Cfs => self.dequeue_entity_cfs(ents, params, now_ns, id, flags),
        };
        match r {
            DequeueResult::Delayed => {
                // set_delayed(): the task no longer counts as runnable.
                self.h_nr_runnable -= 1;
            }
            DequeueResult::Removed => {
                self.h_nr_queued -= 1;
                if !was_delayed {
                    self.h_nr_runnable -= 1;
                }
                if ents[id].policy == SchedPolicy::Idle {
                    self.h_nr_idle -= 1;
                }
                if flags & DEQUEUE_DELAYED != 0 {
                    // finish_delayed_dequeue_entity(): clear_delayed() restores the
                    // runnable count the dequeue above already dropped; DELAY_ZERO.
                    ents[id].sched_delayed = false;
                    if params.features.delay_zero && ents[id].vlag > 0 {
                        ents[id].vlag = 0;
                    }
                }
            }
        }
        r
    }

    /// `pick_next_entity()`: one attempt. EEVDF may land on a delayed entity, whose
    /// dequeue it completes ([`Pick::DelayedDequeued`]); the caller picks again.
    pub fn pick_next_entity(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
    ) -> Pick {
        self.update_clock(now_ns);
        if self.nr_queued == 0 {
            return Pick::Empty;
        }
        match self.mode {
            FairMode::Eevdf => {
                if params.features.pick_buddy
                    && let Some(n) = self.next
                    && self.entity_eligible(ents, n)
                {
                    debug_assert!(!ents[n].sched_delayed);
                    return Pick::Entity(n);
                }
                let Some(se) = self.pick_eevdf(ents, params, true) else {
                    return Pick::Empty;
                };
                if ents[se].sched_delayed {
                    self.dequeue_entities(
                        ents,
                        params,
                        now_ns,
                        se,
                        DEQUEUE_SLEEP | DEQUEUE_DELAYED,
                    );
                    return Pick::DelayedDequeued(se);
                }
                Pick::Entity(se)
            }
            FairMode::Cfs => match self.pick_next_entity_cfs(ents, params) {
                Some(se) => Pick::Entity(se),
                None => Pick::Empty,
            },
        }
    }

    /// `pick_task_fair()`: update curr, then pick until a runnable entity comes out.
    /// Entities whose delayed dequeue was completed on the way are appended to
    /// `blocked` (the caller finishes blocking those tasks).
    pub fn pick_task_fair(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        blocked: &mut Vec<usize>,
    ) -> Option<usize> {
        loop {
            if self.nr_queued == 0 {
                return None;
            }
            if let Some(c) = self.curr
                && ents[c].on_rq
            {
                self.update_curr(ents, params, now_ns);
            }
            match self.pick_next_entity(ents, params, now_ns) {
                Pick::Entity(id) => return Some(id),
                Pick::DelayedDequeued(id) => blocked.push(id),
                Pick::Empty => return None,
            }
        }
    }

    /// `pick_next_task_fair()` + the switch bookkeeping of `__schedule`: pick, then
    /// `put_prev_entity(prev)` / `set_next_entity(next)` if they differ (with
    /// FAIR_GROUP_SCHED the kernel skips both when `prev == next`, so a re-picked curr
    /// keeps its protection window and `prev_sum_exec_runtime`). With nothing to run,
    /// puts prev and marks the PELT clock idle (`update_idle_rq_clock_pelt`). Clears
    /// the resched request. Returns the entity to run.
    pub fn pick_next_task_fair(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        blocked: &mut Vec<usize>,
    ) -> Option<usize> {
        self.update_clock(now_ns);
        let prev = self.curr;
        let next = self.pick_task_fair(ents, params, now_ns, blocked);
        if next != prev {
            if let Some(p) = prev {
                self.put_prev_entity(ents, params, now_ns, p);
            }
            if let Some(n) = next {
                self.set_next_entity(ents, params, now_ns, n);
            }
        }
        if next.is_none() {
            self.clock.update_idle(self.avg.util_sum);
        }
        self.need_resched = false;
        self.debug_check(ents, params);
        next
    }

    /// `set_next_entity()`: `se` becomes curr (taken out of the tree), its PELT is
    /// updated, its protection window set (EEVDF), and `prev_sum_exec_runtime` snapped.
    pub fn set_next_entity(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
    ) {
        self.update_clock(now_ns);
        debug_assert!(self.curr.is_none(), "set_next_entity with curr set");
        self.clear_buddies(id);
        if ents[id].on_rq {
            self.dequeue_tree(ents, id);
            self.update_load_avg(ents, params, id, UPDATE_TG);
            if self.mode == FairMode::Eevdf {
                self.set_protect_slice(ents, params, id);
            }
        }
        ents[id].exec_start = self.clock.clock_task;
        self.curr = Some(id);
        ents[id].prev_sum_exec_runtime = ents[id].sum_exec_runtime;
    }

    /// `put_prev_entity()`: curr stops running; if still queued it goes back into the
    /// tree.
    pub fn put_prev_entity(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
    ) {
        debug_assert_eq!(self.curr, Some(id));
        if ents[id].on_rq {
            self.update_curr(ents, params, now_ns);
            self.enqueue_tree(ents, id);
            self.update_load_avg(ents, params, id, 0);
        }
        self.curr = None;
    }

    /// `entity_tick()` (from `task_tick_fair`): update curr and its PELT; CFS also runs
    /// `check_preempt_tick`. Returns whether a reschedule is now requested.
    pub fn task_tick(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
    ) -> bool {
        self.update_clock(now_ns);
        let Some(c) = self.curr else {
            return self.need_resched;
        };
        self.update_curr(ents, params, now_ns);
        self.update_load_avg(ents, params, c, UPDATE_TG);
        if self.mode == FairMode::Cfs && self.nr_queued > 1 {
            self.check_preempt_tick(ents, params, c);
        }
        self.debug_check(ents, params);
        self.need_resched
    }

    /// `wakeup_preempt()` → `check_preempt_wakeup_fair()` (EEVDF) or
    /// `check_preempt_wakeup()` (CFS), for `woken` just enqueued here. With no fair
    /// curr (the CPU is idle) any fair wakeup preempts. Returns whether this call
    /// requested a reschedule.
    pub fn check_preempt_wakeup(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        woken: usize,
        wake_flags: u32,
    ) -> bool {
        self.update_clock(now_ns);
        let Some(curr) = self.curr else {
            self.need_resched = true;
            return true;
        };
        if curr == woken {
            return false;
        }
        match self.mode {
            FairMode::Eevdf => {
                self.check_preempt_wakeup_eevdf(ents, params, now_ns, curr, woken, wake_flags)
            }
            FairMode::Cfs => {
                self.check_preempt_wakeup_cfs(ents, params, now_ns, curr, woken, wake_flags)
            }
        }
    }

    /// `yield_task_fair()` for curr. The caller then runs `schedule()` (a pick); a
    /// resulting switch counts as involuntary.
    pub fn yield_task(&mut self, ents: &mut [SchedEntity], params: &FairParams, now_ns: u64) {
        self.update_clock(now_ns);
        let Some(c) = self.curr else { return };
        if self.h_nr_queued == 1 {
            return;
        }
        self.clear_buddies(c);
        match self.mode {
            FairMode::Eevdf => {
                self.update_curr(ents, params, now_ns);
                self.yield_eevdf(ents, params, c);
            }
            FairMode::Cfs => {
                if ents[c].policy != SchedPolicy::Batch {
                    self.update_curr(ents, params, now_ns);
                }
                self.skip = Some(c);
            }
        }
        self.debug_check(ents, params);
    }

    /// The core.c `set_user_nice()` sequence for task `id` on this rq: dequeue with
    /// `DEQUEUE_SAVE` (and `put_prev` if running), reweight, enqueue with
    /// `ENQUEUE_RESTORE` (and `set_next` if running), then `prio_changed_fair()`.
    pub fn set_user_nice(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        nice: i32,
    ) {
        self.update_clock(now_ns);
        let old_weight = ents[id].load.weight;
        let new = LoadWeight::from_nice(nice);
        if ents[id].policy == SchedPolicy::Idle {
            // SCHED_IDLE tasks keep WEIGHT_IDLEPRIO whatever their nice.
            return;
        }
        let queued = ents[id].on_rq;
        let running = self.curr == Some(id);
        if queued {
            self.dequeue_task(ents, params, now_ns, id, DEQUEUE_SAVE | DEQUEUE_NOCLOCK);
        }
        if running {
            self.put_prev_entity(ents, params, now_ns, id);
        }
        self.reweight_entity(ents, params, now_ns, id, new);
        if queued {
            self.enqueue_task(ents, params, now_ns, id, ENQUEUE_RESTORE | ENQUEUE_NOCLOCK);
        }
        if running {
            self.set_next_entity(ents, params, now_ns, id);
        }
        // prio_changed_fair(): a lower weight is a "higher" (worse) prio.
        if !ents[id].on_rq || self.nr_queued == 1 {
            return;
        }
        if running {
            if new.weight < old_weight {
                self.need_resched = true;
            }
        } else {
            self.check_preempt_wakeup(ents, params, now_ns, id, 0);
        }
    }

    /// `reweight_entity()` (reached for tasks via `reweight_task_fair`): change the
    /// weight, keeping lag and (EEVDF) the deadline scaled by old/new weight.
    ///
    /// EEVDF, two forms keyed by REWEIGHT_PLACE ([`FairFeatures::reweight_place`]). On
    /// (v6.13+, 6d71a9c61604): a queued entity's clamped lag is taken
    /// (`update_entity_lag`) and its deadline made relative, both are scaled, and
    /// `place_entity()` puts it back; a dequeued entity's relative deadline is scaled too.
    /// Off (v6.7–v6.12, 6.12.y): `reweight_eevdf()` scales a queued entity's vruntime and
    /// deadline around V (taken before it leaves the sums), leaving `vlag` as it is; a
    /// dequeued entity's relative deadline is left as it is. (v6.6's form, which keeps a
    /// queued entity's vruntime and scales only its deadline, is not modelled: the
    /// simulator reweights only dequeued entities, `set_user_nice`, where v6.6 agrees.)
    pub fn reweight_entity(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        new: LoadWeight,
    ) {
        self.update_clock(now_ns);
        let eevdf = self.mode == FairMode::Eevdf;
        let place = eevdf && params.features.reweight_place;
        let is_curr = self.curr == Some(id);
        let on_rq = ents[id].on_rq;
        // reweight_eevdf()'s V: with the entity still in the sums.
        let mut avruntime = None;
        if on_rq {
            // Commit outstanding execution time (CFS v6.5 only does so for curr).
            if eevdf || is_curr {
                self.update_curr(ents, params, now_ns);
            }
            if place {
                self.update_entity_lag(ents, params, id);
                let se = &mut ents[id];
                se.deadline = se.deadline.wrapping_sub(se.vruntime);
                se.rel_deadline = true;
            } else if eevdf {
                avruntime = Some(self.avg_vruntime(ents));
            }
            self.nr_queued -= 1;
            if !is_curr {
                self.dequeue_tree(ents, id);
            }
            self.load = LoadWeight::new(self.load.weight - ents[id].load.weight);
        }
        let old_w = ents[id].load.weight;
        pelt::dequeue_load_avg(&mut self.avg, &ents[id].avg, old_w);
        {
            let se = &mut ents[id];
            if let Some(v) = avruntime {
                Self::reweight_eevdf(se, params, v, new.weight);
            } else if eevdf {
                // vlag = V - v in virtual time: lag_i = w_i * vlag, so it scales by
                // w_old / w_new; so does the relative deadline (v6.13+).
                // |vlag|·w_old is at most about max(2·slice, tick)·1024 (entity_lag's
                // clamp), so the quotient fits in i64.
                let vlag = se.vlag as i128 * old_w as i128 / new.weight as i128;
                se.vlag = i64::try_from(vlag).expect("scaled lag fits in i64");
                if place && se.rel_deadline {
                    let rel = se.deadline as i64 as i128 * old_w as i128 / new.weight as i128;
                    // A deadline far out of range wraps, as the kernel's s64 product does.
                    se.deadline = wrap_s64(rel).cast_unsigned();
                }
            }
            se.load = new;
            let divider = se.avg.pelt_divider();
            se.avg.load_avg = new.weight * se.avg.load_sum / divider;
        }
        pelt::enqueue_load_avg(&mut self.avg, &ents[id].avg, new.weight);
        if on_rq {
            if place {
                self.place_entity_eevdf(ents, params, id, 0);
            }
            self.load = LoadWeight::new(self.load.weight + new.weight);
            if !is_curr {
                self.enqueue_tree(ents, id);
            }
            self.nr_queued += 1;
            if eevdf {
                self.update_min_vruntime(ents);
            }
        }
    }

    /// `task_fork_fair()`, run on the parent's runqueue before the child's first
    /// enqueue. CFS: the child starts at the parent's vruntime, placed with START_DEBIT
    /// and normalized (`-= min_vruntime`) for the enqueue on the chosen CPU. EEVDF: only
    /// `update_curr` (placement happens at the `ENQUEUE_INITIAL` enqueue).
    pub fn task_fork_fair(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        child: usize,
    ) {
        self.update_clock(now_ns);
        if let Some(c) = self.curr {
            self.update_curr(ents, params, now_ns);
            if self.mode == FairMode::Cfs {
                ents[child].vruntime = ents[c].vruntime;
            }
        } else if self.mode == FairMode::Cfs {
            // Fork always runs on the parent's CPU with the parent as curr; without a
            // curr (a policy forking "from outside") start from min_vruntime.
            ents[child].vruntime = self.min_vruntime;
        }
        if self.mode == FairMode::Cfs {
            self.place_entity_cfs(ents, params, child, true);
            ents[child].vruntime = ents[child].vruntime.wrapping_sub(self.min_vruntime);
        }
    }

    /// `post_init_entity_util_avg()` for a new task about to be enqueued here.
    pub fn post_init_entity_util_avg(&mut self, ents: &mut [SchedEntity], id: usize) {
        let w = ents[id].load.weight;
        pelt::post_init_entity_util_avg(&mut ents[id].avg, w, &self.avg, self.clock.cpu_capacity);
    }

    /// `migrate_task_rq_fair()` on the **source** runqueue, called from `set_task_cpu`.
    /// `waking`: a wakeup migration (the task is not queued; TASK_WAKING); otherwise a
    /// load-balancer move already dequeued with `DEQUEUE_MIGRATING`.
    ///
    /// CFS: a waking task's vruntime is normalized (`-= min_vruntime`). EEVDF keeps
    /// `vlag`. PELT: a waking task's averages are synced and queued for lazy removal
    /// (`remove_entity_load_avg`), decayed further to `now_ns` when this CPU is idle
    /// (`migrate_se_pelt_lag`: the kernel estimates the idle time; we know it);
    /// `last_update_time = 0` so the destination attaches it.
    pub fn migrate_task_rq_fair(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        waking: bool,
    ) {
        if waking && self.mode == FairMode::Cfs {
            ents[id].vruntime = ents[id].vruntime.wrapping_sub(self.min_vruntime);
        }
        if waking {
            self.remove_entity_load_avg(ents, params, id);
            if self.curr.is_none() {
                // migrate_se_pelt_lag(): this CPU has been idle; decay to now.
                let mut clk = self.clock;
                clk.update(now_ns, true);
                let w = ents[id].load.weight;
                update_load_avg_blocked_se(
                    clk.rq_clock_pelt(),
                    &mut ents[id].avg,
                    w,
                    params.features.util_est,
                );
            }
        }
        ents[id].avg.last_update_time = 0;
        ents[id].exec_start = 0;
        ents[id].nr_migrations += 1;
    }

    /// `remove_entity_load_avg()`: sync the entity to this cfs_rq's last update and add
    /// its averages to `removed` (subtracted at the next cfs_rq update).
    fn remove_entity_load_avg(&mut self, ents: &mut [SchedEntity], params: &FairParams, id: usize) {
        let w = ents[id].load.weight;
        // sync_entity_load_avg()
        update_load_avg_blocked_se(
            self.avg.last_update_time,
            &mut ents[id].avg,
            w,
            params.features.util_est,
        );
        let a = &ents[id].avg;
        self.removed.nr += 1;
        self.removed.load_avg += a.load_avg;
        self.removed.util_avg += a.util_avg;
        self.removed.runnable_avg += a.runnable_avg;
    }

    /// `task_dead_fair()`: complete a pending delayed dequeue, then remove the task's
    /// PELT contribution.
    pub fn task_dead_fair(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
    ) {
        self.update_clock(now_ns);
        if ents[id].sched_delayed && ents[id].on_rq {
            self.dequeue_entities(ents, params, now_ns, id, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
        }
        self.remove_entity_load_avg(ents, params, id);
    }

    /// `__update_blocked_fair()` for this cfs_rq (periodic/idle balance): decay the
    /// cfs_rq averages (and apply removed load) up to `now_ns`.
    pub fn update_blocked_averages(&mut self, now_ns: u64) -> bool {
        self.update_clock(now_ns);
        let now = self.clock.rq_clock_pelt();
        self.update_cfs_rq_load_avg(now)
    }

    /// Decay a sleeping task's PELT to this runqueue's current PELT time
    /// (`sync_entity_load_avg` against an up-to-date cfs_rq).
    pub fn sync_entity_load_avg(&self, ents: &mut [SchedEntity], params: &FairParams, id: usize) {
        let w = ents[id].load.weight;
        update_load_avg_blocked_se(
            self.avg.last_update_time,
            &mut ents[id].avg,
            w,
            params.features.util_est,
        );
    }

    /// `hrtick_start_fair()`: with more than one task queued, the time curr may still
    /// run before its slice is used (EEVDF: `se->slice`; CFS: `sched_slice()`); `Some(0)`
    /// when already overrun (the kernel reschedules at once). `None`: no hrtick.
    pub fn hrtick_delay_ns(&self, ents: &[SchedEntity], params: &FairParams) -> Option<u64> {
        let c = self.curr?;
        if self.h_nr_queued <= 1 {
            return None;
        }
        let se = &ents[c];
        let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        let slice = match self.mode {
            FairMode::Eevdf => se.slice,
            FairMode::Cfs => self.sched_slice(ents, params, c),
        };
        Some(slice.saturating_sub(ran))
    }
}

#[cfg(test)]
mod tests;
