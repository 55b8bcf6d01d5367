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

    /// The id of the task at index `i` of the task table. Fits: the task limit
    /// (`input::limits::MAX_TASKS_CEILING`, about 1.7 M) is far below `u32::MAX`.
    #[inline]
    pub fn from_index(i: usize) -> TaskId {
        TaskId(u32::try_from(i).expect("task index above u32::MAX: beyond the task limit"))
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
    /// Busy-spin until `ns` of wall-clock time have passed since the op started (a loop on
    /// `gettimeofday()`, as schbench's `usec_spin()`): the task burns CPU whenever it runs and
    /// stops at its first run past the deadline, however much CPU it got (a spinner preempted
    /// for half the time gets half the CPU, unlike `Run`).
    SpinWall { ns: u64 },
    /// Sleep (hrtimer) for `ns` plus the timer slack (50 µs for normal tasks, as
    /// `current->timer_slack_ns` defaults).
    Sleep { ns: u64 },
    /// Sleep (hrtimer, with the timer slack) for a random time, exponentially distributed
    /// with this mean (drawn from the task's own RNG stream): the next of a Poisson stream of
    /// events, as background kernel work arrives (`crate::workload::background`).
    SleepExp { mean_ns: u64 },
    /// Take one unit of a semaphore, blocking while it is zero (`futex_wait`, `pipe_read`).
    Down { sem: SemId },
    /// Add one unit and wake the first waiter, if any (`futex_wake(1)`). `sync` marks a
    /// WF_SYNC wakeup (the waker is about to block, as pipe writes to a reader hint).
    Up { sem: SemId, sync: bool },
    /// Add `n` units and wake up to `n` waiters; `sync` as for `Up` (a pipe write waking
    /// every poller of the pipe passes WF_SYNC to each, a `futex_wake(n)` passes none).
    UpMany { sem: SemId, n: u32, sync: bool },
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
    /// `sched_setaffinity(0, ...)` on itself: the allowed CPUs become entry `mask` of the
    /// plan's CPU-mask table (`WorkloadPlan::cpumasks`), intersected with the task's cpuset.
    /// If the task's CPU is no longer allowed, the migration stopper moves it
    /// (`__set_cpus_allowed_ptr()` → `affine_move_task()`). A mask equal to the current one
    /// is a no-op without a system call, as rt-app skips the call then. An index keeps `Op`
    /// small and `Copy` (a `CpuMask` is 128 bytes).
    SetAffinity { mask: u32 },
    /// Exit.
    Exit,
    /// `sem_trywait()`: take one unit if there is one and go on; otherwise jump to op
    /// `else_to` without blocking. Lets a program loop a data-dependent number of times.
    TryDown { sem: SemId, else_to: u32 },
    /// Take every unit of `sem` at once without blocking (possibly none) and add them to
    /// `into` (waking its waiters as `Up` would): an atomic exchange of a list head, as
    /// schbench's `xlist_splice()` takes the whole queue of waiting workers.
    DownAll { sem: SemId, into: SemId },
    /// `Up`, handing the unit together with this task's mark `slot` (a timestamp the waker
    /// took): the task that receives the unit gets it in its own mark `slot`, whether it was
    /// waiting or takes the unit later. Models a waker writing the wakee's `wake_time` before
    /// posting its futex (schbench). A semaphore should be posted either only by `UpStamped`
    /// or never by it, else stamps pair with the wrong units.
    UpStamped { sem: SemId, sync: bool, slot: u8 },
    /// Add one unit, but wake waiters only once the count reaches `min_count` (then wake as
    /// many as there are units). Writers blocked on a full socket (waiting non-exclusively)
    /// are woken only when enough space is free (`unix_writable()`: a quarter of the buffer),
    /// while writers that did not block use any free unit at once. Pipes: [`Op::UpPage`].
    UpThreshold {
        sem: SemId,
        sync: bool,
        min_count: u32,
    },
    /// A pipe reader's release of room after reading one message (`pipe_read()`): the
    /// message's room is usable only once its whole page is read, so every `page`-th call
    /// adds `page` units; and a read that began with no room (`was_full`) wakes *one* waiter
    /// (writers wait exclusively, `wait_event_interruptible_exclusive()`), even when the
    /// read freed no page. The waiter gets no unit: it retries its `Down` when it runs, and
    /// waits again at the back of the queue if there is still no room. From v6.14 (the
    /// engine's `pipe_wake_on_free`) only a read that freed a page wakes one. Before v5.5
    /// (`pipe_exclusive_waits` off): a freed page wakes every waiter, to retry.
    UpPage { sem: SemId, sync: bool, page: u32 },
    /// `pipe_write()`'s `wake_next_writer`: if this task waited in its latest `Down` of
    /// `sem` and room is left, wake the next waiter (it retries its `Down`, as for
    /// [`Op::UpPage`]). Nothing otherwise.
    WakeNext { sem: SemId, sync: bool },
    /// Wake one (`all = false`, `pthread_cond_signal`) or every (`pthread_cond_broadcast`)
    /// task waiting on `sem`, without adding units: a wakeup with nobody waiting is lost, as
    /// condition-variable signals are.
    Wake { sem: SemId, all: bool },
    /// Start periodic timer `timer` at the current time unless it is already running (rt-app
    /// sets a timer's reference time when a thread starts).
    TimerStart { timer: u32 },
    /// Periodic timer (rt-app `timer`, schbench's 1 s RPS windows): advance the timer's next
    /// expiry by `period_ns`; if that is in the future, sleep until it (absolute hrtimer,
    /// with the timer slack); if it has passed, go on at once and, unless `absolute`, restart
    /// the schedule from now. Timers are shared by every task naming the same index.
    TimerWait {
        timer: u32,
        period_ns: u64,
        absolute: bool,
    },
    /// Start of stress-ng's first load slice (`t1` of `stress_cpu()`'s loop): remember wall
    /// and CPU time, and draw the random slice length (`--cpu-load-slice 0`).
    DutyStart { slice_ms: i16 },
    /// The end of one method call in stress-ng's load-slice loop (`stress_cpu()` with
    /// 0 < `-l` < 100; stress-cpu.c). Counts the call; then, if the slice is over —
    /// `slice_ms` < 0: after −`slice_ms` calls; `slice_ms` > 0: once the task's CPU time has
    /// grown by `slice_ms` ms since the slice began; `slice_ms` = 0: by r/131072 s, r a 16-bit
    /// draw from the task's RNG at the slice start — computes
    /// `delay = cpu·(100−P)/P + (cpu − wall) − bias` and sleeps it through `select()`
    /// (µs-truncated timeval, slack `max(delay/1000, timer_slack)`), or clears `bias` when it
    /// is negative. The op is executed again when the task wakes: `bias` becomes the
    /// oversleep, and `stress_continue()` is checked — with `stop_calls` > 0 and that many
    /// calls made the task jumps to `exit_to`; otherwise the next slice starts (as
    /// `DutyStart`).
    DutyCall {
        load_pct: u8,
        slice_ms: i16,
        exit_to: u32,
        stop_calls: u64,
    },
    /// Record a snapshot of the run's counters (time, all ops ever counted, and with `full`
    /// the metric histograms and every task's run-delay totals), as a benchmark's
    /// statistics thread reads them (schbench's once-a-second pass).
    Snapshot { full: bool },
    /// `fork()` (`clone()`): start task `task` now on this task's CPU, through the fork path
    /// of `select_task_rq()` (`wake_up_new_task()`). The child's spec must have
    /// `start_ns == TaskSpec::START_ON_FORK_OP`; each such task is forked at most once (a
    /// second fork of it is a no-op).
    Fork { task: u32 },
    /// `execve()`: exec balancing (`sched_exec()`): the scheduler may move the task to the
    /// idlest CPU of the widest domain with SD_BALANCE_EXEC before the new image runs. The
    /// exec's own cost is the program's `Run`.
    Exec,
    /// Take user-space spin lock `lock` (`pthread_spin_lock`, a test-and-test-and-set lock):
    /// if it is held, keep the CPU spinning — consuming CPU time, preemptible by the
    /// scheduler — until it is released to this task.
    SpinLock { lock: u32 },
    /// Release spin lock `lock`: it goes at once to the longest-waiting spinner that is
    /// running on a CPU; a spinner that is preempted cannot see the release, so the lock stays
    /// free until some spinner runs again (or a new one comes).
    SpinUnlock { lock: u32 },
    /// Take the spin lock of the CPU the task runs on, `base + cpu` (schbench's per-CPU lock
    /// around the math: `pthread_mutex_trylock` in a loop with `cpu_relax()`, then re-read
    /// the CPU and retry if it changed). A spinner that is moved to another CPU while it
    /// waits retries there, on that CPU's lock.
    PerCpuSpinLock { base: u32 },
    /// Release the per-CPU lock this task took with [`Op::PerCpuSpinLock`] (wherever it runs
    /// now: a holder may have been moved while it held it).
    PerCpuSpinUnlock,
    /// End the simulation now: the benchmark's measured run is over (schbench's main thread
    /// setting `stopping`); the teardown that follows is not simulated. The task exits.
    Stop,
}

/// A program: ops executed from index 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Program {
    pub name: String,
    pub ops: Vec<Op>,
}

/// The task's scheduling policy, as `sched_setattr()` sets `p->policy` (and
/// `p->rt_priority` for the RT policies, 1..=99, higher runs first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskPolicy {
    /// SCHED_NORMAL (SCHED_OTHER): the fair class.
    #[default]
    Normal,
    /// SCHED_BATCH: fair class, never preempts on wakeup.
    Batch,
    /// SCHED_IDLE: fair class with the minimum weight.
    Idle,
    /// SCHED_FIFO at `rt_priority`.
    Fifo { rt_priority: u8 },
    /// SCHED_RR at `rt_priority`.
    Rr { rt_priority: u8 },
}

impl TaskPolicy {
    /// The kernel's name of the policy (`SCHED_NORMAL`, ...), as `chrt` and
    /// `/proc/PID/sched` (`policy`) report it.
    pub fn kernel_name(self) -> &'static str {
        match self {
            TaskPolicy::Normal => "SCHED_NORMAL",
            TaskPolicy::Batch => "SCHED_BATCH",
            TaskPolicy::Idle => "SCHED_IDLE",
            TaskPolicy::Fifo { .. } => "SCHED_FIFO",
            TaskPolicy::Rr { .. } => "SCHED_RR",
        }
    }

    /// `rt_task(p)`: SCHED_FIFO or SCHED_RR.
    pub fn is_rt(self) -> bool {
        self.rt_priority().is_some()
    }

    /// `p->rt_priority` of an RT policy.
    pub fn rt_priority(self) -> Option<u8> {
        match self {
            TaskPolicy::Fifo { rt_priority } | TaskPolicy::Rr { rt_priority } => Some(rt_priority),
            _ => None,
        }
    }
}

/// The task's NUMA memory policy (`set_mempolicy()` / numactl): which nodes its pages come
/// from. Node sets are bitmasks of node ids (bit n = node n, so at most 64 nodes). Where the
/// pages land is decided when the task first runs (see `crate::engine::mempolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPolicy {
    /// MPOL_LOCAL (the default): first touch, pages on the node of the first CPU the task
    /// runs on.
    #[default]
    Local,
    /// MPOL_BIND (`numactl --membind`): pages only from these nodes, the nearest one to the
    /// running node first (the running node itself when it is in the set).
    Bind { nodes: u64 },
    /// MPOL_PREFERRED (`numactl --preferred`): pages from this node while it has memory.
    Preferred { node: u32 },
    /// MPOL_INTERLEAVE (`numactl --interleave`): pages round-robin over these nodes.
    Interleave { nodes: u64 },
}

/// How a task enters the simulation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskSpec {
    /// `comm`, as it would show in a trace.
    pub comm: String,
    pub program: ProgramId,
    pub nice: i8,
    /// CPUs the task may run on; `None` = all online CPUs.
    pub cpus_allowed: Option<CpuMask>,
    /// Time of the fork, or [`TaskSpec::START_ON_FORK_OP`]: forked by another task's
    /// [`Op::Fork`].
    pub start_ns: u64,
    /// CPU of the parent at fork time (fork placement starts from there).
    pub parent_cpu: usize,
    /// Cache footprint in KiB: what must be refilled after a migration.
    pub footprint_kib: u32,
    /// Scheduling policy (fair or RT).
    pub policy: TaskPolicy,
    /// NUMA memory policy.
    pub mempolicy: MemPolicy,
    /// The CPUs of the task's cpuset (`cpuset_cpus_allowed()`); `None` = all. Every affinity
    /// the task has or sets (`SetAffinity`) is intersected with it. Placement controls
    /// (`taskset`/`numactl` prefixes, `[workload] cpus`, per-group CPUs) set it, so that they
    /// bound benchmark-specific masks instead of being overridden by them.
    pub cpuset: Option<CpuMask>,
    /// Share of the task's run time that is memory stalls when every access is local, in
    /// permille (0..=1000; 0 = compute-bound: memory placement does not matter). Remote
    /// pages stretch that share by the node distance (`crate::cost::mem_time_scale_ppm`).
    pub mem_intensity_permille: u16,
    /// The task's memory as automatic NUMA balancing sees it (process, private and shared
    /// working sets, bandwidth). The default models none: only `mem_intensity_permille` and
    /// the first-touch node matter.
    pub memory: TaskMemory,
}

/// A task's memory for the dynamic memory model (issue 13): which process (mm) it belongs to,
/// what it touches, and how much bandwidth it asks for.
///
/// Threads of one process share the process's shared region; each thread has its own
/// private region. Sizes are in MiB; the memory model keeps them as 2 MiB page groups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskMemory {
    /// Process (mm) id within the workload: tasks with the same `Some(id)` share one mm and
    /// its shared region. `None` = a process of its own.
    pub process: Option<u32>,
    /// Private working set of this thread, MiB (touched only by it).
    pub private_mib: u32,
    /// Size of the process's shared region, MiB. Every thread of a process gives the same
    /// value (the first one to start maps it).
    pub shared_mib: u32,
    /// Share of this thread's memory accesses that go to the shared region, permille.
    pub shared_access_permille: u16,
    /// Memory bandwidth the thread consumes when it runs alone on local memory, MiB/s
    /// (0 = not bandwidth-bound).
    pub bandwidth_mib_s: u32,
    /// The shared region is a `MAP_SHARED` object mapped by every process giving the same
    /// key (e.g. nginx's shared zones): the same pages in each, each process with its own
    /// PTEs. `None` = the shared region is the process's own (its threads share it).
    pub shm_key: Option<u32>,
}

impl TaskSpec {
    /// `start_ns` of a task that another task forks with [`Op::Fork`].
    pub const START_ON_FORK_OP: u64 = u64::MAX;
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
