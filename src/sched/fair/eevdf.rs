//! EEVDF (v6.6+): Earliest Eligible Virtual Deadline First on one cfs_rq.
//!
//! Mirrors `kernel/sched/fair.c`: `avg_vruntime`/`avg_vruntime_add`/`avg_vruntime_sub`/
//! `update_min_vruntime` (the add/sub/v0 bookkeeping lives in the parent module's tree
//! helpers), `entity_eligible`/`vruntime_eligible`, `entity_lag`/`update_entity_lag`,
//! `reweight_eevdf` (v6.7–v6.12; `reweight_entity` is in the parent module),
//! `cfs_rq_min_slice`, `set_protect_slice`/`update_protect_slice`/`protect_slice`/
//! `cancel_protect_slice` (6.17) and the 6.6–6.16 deadline-in-vlag stash,
//! `did_preempt_short`/`do_preempt_short` (6.12–6.16), `__pick_eevdf(protect)`,
//! `update_deadline`, `update_curr`'s resched rule, `place_entity`, `enqueue_entity`,
//! `dequeue_entity` with DELAY_DEQUEUE, `requeue_delayed_entity`,
//! `check_preempt_wakeup_fair`, `yield_task_fair`.
//!
//! V = v0 + Σ(v_i − v0)·w_i / Σw_i is computed exactly (i128 sums; the kernel's s64 sums
//! give the same values in every realistic range), with the kernel's floor division
//! ("left bias") so that an entity at V is eligible. v0 is `min_vruntime` (≤ 6.18); the
//! 6.19 `zero_vruntime` rebasing changes only the representation, not V or any pick.
//!
//! The runqueue is the augmented ordered tree of `super::tree` (`min_vruntime`/`min_slice`
//! subtree fields): `__pick_eevdf` is the kernel's heap search, O(log n). The O(n) scans
//! it replaced are kept as the test oracle ([`CfsRq::pick_eevdf_linear`]), compared with
//! every pick by [`CfsRq::check_invariants`].
//!
//! Left out (and why): the 6.19+ max-slice lag clamp and
//! the 2026 "no negative lag increase while delayed" rule are newer than the modelled
//! versions; SCHED_IDLE *cgroups* (no cgroups).

use super::{
    CfsRq, DEQUEUE_DELAYED, DEQUEUE_MIGRATING, DEQUEUE_MOVE, DEQUEUE_SAVE, DEQUEUE_SLEEP,
    DEQUEUE_SPECIAL, DO_ATTACH, DO_DETACH, DequeueResult, ENQUEUE_INITIAL, ENQUEUE_MIGRATED,
    EevdfVersion, FairParams, SchedEntity, SchedPolicy, UPDATE_TG, WF_FORK, calc_delta_fair,
    vruntime_before,
};

impl CfsRq {
    /// Σ key·w and Σ w including curr when it is queued (curr is kept out of the tree).
    fn avg_sums_with_curr(&self, ents: &[SchedEntity]) -> (i128, i128) {
        let mut avg = self.avg_vruntime;
        let mut load = self.avg_load as i128;
        if let Some(c) = self.curr
            && ents[c].on_rq
        {
            let w = ents[c].load.weight as i128;
            avg += self.entity_key(ents[c].vruntime) as i128 * w;
            load += w;
        }
        (avg, load)
    }

    /// `avg_vruntime()`: V, the load-weighted average vruntime of the queued entities
    /// (curr included when queued), floored. With nothing queued, `min_vruntime`.
    pub fn avg_vruntime(&self, ents: &[SchedEntity]) -> u64 {
        let (mut avg, load) = self.avg_sums_with_curr(ents);
        if load != 0 {
            // Sign flips effective floor / ceiling: keep the left bias.
            if avg < 0 {
                avg -= load - 1;
            }
            avg /= load;
        }
        // A load-weighted mean (floored) of i64 keys lies between the smallest and the
        // largest key.
        let avg = i64::try_from(avg).expect("a weighted mean of i64 keys fits in i64");
        self.min_vruntime.wrapping_add_signed(avg)
    }

    /// `vruntime_eligible()`: V ≥ v, evaluated without division as
    /// Σ(v_i − v0)·w_i ≥ (v − v0)·Σw_i.
    pub fn vruntime_eligible(&self, ents: &[SchedEntity], vruntime: u64) -> bool {
        let (avg, load) = self.avg_sums_with_curr(ents);
        avg >= self.entity_key(vruntime) as i128 * load
    }

    /// `entity_eligible()`: lag ≥ 0.
    pub fn entity_eligible(&self, ents: &[SchedEntity], id: usize) -> bool {
        self.vruntime_eligible(ents, ents[id].vruntime)
    }

    /// `update_entity_lag()`: vlag = V − v, clamped to ±calc_delta_fair(max(2·slice,
    /// TICK_NSEC)).
    /// Public for the differential tests against the kernel's C (tests/kernel_diff).
    #[doc(hidden)]
    pub fn update_entity_lag(&mut self, ents: &mut [SchedEntity], params: &FairParams, id: usize) {
        let v = self.avg_vruntime(ents);
        // The kernel's `WARN_ON_ONCE(!se->on_rq)`: lag is only taken of a queued entity.
        debug_assert!(ents[id].on_rq, "update_entity_lag of unqueued entity {id}");
        ents[id].vlag = Self::entity_lag(v, &ents[id], params);
    }

    /// `entity_lag()`: `avruntime - v`, clamped to the virtual length of
    /// `max(2 * slice, TICK_NSEC)` at the entity's weight.
    pub(super) fn entity_lag(avruntime: u64, se: &SchedEntity, params: &FairParams) -> i64 {
        let vlag = avruntime.wrapping_sub(se.vruntime) as i64;
        let limit = calc_delta_fair((2 * se.slice).max(params.tick_nsec), &se.load) as i64;
        debug_assert!(limit >= 0, "lag limit overflow");
        vlag.clamp(-limit, limit)
    }

    /// `reweight_eevdf()` (v6.7–v6.12; 6.12.y): a queued entity's vruntime and deadline
    /// scaled around `avruntime` (V with the entity in the sums) by old/new weight, with
    /// the kernel's wrapping s64 products and truncating `div_s64()`; `vlag` untouched.
    pub(super) fn reweight_eevdf(
        se: &mut SchedEntity,
        params: &FairParams,
        avruntime: u64,
        weight: u64,
    ) {
        let old_weight = se.load.weight as i64;
        let weight = weight as i64;
        if avruntime != se.vruntime {
            let vlag = Self::entity_lag(avruntime, se, params);
            let vlag = vlag.wrapping_mul(old_weight) / weight;
            se.vruntime = avruntime.wrapping_sub_signed(vlag);
        }
        let vslice = se.deadline.wrapping_sub(avruntime) as i64;
        let vslice = vslice.wrapping_mul(old_weight) / weight;
        se.deadline = avruntime.wrapping_add_signed(vslice);
    }

    /// `cfs_rq_min_slice()`: the smallest slice among queued entities (curr if queued,
    /// and the tree: the root's `min_slice`); `u64::MAX` when none.
    pub(super) fn cfs_rq_min_slice(&self, ents: &[SchedEntity]) -> u64 {
        let mut min = u64::MAX;
        if let Some(c) = self.curr
            && ents[c].on_rq
        {
            min = ents[c].slice;
        }
        if let Some(s) = self.tree_min_slice(ents) {
            min = min.min(s);
        }
        min
    }

    /// [`CfsRq::cfs_rq_min_slice`] by a scan of the tree (the test oracle).
    pub(super) fn cfs_rq_min_slice_linear(&self, ents: &[SchedEntity]) -> u64 {
        let mut min = u64::MAX;
        if let Some(c) = self.curr
            && ents[c].on_rq
        {
            min = ents[c].slice;
        }
        for id in self.queued(ents) {
            min = min.min(ents[id].slice);
        }
        min
    }

    /// `set_protect_slice()` at pick. 6.17: protect curr up to the smaller of its
    /// deadline and `vruntime + vslice(min(queued min slice, own slice))` (with
    /// NO_RUN_TO_PARITY, a minimum quantum of min(0.75 ms, own slice)). 6.6–6.16: stash
    /// the deadline in `vlag` (protected while they stay equal).
    pub(super) fn set_protect_slice(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
    ) {
        if params.eevdf_version < EevdfVersion::V6_17 {
            ents[id].vlag = ents[id].deadline as i64;
            return;
        }
        let mut slice = params.normalized_base_slice_ns;
        if params.features.run_to_parity {
            slice = self.cfs_rq_min_slice(ents);
        }
        let se = &mut ents[id];
        slice = slice.min(se.slice);
        let mut vprot = se.deadline;
        if slice != se.slice {
            let v = se.vruntime.wrapping_add(calc_delta_fair(slice, &se.load));
            if vruntime_before(v, vprot) {
                vprot = v;
            }
        }
        se.vprot = vprot;
    }

    /// `update_protect_slice()` (6.17): shrink curr's protection to the smallest queued
    /// slice.
    fn update_protect_slice(&mut self, ents: &mut [SchedEntity], id: usize) {
        let slice = self.cfs_rq_min_slice(ents);
        let se = &mut ents[id];
        let v = se.vruntime.wrapping_add(calc_delta_fair(slice, &se.load));
        if vruntime_before(v, se.vprot) {
            se.vprot = v;
        }
    }

    /// `protect_slice()`.
    pub fn protect_slice(&self, ents: &[SchedEntity], params: &FairParams, id: usize) -> bool {
        let se = &ents[id];
        if params.eevdf_version >= EevdfVersion::V6_17 {
            vruntime_before(se.vruntime, se.vprot)
        } else {
            // The kernel's `se->vlag == se->deadline` compares s64 with u64: the stash is
            // the deadline's bits, so compare them as bits.
            se.vlag.cast_unsigned() == se.deadline
        }
    }

    /// `cancel_protect_slice()`.
    fn cancel_protect_slice(&mut self, ents: &mut [SchedEntity], params: &FairParams, id: usize) {
        if self.protect_slice(ents, params, id) {
            let se = &mut ents[id];
            if params.eevdf_version >= EevdfVersion::V6_17 {
                se.vprot = se.vruntime;
            } else {
                se.vlag = se.deadline.wrapping_add(1) as i64;
            }
        }
    }

    /// `__pick_eevdf(cfs_rq, protect)` (6.17; `pick_eevdf` before): the earliest
    /// virtual deadline among eligible entities, curr included; a protected eligible
    /// curr is kept. The tree part is the kernel's heap search (`Self::eevdf_search`).
    pub fn pick_eevdf(
        &self,
        ents: &[SchedEntity],
        params: &FairParams,
        protect: bool,
    ) -> Option<usize> {
        self.pick_eevdf_by(ents, params, protect, Self::eevdf_search)
    }

    /// [`CfsRq::pick_eevdf`] with the tree scanned linearly for the earliest eligible
    /// deadline: the O(n) implementation the tree search replaced, kept as the oracle
    /// the invariant checker and the tests compare every pick with.
    pub fn pick_eevdf_linear(
        &self,
        ents: &[SchedEntity],
        params: &FairParams,
        protect: bool,
    ) -> Option<usize> {
        self.pick_eevdf_by(ents, params, protect, Self::eevdf_scan)
    }

    /// The leftmost eligible tree entity by a scan (oracle of [`Self::eevdf_search`]).
    fn eevdf_scan(&self, ents: &[SchedEntity]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for id in self.queued(ents) {
            if !self.entity_eligible(ents, id) {
                continue;
            }
            match best {
                Some(b) if !self.tree_before(ents, id, b) => {}
                _ => best = Some(id),
            }
        }
        best
    }

    /// The heap search of `__pick_eevdf`: the leftmost entity if it is eligible;
    /// otherwise descend from the root, into the left subtree whenever its
    /// `min_vruntime` is eligible (eligible entities there have earlier deadlines),
    /// else take the node if eligible, else go right.
    fn eevdf_search(&self, ents: &[SchedEntity]) -> Option<usize> {
        let (avg, load) = self.avg_sums_with_curr(ents);
        let eligible = |v: u64| avg >= self.entity_key(v) as i128 * load;
        let first = self.pick_first_entity(ents)?;
        if eligible(ents[first].vruntime) {
            return Some(first);
        }
        let mut node = self.tree_root();
        while let Some(n) = node {
            if let Some((left, min_vruntime)) = self.tree_left(ents, n)
                && eligible(min_vruntime)
            {
                node = Some(left);
                continue;
            }
            if eligible(ents[n].vruntime) {
                return Some(n);
            }
            node = self.tree_right(ents, n);
        }
        None
    }

    /// The body of `__pick_eevdf` around the tree search `search`.
    fn pick_eevdf_by(
        &self,
        ents: &[SchedEntity],
        params: &FairParams,
        protect: bool,
        search: fn(&Self, &[SchedEntity]) -> Option<usize>,
    ) -> Option<usize> {
        let first = self.pick_first_entity(ents);
        if self.nr_queued == 1 {
            return match self.curr {
                Some(c) if ents[c].on_rq => Some(c),
                _ => first,
            };
        }
        let curr = self
            .curr
            .filter(|&c| ents[c].on_rq && self.entity_eligible(ents, c));
        if let Some(c) = curr {
            let gate = if params.eevdf_version >= EevdfVersion::V6_17 {
                protect
            } else {
                params.features.run_to_parity
            };
            if gate && self.protect_slice(ents, params, c) {
                return Some(c);
            }
        }
        let mut best = search(self, ents);
        if let Some(c) = curr {
            match best {
                None => best = Some(c),
                Some(b) if vruntime_before(ents[c].deadline, ents[b].deadline) => best = Some(c),
                _ => {}
            }
        }
        debug_assert!(best.is_some() || first.is_none(), "no eligible entity");
        // The weighted average guarantees an eligible entity; fall back to the leftmost
        // (what the kernel's search would return at worst) rather than nothing.
        best.or(first)
    }

    /// `update_deadline()`: once the request is served (vruntime ≥ deadline), refresh
    /// the slice (unless custom) and set a new deadline; returns "resched".
    /// Public for the differential tests against the kernel's C (tests/kernel_diff).
    #[doc(hidden)]
    pub fn update_deadline(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
    ) -> bool {
        let se = &mut ents[id];
        if vruntime_before(se.vruntime, se.deadline) {
            return false;
        }
        if !se.custom_slice {
            se.slice = params.base_slice_ns;
        }
        se.deadline = se
            .vruntime
            .wrapping_add(calc_delta_fair(se.slice, &se.load));
        true
    }

    /// The EEVDF tail of `update_curr()` after vruntime was advanced: deadline, v0, and
    /// the resched rule of the modelled version.
    pub(super) fn update_curr_eevdf(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        c: usize,
    ) {
        let resched = self.update_deadline(ents, params, c);
        self.update_min_vruntime(ents);
        if self.nr_queued == 1 {
            // A lone entity is never rescheduled by slice expiry.
            return;
        }
        let extra = match params.eevdf_version {
            EevdfVersion::V6_17 => !self.protect_slice(ents, params, c),
            EevdfVersion::V6_12 => {
                // did_preempt_short()
                params.features.preempt_short
                    && !self.protect_slice(ents, params, c)
                    && !self.entity_eligible(ents, c)
            }
            EevdfVersion::V6_6 => false,
        };
        if resched || extra {
            self.resched_and_clear_buddies(c);
        }
    }

    /// `place_entity()`: put the entity at V − (inflated) lag with a fresh deadline
    /// (half a slice for a forked task with PLACE_DEADLINE_INITIAL; the saved relative
    /// deadline with PLACE_REL_DEADLINE).
    /// Public for the differential tests against the kernel's C (tests/kernel_diff).
    #[doc(hidden)]
    pub fn place_entity_eevdf(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
        flags: u32,
    ) {
        let v = self.avg_vruntime(ents);
        if !ents[id].custom_slice {
            ents[id].slice = params.base_slice_ns;
        }
        let mut vslice = calc_delta_fair(ents[id].slice, &ents[id].load);
        let mut lag: i64 = 0;
        if params.features.place_lag && self.nr_queued > 0 && ents[id].vlag != 0 {
            // Adding the entity moves V by −w·vlag/(W + w); inflate the lag so that
            // after placement the entity's lag is the one it left with:
            // vlag' = vlag · (W + w) / W.
            let mut load = self.avg_load;
            if let Some(c) = self.curr
                && ents[c].on_rq
            {
                load += ents[c].load.weight;
            }
            let w = ents[id].load.weight;
            let load = load.max(1);
            let lag_wide = ents[id].vlag as i128 * (load + w) as i128 / load as i128;
            // |vlag|·w is at most about max(2·slice, tick)·1024 (entity_lag's clamp, kept
            // by reweight's w_old/w_new scaling), so |vlag|·(W + w)/W <= |vlag|·(1 + w) is
            // at most about max(2·slice, tick)·2048: far below 2^63.
            lag = i64::try_from(lag_wide).expect("inflated lag is bounded by the lag clamp");
        }
        let se = &mut ents[id];
        se.vruntime = v.wrapping_sub_signed(lag);
        if se.rel_deadline {
            se.deadline = se.deadline.wrapping_add(se.vruntime);
            se.rel_deadline = false;
            return;
        }
        if params.features.place_deadline_initial && flags & ENQUEUE_INITIAL != 0 {
            vslice /= 2;
        }
        se.deadline = se.vruntime.wrapping_add(vslice);
    }

    /// `enqueue_entity()` (EEVDF).
    pub(super) fn enqueue_entity_eevdf(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) {
        let is_curr = self.curr == Some(id);
        // If we're the current task, we must renormalise before calling update_curr().
        if is_curr {
            self.place_entity_eevdf(ents, params, id, flags);
        }
        self.update_curr(ents, params, now_ns);
        self.update_load_avg(ents, params, id, UPDATE_TG | DO_ATTACH);
        if !is_curr {
            self.place_entity_eevdf(ents, params, id, flags);
        }
        self.account_entity_enqueue(ents, id);
        if flags & ENQUEUE_MIGRATED != 0 {
            ents[id].exec_start = 0;
        }
        if !is_curr {
            self.enqueue_tree(ents, id);
        }
        ents[id].on_rq = true;
    }

    /// `dequeue_entity()` (EEVDF, with DELAY_DEQUEUE).
    pub(super) fn dequeue_entity_eevdf(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        id: usize,
        flags: u32,
    ) -> DequeueResult {
        let sleep = flags & DEQUEUE_SLEEP != 0;
        self.update_curr(ents, params, now_ns);
        self.clear_buddies(id);
        if flags & DEQUEUE_DELAYED != 0 {
            debug_assert!(ents[id].sched_delayed);
        } else {
            // DELAY_DEQUEUE relies on spurious wakeups; special task states must not
            // suffer them.
            let delay = sleep && flags & DEQUEUE_SPECIAL == 0;
            debug_assert!(!(delay && ents[id].sched_delayed));
            if params.features.delay_dequeue && delay && !self.entity_eligible(ents, id) {
                self.update_load_avg(ents, params, id, 0);
                ents[id].sched_delayed = true;
                return DequeueResult::Delayed;
            }
        }
        let mut action = UPDATE_TG;
        if flags & DEQUEUE_MIGRATING != 0 {
            action |= DO_DETACH;
        }
        self.update_load_avg(ents, params, id, action);
        self.update_entity_lag(ents, params, id);
        if params.features.place_rel_deadline && !sleep {
            let se = &mut ents[id];
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
        }
        if self.curr != Some(id) {
            self.dequeue_tree(ents, id);
        }
        ents[id].on_rq = false;
        self.account_entity_dequeue(ents, id);
        if flags & (DEQUEUE_SAVE | DEQUEUE_MOVE) != DEQUEUE_SAVE {
            self.update_min_vruntime(ents);
        }
        DequeueResult::Removed
    }

    /// `requeue_delayed_entity()`: a delayed entity is woken while still queued. With
    /// DELAY_ZERO, positive lag is dropped and the entity re-placed at V.
    pub(super) fn requeue_delayed_entity(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        id: usize,
    ) {
        if params.features.delay_zero {
            self.update_entity_lag(ents, params, id);
            if ents[id].vlag > 0 {
                let is_curr = self.curr == Some(id);
                self.nr_queued -= 1;
                if !is_curr {
                    self.dequeue_tree(ents, id);
                }
                ents[id].vlag = 0;
                self.place_entity_eevdf(ents, params, id, 0);
                if !is_curr {
                    self.enqueue_tree(ents, id);
                }
                self.nr_queued += 1;
            }
        }
        self.update_load_avg(ents, params, id, 0);
        // clear_delayed()
        ents[id].sched_delayed = false;
        self.h_nr_runnable += 1;
    }

    /// `check_preempt_wakeup_fair()` for EEVDF (curr ≠ pse, both on this rq).
    pub(super) fn check_preempt_wakeup_eevdf(
        &mut self,
        ents: &mut [SchedEntity],
        params: &FairParams,
        now_ns: u64,
        se: usize,
        pse: usize,
        wake_flags: u32,
    ) -> bool {
        let f = &params.features;
        if f.next_buddy && wake_flags & WF_FORK == 0 && !ents[pse].sched_delayed {
            self.set_next_buddy(ents, pse);
        }
        // Already marked for resched: nothing to add.
        if self.need_resched || !f.wakeup_preemption {
            return false;
        }
        let cse_is_idle = ents[se].policy == SchedPolicy::Idle;
        let pse_is_idle = ents[pse].policy == SchedPolicy::Idle;
        if cse_is_idle && !pse_is_idle {
            // Preempt an idle entity in favour of a non-idle one, dropping protection.
            self.cancel_protect_slice(ents, params, se);
            self.need_resched = true;
            return true;
        }
        if cse_is_idle != pse_is_idle || ents[pse].policy != SchedPolicy::Normal {
            // SCHED_IDLE/SCHED_BATCH wakees never preempt.
            return false;
        }
        self.update_curr(ents, params, now_ns);
        let preempt = match params.eevdf_version {
            EevdfVersion::V6_17 => {
                let short = f.preempt_short && ents[pse].slice < ents[se].slice;
                if self.pick_eevdf(ents, params, !short) == Some(pse) {
                    if short {
                        self.cancel_protect_slice(ents, params, se);
                    }
                    true
                } else {
                    if f.run_to_parity && short {
                        self.update_protect_slice(ents, se);
                    }
                    false
                }
            }
            EevdfVersion::V6_12 => {
                // do_preempt_short()
                let short = f.preempt_short
                    && ents[pse].slice < ents[se].slice
                    && self.entity_eligible(ents, pse)
                    && (vruntime_before(ents[pse].deadline, ents[se].deadline)
                        || !self.entity_eligible(ents, se));
                if short {
                    self.cancel_protect_slice(ents, params, se);
                }
                self.pick_eevdf(ents, params, true) == Some(pse)
            }
            EevdfVersion::V6_6 => self.pick_eevdf(ents, params, true) == Some(pse),
        };
        if preempt {
            self.need_resched = true;
        }
        preempt
    }

    /// The EEVDF part of `yield_task_fair()`. 6.17: an eligible curr forfeits the rest
    /// of its request (vruntime = deadline) and its deadline moves one slice on; before:
    /// the deadline moves one slice on (which also ends the deadline-stash protection).
    pub(super) fn yield_eevdf(&mut self, ents: &mut [SchedEntity], params: &FairParams, c: usize) {
        if params.eevdf_version >= EevdfVersion::V6_17 {
            if self.entity_eligible(ents, c) {
                let se = &mut ents[c];
                se.vruntime = se.deadline;
                se.deadline = se
                    .deadline
                    .wrapping_add(calc_delta_fair(se.slice, &se.load));
                self.update_min_vruntime(ents);
            }
        } else {
            let se = &mut ents[c];
            se.deadline = se
                .deadline
                .wrapping_add(calc_delta_fair(se.slice, &se.load));
        }
    }

    /// The lag of `id` as it stands now: V − v (unclamped), for inspection.
    pub fn entity_vlag_now(&self, ents: &[SchedEntity], id: usize) -> i64 {
        self.avg_vruntime(ents).wrapping_sub(ents[id].vruntime) as i64
    }
}
