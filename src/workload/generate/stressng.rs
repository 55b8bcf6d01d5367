//! stress-ng's cpu stressor as task programs (reference/workloads.md §3; stress-cpu.c).
//!
//! N instances (single-threaded processes), forked by the parent one after another
//! ([`FORK_NS`] apart, `parent_cpu` = the parent's CPU: the first `--taskset` CPU or CPU 0).
//! Each instance runs method calls of [`StressNgConfig::method_call_ns`] reference work; every
//! call posts the instance's private counter semaphore (so the report can read each
//! instance's call count) and counts one op.
//!
//! - `-l 100` (default): calls back to back.
//! - `-l 0`: `sleep(timeout)`, then exit.
//! - `0 < P < 100`: load slices. `DutyStart`, a busy slice, `DutySleep { P }`: the engine
//!   computes `busy_cpu·(100−P)/P + (busy_cpu − busy_wall) − bias` from the task's own CPU
//!   time, sleeps it µs-truncated with the hrtimer slack (`select()`), and feeds the oversleep
//!   back as `bias` — stress-ng's controller. Slice lengths: `--cpu-load-slice −n` is n calls;
//!   `S > 0` ms is the number of calls that reach S ms at reference speed (the program checks
//!   its CPU time, so a slower CPU would end the slice after fewer calls — approximated);
//!   `S = 0` (random 0–0.5 s) uses the mean, 0.25 s.
//! - `--cpu-ops K`: each instance stops after `ceil(K/N)` bogo ops, i.e. after the first call
//!   that brings ⌊calls × bogo-ops-per-call⌋ to that; the check is between calls, as in
//!   stress-ng. Then it records its wall time (metric `instance_wall`) and exits.
//! - `--timeout`: the run layer's duration cap ([`super::workload_duration_ns`]).
//!
//! Left out: the per-method cost variance of `--cpu-method all` (a mean call cost is used, see
//! `StressNgConfig`; each call's cost varies only by the engine's generic per-call factor,
//! `crate::engine::noise`), page faults and RSS.

use super::{PlanBuilder, Prog, creator_cpu};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, TaskSpec};
use crate::topology::Machine;
use crate::workload::stressng::{LoadSlice, StressNgConfig};

/// Forking one instance (a small process), parent CPU work.
pub const FORK_NS: u64 = 60_000;
/// Footprint of the cpu stressor's methods: small working sets (KiB).
pub const FOOTPRINT_KIB: u32 = 32;
/// Mean of the random slice (`--cpu-load-slice 0`): r/131072 s with r uniform in 0..65536.
pub const RANDOM_SLICE_MEAN_NS: u64 = 250_000_000;

pub const WALL_METRIC: &str = "instance_wall";

/// Method calls an instance makes before it has `ops` bogo ops (smallest n with
/// ⌊n · per_call⌋ ≥ ops).
pub fn calls_for_ops(ops: u64, per_call: f64) -> u64 {
    if ops == 0 || per_call <= 0.0 {
        return 0;
    }
    let mut n = (ops as f64 / per_call).ceil() as u64;
    while n > 0 && ((n - 1) as f64 * per_call).floor() as u64 >= ops {
        n -= 1;
    }
    while ((n as f64 * per_call).floor() as u64) < ops {
        n += 1;
    }
    n
}

/// Calls in one busy slice.
pub fn slice_calls(cfg: &StressNgConfig) -> u64 {
    let call = cfg.method_call_ns().max(1);
    match cfg.load_slice() {
        LoadSlice::Calls(n) => u64::from(n).max(1),
        LoadSlice::CpuTimeMs(_) => cfg.slice_busy_ns().unwrap_or(call) / call,
        LoadSlice::RandomCpuTime => RANDOM_SLICE_MEAN_NS.div_ceil(call).max(1),
    }
}

/// The first semaphore of the per-instance call counters (instance i uses `COUNTER_BASE + i`).
pub const COUNTER_BASE: u32 = 1;

pub fn plan(cfg: &StressNgConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let never = b.sem(0);
    debug_assert_eq!(never + 1, COUNTER_BASE);
    let wall = b.metric(WALL_METRIC);
    let call = cfg.method_call_ns();
    let per_call = cfg.bogo_ops_per_call();
    let limit = cfg
        .ops_per_instance()
        .map(|ops| calls_for_ops(ops, per_call));
    let parent_cpu = creator_cpu(machine, cfg.taskset.as_ref());
    let counters: Vec<u32> = (0..cfg.instances).map(|_| b.sem(0)).collect();
    for (i, &counter) in counters.iter().enumerate() {
        b.set_group(Some(i as u32));
        let one_call = |p: &mut Prog| {
            p.run(call);
            p.push(Op::Up {
                sem: counter,
                sync: false,
            });
            p.push(Op::CountOp);
        };
        let mut p = Prog::new();
        p.push(Op::Mark { slot: 0 });
        match cfg.cpu_load_pct {
            0 => match cfg.effective_timeout_s() {
                0 => {
                    p.push(Op::Down { sem: never });
                }
                t => {
                    p.push(Op::Sleep {
                        ns: t * 1_000_000_000,
                    });
                }
            },
            100 => match limit {
                Some(n) => p.repeat(n, 0, "stress-ng --cpu-ops", |p| {
                    one_call(p);
                    Ok(())
                })?,
                None => {
                    one_call(&mut p);
                    p.push(Op::Jump { to: 1 });
                }
            },
            pct => {
                let n = slice_calls(cfg);
                let slice = |p: &mut Prog, calls: u64, sleep: bool| -> InputResult<()> {
                    p.push(Op::DutyStart);
                    p.repeat(calls, 0, "stress-ng load slice", |p| {
                        one_call(p);
                        Ok(())
                    })?;
                    if sleep {
                        p.push(Op::DutySleep {
                            load_pct: pct as u8,
                        });
                    }
                    Ok(())
                };
                match limit {
                    Some(total) => {
                        p.repeat(total / n, 1, "stress-ng load slices", |p| slice(p, n, true))?;
                        if total % n > 0 {
                            slice(&mut p, total % n, false)?;
                        }
                    }
                    None => {
                        let top = p.here();
                        slice(&mut p, n, true)?;
                        p.push(Op::Jump { to: top });
                    }
                }
            }
        }
        p.push(Op::Sample {
            slot: 0,
            metric: wall,
        });
        p.push(Op::Exit);
        let id = b.program(format!("stress-ng-cpu-{i}"), p);
        b.task(TaskSpec {
            comm: "stress-ng-cpu".into(),
            program: id,
            nice: 0,
            cpus_allowed: cfg.taskset,
            start_ns: (i as u64 + 1) * FORK_NS,
            parent_cpu,
            footprint_kib: FOOTPRINT_KIB,
            ..Default::default()
        });
    }
    Ok(b.finish())
}
