//! Wakeup and fork/exec placement: `select_task_rq_fair()` and everything under it, as the
//! kernel does it in `kernel/sched/fair.c`, independent of any runqueue implementation.
//!
//! Mirrored (kernel names): `select_task_rq()` (core.c, with `select_fallback_rq()`),
//! `select_task_rq_fair()`, `record_wakee()`, `wake_wide()`, `wake_affine()`,
//! `wake_affine_idle()`, `wake_affine_weight()`, `select_idle_sibling()`,
//! `select_idle_capacity()`, `asym_fits_cpu()` / `util_fits_cpu()`, `select_idle_smt()`,
//! `select_idle_core()`, `select_idle_cpu()` (SIS_UTIL, SIS_PROP, cluster-first scan),
//! `__select_idle_cpu()`, `set_idle_cores()` / `test_idle_cores()` / `__update_idle_core()`,
//! `update_idle_cpu_scan()`, and the slow path `sched_balance_find_dst_cpu()` (was
//! `find_idlest_cpu()`), `sched_balance_find_dst_group()` (was `find_idlest_group()`) with
//! `update_sg_wakeup_stats()`, `group_classify()`, `update_pick_idlest()`,
//! `adjust_numa_imbalance()`, and `sched_balance_find_dst_group_cpu()`.
//!
//! The runqueue side (idle state, `nr_running`, PELT signals, affinity) is read through
//! the [`WakeupEnv`] trait, whose methods carry the kernel semantics; the Linux policy
//! implements it over its runqueues, tests implement it over constructed states. The
//! state the placement code owns itself lives in [`Wakeup`]: per task `wakee_flips`,
//! `wakee_flip_decay_ts`, `last_wakee`, `recent_used_cpu`, `wake_cpu`; per LLC the
//! `sched_domain_shared` fields `has_idle_cores` and `nr_idle_scan`, and the LLC domain's
//! `avg_scan_cost` (SIS_PROP).
//!
//! Kernel versions: the shape of `select_idle_sibling()` and of the slow path changed a
//! lot between v3.x and v6.x; [`WakeupParams::version`] selects the shape (see
//! `docs/fidelity.md`, "Wakeup placement", for the table), the feature bits (SIS_UTIL,
//! SIS_PROP, WA_IDLE, WA_WEIGHT, WA_BIAS) come from [`Features`].
//!
//! Left out: energy-aware placement (`find_energy_efficient_cpu()`: no preset has an
//! energy model, so the root domain is always "overutilized" and EAS is skipped, as the
//! kernel does without one); uclamp (no task has clamps, so `util_fits_cpu()` never
//! returns −1); core scheduling cookies (every cookie matches); `vcpu_is_preempted()`
//! (bare metal: `available_idle_cpu() == idle_cpu()` unless the env says otherwise); the
//! per-CPU-kthread shortcut of `select_idle_sibling()` (the simulator has no kthreads);
//! schedstat counters (`nr_wakeups_affine*`, `ttwu_move_affine`), which the caller can
//! derive from the returned [`WakeupExplain`].

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

mod affine;
mod idlest;
mod sis;

pub use affine::AffineOutcome;
pub use idlest::SgWakeupStats;
/// The wakeup path's `group_classify()`, public for the differential tests against the
/// kernel's C (tests/kernel_diff).
#[doc(hidden)]
pub use idlest::group_classify as wakeup_group_classify;
pub use sis::SisStep;

use crate::cpumask::CpuMask;
use crate::domains::{SchedDomains, SdFlags};
use crate::kconfig::features::{Feature, Features};
use crate::kconfig::version::KernelVersion;
use crate::sched::types::{Placement, PlacementPath, WakeCtx, WakeFlags};
use crate::task::TaskId;
use crate::topology::Machine;
use crate::units::{cpu_count_u32, cpu_u32};

/// An index into the flattened SMT-sibling list. Fits: at most `NR_CPUS_MAX` CPUs with at
/// most `NR_CPUS_MAX` siblings each (2^20 entries).
fn sib_index(i: usize) -> u32 {
    u32::try_from(i).expect("SMT sibling list above u32::MAX entries")
}

/// One second: `record_wakee()` halves `wakee_flips` once per `HZ` jiffies.
pub const WAKEE_FLIP_DECAY_NS: u64 = 1_000_000_000;

/// `SCHED_CAPACITY_SCALE` as the wide type the placement arithmetic uses.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

/// `scale_load_down(NICE_0_LOAD)`: the load of one nice-0 task in PELT units.
pub const NICE_0_LOAD_DOWN: u64 = 1024;

/// `NUMA_IMBALANCE_MIN`: an idle-CPU difference this small between nodes is tolerated.
pub const NUMA_IMBALANCE_MIN: u64 = 2;

/// `WF_*` wake flags as the kernel encodes them (`kernel/sched/sched.h`). The low nibble
/// equals the `SD_BALANCE_*` domain flag to look for (`sd_flag = wake_flags & 0xF`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wf(pub u32);

impl Wf {
    pub const EXEC: Wf = Wf(0x02);
    pub const FORK: Wf = Wf(0x04);
    pub const TTWU: Wf = Wf(0x08);
    pub const SYNC: Wf = Wf(0x10);
    pub const MIGRATED: Wf = Wf(0x20);
    pub const CURRENT_CPU: Wf = Wf(0x40);
    pub const RQ_SELECTED: Wf = Wf(0x80);

    pub fn has(self, f: Wf) -> bool {
        self.0 & f.0 != 0
    }

    /// `sd_flag = wake_flags & 0xF`: `SD_BALANCE_EXEC` / `_FORK` / `_WAKE` share the bits.
    pub fn sd_flag(self) -> SdFlags {
        SdFlags(self.0 & 0xF)
    }
}

impl std::ops::BitOr for Wf {
    type Output = Wf;
    fn bitor(self, rhs: Wf) -> Wf {
        Wf(self.0 | rhs.0)
    }
}

impl From<WakeFlags> for Wf {
    fn from(f: WakeFlags) -> Wf {
        let mut w = Wf(0);
        if f.ttwu {
            w = w | Wf::TTWU;
        }
        if f.fork {
            w = w | Wf::FORK;
        }
        if f.sync {
            w = w | Wf::SYNC;
        }
        if f.exec {
            w = w | Wf::EXEC;
        }
        w
    }
}

/// The runqueue state wakeup placement reads, with the kernel's meaning. CPU ids are
/// machine CPU ids; `p` is the task being placed.
///
/// Methods with a default implementation are exact only under the condition their doc
/// states; a runqueue model that can do better overrides them.
pub trait WakeupEnv {
    /// `rq_clock()` of the waking CPU, in ns (for `record_wakee()`'s decay).
    fn now_ns(&self) -> u64;

    /// `cpu_active_mask`: the CPUs tasks may be placed on (`is_cpu_allowed()` for user
    /// tasks). Borrowed, not copied: a mask is 128 bytes and placement reads it per call.
    fn cpu_active_mask(&self) -> &CpuMask;

    /// `idle_cpu()`: `rq->curr == rq->idle && rq->nr_running == 0 && !rq->ttwu_pending`.
    fn idle_cpu(&self, cpu: usize) -> bool;

    /// `available_idle_cpu()`: `idle_cpu() && !vcpu_is_preempted()`. Default: bare metal.
    /// Inlined into the scans, which call it once per CPU visited.
    #[inline]
    fn available_idle_cpu(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu)
    }

    /// `sched_idle_cpu()`: the CPU runs only SCHED_IDLE tasks (`nr_running > 0 &&
    /// nr_running == cfs.h_nr_idle`). Default: no SCHED_IDLE tasks exist.
    #[inline]
    fn sched_idle_cpu(&self, _cpu: usize) -> bool {
        false
    }

    /// `rq->nr_running`: all tasks queued on the CPU including the running one and
    /// (v6.12+) tasks whose dequeue is delayed.
    fn nr_running(&self, cpu: usize) -> usize;

    /// `cfs_h_nr_delayed(rq)` = `cfs.h_nr_queued - cfs.h_nr_runnable`: queued tasks whose
    /// dequeue was delayed (DELAY_DEQUEUE). Default: none.
    fn cfs_h_nr_delayed(&self, _cpu: usize) -> usize {
        0
    }

    /// `capacity_of()`: `rq->cpu_capacity`, the capacity left for CFS tasks.
    fn capacity_of(&self, cpu: usize) -> u64;

    /// `arch_scale_cpu_capacity()`: the CPU's original capacity (1024 on the biggest).
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64;

    /// `cpu_util_cfs()`: the CPU's CFS utilization (util_avg / util_est, ≤ capacity).
    fn cpu_util(&self, cpu: usize) -> u64;

    /// `cpu_util_without()`: [`WakeupEnv::cpu_util`] without `p`'s contribution. Default
    /// exact only when `p` contributes nothing to `cpu` (a new task, or a model that
    /// removes a sleeper's util at dequeue).
    fn cpu_util_without(&self, cpu: usize, _p: TaskId) -> u64 {
        self.cpu_util(cpu)
    }

    /// `cpu_load()`: `cfs_rq->avg.load_avg` of the CPU's root cfs_rq.
    fn cpu_load(&self, cpu: usize) -> u64;

    /// `cpu_load_without()`: without `p`'s load (same default caveat as
    /// [`WakeupEnv::cpu_util_without`]).
    fn cpu_load_without(&self, cpu: usize, _p: TaskId) -> u64 {
        self.cpu_load(cpu)
    }

    /// `cpu_runnable()`: `cfs_rq->avg.runnable_avg`.
    fn cpu_runnable(&self, cpu: usize) -> u64;

    /// `cpu_runnable_without()`.
    fn cpu_runnable_without(&self, cpu: usize, _p: TaskId) -> u64 {
        self.cpu_runnable(cpu)
    }

    /// `task_util_est()`: `max(util_avg, util_est)` of `p` after `sync_entity_load_avg()`.
    fn task_util_est(&self, p: TaskId) -> u64;

    /// `task_h_load()`: `p`'s load as seen at the root cfs_rq (= `se.avg.load_avg`
    /// without group scheduling).
    fn task_h_load(&self, p: TaskId) -> u64;

    /// `task_running_on_cpu()`: `p` is queued on `cpu` (so counts in its `nr_running`).
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> bool;

    /// `rq->ttwu_pending`: wakeups queued to `cpu` by other CPUs, not yet activated.
    /// Default: none.
    fn ttwu_pending(&self, _cpu: usize) -> bool {
        false
    }

    /// `idle_cpu_without()`: `cpu` would be idle if `p` were not there (asked only when
    /// its `nr_running` without `p` is 0): the idle task or `p` runs there and no wakeup
    /// is pending. Default: idle, or `p` is queued there and no wakeup is pending.
    fn idle_cpu_without(&self, cpu: usize, p: TaskId) -> bool {
        self.idle_cpu(cpu) || (self.task_running_on_cpu(cpu, p) && !self.ttwu_pending(cpu))
    }

    /// `p->cpus_ptr` (a pointer, as the kernel's: the scans borrow it instead of copying
    /// 128 bytes several times per placement).
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask;

    /// `p->nr_cpus_allowed > 1`.
    fn may_migrate(&self, p: TaskId) -> bool {
        self.cpus_allowed(p).more_than_one()
    }

    /// `current->flags & PF_EXITING` for the waker (a sync wakeup from an exiting task is
    /// not sync). Default: never.
    fn task_exiting(&self, _p: TaskId) -> bool {
        false
    }

    /// `this_rq()->avg_idle` in ns (SIS_PROP's estimate of how long this CPU stays idle).
    /// Default: 0 (the SIS_PROP scan then floors at 4 CPUs).
    fn avg_idle_ns(&self, _cpu: usize) -> u64 {
        0
    }

    /// `idle_get_state(rq)->exit_latency` in ns when the CPU is in a known idle state;
    /// `None` when no cpuidle state is recorded (polling / no cpuidle driver).
    fn idle_exit_latency_ns(&self, _cpu: usize) -> Option<u64> {
        None
    }

    /// `rq->idle_stamp`: when the CPU last went idle (ns; 0 = never / not idle).
    fn idle_stamp_ns(&self, _cpu: usize) -> u64 {
        0
    }

    /// `p->numa_preferred_nid` (NUMA balancing), `None` = `NUMA_NO_NODE`.
    fn numa_preferred_nid(&self, _p: TaskId) -> Option<usize> {
        None
    }

    /// `sg_imbalanced()`: `sgc->imbalance` of the group whose `sched_group_capacity` id
    /// is `sgc` (set by the load balancer on affinity-caused failures).
    fn sg_imbalanced(&self, _sgc: usize) -> bool {
        false
    }

    /// The sums over `group`'s CPUs of what `update_sg_wakeup_stats()` adds up, as they
    /// are now, when the runqueue model keeps them (the load balancer's running sums,
    /// [`crate::sched::balance::sums`]). Default `None`: the caller walks the span.
    fn group_sums(&self, _group: &crate::domains::SchedGroup) -> Option<GroupWakeSums> {
        None
    }

    /// The CPU `p` is queued on (so counts in its `nr_running`), if any.
    fn task_queued_cpu(&self, _p: TaskId) -> Option<usize> {
        None
    }

    /// `sgc->capacity` of a group: the sum of its CPUs' `capacity_of()` at the last
    /// `update_group_capacity()`. Default `None`: the sum of `capacity_of()` over the span
    /// now, which the callers add up in the per-CPU loop they already run over the group
    /// (a second walk of the span cost ~1 % of a fork-heavy run).
    fn group_capacity(&self, _span: &CpuMask) -> Option<u64> {
        None
    }
}

/// A group's sums as [`WakeupEnv::group_sums`] returns them: per-CPU `cpu_load()`,
/// `cpu_util()`, `cpu_runnable()`, `nr_running`, CPUs with `nr_running == 0 &&
/// idle_cpu()`, and `capacity_of()`, each added over the span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupWakeSums {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub nr_running: u32,
    pub idle_cpus: u32,
    pub capacity: u64,
}

/// Machine and sched domains of the root domain placement works on.
#[derive(Clone, Copy)]
pub struct Topo<'a> {
    pub machine: &'a Machine,
    pub domains: &'a SchedDomains,
}

impl<'a> Topo<'a> {
    pub fn new(machine: &'a Machine, domains: &'a SchedDomains) -> Self {
        Topo { machine, domains }
    }

    /// `cpu_smt_mask()` restricted to online CPUs.
    pub fn smt_mask(&self, cpu: usize) -> CpuMask {
        self.machine.smt_mask(cpu).and(&self.machine.online)
    }

    /// `sched_smt_active()`: static key `sched_smt_present`, raised when some CPU comes
    /// online with an SMT sibling online (`sched_cpu_activate()`).
    pub fn sched_smt_active(&self) -> bool {
        self.machine
            .online
            .iter()
            .any(|c| self.smt_mask(c).weight() >= 2)
    }

    /// `cpu_to_node()`.
    pub fn cpu_to_node(&self, cpu: usize) -> usize {
        self.machine.cpus[cpu].node
    }
}

/// Knobs of the placement model: the kernel version whose code shape runs, its feature
/// bits, and the per-CPU cost SIS_PROP uses to measure its own scans.
#[derive(Clone, Copy, Debug)]
pub struct WakeupParams {
    pub version: KernelVersion,
    pub features: Features,
    /// Time one examined CPU costs the scanning CPU (the cost model's
    /// `idle_scan_step_ns`); SIS_PROP's `avg_scan_cost` averages scans measured with it.
    pub idle_scan_step_ns: u64,
    /// Start every LLC's `nr_idle_scan` at the LLC weight instead of the kernel's 0. The
    /// kernel zero-allocates `sd_llc_shared`, so under SIS_UTIL no wakeup scans until the
    /// first periodic LLC-level balance; keep `false` to reproduce that.
    pub nr_idle_scan_start_full: bool,
    /// One jiffy (`TICK_NSEC`): SIS_PROP's `wake_avg_idle` halves once per jiffy (v5.14+).
    pub tick_ns: u64,
    /// `rq->avg_idle` at boot (`2 * sysctl_sched_migration_cost`), which is also where
    /// `sched_init()` starts `rq->wake_avg_idle`.
    pub initial_avg_idle_ns: u64,
}

impl WakeupParams {
    /// Kernel `version` with `features` (normally the profile's).
    pub fn new(version: KernelVersion, features: Features) -> Self {
        WakeupParams {
            version,
            features,
            idle_scan_step_ns: 40,
            nr_idle_scan_start_full: false,
            tick_ns: 1_000_000,
            initial_avg_idle_ns: 1_000_000,
        }
    }

    /// The newest modelled mainline (v6.18) with its default features.
    pub fn mainline() -> Self {
        Self::new(KernelVersion::new(6, 18), Features::defaults())
    }

    pub(crate) fn feat(&self, f: Feature) -> bool {
        self.features.on(f)
    }

    pub(crate) fn at_least(&self, major: u16, minor: u16) -> bool {
        self.version >= KernelVersion::new(major, minor)
    }
}

/// Placement state of one task (fields of `task_struct`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TaskWake {
    /// `wakee_flips`: how often this task switched the task it wakes (decays by half per
    /// second).
    pub wakee_flips: u32,
    /// `wakee_flip_decay_ts` (ns).
    pub wakee_flip_decay_ts: u64,
    /// `last_wakee`.
    pub last_wakee: Option<TaskId>,
    /// `recent_used_cpu`: a CPU the task ran on recently, tried as an idle candidate.
    pub recent_used_cpu: Option<usize>,
    /// `wake_cpu`: where the next wakeup starts (`prev_cpu`), = `task_cpu(p)` normally.
    pub wake_cpu: usize,
}

/// The wakeup half of `struct sched_domain_shared` for one LLC (`sd_llc_shared`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SdLlcShared {
    /// `has_idle_cores`: hint that the LLC has a core whose SMT siblings are all idle.
    pub has_idle_cores: bool,
    /// `nr_idle_scan` (SIS_UTIL): how many CPUs `select_idle_cpu()` may examine.
    pub nr_idle_scan: u32,
    /// `sd_llc->avg_scan_cost` in ns (SIS_PROP), kept here because it is per LLC domain.
    pub avg_scan_cost_ns: u64,
}

/// Which balance flag a placement was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BalanceKind {
    Wake,
    Fork,
    Exec,
}

/// What a placement examined, so the caller can charge `idle_scan_step_ns` per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScanCost {
    /// CPUs whose runqueue state was read by a scan loop (`select_idle_*`,
    /// `update_sg_wakeup_stats()`, `find_idlest_group_cpu()`); the shortcut checks of
    /// `select_idle_sibling()` and `wake_affine()` are not counted.
    pub cpus: u32,
    /// Sched groups evaluated by the slow path (and the legacy group scan).
    pub groups: u32,
}

impl ScanCost {
    /// Steps to charge: one per examined CPU and per evaluated group.
    pub fn steps(&self) -> u64 {
        u64::from(self.cpus) + u64::from(self.groups)
    }
}

/// Why a task landed where it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WakeupExplain {
    pub kind: BalanceKind,
    /// `wake_wide()` said spread (only for ttwu).
    pub wake_wide: bool,
    pub want_affine: bool,
    /// `wake_affine()` ran and what decided it.
    pub affine: Option<AffineOutcome>,
    /// The domain `wake_affine()` ran at, and whether it returned the waking CPU (its
    /// schedstat `ttwu_move_affine`, the task's `nr_wakeups_affine`).
    #[serde(skip)]
    pub affine_sd: Option<(crate::domains::DomainId, bool)>,
    /// The `target` handed to `select_idle_sibling()` (fast path only).
    pub sis_target: Option<usize>,
    /// Where `select_idle_sibling()` returned (fast path only).
    pub sis: Option<SisStep>,
    /// Domain levels at which the slow path found a group to move to.
    pub slow_moves: u8,
    /// The chosen CPU was not allowed/active and `select_fallback_rq()` replaced it.
    pub fallback: bool,
}

/// Result of `select_task_rq()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectResult {
    pub placement: Placement,
    pub cost: ScanCost,
    pub explain: WakeupExplain,
}

/// Where the placements of a run went, summed (not a kernel counter: the kernel's
/// schedstat has `ttwu_move_affine` and friends but not `select_idle_sibling()`'s exits).
/// `sis` is indexed by [`SisStep::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementStats {
    /// Fast-path placements by `select_idle_sibling()` exit.
    pub sis: [u64; SisStep::ALL.len()],
    /// Slow-path placements (`sched_balance_find_dst_cpu()`: forks, execs, SD_BALANCE_WAKE).
    pub find_idlest: u64,
    /// Tasks allowed on one CPU only.
    pub pinned: u64,
    /// Any other path (a policy's own).
    pub other: u64,
    /// CPUs and groups examined, the steps `idle_scan_step_ns` is charged for.
    pub scan_steps: u64,
}

impl PlacementStats {
    /// Count one `select_task_rq()` result.
    pub fn record(&mut self, r: &SelectResult) {
        self.scan_steps += r.cost.steps();
        match (r.placement.path, r.explain.sis) {
            (PlacementPath::SelectIdleSibling, Some(step)) => self.sis[step.index()] += 1,
            (PlacementPath::FindIdlest, _) => self.find_idlest += 1,
            (PlacementPath::Pinned, _) => self.pinned += 1,
            _ => self.other += 1,
        }
    }
}

/// Placement state and entry points. Per-task vectors grow on demand.
#[derive(Clone, Debug)]
pub struct Wakeup {
    pub params: WakeupParams,
    tasks: Vec<TaskWake>,
    /// Indexed by `sd_llc_id` (first CPU of the LLC span).
    llc: Vec<SdLlcShared>,
    smt_active: bool,
    /// `cpu_smt_mask(cpu)` (online siblings, the CPU included, ascending) per CPU:
    /// `smt_sib[smt_start[cpu]..smt_start[cpu + 1]]`. The scans walk these short lists
    /// instead of iterating and masking 1024-bit masks (same CPUs, same order).
    smt_start: Vec<u32>,
    smt_sib: Vec<u32>,
    /// Per CPU: SIS_PROP's aged idle estimate of the waking runqueue (v5.14+).
    wake_idle: Vec<WakeAvgIdle>,
}

/// `rq->wake_avg_idle` and `rq->wake_stamp` (94aafc3ee31d, v5.14 to SIS_PROP's removal in
/// v6.8): half the runqueue's `avg_idle` when it last woke from idle, halved once per jiffy
/// since and reduced by the time of each complete SIS_PROP scan it made, so a CPU that has
/// been busy for a while scans little.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeAvgIdle {
    pub avg_ns: u64,
    /// `wake_stamp`, in jiffies since the start of the run.
    pub stamp_jiffy: u64,
}

/// Scratch of one placement call.
pub(crate) struct Call {
    /// The waking CPU (`smp_processor_id()`).
    pub this_cpu: usize,
    pub cost: ScanCost,
    pub explain: WakeupExplain,
}

impl Call {
    /// A call outside a placement (a fork-kind explanation, nothing counted yet): for the
    /// entry points the kernel differential tests call alone.
    pub(crate) fn bare(this_cpu: usize) -> Call {
        Call {
            this_cpu,
            cost: ScanCost::default(),
            explain: WakeupExplain {
                kind: BalanceKind::Fork,
                wake_wide: false,
                want_affine: false,
                affine: None,
                affine_sd: None,
                sis_target: None,
                sis: None,
                slow_moves: 0,
                fallback: false,
            },
        }
    }
}

impl Wakeup {
    /// State for `topo` (the kernel allocates `sd_llc_shared` when it builds domains).
    pub fn new(topo: &Topo, params: WakeupParams) -> Self {
        let nr = topo.machine.nr_cpus();
        let mut llc = vec![SdLlcShared::default(); nr];
        if params.nr_idle_scan_start_full {
            for cpu in topo.machine.online.iter() {
                let id = topo.domains.llc_id(cpu);
                llc[id].nr_idle_scan = cpu_count_u32(topo.domains.llc_size(cpu));
            }
        }
        let mut smt_start = Vec::with_capacity(nr + 1);
        let mut smt_sib = Vec::new();
        for cpu in 0..nr {
            smt_start.push(sib_index(smt_sib.len()));
            smt_sib.extend(topo.smt_mask(cpu).iter().map(cpu_u32));
        }
        smt_start.push(sib_index(smt_sib.len()));
        let wake_idle = WakeAvgIdle {
            avg_ns: params.initial_avg_idle_ns,
            stamp_jiffy: 0,
        };
        Wakeup {
            params,
            tasks: Vec::new(),
            llc,
            smt_active: topo.sched_smt_active(),
            smt_start,
            smt_sib,
            wake_idle: vec![wake_idle; nr],
        }
    }

    /// `cpu_smt_mask(cpu)` as an ascending list of online CPUs (empty for an unknown CPU).
    #[inline]
    pub fn smt_siblings(&self, cpu: usize) -> &[u32] {
        match (self.smt_start.get(cpu), self.smt_start.get(cpu + 1)) {
            (Some(&a), Some(&b)) => &self.smt_sib[a as usize..b as usize],
            _ => &[],
        }
    }

    /// `ttwu_do_activate()` on `cpu`, which was idle, after it updated `rq->avg_idle` to
    /// `avg_idle_ns`: `rq->wake_stamp = jiffies; rq->wake_avg_idle = rq->avg_idle / 2`
    /// (v5.14+; earlier kernels have no such field, and nothing reads it).
    pub fn set_wake_avg_idle(&mut self, cpu: usize, avg_idle_ns: u64, now_ns: u64) {
        let stamp_jiffy = self.jiffies(now_ns);
        if let Some(w) = self.wake_idle.get_mut(cpu) {
            *w = WakeAvgIdle {
                avg_ns: avg_idle_ns / 2,
                stamp_jiffy,
            };
        }
    }

    /// SIS_PROP's state of `cpu`'s runqueue (for tests and explanations).
    pub fn wake_avg_idle(&self, cpu: usize) -> Option<WakeAvgIdle> {
        self.wake_idle.get(cpu).copied()
    }

    /// Set SIS_PROP's state of `cpu`'s runqueue directly (tests: a constructed state).
    pub fn set_wake_idle(&mut self, cpu: usize, w: WakeAvgIdle) {
        if let Some(slot) = self.wake_idle.get_mut(cpu) {
            *slot = w;
        }
    }

    /// Set `avg_scan_cost` of `cpu`'s LLC directly (tests: a constructed state).
    pub fn set_avg_scan_cost(&mut self, topo: &Topo, cpu: usize, ns: u64) {
        if let Some(s) = self.llc_shared_mut(topo, cpu) {
            s.avg_scan_cost_ns = ns;
        }
    }

    /// Whole jiffies since the start of the run at `now_ns`.
    pub(crate) fn jiffies(&self, now_ns: u64) -> u64 {
        now_ns / self.params.tick_ns.max(1)
    }

    /// Per-task state (default for a task never seen).
    pub fn task(&self, p: TaskId) -> TaskWake {
        self.tasks.get(p.idx()).copied().unwrap_or_default()
    }

    /// Mutable per-task state, created on first use.
    pub fn task_mut(&mut self, p: TaskId) -> &mut TaskWake {
        if self.tasks.len() <= p.idx() {
            self.tasks.resize(p.idx() + 1, TaskWake::default());
        }
        &mut self.tasks[p.idx()]
    }

    /// `sd_llc_shared` of `cpu`'s LLC (`None` without an LLC domain).
    pub fn llc_shared(&self, topo: &Topo, cpu: usize) -> Option<&SdLlcShared> {
        topo.domains.sd_llc(cpu)?;
        self.llc.get(topo.domains.llc_id(cpu))
    }

    pub(crate) fn llc_shared_mut(&mut self, topo: &Topo, cpu: usize) -> Option<&mut SdLlcShared> {
        topo.domains.sd_llc(cpu)?;
        self.llc.get_mut(topo.domains.llc_id(cpu))
    }

    /// Set `nr_idle_scan` of `cpu`'s LLC directly (tests, or a model that computes it
    /// elsewhere).
    pub fn set_nr_idle_scan(&mut self, topo: &Topo, cpu: usize, nr: u32) {
        if let Some(s) = self.llc_shared_mut(topo, cpu) {
            s.nr_idle_scan = nr;
        }
    }

    /// `sched_smt_active()` for the topology this state was made for.
    pub fn smt_active(&self) -> bool {
        self.smt_active
    }

    /// Fork bookkeeping (`dup_task_struct()` + `wake_up_new_task()`): the child inherits
    /// the parent's `wakee_flips`/`last_wakee`/decay stamp (the kernel copies the whole
    /// `task_struct` and never resets them), and `recent_used_cpu = wake_cpu = cpu`, the
    /// CPU it is forked on (`task_cpu(p)` before `select_task_rq()`).
    pub fn task_fork(&mut self, child: TaskId, parent: Option<TaskId>, cpu: usize) {
        let mut t = parent.map(|p| self.task(p)).unwrap_or_default();
        t.recent_used_cpu = Some(cpu);
        t.wake_cpu = cpu;
        *self.task_mut(child) = t;
    }

    /// `set_task_cpu()` / `__set_task_cpu()`: `p->wake_cpu = cpu`.
    pub fn set_task_cpu(&mut self, p: TaskId, cpu: usize) {
        self.task_mut(p).wake_cpu = cpu;
    }

    /// `record_wakee(p)` run by the waker `current`: decay the waker's flips once per
    /// second, count a flip when it wakes a different task than last time.
    pub fn record_wakee(&mut self, current: TaskId, p: TaskId, now_ns: u64) {
        let w = self.task_mut(current);
        if now_ns > w.wakee_flip_decay_ts.saturating_add(WAKEE_FLIP_DECAY_NS) {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = now_ns;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.wakee_flips = w.wakee_flips.saturating_add(1);
        }
    }

    /// `wake_wide(p)`: true when waker and wakee are in an M:N relationship wider than
    /// the waker's LLC (`slave >= llc_size && master >= slave * llc_size`), so the
    /// wakee should not be pulled to the waker's cache. Versions before v4.3 ("Beef up
    /// wake_wide()", 63b0e9edceec) used `p.flips > llc_size && current.flips > llc_size *
    /// p.flips`; before v3.11 (62470419e993) there was no wake_wide.
    pub fn wake_wide(
        &self,
        topo: &Topo,
        current: Option<TaskId>,
        p: TaskId,
        this_cpu: usize,
    ) -> bool {
        let Some(current) = current else {
            // An interrupt-context wakeup: `current` is whatever was interrupted; the
            // engine has no such task, and the idle task never records wakees.
            return false;
        };
        let factor = topo.domains.llc_size(this_cpu) as u64;
        let waker = u64::from(self.task(current).wakee_flips);
        let wakee = u64::from(self.task(p).wakee_flips);
        if !self.params.at_least(3, 11) {
            return false;
        }
        if !self.params.at_least(4, 3) {
            return wakee > factor && waker > factor * wakee;
        }
        let (master, slave) = if waker >= wakee {
            (waker, wakee)
        } else {
            (wakee, waker)
        };
        slave >= factor && master >= slave * factor
    }

    /// `select_task_rq()` (core.c) for a wakeup or fork as the engine describes it.
    pub fn select_task_rq(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev_cpu: usize,
        ctx: WakeCtx,
    ) -> SelectResult {
        self.select_task_rq_flags(
            topo,
            env,
            p,
            prev_cpu,
            ctx.this_cpu,
            ctx.waker,
            Wf::from(ctx.flags),
        )
    }

    /// `select_task_rq()` with raw `WF_*` flags (for `WF_EXEC`, `WF_CURRENT_CPU`): the
    /// class hook when `p` may run on more than one CPU, else the single allowed CPU;
    /// then `select_fallback_rq()` when the result is not allowed or not active.
    #[allow(clippy::too_many_arguments)]
    pub fn select_task_rq_flags(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev_cpu: usize,
        this_cpu: usize,
        waker: Option<TaskId>,
        wf: Wf,
    ) -> SelectResult {
        let kind = if wf.has(Wf::FORK) {
            BalanceKind::Fork
        } else if wf.has(Wf::EXEC) {
            BalanceKind::Exec
        } else {
            BalanceKind::Wake
        };
        let mut call = Call {
            this_cpu,
            cost: ScanCost::default(),
            explain: WakeupExplain {
                kind,
                wake_wide: false,
                want_affine: false,
                affine: None,
                affine_sd: None,
                sis_target: None,
                sis: None,
                slow_moves: 0,
                fallback: false,
            },
        };
        let allowed = env.cpus_allowed(p);
        let (cpu, path) = if env.may_migrate(p) {
            self.select_task_rq_fair(topo, env, p, prev_cpu, this_cpu, waker, wf, &mut call)
        } else {
            (allowed.first().unwrap_or(prev_cpu), PlacementPath::Pinned)
        };
        let active = env.cpu_active_mask();
        let cpu = if allowed.test(cpu) && active.test(cpu) {
            cpu
        } else {
            call.explain.fallback = true;
            select_fallback_rq(topo, allowed, active, prev_cpu)
        };
        SelectResult {
            placement: Placement { cpu, path },
            cost: call.cost,
            explain: call.explain,
        }
    }

    /// `select_task_rq_fair()`: record the wakee, decide whether the waker's CPU is a
    /// candidate (`want_affine`), walk the waker's domains bottom-up to the first
    /// `SD_WAKE_AFFINE` domain spanning `prev_cpu` (running `wake_affine()` there) or to
    /// the highest domain with the balance flag, then take the slow path
    /// (`sched_balance_find_dst_cpu()`) if such a domain was found, else the fast path
    /// (`select_idle_sibling()`).
    #[allow(clippy::too_many_arguments)]
    fn select_task_rq_fair(
        &mut self,
        topo: &Topo,
        env: &impl WakeupEnv,
        p: TaskId,
        prev_cpu: usize,
        cpu: usize,
        waker: Option<TaskId>,
        wf: Wf,
        call: &mut Call,
    ) -> (usize, PlacementPath) {
        let sync = wf.has(Wf::SYNC) && !waker.is_some_and(|w| env.task_exiting(w));
        let sd_flag = wf.sd_flag();
        let allowed = env.cpus_allowed(p);
        let mut new_cpu = prev_cpu;
        let mut want_affine = false;

        if wf.has(Wf::TTWU) {
            if let Some(w) = waker {
                self.record_wakee(w, p, env.now_ns());
            }
            if wf.has(Wf::CURRENT_CPU) && allowed.test(cpu) {
                return (cpu, PlacementPath::Other);
            }
            // EAS would run here when the root domain is not overutilized; without an
            // energy model the kernel never takes it.
            let wide = self.wake_wide(topo, waker, p, cpu);
            call.explain.wake_wide = wide;
            want_affine = !wide && allowed.test(cpu);
        }
        call.explain.want_affine = want_affine;

        let mut sd = None;
        let mut affine_sd = false;
        for &id in topo.domains.cpu_domains(cpu) {
            let tmp = topo.domains.domain(id);
            if want_affine && tmp.flags.contains(SdFlags::SD_WAKE_AFFINE) && tmp.span.test(prev_cpu)
            {
                if cpu != prev_cpu {
                    let (c, outcome) =
                        self.wake_affine(topo, env, id, p, waker, cpu, prev_cpu, sync);
                    new_cpu = c;
                    call.explain.affine = Some(outcome);
                    call.explain.affine_sd = Some((id, c == cpu));
                }
                sd = None;
                affine_sd = true;
                break;
            }
            if tmp.flags.intersects(sd_flag) {
                sd = Some(id);
            } else if !want_affine {
                break;
            }
        }

        if let Some(sd) = sd {
            let c = self.sched_balance_find_dst_cpu(topo, env, sd, p, cpu, prev_cpu, sd_flag, call);
            (c, PlacementPath::FindIdlest)
        } else if wf.has(Wf::TTWU) && !affine_sd && !self.params.at_least(4, 3) {
            // Before v4.3 (63b0e9edceec 'sched/fair: Beef up wake_wide()' restructured
            // this), a wakeup without an affine domain and without SD_BALANCE_WAKE
            // returned prev_cpu with no idle search (from memory of the v3.x code).
            (prev_cpu, PlacementPath::Other)
        } else if wf.has(Wf::TTWU) {
            call.explain.sis_target = Some(new_cpu);
            let c = self.select_idle_sibling(topo, env, p, prev_cpu, new_cpu, call);
            if want_affine && self.params.at_least(4, 16) && !self.params.at_least(5, 13) {
                // v4.16–v5.12: `current->recent_used_cpu = cpu` after an affine wakeup
                // (dropped by 89aafd67f28c, which made select_idle_sibling() update
                // `p->recent_used_cpu = prev` instead).
                if let Some(w) = waker {
                    self.task_mut(w).recent_used_cpu = Some(cpu);
                }
            }
            (c, PlacementPath::SelectIdleSibling)
        } else {
            // Fork/exec with no domain carrying the flag (e.g. a single-CPU root
            // domain): the kernel returns prev_cpu untouched.
            (new_cpu, PlacementPath::Other)
        }
    }
}

/// `select_fallback_rq()`: an allowed active CPU on `prev_cpu`'s node, else any allowed
/// active CPU. Approximation: when `p` is allowed on no active CPU the kernel widens the
/// affinity (cpuset fallback, then all possible CPUs); here the first active CPU stands
/// for that, without changing the task's mask.
pub fn select_fallback_rq(
    topo: &Topo,
    allowed: &CpuMask,
    active: &CpuMask,
    prev_cpu: usize,
) -> usize {
    let ok = allowed.and(active);
    if prev_cpu < topo.machine.nr_cpus() {
        let node = topo.machine.node_mask(topo.cpu_to_node(prev_cpu));
        if let Some(c) = ok.and(node).first() {
            return c;
        }
    }
    ok.first().or_else(|| active.first()).unwrap_or(prev_cpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::wakeup::sis::fits_capacity;

    #[test]
    fn wake_flags_low_nibble_is_the_sd_balance_flag() {
        assert_eq!(Wf::EXEC.sd_flag(), SdFlags::SD_BALANCE_EXEC);
        assert_eq!(Wf::FORK.sd_flag(), SdFlags::SD_BALANCE_FORK);
        assert_eq!(Wf::TTWU.sd_flag(), SdFlags::SD_BALANCE_WAKE);
        assert_eq!((Wf::TTWU | Wf::SYNC).sd_flag(), SdFlags::SD_BALANCE_WAKE);
        let f = Wf::from(WakeFlags {
            sync: true,
            fork: false,
            ttwu: true,
            exec: false,
        });
        assert_eq!(f, Wf(0x18));
    }

    #[test]
    fn fits_capacity_has_a_20_percent_margin() {
        assert!(fits_capacity(818, 1024));
        assert!(!fits_capacity(820, 1024));
        assert!(fits_capacity(483, 605));
        assert!(!fits_capacity(484, 605));
    }
}
