//! EEVDF on one cfs_rq (kernel/sched/fair.c of linux 6.12.y, with the kernel's augmented
//! rbtree from lib/rbtree.c) against src/sched/fair/eevdf.rs: avg_vruntime,
//! vruntime_eligible/entity_eligible, pick_eevdf, update_entity_lag, update_deadline,
//! place_entity, reweight_entity (6.12's reweight_eevdf form; differences counted).

use crate::ffi::{KdOut, KdRq, KdSe, feat, op};
use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::sched::fair::{
    CfsRq, ENQUEUE_INITIAL, EevdfVersion, FairParams, LoadWeight, SchedEntity, SchedPolicy,
    calc_delta_fair,
};
use std::sync::atomic::{AtomicU64, Ordering};

const V: &str = "6.12";

/// One entity of a generated runqueue.
#[derive(Debug, Clone)]
pub(crate) struct Ent {
    load: LoadWeight,
    key: i64,
    dl: i64,
    slice: Option<u64>,
    vlag: i64,
    queued: bool,
    rel_deadline: bool,
    protect: bool,
}

/// A generated runqueue state and the features/tunables in force.
#[derive(Debug, Clone)]
pub(crate) struct State {
    v0: u64,
    ents: Vec<Ent>,
    curr: Option<usize>,
    features: u64,
    base_slice: u64,
    tick_nsec: u64,
    /// The mirror's REWEIGHT_PLACE (v6.13+ `reweight_entity()`); 6.12 is off.
    reweight_place: bool,
}

fn ent() -> impl Strategy<Value = Ent> {
    let load = prop_oneof![
        8 => (-20i32..=19).prop_map(LoadWeight::from_nice),
        1 => Just(LoadWeight::idle()),
    ];
    let key = prop_oneof![4 => -(1i64 << 24)..(1i64 << 24), 1 => -(1i64 << 34)..(1i64 << 34), 1 => -64i64..64];
    let dl = prop_oneof![3 => -(1i64 << 22)..(1i64 << 26), 1 => -8i64..8];
    let slice = prop_oneof![3 => Just(None), 1 => (100_000u64..=100_000_000).prop_map(Some)];
    let vlag = prop_oneof![2 => Just(0i64), 3 => -(1i64 << 26)..(1i64 << 26)];
    (
        load,
        key,
        dl,
        slice,
        vlag,
        prop::bool::weighted(0.85),
        any::<bool>(),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(load, key, dl, slice, vlag, queued, rel_deadline, protect)| Ent {
                load,
                key,
                dl,
                slice,
                vlag,
                queued,
                rel_deadline,
                protect,
            },
        )
}

pub(crate) fn state() -> impl Strategy<Value = State> {
    (
        prop_oneof![
            any::<u64>(),
            Just((-(1i64 << 20)) as u64),
            Just(u64::MAX - 100)
        ],
        proptest::collection::vec(ent(), 1..14),
        any::<prop::sample::Index>(),
        prop::bool::weighted(0.7),
        any::<u8>(),
        prop_oneof![Just(750_000u64), 100_000u64..=3_000_000],
        prop_oneof![Just(4_000_000u64), Just(1_000_000), Just(10_000_000)],
    )
        .prop_map(|(v0, ents, ci, has_curr, f, base_slice, tick_nsec)| {
            let curr = has_curr.then(|| ci.index(ents.len()));
            let mut features = 0;
            for (bit, fb) in [
                (1, feat::PLACE_LAG),
                (2, feat::PLACE_DEADLINE_INITIAL),
                (4, feat::PLACE_REL_DEADLINE),
                (8, feat::RUN_TO_PARITY),
            ] {
                if f & bit == 0 {
                    features |= fb;
                }
            }
            let mut st = State {
                v0,
                ents,
                curr,
                features,
                base_slice,
                tick_nsec,
                reweight_place: false,
            };
            // rel_deadline is only ever set by dequeue_entity() under PLACE_REL_DEADLINE.
            if features & feat::PLACE_REL_DEADLINE == 0 {
                st.ents.iter_mut().for_each(|e| e.rel_deadline = false);
            }
            st
        })
}

impl State {
    fn params(&self) -> FairParams {
        let mut p = FairParams::eevdf(EevdfVersion::V6_12, 8, 250);
        p.base_slice_ns = self.base_slice;
        p.tick_nsec = self.tick_nsec;
        p.features.place_lag = self.features & feat::PLACE_LAG != 0;
        p.features.place_deadline_initial = self.features & feat::PLACE_DEADLINE_INITIAL != 0;
        p.features.place_rel_deadline = self.features & feat::PLACE_REL_DEADLINE != 0;
        p.features.run_to_parity = self.features & feat::RUN_TO_PARITY != 0;
        p.features.reweight_place = self.reweight_place;
        p
    }

    /// The entities (on both sides' terms): vruntime = v0 + key, deadline = vruntime +
    /// the slice's virtual length + dl, the 6.12 protect-slice stash (vlag = deadline)
    /// on a protected curr.
    fn entities(&self, params: &FairParams) -> Vec<SchedEntity> {
        self.ents
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut se = SchedEntity::new(0, SchedPolicy::Normal, params);
                se.load = e.load;
                se.vruntime = self.v0.wrapping_add_signed(e.key);
                se.slice = e.slice.unwrap_or(params.base_slice_ns);
                se.custom_slice = e.slice.is_some();
                se.deadline = se
                    .vruntime
                    .wrapping_add(calc_delta_fair(se.slice, &se.load))
                    .wrapping_add_signed(e.dl);
                se.vlag = if e.protect && self.curr == Some(i) {
                    se.deadline as i64
                } else {
                    e.vlag
                };
                se.rel_deadline = e.rel_deadline;
                se
            })
            .collect()
    }

    fn queued(&self, except: Option<usize>) -> Vec<usize> {
        (0..self.ents.len())
            .filter(|&i| self.ents[i].queued && Some(i) != except)
            .collect()
    }

    fn kd(&self, ents: &[SchedEntity], except: Option<usize>) -> (KdRq, Vec<KdSe>) {
        let rq = KdRq {
            v0: self.v0,
            curr: self.curr.map_or(-1, |c| c as i64),
            features: self.features,
            base_slice: self.base_slice,
            tick_nsec: self.tick_nsec,
        };
        let ks = ents
            .iter()
            .enumerate()
            .map(|(i, se)| KdSe {
                weight: se.load.weight,
                inv_weight: se.load.inv_weight,
                vruntime: se.vruntime,
                deadline: se.deadline,
                slice: se.slice,
                vlag: se.vlag,
                queued: u8::from(self.ents[i].queued && Some(i) != except),
                rel_deadline: u8::from(se.rel_deadline),
                custom_slice: u8::from(se.custom_slice),
                pad: 0,
            })
            .collect();
        (rq, ks)
    }
}

/// Builds both sides (entity `except` left unqueued: the one being placed), runs `op` on
/// each, compares the runqueue sums and every entity field; returns both outputs.
fn run(
    st: &State,
    except: Option<usize>,
    opc: i32,
    id: usize,
    arg: u64,
    rust: impl FnOnce(&mut CfsRq, &mut [SchedEntity], &FairParams) -> KdOut,
) -> Result<(KdOut, KdOut), String> {
    let params = st.params();
    let mut ents = st.entities(&params);
    let (rq_desc, mut ks) = st.kd(&ents, except);
    let mut kout = KdOut::default();
    // SAFETY: `ks` holds `ks.len()` entities (at most 64), `kout` is exclusively borrowed.
    let rc = unsafe {
        crate::ffi::kd612_eevdf_op(
            &rq_desc,
            ks.as_mut_ptr(),
            ks.len() as i32,
            opc,
            id as i32,
            arg,
            &mut kout,
        )
    };
    assert_eq!(rc, 0);
    let mut rq = CfsRq::kdiff_from_parts(&params, st.v0, &mut ents, &st.queued(except), st.curr);
    let (sum, load) = rq.avg_vruntime_sums();
    let mut rout = rust(&mut rq, &mut ents, &params);
    rout.avg_sum = i64::try_from(sum).map_err(|_| format!("avg_vruntime sum {sum} beyond s64"))?;
    rout.avg_load = load;
    rout.nr_running = u64::from(rq.nr_queued());
    let (_, rks) = st.kd(&ents, except);
    compare("outputs", &kout, &rout)?;
    for (i, (k, r)) in ks.iter().zip(&rks).enumerate() {
        let mut r = *r;
        r.queued = k.queued;
        compare(&format!("entity {i}"), k, &r)?;
    }
    Ok((kout, rout))
}

#[test]
fn avg_vruntime_eligible_pick_match() {
    if !available("eevdf", V) {
        return;
    }
    let s = (state(), -(1i64 << 25)..(1i64 << 25));
    assert_no_mismatch(
        "eevdf::avg_vruntime+vruntime_eligible+entity_eligible+pick_eevdf",
        V,
        cases(5000),
        s,
        |(st, qk)| {
            let q = st.v0.wrapping_add_signed(*qk);
            run(st, None, op::QUERY, 0, q, |rq, ents, params| {
                let mut o = KdOut::default();
                for i in 0..ents.len() {
                    if rq.entity_eligible(ents, i) {
                        o.eligible |= 1 << i;
                    }
                }
                o.ret = i64::from(rq.vruntime_eligible(ents, q));
                o.pick = rq.pick_eevdf(ents, params, false).map_or(-1, |p| p as i64);
                o.avg_vruntime = rq.avg_vruntime(ents);
                o
            })
            .map(drop)
        },
    );
}

#[test]
fn update_entity_lag_matches() {
    if !available("eevdf", V) {
        return;
    }
    let s = (state(), any::<prop::sample::Index>());
    assert_no_mismatch("eevdf::update_entity_lag", V, cases(5000), s, |(st, ix)| {
        // dequeue_entity() takes the lag of a queued entity (curr included).
        let id = ix.index(st.ents.len());
        let mut st = st.clone();
        st.ents[id].queued = true;
        let st = &st;
        run(st, None, op::LAG, id, 0, |rq, ents, params| {
            rq.update_entity_lag(ents, params, id);
            KdOut::default()
        })
        .map(drop)
    });
}

#[test]
fn update_deadline_matches() {
    if !available("eevdf", V) {
        return;
    }
    let s = (state(), any::<prop::sample::Index>());
    assert_no_mismatch("eevdf::update_deadline", V, cases(5000), s, |(st, ix)| {
        // update_curr() calls it for the running, queued entity.
        let c = st.curr.unwrap_or_else(|| ix.index(st.ents.len()));
        let mut st = st.clone();
        st.curr = Some(c);
        st.ents[c].queued = true;
        let st = &st;
        run(st, None, op::DEADLINE, c, 0, |rq, ents, params| KdOut {
            ret: i64::from(rq.update_deadline(ents, params, c)),
            ..KdOut::default()
        })
        .map(drop)
    });
}

#[test]
fn place_entity_matches() {
    if !available("eevdf", V) {
        return;
    }
    let s = (state(), any::<prop::sample::Index>(), any::<bool>());
    assert_no_mismatch(
        "eevdf::place_entity",
        V,
        cases(5000),
        s,
        |(st, ix, initial)| {
            // enqueue_entity() places an entity that is not queued: a waking or new one, or
            // curr itself (being re-enqueued, e.g. on a nice change).
            let id = ix.index(st.ents.len());
            let flags = if *initial { ENQUEUE_INITIAL } else { 0 };
            // Its vlag is the lag update_entity_lag() left at dequeue, never 6.12's
            // protect-slice stash (vlag = deadline) of a running entity.
            let mut st = st.clone();
            st.ents[id].protect = false;
            let st = &st;
            run(
                st,
                Some(id),
                op::PLACE,
                id,
                u64::from(flags),
                |rq, ents, params| {
                    rq.place_entity_eevdf(ents, params, id, flags);
                    KdOut::default()
                },
            )
            .map(drop)
        },
    );
}

/// `reweight_task_fair()` → `reweight_entity()` at the instant of the last update (no
/// outstanding execution time), queued or not, curr or not: the mirror's 6.12 form
/// (REWEIGHT_PLACE off: `reweight_eevdf()` for a queued entity, v' = V - (V - v)w/w',
/// d' = V + (d - V)w/w', vlag untouched; a dequeued entity's vlag scaled, its relative
/// deadline left) exactly. The v6.13+ form (6d71a9c61604: `update_entity_lag()` with its
/// clamp, relative deadline, `place_entity()`; a dequeued relative deadline scaled) is run
/// on the same cases and its differences from 6.12 counted (no 6.13+ tree to compare with).
#[test]
fn reweight_entity_matches() {
    if !available("eevdf", V) {
        return;
    }
    let later_form = AtomicU64::new(0);
    let n = cases(5000);
    let s = (state(), any::<prop::sample::Index>(), -20i32..=19);
    assert_no_mismatch("eevdf::reweight_entity", V, n, s, |(st, ix, nice)| {
        let id = ix.index(st.ents.len());
        let mut st = st.clone();
        // A dequeued entity's vlag is the lag left at dequeue, never the protect stash.
        if !st.ents[id].queued {
            st.ents[id].protect = false;
        }
        let new = LoadWeight::from_nice(*nice);
        let arg = new.weight | (u64::from(new.inv_weight) << 32);
        let reweight = |rq: &mut CfsRq, ents: &mut [SchedEntity], params: &FairParams| {
            rq.reweight_entity(ents, params, 0, id, new);
            KdOut {
                avg_vruntime: rq.avg_vruntime(ents),
                ret: rq.load().weight as i64,
                ..KdOut::default()
            }
        };
        st.reweight_place = true;
        if run(&st, None, op::REWEIGHT, id, arg, reweight).is_err() {
            later_form.fetch_add(1, Ordering::Relaxed);
        }
        st.reweight_place = false;
        run(&st, None, op::REWEIGHT, id, arg, reweight).map(drop)
    });
    println!(
        "kernel_diff eevdf::reweight_entity (linux {}): the v6.13+ form (REWEIGHT_PLACE) \
         gives another result than 6.12's reweight_eevdf in {} of {n} cases",
        crate::release(V),
        later_form.load(Ordering::Relaxed)
    );
}
