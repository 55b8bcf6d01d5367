//! The balancer's per-group running sums (`sched/balance/sums.rs`) decide exactly as the
//! per-CPU walk of `update_sg_lb_stats()`: on random runqueue states of several preset
//! machines (SMT, NUMA, offline CPUs, asymmetric capacity, capacity-reduced CPUs, pinned
//! tasks that shrink `env->cpus`), a balancer fed by change-reporting environment and one
//! that walks every CPU make the same passes: same tasks moved, same decisions, same work
//! counted, same schedstats.

use std::sync::Arc;

use schedlab::cost::CostModel;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{SchedDomains, build_sched_domains};
use schedlab::kconfig::features::Features;
use schedlab::kconfig::sysctl::Sysctls;
use schedlab::policy::{IdleType, MigrationReason};
#[path = "support/fake_lb_env.rs"]
#[allow(dead_code)] // shared support module: not every helper is used here
mod fake_lb_env;
use fake_lb_env::FakeLbEnv;
use schedlab::sched::balance::{LbOutput, LoadBalancer};
use schedlab::topology::presets;

const MS: u64 = 1_000_000;

/// A small deterministic generator (the test must not depend on a seed source).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

fn domains(preset: &str, offline: Option<&str>) -> Arc<SchedDomains> {
    let mut m = presets::by_name(preset).expect("preset");
    if let Some(list) = offline {
        m.set_offline(list).expect("offline list");
    }
    Arc::new(build_sched_domains(&m))
}

/// A random state: 0-3 tasks per online CPU (some running, some pinned, a few delayed),
/// a few capacity-reduced CPUs, RT tasks, pending wakeups.
fn random_env(dom: &SchedDomains, rng: &mut Lcg) -> FakeLbEnv {
    let nr = dom.nr_cpus();
    let mut env = FakeLbEnv::new(nr);
    for cpu in dom.span.iter() {
        let n = [0, 0, 1, 1, 2, 3][rng.below(6) as usize];
        for _ in 0..n {
            let p = env.add_task(cpu, 50 + rng.below(1500));
            let t = env.task_mut(p);
            t.util = t.load.min(1024) / (1 + rng.below(3));
            t.exec_start_ns = rng.below(10) * MS;
            if rng.below(8) == 0 {
                t.allowed = CpuMask::single(cpu);
            }
            if rng.below(12) == 0 {
                t.delayed = true;
            }
        }
        if n > 0 && rng.below(4) != 0 {
            let last = *env.cpus[cpu].tasks.last().expect("task");
            env.set_running(last);
        }
        let c = &mut env.cpus[cpu];
        if rng.below(10) == 0 {
            c.capacity = c.arch_capacity * (60 + rng.below(40)) / 100;
        }
        if rng.below(20) == 0 {
            c.other_class_running = 1;
        }
        if n == 0 && rng.below(10) == 0 {
            c.ttwu_pending = true;
        }
        c.misfit_task_load = if n == 1 && rng.below(5) == 0 { 700 } else { 0 };
    }
    env
}

/// Run the same balance passes (each domain of a few random CPUs, each idle type) on a
/// walking and a summing balancer over copies of one state; everything observable agrees.
fn same_decisions(preset: &str, offline: Option<&str>, seed: u64) {
    let dom = domains(preset, offline);
    let lb = LoadBalancer::from_config(
        dom.clone(),
        Features::defaults(),
        &Sysctls::default(),
        &CostModel::default(),
        0,
    );
    let mut rng = Lcg(seed);
    let (mut walk_lb, mut sum_lb) = (lb.clone(), lb);
    let mut walk_env = random_env(&dom, &mut rng);
    let mut sum_env = walk_env.clone();
    sum_env.report_changes = true;
    let online: Vec<usize> = dom.span.iter().collect();
    for round in 0..12 {
        let cpu = online[rng.below(online.len() as u64) as usize];
        let idle = [IdleType::Idle, IdleType::NotIdle, IdleType::NewlyIdle][round % 3];
        for &sd in dom.cpu_domains(cpu) {
            let (mut wo, mut so) = (LbOutput::default(), LbOutput::default());
            let (mut wc, mut sc) = (true, true);
            let reason = MigrationReason::LoadBalance;
            let wm =
                walk_lb.sched_balance_rq(&mut walk_env, cpu, sd, idle, reason, &mut wc, &mut wo);
            let sm = sum_lb.sched_balance_rq(&mut sum_env, cpu, sd, idle, reason, &mut sc, &mut so);
            let at = format!("{preset} seed {seed} round {round} CPU {cpu} {sd:?} {idle:?}");
            assert_eq!((wm, wc), (sm, sc), "moved, continue: {at}");
            assert_eq!(wo.work, so.work, "work counted: {at}");
            assert_eq!(wo.migrations, so.migrations, "migrations: {at}");
            assert_eq!(wo.decisions, so.decisions, "task decisions: {at}");
            assert_eq!(wo.active_balance, so.active_balance, "active balance: {at}");
            assert_eq!(
                walk_lb.domain_state(sd).stats,
                sum_lb.domain_state(sd).stats,
                "schedstats: {at}"
            );
        }
    }
    assert_eq!(walk_env.detached, sum_env.detached, "{preset} seed {seed}");
    assert!(
        sum_lb.sums.enabled(),
        "{preset}: groups sharing an sgc share a span"
    );
}

#[test]
fn sums_decide_as_the_walk_on_smt_numa_machines() {
    for seed in 1..=6 {
        same_decisions("skl-2s", None, seed);
        same_decisions("milan-2s", None, seed);
    }
}

#[test]
fn sums_decide_as_the_walk_with_offline_cpus_and_four_nodes() {
    for seed in 1..=4 {
        same_decisions("skl-2s", Some("20-39,60-79"), seed);
        same_decisions("haswell-4s", None, seed);
    }
}

#[test]
fn sums_decide_as_the_walk_on_asymmetric_capacity() {
    for seed in 1..=8 {
        same_decisions("adl-i9", None, seed);
        same_decisions("hybrid-10", None, seed);
    }
}
