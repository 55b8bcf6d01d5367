//! The discrete-event engine: virtual time, the event queue, CPUs, tasks and their programs.
//!
//! The engine plays the part of the kernel's core (`kernel/sched/core.c`) and of the
//! hardware: it keeps each CPU's state (running a task, idle in some idle state, or busy with
//! kernel work), interprets task programs, and calls the scheduling policy
//! ([`crate::policy::SchedPolicy`]) only at the kernel's scheduling points — wakeup
//! (`try_to_wake_up`), block and preemption (`__schedule`), the tick (`sched_tick`), fork
//! (`wake_up_new_task`) and exit.
//!
//! Time is virtual, in nanoseconds (`u64`). Progress is lazy, like the kernel's
//! `update_curr()`: a running task's remaining work is advanced only when something happens
//! on its CPU, at its current speed (capacity × SMT contention), and its completion event is
//! re-planned when the speed changes. Kernel work (a context switch, a wakeup scan, an IPI
//! handler, a balance pass) is charged by pushing the CPU's `busy_until_ns` horizon: no task
//! progresses on that CPU until it passes. Superseded events are not deleted; they carry a
//! generation number and are dropped when popped.

// Lossy integer casts are refused here: convert with `try_from` or a named helper of
// `crate::units` that states why the value fits (docs/architecture.md, "Conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

/// Call a policy method with a fresh read-only view of the engine.
macro_rules! policy {
    ($self:ident . $method:ident ( $($arg:expr),* $(,)? )) => {{
        let view = $crate::engine::view::EngineView {
            now_ns: $self.clock.now(),
            machine: &$self.machine,
            cost: &$self.cost,
            tasks: &$self.tasks,
            cpus: &$self.cpus,
        };
        $self.policy.$method(&view, $($arg),*)
    }};
}

pub mod accounting;
pub mod affinity;
mod clock;
pub mod control;
mod cpus;
mod interp;
mod interrupts;
pub mod invariants;
pub mod mempolicy;
pub mod noise;
pub mod numa;
mod numa_hooks;
pub mod numa_series;
pub mod observer;
pub mod pingpong;
mod plan;
mod progress;
pub mod queue;
mod schedule;
mod spinlock;
mod tasks;
mod view;
mod wakeup;
pub mod watchdog;

use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::hist::Histogram;
use crate::kconfig::sysctl::PreemptModel;
use crate::policy::{Actions, SchedPolicy};
use crate::sched::types::MigrationReason;
use crate::task::{Op, TaskId, TaskSpec};
use crate::topology::Machine;
use observer::{IntervalHook, Observer};
use queue::EventQueue;

pub(crate) use cpus::smt_speed_base;
pub use cpus::{CpuCore, CpuCounters, CpuStats};
use cpus::{new_cpus, smt_siblings, smt_speed_table};
use interp::{Barrier, Semaphore, SpinLockState};
pub use plan::{PlanError, WorkloadPlan, validate_plan};
use plan::{flatten_programs, nr_timers};
use tasks::new_tasks;
pub use tasks::{Task, TaskCounters, TaskStats};

/// Engine parameters that come from the kernel configuration and the run settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub hz: u32,
    /// The preemption model. Under `lazy` a fair-class wakeup preemption only sets
    /// TIF_NEED_RESCHED_LAZY, acted on at the next tick; under the others a remote CPU is sent
    /// a reschedule IPI and the task is preempted on return from it (user code is always
    /// preemptible there, so none/voluntary/full behave alike for the user-mode work modelled).
    pub preempt: PreemptModel,
    /// `sched_feat(TTWU_QUEUE)`.
    pub ttwu_queue: bool,
    /// `TTWU_QUEUE_DEFAULT`: queue same-LLC wakeups to busy CPUs too.
    pub ttwu_queue_default: bool,
    /// `TTWU_QUEUE_L2C` (2023 RFC): the wake-list test asks "shares an L2 (cluster)?" where
    /// mainline asks "shares the LLC?".
    pub ttwu_queue_l2c: bool,
    /// `TTWU_QUEUE_ON_CPU`: a wakeup of a task still switching out (`p->on_cpu`) may be
    /// queued to its CPU's wake list instead of spinning until the switch is over (v5.8+).
    pub ttwu_queue_on_cpu: bool,
    /// `TTWU_QUEUE_DELAYED` (2025 proposal): a delayed-dequeue task is woken through its
    /// CPU's wake list, where the dequeue completes and its CPU is selected again.
    pub ttwu_queue_delayed: bool,
    /// Which same-LLC wakeups `ttwu_queue_cond()` queues, by kernel release.
    pub ttwu_queue_rule: TtwuQueueRule,
    /// A fork placement is a `set_task_cpu()` (counted in `se.nr_migrations` and perf's
    /// `cpu-migrations`): before v4.7, whose b7fa30c9cc48 ("sched/fair: Fix
    /// post_init_entity_util_avg() serialization") made `wake_up_new_task()` place the child
    /// with `__set_task_cpu()`, which counts nothing.
    pub fork_counts_as_migration: bool,
    /// Pipe writers wait exclusively (`Op::UpPage`, `Op::WakeNext`): from v5.5, whose
    /// 0ddad21d3e99 ("pipe: use exclusive waits when reading or writing") and the wakeup
    /// fixes after it gave `pipe_read()` its `was_full` wakeup of one writer and
    /// `pipe_write()` its `wake_next_writer`. Before, a read that freed a page woke every
    /// waiter on the pipe's one wait queue, and a read that freed none woke nobody.
    pub pipe_exclusive_waits: bool,
    /// With `pipe_exclusive_waits`: a read that began with the pipe full wakes a writer only
    /// if it freed a slot (v6.14, aaec5a95d596 "pipe_read: don't wake up the writer if the
    /// pipe is still full"; switch PIPE_WAKE_ON_FREE). Off: whether or not it freed one.
    pub pipe_wake_on_free: bool,
    /// hrtimer slack of normal tasks (`current->timer_slack_ns`, 50 µs); RT tasks get none.
    pub timer_slack_ns: u64,
    /// `CONFIG_IRQ_TIME_ACCOUNTING`: interrupt work (`Engine::charge_irq`) is reported to
    /// the policy, which keeps it out of the runqueue's task clock.
    pub irq_time_accounting: bool,
    /// `sysctl_sched_migration_cost`: caps `avg_idle` at twice it.
    pub migration_cost_ns: u64,
    /// Simulated-time cap.
    pub duration_ns: u64,
    /// Counters reset at this time (statistics cover `[warmup, end]`).
    pub warmup_ns: u64,
    pub seed: u64,
    /// Check invariants after every event (slow; on in tests).
    pub check_invariants: bool,
    /// A scheduling-watchdog finding ([`watchdog`]) panics instead of being recorded. On
    /// by default in builds with debug assertions (the test suite), so every test and soak
    /// run checks it; a test of the watchdog itself turns it off.
    pub watchdog_panics: bool,
    /// Window of the migration ping-pong detector (`[run] pingpong_window_ms`).
    pub pingpong_window_ns: u64,
    /// Run-to-run variation sources ([`noise`]); off by default here, on by default in
    /// scenarios (`[run] noise_*`).
    pub noise: noise::NoiseParams,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            hz: 250,
            preempt: PreemptModel::Voluntary,
            ttwu_queue: true,
            ttwu_queue_default: false,
            ttwu_queue_l2c: false,
            ttwu_queue_on_cpu: true,
            ttwu_queue_delayed: false,
            ttwu_queue_rule: TtwuQueueRule::IdleTarget,
            fork_counts_as_migration: false,
            pipe_exclusive_waits: true,
            pipe_wake_on_free: true,
            timer_slack_ns: 50_000,
            irq_time_accounting: false,
            migration_cost_ns: 500_000,
            duration_ns: 10_000_000_000,
            warmup_ns: 0,
            seed: 1,
            check_invariants: false,
            watchdog_panics: cfg!(debug_assertions),
            pingpong_window_ns: pingpong::DEFAULT_WINDOW_NS,
            noise: noise::NoiseParams::OFF,
        }
    }
}

/// `ttwu_queue_cond()`'s rule for wakeups inside the waker's LLC, as it changed over
/// releases (wakeups to another LLC are queued by every rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtwuQueueRule {
    /// Before v5.8: only cross-LLC wakeups are queued (`rq->wake_list`).
    CrossLlcOnly,
    /// v5.8 – v5.19 (c6e7bd7afaeb "Optimize ttwu() spinning on p->on_cpu"): also a wakee
    /// still descheduling (`WF_ON_CPU`) when its CPU runs at most one task.
    OnCpuNrRunningLe1,
    /// v6.0+ (Tianchen Ding's "Queue task on wakelist in the same llc if the wakee cpu is
    /// idle"): any remote CPU with nothing running (`nr_running == 0`), never this CPU; with
    /// TTWU_QUEUE_DEFAULT every remote CPU.
    IdleTarget,
}

impl TtwuQueueRule {
    /// The rule of a kernel release.
    pub fn for_version(v: crate::kconfig::version::KernelVersion) -> Self {
        use crate::kconfig::version::KernelVersion as V;
        if v < V::new(5, 8) {
            TtwuQueueRule::CrossLlcOnly
        } else if v < V::new(6, 0) {
            TtwuQueueRule::OnCpuNrRunningLe1
        } else {
            TtwuQueueRule::IdleTarget
        }
    }
}

/// A snapshot taken by `Op::Snapshot`.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub time_ns: u64,
    /// Every `Op::CountOp` of the taking task's workload since the start (never reset by
    /// warm-up); with one workload, every `Op::CountOp` of the run.
    pub ops_total: u64,
    /// The workload whose task took the snapshot (0 when one workload runs; see
    /// [`Engine::set_task_workloads`]).
    pub workload: usize,
    /// With `full`: the metric histograms at that time (same order as `metrics()`).
    pub metrics: Vec<Histogram>,
    /// With `full`: each task's (`wait_sum_ns`, `wait_count`).
    pub task_waits: Vec<(u64, u64)>,
}

/// Events of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// A task is forked.
    Fork { task: TaskId },
    /// `cpu`'s current task reaches its next program step (a `Run` completes, or kernel work
    /// it waited behind is over).
    Continue { cpu: u32, generation: u32 },
    /// Scheduler tick on a busy CPU.
    Tick { cpu: u32, generation: u32 },
    /// High-resolution tick at the current task's slice end (HRTICK).
    HrTick { cpu: u32, generation: u32 },
    /// hrtimer expiry of a sleeping task, on the CPU that armed it.
    Timer {
        task: TaskId,
        cpu: u32,
        generation: u32,
    },
    /// A sleeping task's timer fired on an idle CPU that had to leave its idle state first.
    TimerWake {
        task: TaskId,
        cpu: u32,
        generation: u32,
    },
    /// `cpu` finished the `__schedule()` that found nothing to run: the idle task is now
    /// `rq->curr` (`idle_cpu()` becomes true) and `do_idle()`'s idle-core hint runs.
    IdleTaskRunning { cpu: u32 },
    /// Call-function IPI: process the wake list.
    WakeListIpi { cpu: u32, how: IpiWake },
    /// Reschedule IPI (or a polling idle CPU noticing need_resched).
    ReschedIpi { cpu: u32, how: IpiWake },
    /// NOHZ idle-balance kick.
    KickIpi { cpu: u32, how: IpiWake },
    /// The stopper of `cpu` runs active balancing.
    Stopper { cpu: u32, how: IpiWake },
    /// A policy hrtimer pinned to `cpu` expires (`SchedPolicy::timer_expired`).
    PolicyTimer { cpu: u32, generation: u32 },
    /// End of warm-up: reset counters.
    WarmupEnd,
    /// End of the run (duration cap).
    End,
}

/// How a cross-CPU request reached its CPU, decided when it was sent (`send_ipi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IpiWake {
    /// The idle task was polling (`CPUIDLE_FLAG_POLLING`): need_resched set, no interrupt,
    /// no idle exit.
    Polling,
    /// The idle task sat in MWAIT with TIF_POLLING_NRFLAG set: no interrupt, but the CPU
    /// left its idle state.
    Monitor,
    /// An interrupt was sent and is handled; `idle`: it found the CPU in an idle state.
    Interrupt { idle: bool },
}

/// Counters of a run (perf-stat view and migrations).
#[derive(Debug, Clone, Default)]
pub struct RunCounters {
    pub context_switches: u64,
    pub cpu_migrations: u64,
    pub migrations_by_reason: [u64; MigrationReason::COUNT],
    pub wakeups: u64,
}

/// The engine: one simulation run.
pub struct Engine {
    /// Virtual time and the event queue ([`clock::Clock`]).
    pub(crate) clock: clock::Clock,
    pub(crate) machine: Machine,
    pub(crate) cost: CostModel,
    pub(crate) cfg: EngineConfig,
    pub(crate) tasks: Vec<Task>,
    pub(crate) cpus: Vec<CpuCore>,
    /// Per CPU: its SMT siblings, itself included (the SMT mask as a list, walked on each
    /// busy/idle transition).
    pub(crate) smt_siblings: Vec<Box<[u32]>>,
    /// [`smt_speed_base`] of every CPU for every count of busy SMT siblings (itself
    /// included), `smt_speed_table[cpu * smt_speed_stride + busy - 1]`: the machine and
    /// the cost model do not change during a run, and the switch path asked for these
    /// values on every busy/idle transition of a sibling (two divisions and three lookups
    /// each; issue 14).
    pub(crate) smt_speed_table: Vec<u64>,
    pub(crate) smt_speed_stride: usize,
    /// Machine noise streams ([`noise`]).
    pub(crate) noise: noise::Noise,
    /// Every program's ops, one after another, each program followed by an `Exit` (a
    /// thread function that returns exits); a task's ops start at its `op_base`.
    pub(crate) ops: Vec<Op>,
    pub(crate) sems: Vec<Semaphore>,
    pub(crate) barriers: Vec<Barrier>,
    pub(crate) spinlocks: Vec<SpinLockState>,
    /// The task hrtimers armed per CPU (their earliest expiry, for the idle governor).
    pub(crate) task_timers: queue::CpuTimers,
    pub(crate) policy: Box<dyn SchedPolicy>,
    pub(crate) act: Actions,
    /// The run's counters, histograms, snapshots and logs ([`accounting::Accounting`]).
    pub(crate) acct: accounting::Accounting,
    /// Periodic timers (`Op::TimerStart`/`Op::TimerWait`): next expiry, once started.
    pub(crate) timers: Vec<Option<u64>>,
    /// The plan's CPU-mask table (`Op::SetAffinity`).
    pub(crate) cpumasks: Vec<CpuMask>,
    /// Set by `Op::Stop`.
    pub(crate) stop_requested: bool,
    /// Stop requests and progress from outside ([`control`]), polled every few events.
    pub(crate) control: Option<control::RunControl>,
    pub(crate) live_tasks: usize,
    pub(crate) stats_start_ns: u64,
    pub(crate) end_ns: Option<u64>,
    pub(crate) invariant_violations: invariants::ViolationLog,
    /// The scheduling watchdog's findings ([`watchdog`]), kept in every run.
    pub(crate) warnings: invariants::ViolationLog,
    /// When the watchdog runs next.
    pub(crate) watchdog_next_ns: u64,
    /// The watchdog's bound ([`watchdog::stall_bound_ns`]), from the policy's domains.
    pub(crate) watchdog_bound_ns: u64,
    /// Trace / `--explain` observer; `None` costs one branch per scheduling point.
    pub(crate) observer: Option<Box<dyn Observer>>,
    /// A benchmark's interval output, called at each snapshot (see [`IntervalHook`]).
    pub(crate) interval_hook: Option<Box<dyn IntervalHook>>,
    /// Reused buffer: CPUs whose policy timer changed during the last event.
    pub(crate) timer_changes: Vec<usize>,
    /// Dynamic memory, the engine's side of NUMA balancing ([`numa`]; the scheduler state is
    /// the policy's); `None` when no task has a working set.
    pub(crate) numa: Option<Box<numa::EngineNuma>>,
    /// NUMA pages per node over time ([`numa_series`]); `None` unless the run qualifies.
    pub(crate) numa_series: Option<Box<numa_series::NumaPagesSeries>>,
    /// When the series takes its next sample (`u64::MAX`: never).
    pub(crate) numa_series_next_ns: u64,
    /// Wake-list entries not yet visible to other CPUs (the placement race,
    /// [`wakeup`]'s module docs): (visible at, CPU). When one becomes visible the policy is
    /// told the CPU changed, so cached idle counts follow the time-dependent idle test.
    pub(crate) unpublished_wake_lists: Vec<(u64, usize)>,
    /// The earliest time of `unpublished_wake_lists` (`u64::MAX`: none).
    pub(crate) wake_list_publish_next_ns: u64,
}

/// One migration, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct MigrationRecord {
    pub time_ns: u64,
    pub task: TaskId,
    pub from: usize,
    pub to: usize,
    pub reason: MigrationReason,
}

impl Engine {
    /// Set up a run: validate the plan and create tasks and CPUs. Nothing happens until
    /// [`Engine::run`].
    pub fn new(
        machine: Machine,
        cost: CostModel,
        cfg: EngineConfig,
        mut policy: Box<dyn SchedPolicy>,
        plan: WorkloadPlan,
    ) -> Result<Engine, PlanError> {
        validate_plan(&machine, &plan)?;
        let online = machine.online;
        let (ops, op_bases) = flatten_programs(&plan.programs);
        let tasks = new_tasks(&plan.tasks, &op_bases, &online, cfg.seed);
        let cpus = new_cpus(&machine, &cfg, &cost);
        let (smt_speed_table, smt_speed_stride) = smt_speed_table(&machine, &cost);
        let queue = initial_queue(&plan, &cfg);
        let nr_timers = nr_timers(&plan.programs);
        let noise = noise::Noise::new(cfg.noise, cfg.seed, tasks.len(), machine.nr_cpus());
        let numa = numa::memory_model(&machine, &plan.tasks, cfg.seed, &cost, &mut *policy);
        let watchdog_bound_ns = watchdog::stall_bound_ns(policy.max_balance_interval_ms());
        Ok(Engine {
            clock: clock::Clock::new(queue),
            noise,
            live_tasks: tasks.len(),
            tasks,
            cpus,
            smt_siblings: smt_siblings(&machine),
            smt_speed_table,
            smt_speed_stride,
            ops,
            sems: plan
                .sems
                .iter()
                .enumerate()
                .map(|(i, &count)| {
                    let lines = plan.sem_handoff_lines.get(i).copied().unwrap_or(0);
                    Semaphore::new(count, lines)
                })
                .collect(),
            barriers: vec![Barrier::default(); plan.nr_barriers],
            spinlocks: vec![SpinLockState::default(); plan.nr_spinlocks],
            task_timers: queue::CpuTimers::new(machine.nr_cpus()),
            policy,
            act: Actions::default(),
            acct: accounting::Accounting::new(plan.metrics, cfg.pingpong_window_ns),
            timers: vec![None; nr_timers],
            cpumasks: plan.cpumasks,
            stop_requested: false,
            control: None,
            stats_start_ns: 0,
            end_ns: None,
            invariant_violations: invariants::ViolationLog::new(),
            warnings: invariants::ViolationLog::new(),
            watchdog_next_ns: watchdog::WATCHDOG_PERIOD_NS,
            watchdog_bound_ns,
            observer: None,
            interval_hook: None,
            timer_changes: Vec::new(),
            numa,
            numa_series: None,
            numa_series_next_ns: u64::MAX,
            unpublished_wake_lists: Vec::new(),
            wake_list_publish_next_ns: u64::MAX,
            machine,
            cost,
            cfg,
        })
    }

    /// Run until every task has exited or the duration cap is reached.
    pub fn run(&mut self) -> &mut Self {
        if self.clock.events() == 0 {
            // Every online CPU starts in the idle loop.
            let online = self.machine.online;
            for cpu in online.iter() {
                self.enter_idle(cpu);
            }
            self.numa_series_start();
        }
        while let Some((time_ns, event)) = self.clock.pop() {
            assert!(
                time_ns >= self.clock.now(),
                "virtual time went backwards: {time_ns} < {}",
                self.clock.now()
            );
            if time_ns >= self.numa_series_next_ns {
                self.numa_series_sample(time_ns);
            }
            self.clock.advance_to(time_ns);
            if time_ns >= self.wake_list_publish_next_ns {
                self.publish_wake_lists(time_ns);
            }
            if time_ns >= self.watchdog_next_ns {
                self.watchdog();
            }
            if self.dispatch(event) || self.stop_requested {
                break;
            }
            self.sync_policy_timers();
            if self.cfg.check_invariants {
                self.check_invariants();
                self.check_engine_invariants();
            }
            self.debug_check_engine();
            if self.live_tasks == 0 {
                break;
            }
            if self
                .clock
                .events()
                .is_multiple_of(control::POLL_EVERY_EVENTS)
                && let Some(c) = self.control.as_mut()
                && c.poll(self.clock.now())
            {
                break;
            }
        }
        if let Some(c) = self.control.as_mut() {
            c.finish(self.clock.now());
        }
        self.numa_series_end();
        self.finish();
        if self.cfg.check_invariants {
            self.check_end_invariants();
        }
        self
    }

    /// Handle one event; true = stop.
    fn dispatch(&mut self, event: Event) -> bool {
        match event {
            Event::Fork { task } => self.wake_up_new_task(task),
            Event::Continue { cpu, generation } => self.on_continue(cpu, generation),
            Event::Tick { cpu, generation } => {
                let c = &mut self.cpus[cpu as usize];
                if c.tick_gen == generation {
                    c.tick_queued_at = None;
                    if c.tick_armed {
                        self.sched_tick(cpu as usize);
                    } else {
                        self.clock.superseded();
                    }
                } else {
                    self.clock.superseded();
                }
            }
            Event::HrTick { cpu, generation } => {
                if self.cpus[cpu as usize].hrtick_gen == generation {
                    self.hrtick(cpu as usize);
                } else {
                    self.clock.superseded();
                }
            }
            Event::Timer {
                task,
                cpu,
                generation,
            } => {
                if self.tasks[task.idx()].timer_gen == generation {
                    self.timer_fired(task);
                    self.hrtimer_expire(task, cpu as usize, generation);
                } else {
                    self.clock.superseded();
                }
            }
            Event::TimerWake {
                task,
                cpu,
                generation,
            } => {
                if self.tasks[task.idx()].timer_gen == generation {
                    self.timer_wakeup(task, cpu as usize);
                } else {
                    self.clock.superseded();
                }
            }
            Event::IdleTaskRunning { cpu } => self.idle_task_running(cpu as usize),
            Event::WakeListIpi { cpu, how } => self.handle_wake_list_ipi(cpu as usize, how),
            Event::ReschedIpi { cpu, how } => self.handle_resched_ipi(cpu as usize, how),
            Event::KickIpi { cpu, how } => self.handle_kick_ipi(cpu as usize, how),
            Event::Stopper { cpu, how } => self.handle_stopper(cpu as usize, how),
            Event::PolicyTimer { cpu, generation } => self.on_policy_timer(cpu, generation),
            Event::WarmupEnd => self.reset_counters(),
            Event::End => return true,
        }
        false
    }

    /// A `Continue` event: the current task's next step, unless the event was superseded
    /// (a stale generation) or re-planned later (re-queued at its new time).
    #[inline(always)]
    fn on_continue(&mut self, cpu: u32, generation: u32) {
        let c = &mut self.cpus[cpu as usize];
        if c.done_gen == generation {
            c.continue_queued_at = None;
            if self.clock.now() < c.continue_at_ns {
                // Re-planned later since this event was queued.
                let at = c.continue_at_ns;
                c.continue_queued_at = Some(at);
                self.clock.push(at, Event::Continue { cpu, generation });
                self.clock.superseded();
            } else {
                self.continue_curr(cpu as usize);
            }
        } else {
            self.clock.superseded();
        }
    }

    /// A `PolicyTimer` event: the policy's pinned hrtimer fires, unless cancelled, re-armed
    /// later (re-queued at its new expiry) or superseded.
    #[inline(always)]
    fn on_policy_timer(&mut self, cpu: u32, generation: u32) {
        let c = &mut self.cpus[cpu as usize];
        if c.policy_timer_gen == generation {
            c.policy_timer_queued = None;
            match c.policy_timer_at {
                Some(at) if at > self.clock.now() => {
                    c.policy_timer_queued = Some((at, generation));
                    self.clock.push(at, Event::PolicyTimer { cpu, generation });
                    self.clock.superseded();
                }
                Some(_) => self.policy_timer(cpu as usize),
                None => self.clock.superseded(),
            }
        } else {
            self.clock.superseded();
        }
    }
}

/// The events a run starts with: each task's fork (except those a `Fork` op starts), the
/// end, and the end of the warm-up.
fn initial_queue(plan: &WorkloadPlan, cfg: &EngineConfig) -> EventQueue<Event> {
    let mut queue = EventQueue::new();
    for (i, spec) in plan.tasks.iter().enumerate() {
        if spec.start_ns == TaskSpec::START_ON_FORK_OP {
            continue;
        }
        queue.push(
            spec.start_ns,
            Event::Fork {
                task: TaskId::from_index(i),
            },
        );
    }
    queue.push(cfg.duration_ns, Event::End);
    if cfg.warmup_ns > 0 && cfg.warmup_ns < cfg.duration_ns {
        queue.push(cfg.warmup_ns, Event::WarmupEnd);
    }
    queue
}

#[cfg(test)]
mod tests;
