//! CFS (before v6.6) on one cfs_rq, modelled on v6.5 `kernel/sched/fair.c`.
//!
//! Mirrors `__sched_period`, `sched_slice` (with the 5.13+ `BASE_SLICE` floor; the
//! `ALT_PERIOD` count equals `nr_running` without cgroups), `sched_vslice`,
//! `place_entity` (START_DEBIT for forks, GENTLE_FAIR_SLEEPERS sleeper credit),
//! `enqueue_entity`/`dequeue_entity` with vruntime (re)normalization against
//! `min_vruntime`, `pick_next_entity` with the skip/next/last buddies,
//! `check_preempt_tick`, `wakeup_gran`/`wakeup_preempt_entity`, and
//! `check_preempt_wakeup`.
//!
//! Left out (and why): the long-sleeper reset in `place_entity` (only for ~104-day
//! sleeps), `sysctl_sched_idle_min_granularity` for SCHED_IDLE entities in
//! `sched_slice` (the idle floor equals `min_granularity` here; SCHED_IDLE tasks are rare
//! in the modelled workloads), `check_spread` (debug only), group-entity walks.

use super::{
    CfsRq, DEQUEUE_MIGRATING, DEQUEUE_MOVE, DEQUEUE_SAVE, DEQUEUE_SLEEP, DO_ATTACH, DO_DETACH,
    DequeueResult, ENQUEUE_MIGRATED, ENQUEUE_WAKEUP, FairParams, LoadWeight, SchedEntity,
    SchedPolicy, UPDATE_TG, WF_FORK, calc_delta, calc_delta_fair, vruntime_before,
};

impl CfsRq {
    /// `__sched_period(nr_running)`: the latency target, stretched to
    /// `nr_running · min_granularity` beyond `sched_nr_latency` tasks.
    pub fn sched_period(params: &FairParams, nr_running: u64) -> u64 {
        if nr_running > params.sched_nr_latency() {
            nr_running * params.min_granularity_ns
        } else {
            params.sched_latency_ns
        }
    }

    /// `sched_slice()`: the entity's weighted share of the period (counting it as
    /// queued if it is not yet), at least `min_granularity` with BASE_SLICE.
    pub fn sched_slice(&self, ents: &[SchedEntity], params: &FairParams, id: usize) -> u64 {
        let se = &ents[id];
        let nr = self.nr_queued as u64 + (!se.on_rq) as u64;
        let mut slice = Self::sched_period(params, nr);
        let load = if se.on_rq {
            self.load
        } else {
            LoadWeight::new(self.load.weight + se.load.weight)
        };
        slice = calc_delta(slice, se.load.weight, &load);
        if params.features.base_slice {
            slice = slice.max(params.min_granularity_ns);
        }
        slice
    }

    /// `sched_vslice()`: the slice in virtual time.
    fn sched_vslice(&self, ents: &[SchedEntity], params: &FairParams, id: usize) -> u64 {
        calc_delta_fair(self.sched_slice(ents, params, id), &ents[id].load)
    }

    /// `place_entity()` (CFS): never move an entity backwards past `min_vruntime` minus
    /// the sleeper credit; a forked task starts one vslice behind with START_DEBIT.
    /// Public for the differential tests against the kernel's C (tests/kernel_diff).
    #[doc(hidden)]
    pub fn place_entity_cfs(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
        initial: bool,
    ) {
        let mut vruntime = self.min_vruntime;
        if initial && params.features.start_debit {
            vruntime = vruntime.wrapping_add(self.sched_vslice(ents, params, id));
        }
        if !initial {
            let mut thresh = if ents[id].policy == SchedPolicy::Idle {
                params.min_granularity_ns
            } else {
                params.sched_latency_ns
            };
            if params.features.gentle_fair_sleepers {
                thresh >>= 1;
            }
            vruntime = vruntime.wrapping_sub(thresh);
        }
        let se = &mut ents[id];
        // max_vruntime(): ensure we never gain time by being placed backwards.
        if vruntime_before(se.vruntime, vruntime) {
            se.vruntime = vruntime;
        }
    }

    /// `enqueue_entity()` (CFS). A non-wakeup or migrated enqueue carries a vruntime
    /// relative to the old queue's `min_vruntime` and is renormalized here.
    pub(super) fn enqueue_entity_cfs(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) {
        let renorm = flags & ENQUEUE_WAKEUP == 0 || flags & ENQUEUE_MIGRATED != 0;
        let is_curr = self.curr == Some(id);
        if renorm && is_curr {
            ents[id].vruntime = ents[id].vruntime.wrapping_add(self.min_vruntime);
        }
        self.update_curr(ents, params, now_ns);
        if renorm && !is_curr {
            ents[id].vruntime = ents[id].vruntime.wrapping_add(self.min_vruntime);
        }
        self.update_load_avg(ents, params, id, UPDATE_TG | DO_ATTACH);
        self.account_entity_enqueue(ents, id);
        if flags & ENQUEUE_WAKEUP != 0 {
            self.place_entity_cfs(ents, params, id, false);
        }
        if flags & ENQUEUE_MIGRATED != 0 {
            ents[id].exec_start = 0;
        }
        if !is_curr {
            self.enqueue_tree(ents, id);
        }
        ents[id].on_rq = true;
    }

    /// `dequeue_entity()` (CFS): a non-sleep dequeue normalizes vruntime
    /// (`-= min_vruntime`) so it can be re-based on another queue.
    pub(super) fn dequeue_entity_cfs(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) -> DequeueResult {
        self.update_curr(ents, params, now_ns);
        let mut action = UPDATE_TG;
        if flags & DEQUEUE_MIGRATING != 0 {
            action |= DO_DETACH;
        }
        self.update_load_avg(ents, params, id, action);
        self.clear_buddies(id);
        if self.curr != Some(id) {
            self.dequeue_tree(ents, id);
        }
        ents[id].on_rq = false;
        self.account_entity_dequeue(ents, id);
        if flags & DEQUEUE_SLEEP == 0 {
            ents[id].vruntime = ents[id].vruntime.wrapping_sub(self.min_vruntime);
        }
        if flags & (DEQUEUE_SAVE | DEQUEUE_MOVE) != DEQUEUE_SAVE {
            self.update_min_vruntime(ents);
        }
        DequeueResult::Removed
    }

    /// `wakeup_preempt_entity(curr, se)`: −1 if `se` is not behind `curr`, 1 if it is
    /// more than one (weighted) wakeup granularity behind, else 0.
    pub fn wakeup_preempt_entity(
        ents: &[SchedEntity],
        params: &FairParams,
        curr: usize,
        se: usize,
    ) -> i32 {
        let vdiff = ents[curr].vruntime.wrapping_sub(ents[se].vruntime) as i64;
        if vdiff <= 0 {
            return -1;
        }
        // wakeup_gran()
        let gran = calc_delta_fair(params.wakeup_granularity_ns, &ents[se].load) as i64;
        if vdiff > gran {
            return 1;
        }
        0
    }

    /// `pick_next_entity(cfs_rq, curr)` (CFS): the smallest vruntime (curr included if
    /// still queued), avoiding the skip buddy and preferring the next/last buddies when
    /// that is not too unfair.
    pub(super) fn pick_next_entity_cfs(
        &self,
        ents: &[SchedEntity],
        params: &FairParams,
    ) -> Option<usize> {
        let curr = self.curr.filter(|&c| ents[c].on_rq);
        let first = self.pick_first_entity(ents);
        let left = match (first, curr) {
            (None, c) => c,
            (Some(l), Some(c)) if vruntime_before(ents[c].vruntime, ents[l].vruntime) => Some(c),
            (l, _) => l,
        };
        let left = left?;
        let mut se = left;
        if self.skip == Some(se) {
            let second = if Some(se) == curr {
                first
            } else {
                match (self.pick_next_in_tree(ents, se), curr) {
                    (None, c) => c,
                    (Some(s), Some(c)) if vruntime_before(ents[c].vruntime, ents[s].vruntime) => {
                        Some(c)
                    }
                    (s, _) => s,
                }
            };
            if let Some(s) = second
                && Self::wakeup_preempt_entity(ents, params, s, left) < 1
            {
                se = s;
            }
        }
        if let Some(n) = self
            .next
            .filter(|&n| Self::wakeup_preempt_entity(ents, params, n, left) < 1)
        {
            se = n;
        } else if let Some(l) = self
            .last
            .filter(|&l| Self::wakeup_preempt_entity(ents, params, l, left) < 1)
        {
            se = l;
        }
        Some(se)
    }

    /// `check_preempt_tick()`: reschedule once curr has run its ideal slice (capped at
    /// the latency from 5.13), or — after at least `min_granularity` — if it is more
    /// than a slice of vruntime ahead of the leftmost entity.
    /// Public for the differential tests against the kernel's C (tests/kernel_diff).
    #[doc(hidden)]
    pub fn check_preempt_tick(&mut self, ents: &[SchedEntity], params: &FairParams, curr: usize) {
        let mut ideal_runtime = self.sched_slice(ents, params, curr);
        if params.features.base_slice {
            // 5.13+: BASE_SLICE can push the slice past the latency; cap it.
            ideal_runtime = ideal_runtime.min(params.sched_latency_ns);
        }
        let se = &ents[curr];
        let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if delta_exec > ideal_runtime {
            self.need_resched = true;
            self.clear_buddies(curr);
            return;
        }
        // Ensure that a task that missed wakeup preemption by a narrow margin doesn't
        // have to wait for a full slice.
        if delta_exec < params.min_granularity_ns {
            return;
        }
        let Some(first) = self.pick_first_entity(ents) else {
            return;
        };
        let delta = ents[curr].vruntime.wrapping_sub(ents[first].vruntime) as i64;
        // `if (delta < 0) return;`: a non-negative delta converts losslessly.
        let Ok(delta) = u64::try_from(delta) else {
            return;
        };
        if delta > ideal_runtime {
            self.need_resched = true;
        }
    }

    /// `check_preempt_wakeup()` (CFS, curr ≠ pse).
    pub(super) fn check_preempt_wakeup_cfs(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        se: usize,
        pse: usize,
        wake_flags: u32,
    ) -> bool {
        let f = &params.features;
        let scale = self.nr_queued as u64 >= params.sched_nr_latency();
        let mut next_buddy_marked = false;
        if f.next_buddy && scale && wake_flags & WF_FORK == 0 {
            self.set_next_buddy(ents, pse);
            next_buddy_marked = true;
        }
        if self.need_resched {
            return false;
        }
        let curr_idle = ents[se].policy == SchedPolicy::Idle;
        let p_idle = ents[pse].policy == SchedPolicy::Idle;
        let preempt = if curr_idle && !p_idle {
            // Idle tasks are by definition preempted by non-idle tasks.
            true
        } else if ents[pse].policy != SchedPolicy::Normal || !f.wakeup_preemption {
            // Batch and idle tasks do not preempt non-idle tasks.
            return false;
        } else {
            self.update_curr(ents, params, now_ns);
            if Self::wakeup_preempt_entity(ents, params, se, pse) == 1 {
                // Bias pick_next to pick the woken task, if it is not too unfair.
                if !next_buddy_marked {
                    self.set_next_buddy(ents, pse);
                }
                true
            } else {
                false
            }
        };
        if !preempt {
            return false;
        }
        self.need_resched = true;
        // Only set the backward buddy when the current task is still on the rq.
        if ents[se].on_rq && f.last_buddy && scale && ents[se].policy != SchedPolicy::Idle {
            self.last = Some(se);
        }
        true
    }
}
