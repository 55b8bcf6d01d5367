//! Simulated tasks and the small programs they run.
//!
//! A workload is a set of [`Program`]s (plain `Vec<Op>`) and tasks that run them. A task
//! executes its program one [`Op`] at a time: ops that take no time (semaphore post, loop
//! jumps, marks) run back to back; `Run` consumes CPU time at the task's current speed;
//! `Sleep`, a `Down` on an empty semaphore, or a `Barrier` block it. The engine
//! ([`crate::engine`]) interprets the ops and calls the scheduler at the kernel's points
//! (wakeup, block, exit); the workload generators in [`crate::workload`] build programs.
//!
//! Semaphores are the one blocking primitive: a futex word, a pipe's "data available" and
//! "space available" conditions, and a wait queue are all counting semaphores with a wait
//! list woken in FIFO order. Not modelled: signals, priority inheritance, I/O waits other than
//! explicit sleeps.

use crate::cpumask::CpuMask;

/// Index of a task in the engine's task table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct TaskId(pub u32);

impl TaskId {
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// Index of a semaphore (futex word / pipe condition) in the workload's table.
pub type SemId = u32;
/// Index of a program in the workload's table.
pub type ProgramId = u32;

/// One action of a task program.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Compute `work_ns` of work: the time it takes on a 1024-capacity CPU with idle SMT
    /// siblings and a warm cache. Slower CPUs, busy siblings and cold caches stretch it.
    Run { work_ns: u64 },
    /// Compute for a random duration, exponentially distributed with this mean (drawn from
    /// the task's own RNG stream).
    RunExp { mean_work_ns: u64 },
    /// Sleep (hrtimer) for `ns` plus the timer slack (50 µs for normal tasks, as
    /// `current->timer_slack_ns` defaults).
    Sleep { ns: u64 },
    /// Take one unit of a semaphore, blocking while it is zero (`futex_wait`, `pipe_read`).
    Down { sem: SemId },
    /// Add one unit and wake the first waiter, if any (`futex_wake(1)`). `sync` marks a
    /// WF_SYNC wakeup (the waker is about to block, as pipe writes to a reader hint).
    Up { sem: SemId, sync: bool },
    /// Add `n` units and wake up to `n` waiters.
    UpMany { sem: SemId, n: u32 },
    /// Wait until `count` tasks have reached barrier `id`, then all continue.
    Barrier { id: u32, count: u32 },
    /// Jump to op `to` until this op has been passed `times` times (loop counter `slot`).
    Loop { to: u32, times: u32, slot: u8 },
    /// Jump to op `to` forever.
    Jump { to: u32 },
    /// Record the current time in the task's mark `slot` (for request latencies).
    Mark { slot: u8 },
    /// Record a latency sample: now minus mark `slot`, into workload metric `metric`.
    Sample { slot: u8, metric: u8 },
    /// Count one completed operation of the workload (requests, bogo-ops, messages).
    CountOp,
    /// `sched_yield()`.
    Yield,
    /// Change the task's nice value.
    SetNice { nice: i8 },
    /// Exit.
    Exit,
}

/// A program: ops executed from index 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Program {
    pub name: String,
    pub ops: Vec<Op>,
}

/// How a task enters the simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    /// `comm`, as it would show in a trace.
    pub comm: String,
    pub program: ProgramId,
    pub nice: i8,
    /// CPUs the task may run on; `None` = all online CPUs.
    pub cpus_allowed: Option<CpuMask>,
    /// Time of the fork.
    pub start_ns: u64,
    /// CPU of the parent at fork time (fork placement starts from there).
    pub parent_cpu: usize,
    /// Cache footprint in KiB: what must be refilled after a migration.
    pub footprint_kib: u32,
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Not yet forked.
    New,
    /// On a runqueue, waiting for a CPU (TASK_RUNNING, not current).
    Runnable,
    /// Current on its CPU.
    Running,
    /// Blocked or sleeping (TASK_INTERRUPTIBLE); may still be on a runqueue if its dequeue
    /// was delayed (DELAY_DEQUEUE).
    Blocked,
    /// Woken, on a remote CPU's wake list, not yet enqueued (TASK_WAKING).
    Waking,
    /// Exited.
    Dead,
}
