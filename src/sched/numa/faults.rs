//! NUMA hinting-fault statistics: the per-task `numa_faults` array and `task_numa_fault()`,
//! plus the page-side filter `should_numa_migrate_memory()` (all `kernel/sched/fair.c`).
//!
//! Layout (`enum numa_faults_stats`, `task_faults_idx()`): four regions — MEM and CPU (the
//! decayed statistics), MEMBUF and CPUBUF (faults since the last placement) — each
//! `nr_nodes × {shared = 0, private = 1}`. The kernel keeps them in `unsigned long` and adds
//! signed differences; they are `i64` here (always ≥ 0 in a consistent state).
//!
//! Fault flow (`task_numa_fault` in the kernel, split so each step is testable):
//! 1. [`classify_fault`]: first touch (`last_cpupid` unset) is private; otherwise private iff
//!    the last accessor's PID bits match; a shared fault without `TNF_NO_GROUP` goes to
//!    `task_numa_group()` ([`NumaGroups::task_numa_group`]), which may join a group or
//!    reclassify the fault as private (false sharing).
//! 2. [`group_local`]: a shared remote fault between two active nodes of a multi-node group
//!    counts as local.
//! 3. [`placement_due`]: v4.19+ runs `task_numa_placement()` and `numa_migrate_preferred()`
//!    only once the retry time has passed; v3.x–v4.18 ran placement on every fault and the
//!    migration at retry expiry.
//! 4. [`TaskNuma::account_fault`]: buffers, locality counters, pages migrated.
//!
//! [`NumaGroups::task_numa_group`]: super::group::NumaGroups::task_numa_group

use super::{NumaForm, NumaGroup, NumaGroupId, NumaVariant};
use crate::memory::{MmId, cpupid_match_pid, cpupid_pid_unset, cpupid_to_cpu};

/// `TNF_MIGRATED`: the page was migrated by this fault.
pub const TNF_MIGRATED: u32 = 0x01;
/// `TNF_NO_GROUP`: the mapping is not writable; never causes numa_group joins.
pub const TNF_NO_GROUP: u32 = 0x02;
/// `TNF_SHARED`: the page may be mapped by several mms (VM_SHARED).
pub const TNF_SHARED: u32 = 0x04;
/// `TNF_FAULT_LOCAL`: the page was on the faulting CPU's node.
pub const TNF_FAULT_LOCAL: u32 = 0x08;
/// `TNF_MIGRATE_FAIL`: a wanted migration failed (rate limit, isolation).
pub const TNF_MIGRATE_FAIL: u32 = 0x10;

/// `enum numa_faults_stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumaFaultsStats {
    Mem = 0,
    Cpu = 1,
    MemBuf = 2,
    CpuBuf = 3,
}

/// `p->numa_faults`: 4 regions × nodes × {shared, private}.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaFaults {
    pub nr_nodes: usize,
    pub v: Vec<i64>,
}

impl NumaFaults {
    pub fn new(nr_nodes: usize) -> NumaFaults {
        NumaFaults {
            nr_nodes,
            v: vec![0; 4 * nr_nodes * 2],
        }
    }

    /// `task_faults_idx(s, nid, priv)`.
    pub fn idx(&self, s: NumaFaultsStats, nid: usize, private: bool) -> usize {
        2 * (s as usize * self.nr_nodes + nid) + usize::from(private)
    }

    pub fn get(&self, s: NumaFaultsStats, nid: usize, private: bool) -> i64 {
        self.v[self.idx(s, nid, private)]
    }

    pub fn add(&mut self, s: NumaFaultsStats, nid: usize, private: bool, d: i64) {
        let i = self.idx(s, nid, private);
        self.v[i] += d;
    }

    /// `task_faults(p, nid)`: decayed memory faults, shared + private.
    pub fn task_faults(&self, nid: usize) -> i64 {
        self.get(NumaFaultsStats::Mem, nid, false) + self.get(NumaFaultsStats::Mem, nid, true)
    }

    /// CPU-side decayed faults of a node.
    pub fn cpu_faults(&self, nid: usize) -> i64 {
        self.get(NumaFaultsStats::Cpu, nid, false) + self.get(NumaFaultsStats::Cpu, nid, true)
    }
}

/// A task's NUMA-balancing state (the `numa_*` fields of `struct task_struct`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskNuma {
    /// PID (its low 8 bits go into `last_cpupid`).
    pub pid: u32,
    /// Address space; `None` for kernel threads (never scanned, never fault).
    pub mm: Option<MmId>,
    /// `p->numa_faults`, allocated at the first hinting fault.
    pub faults: Option<NumaFaults>,
    /// `p->total_numa_faults`: Σ of the MEM region.
    pub total_numa_faults: i64,
    /// `p->numa_faults_locality[3]`: remote, local, migration failures since the last
    /// scan-period update.
    pub faults_locality: [i64; 3],
    /// `p->numa_preferred_nid` (`None` = NUMA_NO_NODE).
    pub preferred_nid: Option<usize>,
    /// `p->numa_scan_seq`: the mm scan pass the statistics were last folded at.
    pub numa_scan_seq: u32,
    /// `p->numa_scan_period` (ms).
    pub numa_scan_period_ms: u32,
    /// `p->numa_scan_period_max` (ms).
    pub numa_scan_period_max_ms: u32,
    /// `p->node_stamp`: task runtime (ns) of the next scan.
    pub node_stamp_ns: u64,
    /// `p->numa_migrate_retry` as a time in ns.
    pub numa_migrate_retry_ns: u64,
    /// `p->numa_pages_migrated` (base pages).
    pub numa_pages_migrated: u64,
    /// `p->numa_group`.
    pub group: Option<NumaGroupId>,
    /// `p->last_task_numa_placement` (ns; 0 = never).
    pub last_task_numa_placement_ns: u64,
    /// `p->last_sum_exec_runtime` (ns).
    pub last_sum_exec_runtime_ns: u64,
}

impl TaskNuma {
    /// `init_numa_balancing()` for a task of `mm` (fresh address space or thread):
    /// no statistics, no group, scan period = scan delay.
    pub fn new(pid: u32, mm: Option<MmId>, scan_delay_ms: u32) -> TaskNuma {
        TaskNuma {
            pid,
            mm,
            faults: None,
            total_numa_faults: 0,
            faults_locality: [0; 3],
            preferred_nid: None,
            numa_scan_seq: 0,
            numa_scan_period_ms: scan_delay_ms,
            numa_scan_period_max_ms: 0,
            node_stamp_ns: 0,
            numa_migrate_retry_ns: 0,
            numa_pages_migrated: 0,
            group: None,
            last_task_numa_placement_ns: 0,
            last_sum_exec_runtime_ns: 0,
        }
    }

    /// `task_faults(p, nid)` (0 without statistics).
    pub fn task_faults(&self, nid: usize) -> i64 {
        self.faults.as_ref().map_or(0, |f| f.task_faults(nid))
    }

    /// The accounting tail of `task_numa_fault()`: allocate the array on first use, count
    /// migrated pages and failures, add to MEMBUF/CPUBUF and the locality counters.
    pub fn account_fault(&mut self, nr_nodes: usize, hf: &HintFault, private: bool, local: bool) {
        let HintFault {
            mem_node,
            cpu_node,
            pages,
            flags,
        } = *hf;
        let f = self.faults.get_or_insert_with(|| NumaFaults::new(nr_nodes));
        if flags & TNF_MIGRATED != 0 {
            self.numa_pages_migrated += pages;
        }
        let pages = pages as i64;
        if flags & TNF_MIGRATE_FAIL != 0 {
            self.faults_locality[2] += pages;
        }
        f.add(NumaFaultsStats::MemBuf, mem_node, private, pages);
        f.add(NumaFaultsStats::CpuBuf, cpu_node, private, pages);
        self.faults_locality[usize::from(local)] += pages;
    }
}

/// One NUMA hinting fault as `task_numa_fault(last_cpupid, mem_node, pages, flags)` gets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintFault {
    /// Node the page is on after any migration.
    pub mem_node: usize,
    /// Node of the faulting CPU.
    pub cpu_node: usize,
    /// Base pages (512 for a page group).
    pub pages: u64,
    /// `TNF_*`.
    pub flags: u32,
}

impl HintFault {
    pub fn new(mem_node: usize, cpu_node: usize, pages: u64, flags: u32) -> HintFault {
        HintFault {
            mem_node,
            cpu_node,
            pages,
            flags,
        }
    }
}

/// The private/shared answer for a fault before `task_numa_group()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultClass {
    /// First touch or same PID bits as the last accessor.
    Private,
    /// Shared; `task_numa_group()` must be consulted (it decides join / false sharing).
    SharedTryGroup,
    /// Shared on a read-only mapping (`TNF_NO_GROUP`): stays shared, no group logic.
    Shared,
}

/// Step 1 of `task_numa_fault()`.
pub fn classify_fault(last_cpupid: u32, pid: u32, flags: u32) -> FaultClass {
    if last_cpupid == crate::memory::LAST_CPUPID_UNSET || cpupid_match_pid(pid, last_cpupid) {
        FaultClass::Private
    } else if flags & TNF_NO_GROUP == 0 {
        FaultClass::SharedTryGroup
    } else {
        FaultClass::Shared
    }
}

/// Step 2 of `task_numa_fault()`: a shared, remote fault counts as local when the task's
/// group spans several active nodes and both the CPU and the memory node are among them.
/// (3.x: `node_isset()` on the active mask; 4.6+: `active_nodes > 1` and
/// `numa_is_active_node()`.)
pub fn group_local(
    private: bool,
    local: bool,
    group: Option<&NumaGroup>,
    cpu_node: usize,
    mem_node: usize,
    v: &NumaVariant,
) -> bool {
    if private || local {
        return local;
    }
    let Some(ng) = group else {
        return false;
    };
    let multi = v.active_nodes_mask || ng.active_nodes > 1;
    multi && ng.is_active_node(cpu_node, v) && ng.is_active_node(mem_node, v)
}

/// Step 3 of `task_numa_fault()`: `(run task_numa_placement, run numa_migrate_preferred)`.
/// `time_after(jiffies, p->numa_migrate_retry)` is strict.
pub fn placement_due(t: &TaskNuma, now_ns: u64, v: &NumaVariant) -> (bool, bool) {
    let retry = now_ns > t.numa_migrate_retry_ns;
    if v.form >= NumaForm::V4_19 {
        (retry, retry)
    } else {
        (true, retry)
    }
}

/// `should_numa_migrate_memory(p, folio, src_nid, dst_cpu)` (fair.c): whether a page on
/// `src_nid` should follow task `t` faulting from a CPU of `dst_nid`. `last_cpupid` is the
/// value the caller just exchanged out of the page (`folio_xchg_last_cpupid()`), `cpu_node`
/// maps a CPU to its node.
pub fn should_numa_migrate_memory(
    t: &TaskNuma,
    group: Option<&NumaGroup>,
    last_cpupid: u32,
    src_nid: usize,
    dst_nid: usize,
    cpu_node: impl Fn(usize) -> usize,
    v: &NumaVariant,
) -> bool {
    let unset = cpupid_pid_unset(last_cpupid);
    // Early-life shortcut (v4.19+): a task without a preferred node yet, or in its first
    // scan passes, takes its own and never-touched pages with it.
    if v.form >= NumaForm::V4_19
        && (t.preferred_nid.is_none() || t.numa_scan_seq <= 4)
        && (unset || cpupid_match_pid(t.pid, last_cpupid))
    {
        return true;
    }
    // Two-stage filter: the previous fault must have come from the same node.
    if !unset && cpu_node(cpupid_to_cpu(last_cpupid)) != dst_nid {
        return false;
    }
    if cpupid_match_pid(t.pid, last_cpupid) {
        return true;
    }
    let Some(ng) = group else {
        return true;
    };
    if v.active_nodes_mask {
        // 3.15–4.5: only into active nodes; out of inactive ones freely; between active
        // nodes from the busier to the quieter with 1/4 hysteresis.
        if !ng.is_active_node(dst_nid, v) {
            return false;
        }
        if !ng.is_active_node(src_nid, v) {
            return true;
        }
        return ng.group_faults(dst_nid) < ng.group_faults(src_nid) * 3 / 4;
    }
    // 4.6+: spread memory in proportion to CPU use, 3/4 hysteresis.
    if ng.group_faults_cpu(dst_nid)
        > ng.group_faults_cpu(src_nid) * super::group::ACTIVE_NODE_FRACTION
    {
        return true;
    }
    ng.group_faults_cpu(dst_nid) * ng.group_faults(src_nid) * 3
        > ng.group_faults_cpu(src_nid) * ng.group_faults(dst_nid) * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_idx_matches_the_kernel_layout() {
        let f = NumaFaults::new(4);
        // 2 * (s * nr_node_ids + nid) + priv
        assert_eq!(f.idx(NumaFaultsStats::Mem, 0, false), 0);
        assert_eq!(f.idx(NumaFaultsStats::Mem, 3, true), 7);
        assert_eq!(f.idx(NumaFaultsStats::Cpu, 0, false), 8);
        assert_eq!(f.idx(NumaFaultsStats::CpuBuf, 2, true), 2 * (3 * 4 + 2) + 1);
    }

    #[test]
    fn classify_and_account() {
        let unset = crate::memory::LAST_CPUPID_UNSET;
        let mine = crate::memory::cpu_pid_to_cpupid(3, 700);
        let other = crate::memory::cpu_pid_to_cpupid(3, 701);
        assert_eq!(classify_fault(unset, 700, 0), FaultClass::Private);
        assert_eq!(classify_fault(mine, 700, 0), FaultClass::Private);
        assert_eq!(classify_fault(other, 700, 0), FaultClass::SharedTryGroup);
        assert_eq!(classify_fault(other, 700, TNF_NO_GROUP), FaultClass::Shared);
        let mut t = TaskNuma::new(700, Some(MmId(0)), 1000);
        t.account_fault(2, &HintFault::new(1, 0, 512, TNF_MIGRATED), true, false);
        t.account_fault(2, &HintFault::new(0, 0, 512, TNF_MIGRATE_FAIL), false, true);
        let f = t.faults.as_ref().unwrap();
        assert_eq!(f.get(NumaFaultsStats::MemBuf, 1, true), 512);
        assert_eq!(f.get(NumaFaultsStats::MemBuf, 0, false), 512);
        assert_eq!(f.get(NumaFaultsStats::CpuBuf, 0, true), 512);
        assert_eq!(f.get(NumaFaultsStats::CpuBuf, 0, false), 512);
        assert_eq!(t.faults_locality, [512, 512, 512]);
        assert_eq!(t.numa_pages_migrated, 512);
        assert_eq!(t.total_numa_faults, 0, "buffers are folded in at placement");
    }
}
