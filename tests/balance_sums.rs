//! The balancer's per-group running sums (`sched/balance/sums.rs`) decide exactly as the
//! per-CPU walk of `update_sg_lb_stats()`: on random runqueue states of several preset
//! machines (SMT, NUMA, offline CPUs, asymmetric capacity, capacity-reduced CPUs, pinned
//! tasks that shrink `env->cpus`), a balancer fed by change-reporting environment and one
//! that walks every CPU make the same passes: same tasks moved, same decisions, same work
//! counted, same schedstats.

use std::sync::Arc;

use crate::fake_lb_env;
use crate::machines;
use fake_lb_env::FakeLbEnv;
use schedlab::cost::CostModel;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{SchedDomains, build_sched_domains};
use schedlab::kconfig::features::Features;
use schedlab::kconfig::sysctl::Sysctls;
use schedlab::sched::balance::{LbOutput, LoadBalancer};
use schedlab::sched::types::{IdleType, MigrationReason};
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

/// A sparse state: most CPUs idle, whole SMT cores, LLCs and packages without a task, so
/// most groups of a pass hold no CFS task (the sums answer those without classifying
/// them) and the busiest group's search reads few runqueues.
fn sparse_env(dom: &SchedDomains, rng: &mut Lcg) -> FakeLbEnv {
    let mut env = FakeLbEnv::new(dom.nr_cpus());
    for cpu in dom.span.iter() {
        if rng.below(10) != 0 {
            continue;
        }
        for _ in 0..1 + rng.below(3) {
            let p = env.add_task(cpu, 100 + rng.below(1000));
            env.task_mut(p).util = 300 + rng.below(600);
        }
        let last = *env.cpus[cpu].tasks.last().expect("task");
        env.set_running(last);
    }
    env
}

/// Walking and summing balancers over copies of a sparse state make the same passes at
/// every level (the empty-group shortcut of `update_sd_lb_stats()` and the busiest-queue
/// search from the CPUs' contributions included): same moves, work and schedstats.
#[test]
fn sums_decide_as_the_walk_on_sparse_states() {
    for preset in ["skl-2s", "milan-2s", "spr-2s"] {
        let dom = domains(preset, None);
        for seed in 1..=4 {
            let mut rng = Lcg(seed * 104_729);
            let env = sparse_env(&dom, &mut rng);
            let state = NumaFake {
                env,
                preferred: Default::default(),
                node: vec![0; dom.nr_cpus()],
            };
            same_decisions_in(&dom, state, &format!("{preset} sparse"), seed);
        }
    }
}

/// `LbSums::within()` is the union of a domain's span and its groups' spans, for every
/// domain: preset machines and NUMA rings/lines whose overlapping groups are built from
/// other CPUs' child domains.
#[test]
fn within_is_the_union_of_the_group_spans() {
    use schedlab::domains::DomainId;
    use schedlab::sched::balance::sums::LbSums;
    let numa = |distances: Vec<Vec<u32>>| {
        Arc::new(build_sched_domains(&machines::numa_machine(distances)))
    };
    let ring = vec![
        vec![10, 20, 30, 20],
        vec![20, 10, 20, 30],
        vec![30, 20, 10, 20],
        vec![20, 30, 20, 10],
    ];
    let line = vec![
        vec![10, 20, 30, 40],
        vec![20, 10, 20, 30],
        vec![30, 20, 10, 20],
        vec![40, 30, 20, 10],
    ];
    let all = [
        domains("haswell-4s", None),
        domains("skl-2s", Some("20-39,60-79")),
        domains("spr-2s", None),
        numa(ring),
        numa(line),
    ];
    for dom in all {
        let sums = LbSums::new(&dom);
        for (i, d) in dom.domains.iter().enumerate() {
            let mut want = d.span;
            for &g in &d.groups {
                want = want.or(&dom.group(g).span);
            }
            assert_eq!(
                *sums.within(&dom, DomainId(i)),
                want,
                "domain {i} of CPU {}",
                d.cpu
            );
        }
    }
}

#[test]
fn sums_decide_as_the_walk_on_asymmetric_capacity() {
    for seed in 1..=8 {
        same_decisions("adl-i9", None, seed);
        same_decisions("hybrid-10", None, seed);
    }
}

/// [`FakeLbEnv`] with NUMA balancing statistics: a preferred node per task (some none),
/// `rq->nr_numa_running` / `nr_preferred_running` counted from each CPU's task list, so
/// NUMA-level passes classify groups and runqueues (`fbq_classify_group/rq()`).
#[derive(Clone)]
struct NumaFake {
    env: FakeLbEnv,
    preferred: std::collections::BTreeMap<schedlab::task::TaskId, usize>,
    node: Vec<usize>,
}

macro_rules! delegate {
    ($( fn $name:ident(&self $(, $a:ident : $t:ty)*) -> $r:ty; )*) => {
        $( fn $name(&self $(, $a: $t)*) -> $r { self.env.$name($($a),*) } )*
    };
}

use schedlab::sched::balance::LbEnv;
use schedlab::task::TaskId;

impl LbEnv for NumaFake {
    delegate! {
        fn nr_running(&self, cpu: usize) -> u32;
        fn h_nr_runnable(&self, cpu: usize) -> u32;
        fn h_nr_queued(&self, cpu: usize) -> u32;
        fn idle_cpu(&self, cpu: usize) -> bool;
        fn ttwu_pending(&self, cpu: usize) -> bool;
        fn cpu_load(&self, cpu: usize) -> u64;
        fn cpu_runnable(&self, cpu: usize) -> u64;
        fn cpu_util(&self, cpu: usize) -> u64;
        fn capacity_of(&self, cpu: usize) -> u64;
        fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64;
        fn misfit_task_load(&self, cpu: usize) -> u64;
        fn rq_clock_task(&self, cpu: usize) -> u64;
        fn curr_task(&self, cpu: usize) -> Option<TaskId>;
        fn task_h_load(&self, p: TaskId) -> u64;
        fn task_util_est(&self, p: TaskId) -> u64;
        fn task_running(&self, cpu: usize, p: TaskId) -> bool;
        fn cpus_allowed(&self, p: TaskId) -> CpuMask;
        fn exec_start(&self, p: TaskId) -> u64;
        fn is_delayed(&self, p: TaskId) -> bool;
        fn is_next_buddy(&self, p: TaskId) -> bool;
        fn task_ineligible_on_dst(&self, p: TaskId, dst_cpu: usize) -> bool;
        fn task_fits_cpu(&self, p: TaskId, cpu: usize) -> bool;
    }
    fn take_changed_cpus(&mut self, out: &mut CpuMask) -> bool {
        self.env.take_changed_cpus(out)
    }
    fn cfs_tasks(&self, cpu: usize, out: &mut Vec<TaskId>) {
        self.env.cfs_tasks(cpu, out)
    }
    fn cfs_tasks_rotate(&mut self, cpu: usize, p: TaskId) {
        self.env.cfs_tasks_rotate(cpu, p)
    }
    fn sched_rng(&mut self, cpu: usize) -> u32 {
        self.env.sched_rng(cpu)
    }
    fn detach_task(&mut self, p: TaskId, from: usize, to: usize) {
        self.env.detach_task(p, from, to)
    }
    fn attach_task(&mut self, p: TaskId, to: usize) {
        self.env.attach_task(p, to)
    }
    fn nr_numa_running(&self, cpu: usize) -> u32 {
        let tasks = &self.env.cpus[cpu].tasks;
        tasks
            .iter()
            .filter(|p| self.preferred.contains_key(p))
            .count() as u32
    }
    fn nr_preferred_running(&self, cpu: usize) -> u32 {
        let tasks = &self.env.cpus[cpu].tasks;
        let on_node = |p: &&TaskId| self.preferred.get(p) == Some(&self.node[cpu]);
        tasks.iter().filter(on_node).count() as u32
    }
}

/// With NUMA statistics (tasks with and without a preferred node, on and off it), the
/// sums' NUMA counts give the busiest group the walk's `fbq_type`: the same runqueues are
/// skipped or picked and the same tasks moved at every level, NUMA levels included.
#[test]
fn sums_decide_as_the_walk_with_numa_preferred_nodes() {
    for (preset, seeds) in [("skl-2s", 1..=5), ("haswell-4s", 1..=5)] {
        let m = presets::by_name(preset).expect("preset");
        let node: Vec<usize> = m.cpus.iter().map(|c| c.node).collect();
        let dom = domains(preset, None);
        let nodes = 1 + node.iter().copied().max().unwrap_or(0) as u64;
        for seed in seeds {
            let mut rng = Lcg(seed * 7919);
            let env = random_env(&dom, &mut rng);
            let mut preferred = std::collections::BTreeMap::new();
            for &p in env.tasks.keys() {
                // A third without a preference; the rest mostly on their own node.
                match rng.below(3) {
                    0 => {}
                    1 => {
                        preferred.insert(p, node[env.tasks[&p].cpu]);
                    }
                    _ => {
                        preferred.insert(p, rng.below(nodes) as usize);
                    }
                }
            }
            let numa = NumaFake {
                env,
                preferred,
                node: node.clone(),
            };
            same_decisions_in(&dom, numa, &format!("{preset} NUMA"), seed);
        }
    }
}

/// [`same_decisions`] on a given state (each pass at every level of a few random CPUs).
fn same_decisions_in(dom: &Arc<SchedDomains>, state: NumaFake, name: &str, seed: u64) {
    let lb = LoadBalancer::from_config(
        dom.clone(),
        Features::defaults(),
        &Sysctls::default(),
        &CostModel::default(),
        0,
    );
    let mut rng = Lcg(seed);
    let (mut walk_lb, mut sum_lb) = (lb.clone(), lb);
    let mut walk_env = state.clone();
    let mut sum_env = state;
    walk_env.env.report_changes = false;
    sum_env.env.report_changes = true;
    let online: Vec<usize> = dom.span.iter().collect();
    let mut fbq_seen = false;
    for round in 0..15 {
        let cpu = online[rng.below(online.len() as u64) as usize];
        let idle = [IdleType::Idle, IdleType::NotIdle, IdleType::NewlyIdle][round % 3];
        for &sd in dom.cpu_domains(cpu) {
            let (mut wo, mut so) = (LbOutput::default(), LbOutput::default());
            let (mut wc, mut sc) = (true, true);
            let reason = MigrationReason::LoadBalance;
            let wm =
                walk_lb.sched_balance_rq(&mut walk_env, cpu, sd, idle, reason, &mut wc, &mut wo);
            let sm = sum_lb.sched_balance_rq(&mut sum_env, cpu, sd, idle, reason, &mut sc, &mut so);
            let at = format!("{name} seed {seed} round {round} CPU {cpu} {sd:?} {idle:?}");
            assert_eq!((wm, wc), (sm, sc), "moved, continue: {at}");
            assert_eq!(wo.work, so.work, "work counted: {at}");
            assert_eq!(wo.migrations, so.migrations, "migrations: {at}");
            assert_eq!(wo.decisions, so.decisions, "task decisions: {at}");
            assert_eq!(
                walk_lb.domain_state(sd).stats,
                sum_lb.domain_state(sd).stats,
                "schedstats: {at}"
            );
            fbq_seen |= dom
                .domain(sd)
                .flags
                .contains(schedlab::domains::SdFlags::SD_NUMA);
        }
    }
    assert!(fbq_seen, "{name}: some pass balanced a NUMA level");
    assert_eq!(
        walk_env.env.detached, sum_env.env.detached,
        "{name} seed {seed}"
    );
}
