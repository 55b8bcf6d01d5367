//! What a workload hands the engine ([`WorkloadPlan`]), and the checks that it can run
//! on a machine ([`validate_plan`], [`PlanError`]).

use crate::cpumask::CpuMask;
use crate::task::{Op, Program, SemId, TaskSpec};
use crate::topology::Machine;

/// What a workload hands the engine: programs, tasks, semaphores, barriers, metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadPlan {
    pub programs: Vec<Program>,
    pub tasks: Vec<TaskSpec>,
    /// Initial count of each semaphore.
    pub sems: Vec<u64>,
    /// Cache lines a post to each semaphore leaves dirty for the task that takes the unit
    /// (the message a socket write queues, the counters a read frees), by semaphore index;
    /// shorter than `sems` means 0 for the rest. The taker pays them at its next `Run`, by
    /// the distance from the poster's CPU ([`crate::cost::CostModel::handoff_line_ns`]).
    pub sem_handoff_lines: Vec<u16>,
    pub nr_barriers: usize,
    /// Names of latency metrics recorded by `Op::Sample`.
    pub metrics: Vec<String>,
    /// CPU masks named by `Op::SetAffinity` (by index).
    pub cpumasks: Vec<CpuMask>,
    /// Placement group of each task (same order as `tasks`; `None` = in no group, e.g. a
    /// benchmark's main thread), for per-group placement (`[workload] group_cpus`). Empty =
    /// no groups. Left to the generators, which know their benchmark's structure.
    pub task_groups: Vec<Option<u32>>,
    /// Number of user-space spin locks (`Op::SpinLock`).
    pub nr_spinlocks: usize,
}

/// Why a workload plan cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("task {task} ('{comm}') names program {program}, but only {nr} exist")]
    NoProgram {
        task: usize,
        comm: String,
        program: u32,
        nr: usize,
    },
    #[error("task {task} ('{comm}') may run on no online CPU")]
    NoAllowedCpu { task: usize, comm: String },
    #[error("program '{name}' op {op} refers to {what} {id}, which does not exist")]
    BadReference {
        name: String,
        op: usize,
        what: &'static str,
        id: u32,
    },
    #[error("program '{0}' is empty")]
    EmptyProgram(String),
    #[error(
        "task {task} ('{comm}') sets its affinity to CPUs '{mask}', none of which is online \
         in its cpuset ('{cpuset}'): sched_setaffinity() would fail with EINVAL"
    )]
    EmptyAffinity {
        task: usize,
        comm: String,
        mask: String,
        cpuset: String,
    },
}

/// Check a workload plan against the machine as [`Engine::new`] does (`Engine::new` runs it
/// first), so that a scenario can be checked before any run.
///
/// [`Engine::new`]: super::Engine::new
pub fn validate_plan(machine: &Machine, plan: &WorkloadPlan) -> Result<(), PlanError> {
    for p in &plan.programs {
        if p.ops.is_empty() {
            return Err(PlanError::EmptyProgram(p.name.clone()));
        }
        for (i, op) in p.ops.iter().enumerate() {
            validate_op(machine, plan, p, i, *op)?;
        }
    }
    for (i, t) in plan.tasks.iter().enumerate() {
        if t.program as usize >= plan.programs.len() {
            return Err(PlanError::NoProgram {
                task: i,
                comm: t.comm.clone(),
                program: t.program,
                nr: plan.programs.len(),
            });
        }
        let cpuset = task_cpuset(t, &machine.online);
        let allowed = t.cpus_allowed.unwrap_or(machine.online).and(&cpuset);
        if allowed.is_empty() {
            return Err(PlanError::NoAllowedCpu {
                task: i,
                comm: t.comm.clone(),
            });
        }
        validate_affinities(plan, i, &cpuset)?;
    }
    Ok(())
}

/// Op `i` of program `p` names only things the plan has (semaphores, slots, ops of its own
/// program, locks, barriers, metrics, tasks started by a `Fork`) and valid parameters.
fn validate_op(
    machine: &Machine,
    plan: &WorkloadPlan,
    p: &Program,
    i: usize,
    op: Op,
) -> Result<(), PlanError> {
    let bad = |what, id| PlanError::BadReference {
        name: p.name.clone(),
        op: i,
        what,
        id,
    };
    match op {
        Op::Down { sem }
        | Op::Up { sem, .. }
        | Op::UpMany { sem, .. }
        | Op::TryDown { sem, .. }
        | Op::UpStamped { sem, .. }
        | Op::UpThreshold { sem, .. }
        | Op::UpPage { sem, .. }
        | Op::WakeNext { sem, .. }
        | Op::Wake { sem, .. }
            if sem as usize >= plan.sems.len() =>
        {
            Err(bad("semaphore", sem as SemId))
        }
        Op::DownAll { sem, into }
            if sem as usize >= plan.sems.len() || into as usize >= plan.sems.len() =>
        {
            Err(bad("semaphore", sem.max(into) as SemId))
        }
        Op::TryDown { else_to: to, .. } if to as usize >= p.ops.len() => Err(bad("op", to)),
        Op::UpStamped { slot, .. } if slot >= 4 => Err(bad("mark slot", slot as u32)),
        Op::UpPage { page: 0, .. } => Err(bad("page size (>= 1 message)", 0)),
        Op::DutyCall { load_pct, .. } if load_pct == 0 || load_pct >= 100 => {
            Err(bad("load percentage (1-99)", load_pct as u32))
        }
        Op::DutyCall { exit_to, .. } if exit_to as usize >= p.ops.len() => Err(bad("op", exit_to)),
        Op::SpinLock { lock } | Op::SpinUnlock { lock } if lock as usize >= plan.nr_spinlocks => {
            Err(bad("spin lock", lock))
        }
        Op::PerCpuSpinLock { base } if base as usize + machine.nr_cpus() > plan.nr_spinlocks => {
            Err(bad("per-CPU spin lock base", base))
        }
        Op::Fork { task }
            if plan.tasks.get(task as usize).map(|t| t.start_ns)
                != Some(TaskSpec::START_ON_FORK_OP) =>
        {
            Err(bad(
                "task forked by an op (start_ns = START_ON_FORK_OP)",
                task,
            ))
        }
        Op::Barrier { id, .. } if id as usize >= plan.nr_barriers => Err(bad("barrier", id)),
        Op::Loop { to, .. } | Op::Jump { to } if to as usize >= p.ops.len() => Err(bad("op", to)),
        Op::Loop { slot, .. } if slot >= 4 => Err(bad("loop slot", slot as u32)),
        Op::Mark { slot } | Op::Sample { slot, .. } if slot >= 4 => {
            Err(bad("mark slot", slot as u32))
        }
        Op::Sample { metric, .. } if metric as usize >= plan.metrics.len() => {
            Err(bad("metric", metric as u32))
        }
        _ => Ok(()),
    }
}

/// Online CPUs of a task's cpuset.
pub(super) fn task_cpuset(spec: &TaskSpec, online: &CpuMask) -> CpuMask {
    spec.cpuset.unwrap_or(*online).and(online)
}

/// Every `SetAffinity` of task `i`'s program names an existing mask that leaves it an
/// online CPU of its cpuset (else the real `sched_setaffinity()` fails with EINVAL, and the
/// benchmarks exit on that error).
fn validate_affinities(plan: &WorkloadPlan, i: usize, cpuset: &CpuMask) -> Result<(), PlanError> {
    let t = &plan.tasks[i];
    let prog = &plan.programs[t.program as usize];
    for (op_i, op) in prog.ops.iter().enumerate() {
        let Op::SetAffinity { mask } = *op else {
            continue;
        };
        let Some(m) = plan.cpumasks.get(mask as usize) else {
            return Err(PlanError::BadReference {
                name: prog.name.clone(),
                op: op_i,
                what: "CPU mask",
                id: mask,
            });
        };
        if m.and(cpuset).is_empty() {
            return Err(PlanError::EmptyAffinity {
                task: i,
                comm: t.comm.clone(),
                mask: m.to_string(),
                cpuset: cpuset.to_string(),
            });
        }
    }
    Ok(())
}

/// All programs' ops in one table, each followed by an `Exit`, and each program's first
/// index. `validate_plan()` has kept every jump inside its program.
pub(super) fn flatten_programs(programs: &[Program]) -> (Vec<Op>, Vec<u32>) {
    let total: usize = programs.iter().map(|p| p.ops.len() + 1).sum();
    assert!(
        u32::try_from(total).is_ok(),
        "{total} ops do not fit the interpreter's u32 index"
    );
    let mut ops = Vec::with_capacity(total);
    let mut bases = Vec::with_capacity(programs.len());
    for p in programs {
        bases.push(u32::try_from(ops.len()).expect("checked above: total ops fit in u32"));
        ops.extend_from_slice(&p.ops);
        ops.push(Op::Exit);
    }
    (ops, bases)
}

/// How many program timers a plan uses (one past the highest `TimerStart`/`TimerWait` id).
pub(super) fn nr_timers(programs: &[Program]) -> usize {
    programs
        .iter()
        .flat_map(|p| p.ops.iter())
        .filter_map(|op| match *op {
            Op::TimerStart { timer } | Op::TimerWait { timer, .. } => Some(timer as usize + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}
