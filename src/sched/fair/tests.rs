//! Unit tests of the fair runqueue. Each test asserts a kernel behaviour (named in its
//! comment) with a tiny driver loop of its own: no engine involved.

use super::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// A one-CPU driver: ticks (and optionally an HRTICK-like timer), schedules when a
/// reschedule is requested, records how long each turn lasted.
struct Sim {
    p: FairParams,
    ents: Vec<SchedEntity>,
    rq: CfsRq,
    now: u64,
    blocked: Vec<usize>,
    /// (entity, ns it ran in the turn that just ended)
    turns: Vec<(usize, u64)>,
}

impl Sim {
    fn new(p: FairParams, nices: &[i32]) -> Self {
        let ents = nices
            .iter()
            .map(|&n| SchedEntity::new(n, SchedPolicy::Normal, &p))
            .collect();
        let rq = CfsRq::new(&p, 1024);
        let mut s = Sim {
            p,
            ents,
            rq,
            now: 0,
            blocked: Vec::new(),
            turns: Vec::new(),
        };
        for id in 0..nices.len() {
            s.rq.enqueue_task(&mut s.ents, &s.p, 0, id, ENQUEUE_WAKEUP);
        }
        s.schedule();
        s
    }

    fn schedule(&mut self) {
        let prev = self.rq.curr();
        let next =
            self.rq
                .pick_next_task_fair(&mut self.ents, &self.p, self.now, &mut self.blocked);
        if let Some(pv) = prev
            && next != prev
        {
            let e = &self.ents[pv];
            self.turns
                .push((pv, e.sum_exec_runtime - e.prev_sum_exec_runtime));
        }
    }

    fn run_ticks(&mut self, tick: u64, until: u64) {
        while self.now < until {
            self.now += tick;
            if self.rq.task_tick(&mut self.ents, &self.p, self.now) {
                self.schedule();
            }
        }
    }

    /// Ticks plus an hrtimer armed for the rest of curr's slice (`hrtick_start_fair`);
    /// an hrtick is a "queued" tick, which always reschedules.
    fn run_hrtick(&mut self, tick: u64, until: u64) {
        let mut next_tick = self.now + tick;
        while self.now < until {
            // An overrun slice (a re-picked curr keeps its prev_sum_exec_runtime) would
            // re-arm at "now" forever in a simulation where time stands still; the
            // kernel's clock moves on. Leave it to the tick.
            let hr = self
                .rq
                .hrtick_delay_ns(&self.ents, &self.p)
                .filter(|&d| d > 0)
                .map(|d| self.now + d);
            let t = match hr {
                Some(h) if h < next_tick => h,
                _ => next_tick,
            };
            let is_hrtick = t != next_tick;
            self.now = t;
            if !is_hrtick {
                next_tick += tick;
            }
            let mut resched = self.rq.task_tick(&mut self.ents, &self.p, self.now);
            if is_hrtick {
                self.rq.resched_curr();
                resched = true;
            }
            if resched {
                self.schedule();
            }
        }
    }

    fn share(&self, id: usize) -> f64 {
        let total: u64 = self.ents.iter().map(|e| e.sum_exec_runtime).sum();
        self.ents[id].sum_exec_runtime as f64 / total as f64
    }
}

fn p617() -> FairParams {
    // >= 8 CPUs: base slice 3 ms; HZ=250.
    FairParams::eevdf(EevdfVersion::V6_17, 8, 250)
}

fn pcfs() -> FairParams {
    FairParams::cfs(8, 250)
}

// ---------------------------------------------------------------------------------
// Parameters.

#[test]
fn tunables_scale_like_the_kernel() {
    assert_eq!(FairParams::sysctl_factor(1), 1);
    assert_eq!(FairParams::sysctl_factor(2), 2);
    assert_eq!(FairParams::sysctl_factor(4), 3);
    assert_eq!(FairParams::sysctl_factor(8), 4);
    assert_eq!(FairParams::sysctl_factor(224), 4);
    let p = p617();
    assert_eq!(p.base_slice_ns, 3 * MS);
    assert_eq!(p.tick_nsec, 4 * MS);
    let c = pcfs();
    assert_eq!(
        (
            c.sched_latency_ns,
            c.min_granularity_ns,
            c.wakeup_granularity_ns
        ),
        (24 * MS, 3 * MS, 4 * MS)
    );
    assert_eq!(c.sched_nr_latency(), 8);
    assert_eq!(
        FairParams::eevdf(EevdfVersion::V6_17, 2, 1000).base_slice_ns,
        1_500_000
    );
}

#[test]
fn features_from_kernel_names() {
    let f = FairFeatures::from_lookup(|n| n != "RUN_TO_PARITY" && n != "NEXT_BUDDY");
    assert!(!f.run_to_parity && !f.next_buddy);
    assert!(f.place_lag && f.delay_dequeue && f.pick_buddy && f.util_est && f.base_slice);
    let all = FairFeatures::from_lookup(|_| true);
    assert!(all.start_debit && all.gentle_fair_sleepers && all.last_buddy && all.delay_zero);
}

// ---------------------------------------------------------------------------------
// Shares and turn lengths.

#[test]
fn eevdf_two_nice0_split_evenly() {
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_ticks(MS, 10_000 * MS);
    assert!((s.share(0) - 0.5).abs() < 0.01, "{}", s.share(0));
}

#[test]
fn eevdf_nice0_vs_nice5_split_by_weight() {
    for tick in [MS, 4 * MS] {
        let mut s = Sim::new(p617(), &[0, 5]);
        s.run_ticks(tick, 10_000 * MS);
        let want = 1024.0 / (1024.0 + 335.0);
        assert!(
            (s.share(0) - want).abs() < 0.01,
            "tick {tick}: {} vs {want}",
            s.share(0)
        );
    }
}

#[test]
fn eevdf_turn_is_one_slice_with_fine_tick() {
    // 1 ms tick, 3 ms slice: slice expiry is seen at the 3rd tick.
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_ticks(MS, 1000 * MS);
    assert!(s.turns.len() > 300);
    assert!(
        s.turns.iter().all(|&(_, ran)| ran == 3 * MS),
        "{:?}",
        &s.turns[..8]
    );
}

#[test]
fn eevdf_turn_is_one_slice_with_hrtick() {
    // HRTICK arms a timer for the rest of the slice: turns are exactly the slice even
    // with a coarse 4 ms tick.
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_hrtick(4 * MS, 1000 * MS);
    assert!(s.turns.len() > 300);
    assert!(
        s.turns.iter().all(|&(_, ran)| ran == 3 * MS),
        "{:?}",
        &s.turns[..8]
    );
    // The slice is wall time: a nice-5 task also runs 3 ms per turn (the nice-0 one may
    // be re-picked while still eligible with the earliest deadline, so look at nice 5).
    let mut s = Sim::new(p617(), &[0, 5]);
    s.run_hrtick(4 * MS, 1000 * MS);
    assert!(s.turns.iter().filter(|t| t.0 == 1).count() > 50);
    assert!(
        s.turns
            .iter()
            .filter(|t| t.0 == 1)
            .all(|&(_, ran)| ran == 3 * MS),
        "{:?}",
        &s.turns[..8]
    );
}

#[test]
fn eevdf_coarse_tick_turn_is_one_tick() {
    // 4 ms tick (HZ=250), 3 ms slice: expiry is only noticed at the tick.
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_ticks(4 * MS, 1000 * MS);
    assert!(s.turns.len() > 200);
    assert!(
        s.turns.iter().all(|&(_, ran)| ran == 4 * MS),
        "{:?}",
        &s.turns[..8]
    );
    assert!((s.share(0) - 0.5).abs() < 0.01);
}

#[test]
fn eevdf_older_versions_share_the_same() {
    for v in [EevdfVersion::V6_6, EevdfVersion::V6_12] {
        let mut s = Sim::new(FairParams::eevdf(v, 8, 250), &[0, 5]);
        s.run_ticks(MS, 10_000 * MS);
        let want = 1024.0 / 1359.0;
        assert!((s.share(0) - want).abs() < 0.01, "{v:?}: {}", s.share(0));
    }
}

#[test]
fn cfs_shares() {
    for tick in [MS, 4 * MS] {
        let mut s = Sim::new(pcfs(), &[0, 0]);
        s.run_ticks(tick, 10_000 * MS);
        assert!(
            (s.share(0) - 0.5).abs() < 0.01,
            "tick {tick}: {}",
            s.share(0)
        );
        let mut s = Sim::new(pcfs(), &[0, 5]);
        s.run_ticks(tick, 10_000 * MS);
        let want = 1024.0 / 1359.0;
        assert!(
            (s.share(0) - want).abs() < 0.01,
            "tick {tick}: {} vs {want}",
            s.share(0)
        );
    }
}

#[test]
fn cfs_turn_is_the_ideal_slice() {
    // Two nice-0 tasks, latency 24 ms: sched_slice = 12 ms; with a 1 ms tick the
    // preemption happens at the first tick where runtime exceeds 12 ms.
    let mut s = Sim::new(pcfs(), &[0, 0]);
    // __calc_delta(24 ms, 1024, load 2048) with the computed inverse (2^32-1)/2048.
    assert_eq!(s.rq.sched_slice(&s.ents, &s.p, 0), 11_999_994);
    s.run_ticks(MS, 1000 * MS);
    assert!(s.turns.len() > 60);
    assert!(
        s.turns.iter().all(|&(_, ran)| ran == 12 * MS),
        "{:?}",
        &s.turns[..6]
    );
    // Nine tasks: the period stretches to 9 x min_granularity.
    assert_eq!(CfsRq::sched_period(&s.p, 9), 27 * MS);
    assert_eq!(CfsRq::sched_period(&s.p, 8), 24 * MS);
}

// ---------------------------------------------------------------------------------
// Eligibility, lag and placement (EEVDF).

/// Three nice-0 entities queued at t=0; curr (0) runs `run_ns`.
fn three(p: &FairParams, run_ns: u64) -> (Vec<SchedEntity>, CfsRq) {
    let mut ents: Vec<SchedEntity> = (0..3)
        .map(|_| SchedEntity::new(0, SchedPolicy::Normal, p))
        .collect();
    let mut rq = CfsRq::new(p, 1024);
    for id in 0..3 {
        rq.enqueue_task(&mut ents, p, 0, id, ENQUEUE_WAKEUP);
    }
    rq.set_next_entity(&mut ents, p, 0, 0);
    rq.update_curr(&mut ents, p, run_ns);
    (ents, rq)
}

#[test]
fn entity_above_average_is_not_eligible() {
    let p = p617();
    let (ents, rq) = three(&p, 2 * MS);
    let v = rq.avg_vruntime(&ents);
    // curr ran 2 ms: V moved by 2/3 ms; curr is past it, the others behind it.
    assert_eq!(v.wrapping_sub(ents[1].vruntime) as i64, (2 * MS / 3) as i64);
    assert!(vruntime_before(v, ents[0].vruntime));
    assert!(!rq.entity_eligible(&ents, 0));
    assert!(rq.entity_eligible(&ents, 1) && rq.entity_eligible(&ents, 2));
    // An entity exactly at V is eligible (left-biased floor).
    assert!(rq.vruntime_eligible(&ents, v));
    assert!(!rq.vruntime_eligible(&ents, v.wrapping_add(1)));
}

#[test]
fn pick_is_earliest_deadline_among_eligible() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, 2 * MS);
    // Give entity 2 an earlier deadline but make it ineligible; 1 stays eligible.
    rq.dequeue_tree(&mut ents, 2);
    ents[2].vruntime = ents[0].vruntime.wrapping_add(10 * MS);
    ents[2].deadline = ents[1].deadline.wrapping_sub(MS);
    rq.enqueue_tree(&mut ents, 2);
    assert!(!rq.entity_eligible(&ents, 2));
    // curr (same deadline as 1, which was queued first) is eligible now that 2 pulled V
    // up; it is protected (RUN_TO_PARITY), so look past protection.
    assert_eq!(rq.pick_eevdf(&ents, &p, true), Some(0));
    assert_eq!(rq.pick_eevdf(&ents, &p, false), Some(1));
    // Made eligible (vruntime far behind), it wins on deadline.
    rq.dequeue_tree(&mut ents, 2);
    ents[2].vruntime = ents[1].vruntime.wrapping_sub(10 * MS);
    rq.enqueue_tree(&mut ents, 2);
    assert!(rq.entity_eligible(&ents, 2));
    assert_eq!(rq.pick_eevdf(&ents, &p, false), Some(2));
}

#[test]
fn lag_is_clamped_and_preserved_across_sleep() {
    let mut p = p617();
    p.features.delay_dequeue = false;
    let (mut ents, mut rq) = three(&p, 2 * MS);
    // Entity 1 (waiting, positive lag) goes to sleep: it keeps vlag = V - v.
    let v = rq.avg_vruntime(&ents);
    let expect = v.wrapping_sub(ents[1].vruntime) as i64;
    assert_eq!(
        rq.dequeue_task(&mut ents, &p, 2 * MS, 1, DEQUEUE_SLEEP),
        DequeueResult::Removed
    );
    assert_eq!(ents[1].vlag, expect);
    assert!(!ents[1].on_rq);
    // Later it wakes: placed so that, after joining, its lag is the same again; the
    // stored lag was inflated by (W + w) / W (W = 2048 of the two others, w = 1024).
    let v_before = rq.avg_vruntime(&ents);
    rq.enqueue_task(&mut ents, &p, 2 * MS, 1, ENQUEUE_WAKEUP);
    let inflated = expect * (2048 + 1024) / 2048;
    assert_eq!(v_before.wrapping_sub(ents[1].vruntime) as i64, inflated);
    let lag_now = rq.entity_vlag_now(&ents, 1);
    assert!((lag_now - expect).abs() <= 1, "{lag_now} vs {expect}");
    // The clamp: ±calc_delta_fair(max(2 * slice, TICK_NSEC)) = 6 ms for nice 0.
    rq.update_curr(&mut ents, &p, 500 * MS);
    let v = rq.avg_vruntime(&ents);
    assert!(v.wrapping_sub(ents[0].vruntime) as i64 <= -6 * MS as i64);
    rq.dequeue_task(&mut ents, &p, 500 * MS, 0, DEQUEUE_SLEEP);
    assert_eq!(ents[0].vlag, -6 * MS as i64);
}

#[test]
fn without_place_lag_a_waker_lands_on_v() {
    let mut p = p617();
    p.features.delay_dequeue = false;
    p.features.place_lag = false;
    let (mut ents, mut rq) = three(&p, 2 * MS);
    rq.dequeue_task(&mut ents, &p, 2 * MS, 1, DEQUEUE_SLEEP);
    let v = rq.avg_vruntime(&ents);
    rq.enqueue_task(&mut ents, &p, 2 * MS, 1, ENQUEUE_WAKEUP);
    assert_eq!(ents[1].vruntime, v);
    assert_eq!(ents[1].deadline, v.wrapping_add(3 * MS));
}

#[test]
fn forked_task_gets_half_a_slice() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, MS);
    ents.push(SchedEntity::new(0, SchedPolicy::Normal, &p));
    let v = rq.avg_vruntime(&ents);
    rq.task_fork_fair(&mut ents, &p, MS, 3);
    rq.post_init_entity_util_avg(&mut ents, 3);
    rq.enqueue_task(&mut ents, &p, MS, 3, ENQUEUE_INITIAL);
    assert_eq!(ents[3].vruntime, v, "placed at V with zero lag");
    assert_eq!(ents[3].deadline.wrapping_sub(ents[3].vruntime), 3 * MS / 2);
    // Nice 5: half of the weighted slice.
    let mut e5 = SchedEntity::new(5, SchedPolicy::Normal, &p);
    e5.vlag = 0;
    ents.push(e5);
    rq.enqueue_task(&mut ents, &p, MS, 4, ENQUEUE_INITIAL);
    assert_eq!(
        ents[4].deadline.wrapping_sub(ents[4].vruntime),
        calc_delta_fair(3 * MS, &LoadWeight::from_nice(5)) / 2
    );
    // Without the feature: a full slice.
    let mut p2 = p;
    p2.features.place_deadline_initial = false;
    ents.push(SchedEntity::new(0, SchedPolicy::Normal, &p2));
    rq.enqueue_task(&mut ents, &p2, MS, 5, ENQUEUE_INITIAL);
    assert_eq!(ents[5].deadline.wrapping_sub(ents[5].vruntime), 3 * MS);
}

#[test]
fn delay_dequeue_keeps_ineligible_sleeper_until_picked() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, 2 * MS);
    assert!(!rq.entity_eligible(&ents, 0));
    let load = rq.load().weight;
    // curr blocks while ineligible (negative lag): delayed, still queued.
    assert_eq!(
        rq.dequeue_task(&mut ents, &p, 2 * MS, 0, DEQUEUE_SLEEP),
        DequeueResult::Delayed
    );
    assert!(ents[0].on_rq && ents[0].sched_delayed);
    assert_eq!(rq.nr_queued(), 3);
    assert_eq!(rq.h_nr_queued(), 3);
    assert_eq!(rq.h_nr_runnable(), 2);
    assert_eq!(rq.load().weight, load);
    // Schedule: entity 1 or 2 runs; the delayed one competes until V reaches it.
    let mut blocked = Vec::new();
    let n = rq
        .pick_next_task_fair(&mut ents, &p, 2 * MS, &mut blocked)
        .unwrap();
    assert_ne!(n, 0);
    assert!(blocked.is_empty());
    assert!(ents[0].on_rq, "still queued while ineligible");
    // Run the others; at each slice end pick again; entity 0 leaves when picked.
    let mut now = 2 * MS;
    let mut left_at = None;
    for _ in 0..20 {
        now += MS;
        if rq.task_tick(&mut ents, &p, now) {
            rq.pick_next_task_fair(&mut ents, &p, now, &mut blocked);
        }
        if !blocked.is_empty() {
            left_at = Some(now);
            break;
        }
    }
    assert!(left_at.is_some(), "delayed entity never dequeued");
    assert_eq!(blocked, vec![0]);
    assert!(!ents[0].on_rq && !ents[0].sched_delayed);
    assert!(
        ents[0].vlag <= 0,
        "DELAY_ZERO: lag clipped to <= 0, got {}",
        ents[0].vlag
    );
    assert_eq!(
        (rq.nr_queued(), rq.h_nr_queued(), rq.h_nr_runnable()),
        (2, 2, 2)
    );
}

#[test]
fn delay_dequeue_special_and_eligible_sleepers_leave_at_once() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, 2 * MS);
    assert_eq!(
        rq.dequeue_task(&mut ents, &p, 2 * MS, 0, DEQUEUE_SLEEP | DEQUEUE_SPECIAL),
        DequeueResult::Removed
    );
    let (mut ents, mut rq) = three(&p, 2 * MS);
    assert!(rq.entity_eligible(&ents, 1));
    assert_eq!(
        rq.dequeue_task(&mut ents, &p, 2 * MS, 1, DEQUEUE_SLEEP),
        DequeueResult::Removed
    );
    // Without the feature an ineligible sleeper leaves too.
    let mut p2 = p;
    p2.features.delay_dequeue = false;
    let (mut ents, mut rq) = three(&p2, 2 * MS);
    assert_eq!(
        rq.dequeue_task(&mut ents, &p2, 2 * MS, 0, DEQUEUE_SLEEP),
        DequeueResult::Removed
    );
}

#[test]
fn waking_a_delayed_entity_requeues_it() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, 2 * MS);
    rq.dequeue_task(&mut ents, &p, 2 * MS, 0, DEQUEUE_SLEEP);
    let v0 = ents[0].vruntime;
    rq.enqueue_task(&mut ents, &p, 2 * MS, 0, ENQUEUE_DELAYED);
    assert!(!ents[0].sched_delayed && ents[0].on_rq);
    assert_eq!(rq.h_nr_runnable(), 3);
    // Lag still negative: vruntime kept.
    assert_eq!(ents[0].vruntime, v0);
}

#[test]
fn wakeup_preemption_and_run_to_parity() {
    // curr ran 1 ms alone; a forked task (half slice, deadline earlier) wakes.
    let setup = |p: &FairParams| {
        let mut ents = vec![
            SchedEntity::new(0, SchedPolicy::Normal, p),
            SchedEntity::new(0, SchedPolicy::Normal, p),
        ];
        let mut rq = CfsRq::new(p, 1024);
        rq.enqueue_task(&mut ents, p, 0, 0, ENQUEUE_WAKEUP);
        rq.pick_next_task_fair(&mut ents, p, 0, &mut Vec::new());
        rq.enqueue_task(&mut ents, p, MS, 1, ENQUEUE_INITIAL);
        (ents, rq)
    };
    let p = p617();
    let (mut ents, mut rq) = setup(&p);
    assert!(vruntime_before(ents[1].deadline, ents[0].deadline));
    assert!(rq.entity_eligible(&ents, 0) && rq.entity_eligible(&ents, 1));
    // RUN_TO_PARITY: curr is protected up to its deadline: no preemption.
    assert!(!rq.check_preempt_wakeup(&mut ents, &p, MS, 1, WF_FORK));
    assert!(!rq.need_resched());
    // NO_RUN_TO_PARITY: protection is only min(0.75 ms, slice): after 1 ms, preempt.
    let mut p2 = p;
    p2.features.run_to_parity = false;
    let (mut ents, mut rq) = setup(&p2);
    assert!(rq.check_preempt_wakeup(&mut ents, &p2, MS, 1, WF_FORK));
    assert!(rq.need_resched());
    // PREEMPT_SHORT: a wakee with a shorter slice preempts even a protected curr.
    let (mut ents, mut rq) = setup(&p);
    rq.dequeue_task(&mut ents, &p, MS, 1, DEQUEUE_SLEEP | DEQUEUE_SPECIAL);
    ents[1].set_custom_slice(Some(500_000), &p);
    ents[1].vlag = 0;
    rq.enqueue_task(&mut ents, &p, MS, 1, ENQUEUE_WAKEUP);
    assert!(rq.check_preempt_wakeup(&mut ents, &p, MS, 1, 0));
    assert!(!rq.protect_slice(&ents, &p, 0), "protection cancelled");
    // An ineligible curr is not protected: a newly eligible earlier deadline preempts.
    let (mut ents, mut rq) = setup(&p);
    rq.update_curr(&mut ents, &p, 2 * MS);
    assert!(!rq.entity_eligible(&ents, 0));
    assert!(rq.check_preempt_wakeup(&mut ents, &p, 2 * MS, 1, WF_FORK));
    // Batch wakees never preempt; an idle CPU is always preempted.
    let (mut ents, mut rq) = setup(&p2);
    ents[1].policy = SchedPolicy::Batch;
    assert!(!rq.check_preempt_wakeup(&mut ents, &p2, MS, 1, 0));
    let mut idle_rq = CfsRq::new(&p, 1024);
    let mut e = vec![SchedEntity::new(0, SchedPolicy::Normal, &p)];
    idle_rq.enqueue_task(&mut e, &p, 0, 0, ENQUEUE_WAKEUP);
    assert!(idle_rq.check_preempt_wakeup(&mut e, &p, 0, 0, 0));
}

#[test]
fn v6_12_protection_is_the_deadline_stash() {
    let p = FairParams::eevdf(EevdfVersion::V6_12, 8, 250);
    let s = Sim::new(p, &[0, 0]);
    let c = s.rq.curr().unwrap();
    assert_eq!(s.ents[c].vlag.cast_unsigned(), s.ents[c].deadline);
    assert!(s.rq.protect_slice(&s.ents, &s.p, c));
}

#[test]
fn next_buddy_is_picked_when_eligible() {
    let mut p = p617();
    p.features.next_buddy = true;
    let (mut ents, mut rq) = three(&p, 0);
    rq.check_preempt_wakeup(&mut ents, &p, 0, 2, 0);
    assert_eq!(rq.next_buddy(), Some(2));
    let mut blocked = Vec::new();
    rq.clear_need_resched();
    rq.resched_curr();
    assert_eq!(
        rq.pick_next_task_fair(&mut ents, &p, 0, &mut blocked),
        Some(2)
    );
    assert_eq!(rq.next_buddy(), None, "cleared by set_next_entity");
}

#[test]
fn yield_lets_the_other_run() {
    for p in [
        p617(),
        FairParams::eevdf(EevdfVersion::V6_12, 8, 250),
        pcfs(),
    ] {
        let mut s = Sim::new(p, &[0, 0]);
        let c = s.rq.curr().unwrap();
        s.now = MS / 2;
        s.rq.yield_task(&mut s.ents, &s.p, s.now);
        s.schedule();
        assert_ne!(s.rq.curr(), Some(c), "{:?}", p.mode);
    }
}

#[test]
fn set_user_nice_changes_the_share() {
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_ticks(MS, 100 * MS);
    let now = s.now;
    s.rq.set_user_nice(&mut s.ents, &s.p, now, 1, 5);
    assert_eq!(s.ents[1].load.weight, 335);
    assert_eq!(s.rq.load().weight, 1024 + 335);
    let (r0, r1) = (s.ents[0].sum_exec_runtime, s.ents[1].sum_exec_runtime);
    s.run_ticks(MS, 10_100 * MS);
    let d0 = (s.ents[0].sum_exec_runtime - r0) as f64;
    let d1 = (s.ents[1].sum_exec_runtime - r1) as f64;
    assert!((d0 / (d0 + d1) - 1024.0 / 1359.0).abs() < 0.01);
}

#[test]
fn reweight_scales_lag() {
    let mut p = p617();
    p.features.delay_dequeue = false;
    let (mut ents, mut rq) = three(&p, 2 * MS);
    rq.dequeue_task(&mut ents, &p, 2 * MS, 1, DEQUEUE_SLEEP);
    let vlag = ents[1].vlag;
    rq.reweight_entity(&mut ents, &p, 2 * MS, 1, LoadWeight::from_nice(-5));
    assert_eq!(ents[1].vlag, vlag * 1024 / 3121);
}

/// REWEIGHT_PLACE (6d71a9c61604, v6.13): a renice of a queued task (dequeue SAVE keeps
/// the deadline relative under PLACE_REL_DEADLINE) scales the relative deadline by
/// old/new weight; 6.12 leaves it as it is.
#[test]
fn renice_scales_the_relative_deadline_from_v6_13() {
    for place in [false, true] {
        let mut p = FairParams::eevdf(EevdfVersion::V6_12, 8, 250);
        p.features.reweight_place = place;
        let (mut ents, mut rq) = three(&p, 2 * MS);
        let rel = ents[1].deadline.wrapping_sub(ents[1].vruntime) as i64;
        rq.set_user_nice(&mut ents, &p, 2 * MS, 1, -5);
        let after = ents[1].deadline.wrapping_sub(ents[1].vruntime) as i64;
        let want = if place { rel * 1024 / 3121 } else { rel };
        assert_eq!(after, want, "REWEIGHT_PLACE {place}");
    }
}

/// The v6.7–v6.12 `reweight_eevdf()`: a queued entity's vruntime and deadline are scaled
/// around V, which stays where it was; v6.13+ re-places it from its lag.
#[test]
fn queued_reweight_scales_around_v_before_v6_13() {
    let p = FairParams::eevdf(EevdfVersion::V6_12, 8, 250);
    let (mut ents, mut rq) = three(&p, 2 * MS);
    let v = rq.avg_vruntime(&ents);
    let lag = v.wrapping_sub(ents[1].vruntime) as i64;
    let vslice = ents[1].deadline.wrapping_sub(v) as i64;
    rq.reweight_entity(&mut ents, &p, 2 * MS, 1, LoadWeight::from_nice(-5));
    assert_eq!(v.wrapping_sub(ents[1].vruntime) as i64, lag * 1024 / 3121);
    assert_eq!(
        ents[1].deadline.wrapping_sub(v) as i64,
        vslice * 1024 / 3121
    );
    assert!(!ents[1].rel_deadline);
}

#[test]
fn eevdf_migration_keeps_lag_and_relative_deadline() {
    let p = p617();
    let (mut ents, mut rq) = three(&p, 2 * MS);
    let lag = rq.entity_vlag_now(&ents, 1);
    let rel = ents[1].deadline.wrapping_sub(ents[1].vruntime);
    rq.dequeue_task(&mut ents, &p, 2 * MS, 1, DEQUEUE_MIGRATING);
    assert!(ents[1].rel_deadline);
    rq.migrate_task_rq_fair(&mut ents, &p, 2 * MS, 1, false);
    assert_eq!(ents[1].avg.last_update_time, 0);
    let mut dst = CfsRq::new(&p, 1024);
    let mut other = SchedEntity::new(0, SchedPolicy::Normal, &p);
    other.vlag = 0;
    ents.push(other);
    dst.enqueue_task(&mut ents, &p, 2 * MS, 3, ENQUEUE_WAKEUP);
    dst.enqueue_task(
        &mut ents,
        &p,
        2 * MS,
        1,
        ENQUEUE_MIGRATED | ENQUEUE_MIGRATING,
    );
    assert!((dst.entity_vlag_now(&ents, 1) - lag).abs() <= 1);
    assert_eq!(ents[1].deadline.wrapping_sub(ents[1].vruntime), rel);
    assert!(!ents[1].rel_deadline);
    assert_eq!(ents[1].exec_start, 0);
    assert_eq!(ents[1].nr_migrations, 1);
    // PELT: detached from the source, attached at the destination.
    assert_eq!(
        rq.avg().util_avg + dst.avg().util_avg,
        rq.avg().util_avg + ents[1].avg.util_avg
    );
}

// ---------------------------------------------------------------------------------
// CFS placement and preemption.

#[test]
fn cfs_sleeper_placed_half_a_latency_behind() {
    let p = pcfs();
    let mut s = Sim::new(p, &[0, 0]);
    // Entity 1 sleeps for a long time while 0 runs alone.
    let now = s.now;
    if s.rq.curr() == Some(1) {
        s.rq.dequeue_task(&mut s.ents, &s.p, now, 1, DEQUEUE_SLEEP);
        s.schedule();
    } else {
        s.rq.dequeue_task(&mut s.ents, &s.p, now, 1, DEQUEUE_SLEEP);
    }
    s.run_ticks(MS, 500 * MS);
    let min_v = s.rq.min_vruntime();
    let now = s.now;
    s.rq.enqueue_task(&mut s.ents, &s.p, now, 1, ENQUEUE_WAKEUP);
    assert_eq!(s.ents[1].vruntime, min_v.wrapping_sub(12 * MS));
    // Without GENTLE_FAIR_SLEEPERS: a full latency.
    let mut p2 = p;
    p2.features.gentle_fair_sleepers = false;
    let mut s = Sim::new(p2, &[0, 0]);
    let now = s.now;
    let c = s.rq.curr().unwrap();
    let o = 1 - c;
    s.rq.dequeue_task(&mut s.ents, &s.p, now, o, DEQUEUE_SLEEP);
    s.run_ticks(MS, 500 * MS);
    let min_v = s.rq.min_vruntime();
    let now = s.now;
    s.rq.enqueue_task(&mut s.ents, &s.p, now, o, ENQUEUE_WAKEUP);
    assert_eq!(s.ents[o].vruntime, min_v.wrapping_sub(24 * MS));
}

#[test]
fn cfs_fork_start_debit() {
    let p = pcfs();
    let mut s = Sim::new(p, &[0]);
    s.run_ticks(MS, 10 * MS);
    s.ents.push(SchedEntity::new(0, SchedPolicy::Normal, &p));
    let now = s.now;
    s.rq.task_fork_fair(&mut s.ents, &s.p, now, 1);
    // min_vruntime + vslice of a 2-task period: 24 ms * 1024 / 2048 = 12 ms, normalized.
    let parent_rel = s.ents[0].vruntime.wrapping_sub(s.rq.min_vruntime());
    assert_eq!(parent_rel, 0);
    assert_eq!(s.ents[1].vruntime, 11_999_994);
    s.rq.enqueue_task(&mut s.ents, &s.p, now, 1, ENQUEUE_INITIAL);
    assert_eq!(
        s.ents[1].vruntime,
        s.rq.min_vruntime().wrapping_add(11_999_994)
    );
}

#[test]
fn cfs_wakeup_preemption_needs_a_granularity_gap() {
    let p = pcfs();
    let mut ents = vec![
        SchedEntity::new(0, SchedPolicy::Normal, &p),
        SchedEntity::new(0, SchedPolicy::Normal, &p),
    ];
    let mut rq = CfsRq::new(&p, 1024);
    rq.enqueue_task(&mut ents, &p, 0, 0, ENQUEUE_WAKEUP);
    rq.pick_next_task_fair(&mut ents, &p, 0, &mut Vec::new());
    // Entity 1 wakes placed at min_vruntime - 12 ms; curr ran 10 ms: gap 22 ms > 4 ms.
    rq.update_curr(&mut ents, &p, 10 * MS);
    ents[1].vruntime = rq.min_vruntime().wrapping_sub(100 * MS);
    rq.enqueue_task(&mut ents, &p, 10 * MS, 1, ENQUEUE_WAKEUP);
    assert_eq!(
        ents[0].vruntime.wrapping_sub(ents[1].vruntime),
        12 * MS,
        "min_vruntime followed curr, sleeper credit 12 ms"
    );
    assert_eq!(CfsRq::wakeup_preempt_entity(&ents, &p, 0, 1), 1);
    assert!(rq.check_preempt_wakeup(&mut ents, &p, 10 * MS, 1, 0));
    assert_eq!(rq.next_buddy(), Some(1), "the wakee becomes the next buddy");
    // Within the granularity: no preemption.
    let mut rq = CfsRq::new(&p, 1024);
    let mut ents = vec![
        SchedEntity::new(0, SchedPolicy::Normal, &p),
        SchedEntity::new(0, SchedPolicy::Normal, &p),
    ];
    rq.enqueue_task(&mut ents, &p, 0, 0, ENQUEUE_WAKEUP);
    rq.enqueue_task(&mut ents, &p, 0, 1, ENQUEUE_WAKEUP);
    rq.pick_next_task_fair(&mut ents, &p, 0, &mut Vec::new());
    let c = rq.curr().unwrap();
    let o = 1 - c;
    rq.update_curr(&mut ents, &p, 3 * MS);
    assert_eq!(CfsRq::wakeup_preempt_entity(&ents, &p, c, o), 0);
    assert!(!rq.check_preempt_wakeup(&mut ents, &p, 3 * MS, o, 0));
}

#[test]
fn cfs_migration_renormalizes_vruntime() {
    let p = pcfs();
    let mut s = Sim::new(p, &[0, 0]);
    s.run_ticks(MS, 100 * MS);
    let now = s.now;
    let c = s.rq.curr().unwrap();
    let o = 1 - c;
    let rel = s.ents[o].vruntime.wrapping_sub(s.rq.min_vruntime()) as i64;
    s.rq.dequeue_task(&mut s.ents, &s.p, now, o, DEQUEUE_MIGRATING);
    s.rq.migrate_task_rq_fair(&mut s.ents, &s.p, now, o, false);
    assert_eq!(s.ents[o].vruntime as i64, rel);
    let mut dst = CfsRq::new(&p, 1024);
    dst.enqueue_task(
        &mut s.ents,
        &p,
        now,
        o,
        ENQUEUE_MIGRATED | ENQUEUE_MIGRATING,
    );
    assert_eq!(
        s.ents[o].vruntime.wrapping_sub(dst.min_vruntime()) as i64,
        rel
    );
}

// ---------------------------------------------------------------------------------
// PELT through the runqueue.

#[test]
fn rq_util_is_the_sum_of_its_tasks() {
    let mut s = Sim::new(p617(), &[0, 0]);
    s.run_ticks(MS, 3000 * MS);
    let sum: u64 = s.ents.iter().map(|e| e.avg.util_avg).sum();
    let rq = s.rq.avg().util_avg;
    assert!(rq.abs_diff(sum) <= 8, "rq {rq} vs tasks {sum}");
    assert!(rq >= 1000, "saturated CPU util {rq}");
    for e in &s.ents {
        assert!(
            (480..=544).contains(&e.avg.util_avg),
            "task util {}",
            e.avg.util_avg
        );
        // Each task waits half the time: runnable ~ 2x util, load_avg ~ weight.
        assert!(e.avg.runnable_avg >= 1000);
    }
    // load: the cfs_rq's load_avg sums the queued weights.
    assert!(s.rq.cpu_load() >= 2000, "{}", s.rq.cpu_load());
}

#[test]
fn blocked_load_decays_and_is_removed_on_migration() {
    let p = p617();
    let mut s = Sim::new(p, &[0]);
    s.run_ticks(MS, 500 * MS);
    let now = s.now;
    s.rq.dequeue_task(&mut s.ents, &s.p, now, 0, DEQUEUE_SLEEP);
    s.schedule();
    let u0 = s.rq.avg().util_avg;
    assert!(u0 > 900);
    // 32 ms later the blocked contribution has halved.
    s.rq.update_blocked_averages(now + 32 * 1_048_576);
    let u1 = s.rq.avg().util_avg;
    assert!((u0 / 2).abs_diff(u1) < 20, "{u0} -> {u1}");
    // Wakeup migration: removed lazily at the next update.
    s.rq.migrate_task_rq_fair(&mut s.ents, &s.p, now + 32 * 1_048_576, 0, true);
    assert_eq!(s.ents[0].avg.last_update_time, 0);
    s.rq.update_blocked_averages(now + 33 * 1_048_576);
    assert!(s.rq.avg().util_avg <= 2, "{}", s.rq.avg().util_avg);
}

#[test]
fn util_est_follows_sleeps() {
    let p = p617();
    let mut s = Sim::new(p, &[0]);
    s.run_ticks(MS, 200 * MS);
    let now = s.now;
    let util = s.ents[0].avg.util_avg;
    s.rq.dequeue_task(&mut s.ents, &s.p, now, 0, DEQUEUE_SLEEP);
    assert_eq!(
        s.ents[0].avg.task_util_est_ewma() as u64,
        util,
        "instant ramp-up"
    );
    assert_eq!(s.rq.avg().util_est, 0, "removed from the rq at dequeue");
    s.rq.enqueue_task(&mut s.ents, &s.p, now, 0, ENQUEUE_WAKEUP);
    assert_eq!(s.rq.avg().util_est as u64, util);
    assert!(s.rq.cpu_util_cfs(&s.p) >= util);
}

#[test]
fn idle_policy_counts_and_weight() {
    let p = p617();
    let mut ents = vec![
        SchedEntity::new(0, SchedPolicy::Idle, &p),
        SchedEntity::new(0, SchedPolicy::Normal, &p),
    ];
    assert_eq!(ents[0].load.weight, 3);
    let mut rq = CfsRq::new(&p, 1024);
    rq.enqueue_task(&mut ents, &p, 0, 0, ENQUEUE_WAKEUP);
    rq.pick_next_task_fair(&mut ents, &p, 0, &mut Vec::new());
    assert_eq!(rq.h_nr_idle(), 1);
    rq.enqueue_task(&mut ents, &p, MS, 1, ENQUEUE_WAKEUP);
    // A normal wakee always preempts a SCHED_IDLE curr.
    assert!(rq.check_preempt_wakeup(&mut ents, &p, MS, 1, 0));
}

// ---------------------------------------------------------------------------------
// Invariants under random operation sequences.

fn check_invariants(rq: &CfsRq, ents: &[SchedEntity], p: &FairParams) {
    // The production checker (sched/fair/invariants.rs) holds the sums, counters,
    // zero-lag and eligibility checks.
    if let Err(e) = rq.check_invariants(ents, p) {
        panic!("{e}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Advance(u64),
    Tick,
    Toggle(usize, bool),
    Pick,
    Wake(usize),
    Yield,
    Nice(usize, i32),
    Slice(usize, u64),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    op_strategy_n(6)
}

/// Random operations on `n` entities.
fn op_strategy_n(n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u64..4_000_000).prop_map(Op::Advance),
        Just(Op::Tick),
        (0usize..n, any::<bool>()).prop_map(|(i, b)| Op::Toggle(i, b)),
        Just(Op::Pick),
        (0usize..n).prop_map(Op::Wake),
        Just(Op::Yield),
        (0usize..n, -20i32..20).prop_map(|(i, n)| Op::Nice(i, n)),
        (0usize..n, 0u64..5_000_000).prop_map(|(i, s)| Op::Slice(i, s)),
    ]
}

fn run_ops(p: FairParams, ops: &[Op]) {
    run_ops_n(p, ops, 6);
}

/// Apply `ops` to one runqueue of `n` entities, checking every invariant after each —
/// for EEVDF that includes the tree's picks equal to the linear-scan oracle's.
fn run_ops_n(p: FairParams, ops: &[Op], n: usize) {
    let mut ents: Vec<SchedEntity> = (0..n)
        .map(|_| SchedEntity::new(0, SchedPolicy::Normal, &p))
        .collect();
    let mut rq = CfsRq::new(&p, 1024);
    let mut now = 0u64;
    let mut blocked = Vec::new();
    // CFS: entities dequeued without DEQUEUE_SLEEP carry a relative vruntime.
    let mut relative = vec![false; n];
    for op in ops {
        match *op {
            Op::Advance(dt) => now += dt,
            Op::Tick => {
                if rq.task_tick(&mut ents, &p, now) {
                    rq.pick_next_task_fair(&mut ents, &p, now, &mut blocked);
                }
            }
            Op::Toggle(id, sleep) => {
                if !ents[id].on_rq {
                    let flags = if relative[id] {
                        ENQUEUE_MIGRATED | ENQUEUE_MIGRATING
                    } else {
                        ENQUEUE_WAKEUP
                    };
                    relative[id] = false;
                    rq.enqueue_task(&mut ents, &p, now, id, flags);
                    rq.check_preempt_wakeup(&mut ents, &p, now, id, 0);
                } else if !ents[id].sched_delayed || !sleep {
                    let flags = if sleep {
                        DEQUEUE_SLEEP
                    } else {
                        DEQUEUE_MIGRATING
                    };
                    let was_curr = rq.curr() == Some(id);
                    if was_curr && !sleep {
                        // A running task is never load-balanced; block it instead.
                        rq.dequeue_task(&mut ents, &p, now, id, DEQUEUE_SLEEP);
                    } else {
                        rq.dequeue_task(&mut ents, &p, now, id, flags);
                        if !sleep {
                            rq.migrate_task_rq_fair(&mut ents, &p, now, id, false);
                            relative[id] = true;
                        }
                    }
                    if was_curr {
                        rq.pick_next_task_fair(&mut ents, &p, now, &mut blocked);
                    }
                }
            }
            Op::Pick => {
                rq.pick_next_task_fair(&mut ents, &p, now, &mut blocked);
            }
            Op::Wake(id) => {
                if ents[id].sched_delayed && ents[id].on_rq {
                    rq.enqueue_task(&mut ents, &p, now, id, ENQUEUE_DELAYED);
                    rq.check_preempt_wakeup(&mut ents, &p, now, id, 0);
                }
            }
            Op::Yield => {
                rq.yield_task(&mut ents, &p, now);
                rq.pick_next_task_fair(&mut ents, &p, now, &mut blocked);
            }
            Op::Nice(id, nice) => {
                if !ents[id].sched_delayed && !relative[id] {
                    rq.set_user_nice(&mut ents, &p, now, id, nice);
                }
            }
            Op::Slice(id, s) => {
                if !ents[id].on_rq {
                    ents[id].set_custom_slice(if s < 50_000 { None } else { Some(s) }, &p);
                }
            }
        }
        for &b in &blocked {
            assert!(!ents[b].on_rq && !ents[b].sched_delayed);
        }
        blocked.clear();
        check_invariants(&rq, &ents, &p);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn invariants_eevdf_6_17(ops in proptest::collection::vec(op_strategy(), 1..200)) {
        run_ops(p617(), &ops);
    }

    #[test]
    fn invariants_eevdf_6_12(ops in proptest::collection::vec(op_strategy(), 1..200)) {
        run_ops(FairParams::eevdf(EevdfVersion::V6_12, 8, 250), &ops);
    }

    #[test]
    fn invariants_eevdf_6_6(ops in proptest::collection::vec(op_strategy(), 1..200)) {
        run_ops(FairParams::eevdf(EevdfVersion::V6_6, 8, 250), &ops);
    }

    #[test]
    fn invariants_cfs(ops in proptest::collection::vec(op_strategy(), 1..200)) {
        run_ops(pcfs(), &ops);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Deep trees (up to 48 queued entities): every pick of the O(log n) tree search
    /// equals the linear scan's, tie order included (checked after each operation).
    #[test]
    fn tree_picks_equal_linear_scan_6_17(
        ops in proptest::collection::vec(op_strategy_n(48), 200..800)
    ) {
        run_ops_n(p617(), &ops, 48);
    }

    #[test]
    fn tree_picks_equal_linear_scan_6_6(
        ops in proptest::collection::vec(op_strategy_n(48), 200..800)
    ) {
        run_ops_n(FairParams::eevdf(EevdfVersion::V6_6, 8, 250), &ops, 48);
    }

    #[test]
    fn tree_order_cfs_deep(ops in proptest::collection::vec(op_strategy_n(48), 200..800)) {
        run_ops_n(pcfs(), &ops, 48);
    }
}

/// Equal deadlines are picked in insertion order (the rb-tree inserts an equal key to
/// the right): four entities placed at the same V with the same slice.
#[test]
fn equal_deadlines_pick_in_insertion_order() {
    let p = p617();
    let mut ents: Vec<SchedEntity> = (0..5)
        .map(|_| SchedEntity::new(0, SchedPolicy::Normal, &p))
        .collect();
    let mut rq = CfsRq::new(&p, 1024);
    for id in [3, 1, 4, 2] {
        rq.enqueue_task(&mut ents, &p, MS, id, ENQUEUE_WAKEUP);
    }
    let order: Vec<usize> = rq.queued(&ents).collect();
    let d = ents[3].deadline;
    assert!(order.iter().all(|&id| ents[id].deadline == d));
    assert_eq!(order, vec![3, 1, 4, 2]);
    assert_eq!(rq.pick_eevdf(&ents, &p, true), Some(3));
    assert_eq!(rq.pick_eevdf_linear(&ents, &p, true), Some(3));
}

/// The production checker catches each kind of corruption it documents (so the debug
/// assertions at the mutation points can fail).
#[test]
fn invariant_checker_catches_corruption() {
    let p = p617();
    let fresh = || {
        let mut ents: Vec<SchedEntity> = (0..3)
            .map(|_| SchedEntity::new(0, SchedPolicy::Normal, &p))
            .collect();
        let mut rq = CfsRq::new(&p, 1024);
        for id in 0..3 {
            rq.enqueue_task(&mut ents, &p, MS, id, ENQUEUE_WAKEUP);
        }
        rq.pick_next_task_fair(&mut ents, &p, MS, &mut Vec::new());
        assert_eq!(rq.check_invariants(&ents, &p), Ok(()));
        (rq, ents)
    };
    let (mut rq, ents) = fresh();
    rq.avg_load += 1;
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("avg_load")
    );
    let (mut rq, ents) = fresh();
    rq.avg_vruntime += 1024;
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("avg_vruntime")
    );
    let (mut rq, ents) = fresh();
    rq.h_nr_runnable -= 1;
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("h_nr_runnable")
    );
    let (mut rq, ents) = fresh();
    rq.load = LoadWeight::new(rq.load.weight + 1);
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("load.weight")
    );
    let (rq, mut ents) = fresh();
    let t = rq.queued(&ents).next().unwrap();
    ents[t].on_rq = false;
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("not on_rq")
    );
    // A slice changed behind the tree's back leaves a stale subtree minimum.
    let (rq, mut ents) = fresh();
    let t = rq.queued(&ents).next().unwrap();
    ents[t].slice = 1;
    assert!(
        rq.check_invariants(&ents, &p)
            .unwrap_err()
            .contains("min_slice")
    );
    // Moving one queued entity far right breaks the sums and the zero-lag window.
    let (rq, mut ents) = fresh();
    let t = rq.queued(&ents).next().unwrap();
    ents[t].vruntime = ents[t].vruntime.wrapping_add(1 << 30);
    assert!(rq.check_invariants(&ents, &p).is_err());
}
