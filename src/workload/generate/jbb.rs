//! `kind = "jbb"` as task programs (model and keys: [`crate::workload::jbb`]).
//!
//! Tasks, per instance i in order: its warehouse threads, then its GC threads (the first is
//! the GC leader). Instance i is process (mm) i and placement group i.
//!
//! Semaphores per instance: `safepoint` (units posted by the leader, one per warehouse),
//! `parked` (a warehouse reached its safepoint), `resume`, `gc_go` (the other GC threads'
//! start); one barrier for the GC threads.
//! - Warehouse: `RunExp(txn)`, `CountOp`, `TryDown(safepoint)` — none posted: next
//!   transaction; else `Up(parked)`, `Down(resume)` (parked for the collection).
//! - GC leader: a periodic timer (`gc_period_ms`, relative: a late collection shifts the
//!   next ones), `Mark 0`, `UpMany(safepoint, W)`, W × `Down(parked)` (time to safepoint),
//!   `UpMany(gc_go, G−1)`, its share of the collection, the GC barrier, `UpMany(resume, W)`,
//!   `Sample 0 → gc_pause`.
//! - Other GC threads: `Down(gc_go)`, their share, the barrier.
//!
//! A warehouse thread takes at most one safepoint unit per collection (it cannot take a
//! second before `resume`, which needs all W parked), so every warehouse stops.

use super::{PlanBuilder, Prog, creator_cpu};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, TaskMemory, TaskSpec};
use crate::topology::Machine;
use crate::workload::jbb::JbbConfig;

/// `pthread_create` in the JVM's main thread.
pub const THREAD_CREATE_NS: u64 = super::FORK_THREAD_NS;
/// Cache footprint of a warehouse thread (its working objects), KiB.
pub const WAREHOUSE_FOOTPRINT_KIB: u32 = 1024;
pub const GC_PAUSE_METRIC: &str = "gc_pause";

/// TaskMemory of a warehouse (`gc = false`) or GC thread of instance `i`.
pub fn thread_memory(cfg: &JbbConfig, i: u32, gc: bool) -> TaskMemory {
    let m = cfg.memory;
    TaskMemory {
        process: Some(i),
        private_mib: if gc { 0 } else { m.private_mib },
        shared_mib: m.shared_mib,
        shared_access_permille: if gc { 1000 } else { m.shared_access_permille },
        bandwidth_mib_s: m.bandwidth_mib_s,
        shm_key: None,
    }
}

struct Sems {
    safepoint: u32,
    parked: u32,
    resume: u32,
    gc_go: u32,
    barrier: u32,
}

fn warehouse_program(cfg: &JbbConfig, s: &Sems) -> Prog {
    let mut p = Prog::new();
    p.push(Op::RunExp {
        mean_work_ns: cfg.txn_ns,
    });
    p.push(Op::CountOp);
    if cfg.gc_threads > 0 {
        p.push(Op::TryDown {
            sem: s.safepoint,
            else_to: 0,
        });
        p.push(Op::Up {
            sem: s.parked,
            sync: false,
        });
        p.push(Op::Down { sem: s.resume });
    }
    p.push(Op::Jump { to: 0 });
    p
}

fn gc_program(cfg: &JbbConfig, s: &Sems, leader: bool, timer: u32, metric: u8) -> Prog {
    let g = cfg.gc_threads;
    let w = cfg.warehouses;
    let share = cfg.gc_work_ns / u64::from(g.max(1));
    let mut p = Prog::new();
    let top;
    if leader {
        p.push(Op::TimerStart { timer });
        top = p.here();
        p.push(Op::TimerWait {
            timer,
            period_ns: cfg.gc_period_ns,
            absolute: false,
        });
        p.push(Op::Mark { slot: 0 });
        p.push(Op::UpMany {
            sem: s.safepoint,
            n: w,
            sync: false,
        });
        let wait = p.here();
        p.push(Op::Down { sem: s.parked });
        if w > 1 {
            p.push(Op::Loop {
                to: wait,
                times: w,
                slot: 0,
            });
        }
        if g > 1 {
            p.push(Op::UpMany {
                sem: s.gc_go,
                n: g - 1,
                sync: false,
            });
        }
    } else {
        top = p.here();
        p.push(Op::Down { sem: s.gc_go });
    }
    p.run(share);
    if g > 1 {
        p.push(Op::Barrier {
            id: s.barrier,
            count: g,
        });
    }
    if leader {
        p.push(Op::UpMany {
            sem: s.resume,
            n: w,
            sync: false,
        });
        p.push(Op::Sample { slot: 0, metric });
    }
    p.push(Op::Jump { to: top });
    p
}

pub fn plan(cfg: &JbbConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let metric = b.metric(GC_PAUSE_METRIC);
    let creator = creator_cpu(machine, None);
    for i in 0..cfg.instances {
        b.set_group(Some(i));
        let s = Sems {
            safepoint: b.sem(0),
            parked: b.sem(0),
            resume: b.sem(0),
            gc_go: b.sem(0),
            barrier: b.barrier(),
        };
        let wh = b.program(format!("jbb-{i}-warehouse"), warehouse_program(cfg, &s));
        let base = u64::from(i) * 1_000_000;
        for t in 0..cfg.warehouses {
            b.task(TaskSpec {
                comm: "java".into(),
                program: wh,
                start_ns: base + u64::from(t + 1) * THREAD_CREATE_NS,
                parent_cpu: creator,
                footprint_kib: WAREHOUSE_FOOTPRINT_KIB,
                mem_intensity_permille: cfg.memory.mem_intensity_permille,
                memory: thread_memory(cfg, i, false),
                ..Default::default()
            });
        }
        for g in 0..cfg.gc_threads {
            let prog = gc_program(cfg, &s, g == 0, i, metric);
            let id = b.program(format!("jbb-{i}-gc-{g}"), prog);
            b.task(TaskSpec {
                comm: "GC Thread".into(),
                program: id,
                start_ns: base + u64::from(cfg.warehouses + g + 1) * THREAD_CREATE_NS,
                parent_cpu: creator,
                footprint_kib: WAREHOUSE_FOOTPRINT_KIB,
                mem_intensity_permille: cfg.memory.mem_intensity_permille,
                memory: thread_memory(cfg, i, true),
                ..Default::default()
            });
        }
    }
    Ok(b.finish())
}
