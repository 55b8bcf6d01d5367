//! The event queue: a binary min-heap keyed by (time, insertion sequence).
//!
//! Ties on the same nanosecond break by the sequence number assigned at insertion, so a run
//! is reproducible whatever the heap's internal order. Events are never deleted: an event
//! that has been superseded carries a stale generation and is dropped when popped (see
//! [`crate::engine`]). The heap's storage is reused, so steady state does not allocate.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event waiting in the queue.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time_ns: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time_ns == other.time_ns && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time_ns
            .cmp(&self.time_ns)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Deterministic priority queue of timed events.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            next_seq: 0,
        }
    }

    /// Schedule `event` at `time_ns`.
    pub fn push(&mut self, time_ns: u64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time_ns,
            seq,
            event,
        });
    }

    /// Remove and return the earliest event (earliest inserted first among equal times).
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|e| (e.time_ns, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
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
