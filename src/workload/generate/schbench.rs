//! schbench (current and classic) as task programs (reference/workloads.md §1.3–1.7, 1.10;
//! masoncl/schbench `schbench.c`).
//!
//! Tasks, in creation order: the main (stats) thread (task 0, CPU 0), then per message thread
//! i: the message thread, then its t workers. [`Layout`] gives the indices.
//!
//! **Saturate mode** (the default). Semaphores per message thread: `msg` (the message
//! thread's futex: one unit per queued worker) and `gate` (the workers' futexes); the message
//! thread has a private `batch` counter.
//! - Worker: `Mark 0` (its `wake_time` placeholder), `Up(msg)` (queue itself and `fpost` the
//!   message thread), `Down(gate)` (`fwait`), `Sample 0 → wakeup`; then the request: `Mark 1`
//!   (`work_start`), `Sleep(-s)` (usleep, with the timer slack), the matrix work, `Sample 1 →
//!   request`, `CountOp` (`loop_count++`). With `-C` the usleep comes before `Mark 1`.
//! - Message thread: `Down(msg)` (fwait until a worker posted), `DownAll(msg → batch)` (splice
//!   the rest of the list: later arrivals wait for the next batch, as in `xlist_splice()`),
//!   `Mark 0` (one timestamp for the batch), then per queued worker: the FUTEX_WAKE syscall's
//!   own work, `UpStamped(gate, mark 0)` — each wakee's `wake_time` is the batch timestamp, so
//!   a worker late in a big batch also counts the waker's earlier wakes, as intended.
//! - Main thread: one pass per second like `sleep_for_runtime()`: `Snapshot` (the RPS sample
//!   and, every `-i` seconds, the interval report's data), `Sleep(1 s)`; after the pass that
//!   sees `-r` seconds, `Stop`.
//!
//! **RPS mode** (`-R`): each message thread, once per 1 s window (`TimerWait`), posts
//! `rps/m` requests round-robin over its workers (`Mark 0` + `UpStamped(req[w])`, a per-worker
//! request counter). A worker takes its queued requests back to back (`TryDown`) and only when
//! none are left blocks (`Down`) — so only the first request after a block gives a wakeup
//! sample. **Pipe mode** (`-p B`): no sleep and no math; the worker memsets B bytes before
//! queueing, the message thread memsets B bytes per wakee and stamps each one separately.
//! **Classic** (2016–2020): workers spin `-c` µs then queue/post/wait, recording the wakeup
//! latency; the message thread wakes its batch, waits for a post, then sleeps
//! `-s + rand() % (-s/4)` µs (a seeded cycle of 64 jitter values); main sleeps `-r` s and stops.
//!
//! Costs (reference CPU, see [`super`]): one naive matrix multiply of side n is n³
//! multiply-adds at 1.45 ns each (column-strided loads of `m2`) — measured on the reference
//! machine: `schbench -m 1 -t 1 -r 5` (`-n 5 -F 256`, 5 × 104³ MACs per request) on a quiet
//! machine gave request-latency p50 of 8.14, 8.78 and 7.59 ms (mean 8.17 ms, of which 0.1 ms is
//! the `-s` usleep) = 1.44 ns per MAC. schbench's README says "about 17 ms" on its author's
//! machine (3 ns per MAC); a FUTEX_WAKE syscall 1 µs besides the wakeup
//! path the engine charges; memset at [`super::copy_ns`]; `pthread_create` 15 µs.
//! Worker footprint: the three matrices (3·8·n² bytes) when `-n` > 0, else 8 KiB of stack.
//!
//! User-space work besides the math (current schbench; `[workload] request_user_ns`,
//! `request_user_cv_pct`, `wake_user_ns`, defaults and their measurement in
//! [`crate::workload::schbench::REQUEST_USER_NS`]): a worker runs half of its per-request
//! bookkeeping between its wakeup sample and `Mark 1` (`gettimeofday()`, `add_lat()`, the
//! `usleep()` wrapper) and half after the request sample (`add_lat()`, `gettimeofday()`,
//! `xlist_add()`/`fpost()` CAS) before it queues itself again; each half is a fixed part plus
//! an exponential part drawn per request, so per seed the amounts differ and repeat exactly.
//! The message thread runs `batch_user_ns` per batch, between the splice and the batch's
//! timestamp, and `wake_user_ns` per worker it wakes, before the FUTEX_WAKE (RPS mode: per
//! posted request).
//! Approximation: the split into halves is by the profile's symbols (about even), not exact.
//!
//! Approximations (and why):
//! - Workers queue FIFO on one gate semaphore, so the longest-waiting worker is woken first;
//!   the program's list is LIFO. Workers are interchangeable, so only which CPU's cache is
//!   reused first differs.
//! - The per-CPU lock around the math (no `-L`): the program's `pthread_mutex_trylock` loop
//!   with `cpu_relax()` is a spin lock per CPU ([`Op::PerCpuSpinLock`]): a waiter burns its
//!   CPU until the holder (preempted or not) releases it; a waiter moved to another CPU
//!   retries on that CPU's lock, as the program's re-read of its CPU makes it. The mutex's
//!   futex path is not taken (trylock never sleeps).
//! - The first worker's `fpost` FUTEX_WAKE syscall cost is not charged (only the CAS).
//! - RPS mode: each window restarts the round-robin at worker 0; the "more than 128 pending"
//!   back-off is not modelled. `-A` (auto-RPS from /proc/stat) and `-z` are refused/ignored
//!   (see [`plan`]).
//! - Message threads start pinned (the program pins them after creating their workers).

use super::{PlanBuilder, Prog, copy_ns, creator_cpu};
use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::error::{InputError, InputResult};
use crate::rng::{RngStream, StreamKind};
use crate::task::{Op, SemId, TaskSpec};
use crate::topology::Machine;
use crate::workload::schbench::{SchbenchConfig, SchbenchVersion};

/// Work of one multiply-add of the naive matrix product (see module docs).
pub const MATRIX_PS_PER_MAC: u64 = 1_450;
/// FUTEX_WAKE syscall work besides the wakeup itself.
pub const FUTEX_WAKE_NS: u64 = 1_000;
/// `pthread_create` work in the creating thread.
pub const THREAD_CREATE_NS: u64 = super::FORK_THREAD_NS;
/// Stack and bookkeeping footprint of a thread that touches no matrices (KiB).
pub const SMALL_FOOTPRINT_KIB: u32 = 8;

pub const WAKEUP_METRIC: &str = "wakeup_latency";
pub const REQUEST_METRIC: &str = "request_latency";

/// Where each thread sits in the task table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub message_threads: u32,
    pub workers_per_message_thread: u32,
}

impl Layout {
    pub fn of(cfg: &SchbenchConfig) -> Self {
        Layout {
            message_threads: cfg.message_threads,
            workers_per_message_thread: cfg.workers_per_message_thread,
        }
    }

    pub const MAIN: usize = 0;

    /// Task index of message thread `i`.
    pub fn message(&self, i: u32) -> usize {
        1 + i as usize * (1 + self.workers_per_message_thread as usize)
    }

    /// Task index of worker `w` of message thread `i`.
    pub fn worker(&self, i: u32, w: u32) -> usize {
        self.message(i) + 1 + w as usize
    }

    pub fn nr_tasks(&self) -> usize {
        1 + self.message_threads as usize * (1 + self.workers_per_message_thread as usize)
    }
}

/// Reference-CPU work of one request's math.
pub fn request_work_ns(cfg: &SchbenchConfig) -> u64 {
    let cube = |n: u64| n * n * n;
    let macs = match cfg.split_matrix_sizes() {
        Some((private, shared)) => {
            let p = u64::from(cfg.split_private_pct.unwrap_or(100));
            let ops_private = cfg.operations * p / 100;
            let ops_shared = cfg.operations - ops_private;
            ops_private * cube(private) + ops_shared * cube(shared)
        }
        None => cfg.operations * cube(cfg.matrix_size()),
    };
    (macs as u128 * MATRIX_PS_PER_MAC as u128 / 1000).min(u64::MAX as u128) as u64
}

/// A worker's cache footprint in KiB.
pub fn worker_footprint_kib(cfg: &SchbenchConfig) -> u32 {
    if cfg.operations == 0 || cfg.version != SchbenchVersion::Current {
        return SMALL_FOOTPRINT_KIB;
    }
    let n = match cfg.split_matrix_sizes() {
        Some((p, _)) => p,
        None => cfg.matrix_size(),
    };
    ((3 * 8 * n * n) / 1024).clamp(u64::from(SMALL_FOOTPRINT_KIB), u64::from(u32::MAX)) as u32
}

pub fn plan(cfg: &SchbenchConfig, machine: &Machine, seed: u64) -> InputResult<WorkloadPlan> {
    check_modes(cfg)?;
    let nr_cpus = machine.nr_cpus();
    let mut b = PlanBuilder::new();
    let metrics = Metrics {
        wakeup: b.metric(WAKEUP_METRIC),
        request: if cfg.version == SchbenchVersion::Current {
            Some(b.metric(REQUEST_METRIC))
        } else {
            None
        },
    };
    let shared = Shared {
        machine,
        main_cpu: creator_cpu(machine, None),
        worker_mask: cfg.worker_mask(nr_cpus),
        work_ns: request_work_ns(cfg),
        footprint_kib: worker_footprint_kib(cfg),
        metrics,
    };
    let mut rng = RngStream::new(seed, StreamKind::Workload, 0);

    // Main thread.
    let id = b.program("schbench", main_program(cfg));
    b.task(TaskSpec {
        comm: "schbench".into(),
        program: id,
        nice: 0,
        cpus_allowed: None,
        start_ns: 0,
        parent_cpu: shared.main_cpu,
        footprint_kib: SMALL_FOOTPRINT_KIB,
        ..Default::default()
    });

    for i in 0..cfg.message_threads {
        add_message_thread(&mut b, cfg, i, &shared, &mut rng)?;
    }
    let mut plan = b.finish();
    // One lock per CPU (the program's `per_cpu_locks[get_nprocs()]`).
    plan.nr_spinlocks = plan.nr_spinlocks.max(nr_cpus);
    Ok(plan)
}

/// What [`plan`] computes once for every message thread and its workers.
struct Shared<'a> {
    machine: &'a Machine,
    /// The CPU the main thread is created from (and creates the message threads from).
    main_cpu: usize,
    worker_mask: Option<CpuMask>,
    /// Reference-CPU work of one request's math ([`request_work_ns`]).
    work_ns: u64,
    /// A worker's cache footprint ([`worker_footprint_kib`]).
    footprint_kib: u32,
    metrics: Metrics,
}

/// The main thread: the statistics loop (current, e4aa540), or sleep for `-r` then stop
/// (classic).
fn main_program(cfg: &SchbenchConfig) -> Prog {
    let mut p = Prog::new();
    if cfg.version == SchbenchVersion::Current {
        stats_thread(&mut p, cfg);
    } else if cfg.version == SchbenchVersion::Interim2021 {
        interim2021_stats_thread(&mut p, cfg);
    } else {
        p.push(Op::Sleep {
            ns: u64::from(cfg.runtime_s) * 1_000_000_000,
        });
        p.push(Op::Stop);
    }
    p
}

/// Add message thread `i` (placement group `i`) with its semaphores and its workers.
fn add_message_thread(
    b: &mut PlanBuilder,
    cfg: &SchbenchConfig,
    i: u32,
    sh: &Shared,
    rng: &mut RngStream,
) -> InputResult<()> {
    // Placement group: the message thread with its workers.
    b.set_group(Some(i));
    let msg_start = u64::from(i) * THREAD_CREATE_NS;
    let pin = cfg.message_thread_cpu(i).map(|c| {
        let mut m = CpuMask::new();
        m.set(c);
        m
    });
    let msg_mask = pin.or(sh.worker_mask);
    let worker_parent = creator_cpu(sh.machine, sh.worker_mask.as_ref());
    let t = cfg.workers_per_message_thread;

    // Semaphores of this message thread.
    let sems = MsgSems {
        msg: b.sem(0),
        batch: b.sem(0),
        gate: b.sem(0),
        reqs: if cfg.rps > 0 {
            (0..t).map(|_| b.sem(0)).collect()
        } else {
            Vec::new()
        },
    };

    let p = message_program(cfg, i, &sems, rng)?;
    let id = b.program(format!("schbench-msg-{i}"), p);
    b.task(TaskSpec {
        comm: "schbench-msg".into(),
        program: id,
        nice: 0,
        cpus_allowed: msg_mask,
        start_ns: msg_start,
        parent_cpu: sh.main_cpu,
        footprint_kib: SMALL_FOOTPRINT_KIB,
        ..Default::default()
    });

    // Workers.
    for w in 0..t {
        let p = worker_program(cfg, w, &sems, sh.work_ns, sh.metrics);
        let id = b.program(format!("schbench-worker-{i}-{w}"), p);
        b.task(TaskSpec {
            comm: "schbench-worker".into(),
            program: id,
            nice: 0,
            cpus_allowed: sh.worker_mask,
            start_ns: msg_start + u64::from(w + 1) * THREAD_CREATE_NS,
            parent_cpu: worker_parent,
            footprint_kib: sh.footprint_kib,
            ..Default::default()
        });
    }
    Ok(())
}

/// The modes and option values [`plan`] refuses.
fn check_modes(cfg: &SchbenchConfig) -> InputResult<()> {
    let err = |m: &str| Err(InputError::new("schbench", m.to_string()));
    if cfg.auto_rps_pct.is_some() {
        return err(
            "-A/--auto-rps is not modelled (it rescales the RPS from /proc/stat busy time); \
             give a fixed rate with -R",
        );
    }
    if cfg.version != SchbenchVersion::Current
        && (cfg.pipe_bytes > 0 || cfg.rps > 0 || cfg.classic_autobench)
    {
        return err(
            "the classic schbench's -p, -R and -a modes are not modelled; only its default mode",
        );
    }
    if cfg.workers_per_message_thread == 0 {
        return err("-t 0 after defaults: no workers to run");
    }
    Ok(())
}

/// The latency metrics the workers sample.
#[derive(Clone, Copy)]
struct Metrics {
    wakeup: u8,
    /// Current schbench only.
    request: Option<u8>,
}

/// The semaphores of one message thread (see the module docs).
struct MsgSems {
    msg: SemId,
    batch: SemId,
    gate: SemId,
    /// RPS mode: one request counter per worker.
    reqs: Vec<SemId>,
}

/// The program of message thread `i`: create its workers, then post requests (RPS mode) or
/// wake batches of queued workers (saturate and classic).
fn message_program(
    cfg: &SchbenchConfig,
    i: u32,
    sems: &MsgSems,
    rng: &mut RngStream,
) -> InputResult<Prog> {
    let t = cfg.workers_per_message_thread;
    let mut p = Prog::new();
    p.run(u64::from(t) * THREAD_CREATE_NS);
    if cfg.rps > 0 {
        rps_poster(&mut p, cfg, i, &sems.reqs)?;
    } else if cfg.version != SchbenchVersion::Current {
        classic_batches(&mut p, cfg, sems, rng);
    } else {
        let top = p.here();
        p.push(Op::Down { sem: sems.msg });
        p.push(Op::DownAll {
            sem: sems.msg,
            into: sems.batch,
        });
        p.run(cfg.batch_user_ns);
        if cfg.pipe_bytes == 0 {
            p.push(Op::Mark { slot: 0 });
        }
        let wake = p.here();
        if cfg.pipe_bytes > 0 {
            p.run(copy_ns(u64::from(cfg.pipe_bytes)));
            p.push(Op::Mark { slot: 0 });
        }
        p.run(cfg.wake_user_ns + FUTEX_WAKE_NS);
        p.push(Op::UpStamped {
            sem: sems.gate,
            sync: false,
            slot: 0,
        });
        p.push(Op::TryDown {
            sem: sems.batch,
            else_to: top,
        });
        p.push(Op::Jump { to: wake });
    }
    Ok(p)
}

/// RPS mode: once per 1 s window (timer `i`), post this message thread's share of `-R`
/// round-robin over its workers' request counters `reqs`.
fn rps_poster(p: &mut Prog, cfg: &SchbenchConfig, i: u32, reqs: &[SemId]) -> InputResult<()> {
    let t = cfg.workers_per_message_thread;
    let per_thread = u64::from(cfg.rps_per_message_thread());
    let timer = i;
    p.push(Op::TimerStart { timer });
    let top = p.here();
    let full_rounds = per_thread / u64::from(t);
    let rest = per_thread % u64::from(t);
    let post = |p: &mut Prog, w: usize| {
        p.push(Op::Mark { slot: 0 });
        p.run(cfg.wake_user_ns + FUTEX_WAKE_NS);
        p.push(Op::UpStamped {
            sem: reqs[w],
            sync: false,
            slot: 0,
        });
    };
    p.repeat(full_rounds, 0, "schbench -R", |p| {
        for w in 0..t as usize {
            post(p, w);
        }
        Ok(())
    })?;
    for w in 0..rest as usize {
        post(p, w);
    }
    p.push(Op::TimerWait {
        timer,
        period_ns: 1_000_000_000,
        absolute: false,
    });
    p.push(Op::Jump { to: top });
    Ok(())
}

/// Classic: after a post, usleep(s + rand() % (s/4)), then wake the batch. The jitter is 64
/// seeded draws, cycled: 64 copies of the batch loop. The e4aa540 program
/// ([`SchbenchVersion::Interim2021`]) busy-spins `message_cputime` of wall-clock time between
/// the post and the sleep (`Op::SpinWall`, as the workers' `-c` spin), and with `-s 0`
/// neither waits for a post nor sleeps.
fn classic_batches(p: &mut Prog, cfg: &SchbenchConfig, sems: &MsgSems, rng: &mut RngStream) {
    let top = p.here();
    let s = cfg.classic_sleeptime_us;
    const COPIES: u32 = 64;
    let waits = s > 0 || cfg.version != SchbenchVersion::Interim2021;
    let spin_ns = cfg.message_cputime_us * 1000;
    let block = 6 + 2 * u32::from(waits) + u32::from(spin_ns > 0);
    for k in 0..COPIES {
        let jitter = if s >= 4 { rng.below(s / 4) } else { 0 };
        debug_assert_eq!(p.here(), top + k * block);
        if waits {
            p.push(Op::Down { sem: sems.msg });
        }
        if spin_ns > 0 {
            p.push(Op::SpinWall { ns: spin_ns });
        }
        if waits {
            p.push(Op::Sleep {
                ns: (s + jitter) * 1000,
            });
        }
        p.push(Op::DownAll {
            sem: sems.msg,
            into: sems.batch,
        });
        p.push(Op::Mark { slot: 0 });
        let wake = p.here();
        p.push(Op::Run {
            work_ns: FUTEX_WAKE_NS,
        });
        p.push(Op::UpStamped {
            sem: sems.gate,
            sync: false,
            slot: 0,
        });
        p.push(Op::TryDown {
            sem: sems.batch,
            else_to: top + ((k + 1) % COPIES) * block,
        });
        p.push(Op::Jump { to: wake });
    }
}

/// Half of a worker's per-request user-space work (`cfg.request_user_ns`, CV
/// `cfg.request_user_cv_pct`): a fixed part of `(1 − cv)` of it and an exponential part of
/// mean `cv` of it (drawn per request from the task's seeded stream), so the amount has the
/// configured mean and coefficient of variation and the right-skewed shape of the measured
/// run slices (module docs).
fn user_work_ops(p: &mut Prog, cfg: &SchbenchConfig) {
    let half = cfg.request_user_ns / 2;
    let variable = half * u64::from(cfg.request_user_cv_pct.min(100)) / 100;
    p.run(half - variable);
    if variable > 0 {
        p.push(Op::RunExp {
            mean_work_ns: variable,
        });
    }
}

/// One request of a current-schbench worker: the user-space bookkeeping after the wakeup,
/// the usleep (before `Mark 1` with `-C`), the math, the request-latency sample,
/// `loop_count++` and the bookkeeping before the next `msg_and_wait()`.
fn request_ops(p: &mut Prog, cfg: &SchbenchConfig, work: u64, request: Option<u8>) {
    user_work_ops(p, cfg);
    if cfg.calibrate && cfg.sleep_usec > 0 {
        p.push(Op::Sleep {
            ns: cfg.sleep_usec * 1000,
        });
    }
    p.push(Op::Mark { slot: 1 });
    if !cfg.calibrate && cfg.sleep_usec > 0 {
        p.push(Op::Sleep {
            ns: cfg.sleep_usec * 1000,
        });
    }
    // The math, under the per-CPU lock unless -L (or -C).
    if !cfg.skip_locking {
        p.push(Op::PerCpuSpinLock { base: 0 });
    }
    p.run(work);
    if !cfg.skip_locking {
        p.push(Op::PerCpuSpinUnlock);
    }
    if let Some(r) = request {
        p.push(Op::Sample { slot: 1, metric: r });
    }
    p.push(Op::CountOp);
    user_work_ops(p, cfg);
}

/// The program of worker `w` of a message thread with semaphores `sems`.
fn worker_program(cfg: &SchbenchConfig, w: u32, sems: &MsgSems, work: u64, m: Metrics) -> Prog {
    let mut p = Prog::new();
    match cfg.version {
        SchbenchVersion::Current if cfg.rps > 0 => {
            rps_worker(&mut p, cfg, sems.reqs[w as usize], work, m)
        }
        SchbenchVersion::Current => current_worker(&mut p, cfg, sems, work, m),
        _ => classic_worker(&mut p, cfg, sems, m.wakeup),
    }
    p
}

/// RPS mode: take a posted request without sleeping if one is queued, else block for one and
/// sample the wakeup latency; then the request.
fn rps_worker(p: &mut Prog, cfg: &SchbenchConfig, req: SemId, work: u64, m: Metrics) {
    // 0: TryDown(req, else → 3); request; Jump 0; 3: Down(req); Sample; request;
    // Jump 0.
    let top = p.here();
    let try_at = p.here();
    p.push(Op::TryDown {
        sem: req,
        else_to: 0,
    });
    request_ops(p, cfg, work, m.request);
    p.push(Op::Jump { to: top });
    let block = p.here();
    p.ops[try_at as usize] = Op::TryDown {
        sem: req,
        else_to: block,
    };
    p.push(Op::Down { sem: req });
    p.push(Op::Sample {
        slot: 0,
        metric: m.wakeup,
    });
    request_ops(p, cfg, work, m.request);
    p.push(Op::Jump { to: top });
}

/// Current schbench (saturate or pipe mode): post to the message thread, wait for the
/// batch's wakeup, sample its latency, then the request (or the pipe's user work).
fn current_worker(p: &mut Prog, cfg: &SchbenchConfig, sems: &MsgSems, work: u64, m: Metrics) {
    if cfg.pipe_bytes > 0 {
        p.run(copy_ns(u64::from(cfg.pipe_bytes)));
    }
    wait_for_batch(p, sems, m.wakeup);
    if cfg.pipe_bytes > 0 {
        user_work_ops(p, cfg);
        p.push(Op::CountOp);
        user_work_ops(p, cfg);
    } else {
        request_ops(p, cfg, work, m.request);
    }
    p.push(Op::Jump { to: 0 });
}

/// Classic: spin, count, queue/post/wait, record.
fn classic_worker(p: &mut Prog, cfg: &SchbenchConfig, sems: &MsgSems, wakeup: u8) {
    p.push(Op::SpinWall {
        ns: cfg.classic_cputime_us * 1000,
    });
    p.push(Op::CountOp);
    wait_for_batch(p, sems, wakeup);
    p.push(Op::Jump { to: 0 });
}

/// A worker queues itself (mark 0, post the message thread), waits for its batch's wakeup
/// and samples the wakeup latency from the batch's timestamp into `wakeup`.
fn wait_for_batch(p: &mut Prog, sems: &MsgSems, wakeup: u8) {
    p.push(Op::Mark { slot: 0 });
    p.push(Op::Up {
        sem: sems.msg,
        sync: false,
    });
    p.push(Op::Down { sem: sems.gate });
    p.push(Op::Sample {
        slot: 0,
        metric: wakeup,
    });
}

/// Pass `k` of the statistics loop takes a full snapshot (for an interval report) when `-i`
/// seconds have passed since the last report: with passes about a second apart, every `-i`-th
/// pass. Not in pipe mode (no interval reports there).
pub fn full_snapshot_pass(cfg: &SchbenchConfig, k: u64) -> bool {
    let i = u64::from(cfg.interval_s);
    cfg.pipe_bytes == 0 && k > 0 && (i == 0 || k.is_multiple_of(i))
}

/// e4aa540's `sleep_for_runtime()`: a pass per second (`sleep(1)`), each a full snapshot (the
/// warm-up and `-i` decisions are taken from the passes' times when the log is rebuilt), the
/// last once `-r` seconds have passed; `-r 0` is refused by the parser.
fn interim2021_stats_thread(p: &mut Prog, cfg: &SchbenchConfig) {
    const SECOND_NS: u64 = 1_000_000_000;
    let r = u64::from(cfg.runtime_s);
    for k in 0..=r {
        p.push(Op::Snapshot { full: k > 0 });
        if k < r {
            p.push(Op::Sleep { ns: SECOND_NS });
        }
    }
    p.push(Op::Stop);
}

/// `sleep_for_runtime()`: a pass per second, the final one once `-r` seconds have passed.
fn stats_thread(p: &mut Prog, cfg: &SchbenchConfig) {
    const SECOND_NS: u64 = 1_000_000_000;
    let r = u64::from(cfg.runtime_s);
    if r == 0 {
        // Forever: first pass, then blocks of `-i` passes whose last is a full snapshot.
        p.push(Op::Snapshot { full: false });
        p.push(Op::Sleep { ns: SECOND_NS });
        let top = p.here();
        let i = u64::from(cfg.interval_s.max(1));
        for k in 1..=i {
            p.push(Op::Snapshot {
                full: full_snapshot_pass(cfg, k),
            });
            p.push(Op::Sleep { ns: SECOND_NS });
        }
        p.push(Op::Jump { to: top });
        return;
    }
    for k in 0..=r {
        p.push(Op::Snapshot {
            full: full_snapshot_pass(cfg, k),
        });
        if k < r {
            p.push(Op::Sleep { ns: SECOND_NS });
        }
    }
    p.push(Op::Stop);
}
