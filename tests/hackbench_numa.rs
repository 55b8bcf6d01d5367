//! hackbench under `numactl --membind` (issue 13): the receivers' memory stalls come from the
//! message traffic (skb and payload lines, the queued messages against the LLC, the local
//! DRAM latency), not from a hand-set intensity, and memory on the other node costs what the
//! SLIT distance says — checked against numbers computed by hand from the formula.

use schedlab::config::Scenario;
use schedlab::experiment::run_once;
use schedlab::workload::generate::hackbench as ghb;
use schedlab::workload::hackbench::{HackbenchConfig, HackbenchIpc, HackbenchVariant};
use serde_json::Value;

/// Run a scenario text once (seed 1) and return its JSON.
fn run(text: &str) -> Value {
    let scn = Scenario::parse(text, "t.toml").expect("scenario parses");
    let out = run_once(&scn, 1).expect("runs");
    assert!(out.invariant_violations.is_empty());
    out.json()
}

fn cfg(groups: u32, fds: u32, ipc: HackbenchIpc) -> HackbenchConfig {
    HackbenchConfig {
        groups,
        fds,
        ipc,
        ..HackbenchConfig::defaults(HackbenchVariant::RtTests)
    }
}

#[test]
fn read_traffic_of_the_bundled_nehalem_run_by_hand() {
    // hackbench -g 4 (F = 20, 100-byte messages over AF_UNIX) bound to node 0 of nehalem-2s:
    // 80 receivers × 277 queued skbs × 768 bytes of truesize = 17 018 880 bytes in flight
    // against 8 CPUs × 1 MiB of L3 = 8 388 608 bytes: miss = 1 − 8388608/17018880.
    let t = ghb::read_traffic(&cfg(4, 20, HackbenchIpc::Socket), 8 << 20, 81);
    assert_eq!(t.in_flight_bytes, 80 * 277 * 768);
    // struct sk_buff (4 lines) + 100 bytes of payload (2) + the skb_shared_info line (1).
    assert_eq!(t.lines, 7);
    let miss = 1.0 - 8_388_608.0 / 17_018_880.0;
    assert!((t.miss_ratio - miss).abs() < 1e-12);
    // 7 × 0.5071 × 81 ns = 287.5 ns of a 1510 ns read (1.5 µs + 10 ns of copy): 190 ‰.
    assert!((t.stall_local_ns - 7.0 * miss * 81.0).abs() < 1e-9);
    assert_eq!(t.stall_permille, 190);
    // One group fits the cache: 20 × 212 736 bytes < 8 MiB, no stall at all.
    let small = ghb::read_traffic(&cfg(1, 20, HackbenchIpc::Socket), 8 << 20, 81);
    assert_eq!(small.miss_ratio, 0.0);
    assert_eq!(small.stall_permille, 0);
    // A pipe holds 16 pages; a 100-byte read touches its 2 payload lines only.
    let pipe = ghb::read_traffic(&cfg(4, 20, HackbenchIpc::Pipe), 1 << 20, 81);
    assert_eq!(pipe.in_flight_bytes, 80 * 16 * 4096);
    assert_eq!(pipe.lines, 2);
}

fn one_cpu_scenario(membind: u32) -> String {
    // One CPU of node 0 (no parallelism: the run time is the sum of the work), a 64 KiB LLC
    // so that two receivers' buffers (2 × 212 736 bytes) mostly miss it, and free context
    // switches: a slower reader lets more messages queue, so fewer switches happen, and that
    // saving (real, but not what is checked here) would otherwise offset part of the cost.
    format!(
        "[machine]\npreset = \"nehalem-2s\"\n[machine.cost]\nllc_kib_per_cpu = 64\n\
         context_switch_ns = 0\n[kernel]\nprofile = \"v6.18\"\n[workload]\n\
         command = \"numactl --physcpubind=0 --membind={membind} hackbench -g 1 -f 2 -l 400\"\n"
    )
}

#[test]
fn opposite_node_membind_costs_what_the_formula_says() {
    let same = run(&one_cpu_scenario(0));
    let opposite = run(&one_cpu_scenario(1));
    let time = |v: &Value| v["workload"]["time_s"].as_f64().expect("time_s");
    // By hand: miss = 1 − 65536/425472, stall = 7 lines × miss × 81 ns = 479.7 ns per read,
    // m = round(479.7 / 1510 · 1000) ‰ = 318 ‰ of each receiver's run time. Memory at SLIT
    // 21 stretches that share by 2.1: a receiver's work (F·loops = 800 reads of 1510 ns and
    // its 40 µs exit) takes m · 1.1 longer, and there are two receivers.
    let miss: f64 = 1.0 - 65_536.0 / 425_472.0;
    let m = (7.0 * miss * 81.0 / 1510.0 * 1000.0).round() / 1000.0;
    assert_eq!((m * 1000.0) as u32, 318);
    let receiver_work_ns = 800.0 * 1510.0 + 40_000.0;
    let expected_s = 2.0 * receiver_work_ns * m * (21.0 / 10.0 - 1.0) * 1e-9;
    let delta_s = time(&opposite) - time(&same);
    assert!(
        (delta_s - expected_s).abs() < 0.02 * expected_s,
        "opposite − same = {delta_s} s, by hand {expected_s} s"
    );
    // Memory on the node the CPU is on costs nothing: the same run as without numactl.
    let plain = run(&one_cpu_scenario(0).replace(" --membind=0", ""));
    assert_eq!(time(&plain), time(&same));
}

#[test]
fn default_policy_and_hand_set_intensity_are_left_alone() {
    let machine = schedlab::topology::presets::by_name("nehalem-2s").expect("preset");
    let c = cfg(4, 20, HackbenchIpc::Socket);
    let mut plan = ghb::plan(&c, &machine, 100).expect("plan");
    let cost = schedlab::cost::CostModel::default_for(&machine);
    assert_eq!(cost.mem_latency_local_ns, 81);
    ghb::apply_message_traffic(&mut plan, &c, &machine, &cost);
    assert!(
        plan.tasks.iter().all(|t| t.mem_intensity_permille == 0),
        "no memory policy: buffers follow their senders, no cost"
    );
    for t in &mut plan.tasks {
        t.mempolicy = schedlab::task::MemPolicy::Bind { nodes: 0b10 };
    }
    plan.tasks[1].mem_intensity_permille = 300; // set by hand (mem_intensity_pct = 30)
    ghb::apply_message_traffic(&mut plan, &c, &machine, &cost);
    // All 16 CPUs' L3 (16 MiB) against 17 MB in flight: miss = 1 − 16777216/17018880.
    let miss: f64 = 1.0 - 16_777_216.0 / 17_018_880.0;
    let m = (7.0 * miss * 81.0 / 1510.0 * 1000.0).round() as u16;
    for (i, t) in plan.tasks.iter().enumerate() {
        let want = match i {
            1 => 300,
            _ if ghb::is_receiver(&c, i) => m,
            _ => 0,
        };
        assert_eq!(t.mem_intensity_permille, want, "task {i} ({})", t.comm);
    }
    assert!(ghb::is_receiver(&c, 20) && !ghb::is_receiver(&c, 21));
    assert!(ghb::is_receiver(&c, 41) && !ghb::is_receiver(&c, 0));
}
