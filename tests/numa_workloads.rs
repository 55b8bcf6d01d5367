//! The NUMA-balancing workloads (issue 13): `web`, `jbb`, `stream`, `linpack` — their keys
//! (defaults, errors, limits), the structure of their plans (processes, threads, TaskMemory),
//! and their results on tiny configurations whose answers are known by hand.

use schedlab::config::Scenario;
use schedlab::experiment::run_once;
use schedlab::rng::{RngStream, StreamKind};
use schedlab::task::{Op, TaskPolicy};
use schedlab::topology::{Machine, presets};
use schedlab::workload::generate::{self, linpack as glp, stream as gst, web as gweb};
use schedlab::workload::stream::KERNELS;
use schedlab::workload::web::{Dist, WebLoad, WorkerMode};
use schedlab::workload::{WorkloadSpec, linpack::FLOPS_PER_OP};
use serde_json::Value;

fn table(s: &str) -> toml::Table {
    s.parse().unwrap()
}

fn spec(kind: &str, keys: &str, nr_cpus: usize) -> WorkloadSpec {
    WorkloadSpec::from_toml(kind, &table(keys), "s.toml", nr_cpus).expect("keys parse")
}

fn spec_err(kind: &str, keys: &str) -> schedlab::error::InputError {
    WorkloadSpec::from_toml(kind, &table(keys), "s.toml", 8).unwrap_err()
}

fn machine(name: &str) -> Machine {
    presets::by_name(name).expect("preset exists")
}

/// Run a scenario text once (seed 1) and return its `workload` JSON.
fn run_workload(text: &str) -> Value {
    let scn = Scenario::parse(text, "t.toml").expect("scenario parses");
    let out = run_once(&scn, 1).expect("runs");
    assert!(out.invariant_violations.is_empty());
    out.json()["workload"].clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

// ----- keys -----------------------------------------------------------------------------

#[test]
fn web_keys_defaults_and_load_forms() {
    let WorkloadSpec::Web(c) = spec("web", "", 8) else {
        panic!()
    };
    assert_eq!(
        (c.workers, c.mode, c.demand_ns),
        (8, WorkerMode::Processes, 1_000_000)
    );
    // Default open loop: 90 % of the workers' nominal capacity (8 × 1000 requests/s).
    assert_eq!(
        c.load,
        WebLoad::Open {
            rate_per_s: 7200.0,
            arrivals: Dist::Exponential
        }
    );
    let WorkloadSpec::Web(c) = spec(
        "web",
        "workers = 4\nmode = 'threads'\nclients = 16\nthink_us = 500\nthink = 'fixed'",
        8,
    ) else {
        panic!()
    };
    assert_eq!(
        c.load,
        WebLoad::Closed {
            clients: 16,
            think_ns: 500_000,
            think: Dist::Fixed
        }
    );
    assert_eq!(c.nr_tasks(), 4 + 16);
}

#[test]
fn web_key_errors_name_the_key_and_what_is_accepted() {
    let e = spec_err("web", "worker = 4");
    assert_eq!(e.key.as_deref(), Some("workload.worker"));
    assert!(e.message.contains("did you mean"), "{e}");
    assert!(e.message.contains("workers"), "{e}");
    let e = spec_err("web", "workers = 0");
    assert_eq!(e.key.as_deref(), Some("workload.workers"));
    assert_eq!(
        e.message,
        "got integer 0; accepted: an integer from 1 to 100000"
    );
    // Closed-loop keys select the closed loop; an open-loop key then is the error.
    let e = spec_err("web", "rate_per_s = 100.0\nclients = 4");
    assert_eq!(e.key.as_deref(), Some("workload.rate_per_s"));
    let e = spec_err("web", "load = 'open'\nclients = 4");
    assert_eq!(e.key.as_deref(), Some("workload.clients"));
    let e = spec_err("web", "load = 'closed'\nrate_per_s = 100.0");
    assert_eq!(e.key.as_deref(), Some("workload.rate_per_s"));
    assert!(e.message.contains("load = \"open\""), "{e}");
    let e = spec_err("web", "rate_per_s = -1.0");
    assert!(e.message.contains("accepted: requests per second"), "{e}");
    let e = spec_err("web", "mode = 'fork'");
    assert!(e.message.contains("processes, threads"), "{e}");
    let e = spec_err("web", "shared_access_permille = 1001");
    assert_eq!(e.key.as_deref(), Some("workload.shared_access_permille"));
    let e = spec_err("web", "duration_s = 2\nwarmup_ms = 2000");
    assert_eq!(e.key.as_deref(), Some("workload.warmup_ms"));
    let e = spec_err("stram", "");
    assert!(e.message.contains("did you mean stream"), "{e}");
}

#[test]
fn jbb_stream_linpack_keys() {
    let WorkloadSpec::Jbb(c) = spec("jbb", "instances = 4", 144) else {
        panic!()
    };
    assert_eq!((c.instances, c.warehouses, c.gc_threads), (4, 36, 2));
    assert_eq!(c.memory.shared_mib, 4096);
    let e = spec_err("jbb", "heap_mib = 2000000");
    assert_eq!(e.key.as_deref(), Some("workload.heap_mib"));
    let e = spec_err("jbb", "instances = 0");
    assert_eq!(e.key.as_deref(), Some("workload.instances"));

    let WorkloadSpec::Stream(c) = spec("stream", "threads = 3\narray_mib = 1", 8) else {
        panic!()
    };
    // 131072 elements over 3 threads: 43691, 43691, 43690.
    assert_eq!((c.chunk(0), c.chunk(1), c.chunk(2)), (43691, 43691, 43690));
    assert_eq!(c.kernel_bytes(3), 24 * 131_072);
    let e = spec_err("stream", "per_core_mb_s = 0");
    assert_eq!(e.key.as_deref(), Some("workload.per_core_mb_s"));

    let WorkloadSpec::Linpack(c) = spec("linpack", "n = 1000\nnb = 100", 8) else {
        panic!()
    };
    assert_eq!(c.steps(), 10);
    // The matrix: 8 · 1000² bytes = 7.63 MiB → 8 MiB shared.
    assert_eq!(c.memory.shared_mib, 8);
    let total: f64 = (0..c.steps()).map(|k| c.step_flops(k)).sum();
    assert!((total - 2.0 / 3.0 * 1e9).abs() < 1.0, "{total}");
    let e = spec_err("linpack", "n = 100\nnb = 101");
    assert_eq!(e.key.as_deref(), Some("workload.nb"));
}

// ----- plans ----------------------------------------------------------------------------

#[test]
fn web_plan_processes_threads_and_memory() {
    let m = machine("haswell-2s");
    let s = spec("web", "workers = 6\nprivate_mib = 8\nshared_mib = 64", 72);
    let WorkloadSpec::Web(c) = &s else { panic!() };
    let plan = generate::plan(&s, &m, 1).unwrap();
    // 6 workers + one irq thread per node.
    assert_eq!(plan.tasks.len(), 6 + 2);
    for (i, t) in plan.tasks[..6].iter().enumerate() {
        assert_eq!(t.memory.process, Some(i as u32), "a process per worker");
        assert_eq!((t.memory.private_mib, t.memory.shared_mib), (8, 64));
        assert_eq!(
            t.memory.shm_key,
            Some(0),
            "one shared zone mapped by every worker"
        );
        assert_eq!(t.mem_intensity_permille, 200);
        assert_eq!(t.memory, gweb::worker_memory(c, i as u32));
    }
    for (j, t) in plan.tasks[6..].iter().enumerate() {
        assert_eq!(t.policy, TaskPolicy::Fifo { rt_priority: 50 });
        assert_eq!(t.cpus_allowed.as_ref(), Some(m.node_mask(j)));
        assert_eq!(t.memory.process, None);
    }
    let s = spec("web", "workers = 6\nmode = 'threads'\nshared_mib = 64", 72);
    let plan = generate::plan(&s, &m, 1).unwrap();
    for t in &plan.tasks[..6] {
        assert_eq!(t.memory.process, Some(0), "threads share one mm");
        assert_eq!(t.memory.shm_key, None, "the process's own shared region");
        assert_eq!(
            (t.memory.shared_mib, t.memory.shared_access_permille),
            (64, 300)
        );
    }
}

#[test]
fn arrival_gaps_keep_the_configured_rate_exactly() {
    let mut rng = RngStream::new(7, StreamKind::Workload, 0);
    let gaps = gweb::gap_cycle(4096, 1234.5, Dist::Exponential, &mut rng);
    assert_eq!(
        gaps.iter().sum::<u64>(),
        (4096.0f64 * 1234.5).round() as u64
    );
    // Exponential: the coefficient of variation is about 1.
    let mean = 1234.5;
    let var = gaps.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / 4096.0;
    let cv = var.sqrt() / mean;
    assert!((0.9..1.1).contains(&cv), "cv {cv}");
    let fixed = gweb::gap_cycle(10, 1000.4, Dist::Fixed, &mut rng);
    assert_eq!(fixed.iter().sum::<u64>(), 10_004);
    assert!(fixed.iter().all(|&g| g == 1000 || g == 1001));
}

#[test]
fn jbb_plan_instances_are_processes_with_gc_threads() {
    let m = machine("haswell-4s");
    let s = spec("jbb", "instances = 4\nwarehouses = 5\ngc_threads = 3", 144);
    let plan = generate::plan(&s, &m, 1).unwrap();
    assert_eq!(plan.tasks.len(), 4 * (5 + 3));
    for i in 0..4u32 {
        let inst = &plan.tasks[(i as usize) * 8..(i as usize + 1) * 8];
        assert!(inst.iter().all(|t| t.memory.process == Some(i)));
        assert!(inst.iter().all(|t| t.memory.shared_mib == 4096));
        assert_eq!(inst.iter().filter(|t| t.comm == "java").count(), 5);
        let gc: Vec<_> = inst.iter().filter(|t| t.comm == "GC Thread").collect();
        assert_eq!(gc.len(), 3);
        assert!(gc.iter().all(|t| t.memory.shared_access_permille == 1000));
        assert_eq!(plan.task_groups[(i as usize) * 8], Some(i));
    }
}

#[test]
fn stream_and_linpack_plans() {
    let m = machine("haswell-4s");
    let s = spec("stream", "threads = 16\narray_mib = 64", 144);
    let WorkloadSpec::Stream(c) = &s else {
        panic!()
    };
    let plan = generate::plan(&s, &m, 1).unwrap();
    assert_eq!(plan.tasks.len(), 16);
    // Each thread's chunk of three 64 MiB arrays: 12 MiB.
    assert!(plan.tasks.iter().all(|t| t.memory.private_mib == 12));
    assert!(plan.tasks.iter().all(|t| t.memory.process == Some(0)));
    // 10 000 MB/s = 9537 MiB/s.
    assert_eq!(plan.tasks[0].memory.bandwidth_mib_s, 9537);
    // Copy chunk: 16 B × 524288 elements at 10 000 MB/s = 838.86 µs.
    assert_eq!(gst::chunk_work_ns(c, 0, 0), 838_860);

    let s = spec("linpack", "threads = 4\nn = 2000\nnb = 200", 144);
    let WorkloadSpec::Linpack(c) = &s else {
        panic!()
    };
    let plan = generate::plan(&s, &m, 1).unwrap();
    assert_eq!(plan.tasks.len(), 4);
    let barriers = plan.programs[0]
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Barrier { .. }))
        .count();
    assert_eq!(barriers, 10);
    // One solve counts exactly 2/3 n³ flops.
    let ops: u64 = glp::step_ops(c).iter().sum();
    assert_eq!(ops, (2.0 / 3.0 * 8e9 / FLOPS_PER_OP as f64).round() as u64);
}

// ----- results --------------------------------------------------------------------------

/// A scenario on hybrid-10 (v6.12) running workload `kind` with `keys` on CPUs `cpus`.
fn on_cpus(cpus: &str, kind: &str, keys: &str, duration_s: u32) -> String {
    format!(
        "[machine]\npreset = \"hybrid-10\"\n[kernel]\nprofile = \"v6.12\"\n[workload]\nkind = \"{kind}\"\ncpus = \"{cpus}\"\nduration_s = {duration_s}\n{keys}\n"
    )
}

/// All tasks on CPU 6 of hybrid-10 (a single-thread core at reference speed).
fn one_cpu(kind: &str, keys: &str, duration_s: u32) -> String {
    on_cpus("6", kind, keys, duration_s)
}

#[test]
fn web_one_worker_fixed_demand_fixed_arrivals() {
    // Arrivals every 2 ms, 1 ms of work each, one worker: no queueing, so every response is
    // the receive path (3 µs) + the request's 1 ms + switch costs. No background kworker
    // shares the CPU (one would queue a request behind its burst now and then).
    let scn = one_cpu(
        "web",
        "workers = 1\ndemand_us = 1000\ndemand = 'fixed'\nrate_per_s = 500.0\narrivals = 'fixed'\nirq_threads = 1\nmem_intensity_permille = 0",
        2,
    );
    let w = run_workload(&format!("{scn}[run]\nnoise_kworker_interval_us = 0\n"));
    let rps = f(&w, "requests_per_s");
    assert!((499.0..=500.5).contains(&rps), "{w}");
    let avg = f(&w, "response_ms_avg");
    assert!((1.003..1.02).contains(&avg), "{w}");
    assert!(f(&w, "response_ms_max") < 1.03, "{w}");
}

#[test]
fn web_closed_loop_never_exceeds_its_clients() {
    // 3 clients with no think time, one worker, 1 ms fixed: three requests are always
    // outstanding, so each waits for the two ahead of it: 3 ms (plus the receive paths).
    // More than 3 outstanding would make some response longer than ~3 ms.
    let w = run_workload(&one_cpu(
        "web",
        "workers = 1\ndemand_us = 1000\ndemand = 'fixed'\nclients = 3\nthink_us = 0\nmem_intensity_permille = 0\nwarmup_ms = 100",
        2,
    ));
    let p50 = f(&w, "response_ms_p50");
    assert!((2.99..3.05).contains(&p50), "{w}");
    assert!(f(&w, "response_ms_max") < 3.2, "{w}");
    let rps = f(&w, "requests_per_s");
    assert!((985.0..=1000.0).contains(&rps), "{w}");
}

#[test]
fn web_poisson_arrival_rate_over_a_long_run() {
    // Plenty of capacity (4 workers on 4 single-thread cores, 100 µs each, 2000/s): every
    // arrival is served, so the served rate is the arrival rate.
    let keys = "workers = 4\ndemand_us = 100\nrate_per_s = 2000.0";
    let w = run_workload(&on_cpus("6-9", "web", keys, 10));
    let rps = f(&w, "requests_per_s");
    assert!((1985.0..=2015.0).contains(&rps), "{w}");
}

#[test]
fn stream_bandwidth_is_bytes_over_time() {
    // One thread alone on a reference-speed CPU: every kernel streams at per_core_mb_s
    // (within the engine's run-to-run work noise).
    let text = one_cpu(
        "stream",
        "threads = 1\narray_mib = 8\nper_core_mb_s = 8000",
        1,
    );
    let w = run_workload(&text);
    let per = &w["kernel_bandwidth_mb_s"];
    for (k, _) in KERNELS {
        let v = per[k].as_f64().unwrap();
        assert!((7900.0..=8100.0).contains(&v), "{k}: {w}");
    }
    // Total = bytes of the completed passes / the measured interval.
    let passes = w["passes"].as_u64().unwrap();
    let elements = 8u64 << 17;
    let bytes = passes * (16 + 16 + 24 + 24) * elements;
    let expect = bytes as f64 / f(&w, "elapsed_s") / 1e6;
    let got = f(&w, "bandwidth_mb_s");
    // Up to one pass in progress at the end (and whole kernels of the last pass counted).
    assert!(
        got <= expect * 1.0 + 8000.0 && got >= expect - 1.0,
        "{got} vs {expect}"
    );
}

#[test]
fn linpack_one_thread_runs_at_its_core_rate() {
    let w = run_workload(&one_cpu(
        "linpack",
        "threads = 1\nn = 2000\nnb = 100\ngflops_per_core = 10\nmem_intensity_permille = 0",
        2,
    ));
    // 5.33 GFLOP per solve at 10 GFLOP/s: 3.75 solves in 2 s; counted per step.
    let g = f(&w, "gflops");
    assert!((9.8..=10.01).contains(&g), "{w}");
}

#[test]
fn jbb_transactions_and_gc_pauses() {
    // One warehouse, 1 ms transactions, one GC thread every 100 ms doing 10 ms: in 1 s,
    // 9 collections (the 10th is due at the end) and ≈ (1000 − 9 × 10) transactions.
    let w = run_workload(&one_cpu(
        "jbb",
        "warehouses = 1\ntxn_us = 1000\ngc_threads = 1\ngc_period_ms = 100\ngc_work_ms = 10\nmem_intensity_permille = 0",
        1,
    ));
    let pauses = w["gc_pauses"].as_u64().unwrap();
    assert!((9..=10).contains(&pauses), "{w}");
    // A pause: the GC thread waiting for the CPU the warehouse holds (both share CPU 6),
    // the warehouse finishing its transaction, then 10 ms of collection.
    let p = f(&w, "gc_pause_ms_avg");
    assert!((10.0..20.0).contains(&p), "{w}");
    let bops = f(&w, "bops");
    assert!((820.0..=915.0).contains(&bops), "{w}");
}
