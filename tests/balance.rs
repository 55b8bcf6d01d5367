//! Load-balancing decisions on constructed states (a fake `LbEnv` on the preset machines'
//! real sched domains), each checked against what `kernel/sched/fair.c` decides.

use std::sync::Arc;

use crate::fake_lb_env;
use fake_lb_env::FakeLbEnv;
use proptest::prelude::*;
use schedlab::cost::CostModel;
use schedlab::cpumask::CpuMask;
use schedlab::domains::{DomainId, SchedDomains, build_sched_domains};
use schedlab::kconfig::features::{Feature, Features};
use schedlab::kconfig::sysctl::Sysctls;
use schedlab::sched::balance::find::adjust_numa_imbalance;
use schedlab::sched::balance::schedstat::write_schedstat;
use schedlab::sched::balance::trigger::should_we_balance_pick;
use schedlab::sched::balance::{
    BalanceEnv, LbEnv, LbOutput, LoadBalancer, MigrationType, TaskVerdict, idle_index, nohz_flags,
};
use schedlab::sched::types::{GroupType, IdleType, MigrationReason, RqSchedstat};
use schedlab::topology::presets;

const MS: u64 = 1_000_000;

fn domains(preset: &str, offline: Option<&str>) -> Arc<SchedDomains> {
    let mut m = presets::by_name(preset).expect("preset");
    if let Some(list) = offline {
        m.set_offline(list).expect("offline list");
    }
    Arc::new(build_sched_domains(&m))
}

/// A balancer with v6.18 defaults except the listed feature values; time 0.
fn balancer(dom: &Arc<SchedDomains>, feats: &[(Feature, bool)]) -> LoadBalancer {
    let mut f = Features::defaults();
    for &(feat, on) in feats {
        f.set(feat, on);
    }
    LoadBalancer::from_config(
        dom.clone(),
        f,
        &Sysctls::default(),
        &CostModel::default(),
        0,
    )
}

/// The CPU's domain called `name`.
fn level(dom: &SchedDomains, cpu: usize, name: &str) -> DomainId {
    *dom.cpu_domains(cpu)
        .iter()
        .find(|&&d| dom.domain(d).name == name)
        .unwrap_or_else(|| panic!("CPU {cpu} has no {name} domain"))
}

fn idle_of(env: &FakeLbEnv, cpu: usize) -> IdleType {
    if env.idle_cpu(cpu) {
        IdleType::Idle
    } else {
        IdleType::NotIdle
    }
}

/// The CPUs of `cpus` for which `should_we_balance()` says yes at their `name` level.
fn balancers(
    lb: &LoadBalancer,
    env: &FakeLbEnv,
    cpus: impl IntoIterator<Item = usize>,
    name: &str,
) -> Vec<usize> {
    cpus.into_iter()
        .filter(|&c| {
            let sd = level(&lb.domains, c, name);
            lb.should_we_balance_cpu(env, sd, c, idle_of(env, c))
        })
        .collect()
}

fn busy(env: &mut FakeLbEnv, cpus: &[usize]) {
    for &c in cpus {
        env.add_running_tasks(c, 1, 1024);
    }
}

// ---------------------------------------------------------------------------------------
// should_we_balance()

#[test]
fn should_we_balance_hybrid_10_real_domains() {
    // CPU 0 busy, CPU 1 idle, CPUs 2-5 busy, CPUs 6-9 idle. hybrid-10's MC groups are single
    // cores ({0,1} {2,3} {4,5} {6} {7} {8} {9}), so each local group decides alone and both
    // variants agree: CPU 1 balances for core {0,1} (the idle sibling), CPU 2 for the busy
    // core {2,3} (group_balance_cpu), CPU 4 for {4,5}, and 6..9 each for themselves.
    let dom = domains("hybrid-10", None);
    for on in [false, true] {
        let lb = balancer(&dom, &[(Feature::SHOULD_WE_BALANCE_IDLE_CORE, on)]);
        let mut env = FakeLbEnv::new(10);
        busy(&mut env, &[0, 2, 3, 4, 5]);
        assert_eq!(
            balancers(&lb, &env, 0..10, "MC"),
            [1, 2, 4, 6, 7, 8, 9],
            "variant {on}"
        );
        // SMT level: every CPU is its own group.
        assert_eq!(balancers(&lb, &env, 0..6, "SMT"), [0, 1, 2, 3, 4, 5]);
    }
}

#[test]
fn should_we_balance_rule_on_a_group_spanning_hybrid_10() {
    // The selection rule itself, on a candidate set holding all of hybrid-10's cores (as a
    // group at a level above the cores would): CPU 0 busy, CPU 1 idle, 2-5 busy, 6-9 idle.
    // v6.0-v6.5 take the first idle CPU (1); v6.6+ the first CPU of a fully idle core (6).
    let dom = domains("hybrid-10", None);
    let lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    busy(&mut env, &[0, 2, 3, 4, 5]);
    let all = CpuMask::first_n(10);
    let pick = |env: &FakeLbEnv, idle_core| {
        should_we_balance_pick(&all, 0, false, idle_core, &|c| env.idle_cpu(c), &|c| {
            *lb.smt_mask(c)
        })
    };
    assert_eq!(pick(&env, false), 1);
    assert_eq!(pick(&env, true), 6);
    // Every core busy somewhere: the first idle SMT sibling (CPU 1) is the fallback.
    busy(&mut env, &[6, 7, 8, 9]);
    assert_eq!(pick(&env, true), 1);
    // Nobody idle: the group's first CPU.
    busy(&mut env, &[1]);
    assert_eq!(pick(&env, true), 0);
    assert_eq!(pick(&env, false), 0);
}

#[test]
fn should_we_balance_power10_mixed_smt_sizes() {
    // power10-96 (interleaved SMT4 small cores, two coregroups) with the seed's offline
    // list 18-23,26-31,50-55,90-95: CPUs 16, 17, 24, 25, 48, 49, 88, 89 are alone in their
    // small cores. PKG groups are the coregroups, MC groups the small cores.
    let dom = domains("power10-96", Some("18-23,26-31,50-55,90-95"));
    let cg0: Vec<usize> = CpuMask::parse("0-7,24-25,32-39,48-49,72-87")
        .unwrap()
        .iter()
        .collect();
    let cg1: Vec<usize> = CpuMask::parse("8-17,40-47,56-71,88-89")
        .unwrap()
        .iter()
        .collect();
    assert_eq!(
        dom.group(dom.domain(level(&dom, 0, "PKG")).groups[0]).span,
        cg0.iter().copied().collect::<CpuMask>()
    );
    assert_eq!(
        dom.group(dom.domain(level(&dom, 16, "MC")).groups[0]).span,
        CpuMask::parse("16").unwrap()
    );
    let off = balancer(&dom, &[(Feature::SHOULD_WE_BALANCE_IDLE_CORE, false)]);
    let on = balancer(&dom, &[(Feature::SHOULD_WE_BALANCE_IDLE_CORE, true)]);
    let nr = dom.nr_cpus();
    let pkg = |lb: &LoadBalancer, env: &FakeLbEnv, cg: &[usize]| {
        balancers(lb, env, cg.iter().copied(), "PKG")
    };

    // CPU 0 busy: CPU 1 is idle and its small core {1,3,5,7} is idle: both pick it.
    let mut env = FakeLbEnv::new(nr);
    busy(&mut env, &[0]);
    assert_eq!(pkg(&off, &env, &cg0), [1]);
    assert_eq!(pkg(&on, &env, &cg0), [1]);
    // CPUs 0 and 1 busy: first idle CPU 2 (its small core runs CPU 0) vs the first CPU of
    // an idle core, the single-thread small core {24}.
    busy(&mut env, &[1]);
    assert_eq!(pkg(&off, &env, &cg0), [2]);
    assert_eq!(pkg(&on, &env, &cg0), [24]);
    busy(&mut env, &[24, 25]);
    assert_eq!(pkg(&off, &env, &cg0), [2]);
    assert_eq!(pkg(&on, &env, &cg0), [32]);
    // Coregroup 1: 8 and 9 busy -> 10 vs the lone CPU 16.
    busy(&mut env, &[8, 9]);
    assert_eq!(pkg(&off, &env, &cg1), [10]);
    assert_eq!(pkg(&on, &env, &cg1), [16]);

    // MC: the local group is one small core, so both rules pick its first idle CPU.
    let mut env = FakeLbEnv::new(nr);
    busy(&mut env, &[0]);
    assert_eq!(balancers(&off, &env, [0, 2, 4, 6], "MC"), [2]);
    assert_eq!(balancers(&on, &env, [0, 2, 4, 6], "MC"), [2]);
    assert_eq!(balancers(&on, &env, [16], "MC"), [16]);

    // Every core partly busy: the first idle CPU with busy siblings is the fallback.
    let mut env = FakeLbEnv::new(nr);
    let all_but_2: Vec<usize> = cg0.iter().copied().filter(|&c| c != 2).collect();
    busy(&mut env, &all_but_2);
    assert_eq!(pkg(&off, &env, &cg0), [2]);
    assert_eq!(pkg(&on, &env, &cg0), [2]);
    // All busy: group_balance_cpu() (the first CPU) balances.
    busy(&mut env, &[2]);
    assert_eq!(pkg(&on, &env, &cg0), [0]);
    assert_eq!(pkg(&off, &env, &cg0), [0]);
}

#[test]
fn newly_idle_cpus_always_balance_unless_work_arrived() {
    let dom = domains("hybrid-10", None);
    let lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    busy(&mut env, &[0]);
    let mc = level(&dom, 1, "MC");
    // CPU 3 is not the periodic balancer of {2,3} (2 is idle too) but may balance newidle.
    let mc3 = level(&dom, 3, "MC");
    assert!(!lb.should_we_balance_cpu(&env, mc3, 3, IdleType::Idle));
    assert!(lb.should_we_balance_cpu(&env, mc3, 3, IdleType::NewlyIdle));
    assert!(lb.should_we_balance_cpu(&env, mc, 1, IdleType::NewlyIdle));
    env.cpus[1].ttwu_pending = true;
    assert!(!lb.should_we_balance_cpu(&env, mc, 1, IdleType::NewlyIdle));
}

proptest! {
    /// For any idle pattern, exactly one CPU of each local group's balance mask balances
    /// periodically at that level, in both variants (the point of should_we_balance()).
    #[test]
    fn exactly_one_balancer_per_group(busy_bits in proptest::collection::vec(any::<bool>(), 64),
                                      idle_core in any::<bool>()) {
        for (preset, offline) in [("hybrid-10", None), ("power10-96", Some("18-23,26-31,50-55,90-95"))] {
            let dom = domains(preset, offline);
            let lb = balancer(&dom, &[(Feature::SHOULD_WE_BALANCE_IDLE_CORE, idle_core)]);
            let mut env = FakeLbEnv::new(dom.nr_cpus());
            let cpus: Vec<usize> = dom.span.iter().collect();
            for (i, &c) in cpus.iter().enumerate() {
                if busy_bits[i % busy_bits.len()] {
                    busy(&mut env, &[c]);
                }
            }
            for &c in &cpus {
                for &sd in dom.cpu_domains(c) {
                    let local = dom.group(dom.domain(sd).groups[0]);
                    let yes: Vec<usize> = local.balance_mask.iter().filter(|&o| {
                        let osd = *dom.cpu_domains(o).iter()
                            .find(|&&x| dom.domain(x).level == dom.domain(sd).level).unwrap();
                        lb.should_we_balance_cpu(&env, osd, o, idle_of(&env, o))
                    }).collect();
                    prop_assert_eq!(yes.len(), 1, "{} cpu {} level {}", preset, c, dom.domain(sd).name);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Busiest group, imbalance type and amount

#[test]
fn overloaded_cpu_vs_idle_cpu_in_an_llc_is_a_task_imbalance() {
    // hybrid-10 MC, CPU 6 idle pulls; CPU 7 runs 3 nice-0 tasks (overloaded single-CPU
    // group). Inside an LLC the kernel counts tasks: busiest weight 1 -> sibling_imbalance
    // (3 - 0 with equal core counts) halved = 1 task.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(7, 3, 1024);
    let sd = level(&dom, 6, "MC");
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::Idle, MigrationReason::LoadBalance);
    let mut out = LbOutput::default();
    let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
    let busiest = found.busiest.expect("imbalanced");
    assert_eq!(dom.group(busiest).span, CpuMask::single(7));
    assert_eq!(found.sds.busiest_stat.group_type, GroupType::Overloaded);
    assert_eq!(found.sds.local_stat.group_type, GroupType::HasSpare);
    assert_eq!(bal.migration_type, MigrationType::Task);
    assert_eq!(bal.imbalance, 1);
    assert_eq!(
        lb.sched_balance_find_src_rq(&env, &bal, busiest, &mut out),
        Some(7)
    );
    // 7 groups visited, 10 CPUs read for group stats + 1 for the busiest queue.
    assert_eq!(out.work.groups, 7);
    assert_eq!(out.work.cpus, 11);

    // A busy destination does not pull from a has_spare group (leaves it to idle CPUs),
    // but does from an overloaded one.
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::NotIdle, MigrationReason::LoadBalance);
    env.add_running_tasks(6, 1, 1024);
    assert!(
        lb.sched_balance_find_src_group(&env, &mut bal, &mut out)
            .busiest
            .is_none(),
        "local fully_busy with no avg_load above the domain's: balanced"
    );
}

#[test]
fn overloaded_llc_vs_idle_llc_across_llcs_is_a_util_imbalance() {
    // milan-2s PKG (groups = 16-CPU CCXs): another CCX runs 2 tasks per CPU, CPU 0's CCX is
    // idle. Outside an LLC an overloaded busiest group against a has_spare local group
    // migrates utilization: the local spare capacity, 16 CPUs x 1024.
    let dom = domains("milan-2s", None);
    let mut lb = balancer(&dom, &[]);
    let sd = level(&dom, 0, "PKG");
    let groups = &dom.domain(sd).groups;
    assert_eq!(groups.len(), 8);
    let remote = dom.group(groups[1]).span;
    assert_eq!(remote.weight(), 16);
    let mut env = FakeLbEnv::new(dom.nr_cpus());
    for c in remote.iter() {
        env.add_running_tasks(c, 2, 1024);
    }
    let mut bal = BalanceEnv::new(&lb, sd, 0, IdleType::Idle, MigrationReason::LoadBalance);
    let mut out = LbOutput::default();
    let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
    assert_eq!(found.busiest, Some(groups[1]));
    assert_eq!(found.sds.busiest_stat.group_type, GroupType::Overloaded);
    assert_eq!(found.sds.busiest_stat.sum_nr_running, 32);
    assert_eq!(bal.migration_type, MigrationType::Util);
    assert_eq!(bal.imbalance, 16 * 1024);
    // migrate_util picks the CPU with the highest utilization among those with > 1 task.
    assert_eq!(
        lb.sched_balance_find_src_rq(&env, &bal, groups[1], &mut out),
        remote.first()
    );
}

#[test]
fn both_overloaded_is_a_load_imbalance_bounded_by_the_domain_average() {
    // hybrid-10 MC from CPU 6: CPU 6 runs 2 tasks, CPU 7 runs 4 (all load 1024). Both
    // single-CPU groups are overloaded; avg loads 2048 and 4096; domain avg = 6144*1024 /
    // capacity(10 CPUs = 10240) = 614. imbalance = min((4096-614)*1024, (614-2048)*1024...)
    // -- local is above the domain average, so the kernel calls it balanced.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(6, 2, 1024);
    env.add_running_tasks(7, 4, 1024);
    let sd = level(&dom, 6, "MC");
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::NotIdle, MigrationReason::LoadBalance);
    let mut out = LbOutput::default();
    let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
    assert_eq!(found.sds.local_stat.group_type, GroupType::Overloaded);
    assert_eq!(found.sds.busiest_stat.avg_load, 4096);
    assert!(found.busiest.is_none());
    assert_eq!(found.sds.avg_load, 6144 * 1024 / 10240);

    // Fill the other CPUs with one task each: domain avg = (2+4+8)*1024*1024/10240 = 1433;
    // local 2048 is still above it -> balanced. With local at 1 task (fully busy) and 7 at
    // 4: local avg 1024 < busiest 4096 and < domain avg 1331 -> migrate_load
    // min((4096-1331)*1024, (1331-1024)*1024)/1024 = 307.
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(6, 1, 1024);
    env.add_running_tasks(7, 4, 1024);
    for c in [0, 1, 2, 3, 4, 5, 8, 9] {
        env.add_running_tasks(c, 1, 1024);
    }
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::NotIdle, MigrationReason::LoadBalance);
    let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
    assert_eq!(found.sds.local_stat.group_type, GroupType::FullyBusy);
    assert_eq!(
        found.busiest.map(|g| dom.group(g).span),
        Some(CpuMask::single(7))
    );
    assert_eq!(bal.migration_type, MigrationType::Load);
    let avg = 13 * 1024 * 1024 / 10240;
    assert_eq!(avg, 1331);
    assert_eq!(bal.imbalance, (avg - 1024) as i64);
}

#[test]
fn numa_allowance_leaves_a_small_imbalance_between_nodes_alone() {
    // spr-2s NUMA level (groups = the two nodes, imb_numa_nr = 14). CPU 0 idle on node 0.
    let dom = domains("spr-2s", None);
    let sd = level(&dom, 0, "NUMA");
    assert_eq!(dom.domain(sd).imb_numa_nr, 14);
    let node1 = dom.group(dom.domain(sd).groups[1]).span;
    assert_eq!(node1, CpuMask::parse("56-111,168-223").unwrap());
    let run = |node0_tasks: usize, node1_tasks: usize| {
        let mut lb = balancer(&dom, &[]);
        let mut env = FakeLbEnv::new(dom.nr_cpus());
        for c in 1..=node0_tasks {
            env.add_running_tasks(c, 1, 1024);
        }
        for c in node1.iter().take(node1_tasks) {
            env.add_running_tasks(c, 1, 1024);
        }
        let mut bal = BalanceEnv::new(&lb, sd, 0, IdleType::Idle, MigrationReason::LoadBalance);
        let mut out = LbOutput::default();
        let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
        (found.busiest.is_some(), bal.migration_type, bal.imbalance)
    };
    // Node 0 empty, node 1 runs 2 tasks: the pair stays on node 1 (imbalance 2 <= 2 while
    // the destination runs no more than 14 tasks).
    assert_eq!(run(0, 2), (false, MigrationType::Task, 0));
    // 4 tasks: imbalance 4 survives, halved -> move 2.
    assert_eq!(run(0, 4), (true, MigrationType::Task, 2));
    // Node 0 already runs 14 tasks (dst_running 15 > 14): no allowance, 16 vs 14 -> 1.
    assert_eq!(run(14, 16), (true, MigrationType::Task, 1));
    // The function itself.
    assert_eq!(adjust_numa_imbalance(2, 1, 14), 0);
    assert_eq!(adjust_numa_imbalance(3, 1, 14), 3);
    assert_eq!(adjust_numa_imbalance(2, 15, 14), 2);
}

#[test]
fn misfit_on_reduced_capacity_cpu_is_pulled_as_load() {
    // hybrid-10 MC: CPU 7 runs one task but RT/IRQ pressure left it 600 of 1024 (reduced by
    // more than imbalance_pct 117). An idle CPU 6 sees group {7} as misfit_task and forces a
    // migrate_load of the task's load.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(7, 1, 900);
    env.cpus[7].capacity = 600;
    let sd = level(&dom, 6, "MC");
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::Idle, MigrationReason::LoadBalance);
    let mut out = LbOutput::default();
    let found = lb.sched_balance_find_src_group(&env, &mut bal, &mut out);
    assert_eq!(found.sds.busiest_stat.group_type, GroupType::MisfitTask);
    assert_eq!(bal.migration_type, MigrationType::Load);
    assert_eq!(bal.imbalance, 900);
    assert_eq!(
        lb.sched_balance_find_src_rq(&env, &bal, found.busiest.unwrap(), &mut out),
        Some(7)
    );
    // The single running task cannot be detached: the pass fails and, the source capacity
    // being reduced, asks for active balancing.
    assert!(lb.need_active_balance(&env, &BalanceEnv { src_cpu: 7, ..bal }));
}

// ---------------------------------------------------------------------------------------
// detach_tasks() / can_migrate_task()

#[test]
fn detach_tasks_refuses_pinned_hot_running_and_moves_cold() {
    // hybrid-10 MC, CPU 6 idle balances; CPU 7 runs 4 tasks: A pinned to CPU 7, B ran 100 us
    // ago (cache hot: < 500 us migration cost), C cold, D running. Overloaded single-CPU
    // group -> migrate_task, imbalance (4 - 0) / 2 = 2.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    let a = env.add_task(7, 1024);
    let b = env.add_task(7, 1024);
    let c = env.add_task(7, 1024);
    let d = env.add_task(7, 1024);
    env.set_running(d);
    env.task_mut(a).allowed = CpuMask::single(7);
    env.cpus[7].clock_task_ns = 10 * MS;
    env.task_mut(b).exec_start_ns = 10 * MS - 100_000;
    let sd = level(&dom, 6, "MC");
    let mut out = LbOutput::default();
    let mut cont = true;
    let moved = lb.sched_balance_rq(
        &mut env,
        6,
        sd,
        IdleType::Idle,
        MigrationReason::LoadBalance,
        &mut cont,
        &mut out,
    );
    assert_eq!(moved, 1);
    let verdicts: Vec<_> = out.decisions.iter().map(|x| (x.task, x.verdict)).collect();
    assert_eq!(
        verdicts,
        [
            (a, TaskVerdict::Affine),
            (b, TaskVerdict::Hot),
            (c, TaskVerdict::Moved),
            (d, TaskVerdict::Running),
        ]
    );
    assert_eq!(out.migrations.len(), 1);
    assert_eq!(out.migrations[0].task, c);
    assert_eq!((out.migrations[0].from, out.migrations[0].to), (7, 6));
    assert_eq!(out.migrations[0].reason, MigrationReason::LoadBalance);
    // Skipped tasks were rotated to the most-recently-run end, as list_move() does.
    assert_eq!(env.cpus[7].tasks, [a, b, d]);
    assert_eq!(env.cpus[6].tasks, [c]);
    // loop_max = min(nr_migrate 32, nr_running 4): 4 tasks examined.
    assert_eq!(out.work.tasks, 4);
    let st = lb.task_stats[&a];
    assert_eq!(st.nr_failed_migrations_affine, 1);
    assert_eq!(lb.task_stats[&b].nr_failed_migrations_hot, 1);
    assert_eq!(lb.task_stats[&d].nr_failed_migrations_running, 1);
    // Something moved: nr_balance_failed reset, interval back to min_interval (10 ms).
    assert_eq!(lb.domain_state(sd).nr_balance_failed, 0);
    assert_eq!(lb.domain_state(sd).balance_interval_ms, 10);
    let stats = lb.domain_state(sd).stats;
    let i = idle_index(IdleType::Idle);
    assert_eq!(stats.lb_count[i], 1);
    assert_eq!(stats.lb_gained[i], 1);
    assert_eq!(stats.lb_imbalance_task[i], 2);
}

#[test]
fn cache_nice_tries_lets_a_hot_task_go_after_failures() {
    // As above but only the hot task B and the running task D: the first pass fails
    // (B hot, nr_balance_failed 0 <= cache_nice_tries 1). Once nr_balance_failed exceeds
    // cache_nice_tries (2 > 1), B moves anyway and counts as lb_hot_gained.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    let b = env.add_task(7, 1024);
    let d = env.add_task(7, 1024);
    let e = env.add_task(7, 1024);
    env.set_running(d);
    env.cpus[7].clock_task_ns = 10 * MS;
    env.task_mut(b).exec_start_ns = 10 * MS - 100_000;
    env.task_mut(e).exec_start_ns = 10 * MS - 200_000;
    let sd = level(&dom, 6, "MC");
    assert_eq!(dom.domain(sd).cache_nice_tries, 1);
    let mut out = LbOutput::default();
    let pass = |lb: &mut LoadBalancer, env: &mut FakeLbEnv, out: &mut LbOutput| {
        let mut cont = true;
        out.clear();
        lb.sched_balance_rq(
            env,
            6,
            sd,
            IdleType::Idle,
            MigrationReason::LoadBalance,
            &mut cont,
            out,
        )
    };
    assert_eq!(pass(&mut lb, &mut env, &mut out), 0);
    assert_eq!(lb.domain_state(sd).nr_balance_failed, 1);
    let i = idle_index(IdleType::Idle);
    assert_eq!(lb.domain_state(sd).stats.lb_failed[i], 1);
    assert_eq!(pass(&mut lb, &mut env, &mut out), 0);
    assert_eq!(lb.domain_state(sd).nr_balance_failed, 2);
    // Third pass: 2 > cache_nice_tries -> the hot tasks may go (imbalance 1 task).
    assert_eq!(pass(&mut lb, &mut env, &mut out), 1);
    assert_eq!(out.decisions[0].verdict, TaskVerdict::MovedHot);
    assert_eq!(lb.domain_state(sd).stats.lb_hot_gained[i], 1);
    assert_eq!(
        lb.task_stats[&out.decisions[0].task].nr_forced_migrations,
        1
    );
    assert_eq!(lb.domain_state(sd).nr_balance_failed, 0);
}

#[test]
fn all_pinned_source_backs_off_the_interval() {
    // Every task of CPU 7 is pinned there: all-pinned outcome counts as balanced, resets
    // nr_balance_failed and doubles balance_interval (10 -> 20 ms, max_interval 20).
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    for p in env.add_running_tasks(7, 3, 1024) {
        env.task_mut(p).allowed = CpuMask::single(7);
    }
    let sd = level(&dom, 6, "MC");
    let mut out = LbOutput::default();
    let mut cont = true;
    let moved = lb.sched_balance_rq(
        &mut env,
        6,
        sd,
        IdleType::Idle,
        MigrationReason::LoadBalance,
        &mut cont,
        &mut out,
    );
    assert_eq!(moved, 0);
    let i = idle_index(IdleType::Idle);
    let st = lb.domain_state(sd);
    assert_eq!(st.stats.lb_balanced[i], 1);
    assert_eq!(st.stats.lb_failed[i], 0);
    assert_eq!(st.balance_interval_ms, 20);
    assert!(
        out.decisions
            .iter()
            .all(|d| d.verdict == TaskVerdict::Affine)
    );
}

#[test]
fn delayed_tasks_only_move_with_load() {
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    let p = env.add_task(7, 1024);
    env.add_running_tasks(7, 2, 1024);
    env.task_mut(p).delayed = true;
    let sd = level(&dom, 6, "MC");
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::Idle, MigrationReason::LoadBalance);
    bal.src_cpu = 7;
    bal.migration_type = MigrationType::Task;
    assert_eq!(
        lb.can_migrate_task(&env, &mut bal, p).verdict,
        TaskVerdict::Delayed
    );
    bal.migration_type = MigrationType::Load;
    assert_eq!(
        lb.can_migrate_task(&env, &mut bal, p).verdict,
        TaskVerdict::Moved
    );
}

/// v6.12's can_migrate_task() has neither the delayed-dequeue filter (61b82dfb6b7e) nor the
/// ineligible filter (873199d27bb2), both v6.14 (checked against 6.12.118's C,
/// tests/kernel_diff): a delayed task moves with any migration type there.
#[test]
fn v6_12_moves_delayed_tasks_like_any_queued_task() {
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(
        &dom,
        &[
            (Feature::LB_SKIP_DELAYED, false),
            (Feature::LB_SKIP_INELIGIBLE, false),
        ],
    );
    let mut env = FakeLbEnv::new(10);
    let p = env.add_task(7, 1024);
    env.add_running_tasks(7, 2, 1024);
    env.task_mut(p).delayed = true;
    let sd = level(&dom, 6, "MC");
    let mut bal = BalanceEnv::new(&lb, sd, 6, IdleType::Idle, MigrationReason::LoadBalance);
    bal.src_cpu = 7;
    bal.migration_type = MigrationType::Task;
    assert_eq!(
        lb.can_migrate_task(&env, &mut bal, p).verdict,
        TaskVerdict::Moved
    );
    let v612 = schedlab::kconfig::profiles::Profile::by_name("v6.12").unwrap();
    let v615 = schedlab::kconfig::profiles::Profile::by_name("v6.15").unwrap();
    for f in [Feature::LB_SKIP_DELAYED, Feature::LB_SKIP_INELIGIBLE] {
        assert!(!f.value_at(v612.version) && f.value_at(v615.version), "{f}");
    }
}

// ---------------------------------------------------------------------------------------
// Newidle gates and max_newidle_lb_cost

/// hybrid-10 with CPU 7 running 3 tasks, the root domain overloaded, and CPU 6 going idle.
fn newidle_setup(feats: &[(Feature, bool)]) -> (LoadBalancer, FakeLbEnv, DomainId) {
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, feats);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(7, 3, 1024);
    lb.note_nr_running(env.nr_running(7));
    let sd = level(&dom, 6, "MC");
    assert_eq!(dom.cpu_domains(6), [sd]);
    (lb, env, sd)
}

#[test]
fn newidle_migration_cost_gate() {
    let nl = idle_index(IdleType::NewlyIdle);
    for gate in [true, false] {
        let (mut lb, mut env, sd) = newidle_setup(&[
            (Feature::NEWIDLE_MIGRATION_COST_GATE, gate),
            (Feature::NI_RANDOM, false),
        ]);
        lb.rq[6].avg_idle = 400_000; // < sysctl_sched_migration_cost (500 us)
        let mut out = LbOutput::default();
        let pulled = lb.sched_balance_newidle(&mut env, 6, 5 * MS, &mut out);
        if gate {
            assert_eq!(pulled, 0);
            assert_eq!(out.work.passes, 0);
            assert_eq!(lb.domain_state(sd).stats.lb_count[nl], 0);
            assert_ne!(lb.rq[6].idle_stamp, 0, "going idle keeps the idle stamp");
        } else {
            assert_eq!(pulled, 1);
            assert_eq!(out.work.passes, 1);
            assert_eq!(lb.domain_state(sd).stats.lb_count[nl], 1);
            assert_eq!(
                out.migrations.len(),
                1,
                "CONFIG_PREEMPTION: one task per newidle pass"
            );
            assert_eq!(out.migrations[0].reason, MigrationReason::NewidleBalance);
            assert_eq!(lb.rq[6].idle_stamp, 0);
            // max_newidle_lb_cost now holds the pass's cost: 800 + 60 x 11 CPUs + 120 x 1.
            assert_eq!(lb.domain_state(sd).max_newidle_lb_cost, 800 + 60 * 11 + 120);
        }
    }
}

#[test]
fn newidle_skips_when_avg_idle_below_base_domain_cost_or_not_overloaded() {
    let (mut lb, mut env, sd) = newidle_setup(&[(Feature::NI_RANDOM, false)]);
    lb.domain_state_mut(sd).max_newidle_lb_cost = 600_000;
    lb.rq[6].avg_idle = 500_000;
    let mut out = LbOutput::default();
    assert_eq!(lb.sched_balance_newidle(&mut env, 6, 5 * MS, &mut out), 0);
    assert_eq!(out.work.passes, 0);
    // Not overloaded: no pass either, whatever avg_idle.
    let (mut lb, mut env, _) = newidle_setup(&[(Feature::NI_RANDOM, false)]);
    lb.rd_overloaded = false;
    assert_eq!(lb.sched_balance_newidle(&mut env, 6, 5 * MS, &mut out), 0);
    assert_eq!(out.work.passes, 0);
}

#[test]
fn max_newidle_lb_cost_decays_one_percent_per_second() {
    let (mut lb, _env, sd) = newidle_setup(&[]);
    lb.domain_state_mut(sd).max_newidle_lb_cost = 256_000;
    // HZ = 250: no decay until more than HZ jiffies after last_decay (0).
    lb.set_now(250 * 4 * MS);
    assert!(!lb.update_newidle_cost(sd, 0, 0));
    lb.set_now(251 * 4 * MS);
    assert!(lb.update_newidle_cost(sd, 0, 0));
    assert_eq!(lb.domain_state(sd).max_newidle_lb_cost, 253_000);
    assert!(!lb.update_newidle_cost(sd, 0, 0), "at most once per second");
    // A larger measured cost raises it (and restarts the decay clock).
    assert!(!lb.update_newidle_cost(sd, 700_000, 0));
    assert_eq!(lb.domain_state(sd).max_newidle_lb_cost, 700_000);
    // The periodic walk decays it and keeps the rq-wide value at a migration-cost floor.
    lb.set_now(600 * 4 * MS);
    let mut env = FakeLbEnv::new(10);
    let mut out = LbOutput::default();
    lb.sched_balance_domains(
        &mut env,
        6,
        IdleType::Idle,
        MigrationReason::LoadBalance,
        &mut out,
    );
    assert_eq!(lb.domain_state(sd).max_newidle_lb_cost, 700_000 * 253 / 256);
    assert_eq!(lb.rq[6].max_idle_balance_cost, 700_000 * 253 / 256);
}

#[test]
fn v6_17_failed_newidle_bumps_the_cost_with_a_cap() {
    // Nothing to pull (CPU 7's tasks all pinned): with NEWIDLE_FAIL_BUMP the domain is
    // charged 3/2 of its max cost, capped at migration_cost + 200 ns.
    let run = |bump: bool, start: u64| {
        let (mut lb, mut env, sd) = newidle_setup(&[
            (Feature::NEWIDLE_FAIL_BUMP, bump),
            (Feature::NI_RANDOM, false),
        ]);
        for p in env.cpus[7].tasks.clone() {
            env.task_mut(p).allowed = CpuMask::single(7);
        }
        lb.domain_state_mut(sd).max_newidle_lb_cost = start;
        let mut out = LbOutput::default();
        assert_eq!(lb.sched_balance_newidle(&mut env, 6, 5 * MS, &mut out), 0);
        assert_eq!(out.work.passes, 1);
        lb.domain_state(sd).max_newidle_lb_cost
    };
    assert_eq!(run(true, 100_000), 150_000);
    assert_eq!(run(true, 400_000), 500_200);
    // v6.16 / v6.18: the measured cost (about 2 us) is below the max: unchanged.
    assert_eq!(run(false, 100_000), 100_000);
}

#[test]
fn ni_random_runs_newidle_in_proportion_to_success() {
    let (mut lb, mut env, sd) = newidle_setup(&[(Feature::NI_RANDOM, true)]);
    // sd_init(): 512 calls, 256 successes, ratio 512 (50 %).
    let st = lb.domain_state(sd);
    assert_eq!(
        (st.newidle_call, st.newidle_success, st.newidle_ratio),
        (512, 256, 512)
    );
    // A die of 600 > 1 + 512: skipped, counted as a failed call.
    env.rng_script.push_back(600);
    let mut out = LbOutput::default();
    assert_eq!(lb.sched_balance_newidle(&mut env, 6, 5 * MS, &mut out), 0);
    assert_eq!(out.work.passes, 0);
    assert_eq!(lb.domain_state(sd).newidle_call, 513);
    assert_eq!(lb.domain_state(sd).newidle_success, 256);
    // A die of 100: runs, pulls, and the success is weighted round(1024 / 513) = 2.
    env.rng_script.push_back(100);
    assert_eq!(lb.sched_balance_newidle(&mut env, 6, 6 * MS, &mut out), 1);
    assert_eq!(lb.domain_state(sd).newidle_call, 514);
    assert_eq!(lb.domain_state(sd).newidle_success, 258);
    // Every 1024 calls the ratio takes the success count and both counters halve.
    let st = lb.domain_state_mut(sd);
    st.newidle_call = 1023;
    st.newidle_success = 300;
    env.rng_script.push_back(1000);
    env.add_running_tasks(7, 1, 1024);
    let _ = lb.sched_balance_newidle(&mut env, 6, 7 * MS, &mut out);
    let st = lb.domain_state(sd);
    assert_eq!(
        (st.newidle_call, st.newidle_success, st.newidle_ratio),
        (512, 150, 300)
    );
}

// ---------------------------------------------------------------------------------------
// Periodic walk, intervals, NOHZ

#[test]
fn balance_intervals_and_the_periodic_walk() {
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let smt = level(&dom, 0, "SMT");
    let mc = level(&dom, 0, "MC");
    // HZ 250: SMT 2 ms idle -> 1 jiffy; busy 2 x 16 = 32 ms -> 8 - 1 = 7 jiffies.
    assert_eq!(lb.get_sd_balance_interval(smt, false), 1);
    assert_eq!(lb.get_sd_balance_interval(smt, true), 7);
    // MC 10 ms: 3 jiffies idle (rounded up), busy 160 ms -> 40 - 1 = 39.
    assert_eq!(lb.get_sd_balance_interval(mc, false), 3);
    assert_eq!(lb.get_sd_balance_interval(mc, true), 39);

    // CPU 0 busy, CPU 1 idle: CPU 0's tick balances SMT (its own group) but stops at MC,
    // where CPU 1 is responsible (lb_balanced counts the should_we_balance refusal).
    let mut env = FakeLbEnv::new(10);
    busy(&mut env, &[0]);
    let mut out = LbOutput::default();
    // Levels are due `interval` jiffies after their boot-time last_balance (0): at jiffy
    // 40 (160 ms) both SMT (7) and MC (39) are.
    lb.sched_tick(&mut env, 0, 160 * MS, &mut out);
    let b = idle_index(IdleType::NotIdle);
    assert_eq!(lb.domain_state(smt).stats.lb_count[b], 1);
    assert_eq!(lb.domain_state(mc).stats.lb_count[b], 1);
    assert_eq!(lb.domain_state(mc).stats.lb_balanced[b], 1);
    assert_eq!(out.work.passes, 2);
    // Balanced passes double balance_interval up to max_interval (2 -> 4 ms at SMT).
    assert_eq!(lb.domain_state(smt).balance_interval_ms, 4);
    assert_eq!(lb.domain_state(mc).balance_interval_ms, 20);
    // next_balance = the earliest level: SMT last_balance 40 + busy interval (4 ms x 16 =
    // 64 ms = 16 jiffies - 1); MC would be 40 + 80 - 1.
    assert_eq!(lb.rq[0].next_balance, 55);
    // Not due yet on the next tick: nothing runs.
    out.clear();
    lb.sched_tick(&mut env, 0, 164 * MS, &mut out);
    assert_eq!(out.work.passes, 0);
}

#[test]
fn nohz_kick_and_idle_load_balance_on_behalf_of_idle_cpus() {
    // hybrid-10: CPUs 6-9 are tickless idle; CPU 0 runs 2 tasks and CPU 1 one. CPU 0's busy
    // tick kicks the first idle CPU (6) with STATS|BALANCE (nr_running >= 2); CPU 6 then
    // balances for 7, 8, 9 and finally itself. CPU 7 pulls one task from CPU 0.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    let tasks0 = env.add_running_tasks(0, 2, 1024);
    env.add_running_tasks(1, 1, 1024);
    for c in 6..10 {
        lb.nohz_balance_enter_idle(c, 0);
    }
    assert_eq!(lb.nohz.nr_cpus, 4);
    assert_eq!(lb.llc_nr_busy_cpus[0], 6);
    let mut out = LbOutput::default();
    // At jiffy 40 (160 ms) the idle CPUs' MC level (3 jiffies) is due.
    lb.sched_tick(&mut env, 0, 160 * MS, &mut out);
    assert_eq!(out.kick_ilb, Some(6));
    assert_eq!(
        lb.rq[6].nohz_flags,
        nohz_flags::NOHZ_STATS_KICK | nohz_flags::NOHZ_BALANCE_KICK | nohz_flags::NOHZ_NEXT_KICK
    );
    assert_eq!(lb.nohz.next_balance, 41, "jiffies + 1");
    let mut out = LbOutput::default();
    lb.nohz_csd_func(&mut env, 6, 160 * MS, &mut out);
    assert_eq!(lb.rq[6].nohz_flags, 0);
    assert_eq!(out.migrations.len(), 1);
    let m = out.migrations[0];
    assert_eq!((m.task, m.from, m.to), (tasks0[0], 0, 7));
    assert_eq!(m.reason, MigrationReason::NohzIdleBalance);
    assert!(!lb.nohz.needs_update);
    // A CPU that gets work leaves NOHZ on its next busy tick.
    lb.sched_tick(&mut env, 7, 164 * MS, &mut out);
    assert!(!lb.nohz.idle_cpus_mask.test(7));
    assert_eq!(lb.llc_nr_busy_cpus[0], 7);
}

#[test]
fn warm_start_idle_cpus_balance_every_level_at_the_first_kick() {
    // A run starts on a machine that has been up and quiet (sched::balance::warm): every
    // level's balance_interval is max_interval, and every idle CPU's levels are due at the
    // first balancing kick. skl-2s: node 0 (CPUs 0-19,40-59) runs one task per CPU and two
    // on CPU 0; node 1 is tickless idle. At 12 ms CPU 0's busy tick kicks the ilb (CPU 20),
    // which balances for node 1's CPUs: CPU 20 is the first idle CPU of node 1, so it
    // balances the NUMA level and pulls CPU 0's waiting task across the nodes. From the
    // boot state (last_balance = now, balance_interval = min_interval = 80 ms) the NUMA
    // level is not due before 80 ms and the same kick moves nothing.
    let dom = domains("skl-2s", None);
    let node0: Vec<usize> = (0..20).chain(40..60).collect();
    for warm in [false, true] {
        let mut lb = balancer(&dom, &[]);
        if warm {
            lb.warm_start();
            for &sd in dom.cpu_domains(20) {
                assert_eq!(
                    lb.domain_state(sd).balance_interval_ms,
                    dom.domain(sd).max_interval_ms
                );
            }
        }
        let mut env = FakeLbEnv::new(80);
        let tasks0 = env.add_running_tasks(0, 2, 1024);
        for &c in &node0[1..] {
            env.add_running_tasks(c, 1, 1024);
        }
        for c in (20..40).chain(60..80) {
            lb.nohz_balance_enter_idle(c, 0);
        }
        let mut out = LbOutput::default();
        lb.sched_tick(&mut env, 0, 12 * MS, &mut out);
        assert_eq!(out.kick_ilb, Some(20), "warm {warm}");
        let mut out = LbOutput::default();
        lb.nohz_csd_func(&mut env, 20, 12 * MS, &mut out);
        let numa = level(&dom, 20, "NUMA");
        let numa_passes = lb.domain_state(numa).stats.lb_count[idle_index(IdleType::Idle)];
        if warm {
            assert_eq!(numa_passes, 1);
            assert_eq!(out.migrations.len(), 1);
            let m = out.migrations[0];
            assert!(
                tasks0.contains(&m.task) && m.from == 0,
                "CPU 0's waiting task"
            );
            assert!(
                (20..40).chain(60..80).any(|c| c == m.to),
                "to node 1: {m:?}"
            );
        } else {
            assert_eq!(numa_passes, 0);
            assert!(out.migrations.is_empty());
        }
    }
}

#[test]
fn active_balance_after_repeated_task_imbalance_failures() {
    // CPU 7 runs 2 tasks: the waiting one is pinned to CPU 7, the other is running. Normal
    // passes from idle CPU 6 fail (Affine, Running). imbalanced_active_balance() wants
    // nr_balance_failed > cache_nice_tries (1) + 2: the 4th failure queues the stopper,
    // which pushes the formerly running task.
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    let ts = env.add_running_tasks(7, 2, 1024);
    env.task_mut(ts[0]).allowed = CpuMask::single(7);
    let sd = level(&dom, 6, "MC");
    let mut out = LbOutput::default();
    for n in 1..=4u32 {
        out.clear();
        let mut cont = true;
        let moved = lb.sched_balance_rq(
            &mut env,
            6,
            sd,
            IdleType::Idle,
            MigrationReason::LoadBalance,
            &mut cont,
            &mut out,
        );
        assert_eq!(moved, 0);
        assert_eq!(lb.domain_state(sd).nr_balance_failed, n);
        let verdicts: Vec<_> = out.decisions.iter().map(|d| d.verdict).collect();
        assert_eq!(verdicts, [TaskVerdict::Affine, TaskVerdict::Running]);
        if n < 4 {
            assert!(out.active_balance.is_empty(), "pass {n}");
        }
    }
    assert_eq!(out.active_balance, [7]);
    assert!(lb.rq[7].active_balance);
    assert_eq!(lb.rq[7].push_cpu, 6);
    assert_eq!(
        lb.domain_state(sd).stats.lb_failed[idle_index(IdleType::Idle)],
        4
    );
    // The stopper runs on CPU 7: the running task (preempted by it) moves to CPU 6.
    let mut out = LbOutput::default();
    let pushed = lb.active_load_balance_cpu_stop(&mut env, 7, 5 * MS, &mut out);
    assert_eq!(pushed, Some(ts[1]));
    assert_eq!(out.migrations[0].reason, MigrationReason::ActiveBalance);
    assert_eq!((out.migrations[0].from, out.migrations[0].to), (7, 6));
    let st = lb.domain_state(sd);
    assert_eq!(
        (st.stats.alb_count, st.stats.alb_pushed, st.stats.alb_failed),
        (1, 1, 0)
    );
    assert_eq!(st.nr_balance_failed, 0);
    assert!(!lb.rq[7].active_balance);
}

// ---------------------------------------------------------------------------------------
// /proc/schedstat v17

#[test]
fn schedstat_v17_layout_line_by_line() {
    let dom = domains("hybrid-10", None);
    let mut lb = balancer(&dom, &[]);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(7, 3, 1024);
    let sd = level(&dom, 6, "MC");
    let mut out = LbOutput::default();
    let mut cont = true;
    assert_eq!(
        lb.sched_balance_rq(
            &mut env,
            6,
            sd,
            IdleType::Idle,
            MigrationReason::LoadBalance,
            &mut cont,
            &mut out
        ),
        1
    );
    lb.domain_state_mut(level(&dom, 0, "SMT"))
        .stats
        .ttwu_wake_remote = 5;
    let mut rq = vec![RqSchedstat::default(); 10];
    rq[0] = RqSchedstat {
        yld_count: 1,
        sched_count: 2,
        sched_goidle: 3,
        ttwu_count: 4,
        ttwu_local: 5,
        rq_cpu_time: 6,
        run_delay: 7,
        pcount: 8,
    };
    let text = write_schedstat(&lb, &rq, 4242);
    let lines: Vec<&str> = text.lines().collect();
    // 2 header lines, 10 cpu lines, 2 domains for CPUs 0-5 and 1 for CPUs 6-9.
    assert_eq!(lines.len(), 2 + 10 + 6 * 2 + 4);
    assert_eq!(lines[0], "version 17");
    assert_eq!(lines[1], "timestamp 4242");
    assert_eq!(lines[2], "cpu0 1 0 2 3 4 5 6 7 8");
    let zeros = |n: usize| vec!["0"; n].join(" ");
    assert_eq!(
        lines[3],
        format!("domain0 SMT 003 {} 0 0 0 0 0 0 0 0 0 5 0 0", zeros(33))
    );
    assert_eq!(
        lines[4],
        format!("domain1 MC 3ff {} {}", zeros(33), zeros(12))
    );
    assert_eq!(lines[5], "cpu1 0 0 0 0 0 0 0 0 0");
    // CPU 6: one domain (MC). Busy block zero; idle block: lb_count 1, balanced 0, failed 0,
    // imbalance load/util/task/misfit 0/0/1/0 (3 tasks vs 0 -> 1), gained 1, hot 0,
    // nobusyq 0, nobusyg 0; newidle block zero; alb/sbe/sbf/ttwu zero.
    let cpu6 = lines.iter().position(|l| l.starts_with("cpu6 ")).unwrap();
    assert_eq!(
        lines[cpu6 + 1],
        format!(
            "domain0 MC 3ff {} 1 0 0 0 0 1 0 1 0 0 0 {} {}",
            zeros(11),
            zeros(11),
            zeros(12)
        )
    );
    for l in &lines[2..] {
        let fields: Vec<&str> = l.split(' ').collect();
        if l.starts_with("cpu") {
            assert_eq!(fields.len(), 10, "{l}");
        } else {
            assert!(l.starts_with("domain"));
            assert_eq!(fields.len(), 3 + 33 + 12, "{l}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// v6.6 SMT balance changes, each switchable (GROUP_SMT_BALANCE, SMT_VS_NONSMT_SPARE,
// SIBLING_IMBALANCE) and off in profiles before v6.6.

/// `sched_balance_find_src_group()` for `dst` at its `name` level: (busiest span, type,
/// migration type, imbalance), or `None` when balanced.
fn find_src(
    lb: &mut LoadBalancer,
    env: &FakeLbEnv,
    dst: usize,
    name: &str,
    idle: IdleType,
) -> Option<(CpuMask, GroupType, MigrationType, i64)> {
    let sd = level(&lb.domains.clone(), dst, name);
    let mut bal = BalanceEnv::new(lb, sd, dst, idle, MigrationReason::LoadBalance);
    let mut out = LbOutput::default();
    let found = lb.sched_balance_find_src_group(env, &mut bal, &mut out);
    found.busiest.map(|b| {
        (
            lb.domains.group(b).span,
            found.sds.busiest_stat.group_type,
            bal.migration_type,
            bal.imbalance,
        )
    })
}

#[test]
fn group_smt_balance_lets_an_idle_e_core_pull_from_a_busy_smt_core_from_v6_6() {
    // adl-i9 MC (SD_ASYM_CPUCAPACITY, so no SD_PREFER_SIBLING below it): P-core {0,1} runs
    // two tasks, E-core CPU 16 (cluster {16-19}) is idle and pulls.
    let dom = domains("adl-i9", None);
    let mut env = FakeLbEnv::new(dom.nr_cpus());
    for c in 16..24 {
        env.cpus[c].capacity = 605;
        env.cpus[c].arch_capacity = 605;
    }
    busy(&mut env, &[0, 1]);
    // v6.6+: the SMT group is group_smt_balance, and a non-SMT local group forces the
    // balance: one task moves.
    let mut on = balancer(&dom, &[(Feature::GROUP_SMT_BALANCE, true)]);
    assert_eq!(
        find_src(&mut on, &env, 16, "MC", IdleType::Idle),
        Some((
            CpuMask::parse("0-1").unwrap(),
            GroupType::SmtBalance,
            MigrationType::Task,
            1
        ))
    );
    // Before: the P-core is merely fully_busy, and a fully busy group of bigger CPUs is
    // never picked by a smaller CPU: balanced.
    let mut off = balancer(&dom, &[(Feature::GROUP_SMT_BALANCE, false)]);
    assert_eq!(find_src(&mut off, &env, 16, "MC", IdleType::Idle), None);
}

#[test]
fn smt_vs_nonsmt_has_spare_rule_prefers_the_pure_cpu_group_from_v6_6() {
    // hybrid-10 MC from idle CPU 9; group_smt_balance off in both runs to isolate the rule.
    // SMT core {0,1} runs two light tasks (has_spare, 0 idle), single CPU 7 runs one.
    let dom = domains("hybrid-10", None);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(0, 1, 256);
    env.add_running_tasks(1, 1, 256);
    env.add_running_tasks(7, 1, 256);
    // v6.6+: once the SMT group is busiest, a pure-CPU has_spare group replaces it; {7}
    // runs one task only, so there is nothing to pull: balanced.
    let mut on = balancer(
        &dom,
        &[
            (Feature::GROUP_SMT_BALANCE, false),
            (Feature::SMT_VS_NONSMT_SPARE, true),
        ],
    );
    assert_eq!(find_src(&mut on, &env, 9, "MC", IdleType::Idle), None);
    // Before: equal idle CPUs, {0,1} runs more tasks and stays busiest; prefer-sibling
    // spreading then moves one of its two tasks to CPU 9.
    let mut off = balancer(
        &dom,
        &[
            (Feature::GROUP_SMT_BALANCE, false),
            (Feature::SMT_VS_NONSMT_SPARE, false),
        ],
    );
    assert_eq!(
        find_src(&mut off, &env, 9, "MC", IdleType::Idle),
        Some((
            CpuMask::parse("0-1").unwrap(),
            GroupType::HasSpare,
            MigrationType::Task,
            1
        ))
    );
}

#[test]
fn sibling_imbalance_needs_an_idle_destination_from_v6_6() {
    // hybrid-10 MC from busy CPU 0 (one light task): core {2,3} has three light tasks on
    // CPU 2 (not overloaded: little utilization). Before v6.6 prefer-sibling spreading
    // used busiest - local nr_running (3 - 1 = 2 > 1) whatever the destination's state, so
    // the busy CPU 0 pulls one task; sibling_imbalance() is 0 for a busy destination, so
    // from v6.6 the busy CPU leaves it to an idle one.
    let dom = domains("hybrid-10", None);
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(0, 1, 100);
    env.add_running_tasks(2, 3, 100);
    let mut off = balancer(&dom, &[(Feature::SIBLING_IMBALANCE, false)]);
    assert_eq!(
        find_src(&mut off, &env, 0, "MC", IdleType::NotIdle),
        Some((
            CpuMask::parse("2-3").unwrap(),
            GroupType::HasSpare,
            MigrationType::Task,
            1
        ))
    );
    let mut on = balancer(&dom, &[(Feature::SIBLING_IMBALANCE, true)]);
    assert_eq!(find_src(&mut on, &env, 0, "MC", IdleType::NotIdle), None);
    // An idle destination: both variants spread (2 - 0 = 2 tasks -> move 1).
    let mut env = FakeLbEnv::new(10);
    env.add_running_tasks(2, 2, 100);
    for lb in [&mut off, &mut on] {
        assert_eq!(
            find_src(lb, &env, 0, "MC", IdleType::Idle).map(|f| f.3),
            Some(1)
        );
    }
}

#[test]
fn v6_6_smt_balance_switches_follow_the_profiles() {
    use schedlab::kconfig::profiles;
    for f in [
        Feature::GROUP_SMT_BALANCE,
        Feature::SMT_VS_NONSMT_SPARE,
        Feature::SIBLING_IMBALANCE,
    ] {
        assert!(
            !profiles::Profile::by_name("v6.5").unwrap().features().on(f),
            "{f}"
        );
        assert!(
            profiles::Profile::by_name("v6.6").unwrap().features().on(f),
            "{f}"
        );
        assert!(Features::defaults().on(f));
    }
}

#[test]
fn numa_idle_cpu_difference_wraps_as_unsigned_int() {
    // haswell-4s NUMA level from CPU 0: local node has 30 idle CPUs, the busiest (not
    // overloaded, no prefer-sibling) node 32. calculate_imbalance() evens idle CPUs with
    // `local->idle_cpus - busiest->idle_cpus` on unsigned ints: 30 - 32 wraps to
    // 4294967294, max_t(long, 0, ...) keeps it, adjust_numa_imbalance() leaves a value above
    // NUMA_IMBALANCE_MIN alone, and the final >>= 1 gives 2147483647 tasks to move.
    use schedlab::sched::balance::stats::SdLbStats;
    let dom = domains("haswell-4s", None);
    let lb = balancer(&dom, &[]);
    let sd = level(&dom, 0, "NUMA");
    assert!(
        dom.domain(sd)
            .flags
            .contains(schedlab::domains::SdFlags::SD_NUMA)
    );
    let groups = dom.domain(sd).groups.clone();
    let mut bal = BalanceEnv::new(&lb, sd, 0, IdleType::Idle, MigrationReason::LoadBalance);
    let mut sds = SdLbStats::new();
    sds.local = Some(groups[0]);
    sds.busiest = Some(groups[1]);
    sds.prefer_sibling = false;
    sds.local_stat.group_type = GroupType::HasSpare;
    sds.local_stat.group_weight = 36;
    sds.local_stat.idle_cpus = 30;
    sds.local_stat.sum_nr_running = 6;
    sds.busiest_stat.group_type = GroupType::HasSpare;
    sds.busiest_stat.group_weight = 36;
    sds.busiest_stat.idle_cpus = 32;
    sds.busiest_stat.sum_nr_running = 4;
    sds.busiest_stat.sum_h_nr_running = 4;
    lb.calculate_imbalance(&mut bal, &mut sds);
    assert_eq!(bal.migration_type, MigrationType::Task);
    assert_eq!(bal.imbalance, i64::from(u32::MAX - 1) >> 1);
    // The ordinary case: 32 - 30 = 2 idle CPUs -> 1 task; with one task on the local node
    // (within imb_numa_nr) the NUMA allowance keeps an imbalance of 2 -> 0.
    sds.local_stat.idle_cpus = 32;
    sds.busiest_stat.idle_cpus = 30;
    lb.calculate_imbalance(&mut bal, &mut sds);
    assert_eq!(bal.imbalance, 1);
    assert!(dom.domain(sd).imb_numa_nr >= 2);
    sds.local_stat.sum_nr_running = 1;
    lb.calculate_imbalance(&mut bal, &mut sds);
    assert_eq!(bal.imbalance, 0);
}
