//! SMP load balancing of the fair class, as `kernel/sched/fair.c` (v6.17 names) does it,
//! written against an abstract runqueue environment ([`LbEnv`]) so that it can be tested on
//! constructed states and driven by any runqueue model.
//!
//! Mirrored kernel functions, by file:
//! - [`stats`]: `update_sg_lb_stats()`, `update_sd_lb_stats()`, `group_classify()`,
//!   `update_sd_pick_busiest()`, `update_group_capacity()`, `update_idle_cpu_scan()`;
//! - [`sums`]: per-group running sums that answer `update_sg_lb_stats()` without visiting
//!   every CPU (a simulator speed-up with identical results);
//! - [`find`]: `sched_balance_find_src_group()` (was `find_busiest_group()`),
//!   `calculate_imbalance()`, `sibling_imbalance()`, `adjust_numa_imbalance()`,
//!   `sched_balance_find_src_rq()` (was `find_busiest_queue()`) with `fbq_classify_*()`;
//! - [`migrate`]: `can_migrate_task()`, `task_hot()`, `detach_tasks()`,
//!   `detach_one_task()`, `attach_tasks()`;
//! - [`pass`]: `sched_balance_rq()` (was `load_balance()`), `need_active_balance()`,
//!   `active_load_balance_cpu_stop()`;
//! - [`trigger`]: `should_we_balance()`, `get_sd_balance_interval()`,
//!   `sched_balance_domains()`, `sched_balance_trigger()`/`sched_balance_softirq()`,
//!   `update_newidle_cost()`, `sched_balance_newidle()`, the NOHZ idle balancer
//!   (`nohz_balance_enter_idle()`, `nohz_balancer_kick()`, `kick_ilb()`, `find_new_ilb()`,
//!   `nohz_csd_func()`, `_nohz_idle_balance()`, `nohz_newidle_balance()`);
//! - [`schedstat`]: the per-domain counters and the `/proc/schedstat` version 17 writer.
//!
//! Runtime state the kernel keeps in `struct sched_domain`, `struct sched_group_capacity`,
//! `struct rq` and the global `nohz` structure lives in [`LoadBalancer`]; the static
//! hierarchy comes from [`crate::domains::SchedDomains`].
//!
//! Cost: every pass counts the groups, CPUs and tasks it examined ([`BalanceWork`]); the
//! caller charges `balance_pass_ns + balance_per_cpu_ns × cpus + balance_per_task_ns ×
//! tasks` per pass ([`BalanceWork::cost_ns`]). Newidle balancing computes the cost of each
//! domain's pass from the same counts and feeds it to `max_newidle_lb_cost`, where the
//! kernel measures `sched_clock_cpu()` around the pass: the simulator's virtual time spent
//! *is* that charge, so both agree by construction.
//!
//! Left out (each with its reason): energy-aware scheduling (`rd->pd`, overutilized
//! tracking) — no energy model; CFS bandwidth throttling (`throttled_lb_pair`) — no
//! bandwidth control; per-CPU kthreads and proxy-execution blocked tasks — the simulator
//! runs neither; core scheduling cookies — not modelled; `isolcpus`/housekeeping masks —
//! every CPU is a housekeeping CPU; `relax_domain_level`; the `sched_balance_running`
//! serialisation is kept but can never be contended because a pass runs atomically in
//! virtual time.

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

pub mod env;
pub mod find;
pub mod migrate;
pub mod pass;
pub mod schedstat;
pub mod stats;
pub mod sums;
pub mod trigger;
pub mod warm;

use std::sync::Arc;

pub use env::LbEnv;
pub use schedstat::SdSchedstat;

use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::domains::{DomainId, SchedDomains, SdFlags};
use crate::kconfig::features::{Feature, Features};
use crate::kconfig::sysctl::{PreemptModel, Sysctls};
use crate::sched::types::IdleType;
use crate::sched::types::{Migration, MigrationReason};
use crate::task::TaskId;

/// `SCHED_CAPACITY_SCALE`.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `SCHED_NR_MIGRATE_BREAK`: initial value and increment of `env->loop_break` (32; 8 on
/// PREEMPT_RT, which the simulator does not model).
pub const SCHED_NR_MIGRATE_BREAK: u32 = 32;
/// `MAX_PINNED_INTERVAL`: ceiling (ms) of the all-pinned back-off of `balance_interval`.
pub const MAX_PINNED_INTERVAL_MS: u32 = 512;
/// `NUMA_IMBALANCE_MIN`: tasks a lightly loaded NUMA node may be left imbalanced by.
pub const NUMA_IMBALANCE_MIN: i64 = 2;
/// `LOAD_AVG_PERIOD`: NOHZ blocked-load refresh period, ms.
pub const LOAD_AVG_PERIOD_MS: u64 = 32;

use crate::sched::types::GroupType;

/// `enum migration_type`: the unit of `env->imbalance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MigrationType {
    /// Load (PELT `load_avg` units).
    #[default]
    Load,
    /// Utilisation (capacity units).
    Util,
    /// Number of tasks.
    Task,
    /// One misfit task.
    Misfit,
}

impl MigrationType {
    pub fn name(self) -> &'static str {
        match self {
            MigrationType::Load => "migrate_load",
            MigrationType::Util => "migrate_util",
            MigrationType::Task => "migrate_task",
            MigrationType::Misfit => "migrate_misfit",
        }
    }
}

/// `enum fbq_type`: NUMA placement class of a group or runqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FbqType {
    Regular,
    Remote,
    All,
}

/// `LBF_*` flags of a balance pass.
pub mod lbf {
    pub const LBF_ALL_PINNED: u32 = 0x01;
    pub const LBF_NEED_BREAK: u32 = 0x02;
    pub const LBF_DST_PINNED: u32 = 0x04;
    pub const LBF_SOME_PINNED: u32 = 0x08;
    pub const LBF_ACTIVE_LB: u32 = 0x10;
}

/// `NOHZ_*_KICK` flags (`rq->nohz_flags`).
pub mod nohz_flags {
    /// Run `sched_balance_domains()` for the idle CPUs.
    pub const NOHZ_BALANCE_KICK: u32 = 1 << 0;
    /// Only refresh blocked load.
    pub const NOHZ_STATS_KICK: u32 = 1 << 1;
    /// Refresh blocked load just before this CPU idles.
    pub const NOHZ_NEWILB_KICK: u32 = 1 << 2;
    /// Recompute `nohz.next_balance`.
    pub const NOHZ_NEXT_KICK: u32 = 1 << 3;
    /// `NOHZ_KICK_MASK`.
    pub const NOHZ_KICK_MASK: u32 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;
}

/// Index of an idle type in the schedstat arrays: the v6.10+ `enum cpu_idle_type` order
/// (`__CPU_NOT_IDLE` = 0, `CPU_IDLE` = 1, `CPU_NEWLY_IDLE` = 2).
pub fn idle_index(idle: IdleType) -> usize {
    match idle {
        IdleType::NotIdle => 0,
        IdleType::Idle => 1,
        IdleType::NewlyIdle => 2,
    }
}

/// What a balance operation examined, for the cost charge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BalanceWork {
    /// `sched_balance_rq()` calls (one per domain balanced; redo loops count once).
    pub passes: u64,
    /// Groups whose statistics were gathered.
    pub groups: u64,
    /// CPUs whose runqueue statistics were read (group stats and busiest-queue search).
    pub cpus: u64,
    /// Tasks examined by `detach_tasks()` / `detach_one_task()`.
    pub tasks: u64,
}

impl BalanceWork {
    /// Virtual time this work costs: `balance_pass_ns × passes + balance_per_cpu_ns × cpus
    /// + balance_per_task_ns × tasks`.
    pub fn cost_ns(&self, cost: &BalanceCosts) -> u64 {
        cost.pass_ns * self.passes + cost.per_cpu_ns * self.cpus + cost.per_task_ns * self.tasks
    }

    fn since(&self, earlier: &BalanceWork) -> BalanceWork {
        BalanceWork {
            passes: self.passes - earlier.passes,
            groups: self.groups - earlier.groups,
            cpus: self.cpus - earlier.cpus,
            tasks: self.tasks - earlier.tasks,
        }
    }
}

/// The balancing part of [`CostModel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceCosts {
    pub pass_ns: u64,
    pub per_cpu_ns: u64,
    pub per_task_ns: u64,
}

impl BalanceCosts {
    pub fn from_model(cost: &CostModel) -> BalanceCosts {
        BalanceCosts {
            pass_ns: cost.balance_pass_ns,
            per_cpu_ns: cost.balance_per_cpu_ns,
            per_task_ns: cost.balance_per_task_ns,
        }
    }
}

/// Why `can_migrate_task()` / `detach_tasks()` refused or took a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskVerdict {
    /// Detached (moved).
    Moved,
    /// Detached although cache hot, because `nr_balance_failed > cache_nice_tries`
    /// (`lb_hot_gained`, `nr_forced_migrations`).
    MovedHot,
    /// DELAY_DEQUEUE task and the pass does not migrate load.
    Delayed,
    /// Not eligible on the destination (PLACE_LAG filter while `nr_balance_failed == 0`).
    Ineligible,
    /// `dst_cpu` not in `p->cpus_ptr` (`nr_failed_migrations_affine`).
    Affine,
    /// Running on the source CPU (`nr_failed_migrations_running`).
    Running,
    /// Cache hot (`task_hot()` or NUMA locality) and `nr_balance_failed <=
    /// cache_nice_tries` (`nr_failed_migrations_hot`).
    Hot,
    /// LB_MIN: load < 16 while `nr_balance_failed == 0`.
    LbMin,
    /// Its load/util (shifted by `nr_balance_failed`) exceeds the remaining imbalance.
    TooBig,
    /// `migrate_misfit` pass and the task fits its source CPU.
    NotMisfit,
}

/// One task decision of a pass, for explanations and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskDecision {
    pub task: TaskId,
    pub src_cpu: usize,
    pub dst_cpu: usize,
    pub verdict: TaskVerdict,
}

/// Per-task counters of `/proc/<pid>/sched` that the fair class increments: the
/// balancer's migration verdicts and `wake_affine()`'s attempts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskLbStats {
    pub nr_failed_migrations_affine: u64,
    pub nr_failed_migrations_running: u64,
    pub nr_failed_migrations_hot: u64,
    pub nr_forced_migrations: u64,
    /// `wake_affine()` ran for a wakeup of this task (the waking CPU was not prev).
    pub nr_wakeups_affine_attempts: u64,
    /// ... and returned the waking CPU.
    pub nr_wakeups_affine: u64,
}

/// What a balance entry point asks of its caller.
#[derive(Debug, Default)]
pub struct LbOutput {
    /// Work done, for the cost charge.
    pub work: BalanceWork,
    /// Tasks moved, with the reason of the pass that moved them. The balancer has already
    /// called [`LbEnv::detach_task`] / [`LbEnv::attach_task`].
    pub migrations: Vec<Migration>,
    /// CPUs on which an active-balance stopper was queued: the caller runs
    /// [`LoadBalancer::active_load_balance_cpu_stop`] for each, as the highest-priority work
    /// on that CPU.
    pub active_balance: Vec<usize>,
    /// An idle CPU that `kick_ilb()` sent an IPI to: the caller delivers it and then calls
    /// [`LoadBalancer::nohz_csd_func`] on that CPU.
    pub kick_ilb: Option<usize>,
    /// Every task decision of the passes, in order.
    pub decisions: Vec<TaskDecision>,
}

impl LbOutput {
    pub fn clear(&mut self) {
        self.work = BalanceWork::default();
        self.migrations.clear();
        self.active_balance.clear();
        self.kick_ilb = None;
        self.decisions.clear();
    }
}

/// The tunables the balancer reads (`sysctl_sched_*`, `HZ`, `CONFIG_PREEMPTION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LbTunables {
    /// `sysctl_sched_migration_cost`, ns.
    pub migration_cost_ns: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// `HZ`.
    pub hz: u32,
    /// `CONFIG_PREEMPTION` (PREEMPT_DYNAMIC or a full/lazy build): newidle `detach_tasks()`
    /// stops after one task.
    pub preemption: bool,
}

impl LbTunables {
    pub fn from_sysctls(s: &Sysctls) -> LbTunables {
        LbTunables {
            migration_cost_ns: s.sched_migration_cost_ns,
            nr_migrate: s.sched_nr_migrate,
            hz: s.hz,
            preemption: s.preempt_dynamic
                || matches!(s.preempt, PreemptModel::Full | PreemptModel::Lazy),
        }
    }
}

/// Runtime state of one `struct sched_domain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainState {
    /// `sd->last_balance`, jiffies.
    pub last_balance: u64,
    /// `sd->balance_interval`, ms (starts at `min_interval`, doubles on balanced passes).
    pub balance_interval_ms: u32,
    /// `sd->nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `sd->max_newidle_lb_cost`, ns.
    pub max_newidle_lb_cost: u64,
    /// `sd->last_decay_max_lb_cost`, jiffies.
    pub last_decay_max_lb_cost: u64,
    /// `sd->newidle_call` (NI_RANDOM, v6.18).
    pub newidle_call: u32,
    /// `sd->newidle_success`.
    pub newidle_success: u32,
    /// `sd->newidle_ratio`: successes per 1024 calls.
    pub newidle_ratio: u32,
    /// The schedstat counters of this domain.
    pub stats: SdSchedstat,
}

/// Runtime state of one `struct sched_group_capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgcState {
    pub capacity: u64,
    pub min_capacity: u64,
    pub max_capacity: u64,
    /// `sgc->next_update`, jiffies.
    pub next_update: u64,
    /// `sgc->imbalance`: the group could not be balanced because of affinity.
    pub imbalance: bool,
}

/// The balancing fields of one `struct rq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqBalanceState {
    /// `rq->next_balance`, jiffies.
    pub next_balance: u64,
    /// `rq->max_idle_balance_cost`, ns.
    pub max_idle_balance_cost: u64,
    /// `rq->avg_idle`, ns.
    pub avg_idle: u64,
    /// `rq->idle_stamp`, ns (0 = not idle-stamped).
    pub idle_stamp: u64,
    /// `rq->idle_balance`: idle type seen by the last tick.
    pub idle_balance: IdleType,
    /// `rq->active_balance`.
    pub active_balance: bool,
    /// `rq->push_cpu`.
    pub push_cpu: usize,
    /// `rq->nohz_tick_stopped`.
    pub nohz_tick_stopped: bool,
    /// `rq->nohz_flags` (`NOHZ_*_KICK` bits pending for this CPU).
    pub nohz_flags: u32,
    /// `rq->nohz_idle_balance`: kick flags taken by `nohz_csd_func()`, for the softirq.
    pub nohz_idle_balance: u32,
    /// `rq->has_blocked_load`.
    pub has_blocked_load: bool,
    /// `rq->last_blocked_load_update_tick`, jiffies.
    pub last_blocked_load_update_tick: u64,
}

/// The global `nohz` structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NohzState {
    /// `nohz.idle_cpus_mask`: CPUs whose tick is stopped.
    pub idle_cpus_mask: CpuMask,
    /// `nohz.nr_cpus`.
    pub nr_cpus: u32,
    /// `nohz.has_blocked`.
    pub has_blocked: bool,
    /// `nohz.needs_update`.
    pub needs_update: bool,
    /// `nohz.next_balance`, jiffies.
    pub next_balance: u64,
    /// `nohz.next_blocked`, jiffies.
    pub next_blocked: u64,
}

/// Where each `sched_balance_newidle()` call went (not a kernel counter: the kernel's
/// schedstat counts only the passes that ran). Every call lands in exactly one field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewidleEntryStats {
    /// A wakeup was already queued for the CPU (`rq->ttwu_pending`).
    pub ttwu_pending: u64,
    /// The CPU is outside the balancing span (not active).
    pub inactive: u64,
    /// `rd->overloaded` was clear: no CPU had two tasks since the flag was last cleared.
    pub rd_not_overloaded: u64,
    /// `avg_idle` below the base domain's `max_newidle_lb_cost` (v5.16+) or below
    /// `sysctl_sched_migration_cost` (NEWIDLE_MIGRATION_COST_GATE).
    pub avg_idle_gate: u64,
    /// The domain walk ran.
    pub walked: u64,
}

/// The load balancer: the static domain hierarchy plus every runtime field the kernel's
/// balancing code keeps, and the configuration (features, tunables, costs).
#[derive(Clone, Debug)]
pub struct LoadBalancer {
    pub domains: Arc<SchedDomains>,
    pub features: Features,
    pub tunables: LbTunables,
    pub costs: BalanceCosts,
    /// Per [`DomainId`].
    pub sd: Vec<DomainState>,
    /// Per `sgc` id ([`crate::domains::SchedGroup::sgc`]).
    pub sgc: Vec<SgcState>,
    /// Per CPU.
    pub rq: Vec<RqBalanceState>,
    pub nohz: NohzState,
    /// `rd->overloaded`: some CPU has more than one runnable task.
    pub rd_overloaded: bool,
    /// `sd_llc_shared->nr_busy_cpus`, indexed by `sd_llc_id` (the LLC's first CPU).
    pub llc_nr_busy_cpus: Vec<i64>,
    /// `sd_llc_shared->nr_idle_scan` (SIS_UTIL), indexed by `sd_llc_id`; `None` until the
    /// first periodic balance at the LLC level computes it.
    pub llc_nr_idle_scan: Vec<Option<u32>>,
    /// Per-task counters, by task.
    pub task_stats: std::collections::BTreeMap<TaskId, TaskLbStats>,
    /// How `sched_balance_newidle()` calls ended before or at their first pass.
    pub newidle_entry: NewidleEntryStats,
    /// `max_load_balance_interval`, jiffies (`HZ × online CPUs / 10`).
    pub max_load_balance_interval: u64,
    /// `sched_balance_running` (SD_SERIALIZE).
    sched_balance_running: bool,
    /// `cpu_smt_mask()` per CPU (online siblings, including the CPU).
    smt_mask: Vec<CpuMask>,
    /// `sched_smt_active()`.
    smt_active: bool,
    /// Current time (set by each entry point).
    now_ns: u64,
    jiffies: u64,
    /// Jiffies at simulated time 0: 0 at boot, the machine's uptime after
    /// [`LoadBalancer::warm_start`].
    jiffies_base: u64,
    /// Scratch list for `cfs_tasks`.
    scratch_tasks: Vec<TaskId>,
    /// `detach_tasks()`'s walk of the source's task list (storage reused across passes).
    scratch_deque: std::collections::VecDeque<TaskId>,
    /// Per-group running sums of `update_sg_lb_stats()`'s per-CPU quantities.
    pub sums: sums::LbSums,
}

/// Each domain's balancing state at boot (`sd_init()`).
fn boot_domain_states(domains: &SchedDomains, jiffies: u64) -> Vec<DomainState> {
    domains
        .domains
        .iter()
        .map(|d| DomainState {
            last_balance: jiffies,
            balance_interval_ms: d.min_interval_ms,
            nr_balance_failed: 0,
            max_newidle_lb_cost: 0,
            last_decay_max_lb_cost: jiffies,
            // sd_init(): "50% success rate" (33cf66d88306).
            newidle_call: 512,
            newidle_success: 256,
            newidle_ratio: 512,
            stats: SdSchedstat::default(),
        })
        .collect()
}

/// Each group capacity's state at boot, from its domains' groups.
fn boot_sgc_states(domains: &SchedDomains, jiffies: u64) -> Vec<SgcState> {
    let mut sgc = vec![
        SgcState {
            capacity: 0,
            min_capacity: 0,
            max_capacity: 0,
            next_update: jiffies,
            imbalance: false,
        };
        domains.nr_sgc
    ];
    for g in &domains.groups {
        let s = &mut sgc[g.sgc];
        s.capacity = g.capacity;
        s.min_capacity = u64::from(g.min_capacity);
        s.max_capacity = u64::from(g.max_capacity);
    }
    sgc
}

/// Each runqueue's balancing state at boot (`sched_init()`).
fn boot_rq_states(nr: usize, tunables: &LbTunables, jiffies: u64) -> Vec<RqBalanceState> {
    vec![
        RqBalanceState {
            next_balance: jiffies,
            max_idle_balance_cost: tunables.migration_cost_ns,
            avg_idle: 2 * tunables.migration_cost_ns,
            idle_stamp: 0,
            idle_balance: IdleType::NotIdle,
            active_balance: false,
            push_cpu: 0,
            nohz_tick_stopped: false,
            nohz_flags: 0,
            nohz_idle_balance: 0,
            has_blocked_load: false,
            last_blocked_load_update_tick: jiffies,
        };
        nr
    ]
}

impl LoadBalancer {
    /// Runtime state as the kernel initialises it at boot (`sd_init()`, `sched_init()`,
    /// `init_sched_fair_class()`), at time `now_ns`.
    pub fn new(
        domains: Arc<SchedDomains>,
        features: Features,
        tunables: LbTunables,
        costs: BalanceCosts,
        now_ns: u64,
    ) -> LoadBalancer {
        let jiffies = now_ns / (1_000_000_000 / u64::from(tunables.hz.max(1)));
        let sd = boot_domain_states(&domains, jiffies);
        let sgc = boot_sgc_states(&domains, jiffies);
        let nr = domains.nr_cpus();
        let rq = boot_rq_states(nr, &tunables, jiffies);
        let mut llc_nr_busy_cpus = vec![0; nr];
        for cpu in domains.span.iter() {
            if let Some(llc) = domains.sd_llc(cpu) {
                llc_nr_busy_cpus[domains.llc_id(cpu)] = domains.domain(llc).span_weight as i64;
            }
        }
        let smt_mask: Vec<CpuMask> = (0..nr)
            .map(|cpu| {
                domains
                    .lowest_flag_domain(cpu, SdFlags::SD_SHARE_CPUCAPACITY)
                    .map(|d| domains.domain(d).span)
                    .unwrap_or_else(|| CpuMask::single(cpu))
            })
            .collect();
        let smt_active = smt_mask.iter().any(|m| m.weight() > 1);
        let online = domains.span.weight().max(1) as u64;
        LoadBalancer {
            features,
            tunables,
            costs,
            sd,
            sgc,
            rq,
            nohz: NohzState {
                idle_cpus_mask: CpuMask::new(),
                nr_cpus: 0,
                has_blocked: false,
                needs_update: false,
                next_balance: jiffies,
                next_blocked: jiffies,
            },
            rd_overloaded: false,
            llc_nr_busy_cpus,
            llc_nr_idle_scan: vec![None; nr],
            task_stats: Default::default(),
            newidle_entry: NewidleEntryStats::default(),
            max_load_balance_interval: u64::from(tunables.hz) * online / 10,
            sched_balance_running: false,
            smt_mask,
            smt_active,
            now_ns,
            jiffies,
            jiffies_base: 0,
            scratch_tasks: Vec::new(),
            scratch_deque: std::collections::VecDeque::new(),
            sums: sums::LbSums::new(&domains),
            domains,
        }
    }

    /// Convenience constructor from the project's configuration types.
    pub fn from_config(
        domains: Arc<SchedDomains>,
        features: Features,
        sysctls: &Sysctls,
        cost: &CostModel,
        now_ns: u64,
    ) -> LoadBalancer {
        LoadBalancer::new(
            domains,
            features,
            LbTunables::from_sysctls(sysctls),
            BalanceCosts::from_model(cost),
            now_ns,
        )
    }

    /// `sched_feat(f)`.
    #[inline]
    pub fn feat(&self, f: Feature) -> bool {
        self.features.on(f)
    }

    /// Set the current time (ns); jiffies follow from `HZ`.
    pub fn set_now(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
        self.jiffies = self.jiffies_base + now_ns / self.tick_ns();
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Current `jiffies`.
    pub fn jiffies(&self) -> u64 {
        self.jiffies
    }

    fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.tunables.hz.max(1))
    }

    /// `msecs_to_jiffies()`: rounds up.
    pub fn msecs_to_jiffies(&self, ms: u64) -> u64 {
        (ms * u64::from(self.tunables.hz)).div_ceil(1000)
    }

    /// `cpu_smt_mask(cpu)`.
    pub fn smt_mask(&self, cpu: usize) -> &CpuMask {
        &self.smt_mask[cpu]
    }

    /// `sched_smt_active()`.
    pub fn smt_active(&self) -> bool {
        self.smt_active
    }

    /// The state of domain `id`.
    pub fn domain_state(&self, id: DomainId) -> &DomainState {
        &self.sd[id.0]
    }

    pub fn domain_state_mut(&mut self, id: DomainId) -> &mut DomainState {
        &mut self.sd[id.0]
    }

    /// `add_nr_running()`'s root-domain update: the root domain becomes overloaded when a
    /// CPU's `nr_running` reaches 2. Call after every enqueue.
    pub fn note_nr_running(&mut self, nr_running: u32) {
        if nr_running >= 2 {
            self.rd_overloaded = true;
        }
    }

    /// `ttwu_do_activate()`'s `avg_idle` update: a task is activated on `cpu` at `now_ns`;
    /// if the CPU was idle-stamped, fold the idle duration into `avg_idle` (EWMA 1/8,
    /// capped at `2 × max_idle_balance_cost`) and clear the stamp.
    pub fn update_rq_avg_idle(&mut self, cpu: usize, now_ns: u64) {
        let rq = &mut self.rq[cpu];
        if rq.idle_stamp == 0 {
            return;
        }
        let delta = now_ns.saturating_sub(rq.idle_stamp) as i64;
        let avg = rq.avg_idle as i64;
        let max = 2 * rq.max_idle_balance_cost;
        let new = u64::try_from(avg + (delta - avg) / 8).unwrap_or(0);
        rq.avg_idle = new.min(max);
        rq.idle_stamp = 0;
    }

    /// `is_core_idle(cpu)`: every SMT sibling other than `cpu` is idle.
    pub fn is_core_idle<E: LbEnv + ?Sized>(&self, env: &E, cpu: usize) -> bool {
        self.smt_mask[cpu]
            .iter()
            .all(|s| s == cpu || env.idle_cpu(s))
    }

    /// `sched_use_asym_prio(sd, cpu)`.
    fn sched_use_asym_prio<E: LbEnv + ?Sized>(&self, env: &E, sd: DomainId, cpu: usize) -> bool {
        let flags = self.domains.domain(sd).flags;
        if !flags.contains(SdFlags::SD_ASYM_PACKING) {
            return false;
        }
        if !self.smt_active {
            return true;
        }
        flags.contains(SdFlags::SD_SHARE_CPUCAPACITY) || self.is_core_idle(env, cpu)
    }

    /// `sched_asym(sd, dst, src)`: `dst` may pull from `src` for asym packing.
    fn sched_asym<E: LbEnv + ?Sized>(&self, env: &E, sd: DomainId, dst: usize, src: usize) -> bool {
        self.sched_use_asym_prio(env, sd, dst)
            && env.arch_asym_cpu_priority(dst) > env.arch_asym_cpu_priority(src)
    }

    /// `check_cpu_capacity(rq, sd)`: CFS capacity of `cpu` reduced by more than
    /// `imbalance_pct`.
    fn check_cpu_capacity<E: LbEnv + ?Sized>(&self, env: &E, cpu: usize, sd: DomainId) -> bool {
        env.capacity_of(cpu) * u64::from(self.domains.domain(sd).imbalance_pct)
            < env.arch_scale_cpu_capacity(cpu) * 100
    }

    fn record_migration(
        &mut self,
        out: &mut LbOutput,
        task: TaskId,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) {
        out.migrations.push(Migration {
            task,
            from,
            to,
            reason,
        });
    }
}

/// `capacity_greater(a, b)`: `a` noticeably (> ~5 %) larger than `b`.
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}

/// `struct lb_env`: the state of one `sched_balance_rq()` pass.
#[derive(Clone, Debug)]
pub struct BalanceEnv {
    /// `env->sd`.
    pub sd: DomainId,
    /// `env->src_cpu` (the busiest CPU once found).
    pub src_cpu: usize,
    /// `env->dst_cpu`: the CPU pulling (may change through `LBF_DST_PINNED`).
    pub dst_cpu: usize,
    /// `env->dst_grpmask`: balance mask of the local group.
    pub dst_grpmask: CpuMask,
    /// `env->new_dst_cpu`.
    pub new_dst_cpu: usize,
    /// `env->idle`.
    pub idle: IdleType,
    /// `env->imbalance`, in the unit of `migration_type`.
    pub imbalance: i64,
    /// `env->cpus`: candidate CPUs (domain span ∩ active, minus pinned-out busiest CPUs).
    pub cpus: CpuMask,
    /// `env->flags` (`lbf::*`).
    pub flags: u32,
    /// `env->loop`.
    pub loop_count: u32,
    /// `env->loop_break`.
    pub loop_break: u32,
    /// `env->loop_max`.
    pub loop_max: u32,
    /// `env->fbq_type`.
    pub fbq_type: FbqType,
    /// `env->migration_type`.
    pub migration_type: MigrationType,
    /// The reason recorded on migrations of this pass.
    pub reason: MigrationReason,
    /// `env->tasks`: detached tasks, in detach order.
    pub tasks: Vec<TaskId>,
}

impl BalanceEnv {
    /// The `lb_env` initialiser of `sched_balance_rq()`: `cpus = span(sd) ∩ active`.
    pub fn new(
        lb: &LoadBalancer,
        sd: DomainId,
        dst_cpu: usize,
        idle: IdleType,
        reason: MigrationReason,
    ) -> BalanceEnv {
        let d = lb.domains.domain(sd);
        let local = lb.domains.group(d.groups[0]);
        BalanceEnv {
            sd,
            src_cpu: dst_cpu,
            dst_cpu,
            dst_grpmask: local.balance_mask,
            new_dst_cpu: dst_cpu,
            idle,
            imbalance: 0,
            cpus: d.span.and(&lb.domains.span),
            flags: 0,
            loop_count: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            fbq_type: FbqType::All,
            migration_type: MigrationType::Load,
            reason,
            tasks: Vec::new(),
        }
    }

    /// `env->idle` read as a truth value (`CPU_IDLE` or `CPU_NEWLY_IDLE`).
    pub fn dst_idle(&self) -> bool {
        self.idle != IdleType::NotIdle
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets;

    #[test]
    fn avg_idle_is_an_eighth_ewma_capped_at_twice_max_idle_balance_cost() {
        let m = presets::by_name("hybrid-10").unwrap();
        let dom = Arc::new(crate::domains::build_sched_domains(&m));
        let mut lb = LoadBalancer::from_config(
            dom,
            Features::defaults(),
            &Sysctls::default(),
            &CostModel::default(),
            0,
        );
        // sched_init(): avg_idle = 2 x migration cost, max_idle_balance_cost = migration cost.
        assert_eq!(lb.rq[3].avg_idle, 1_000_000);
        assert_eq!(lb.rq[3].max_idle_balance_cost, 500_000);
        lb.rq[3].idle_stamp = 1_000_000;
        lb.update_rq_avg_idle(3, 1_800_000);
        assert_eq!(lb.rq[3].avg_idle, 1_000_000 - 200_000 / 8);
        assert_eq!(lb.rq[3].idle_stamp, 0);
        // Not idle-stamped: nothing changes.
        lb.update_rq_avg_idle(3, 50_000_000);
        assert_eq!(lb.rq[3].avg_idle, 975_000);
        lb.rq[3].idle_stamp = 2_000_000;
        lb.update_rq_avg_idle(3, 12_000_000);
        assert_eq!(
            lb.rq[3].avg_idle, 1_000_000,
            "capped at 2 x max_idle_balance_cost"
        );
        // HZ 250: 4 ms jiffies; msecs_to_jiffies rounds up.
        assert_eq!(lb.msecs_to_jiffies(10), 3);
        assert_eq!(lb.msecs_to_jiffies(32), 8);
        assert_eq!(lb.max_load_balance_interval, 250);
    }
}
