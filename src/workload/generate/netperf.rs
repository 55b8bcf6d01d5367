//! netperf TCP_RR/UDP_RR and tbench as task programs (reference/workloads.md §5).
//!
//! Per client, a client task and a server task (netserver's / tbench_srv's forked child),
//! created in that order from CPU 0 (or the `-T` CPUs), and two semaphores: `request` and
//! `response` (bytes that arrived, one unit per message).
//! - Client: `Mark 0`, the send's work, WF_SYNC `Up(request)` (the loopback receive path ends
//!   in `sock_def_readable()`'s sync wakeup), `Down(response)`, the receive's work,
//!   `Sample 0 → transaction`, `CountOp`; again, until the test ends.
//! - Server: `Down(request)`, the receive's work, the send's work, WF_SYNC `Up(response)`.
//!
//! A test of `-l N` seconds ends at the run layer's duration cap; `-l −N` (a transaction
//! count) stops the simulation (`Stop`) after the client's N-th transaction.
//!
//! Costs (reference CPU; typical loopback figures, e.g. ~50 k TCP_RR transactions/s for one
//! pair sharing a CPU): a TCP send 5 µs — `tcp_sendmsg`, the loopback transmit and, on the
//! sender's CPU, the receive softirq (`tcp_v4_rcv`) that queues the data and wakes the
//! reader —, a TCP receive 2 µs; UDP 3.5 µs and 1.5 µs; plus [`super::copy_ns`] per byte on
//! each side. tbench's server additionally does its SMB-like operation's file-system work:
//! [`TBENCH_SERVER_OP_NS`].
//!
//! Hand-off: each request and response leaves `handoff_lines` dirty lines for its taker,
//! paid by the core-to-core distance (hackbench's module docs, "Hand-off").
//!
//! Left out: Nagle/delayed ACK (netperf's RR messages are small and the test is strictly
//! alternating, so there is nothing to coalesce), UDP loss, tbench's operation mix.

use super::{PlanBuilder, Prog, copy_ns, creator_cpu};
use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, ProgramId, SemId, TaskSpec};
use crate::topology::Machine;
use crate::workload::netperf::{NetperfRrConfig, RrFlavor, RrLength, RrProtocol};

/// Server-side work of one tbench operation besides the socket calls (dbench's fileio-free
/// `sockio` backend only parses the request and builds the reply): 3 µs.
pub const TBENCH_SERVER_OP_NS: u64 = 3_000;
/// Footprint of each side (socket buffers, stack), KiB.
pub const FOOTPRINT_KIB: u32 = 32;

pub const TRANSACTION_METRIC: &str = "transaction";

/// Dirty lines one message leaves for the side that takes it: hackbench's TCP exchange count
/// ([`super::hackbench::exchange_handoff_lines`]). UDP's datagram queue has the same shape.
fn handoff_lines(bytes: u64) -> u16 {
    super::hackbench::exchange_handoff_lines(crate::workload::hackbench::HackbenchIpc::Inet, bytes)
}

pub fn send_ns(proto: RrProtocol, bytes: u32) -> u64 {
    let base = match proto {
        RrProtocol::Tcp => 5_000,
        RrProtocol::Udp => 3_500,
    };
    base + copy_ns(u64::from(bytes))
}

pub fn recv_ns(proto: RrProtocol, bytes: u32) -> u64 {
    let base = match proto {
        RrProtocol::Tcp => 2_000,
        RrProtocol::Udp => 1_500,
    };
    base + copy_ns(u64::from(bytes))
}

fn one_cpu(cpu: Option<usize>) -> Option<CpuMask> {
    cpu.map(|c| {
        let mut m = CpuMask::new();
        m.set(c);
        m
    })
}

/// The client: a transaction (send the request, wait for the response, sample its time),
/// forever for `-l N` seconds or N times then `Stop` for `-l -N`.
fn client_prog(
    cfg: &NetperfRrConfig,
    [request, response]: [SemId; 2],
    metric: u8,
) -> InputResult<Prog> {
    let mut p = Prog::new();
    let body = |p: &mut Prog| {
        p.push(Op::Mark { slot: 0 });
        p.run(send_ns(cfg.protocol, cfg.request_bytes));
        p.push(Op::Up {
            sem: request,
            sync: true,
        });
        p.push(Op::Down { sem: response });
        p.run(recv_ns(cfg.protocol, cfg.response_bytes));
        p.push(Op::Sample { slot: 0, metric });
        p.push(Op::CountOp);
    };
    match cfg.length {
        RrLength::Seconds(_) => {
            body(&mut p);
            p.push(Op::Jump { to: 0 });
        }
        RrLength::Transactions(n) => {
            p.repeat(n, 0, "netperf -l", |p| {
                body(p);
                Ok(())
            })?;
            p.push(Op::Stop);
        }
    }
    Ok(p)
}

/// The server: receive a request, do `server_extra_ns` of work (tbench's operation), reply.
fn server_prog(
    cfg: &NetperfRrConfig,
    [request, response]: [SemId; 2],
    server_extra_ns: u64,
) -> Prog {
    let mut s = Prog::new();
    s.push(Op::Down { sem: request });
    s.run(recv_ns(cfg.protocol, cfg.request_bytes) + server_extra_ns);
    s.run(send_ns(cfg.protocol, cfg.response_bytes));
    s.push(Op::Up {
        sem: response,
        sync: true,
    });
    s.push(Op::Jump { to: 0 });
    s
}

/// The spec of one side of a pair, pinned to `mask` if set and created from a CPU in it.
fn side_task(comm: &str, program: ProgramId, mask: Option<CpuMask>, machine: &Machine) -> TaskSpec {
    TaskSpec {
        comm: comm.into(),
        program,
        nice: 0,
        cpus_allowed: mask,
        start_ns: 0,
        parent_cpu: creator_cpu(machine, mask.as_ref()),
        footprint_kib: FOOTPRINT_KIB,
        ..Default::default()
    }
}

pub fn plan(cfg: &NetperfRrConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let metric = b.metric(TRANSACTION_METRIC);
    let client_mask = one_cpu(cfg.local_cpu);
    let server_mask = one_cpu(cfg.remote_cpu);
    let server_extra = match cfg.flavor {
        RrFlavor::Tbench => TBENCH_SERVER_OP_NS,
        RrFlavor::Netperf => 0,
    };
    for c in 0..cfg.clients {
        // Placement group: the client-server pair.
        b.set_group(Some(c));
        let request = b.sem_handing_off(0, handoff_lines(u64::from(cfg.request_bytes)));
        let response = b.sem_handing_off(0, handoff_lines(u64::from(cfg.response_bytes)));
        let p = client_prog(cfg, [request, response], metric)?;
        let (client_comm, server_comm) = match cfg.flavor {
            RrFlavor::Netperf => ("netperf", "netserver"),
            RrFlavor::Tbench => ("tbench", "tbench_srv"),
        };
        let id = b.program(format!("{client_comm}-{c}"), p);
        b.task(side_task(client_comm, id, client_mask, machine));
        let s = server_prog(cfg, [request, response], server_extra);
        let id = b.program(format!("{server_comm}-{c}"), s);
        b.task(side_task(server_comm, id, server_mask, machine));
    }
    Ok(b.finish())
}
