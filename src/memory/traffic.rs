//! Memory traffic of small, repeated operations (a message through a kernel buffer, a
//! request through a queue): how many of the cache lines an operation touches come from
//! DRAM, what they cost with local memory, and what the extra distance to a remote node adds.
//!
//! The model, for one operation that touches `lines` cache lines of data that is part of a
//! working set of `ws` bytes, with `llc` bytes of last-level cache available to it:
//!
//! ```text
//! miss           = 1 − min(1, llc / ws)              (capacity misses, uniform access)
//! stall_local    = lines · miss · latency_local     (ns per operation, local memory)
//! m              = stall_local / work               (memory-stall share of the operation)
//! extra(remote)  = stall_local · (distance / 10 − 1) (ns per operation, memory on a node
//!                                                     at SLIT `distance`)
//! ```
//!
//! `m` is what `cost::mem_time_scale_ppm` stretches by the SLIT distance to the node holding
//! the memory, so `extra` is what the engine adds per operation. `work` is the operation's
//! measured cost with local memory: the stalls are part of it, remote memory stretches only
//! them. The miss ratio is the one the page-group model uses for a task's working set
//! (`engine::numa::stall_share_from_footprint`); the latency is `cost::CostModel::
//! mem_latency_local_ns`.
//!
//! Left out: which lines are hot (an LRU keeps a small, often-touched set cached even when the
//! working set exceeds the cache: callers count only the lines that are part of the large
//! set), hardware prefetch, write-backs of dirty lines, and cache-to-cache transfers between
//! cores (they do not reach memory).

/// Bytes in a cache line.
pub const LINE_BYTES: u64 = 64;

/// Cache lines spanned by `bytes` starting at a line boundary.
pub const fn lines(bytes: u64) -> u64 {
    bytes.div_ceil(LINE_BYTES)
}

/// `1 − min(1, cache / ws)`: the share of uniformly spread accesses to a `ws_bytes` working
/// set that miss a cache of `cache_bytes` (0 when it fits, or when there is no working set).
pub fn capacity_miss_ratio(ws_bytes: u64, cache_bytes: u64) -> f64 {
    if ws_bytes == 0 {
        return 0.0;
    }
    1.0 - (cache_bytes as f64 / ws_bytes as f64).min(1.0)
}

/// Memory-stall time of one operation with local memory (ns): `lines · miss · latency`.
pub fn stall_local_ns(lines: u64, miss_ratio: f64, latency_local_ns: u64) -> f64 {
    lines as f64 * miss_ratio.clamp(0.0, 1.0) * latency_local_ns as f64
}

/// `m` in permille: the stall's share of an operation that costs `work_ns` with local memory
/// (rounded to the nearest permille, at most 1000; 0 for no work).
pub fn stall_share_permille(stall_local_ns: f64, work_ns: u64) -> u16 {
    if work_ns == 0 {
        return 0;
    }
    (stall_local_ns / work_ns as f64 * 1000.0)
        .round()
        .clamp(0.0, 1000.0) as u16
}

/// Extra time of one operation (ns) whose memory is at SLIT `distance` rather than local.
pub fn remote_extra_ns(stall_local_ns: f64, distance: u32) -> f64 {
    stall_local_ns * (f64::from(distance) / 10.0 - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_only_beyond_the_cache() {
        assert_eq!(capacity_miss_ratio(0, 1 << 20), 0.0);
        assert_eq!(capacity_miss_ratio(1 << 20, 8 << 20), 0.0);
        assert_eq!(capacity_miss_ratio(16 << 20, 8 << 20), 0.5);
        assert_eq!(capacity_miss_ratio(8 << 20, 0), 1.0);
        assert_eq!(lines(100), 2);
        assert_eq!(lines(64), 1);
        assert_eq!(lines(0), 0);
    }

    #[test]
    fn stall_share_and_remote_extra_follow_the_formula() {
        // 10 lines, half miss, 80 ns: 400 ns of a 2000 ns operation = 200 permille.
        let s = stall_local_ns(10, 0.5, 80);
        assert_eq!(s, 400.0);
        assert_eq!(stall_share_permille(s, 2000), 200);
        assert_eq!(stall_share_permille(s, 0), 0);
        assert_eq!(stall_share_permille(5000.0, 1000), 1000, "capped");
        // SLIT 21: each miss takes 2.1× as long, 1.1 × 400 ns more.
        assert!((remote_extra_ns(s, 21) - 440.0).abs() < 1e-9);
        assert_eq!(remote_extra_ns(s, 10), 0.0);
    }
}
