//! User-space spin locks of task programs (`Op::SpinLock`, `Op::SpinUnlock` and the
//! per-CPU ones schbench takes around its math): a lock has an owner and a FIFO of
//! spinners; a spinner keeps its CPU busy until the lock is handed to it or it is
//! preempted (split from the interpreter, `interp.rs`, which dispatches the ops here).

use super::Engine;
use super::interp::Step;
use crate::task::{Op, TaskId, TaskState};
use crate::units::cpu_u32;

impl Engine {
    /// User-space spin locks (`SpinLock`, `SpinUnlock`, and the per-CPU ones).
    pub(super) fn op_spin(&mut self, cpu: usize, p: TaskId, op: Op) -> Step {
        match op {
            Op::SpinLock { lock } => {
                if self.spin_lock(p, lock) {
                    return Step::Next;
                }
                // Spinning: the CPU stays busy with this task until the lock is handed over
                // (spin_unlock) or the task is preempted.
                Step::Planned
            }
            Op::SpinUnlock { lock } => {
                let t = &mut self.tasks[p.idx()];
                t.pc += 1;
                if t.held_percpu_lock == Some(lock) {
                    t.held_percpu_lock = None;
                }
                self.spin_unlock(p, lock);
                Step::Next
            }
            Op::PerCpuSpinLock { base } => {
                // This CPU's lock; a spinner moved here stops waiting for its old CPU's.
                let lock = base + cpu_u32(cpu);
                self.leave_spin_queue_unless(p, lock);
                if self.spin_lock(p, lock) {
                    return Step::Next;
                }
                Step::Planned
            }
            Op::PerCpuSpinUnlock => {
                self.tasks[p.idx()].pc += 1;
                let lock = self.tasks[p.idx()].held_percpu_lock.take();
                let lock = lock.expect("validated: PerCpuSpinUnlock follows PerCpuSpinLock");
                self.spin_unlock(p, lock);
                Step::Next
            }
            _ => unreachable!("op_spin: {op:?}"),
        }
    }

    /// `Op::SpinLock` by the running task `p`: take the lock if it is free (true), else spin
    /// (queue as a spinner once; false). A spinner switched back in retries here.
    fn spin_lock(&mut self, p: TaskId, lock: u32) -> bool {
        let l = &mut self.spinlocks[lock as usize];
        if l.owner.is_none() {
            l.owner = Some(p);
            if let Some(i) = l.spinners.iter().position(|&s| s == p) {
                l.spinners.remove(i);
            }
            let t = &mut self.tasks[p.idx()];
            t.spinning = false;
            t.held_percpu_lock = Some(lock);
            t.pc += 1;
            return true;
        }
        debug_assert_ne!(
            l.owner,
            Some(p),
            "spin lock {lock} taken twice by task {}",
            p.0
        );
        if !self.tasks[p.idx()].spinning {
            l.spinners.push_back(p);
            self.tasks[p.idx()].spinning = true;
            self.tasks[p.idx()].spin_lock_id = lock;
        }
        false
    }

    /// A spinner of another lock than `lock` (a per-CPU lock's spinner moved to another
    /// CPU) leaves that lock's queue.
    fn leave_spin_queue_unless(&mut self, p: TaskId, lock: u32) {
        let t = &mut self.tasks[p.idx()];
        if !t.spinning || t.spin_lock_id == lock {
            return;
        }
        t.spinning = false;
        let old = &mut self.spinlocks[t.spin_lock_id as usize];
        if let Some(i) = old.spinners.iter().position(|&s| s == p) {
            old.spinners.remove(i);
        }
    }

    /// `Op::SpinUnlock`: hand the lock to the longest-waiting spinner that is running (it
    /// sees the release at once and goes on); with none running, leave it free.
    fn spin_unlock(&mut self, p: TaskId, lock: u32) {
        let l = &mut self.spinlocks[lock as usize];
        debug_assert_eq!(l.owner, Some(p), "spin lock {lock} released by a non-owner");
        l.owner = None;
        let running = l
            .spinners
            .iter()
            .position(|&s| self.tasks[s.idx()].state == TaskState::Running);
        let Some(i) = running else {
            return;
        };
        let w = l.spinners.remove(i).expect("index found");
        l.owner = Some(w);
        let t = &mut self.tasks[w.idx()];
        t.spinning = false;
        t.held_percpu_lock = Some(lock);
        t.pc += 1;
        let cpu = t.cpu;
        self.plan_continue(cpu);
    }
}
