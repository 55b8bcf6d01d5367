//! The classes above fair in the Linux policy: the RT class ([`crate::sched::rt`]) and the
//! fair deadline server ([`crate::sched::dl_server`]), with what [`super::linux_fair`]
//! needs to order them (`__pick_next_task`: stop > DL (the fair server) > RT > fair >
//! idle), to place RT tasks (`select_task_rq_rt` / `find_lowest_rq`), to account their
//! runtime (`update_curr_rt`, `dl_server_update`) and to run their timers
//! (`do_sched_rt_period_timer`, `dl_server_timer`).
//!
//! Approximations (with reasons):
//! - Runtime is accounted with the engine's clock at the scheduling points the kernel
//!   uses (tick, dequeue, pick, yield); RT throttling and the server's runtime limit are
//!   therefore enforced at tick granularity, as in the kernel without HRTICK_DL.
//! - `avg_rt` is kept on the task clock, not `rq_clock_pelt` (identical on full-capacity
//!   CPUs; on smaller CPUs RT utilisation reads slightly high).
//! - `capacity_of()` = `scale_rt_capacity()` is evaluated when asked, from `avg_rt` as of
//!   its last update, instead of being cached by `update_cpu_capacity()` at balance time.
//! - The RT period timer handles every CPU in one expiry (as the kernel's global timer
//!   does) and reschedules the unthrottled ones by IPI.

use super::{Actions, CoreView};
use crate::cpumask::CpuMask;
use crate::domains::{SchedDomains, SdFlags};
use crate::sched::dl_server::{DlServerParams, FairServer};
use crate::sched::pelt::SCHED_CAPACITY_SHIFT;
use crate::sched::rt::{RtBandwidth, RtEntity, RtRq, convert_prio};
use crate::task::{TaskId, TaskPolicy};

/// RT runqueues, RT entities, RT bandwidth and the per-CPU fair servers.
#[derive(Debug, Clone)]
pub struct RtClass {
    pub rqs: Vec<RtRq>,
    /// Per task (indexed by task id); only meaningful where `is_rt`.
    ents: Vec<RtEntity>,
    is_rt: Vec<bool>,
    pub bw: RtBandwidth,
    /// `sched_rr_timeslice` in ticks.
    rr_timeslice_ticks: u32,
    pub servers: Vec<FairServer>,
    pub server_params: DlServerParams,
    /// Per CPU: when the current task's runtime was last accounted.
    acct_ns: Vec<u64>,
    /// `distribute_cpu_mask_prev` per CPU (`cpumask_any_and_distribute`'s rotor).
    distribute_prev: Vec<usize>,
    /// CPUs whose policy timer may have changed.
    timer_dirty: Vec<usize>,
    /// IRQ/steal share of each CPU that `scale_rt_capacity()` removes from the capacity
    /// (`[machine.cost] nontask_pct`; all zero with NO_NONTASK_CAPACITY, when the kernel does
    /// not track `avg_irq`). Empty = none.
    pub irq_pct: Vec<u32>,
}

/// Settings of the RT class and the fair server for one run.
#[derive(Debug, Clone, Copy)]
pub struct RtConfig {
    pub nr_cpus: usize,
    /// Default RT bandwidth control (kernels before v6.12).
    pub throttling: bool,
    pub rt_runtime_ns: u64,
    pub rt_period_ns: u64,
    pub rr_timeslice_ms: u64,
    pub hz: u32,
    pub server: DlServerParams,
}

impl RtClass {
    pub fn new(c: RtConfig) -> RtClass {
        RtClass {
            rqs: vec![RtRq::default(); c.nr_cpus],
            ents: Vec::new(),
            is_rt: Vec::new(),
            bw: RtBandwidth {
                on: c.throttling,
                runtime_ns: c.rt_runtime_ns,
                period_ns: c.rt_period_ns,
                timer: None,
            },
            // RR_TIMESLICE = 100 * HZ / 1000 jiffies (at least one). A slice beyond u32::MAX
            // ticks (the sysctl allows it) saturates: it is never reached either way.
            rr_timeslice_ticks: u32::try_from((c.rr_timeslice_ms * u64::from(c.hz)) / 1000)
                .unwrap_or(u32::MAX)
                .max(1),
            servers: vec![FairServer::default(); c.nr_cpus],
            server_params: c.server,
            acct_ns: vec![0; c.nr_cpus],
            distribute_prev: vec![0; c.nr_cpus],
            timer_dirty: Vec::new(),
            irq_pct: Vec::new(),
        }
    }

    /// `sched_fork()`: record the task's class. Returns whether it is RT.
    pub fn task_fork(&mut self, p: TaskId, policy: TaskPolicy) -> bool {
        if self.ents.len() <= p.idx() {
            self.ents.resize(p.idx() + 1, RtEntity::default());
            self.is_rt.resize(p.idx() + 1, false);
        }
        let (rt, ent) = match policy {
            TaskPolicy::Fifo { rt_priority } => (
                true,
                RtEntity::new(rt_priority, false, self.rr_timeslice_ticks),
            ),
            TaskPolicy::Rr { rt_priority } => (
                true,
                RtEntity::new(rt_priority, true, self.rr_timeslice_ticks),
            ),
            _ => (false, RtEntity::default()),
        };
        self.is_rt[p.idx()] = rt;
        self.ents[p.idx()] = ent;
        rt
    }

    /// `rt_task(p)`.
    pub fn is_rt(&self, p: TaskId) -> bool {
        self.is_rt.get(p.idx()).copied().unwrap_or(false)
    }

    pub fn ent(&self, p: TaskId) -> &RtEntity {
        &self.ents[p.idx()]
    }

    /// `cpu`'s current task is RT.
    pub fn curr_is_rt(&self, core: &dyn CoreView, cpu: usize) -> bool {
        core.cpu_curr(cpu).is_some_and(|c| self.is_rt(c))
    }

    /// `enqueue_task_rt()` at the tail; starts the RT period timer (`inc_rt_group`).
    pub fn enqueue(&mut self, now_ns: u64, cpu: usize, p: TaskId) {
        let e = &mut self.ents[p.idx()];
        e.on_rq = true;
        let prio = e.prio;
        self.rqs[cpu].enqueue(p.0, prio, false);
        if self.bw.enabled() && self.bw.timer.is_none() {
            self.bw.start(now_ns, cpu);
            self.timer_dirty.push(cpu);
        }
    }

    /// `dequeue_task_rt()`.
    pub fn dequeue(&mut self, cpu: usize, p: TaskId) {
        let e = &mut self.ents[p.idx()];
        if e.on_rq {
            e.on_rq = false;
            let prio = e.prio;
            self.rqs[cpu].dequeue(p.0, prio);
        }
    }

    /// `pick_task_rt()`: nothing while the RT runqueue is throttled.
    pub fn pick(&self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        if rq.rt_throttled {
            return None;
        }
        rq.pick_first().map(TaskId)
    }

    /// `yield_task_rt()`: to the tail of its priority list.
    pub fn yield_task(&mut self, cpu: usize, p: TaskId) {
        let prio = self.ents[p.idx()].prio;
        self.rqs[cpu].requeue(p.0, prio, false);
    }

    /// The SCHED_RR part of `task_tick_rt()`: one tick off the slice; at expiry a full
    /// slice again, and the task goes to the tail only when a peer of its priority waits.
    pub fn task_tick_rr(&mut self, cpu: usize, p: TaskId) -> bool {
        let ticks = self.rr_timeslice_ticks;
        let e = &mut self.ents[p.idx()];
        if !e.rr {
            return false;
        }
        e.time_slice_ticks = e.time_slice_ticks.saturating_sub(1);
        if e.time_slice_ticks > 0 {
            return false;
        }
        e.time_slice_ticks = ticks;
        let prio = e.prio;
        if self.rqs[cpu].has_peer(prio) {
            self.rqs[cpu].requeue(p.0, prio, false);
            return true;
        }
        false
    }

    /// `wakeup_preempt()` when `p` or `cpu`'s current task is RT (`None` when both are
    /// fair): a higher class always reschedules (even a fair task the dl_server runs: the
    /// re-pick then keeps it), RT against RT by priority, fair never preempts RT.
    pub fn wakeup_preempt(&self, core: &dyn CoreView, cpu: usize, p: TaskId) -> Option<bool> {
        let curr = core.cpu_curr(cpu)?;
        match (self.is_rt(p), self.is_rt(curr)) {
            (true, false) => Some(true),
            (true, true) => Some(self.ents[p.idx()].prio < self.ents[curr.idx()].prio),
            (false, true) => Some(false),
            (false, false) => None,
        }
    }

    /// Runtime of `cpu`'s current task since the last accounting (`update_curr()` of its
    /// class): returns `(delta_ns, curr is RT)` after charging RT time, `avg_rt` and the
    /// RT bandwidth. The caller feeds a fair delta to the dl_server.
    /// `curr` is `cpu`'s current task as the engine sees it.
    pub fn account(&mut self, now: u64, cpu: usize, curr: Option<TaskId>) -> (u64, bool, bool) {
        let delta = now.saturating_sub(self.acct_ns[cpu]);
        self.acct_ns[cpu] = now;
        let rt_running = curr.is_some_and(|c| self.is_rt(c));
        self.rqs[cpu].update_rt_rq_load_avg(now, rt_running);
        let mut throttled = false;
        if rt_running {
            let was = self.rqs[cpu].rt_throttled;
            throttled = self.rqs[cpu].account_rt_time(delta, &self.bw) && !was;
        }
        (delta, rt_running, throttled)
    }

    /// `dl_server_update()` for `delta_ns` of fair runtime on `cpu` (scaled by capacity,
    /// `dl_scaled_delta_exec`). True: the server throttled while running (reschedule).
    pub fn server_update(&mut self, now_ns: u64, cpu: usize, delta_ns: u64, cap: u64) -> bool {
        let scaled = (delta_ns * cap) >> SCHED_CAPACITY_SHIFT;
        let before = self.servers[cpu].timer_ns;
        let r = self.servers[cpu].update(&self.server_params, now_ns, scaled);
        if self.servers[cpu].timer_ns != before {
            self.timer_dirty.push(cpu);
        }
        r
    }

    /// The fair queue of `cpu` went 0 → 1: start the server; returns the work.
    pub fn server_start(&mut self, now_ns: u64, cpu: usize, idle_since: Option<u64>) -> u64 {
        self.timer_dirty.push(cpu);
        self.servers[cpu].start(&self.server_params, now_ns, idle_since)
    }

    /// The fair queue of `cpu` went 1 → 0; returns the work.
    pub fn server_fair_empty(&mut self, now_ns: u64, cpu: usize) -> u64 {
        self.timer_dirty.push(cpu);
        self.servers[cpu].fair_queue_empty(&self.server_params, now_ns)
    }

    /// The running server found no fair task to run.
    pub fn server_yield(&mut self, now_ns: u64, cpu: usize) {
        self.timer_dirty.push(cpu);
        self.servers[cpu].yield_empty(&self.server_params, now_ns);
    }

    /// `scale_rt_capacity()`: the capacity left to the fair class after RT (`avg_rt`) and,
    /// by `scale_irq_capacity()`, after IRQ/steal time ([`RtClass::irq_pct`], a constant
    /// share standing in for `avg_irq`).
    pub fn capacity_of(&self, cpu: usize, capacity_orig: u64) -> u64 {
        let free = capacity_orig.saturating_sub(self.rqs[cpu].avg_rt.util_avg);
        let irq_pct = u64::from(self.irq_pct.get(cpu).copied().unwrap_or(0));
        (free * (100 - irq_pct) / 100).max(1)
    }

    pub fn take_timer_changes(&mut self, out: &mut Vec<usize>) {
        if !self.timer_dirty.is_empty() {
            out.append(&mut self.timer_dirty);
        }
    }

    /// Earliest of the fair server's timer and (if pinned here) the RT period timer.
    pub fn next_timer_ns(&self, cpu: usize) -> Option<u64> {
        let rt = self.bw.timer.filter(|&(_, c)| c == cpu).map(|(at, _)| at);
        match (self.servers[cpu].timer_ns, rt) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Policy timers on `cpu` expired: the fair server's `dl_server_timer()` (a server
    /// that starts running preempts RT here) and the RT period timer.
    pub fn timer_expired(
        &mut self,
        core: &dyn CoreView,
        cpu: usize,
        fair_nr: u32,
        act: &mut Actions,
    ) {
        let now = core.now_ns();
        self.timer_dirty.push(cpu);
        if self.servers[cpu].timer_ns.is_some_and(|t| t <= now)
            && self.servers[cpu].timer(&self.server_params, now, fair_nr > 0)
        {
            act.resched.push(cpu);
        }
        if let Some((at, tcpu)) = self.bw.timer
            && tcpu == cpu
            && at <= now
        {
            self.sched_rt_period_timer(core, at, cpu, act);
        }
    }

    /// `sched_rt_period_timer()` → `do_sched_rt_period_timer()` over every online CPU;
    /// the timer stops when no CPU has RT time or RT tasks left.
    fn sched_rt_period_timer(
        &mut self,
        core: &dyn CoreView,
        at: u64,
        cpu: usize,
        act: &mut Actions,
    ) {
        let (overrun, next) = self.bw.forward(at, core.now_ns());
        let mut busy = false;
        for c in core.machine().online.iter() {
            let (unthrottled, b) = self.rqs[c].period_refill(overrun, &self.bw);
            busy |= b;
            if unthrottled {
                act.resched.push(c);
            }
        }
        self.bw.timer = busy.then_some((next, cpu));
    }

    /// `select_task_rq_rt()`: stay on `prev_cpu` unless an RT task of at least `p`'s
    /// priority (or one that cannot move) runs there and `find_lowest_rq()` finds a CPU
    /// whose highest RT priority is below `p`'s.
    pub fn select_task_rq_rt(
        &mut self,
        core: &dyn CoreView,
        domains: &SchedDomains,
        p: TaskId,
        prev_cpu: usize,
        this_cpu: usize,
    ) -> usize {
        let prio = self.ents[p.idx()].prio;
        let test = core.cpu_curr(prev_cpu).is_some_and(|c| {
            self.is_rt(c)
                && (core.task_cpus_allowed(c).weight() < 2 || self.ents[c.idx()].prio <= prio)
        });
        if !test {
            return prev_cpu;
        }
        match self.find_lowest_rq(core, domains, p, prev_cpu, this_cpu) {
            Some(t) if prio < self.rqs[t].highest_prio() => t,
            _ => prev_cpu,
        }
    }

    /// `cpupri_find()`: the allowed CPUs at the lowest cpupri level below `p`'s.
    fn cpupri_find(&self, core: &dyn CoreView, p: TaskId) -> CpuMask {
        let allowed = core.task_cpus_allowed(p).and(&core.machine().online);
        let task_pri = convert_prio(self.ents[p.idx()].prio);
        let mut best: Option<(u32, CpuMask)> = None;
        for c in allowed.iter() {
            let level = convert_prio(self.rqs[c].highest_prio());
            if level >= task_pri {
                continue;
            }
            match &mut best {
                Some((l, m)) if *l == level => m.set(c),
                Some((l, _)) if *l < level => {}
                _ => best = Some((level, CpuMask::single(c))),
            }
        }
        best.map(|(_, m)| m).unwrap_or_default()
    }

    /// `find_lowest_rq()`: among the lowest-priority CPUs prefer the task's own CPU, then
    /// this CPU when it shares a wake-affine domain, then the nearest domain's CPUs
    /// (`cpumask_any_and_distribute`, round-robin).
    pub fn find_lowest_rq(
        &mut self,
        core: &dyn CoreView,
        domains: &SchedDomains,
        p: TaskId,
        cpu: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        if core
            .task_cpus_allowed(p)
            .and(&core.machine().online)
            .weight()
            == 1
        {
            return None;
        }
        let lowest = self.cpupri_find(core, p);
        if lowest.is_empty() {
            return None;
        }
        if lowest.test(cpu) {
            return Some(cpu);
        }
        let this = lowest.test(this_cpu).then_some(this_cpu);
        for &sd in domains.cpu_domains(cpu) {
            let d = domains.domain(sd);
            if !d.flags.contains(SdFlags::SD_WAKE_AFFINE) {
                continue;
            }
            if let Some(t) = this.filter(|&t| d.span.test(t)) {
                return Some(t);
            }
            if let Some(best) = self.any_and_distribute(this_cpu, &lowest.and(&d.span)) {
                return Some(best);
            }
        }
        this.or_else(|| self.any_and_distribute(this_cpu, &lowest))
    }

    /// `cpumask_any_and_distribute()`: the next set CPU after this CPU's previous answer.
    fn any_and_distribute(&mut self, this_cpu: usize, mask: &CpuMask) -> Option<usize> {
        let prev = self.distribute_prev[this_cpu];
        let next = mask.iter_wrap(prev + 1).next()?;
        self.distribute_prev[this_cpu] = next;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(throttling: bool) -> RtClass {
        RtClass::new(RtConfig {
            nr_cpus: 2,
            throttling,
            rt_runtime_ns: 950_000_000,
            rt_period_ns: 1_000_000_000,
            rr_timeslice_ms: 100,
            hz: 250,
            server: DlServerParams {
                enabled: true,
                lazy_stop: false,
                runtime_ns: 50_000_000,
                period_ns: 1_000_000_000,
                start_cost_ns: 0,
                stop_cost_ns: 0,
            },
        })
    }

    #[test]
    fn rr_slice_is_100_ms_in_ticks_and_policies_map_to_classes() {
        let mut c = class(false);
        assert_eq!(c.rr_timeslice_ticks, 25, "100 ms at HZ=250");
        assert!(c.task_fork(TaskId(0), TaskPolicy::Rr { rt_priority: 10 }));
        assert!(c.task_fork(TaskId(1), TaskPolicy::Fifo { rt_priority: 99 }));
        assert!(!c.task_fork(TaskId(2), TaskPolicy::Batch));
        assert_eq!(c.ent(TaskId(1)).prio, 0);
        // Alone in its list, an RR task keeps running at expiry (no requeue).
        c.enqueue(0, 0, TaskId(0));
        for _ in 0..25 {
            assert!(!c.task_tick_rr(0, TaskId(0)));
        }
        assert_eq!(c.ent(TaskId(0)).time_slice_ticks, 25, "refilled");
        // The RT period timer is started only with throttling.
        assert_eq!(c.bw.timer, None);
        let mut t = class(true);
        t.task_fork(TaskId(0), TaskPolicy::Fifo { rt_priority: 1 });
        t.enqueue(5, 1, TaskId(0));
        assert_eq!(t.next_timer_ns(1), Some(5));
        assert_eq!(t.next_timer_ns(0), None);
    }

    #[test]
    fn rt_time_takes_capacity_from_fair() {
        let mut c = class(false);
        c.rqs[0].update_rt_rq_load_avg(0, false);
        c.rqs[0].update_rt_rq_load_avg(2_000_000_000, true);
        // scale_rt_capacity(): what RT used is gone for CFS, never below 1.
        let cap = c.capacity_of(0, 1024);
        assert!((1..=24).contains(&cap), "capacity {cap}");
        assert_eq!(c.capacity_of(1, 1024), 1024);
    }
}
