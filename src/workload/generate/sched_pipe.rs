//! `perf bench sched pipe` as task programs (the program: [`crate::workload::sched_pipe`]).
//!
//! Tasks, in creation order:
//! - **process mode** (default): task 0 is perf itself, which stamps the start (mark 0), forks
//!   ([`super::FORK_PROCESS_NS`] of its CPU) and then runs worker 1; task 1 is the child,
//!   worker 0, starting when the fork is done on the parent's CPU (`parent_cpu`, fork
//!   balancing places it). perf `waitpid()`s the child after its own loop: the child's exit
//!   ([`super::EXIT_PROCESS_NS`]) wakes it with WF_SYNC, as `__wake_up_parent()` does.
//! - **threaded** (`-T`): task 0 is perf's main thread: it stamps the start, creates worker 0
//!   then worker 1 ([`super::FORK_THREAD_NS`] each) and joins both; a thread's exit
//!   ([`super::EXIT_THREAD_NS`]) wakes the joiner through the `CLONE_CHILD_CLEARTID` futex,
//!   without WF_SYNC.
//!
//! Each pipe is a semaphore counting the `int`s in it (0 at start; one write never fills a
//! pipe, so writers never block). Worker 1, `loops` times: write pipe 1 — the write's CPU work
//! then a WF_SYNC `Up` (`pipe_write()` wakes the reader with
//! `wake_up_interruptible_sync_poll()`) — then read pipe 2 (`Down`, then the read's work, done
//! after the wakeup as `pipe_read()` copies after `wait_event`), and count one round trip.
//! Worker 0 mirrors it: read pipe 1, write pipe 2. Per-call work is the shared pipe costs
//! ([`super::PIPE_WRITE_NS`], [`super::PIPE_READ_NS`]) plus [`super::copy_ns`] of the 4-byte
//! payload. Scheduler costs (wakeup, block, switch) are the engine's. When the last worker
//! is reaped, task 0 samples metric `time` = now − mark 0 (the program's `gettimeofday`
//! interval).
//!
//! Hand-off: each `int` leaves `handoff_lines` dirty lines for its reader, paid by the
//! core-to-core distance (hackbench's module docs, "Hand-off").
//!
//! Left out: the `poll_usage`/`fasync` paths of `pipe_write()` (unused here), the first
//! write's page allocation (one `alloc_page()` per pipe, then reused), and perf's own start-up
//! before the clock starts (not part of the interval; its task-clock is a few ms).

use super::{PlanBuilder, Prog, copy_ns};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, SemId, TaskSpec};
use crate::topology::Machine;
use crate::workload::hackbench::HackbenchMode;
use crate::workload::sched_pipe::{PAYLOAD_BYTES, SchedPipeConfig};

/// Index of the task that samples metric `time` (perf itself, or its main thread).
pub const PARENT_TASK: usize = 0;
/// Name of the metric holding the measured interval.
pub const TIME_METRIC: &str = "time";
/// Cache footprint of each task (KiB): a stack, the `int`, the pipes' metadata and one pipe
/// page each.
pub const FOOTPRINT_KIB: u32 = 16;

/// Dirty lines one `int` leaves for the worker that reads it: hackbench's pipe exchange count
/// ([`super::hackbench::exchange_handoff_lines`]: the message, and the other pipe's mutex and
/// tail, which the poster touched last and the taker's next write touches).
fn handoff_lines() -> u16 {
    super::hackbench::exchange_handoff_lines(
        crate::workload::hackbench::HackbenchIpc::Pipe,
        PAYLOAD_BYTES,
    )
}

/// `write(fd, &m, sizeof(int))` on a pipe.
pub fn write_ns() -> u64 {
    super::PIPE_WRITE_NS + copy_ns(PAYLOAD_BYTES)
}

/// `read(fd, &m, sizeof(int))` on a pipe.
pub fn read_ns() -> u64 {
    super::PIPE_READ_NS + copy_ns(PAYLOAD_BYTES)
}

/// Worker 1's loop: write pipe 1, read pipe 2, count the round trip.
fn writer_loop(p: &mut Prog, loops: u32, [pipe1, pipe2]: [SemId; 2]) -> InputResult<()> {
    p.repeat(u64::from(loops), 0, "sched pipe worker 1", |p| {
        p.run(write_ns());
        p.push(Op::Up {
            sem: pipe1,
            sync: true,
        });
        p.push(Op::Down { sem: pipe2 });
        p.run(read_ns());
        p.push(Op::CountOp);
        Ok(())
    })
}

/// Worker 0's loop: read pipe 1, write pipe 2.
fn reader_loop(p: &mut Prog, loops: u32, [pipe1, pipe2]: [SemId; 2]) -> InputResult<()> {
    p.repeat(u64::from(loops), 0, "sched pipe worker 0", |p| {
        p.push(Op::Down { sem: pipe1 });
        // The read's copy-out, then the write's work: back to back on the same CPU.
        p.run(read_ns() + write_ns());
        p.push(Op::Up {
            sem: pipe2,
            sync: true,
        });
        Ok(())
    })
}

/// A worker's exit: its `do_exit()` work, then the wakeup of perf waiting to reap it.
fn exit(p: &mut Prog, mode: HackbenchMode, reaped: SemId) {
    let (work, sync) = match mode {
        HackbenchMode::Process => (super::EXIT_PROCESS_NS, true),
        HackbenchMode::Thread => (super::EXIT_THREAD_NS, false),
    };
    p.run(work);
    p.push(Op::Up { sem: reaped, sync });
    p.push(Op::Exit);
}

pub fn plan(cfg: &SchedPipeConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let lines = handoff_lines();
    let pipes = [b.sem_handing_off(0, lines), b.sem_handing_off(0, lines)];
    let reaped = b.sem(0);
    let time = b.metric(TIME_METRIC);
    let parent_cpu = super::creator_cpu(machine, None);
    let spawn = |b: &mut PlanBuilder, comm: &str, prog: Prog, start_ns: u64| {
        let program = b.program(comm, prog);
        b.task(TaskSpec {
            comm: comm.into(),
            program,
            nice: 0,
            cpus_allowed: None,
            start_ns,
            parent_cpu,
            footprint_kib: FOOTPRINT_KIB,
            ..Default::default()
        });
    };
    let finish_parent = |p: &mut Prog, children: u64| {
        for _ in 0..children {
            p.push(Op::Down { sem: reaped });
        }
        p.push(Op::Sample {
            slot: 0,
            metric: time,
        });
        p.push(Op::Exit);
    };

    let mut main = Prog::new();
    main.push(Op::Mark { slot: 0 });
    match cfg.mode {
        HackbenchMode::Process => {
            let fork = super::FORK_PROCESS_NS;
            main.run(fork);
            writer_loop(&mut main, cfg.loops, pipes)?;
            finish_parent(&mut main, 1);
            spawn(&mut b, "perf", main, 0);
            let mut child = Prog::new();
            reader_loop(&mut child, cfg.loops, pipes)?;
            exit(&mut child, cfg.mode, reaped);
            spawn(&mut b, "sched-pipe-0", child, fork);
        }
        HackbenchMode::Thread => {
            let create = super::FORK_THREAD_NS;
            main.run(2 * create);
            finish_parent(&mut main, 2);
            spawn(&mut b, "perf", main, 0);
            let mut w0 = Prog::new();
            reader_loop(&mut w0, cfg.loops, pipes)?;
            exit(&mut w0, cfg.mode, reaped);
            spawn(&mut b, "sched-pipe-0", w0, create);
            let mut w1 = Prog::new();
            writer_loop(&mut w1, cfg.loops, pipes)?;
            exit(&mut w1, cfg.mode, reaped);
            spawn(&mut b, "sched-pipe-1", w1, 2 * create);
        }
    }
    Ok(b.finish())
}
