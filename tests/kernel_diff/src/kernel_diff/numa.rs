//! NUMA balancing (kernel/sched/fair.c of linux 6.12.y) against src/sched/numa/migrate.rs:
//! `numa_classify` and the v5.7+ `load_too_imbalanced`.

use crate::ffi::KdNs;
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::numa::NumaForm;
use schedlab::sched::numa::migrate::{
    NodeType, NumaStats, TaskNumaEnv, load_too_imbalanced, numa_classify,
};
use schedlab::task::TaskId;

const V: &str = "6.12";
/// The same definitions in 6.1 (differences counted where they are documented).
const V61: &str = "6.1";

/// A node: 1–256 CPUs of capacity 1–1024, load, util and runnable around the capacity.
fn node() -> impl Strategy<Value = KdNs> {
    (1u32..=256, 1u64..=1024).prop_flat_map(|(w, cap)| {
        let c = u64::from(w) * cap;
        (0..=c * 3, 0..=c * 2, 0..=c * 2, 0..=w * 3).prop_map(move |(load, util, runnable, nr)| {
            KdNs {
                load,
                runnable,
                util,
                compute_capacity: c,
                nr_running: nr,
                weight: w,
            }
        })
    })
}

fn rust(ns: &KdNs) -> NumaStats {
    NumaStats {
        load: ns.load as i64,
        runnable: ns.runnable as i64,
        util: ns.util as i64,
        compute_capacity: ns.compute_capacity as i64,
        nr_running: i64::from(ns.nr_running),
        weight: i64::from(ns.weight),
        task_capacity: 0,
        has_free_capacity: false,
        node_type: NodeType::HasSpare,
        idle_cpu: None,
    }
}

#[test]
fn numa_classify_matches() {
    // SAFETY (both): reads one struct.
    numa_classify_on(V, |p, ns| unsafe { crate::ffi::kd612_numa_classify(p, ns) });
    numa_classify_on(V61, |p, ns| unsafe {
        crate::ffi::kd61_numa_classify(p, ns)
    });
}

fn numa_classify_on(v: &str, kernel: impl Fn(u32, &KdNs) -> u32) {
    if !available("numa", v) {
        return;
    }
    let s = (node(), prop_oneof![Just(117u32), Just(125), 100u32..=200]);
    assert_no_mismatch("numa::numa_classify", v, cases(5000), s, |(ns, pct)| {
        let k = kernel(*pct, ns);
        let k = [
            NodeType::HasSpare,
            NodeType::FullyBusy,
            NodeType::Overloaded,
        ][k as usize];
        compare(
            "numa_classify",
            &k,
            &numa_classify(i64::from(*pct), &rust(ns)),
        )
    });
}

#[test]
fn load_too_imbalanced_matches() {
    // SAFETY (both): reads two structs.
    load_too_imbalanced_on(V, |s, d, a, b| unsafe {
        crate::ffi::kd612_load_too_imbalanced(s, d, a, b)
    });
    load_too_imbalanced_on(V61, |s, d, a, b| unsafe {
        crate::ffi::kd61_load_too_imbalanced(s, d, a, b)
    });
}

fn load_too_imbalanced_on(v: &str, kernel: impl Fn(i64, i64, &KdNs, &KdNs) -> i32) {
    if !available("numa", v) {
        return;
    }
    // The loads after a move (task load l from src to dst) or a swap.
    let s = (node(), node(), 0u64..=88761 * 4, 0u64..=88761 * 4);
    assert_no_mismatch(
        "numa::load_too_imbalanced (v5.7+)",
        v,
        cases(5000),
        s,
        |(src, dst, l, l2)| {
            let src_load = src.load as i64 - *l as i64 + *l2 as i64;
            let dst_load = dst.load as i64 + *l as i64 - *l2 as i64;
            let k = kernel(src_load, dst_load, src, dst);
            let env = TaskNumaEnv {
                p: TaskId(0),
                src_cpu: 0,
                src_nid: 0,
                dst_cpu: 1,
                dst_nid: 1,
                imb_numa_nr: 0,
                src_stats: rust(src),
                dst_stats: rust(dst),
                imbalance_pct: 117,
                dist: 20,
                best_task: None,
                best_imp: 0,
                best_cpu: None,
                claimed: None,
            };
            compare(
                "load_too_imbalanced",
                &(k != 0),
                &load_too_imbalanced(src_load, dst_load, &env, NumaForm::V5_7),
            )
        },
    );
}

mod scan_period {
    //! `task_scan_min()`, `task_scan_start()`, `task_scan_max()` (with
    //! `task_nr_scan_windows()`) and `update_task_scan_period()` against
    //! src/sched/numa/scan.rs, over the scan sysctls, RSS, the group's sharing and the
    //! task's locality counters.
    use super::{V, V61};
    use crate::ffi::{KdScan, KdScanOut};
    use crate::{assert_no_mismatch, available, cases, compare};
    use proptest::prelude::*;
    use schedlab::sched::numa::scan::{
        ScanParams, task_scan_max, task_scan_min, task_scan_start, update_task_scan_period,
    };
    use schedlab::sched::numa::{NumaGroup, NumaVariant, TaskNuma};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The sysctls (defaults 256 MB, 1000 ms, 60000 ms; any value), RSS pages (0 = none),
    /// the group (refcount, private and shared fault sums) and the task's period.
    fn task() -> impl Strategy<Value = KdScan> {
        (
            prop_oneof![Just(256u32), (0u32..13).prop_map(|s| 1 << s), 1u32..4096],
            prop_oneof![Just(1000u32), 1u32..100, 1u32..100_000],
            prop_oneof![Just(60_000u32), 1u32..1_000_000],
            prop_oneof![Just(0u64), 1u64..1 << 16, 1u64..1 << 28],
            (any::<bool>(), 1u32..64, 0u64..1 << 20, 0u64..1 << 20),
            // Short periods too (reachable with small scan_size_mb and period_min).
            (prop_oneof![1u32..30, 1u32..200_000], 1u32..2_000_000),
        )
            .prop_map(
                |(size, min, max, rss, (g, refc, pr, sh), (period, pmax))| KdScan {
                    rss,
                    priv_faults: pr,
                    shared_faults: sh,
                    locality: [0; 3],
                    scan_size: size,
                    period_min: min,
                    period_max: max,
                    refcount: refc,
                    has_group: u32::from(g),
                    numa_scan_period: period,
                    numa_scan_period_max: pmax,
                },
            )
    }

    /// Fault counts since the last placement: remote, local, failed migrations, and the
    /// shared/private sums. The kernel divides by `local + remote` and `private + shared`:
    /// both are at least 1 (faults were recorded).
    fn faults() -> impl Strategy<Value = ([u64; 3], u64, u64)> {
        let n = || prop_oneof![Just(0u64), 0u64..16, 0u64..1 << 20];
        (n(), n(), prop_oneof![3 => Just(0u64), 1 => n()], n(), n()).prop_map(
            |(remote, local, failed, shared, private)| {
                let remote = if local == 0 { remote.max(1) } else { remote };
                let private = if shared == 0 { private.max(1) } else { private };
                ([remote, local, failed], shared, private)
            },
        )
    }

    fn group(k: &KdScan) -> NumaGroup {
        NumaGroup {
            gid: 1,
            nr_tasks: k.refcount,
            nr_nodes: 1,
            // task_faults_idx(): MEM shared, MEM private, then the CPU and buffer regions.
            faults: vec![
                k.shared_faults as i64,
                k.priv_faults as i64,
                0,
                0,
                0,
                0,
                0,
                0,
            ],
            total_faults: 0,
            max_faults_cpu: 0,
            active_nodes: 1,
            active_mask: 1,
        }
    }

    fn rust(k: &KdScan, f: &([u64; 3], u64, u64), v: (u16, u16)) -> KdScanOut {
        let params = ScanParams {
            scan_delay_ms: 1000,
            scan_period_min_ms: u64::from(k.period_min),
            scan_period_max_ms: u64::from(k.period_max),
            scan_size_mb: u64::from(k.scan_size),
        };
        let v = NumaVariant::for_version(v.0, v.1);
        let ng = group(k);
        let ng = (k.has_group != 0).then_some(&ng);
        let smin = task_scan_min(&params, k.rss);
        let smax = task_scan_max(&params, k.rss, ng, &v);
        let mut t = TaskNuma::new(1, None, 1000);
        t.numa_scan_period_ms = k.numa_scan_period;
        t.numa_scan_period_max_ms = k.numa_scan_period_max;
        t.faults_locality = f.0.map(|x| x as i64);
        let next = update_task_scan_period(&mut t, f.1 as i64, f.2 as i64, smin, smax, 0, &v);
        KdScanOut {
            numa_next_scan: next.unwrap_or(0) / 1_000_000,
            locality: t.faults_locality.map(|x| x as u64),
            scan_min: smin as u32,
            scan_start: task_scan_start(&params, k.rss, ng, &v) as u32,
            scan_max: smax as u32,
            numa_scan_period: t.numa_scan_period_ms,
        }
    }

    #[test]
    fn update_task_scan_period_matches() {
        // SAFETY (both): reads the input, writes `out`.
        scan_period_on(V, (6, 12), |t, sh, pr, out| unsafe {
            crate::ffi::kd612_scan_period(t, sh, pr, out)
        });
        scan_period_on(V61, (6, 1), |t, sh, pr, out| unsafe {
            crate::ffi::kd61_scan_period(t, sh, pr, out)
        });
    }

    /// 6.1 returns from the slow-down path (no faults to go by, or failed migrations)
    /// without clearing `numa_faults_locality`; 6.12, and the mirror in every version,
    /// clear it there too (counted for 6.1: the kernel's answer is the mirror's with the
    /// counters left as they were).
    fn scan_period_on(
        v: &str,
        mv: (u16, u16),
        kernel: impl Fn(&KdScan, u64, u64, &mut KdScanOut) -> i32,
    ) {
        if !available("numa", v) {
            return;
        }
        let kept = AtomicU64::new(0);
        assert_no_mismatch(
            "numa::task_scan_min/start/max+update_task_scan_period",
            v,
            cases(5000),
            (task(), faults()),
            |(k, f)| {
                let mut t = *k;
                t.locality = f.0;
                let mut out = KdScanOut::default();
                kernel(&t, f.1, f.2, &mut out);
                let r = rust(k, f, mv);
                if v == V61 && out != r && out == (KdScanOut { locality: f.0, ..r }) {
                    kept.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
                compare("scan period", &out, &r)
            },
        );
        if v == V61 {
            println!(
                "kernel_diff numa::update_task_scan_period (linux {}): numa_faults_locality kept on \
                 the slow-down path in {} cases (documented)",
                crate::release(v),
                kept.load(Ordering::Relaxed)
            );
        }
    }
}

mod weights {
    //! `task_weight()`, `group_weight()` (with `task_faults()`, `group_faults()`,
    //! `score_nearby_nodes()`) and `init_numa_topology_type()` against
    //! src/sched/numa/weight.rs, on random symmetric distance tables of 1–8 nodes (DIRECT,
    //! GLUELESS_MESH and BACKPLANE), every node and four `dist` limits.
    use super::{V, V61};
    use crate::ffi::{KdNwIn, KdNwOut};
    use crate::{assert_no_mismatch, available, cases, compare};
    use proptest::prelude::*;
    use schedlab::sched::numa::NumaForm;
    use schedlab::sched::numa::weight::{NumaTopologyType, group_weight, task_weight};
    use schedlab::sched::numa::{NumaFaults, NumaGroup, NumaTopo, TaskNuma};

    /// Remote distances from a few levels (so that tables have 2, 3 or more of them).
    fn table() -> impl Strategy<Value = Vec<Vec<i32>>> {
        (1usize..=8, 0usize..4).prop_flat_map(|(n, set)| {
            let levels: &[i32] = [
                &[20][..],
                &[16, 22],
                &[12, 20, 30],
                &[11, 16, 21, 28, 31, 40],
            ][set];
            prop::collection::vec(prop::sample::select(levels.to_vec()), n * n).prop_map(move |v| {
                let mut d = vec![vec![10; n]; n];
                for a in 0..n {
                    for b in a + 1..n {
                        d[a][b] = v[a * n + b];
                        d[b][a] = v[a * n + b];
                    }
                }
                d
            })
        })
    }

    fn faults() -> impl Strategy<Value = [u64; 64]> {
        prop_oneof![
            prop::array::uniform32(0u64..8).prop_map(|a| std::array::from_fn(|i| a[i % 32])),
            prop::collection::vec(0u64..1 << 20, 64).prop_map(|v| std::array::from_fn(|i| v[i])),
        ]
    }

    type Case = (
        Vec<Vec<i32>>,
        [u64; 64],
        [u64; 64],
        u64,
        u64,
        [bool; 2],
        [i32; 4],
    );

    fn case() -> impl Strategy<Value = Case> {
        let lim = prop::sample::select(vec![10, 11, 12, 16, 20, 21, 22, 28, 30, 31, 40, 41]);
        (
            table(),
            faults(),
            faults(),
            prop_oneof![Just(0u64), 1u64..64, 1u64..1 << 24],
            prop_oneof![Just(0u64), 1u64..64, 1u64..1 << 24],
            any::<[bool; 2]>(),
            [lim.clone(), lim.clone(), lim.clone(), lim],
        )
    }

    fn kernel(c: &Case, f: &impl Fn(&KdNwIn, &mut KdNwOut) -> i32) -> KdNwOut {
        let (d, tf, gf, tt, gt, has, lim) = c;
        let mut dist = [[0i32; 8]; 8];
        for (a, row) in d.iter().enumerate() {
            dist[a][..row.len()].copy_from_slice(row);
        }
        let inp = KdNwIn {
            task_faults: *tf,
            group_faults: *gf,
            total_numa_faults: *tt,
            group_total_faults: *gt,
            dist,
            lim: *lim,
            nr_nodes: d.len() as u32,
            has_faults: u32::from(has[0]),
            has_group: u32::from(has[1]),
        };
        let mut out = KdNwOut {
            task_weight: [[0; 4]; 8],
            group_weight: [[0; 4]; 8],
            topology_type: 0,
        };
        f(&inp, &mut out);
        out
    }

    fn rust(c: &Case) -> KdNwOut {
        let (d, tf, gf, tt, gt, has, lim) = c;
        let n = d.len();
        let distance = d
            .iter()
            .map(|r| r.iter().map(|&x| x as u32).collect())
            .collect();
        let topo = NumaTopo::new(distance, (0..n).collect());
        // The kernel's arrays are sized for nr_node_ids: the first 8 × n entries.
        let mut t = TaskNuma::new(1, None, 1000);
        if has[0] {
            let mut f = NumaFaults::new(n);
            f.v = tf[..8 * n].iter().map(|&x| x as i64).collect();
            t.faults = Some(f);
        }
        t.total_numa_faults = *tt as i64;
        let ng = NumaGroup {
            gid: 1,
            nr_tasks: 1,
            nr_nodes: n,
            faults: gf[..8 * n].iter().map(|&x| x as i64).collect(),
            total_faults: *gt as i64,
            max_faults_cpu: 0,
            active_nodes: 1,
            active_mask: 1,
        };
        let ng = has[1].then_some(&ng);
        let mut out = KdNwOut {
            task_weight: [[0; 4]; 8],
            group_weight: [[0; 4]; 8],
            topology_type: match topo.topology_type {
                NumaTopologyType::Direct => 0,
                NumaTopologyType::GluelessMesh => 1,
                NumaTopologyType::Backplane => 2,
            },
        };
        for nid in 0..n {
            for (l, &lim) in lim.iter().enumerate() {
                let f = NumaForm::V5_7;
                out.task_weight[nid][l] = task_weight(&t, &topo, nid, lim as u32, f) as u64;
                out.group_weight[nid][l] = group_weight(ng, &topo, nid, lim as u32, f) as u64;
            }
        }
        out
    }

    #[test]
    fn task_weight_group_weight_match() {
        // SAFETY (both): reads the input, writes `out`.
        weights_on(V, &|i, o| unsafe { crate::ffi::kd612_numa_weights(i, o) });
        weights_on(V61, &|i, o| unsafe { crate::ffi::kd61_numa_weights(i, o) });
    }

    fn weights_on(v: &str, f: &impl Fn(&KdNwIn, &mut KdNwOut) -> i32) {
        if !available("numa", v) {
            return;
        }
        let types = [0, 1, 2].map(|_| std::sync::atomic::AtomicU64::new(0));
        assert_no_mismatch(
            "numa::task_weight+group_weight+score_nearby_nodes+init_numa_topology_type",
            v,
            cases(5000),
            case(),
            |c| {
                let k = kernel(c, f);
                types[k.topology_type as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                compare("node scores", &k, &rust(c))
            },
        );
        println!(
            "kernel_diff numa::task_weight (linux {}): DIRECT/GLUELESS_MESH/BACKPLANE tables {:?}",
            crate::release(v),
            types.map(|t| t.into_inner())
        );
    }
}
