//! Workload generators: each benchmark's typed configuration ([`WorkloadSpec`]) turned into
//! the task programs the engine runs ([`WorkloadPlan`]), step for step like the real program
//! (reference/workloads.md describes each one's thread structure).
//!
//! One file per benchmark: [`hackbench`], [`sched_pipe`] (`perf bench sched pipe`), [`schbench`], [`stressng`], [`netperf`] (TCP_RR,
//! UDP_RR and tbench) and [`rtapp`]. Each documents its model, the CPU cost it charges per
//! system call and why, and what it leaves out; docs/fidelity.md ("Workload generators")
//! collects the approximations. The results side — filling each benchmark's native result
//! struct from a finished run — is [`crate::workload::results`].
//!
//! Conventions shared by the generators:
//! - Tasks are created in the real program's creation order, and each one's `parent_cpu` is
//!   the CPU its creator runs on (CPU 0 for an unpinned main thread; the first allowed CPU when
//!   the creator is pinned elsewhere).
//! - Costs are reference-CPU work (`Op::Run`, at capacity 1024): the engine stretches them on
//!   slower or SMT-shared CPUs and scales them by `[machine.cost] speed_pct`. Scheduler costs
//!   (wakeup scans, IPIs, switches) are the engine's and are not repeated here.
//! - **The reference CPU** is one machine for every generator: the project's measurement VM
//!   (a 2.0 GHz Intel Xeon vCPU under Firecracker, kernel 6.18, docs/host-benchmarks.md). The
//!   benchmark kernels were timed there: schbench's naive matrix multiply (1.45 ns per
//!   multiply-add), stress-ng's `cpu` methods (1.772 × their i5-8350U time, stress-ng's own
//!   normalisation), hackbench's AF_UNIX write/read (whose per-message costs reproduce the
//!   measured task-clock to 0.5 %). Per-syscall costs of netperf/tbench and of thread
//!   creation are literature estimates for a current server core, not timed here. On another
//!   machine, set `speed_pct` to its speed relative to this reference.
//! - A benchmark's own duration (`-r`, `-l`, `--timeout`, rt-app `duration`) is returned by
//!   [`workload_duration_ns`] for the run layer to use as its simulated-time cap; benchmarks
//!   whose statistics thread ends the measurement do so with `Op::Stop`.

pub mod hackbench;
pub mod jbb;
pub mod linpack;
pub mod netperf;
pub mod rtapp;
pub mod schbench;
pub mod sched_pipe;
pub mod stream;
pub mod stressng;
pub mod web;

use crate::engine::WorkloadPlan;
use crate::error::{InputError, InputResult};
use crate::task::{Op, Program, ProgramId, SemId, TaskSpec};
use crate::topology::Machine;

use super::WorkloadSpec;

/// Copying user data (a `write()`/`read()` payload, a memset): ~10 GB/s on current server
/// cores, i.e. 0.1 ns per byte — what `copy_user_enhanced_fast_string` reaches for buffers in
/// L1/L2.
pub const COPY_PS_PER_BYTE: u64 = 100;

/// Work of copying `bytes` of user data.
pub fn copy_ns(bytes: u64) -> u64 {
    bytes * COPY_PS_PER_BYTE / 1000
}

// Per-system-call reference-CPU work shared by the generators (one home for each cost; the
// benchmarks' modules say where each is used). Typical costs on current x86 servers with
// mitigations (lmbench/perf measurements of small pipe transfers, fork and exit).

/// `pipe_write()` of a small payload (lock, copy into the pipe page, wake the reader), without
/// the copy itself ([`copy_ns`]).
pub const PIPE_WRITE_NS: u64 = 1_000;
/// `pipe_read()` of a small payload (lock, copy out of the pipe page, release the buffer),
/// without the copy itself ([`copy_ns`]).
pub const PIPE_READ_NS: u64 = 900;
/// `fork()` of a small process, parent CPU work (copying the page tables and the mm).
pub const FORK_PROCESS_NS: u64 = 60_000;
/// `pthread_create()` (`clone()` sharing the mm, plus the new stack's mmap).
pub const FORK_THREAD_NS: u64 = 15_000;
/// A process's `do_exit()`, tearing down its mm.
pub const EXIT_PROCESS_NS: u64 = 40_000;
/// A thread's `do_exit()` (the mm stays).
pub const EXIT_THREAD_NS: u64 = 8_000;

/// Build the task programs of `spec` for `machine`. `seed` drives the few random choices the
/// programs make themselves (classic schbench's `rand()` sleep jitter).
pub fn plan(spec: &WorkloadSpec, machine: &Machine, seed: u64) -> InputResult<WorkloadPlan> {
    plan_with_cost(spec, machine, None, seed)
}

/// [`plan`] with the machine's cost model, for the work it scales per machine (hackbench's
/// AF_UNIX messages by `af_unix_cost_pct`); `None`: the reference costs.
pub fn plan_with_cost(
    spec: &WorkloadSpec,
    machine: &Machine,
    cost: Option<&crate::cost::CostModel>,
    seed: u64,
) -> InputResult<WorkloadPlan> {
    let af_unix_cost_pct = cost.map_or(100, |c| c.af_unix_cost_pct);
    match spec {
        WorkloadSpec::Hackbench(c) => hackbench::plan(c, machine, af_unix_cost_pct),
        WorkloadSpec::SchedPipe(c) => sched_pipe::plan(c, machine),
        WorkloadSpec::Schbench(c) => schbench::plan(c, machine, seed),
        WorkloadSpec::StressNg(c) => stressng::plan(c, machine),
        WorkloadSpec::RtApp(c) => rtapp::plan(c, machine),
        WorkloadSpec::NetperfRr(c) => netperf::plan(c, machine),
        WorkloadSpec::Web(c) => web::plan(c, machine, seed),
        WorkloadSpec::Jbb(c) => jbb::plan(c, machine),
        WorkloadSpec::Stream(c) => stream::plan(c, machine),
        WorkloadSpec::Linpack(c) => linpack::plan(c, machine),
    }
}

/// The benchmark's own run length in simulated ns, if it has one (`None`: it runs until its
/// tasks exit — hackbench, `--cpu-ops` stress-ng — or forever, e.g. `schbench -r 0`).
/// schbench gets a generous margin over `-r` because its statistics thread ends the run
/// itself (`Op::Stop`) once its last once-a-second pass has seen `-r` seconds go by.
pub fn workload_duration_ns(spec: &WorkloadSpec) -> Option<u64> {
    const S: u64 = 1_000_000_000;
    match spec {
        WorkloadSpec::Hackbench(_) | WorkloadSpec::SchedPipe(_) => None,
        WorkloadSpec::Schbench(c) => match c.runtime_s {
            0 => None,
            // 1.1 × r + 5 s, without overflow for any u32 `-r`.
            r => Some(u64::from(r) * (S / 10) * 11 + 5 * S),
        },
        WorkloadSpec::StressNg(c) => match c.effective_timeout_s() {
            0 => None,
            t => Some(t * S),
        },
        WorkloadSpec::RtApp(c) => c.global.duration_s.map(|d| u64::from(d) * S),
        // dbench's `sig_alarm()` restarts its clock when the warm-up ends and stops the
        // clients `-t` seconds later: tbench runs warm-up + `-t` (netperf has no warm-up).
        WorkloadSpec::NetperfRr(c) => match c.length {
            super::netperf::RrLength::Seconds(s) => {
                Some((u64::from(s) + u64::from(c.warmup_s)) * S)
            }
            super::netperf::RrLength::Transactions(_) => None,
        },
        WorkloadSpec::Web(c) => Some(u64::from(c.duration_s) * S),
        WorkloadSpec::Jbb(c) => Some(u64::from(c.duration_s) * S),
        WorkloadSpec::Stream(c) => Some(u64::from(c.duration_s) * S),
        WorkloadSpec::Linpack(c) => Some(u64::from(c.duration_s) * S),
    }
}

/// How a benchmark ends, which decides whether a run finished it ([`Ending::finished`], the
/// one rule every report, `compare`, `bisect`, `sweep` and `validate` go by).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It never ends by itself (spin, pingpong without `loops`, `schbench -r 0`): a run of
    /// any length is the whole of it.
    Never,
    /// A fixed amount of work, done when its tasks exit (hackbench, sched pipe, `--cpu-ops`
    /// stress-ng without a timeout, netperf `-l -N`, pingpong with `loops`).
    Work,
    /// After its own length (`-r`, `--timeout`, `-l`, `duration`: warm-up included), in
    /// simulated ns from the start of the run; or earlier, when all its tasks exit.
    After(u64),
}

impl Ending {
    /// Whether a run that ended at `end_ns` finished the benchmark: `reported` is the
    /// benchmark's own verdict where it keeps one (hackbench's reaped children), `all_exited`
    /// whether every task of the workload had exited.
    pub fn finished(self, end_ns: u64, reported: Option<bool>, all_exited: bool) -> bool {
        match self {
            Ending::Never => true,
            Ending::Work => reported.unwrap_or(all_exited),
            Ending::After(length_ns) => end_ns >= length_ns || all_exited,
        }
    }

    /// The same ending for a workload that starts `ns` later in the run (`start_ms`).
    pub fn delayed(self, ns: u64) -> Ending {
        match self {
            Ending::After(length_ns) => Ending::After(length_ns.saturating_add(ns)),
            other => other,
        }
    }
}

/// How `spec` ends ([`Ending`]). The length of a time-bounded benchmark is its own: schbench's
/// `-r` (its warm-up is part of it), not the margin [`workload_duration_ns`] gives its run.
pub fn ending(spec: &WorkloadSpec) -> Ending {
    const S: u64 = 1_000_000_000;
    let work = match spec {
        WorkloadSpec::Hackbench(_) | WorkloadSpec::SchedPipe(_) => true,
        WorkloadSpec::StressNg(c) => c.effective_timeout_s() == 0 && c.cpu_ops.is_some(),
        WorkloadSpec::NetperfRr(c) => {
            matches!(c.length, super::netperf::RrLength::Transactions(_))
        }
        _ => false,
    };
    if work {
        return Ending::Work;
    }
    let length = match spec {
        WorkloadSpec::Schbench(c) => (c.runtime_s > 0).then(|| u64::from(c.runtime_s) * S),
        _ => workload_duration_ns(spec),
    };
    length.map_or(Ending::Never, Ending::After)
}

/// Warm-up the benchmark itself applies before its statistics count (schbench `-w` — after
/// the program's own adjustments —, tbench's warm-up), in simulated ns. The run layer should
/// start the engine's statistics no earlier than this.
pub fn workload_warmup_ns(spec: &WorkloadSpec) -> u64 {
    const S: u64 = 1_000_000_000;
    match spec {
        WorkloadSpec::Schbench(c)
            if matches!(
                c.version,
                super::schbench::SchbenchVersion::Current
                    | super::schbench::SchbenchVersion::Interim2021
            ) && c.rps == 0
                && c.pipe_bytes == 0 =>
        {
            u64::from(c.warmup_s) * S
        }
        WorkloadSpec::NetperfRr(c) => u64::from(c.warmup_s) * S,
        WorkloadSpec::Web(c) => u64::from(c.warmup_ms) * 1_000_000,
        WorkloadSpec::Jbb(c) => u64::from(c.warmup_ms) * 1_000_000,
        WorkloadSpec::Stream(c) => u64::from(c.warmup_ms) * 1_000_000,
        WorkloadSpec::Linpack(c) => u64::from(c.warmup_ms) * 1_000_000,
        _ => 0,
    }
}

/// A program under construction.
#[derive(Debug, Default, Clone)]
pub(crate) struct Prog {
    pub ops: Vec<Op>,
}

impl Prog {
    pub fn new() -> Self {
        Prog::default()
    }

    /// Index the next op will have.
    pub fn here(&self) -> u32 {
        self.ops.len() as u32
    }

    pub fn push(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }

    /// `Run` unless the work is zero.
    pub fn run(&mut self, work_ns: u64) -> &mut Self {
        if work_ns > 0 {
            self.ops.push(Op::Run { work_ns });
        }
        self
    }

    /// Emit `body` so that it runs `count` times (not at all for 0), with loop counter `slot`.
    pub fn repeat(
        &mut self,
        count: u64,
        slot: u8,
        what: &str,
        body: impl FnOnce(&mut Prog) -> InputResult<()>,
    ) -> InputResult<()> {
        if count == 0 {
            return Ok(());
        }
        let times = u32::try_from(count).map_err(|_| {
            InputError::new(
                "workload",
                format!(
                    "{what}: {count} iterations is more than the simulator's loop limit ({})",
                    u32::MAX
                ),
            )
        })?;
        let start = self.here();
        body(self)?;
        if times > 1 {
            self.ops.push(Op::Loop {
                to: start,
                times,
                slot,
            });
        }
        Ok(())
    }
}

/// A plan under construction.
#[derive(Debug, Default)]
pub(crate) struct PlanBuilder {
    pub plan: WorkloadPlan,
    /// Placement group of the tasks added next (see `WorkloadPlan::task_groups`).
    group: Option<u32>,
}

impl PlanBuilder {
    pub fn new() -> Self {
        PlanBuilder::default()
    }

    /// A new semaphore with `initial` units.
    pub fn sem(&mut self, initial: u64) -> SemId {
        self.plan.sems.push(initial);
        (self.plan.sems.len() - 1) as SemId
    }

    /// A new semaphore with `initial` units whose posts each leave `lines` cache lines
    /// dirty for the task that takes the unit (`WorkloadPlan::sem_handoff_lines`).
    pub fn sem_handing_off(&mut self, initial: u64, lines: u16) -> SemId {
        let sem = self.sem(initial);
        let handoff = &mut self.plan.sem_handoff_lines;
        handoff.resize(sem as usize, 0);
        handoff.push(lines);
        sem
    }

    pub fn barrier(&mut self) -> u32 {
        self.plan.nr_barriers += 1;
        (self.plan.nr_barriers - 1) as u32
    }

    /// Index of the metric named `name`, created if new.
    pub fn metric(&mut self, name: &str) -> u8 {
        match self.plan.metrics.iter().position(|m| m == name) {
            Some(i) => i as u8,
            None => {
                self.plan.metrics.push(name.to_string());
                (self.plan.metrics.len() - 1) as u8
            }
        }
    }

    pub fn program(&mut self, name: impl Into<String>, prog: Prog) -> ProgramId {
        self.plan.programs.push(Program {
            name: name.into(),
            ops: prog.ops,
        });
        (self.plan.programs.len() - 1) as ProgramId
    }

    pub fn task(&mut self, spec: TaskSpec) -> usize {
        self.plan.tasks.push(spec);
        self.plan.task_groups.push(self.group);
        self.plan.tasks.len() - 1
    }

    /// Put the tasks added from now on in placement group `group` (`None`: in no group, like
    /// a benchmark's main thread). Groups are what `[workload] group_cpus` binds.
    pub fn set_group(&mut self, group: Option<u32>) {
        self.group = group;
    }

    /// Index of `mask` in the plan's CPU-mask table (`Op::SetAffinity`), added if new.
    pub fn cpumask(&mut self, mask: crate::cpumask::CpuMask) -> u32 {
        let masks = &mut self.plan.cpumasks;
        match masks.iter().position(|m| *m == mask) {
            Some(i) => i as u32,
            None => {
                masks.push(mask);
                (masks.len() - 1) as u32
            }
        }
    }

    pub fn finish(self) -> WorkloadPlan {
        self.plan
    }
}

/// The CPU a creator pinned to `mask` runs on when it forks: the first online CPU of the mask
/// (CPU 0 without a mask).
pub(crate) fn creator_cpu(machine: &Machine, mask: Option<&crate::cpumask::CpuMask>) -> usize {
    let online = machine.online;
    let allowed = mask.map(|m| m.and(&online)).unwrap_or(online);
    allowed
        .first()
        .or_else(|| online.first())
        .unwrap_or_default()
}
