//! Page migration on a NUMA hinting fault (`mm/migrate.c`: `migrate_misplaced_folio()`):
//! the historical per-destination-node rate limit and the time and memory traffic a
//! migration costs.
//!
//! **Rate limit** (`numamigrate_update_ratelimit()`, v3.8 to v4.18; removed by Mel Gorman's
//! "mm, sched/numa: Remove rate-limiting of automatic NUMA balancing migration", v4.19/4.20,
//! release not pinned down): at most `ratelimit_pages` (128 MiB) may be migrated *to a node*
//! per `migrate_interval_millisecs` (100 ms) window; the window restarts at the first
//! migration after it expires. The check happens before the pages are added, so a window
//! admits the migration that crosses the limit (kernel behaviour: `nr_pages >
//! ratelimit_pages` refuses, `+=` after). A refused migration is a `TNF_MIGRATE_FAIL` fault.
//! Modern kernels have no rate limit for DRAM-only NUMA (the v6.0+ `promote_rate_limit_MBps`
//! applies to memory tiering only, which is not modelled).
//!
//! **Cost** (an estimate, see `shared/reference/kernel-numa-balancing.md` §7.3: 4 KiB ≈
//! 5–15 µs, THP ≈ 100–300 µs): a fixed cost per folio (isolate from the LRU, unmap, TLB
//! flush, remap) plus the copy at a copy bandwidth. The migration is synchronous in the
//! faulting task. It reads the bytes from the source node and writes them to the
//! destination node, which the bandwidth model counts as demand on both nodes.

use super::PAGE_BYTES;

/// `ratelimit_pages` / `migrate_interval_millisecs` of v3.8–v4.18.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Base pages a node may receive per window.
    pub limit_pages: u64,
    /// Window length in ns.
    pub window_ns: u64,
}

impl RateLimit {
    /// The kernel's values: `128 << (20 - PAGE_SHIFT)` pages per 100 ms (1280 MB/s per
    /// destination node).
    pub const KERNEL_3_8: RateLimit = RateLimit {
        limit_pages: (128 << 20) / PAGE_BYTES,
        window_ns: 100_000_000,
    };

    /// A limit of `mb_per_s` MiB/s enforced per `window_ms` window.
    pub fn from_mb_per_s(mb_per_s: u64, window_ms: u64) -> RateLimit {
        RateLimit {
            limit_pages: (mb_per_s << 20) / PAGE_BYTES * window_ms / 1000,
            window_ns: window_ms * 1_000_000,
        }
    }
}

/// The per-node rate-limit state (`pgdat->numabalancing_migrate_next_window`,
/// `numabalancing_migrate_nr_pages`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeRateLimit {
    pub next_window_ns: u64,
    pub nr_pages: u64,
}

impl NodeRateLimit {
    /// `numamigrate_update_ratelimit()`: `true` when migrating `nr_pages` to this node at
    /// `now_ns` is refused (rate limited); otherwise the pages are counted.
    pub fn update(&mut self, limit: &RateLimit, now_ns: u64, nr_pages: u64) -> bool {
        if now_ns > self.next_window_ns {
            self.nr_pages = 0;
            self.next_window_ns = now_ns + limit.window_ns;
        }
        if self.nr_pages > limit.limit_pages {
            return true;
        }
        self.nr_pages += nr_pages;
        false
    }
}

/// Costs of one page migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigrateCost {
    /// Fixed cost per folio: isolate, unmap, TLB flush, remap (ns).
    pub per_folio_ns: u64,
    /// Copy bandwidth of one migrating CPU (MiB/s).
    pub copy_mb_per_s: u64,
}

impl Default for MigrateCost {
    /// 5 µs per folio and 10 GiB/s copy: a 4 KiB page ≈ 5.4 µs, a 2 MiB THP ≈ 205 µs.
    fn default() -> Self {
        MigrateCost {
            per_folio_ns: 5_000,
            copy_mb_per_s: 10 * 1024,
        }
    }
}

impl MigrateCost {
    /// Time the faulting task spends migrating `bytes` held in `nr_folios` folios.
    pub fn time_ns(&self, nr_folios: u64, bytes: u64) -> u64 {
        let copy_ns = (u128::from(bytes) * 1_000_000_000
            / (u128::from(self.copy_mb_per_s.max(1)) << 20)) as u64;
        nr_folios * self.per_folio_ns + copy_ns
    }
}

/// Memory traffic of one migration: read from `src_nid`, written to `dst_nid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigrationTraffic {
    pub src_nid: usize,
    pub dst_nid: usize,
    pub bytes: u64,
    pub duration_ns: u64,
}

impl MigrationTraffic {
    /// Bandwidth demand (MiB/s) this migration puts on each of the two nodes while it runs.
    pub fn demand_mb_per_s(&self) -> f64 {
        if self.duration_ns == 0 {
            return 0.0;
        }
        self.bytes as f64 / (1u64 << 20) as f64 / (self.duration_ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_rate_limit_is_128mb_per_100ms_and_admits_the_crossing_migration() {
        let l = RateLimit::KERNEL_3_8;
        assert_eq!(l.limit_pages, 32768, "128 MiB of 4 KiB pages");
        assert_eq!(
            RateLimit::from_mb_per_s(1280, 100),
            l,
            "1280 MiB/s per 100 ms window"
        );
        let mut n = NodeRateLimit::default();
        // 64 THPs of 512 pages = 32768 pages: all admitted in the first window (t = 1 ns
        // opens a window ending at 100 ms + 1 ns).
        for _ in 0..64 {
            assert!(!n.update(&l, 1, 512));
        }
        assert_eq!(n.nr_pages, 32768);
        // 32768 is not > 32768: one more is admitted (the check precedes the add)...
        assert!(!n.update(&l, 2, 512));
        // ...and then the node is limited until the window expires.
        assert!(n.update(&l, 50_000_000, 512));
        assert!(n.update(&l, 100_000_001, 512), "still inside the window");
        assert!(!n.update(&l, 100_000_002, 512), "a new window starts");
        assert_eq!(n.nr_pages, 512);
    }

    #[test]
    fn migration_time_is_fixed_cost_plus_copy() {
        let c = MigrateCost::default();
        // THP: 5 µs + 2 MiB at 10 GiB/s = 5 µs + 195.3125 µs.
        assert_eq!(c.time_ns(1, 2 << 20), 5_000 + 195_312);
        // The same 2 MiB as 512 base pages: 512 × 5 µs more fixed cost.
        assert_eq!(c.time_ns(512, 2 << 20), 512 * 5_000 + 195_312);
        let t = MigrationTraffic {
            src_nid: 0,
            dst_nid: 1,
            bytes: 2 << 20,
            duration_ns: 200_000,
        };
        // 2 MiB in 200 µs = 10000 MiB/s on each node.
        assert!((t.demand_mb_per_s() - 10_000.0).abs() < 1e-9);
    }
}
