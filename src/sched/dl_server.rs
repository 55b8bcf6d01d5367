//! The fair deadline server (`rq->fair_server`, v6.12+; `kernel/sched/deadline.c`
//! `dl_server_*`, `update_curr_dl_se`, `dl_server_timer`, `replenish_dl_entity`,
//! `update_dl_entity`; `fair.c` `fair_server_init`) as a per-CPU state machine, in defer
//! mode, with the costs of starting and stopping it.
//!
//! States (the kernel's own state diagram, "Document dl_server", 2614069c5912):
//! - [`DlServerState::Inactive`] (A): not started;
//! - [`DlServerState::Armed`] (B/C, "zero-laxity wait"): throttled and `dl_defer_armed`, the
//!   timer set at `deadline - runtime`; fair runtime consumed in the background pushes the
//!   period forward, so while fair tasks get the CPU the server never runs;
//! - [`DlServerState::Running`] (D): enqueued as a DL entity, so it is picked before RT and
//!   runs fair tasks until its runtime is used;
//! - [`DlServerState::Throttled`] (E, "replenish wait"): runtime exhausted, the timer at the
//!   period end (`dl_next_period`). It is then replenished and runs again at once: after a
//!   starvation the server "will not 'defer' again" until fair runs in the background.
//!
//! Costs (kept from the start/stop cost model): `dl_server_start()` on a fair queue going
//! 0 → 1 and `dl_server_stop()` on 1 → 0 before v6.17; with DL_SERVER_LAZY_STOP (v6.17,
//! cccb45d7c429) the server stays active and is stopped only after about a whole period
//! without fair activity, so a wakeup-heavy CPU pays the pair once, not per idle spell.
//!
//! Approximations (with reasons):
//! - `dl_entity_overflow` is computed exactly, without the `DL_SCALE` (10-bit) truncation:
//!   the truncation changes the comparison only within ~1 µs of the boundary.
//! - The lazy stop keeps its time-based rule (no fair activity for a period) rather than
//!   the 6.17 two-step `dl_server_idle` flag at timer expiry; a timer expiring with no fair
//!   task parks the server ([`DlServerState::Inactive`]) while the cost model still counts
//!   it as active, and the next fair enqueue re-arms it at no cost — what the later fix
//!   "sched/deadline: Fix 'stuck' dl_server" (115135422562) makes the kernel do.
//! - `dl_defer_running` survives a stop, as in v6.12–v6.18 (cleared in `dl_server_stop`
//!   only later): after a starvation, a restarted server runs at once.
//! - 6.17's continuous idle-time accounting (`dl_server_update_idle`) is reduced to the
//!   6.12 charge of the idle spell at the 0 → 1 enqueue (`dl_server_update_idle_time`).
//! - The per-`update_curr` accounting work is not charged as scheduler cost.

// Lossy integer casts are refused here, as in engine, policy and stats (docs/architecture.md,
// "Numeric conversions").
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

/// `dl_server_min_res`: the defer timer is not forwarded by less than this.
pub const DL_SERVER_MIN_RES_NS: u64 = 1_000_000;

/// Configuration of every CPU's fair server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlServerParams {
    /// DL_SERVER: the server exists (v6.12+).
    pub enabled: bool,
    /// DL_SERVER_LAZY_STOP (v6.17+).
    pub lazy_stop: bool,
    /// `fair_server/cpuN/runtime`; 0 disables the server (no runtime, no cost).
    pub runtime_ns: u64,
    /// `fair_server/cpuN/period` (= deadline).
    pub period_ns: u64,
    /// Work of one `dl_server_start()` / `dl_server_stop()` (hrtimer start / cancel).
    pub start_cost_ns: u64,
    pub stop_cost_ns: u64,
}

impl DlServerParams {
    fn on(&self) -> bool {
        self.enabled && self.runtime_ns > 0
    }
}

/// Where the server is in its defer-mode state machine (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DlServerState {
    Inactive,
    Armed,
    Running,
    Throttled,
}

/// One CPU's `rq->fair_server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FairServer {
    pub state: DlServerState,
    /// `dl_se->runtime` (may go negative by a tick's overrun, repaid at replenishment).
    pub runtime_ns: i64,
    /// `dl_se->deadline` (absolute).
    pub deadline_ns: u64,
    /// `dl_defer_running`: the server ran because of starvation; it does not defer again.
    pub defer_running: bool,
    /// `dl_timer` expiry, when armed.
    pub timer_ns: Option<u64>,
    /// Cost model: `dl_server_active`, and the last fair activity (lazy stop).
    active: bool,
    last_fair_ns: u64,
    /// Times the server started running as a DL entity (starvation episodes).
    pub nr_runs: u64,
}

impl Default for FairServer {
    fn default() -> Self {
        FairServer {
            state: DlServerState::Inactive,
            runtime_ns: 0,
            deadline_ns: 0,
            defer_running: false,
            timer_ns: None,
            active: false,
            last_fair_ns: 0,
            nr_runs: 0,
        }
    }
}

impl FairServer {
    /// Picked before the RT class (`__pick_task_dl` finds it in the DL tree).
    pub fn running(&self) -> bool {
        self.state == DlServerState::Running
    }

    /// `enqueue_task_fair` with the root cfs going 0 → 1: charge the idle spell
    /// (`dl_server_update_idle_time`, when the rq was idle since `idle_since_ns`), then
    /// `dl_server_start()`. Returns the start work to charge.
    pub fn start(&mut self, p: &DlServerParams, now_ns: u64, idle_since_ns: Option<u64>) -> u64 {
        if !p.on() {
            return 0;
        }
        if let Some(since) = idle_since_ns {
            self.update_idle_time(now_ns.saturating_sub(since));
        }
        let mut cost = 0;
        if p.lazy_stop && self.active && now_ns.saturating_sub(self.last_fair_ns) >= p.period_ns {
            // The server's timer found a whole period without fair work and stopped it.
            self.stop();
        }
        self.last_fair_ns = now_ns;
        if !self.active {
            self.active = true;
            cost = p.start_cost_ns;
        }
        if self.state == DlServerState::Inactive {
            self.enqueue_wakeup(p, now_ns);
        }
        cost
    }

    /// The fair queue went 1 → 0: `dl_server_stop()` before v6.17; lazily later. Returns
    /// the stop work to charge.
    pub fn fair_queue_empty(&mut self, p: &DlServerParams, now_ns: u64) -> u64 {
        if !p.on() || !self.active {
            return 0;
        }
        self.last_fair_ns = now_ns;
        if p.lazy_stop {
            return 0;
        }
        self.stop();
        p.stop_cost_ns
    }

    /// `dl_server_stop()`: dequeue, cancel the timer (`dl_defer_running` survives).
    fn stop(&mut self) {
        self.active = false;
        self.state = DlServerState::Inactive;
        self.timer_ns = None;
    }

    /// `dl_server_update_idle_time()`: idle time counts as fair runtime of a deferred
    /// server (the fair class did not need the CPU), never below 0.
    fn update_idle_time(&mut self, idle_ns: u64) {
        if self.runtime_ns < 0 {
            return;
        }
        self.runtime_ns -= idle_ns as i64;
        if self.runtime_ns < 0 {
            self.defer_running = false;
            self.runtime_ns = 0;
        }
    }

    /// `replenish_dl_new_period()`: a fresh period from now; a deferred server not handling
    /// a starvation arms its zero-laxity timer.
    fn new_period(&mut self, p: &DlServerParams, now_ns: u64) {
        self.deadline_ns = now_ns + p.period_ns;
        self.runtime_ns = p.runtime_ns as i64;
    }

    /// `dl_entity_overflow()`: the remaining runtime over the time to the deadline exceeds
    /// the reserved bandwidth (runtime / period).
    fn overflow(&self, p: &DlServerParams, now_ns: u64) -> bool {
        let left = p.period_ns as i128 * self.runtime_ns as i128;
        let right = (self.deadline_ns as i128 - now_ns as i128) * p.runtime_ns as i128;
        right < left
    }

    /// `enqueue_dl_entity(ENQUEUE_WAKEUP)` → `update_dl_entity()` → `start_dl_timer()`.
    fn enqueue_wakeup(&mut self, p: &DlServerParams, now_ns: u64) {
        // `deadline <= now` rather than the kernel's `<`: the never-started server (deadline
        // 0) at time 0 must get a fresh period, as the kernel's boot-time one long expired.
        if self.deadline_ns <= now_ns || self.overflow(p, now_ns) {
            self.new_period(p, now_ns);
        }
        if self.defer_running {
            self.state = DlServerState::Running;
            self.timer_ns = None;
        } else {
            self.arm(now_ns);
        }
    }

    /// Throttled with `dl_defer_armed`: the timer at the zero-laxity time (at once if
    /// that has passed, where `start_dl_timer` would refuse and enqueue directly).
    fn arm(&mut self, now_ns: u64) {
        self.state = DlServerState::Armed;
        let zero_laxity = self
            .deadline_ns
            .saturating_sub(u64::try_from(self.runtime_ns).unwrap_or(0));
        self.timer_ns = Some(zero_laxity.max(now_ns));
    }

    /// `dl_server_update()` → `update_curr_dl_se()`: a fair task ran `delta_ns` (already
    /// scaled by capacity, `dl_scaled_delta_exec`). Returns true when the server just
    /// throttled while running (the CPU must reschedule to give RT its turn back).
    pub fn update(&mut self, p: &DlServerParams, now_ns: u64, delta_ns: u64) -> bool {
        if !p.on() || self.state == DlServerState::Inactive || delta_ns == 0 {
            return false;
        }
        self.last_fair_ns = now_ns;
        self.runtime_ns -= delta_ns as i64;
        if self.runtime_ns > 0 {
            return false;
        }
        match self.state {
            DlServerState::Armed | DlServerState::Throttled => {
                // Fair got its runtime in the background: no starvation, push the
                // activation a period forward (E -> B, B -> B).
                self.defer_running = false;
                self.new_period(p, now_ns);
                self.arm(now_ns);
                false
            }
            DlServerState::Running => {
                self.throttle(p, now_ns);
                true
            }
            DlServerState::Inactive => false,
        }
    }

    /// Runtime exhausted while running: throttled until `dl_next_period()` (the deadline,
    /// with deadline = period), replenished at once if that has passed.
    fn throttle(&mut self, p: &DlServerParams, now_ns: u64) {
        if self.deadline_ns <= now_ns {
            self.replenish(p, now_ns);
            return;
        }
        self.state = DlServerState::Throttled;
        self.timer_ns = Some(self.deadline_ns);
    }

    /// The server was picked but the fair class had nothing to run (possible only with the
    /// lazy stop): it yields its runtime (`dl_yielded`) until the next period.
    pub fn yield_empty(&mut self, p: &DlServerParams, now_ns: u64) {
        if self.state == DlServerState::Running {
            self.runtime_ns = self.runtime_ns.min(0);
            self.throttle(p, now_ns);
        }
    }

    /// `replenish_dl_entity()` for a non-armed server: add runtime period by period until
    /// positive; a deadline still in the past then ("DL replenish lagged too much") starts
    /// a new period from now.
    fn replenish(&mut self, p: &DlServerParams, now_ns: u64) {
        while self.runtime_ns <= 0 {
            self.deadline_ns += p.period_ns;
            self.runtime_ns += p.runtime_ns as i64;
        }
        if self.deadline_ns < now_ns {
            self.new_period(p, now_ns);
        }
        self.state = DlServerState::Running;
        self.timer_ns = None;
    }

    /// `dl_server_timer()` at `timer_ns`. `has_tasks`: the fair queue is not empty.
    /// Returns true when the server starts running (it preempts an RT current task).
    pub fn timer(&mut self, p: &DlServerParams, now_ns: u64, has_tasks: bool) -> bool {
        self.timer_ns = None;
        if !p.on() {
            return false;
        }
        match self.state {
            DlServerState::Armed => self.zero_laxity_timer(p, now_ns, has_tasks),
            DlServerState::Throttled if has_tasks => {
                self.replenish(p, now_ns);
                self.nr_runs += 1;
                true
            }
            DlServerState::Throttled => {
                self.state = DlServerState::Inactive;
                false
            }
            DlServerState::Inactive | DlServerState::Running => false,
        }
    }

    /// The zero-laxity timer of an armed server: forward it if fair consumed runtime in
    /// the background, else start running (`dl_defer_running = 1`, enqueued with
    /// ENQUEUE_REPLENISH; a period that can no longer be honoured is renewed).
    fn zero_laxity_timer(&mut self, p: &DlServerParams, now_ns: u64, has_tasks: bool) -> bool {
        if !has_tasks {
            self.state = DlServerState::Inactive;
            return false;
        }
        let zero_laxity = self
            .deadline_ns
            .saturating_sub(u64::try_from(self.runtime_ns).unwrap_or(0));
        if now_ns + DL_SERVER_MIN_RES_NS < zero_laxity {
            self.timer_ns = Some(zero_laxity);
            return false;
        }
        self.defer_running = true;
        if self.overflow(p, now_ns) {
            self.new_period(p, now_ns);
        }
        self.replenish(p, now_ns);
        self.nr_runs += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn params() -> DlServerParams {
        DlServerParams {
            enabled: true,
            lazy_stop: false,
            runtime_ns: 50 * MS,
            period_ns: 1000 * MS,
            start_cost_ns: 1000,
            stop_cost_ns: 800,
        }
    }

    #[test]
    fn starved_server_runs_at_zero_laxity_then_every_period() {
        let p = params();
        let mut s = FairServer::default();
        assert_eq!(s.start(&p, 0, None), 1000);
        assert_eq!(s.state, DlServerState::Armed);
        // Timer at deadline - runtime = 950 ms.
        assert_eq!(s.timer_ns, Some(950 * MS));
        assert!(s.timer(&p, 950 * MS, true));
        assert!(s.running());
        // A new period from the timer: deadline 1950 ms, 50 ms of runtime.
        assert_eq!((s.deadline_ns, s.runtime_ns), (1950 * MS, 50 * MS as i64));
        // Runs 52 ms (tick granularity): throttled until the deadline.
        assert!(!s.update(&p, 990 * MS, 40 * MS));
        assert!(s.update(&p, 1002 * MS, 12 * MS));
        assert_eq!(s.state, DlServerState::Throttled);
        assert_eq!(s.timer_ns, Some(1950 * MS));
        // Replenished at the period end and runs at once (no defer again); the 2 ms
        // overrun is repaid.
        assert!(s.timer(&p, 1950 * MS, true));
        assert_eq!((s.deadline_ns, s.runtime_ns), (2950 * MS, 48 * MS as i64));
    }

    #[test]
    fn background_fair_runtime_pushes_the_server_forward() {
        let p = params();
        let mut s = FairServer::default();
        s.start(&p, 0, None);
        // Fair runs 50 ms normally: a new period, re-armed at 100 + 950 ms.
        s.update(&p, 100 * MS, 50 * MS);
        assert_eq!(s.state, DlServerState::Armed);
        assert_eq!(s.timer_ns, Some(1050 * MS));
        // A timer firing early (consumed runtime) is forwarded to the zero-laxity time.
        s.update(&p, 200 * MS, 30 * MS);
        assert!(!s.timer(&p, 1050 * MS, true));
        assert_eq!(s.timer_ns, Some(1100 * MS - 20 * MS));
    }

    #[test]
    fn eager_and_lazy_stop_costs() {
        let mut p = params();
        let mut s = FairServer::default();
        assert_eq!(s.start(&p, 0, None), 1000);
        assert_eq!(s.fair_queue_empty(&p, 10), 800);
        assert_eq!(s.state, DlServerState::Inactive);
        p.lazy_stop = true;
        let mut s = FairServer::default();
        assert_eq!(s.start(&p, 0, None), 1000);
        assert_eq!(s.fair_queue_empty(&p, 10), 0);
        assert_eq!(s.start(&p, 20, None), 0, "still active");
        s.fair_queue_empty(&p, 30);
        assert_eq!(
            s.start(&p, 30 + 1000 * MS, None),
            1000,
            "stopped after a period"
        );
        // Runtime 0 disables it.
        p.runtime_ns = 0;
        let mut s = FairServer::default();
        assert_eq!(s.start(&p, 0, None), 0);
        assert_eq!(s.state, DlServerState::Inactive);
    }

    #[test]
    fn idle_time_counts_as_fair_runtime() {
        let p = params();
        let mut s = FairServer::default();
        s.start(&p, 0, None);
        s.fair_queue_empty(&p, 10 * MS);
        // 30 ms idle before the next enqueue: 20 ms of runtime left in that period.
        s.start(&p, 40 * MS, Some(10 * MS));
        assert_eq!(s.runtime_ns, 20 * MS as i64);
        assert_eq!(s.timer_ns, Some(980 * MS));
    }
}
