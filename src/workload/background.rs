//! The machine's own background activity: kernel threads and daemons that wake, run a
//! little and sleep again beside the benchmark.
//!
//! A real machine is never running the benchmark alone. Per-CPU kworkers (the `events` and
//! `mm_percpu_wq` workqueues: vmstat updates, LRU drains), ksoftirqd and kblockd wake on
//! their own CPU; unbound kernel threads (`rcu_preempt`, `kcompactd`, unbound kworkers)
//! wake wherever `select_task_rq_fair()` puts them; some machines run a daemon with longer
//! bursts (DAMON's `kdamond` on this VM). Each wakeup of such a task on a busy CPU is a
//! wakeup preemption candidate, and a preempted benchmark task is left queued, pullable by
//! an idle CPU's newidle balance: the state that run-to-run spread and migration counts
//! come from on real machines (issue 34).
//!
//! Modelled as system tasks of the run ([`crate::engine::Engine::set_system_tasks`]): one
//! SCHED_NORMAL nice-0 kworker bound to each online CPU, one unbound kernel thread and, where
//! measured, one unbound daemon. Each is a Poisson stream: it sleeps an exponentially
//! distributed time with the class's mean interval ([`Op::SleepExp`], an hrtimer sleep)
//! and runs an exponentially distributed time with the class's mean run length. Its first
//! wakeup comes at an exponentially distributed time after the start (a thread that was
//! already asleep), as the task's fork.
//!
//! Left out, each a known difference: the rates do not depend on the workload (under
//! hackbench this VM's `rcu_preempt` wakes 41 times a second instead of 3-4, ksoftirqd
//! 13 times instead of 0.1: RCU callbacks and socket softirqs the benchmark itself causes);
//! the wakeups come from an hrtimer on the thread's CPU, not from the `queue_work()` of
//! another context; the first wakeup is a fork (`wake_up_new_task()`: fork placement for
//! the unbound threads, no lag); the three unbound kernel threads measured are one task
//! with their summed rate (they then never run at once); the stopper (`migration/N`)
//! wakes only for what the model itself asks of it.

use crate::cpumask::CpuMask;
use crate::engine::WorkloadPlan;
use crate::rng::{RngStream, StreamKind};
use crate::task::{Op, Program, TaskSpec};
use crate::topology::Machine;

/// One class of background task: the mean time between its wakeups and the mean time it
/// runs at each. Either 0: the class is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Activity {
    /// Mean interval between wakeups of one task of the class, µs.
    pub interval_us: u64,
    /// Mean CPU work per wakeup, µs (on a 1024-capacity CPU).
    pub run_us: u64,
}

impl Activity {
    pub const NONE: Activity = Activity {
        interval_us: 0,
        run_us: 0,
    };

    /// Whether the class has any task.
    pub fn present(&self) -> bool {
        self.interval_us > 0 && self.run_us > 0
    }
}

/// The background activity of a run: per-CPU kworkers, unbound kernel threads, a daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BackgroundParams {
    /// One kworker bound to each online CPU (`kworker/N:1`).
    pub kworker: Activity,
    /// One unbound kernel thread (`rcu_preempt`, `kcompactd`, unbound kworkers together).
    pub kthread: Activity,
    /// One unbound daemon with longer bursts.
    pub daemon: Activity,
}

impl BackgroundParams {
    /// No background activity (`[run] noise = false`).
    pub const OFF: BackgroundParams = BackgroundParams {
        kworker: Activity::NONE,
        kthread: Activity::NONE,
        daemon: Activity::NONE,
    };

    /// Every kernel runs these. Measured on this project's 2-vCPU VM (kernel 6.18,
    /// `scripts/measure-background`, 10 s windows idle, under schbench and under
    /// stress-ng): bound kworkers, ksoftirqd and kblockd 1.75-2.2 wakeups/s per CPU at
    /// 17-26 µs each; `rcu_preempt` 2.8-4.3/s at 10-15 µs, `kcompactd` 1.9/s at 9-20 µs,
    /// unbound kworkers 0.8-1.2/s at 31-44 µs: 5.5-7.6/s at about 17 µs together. No
    /// bare-metal measurement exists for the presets: they take these per-CPU and
    /// per-machine rates.
    pub const KERNEL: BackgroundParams = BackgroundParams {
        kworker: Activity {
            interval_us: 500_000,
            run_us: 20,
        },
        kthread: Activity {
            interval_us: 150_000,
            run_us: 17,
        },
        daemon: Activity::NONE,
    };

    /// `-m host`: [`BackgroundParams::KERNEL`] and this VM's DAMON reclaim thread
    /// (`kdamond.0`: 1.9-2.0 wakeups/s at 1.2-1.8 ms each in the same windows).
    pub const HOST: BackgroundParams = BackgroundParams {
        daemon: Activity {
            interval_us: 500_000,
            run_us: 1_500,
        },
        ..BackgroundParams::KERNEL
    };

    /// The defaults of a machine: [`BackgroundParams::HOST`] on `host`, else
    /// [`BackgroundParams::KERNEL`].
    pub fn default_for(host: bool) -> BackgroundParams {
        match host {
            true => BackgroundParams::HOST,
            false => BackgroundParams::KERNEL,
        }
    }

    /// Whether any class has tasks.
    pub fn present(&self) -> bool {
        self.kworker.present() || self.kthread.present() || self.daemon.present()
    }
}

/// What `[run]` says about the background activity: off with `noise = false`, and each
/// `noise_*_interval_us` / `noise_*_run_us` key overriding the machine's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BackgroundSpec {
    /// `run.noise = false`: start from no background activity.
    pub off: bool,
    /// `[kworker, kthread, daemon]` overrides of `interval_us`.
    pub interval_us: [Option<u64>; 3],
    /// `[kworker, kthread, daemon]` overrides of `run_us`.
    pub run_us: [Option<u64>; 3],
}

impl BackgroundSpec {
    /// The background of a run on a machine whose defaults are `defaults`.
    pub fn resolve(&self, defaults: BackgroundParams) -> BackgroundParams {
        let base = match self.off {
            true => BackgroundParams::OFF,
            false => defaults,
        };
        let pick = |i: usize, a: Activity| Activity {
            interval_us: self.interval_us[i].unwrap_or(a.interval_us),
            run_us: self.run_us[i].unwrap_or(a.run_us),
        };
        BackgroundParams {
            kworker: pick(0, base.kworker),
            kthread: pick(1, base.kthread),
            daemon: pick(2, base.daemon),
        }
    }
}

/// Cache footprint of a background task: a kernel thread's stack and the few lines of the
/// work it does.
const FOOTPRINT_KIB: u32 = 16;

/// The plan of the background tasks of a run of `seed` on `machine`; `None` when `params`
/// has none. Task order: the kworkers by CPU, the kernel thread, the daemon.
pub fn plan(params: &BackgroundParams, machine: &Machine, seed: u64) -> Option<WorkloadPlan> {
    if !params.present() {
        return None;
    }
    let mut plan = WorkloadPlan::default();
    let mut first_wakeup = RngStream::new(seed, StreamKind::Background, 0);
    if params.kworker.present() {
        let program = add_program(&mut plan, "kworker", params.kworker);
        for cpu in machine.online.iter() {
            plan.tasks.push(TaskSpec {
                comm: format!("kworker/{cpu}:1"),
                program,
                cpus_allowed: Some(CpuMask::single(cpu)),
                start_ns: exp_ns(&mut first_wakeup, params.kworker.interval_us * 1_000),
                parent_cpu: cpu,
                footprint_kib: FOOTPRINT_KIB,
                ..TaskSpec::default()
            });
        }
    }
    let first_cpu = machine.online.iter().next().expect("a machine has a CPU");
    let unbound = [
        ("kthread", "kworker/u:1", params.kthread),
        ("daemon", "daemon", params.daemon),
    ];
    for (class, comm, activity) in unbound.into_iter().filter(|u| u.2.present()) {
        let program = add_program(&mut plan, class, activity);
        plan.tasks.push(TaskSpec {
            comm: comm.to_string(),
            program,
            start_ns: exp_ns(&mut first_wakeup, activity.interval_us * 1_000),
            parent_cpu: first_cpu,
            footprint_kib: FOOTPRINT_KIB,
            ..TaskSpec::default()
        });
    }
    Some(plan)
}

/// Add the program of background class `class` to `plan`; its index.
fn add_program(plan: &mut WorkloadPlan, class: &str, a: Activity) -> u32 {
    plan.programs.push(sleeper(class, a));
    u32::try_from(plan.programs.len() - 1).expect("three programs at most")
}

/// A background task's program: run, sleep, again.
fn sleeper(name: &str, a: Activity) -> Program {
    Program {
        name: format!("background-{name}"),
        ops: vec![
            Op::RunExp {
                mean_work_ns: a.run_us * 1_000,
            },
            Op::SleepExp {
                mean_ns: a.interval_us * 1_000,
            },
            Op::Jump { to: 0 },
        ],
    }
}

/// An exponentially distributed time with mean `mean_ns`.
fn exp_ns(rng: &mut RngStream, mean_ns: u64) -> u64 {
    (-(1.0 - rng.next_f64()).ln() * mean_ns as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_has_no_tasks_and_the_kernel_default_one_kworker_per_cpu() {
        let m = crate::topology::presets::by_name("skl-2s").expect("preset");
        assert!(plan(&BackgroundParams::OFF, &m, 1).is_none());
        let p = plan(&BackgroundParams::KERNEL, &m, 1).expect("background");
        let online = m.online.iter().count();
        assert_eq!(p.tasks.len(), online + 1);
        for (cpu, t) in m.online.iter().zip(&p.tasks) {
            assert_eq!(t.cpus_allowed, Some(CpuMask::single(cpu)));
            assert_eq!(t.comm, format!("kworker/{cpu}:1"));
        }
        assert_eq!(p.tasks[online].cpus_allowed, None);
    }

    #[test]
    fn first_wakeups_differ_by_seed_and_repeat_for_one() {
        let m = crate::topology::presets::by_name("skl-2s").expect("preset");
        let starts = |seed| -> Vec<u64> {
            let p = plan(&BackgroundParams::HOST, &m, seed).expect("background");
            p.tasks.iter().map(|t| t.start_ns).collect()
        };
        assert_eq!(starts(1), starts(1));
        assert_ne!(starts(1), starts(2));
    }

    #[test]
    fn a_key_overrides_the_machine_default_and_off_starts_from_nothing() {
        let mut spec = BackgroundSpec::default();
        assert_eq!(spec.resolve(BackgroundParams::HOST), BackgroundParams::HOST);
        spec.run_us[2] = Some(7);
        assert_eq!(spec.resolve(BackgroundParams::HOST).daemon.run_us, 7);
        spec.off = true;
        let r = spec.resolve(BackgroundParams::HOST);
        assert_eq!(
            r.daemon,
            Activity {
                interval_us: 0,
                run_us: 7
            }
        );
        assert!(!r.present());
    }
}
