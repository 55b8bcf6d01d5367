//! hackbench (all three programs) as task programs (reference/workloads.md §2.2–2.5).
//!
//! Tasks, in creation order: the parent (task 0, on CPU 0), then per group its F receivers
//! and F senders, each forked by the parent (`parent_cpu` 0), `fork_ns` apart — the parent
//! spends that long in `fork()`/`pthread_create()` per child before the children exist.
//!
//! - **Start barrier.** Each child writes one byte to the shared "ready" fd (a WF_SYNC wakeup of
//!   the parent blocked reading it) and polls the "wake" fd. The parent reads one byte per
//!   child, takes the start time (mark 0), writes the wake fd — one write wakes every poller,
//!   each with WF_SYNC (`pipe_write()` → `wake_up_interruptible_sync_poll()`), modelled as a
//!   sync `UpMany` of 2·F·G units — and reaps every child.
//! - **Data path.** Each receiver's fd pair is two semaphores: `data` (messages queued, 0 at
//!   start) and `space` (free room in messages). A sender, `loops` times, writes one message
//!   to each receiver of its group in turn (`Down(space)`, the write's CPU work, a WF_SYNC
//!   `Up(data)` — `sock_def_readable()`/`pipe_write()` use the sync wakeup). A receiver reads
//!   F·loops messages (`Down(data)`, the read's work, `CountOp`) and returns the space: for
//!   sockets with `UpThreshold` (writers blocked on a full buffer, waiting non-exclusively,
//!   all wake once enough is free again); for pipes with `UpPage` (room comes back a page at
//!   a time; writers wait exclusively since v5.5, so a read from a full pipe wakes one writer,
//!   which re-checks and may wait again, and a writer that waited wakes the next one after
//!   its write, `WakeNext`: `pipe_read()`'s `was_full`, `pipe_write()`'s `wake_next_writer`).
//! - **Stop time.** The parent reaps all children (`Down(reaped)` per child; each child's last
//!   act is its exit work then a post), then samples metric `time` = now − mark 0.
//!
//! Buffer capacities, in messages of `d` bytes (why: the kernel's accounting, not measured):
//! - AF_UNIX stream: every write is one skb charged to the *shared* write end's
//!   `sk_wmem_alloc` at its truesize, `SKB_TRUESIZE` = 256 bytes of `struct sk_buff` plus the
//!   kmalloc'ed head (data + 320 bytes of `skb_shared_info`, rounded up to the slab size).
//!   A writer blocks when `wmem ≥ sk_sndbuf` (`net.core.wmem_default` = 212992), and
//!   `unix_write_space()` wakes writers only once `wmem ≤ sndbuf/4` (`unix_writable()`).
//!   100-byte messages: truesize 768, 277 messages, writers woken with ≤ 69 queued.
//! - pipe: 16 slots of a 4 KiB page; small writes merge into the last page if they fit
//!   whole, so ⌊4096/d⌋ messages per page; a read's room is reusable only once its whole
//!   page is read (the slot is freed). Writers blocked on a full pipe are woken one at a
//!   time (see "Data path").
//! - inet (rt-tests `-i`, TCP over loopback): TCP coalesces small writes, so the limit is the
//!   byte budget, ~128 KiB (`tcp_rmem[1]` with loopback autotuning) at `d` + 64 bytes of
//!   framing each; `sk_stream_write_space()` wakes writers once a third is free. Rough.
//!
//! Per-message CPU work (reference CPU, plus [`super::copy_ns`] for the payload; typical
//! syscall costs on current x86 servers with mitigations, e.g. lmbench/perf measurements of
//! small AF_UNIX and pipe transfers): AF_UNIX write 2.0 µs (skb alloc, copy, queue, wakeup
//! callback) and read 1.5 µs; pipe write 1.0 µs and read 0.9 µs ([`super::PIPE_WRITE_NS`],
//! [`super::PIPE_READ_NS`], shared with `perf bench sched pipe`); TCP loopback write 4.0 µs
//! (it also runs the receive softirq on the sender's CPU) and read 1.5 µs.
//!
//! Process vs thread mode: the scheduler sees the same tasks; only fork and exit costs
//! differ (a process fork copies page tables, 60 µs vs 15 µs for `pthread_create`; exit
//! tears down the mm, 40 µs vs 8 µs: [`super::FORK_PROCESS_NS`] and its neighbours). The cache footprint is the same small working set
//! (stack, buffer, socket metadata: 16 KiB) — the switch_mm/TLB cost of crossing address
//! spaces is not modelled.
//!
//! Memory traffic (`numactl --membind`): a receiver's read of one message touches the
//! message's lines in its buffer — for AF_UNIX the `struct sk_buff` (256 bytes, 4 lines),
//! the payload (`⌈d/64⌉` lines) and the first line of `skb_shared_info` (its `dataref`,
//! dropped by `consume_skb()`); for a pipe the payload in the pipe page; for TCP the payload
//! and its share of framing (`⌈(d+64)/64⌉`). Queued messages of all receivers form a working
//! set of `receivers × full buffer` bytes (senders keep the buffers full); whatever of it
//! does not fit the LLC of the CPUs the tasks may use is read from DRAM
//! ([`crate::memory::traffic`]: capacity-miss ratio × lines × the local DRAM latency). That
//! stall is the receivers' `mem_intensity_permille` share of a read, which the engine
//! stretches by the SLIT distance to the node holding the memory. Applied only under an
//! explicit memory policy ([`apply_message_traffic`]): `alloc_pages()` allocates the slab
//! pages of skbs and the pipe pages under the allocating task's policy (outside interrupts),
//! so `--membind=N` puts every buffer on N — the per-task page shares the engine keeps
//! describe exactly that. Under the default local policy each skb lands on its sender's
//! node at the time of the write, which per-task page shares cannot follow; that case keeps
//! no memory cost (as before). The senders' writes fill objects just freed by readers (SLUB
//! reuses its per-CPU freelist last-in first-out), so the sender's own allocations stay cached.
//!
//! Hand-off (any memory policy): what a sender writes, a receiver on another core reads out of
//! the sender's cache, and the counters a read frees travel back the same way. Each `data`
//! post leaves [`message_handoff_lines`] dirty lines for the receiver that takes it, each
//! `space` post [`SPACE_HANDOFF_LINES`] for the sender; a taker pays one core-to-core transfer
//! per line when it runs on a CPU sharing no private cache with the poster
//! ([`crate::cost::CostModel::handoff_line_ns`]: the preset family's published core-to-core
//! latencies), and nothing on the same core. The lines are counted as the reads depend on
//! each other: AF_UNIX data 5 — the receive queue's lock and list head, the `sk_buff` (two
//! of its four lines, the others fetched beside them), the payload, and the
//! `skb_shared_info` line `consume_skb()` drops; pipe data 3 — the pipe's mutex, the
//! `pipe_buffer` slot and ring head, the payload; TCP data 5 as AF_UNIX, with the socket lock
//! for the queue lock. A payload longer than 8 lines adds one transfer per 8 (a copy keeps
//! about 8 misses in flight). Space 2 on every kind: the writer's accounting (`sk_wmem_alloc`
//! or the pipe's tail), freed by the reader, and the lock the reader held last. Not counted
//! apart: the wait-queue and task lines of the wakeup itself (the IPI and remote-lock costs
//! cover the waker's side).
//!
//! Left out: rt-tests `-F` (SCHED_FIFO parent: only the fair class is simulated); partial
//! reads of stream sockets (one read = one message's bytes, which is what the receiver's
//! read loop amounts to); join-in-order for threads (the parent reaps in exit order).

use super::{PlanBuilder, Prog, copy_ns};
use crate::cost::CostModel;
use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::memory::traffic;
use crate::task::{MemPolicy, Op, ProgramId, SemId, TaskSpec};
use crate::topology::Machine;
use crate::workload::hackbench::{HackbenchConfig, HackbenchIpc, HackbenchMode};

/// `net.core.wmem_default`: the AF_UNIX write end's `sk_sndbuf`.
pub const UNIX_SNDBUF_BYTES: u64 = 212_992;
/// Byte budget of a loopback TCP connection (see module docs).
pub const INET_BUDGET_BYTES: u64 = 131_072;
/// Pipe: 16 slots (`PIPE_DEF_BUFFERS`) of one 4 KiB page.
pub const PIPE_SLOTS: u64 = 16;
pub const PAGE_BYTES: u64 = 4096;

/// Cache footprint of every hackbench task (KiB).
pub const FOOTPRINT_KIB: u32 = 16;

/// Dirty lines one message leaves for its receiver (module docs, "Hand-off").
pub fn message_handoff_lines(ipc: HackbenchIpc, bytes: u64) -> u16 {
    let fixed = match ipc {
        HackbenchIpc::Socket | HackbenchIpc::Inet => 4,
        HackbenchIpc::Pipe => 2,
    };
    let payload_lines = bytes.div_ceil(64).max(1);
    let payload = payload_lines.div_ceil(8);
    u16::try_from(fixed + payload).unwrap_or(u16::MAX)
}

/// Dirty lines a read's freed space leaves for the next writer, on every IPC kind: the
/// writer's accounting (`sk_wmem_alloc` or the pipe's tail) and the lock the reader held last
/// (module docs, "Hand-off").
pub const SPACE_HANDOFF_LINES: u16 = 2;

/// Dirty lines one message of a request/response exchange leaves for its taker: the
/// message's lines and the space lines, which the taker touches in its own reply right after
/// (`perf bench sched pipe`, netperf/tbench).
pub fn exchange_handoff_lines(ipc: HackbenchIpc, bytes: u64) -> u16 {
    message_handoff_lines(ipc, bytes).saturating_add(SPACE_HANDOFF_LINES)
}

/// Per-message CPU work of a write/read, in ns, by IPC kind (see module docs).
pub fn write_ns(ipc: HackbenchIpc, bytes: u64) -> u64 {
    let base = match ipc {
        HackbenchIpc::Socket => 2_000,
        HackbenchIpc::Pipe => super::PIPE_WRITE_NS,
        HackbenchIpc::Inet => 4_000,
    };
    base + copy_ns(bytes)
}

pub fn read_ns(ipc: HackbenchIpc, bytes: u64) -> u64 {
    let base = match ipc {
        HackbenchIpc::Socket => 1_500,
        HackbenchIpc::Pipe => super::PIPE_READ_NS,
        HackbenchIpc::Inet => 1_500,
    };
    base + copy_ns(bytes)
}

/// One message's write and read work on this machine: [`write_ns`] and [`read_ns`], the
/// AF_UNIX ones scaled by the machine's `af_unix_cost_pct` (the cost model's; pipes and
/// TCP keep the reference figures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgCosts {
    pub write_ns: u64,
    pub read_ns: u64,
}

impl MsgCosts {
    pub fn of(cfg: &HackbenchConfig, af_unix_cost_pct: u32) -> MsgCosts {
        let d = u64::from(cfg.data_size_bytes);
        let scale = |ns: u64| match cfg.ipc {
            HackbenchIpc::Socket => ns * u64::from(af_unix_cost_pct) / 100,
            HackbenchIpc::Pipe | HackbenchIpc::Inet => ns,
        };
        MsgCosts {
            write_ns: scale(write_ns(cfg.ipc, d)),
            read_ns: scale(read_ns(cfg.ipc, d)),
        }
    }
}

/// Creating one child (fork or pthread_create), parent CPU work.
pub fn fork_ns(mode: HackbenchMode) -> u64 {
    match mode {
        HackbenchMode::Process => super::FORK_PROCESS_NS,
        HackbenchMode::Thread => super::FORK_THREAD_NS,
    }
}

/// A child's exit (do_exit; mm teardown for processes).
pub fn exit_ns(mode: HackbenchMode) -> u64 {
    match mode {
        HackbenchMode::Process => super::EXIT_PROCESS_NS,
        HackbenchMode::Thread => super::EXIT_THREAD_NS,
    }
}

/// `SKB_TRUESIZE` of one AF_UNIX skb carrying `d` bytes: 256 + the slab size of the head.
pub fn unix_skb_truesize(d: u64) -> u64 {
    let head = d.div_ceil(64) * 64 + 320;
    let slab = if head <= 8192 {
        head.next_power_of_two().max(512)
    } else {
        head.div_ceil(PAGE_BYTES) * PAGE_BYTES
    };
    256 + slab
}

/// (capacity, wake threshold) of one receiver's buffer, in messages of `d` bytes: writers
/// block when `capacity` messages are queued; a blocked writer is woken once at least
/// `threshold` messages' worth of room is free.
pub fn buffer_messages(ipc: HackbenchIpc, d: u64) -> (u64, u64) {
    let d = d.max(1);
    match ipc {
        HackbenchIpc::Socket => {
            let t = unix_skb_truesize(d);
            let cap = (UNIX_SNDBUF_BYTES / t).max(1);
            // Writable again when wmem <= sndbuf / 4.
            let queued_ok = UNIX_SNDBUF_BYTES / 4 / t;
            (cap, (cap - queued_ok.min(cap)).max(1))
        }
        HackbenchIpc::Pipe => {
            if d <= PAGE_BYTES {
                let per_page = PAGE_BYTES / d;
                (PIPE_SLOTS * per_page, per_page)
            } else {
                let pages = d.div_ceil(PAGE_BYTES);
                ((PIPE_SLOTS / pages).max(1), 1)
            }
        }
        HackbenchIpc::Inet => {
            let cap = (INET_BUDGET_BYTES / (d + 64)).max(1);
            (cap, (cap / 3).max(1))
        }
    }
}

/// `sizeof(struct sk_buff)` on x86-64 (the `SKB_TRUESIZE` overhead above).
pub const SKB_STRUCT_BYTES: u64 = 256;
/// Per-message TCP framing counted for loopback (see the buffer capacities).
pub const INET_FRAMING_BYTES: u64 = 64;

/// Cache lines of one queued message a receiver's read touches (see the module docs).
pub fn read_lines(ipc: HackbenchIpc, d: u64) -> u64 {
    match ipc {
        HackbenchIpc::Socket => traffic::lines(SKB_STRUCT_BYTES) + traffic::lines(d) + 1,
        HackbenchIpc::Pipe => traffic::lines(d),
        HackbenchIpc::Inet => traffic::lines(d + INET_FRAMING_BYTES),
    }
}

/// Bytes of one receiver's buffer when full: messages × AF_UNIX truesize, the pipe's pages,
/// or TCP's byte budget as used.
pub fn full_buffer_bytes(ipc: HackbenchIpc, d: u64) -> u64 {
    let d = d.max(1);
    let (cap, _) = buffer_messages(ipc, d);
    match ipc {
        HackbenchIpc::Socket => cap * unix_skb_truesize(d),
        HackbenchIpc::Pipe => {
            cap.div_ceil((PAGE_BYTES / d).max(1)) * d.div_ceil(PAGE_BYTES).max(1) * PAGE_BYTES
        }
        HackbenchIpc::Inet => cap * (d + INET_FRAMING_BYTES),
    }
}

/// What one read costs in memory stalls with local memory, and its share of the read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadTraffic {
    /// Lines of the message the read touches.
    pub lines: u64,
    /// Bytes queued in all receivers' buffers (the working set).
    pub in_flight_bytes: u64,
    /// Share of those lines read from DRAM.
    pub miss_ratio: f64,
    /// `lines · miss · latency` (ns).
    pub stall_local_ns: f64,
    /// The stall's share of [`read_ns`], in permille (the receivers' memory intensity).
    pub stall_permille: u16,
}

/// [`ReadTraffic`] of `cfg` with `llc_bytes` of last-level cache and a local DRAM latency of
/// `latency_local_ns`.
pub fn read_traffic(cfg: &HackbenchConfig, llc_bytes: u64, latency_local_ns: u64) -> ReadTraffic {
    let d = u64::from(cfg.data_size_bytes);
    let receivers = u64::from(cfg.groups) * u64::from(cfg.fds);
    let in_flight_bytes = receivers * full_buffer_bytes(cfg.ipc, d);
    let lines = read_lines(cfg.ipc, d);
    let miss_ratio = traffic::capacity_miss_ratio(in_flight_bytes, llc_bytes);
    let stall_local_ns = traffic::stall_local_ns(lines, miss_ratio, latency_local_ns);
    ReadTraffic {
        lines,
        in_flight_bytes,
        miss_ratio,
        stall_local_ns,
        stall_permille: traffic::stall_share_permille(stall_local_ns, read_ns(cfg.ipc, d)),
    }
}

/// Whether task `i` of [`plan`]'s output is a receiver (parent first, then per group F
/// receivers and F senders).
pub fn is_receiver(cfg: &HackbenchConfig, i: usize) -> bool {
    let f = cfg.fds as usize;
    i > PARENT_TASK && (i - 1) % (2 * f) < f
}

/// Give the receivers of a placed plan their memory intensity from [`read_traffic`], where
/// an explicit memory policy (`numactl --membind/--preferred/--interleave`) decides where
/// the buffers live and no intensity was set by hand (module docs). The LLC is that of the
/// CPUs the tasks may run on (`cost.llc_kib_per_cpu` each).
pub fn apply_message_traffic(
    plan: &mut WorkloadPlan,
    cfg: &HackbenchConfig,
    machine: &Machine,
    cost: &CostModel,
) {
    let cpus = plan.tasks.iter().fold(CpuMask::new(), |m, t| {
        m.or(&t.cpuset.unwrap_or(machine.online).and(&machine.online))
    });
    let llc_bytes = cpus.weight() as u64 * cost.llc_kib_per_cpu * 1024;
    let t = read_traffic(cfg, llc_bytes, cost.mem_latency_local_ns);
    for (i, task) in plan.tasks.iter_mut().enumerate() {
        if is_receiver(cfg, i) && task.mempolicy != MemPolicy::Local {
            debug_assert!(
                task.comm.starts_with("receiver-"),
                "task {i} is {}",
                task.comm
            );
            if task.mem_intensity_permille == 0 {
                task.mem_intensity_permille = t.stall_permille;
            }
        }
    }
}

/// Index of the parent task (it samples metric `time`).
pub const PARENT_TASK: usize = 0;
/// Name of the metric holding the measured interval.
pub const TIME_METRIC: &str = "time";

/// The parent: forks every child, waits for all at the start barrier, stamps the start,
/// releases them at once, reaps them and samples the interval (hackbench's `Time:`).
fn parent_prog(
    nr_children: u64,
    fork: u64,
    [ready, wake, reaped]: [SemId; 3],
    time: u8,
) -> InputResult<Prog> {
    let mut p = Prog::new();
    p.run(fork * nr_children);
    p.repeat(nr_children, 0, "hackbench start barrier", |p| {
        p.push(Op::Down { sem: ready });
        Ok(())
    })?;
    p.push(Op::Mark { slot: 0 });
    let mut left = nr_children;
    while left > 0 {
        let n = left.min(u64::from(u32::MAX));
        // pipe_write() wakes the pollers with wake_up_interruptible_sync_poll(): WF_SYNC.
        p.push(Op::UpMany {
            sem: wake,
            n: n as u32,
            sync: true,
        });
        left -= n;
    }
    p.repeat(nr_children, 0, "hackbench reaping", |p| {
        p.push(Op::Down { sem: reaped });
        Ok(())
    })?;
    p.push(Op::Sample {
        slot: 0,
        metric: time,
    });
    p.push(Op::Exit);
    Ok(p)
}

/// What every child shares with the parent: the start barrier's and the reaping semaphores,
/// and its exit work.
#[derive(Clone, Copy)]
struct ChildSync {
    ready: SemId,
    wake: SemId,
    reaped: SemId,
    exit_ns: u64,
}

impl ChildSync {
    /// Start barrier: one byte to "ready" (a WF_SYNC wakeup of the parent), then poll "wake".
    fn start(&self, p: &mut Prog) {
        p.push(Op::Up {
            sem: self.ready,
            sync: true,
        });
        p.push(Op::Down { sem: self.wake });
    }

    /// The child's exit work, then the post the parent reaps.
    fn finish(&self, p: &mut Prog) {
        p.run(self.exit_ns);
        p.push(Op::Up {
            sem: self.reaped,
            sync: false,
        });
        p.push(Op::Exit);
    }
}

/// A receiver: F·loops reads of its fd pair (`data`, `space`), returning the space with
/// `UpThreshold` so blocked writers wake only when `threshold` messages' room is free.
fn receiver_prog(
    cfg: &HackbenchConfig,
    msg: MsgCosts,
    sync: ChildSync,
    [data, space]: [SemId; 2],
    threshold: u64,
) -> InputResult<Prog> {
    let fds = u64::from(cfg.fds);
    let mut p = Prog::new();
    sync.start(&mut p);
    p.repeat(fds * u64::from(cfg.loops), 0, "hackbench receiver", |p| {
        p.push(Op::Down { sem: data });
        p.run(msg.read_ns);
        p.push(release_space(cfg.ipc, space, threshold));
        p.push(Op::CountOp);
        Ok(())
    })?;
    sync.finish(&mut p);
    Ok(p)
}

/// How a receiver returns one message's room to its writers (module docs, "Data path"):
/// - AF_UNIX and TCP: the room is free at once; blocked writers, who wait non-exclusively
///   (`sock_wait_for_wmem()`, `sk_stream_wait_memory()`), all wake once `threshold`
///   messages' room is free (`unix_writable()`, `sk_stream_write_space()`);
/// - pipe: the room comes back a page (`threshold` messages) at a time, and writers wait
///   exclusively: a read from a full pipe wakes one writer, and the writers chain
///   ([`Op::UpPage`], [`Op::WakeNext`]).
fn release_space(ipc: HackbenchIpc, space: SemId, threshold: u64) -> Op {
    let threshold = u32::try_from(threshold).unwrap_or(u32::MAX);
    match ipc {
        HackbenchIpc::Pipe => Op::UpPage {
            sem: space,
            sync: true,
            page: threshold,
        },
        HackbenchIpc::Socket | HackbenchIpc::Inet => Op::UpThreshold {
            sem: space,
            sync: true,
            min_count: threshold,
        },
    }
}

/// A sender: `loops` times, one message to each receiver of its group in turn.
fn sender_prog(
    cfg: &HackbenchConfig,
    msg: MsgCosts,
    sync: ChildSync,
    data: &[SemId],
    space: &[SemId],
) -> InputResult<Prog> {
    let mut p = Prog::new();
    sync.start(&mut p);
    p.repeat(u64::from(cfg.loops), 0, "hackbench sender", |p| {
        for j in 0..cfg.fds as usize {
            p.push(Op::Down { sem: space[j] });
            p.run(msg.write_ns);
            p.push(Op::Up {
                sem: data[j],
                sync: true,
            });
            if cfg.ipc == HackbenchIpc::Pipe {
                // `wake_next_writer`: a writer that waited for room wakes the next one.
                p.push(Op::WakeNext {
                    sem: space[j],
                    sync: true,
                });
            }
        }
        Ok(())
    })?;
    sync.finish(&mut p);
    Ok(p)
}

/// The spec of a hackbench task (the parent or a child) created at `start_ns`.
fn hackbench_task(comm: String, program: ProgramId, start_ns: u64, parent_cpu: usize) -> TaskSpec {
    TaskSpec {
        comm,
        program,
        nice: 0,
        cpus_allowed: None,
        start_ns,
        parent_cpu,
        footprint_kib: FOOTPRINT_KIB,
        ..Default::default()
    }
}

pub fn plan(
    cfg: &HackbenchConfig,
    machine: &Machine,
    af_unix_cost_pct: u32,
) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let msg = MsgCosts::of(cfg, af_unix_cost_pct);
    let fds = u64::from(cfg.fds);
    let nr_children = cfg.nr_tasks();
    let d = u64::from(cfg.data_size_bytes);
    let (cap, threshold) = buffer_messages(cfg.ipc, d);
    let fork = fork_ns(cfg.mode);
    let parent_cpu = super::creator_cpu(machine, None);

    let ready = b.sem(0);
    let wake = b.sem(0);
    let reaped = b.sem(0);
    let time = b.metric(TIME_METRIC);

    let p = parent_prog(nr_children, fork, [ready, wake, reaped], time)?;
    let prog = b.program("hackbench", p);
    b.task(hackbench_task("hackbench".into(), prog, 0, parent_cpu));

    let sync = ChildSync {
        ready,
        wake,
        reaped,
        exit_ns: exit_ns(cfg.mode),
    };
    let mut child = 0u64;
    for g in 0..cfg.groups {
        b.set_group(Some(g));
        let data_lines = message_handoff_lines(cfg.ipc, d);
        let space_lines = SPACE_HANDOFF_LINES;
        let data: Vec<u32> = (0..fds).map(|_| b.sem_handing_off(0, data_lines)).collect();
        let space: Vec<u32> = (0..fds)
            .map(|_| b.sem_handing_off(cap, space_lines))
            .collect();
        let mut spawn = |b: &mut PlanBuilder, comm: String, prog: Prog| {
            child += 1;
            let id = b.program(comm.clone(), prog);
            b.task(hackbench_task(comm, id, child * fork, parent_cpu));
        };
        for r in 0..fds as usize {
            let p = receiver_prog(cfg, msg, sync, [data[r], space[r]], threshold)?;
            spawn(&mut b, format!("receiver-{g}-{r}"), p);
        }
        for s in 0..fds {
            let p = sender_prog(cfg, msg, sync, &data, &space)?;
            spawn(&mut b, format!("sender-{g}-{s}"), p);
        }
    }
    Ok(b.finish())
}
