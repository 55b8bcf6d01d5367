//! CFS (kernel/sched/fair.c of linux 6.1, with the kernel's rbtree from lib/rbtree.c)
//! against src/sched/fair/cfs.rs (modelled on v6.5, used by the v5.15 and v6.5 profiles):
//! sched_slice, place_entity, check_preempt_tick, wakeup_preempt_entity.
//!
//! Documented differences (counted, not failures; see README.md): the mirror omits
//! `sysctl_sched_idle_min_granularity` (SCHED_IDLE floor), the long-sleeper reset of
//! `place_entity`, and applies the later `min(sched_slice, sysctl_sched_latency)` clamp in
//! `check_preempt_tick` ("sched/fair: Limit sched slice duration"), which 6.1 does not have.

use crate::ffi::{KdCfsRq, KdCfsSe, cfs_op, feat};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::fair::{CfsRq, FairParams, SchedEntity, SchedPolicy};
use std::sync::atomic::{AtomicU64, Ordering};

const V: &str = "6.1";
/// The kernel's `sysctl_sched_idle_min_granularity` (not scaled by the CPU-count factor).
const IDLE_MIN_GRAN: u64 = 750_000;
/// `entity_is_long_sleeper()`'s bound: 2^63 / NICE_0_LOAD ns (~104 days).
const LONG_SLEEP: u64 = (1 << 63) / 1024;

#[derive(Debug, Clone)]
struct Ent {
    nice: i32,
    idle: bool,
    key: i64,
    queued: bool,
    delta_exec: u64,
    sleep: u64,
}

#[derive(Debug, Clone)]
struct State {
    v0: u64,
    ents: Vec<Ent>,
    curr: Option<usize>,
    cpus: u32,
    features: u64,
    clock: u64,
}

fn ent() -> impl Strategy<Value = Ent> {
    (
        -20i32..=19,
        prop::bool::weighted(0.15),
        prop_oneof![3 => -(1i64 << 24)..(1i64 << 24), 1 => -(1i64 << 32)..(1i64 << 32), 1 => -4i64..4],
        prop::bool::weighted(0.85),
        prop_oneof![0u64..30_000_000, 0u64..1_000_000],
        prop_oneof![8 => Just(0u64), 4 => 1u64..1 << 40, 1 => LONG_SLEEP - 10..LONG_SLEEP + 10],
    )
        .prop_map(|(nice, idle, key, queued, delta_exec, sleep)| Ent {
            nice, idle, key, queued, delta_exec, sleep,
        })
}

fn state(min_len: usize) -> impl Strategy<Value = State> {
    (
        prop_oneof![any::<u64>(), Just((-(1i64 << 20)) as u64)],
        proptest::collection::vec(ent(), min_len..14),
        any::<prop::sample::Index>(),
        prop::bool::weighted(0.8),
        prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(64), 1u32..512],
        any::<u8>(),
        1u64 << 54..1u64 << 62,
    )
        .prop_map(|(v0, ents, ci, has_curr, cpus, f, clock)| {
            let curr = has_curr.then(|| ci.index(ents.len()));
            let mut features = feat::ALT_PERIOD;
            for (bit, fb) in [
                (1, feat::GENTLE_FAIR_SLEEPERS),
                (2, feat::START_DEBIT),
                (4, feat::BASE_SLICE),
            ] {
                if f & bit == 0 {
                    features |= fb;
                }
            }
            State {
                v0,
                ents,
                curr,
                cpus,
                features,
                clock,
            }
        })
}

impl State {
    fn params(&self) -> FairParams {
        let mut p = FairParams::cfs(self.cpus, 250);
        p.features.gentle_fair_sleepers = self.features & feat::GENTLE_FAIR_SLEEPERS != 0;
        p.features.start_debit = self.features & feat::START_DEBIT != 0;
        p.features.base_slice = self.features & feat::BASE_SLICE != 0;
        p
    }

    fn entities(&self, params: &FairParams) -> Vec<SchedEntity> {
        self.ents
            .iter()
            .map(|e| {
                let policy = if e.idle {
                    SchedPolicy::Idle
                } else {
                    SchedPolicy::Normal
                };
                let mut se = SchedEntity::new(e.nice, policy, params);
                se.vruntime = self.v0.wrapping_add_signed(e.key);
                se.prev_sum_exec_runtime = 1 << 40;
                se.sum_exec_runtime = se.prev_sum_exec_runtime + e.delta_exec;
                se.exec_start = if e.sleep == 0 {
                    0
                } else {
                    self.clock - e.sleep
                };
                se
            })
            .collect()
    }

    /// Both sides: the kernel's result and the Rust runqueue (entity `except` unqueued).
    /// The kernel's result, with `sysctl_sched_idle_min_granularity` = `idle_min_gran`.
    #[allow(clippy::too_many_arguments)]
    fn kernel(
        &self,
        params: &FairParams,
        ents: &[SchedEntity],
        except: Option<usize>,
        opc: i32,
        id: usize,
        arg: u64,
        idle_min_gran: u64,
    ) -> i64 {
        let rq = KdCfsRq {
            min_vruntime: self.v0,
            clock_task: self.clock,
            features: self.features,
            latency: params.sched_latency_ns,
            min_gran: params.min_granularity_ns,
            idle_min_gran,
            wakeup_gran: params.wakeup_granularity_ns,
            nr_latency: params.sched_nr_latency(),
            curr: self.curr.map_or(-1, |c| c as i64),
        };
        let ks: Vec<KdCfsSe> = ents
            .iter()
            .enumerate()
            .map(|(i, se)| KdCfsSe {
                weight: se.load.weight,
                inv_weight: se.load.inv_weight,
                vruntime: se.vruntime,
                exec_start: se.exec_start,
                sum_exec_runtime: se.sum_exec_runtime,
                prev_sum_exec_runtime: se.prev_sum_exec_runtime,
                queued: u8::from(self.ents[i].queued && Some(i) != except),
                idle: u8::from(se.policy == SchedPolicy::Idle),
                pad: [0; 2],
            })
            .collect();
        // SAFETY: `ks` holds `ks.len()` (< 64) entities; indices are within it.
        unsafe { crate::ffi::kd61_cfs_op(&rq, ks.as_ptr(), ks.len() as i32, opc, id as i32, arg) }
    }

    fn rust_rq(
        &self,
        params: &FairParams,
        ents: &mut [SchedEntity],
        except: Option<usize>,
    ) -> CfsRq {
        let queued: Vec<usize> = (0..self.ents.len())
            .filter(|&i| self.ents[i].queued && Some(i) != except)
            .collect();
        CfsRq::kdiff_from_parts(params, self.v0, ents, &queued, self.curr)
    }
}

fn report(name: &str, n: &AtomicU64) {
    println!(
        "kernel_diff {name} (linux {}): {} cases where the default kernel differs (documented)",
        crate::release(V),
        n.load(Ordering::Relaxed)
    );
}

#[test]
fn sched_slice_matches() {
    if !available("cfs", V) {
        return;
    }
    let documented = AtomicU64::new(0);
    let s = (state(1), any::<prop::sample::Index>());
    assert_no_mismatch("cfs::sched_slice", V, cases(5000), s, |(st, ix)| {
        let id = ix.index(st.ents.len());
        let params = st.params();
        let mut ents = st.entities(&params);
        let k = st.kernel(&params, &ents, None, cfs_op::SLICE, id, 0, IDLE_MIN_GRAN) as u64;
        // The mirror's SCHED_IDLE floor is min_granularity: exact against the kernel with
        // sysctl_sched_idle_min_granularity = min_granularity; count where the default
        // (0.75 ms, unscaled) gives another slice.
        let k_as_mirror = st.kernel(
            &params,
            &ents,
            None,
            cfs_op::SLICE,
            id,
            0,
            params.min_granularity_ns,
        ) as u64;
        if k != k_as_mirror {
            documented.fetch_add(1, Ordering::Relaxed);
        }
        let rq = st.rust_rq(&params, &mut ents, None);
        compare(
            "sched_slice",
            &k_as_mirror,
            &rq.sched_slice(&ents, &params, id),
        )
    });
    report("cfs::sched_slice", &documented);
}

#[test]
fn place_entity_matches() {
    if !available("cfs", V) {
        return;
    }
    let documented = AtomicU64::new(0);
    let s = (state(1), any::<prop::sample::Index>(), any::<bool>());
    assert_no_mismatch(
        "cfs::place_entity",
        V,
        cases(5000),
        s,
        |(st, ix, initial)| {
            // enqueue_entity() places an entity before queueing it (a fork: initial, or
            // a wakeup), after account_entity_enqueue(): it counts in nr_running and load.
            let id = ix.index(st.ents.len());
            let mut st = st.clone();
            st.ents[id].queued = true;
            if st.curr == Some(id) {
                st.curr = None;
            }
            let st = &st;
            let params = st.params();
            let mut ents = st.entities(&params);
            let k = st.kernel(
                &params,
                &ents,
                None,
                cfs_op::PLACE,
                id,
                u64::from(*initial),
                IDLE_MIN_GRAN,
            ) as u64;
            let k_as_mirror = st.kernel(
                &params,
                &ents,
                None,
                cfs_op::PLACE,
                id,
                u64::from(*initial),
                params.min_granularity_ns,
            ) as u64;
            let mut rq = st.rust_rq(&params, &mut ents, None);
            rq.place_entity_cfs(&mut ents, &params, id, *initial);
            // Long sleepers (entity_is_long_sleeper(): > 2^63/1024 ns since exec_start)
            // are reset to the base vruntime by the kernel, never here.
            let long_sleeper = st.ents[id].sleep > LONG_SLEEP;
            if k != k_as_mirror || (long_sleeper && k != ents[id].vruntime) {
                documented.fetch_add(1, Ordering::Relaxed);
            }
            if long_sleeper {
                return Ok(());
            }
            compare("placed vruntime", &k_as_mirror, &ents[id].vruntime)
        },
    );
    report("cfs::place_entity", &documented);
}

#[test]
fn check_preempt_tick_matches() {
    if !available("cfs", V) {
        return;
    }
    let documented = AtomicU64::new(0);
    let s = (state(2), any::<prop::sample::Index>());
    assert_no_mismatch("cfs::check_preempt_tick", V, cases(5000), s, |(st, ix)| {
        // entity_tick() calls it for curr, queued, with others in the tree.
        let c = st.curr.unwrap_or_else(|| ix.index(st.ents.len()));
        let mut st = st.clone();
        st.curr = Some(c);
        st.ents[c].queued = true;
        // entity_tick() calls it only when nr_running > 1 (the tree is not empty).
        let other = (c + 1) % st.ents.len();
        st.ents[other].queued = true;
        let st = &st;
        let params = st.params();
        let mut ents = st.entities(&params);
        let k = st.kernel(&params, &ents, None, cfs_op::TICK, c, 0, IDLE_MIN_GRAN);
        let k_as_mirror = st.kernel(
            &params,
            &ents,
            None,
            cfs_op::TICK,
            c,
            0,
            params.min_granularity_ns,
        );
        let mut rq = st.rust_rq(&params, &mut ents, None);
        let slice = rq.sched_slice(&ents, &params, c);
        rq.check_preempt_tick(&ents, &params, c);
        let (kr, rr) = (k_as_mirror & 1 == 1, rq.need_resched());
        // The SCHED_IDLE floor (as in sched_slice), and the post-6.1 clamp of the ideal
        // runtime to sched_latency (the mirror's v6.5).
        let clamped = params.features.base_slice && slice > params.sched_latency_ns;
        if k != k_as_mirror || (kr != rr && clamped) {
            documented.fetch_add(1, Ordering::Relaxed);
        }
        if clamped {
            return Ok(());
        }
        compare("resched", &kr, &rr)
    });
    report("cfs::check_preempt_tick", &documented);
}

#[test]
fn wakeup_preempt_entity_matches() {
    if !available("cfs", V) {
        return;
    }
    let s = (
        state(1),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
    );
    assert_no_mismatch(
        "cfs::wakeup_preempt_entity+wakeup_gran",
        V,
        cases(5000),
        s,
        |(st, a, b)| {
            let (c, se) = (a.index(st.ents.len()), b.index(st.ents.len()));
            let params = st.params();
            let ents = st.entities(&params);
            let k = st.kernel(
                &params,
                &ents,
                None,
                cfs_op::WAKEUP_PREEMPT,
                c,
                se as u64,
                IDLE_MIN_GRAN,
            );
            let r = CfsRq::wakeup_preempt_entity(&ents, &params, c, se);
            compare("wakeup_preempt_entity", &k, &i64::from(r))
        },
    );
}
