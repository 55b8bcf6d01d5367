//! Scan control: when a task's address space is sampled (`task_tick_numa()`,
//! `task_numa_work()`), how much (`sysctl_numa_balancing_scan_size`), and how the period
//! adapts (`task_scan_min/start/max()`, `update_task_scan_period()`,
//! `update_scan_period()`).
//!
//! Time is the task's **runtime** for the trigger (`se.sum_exec_runtime` against
//! `node_stamp + numa_scan_period`), wall time for the per-mm rate limit
//! (`mm->numa_next_scan`): a sleepy task scans slowly in wall-clock terms.
//!
//! Approximations: `task_numa_work` walks page groups (2 MiB, see `crate::memory`) instead
//! of VMAs and PTEs — a group counts as one 2 MiB chunk, charged to the `pages` budget when
//! it was marked; the per-VMA PID filter (v6.4+) and the `change_prot_numa()` skip rules
//! (zero page, KSM, dirty file, single-threaded local page) are not modelled; the `virtpages`
//! bound (v4.5+ `[M]`) applies to every form. The thread stagger at fork
//! (`init_numa_balancing()`'s `node_stamp` for a new thread) is left to the caller.

use super::faults::TaskNuma;
use super::{NumaGroup, NumaVariant};
use crate::memory::{Mm, PAGES_PER_GROUP};

/// A scan period (ms) as the `unsigned int` that `task_scan_start()` / `task_scan_max()`
/// return in the kernel: their `unsigned long` result is truncated to 32 bits on return, and
/// so it is here (only a group scaling of millions of tasks gets past 2^32 ms).
// Kernel mirror: the kernel truncates unsigned long -> unsigned int on return, on purpose of
// its types; an assertion here would diverge from it.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn kernel_uint(ms: u64) -> u32 {
    ms as u32
}

/// `MAX_SCAN_WINDOW` (MB/s).
pub const MAX_SCAN_WINDOW: u64 = 2560;
/// `NUMA_PERIOD_SLOTS`.
pub const NUMA_PERIOD_SLOTS: i64 = 10;

/// The `numa_balancing_scan_*` tunables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanParams {
    pub scan_delay_ms: u64,
    pub scan_period_min_ms: u64,
    pub scan_period_max_ms: u64,
    pub scan_size_mb: u64,
}

impl Default for ScanParams {
    fn default() -> Self {
        ScanParams {
            scan_delay_ms: 1000,
            scan_period_min_ms: 1000,
            scan_period_max_ms: 60_000,
            scan_size_mb: 256,
        }
    }
}

/// The per-mm scan state (`mm->numa_next_scan`, `numa_scan_offset`, `numa_scan_seq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmNuma {
    /// Wall time (ns) before which no thread of the mm scans; 0 = unset.
    pub numa_next_scan_ns: u64,
    /// Page group the next scan resumes from.
    pub numa_scan_offset: usize,
    /// Completed full passes.
    pub numa_scan_seq: u32,
}

/// `DIV_ROUND_UP()` on non-negative values.
fn div_round_up(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// `task_nr_scan_windows()`: RSS in scan-size windows, at least 1. The kernel rounds the
/// RSS up with `round_up()`, a power-of-two mask (`((rss - 1) | (pages - 1)) + 1`): with
/// a scan size that is not a power of two the count can be below `DIV_ROUND_UP` (found
/// by tests/kernel_diff).
pub fn task_nr_scan_windows(params: &ScanParams, rss_pages: u64) -> u64 {
    let nr_scan_pages = ((params.scan_size_mb << 20) / crate::memory::PAGE_BYTES).max(1);
    let rss = if rss_pages == 0 {
        nr_scan_pages
    } else {
        rss_pages
    };
    (((rss - 1) | (nr_scan_pages - 1)) + 1) / nr_scan_pages
}

/// `task_scan_min()` (ms): `max(1000 / (MAX_SCAN_WINDOW / scan_size), period_min / windows)`.
pub fn task_scan_min(params: &ScanParams, rss_pages: u64) -> u64 {
    let mut windows = 1;
    if params.scan_size_mb < MAX_SCAN_WINDOW {
        windows = MAX_SCAN_WINDOW / params.scan_size_mb.max(1);
    }
    let floor = 1000 / windows;
    let scan = params.scan_period_min_ms / task_nr_scan_windows(params, rss_pages);
    floor.max(scan)
}

/// The group scaling of `task_scan_start/max()` (v4.14+ `[M]`): `period × nr_tasks ×
/// (shared + 1) / (private + shared + 1)`.
fn group_scaled(period: u64, ng: &NumaGroup) -> u64 {
    let shared = u64::try_from(ng.group_faults_shared()).unwrap_or(0);
    let private = u64::try_from(ng.group_faults_priv()).unwrap_or(0);
    period * u64::from(ng.nr_tasks) * (shared + 1) / (private + shared + 1)
}

/// `task_scan_start()` (ms): the minimum, raised for grouped tasks that share a lot.
pub fn task_scan_start(
    params: &ScanParams,
    rss_pages: u64,
    ng: Option<&NumaGroup>,
    v: &NumaVariant,
) -> u64 {
    let smin = task_scan_min(params, rss_pages);
    match ng {
        Some(ng) if v.scan_period_ps_ratio => smin.max(group_scaled(smin, ng)),
        _ => smin,
    }
}

/// `task_scan_max()` (ms).
pub fn task_scan_max(
    params: &ScanParams,
    rss_pages: u64,
    ng: Option<&NumaGroup>,
    v: &NumaVariant,
) -> u64 {
    let smin = task_scan_min(params, rss_pages);
    let mut smax = params.scan_period_max_ms / task_nr_scan_windows(params, rss_pages);
    if let Some(ng) = ng
        && v.scan_period_ps_ratio
    {
        smax = smax.max(group_scaled(smax, ng));
    }
    smin.max(smax)
}

/// `update_task_scan_period(p, shared, private)`: adapt `t.numa_scan_period_ms` to the
/// locality of the faults since the last placement and reset the locality counters.
/// Returns the new `mm->numa_next_scan` when the "no useful faults" branch pushes it out.
pub fn update_task_scan_period(
    t: &mut TaskNuma,
    shared: i64,
    private: i64,
    scan_min_ms: u64,
    scan_max_ms: u64,
    now_ns: u64,
    v: &NumaVariant,
) -> Option<u64> {
    let remote = t.faults_locality[0];
    let local = t.faults_locality[1];
    let failed = v.scan_period_failed_term && t.faults_locality[2] != 0;
    let th = v.period_threshold;
    if local + shared == 0 || failed {
        t.numa_scan_period_ms = (t.numa_scan_period_max_ms).min(t.numa_scan_period_ms << 1);
        t.faults_locality = [0; 3];
        return Some(now_ns + u64::from(t.numa_scan_period_ms) * 1_000_000);
    }
    let period_slot = div_round_up(i64::from(t.numa_scan_period_ms), NUMA_PERIOD_SLOTS);
    let lr_ratio = local * NUMA_PERIOD_SLOTS / (local + remote).max(1);
    let diff = if v.scan_period_ps_ratio {
        let ps_ratio = private * NUMA_PERIOD_SLOTS / (private + shared).max(1);
        if ps_ratio >= th {
            (ps_ratio - th).max(1) * period_slot
        } else if lr_ratio >= th {
            (lr_ratio - th).max(1) * period_slot
        } else {
            -(th - lr_ratio.max(ps_ratio)) * period_slot
        }
    } else if lr_ratio >= th {
        (lr_ratio - th).max(1) * period_slot
    } else {
        let d = -(th - lr_ratio) * period_slot;
        let ratio = div_round_up(private * NUMA_PERIOD_SLOTS, (private + shared).max(1));
        d * ratio / NUMA_PERIOD_SLOTS
    };
    // The kernel adds the int `diff` to the unsigned int period: a negative sum (a period
    // of at most 13 ms scanning faster) wraps above every maximum and clamps to it.
    let p = (i64::from(t.numa_scan_period_ms) + diff)
        .rem_euclid(1 << 32)
        .clamp(scan_min_ms as i64, scan_max_ms.max(scan_min_ms) as i64);
    t.numa_scan_period_ms = u32::try_from(p).expect("clamped to [scan_min, scan_max]");
    t.faults_locality = [0; 3];
    None
}

/// `update_scan_period(p, new_cpu)` (v4.19+): on a cross-node migration by any mechanism,
/// reset the scan period to `task_scan_start` unless the task has completed a scan pass and
/// moves to its preferred node or was not on it before. Returns whether it reset.
pub fn update_scan_period(
    t: &mut TaskNuma,
    src_nid: usize,
    dst_nid: usize,
    scan_start_ms: u64,
) -> bool {
    if t.mm.is_none() || t.faults.is_none() || src_nid == dst_nid {
        return false;
    }
    if t.numa_scan_seq != 0
        && (Some(dst_nid) == t.preferred_nid
            || (t.preferred_nid.is_some() && Some(src_nid) != t.preferred_nid))
    {
        return false;
    }
    t.numa_scan_period_ms = kernel_uint(scan_start_ms);
    true
}

/// `task_tick_numa(rq, curr)`: advance `node_stamp` when the task's runtime passed it and
/// say whether to queue `task_numa_work` (the mm's next-scan time has come).
/// `scan_start_ms` is what the first period becomes (`task_scan_start`, `task_scan_min` in
/// v3.x).
pub fn task_tick_numa(
    t: &mut TaskNuma,
    sum_exec_runtime_ns: u64,
    now_ns: u64,
    mm: &MmNuma,
    scan_start_ms: u64,
    v: &NumaVariant,
) -> bool {
    if t.mm.is_none() {
        return false;
    }
    let period = u64::from(t.numa_scan_period_ms) * 1_000_000;
    let due = if v.form >= super::NumaForm::V4_19 {
        sum_exec_runtime_ns > t.node_stamp_ns + period
    } else {
        sum_exec_runtime_ns.wrapping_sub(t.node_stamp_ns) > period
    };
    if !due {
        return false;
    }
    if t.node_stamp_ns == 0 {
        t.numa_scan_period_ms = kernel_uint(scan_start_ms);
    }
    t.node_stamp_ns += period;
    now_ns >= mm.numa_next_scan_ns
}

/// What one `task_numa_work` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NumaWork {
    /// The mm rate limit let this task scan.
    pub ran: bool,
    /// `numa_pte_updates` (base pages marked PROT_NONE).
    pub pte_updates: u64,
    /// Page groups newly marked.
    pub groups_marked: u64,
    /// A full pass completed (`mm->numa_scan_seq` incremented).
    pub passes_completed: u32,
}

/// `task_numa_work()`: rate-limit per mm, then mark up to `scan_size_mb` of touched memory
/// PROT_NONE from the mm's resume offset. `mof` is `vma_policy_mof()` for the mm's policy
/// (nothing is scanned without it). `tick_ns` is one jiffy (the `2 × TICK_NSEC` stagger).
/// `scan_start_ms` / `scan_max_ms` initialise a task whose period is still 0.
#[allow(clippy::too_many_arguments)]
pub fn task_numa_work(
    t: &mut TaskNuma,
    mm: &mut Mm,
    st: &mut MmNuma,
    now_ns: u64,
    params: &ScanParams,
    mof: bool,
    tick_ns: u64,
    scan_start_ms: u64,
    scan_max_ms: u64,
) -> NumaWork {
    let mut out = NumaWork::default();
    if st.numa_next_scan_ns == 0 {
        st.numa_next_scan_ns = now_ns + params.scan_delay_ms * 1_000_000;
    }
    if now_ns < st.numa_next_scan_ns {
        return out;
    }
    if t.numa_scan_period_ms == 0 {
        t.numa_scan_period_max_ms = kernel_uint(scan_max_ms);
        t.numa_scan_period_ms = kernel_uint(scan_start_ms);
    }
    st.numa_next_scan_ns = now_ns + u64::from(t.numa_scan_period_ms) * 1_000_000;
    t.node_stamp_ns += 2 * tick_ns;
    out.ran = true;

    let mut pages = ((params.scan_size_mb << 20) / crate::memory::PAGE_BYTES) as i64;
    let mut virtpages = pages * 8;
    if pages == 0 {
        return out;
    }
    let len = mm.groups.len();
    if st.numa_scan_offset >= len {
        st.numa_scan_seq += 1;
        out.passes_completed += 1;
        st.numa_scan_offset = 0;
    }
    let mut g = st.numa_scan_offset;
    while g < len {
        if mof {
            let pg = &mut mm.groups[g];
            if pg.nid.is_some() && !pg.prot_none {
                pg.prot_none = true;
                out.pte_updates += PAGES_PER_GROUP;
                out.groups_marked += 1;
                pages -= PAGES_PER_GROUP as i64;
            }
        }
        virtpages -= PAGES_PER_GROUP as i64;
        g += 1;
        if pages <= 0 || virtpages <= 0 {
            break;
        }
    }
    if g >= len {
        st.numa_scan_seq += 1;
        out.passes_completed += 1;
        st.numa_scan_offset = 0;
    } else {
        st.numa_scan_offset = g;
    }
    out
}

/// The overhead cap at the end of `task_numa_work()`: `node_stamp += 32 × Δruntime`, so
/// scanning costs at most ~3% of the task's runtime.
pub fn numa_work_overhead_stamp_ns(work_runtime_ns: u64) -> u64 {
    32 * work_runtime_ns
}
