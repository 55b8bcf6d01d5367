//! The event queue: a monotone radix heap ordered by (time, insertion sequence).
//!
//! Ties on the same nanosecond break by the sequence number assigned at insertion, so a run
//! is reproducible whatever the queue's internal layout. Events are never deleted: an event
//! that has been superseded carries a stale generation and is dropped when popped (see
//! [`crate::engine`]). The storage is reused, so steady state does not allocate.
//!
//! A discrete-event simulation never schedules into the past: every push is at or after
//! the time of the last pop. That makes a radix heap exact (Ahuja, Mehlhorn, Orlin,
//! Tarjan 1990): bucket `b` holds the entries whose time first differs from the last
//! popped time `last` at bit `b`, so all of bucket `b` is earlier than all of bucket
//! `b + 1`. A push is O(1) (one `leading_zeros`); a pop takes the front of the entries at
//! `last` or, when there are none, empties the lowest non-empty bucket into lower ones
//! around its minimum — each entry moves down at most 64 times over its life, in practice
//! a few, against a binary heap's two sifts of log2(n) levels per event.
//!
//! Order within one time: every bucket is kept in insertion order (a push appends the
//! newest sequence; emptying a bucket appends its entries in order to buckets that are
//! empty at that moment), so the entries at the new `last` come out of the emptied bucket
//! already in sequence order, and later pushes at `last` append behind them. The pop
//! order is exactly the former binary heap's (time, seq) order (property test below).

/// An event waiting in the queue.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time_ns: u64,
    event: E,
}

/// Number of radix buckets: one per bit of a `u64` time.
const BUCKETS: usize = 64;

/// Deterministic priority queue of timed events (earliest time first, then insertion
/// order).
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Entries at time `last`, in insertion order, from `head` on.
    at_last: Vec<Entry<E>>,
    head: usize,
    /// `buckets[b]`: entries whose time's highest bit differing from `last` is `b`.
    buckets: [Vec<Entry<E>>; BUCKETS],
    /// Bit `b` set when `buckets[b]` is non-empty.
    nonempty: u64,
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
            buckets: std::array::from_fn(|_| Vec::with_capacity(64)),
            nonempty: 0,
            last: 0,
            len: 0,
        }
    }

    /// Schedule `event` at `time_ns` (not before the last popped time).
    #[inline]
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
            let b = bucket_of(time_ns, self.last);
            self.buckets[b].push(entry);
            self.nonempty |= 1 << b;
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
        } else if self.nonempty == 0 {
            return None;
        } else {
            self.refill()
        };
        self.len -= 1;
        Some((e.time_ns, e.event))
    }

    /// `at_last` is empty: move `last` to the minimum of the lowest non-empty bucket,
    /// spread that bucket over the lower ones (the other entries at its minimum into
    /// `at_last`) and return the first entry at the minimum.
    fn refill(&mut self) -> Entry<E> {
        let b = self.nonempty.trailing_zeros() as usize & (BUCKETS - 1);
        self.nonempty &= !(1 << b);
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        if bucket.len() == 1 {
            let e = bucket[0];
            self.last = e.time_ns;
            bucket.clear();
            self.buckets[b] = bucket;
            return e;
        }
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

    /// Put `e` (later than `last == min`) in its bucket.
    #[inline]
    fn spread(&mut self, e: Entry<E>, min: u64) {
        let nb = bucket_of(e.time_ns, min);
        self.buckets[nb].push(e);
        self.nonempty |= 1 << nb;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The bucket of `time` relative to `last` (`time != last`): the highest differing bit.
#[inline]
fn bucket_of(time: u64, last: u64) -> usize {
    (63 - (time ^ last).leading_zeros() as usize) & (BUCKETS - 1)
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
        heap.push((at, task as u32));
        let i = heap.len() - 1;
        self.pos[task] = (cpu as u32, i as u32);
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
            self.pos[last.1 as usize].1 = i as u32;
            self.sift_down(cpu, i);
            self.sift_up(cpu, i);
        }
    }

    fn swap(&mut self, cpu: usize, a: usize, b: usize) {
        let heap = &mut self.heaps[cpu];
        heap.swap(a, b);
        self.pos[heap[a].1 as usize].1 = a as u32;
        self.pos[heap[b].1 as usize].1 = b as u32;
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
            ops in proptest::collection::vec((0u64..3, 0u64..40, any::<bool>()), 0..400)
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
                    // Same time, near, or far (exercises high buckets).
                    let t = now + [0, dt, dt << 30][kind as usize];
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
