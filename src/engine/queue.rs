//! The event queue: a 4-ary min-heap keyed by (time, insertion sequence).
//!
//! Ties on the same nanosecond break by the sequence number assigned at insertion, so a run
//! is reproducible whatever the heap's internal order. Events are never deleted: an event
//! that has been superseded carries a stale generation and is dropped when popped (see
//! [`crate::engine`]). The heap's storage is reused, so steady state does not allocate.
//!
//! Why 4-ary: the engine pops as often as it pushes (every event is both), and a pop's
//! sift-down dominates. A 4-ary heap halves the depth of a binary one; the four children of a
//! node sit in one or two cache lines, so the extra comparisons are cheaper than the levels
//! saved. The key is one `u128` (time in the high half, sequence in the low half) so each
//! comparison is a single integer compare.

/// An event waiting in the queue.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    /// `(time_ns << 64) | seq`: the pop order.
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

/// Children per node.
const ARITY: usize = 4;

/// Deterministic priority queue of timed events.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            next_seq: 0,
        }
    }

    /// Schedule `event` at `time_ns`.
    pub fn push(&mut self, time_ns: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry {
            key: (u128::from(time_ns) << 64) | u128::from(seq),
            event,
        };
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1);
    }

    /// Remove and return the earliest event (earliest inserted first among equal times).
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some((last.time_ns(), last.event));
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        self.sift_down(0);
        Some((top.time_ns(), top.event))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.first().map(Entry::time_ns)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Move the entry at `i` up until its parent is earlier.
    fn sift_up(&mut self, mut i: usize) {
        let entry = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    /// Move the entry at `i` down until every child is later.
    fn sift_down(&mut self, mut i: usize) {
        let entry = self.heap[i];
        let len = self.heap.len();
        loop {
            let first = i * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut min = first;
            for c in first + 1..end {
                if self.heap[c].key < self.heap[min].key {
                    min = c;
                }
            }
            if self.heap[min].key >= entry.key {
                break;
            }
            self.heap[i] = self.heap[min];
            i = min;
        }
        self.heap[i] = entry;
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
