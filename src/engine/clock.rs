//! The engine's clock part: virtual time (ns) and the event queue that drives it, with the
//! count of events handled and of superseded entries (popped, but a later re-plan made them
//! do nothing). Its fields are private: the other parts read the time with
//! [`Clock::now`] and plan events with [`Clock::push`]; only the event loop pops and advances.

use super::Event;
use super::queue::EventQueue;

pub(crate) struct Clock {
    now_ns: u64,
    queue: EventQueue<Event>,
    /// Events popped (superseded ones included: the JSON's `runs[].events`).
    events: u64,
    /// Popped queue entries that did nothing (superseded by a later re-plan: a stale
    /// generation, or an early entry re-queued at its new time). Counted in `events` too
    /// (the JSON's count); `schedlab bench` reports them apart.
    superseded: u64,
}

impl Clock {
    /// Time 0, with the run's first events queued.
    pub(super) fn new(queue: EventQueue<Event>) -> Clock {
        Clock {
            now_ns: 0,
            queue,
            events: 0,
            superseded: 0,
        }
    }

    /// Simulated time now.
    #[inline]
    pub(super) fn now(&self) -> u64 {
        self.now_ns
    }

    /// Plan `event` at `at_ns`.
    #[inline]
    pub(super) fn push(&mut self, at_ns: u64, event: Event) {
        self.queue.push(at_ns, event);
    }

    /// The next entry (time, event), without advancing the clock (the event loop samples
    /// what is due before it moves time, see [`Clock::advance_to`]).
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u64, Event)> {
        self.queue.pop()
    }

    /// Time moves to `time_ns` (never backwards: the loop checks) and the event popped for
    /// it is counted.
    #[inline]
    pub(super) fn advance_to(&mut self, time_ns: u64) {
        self.now_ns = time_ns;
        self.events += 1;
    }

    /// The event just popped did nothing (superseded).
    #[inline]
    pub(super) fn superseded(&mut self) {
        self.superseded += 1;
    }

    pub(super) fn events(&self) -> u64 {
        self.events
    }

    pub(super) fn superseded_events(&self) -> u64 {
        self.superseded
    }

    /// Set the time directly (unit tests of checks that read the clock).
    #[cfg(test)]
    pub(super) fn set_now(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }
}
