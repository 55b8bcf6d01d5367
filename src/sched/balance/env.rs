//! The environment the load balancer reads and mutates: the runqueues, PELT signals and
//! tasks that the fair-class model owns.
//!
//! The balancer (this module tree) mirrors the decisions of `kernel/sched/fair.c`; it owns
//! none of the runqueue data it decides on. Everything it reads about a CPU or a task goes
//! through [`LbEnv`], with the kernel's names and units, so that the EEVDF/PELT model
//! implements it once and tests can implement it on a constructed state
//! (`FakeLbEnv` in `tests/support/fake_lb_env.rs`).
//!
//! Units: loads and utilisations are PELT averages (`load_avg` of an always-running nice-0
//! task is 1024, `util_avg` is in capacity units out of 1024); times are the rq clock in ns.

use crate::cpumask::CpuMask;
use crate::task::TaskId;

/// What the balancer needs from the runqueues (the kernel's `struct rq`, `struct cfs_rq`,
/// `struct task_struct` as `fair.c`'s balancing code reads them).
///
/// Methods with a default body are hooks for mechanisms other models may not have yet;
/// each default is the kernel's behaviour when that mechanism is absent (e.g. no NUMA
/// balancing statistics, no SCHED_IDLE tasks).
pub trait LbEnv {
    // ---- per CPU ----

    /// `rq->nr_running`: tasks of every class queued on `cpu`, including the running one.
    fn nr_running(&self, cpu: usize) -> u32;

    /// `rq->cfs.h_nr_runnable`: CFS tasks runnable on `cpu`, excluding delayed-dequeue
    /// entities (`h_nr_running` before v6.14).
    fn h_nr_runnable(&self, cpu: usize) -> u32;

    /// `rq->cfs.h_nr_queued`: CFS tasks queued including delayed ones. Default: the
    /// runnable count (a model without DELAY_DEQUEUE).
    fn h_nr_queued(&self, cpu: usize) -> u32 {
        self.h_nr_runnable(cpu)
    }

    /// `idle_cpu()`: the idle task runs, `nr_running == 0` and no wakeup is pending.
    fn idle_cpu(&self, cpu: usize) -> bool;

    /// `rq->ttwu_pending`: a wakeup is queued for `cpu` (TTWU_QUEUE).
    fn ttwu_pending(&self, _cpu: usize) -> bool {
        false
    }

    /// `sched_idle_cpu()`: the CPU runs only SCHED_IDLE tasks. Default false (no
    /// SCHED_IDLE tasks modelled).
    fn sched_idle_cpu(&self, _cpu: usize) -> bool {
        false
    }

    /// The per-CPU sums of `update_sg_lb_stats()` in one read: (`cpu_load`, `cpu_util`,
    /// `cpu_runnable`, `h_nr_runnable`, `nr_running`). Default: the five calls; an
    /// environment overrides it to read its runqueue once (the hottest loop of a pass).
    fn sg_cpu_stats(&self, cpu: usize) -> (u64, u64, u64, u32, u32) {
        (
            self.cpu_load(cpu),
            self.cpu_util(cpu),
            self.cpu_runnable(cpu),
            self.h_nr_runnable(cpu),
            self.nr_running(cpu),
        )
    }

    /// CPUs whose `update_sg_lb_stats()` inputs ([`LbEnv::sg_cpu_stats`], idleness,
    /// `capacity_of()`) may have changed since the previous call, ORed into `out`; the set
    /// is then emptied. A superset is always correct. Returns false when the environment
    /// does not track changes (the default): the balancer then walks every CPU of every
    /// group, as the kernel does.
    fn take_changed_cpus(&mut self, _out: &mut CpuMask) -> bool {
        false
    }

    /// `cpu_load(rq)`: `rq->cfs.avg.load_avg`.
    fn cpu_load(&self, cpu: usize) -> u64;

    /// `cpu_runnable(rq)`: `rq->cfs.avg.runnable_avg`.
    fn cpu_runnable(&self, cpu: usize) -> u64;

    /// `cpu_util_cfs(cpu)`: `max(util_avg, util_est)` of the CFS rq, capped at
    /// `arch_scale_cpu_capacity()`.
    fn cpu_util(&self, cpu: usize) -> u64;

    /// `cpu_util_cfs_boost(cpu)`: like [`LbEnv::cpu_util`] but also `max`ed with the
    /// runnable average (used by `migrate_util` busiest-queue selection).
    fn cpu_util_boost(&self, cpu: usize) -> u64 {
        self.cpu_util(cpu).max(self.cpu_runnable(cpu))
    }

    /// `capacity_of(cpu)`: `rq->cpu_capacity`, the capacity left to CFS after RT, DL,
    /// IRQ and thermal pressure.
    fn capacity_of(&self, cpu: usize) -> u64;

    /// `arch_scale_cpu_capacity(cpu)`: the CPU's original capacity (1024 on the biggest).
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64;

    /// `rq->misfit_task_load` (asymmetric-capacity systems only; 0 elsewhere).
    fn misfit_task_load(&self, _cpu: usize) -> u64 {
        0
    }

    /// `rq->nr_numa_running`: tasks with a NUMA preferred node. Default 0 (no NUMA
    /// balancing statistics).
    fn nr_numa_running(&self, _cpu: usize) -> u32 {
        0
    }

    /// `rq->nr_preferred_running`: tasks running on their preferred node. Default 0.
    fn nr_preferred_running(&self, _cpu: usize) -> u32 {
        0
    }

    /// (`nr_numa_running`, `nr_preferred_running`) in one read. Default: the two calls.
    fn numa_counts(&self, cpu: usize) -> (u32, u32) {
        (self.nr_numa_running(cpu), self.nr_preferred_running(cpu))
    }

    /// `rq_clock_task(rq)` in ns (`task_hot()` compares `exec_start` against it).
    fn rq_clock_task(&self, cpu: usize) -> u64;

    /// `rq->curr` when it is a task (not the idle task).
    fn curr_task(&self, cpu: usize) -> Option<TaskId>;

    /// The CFS tasks of `cpu` (`rq->cfs_tasks`) in the order `detach_tasks()` examines
    /// them: **least recently run first** (the kernel list's tail first; the task picked to
    /// run is moved to the list head, so the most recently run task comes last here).
    /// Includes the running task. `out` is cleared by the caller.
    fn cfs_tasks(&self, cpu: usize, out: &mut Vec<TaskId>);

    /// `list_move(&p->se.group_node, &src_rq->cfs_tasks)`: `detach_tasks()` moves a task it
    /// skipped to the list head, i.e. to the **end** of the [`LbEnv::cfs_tasks`] order.
    fn cfs_tasks_rotate(&mut self, cpu: usize, p: TaskId);

    /// `arch_asym_cpu_priority(cpu)` for `SD_ASYM_PACKING`. Default: the kernel's generic
    /// `-cpu` (lower-numbered CPUs preferred).
    fn arch_asym_cpu_priority(&self, cpu: usize) -> i64 {
        -(cpu as i64)
    }

    /// `sched_balance_update_blocked_averages(cpu)`: decay the PELT signals of an idle
    /// CPU. Returns whether blocked load remains (`rq->has_blocked_load`). Default: none
    /// remains (a model whose PELT decays lazily on read).
    fn update_blocked_averages(&mut self, _cpu: usize) -> bool {
        false
    }

    /// Per-CPU `sched_rng()` (`prandom_u32_state`), used by NI_RANDOM. The caller's seeded
    /// stream keeps runs reproducible.
    fn sched_rng(&mut self, cpu: usize) -> u32;

    // ---- per task ----

    /// `task_h_load(p)`: the task's share of its CPU's root load.
    fn task_h_load(&self, p: TaskId) -> u64;

    /// `task_util_est(p)`: `max(util_avg, util_est)`.
    fn task_util_est(&self, p: TaskId) -> u64;

    /// `task_on_cpu(rq, p)`: `p` is currently running on `cpu`.
    fn task_running(&self, cpu: usize, p: TaskId) -> bool;

    /// `p->cpus_ptr`.
    fn cpus_allowed(&self, p: TaskId) -> CpuMask;

    /// `p->se.exec_start`: rq-clock ns when it last started running (or was last charged).
    fn exec_start(&self, p: TaskId) -> u64;

    /// `p->se.sched_delayed`: dequeue delayed by DELAY_DEQUEUE (sleeping, still queued).
    fn is_delayed(&self, _p: TaskId) -> bool {
        false
    }

    /// `&p->se == cfs_rq_of(&p->se)->next`: the task is its cfs_rq's next buddy
    /// (`CACHE_HOT_BUDDY`). Default false.
    fn is_next_buddy(&self, _p: TaskId) -> bool {
        false
    }

    /// `task_has_idle_policy(p)`: SCHED_IDLE task (never cache hot). Default false.
    fn has_idle_policy(&self, _p: TaskId) -> bool {
        false
    }

    /// The EEVDF half of `task_is_ineligible_on_dst_cpu()`: the destination's matching
    /// cfs_rq has queued entities and `p` is not eligible (negative lag) in its own cfs_rq.
    /// The balancer adds the `PLACE_LAG` and `nr_balance_failed == 0` conditions. Default
    /// false.
    fn task_ineligible_on_dst(&self, _p: TaskId, _dst_cpu: usize) -> bool {
        false
    }

    /// `task_fits_cpu(p, cpu)`: the task's utilisation (with uclamp) fits the CPU
    /// (`migrate_misfit` detaches only tasks that do not fit their source CPU). Default
    /// true (symmetric capacity).
    fn task_fits_cpu(&self, _p: TaskId, _cpu: usize) -> bool {
        true
    }

    /// `migrate_degrades_locality(p, env)`: > 0 moving `p` from `src` to `dst` hurts its
    /// NUMA locality, < 0 improves it, 0 neutral (then `task_hot()` decides). Only asked on
    /// `SD_NUMA` domains. Default 0: no NUMA-balancing effect (the kernel's answer without
    /// NUMA fault statistics).
    fn migrate_degrades_locality(
        &self,
        _p: TaskId,
        _src_cpu: usize,
        _dst_cpu: usize,
        _dst_idle: bool,
    ) -> i32 {
        0
    }

    // ---- mutation ----

    /// `detach_task()`: dequeue `p` from `from` and `set_task_cpu(p, to)`.
    fn detach_task(&mut self, p: TaskId, from: usize, to: usize);

    /// `attach_task()`: enqueue `p` on `to` and run the wakeup-preemption check.
    fn attach_task(&mut self, p: TaskId, to: usize);
}
