//! The NUMA-balancing hooks of the event loop ([`super::numa`] holds the runtime state and
//! its model): first touch, the speed a placement and the node congestion give, the tick's
//! `task_tick_numa()` / `task_numa_work()` with sampled hinting faults, `task_numa_migrate()`
//! decisions applied through the migration stopper (`migrate_swap_stop()`), and the node
//! ping-pong counts.

use super::Engine;
use super::numa::{
    EngineNuma, NR_REASONS, NumaMoveCounts, NumaRun, PendingNumaMove, SCAN_BASE_NS, SCAN_GROUP_NS,
    numa_run, sample_faults, scan_ms_u32, scan_params,
};
use crate::kconfig::ResolvedKernel;
use crate::memory::policy::{alloc_node, vma_policy_mof};
use crate::sched::numa::migrate::{NumaMigrateDecision, NumaMove};
use crate::sched::numa::scan::{ScanParams, task_scan_max, task_scan_min};
use crate::sched::numa::state::{FaultSite, TickSite};
use crate::sched::types::MigrationReason;
use crate::task::{TaskId, TaskState};
use crate::units::{node_u16, ppm_round};

impl Engine {
    /// Configure NUMA balancing from the resolved kernel (a run without memory-model tasks
    /// ignores it).
    pub fn set_numa_kernel(&mut self, kernel: &ResolvedKernel) {
        let run = numa_run(kernel, &self.machine);
        let params = scan_params(kernel);
        self.set_numa(run, params);
    }

    /// Configure NUMA balancing directly: `run` = `None` keeps it off.
    pub fn set_numa(&mut self, run: Option<NumaRun>, params: ScanParams) {
        let hz = self.cfg.hz;
        if let Some(n) = self.numa.as_deref_mut() {
            n.set_kernel(run, params, hz);
        }
    }

    /// The run's NUMA state (memory model, balancing state, counters), if any task has a
    /// working set.
    pub fn numa(&self) -> Option<&EngineNuma> {
        self.numa.as_deref()
    }

    /// Mutable NUMA state, for tests that construct a state (placement of pages, faults).
    pub fn numa_mut(&mut self) -> Option<&mut EngineNuma> {
        self.numa.as_deref_mut()
    }

    /// First run of memory-model task `p` on `cpu`: it touches its private region and
    /// whatever of its process's shared region no thread touched yet, under its memory
    /// policy (`alloc_node()`; interleave by group index).
    pub(crate) fn numa_first_touch(&mut self, cpu: usize, p: TaskId) {
        let Some(n) = self.numa.as_deref_mut() else {
            return;
        };
        let Some(tm) = n.tm[p.idx()].as_mut() else {
            return;
        };
        if tm.touched {
            return;
        }
        tm.touched = true;
        let node = self.machine.cpus[cpu].node;
        let policy = self.tasks[p.idx()].mempolicy;
        let mm = &mut n.mms[tm.mm.0 as usize];
        for r in [Some(tm.private_region), tm.shared_region]
            .into_iter()
            .flatten()
        {
            let (first, len) = (mm.regions[r].first, mm.regions[r].len);
            let mut object = mm.regions[r].object.map(|o| &mut n.shm[o as usize]);
            for g in first..first + len {
                let off = g - first;
                // A shared object's page another process touched first is already placed.
                let placed = object.as_deref().and_then(|o| o.nid[off]);
                let nid = placed.map(usize::from).unwrap_or_else(|| {
                    alloc_node(policy, node, off as u64, &self.machine.node_distance)
                });
                mm.touch(g, nid);
                if let Some(o) = object.as_deref_mut() {
                    o.nid[off] = Some(node_u16(nid));
                }
            }
        }
    }

    /// `speed` of `cpu`'s current task scaled by the memory model, when it is a
    /// memory-model task.
    pub(crate) fn numa_scaled_speed(&self, cpu: usize, speed: u64) -> Option<u64> {
        let n = self.numa.as_deref()?;
        let p = self.cpus[cpu].curr?;
        let ts = n.time_scale(p, self.machine.cpus[cpu].node)?;
        Some(crate::cost::mem_scaled_speed(
            speed,
            ppm_round(ts * 1_000_000.0),
        ))
    }

    /// A task left or joined the running set: when it is bandwidth-bound, re-solve the
    /// node congestion and re-rate every running memory-model task.
    pub(crate) fn numa_running_changed(&mut self, a: Option<TaskId>, b: Option<TaskId>) {
        let Some(n) = self.numa.as_deref() else {
            return;
        };
        let bw = |p: Option<TaskId>| {
            p.and_then(|p| n.task_mem(p))
                .is_some_and(|tm| tm.bw_mb_s > 0.0)
        };
        if bw(a) || bw(b) {
            self.numa_refresh_speeds(true, false);
        }
    }

    /// Re-rate the running memory-model tasks (progress so far at the old speed): with
    /// `resolve` after re-solving the congestion (only if it changed, unless `always`);
    /// `always` after a page migration (the placement itself changed).
    pub(crate) fn numa_refresh_speeds(&mut self, resolve: bool, always: bool) {
        let Some(mut n) = self.numa.take() else {
            return;
        };
        let mut changed = always;
        if resolve {
            let mut running = std::mem::take(&mut n.curr_buf_tasks);
            running.clear();
            running.extend(self.cpus.iter().map(|c| c.curr));
            changed |= n.solve_congestion(&running);
            n.curr_buf_tasks = running;
        }
        self.numa = Some(n);
        if !changed {
            return;
        }
        for cpu in 0..self.cpus.len() {
            let Some(p) = self.cpus[cpu].curr else {
                continue;
            };
            if self.numa.as_deref().and_then(|n| n.task_mem(p)).is_none() {
                continue;
            }
            self.sync_progress(cpu);
            let speed = self.speed_of(cpu);
            if speed != self.cpus[cpu].speed {
                self.cpus[cpu].speed = speed;
                self.plan_continue(cpu);
            }
        }
    }

    /// NUMA balancing at `cpu`'s tick for its current task `p`: `task_tick_numa()` and,
    /// when due, `task_numa_work()` (run at once: the return to user space that follows the
    /// tick), then the hinting faults of the run time since the last tick and, when one
    /// asks for it, `task_numa_migrate()`. Returns the move to apply after the tick.
    /// A change of `p`'s preferred node (`sched_setnuma()`) is reported to the policy.
    pub(crate) fn numa_tick(&mut self, cpu: usize, p: TaskId) -> Option<PendingNumaMove> {
        let preferred = |e: &Engine| {
            e.numa
                .as_deref()
                .and_then(|n| n.sched.state.tasks.get(p.idx()))
                .map(|t| t.preferred_nid)
        };
        let before = preferred(self);
        let mv = self.numa_tick_work(cpu, p);
        if let Some(nid) = preferred(self).filter(|&nid| Some(nid) != before) {
            self.policy.numa_preferred_nid_changed(p, nid);
        }
        mv
    }

    fn numa_tick_work(&mut self, cpu: usize, p: TaskId) -> Option<PendingNumaMove> {
        let n = self.numa.as_deref()?;
        if !n.sched.balancing || n.task_mem(p).is_none() {
            return None;
        }
        let mut n = self.numa.take()?;
        let now = self.clock.now();
        let t = &self.tasks[p.idx()];
        let runtime = n.runtime_base_ns[p.idx()]
            + t.stats.counters.sum_exec_runtime_ns
            + now.saturating_sub(t.exec_start_ns);
        let (params, v, hz) = (n.params, n.sched.variant, n.hz);
        let tick_ns = 1_000_000_000 / u64::from(hz.max(1));
        let mm = n.tm[p.idx()].as_ref().expect("checked").mm.0 as usize;
        let site = TickSite {
            p,
            sum_exec_runtime_ns: runtime,
            now_ns: now,
            mof: vma_policy_mof(t.mempolicy),
            tick_ns,
        };
        let mut cost = 0;
        if let Some(w) = n.sched.state.tick(&mut n.mms[mm], &site, &params, &v)
            && w.ran
        {
            let c = SCAN_BASE_NS + w.groups_marked * SCAN_GROUP_NS;
            cost += c;
            n.sched.state.tasks[p.idx()].node_stamp_ns +=
                crate::sched::numa::scan::numa_work_overhead_stamp_ns(c);
        }
        n.set_rq_currs(self.cpus.iter().map(|c| c.curr));
        let rss = n.mms[mm].rss_pages();
        let ng = n.sched.state.tasks[p.idx()]
            .group
            .map(|g| n.sched.state.groups.get(g));
        let fsite = FaultSite {
            p,
            cpu,
            policy: t.mempolicy,
            writable: true,
            shared: false,
            // update_curr() ran in this tick: the kernel's se.exec_start is now.
            exec_start_ns: now,
            sum_exec_runtime_ns: runtime,
            scan_min_ms: task_scan_min(&params, rss),
            scan_max_ms: task_scan_max(&params, rss, ng, &v),
            now_ns: now,
            hz,
        };
        let batch = sample_faults(&mut n, p, runtime, &fsite);
        if batch.placement_changed {
            n.record_placement(now, p, mm);
        }
        self.numa = Some(n);
        self.charge(cpu, cost + batch.cost_ns);
        if batch.migrated {
            self.numa_refresh_speeds(true, true);
        }
        if !batch.attempt_migrate {
            return None;
        }
        let decision = policy!(self.task_numa_migrate(p))?;
        self.numa_decided(p, &decision)
    }

    /// The side effects of a `task_numa_migrate()` decision (`sched_setnuma()`, scan-period
    /// reset, the stick count); the move itself is returned for after the tick.
    pub(super) fn numa_decided(
        &mut self,
        p: TaskId,
        d: &NumaMigrateDecision,
    ) -> Option<PendingNumaMove> {
        let n = self.numa.as_deref_mut()?;
        let params = n.params;
        let rss = {
            let mm = n.sched.state.tasks[p.idx()].mm?;
            n.mms[mm.0 as usize].rss_pages()
        };
        let t = &mut n.sched.state.tasks[p.idx()];
        if let Some(nid) = d.set_preferred {
            t.preferred_nid = Some(nid);
        }
        match d.action {
            NumaMove::Move { .. } | NumaMove::Swap { .. } => {
                if d.reset_scan_period {
                    t.numa_scan_period_ms = scan_ms_u32(task_scan_min(&params, rss));
                }
                // task_numa_assign() took the claim; it is held until the stopper is done.
                if let Some(c) = d.claimed_cpu {
                    n.sched.state.set_numa_migrate_on(c, true);
                }
                Some(PendingNumaMove {
                    p,
                    action: d.action,
                    claimed: d.claimed_cpu,
                })
            }
            NumaMove::Stay | NumaMove::NoNumaDomain => {
                if let Some(c) = d.claimed_cpu {
                    n.sched.state.set_numa_migrate_on(c, false);
                }
                n.moves.numa_stick += 1;
                None
            }
        }
    }

    /// Apply a NUMA move decided at this tick: `migrate_task_to()` through `cpu`'s stopper
    /// (reason `numa`) or `migrate_swap()` stopping both CPUs (reason `numa_swap`; a
    /// sleeping partner only gets its `wake_cpu`). A task that moved meanwhile or lost the
    /// right to run on the target fails with `-EAGAIN`. Either way the decision's
    /// `numa_migrate_on` claim is released afterwards.
    pub(crate) fn numa_apply_move(&mut self, cpu: usize, mv: Option<PendingNumaMove>) {
        let Some(mv) = mv else {
            return;
        };
        self.numa_apply_claimed(cpu, mv);
        if let Some(c) = mv.claimed {
            self.count_numa(|n| n.sched.state.set_numa_migrate_on(c, false));
        }
    }

    fn numa_apply_claimed(&mut self, cpu: usize, mv: PendingNumaMove) {
        let PendingNumaMove { p, action, .. } = mv;
        let t = &self.tasks[p.idx()];
        let queued = matches!(t.state, TaskState::Running | TaskState::Runnable);
        let ok = |dst: usize| queued && t.cpu == cpu && t.cpus_allowed.test(dst) && dst != cpu;
        match action {
            NumaMove::Move { dst_cpu } if ok(dst_cpu) => {
                self.count_numa(|n| {
                    n.moves.numa_move += 1;
                    n.sched.state.vmstat.numa_task_migrated += 1;
                });
                self.migration_cpu_stop(cpu, p, dst_cpu, MigrationReason::Numa);
            }
            NumaMove::Swap { dst_cpu, other } if ok(dst_cpu) => {
                let o = &self.tasks[other.idx()];
                if o.cpu != dst_cpu || !o.cpus_allowed.test(cpu) {
                    self.count_numa(|n| n.moves.numa_move_fail += 1);
                    return;
                }
                self.count_numa(|n| {
                    n.moves.numa_swap += 1;
                    n.sched.state.vmstat.numa_task_swapped += 1;
                });
                self.migrate_swap(cpu, p, dst_cpu, other);
            }
            _ => self.count_numa(|n| n.moves.numa_move_fail += 1),
        }
    }

    /// `migrate_swap(p, other, dst, src)` → `migrate_swap_stop()`: the stoppers of both
    /// CPUs run; `p` (queued on `src`) and a queued `other` (on `dst`) trade places; a
    /// sleeping `other` stays on `dst` with `wake_cpu = src` (`__migrate_swap_task()`), so
    /// its next wakeup starts from `src`.
    fn migrate_swap(&mut self, src: usize, p: TaskId, dst: usize, other: TaskId) {
        let other_queued = matches!(
            self.tasks[other.idx()].state,
            TaskState::Running | TaskState::Runnable
        );
        let dst_busy = other_queued && self.cpus[dst].curr.is_some();
        self.charge(src, self.cost.context_switch_ns);
        self.stopper_preempt_curr(src);
        if dst_busy {
            self.charge(dst, self.cost.context_switch_ns);
            self.stopper_preempt_curr(dst);
        }
        let preempt = policy!(self.move_queued_task(p, src, dst));
        self.tasks[p.idx()].cpu = dst;
        self.count_migration(src, p, src, dst, MigrationReason::NumaSwap);
        if other_queued {
            policy!(self.move_queued_task(other, dst, src));
            self.tasks[other.idx()].cpu = src;
            self.count_migration(src, other, dst, src, MigrationReason::NumaSwap);
        } else {
            self.count_numa(|n| n.wake_cpu[other.idx()] = Some(src));
        }
        if dst_busy {
            self.schedule(dst);
            if self.cpus[dst].curr.is_none() {
                self.enter_idle(dst);
            }
        } else if preempt || self.cpus[dst].curr.is_none() {
            self.resched_curr(dst, src);
        }
        self.schedule(src);
        if self.cpus[src].curr.is_none() {
            self.enter_idle(src);
        }
    }

    /// End of warm-up: the counters the results report restart (vmstat, move counts,
    /// ping-pongs); the statistics that drive decisions do not. Called before the engine
    /// resets `TaskStats`, whose run time is kept as a base.
    pub(crate) fn numa_reset_counters(&mut self) {
        let Some(n) = self.numa.as_deref_mut() else {
            return;
        };
        let now = self.clock.now();
        for (t, base) in self.tasks.iter().zip(n.runtime_base_ns.iter_mut()) {
            *base += t.stats.counters.sum_exec_runtime_ns;
            if t.state == TaskState::Running {
                *base += now.saturating_sub(t.exec_start_ns);
            }
        }
        n.sched.state.vmstat = Default::default();
        n.moves = NumaMoveCounts::default();
        n.ping_pong.by_pair = [[0; NR_REASONS]; NR_REASONS];
        n.ping_pong.cycles_by_middle = [0; NR_REASONS];
    }

    pub(super) fn count_numa(&mut self, f: impl FnOnce(&mut EngineNuma)) {
        if let Some(n) = self.numa.as_deref_mut() {
            f(n);
        }
    }

    /// Every migration of a run with a memory model: cross-node moves feed the node-level
    /// ping-pong detector ([`NodePingPong`]).
    pub(crate) fn numa_record_move(
        &mut self,
        p: TaskId,
        from: usize,
        to: usize,
        reason: MigrationReason,
    ) {
        let Some(n) = self.numa.as_deref_mut() else {
            return;
        };
        // set_task_cpu(): wake_cpu = task_cpu again.
        if let Some(w) = n.wake_cpu.get_mut(p.idx()) {
            *w = None;
        }
        let (a, b) = (self.machine.cpus[from].node, self.machine.cpus[to].node);
        if a != b {
            n.ping_pong.record(p, self.clock.now(), a, b, reason);
        }
    }

    /// `p->wake_cpu` when a `migrate_swap()` set it while `p` slept (it differs from
    /// `task_cpu(p)`); the wakeup that reads it clears it.
    pub(crate) fn numa_take_wake_cpu(&mut self, p: TaskId) -> Option<usize> {
        self.numa.as_deref_mut()?.wake_cpu.get_mut(p.idx())?.take()
    }

    /// `p->wake_cpu` as a pending swap left it (see [`Engine::numa_take_wake_cpu`]).
    pub fn numa_wake_cpu(&self, p: TaskId) -> Option<usize> {
        self.numa
            .as_deref()?
            .wake_cpu
            .get(p.idx())
            .copied()
            .flatten()
    }

    /// Per-node page groups of every mm, summed (for the results).
    pub fn numa_groups_per_node(&self) -> Vec<u64> {
        let Some(n) = self.numa.as_deref() else {
            return Vec::new();
        };
        let mut out = vec![0; self.machine.nr_nodes()];
        for mm in &n.mms {
            for (o, g) in out.iter_mut().zip(&mm.groups_per_node) {
                *o += g;
            }
            // A shared object's pages count once (below), not once per mapping.
            for r in mm.regions.iter().filter(|r| r.object.is_some()) {
                for (o, g) in out.iter_mut().zip(&r.groups_per_node) {
                    *o -= g;
                }
            }
        }
        for obj in &n.shm {
            for nid in obj.nid.iter().flatten() {
                out[usize::from(*nid)] += 1;
            }
        }
        out
    }
}
