//! `kind = "web"` as task programs (model and keys: [`crate::workload::web`]).
//!
//! Tasks, in creation order: the `workers` (task i = worker i), then the load: with
//! `load = "open"` the receive-interrupt threads (`irq/nic-J`, one per node unless
//! `irq_threads` says otherwise), with `load = "closed"` the `clients`.
//!
//! Semaphores: `accept` (the shared accept queue: one unit per request, carrying its arrival
//! time) and, closed loop only, `done` (one unit per completed response).
//! - Worker: `Down(accept)` (accept(); the unit's stamp is the request's arrival time, in
//!   mark 0), then the request's CPU segments separated by its blocking phases (each a
//!   `Sleep`: the file read, the upstream IPC, the network send), `Sample 0 → response`,
//!   `CountOp`, closed loop: `Up(done)`; again.
//! - irq thread (open loop): SCHED_FIFO 50 like a threaded interrupt handler, allowed on its
//!   node's CPUs (an RSS queue's IRQ affinity). One periodic timer, advanced by each
//!   arrival's gap (`TimerWait`, absolute: the schedule never drifts); per arrival `Mark 0`,
//!   the receive path's work ([`NET_RX_NS`]) and `UpStamped(accept)`. Gaps are a cycle of
//!   [`ARRIVAL_CYCLE`] draws per thread from the workload's seeded stream (exponential for
//!   Poisson arrivals, the mean for `fixed`), rounded cumulatively so that each cycle lasts
//!   exactly `ARRIVAL_CYCLE / rate` per thread: the long-run rate is the configured one.
//!   Arrivals closer together than the timer slack are handed over in one wakeup, as NIC
//!   interrupt coalescing does; each is stamped when it is handed over.
//! - Client (closed loop): think (`Sleep`, a cycle of [`THINK_CYCLE`] draws), `Mark 0`, the
//!   receive path's work, `UpStamped(accept)`, `Down(done)`. A client posts its next request
//!   only after taking a completion, so at most `clients` requests are ever outstanding.
//!   Clients run as SCHED_FIFO 50 tasks too: they stand for the receive path on the server,
//!   the think time passes on the client machine.
//!
//! CPU demand: with `k` CPU segments (1 + the number of non-zero waits) each segment is
//! `demand / k` (fixed) or exponential with that mean, so an exponential demand is Erlang-k
//! distributed with the configured mean (exactly exponential when there are no waits).
//! Each wait is an hrtimer sleep and so gets the timer slack (50 µs) on top.

use super::{PlanBuilder, Prog, creator_cpu};
use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::rng::{RngStream, StreamKind};
use crate::task::{MemPolicy, Op, SemId, TaskMemory, TaskPolicy, TaskSpec};
use crate::topology::Machine;
use crate::workload::web::{Dist, WebConfig, WebLoad, WorkerMode};

/// Work of the receive path for one request on the server (NIC interrupt, TCP receive,
/// waking the accepting worker), reference CPU.
pub const NET_RX_NS: u64 = 3_000;
/// Inter-arrival gaps drawn per irq thread (then cycled).
pub const ARRIVAL_CYCLE: usize = 4096;
/// Think times drawn per client (then cycled).
pub const THINK_CYCLE: usize = 64;
/// `fork()` of a worker process / `pthread_create` of a worker thread, in the creator.
pub const FORK_NS: u64 = 50_000;
pub const THREAD_CREATE_NS: u64 = super::FORK_THREAD_NS;
/// Cache footprint of a worker (connection state, request buffers), KiB.
pub const WORKER_FOOTPRINT_KIB: u32 = 256;
/// Priority of the irq threads and clients (threaded interrupt handlers' default).
pub const IRQ_PRIO: u8 = 50;

pub const RESPONSE_METRIC: &str = "response";

/// `n` gaps (ns) with mean `mean_ns`, rounded cumulatively so their sum is exactly
/// `round(n · mean_ns)`.
pub fn gap_cycle(n: usize, mean_ns: f64, dist: Dist, rng: &mut RngStream) -> Vec<u64> {
    let raw: Vec<f64> = (0..n)
        .map(|_| match dist {
            Dist::Fixed => 1.0,
            Dist::Exponential => -(1.0 - rng.next_f64()).ln(),
        })
        .collect();
    let sum: f64 = raw.iter().sum();
    let scale = if sum > 0.0 {
        mean_ns * n as f64 / sum
    } else {
        mean_ns
    };
    let mut out = Vec::with_capacity(n);
    let (mut cum, mut prev) = (0.0f64, 0u64);
    for r in raw {
        cum += r * scale;
        let at = cum.round() as u64;
        out.push(at - prev);
        prev = at;
    }
    out
}

/// The TaskMemory of worker `i`.
pub fn worker_memory(cfg: &WebConfig, i: u32) -> TaskMemory {
    let m = cfg.memory;
    match cfg.mode {
        WorkerMode::Threads => TaskMemory {
            process: Some(0),
            private_mib: m.private_mib,
            shared_mib: m.shared_mib,
            shared_access_permille: m.shared_access_permille,
            bandwidth_mib_s: m.bandwidth_mib_s,
            shm_key: None,
        },
        // nginx's shared zones: one MAP_SHARED mapping in every worker process.
        WorkerMode::Processes => TaskMemory {
            process: Some(i),
            private_mib: m.private_mib,
            shared_mib: m.shared_mib,
            shared_access_permille: m.shared_access_permille,
            bandwidth_mib_s: m.bandwidth_mib_s,
            shm_key: Some(0),
        },
    }
}

/// Number of receive-interrupt threads of an open-loop run on `machine`.
pub fn nr_irq_threads(cfg: &WebConfig, machine: &Machine) -> u32 {
    cfg.irq_threads.unwrap_or(machine.nr_nodes().max(1) as u32)
}

fn worker_program(cfg: &WebConfig, accept: SemId, done: Option<SemId>, metric: u8) -> Prog {
    let waits: Vec<u64> = [cfg.file_wait_ns, cfg.ipc_wait_ns, cfg.network_wait_ns]
        .into_iter()
        .filter(|&w| w > 0)
        .collect();
    let k = waits.len() as u64 + 1;
    let seg = (cfg.demand_ns / k).max(1);
    let cpu = |p: &mut Prog| match cfg.demand {
        Dist::Fixed => {
            p.run(seg);
        }
        Dist::Exponential => {
            p.push(Op::RunExp { mean_work_ns: seg });
        }
    };
    let mut p = Prog::new();
    p.push(Op::Down { sem: accept });
    cpu(&mut p);
    for w in waits {
        p.push(Op::Sleep { ns: w });
        cpu(&mut p);
    }
    p.push(Op::Sample { slot: 0, metric });
    p.push(Op::CountOp);
    if let Some(done) = done {
        p.push(Op::Up {
            sem: done,
            sync: false,
        });
    }
    p.push(Op::Jump { to: 0 });
    p
}

fn irq_spec(
    comm: &str,
    program: u32,
    mask: Option<CpuMask>,
    start_ns: u64,
    cpu: usize,
) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        cpus_allowed: mask,
        start_ns,
        parent_cpu: cpu,
        footprint_kib: 16,
        policy: TaskPolicy::Fifo {
            rt_priority: IRQ_PRIO,
        },
        ..Default::default()
    }
}

/// Open loop: the irq threads.
fn open_load(b: &mut PlanBuilder, cfg: &WebConfig, machine: &Machine, accept: SemId, seed: u64) {
    let WebLoad::Open {
        rate_per_s,
        arrivals,
    } = cfg.load
    else {
        return;
    };
    let threads = nr_irq_threads(cfg, machine);
    let nodes = machine.nr_nodes().max(1);
    let mean_ns = 1e9 * f64::from(threads) / rate_per_s;
    for j in 0..threads {
        let mut rng = RngStream::new(seed, StreamKind::Workload, u64::from(j));
        let gaps = gap_cycle(ARRIVAL_CYCLE, mean_ns, arrivals, &mut rng);
        let mut p = Prog::new();
        p.push(Op::TimerStart { timer: j });
        let top = p.here();
        for g in gaps {
            p.push(Op::TimerWait {
                timer: j,
                period_ns: g,
                absolute: true,
            });
            p.push(Op::Mark { slot: 0 });
            p.run(NET_RX_NS);
            p.push(Op::UpStamped {
                sem: accept,
                sync: false,
                slot: 0,
            });
        }
        p.push(Op::Jump { to: top });
        let id = b.program(format!("irq/nic-{j}"), p);
        let mask = *machine.node_mask(j as usize % nodes);
        let cpu = creator_cpu(machine, Some(&mask));
        // Evenly spaced streams interleave: thread j starts j/rate after thread 0.
        let start = (f64::from(j) * 1e9 / rate_per_s).round() as u64;
        b.task(irq_spec("irq/nic", id, Some(mask), start, cpu));
    }
}

/// Closed loop: the clients.
fn closed_load(
    b: &mut PlanBuilder,
    cfg: &WebConfig,
    machine: &Machine,
    accept: SemId,
    done: SemId,
    seed: u64,
) {
    let WebLoad::Closed {
        clients,
        think_ns,
        think,
    } = cfg.load
    else {
        return;
    };
    for c in 0..clients {
        let mut rng = RngStream::new(seed, StreamKind::Workload, u64::from(c));
        let thinks = gap_cycle(THINK_CYCLE, think_ns as f64, think, &mut rng);
        let mut p = Prog::new();
        let n = if think_ns == 0 { 1 } else { thinks.len() };
        for &t in &thinks[..n] {
            if t > 0 {
                p.push(Op::Sleep { ns: t });
            }
            p.push(Op::Mark { slot: 0 });
            p.run(NET_RX_NS);
            p.push(Op::UpStamped {
                sem: accept,
                sync: false,
                slot: 0,
            });
            p.push(Op::Down { sem: done });
        }
        p.push(Op::Jump { to: 0 });
        let id = b.program(format!("client-{c}"), p);
        b.task(irq_spec("client", id, None, 0, creator_cpu(machine, None)));
    }
}

pub fn plan(cfg: &WebConfig, machine: &Machine, seed: u64) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let metric = b.metric(RESPONSE_METRIC);
    let accept = b.sem(0);
    let done = match cfg.load {
        WebLoad::Closed { .. } => Some(b.sem(0)),
        WebLoad::Open { .. } => None,
    };
    let creator = creator_cpu(machine, None);
    let spawn_ns = match cfg.mode {
        WorkerMode::Processes => FORK_NS,
        WorkerMode::Threads => THREAD_CREATE_NS,
    };
    let id = b.program("nginx-worker", worker_program(cfg, accept, done, metric));
    for i in 0..cfg.workers {
        b.set_group(Some(i));
        b.task(TaskSpec {
            comm: "nginx".into(),
            program: id,
            start_ns: u64::from(i) * spawn_ns,
            parent_cpu: creator,
            footprint_kib: WORKER_FOOTPRINT_KIB,
            mempolicy: MemPolicy::Local,
            mem_intensity_permille: cfg.memory.mem_intensity_permille,
            memory: worker_memory(cfg, i),
            ..Default::default()
        });
    }
    b.set_group(None);
    open_load(&mut b, cfg, machine, accept, seed);
    if let Some(done) = done {
        closed_load(&mut b, cfg, machine, accept, done, seed);
    }
    Ok(b.finish())
}
