//! `kind = "linpack"` as task programs (model and keys: [`crate::workload::linpack`]).
//!
//! `threads` threads of process 0. Per solve, for each step k: the thread's share of the
//! step's flops ([`step_work_ns`]), the step barrier, and — thread 0 only — one `CountOp`
//! per [`FLOPS_PER_OP`] flops of the step (rounded cumulatively over the solve, so a whole
//! solve counts exactly its flops), then the next solve.

use super::{PlanBuilder, Prog, creator_cpu};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, TaskMemory, TaskSpec};
use crate::topology::Machine;
use crate::workload::linpack::{FLOPS_PER_OP, LinpackConfig};

pub const THREAD_CREATE_NS: u64 = super::FORK_THREAD_NS;

/// Reference-CPU work of one thread's share of step `k`: flops / threads / GFLOP/s
/// (1 GFLOP/s = 1 flop per ns).
pub fn step_work_ns(cfg: &LinpackConfig, k: u32) -> u64 {
    (cfg.step_flops(k) / f64::from(cfg.threads) / f64::from(cfg.gflops_per_core)).round() as u64
}

/// `CountOp`s after each step (flops in [`FLOPS_PER_OP`] units, cumulatively rounded).
pub fn step_ops(cfg: &LinpackConfig) -> Vec<u64> {
    let mut cum = 0.0;
    let mut prev = 0u64;
    (0..cfg.steps())
        .map(|k| {
            cum += cfg.step_flops(k) / FLOPS_PER_OP as f64;
            let at = cum.round() as u64;
            let d = at - prev;
            prev = at;
            d
        })
        .collect()
}

pub fn thread_memory(cfg: &LinpackConfig) -> TaskMemory {
    let m = cfg.memory;
    TaskMemory {
        process: Some(0),
        private_mib: m.private_mib,
        shared_mib: m.shared_mib,
        shared_access_permille: m.shared_access_permille,
        bandwidth_mib_s: m.bandwidth_mib_s,
        shm_key: None,
    }
}

pub fn plan(cfg: &LinpackConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let barrier = b.barrier();
    let ops = step_ops(cfg);
    let creator = creator_cpu(machine, None);
    for t in 0..cfg.threads {
        let mut p = Prog::new();
        for k in 0..cfg.steps() {
            p.run(step_work_ns(cfg, k));
            if cfg.threads > 1 {
                p.push(Op::Barrier {
                    id: barrier,
                    count: cfg.threads,
                });
            }
            if t == 0 {
                let n = ops[k as usize];
                p.repeat(n, 0, "linpack flop count", |p| {
                    p.push(Op::CountOp);
                    Ok(())
                })?;
            }
        }
        p.push(Op::Jump { to: 0 });
        let id = b.program(format!("linpack-{t}"), p);
        b.task(TaskSpec {
            comm: "xhpl".into(),
            program: id,
            start_ns: u64::from(t) * THREAD_CREATE_NS,
            parent_cpu: creator,
            footprint_kib: 2048,
            mem_intensity_permille: cfg.memory.mem_intensity_permille,
            memory: thread_memory(cfg),
            ..Default::default()
        });
    }
    Ok(b.finish())
}
