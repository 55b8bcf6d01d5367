//! Per-node memory bandwidth that saturates, and a running task's speed as a function of
//! where its pages are, how far away, and how loaded those nodes are.
//!
//! The model extends `cost::mem_time_scale_ppm` (latency ∝ SLIT distance) with queueing at
//! the memory controllers:
//!
//! ```text
//! time_scale(t) = (1 − m) + m · Σ_n share_n · (distance(cpu_node, n) / 10) · c_n
//! speed(t)      = 1 / time_scale(t)
//! demand_n      = Σ_t bw_t · share_{t,n} · speed(t)  (+ background traffic on n)
//! c_n           = 1 if demand_n ≤ B_n, else the smallest c_n ≥ 1 with demand_n(c) = B_n
//! ```
//!
//! `m` is the task's memory-stall share of run time with all pages local and no
//! congestion, `bw_t` the bytes per second it moves at that speed, `share_{t,n}` its page
//! share on node n, `B_n` the node's memory bandwidth, `c_n` ≥ 1 the node's congestion
//! (latency stretch). A saturated node serves exactly `B_n`: its users slow down until their
//! combined demand fits (a fluid queue — processor sharing of the controller). Because a task
//! slowed by one node also asks less of the others, the per-node congestions are coupled;
//! [`node_congestion`] solves them together (Gauss–Seidel sweeps, each node by bisection).
//!
//! Left out: interconnect (QPI/UPI) bandwidth limits, caches hiding remote latency, read vs
//! write asymmetry, and prefetching; congestion is capped at [`CONGESTION_MAX`] when
//! background traffic alone exceeds a node's bandwidth.

/// Upper bound on a node's congestion factor.
pub const CONGESTION_MAX: f64 = 1000.0;

/// What the bandwidth model needs to know about one running task.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskMemDemand {
    /// Node of the CPU the task runs on.
    pub cpu_node: usize,
    /// `m`: memory-stall share of run time with local, uncongested memory (0..=1).
    pub stall_share: f64,
    /// Bytes it moves per second at that speed (MiB/s).
    pub bw_mb_per_s: f64,
    /// Its pages (any unit) per node; all zero means no memory (speed 1, no demand).
    pub pages_per_node: Vec<u64>,
}

impl TaskMemDemand {
    fn shares(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let total: u64 = self.pages_per_node.iter().sum();
        self.pages_per_node
            .iter()
            .enumerate()
            .filter(move |_| total > 0)
            .map(move |(n, &p)| (n, p as f64 / total as f64))
    }
}

/// `time_scale(t)` for given node congestions (1.0 = all local and uncongested).
pub fn time_scale(t: &TaskMemDemand, distance: &[Vec<u32>], congestion: &[f64]) -> f64 {
    let m = t.stall_share.clamp(0.0, 1.0);
    let stretch: f64 = t
        .shares()
        .map(|(n, s)| s * f64::from(distance[t.cpu_node][n]) / 10.0 * congestion[n])
        .sum();
    if t.pages_per_node.iter().all(|&p| p == 0) {
        return 1.0;
    }
    (1.0 - m) + m * stretch
}

/// Memory demand (MiB/s) on each node for given congestions.
pub fn node_demand(
    tasks: &[TaskMemDemand],
    distance: &[Vec<u32>],
    congestion: &[f64],
    background_mb_per_s: &[f64],
) -> Vec<f64> {
    let mut d = background_mb_per_s.to_vec();
    for t in tasks {
        let speed = 1.0 / time_scale(t, distance, congestion);
        for (n, s) in t.shares() {
            d[n] += t.bw_mb_per_s * s * speed;
        }
    }
    d
}

/// Demand (MiB/s) on node `n` alone for given congestions (no allocation).
fn node_demand_one(
    tasks: &[TaskMemDemand],
    distance: &[Vec<u32>],
    congestion: &[f64],
    background_mb_per_s: &[f64],
    n: usize,
) -> f64 {
    let mut d = background_mb_per_s[n];
    for t in tasks {
        let total: u64 = t.pages_per_node.iter().sum();
        let p = t.pages_per_node.get(n).copied().unwrap_or(0);
        if total == 0 || p == 0 || t.bw_mb_per_s <= 0.0 {
            continue;
        }
        let speed = 1.0 / time_scale(t, distance, congestion);
        d += t.bw_mb_per_s * (p as f64 / total as f64) * speed;
    }
    d
}

/// The congestion factor `c_n` of every node (see the module doc). `node_bw_mb_per_s[n]` is
/// node n's memory bandwidth; `background_mb_per_s[n]` fixed traffic on it (page migrations).
pub fn node_congestion(
    tasks: &[TaskMemDemand],
    distance: &[Vec<u32>],
    node_bw_mb_per_s: &[f64],
    background_mb_per_s: &[f64],
) -> Vec<f64> {
    let mut c = vec![1.0f64; node_bw_mb_per_s.len()];
    node_congestion_into(
        tasks,
        distance,
        node_bw_mb_per_s,
        background_mb_per_s,
        &mut c,
    );
    c
}

/// [`node_congestion`] into a caller's buffer (`c.len()` = nodes), without allocating: the
/// engine re-solves it in its event loop when the set of running bandwidth-bound tasks or
/// their page placement changes.
pub fn node_congestion_into(
    tasks: &[TaskMemDemand],
    distance: &[Vec<u32>],
    node_bw_mb_per_s: &[f64],
    background_mb_per_s: &[f64],
    c: &mut [f64],
) {
    let nr = node_bw_mb_per_s.len();
    c.iter_mut().for_each(|x| *x = 1.0);
    for _sweep in 0..100 {
        let mut max_change = 0.0f64;
        for n in 0..nr {
            let bw = node_bw_mb_per_s[n];
            let old = c[n];
            let demand_at = |cn: f64, c: &mut [f64]| {
                c[n] = cn;
                node_demand_one(tasks, distance, c, background_mb_per_s, n)
            };
            let new = if demand_at(1.0, c) <= bw {
                1.0
            } else {
                let (mut lo, mut hi) = (1.0f64, 2.0f64);
                while hi < CONGESTION_MAX && demand_at(hi, c) > bw {
                    lo = hi;
                    hi = (hi * 2.0).min(CONGESTION_MAX);
                }
                if demand_at(hi, c) > bw {
                    CONGESTION_MAX
                } else {
                    for _ in 0..60 {
                        let mid = 0.5 * (lo + hi);
                        if demand_at(mid, c) > bw {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    hi
                }
            };
            c[n] = new;
            max_change = max_change.max((new - old).abs());
        }
        if max_change < 1e-12 {
            break;
        }
    }
}

/// Each task's speed (1.0 = all pages local, no congestion) under the solved congestion.
pub fn task_speeds(
    tasks: &[TaskMemDemand],
    distance: &[Vec<u32>],
    node_bw_mb_per_s: &[f64],
    background_mb_per_s: &[f64],
) -> Vec<f64> {
    let c = node_congestion(tasks, distance, node_bw_mb_per_s, background_mb_per_s);
    tasks
        .iter()
        .map(|t| 1.0 / time_scale(t, distance, &c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes() -> Vec<Vec<u32>> {
        vec![vec![10, 21], vec![21, 10]]
    }

    fn task(cpu_node: usize, m: f64, bw: f64, pages: [u64; 2]) -> TaskMemDemand {
        TaskMemDemand {
            cpu_node,
            stall_share: m,
            bw_mb_per_s: bw,
            pages_per_node: pages.to_vec(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn remote_share_and_distance_without_congestion() {
        let d = two_nodes();
        // m = 0.5, half the pages remote at distance 21:
        // 0.5 + 0.5 · (0.5 · 1.0 + 0.5 · 2.1) = 0.5 + 0.775 = 1.275.
        let t = task(0, 0.5, 1000.0, [1, 1]);
        assert!(close(time_scale(&t, &d, &[1.0, 1.0]), 1.275));
        let s = task_speeds(&[t], &d, &[1e9, 1e9], &[0.0, 0.0]);
        assert!(close(s[0], 1.0 / 1.275));
        // No memory: full speed.
        let none = task(0, 0.9, 1000.0, [0, 0]);
        assert!(close(time_scale(&none, &d, &[5.0, 5.0]), 1.0));
    }

    #[test]
    fn saturated_node_serves_exactly_its_bandwidth() {
        let d = two_nodes();
        // Two fully memory-bound (m = 1) local tasks each wanting 10 GB/s on a 10 GB/s node:
        // each runs at speed 1/c, demand 20/c = 10 -> c = 2, speed 0.5.
        let ts = [
            task(0, 1.0, 10_000.0, [1, 0]),
            task(0, 1.0, 10_000.0, [1, 0]),
        ];
        let c = node_congestion(&ts, &d, &[10_000.0, 10_000.0], &[0.0, 0.0]);
        assert!(close(c[0], 2.0), "c = {c:?}");
        assert!(close(c[1], 1.0), "the unused node is not congested");
        let s = task_speeds(&ts, &d, &[10_000.0, 10_000.0], &[0.0, 0.0]);
        assert!(close(s[0], 0.5) && close(s[1], 0.5));
        // m = 0.5: speed 1/(0.5 + 0.5c), demand 20/(0.5 + 0.5c) = 10 -> c = 3, speed 0.5.
        let ts = [
            task(0, 0.5, 10_000.0, [1, 0]),
            task(0, 0.5, 10_000.0, [1, 0]),
        ];
        let c = node_congestion(&ts, &d, &[10_000.0, 10_000.0], &[0.0, 0.0]);
        assert!(close(c[0], 3.0), "c = {c:?}");
        let dem = node_demand(&ts, &d, &c, &[0.0, 0.0]);
        assert!(close(dem[0], 10_000.0));
    }

    #[test]
    fn below_saturation_nothing_queues_and_background_traffic_counts() {
        let d = two_nodes();
        let ts = [task(0, 1.0, 4_000.0, [1, 0])];
        let c = node_congestion(&ts, &d, &[10_000.0, 10_000.0], &[0.0, 0.0]);
        assert_eq!(c, vec![1.0, 1.0]);
        // 8 GB/s of migration traffic on node 0 leaves 2 GB/s: 2 = 4/c -> c = 2.
        let c = node_congestion(&ts, &d, &[10_000.0, 10_000.0], &[8_000.0, 0.0]);
        assert!(close(c[0], 2.0), "c = {c:?}");
    }

    #[test]
    fn spreading_memory_over_both_nodes_relieves_a_saturated_node() {
        let d = two_nodes();
        let bw = [10_000.0, 10_000.0];
        // Four STREAM-like threads (m = 1, 5 GB/s each), two per node, all pages on node 0:
        // node 0 demand at c: 2·5/c (local) + 2·5/(2.1c) (remote) = 20 = ... solve
        // (10 + 10/2.1)/c = 10 -> c = 1 + 1/2.1.
        let all_on_0: Vec<TaskMemDemand> =
            (0..4).map(|i| task(i / 2, 1.0, 5_000.0, [1, 0])).collect();
        let c = node_congestion(&all_on_0, &d, &bw, &[0.0, 0.0]);
        assert!(close(c[0], 1.0 + 1.0 / 2.1), "c = {c:?}");
        let slow: f64 = task_speeds(&all_on_0, &d, &bw, &[0.0, 0.0]).iter().sum();
        // Each thread's pages local to its own node: 10 GB/s per node, exactly saturated.
        let local: Vec<TaskMemDemand> = (0..4)
            .map(|i| {
                let mut p = [0, 0];
                p[i / 2] = 1;
                task(i / 2, 1.0, 5_000.0, p)
            })
            .collect();
        let fast: f64 = task_speeds(&local, &d, &bw, &[0.0, 0.0]).iter().sum();
        assert!(close(fast, 4.0));
        assert!(
            slow < 0.5 * fast,
            "placement-driven bandwidth: {slow} vs {fast}"
        );
    }
}
