//! Several workloads in one run: their plans joined into the one plan the engine runs, and
//! what each workload owns in it ([`PlanPart`]), so that each benchmark's report is made from
//! its own tasks, operations, metrics and counters ([`super::view::RunView`]).
//!
//! A plan names its programs, tasks, semaphores, barriers, metrics, CPU masks, periodic
//! timers, spin locks and memory processes by index from 0. Appending a plan to another
//! shifts every such index of the appended plan by what the plans before it already use, so
//! the workloads share nothing but the machine: no semaphore, timer or lock is common to two
//! benchmarks, as two programs started side by side share none. A workload's metrics are
//! renamed `w<N>.<name>` (N from 2) so that the run's latency tables tell them apart.
//!
//! Left out: a shared `MAP_SHARED` key (`TaskMemory::shm_key`) stays as the generator chose
//! it, so two workloads naming the same key map the same shared object (no generator gives
//! one today except the web server's own zones, which are per instance).

use std::ops::Range;

use crate::engine::WorkloadPlan;
use crate::task::{Op, TaskSpec};

/// The most workloads one run may hold (`[[workload]]` entries or `+`-joined commands).
pub const MAX_WORKLOADS: usize = 16;

/// The latest start of a workload (`start_ms`): one day, the longest run
/// (`run.max_duration_s`'s default).
pub const MAX_START_MS: u64 = 86_400_000;

/// Start `plan` `offset_ns` later: every task it starts by itself (not those its tasks fork)
/// starts that much later, so the whole workload does.
pub fn delay(plan: &mut WorkloadPlan, offset_ns: u64) {
    let started = (plan.tasks.iter_mut()).filter(|t| t.start_ns != TaskSpec::START_ON_FORK_OP);
    for t in started {
        t.start_ns += offset_ns;
    }
}

/// The most metrics one run's workloads may record together (`Op::Sample` names a metric by
/// a `u8`).
pub const MAX_METRICS: usize = 256;

/// What one workload owns in the joined plan: index ranges and bases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanPart {
    /// 0 for the first workload.
    pub index: usize,
    pub tasks: Range<usize>,
    pub metrics: Range<usize>,
    /// Added to the workload's own semaphore numbers.
    pub sem_base: u32,
}

impl PlanPart {
    /// The part of a plan that is one workload alone: everything.
    pub fn whole(plan: &WorkloadPlan) -> PlanPart {
        PlanPart {
            index: 0,
            tasks: 0..plan.tasks.len(),
            metrics: 0..plan.metrics.len(),
            sem_base: 0,
        }
    }

    /// The prefix of this workload's metric names in the joined plan (`""` for the first).
    pub fn metric_prefix(&self) -> String {
        match self.index {
            0 => String::new(),
            i => format!("w{}.", i + 1),
        }
    }
}

/// Index counts a plan uses, the bases of the next appended plan.
#[derive(Debug, Clone, Copy, Default)]
struct Bases {
    programs: u32,
    tasks: u32,
    sems: u32,
    barriers: u32,
    metrics: u32,
    cpumasks: u32,
    timers: u32,
    spinlocks: u32,
    processes: u32,
    groups: u32,
}

impl Bases {
    fn of(plan: &WorkloadPlan) -> Bases {
        let ops = plan.programs.iter().flat_map(|p| p.ops.iter());
        let timers = ops
            .filter_map(|op| match *op {
                Op::TimerStart { timer } | Op::TimerWait { timer, .. } => Some(timer + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let processes = (plan.tasks.iter())
            .filter_map(|t| t.memory.process.map(|p| p + 1))
            .max()
            .unwrap_or(0);
        let groups = (plan.task_groups.iter().flatten().map(|g| g + 1))
            .max()
            .unwrap_or(0);
        Bases {
            programs: count(plan.programs.len()),
            tasks: count(plan.tasks.len()),
            sems: count(plan.sems.len()),
            barriers: count(plan.nr_barriers),
            metrics: count(plan.metrics.len()),
            cpumasks: count(plan.cpumasks.len()),
            timers,
            spinlocks: count(plan.nr_spinlocks),
            processes,
            groups,
        }
    }
}

/// A table length as an index base. Plans are bounded far below `u32::MAX` (task, program
/// and semaphore counts are limited by `run.max_tasks`).
fn count(n: usize) -> u32 {
    u32::try_from(n).expect("plan table longer than u32 indices")
}

/// Join `plans` (one per workload, each already placed) into one plan; each workload's part
/// in it, in order. Errors when the workloads together record more than [`MAX_METRICS`]
/// metrics.
pub fn join(plans: Vec<WorkloadPlan>) -> Result<(WorkloadPlan, Vec<PlanPart>), String> {
    let mut joined = WorkloadPlan::default();
    let mut parts = Vec::with_capacity(plans.len());
    for (index, plan) in plans.into_iter().enumerate() {
        let at = Bases::of(&joined);
        let part = PlanPart {
            index,
            tasks: joined.tasks.len()..joined.tasks.len() + plan.tasks.len(),
            metrics: joined.metrics.len()..joined.metrics.len() + plan.metrics.len(),
            sem_base: at.sems,
        };
        if part.metrics.end > MAX_METRICS {
            return Err(format!(
                "the workloads record {} latency metrics together, above the limit of \
                 {MAX_METRICS} for one run (accepted: fewer workloads)",
                part.metrics.end
            ));
        }
        append(&mut joined, plan, at, &part.metric_prefix());
        parts.push(part);
    }
    Ok((joined, parts))
}

/// Append `plan` to `joined`, shifting its indices by `at`.
fn append(joined: &mut WorkloadPlan, plan: WorkloadPlan, at: Bases, metric_prefix: &str) {
    let had_groups = !joined.task_groups.is_empty() || !plan.task_groups.is_empty();
    if had_groups {
        // Keep `task_groups` one entry per task once any workload has groups.
        joined.task_groups.resize(joined.tasks.len(), None);
    }
    for mut program in plan.programs {
        for op in &mut program.ops {
            *op = shifted(*op, at);
        }
        joined.programs.push(program);
    }
    for mut task in plan.tasks {
        task.program += at.programs;
        if let Some(p) = &mut task.memory.process {
            *p += at.processes;
        }
        joined.tasks.push(task);
    }
    if had_groups {
        let n = joined.tasks.len() - joined.task_groups.len();
        let groups = plan
            .task_groups
            .into_iter()
            .map(|g| g.map(|g| g + at.groups));
        joined
            .task_groups
            .extend(groups.chain(std::iter::repeat(None)).take(n));
    }
    if !plan.sem_handoff_lines.is_empty() {
        // Keep the hand-off lines aligned with the joined semaphores (shorter = 0).
        let base = joined.sems.len();
        joined.sem_handoff_lines.resize(base, 0);
        joined.sem_handoff_lines.extend(plan.sem_handoff_lines);
    }
    joined.sems.extend(plan.sems);
    joined.nr_barriers += plan.nr_barriers;
    joined
        .metrics
        .extend((plan.metrics.into_iter()).map(|m| format!("{metric_prefix}{m}")));
    joined.cpumasks.extend(plan.cpumasks);
    joined.nr_spinlocks += plan.nr_spinlocks;
}

/// `op` with every index it names shifted by `at`.
fn shifted(op: Op, at: Bases) -> Op {
    let metric = |m: u8| u8::try_from(u32::from(m) + at.metrics).expect("checked by join()");
    match op {
        Op::Down { .. }
        | Op::Up { .. }
        | Op::UpMany { .. }
        | Op::TryDown { .. }
        | Op::DownAll { .. }
        | Op::UpStamped { .. }
        | Op::UpThreshold { .. }
        | Op::UpPage { .. }
        | Op::WakeNext { .. }
        | Op::Wake { .. } => sems_shifted(op, at.sems),
        Op::Barrier { id, count } => Op::Barrier {
            id: id + at.barriers,
            count,
        },
        Op::Sample { slot, metric: m } => Op::Sample {
            slot,
            metric: metric(m),
        },
        Op::SetAffinity { mask } => Op::SetAffinity {
            mask: mask + at.cpumasks,
        },
        Op::TimerStart { timer } => Op::TimerStart {
            timer: timer + at.timers,
        },
        Op::TimerWait {
            timer,
            period_ns,
            absolute,
        } => Op::TimerWait {
            timer: timer + at.timers,
            period_ns,
            absolute,
        },
        Op::Fork { task } => Op::Fork {
            task: task + at.tasks,
        },
        Op::SpinLock { .. } | Op::SpinUnlock { .. } | Op::PerCpuSpinLock { .. } => {
            spinlocks_shifted(op, at.spinlocks)
        }
        // Ops that name no shared index: program counters (`Loop`, `Jump`, `else_to`,
        // `exit_to`) are within the program, marks and loop slots within the task.
        Op::Run { .. }
        | Op::RunExp { .. }
        | Op::SpinWall { .. }
        | Op::Sleep { .. }
        | Op::SleepExp { .. }
        | Op::Loop { .. }
        | Op::Jump { .. }
        | Op::Mark { .. }
        | Op::CountOp
        | Op::Yield
        | Op::SetNice { .. }
        | Op::Exit
        | Op::DutyStart { .. }
        | Op::DutyCall { .. }
        | Op::Snapshot { .. }
        | Op::Exec
        | Op::PerCpuSpinUnlock
        | Op::Stop => op,
    }
}

/// `op` with the semaphores it names shifted by `by` (other ops unchanged).
fn sems_shifted(op: Op, by: u32) -> Op {
    match op {
        Op::Down { sem } => Op::Down { sem: sem + by },
        Op::Up { sem, sync } => Op::Up {
            sem: sem + by,
            sync,
        },
        Op::UpMany { sem, n, sync } => Op::UpMany {
            sem: sem + by,
            n,
            sync,
        },
        Op::TryDown { sem, else_to } => Op::TryDown {
            sem: sem + by,
            else_to,
        },
        Op::DownAll { sem, into } => Op::DownAll {
            sem: sem + by,
            into: into + by,
        },
        Op::UpStamped { sem, sync, slot } => Op::UpStamped {
            sem: sem + by,
            sync,
            slot,
        },
        Op::UpThreshold {
            sem,
            sync,
            min_count,
        } => Op::UpThreshold {
            sem: sem + by,
            sync,
            min_count,
        },
        Op::UpPage { sem, sync, page } => Op::UpPage {
            sem: sem + by,
            sync,
            page,
        },
        Op::WakeNext { sem, sync } => Op::WakeNext {
            sem: sem + by,
            sync,
        },
        Op::Wake { sem, all } => Op::Wake { sem: sem + by, all },
        other => other,
    }
}

/// `op` with the spinlocks it names shifted by `by` (other ops unchanged).
fn spinlocks_shifted(op: Op, by: u32) -> Op {
    match op {
        Op::SpinLock { lock } => Op::SpinLock { lock: lock + by },
        Op::SpinUnlock { lock } => Op::SpinUnlock { lock: lock + by },
        Op::PerCpuSpinLock { base } => Op::PerCpuSpinLock { base: base + by },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Program;

    fn plan_with(ops: Vec<Op>, nr_tasks: usize) -> WorkloadPlan {
        WorkloadPlan {
            programs: vec![Program {
                name: "p".into(),
                ops,
            }],
            tasks: (0..nr_tasks)
                .map(|i| TaskSpec {
                    comm: format!("t{i}"),
                    ..TaskSpec::default()
                })
                .collect(),
            sems: vec![0, 1],
            sem_handoff_lines: vec![],
            nr_barriers: 1,
            metrics: vec!["wakeup".into()],
            cpumasks: vec![],
            task_groups: vec![],
            nr_spinlocks: 3,
        }
    }

    /// Hand-off lines stay with their semaphores: a plan without any leaves zeros in front of
    /// a later plan's.
    #[test]
    fn handoff_lines_stay_aligned_with_their_semaphores() {
        let ops = vec![Op::Down { sem: 1 }, Op::Exit];
        let with = |lines: Vec<u16>| WorkloadPlan {
            sem_handoff_lines: lines,
            ..plan_with(ops.clone(), 1)
        };
        let (joined, _) = join(vec![with(vec![]), with(vec![0, 5]), with(vec![7])]).unwrap();
        assert_eq!(joined.sems.len(), 6);
        assert_eq!(joined.sem_handoff_lines, vec![0, 0, 0, 5, 7]);
        let (first_only, _) = join(vec![with(vec![3, 4]), with(vec![])]).unwrap();
        assert_eq!(first_only.sem_handoff_lines, vec![3, 4]);
    }

    #[test]
    fn the_second_plan_names_only_its_own_indices() {
        let ops = vec![
            Op::Down { sem: 1 },
            Op::Barrier { id: 0, count: 2 },
            Op::Sample { slot: 0, metric: 0 },
            Op::TimerWait {
                timer: 0,
                period_ns: 1,
                absolute: false,
            },
            Op::Fork { task: 1 },
            Op::PerCpuSpinLock { base: 1 },
            Op::Exit,
        ];
        let (joined, parts) = join(vec![plan_with(ops.clone(), 2), plan_with(ops, 3)]).unwrap();
        assert_eq!(joined.tasks.len(), 5);
        assert_eq!(joined.sems, vec![0, 1, 0, 1]);
        assert_eq!(joined.nr_barriers, 2);
        assert_eq!(joined.nr_spinlocks, 6);
        assert_eq!(joined.metrics, vec!["wakeup", "w2.wakeup"]);
        assert_eq!(joined.tasks[2].program, 1);
        assert_eq!(
            joined.programs[1].ops[..6],
            [
                Op::Down { sem: 3 },
                Op::Barrier { id: 1, count: 2 },
                Op::Sample { slot: 0, metric: 1 },
                Op::TimerWait {
                    timer: 1,
                    period_ns: 1,
                    absolute: false
                },
                Op::Fork { task: 3 },
                Op::PerCpuSpinLock { base: 4 },
            ]
        );
        assert_eq!(parts[1].tasks, 2..5);
        assert_eq!(parts[1].metrics, 1..2);
        assert_eq!(parts[1].sem_base, 2);
        assert_eq!(parts[1].metric_prefix(), "w2.");
    }

    #[test]
    fn one_plan_joins_to_itself() {
        let plan = plan_with(vec![Op::Down { sem: 1 }, Op::Exit], 2);
        let (joined, parts) = join(vec![plan.clone()]).unwrap();
        assert_eq!(joined, plan);
        assert_eq!(parts, vec![PlanPart::whole(&plan)]);
    }

    #[test]
    fn too_many_metrics_are_refused() {
        let mut plan = plan_with(vec![Op::Exit], 1);
        plan.metrics = (0..200).map(|i| format!("m{i}")).collect();
        let err = join(vec![plan.clone(), plan]).unwrap_err();
        assert!(err.contains("400 latency metrics"), "{err}");
    }
}
