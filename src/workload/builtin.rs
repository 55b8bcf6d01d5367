//! Built-in synthetic workloads that need no benchmark: always-running CPU hogs, and
//! message/worker ping-pong pairs. They are the smallest inputs that exercise the fair class
//! (hogs: weight shares, slices, spreading by the load balancer) and wakeup placement and
//! newidle balancing (ping-pong: every handoff is a wakeup and a CPU going idle).

use crate::engine::WorkloadPlan;
use crate::task::{Op, Program, TaskSpec};

/// Work of one `Run` of a hog: long enough that hogs rarely return to the interpreter, short
/// enough that no counter overflows.
const HOG_CHUNK_NS: u64 = 1_000_000_000;

/// `nr_tasks` always-running tasks with the given nice values (cycled), each with a cache
/// footprint of `footprint_kib`.
pub fn spin(nr_tasks: usize, nices: &[i8], footprint_kib: u32) -> WorkloadPlan {
    let program = Program {
        name: "spin".into(),
        ops: vec![
            Op::Run {
                work_ns: HOG_CHUNK_NS,
            },
            Op::Jump { to: 0 },
        ],
    };
    let tasks = (0..nr_tasks)
        .map(|i| TaskSpec {
            comm: format!("spin-{i}"),
            program: 0,
            nice: if nices.is_empty() {
                0
            } else {
                nices[i % nices.len()]
            },
            cpus_allowed: None,
            start_ns: 0,
            parent_cpu: 0,
            footprint_kib,
            ..Default::default()
        })
        .collect();
    WorkloadPlan {
        programs: vec![program],
        tasks,
        // Placement groups: one per hog.
        task_groups: (0..nr_tasks as u32).map(Some).collect(),
        ..WorkloadPlan::default()
    }
}

/// `pairs` message/worker pairs: the message task computes `message_work_ns`, wakes its
/// worker (WF_SYNC, as a pipe write does) and waits for the reply; the worker computes
/// `worker_work_ns` and replies. `loops` round trips each (0 = forever). The round-trip time
/// is recorded as metric 0 ("request_latency") and each round trip counts one op.
pub fn pingpong(
    pairs: usize,
    message_work_ns: u64,
    worker_work_ns: u64,
    loops: u32,
    footprint_kib: u32,
) -> WorkloadPlan {
    let mut programs = Vec::with_capacity(pairs * 2);
    let mut tasks = Vec::with_capacity(pairs * 2);
    for pair in 0..pairs {
        let (request, reply) = (2 * pair as u32, 2 * pair as u32 + 1);
        let (message, worker) =
            pingpong_programs(request, reply, message_work_ns, worker_work_ns, loops);
        for (name, ops) in [("message", message), ("worker", worker)] {
            tasks.push(TaskSpec {
                comm: format!("{name}-{pair}"),
                program: programs.len() as u32,
                nice: 0,
                cpus_allowed: None,
                start_ns: 0,
                parent_cpu: 0,
                footprint_kib,
                ..Default::default()
            });
            programs.push(Program {
                name: format!("{name}-{pair}"),
                ops,
            });
        }
    }
    WorkloadPlan {
        programs,
        tasks,
        sems: vec![0; pairs * 2],
        sem_handoff_lines: Vec::new(),
        nr_barriers: 0,
        nr_spinlocks: 0,
        metrics: vec!["request_latency".into()],
        cpumasks: Vec::new(),
        // Placement groups: one per pair.
        task_groups: (0..pairs as u32).flat_map(|g| [Some(g), Some(g)]).collect(),
    }
}

/// The ops of one pingpong pair: the message task's and the worker's, each ending with a
/// jump back (`loops` = 0) or a loop of `loops` round trips and an exit.
fn pingpong_programs(
    request: u32,
    reply: u32,
    message_work_ns: u64,
    worker_work_ns: u64,
    loops: u32,
) -> (Vec<Op>, Vec<Op>) {
    let back = |ops: &mut Vec<Op>| {
        if loops == 0 {
            ops.push(Op::Jump { to: 0 });
        } else {
            ops.push(Op::Loop {
                to: 0,
                times: loops,
                slot: 0,
            });
            ops.push(Op::Exit);
        }
    };
    let mut message = vec![
        Op::Mark { slot: 0 },
        Op::Run {
            work_ns: message_work_ns,
        },
        Op::Up {
            sem: request,
            sync: true,
        },
        Op::Down { sem: reply },
        Op::Sample { slot: 0, metric: 0 },
        Op::CountOp,
    ];
    back(&mut message);
    let mut worker = vec![
        Op::Down { sem: request },
        Op::Run {
            work_ns: worker_work_ns,
        },
        Op::Up {
            sem: reply,
            sync: true,
        },
    ];
    back(&mut worker);
    (message, worker)
}
