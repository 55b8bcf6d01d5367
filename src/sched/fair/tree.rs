//! The ordered runqueue of a cfs_rq: the kernel's augmented rb-tree (`tasks_timeline`, an
//! `rb_root_cached` with the `min_vruntime_cb` augmentation: `se->min_vruntime` and
//! `se->min_slice` of every subtree).
//!
//! Entities are ordered by the tree key — the virtual deadline (EEVDF) or vruntime (CFS),
//! compared with wraparound — and, for equal keys, by insertion order, as the rb-tree
//! inserts an equal key to the right of the ones already there. Every node carries the
//! smallest vruntime and the smallest slice of its subtree, which gives the O(log n)
//! `__pick_eevdf` heap search (skip a subtree with no eligible entity), `update_min_vruntime`
//! (the root's `min_vruntime`) and `cfs_rq_min_slice` (the root's `min_slice`), and the
//! cached leftmost node gives `__pick_first_entity` in O(1).
//!
//! Approximation (shape only): the balanced tree is a treap (heap priorities from a hash of
//! the insertion sequence number) instead of a red-black tree. Only the in-order sequence
//! and the subtree aggregates reach any decision, and those are the same for every
//! balanced shape, so every pick is the kernel's. The links live in the entity
//! ([`RunNode`], the kernel's `se->run_node`), so the tree is an arena indexed by entity id:
//! no allocation per operation.

use super::{CfsRq, FairMode, SchedEntity, vruntime_before};

/// "No node" in [`RunNode`] links.
const NIL: u32 = u32::MAX;

/// `se->run_node` plus the augmented fields `se->min_vruntime` and `se->min_slice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunNode {
    left: u32,
    right: u32,
    parent: u32,
    /// Treap heap priority (a parent's is never below its children's).
    prio: u32,
    /// `se->min_vruntime`: the smallest vruntime in this subtree.
    min_vruntime: u64,
    /// `se->min_slice`: the smallest slice in this subtree.
    min_slice: u64,
}

impl Default for RunNode {
    fn default() -> Self {
        RunNode {
            left: NIL,
            right: NIL,
            parent: NIL,
            prio: 0,
            min_vruntime: 0,
            min_slice: u64::MAX,
        }
    }
}

/// Heap priority of the `seq`-th insertion (splitmix64 finaliser: deterministic, spread).
fn prio_of(seq: u64) -> u32 {
    let mut z = seq.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    // The low 32 bits of the hash: masked, so the conversion loses nothing.
    u32::try_from((z ^ (z >> 31)) & u64::from(u32::MAX)).expect("masked to 32 bits")
}

/// An entity index as a [`RunNode`] link. Fits: entity indices are task indices, below
/// [`NIL`] (`u32::MAX`; `tree_insert` checks it in debug builds).
#[inline]
fn link(id: usize) -> u32 {
    u32::try_from(id).expect("entity index beyond the tree's u32 links")
}

fn opt(n: u32) -> Option<usize> {
    (n != NIL).then_some(n as usize)
}

/// The earlier of two vruntimes (wrapping order).
#[inline]
fn min_vr(a: u64, b: u64) -> u64 {
    if vruntime_before(b, a) { b } else { a }
}

/// Recompute `n`'s subtree aggregates from its own values and its children's
/// (`min_vruntime_update`); whether they changed.
#[inline]
fn update_aug(ents: &mut [SchedEntity], n: usize) -> bool {
    let (l, r) = (ents[n].node.left, ents[n].node.right);
    let mut mv = ents[n].vruntime;
    let mut ms = ents[n].slice;
    for c in [l, r] {
        if c != NIL {
            let cn = &ents[c as usize].node;
            mv = min_vr(mv, cn.min_vruntime);
            ms = ms.min(cn.min_slice);
        }
    }
    let node = &mut ents[n].node;
    let changed = node.min_vruntime != mv || node.min_slice != ms;
    node.min_vruntime = mv;
    node.min_slice = ms;
    changed
}

/// Fix the aggregates from `n` up to the root, stopping where nothing changes.
fn propagate(ents: &mut [SchedEntity], mut n: u32) {
    while n != NIL {
        if !update_aug(ents, n as usize) {
            return;
        }
        n = ents[n as usize].node.parent;
    }
}

impl CfsRq {
    /// The tree key order: deadline (EEVDF) or vruntime (CFS), then insertion order.
    #[inline]
    pub(super) fn tree_before(&self, ents: &[SchedEntity], a: usize, b: usize) -> bool {
        let (ka, kb) = match self.mode {
            FairMode::Eevdf => (ents[a].deadline, ents[b].deadline),
            FairMode::Cfs => (ents[a].vruntime, ents[b].vruntime),
        };
        if ka == kb {
            ents[a].tree_seq < ents[b].tree_seq
        } else {
            vruntime_before(ka, kb)
        }
    }

    /// The root entity (`__pick_root_entity`).
    pub(super) fn tree_root(&self) -> Option<usize> {
        opt(self.root)
    }

    /// `__pick_first_entity()`: the leftmost (cached) entity.
    pub(super) fn pick_first_entity(&self, _ents: &[SchedEntity]) -> Option<usize> {
        opt(self.leftmost)
    }

    /// `__pick_next_entity(se)` / `rb_next`: the in-order successor of a tree entity.
    pub(super) fn pick_next_in_tree(&self, ents: &[SchedEntity], se: usize) -> Option<usize> {
        let mut n = ents[se].node.right;
        if n != NIL {
            while ents[n as usize].node.left != NIL {
                n = ents[n as usize].node.left;
            }
            return opt(n);
        }
        let mut child = link(se);
        let mut p = ents[se].node.parent;
        while p != NIL && ents[p as usize].node.right == child {
            child = p;
            p = ents[p as usize].node.parent;
        }
        opt(p)
    }

    /// The tree's entities in key order.
    pub fn queued<'a>(&'a self, ents: &'a [SchedEntity]) -> impl Iterator<Item = usize> + 'a {
        std::iter::successors(self.pick_first_entity(ents), move |&id| {
            self.pick_next_in_tree(ents, id)
        })
    }

    /// Whether `id` is in this tree (its links lead to this tree's root).
    pub(super) fn tree_contains(&self, ents: &[SchedEntity], id: usize) -> bool {
        let mut n = link(id);
        while ents[n as usize].node.parent != NIL {
            n = ents[n as usize].node.parent;
        }
        n == self.root
    }

    /// The root's `min_vruntime`: the smallest vruntime in the tree.
    pub(super) fn tree_min_vruntime(&self, ents: &[SchedEntity]) -> Option<u64> {
        self.tree_root().map(|r| ents[r].node.min_vruntime)
    }

    /// The root's `min_slice`: the smallest slice in the tree.
    pub(super) fn tree_min_slice(&self, ents: &[SchedEntity]) -> Option<u64> {
        self.tree_root().map(|r| ents[r].node.min_slice)
    }

    /// `se->min_vruntime` of the left child of `n`, if any.
    pub(super) fn tree_left(&self, ents: &[SchedEntity], n: usize) -> Option<(usize, u64)> {
        let l = ents[n].node.left;
        opt(l).map(|l| (l, ents[l].node.min_vruntime))
    }

    /// The right child of `n`.
    pub(super) fn tree_right(&self, ents: &[SchedEntity], n: usize) -> Option<usize> {
        opt(ents[n].node.right)
    }

    /// Point `p`'s link that held `old` (or the root, when `p` is NIL) at `new`.
    fn replace_child(&mut self, ents: &mut [SchedEntity], p: u32, old: u32, new: u32) {
        if p == NIL {
            self.root = new;
        } else if ents[p as usize].node.left == old {
            ents[p as usize].node.left = new;
        } else {
            ents[p as usize].node.right = new;
        }
    }

    /// Rotate `x` above its parent (aggregates of both recomputed).
    fn rotate_up(&mut self, ents: &mut [SchedEntity], x: u32) {
        let p = ents[x as usize].node.parent;
        let g = ents[p as usize].node.parent;
        if ents[p as usize].node.left == x {
            let b = ents[x as usize].node.right;
            ents[p as usize].node.left = b;
            if b != NIL {
                ents[b as usize].node.parent = p;
            }
            ents[x as usize].node.right = p;
        } else {
            let b = ents[x as usize].node.left;
            ents[p as usize].node.right = b;
            if b != NIL {
                ents[b as usize].node.parent = p;
            }
            ents[x as usize].node.left = p;
        }
        ents[p as usize].node.parent = x;
        ents[x as usize].node.parent = g;
        self.replace_child(ents, g, p, x);
        update_aug(ents, p as usize);
        update_aug(ents, x as usize);
    }

    /// `rb_add_augmented_cached()`: insert `id` (not in any tree) after every entity with
    /// a key before or equal to its own.
    pub(super) fn tree_insert(&mut self, ents: &mut [SchedEntity], id: usize) {
        debug_assert!(
            id < NIL as usize,
            "entity index {id} beyond the tree's range"
        );
        self.tree_seq += 1;
        ents[id].tree_seq = self.tree_seq;
        ents[id].node = RunNode {
            prio: prio_of(self.tree_seq),
            min_vruntime: ents[id].vruntime,
            min_slice: ents[id].slice,
            ..RunNode::default()
        };
        self.nr_tree += 1;
        let x = link(id);
        if self.root == NIL {
            self.root = x;
            self.leftmost = x;
            return;
        }
        let mut n = self.root;
        let mut leftmost = true;
        loop {
            let go_left = self.tree_before(ents, id, n as usize);
            let next = if go_left {
                ents[n as usize].node.left
            } else {
                leftmost = false;
                ents[n as usize].node.right
            };
            if next == NIL {
                if go_left {
                    ents[n as usize].node.left = x;
                } else {
                    ents[n as usize].node.right = x;
                }
                ents[id].node.parent = n;
                break;
            }
            n = next;
        }
        if leftmost {
            self.leftmost = x;
        }
        while ents[id].node.parent != NIL
            && ents[ents[id].node.parent as usize].node.prio < ents[id].node.prio
        {
            self.rotate_up(ents, x);
        }
        propagate(ents, ents[id].node.parent);
    }

    /// `rb_erase_augmented_cached()`: remove `id` from the tree.
    pub(super) fn tree_erase(&mut self, ents: &mut [SchedEntity], id: usize) {
        let x = link(id);
        if self.leftmost == x {
            self.leftmost = self.pick_next_in_tree(ents, id).map_or(NIL, link);
        }
        // Rotate the node down to a leaf, then cut it off.
        loop {
            let (l, r) = (ents[id].node.left, ents[id].node.right);
            let c = match (l, r) {
                (NIL, NIL) => break,
                (c, NIL) | (NIL, c) => c,
                (l, r) if ents[l as usize].node.prio >= ents[r as usize].node.prio => l,
                (_, r) => r,
            };
            self.rotate_up(ents, c);
        }
        let p = ents[id].node.parent;
        self.replace_child(ents, p, x, NIL);
        ents[id].node = RunNode::default();
        self.nr_tree -= 1;
        propagate(ents, p);
    }

    /// The tree's structural invariants: links consistent, keys in order, heap
    /// priorities, aggregates equal to their definition, the cached leftmost, the count.
    pub(super) fn tree_check(&self, ents: &[SchedEntity]) -> Result<(), String> {
        let mut count = 0u32;
        let mut prev: Option<usize> = None;
        for id in self.queued(ents) {
            count += 1;
            if count > self.nr_tree {
                return Err(format!(
                    "tree holds more than its {} entities",
                    self.nr_tree
                ));
            }
            if let Some(p) = prev
                && !self.tree_before(ents, p, id)
            {
                return Err(format!("tree order broken: {p} before {id}"));
            }
            prev = Some(id);
            let node = &ents[id].node;
            for c in [node.left, node.right] {
                if c == NIL {
                    continue;
                }
                let cn = &ents[c as usize].node;
                if cn.parent != link(id) {
                    return Err(format!("tree link broken: {c} under {id}"));
                }
                if cn.prio > node.prio {
                    return Err(format!("tree heap order broken at {id}"));
                }
            }
            let mut mv = ents[id].vruntime;
            let mut ms = ents[id].slice;
            for c in [node.left, node.right] {
                if c != NIL {
                    mv = min_vr(mv, ents[c as usize].node.min_vruntime);
                    ms = ms.min(ents[c as usize].node.min_slice);
                }
            }
            if (node.min_vruntime, node.min_slice) != (mv, ms) {
                return Err(format!(
                    "tree min_vruntime/min_slice of {id} = {}/{} but its subtree has {mv}/{ms}",
                    node.min_vruntime, node.min_slice
                ));
            }
        }
        if count != self.nr_tree {
            return Err(format!(
                "tree holds {count} entities, counted {}",
                self.nr_tree
            ));
        }
        if let Some(r) = self.tree_root()
            && ents[r].node.parent != NIL
        {
            return Err(format!("tree root {r} has a parent"));
        }
        let first = std::iter::successors(self.tree_root(), |&n| opt(ents[n].node.left)).last();
        if first != opt(self.leftmost) {
            return Err(format!(
                "cached leftmost {:?} but the tree's first is {first:?}",
                opt(self.leftmost)
            ));
        }
        Ok(())
    }
}
