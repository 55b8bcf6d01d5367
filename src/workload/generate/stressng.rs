//! stress-ng's cpu stressor as task programs (reference/workloads.md §3; stress-cpu.c).
//!
//! N instances (single-threaded processes), forked by the parent one after another
//! ([`FORK_NS`] apart, `parent_cpu` = the parent's CPU: the first `--taskset` CPU or CPU 0).
//! Each instance makes method calls in stress-ng's order ([`StressNgConfig::call_cycle`]: one
//! method, or `--cpu-method all`'s table cycle with every method's own cost); every call posts
//! the instance's private counter semaphore (so the report can read each instance's call
//! count) and counts one op.
//!
//! - `-l 100` (default): calls back to back; with `--cpu-ops` the instance stops after the
//!   first call that brings its bogo counter to `ceil(K/N)` (`stress_continue()` after every
//!   call).
//! - `-l 0`: `sleep(timeout)`, then exit.
//! - `0 < P < 100`: stress-ng's load-slice loop. `Op::DutyStart` is the loop top (`t1` wall
//!   and CPU clocks); every call is followed by `Op::DutyCall`, which ends the slice by
//!   stress-ng's rule (`--cpu-load-slice −n`: n calls; `S > 0`: the task's CPU time reached
//!   S ms, checked after each call; `S = 0`: a random r/131072 s, r a 16-bit draw per slice),
//!   computes `busy_cpu·(100−P)/P + (busy_cpu − busy_wall) − bias`, sleeps it µs-truncated
//!   through `select()` (slack as `select_estimate_accuracy()`), feeds the oversleep back as
//!   `bias`, and only then checks `--cpu-ops` (`stress_continue()` is the outer loop's
//!   condition, so an instance finishes its slice and its sleep before it stops). The slice
//!   does not restart the method cycle: the next call is the next method.
//! - `--timeout`: the run layer's duration cap ([`super::workload_duration_ns`]).
//!
//! Left out: the cost of the loop's own clock reads (`clock_gettime()` of the wall and
//! process CPU clocks, well under 1 µs against method calls of 0.02 µs to 10 ms), page faults
//! and RSS. Each call's cost varies only by the engine's generic per-call factor
//! (`crate::engine::noise`).

use super::{PlanBuilder, Prog, creator_cpu};
use crate::engine::WorkloadPlan;
use crate::error::InputResult;
use crate::task::{Op, TaskSpec};
use crate::topology::Machine;
use crate::workload::stressng::StressNgConfig;

/// Forking one instance (a small process), parent CPU work.
pub const FORK_NS: u64 = super::FORK_PROCESS_NS;
/// Footprint of the cpu stressor's methods: small working sets (KiB).
pub const FOOTPRINT_KIB: u32 = 32;

pub const WALL_METRIC: &str = "instance_wall";

/// The first semaphore of the per-instance call counters (instance i uses `COUNTER_BASE + i`).
pub const COUNTER_BASE: u32 = 1;

pub fn plan(cfg: &StressNgConfig, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let never = b.sem(0);
    debug_assert_eq!(never + 1, COUNTER_BASE);
    let wall = b.metric(WALL_METRIC);
    let cycle = cfg.call_cycle();
    let limit = cfg.ops_per_instance().map(|ops| cfg.calls_for_ops(ops));
    let parent_cpu = creator_cpu(machine, cfg.taskset.as_ref());
    let counters: Vec<u32> = (0..cfg.instances).map(|_| b.sem(0)).collect();
    for (i, &counter) in counters.iter().enumerate() {
        b.set_group(Some(i as u32));
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
            100 => full_load(&mut p, &cycle, counter, limit)?,
            pct => load_slices(&mut p, cfg, &cycle, counter, pct, limit),
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

/// One method call: its work, the counter post, one op.
fn call(p: &mut Prog, work_ns: u64, counter: u32) {
    p.run(work_ns);
    p.push(Op::Up {
        sem: counter,
        sync: false,
    });
    p.push(Op::CountOp);
}

/// `-l 100`: the cycle forever, or exactly `limit` calls (whole cycles, then the first calls
/// of the next).
fn full_load(
    p: &mut Prog,
    cycle: &[(u64, f64)],
    counter: u32,
    limit: Option<u64>,
) -> InputResult<()> {
    let n = cycle.len() as u64;
    match limit {
        Some(total) => {
            p.repeat(total / n, 0, "stress-ng --cpu-ops", |p| {
                for &(ns, _) in cycle {
                    call(p, ns, counter);
                }
                Ok(())
            })?;
            for &(ns, _) in &cycle[..(total % n) as usize] {
                call(p, ns, counter);
            }
        }
        None => {
            let top = p.here();
            for &(ns, _) in cycle {
                call(p, ns, counter);
            }
            p.push(Op::Jump { to: top });
        }
    }
    Ok(())
}

/// `0 < P < 100`: the load-slice loop; the exit check after a slice's sleep jumps past the
/// cycle to the program's end (the op after the final `Jump`).
fn load_slices(
    p: &mut Prog,
    cfg: &StressNgConfig,
    cycle: &[(u64, f64)],
    counter: u32,
    pct: u32,
    limit: Option<u64>,
) {
    let slice_ms = cfg.cpu_load_slice as i16;
    p.push(Op::DutyStart { slice_ms });
    let top = p.here();
    // Each call: Run, Up, CountOp, DutyCall (4 ops); then the Jump.
    let exit_to = top + cycle.len() as u32 * 4 + 1;
    for &(ns, _) in cycle {
        call(p, ns, counter);
        p.push(Op::DutyCall {
            load_pct: pct as u8,
            slice_ms,
            exit_to,
            stop_calls: limit.unwrap_or(0),
        });
    }
    p.push(Op::Jump { to: top });
    debug_assert_eq!(p.here(), exit_to);
}
