//! [`FakeNumaEnv`]: a constructed machine state implementing [`NumaEnv`], for tests and
//! worked examples of NUMA-balancing decisions without an engine.
//!
//! Each CPU has a list of queued CFS tasks (the running one included) and an optional
//! running task; per-CPU signals are sums over the queued tasks (`cpu_load` = `cpu_runnable`
//! = Σ load, `cpu_util` = Σ util capped at the capacity); `nr_running` adds tasks of other
//! classes. A CPU is idle when nothing is queued. Every CPU has the same SD_NUMA parameters
//! (`sd_numa`, `None` for a cpuset-isolated machine).

use std::collections::BTreeMap;

use super::faults::{NumaFaults, NumaFaultsStats, TaskNuma};
use super::{NumaEnv, NumaGroup, NumaGroupId, NumaGroups, NumaTopo};
use crate::cpumask::CpuMask;
use crate::memory::MmId;
use crate::task::TaskId;

/// One task of a [`FakeNumaEnv`].
#[derive(Clone, Debug)]
pub struct FakeNumaTask {
    pub cpu: usize,
    pub load: u64,
    pub util: u64,
    pub allowed: CpuMask,
    pub exiting: bool,
    pub numa: TaskNuma,
}

/// One CPU of a [`FakeNumaEnv`].
#[derive(Clone, Debug, Default)]
pub struct FakeNumaCpu {
    pub queued: Vec<TaskId>,
    pub curr: Option<TaskId>,
    pub other_class_running: u32,
    pub capacity: u64,
    pub numa_migrate_on: bool,
}

/// A constructed NUMA machine state.
#[derive(Clone, Debug)]
pub struct FakeNumaEnv {
    pub topo: NumaTopo,
    pub cpus: Vec<FakeNumaCpu>,
    pub tasks: BTreeMap<TaskId, FakeNumaTask>,
    pub groups: NumaGroups,
    /// `(sd_numa->imbalance_pct, imb_numa_nr)`.
    pub sd_numa: Option<(u32, u32)>,
    pub smt: bool,
    /// CPUs per SMT sibling group (1 = no SMT).
    pub smt_weight: u32,
    next_id: u32,
}

impl FakeNumaEnv {
    /// `nodes` nodes of `cpus_per_node` CPUs (numbered node by node), capacity 1024 each,
    /// with the given SLIT table; SD_NUMA `imbalance_pct` 125 (the v3.x/v4.x value, env
    /// 112) and `imb_numa_nr` 2.
    pub fn new(distance: Vec<Vec<u32>>, cpus_per_node: usize) -> FakeNumaEnv {
        let nodes = distance.len();
        let cpu_node: Vec<usize> = (0..nodes * cpus_per_node)
            .map(|c| c / cpus_per_node)
            .collect();
        let n = cpu_node.len();
        FakeNumaEnv {
            topo: NumaTopo::new(distance, cpu_node),
            cpus: (0..n)
                .map(|_| FakeNumaCpu {
                    capacity: 1024,
                    ..FakeNumaCpu::default()
                })
                .collect(),
            tasks: BTreeMap::new(),
            groups: NumaGroups::default(),
            sd_numa: Some((125, 2)),
            smt: false,
            smt_weight: 1,
            next_id: 0,
        }
    }

    /// Two nodes at distance 21 (a 2-socket box).
    pub fn two_nodes(cpus_per_node: usize) -> FakeNumaEnv {
        FakeNumaEnv::new(vec![vec![10, 21], vec![21, 10]], cpus_per_node)
    }

    /// Queue a task of load (= util) `load` on `cpu`, with its own mm and no NUMA
    /// statistics. `running` makes it the CPU's current task.
    pub fn add_task(&mut self, cpu: usize, load: u64, running: bool) -> TaskId {
        let id = TaskId(self.next_id);
        self.next_id += 1;
        self.tasks.insert(
            id,
            FakeNumaTask {
                cpu,
                load,
                util: load,
                allowed: CpuMask::first_n(self.cpus.len()),
                exiting: false,
                numa: TaskNuma::new(1000 + id.0, Some(MmId(id.0)), 1000),
            },
        );
        self.cpus[cpu].queued.push(id);
        if running {
            self.cpus[cpu].curr = Some(id);
        }
        id
    }

    pub fn task_mut(&mut self, p: TaskId) -> &mut FakeNumaTask {
        self.tasks.get_mut(&p).expect("known task")
    }

    /// Give `p` decayed private memory faults per node (`mem[n]`), CPU faults the same, a
    /// matching total, and `preferred` as its preferred node.
    pub fn set_faults(&mut self, p: TaskId, mem: &[i64], preferred: Option<usize>) {
        let nr = self.topo.nr_nodes();
        let t = &mut self.task_mut(p).numa;
        let mut f = NumaFaults::new(nr);
        for (n, &m) in mem.iter().enumerate() {
            f.add(NumaFaultsStats::Mem, n, true, m);
            f.add(NumaFaultsStats::Cpu, n, true, m);
        }
        t.total_numa_faults = mem.iter().sum();
        t.faults = Some(f);
        t.preferred_nid = preferred;
    }

    /// Put the given tasks into one new group whose statistics are the sum of theirs, with
    /// active nodes counted (v4.6+ form) and the 3.x mask set to the same nodes.
    pub fn group_tasks(&mut self, members: &[TaskId]) -> NumaGroupId {
        let nr = self.topo.nr_nodes();
        let id = NumaGroupId(self.groups.groups.len());
        let mut g = NumaGroup {
            gid: self.tasks[&members[0]].numa.pid,
            nr_tasks: u32::try_from(members.len()).expect("group size beyond the task limit"),
            nr_nodes: nr,
            faults: vec![0; 2 * nr * 2],
            total_faults: 0,
            max_faults_cpu: 0,
            active_nodes: 0,
            active_mask: 0,
        };
        for &m in members {
            let t = &mut self.tasks.get_mut(&m).expect("known").numa;
            if let Some(f) = &t.faults {
                for i in 0..2 * nr * 2 {
                    g.faults[i] += f.v[i];
                }
            }
            g.total_faults += t.total_numa_faults;
            t.group = Some(id);
        }
        g.count_active_nodes();
        g.active_mask = (0..nr)
            .filter(|&n| {
                g.group_faults_cpu(n) * super::group::ACTIVE_NODE_FRACTION > g.max_faults_cpu
            })
            .fold(0, |m, n| m | (1 << n));
        self.groups.groups.push(g);
        id
    }
}

impl NumaEnv for FakeNumaEnv {
    fn topo(&self) -> &NumaTopo {
        &self.topo
    }
    fn nr_running(&self, cpu: usize) -> u32 {
        u32::try_from(self.cpus[cpu].queued.len()).expect("nr_running beyond the task limit")
            + self.cpus[cpu].other_class_running
    }
    fn h_nr_running(&self, cpu: usize) -> u32 {
        u32::try_from(self.cpus[cpu].queued.len()).expect("nr_running beyond the task limit")
    }
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.cpus[cpu]
            .queued
            .iter()
            .map(|t| self.tasks[t].load)
            .sum()
    }
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cpu_load(cpu)
    }
    fn cpu_util(&self, cpu: usize) -> u64 {
        let u: u64 = self.cpus[cpu]
            .queued
            .iter()
            .map(|t| self.tasks[t].util)
            .sum();
        u.min(self.cpus[cpu].capacity)
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.cpus[cpu].capacity
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.nr_running(cpu) == 0
    }
    fn smt_present(&self) -> bool {
        self.smt
    }
    fn smt_weight(&self, _cpu: usize) -> u32 {
        self.smt_weight
    }
    fn curr(&self, cpu: usize) -> Option<TaskId> {
        self.cpus[cpu].curr
    }
    fn numa_migrate_on(&self, cpu: usize) -> bool {
        self.cpus[cpu].numa_migrate_on
    }
    fn sd_numa(&self, _cpu: usize) -> Option<(u32, u32)> {
        self.sd_numa
    }
    fn task_cpu(&self, p: TaskId) -> usize {
        self.tasks[&p].cpu
    }
    fn cpus_allowed(&self, p: TaskId) -> &CpuMask {
        &self.tasks[&p].allowed
    }
    fn task_h_load(&self, p: TaskId) -> u64 {
        self.tasks[&p].load
    }
    fn task_numa(&self, p: TaskId) -> &TaskNuma {
        &self.tasks[&p].numa
    }
    fn numa_group(&self, g: NumaGroupId) -> &NumaGroup {
        self.groups.get(g)
    }
    fn is_exiting(&self, p: TaskId) -> bool {
        self.tasks[&p].exiting
    }
}
