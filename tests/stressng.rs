//! stress-ng's cpu stressor load cycle as stress-cpu.c runs it (`stress_cpu()`): the method
//! cycle of `--cpu-method all` with each method's own cost, the `--cpu-load-slice` rules
//! (−n calls, S ms of the process's CPU time, random r/131072 s), the delay formula with
//! `bias`, and `stress_continue()` checked only after a slice's sleep. Runs are noise-free
//! (exact times) on `nehalem-2s` (reference-speed CPUs) with one instance pinned to CPU 0.

use schedlab::config::scenario::Scenario;
use schedlab::engine::Engine;
use schedlab::experiment;
use schedlab::workload::results::stressng_result;
use schedlab::workload::stressng::{METHODS, REFERENCE_ALL_BOGO_OP_NS, method_reference_ns};
use schedlab::workload::view::RunView;
use schedlab::workload::{StressNgConfig, WorkloadSpec, generate};

const MS: u64 = 1_000_000;

fn cfg_of(cmd: &str) -> (WorkloadSpec, StressNgConfig) {
    let s = WorkloadSpec::from_command(cmd, 16).expect("command parses");
    let WorkloadSpec::StressNg(c) = &s else {
        unreachable!()
    };
    let c = c.clone();
    (s, c)
}

/// Run `cmd` on nehalem-2s with `seed` (noise as given), at most `cap_ns`.
fn run(cmd: &str, seed: u64, noise: bool, cap_ns: u64) -> (Engine, StressNgConfig) {
    let (s, c) = cfg_of(cmd);
    let text = "[machine]\npreset = \"nehalem-2s\"\n[kernel]\nprofile = \"v6.18\"\n\
                [workload]\nkind = \"spin\"\n";
    let scn = Scenario::parse(text, "test").unwrap();
    let machine = experiment::resolve_machine(&scn).unwrap();
    let cost = experiment::resolve_cost(&scn, &machine).unwrap();
    let d = generate::workload_duration_ns(&s)
        .unwrap_or(cap_ns)
        .min(cap_ns);
    let mut cfg = experiment::engine_config(&scn, seed, d);
    cfg.check_invariants = true;
    if !noise {
        cfg.noise = schedlab::engine::noise::NoiseParams::OFF;
    }
    let policy = experiment::make_policy(&scn, &machine, &cost, seed);
    let plan = generate::plan(&s, &machine, seed).unwrap();
    let mut e = Engine::new(machine, cost, cfg, policy, plan).unwrap();
    e.run();
    assert!(
        e.invariant_violations().is_empty(),
        "{:?}",
        e.invariant_violations()
    );
    (e, c)
}

#[test]
fn all_cycles_through_the_method_table_with_per_method_costs() {
    let (_, c) = cfg_of("stress-ng --cpu 1");
    let cycle = c.call_cycle();
    assert_eq!(cycle.len(), 83);
    assert_eq!(METHODS[0].name, "ackermann");
    assert_eq!(METHODS[82].name, "zeta");
    // Per-method reference costs (VM-measured, scaled to the reference CPU): ackermann
    // 246.6 µs on the VM × 2.5019 = 617.1 µs; matrixprod 4336 µs × 2.5019 = 10.85 ms;
    // callfunc, which this build optimises to 0.33 µs, stays sub-µs.
    assert_eq!(cycle[0].0, 617_073);
    assert_eq!(cycle[1].0, 281_415);
    assert_eq!(cycle[2].0, 219_731);
    assert_eq!(cycle[3].0, 837);
    let mp = METHODS.iter().find(|m| m.name == "matrixprod").unwrap();
    assert_eq!(method_reference_ns(mp), 10_848_322);
    // A whole cycle keeps the reference calibration: 1.194 ms of reference CPU per bogo op,
    // so the mean call (1.140 ms) is the old `all` mean.
    let ns: f64 = cycle.iter().map(|(n, _)| *n as f64).sum();
    let ops: f64 = cycle.iter().map(|(_, o)| o).sum();
    assert!(
        (ns / ops - REFERENCE_ALL_BOGO_OP_NS).abs() < 50.0,
        "{}",
        ns / ops
    );
    assert_eq!(c.method_call_ns(), 1_140_072);
    // Bogo counter: ackermann adds 1484.5/2008.64 = 0.739, apery 0.159, bitops 0.226.
    assert_eq!(c.bogo_ops_after_calls(2), 0);
    assert_eq!(c.bogo_ops_after_calls(3), 1);
    assert_eq!(c.calls_for_ops(1), 3);
    // Whole cycles: 83 calls add Σ 1484.5/rate.
    assert_eq!(c.bogo_ops_after_calls(83), ops.floor() as u64);
}

#[test]
fn slice_ends_by_stress_ngs_rule_and_ops_are_checked_after_the_sleep() {
    // --cpu-ops 1 is reached after 3 calls (0.739 + 0.159 + 0.226). At -l 100 the check
    // follows every call; in the load-slice loop only the slice's end (then the sleep).
    let calls = |cmd: &str| run(cmd, 1, false, 10_000 * MS).0.ops_total();
    assert_eq!(calls("stress-ng --cpu 1 --taskset 0 --cpu-ops 1"), 3);
    // -5: five calls, then the sleep, then the check.
    assert_eq!(
        calls("stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice -5 --cpu-ops 1"),
        5
    );
    // 1 ms of CPU time: ackermann 617 µs, + apery = 898 µs, + bitops = 1118 µs ≥ 1 ms.
    assert_eq!(
        calls("stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice 1 --cpu-ops 1"),
        3
    );
    // 2 ms: + callfunc 1119 µs, + cdouble 1495 µs, + cfloat 2233 µs ≥ 2 ms: six calls.
    assert_eq!(
        calls("stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice 2 --cpu-ops 1"),
        6
    );
}

#[test]
fn busy_and_idle_follow_the_delay_formula() {
    // matrixprod, one call per slice (c = 10 848 322 ns), -l 25: delay = c·75/25 = 3c
    // = 32 544 966 ns, select() sleeps 32 544 µs + slack max(32.5 µs, 50 µs) = 50 µs.
    // Slice 2's delay is 3c − bias (bias = that sleep's overshoot), so the two sleeps add to
    // 6c plus the second one's overshoot. --cpu-ops 6 needs 2 calls (5.63 < 6 ≤ 11.25).
    let (e, c) = run(
        "stress-ng --cpu 1 --taskset 0 -l 25 --cpu-method matrixprod --cpu-load-slice -1 \
         --cpu-ops 6",
        1,
        false,
        10_000 * MS,
    );
    assert!(e.all_exited());
    let call = 10_848_322u64;
    assert_eq!(c.method_call_ns(), call);
    assert_eq!(e.ops_total(), 2);
    let t = &e.tasks()[0];
    // One sleep per slice, plus the exit's switch (TASK_DEAD counts as voluntary).
    assert_eq!(t.stats.counters.nr_voluntary_switches, 3);
    let cpu = t.stats.counters.sum_exec_runtime_ns;
    assert!(cpu >= 2 * call && cpu < 2 * call + 50_000, "{cpu}");
    let wall_ns =
        (stressng_result(&c, &RunView::whole(&e)).instances[0].wall_s * 1e9).round() as u64;
    let ideal = 2 * call + 6 * call;
    // One overshoot (the first is paid back through `bias`): 50 µs slack, µs truncation, and
    // the wakeup path including the exit from the idle state the governor chose for a 32 ms
    // idle on nehalem-2s (~0.2 ms). Without `bias` both overshoots would count.
    assert!(
        wall_ns >= ideal + 50_000 && wall_ns < ideal + 350_000,
        "wall {wall_ns} vs 8c = {ideal}"
    );
}

#[test]
fn random_slices_are_drawn_per_seed() {
    let cmd = "stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice 0 -t 3";
    let busy = |seed| {
        let (e, _) = run(cmd, seed, true, 3_000 * MS);
        let t = &e.tasks()[0];
        (
            t.stats.counters.nr_voluntary_switches,
            t.stats.counters.sum_exec_runtime_ns,
        )
    };
    let a = busy(1);
    assert_eq!(a, busy(1), "same seed, same run");
    assert_ne!(a, busy(2), "another seed draws other slices");
    // Mean slice 0.25 s at 50 %: about 6 sleeps in 3 s (each slice ≥ one call).
    assert!((2..=14).contains(&a.0), "{a:?}");
}

#[test]
fn switch_rate_follows_load_and_slice() {
    // Per instance, one sleep per slice: a 1 ms slice ends with the call that crosses 1 ms,
    // often a long one (up to 10.8 ms), so slices average ~3 ms at -l 50 (~6 ms cycles), at
    // -l 25 twice as long; -10 calls (~11.4 ms busy) a few times less often.
    let rate = |cmd: &str| {
        let (e, _) = run(cmd, 1, true, 2_000 * MS);
        e.tasks()[0].stats.counters.nr_voluntary_switches as f64 / 2.0
    };
    let l50 = rate("stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice 1 -t 2");
    let l25 = rate("stress-ng --cpu 1 --taskset 0 -l 25 --cpu-load-slice 1 -t 2");
    let c10 = rate("stress-ng --cpu 1 --taskset 0 -l 50 --cpu-load-slice -10 -t 2");
    assert!((l50 / l25 - 2.0).abs() < 0.1, "{l50} {l25}");
    assert!(l50 > 100.0 && l50 < 250.0, "{l50}");
    assert!(c10 > 25.0 && c10 < 60.0, "{c10}");
}
