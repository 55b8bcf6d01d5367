//! `[machine.cost]` tables with chosen costs zeroed, for tests that count one kind of work:
//! with every other cost at zero, a CPU's `kernel_work_ns` (or a task's CPU time) holds only
//! the work under test.
//!
//! Each test file uses part of this module.
#![allow(dead_code)]

/// The cost keys that charge kernel time on a CPU (switches, IPIs, locks, scans, balancing,
/// enqueue/dequeue, hrtimers, cache-line transfers).
pub const KERNEL_COST_KEYS: [&str; 24] = [
    "context_switch_ns",
    "ipi_send_ns",
    "ipi_latency_ns",
    "ipi_latency_per_distance_ns",
    "ipi_handle_ns",
    "remote_lock_llc_ns",
    "remote_lock_cross_llc_ns",
    "remote_lock_cross_node_ns",
    "rq_lock_hold_ns",
    "idle_scan_step_ns",
    "balance_pass_ns",
    "balance_per_cpu_ns",
    "balance_per_task_ns",
    "dl_server_start_ns",
    "dl_server_stop_ns",
    "enqueue_task_ns",
    "dequeue_task_ns",
    "put_prev_entity_ns",
    "set_next_entity_ns",
    "hrtimer_start_ns",
    "hrtimer_expire_ns",
    "cacheline_llc_ns",
    "cacheline_cross_llc_ns",
    "cacheline_cross_node_ns",
];

/// The cost keys that slow a task after a migration (cache refill per KiB of working set).
pub const REFILL_COST_KEYS: [&str; 4] = [
    "refill_ns_per_kib_cluster",
    "refill_ns_per_kib_llc",
    "refill_ns_per_kib_cross_llc",
    "refill_ns_per_kib_cross_node",
];

/// `key = 0` lines for every key of `zeroed` that `keep` (lines of `key = value`) does not
/// set, followed by `keep`: the body of a `[machine.cost]` table.
pub fn cost_lines_zeroed(zeroed: &[&str], keep: &str) -> String {
    let mut s = String::new();
    for k in zeroed {
        let kept = keep
            .lines()
            .any(|l| l.trim_start().split([' ', '=']).next() == Some(k));
        if !kept {
            s += &format!("{k} = 0\n");
        }
    }
    s + keep + "\n"
}
