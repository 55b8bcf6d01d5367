//! [`FakeLbEnv`]: a constructed runqueue state implementing [`LbEnv`], for tests and
//! examples of balancing decisions without an engine or a PELT model.
//!
//! Each CPU holds a list of tasks in `cfs_tasks` walk order (least recently run first);
//! per-CPU signals are sums over its tasks: `cpu_load` = Σ load, `cpu_util` = Σ util capped
//! at the CPU's original capacity, `cpu_runnable` = Σ runnable of non-delayed tasks. A task
//! added with [`FakeLbEnv::add_task`] has load = util = runnable = the given value, may run
//! anywhere, last ran long ago (cache cold) and is not running; setters change that.
//! `sched_rng()` returns scripted values first, then a fixed linear congruential sequence.

use std::collections::{BTreeMap, VecDeque};

use schedlab::cpumask::CpuMask;
use schedlab::sched::balance::LbEnv;
use schedlab::task::TaskId;

/// One task of a [`FakeLbEnv`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeTask {
    pub cpu: usize,
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub allowed: CpuMask,
    pub exec_start_ns: u64,
    pub delayed: bool,
    pub fits: bool,
    pub next_buddy: bool,
    pub ineligible: bool,
}

/// One CPU of a [`FakeLbEnv`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeCpu {
    /// `cfs_tasks` in walk order (least recently run first).
    pub tasks: Vec<TaskId>,
    /// The running task.
    pub curr: Option<TaskId>,
    /// Tasks of other classes (RT, DL) counted in `nr_running`.
    pub other_class_running: u32,
    pub capacity: u64,
    pub arch_capacity: u64,
    pub clock_task_ns: u64,
    pub ttwu_pending: bool,
    pub misfit_task_load: u64,
    /// Forces `idle_cpu()` false (e.g. a CPU busy with non-task work).
    pub busy_override: bool,
}

/// A constructed machine state for balancing tests.
#[derive(Clone, Debug)]
pub struct FakeLbEnv {
    pub cpus: Vec<FakeCpu>,
    pub tasks: BTreeMap<TaskId, FakeTask>,
    /// Values `sched_rng()` returns first, in order.
    pub rng_script: VecDeque<u32>,
    rng_state: u64,
    next_id: u32,
    /// `(task, from, to)` of every detach, in order.
    pub detached: Vec<(TaskId, usize, usize)>,
    /// Report every CPU as changed at each pass (`take_changed_cpus`), which lets the
    /// balancer answer group statistics from its running sums. Off: it walks every CPU.
    pub report_changes: bool,
}

impl FakeLbEnv {
    /// `nr_cpus` idle CPUs of capacity 1024 with the rq clock at 10 ms.
    pub fn new(nr_cpus: usize) -> FakeLbEnv {
        FakeLbEnv {
            cpus: (0..nr_cpus)
                .map(|_| FakeCpu {
                    tasks: Vec::new(),
                    curr: None,
                    other_class_running: 0,
                    capacity: 1024,
                    arch_capacity: 1024,
                    clock_task_ns: 10_000_000,
                    ttwu_pending: false,
                    misfit_task_load: 0,
                    busy_override: false,
                })
                .collect(),
            tasks: BTreeMap::new(),
            rng_script: VecDeque::new(),
            rng_state: 0x2545_f491_4f6c_dd1d,
            next_id: 0,
            detached: Vec::new(),
            report_changes: false,
        }
    }

    /// Queue a new task on `cpu` as its most recently run task; load = util = runnable =
    /// `load`. Returns its id (ids count up from 0).
    pub fn add_task(&mut self, cpu: usize, load: u64) -> TaskId {
        let id = TaskId(self.next_id);
        self.next_id += 1;
        self.tasks.insert(
            id,
            FakeTask {
                cpu,
                load,
                util: load,
                runnable: load,
                allowed: CpuMask::first_n(self.cpus.len()),
                exec_start_ns: 0,
                delayed: false,
                fits: true,
                next_buddy: false,
                ineligible: false,
            },
        );
        self.cpus[cpu].tasks.push(id);
        id
    }

    /// Queue `n` tasks of load `load` on `cpu`; the last one is made the running task.
    pub fn add_running_tasks(&mut self, cpu: usize, n: usize, load: u64) -> Vec<TaskId> {
        let ids: Vec<TaskId> = (0..n).map(|_| self.add_task(cpu, load)).collect();
        if let Some(&last) = ids.last() {
            self.cpus[cpu].curr = Some(last);
        }
        ids
    }

    /// Make `p` the running task of its CPU.
    pub fn set_running(&mut self, p: TaskId) {
        let cpu = self.tasks[&p].cpu;
        self.cpus[cpu].curr = Some(p);
    }

    pub fn task_mut(&mut self, p: TaskId) -> &mut FakeTask {
        self.tasks.get_mut(&p).expect("known task")
    }

    fn queued(&self, cpu: usize) -> impl Iterator<Item = &FakeTask> + '_ {
        self.cpus[cpu].tasks.iter().map(|t| &self.tasks[t])
    }
}

impl LbEnv for FakeLbEnv {
    fn take_changed_cpus(&mut self, out: &mut CpuMask) -> bool {
        if self.report_changes {
            *out = out.or(&CpuMask::first_n(self.cpus.len()));
        }
        self.report_changes
    }

    fn nr_running(&self, cpu: usize) -> u32 {
        self.queued(cpu).filter(|t| !t.delayed).count() as u32 + self.cpus[cpu].other_class_running
    }

    fn h_nr_runnable(&self, cpu: usize) -> u32 {
        self.queued(cpu).filter(|t| !t.delayed).count() as u32
    }

    fn h_nr_queued(&self, cpu: usize) -> u32 {
        self.cpus[cpu].tasks.len() as u32
    }

    fn idle_cpu(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        !c.busy_override && c.curr.is_none() && self.nr_running(cpu) == 0 && !c.ttwu_pending
    }

    fn ttwu_pending(&self, cpu: usize) -> bool {
        self.cpus[cpu].ttwu_pending
    }

    fn cpu_load(&self, cpu: usize) -> u64 {
        self.queued(cpu).map(|t| t.load).sum()
    }

    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.queued(cpu)
            .filter(|t| !t.delayed)
            .map(|t| t.runnable)
            .sum()
    }

    fn cpu_util(&self, cpu: usize) -> u64 {
        let u: u64 = self.queued(cpu).map(|t| t.util).sum();
        u.min(self.cpus[cpu].arch_capacity)
    }

    fn capacity_of(&self, cpu: usize) -> u64 {
        self.cpus[cpu].capacity
    }

    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.cpus[cpu].arch_capacity
    }

    fn misfit_task_load(&self, cpu: usize) -> u64 {
        self.cpus[cpu].misfit_task_load
    }

    fn rq_clock_task(&self, cpu: usize) -> u64 {
        self.cpus[cpu].clock_task_ns
    }

    fn curr_task(&self, cpu: usize) -> Option<TaskId> {
        self.cpus[cpu].curr
    }

    fn cfs_tasks(&self, cpu: usize, out: &mut Vec<TaskId>) {
        out.extend_from_slice(&self.cpus[cpu].tasks);
    }

    fn cfs_tasks_rotate(&mut self, cpu: usize, p: TaskId) {
        let list = &mut self.cpus[cpu].tasks;
        if let Some(pos) = list.iter().position(|&t| t == p) {
            list.remove(pos);
            list.push(p);
        }
    }

    fn sched_rng(&mut self, _cpu: usize) -> u32 {
        if let Some(v) = self.rng_script.pop_front() {
            return v;
        }
        self.rng_state = self
            .rng_state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.rng_state >> 33) as u32
    }

    fn task_h_load(&self, p: TaskId) -> u64 {
        self.tasks[&p].load
    }

    fn task_util_est(&self, p: TaskId) -> u64 {
        self.tasks[&p].util
    }

    fn task_running(&self, cpu: usize, p: TaskId) -> bool {
        self.cpus[cpu].curr == Some(p)
    }

    fn cpus_allowed(&self, p: TaskId) -> CpuMask {
        self.tasks[&p].allowed
    }

    fn exec_start(&self, p: TaskId) -> u64 {
        self.tasks[&p].exec_start_ns
    }

    fn is_delayed(&self, p: TaskId) -> bool {
        self.tasks[&p].delayed
    }

    fn is_next_buddy(&self, p: TaskId) -> bool {
        self.tasks[&p].next_buddy
    }

    fn task_ineligible_on_dst(&self, p: TaskId, _dst_cpu: usize) -> bool {
        self.tasks[&p].ineligible
    }

    fn task_fits_cpu(&self, p: TaskId, _cpu: usize) -> bool {
        self.tasks[&p].fits
    }

    fn detach_task(&mut self, p: TaskId, from: usize, to: usize) {
        let list = &mut self.cpus[from].tasks;
        if let Some(pos) = list.iter().position(|&t| t == p) {
            list.remove(pos);
        }
        if self.cpus[from].curr == Some(p) {
            self.cpus[from].curr = None;
        }
        self.tasks.get_mut(&p).expect("known task").cpu = to;
        self.detached.push((p, from, to));
    }

    fn attach_task(&mut self, p: TaskId, to: usize) {
        self.tasks.get_mut(&p).expect("known task").cpu = to;
        self.cpus[to].tasks.push(p);
    }
}
