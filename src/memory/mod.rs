//! Dynamic process memory: where each process's (mm's) pages live, how they get there
//! (first touch under a memory policy), how NUMA hinting faults move them
//! (`mpol_misplaced`, `migrate_misplaced_folio`, the historical migration rate limit), and
//! what remote and congested memory costs a running task (per-node bandwidth that
//! saturates).
//!
//! A bottom-layer module (next to `topology` and `cost`): it knows nodes and distances, not
//! tasks or runqueues. The scheduler side of NUMA balancing (`sched::numa`) decides *whether*
//! a misplaced page should move (`should_numa_migrate_memory`, which needs the task's and its
//! numa_group's fault statistics) and hands that answer to [`policy::mpol_misplaced`] as a
//! closure, so this module never imports the scheduler. The engine (phase 2) owns one
//! [`Mm`] per process, shared by its threads, and asks [`bandwidth`] for each running
//! task's speed.
//!
//! # Granularity: page groups
//!
//! Memory is tracked in **page groups** of [`PAGE_GROUP_BYTES`] (2 MiB = one PMD-sized THP,
//! 512 base pages of 4 KiB). Each group has one home node, one `last_cpupid` and one
//! PROT_NONE ("NUMA hinting") bit, exactly the per-folio state the kernel keeps for a THP.
//! For base-page (4 KiB) memory this is an approximation: the kernel samples and migrates
//! each 4 KiB page separately, here the 512 pages of a group fault, are classified and move
//! together (one hinting fault counts `pages = 512`, as for a THP). Counts reported in kernel
//! units (`numa_pages_migrated`, `numa_pte_updates`) are in base pages.
//!
//! Shared memory objects (`MAP_SHARED` shm mapped by several processes) are a region in
//! each mapping mm ([`Mm::map_object`]): each mm has its own PTEs (the PROT_NONE bit), the
//! page's node and `last_cpupid` are one per page, kept equal in every mapping by the owner
//! of the mms (the engine). Each mapping counts the object's pages in its RSS, as
//! `get_mm_rss()` counts shmem pages.
//!
//! What is left out: reclaim and node memory exhaustion (nodes never run out, so MPOL_BIND
//! never fails and migration is never refused for lack of free memory:
//! `migrate_balanced_pgdat` always passes), file-backed and shared-library mappings (every
//! region is anonymous), KSM, COW sharing, memory tiering.

pub mod bandwidth;
pub mod migrate;
pub mod policy;
pub mod traffic;

/// Bytes in a base page (`PAGE_SIZE` on x86-64).
pub const PAGE_BYTES: u64 = 4096;
/// Bytes per page group: one PMD-sized transparent huge page (`HPAGE_PMD_SIZE`).
pub const PAGE_GROUP_BYTES: u64 = 2 << 20;
/// Base pages per page group (`HPAGE_PMD_NR`).
pub const PAGES_PER_GROUP: u64 = PAGE_GROUP_BYTES / PAGE_BYTES;

/// `(-1 & LAST_CPUPID_MASK)`: the `last_cpupid` of a page never hinting-faulted (all ones).
pub const LAST_CPUPID_UNSET: u32 = u32::MAX;

/// `cpu_pid_to_cpupid(cpu, pid)`: the CPU and the low 8 bits of the PID (`LAST__PID_SHIFT`
/// = 8), as `page_cpupid_xchg_last()` stores them. PIDs equal modulo 256 alias: the kernel's
/// `cpupid_match_pid()` cannot tell them apart, and neither can this model.
pub const fn cpu_pid_to_cpupid(cpu: usize, pid: u32) -> u32 {
    ((cpu as u32) << 8) | (pid & 0xff)
}

/// `cpupid_to_cpu()`.
pub const fn cpupid_to_cpu(cpupid: u32) -> usize {
    (cpupid >> 8) as usize
}

/// `cpupid_to_pid()`: the low 8 PID bits.
pub const fn cpupid_to_pid(cpupid: u32) -> u32 {
    cpupid & 0xff
}

/// `cpupid_pid_unset()`: the PID field is all ones (never faulted).
pub const fn cpupid_pid_unset(cpupid: u32) -> bool {
    cpupid == LAST_CPUPID_UNSET || cpupid_to_pid(cpupid) == 0xff
}

/// `cpupid_match_pid(task, cpupid)`: the low 8 bits of `pid` equal the stored ones.
pub const fn cpupid_match_pid(pid: u32, cpupid: u32) -> bool {
    (pid & 0xff) == cpupid_to_pid(cpupid)
}

/// Index of an [`Mm`] (one per process) in the engine's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MmId(pub u32);

/// One memory region of a process: a VMA as NUMA balancing sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// First page group of the region in the mm's [`Mm::groups`].
    pub first: usize,
    /// Page groups in the region.
    pub len: usize,
    /// `VM_SHARED`: a shared mapping (shm); faults on it by a process that shares it carry
    /// `TNF_SHARED` (page maybe mapped by more than one mm).
    pub shared: bool,
    /// Mapped writable. Hinting faults on a read-only mapping carry `TNF_NO_GROUP` (they never
    /// cause numa_group joins).
    pub writable: bool,
    /// Touched page groups of this region per node (index = node id), kept in step with
    /// the groups (the speed model reads a task's placement from it without a walk).
    pub groups_per_node: Vec<u64>,
    /// A mapping of a shared memory object (`MAP_SHARED` shm, index in the owner's object
    /// table) mapped by several mms: its groups here are this mm's PTEs (own PROT_NONE
    /// bit), their node and `last_cpupid` are the object's pages' and the owner keeps them
    /// equal in every mapping.
    pub object: Option<u32>,
}

/// One page group: where it lives and the NUMA-hinting state of its folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageGroup {
    /// Home node; `None` until first touched.
    pub nid: Option<u16>,
    /// `folio_last_cpupid()`: the CPU and PID bits of the last hinting fault
    /// ([`LAST_CPUPID_UNSET`] when none).
    pub last_cpupid: u32,
    /// The PTEs are PROT_NONE (marked by `task_numa_work`); the next access takes a NUMA
    /// hinting fault.
    pub prot_none: bool,
    /// Index of the region holding the group in [`Mm::regions`].
    pub region: u32,
}

impl Default for PageGroup {
    fn default() -> Self {
        PageGroup {
            nid: None,
            last_cpupid: LAST_CPUPID_UNSET,
            prot_none: false,
            region: 0,
        }
    }
}

/// A process address space (`struct mm_struct`): its regions and page groups, and the
/// per-node page counts kept in step with them. Threads of one process share one `Mm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mm {
    pub id: MmId,
    pub regions: Vec<Region>,
    pub groups: Vec<PageGroup>,
    /// Touched page groups per node (index = node id).
    pub groups_per_node: Vec<u64>,
    /// `mm->mm_users`: tasks sharing this address space.
    pub mm_users: u32,
}

impl Mm {
    /// An empty address space for a machine with `nr_nodes` nodes.
    pub fn new(id: MmId, nr_nodes: usize) -> Mm {
        Mm {
            id,
            regions: Vec::new(),
            groups: Vec::new(),
            groups_per_node: vec![0; nr_nodes],
            mm_users: 1,
        }
    }

    /// Map a region of `bytes` (rounded up to whole page groups, at least one), untouched.
    /// Returns its index in [`Mm::regions`].
    pub fn map(&mut self, bytes: u64, shared: bool, writable: bool) -> usize {
        let len = bytes.div_ceil(PAGE_GROUP_BYTES).max(1) as usize;
        let first = self.groups.len();
        let region = PageGroup {
            region: self.regions.len() as u32,
            ..PageGroup::default()
        };
        self.groups.resize(first + len, region);
        self.regions.push(Region {
            first,
            len,
            shared,
            writable,
            groups_per_node: vec![0; self.groups_per_node.len()],
            object: None,
        });
        self.regions.len() - 1
    }

    /// Map `bytes` of shared memory object `object` (`MAP_SHARED`, writable), untouched.
    /// Returns the region's index.
    pub fn map_object(&mut self, bytes: u64, object: u32) -> usize {
        let r = self.map(bytes, true, true);
        self.regions[r].object = Some(object);
        r
    }

    /// `get_mm_rss()` in base pages: touched page groups × [`PAGES_PER_GROUP`].
    pub fn rss_pages(&self) -> u64 {
        self.groups_per_node.iter().sum::<u64>() * PAGES_PER_GROUP
    }

    /// Base pages on `nid`.
    pub fn pages_on_node(&self, nid: usize) -> u64 {
        self.groups_per_node.get(nid).copied().unwrap_or(0) * PAGES_PER_GROUP
    }

    /// The region holding page group `g`.
    pub fn region_of(&self, g: usize) -> Option<&Region> {
        self.regions
            .iter()
            .find(|r| g >= r.first && g < r.first + r.len)
    }

    /// First touch of page group `g` on `nid` (no effect when already placed). Returns
    /// whether the group was newly placed.
    pub fn touch(&mut self, g: usize, nid: usize) -> bool {
        let pg = &mut self.groups[g];
        if pg.nid.is_some() {
            return false;
        }
        pg.nid = Some(nid as u16);
        let r = pg.region as usize;
        self.groups_per_node[nid] += 1;
        self.regions[r].groups_per_node[nid] += 1;
        true
    }

    /// Move page group `g` to `nid` (the copy itself is costed by [`migrate`]).
    pub fn move_group(&mut self, g: usize, nid: usize) {
        let pg = &mut self.groups[g];
        if let Some(old) = pg.nid {
            assert!(
                self.groups_per_node[old as usize] > 0,
                "groups_per_node out of step with page groups"
            );
            self.groups_per_node[old as usize] -= 1;
            self.regions[pg.region as usize].groups_per_node[old as usize] -= 1;
        }
        pg.nid = Some(nid as u16);
        self.groups_per_node[nid] += 1;
        self.regions[pg.region as usize].groups_per_node[nid] += 1;
    }

    /// Share of the touched page groups of `region` per node, in page groups (index = node).
    pub fn region_groups_per_node(&self, region: usize) -> Vec<u64> {
        let r = &self.regions[region];
        let mut out = vec![0u64; self.groups_per_node.len()];
        for pg in &self.groups[r.first..r.first + r.len] {
            if let Some(n) = pg.nid {
                out[n as usize] += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpupid_keeps_cpu_and_low_pid_bits() {
        let c = cpu_pid_to_cpupid(37, 0x1234);
        assert_eq!(cpupid_to_cpu(c), 37);
        assert_eq!(cpupid_to_pid(c), 0x34);
        assert!(cpupid_match_pid(0x1234, c));
        // PIDs equal modulo 256 alias, as in the kernel.
        assert!(cpupid_match_pid(0x0034, c));
        assert!(!cpupid_match_pid(0x1235, c));
        assert!(cpupid_pid_unset(LAST_CPUPID_UNSET));
        assert!(!cpupid_pid_unset(c));
    }

    #[test]
    fn map_rounds_to_page_groups_and_counts_touches() {
        let mut mm = Mm::new(MmId(0), 2);
        let r = mm.map(5 << 20, false, true); // 5 MiB -> 3 groups of 2 MiB
        assert_eq!(mm.regions[r].len, 3);
        assert_eq!(mm.rss_pages(), 0, "untouched memory is not resident");
        assert!(mm.touch(0, 1));
        assert!(!mm.touch(0, 0), "a second touch does not move the page");
        mm.touch(1, 1);
        mm.touch(2, 0);
        assert_eq!(mm.groups_per_node, vec![1, 2]);
        assert_eq!(mm.rss_pages(), 3 * 512);
        mm.move_group(1, 0);
        assert_eq!(mm.groups_per_node, vec![2, 1]);
        assert_eq!(mm.pages_on_node(0), 1024);
        assert_eq!(mm.region_groups_per_node(r), vec![2, 1]);
        assert_eq!(mm.regions[r].groups_per_node, vec![2, 1], "kept in step");
        let r2 = mm.map(2 << 20, true, true);
        mm.touch(3, 1);
        assert_eq!(mm.groups[3].region as usize, r2);
        assert_eq!(mm.regions[r2].groups_per_node, vec![0, 1]);
        assert_eq!(mm.regions[r].groups_per_node, vec![2, 1]);
    }
}
