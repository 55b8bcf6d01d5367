//! The Linux fair class model (`kernel/sched/fair.c`, `pelt.c`), split by mechanism.
//!
//! - [`fair`]: the per-runqueue core: EEVDF (v6.6+) and the pre-6.6 CFS, as plain
//!   index-based data structures that take the current time and explicit parameters
//!   and return decisions. They know nothing of the event engine, of other CPUs, or of
//!   load balancing; a scheduling policy drives them.
//! - [`pelt`]: per-entity load tracking, util_est and the PELT clock
//!   (`kernel/sched/pelt.c`, `pelt.h`, `sched-pelt.h`).
//! - [`wakeup`]: wakeup CPU selection (`select_task_rq_fair`).
//! - [`balance`]: SMP load balancing (`sched_balance_rq`, periodic/NOHZ/newidle balancing,
//!   schedstats), against the runqueue trait `balance::LbEnv`.
//! - [`rt`]: the RT class's runqueue, cpupri levels and RT throttling (`rt.c`, `cpupri.c`).
//! - [`dl_server`]: the fair deadline server's state machine and costs (`deadline.c`).
//! - [`types`]: types shared with the policies above (`MigrationReason`, `IdleType`, wake
//!   flags, placements).
//! - [`numa`]: automatic NUMA balancing (fault statistics, placement, the task mover, the
//!   balancer's locality predicates), as decisions on a constructed state.

pub mod balance;
pub mod dl_server;
pub mod fair;
pub mod numa;
pub mod pelt;
pub mod rt;
pub mod types;
pub mod wakeup;
