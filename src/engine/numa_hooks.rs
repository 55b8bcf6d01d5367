//! The NUMA-balancing hooks of the event loop ([`super::numa`] holds the memory model):
//! first touch, the speed a placement and the node congestion give, and NUMA balancing
//! through the policy's state ([`crate::policy::numa_balancing::NumaBalancing`]): the engine
//! reports a memory-model task's tick (`task_tick_numa()` / `task_numa_work()`) and its
//! sampled hinting faults, asks `task_numa_migrate()` when a fault wants it, has the
//! decision taken and applies its move through the migration stopper
//! (`migrate_task_to()` / `migrate_swap_stop()`); and it counts the moves and the node
//! ping-pongs. Only `sched::types` of the scheduler is named here.

use super::Engine;
use super::numa::{
    EngineNuma, NR_REASONS, NumaMoveCounts, PendingNumaMove, SCAN_BASE_NS, SCAN_GROUP_NS,
    sample_faults,
};
use crate::kconfig::ResolvedKernel;
use crate::memory::policy::alloc_node;
use crate::policy::numa_balancing::{NumaConfig, NumaTickFacts};
use crate::sched::types::{MigrationReason, NumaMigrateDecision, NumaMove};
use crate::task::{TaskId, TaskState};
use crate::units::{node_u16, ppm_round};

impl Engine {
    /// Configure NUMA balancing from the resolved kernel (a run without memory-model tasks
    /// ignores it).
    pub fn set_numa_kernel(&mut self, kernel: &ResolvedKernel) {
        self.set_numa(NumaConfig::from_kernel(kernel, &self.machine));
    }

    /// Configure NUMA balancing directly (`cfg.run` = `None` keeps it off): the policy's
    /// NUMA-balancing state, at this engine's HZ.
    pub fn set_numa(&mut self, cfg: NumaConfig) {
        let hz = self.cfg.hz;
        if let Some(nb) = self.policy.numa_balancing_mut() {
            nb.configure(cfg, hz);
        }
    }

    /// The run's memory model and NUMA move counters, if any task has a working set (the
    /// balancing state is the policy's: `policy().numa_balancing()`).
    pub fn numa(&self) -> Option<&EngineNuma> {
        self.numa.as_deref()
    }

    /// Mutable memory model, for tests that construct a state (placement of pages, faults).
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
        let ts = n.time_scale(p, self.machine.cpus[cpu].node, &self.machine)?;
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
            changed |= n.solve_congestion(&running, &self.machine);
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
        let preferred = |e: &Engine| e.policy.numa_balancing()?.preferred_nid(p);
        let before = preferred(self);
        let mv = self.numa_tick_work(cpu, p);
        if let Some(nid) = preferred(self).filter(|&nid| Some(nid) != before) {
            self.policy.numa_preferred_nid_changed(p, nid);
        }
        mv
    }

    fn numa_tick_work(&mut self, cpu: usize, p: TaskId) -> Option<PendingNumaMove> {
        let balancing = self.policy.numa_balancing()?.balancing();
        if !balancing || self.numa.as_deref()?.task_mem(p).is_none() {
            return None;
        }
        let mut n = self.numa.take()?;
        let now = self.clock.now();
        let t = &self.tasks[p.idx()];
        let facts = NumaTickFacts {
            p,
            cpu,
            sum_exec_runtime_ns: n.runtime_base_ns[p.idx()]
                + t.stats.counters.sum_exec_runtime_ns
                + now.saturating_sub(t.exec_start_ns),
            now_ns: now,
            policy: t.mempolicy,
            scan_base_ns: SCAN_BASE_NS,
            scan_group_ns: SCAN_GROUP_NS,
        };
        let mm = n.tm[p.idx()].as_ref().expect("checked").mm.0 as usize;
        let mut currs = std::mem::take(&mut n.curr_buf_tasks);
        currs.clear();
        currs.extend(self.cpus.iter().map(|c| c.curr));
        let nb = self.policy.numa_balancing_mut().expect("checked");
        let cost = nb.task_tick(&mut n.mms[mm], &facts, &currs).unwrap_or(0);
        n.curr_buf_tasks = currs;
        let batch = sample_faults(&mut n, nb, p, facts.sum_exec_runtime_ns);
        if batch.placement_changed {
            let nid = nb.preferred_nid(p).flatten();
            n.record_placement(now, p, mm, nid);
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

    /// A `task_numa_migrate()` decision: the policy's NUMA balancing takes it
    /// (`sched_setnuma()`, scan-period reset, the rq claim); the engine counts a stick and
    /// returns a move for after the tick.
    pub(super) fn numa_decided(
        &mut self,
        p: TaskId,
        d: &NumaMigrateDecision,
    ) -> Option<PendingNumaMove> {
        let n = self.numa.as_deref_mut()?;
        let rss = n.mms[n.task_mem(p)?.mm.0 as usize].rss_pages();
        self.policy.numa_balancing_mut()?.take_decision(p, d, rss);
        match d.action {
            NumaMove::Move { .. } | NumaMove::Swap { .. } => Some(PendingNumaMove {
                p,
                action: d.action,
                claimed: d.claimed_cpu,
            }),
            NumaMove::Stay | NumaMove::NoNumaDomain => {
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
        if let Some(c) = mv.claimed
            && let Some(nb) = self.policy.numa_balancing_mut()
        {
            nb.set_numa_migrate_on(c, false);
        }
    }

    fn numa_apply_claimed(&mut self, cpu: usize, mv: PendingNumaMove) {
        let PendingNumaMove { p, action, .. } = mv;
        let t = &self.tasks[p.idx()];
        let queued = matches!(t.state, TaskState::Running | TaskState::Runnable);
        let ok = |dst: usize| queued && t.cpu == cpu && t.cpus_allowed.test(dst) && dst != cpu;
        match action {
            NumaMove::Move { dst_cpu } if ok(dst_cpu) => {
                self.count_numa(|n| n.moves.numa_move += 1);
                if let Some(nb) = self.policy.numa_balancing_mut() {
                    nb.vmstat_mut().numa_task_migrated += 1;
                }
                self.migration_cpu_stop(cpu, p, dst_cpu, MigrationReason::Numa);
            }
            NumaMove::Swap { dst_cpu, other } if ok(dst_cpu) => {
                let o = &self.tasks[other.idx()];
                if o.cpu != dst_cpu || !o.cpus_allowed.test(cpu) {
                    self.count_numa(|n| n.moves.numa_move_fail += 1);
                    return;
                }
                self.count_numa(|n| n.moves.numa_swap += 1);
                if let Some(nb) = self.policy.numa_balancing_mut() {
                    nb.vmstat_mut().numa_task_swapped += 1;
                }
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
        if let Some(nb) = self.policy.numa_balancing_mut() {
            *nb.vmstat_mut() = Default::default();
        }
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
    ///
    /// [`NodePingPong`]: super::numa::NodePingPong
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

    /// `p->wake_cpu` as a pending swap left it (see `Engine::numa_take_wake_cpu`).
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
