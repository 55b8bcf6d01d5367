//! `kind = "stream"` as task programs (model and keys: [`crate::workload::stream`]).
//!
//! `threads` threads of process 0, thread 0 first. Per pass, for each kernel k (copy,
//! scale, add, triad): thread 0 `Mark 0`; every thread its chunk's work
//! ([`chunk_work_ns`]); barrier k; thread 0 `Sample 0 → kernel k's metric` (the time
//! between the two barriers, as STREAM's `mysecond()` pair around each `#pragma omp
//! parallel for` measures). With `iterations` = N, after N passes thread 0 stops the run
//! and the others exit; with 0 the passes repeat until the run's end.

use super::{PlanBuilder, Prog, creator_cpu};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, TaskMemory, TaskSpec};
use crate::topology::Machine;
use crate::workload::stream::{KERNELS, StreamConfig};

pub const THREAD_CREATE_NS: u64 = super::FORK_THREAD_NS;

/// Reference-CPU work of thread `t`'s chunk of kernel `k`: its bytes at `per_core_mb_s`.
pub fn chunk_work_ns(cfg: &StreamConfig, t: u32, k: usize) -> u64 {
    let bytes = KERNELS[k].1 * cfg.chunk(t);
    (bytes as u128 * 1000 / u128::from(cfg.per_core_mb_s)) as u64
}

/// `per_core_mb_s` (10^6 B/s) in MiB/s, rounded.
pub fn bandwidth_mib_s(cfg: &StreamConfig) -> u32 {
    (f64::from(cfg.per_core_mb_s) * 1e6 / f64::from(1u32 << 20)).round() as u32
}

pub fn thread_memory(cfg: &StreamConfig, t: u32) -> TaskMemory {
    TaskMemory {
        process: Some(0),
        private_mib: cfg.thread_mib(t),
        shared_mib: 0,
        shared_access_permille: 0,
        bandwidth_mib_s: bandwidth_mib_s(cfg),
        shm_key: None,
    }
}

pub fn plan(cfg: &StreamConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let metrics: Vec<u8> = KERNELS.iter().map(|(n, _)| b.metric(n)).collect();
    let barriers: Vec<u32> = KERNELS.iter().map(|_| b.barrier()).collect();
    let creator = creator_cpu(machine, None);
    for t in 0..cfg.threads {
        let mut p = Prog::new();
        let pass = |p: &mut Prog| {
            for k in 0..KERNELS.len() {
                if t == 0 {
                    p.push(Op::Mark { slot: 0 });
                }
                p.run(chunk_work_ns(cfg, t, k));
                if cfg.threads > 1 {
                    p.push(Op::Barrier {
                        id: barriers[k],
                        count: cfg.threads,
                    });
                }
                if t == 0 {
                    p.push(Op::Sample {
                        slot: 0,
                        metric: metrics[k],
                    });
                }
            }
            Ok(())
        };
        if cfg.iterations == 0 {
            pass(&mut p)?;
            p.push(Op::Jump { to: 0 });
        } else {
            p.repeat(u64::from(cfg.iterations), 0, "stream iterations", pass)?;
            p.push(if t == 0 { Op::Stop } else { Op::Exit });
        }
        let id = b.program(format!("stream-{t}"), p);
        b.task(TaskSpec {
            comm: "stream".into(),
            program: id,
            start_ns: u64::from(t) * THREAD_CREATE_NS,
            parent_cpu: creator,
            footprint_kib: 1024,
            mem_intensity_permille: cfg.mem_intensity_permille,
            memory: thread_memory(cfg, t),
            ..Default::default()
        });
    }
    Ok(b.finish())
}
