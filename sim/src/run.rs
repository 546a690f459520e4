//! The run loop: pop the earliest event, advance the clock to it, hand it to the model, repeat,
//! until the model is done, nothing is left to happen, or a budget runs out.
//!
//! Budgets exist because a simulator of fault-tolerance protocols must be able to run a buggy
//! protocol (a livelock, a retry storm) and still come back with a report instead of hanging.
//! Which limit stopped a run is part of its outcome ([`StopReason`]); it is never an error.
//!
//! A run is resumable: [`Simulation::run`] stops *before* the event that would break a budget,
//! leaving it queued, so calling `run` again with a larger budget continues exactly where the
//! first call left off, as if it had been given the larger budget from the start. (This is how a
//! faulty phase can be followed by a healed phase on the same simulation.)

use std::fmt;

use crate::explore::{Actor, Chooser, Due};
use crate::queue::{EventQueue, TieBreak};
use crate::time::{Duration, Instant};

/// What a simulation simulates. The kernel owns time and the queue; the model owns everything
/// else and only ever learns the time from the `now` it is handed.
pub trait Model {
    type Event;

    /// Reacts to `event`, delivered at `now`, scheduling any consequences through `sched`.
    fn handle(&mut self, now: Instant, event: Self::Event, sched: &mut Scheduler<'_, Self::Event>);

    /// Checked after every event; true ends the run with StopReason::Done.
    /// It is also checked before the first event, so a model that starts out done runs nothing.
    fn is_done(&self) -> bool {
        false
    }

    /// Who `event` is addressed to, for a controlled run ([`Simulation::run_chosen`], see
    /// [`crate::explore`]). The default makes every event dependent on every other.
    fn actor(&self, _event: &Self::Event) -> Actor {
        Actor::EVERYONE
    }

    /// Whether handling `a` or `b` first makes the same run (both mean "deliver the next
    /// message of this link"), so a search need not try both. The default: never.
    fn interchangeable(&self, _a: &Self::Event, _b: &Self::Event) -> bool {
        false
    }

    /// How much later than `now` the due `event` may happen instead, for a controlled run
    /// that moves messages in time ([`crate::explore::Pct`]): for a message, what its link's
    /// latency range allows beyond the latency it took, within the link's order. The
    /// default: zero, every event happens when it is due.
    fn slack(&self, _now: Instant, _event: &Self::Event) -> Duration {
        Duration::ZERO
    }

    /// A hint, before an event is handled, about an event likely to come soon (called for
    /// the next and for the one after it): a model whose state is too big for the cache asks
    /// the processor to start loading what `next` will touch, so the load overlaps the
    /// handling of the events before it instead of stalling it. It must not change the model
    /// (the hint may be wrong). The default: nothing.
    #[inline]
    fn prefetch(&self, _next: &Self::Event) {}

    /// How many events ahead [`Model::prefetch`] is worth calling in this run: 0 (never), 1
    /// (for the next event) or 2 (for the next and the one after it; more counts as 2). A
    /// hint costs some twenty instructions an event and two some fifty, wasted when the
    /// model's state fits the caches; the second pays when handling one event takes less
    /// time than a miss to memory. The run loop asks once per [`Simulation::run`]. The
    /// default: 0.
    fn prefetch_ahead(&self) -> usize {
        0
    }
}

/// What a handler may do to the future: schedule events, never in the past.
pub struct Scheduler<'a, E> {
    queue: &'a mut EventQueue<E>,
    now: Instant,
}

impl<E> Scheduler<'_, E> {
    /// The instant of the event being handled.
    #[inline]
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Schedules `event` at `at`. Panics if `at` is before now: a model that schedules into the
    /// past has a bug, and letting time go backwards would hide it.
    #[inline]
    pub fn at(&mut self, at: Instant, event: E) {
        assert!(
            at >= self.now,
            "scheduled an event at {at}, before now ({})",
            self.now
        );
        self.queue.push(at, event);
    }

    /// Schedules `event` `delay` after now (a zero delay means later in this same instant).
    /// A delay past the end of time saturates: such an event lies beyond every time budget and
    /// is never handled, which is what an unreachable deadline means; it must not panic.
    #[inline]
    pub fn after(&mut self, delay: Duration, event: E) {
        let at = self.now.saturating_add(delay);
        self.queue.push(at, event);
    }
}

/// Limits on one run. Both are totals since the simulation began, not per call of
/// [`Simulation::run`], so that resuming with the same budget stops again at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Stop once this many events have been handled.
    pub max_events: u64,
    /// Stop before handling any event later than this (events exactly at it are handled).
    pub max_time: Instant,
    /// Stop once more than this many events are pending: a model whose future grows without
    /// bound (a retry storm, a feedback loop) ends with a diagnosis instead of exhausting
    /// memory. Checked after each event, so the run stops right after the event that crossed it.
    pub max_pending: usize,
}

impl Budget {
    /// No limit at all: only for models that are known to finish (or become quiescent).
    pub const UNLIMITED: Budget = Budget {
        max_events: u64::MAX,
        max_time: Instant::MAX,
        max_pending: usize::MAX,
    };
}

/// Why [`Simulation::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopReason {
    /// [`Model::is_done`] returned true.
    Done,
    /// The queue is empty: nothing can ever happen again.
    Quiescent,
    /// `max_events` events have been handled; more are pending.
    EventBudget,
    /// The next pending event is later than `max_time`.
    TimeBudget,
    /// More than `max_pending` events are pending.
    PendingBudget,
    /// The model abandoned the event it was handling because that one event did more work than
    /// the model allows itself (a handler that loops). The kernel never decides this: a model
    /// unwinds out of [`Simulation::run`] with a payload of its own, its caller catches it and
    /// reports this reason through [`Simulation::stopped`].
    WorkBudget,
}

impl StopReason {
    /// Whether a budget, rather than the model, ended the run.
    pub fn is_budget(self) -> bool {
        match self {
            StopReason::EventBudget
            | StopReason::TimeBudget
            | StopReason::PendingBudget
            | StopReason::WorkBudget => true,
            StopReason::Done | StopReason::Quiescent => false,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Done => "the model reported that it is done",
            StopReason::Quiescent => "no events are left to happen",
            StopReason::EventBudget => "the event budget is exhausted",
            StopReason::TimeBudget => "the next event is beyond the time budget",
            StopReason::PendingBudget => {
                "more events are pending than the pending budget allows (the run's future grows \
                 without bound)"
            }
            StopReason::WorkBudget => {
                "one event did more work than the work budget allows (the model looped inside an \
                 event)"
            }
        })
    }
}

/// How a call of [`Simulation::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    pub reason: StopReason,
    /// Events handled since the simulation began.
    pub events: u64,
    /// The simulated time: that of the last event handled.
    pub now: Instant,
    /// Events still queued.
    pub pending: usize,
    /// When the earliest queued event is due, if any.
    pub next_pending_at: Option<Instant>,
}

/// The clock, the event queue and the event count of one run.
#[derive(Clone, Debug)]
pub struct Simulation<E> {
    queue: EventQueue<E>,
    now: Instant,
    events: u64,
}

impl<E> Simulation<E> {
    pub fn new(tie_break: TieBreak) -> Simulation<E> {
        Simulation {
            queue: EventQueue::new(tie_break),
            now: Instant::ZERO,
            events: 0,
        }
    }

    /// Schedules `event` at `at` from outside the model: the initial events, or an injection
    /// between two calls of [`Simulation::run`]. Panics if `at` is before now.
    pub fn schedule(&mut self, at: Instant, event: E) {
        assert!(
            at >= self.now,
            "scheduled an event at {at}, before now ({})",
            self.now
        );
        self.queue.push(at, event);
    }

    /// How the run stands, ended for `reason`: for a caller that stopped it from outside the
    /// loop (see [`StopReason::WorkBudget`]).
    pub fn stopped(&self, reason: StopReason) -> RunOutcome {
        RunOutcome {
            reason,
            events: self.events,
            now: self.now,
            pending: self.queue.len(),
            next_pending_at: self.queue.peek_time(),
        }
    }

    /// Handles events in order until the model is done, the queue is empty, or the next event
    /// would break `budget` (see [`StopReason`]). Call it again to resume.
    pub fn run<M: Model<Event = E>>(&mut self, model: &mut M, budget: Budget) -> RunOutcome {
        let ahead = model.prefetch_ahead();
        // The tie of the event hinted as the one after next: when it comes next it was hinted
        // already, and the model's prefetch is not asked again.
        let mut hinted = None;
        let reason = loop {
            if model.is_done() {
                break StopReason::Done;
            }
            let Some(next_at) = self.queue.peek_time() else {
                break StopReason::Quiescent;
            };
            if next_at > budget.max_time {
                break StopReason::TimeBudget;
            }
            if self.events >= budget.max_events {
                break StopReason::EventBudget;
            }
            let (at, event) = self.queue.pop().expect("the queue was just peeked");
            debug_assert!(at >= self.now, "time went backwards: {at} < {}", self.now);
            if ahead == 1 {
                if let Some(next) = self.queue.peek_hint() {
                    model.prefetch(next);
                }
            } else if ahead > 1 {
                let [next, after] = self.queue.peek_hints();
                if let Some((tie, next)) = next {
                    if hinted != Some(tie) {
                        model.prefetch(next);
                    }
                }
                hinted = after.map(|(tie, after)| {
                    model.prefetch(after);
                    tie
                });
            }
            self.now = at;
            self.events += 1;
            let mut sched = Scheduler {
                queue: &mut self.queue,
                now: at,
            };
            model.handle(at, event, &mut sched);
            if self.queue.len() > budget.max_pending {
                break StopReason::PendingBudget;
            }
        };
        self.stopped(reason)
    }

    /// [`Simulation::run`], with `chooser` picking which of the events due at the current
    /// instant is handled next instead of the tie-break, which must be
    /// [`TieBreak::Insertion`] (push order is how a chooser tells events apart). A chooser that
    /// always picks index 0 makes exactly `run`'s order. Kept apart from `run`, whose loop is
    /// the hot path of every other run. Resumable like `run`: events left due go back into the
    /// queue in their place.
    pub fn run_chosen<M: Model<Event = E>>(
        &mut self,
        model: &mut M,
        budget: Budget,
        chooser: &mut (impl Chooser + ?Sized),
    ) -> RunOutcome {
        // The events due at `instant`, in push order, and what the chooser sees of them.
        let mut due: Vec<(u64, E)> = Vec::new();
        let mut seen: Vec<Due> = Vec::new();
        let mut instant = self.now;
        let reason = loop {
            if model.is_done() {
                break StopReason::Done;
            }
            if due.is_empty() {
                let Some(next_at) = self.queue.peek_time() else {
                    break StopReason::Quiescent;
                };
                if next_at > budget.max_time {
                    break StopReason::TimeBudget;
                }
                instant = next_at;
            }
            if self.events >= budget.max_events {
                break StopReason::EventBudget;
            }
            while self.queue.peek_time() == Some(instant) {
                let (_, seq, event) = self.queue.pop_numbered().expect("just peeked");
                due.push((seq, event));
            }
            seen.clear();
            for (i, (seq, event)) in due.iter().enumerate() {
                seen.push(Due {
                    seq: *seq,
                    actor: model.actor(event),
                    repeat: due[..i]
                        .iter()
                        .any(|(_, e)| model.interchangeable(e, event)),
                    slack: model.slack(instant, event),
                });
            }
            let index = chooser.choose(instant, &seen);
            assert!(
                index < due.len(),
                "the chooser picked event {index} of {} due",
                due.len()
            );
            let chosen = seen[index];
            if chosen.slack > Duration::ZERO {
                let delay = chooser.delay(instant, &chosen);
                assert!(
                    delay <= chosen.slack,
                    "the chooser postponed an event by {delay}, beyond its slack {}",
                    chosen.slack
                );
                if delay > Duration::ZERO {
                    let (seq, event) = due.remove(index);
                    self.queue.push_numbered(instant + delay, seq, event);
                    continue;
                }
            }
            let (_, event) = due.remove(index);
            self.now = instant;
            self.events += 1;
            let mut sched = Scheduler {
                queue: &mut self.queue,
                now: instant,
            };
            model.handle(instant, event, &mut sched);
            if self.queue.len() + due.len() > budget.max_pending {
                break StopReason::PendingBudget;
            }
        };
        for (seq, event) in due {
            self.queue.push_numbered(instant, seq, event);
        }
        self.stopped(reason)
    }

    /// The time of the last event handled (zero before the first).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events handled since the simulation began, over every call of [`Simulation::run`].
    pub fn events_processed(&self) -> u64 {
        self.events
    }

    /// The pending events, for inspection (diagnostics, oracles at the end of a run).
    pub fn queue(&self) -> &EventQueue<E> {
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event `(label, hops)`: handling it records it and, while `hops > 0`, schedules
    /// `(label, hops - 1)` one `step` later.
    type Hop = (u32, u32);

    /// Records what it handles, as `(nanoseconds, event)`; done once it has seen `done_after`
    /// events, if set.
    struct Hopper {
        step: Duration,
        seen: Vec<(u64, Hop)>,
        done_after: Option<usize>,
    }

    impl Hopper {
        fn new(step: Duration) -> Hopper {
            Hopper {
                step,
                seen: Vec::new(),
                done_after: None,
            }
        }

        fn labels(&self) -> Vec<u32> {
            self.seen.iter().map(|&(_, (label, _))| label).collect()
        }
    }

    impl Model for Hopper {
        type Event = Hop;

        fn handle(&mut self, now: Instant, event: Hop, sched: &mut Scheduler<'_, Hop>) {
            assert_eq!(sched.now(), now);
            self.seen.push((now.as_nanos(), event));
            let (label, hops) = event;
            if hops > 0 {
                sched.after(self.step, (label, hops - 1));
            }
        }

        fn is_done(&self) -> bool {
            self.done_after.is_some_and(|n| self.seen.len() >= n)
        }
    }

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    const ONE_MS: Duration = Duration::from_millis(1);

    /// A [`Hopper`] that asks for hints `ahead` events ahead and keeps every hint it gets.
    struct Hinted {
        hopper: Hopper,
        ahead: usize,
        hints: std::cell::RefCell<Vec<Hop>>,
    }

    impl Model for Hinted {
        type Event = Hop;

        fn handle(&mut self, now: Instant, event: Hop, sched: &mut Scheduler<'_, Hop>) {
            self.hopper.handle(now, event, sched);
        }

        fn is_done(&self) -> bool {
            self.hopper.is_done()
        }

        fn prefetch(&self, next: &Hop) {
            self.hints.borrow_mut().push(*next);
        }

        fn prefetch_ahead(&self) -> usize {
            self.ahead
        }
    }

    #[test]
    fn hints_go_as_far_ahead_as_the_model_asks_and_change_nothing() {
        // Enough hoppers for the queue to turn radix (and back), at nearby instants.
        let run = |ahead: usize| {
            let mut sim = Simulation::new(TieBreak::Shuffled { seed: 7 });
            for label in 0..3000u32 {
                let at = Instant::from_nanos(u64::from(label % 97) * 1_000);
                sim.schedule(at, (label, 2 + label % 3));
            }
            let mut model = Hinted {
                hopper: Hopper::new(Duration::from_nanos(16_411)),
                ahead,
                hints: Default::default(),
            };
            let outcome = sim.run(&mut model, Budget::UNLIMITED);
            (outcome, model.hopper.seen, model.hints.into_inner())
        };
        let (outcome, seen, hints) = run(0);
        assert!(hints.is_empty());
        for ahead in [1, 2] {
            let (o, s, h) = run(ahead);
            assert_eq!((o, &s), (outcome, &seen), "{ahead} ahead");
            // About one hint per event handled (two ahead: at most two, the next one not
            // again when it was hinted as the one after it), each naming an event of the run.
            assert!(
                h.len() >= s.len() - 1 && h.len() <= ahead * s.len(),
                "{ahead} ahead"
            );
            assert!(h.iter().all(|hint| s.iter().any(|&(_, e)| e == *hint)));
        }
    }

    #[test]
    fn quiescent_when_nothing_is_left() {
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(ONE_MS);
        sim.schedule(ms(0), (7, 3));
        let outcome = sim.run(&mut model, Budget::UNLIMITED);
        assert_eq!(
            outcome,
            RunOutcome {
                reason: StopReason::Quiescent,
                events: 4,
                now: ms(3),
                pending: 0,
                next_pending_at: None,
            }
        );
        assert_eq!(
            model.seen,
            [
                (0, (7, 3)),
                (1_000_000, (7, 2)),
                (2_000_000, (7, 1)),
                (3_000_000, (7, 0))
            ]
        );
        assert_eq!(outcome.reason.to_string(), "no events are left to happen");
    }

    #[test]
    fn done_is_checked_before_the_first_event_and_after_each() {
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(ONE_MS);
        model.done_after = Some(0);
        sim.schedule(ms(0), (1, 5));
        let outcome = sim.run(&mut model, Budget::UNLIMITED);
        assert_eq!(outcome.reason, StopReason::Done);
        assert_eq!((outcome.events, outcome.pending), (0, 1));

        model.done_after = Some(2);
        let outcome = sim.run(&mut model, Budget::UNLIMITED);
        assert_eq!(outcome.reason, StopReason::Done);
        assert_eq!((outcome.events, outcome.now), (2, ms(1)));
        assert_eq!(outcome.next_pending_at, Some(ms(2)));
    }

    #[test]
    fn event_budget_leaves_the_next_event_queued_and_resumes() {
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(ONE_MS);
        sim.schedule(ms(0), (1, 9));
        let small = Budget {
            max_events: 3,
            ..Budget::UNLIMITED
        };
        let outcome = sim.run(&mut model, small);
        assert_eq!(outcome.reason, StopReason::EventBudget);
        assert_eq!((outcome.events, outcome.now), (3, ms(2)));
        assert_eq!((outcome.pending, outcome.next_pending_at), (1, Some(ms(3))));

        // The budget is a total: the same budget stops again at once.
        assert_eq!(sim.run(&mut model, small), outcome);

        let larger = Budget {
            max_events: 10,
            ..small
        };
        let outcome = sim.run(&mut model, larger);
        assert_eq!(outcome.reason, StopReason::Quiescent);
        assert_eq!((outcome.events, sim.events_processed()), (10, 10));
        let expected: Vec<_> = (0..10)
            .map(|i| (i * 1_000_000, (1, 9 - i as u32)))
            .collect();
        assert_eq!(model.seen, expected, "resuming is as if uninterrupted");
    }

    #[test]
    fn time_budget_handles_events_at_the_limit_and_keeps_now() {
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(ONE_MS);
        sim.schedule(ms(0), (1, 9));
        let budget = Budget {
            max_time: ms(4),
            ..Budget::UNLIMITED
        };
        let outcome = sim.run(&mut model, budget);
        assert_eq!(outcome.reason, StopReason::TimeBudget);
        assert_eq!((outcome.events, outcome.now, sim.now()), (5, ms(4), ms(4)));
        assert_eq!(outcome.next_pending_at, Some(ms(5)));
        assert_eq!(sim.queue().len(), 1);

        let later = Budget {
            max_time: ms(6),
            ..budget
        };
        let outcome = sim.run(&mut model, later);
        assert_eq!(outcome.reason, StopReason::TimeBudget);
        assert_eq!((outcome.events, outcome.now), (7, ms(6)));

        let outcome = sim.run(&mut model, Budget::UNLIMITED);
        assert_eq!(outcome.reason, StopReason::Quiescent);
        assert_eq!((outcome.events, outcome.now), (10, ms(9)));
    }

    #[test]
    fn same_instant_events_are_fifo_under_insertion() {
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(Duration::ZERO);
        sim.schedule(ms(1), (99, 0));
        for label in [10, 20, 30] {
            sim.schedule(ms(0), (label, 1));
        }
        sim.run(&mut model, Budget::UNLIMITED);
        // Zero-delay follow-ups queue up behind the events already due at the same instant.
        assert_eq!(model.labels(), [10, 20, 30, 10, 20, 30, 99]);
        assert_eq!(model.seen[3], (0, (10, 0)));
    }

    /// The delivery order of a run where labels 0..30 are due at 0 (each with one zero-delay
    /// follow-up) and labels 100..130 at 1ms.
    fn shuffled_order(seed: u64) -> Vec<(u64, Hop)> {
        let mut sim = Simulation::new(TieBreak::Shuffled { seed });
        let mut model = Hopper::new(Duration::ZERO);
        for label in 0..30 {
            sim.schedule(ms(1), (100 + label, 0));
            sim.schedule(ms(0), (label, 1));
        }
        let outcome = sim.run(&mut model, Budget::UNLIMITED);
        assert_eq!(
            (outcome.reason, outcome.events),
            (StopReason::Quiescent, 90)
        );
        model.seen
    }

    #[test]
    fn shuffled_order_is_seeded_complete_and_time_ordered() {
        let first = shuffled_order(1);
        assert_eq!(first, shuffled_order(1), "same seed, same order");
        assert_ne!(first, shuffled_order(2), "another seed, another order");

        let roots: Vec<u32> = first
            .iter()
            .filter(|&&(_, (_, hops))| hops == 1)
            .map(|&(_, (label, _))| label)
            .collect();
        assert_ne!(roots, (0..30).collect::<Vec<_>>(), "not the push order");

        assert!(first.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
        let mut delivered: Vec<Hop> = first.iter().map(|&(_, event)| event).collect();
        delivered.sort_unstable();
        let mut expected: Vec<Hop> = (0..30)
            .flat_map(|label| [(label, 0), (label, 1), (100 + label, 0)])
            .collect();
        expected.sort_unstable();
        assert_eq!(delivered, expected, "every event exactly once");
    }

    /// A chooser that always takes the first due event makes `run`'s insertion order, and one
    /// that takes the last reverses each instant's order; an event budget stops a controlled
    /// run with the due events back in the queue, and resuming continues as if uninterrupted.
    #[test]
    fn a_controlled_run_follows_its_chooser_and_resumes() {
        use crate::explore::Replay;
        struct Last;
        impl Chooser for Last {
            fn choose(&mut self, _: Instant, due: &[Due]) -> usize {
                due.len() - 1
            }
        }
        let start = |sim: &mut Simulation<Hop>| {
            sim.schedule(ms(1), (99, 0));
            for label in [10, 20, 30] {
                sim.schedule(ms(0), (label, 1));
            }
        };
        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(Duration::ZERO);
        start(&mut sim);
        let outcome = sim.run_chosen(&mut model, Budget::UNLIMITED, &mut Replay::new(vec![]));
        assert_eq!(outcome.reason, StopReason::Quiescent);
        assert_eq!(model.labels(), [10, 20, 30, 10, 20, 30, 99]);

        let mut sim = Simulation::new(TieBreak::Insertion);
        let mut model = Hopper::new(Duration::ZERO);
        start(&mut sim);
        let small = Budget {
            max_events: 2,
            ..Budget::UNLIMITED
        };
        let mut last = Last;
        let outcome = sim.run_chosen(&mut model, small, &mut last);
        assert_eq!(
            (outcome.reason, outcome.pending),
            (StopReason::EventBudget, 3)
        );
        assert_eq!(outcome.next_pending_at, Some(ms(0)));
        sim.run_chosen(&mut model, Budget::UNLIMITED, &mut last);
        // 30 first; its follow-up (pushed last) is then the last due, and so on.
        assert_eq!(model.labels(), [30, 30, 20, 20, 10, 10, 99]);
    }

    /// Every event schedules two: the pending set doubles each round until the budget ends it.
    #[test]
    fn a_future_that_grows_without_bound_ends_on_the_pending_budget() {
        struct Doubling;
        impl Model for Doubling {
            type Event = ();
            fn handle(&mut self, _: Instant, _: (), sched: &mut Scheduler<'_, ()>) {
                sched.after(ONE_MS, ());
                sched.after(ONE_MS, ());
            }
        }
        let mut sim = Simulation::new(TieBreak::Insertion);
        sim.schedule(ms(0), ());
        let budget = Budget {
            max_pending: 1000,
            ..Budget::UNLIMITED
        };
        let outcome = sim.run(&mut Doubling, budget);
        assert_eq!(outcome.reason, StopReason::PendingBudget);
        assert!(outcome.reason.is_budget());
        assert_eq!(
            outcome.pending, 1001,
            "stops right after crossing the bound"
        );
        assert_eq!(outcome.events, 1000);
    }

    #[test]
    fn a_delay_past_the_end_of_time_saturates_and_is_never_handled() {
        struct Far(u32);
        impl Model for Far {
            type Event = ();
            fn handle(&mut self, _: Instant, _: (), sched: &mut Scheduler<'_, ()>) {
                self.0 += 1;
                sched.after(Duration::from_nanos(u64::MAX), ());
            }
        }
        let mut sim = Simulation::new(TieBreak::Insertion);
        sim.schedule(ms(5), ());
        let mut model = Far(0);
        let budget = Budget {
            max_time: ms(1000),
            ..Budget::UNLIMITED
        };
        let outcome = sim.run(&mut model, budget);
        assert_eq!((outcome.reason, model.0), (StopReason::TimeBudget, 1));
        assert_eq!(outcome.next_pending_at, Some(Instant::MAX));
    }

    #[test]
    #[should_panic(expected = "before now")]
    fn scheduling_into_the_past_is_a_bug() {
        struct Backwards;
        impl Model for Backwards {
            type Event = ();
            fn handle(&mut self, _: Instant, _: (), sched: &mut Scheduler<'_, ()>) {
                sched.at(Instant::ZERO, ());
            }
        }
        let mut sim = Simulation::new(TieBreak::Insertion);
        sim.schedule(ms(1), ());
        sim.run(&mut Backwards, Budget::UNLIMITED);
    }
}
