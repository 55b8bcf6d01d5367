//! A global FIFO policy: one queue for the whole machine, no preemption, no balancing.
//!
//! It exists to keep [`super::SchedPolicy`] honest (nothing Linux-specific may leak into the
//! engine) and as a baseline users can set beside Linux on the same workload. A woken task
//! goes to an idle allowed CPU if there is one (lowest number first), else stays queued on its
//! previous CPU's slot of the global queue; any CPU that becomes free takes the oldest queued
//! task it may run, which counts as a `dispatch` migration when it moves.
//!
//! Every task is one of its normal tasks whatever its [`crate::task::TaskPolicy`]: a
//! SCHED_FIFO / SCHED_RR task has no priority over the others here (the policy has no
//! classes; that is the point of a baseline).
//!
//! In a run with a memory model it keeps the run's NUMA-balancing state
//! ([`super::numa_balancing`]), so scanning, hinting faults and page migration run as they
//! did before that state moved behind the policy; it never moves a task for NUMA (no
//! `task_numa_migrate()`).

use std::collections::VecDeque;

use super::numa_balancing::NumaBalancing;
use super::{Actions, CoreView, EnqueueFlags, Placement, PlacementPath, SchedPolicy, WakeCtx};
use crate::task::TaskId;

/// The global FIFO policy.
#[derive(Debug, Default)]
pub struct GlobalFifo {
    queue: VecDeque<TaskId>,
    /// Per CPU: the task running there, if any.
    running: Vec<Option<TaskId>>,
    /// Per CPU: tasks placed there and not yet picked (so a CPU that was just given work
    /// does not look idle to the next wakeup before it runs).
    pending: Vec<u32>,
    /// Per task: the CPU it was placed on while queued.
    placed_on: Vec<Option<usize>>,
    /// NUMA balancing's scanning, hinting faults and page migration (a run with a memory
    /// model); no task moves for NUMA (no `task_numa_migrate()`).
    numa: Option<Box<NumaBalancing>>,
}

impl GlobalFifo {
    pub fn new(nr_cpus: usize) -> Self {
        GlobalFifo {
            queue: VecDeque::with_capacity(1024),
            running: vec![None; nr_cpus],
            pending: vec![0; nr_cpus],
            placed_on: Vec::new(),
            numa: None,
        }
    }
}

impl GlobalFifo {
    fn unplace(&mut self, p: TaskId) {
        if let Some(cpu) = self.placed_on.get_mut(p.idx()).and_then(Option::take) {
            self.pending[cpu] -= 1;
        }
    }
}

impl SchedPolicy for GlobalFifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn task_fork(&mut self, _core: &dyn CoreView, _p: TaskId) {}

    fn numa_balancing(&self) -> Option<&NumaBalancing> {
        self.numa.as_deref()
    }

    fn numa_balancing_mut(&mut self) -> Option<&mut NumaBalancing> {
        self.numa.as_deref_mut()
    }

    fn set_numa_balancing(&mut self, numa: Box<NumaBalancing>) {
        self.numa = Some(numa);
    }

    fn select_task_rq(
        &mut self,
        core: &dyn CoreView,
        p: TaskId,
        prev_cpu: usize,
        _ctx: WakeCtx,
        act: &mut Actions,
    ) -> Placement {
        let allowed = core.task_cpus_allowed(p).and(&core.machine().online);
        let idle = allowed.iter().find(|&c| {
            self.running[c].is_none() && self.pending[c] == 0 && core.cpu_is_idle_task(c)
        });
        act.cost_ns += core.cost().idle_scan_step_ns * allowed.weight() as u64;
        let cpu = idle
            .or_else(|| allowed.test(prev_cpu).then_some(prev_cpu))
            .or_else(|| allowed.first())
            .expect("task has no allowed online CPU");
        Placement {
            cpu,
            path: PlacementPath::Other,
        }
    }

    fn migrate_task_rq(&mut self, _core: &dyn CoreView, _p: TaskId, _from: usize, _to: usize) {}

    /// The stopper preempted `p` on `from` (it is no longer `running` there only once
    /// picked again): put it back at the tail of the global queue, placed on `to`.
    fn move_queued_task(&mut self, core: &dyn CoreView, p: TaskId, from: usize, to: usize) -> bool {
        if self.running[from] == Some(p) {
            self.running[from] = None;
        }
        self.queue.retain(|&q| q != p);
        self.unplace(p);
        self.enqueue_task(core, to, p, EnqueueFlags::default());
        false
    }

    fn enqueue_task(&mut self, _core: &dyn CoreView, cpu: usize, p: TaskId, _flags: EnqueueFlags) {
        if self.placed_on.len() <= p.idx() {
            self.placed_on.resize(p.idx() + 1, None);
        }
        self.placed_on[p.idx()] = Some(cpu);
        self.pending[cpu] += 1;
        self.queue.push_back(p);
    }

    fn dequeue_sleep(&mut self, _core: &dyn CoreView, cpu: usize, p: TaskId) -> bool {
        if self.running[cpu] == Some(p) {
            self.running[cpu] = None;
        }
        self.queue.retain(|&q| q != p);
        self.unplace(p);
        true
    }

    fn dequeue_exit(&mut self, core: &dyn CoreView, cpu: usize, p: TaskId) {
        self.dequeue_sleep(core, cpu, p);
    }

    fn wakeup_preempt(
        &mut self,
        _core: &dyn CoreView,
        _cpu: usize,
        _p: TaskId,
        _flags: super::WakeFlags,
    ) -> bool {
        false
    }

    fn pick_next_task(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        prev: Option<TaskId>,
    ) -> Option<TaskId> {
        if let Some(prev) = prev {
            // Preempted or yielding: back to the tail of the queue.
            self.running[cpu] = None;
            self.queue.push_back(prev);
        }
        let pos = self
            .queue
            .iter()
            .position(|&q| core.task_cpus_allowed(q).test(cpu))?;
        let next = self.queue.remove(pos).expect("position is in range");
        self.unplace(next);
        self.running[cpu] = Some(next);
        Some(next)
    }

    fn task_tick(&mut self, _core: &dyn CoreView, _cpu: usize, _curr: TaskId) -> bool {
        false
    }

    fn yield_task(&mut self, _core: &dyn CoreView, _cpu: usize, _p: TaskId) {}

    fn set_nice(&mut self, _core: &dyn CoreView, _p: TaskId, _nice: i8) {}

    fn nr_running(&self, cpu: usize) -> usize {
        // The global queue belongs to no CPU; report it on every CPU so that none looks idle
        // while work waits.
        self.running[cpu].is_some() as usize + self.queue.len()
    }
}
