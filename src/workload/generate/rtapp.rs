//! rt-app use cases as task programs (reference/workloads.md §4; scheduler-tools/rt-app).
//!
//! Threads: every instance of every task, in file order (`RtAppSpec::threads`), created from
//! CPU 0 (or the first CPU of the task's `cpus`). Each thread: the common start barrier (every
//! initial thread), `delay` (a sleep), `TimerStart` for the timers it uses, then the phase
//! list `loop` times (forever without a bound), each phase its own `loop` times, then exit.
//!
//! Events:
//! - `run` µs: work calibrated on the calibration CPU — µs there, so the reference work is
//!   scaled by that CPU's capacity (`calibration: "CPUn"`); a given ns-per-loop is taken as
//!   reference speed. `runtime` µs (spin until that much wall time passed): approximated by
//!   the same amount of work — under preemption or on a slower CPU the real event finishes
//!   with less work done (why: the IR has no wall-clock-bounded run).
//! - `sleep`: `Sleep` (nanosleep, with the timer slack). `timer`: `TimerWait` on a timer per
//!   thread (`ref` starting with "unique") or shared by name, relative or absolute mode.
//! - `lock`/`unlock`: a semaphore of 1 unit per mutex name. `wait {ref, mutex}`: `Up(mutex)`,
//!   `Down(cond)`, `Down(mutex)` — not atomic as `pthread_cond_wait` is: a signal sent while
//!   the unlock preempted the waiter before it blocks is lost (rare; needs a same-CPU
//!   preemption inside a zero-time window). `signal`/`broad`: `Wake` one/all (lost when
//!   nobody waits). `sync`: signal then wait.
//! - `suspend X`: wait on condition X; `resume X`: broadcast it (lost if nobody waits).
//! - `sem_post`/`sem_wait`: a counting semaphore per name, initially 0.
//! - `barrier` name: the engine barrier with rt-app's participant count.
//! - `yield`: `Yield`. `mem` bytes: memset work at [`super::copy_ns`].
//! - `fork task`: the tasks it can start are created at time 0 (fork placement from the
//!   forking task's CPU) and wait on a per-event gate; the `fork` event posts the gate. The
//!   pool holds as many threads as the event can run (at most [`FORK_POOL_MAX`]; later forks
//!   start nothing). Why: the engine has no run-time task creation.
//!
//! Scheduling keys: the task's `policy` becomes its [`TaskPolicy`]: SCHED_OTHER / BATCH /
//! IDLE run in the fair class with `priority` as the nice value (per phase with `SetNice`);
//! SCHED_FIFO / SCHED_RR run in the RT class at `priority` (1..=99, rt-app's default 10).
//! SCHED_DEADLINE tasks run as nice-0 fair tasks (no DL class is simulated). A phase that
//! switches the policy only changes the nice value (the IR has no run-time policy change).
//!
//! Affinity, as rt-app's `set_thread_affinity()` does it: threads start with the affinity
//! they inherit (all CPUs, or the `taskset`/`numactl` prefix's); at the start of every phase
//! the thread sets the phase's `cpus`, else the task's `cpus`, else its inherited mask
//! (`Op::SetAffinity`, a no-op when unchanged, as rt-app compares before calling). Threads
//! of a task with no `cpus` anywhere never change affinity. Threads a `fork` event starts
//! begin with the inherited mask rather than the forking thread's current one (the pool is
//! created up front); their first phase sets their own.

use std::collections::BTreeMap;

use super::{PlanBuilder, Prog, copy_ns, creator_cpu};
use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::error::{InputError, InputResult};
use crate::task::{Op, TaskPolicy, TaskSpec};
use crate::topology::Machine;
use crate::workload::rtapp::{
    Calibration, Event, RtAppPolicy, RtAppSpec, RtAppTask, SchedParams, TimerMode,
};

/// Most threads pre-created for one `fork` event.
pub const FORK_POOL_MAX: u64 = 16;
/// Footprint of an rt-app thread without `mem` events (KiB).
pub const FOOTPRINT_KIB: u32 = 16;

#[derive(Default)]
struct Names {
    mutexes: BTreeMap<String, u32>,
    conds: BTreeMap<String, u32>,
    sems: BTreeMap<String, u32>,
    barriers: BTreeMap<String, u32>,
    timers: BTreeMap<String, u32>,
    nr_timers: u32,
}

fn clamp_nice(v: i32) -> i8 {
    v.clamp(-20, 19) as i8
}

/// The thread's `sched_setattr()` policy; RT priorities are clamped to 1..=99.
fn task_policy(t: &RtAppTask) -> TaskPolicy {
    let rt_priority = t.rt_priority.unwrap_or(10).clamp(1, 99) as u8;
    match t.policy {
        RtAppPolicy::Batch => TaskPolicy::Batch,
        RtAppPolicy::Idle => TaskPolicy::Idle,
        RtAppPolicy::Fifo => TaskPolicy::Fifo { rt_priority },
        RtAppPolicy::Rr => TaskPolicy::Rr { rt_priority },
        RtAppPolicy::Other | RtAppPolicy::Deadline => TaskPolicy::Normal,
    }
}

/// One template use: where its fork events' gates are.
struct Ctx<'a> {
    spec: &'a RtAppSpec,
    work_scale_1024: u64,
    /// Gate semaphore of each fork event, keyed by (task, phase, event).
    fork_gates: BTreeMap<(usize, usize, usize), u32>,
}

fn sem_of(b: &mut PlanBuilder, map: &mut BTreeMap<String, u32>, name: &str, init: u64) -> u32 {
    if let Some(&s) = map.get(name) {
        return s;
    }
    let s = b.sem(init);
    map.insert(name.to_string(), s);
    s
}

/// How many times the event at (phase) runs over one thread's life, if bounded.
fn event_runs(t: &RtAppTask, phase: usize) -> Option<u64> {
    if t.loop_count == Some(0) {
        return Some(0);
    }
    let l = t.loop_count?;
    Some(l * t.phases[phase].loop_count?)
}

/// Whether any phase or the task itself names `cpus` (then every phase sets affinity).
fn uses_affinity(t: &RtAppTask) -> bool {
    t.cpus.is_some() || t.phases.iter().any(|ph| ph.cpus.is_some())
}

/// `set_thread_affinity()` at a phase start: the phase's CPUs, else the task's, else the
/// inherited mask (all CPUs here; the engine intersects with the task's cpuset).
fn phase_affinity(b: &mut PlanBuilder, t: &RtAppTask, phase: usize, p: &mut Prog) {
    if !uses_affinity(t) {
        return;
    }
    let mask = t.phases[phase]
        .cpus
        .or(t.cpus)
        .unwrap_or_else(|| CpuMask::first_n(crate::cpumask::NR_CPUS_MAX));
    let mask = b.cpumask(mask);
    p.push(Op::SetAffinity { mask });
}

/// Timer ids of the thread of task `task`, numbered across the plan as first named: the
/// thread's unique timers (private to it, by reference) and the ids it starts, in order.
fn thread_timers(names: &mut Names, task: &RtAppTask) -> (BTreeMap<String, u32>, Vec<u32>) {
    let mut unique: BTreeMap<String, u32> = BTreeMap::new();
    let mut timer_ids = Vec::new();
    for ph in &task.phases {
        for e in &ph.events {
            if let Event::Timer {
                reference,
                unique: u,
                ..
            } = e
            {
                let id = if *u {
                    *unique.entry(reference.clone()).or_insert_with(|| {
                        names.nr_timers += 1;
                        names.nr_timers - 1
                    })
                } else {
                    *names.timers.entry(reference.clone()).or_insert_with(|| {
                        names.nr_timers += 1;
                        names.nr_timers - 1
                    })
                };
                if !timer_ids.contains(&id) {
                    timer_ids.push(id);
                }
            }
        }
    }
    (unique, timer_ids)
}

/// The nice a phase's `sched` sets: its priority under a fair policy, else the task's nice
/// (fair) or 0 (RT and deadline).
fn phase_nice(s: &SchedParams, task_nice: i8) -> i8 {
    let fair = s.policy.is_none_or(|pol| pol.is_fair());
    match (fair, s.priority) {
        (true, Some(prio)) => clamp_nice(prio),
        (true, None) => task_nice,
        (false, _) => 0,
    }
}

/// Emit one thread's program body (after its start barrier / gate).
fn body(
    b: &mut PlanBuilder,
    names: &mut Names,
    ctx: &Ctx,
    ti: usize,
    p: &mut Prog,
) -> InputResult<()> {
    let task = &ctx.spec.tasks[ti];
    let task_nice = task.nice.map(clamp_nice).unwrap_or(0);
    // Timers used by this thread: unique ones are private.
    let (unique, timer_ids) = thread_timers(names, task);
    if task.delay_us > 0 {
        p.push(Op::Sleep {
            ns: task.delay_us * 1000,
        });
    }
    for &timer in &timer_ids {
        p.push(Op::TimerStart { timer });
    }
    if task.loop_count == Some(0) {
        return Ok(());
    }
    let task_top = p.here();
    let phases = |b: &mut PlanBuilder, names: &mut Names, p: &mut Prog| -> InputResult<()> {
        for (pi, ph) in task.phases.iter().enumerate() {
            phase_affinity(b, task, pi, p);
            if let Some(s) = &ph.sched {
                p.push(Op::SetNice {
                    nice: phase_nice(s, task_nice),
                });
            }
            let events = |b: &mut PlanBuilder, names: &mut Names, p: &mut Prog| {
                for (ei, e) in ph.events.iter().enumerate() {
                    event(b, names, ctx, ti, (pi, ei), e, &unique, p)?;
                }
                Ok(())
            };
            match ph.loop_count {
                Some(n) => p.repeat(n, 0, "rt-app phase loop", |p| events(b, names, p))?,
                None => {
                    let top = p.here();
                    events(b, names, p)?;
                    p.push(Op::Jump { to: top });
                    return Ok(());
                }
            }
        }
        Ok(())
    };
    match task.loop_count {
        Some(n) => p.repeat(n, 1, "rt-app task loop", |p| phases(b, names, p))?,
        None => {
            phases(b, names, p)?;
            p.push(Op::Jump { to: task_top });
        }
    }
    Ok(())
}

/// Emit the ops of event `e` (at (phase, event) of task `ti`); the synchronisation events
/// are [`sync_event`]'s.
#[allow(clippy::too_many_arguments)]
fn event(
    b: &mut PlanBuilder,
    names: &mut Names,
    ctx: &Ctx,
    ti: usize,
    at: (usize, usize),
    e: &Event,
    unique: &BTreeMap<String, u32>,
    p: &mut Prog,
) -> InputResult<()> {
    match e {
        Event::Run { work_us } => {
            p.run(work_us * 1000 * ctx.work_scale_1024 / 1024);
        }
        Event::Runtime { wall_us } => {
            p.run(wall_us * 1000);
        }
        Event::Sleep { us } => {
            p.push(Op::Sleep { ns: us * 1000 });
        }
        Event::Timer {
            reference,
            unique: u,
            period_us,
            mode,
        } => {
            let timer = if *u {
                unique[reference]
            } else {
                names.timers[reference]
            };
            p.push(Op::TimerWait {
                timer,
                period_ns: period_us * 1000,
                absolute: *mode == TimerMode::Absolute,
            });
        }
        Event::Lock { .. }
        | Event::Unlock { .. }
        | Event::Wait { .. }
        | Event::Sync { .. }
        | Event::Signal { .. }
        | Event::Broad { .. }
        | Event::Barrier { .. }
        | Event::Suspend { .. }
        | Event::Resume { .. }
        | Event::SemPost { .. }
        | Event::SemWait { .. } => sync_event(b, names, ctx.spec, ti, e, p),
        Event::Yield => {
            p.push(Op::Yield);
        }
        Event::Mem { bytes } => {
            p.run(copy_ns(*bytes));
        }
        Event::Fork { .. } => {
            let sem = ctx.fork_gates[&(ti, at.0, at.1)];
            p.push(Op::Up { sem, sync: false });
        }
    }
    Ok(())
}

/// Emit the ops of a synchronisation event of task `ti` (mutexes, conditions, barriers,
/// suspend/resume, semaphores), creating its semaphore or barrier on first use by name.
fn sync_event(
    b: &mut PlanBuilder,
    names: &mut Names,
    spec: &RtAppSpec,
    ti: usize,
    e: &Event,
    p: &mut Prog,
) {
    match e {
        Event::Lock { mutex } => {
            let sem = sem_of(b, &mut names.mutexes, mutex, 1);
            p.push(Op::Down { sem });
        }
        Event::Unlock { mutex } => {
            let sem = sem_of(b, &mut names.mutexes, mutex, 1);
            p.push(Op::Up { sem, sync: false });
        }
        Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
            let c = sem_of(b, &mut names.conds, cond, 0);
            let m = sem_of(b, &mut names.mutexes, mutex, 1);
            if matches!(e, Event::Sync { .. }) {
                p.push(Op::Wake { sem: c, all: false });
            }
            p.push(Op::Up {
                sem: m,
                sync: false,
            });
            p.push(Op::Down { sem: c });
            p.push(Op::Down { sem: m });
        }
        Event::Signal { cond } | Event::Broad { cond } => {
            let sem = sem_of(b, &mut names.conds, cond, 0);
            p.push(Op::Wake {
                sem,
                all: matches!(e, Event::Broad { .. }),
            });
        }
        Event::Barrier { name } => barrier_op(b, names, spec, name, p),
        Event::Suspend { value } => {
            let name = value.clone().unwrap_or_else(|| spec.tasks[ti].name.clone());
            let sem = sem_of(b, &mut names.conds, &name, 0);
            p.push(Op::Down { sem });
        }
        Event::Resume { task } => {
            let sem = sem_of(b, &mut names.conds, task, 0);
            p.push(Op::Wake { sem, all: true });
        }
        Event::SemPost { sem } => {
            let sem = sem_of(b, &mut names.sems, sem, 0);
            p.push(Op::Up { sem, sync: false });
        }
        Event::SemWait { sem } => {
            let sem = sem_of(b, &mut names.sems, sem, 0);
            p.push(Op::Down { sem });
        }
        _ => unreachable!("not a synchronisation event: {e:?}"),
    }
}

/// A `barrier` event: wait until all its participants (clamped to 1..=u32::MAX) arrive.
fn barrier_op(b: &mut PlanBuilder, names: &mut Names, spec: &RtAppSpec, name: &str, p: &mut Prog) {
    let id = match names.barriers.get(name) {
        Some(&id) => id,
        None => {
            let id = b.barrier();
            names.barriers.insert(name.to_string(), id);
            id
        }
    };
    let count = spec
        .barrier_participants(name)
        .clamp(1, u64::from(u32::MAX));
    p.push(Op::Barrier {
        id,
        count: count as u32,
    });
}

/// A fork pool: `size` threads of task `template` waiting on `gate`, forked by task `forker`.
struct ForkPool {
    template: usize,
    gate: u32,
    size: u64,
    forker: usize,
}

/// The gate of every fork event, keyed by (forking task, phase, event), and the pools they
/// release; an unknown task to fork is an input error.
#[allow(clippy::type_complexity)]
fn fork_pools(
    b: &mut PlanBuilder,
    spec: &RtAppSpec,
) -> InputResult<(BTreeMap<(usize, usize, usize), u32>, Vec<ForkPool>)> {
    let mut fork_gates = BTreeMap::new();
    let mut pools = Vec::new();
    for (ti, t) in spec.tasks.iter().enumerate() {
        for (pi, ph) in t.phases.iter().enumerate() {
            for (ei, e) in ph.events.iter().enumerate() {
                if let Event::Fork { task } = e {
                    let template = spec.task_index(task).ok_or_else(|| {
                        InputError::new("rt-app", format!("Can't fork unknown task {task}"))
                    })?;
                    let gate = b.sem(0);
                    fork_gates.insert((ti, pi, ei), gate);
                    let runs = event_runs(t, pi)
                        .map(|r| r * u64::from(t.instances))
                        .unwrap_or(FORK_POOL_MAX)
                        .min(FORK_POOL_MAX);
                    pools.push(ForkPool {
                        template,
                        gate,
                        size: runs,
                        forker: ti,
                    });
                }
            }
        }
    }
    Ok((fork_gates, pools))
}

/// A thread's cache footprint: its largest `mem` buffer (capped by `mem_buffer_size`), at
/// least [`FOOTPRINT_KIB`].
fn footprint_kib(spec: &RtAppSpec, t: &RtAppTask) -> u32 {
    let mem = t
        .phases
        .iter()
        .flat_map(|p| p.events.iter())
        .filter_map(|e| match e {
            Event::Mem { bytes } => Some((*bytes).min(spec.global.mem_buffer_size)),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    ((mem / 1024) as u32).max(FOOTPRINT_KIB)
}

/// The spec of a thread of task `t` named `name`, created from `parent_cpu`: its nice under
/// a fair policy (0 otherwise) and its policy.
fn thread_task(
    spec: &RtAppSpec,
    t: &RtAppTask,
    name: String,
    program: u32,
    parent_cpu: usize,
) -> TaskSpec {
    TaskSpec {
        comm: name,
        program,
        nice: if t.policy.is_fair() {
            t.nice.map(clamp_nice).unwrap_or(0)
        } else {
            0
        },
        cpus_allowed: None,
        start_ns: 0,
        parent_cpu,
        footprint_kib: footprint_kib(spec, t),
        policy: task_policy(t),
        ..Default::default()
    }
}

pub fn plan(spec: &RtAppSpec, machine: &Machine) -> InputResult<WorkloadPlan> {
    let mut b = PlanBuilder::new();
    let mut names = Names::default();
    let work_scale_1024 = match spec.global.calibration {
        Calibration::Cpu(c) if (c as usize) < machine.nr_cpus() => {
            u64::from(machine.cpus[c as usize].capacity)
        }
        _ => 1024,
    };
    // Fork gates and pools: (forking task, phase, event) → gate, and the pool size.
    let (fork_gates, pools) = fork_pools(&mut b, spec)?;
    let ctx = Ctx {
        spec,
        work_scale_1024,
        fork_gates,
    };
    let threads = spec.threads();
    let start = b.barrier();
    let nr_initial = threads.len().max(1) as u32;
    for th in &threads {
        let t = &spec.tasks[th.task];
        // Placement group: the rt-app task (all its instances and fork-pool threads).
        b.set_group(Some(th.task as u32));
        let mut p = Prog::new();
        p.push(Op::Barrier {
            id: start,
            count: nr_initial,
        });
        body(&mut b, &mut names, &ctx, th.task, &mut p)?;
        p.push(Op::Exit);
        let id = b.program(th.name.clone(), p);
        let parent_cpu = creator_cpu(machine, None);
        b.task(thread_task(spec, t, th.name.clone(), id, parent_cpu));
    }
    let mut index = threads.len() as u32;
    for pool in pools {
        let t = &spec.tasks[pool.template];
        b.set_group(Some(pool.template as u32));
        for _ in 0..pool.size {
            let mut p = Prog::new();
            p.push(Op::Down { sem: pool.gate });
            body(&mut b, &mut names, &ctx, pool.template, &mut p)?;
            p.push(Op::Exit);
            let name = format!("{}-{index}", t.name);
            index += 1;
            let id = b.program(name.clone(), p);
            let parent_cpu = creator_cpu(machine, spec.tasks[pool.forker].cpus.as_ref());
            b.task(thread_task(spec, t, name, id, parent_cpu));
        }
    }
    Ok(b.finish())
}
