//! The Linux fair class as a [`SchedPolicy`]: per-CPU EEVDF/CFS runqueues with PELT
//! ([`crate::sched::fair`]), wakeup and fork placement ([`crate::sched::wakeup`]) and SMP
//! load balancing ([`crate::sched::balance`]), glued to the engine at the kernel's
//! scheduling points. This file only translates: which kernel function runs at which point,
//! and the environment traits those mechanisms read the machine through.
//!
//! The classes above fair — the RT class and the fair deadline server — live in
//! [`super::linux_rt`]; this file orders them as `__pick_next_task()` does (stop >
//! dl_server running as DL > RT > fair > idle) and keeps the fair class blind to RT tasks:
//! the cfs counts exclude them, `rq->nr_running` includes them, the load balancer moves
//! only `cfs_tasks`, and RT time reaches fair only as reduced `capacity_of()` (`avg_rt`).
//!
//! Approximations (with reasons):
//! - `rq_clock` / `rq_clock_task` are the engine's virtual time: no IRQ or steal time.
//! - `capacity_of()` subtracts only `avg_rt` from the CPU's original capacity: no DL
//!   tasks or IRQ time are modelled.
//! - The fair runqueue's PELT clock is treated as idle while an RT task runs (it follows
//!   the fair `curr`), which only matters for `lost_idle_time` on a saturated CPU.
//! - The active-balance stopper runs as an engine event on the busiest CPU (see
//!   `Engine::handle_stopper`), preempting its current task as the stop class does.

use std::sync::Arc;

use super::cfs_tasks::CfsTaskLists;
use super::linux_rt::{RtClass, RtConfig};
use super::numa_balancing::NumaBalancing;
use super::{
    Actions, CoreView, EnqueueFlags, IdleType, PUBLISHED_ONLY, Placement, PlacementPath,
    SchedPolicy, WakeCtx, WakeFlags,
};
use crate::cpumask::CpuMask;
use crate::domains::DomainId;
use crate::domains::{SchedDomains, SchedGroup, build_sched_domains};
use crate::kconfig::ResolvedKernel;
use crate::kconfig::features::Feature;
use crate::kconfig::profiles::SchedMode;
use crate::rng::{RngStream, StreamKind};
use crate::sched::balance::schedstat::{SdSchedstat, write_schedstat};
use crate::sched::balance::sums::LbSums;
use crate::sched::balance::{BalanceCosts, LbEnv, LbOutput, LoadBalancer, NewidleEntryStats};
use crate::sched::dl_server::DlServerParams;
use crate::sched::fair::{
    self, CfsRq, DequeueResult, EevdfVersion, FairFeatures, FairMode, FairParams, SchedEntity,
};
use crate::sched::numa::state::NumaSched;
use crate::sched::types::{NumaMigrateDecision, RqSchedstat};
use crate::sched::wakeup::{
    GroupWakeSums, PlacementStats, SisStep, Topo, Wakeup, WakeupEnv, WakeupParams,
};
use crate::task::{TaskId, TaskPolicy};
use crate::topology::Machine;

/// The Linux fair-class policy.
pub struct LinuxFair {
    params: FairParams,
    domains: Arc<SchedDomains>,
    wakeup: Wakeup,
    lb: LoadBalancer,
    /// Where this run's CFS placements went.
    placements: PlacementStats,
    costs: BalanceCosts,
    ents: Vec<SchedEntity>,
    rqs: Vec<CfsRq>,
    /// `rq->cfs_tasks` per CPU, least recently run first, with the NUMA counters.
    cfs_tasks: CfsTaskLists,
    /// `sched_numa_balancing` as the last balance pass saw it (the NUMA counters read as
    /// zero while it is off).
    numa_lb_on: bool,
    /// The run's NUMA balancing (a run with a memory model): the per-task statistics
    /// `task_numa_migrate()` and the balancer's NUMA hooks read.
    numa: Option<Box<NumaBalancing>>,
    rng: Vec<RngStream>,
    blocked: Vec<usize>,
    lb_out: LbOutput,
    resched: Vec<usize>,
    /// The RT class and the per-CPU fair servers.
    rt: RtClass,
    /// Work done in enqueue/dequeue for the engine to charge (`take_cost_ns`).
    pending_cost_ns: u64,
    /// CPUs whose balance statistics inputs may have changed since the last balance pass
    /// read them ([`LbEnv::take_changed_cpus`]): every scheduling point on a CPU marks it.
    lb_changed: CpuMask,
    /// Per `sched_group_capacity` id: the sum of its CPUs' `capacity_of()` while no RT
    /// time reduces it (`avg_rt` zero everywhere), for fork placement from the balance sums.
    sgc_capacity_free: Vec<u64>,
}

/// The fair-class parameters of a resolved kernel on `nr_cpus` online CPUs.
pub fn fair_params(kernel: &ResolvedKernel, nr_cpus: usize) -> FairParams {
    let s = &kernel.sysctl;
    let mode = match kernel.mode {
        SchedMode::Cfs => FairMode::Cfs,
        SchedMode::Eevdf => FairMode::Eevdf,
    };
    let v = kernel.version;
    let eevdf_version = if (v.major, v.minor) >= (6, 17) {
        EevdfVersion::V6_17
    } else if (v.major, v.minor) >= (6, 12) {
        EevdfVersion::V6_12
    } else {
        EevdfVersion::V6_6
    };
    let features = kernel.features;
    FairParams {
        mode,
        eevdf_version,
        base_slice_ns: s.scaled_base_slice_ns(nr_cpus),
        normalized_base_slice_ns: s.sched_base_slice_ns,
        sched_latency_ns: s.scaled_latency_ns(nr_cpus),
        min_granularity_ns: s.scaled_min_granularity_ns(nr_cpus),
        wakeup_granularity_ns: s.scaled_wakeup_granularity_ns(nr_cpus),
        tick_nsec: s.tick_ns(),
        features: FairFeatures::from_lookup(|name| {
            Feature::from_name(name).is_some_and(|f| features.on(f))
        }),
    }
}

/// The RT class and fair-server settings of a resolved kernel: RT throttling where the
/// kernel has default RT bandwidth control (RT_DEFAULT_BANDWIDTH, before v6.12), the fair
/// server where DL_SERVER is on, with the `dl_server_*` knobs.
pub fn rt_config(kernel: &ResolvedKernel, cost: &crate::cost::CostModel, nr: usize) -> RtConfig {
    let s = &kernel.sysctl;
    RtConfig {
        nr_cpus: nr,
        throttling: kernel.features.on(Feature::RT_DEFAULT_BANDWIDTH),
        rt_runtime_ns: s.sched_rt_runtime_us * 1000,
        rt_period_ns: s.sched_rt_period_us * 1000,
        rr_timeslice_ms: s.sched_rr_timeslice_ms,
        hz: s.hz,
        server: DlServerParams {
            enabled: kernel.features.on(Feature::DL_SERVER),
            lazy_stop: kernel.features.on(Feature::DL_SERVER_LAZY_STOP),
            runtime_ns: s.dl_server_runtime_ns,
            period_ns: s.dl_server_period_ns,
            start_cost_ns: cost.dl_server_start_ns,
            stop_cost_ns: cost.dl_server_stop_ns,
        },
    }
}

/// The fair class's view of a task's policy (`p->policy` for SCHED_NORMAL/BATCH/IDLE).
fn fair_policy(policy: TaskPolicy) -> fair::SchedPolicy {
    match policy {
        TaskPolicy::Batch => fair::SchedPolicy::Batch,
        TaskPolicy::Idle => fair::SchedPolicy::Idle,
        _ => fair::SchedPolicy::Normal,
    }
}

impl LinuxFair {
    pub fn new(
        kernel: &ResolvedKernel,
        machine: &Machine,
        cost: &crate::cost::CostModel,
        seed: u64,
    ) -> LinuxFair {
        let nr_online = machine.online.weight();
        let params = fair_params(kernel, nr_online);
        let domains = Arc::new(build_sched_domains(machine));
        let topo = Topo::new(machine, &domains);
        let mut wparams = WakeupParams::new(kernel.version, kernel.features);
        wparams.idle_scan_step_ns = cost.idle_scan_step_ns;
        wparams.tick_ns = kernel.sysctl.tick_ns();
        wparams.initial_avg_idle_ns = 2 * kernel.sysctl.sched_migration_cost_ns;
        // The kernel zero-allocates sd_llc_shared, so right after boot SIS_UTIL allows no
        // idle scan until the first LLC-level balance. A simulation starts from a machine
        // that has been up and idle, whose LLCs would be fully scannable: start full.
        wparams.nr_idle_scan_start_full = true;
        let wakeup = Wakeup::new(&topo, wparams);
        let mut lb =
            LoadBalancer::from_config(domains.clone(), kernel.features, &kernel.sysctl, cost, 0);
        // The run starts on a machine that has been up and quiet, not at boot.
        lb.warm_start();
        let nr = machine.nr_cpus();
        LinuxFair {
            rqs: (0..nr)
                .map(|c| CfsRq::new(&params, machine.cpus[c].capacity as u64))
                .collect(),
            cfs_tasks: CfsTaskLists::new(machine.cpus.iter().map(|c| c.node).collect()),
            numa_lb_on: false,
            numa: None,
            rng: (0..nr)
                .map(|c| RngStream::new(seed, StreamKind::Policy, c as u64))
                .collect(),
            ents: Vec::new(),
            blocked: Vec::with_capacity(8),
            lb_out: LbOutput::default(),
            resched: Vec::new(),
            costs: BalanceCosts::from_model(cost),
            rt: {
                let mut rt = RtClass::new(rt_config(kernel, cost, nr));
                // NONTASK_CAPACITY gates update_irq_load_avg(): without it avg_irq stays 0.
                if kernel.sched_feat(crate::kconfig::features::Feature::NONTASK_CAPACITY) {
                    rt.irq_pct = (0..nr).map(|c| cost.nontask_pct_of(c)).collect();
                }
                rt
            },
            pending_cost_ns: 0,
            lb_changed: CpuMask::first_n(nr),
            sgc_capacity_free: Vec::new(),
            params,
            domains,
            wakeup,
            lb,
            placements: PlacementStats::default(),
        }
        .with_sgc_capacity_free(machine)
    }

    /// Fill [`LinuxFair::sgc_capacity_free`] (every `avg_rt` is zero at construction).
    fn with_sgc_capacity_free(mut self, machine: &Machine) -> Self {
        let mut cap = vec![None; self.domains.nr_sgc];
        for g in &self.domains.groups {
            cap[g.sgc].get_or_insert_with(|| {
                g.span
                    .iter()
                    .map(|c| self.rt.capacity_of(c, machine.cpus[c].capacity as u64))
                    .sum::<u64>()
            });
        }
        self.sgc_capacity_free = cap.into_iter().map(Option::unwrap_or_default).collect();
        self
    }

    /// Move `lb_out` into the engine's actions.
    fn drain_lb(&mut self, act: &mut Actions) {
        act.cost_ns += self.lb_out.work.cost_ns(&self.costs);
        for m in &self.lb_out.migrations {
            self.wakeup.set_task_cpu(m.task, m.to);
            act.migrations.push(*m);
        }
        if let Some(ilb) = self.lb_out.kick_ilb {
            act.kicks.push(ilb);
        }
        act.stop_cpus
            .extend(self.lb_out.active_balance.iter().copied());
        act.resched.append(&mut self.resched);
        self.lb_out.clear();
    }
}

/// Read-only view for wakeup placement.
struct WakeView<'a> {
    core: &'a dyn CoreView,
    /// `core.machine()` and `core.now_ns()`, read once per call (hot in the wakeup scans).
    machine: &'a Machine,
    now_ns: u64,
    params: &'a FairParams,
    rqs: &'a [CfsRq],
    ents: &'a [SchedEntity],
    rt: &'a RtClass,
    /// The balance sums just refreshed and [`LinuxFair::sgc_capacity_free`], for a fork
    /// or exec placement ([`LinuxFair::refresh_sums_for_placement`]).
    sums: Option<(&'a LbSums, &'a [u64])>,
    /// Each task's `numa_preferred_nid` (the slow path's NUMA allowance reads it).
    cfs_tasks: &'a CfsTaskLists,
    /// The CPU whose lockless reads may miss another waker's not yet published wake-list
    /// entry (the placement race): the waker's, or the CPU entering idle; it sees its own
    /// stores at once. [`PUBLISHED_ONLY`] for a fork or exec placement: its slow path reads
    /// the balancer's cached group sums, which see published entries only, and its walk
    /// must agree with them.
    race_reader: usize,
}

impl WakeView<'_> {
    /// `rq->nr_running`: fair and (unthrottled) RT tasks.
    fn rq_nr_running(&self, cpu: usize) -> usize {
        (self.rqs[cpu].h_nr_queued() + self.rt.rqs[cpu].nr_running_visible()) as usize
    }
}

impl WakeupEnv for WakeView<'_> {
    fn now_ns(&self) -> u64 {
        self.now_ns
    }
    fn cpu_active_mask(&self) -> &CpuMask {
        &self.machine.online
    }
    /// The runqueue count first: a busy CPU (the common case in the wakeup scans) answers
    /// without the virtual `cpu_is_idle_task()` call; both tests are pure, so the order
    /// does not change the result.
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.rq_nr_running(cpu) == 0 && self.core.cpu_is_idle_task_seen(cpu, self.race_reader)
    }
    fn nr_running(&self, cpu: usize) -> usize {
        self.rq_nr_running(cpu)
    }
    fn cfs_h_nr_delayed(&self, cpu: usize) -> usize {
        (self.rqs[cpu].h_nr_queued() - self.rqs[cpu].h_nr_runnable()) as usize
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        let orig = self.machine.cpus[cpu].capacity as u64;
        self.rt.capacity_of(cpu, orig)
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.machine.cpus[cpu].capacity as u64
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_util_cfs(self.params)
    }
    fn cpu_util_without(&self, cpu: usize, p: TaskId) -> u64 {
        let util = self.cpu_util(cpu);
        if self.core.task_cpu(p) == cpu && self.ents[p.idx()].on_rq {
            util.saturating_sub(self.ents[p.idx()].avg.util_avg)
        } else {
            util
        }
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_load()
    }
    fn cpu_load_without(&self, cpu: usize, p: TaskId) -> u64 {
        let load = self.cpu_load(cpu);
        if self.core.task_cpu(p) == cpu && self.ents[p.idx()].on_rq {
            load.saturating_sub(self.ents[p.idx()].avg.load_avg)
        } else {
            load
        }
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_runnable()
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        let a = &self.ents[p.idx()].avg;
        a.util_avg.max((a.util_est & !1) as u64)
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.ents[p.idx()].avg.load_avg
    }
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> bool {
        self.core.task_cpu(p) == cpu && self.ents[p.idx()].on_rq
    }
    fn ttwu_pending(&self, cpu: usize) -> bool {
        self.core.cpu_ttwu_pending_seen(cpu, self.race_reader)
    }
    fn numa_preferred_nid(&self, p: TaskId) -> Option<usize> {
        self.cfs_tasks.preferred_nid(p)
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        self.core.task_cpus_allowed(p)
    }
    fn avg_idle_ns(&self, cpu: usize) -> u64 {
        self.core.cpu_avg_idle_ns(cpu)
    }
    fn idle_exit_latency_ns(&self, cpu: usize) -> Option<u64> {
        let state = self.core.cpu_idle_state(cpu);
        (self.core.cpu_curr(cpu).is_none() && !self.core.cost().idle_states[state].polling)
            .then(|| self.core.cost().idle_states[state].exit_latency_ns)
    }
    fn idle_stamp_ns(&self, cpu: usize) -> u64 {
        self.core.cpu_idle_stamp_ns(cpu)
    }
    fn group_sums(&self, group: &SchedGroup) -> Option<GroupWakeSums> {
        let (sums, capacity) = self.sums?;
        let g = sums.group(group.sgc);
        Some(GroupWakeSums {
            load: g.load,
            util: g.util,
            runnable: g.runnable,
            nr_running: g.nr_running,
            idle_cpus: g.idle_cpus,
            capacity: capacity[group.sgc],
        })
    }
    fn task_queued_cpu(&self, p: TaskId) -> Option<usize> {
        self.ents[p.idx()].on_rq.then(|| self.core.task_cpu(p))
    }
}

/// Mutable view for load balancing.
struct BalanceView<'a> {
    core: &'a dyn CoreView,
    /// `core.machine()` and `core.now_ns()`, read once per call.
    machine: &'a Machine,
    now_ns: u64,
    params: &'a FairParams,
    rqs: &'a mut [CfsRq],
    ents: &'a mut [SchedEntity],
    cfs_tasks: &'a mut CfsTaskLists,
    /// NUMA balancing is on: the NUMA counters are read (else zero).
    numa_lb_on: bool,
    /// The run's NUMA-balancing state, if any.
    numa: Option<&'a NumaSched>,
    rng: &'a mut [RngStream],
    resched: &'a mut Vec<usize>,
    rt: &'a mut RtClass,
    /// dl_server start/stop work caused by migrations, charged at the next scheduling point.
    pending_cost_ns: &'a mut u64,
    /// [`LinuxFair::lb_changed`].
    lb_changed: &'a mut CpuMask,
}

impl LbEnv for BalanceView<'_> {
    #[inline]
    fn sg_cpu_stats(&self, cpu: usize) -> (u64, u64, u64, u32, u32) {
        let rq = &self.rqs[cpu];
        (
            rq.cpu_load(),
            rq.cpu_util_cfs(self.params),
            rq.cpu_runnable(),
            rq.h_nr_runnable(),
            rq.h_nr_queued() + self.rt.rqs[cpu].nr_running_visible(),
        )
    }
    /// `rq->nr_running`: RT tasks count, though only `cfs_tasks` can be moved.
    fn nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_queued() + self.rt.rqs[cpu].nr_running_visible()
    }
    fn h_nr_runnable(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_runnable()
    }
    fn h_nr_queued(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_queued()
    }
    /// The placement race: lockless reads that see a wake-list entry once published.
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.core.cpu_is_idle_task_seen(cpu, PUBLISHED_ONLY) && self.nr_running(cpu) == 0
    }
    fn ttwu_pending(&self, cpu: usize) -> bool {
        self.core.cpu_ttwu_pending_seen(cpu, PUBLISHED_ONLY)
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_load()
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_runnable()
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_util_cfs(self.params)
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        let orig = self.machine.cpus[cpu].capacity as u64;
        self.rt.capacity_of(cpu, orig)
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.machine.cpus[cpu].capacity as u64
    }
    fn rq_clock_task(&self, cpu: usize) -> u64 {
        // `update_rq_clock()` of the source runqueue, then its clock_task (interrupt time
        // left out under CONFIG_IRQ_TIME_ACCOUNTING).
        self.rqs[cpu].clock().clock_task_at(self.now_ns)
    }
    fn curr_task(&self, cpu: usize) -> Option<TaskId> {
        self.core.cpu_curr(cpu)
    }
    fn cfs_tasks(&self, cpu: usize, out: &mut Vec<TaskId>) {
        out.extend_from_slice(self.cfs_tasks.list(cpu));
    }
    fn cfs_tasks_rotate(&mut self, cpu: usize, p: TaskId) {
        self.cfs_tasks.move_to_tail(cpu, p);
    }
    fn update_blocked_averages(&mut self, cpu: usize) -> bool {
        // update_other_load_avgs(): avg_rt decays (or grows) here too.
        let rt_running = self.rt.curr_is_rt(self.core, cpu);
        self.rt.rqs[cpu].update_rt_rq_load_avg(self.now_ns, rt_running);
        self.lb_changed.set(cpu);
        self.rqs[cpu].update_blocked_averages(self.now_ns)
    }
    fn sched_rng(&mut self, cpu: usize) -> u32 {
        (self.rng[cpu].next_u64() >> 32) as u32
    }
    fn take_changed_cpus(&mut self, out: &mut CpuMask) -> bool {
        *out = out.or(self.lb_changed);
        *self.lb_changed = CpuMask::new();
        true
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.ents[p.idx()].avg.load_avg
    }
    fn task_util_est(&self, p: TaskId) -> u64 {
        let a = &self.ents[p.idx()].avg;
        a.util_avg.max((a.util_est & !1) as u64)
    }
    fn task_running(&self, cpu: usize, p: TaskId) -> bool {
        self.core.cpu_curr(cpu) == Some(p)
    }
    fn cpus_allowed(&self, p: TaskId) -> CpuMask {
        *self.core.task_cpus_allowed(p)
    }
    fn exec_start(&self, p: TaskId) -> u64 {
        self.ents[p.idx()].exec_start
    }
    fn is_delayed(&self, p: TaskId) -> bool {
        self.ents[p.idx()].sched_delayed
    }
    fn nr_numa_running(&self, cpu: usize) -> u32 {
        self.numa_counts(cpu).0
    }
    fn nr_preferred_running(&self, cpu: usize) -> u32 {
        self.numa_counts(cpu).1
    }
    #[inline]
    fn numa_counts(&self, cpu: usize) -> (u32, u32) {
        let c = if self.numa_lb_on {
            self.cfs_tasks.numa_counts(cpu)
        } else {
            (0, 0)
        };
        #[cfg(debug_assertions)]
        assert_eq!(
            c,
            super::numa_view::rq_numa_counts(self.numa, cpu, self.cfs_tasks.list(cpu)),
            "CPU {cpu}: NUMA counters differ from a recount of cfs_tasks"
        );
        c
    }
    fn migrate_degrades_locality(&self, p: TaskId, src: usize, dst: usize, idle: bool) -> i32 {
        let pref = self.nr_preferred_running(src);
        let src = (src, self.nr_running(src), pref);
        super::numa_view::lb_locality(self.numa, p, src, dst, idle)
    }
    fn detach_task(&mut self, p: TaskId, from: usize, _to: usize) {
        let now = self.now_ns;
        self.lb_changed.set(from);
        self.rqs[from].dequeue_task(
            self.ents,
            self.params,
            now,
            p.idx(),
            fair::DEQUEUE_MIGRATING,
        );
        self.cfs_tasks.remove(from, p);
        self.rqs[from].migrate_task_rq_fair(self.ents, self.params, now, p.idx(), false);
        // A migration is a dequeue/enqueue like any other for the fair server: the source's
        // fair queue may empty, the destination's may go 0 -> 1 (enqueue_task_fair()).
        if self.rqs[from].h_nr_queued() == 0 {
            *self.pending_cost_ns += self.rt.server_fair_empty(now, from);
        }
    }
    fn attach_task(&mut self, p: TaskId, to: usize) {
        let now = self.now_ns;
        self.lb_changed.set(to);
        if self.rqs[to].h_nr_queued() == 0 {
            let idle_since = (self.rt.rqs[to].nr_running_visible() == 0
                && self.core.cpu_curr(to).is_none())
            .then_some(self.core.cpu_idle_stamp_ns(to))
            .filter(|&t| t > 0);
            *self.pending_cost_ns += self.rt.server_start(now, to, idle_since);
        }
        self.rqs[to].enqueue_task(
            self.ents,
            self.params,
            now,
            p.idx(),
            fair::ENQUEUE_MIGRATED | fair::ENQUEUE_MIGRATING,
        );
        self.cfs_tasks.add(to, p);
        // wakeup_preempt() of a fair task against an RT current task does nothing.
        if self.core.cpu_curr(to).is_some()
            && !self.rt.curr_is_rt(self.core, to)
            && self.rqs[to].check_preempt_wakeup(self.ents, self.params, now, p.idx(), 0)
        {
            self.resched.push(to);
        }
    }
}

macro_rules! balance_view {
    ($self:ident, $core:ident) => {{
        $self.sync_numa_lb();
        BalanceView {
            core: $core,
            machine: $core.machine(),
            now_ns: $core.now_ns(),
            params: &$self.params,
            rqs: &mut $self.rqs,
            ents: &mut $self.ents,
            cfs_tasks: &mut $self.cfs_tasks,
            numa_lb_on: $self.numa_lb_on,
            numa: $self.numa.as_deref().map(|n| &n.sched),
            rng: &mut $self.rng,
            resched: &mut $self.resched,
            rt: &mut $self.rt,
            pending_cost_ns: &mut $self.pending_cost_ns,
            lb_changed: &mut $self.lb_changed,
        }
    }};
}

impl LinuxFair {
    /// Refresh the load balancer's running sums over `this_cpu`'s root domain for a fork
    /// or exec placement, which then reads its groups' statistics from them instead of
    /// walking every CPU of every group at every level (`update_sg_wakeup_stats()`).
    /// False (walk) when the sums are off or some CPU's capacity is reduced by RT time
    /// (`capacity_of()` would not match [`LinuxFair::sgc_capacity_free`]).
    fn refresh_sums_for_placement(&mut self, core: &dyn CoreView, this_cpu: usize) -> bool {
        if !self.lb.sums.enabled() || self.rt.rqs.iter().any(|r| r.avg_rt.util_avg != 0) {
            return false;
        }
        let Some(&top) = self.domains.cpu_domains(this_cpu).last() else {
            return false;
        };
        let mut env = balance_view!(self, core);
        self.lb.refresh_lb_sums(&mut env, top);
        self.lb.sums.fresh
    }

    /// `wake_affine()`'s schedstat counters: the task's `nr_wakeups_affine_attempts`, and
    /// when it returned the waking CPU its `nr_wakeups_affine` and the domain's
    /// `ttwu_move_affine`.
    fn count_wake_affine(&mut self, p: TaskId, affine: Option<(DomainId, bool)>) {
        let Some((sd, to_this_cpu)) = affine else {
            return;
        };
        let st = self.lb.task_stats.entry(p).or_default();
        st.nr_wakeups_affine_attempts += 1;
        if to_this_cpu {
            st.nr_wakeups_affine += 1;
            self.lb.domain_state_mut(sd).stats.ttwu_move_affine += 1;
        }
    }
}

/// The kernel's `WF_*` bits of a wakeup (one mapping, shared with wakeup placement).
fn wake_flags(flags: WakeFlags) -> u32 {
    crate::sched::wakeup::Wf::from(flags).0
}

/// The class-ordering half of the Linux policy: runtime accounting across classes, the
/// pick order, and the fair class's own pick.
impl LinuxFair {
    /// `update_curr()` of whichever class ran on `cpu` since the last scheduling point:
    /// RT time (throttling, `avg_rt`) or fair time fed to the dl_server. True when the
    /// current task must be rescheduled (RT just throttled, or the server's runtime ran
    /// out while it was running).
    fn account_curr(&mut self, core: &dyn CoreView, cpu: usize) -> bool {
        let (now, curr) = (core.now_ns(), core.cpu_curr(cpu));
        let (delta, rt_running, throttled) = self.rt.account(now, cpu, curr);
        if rt_running || curr.is_none() {
            return throttled;
        }
        let cap = core.machine().cpus[cpu].capacity as u64;
        self.rt.server_update(now, cpu, delta, cap)
    }

    /// `put_prev_task_fair()` when a higher class takes the CPU from a fair task (or from
    /// a fair curr that was dequeued but not yet put).
    fn put_prev_fair(&mut self, core: &dyn CoreView, cpu: usize) {
        if let Some(c) = self.rqs[cpu].curr() {
            self.rqs[cpu].put_prev_entity(&mut self.ents, &self.params, core.now_ns(), c);
        }
    }

    /// `pick_next_task_fair()` with the `cfs_tasks` bookkeeping.
    fn pick_fair(&mut self, core: &dyn CoreView, cpu: usize) -> Option<TaskId> {
        self.blocked.clear();
        let next = self.rqs[cpu].pick_next_task_fair(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            &mut self.blocked,
        );
        for i in 0..self.blocked.len() {
            let b = TaskId::from_index(self.blocked[i]);
            self.cfs_tasks.remove(cpu, b);
        }
        // Each DEQUEUE_DELAYED dequeue done by the pick is a dequeue_entities() this CPU pays.
        self.pending_cost_ns += self.blocked.len() as u64 * core.cost().dequeue_task_ns;
        if !self.blocked.is_empty() && self.rqs[cpu].h_nr_queued() == 0 {
            // A delayed dequeue completed at the pick and emptied the fair queue.
            self.pending_cost_ns += self.rt.server_fair_empty(core.now_ns(), cpu);
        }
        let next = next.map(TaskId::from_index)?;
        self.cfs_tasks.move_to_tail(cpu, next);
        Some(next)
    }

    /// Follow `sched_numa_balancing` before a balance pass: the NUMA counters read as zero
    /// while it is off, so every CPU's balance statistics change when it flips.
    fn sync_numa_lb(&mut self) {
        let on = self.numa.as_deref().is_some_and(NumaBalancing::balancing);
        if on != self.numa_lb_on {
            self.numa_lb_on = on;
            self.lb_changed = CpuMask::first_n(self.rqs.len());
        }
    }

    /// `rq->nr_running`.
    fn rq_nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].h_nr_queued() + self.rt.rqs[cpu].nr_running_visible()
    }
}

impl SchedPolicy for LinuxFair {
    fn name(&self) -> &'static str {
        "linux-fair"
    }

    fn task_fork(&mut self, core: &dyn CoreView, p: TaskId) {
        let (nice, policy, parent_cpu) = (core.task_nice(p), core.task_policy(p), core.task_cpu(p));
        if self.ents.len() <= p.idx() {
            self.ents.resize(
                p.idx() + 1,
                SchedEntity::new(0, fair::SchedPolicy::Normal, &self.params),
            );
        }
        self.ents[p.idx()] = SchedEntity::new(nice as i32, fair_policy(policy), &self.params);
        self.lb_changed.set(parent_cpu);
        if !self.rt.task_fork(p, policy) {
            self.rqs[parent_cpu].task_fork_fair(
                &mut self.ents,
                &self.params,
                core.now_ns(),
                p.idx(),
            );
        }
        self.wakeup.task_fork(p, None, parent_cpu);
    }

    fn select_task_rq(
        &mut self,
        core: &dyn CoreView,
        p: TaskId,
        prev_cpu: usize,
        ctx: WakeCtx,
        act: &mut Actions,
    ) -> Placement {
        if self.rt.is_rt(p) {
            let cpu = self
                .rt
                .select_task_rq_rt(core, &self.domains, p, prev_cpu, ctx.this_cpu);
            return Placement {
                cpu,
                path: PlacementPath::Other,
            };
        }
        let fork_or_exec = ctx.flags.fork || ctx.flags.exec;
        let sums = fork_or_exec && self.refresh_sums_for_placement(core, ctx.this_cpu);
        let topo = Topo::new(core.machine(), &self.domains);
        let view = WakeView {
            core,
            machine: core.machine(),
            now_ns: core.now_ns(),
            params: &self.params,
            rqs: &self.rqs,
            ents: &self.ents,
            rt: &self.rt,
            sums: sums.then_some((&self.lb.sums, &self.sgc_capacity_free[..])),
            cfs_tasks: &self.cfs_tasks,
            race_reader: if fork_or_exec {
                PUBLISHED_ONLY
            } else {
                ctx.this_cpu
            },
        };
        let r = self.wakeup.select_task_rq(&topo, &view, p, prev_cpu, ctx);
        self.placements.record(&r);
        self.count_wake_affine(p, r.explain.affine_sd);
        if sums {
            // The sums stay exact but a balance pass re-reads before it trusts them.
            self.lb.sums.fresh = false;
            self.lb.sums.cover_all = false;
        }
        act.cost_ns += r.cost.steps() * core.cost().idle_scan_step_ns;
        r.placement
    }

    fn ttwu_wake_remote(&mut self, _core: &dyn CoreView, this_cpu: usize, cpu: usize) {
        if let Some(id) = self.domains.lowest_spanning(this_cpu, cpu) {
            self.lb.domain_state_mut(id).stats.ttwu_wake_remote += 1;
        }
    }

    fn migrate_task_rq(&mut self, core: &dyn CoreView, p: TaskId, from: usize, to: usize) {
        self.lb_changed.set(from);
        self.lb_changed.set(to);
        if self.rt.is_rt(p) {
            self.wakeup.set_task_cpu(p, to);
            return;
        }
        self.rqs[from].migrate_task_rq_fair(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            p.idx(),
            true,
        );
        self.wakeup.set_task_cpu(p, to);
    }

    fn enqueue_task(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        self.lb_changed.set(cpu);
        if self.rt.is_rt(p) {
            self.rt.enqueue(core.now_ns(), cpu, p);
            self.lb.note_nr_running(self.rq_nr_running(cpu));
            return;
        }
        let mut f = 0;
        if flags.wakeup {
            f |= fair::ENQUEUE_WAKEUP;
        }
        if flags.migrated {
            f |= fair::ENQUEUE_MIGRATED;
        }
        if flags.initial {
            f |= fair::ENQUEUE_INITIAL;
            self.rqs[cpu].post_init_entity_util_avg(&mut self.ents, p.idx());
        }
        if flags.delayed {
            f |= fair::ENQUEUE_DELAYED;
        }
        let was_idle = self.rqs[cpu].h_nr_queued() == 0;
        if was_idle {
            // dl_server_update_idle_time(): only when the whole rq was idle.
            let idle_since = (self.rq_nr_running(cpu) == 0 && core.cpu_curr(cpu).is_none())
                .then_some(core.cpu_idle_stamp_ns(cpu))
                .filter(|&t| t > 0);
            self.pending_cost_ns += self.rt.server_start(core.now_ns(), cpu, idle_since);
        }
        self.rqs[cpu].enqueue_task(&mut self.ents, &self.params, core.now_ns(), p.idx(), f);
        if !flags.delayed {
            self.cfs_tasks.add(cpu, p);
        }
        if flags.wakeup && was_idle && core.cpu_curr(cpu).is_none() {
            self.lb.update_rq_avg_idle(cpu, core.now_ns());
        }
        self.lb.note_nr_running(self.rq_nr_running(cpu));
    }

    fn dequeue_sleep(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) -> bool {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        if self.rt.is_rt(p) {
            self.rt.dequeue(cpu, p);
            return true;
        }
        let r = self.rqs[cpu].dequeue_task(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            p.idx(),
            fair::DEQUEUE_SLEEP,
        );
        match r {
            DequeueResult::Removed => {
                self.cfs_tasks.remove(cpu, p);
                if self.rqs[cpu].h_nr_queued() == 0 {
                    self.pending_cost_ns += self.rt.server_fair_empty(core.now_ns(), cpu);
                }
                true
            }
            DequeueResult::Delayed => false,
        }
    }

    fn dequeue_exit(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        if self.rt.is_rt(p) {
            self.rt.dequeue(cpu, p);
            return;
        }
        let rq = &mut self.rqs[cpu];
        if self.ents[p.idx()].on_rq {
            rq.dequeue_task(
                &mut self.ents,
                &self.params,
                core.now_ns(),
                p.idx(),
                fair::DEQUEUE_SLEEP | fair::DEQUEUE_SPECIAL,
            );
        }
        rq.task_dead_fair(&mut self.ents, &self.params, core.now_ns(), p.idx());
        self.cfs_tasks.remove(cpu, p);
    }

    fn dequeue_delayed(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        self.rqs[cpu].dequeue_task(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            p.idx(),
            fair::DEQUEUE_SLEEP | fair::DEQUEUE_DELAYED,
        );
        self.cfs_tasks.remove(cpu, p);
        if self.rqs[cpu].h_nr_queued() == 0 {
            self.pending_cost_ns += self.rt.server_fair_empty(core.now_ns(), cpu);
        }
    }

    fn wakeup_preempt(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        p: TaskId,
        flags: WakeFlags,
    ) -> bool {
        self.lb_changed.set(cpu);
        if let Some(r) = self.rt.wakeup_preempt(core, cpu, p) {
            return r;
        }
        self.rqs[cpu].check_preempt_wakeup(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            p.idx(),
            wake_flags(flags),
        )
    }

    /// Only fair-class preemption is lazy; an RT wakee gets `resched_curr()`.
    fn wakeup_preempt_lazy(&self, p: TaskId) -> bool {
        !self.rt.is_rt(p)
    }

    /// `__pick_next_task()`: the fair server when it runs as a DL entity, then RT (unless
    /// throttled), then fair; a higher class first puts the fair curr back.
    fn pick_next_task(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        _prev: Option<TaskId>,
    ) -> Option<TaskId> {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        if self.rt.servers[cpu].running() {
            if let Some(n) = self.pick_fair(core, cpu) {
                return Some(n);
            }
            self.rt.server_yield(core.now_ns(), cpu);
        }
        if let Some(n) = self.rt.pick(cpu) {
            self.put_prev_fair(core, cpu);
            return Some(n);
        }
        self.pick_fair(core, cpu)
    }

    fn put_prev_task(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        if self.rt.is_rt(p) {
            return;
        }
        self.rqs[cpu].put_prev_entity(&mut self.ents, &self.params, core.now_ns(), p.idx());
    }

    fn task_on_rq(&self, p: TaskId) -> bool {
        if self.rt.is_rt(p) {
            return self.rt.ent(p).on_rq;
        }
        self.ents.get(p.idx()).is_some_and(|e| e.on_rq)
    }

    fn take_timer_changes(&mut self, out: &mut Vec<usize>) {
        self.rt.take_timer_changes(out);
    }

    fn next_timer_ns(&self, cpu: usize) -> Option<u64> {
        self.rt.next_timer_ns(cpu)
    }

    fn timer_expired(&mut self, core: &dyn CoreView, cpu: usize, act: &mut Actions) {
        // The RT period timer may unthrottle (change nr_running of) any CPU.
        self.lb_changed = CpuMask::first_n(self.rqs.len());
        self.account_curr(core, cpu);
        let fair_nr = self.rqs[cpu].h_nr_queued();
        self.rt.timer_expired(core, cpu, fair_nr, act);
    }

    /// `move_queued_task()`: the same detach / attach as a balance migration
    /// (`DEQUEUE_MIGRATING`, `ENQUEUE_MIGRATED | ENQUEUE_MIGRATING`), then `wakeup_preempt()`
    /// on the destination.
    fn task_numa_migrate(&mut self, core: &dyn CoreView, p: TaskId) -> Option<NumaMigrateDecision> {
        let numa = &self.numa.as_deref()?.sched;
        let view = super::numa_view::NumaView {
            core,
            numa,
            params: &self.params,
            rqs: &self.rqs,
            ents: &self.ents,
            rt: &self.rt,
            domains: &self.domains,
        };
        let v = numa.variant;
        Some(crate::sched::numa::migrate::task_numa_migrate(&view, p, &v))
    }

    fn move_queued_task(&mut self, core: &dyn CoreView, p: TaskId, from: usize, to: usize) -> bool {
        self.lb_changed.set(from);
        self.lb_changed.set(to);
        if self.rt.is_rt(p) {
            self.rt.dequeue(from, p);
            self.rt.enqueue(core.now_ns(), to, p);
            self.wakeup.set_task_cpu(p, to);
            return self.rt.wakeup_preempt(core, to, p).unwrap_or(false);
        }
        let mut env = balance_view!(self, core);
        env.detach_task(p, from, to);
        env.attach_task(p, to);
        self.wakeup.set_task_cpu(p, to);
        let preempt = self.resched.contains(&to);
        self.resched.retain(|&c| c != to);
        preempt
    }

    fn take_cost_ns(&mut self) -> u64 {
        std::mem::take(&mut self.pending_cost_ns)
    }

    fn hrtick_delay_ns(&self, cpu: usize) -> Option<u64> {
        if !self.lb.feat(Feature::HRTICK) {
            return None;
        }
        // A zero delay (the slice is already used, 6.17 re-pick of the same task) would
        // re-arm at "now" forever; the regular tick handles it, as in the kernel where the
        // clock has moved on by then.
        self.rqs[cpu]
            .hrtick_delay_ns(&self.ents, &self.params)
            .filter(|&d| d > 0)
    }

    /// `sched_tick()` → `task_tick_rt()` / `task_tick_fair()`, with the class's runtime
    /// accounting first (RT throttling, the server's budget).
    fn task_tick(&mut self, core: &dyn CoreView, cpu: usize, curr: TaskId) -> bool {
        self.lb_changed.set(cpu);
        let resched = self.account_curr(core, cpu);
        if self.rt.is_rt(curr) {
            return self.rt.task_tick_rr(cpu, curr) || resched;
        }
        self.rqs[cpu].task_tick(&mut self.ents, &self.params, core.now_ns()) || resched
    }

    fn yield_task(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) {
        self.lb_changed.set(cpu);
        self.account_curr(core, cpu);
        if self.rt.is_rt(p) {
            self.rt.yield_task(cpu, p);
            return;
        }
        self.rqs[cpu].yield_task(&mut self.ents, &self.params, core.now_ns());
    }

    /// Nice does not change an RT task's priority (it only sets `static_prio`).
    fn set_nice(&mut self, core: &dyn CoreView, p: TaskId, nice: i8) {
        if self.rt.is_rt(p) {
            return;
        }
        let cpu = core.task_cpu(p);
        self.lb_changed.set(cpu);
        self.rqs[cpu].set_user_nice(
            &mut self.ents,
            &self.params,
            core.now_ns(),
            p.idx(),
            nice as i32,
        );
    }

    fn nr_running(&self, cpu: usize) -> usize {
        self.rq_nr_running(cpu) as usize
    }

    fn check_invariants(&self, structure: bool, out: &mut Vec<String>) {
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if let Err(e) = rq.check_invariants(&self.ents, &self.params) {
                out.push(format!("CPU {cpu} cfs_rq: {e}"));
            }
        }
        if structure {
            out.extend(
                self.domains
                    .check_invariants()
                    .into_iter()
                    .map(|e| format!("sched domains: {e}")),
            );
        }
    }

    /// `curr` or the wake list of `cpu` changed: its idleness may have.
    fn cpu_state_changed(&mut self, cpu: usize) {
        self.lb_changed.set(cpu);
    }

    fn numa_balancing(&self) -> Option<&NumaBalancing> {
        self.numa.as_deref()
    }

    fn numa_balancing_mut(&mut self) -> Option<&mut NumaBalancing> {
        self.numa.as_deref_mut()
    }

    fn set_numa_balancing(&mut self, numa: Box<NumaBalancing>) {
        self.numa = Some(numa);
    }

    fn numa_preferred_nid_changed(&mut self, p: TaskId, nid: Option<usize>) {
        if let Some(cpu) = self.cfs_tasks.set_preferred_nid(p, nid) {
            self.lb_changed.set(cpu);
        }
    }

    fn account_irq_time(&mut self, cpu: usize, ns: u64) {
        self.rqs[cpu].account_irq_time(ns);
    }

    fn idle_enter(&mut self, core: &dyn CoreView, cpu: usize) {
        self.lb_changed.set(cpu);
        let topo = Topo::new(core.machine(), &self.domains);
        let view = WakeView {
            core,
            machine: core.machine(),
            now_ns: core.now_ns(),
            params: &self.params,
            rqs: &self.rqs,
            ents: &self.ents,
            rt: &self.rt,
            sums: None,
            cfs_tasks: &self.cfs_tasks,
            race_reader: cpu,
        };
        self.wakeup.update_idle_core(&topo, &view, cpu);
    }

    fn avg_idle_updated(&mut self, cpu: usize, avg_idle_ns: u64, now_ns: u64) {
        self.wakeup.set_wake_avg_idle(cpu, avg_idle_ns, now_ns);
    }

    fn nohz_tick_stopped(&mut self, core: &dyn CoreView, cpu: usize) {
        self.lb.nohz_balance_enter_idle(cpu, core.now_ns());
    }

    fn nohz_idle_cpus(&self) -> Option<CpuMask> {
        Some(self.lb.nohz.idle_cpus_mask)
    }

    fn max_balance_interval_ms(&self) -> Option<u64> {
        let ms = self.domains.domains.iter().map(|d| d.max_interval_ms);
        ms.max().map(u64::from)
    }

    fn balance_newidle(&mut self, core: &dyn CoreView, cpu: usize, act: &mut Actions) {
        let mut env = balance_view!(self, core);
        self.lb
            .sched_balance_newidle(&mut env, cpu, core.now_ns(), &mut self.lb_out);
        self.drain_lb(act);
    }

    fn balance_tick(&mut self, core: &dyn CoreView, cpu: usize, act: &mut Actions) {
        let mut env = balance_view!(self, core);
        self.lb
            .sched_tick(&mut env, cpu, core.now_ns(), &mut self.lb_out);
        if let Some(nr) = self.lb.nr_idle_scan(cpu) {
            let topo = Topo::new(core.machine(), &self.domains);
            self.wakeup.set_nr_idle_scan(&topo, cpu, nr);
        }
        self.drain_lb(act);
    }

    fn nohz_idle_balance(&mut self, core: &dyn CoreView, cpu: usize, act: &mut Actions) {
        let mut env = balance_view!(self, core);
        self.lb
            .nohz_csd_func(&mut env, cpu, core.now_ns(), &mut self.lb_out);
        self.drain_lb(act);
    }

    fn active_balance(&mut self, core: &dyn CoreView, cpu: usize, act: &mut Actions) {
        let mut env = balance_view!(self, core);
        self.lb
            .active_load_balance_cpu_stop(&mut env, cpu, core.now_ns(), &mut self.lb_out);
        self.drain_lb(act);
    }

    fn report(&self) -> serde_json::Value {
        let mut v = schedstat_json(&self.lb, &self.domains);
        v["placements"] = placements_json(&self.placements);
        v["newidle_entry"] = newidle_entry_json(&self.lb.newidle_entry);
        v
    }

    fn task_report(&self, p: TaskId) -> serde_json::Value {
        let s = self.lb.task_stats.get(&p).copied().unwrap_or_default();
        serde_json::json!({
            "nr_failed_migrations_affine": s.nr_failed_migrations_affine,
            "nr_failed_migrations_running": s.nr_failed_migrations_running,
            "nr_failed_migrations_hot": s.nr_failed_migrations_hot,
            "nr_forced_migrations": s.nr_forced_migrations,
            "nr_wakeups_affine_attempts": s.nr_wakeups_affine_attempts,
            "nr_wakeups_affine": s.nr_wakeups_affine,
        })
    }

    fn schedstat_text(&self, rq_stats: &[RqSchedstat], jiffies: u64) -> Option<String> {
        Some(write_schedstat(&self.lb, rq_stats, jiffies))
    }
}

/// The load balancer's schedstat counters as the contract's `schedstat` object: `totals`,
/// `by_level` (domain level name) and `by_idle_type` (`idle` / `not_idle` / `newly_idle`),
/// summed over CPUs.
///
/// Why summed into fixed arrays first: the sums used to be accumulated key by key in
/// `serde_json` maps (a string allocation and a B-tree search per counter, and a clone of
/// each idle type's map per domain) — 213 M instructions at the end of a 768-CPU run.
/// The counters are added as integers in the same way (`+` on `u64`), then each map is
/// built once; serde_json's maps are ordered by key, so the document is the same bytes.
/// With no domains every map is empty, as before.
fn schedstat_json(lb: &LoadBalancer, domains: &SchedDomains) -> serde_json::Value {
    use schedstat_sums::*;
    use serde_json::{Map, Value, json};
    let mut totals: Sums = Default::default();
    let mut by_level: std::collections::BTreeMap<&str, Sums> = Default::default();
    let mut by_idle = [[0u64; 11]; 3];
    for (i, d) in domains.domains.iter().enumerate() {
        let s = &lb.domain_state(DomainId(i)).stats;
        let level = by_level.entry(d.name).or_default();
        for (j, (_, idle)) in IDLE_NAMES.into_iter().enumerate() {
            let v = lb_values(s, crate::sched::balance::idle_index(idle));
            add(&mut totals.0, &v);
            add(&mut level.0, &v);
            add(&mut by_idle[j], &v);
        }
        let v = other_values(s);
        add(&mut totals.1, &v);
        add(&mut level.1, &v);
    }
    if domains.domains.is_empty() {
        let empty = || Value::Object(Map::new());
        return json!({
            "totals": empty(),
            "by_level": empty(),
            "by_idle_type": { "idle": empty(), "not_idle": empty(), "newly_idle": empty() },
        });
    }
    let costs = newidle_costs(lb, domains);
    let by_level: Map<String, Value> = (by_level.iter())
        .map(|(name, (lb, other))| {
            let mut level = object(lb, Some(other));
            if let (Some(m), Some(c)) = (level.as_object_mut(), costs.get(name)) {
                c.insert_into(m);
            }
            (name.to_string(), level)
        })
        .collect();
    let by_idle: Map<String, Value> = (IDLE_NAMES.iter().zip(&by_idle))
        .map(|((name, _), sums)| (name.to_string(), object(sums, None)))
        .collect();
    json!({ "totals": object(&totals.0, Some(&totals.1)), "by_level": by_level, "by_idle_type": by_idle })
}

/// `sd->max_newidle_lb_cost` over the CPUs' copies of one domain level at the end of the run:
/// the newly-idle cost gate each CPU applies there (`sched_balance_newidle()` walks a level only
/// while `avg_idle >= curr_cost + max_newidle_lb_cost`), as the kernel's
/// `/sys/kernel/debug/sched/domains/cpuN/domainM/max_newidle_lb_cost` shows it per CPU.
#[derive(Default)]
struct NewidleCosts {
    cpus: u64,
    sum_ns: u64,
    max_ns: u64,
    /// CPUs whose cost is 0: a level never walked since the run started (or, under
    /// NEWIDLE_FAIL_BUMP, never walked with a pull: `3/2 × 0` stays 0).
    zero: u64,
}

impl NewidleCosts {
    fn add(&mut self, cost_ns: u64) {
        self.cpus += 1;
        self.sum_ns = self.sum_ns.saturating_add(cost_ns);
        self.max_ns = self.max_ns.max(cost_ns);
        self.zero += u64::from(cost_ns == 0);
    }

    fn insert_into(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let mean = self.sum_ns.checked_div(self.cpus).unwrap_or(0);
        m.insert("max_newidle_lb_cost_ns_mean".into(), mean.into());
        m.insert("max_newidle_lb_cost_ns_max".into(), self.max_ns.into());
        m.insert("max_newidle_lb_cost_zero_cpus".into(), self.zero.into());
    }
}

/// [`NewidleCosts`] by domain level name.
fn newidle_costs<'a>(
    lb: &LoadBalancer,
    domains: &'a SchedDomains,
) -> std::collections::BTreeMap<&'a str, NewidleCosts> {
    let mut by_level: std::collections::BTreeMap<&str, NewidleCosts> = Default::default();
    for (i, d) in domains.domains.iter().enumerate() {
        let cost = lb.domain_state(DomainId(i)).max_newidle_lb_cost;
        by_level.entry(d.name).or_default().add(cost);
    }
    by_level
}

/// The CFS placements of the run by exit (`select_idle_sibling()`'s steps by their names,
/// `find_idlest`, `pinned`, `other`) and the scan steps they charged.
fn placements_json(p: &PlacementStats) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for step in SisStep::ALL {
        // The step's name as everywhere else in the results: serde's snake_case.
        let name = serde_json::to_value(step).expect("a unit variant serializes");
        let name = name
            .as_str()
            .expect("a unit variant serializes as a string");
        m.insert(format!("sis_{name}"), p.sis[step.index()].into());
    }
    m.insert("find_idlest".into(), p.find_idlest.into());
    m.insert("pinned".into(), p.pinned.into());
    m.insert("other".into(), p.other.into());
    m.insert("scan_steps".into(), p.scan_steps.into());
    serde_json::Value::Object(m)
}

/// Where the run's `sched_balance_newidle()` calls went ([`NewidleEntryStats`]).
fn newidle_entry_json(n: &NewidleEntryStats) -> serde_json::Value {
    serde_json::json!({
        "ttwu_pending": n.ttwu_pending,
        "inactive": n.inactive,
        "rd_not_overloaded": n.rd_not_overloaded,
        "avg_idle_gate": n.avg_idle_gate,
        "walked": n.walked,
    })
}

/// What `schedstat_json` sums and names (module level so that it reads short).
mod schedstat_sums {
    use super::*;

    /// The idle types of schedstat's `by_idle_type`, by name.
    pub(super) const IDLE_NAMES: [(&str, IdleType); 3] = [
        ("idle", IdleType::Idle),
        ("not_idle", IdleType::NotIdle),
        ("newly_idle", IdleType::NewlyIdle),
    ];
    /// The names of the `lb_*` counters, in `lb_values()`'s order.
    pub(super) const LB_NAMES: [&str; 11] = [
        "lb_count",
        "lb_balanced",
        "lb_failed",
        "lb_imbalance_load",
        "lb_imbalance_util",
        "lb_imbalance_task",
        "lb_imbalance_misfit",
        "lb_gained",
        "lb_hot_gained",
        "lb_nobusyq",
        "lb_nobusyg",
    ];
    /// The names of the other domain counters, in `other_values()`'s order.
    pub(super) const OTHER_NAMES: [&str; 12] = [
        "alb_count",
        "alb_failed",
        "alb_pushed",
        "sbe_count",
        "sbe_balanced",
        "sbe_pushed",
        "sbf_count",
        "sbf_balanced",
        "sbf_pushed",
        "ttwu_wake_remote",
        "ttwu_move_affine",
        "ttwu_move_balance",
    ];
    /// One domain's `lb_*` counters of one idle type.
    pub(super) fn lb_values(s: &SdSchedstat, idle: usize) -> [u64; 11] {
        [
            s.lb_count[idle],
            s.lb_balanced[idle],
            s.lb_failed[idle],
            s.lb_imbalance_load[idle],
            s.lb_imbalance_util[idle],
            s.lb_imbalance_task[idle],
            s.lb_imbalance_misfit[idle],
            s.lb_gained[idle],
            s.lb_hot_gained[idle],
            s.lb_nobusyq[idle],
            s.lb_nobusyg[idle],
        ]
    }
    /// One domain's counters that have no idle type.
    pub(super) fn other_values(s: &SdSchedstat) -> [u64; 12] {
        [
            s.alb_count,
            s.alb_failed,
            s.alb_pushed,
            s.sbe_count,
            s.sbe_balanced,
            s.sbe_pushed,
            s.sbf_count,
            s.sbf_balanced,
            s.sbf_pushed,
            s.ttwu_wake_remote,
            s.ttwu_move_affine,
            s.ttwu_move_balance,
        ]
    }
    /// `lb_*` summed over idle types, then the other counters.
    pub(super) type Sums = ([u64; 11], [u64; 12]);
    /// Add `v` to `acc` element by element.
    pub(super) fn add<const N: usize>(acc: &mut [u64; N], v: &[u64; N]) {
        for (a, v) in acc.iter_mut().zip(v) {
            *a += v;
        }
    }
    /// One schedstat map: the `lb_*` counters, then the other counters when given.
    pub(super) fn object(lb: &[u64; 11], other: Option<&[u64; 12]>) -> serde_json::Value {
        use serde_json::{Map, Value, json};
        let mut map = Map::new();
        for (k, v) in LB_NAMES.iter().zip(lb) {
            map.insert((*k).to_string(), json!(v));
        }
        for (k, v) in other.into_iter().flat_map(|o| OTHER_NAMES.iter().zip(o)) {
            map.insert((*k).to_string(), json!(v));
        }
        Value::Object(map)
    }
}
