//! Affinity changes a task makes on itself: `sched_setaffinity(0, ...)` →
//! `__sched_setaffinity()` → `__set_cpus_allowed_ptr_locked()` → `affine_move_task()`
//! (kernel/sched/core.c), and `cpumask_any_and_distribute()` (lib/cpumask.c).
//!
//! The kernel intersects the requested mask with the task's cpuset, returns early when the
//! mask does not change, picks a destination with `cpumask_any_and_distribute(active, new)`,
//! sets `p->cpus_mask`, and, when the task's CPU is no longer allowed, has the CPU's stopper
//! (`migration_cpu_stop()`) preempt the running task and move it to the destination
//! (`move_queued_task()`). The move is done by `Engine::migration_cpu_stop` in `super::interrupts`.
//!
//! Approximations (with reasons):
//! - An unchanged mask costs nothing: rt-app, the one generator that changes affinity at run
//!   time, compares masks itself and makes no system call then.
//! - Only a task's own affinity changes (what task programs do); `taskset -p` on another task
//!   is not modelled.
//! - Active CPUs are the online CPUs (no CPU is ever half-way through hotplug here).

use super::Engine;
use crate::cpumask::CpuMask;
use crate::sched::types::MigrationReason;
use crate::task::TaskId;

/// `cpumask_any_and_distribute()`: the first CPU of `a ∩ b` after `prev` (the last one this
/// CPU returned), wrapping around; `None` when the intersection is empty. Successive calls
/// spread tasks over the mask so that balancing is not needed right after (the kernel's
/// comment: "Picking a ~random cpu helps in cases where we are changing affinity for groups
/// of tasks"). With `prev` = 0 at boot, the first pick skips CPU 0.
pub fn cpumask_any_and_distribute(prev: usize, a: &CpuMask, b: &CpuMask) -> Option<usize> {
    let both = a.and(b);
    both.next_from(prev + 1).or_else(|| both.first())
}

impl Engine {
    /// `sched_setaffinity()` by `cpu`'s current task `p` on itself, to entry `mask` of the
    /// plan's mask table. Returns true when `p` was moved off `cpu` (which has then
    /// rescheduled); false when it keeps running here.
    pub(crate) fn sched_setaffinity(&mut self, cpu: usize, p: TaskId, mask: u32) -> bool {
        let t = &self.tasks[p.idx()];
        // cpuset_cpus_allowed() ∩ the request (validated non-empty at plan time).
        let new_mask = self.cpumasks[mask as usize].and(&t.cpuset);
        if new_mask == t.cpus_allowed {
            return false;
        }
        self.charge(cpu, self.cost.sched_setaffinity_ns);
        let prev = self.cpus[cpu].distribute_cpu_mask_prev;
        let dest = cpumask_any_and_distribute(prev, &self.machine.online, &new_mask)
            .expect("validated: the new mask has an online CPU");
        self.cpus[cpu].distribute_cpu_mask_prev = dest;
        let t = &mut self.tasks[p.idx()];
        t.cpus_allowed = new_mask;
        // affine_move_task(): "Is it even running on a valid CPU?"
        if new_mask.test(t.cpu) {
            return false;
        }
        self.migration_cpu_stop(cpu, p, dest, MigrationReason::Affinity);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_and_distribute_skips_prev_and_wraps() {
        let online = CpuMask::first_n(8);
        let m = CpuMask::parse("0-3").unwrap();
        // Fresh per-CPU state (prev = 0): the first pick is CPU 1, not 0.
        assert_eq!(cpumask_any_and_distribute(0, &online, &m), Some(1));
        assert_eq!(cpumask_any_and_distribute(1, &online, &m), Some(2));
        assert_eq!(cpumask_any_and_distribute(3, &online, &m), Some(0));
        let odd = CpuMask::parse("1,3,5,7").unwrap();
        assert_eq!(cpumask_any_and_distribute(0, &online, &odd), Some(1));
        assert_eq!(cpumask_any_and_distribute(5, &online, &odd), Some(7));
        assert_eq!(cpumask_any_and_distribute(7, &online, &odd), Some(1));
        let none = CpuMask::parse("8-9").unwrap();
        assert_eq!(cpumask_any_and_distribute(0, &online, &none), None);
    }
}
