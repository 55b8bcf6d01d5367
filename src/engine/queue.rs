//! The event queue: a monotone radix heap with base-16 digits, ordered by (time,
//! insertion sequence).
//!
//! Ties on the same nanosecond break by the sequence number assigned at insertion, so a run
//! is reproducible whatever the queue's internal layout. Events are never deleted: an event
//! that has been superseded carries a stale generation and is dropped when popped (see
//! [`crate::engine`]). The storage is reused, so steady state does not allocate.
//!
//! A discrete-event simulation never schedules into the past: every push is at or after
//! the time of the last pop. That makes a radix heap exact (Ahuja, Mehlhorn, Orlin,
//! Tarjan 1990). Here the radix is 16: an entry's bucket is (`d`, `v`), `d` the highest
//! hexadecimal digit where its time differs from the last popped time `last` and `v` its
//! own digit there. Every entry of bucket (`d`, `v`) shares `last`'s digits above `d`, so
//! it is earlier than every entry of (`d`, `v + 1`) and of any bucket at a higher digit;
//! the lowest non-empty bucket holds the minimum. A push is O(1) (one `leading_zeros`); a
//! pop takes the front of the entries at `last` or, when there are none, empties the
//! lowest non-empty bucket (`d`, `v`) into buckets below digit `d` around its minimum.
//! An entry moves down at least one digit per move, so at most 16 times over its life —
//! in practice one or two: with binary digits (the former layout) an entry queued
//! microseconds ahead moved down bit by bit, ~10 times, and those moves were most of the
//! queue's cost.
//!
//! Order within one time: every bucket is kept in insertion order (a push appends the
//! newest sequence; emptying a bucket appends its entries in order to buckets below its
//! digit, all empty at that moment), so the entries at the new `last` come out of the
//! emptied bucket already in sequence order, and later pushes at `last` append behind
//! them. The pop order is exactly a binary heap's (time, seq) order (property test below).

use crate::units::{cpu_u32, usize_from_u64};

/// An event waiting in the queue.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time_ns: u64,
    event: E,
}

/// Bits per digit, digit values, and digits of a `u64` time.
const DIGIT_BITS: u32 = 4;
const RADIX: usize = 1 << DIGIT_BITS;
const DIGITS: usize = 64 / DIGIT_BITS as usize;

/// Deterministic priority queue of timed events (earliest time first, then insertion
/// order).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Entries at time `last`, in insertion order, from `head` on.
    at_last: Vec<Entry<E>>,
    head: usize,
    /// `buckets[d * RADIX + v]`: entries whose highest digit differing from `last` is `d`,
    /// with value `v` there. A fixed-size array, so a masked index needs no bounds check.
    buckets: Box<[Vec<Entry<E>>; DIGITS * RADIX]>,
    /// Per digit `d`: bit `v` set when bucket (`d`, `v`) is non-empty.
    nonempty: [u16; DIGITS],
    /// Bit `d` set when some bucket at digit `d` is non-empty.
    digits: u16,
    /// The time of the last pop (the simulation's now).
    last: u64,
    len: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            at_last: Vec::with_capacity(64),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            nonempty: [0; DIGITS],
            digits: 0,
            last: 0,
            len: 0,
        }
    }

    /// Schedule `event` at `time_ns` (not before the last popped time). Always inlined:
    /// a call per push cost as much as the push itself (the radix spread made it too
    /// large for the compiler's own choice).
    #[inline(always)]
    pub fn push(&mut self, time_ns: u64, event: E) {
        assert!(
            time_ns >= self.last,
            "event queued in the past: {time_ns} < {}",
            self.last
        );
        self.len += 1;
        let entry = Entry { time_ns, event };
        if time_ns == self.last {
            self.at_last.push(entry);
        } else {
            self.spread(entry, self.last);
        }
    }

    /// Remove and return the earliest event (earliest inserted first among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let e = if let Some(&e) = self.at_last.get(self.head) {
            self.head += 1;
            if self.head == self.at_last.len() {
                self.at_last.clear();
                self.head = 0;
            }
            e
        } else if self.digits == 0 {
            return None;
        } else {
            self.refill()
        };
        self.len -= 1;
        Some((e.time_ns, e.event))
    }

    /// `at_last` is empty: move `last` to the minimum of the lowest non-empty bucket,
    /// spread that bucket over the lower digits (the other entries at its minimum into
    /// `at_last`) and return the first entry at the minimum.
    fn refill(&mut self) -> Entry<E> {
        let d = self.digits.trailing_zeros() as usize & (DIGITS - 1);
        let v = self.nonempty[d].trailing_zeros() as usize & (RADIX - 1);
        self.nonempty[d] &= !(1 << v);
        if self.nonempty[d] == 0 {
            self.digits &= !(1 << d);
        }
        let b = (d * RADIX + v) & (DIGITS * RADIX - 1);
        if self.buckets[b].len() == 1 {
            // Most refills (a lone entry, the next event): take it in place.
            let e = self.buckets[b].pop().expect("a non-empty bucket");
            self.last = e.time_ns;
            return e;
        }
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        let mut first = 0;
        for (i, e) in bucket.iter().enumerate().skip(1) {
            if e.time_ns < bucket[first].time_ns {
                first = i;
            }
        }
        let min = bucket[first].time_ns;
        self.last = min;
        // Entries before `first` are all later than `min`.
        for &e in &bucket[..first] {
            self.spread(e, min);
        }
        for &e in &bucket[first + 1..] {
            if e.time_ns == min {
                self.at_last.push(e);
            } else {
                self.spread(e, min);
            }
        }
        let e = bucket[first];
        bucket.clear();
        self.buckets[b] = bucket;
        e
    }

    /// Put `e` (later than `last`) in its bucket.
    #[inline(always)]
    fn spread(&mut self, e: Entry<E>, last: u64) {
        let d = digit_of(e.time_ns, last);
        let v = usize_from_u64(e.time_ns >> (d * DIGIT_BITS as usize)) & (RADIX - 1);
        self.buckets[(d * RADIX + v) & (DIGITS * RADIX - 1)].push(e);
        self.nonempty[d] |= 1 << v;
        self.digits |= 1 << d;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A task index or a timer-heap position as the `u32` the timer heaps keep. Fits: a heap
/// holds at most one timer per task, and tasks are bounded by the task limit (far below 2^32).
#[inline]
fn slot_u32(i: usize) -> u32 {
    u32::try_from(i).expect("task index or heap position above u32::MAX")
}

/// The highest digit where `time` differs from `last` (`time != last`).
#[inline]
fn digit_of(time: u64, last: u64) -> usize {
    ((63 - (time ^ last).leading_zeros()) / DIGIT_BITS) as usize & (DIGITS - 1)
}

/// "No position": the task has no armed timer.
const NO_POS: u32 = u32::MAX;

/// The task hrtimers armed on each CPU, for `tick_nohz_get_sleep_length()`: the earliest
/// expiry on a CPU in O(1), arming and disarming in O(log n) (one indexed binary min-heap
/// per CPU; a task has at most one armed timer). Replaces a scan of every task per idle
/// entry. Storage grows to the largest count seen and is reused: no allocation in steady
/// state.
#[derive(Debug, Default)]
pub struct CpuTimers {
    /// Per CPU: (expiry, task index), a min-heap on expiry.
    heaps: Vec<Vec<(u64, u32)>>,
    /// Per task index: (CPU, position in that CPU's heap), `NO_POS` when not armed.
    pos: Vec<(u32, u32)>,
}

impl CpuTimers {
    pub fn new(nr_cpus: usize) -> Self {
        CpuTimers {
            heaps: vec![Vec::new(); nr_cpus],
            pos: Vec::new(),
        }
    }

    /// The earliest armed expiry on `cpu`.
    pub fn earliest(&self, cpu: usize) -> Option<u64> {
        self.heaps[cpu].first().map(|&(at, _)| at)
    }

    /// Arm `task`'s timer on `cpu` at `at` (the task must have none armed).
    pub fn arm(&mut self, cpu: usize, task: usize, at: u64) {
        if task >= self.pos.len() {
            self.pos.resize(task + 1, (0, NO_POS));
        }
        assert_eq!(
            self.pos[task].1, NO_POS,
            "task {task} already has a timer armed"
        );
        let heap = &mut self.heaps[cpu];
        heap.push((at, slot_u32(task)));
        let i = heap.len() - 1;
        self.pos[task] = (cpu_u32(cpu), slot_u32(i));
        self.sift_up(cpu, i);
    }

    /// Disarm `task`'s timer, if armed.
    pub fn disarm(&mut self, task: usize) {
        let Some(&(cpu, i)) = self.pos.get(task) else {
            return;
        };
        if i == NO_POS {
            return;
        }
        let (cpu, i) = (cpu as usize, i as usize);
        self.pos[task].1 = NO_POS;
        let heap = &mut self.heaps[cpu];
        let last = heap.pop().expect("an armed timer is in its heap");
        if i < heap.len() {
            heap[i] = last;
            self.pos[last.1 as usize].1 = slot_u32(i);
            self.sift_down(cpu, i);
            self.sift_up(cpu, i);
        }
    }

    fn swap(&mut self, cpu: usize, a: usize, b: usize) {
        let heap = &mut self.heaps[cpu];
        heap.swap(a, b);
        self.pos[heap[a].1 as usize].1 = slot_u32(a);
        self.pos[heap[b].1 as usize].1 = slot_u32(b);
    }

    fn sift_up(&mut self, cpu: usize, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heaps[cpu][i].0 >= self.heaps[cpu][parent].0 {
                break;
            }
            self.swap(cpu, i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, cpu: usize, mut i: usize) {
        let n = self.heaps[cpu].len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.heaps[cpu][l].0 < self.heaps[cpu][m].0 {
                m = l;
            }
            if r < n && self.heaps[cpu][r].0 < self.heaps[cpu][m].0 {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(cpu, i, m);
            i = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    proptest! {
        #[test]
        fn cpu_timers_earliest_is_the_minimum_of_the_armed_ones(
            ops in proptest::collection::vec((0usize..3, 0usize..12, 0u64..1000, any::<bool>()), 0..300)
        ) {
            let mut t = CpuTimers::new(3);
            // The reference: each task's armed (cpu, expiry).
            let mut armed: Vec<Option<(usize, u64)>> = vec![None; 12];
            for (cpu, task, at, arm) in ops {
                t.disarm(task);
                armed[task] = None;
                if arm {
                    t.arm(cpu, task, at);
                    armed[task] = Some((cpu, at));
                }
                for c in 0..3 {
                    let want = armed.iter().flatten().filter(|(x, _)| *x == c).map(|&(_, a)| a).min();
                    prop_assert_eq!(t.earliest(c), want);
                }
            }
        }

        /// Interleaved pushes (never before the last pop) and pops come out exactly in
        /// the (time, insertion order) of a reference binary heap.
        #[test]
        fn pops_like_a_time_then_sequence_heap(
            ops in proptest::collection::vec((0u64..4, 0u64..40, any::<bool>()), 0..400)
        ) {
            use std::cmp::Reverse;
            let mut q = EventQueue::new();
            let mut model = std::collections::BinaryHeap::new();
            let (mut now, mut seq) = (0u64, 0u64);
            for (kind, dt, pop) in ops {
                if pop {
                    let got = q.pop();
                    let want = model.pop().map(|Reverse((t, s))| (t, s));
                    prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    // Same time, near, mid-range (several digits) or far (high digits).
                    let t = now + [0, dt, dt * dt * 997, dt << 30][crate::units::usize_from_u64(kind)];
                    q.push(t, seq);
                    model.push(Reverse((t, seq)));
                    seq += 1;
                }
                prop_assert_eq!(q.len(), model.len());
            }
            while let Some(Reverse((t, s))) = model.pop() {
                prop_assert_eq!(q.pop(), Some((t, s)));
            }
            prop_assert!(q.is_empty());
            prop_assert_eq!(q.pop(), None);
        }

        #[test]
        fn pops_in_time_then_sequence_order(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(t, i);
            }
            let mut last = (0u64, 0usize);
            let mut first = true;
            while let Some((t, i)) = q.pop() {
                prop_assert_eq!(times[i], t);
                if !first {
                    prop_assert!((t, i) > last);
                }
                first = false;
                last = (t, i);
            }
        }
    }
}
