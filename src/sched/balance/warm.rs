//! The balancing state of a machine that has been up and quiet before the run starts.
//!
//! [`LoadBalancer::new`] gives the state `sd_init()` and `sched_init()` leave at boot: every
//! domain's `last_balance` is "now" and its `balance_interval` is `min_interval`, so no idle
//! CPU balances a level until a whole `min_interval` has passed. A benchmark does not run
//! at boot. On a machine that has been up, each idle balance pass that finds a domain
//! balanced doubles `sd->balance_interval` up to `sd->max_interval` (`sched_balance_rq()`'s
//! out_balanced path; newly-idle passes do not double): the quiet-machine state is
//! `balance_interval = max_interval` at every level. And a quiet machine rarely kicks the
//! idle balancer: `nohz_balancer_kick()` needs, at a tick, a CPU with two runnable tasks or
//! two busy CPUs in one LLC, and the blocked-load kicks (`NOHZ_STATS_KICK`) do not balance.
//! So an idle CPU's `last_balance` stamps are older than their intervals: every level is
//! due at the first balancing kick of the run.
//!
//! **Approximation** (docs/fidelity.md, "Balancing state at the start of a run"): every
//! stamp is set exactly one interval back (due now) rather than at the unknown time of the
//! last kick; a machine whose daemons kick the idle balancer often would have stamps within
//! the last interval instead. The other boot values (`nr_balance_failed` 0, the newly-idle
//! costs and ratios, `sgc->next_update`) are kept: a quiet machine's passes find nothing to
//! move, and its newly-idle costs have decayed to 0 (`update_newidle_cost()` takes
//! `cost × 253 / 256` in integer nanoseconds once a second, which truncates to exactly 0
//! about ten minutes after the level's last newly-idle walk).

use super::LoadBalancer;

/// Seconds the machine has been up when the run starts: the balancer's jiffies start here
/// instead of at 0, so that `last_balance` stamps can lie before the run (the kernel's
/// `INITIAL_JIFFIES` likewise starts jiffies 300 s before their wrap). Any value above the
/// largest idle balance interval (2 × the widest domain's weight in ms) gives the same
/// decisions.
pub const UPTIME_AT_START_S: u64 = 300;

impl LoadBalancer {
    /// Put the balancer in the state of a machine that has been up and quiet (module doc).
    /// Call once, before the first event.
    pub fn warm_start(&mut self) {
        assert!(self.jiffies_base == 0, "warm_start called twice");
        self.jiffies_base = UPTIME_AT_START_S * u64::from(self.tunables.hz);
        self.set_now(self.now_ns);
        let dom = self.domains.clone();
        for cpu in dom.span.iter() {
            for &sd in dom.cpu_domains(cpu) {
                self.sd[sd.0].balance_interval_ms = dom.domain(sd).max_interval_ms;
                let interval = self.get_sd_balance_interval(sd, false);
                assert!(
                    interval < self.jiffies,
                    "balance interval beyond the uptime"
                );
                self.sd[sd.0].last_balance = self.jiffies - interval;
                self.sd[sd.0].last_decay_max_lb_cost = self.jiffies;
            }
            self.rq[cpu].next_balance = self.jiffies;
            self.rq[cpu].last_blocked_load_update_tick = self.jiffies;
        }
        for sgc in &mut self.sgc {
            sgc.next_update = self.jiffies;
        }
        self.nohz.next_balance = self.jiffies;
        self.nohz.next_blocked = self.jiffies;
    }
}
