//! The engine's CPUs: the core.c half of `struct rq` (current task, wake list, idle state,
//! tick, kernel-work horizon), their counters, and the SMT speed table.

use super::EngineConfig;
use crate::cost::CostModel;
use crate::task::TaskId;
use crate::topology::Machine;

/// One CPU as the engine sees it (the core.c half of `struct rq`).
#[derive(Debug, Clone)]
pub struct CpuCore {
    pub cpu: usize,
    /// `rq->curr` (None = the idle task).
    pub curr: Option<TaskId>,
    /// Wakeups queued on this CPU's wake list, waiting for its IPI (`rq->ttwu_pending`).
    pub wake_list: Vec<TaskId>,
    /// TIF_NEED_RESCHED.
    pub need_resched: bool,
    /// TIF_NEED_RESCHED_LAZY (preempt=lazy).
    pub need_resched_lazy: bool,
    /// `rq->idle_stamp`: when the CPU went idle (valid while idle; cleared by the first
    /// wakeup that enqueues here, for `avg_idle`).
    pub idle_stamp_ns: u64,
    /// When the CPU last entered the idle loop (kept while idle; for the watchdog).
    pub idle_since_ns: u64,
    /// `rq->avg_idle`.
    pub avg_idle_ns: u64,
    /// Index into the cost model's idle states while idle.
    pub idle_state: usize,
    /// The state `idle_state` polls (`CPUIDLE_FLAG_POLLING`): a wakeup needs no IPI.
    pub idle_polling: bool,
    /// The state `idle_state` waits in MWAIT with TIF_POLLING_NRFLAG set
    /// ([`crate::cpuidle::IdleState::mwait`]): a wakeup needs no IPI but pays the exit latency.
    pub idle_mwait: bool,
    /// `tick_nohz_tick_stopped()`: the tick was stopped in this idle period.
    pub tick_stopped: bool,
    /// The cpuidle governor's per-CPU state.
    pub cpuidle: crate::cpuidle::CpuIdleDev,
    /// When the current idle-loop iteration entered its state; `None` once reflected.
    pub(crate) idle_iter_start_ns: Option<u64>,
    /// Kernel-work horizon: tasks make no progress on this CPU before it.
    pub busy_until_ns: u64,
    /// When the runqueue lock is next free (for contention of remote activations).
    pub rq_lock_free_at_ns: u64,
    /// The CPU has no task but has not finished switching to the idle task: the scheduler
    /// work of the `__schedule()` that found nothing to run (dequeue, pick, newly-idle
    /// balancing) ends at [`CpuCore::idle_task_from_ns`]. Until then `rq->curr` is still the
    /// task that left, so `idle_cpu()` is false. Cleared by `Event::IdleTaskRunning`.
    pub(crate) switching_to_idle: bool,
    /// When the last switch to the idle task ended (or ends).
    pub(crate) idle_task_from_ns: u64,
    /// Current task speed, 1024 = full capacity with idle siblings.
    pub speed: u64,
    /// Cached [`smt_speed_base`] of this CPU for the current busy state of its SMT siblings
    /// (the CPU itself counted busy): recomputed when a sibling goes busy or idle
    /// (`update_sibling_speeds`), instead of walking the SMT mask on every switch.
    pub(crate) smt_speed_base: u64,
    pub(crate) ipi_pending: bool,
    pub(crate) resched_ipi_pending: bool,
    pub(crate) done_gen: u32,
    /// When the current task's next program step is due.
    pub(crate) continue_at_ns: u64,
    /// Time of the live `Continue` event of generation `done_gen`, if one is queued. A
    /// later re-plan does not push a new event while this one fires no later: the event
    /// re-queues itself when it pops early (keeps the heap free of stale entries).
    pub(crate) continue_queued_at: Option<u64>,
    pub(crate) tick_gen: u32,
    pub(crate) hrtick_gen: u32,
    pub(crate) tick_armed: bool,
    /// Time of the live queued `Tick` event, if one is queued.
    pub(crate) tick_queued_at: Option<u64>,
    /// The policy's own timer pinned to this CPU (RT period timer, dl_server timer): its
    /// armed expiry; and the live queued event (time, generation). As for `Continue`, a
    /// later expiry or a cancel pushes nothing: the queued event re-checks when it pops, so
    /// a server started and stopped thousands of times a second leaves no stale events.
    pub(crate) policy_timer_at: Option<u64>,
    pub(crate) policy_timer_queued: Option<(u64, u32)>,
    pub(crate) policy_timer_gen: u32,
    pub(crate) busy_since_ns: u64,
    /// `distribute_cpu_mask_prev`: the last CPU `cpumask_any_and_distribute()` returned on
    /// this CPU (starts at 0, so the first pick skips CPU 0, as the kernel's does).
    pub(crate) distribute_cpu_mask_prev: usize,
    pub stats: CpuStats,
    /// When the oldest entry of `wake_list` became visible to other CPUs: the waker writes
    /// `rq->ttwu_pending` only after its `select_task_rq()` work, and the store reaches
    /// another CPU's cache one line transfer later ([`CpuCore::ttwu_pending_seen_at`]).
    pub wake_list_visible_at_ns: u64,
    /// The CPU whose waker queued the oldest entry of `wake_list`: its own later reads see
    /// its store at once (program order), whatever `wake_list_visible_at_ns` says.
    pub wake_list_published_by: usize,
}

impl CpuCore {
    /// `rq->ttwu_pending`, as this CPU itself sees it.
    pub fn ttwu_pending(&self) -> bool {
        !self.wake_list.is_empty()
    }

    /// `rq->ttwu_pending` as CPU `reader` reads it at `now`: a wake-list entry whose waker on
    /// another CPU has not yet published it (module docs of `engine::wakeup`, "The placement
    /// race") is not seen, so a second waker may still find this CPU idle and pick it too.
    pub fn ttwu_pending_seen_at(&self, now: u64, reader: usize) -> bool {
        self.ttwu_pending()
            && (reader == self.wake_list_published_by || now >= self.wake_list_visible_at_ns)
    }

    /// True when the CPU sits in its idle state `idle_state` at `now`: no task current and
    /// no kernel work left before the idle loop (the switch to idle, newly-idle balancing,
    /// an interrupt handler), which the model charges as `busy_until_ns`.
    pub fn in_idle_state(&self, now: u64) -> bool {
        self.curr.is_none() && self.busy_until_ns <= now
    }
}

/// The per-CPU counters the results report as they are (`runs[].cpus[]`: the results'
/// `CpuResult` flattens them beside the CPU's number), one home for their names and meaning.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct CpuCounters {
    /// Time with a task current (`rq->curr != idle`).
    pub busy_ns: u64,
    /// Kernel work charged to this CPU (scans, switches, IPIs, balancing).
    pub kernel_work_ns: u64,
    /// `rq->nr_switches`.
    pub nr_switches: u64,
    /// Interrupts (IPIs) taken. Waking an idle CPU whose idle task polls (a polling or an
    /// MWAIT idle state, not while it is still balancing) sends none.
    pub ipis_received: u64,
    /// IPIs sent, under the same rule.
    pub ipis_sent: u64,
    /// Exits from a non-polling idle state (MWAIT states included, woken with or without an
    /// IPI).
    pub idle_exits: u64,
    /// `ttwu_count`, `ttwu_local` of /proc/schedstat's cpu line.
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    /// Wakeups this CPU queued on other CPUs' wake lists / activated under a remote lock.
    pub ttwu_queued: u64,
    pub ttwu_remote_locked: u64,
    pub remote_lock_wait_ns: u64,
    /// Wakeups of a task still descheduling on its CPU (`p->on_cpu`): queued to that CPU's
    /// wake list (TTWU_QUEUE_ON_CPU), or waited out by spinning (time in `on_cpu_spin_ns`).
    pub ttwu_on_cpu_queued: u64,
    pub on_cpu_spins: u64,
    pub on_cpu_spin_ns: u64,
    /// Delayed-dequeue wakees this CPU queued to their CPU's wake list (TTWU_QUEUE_DELAYED),
    /// and those it completed there and sent on to another CPU.
    pub ttwu_delayed_queued: u64,
    pub ttwu_delayed_forwarded: u64,
    /// Blocks on this CPU whose dequeue was delayed (DELAY_DEQUEUE: the task stays queued,
    /// `sched_delayed`), and wakeups this CPU made of such a still-queued task
    /// (`ttwu_runnable()` → `requeue_delayed_entity()`).
    /// Omitted from the results when zero.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub delayed_dequeues: u64,
    #[serde(skip_serializing_if = "is_zero", default)]
    pub delayed_requeues: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Per-CPU counters: the reported ones, then those only `/proc/schedstat`, the idle
/// statistics and the checks read.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CpuStats {
    #[serde(flatten)]
    pub counters: CpuCounters,
    /// `schedule()` calls, of which left the CPU idle (`sched_count`, `sched_goidle`).
    pub sched_count: u64,
    pub sched_goidle: u64,
    /// Idle-loop iterations that stopped the tick (`tick_nohz_idle_stop_tick()` taking
    /// effect; each puts the CPU in the nohz idle mask) and that kept it.
    pub idle_tick_stops: u64,
    pub idle_tick_retains: u64,
    /// Ticks taken by an idle CPU that kept its tick (each runs `sched_balance_trigger()`).
    pub idle_ticks: u64,
    /// `sched_yield()` calls (`yld_count`).
    pub yld_count: u64,
    /// Time tasks waited runnable on this CPU before running (`run_delay`), and the number
    /// of timeslices run (`pcount`).
    pub run_delay_ns: u64,
    pub pcount: u64,
}

/// [`smt_speed_base`] for every CPU and every busy count from 1 to the widest SMT mask:
/// the table and its stride (see `Engine::smt_speed_table`).
pub(super) fn smt_speed_table(machine: &Machine, cost: &CostModel) -> (Vec<u64>, usize) {
    let nr_cpus = machine.nr_cpus();
    let stride = (0..nr_cpus)
        .map(|cpu| machine.smt_mask(cpu).weight())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut table = Vec::with_capacity(nr_cpus * stride);
    for cpu in 0..nr_cpus {
        table.extend((1..=stride).map(|busy| smt_speed_base(machine, cost, cpu, busy)));
    }
    (table, stride)
}

/// A task's speed on `cpu` in 1/1024 before memory effects, with `busy` busy SMT
/// siblings (itself included): capacity × SMT contention × the machine's `speed_pct` ×
/// the share left by non-task work.
pub(crate) fn smt_speed_base(machine: &Machine, cost: &CostModel, cpu: usize, busy: usize) -> u64 {
    machine.cpus[cpu].capacity as u64 * cost.smt_speed(busy) / 1024 * u64::from(cost.speed_pct)
        / 100
        * u64::from(100 - cost.nontask_pct_of(cpu))
        / 100
}

/// Every CPU at the start of a run: idle (only itself counts as a busy SMT sibling).
pub(super) fn new_cpus(machine: &Machine, cfg: &EngineConfig, cost: &CostModel) -> Vec<CpuCore> {
    (0..machine.nr_cpus())
        .map(|cpu| {
            let mut c = new_cpu(cpu, cfg, cost);
            c.smt_speed_base = smt_speed_base(machine, cost, cpu, 1);
            c
        })
        .collect()
}

/// Per CPU: its SMT siblings, itself included (see `Engine::smt_siblings`).
pub(super) fn smt_siblings(machine: &Machine) -> Vec<Box<[u32]>> {
    (0..machine.nr_cpus())
        .map(|cpu| {
            machine
                .smt_mask(cpu)
                .iter()
                .map(crate::units::cpu_u32)
                .collect()
        })
        .collect()
}

/// CPU `cpu` at the start of a run: idle, no tick, no timers.
fn new_cpu(cpu: usize, cfg: &EngineConfig, cost: &CostModel) -> CpuCore {
    CpuCore {
        cpu,
        curr: None,
        wake_list: Vec::with_capacity(16),
        wake_list_visible_at_ns: 0,
        wake_list_published_by: cpu,
        need_resched: false,
        need_resched_lazy: false,
        idle_stamp_ns: 0,
        idle_since_ns: 0,
        avg_idle_ns: 2 * cfg.migration_cost_ns,
        idle_state: 0,
        idle_polling: false,
        idle_mwait: false,
        tick_stopped: false,
        cpuidle: crate::cpuidle::CpuIdleDev::new(cost.cpuidle_governor, cost.haltpoll),
        idle_iter_start_ns: None,
        busy_until_ns: 0,
        rq_lock_free_at_ns: 0,
        switching_to_idle: false,
        idle_task_from_ns: 0,
        speed: 1024,
        smt_speed_base: 0,
        ipi_pending: false,
        resched_ipi_pending: false,
        done_gen: 0,
        continue_at_ns: 0,
        continue_queued_at: None,
        tick_gen: 0,
        hrtick_gen: 0,
        tick_armed: false,
        tick_queued_at: None,
        policy_timer_at: None,
        policy_timer_queued: None,
        policy_timer_gen: 0,
        busy_since_ns: 0,
        distribute_cpu_mask_prev: 0,
        stats: CpuStats::default(),
    }
}
