//! Controlled exploration of same-instant orders: instead of a fixed [`TieBreak`], a
//! [`Chooser`] picks, at every step, which of the events due at the current instant is handled
//! next ([`Simulation::run_chosen`]).
//!
//! The kernel knows nothing of what events mean; a model names, for each event, the [`Actor`]
//! it is addressed to ([`Model::actor`]), and that is all a chooser sees of it. Two events
//! addressed to different actors are *independent*: handling them in either order is taken to
//! lead to equivalent runs (one Mazurkiewicz trace). [`Actor::EVERYONE`] is dependent on every
//! actor, for events that touch the whole model. Whether independence is exact depends on the
//! model keeping each actor's state to itself; a model documents how true it is for it.
//!
//! Three choosers:
//!
//! - [`Replay`]: a *choice vector*, the index taken at each step where two or more events were
//!   due (a *branch point*), indices into the due events in push order; past its end, index 0.
//!   The empty vector is exactly [`TieBreak::Insertion`]'s order. Every run under a chooser is
//!   fully determined by its choice vector, which [`ChoiceLog`] records, so any explored run can
//!   be replayed from the model's inputs and that vector.
//! - [`Pct`]: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A
//!   randomized scheduler with probabilistic guarantees of finding bugs", ASPLOS 2010). Each
//!   actor gets a random priority when it is first seen; the due event of the highest-priority
//!   actor is handled first (its oldest, when it has several); at `depth − 1` change points,
//!   steps drawn uniformly from `1..=steps`, the actor about to run drops below every initial
//!   priority (to `depth − j` at the `j`-th point). For a bug that needs `d` ordering constraints
//!   between `n` actors over `k` steps, one run finds it with probability at least
//!   `1 / (n · k^(d−1))` ([`pct_bound`]). Each change point also postpones one message: the
//!   first event due with [`Due::slack`] at it or after it, by a delay drawn up to that slack
//!   ([`Chooser::delay`]). That extends PCT from orders at an instant to messages moved in
//!   time, which the bound does not cover.
//! - [`Search`]: a stateless depth-first search over choice vectors with sleep sets (Godefroid,
//!   "Partial-Order Methods for the Verification of Concurrent Systems", 1996): every run is a
//!   re-execution from the start, following the current path of choices; after a choice has
//!   been explored, it sleeps in its siblings' subtrees until an event dependent on it is
//!   handled, so interleavings that only swap independent events are not run twice. A run that
//!   reaches a branch point where every due event sleeps is *redundant* (its class was
//!   explored) and is not counted as a class.
//!
//! [`TieBreak`]: crate::TieBreak
//! [`TieBreak::Insertion`]: crate::TieBreak::Insertion
//! [`Simulation::run_chosen`]: crate::Simulation::run_chosen
//! [`Model::actor`]: crate::Model::actor

use crate::rng::Stream;
use crate::time::{Duration, Instant};

/// What an event is addressed to, for a chooser: events of different actors commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Actor(pub u32);

impl Actor {
    /// Dependent on every actor (an event that touches the whole model).
    pub const EVERYONE: Actor = Actor(u32::MAX);

    /// Whether handling events of `self` and `other` in either order is taken to be the same.
    pub fn independent(self, other: Actor) -> bool {
        self != other && self != Actor::EVERYONE && other != Actor::EVERYONE
    }
}

/// One event due at the current instant, as a chooser sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// The push sequence number: unique in a run, and the same event gets the same number in
    /// every re-execution of the same choices.
    pub seq: u64,
    pub actor: Actor,
    /// An earlier due event is interchangeable with this one ([`crate::Model::interchangeable`]):
    /// handling either first makes the same run, so a search only ever takes the earlier.
    pub repeat: bool,
    /// How much later the event may happen instead ([`crate::Model::slack`]): zero for all but
    /// messages whose link allows a longer latency than this one took. A chooser may postpone
    /// it by up to this much ([`Chooser::delay`]).
    pub slack: Duration,
}

/// Picks the next event among those due now.
pub trait Chooser {
    /// `due` holds every event due at `now`, in push order, at least one. Returns an index into
    /// it. Called before every event a controlled run handles.
    fn choose(&mut self, now: Instant, due: &[Due]) -> usize;

    /// Called right after [`Chooser::choose`] picked `chosen`, when its `slack` is not zero:
    /// how much later than now the event is to happen instead, at most its slack. Zero (the
    /// default) handles it now; otherwise it goes back into the queue at `now + delay` and
    /// the next call of `choose` picks among the events left due.
    fn delay(&mut self, _now: Instant, _chosen: &Due) -> Duration {
        Duration::ZERO
    }
}

/// The choices a run made at its branch points, trailing zeros dropped, and the events it
/// postponed: what [`Replay`] needs to make the same run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChoiceLog {
    choices: Vec<u32>,
    /// Calls of [`Chooser::choose`] so far (every step, a postponement included).
    calls: u64,
    delays: Vec<Delay>,
}

/// One postponed event: at the `call`-th call of [`Chooser::choose`] (from 1), the event
/// chosen went back into the queue `nanos` later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delay {
    pub call: u64,
    pub nanos: u64,
}

impl ChoiceLog {
    fn note(&mut self, due: &[Due], index: usize) {
        self.calls += 1;
        if due.len() >= 2 {
            self.choices.push(index as u32);
        }
    }

    /// Records that the event chosen at the last call was postponed by `delay`.
    fn note_delay(&mut self, delay: Duration) {
        self.delays.push(Delay {
            call: self.calls,
            nanos: delay.as_nanos(),
        });
    }

    /// The postponements, in call order.
    pub fn delays(&self) -> &[Delay] {
        &self.delays
    }

    /// The choice vector, without trailing zeros (index 0 is the default past its end).
    pub fn vector(&self) -> Vec<u32> {
        let end = self
            .choices
            .iter()
            .rposition(|&c| c != 0)
            .map_or(0, |i| i + 1);
        self.choices[..end].to_vec()
    }
}

/// Follows a choice vector and a list of postponements (see the module docs).
#[derive(Clone, Debug)]
pub struct Replay {
    choices: Vec<u32>,
    next: usize,
    /// The postponements, in call order, and how many have been made.
    delays: Vec<Delay>,
    next_delay: usize,
    calls: u64,
    /// The first branch point whose choice was out of range (it took index 0 instead), if any:
    /// the vector was not made for this run.
    pub out_of_range: Option<usize>,
    /// The first postponement longer than its event's slack (the event was handled when due
    /// instead), if any: the delays were not made for this run.
    pub delay_out_of_range: Option<Delay>,
}

impl Replay {
    pub fn new(choices: Vec<u32>) -> Replay {
        Replay::with_delays(choices, Vec::new())
    }

    /// A replay that also postpones the events chosen at the calls `delays` name.
    pub fn with_delays(choices: Vec<u32>, mut delays: Vec<Delay>) -> Replay {
        delays.sort_unstable();
        Replay {
            choices,
            next: 0,
            delays,
            next_delay: 0,
            calls: 0,
            out_of_range: None,
            delay_out_of_range: None,
        }
    }
}

impl Chooser for Replay {
    fn choose(&mut self, _: Instant, due: &[Due]) -> usize {
        self.calls += 1;
        if due.len() < 2 {
            return 0;
        }
        let point = self.next;
        self.next += 1;
        let index = self.choices.get(point).map_or(0, |&c| c as usize);
        if index < due.len() {
            index
        } else {
            self.out_of_range.get_or_insert(point);
            0
        }
    }

    fn delay(&mut self, _: Instant, chosen: &Due) -> Duration {
        // A postponement of a call already past (its event had no slack) did not fit the run.
        while let Some(&delay) = self.delays.get(self.next_delay) {
            if delay.call > self.calls {
                break;
            }
            self.next_delay += 1;
            if delay.call == self.calls && delay.nanos <= chosen.slack.as_nanos() {
                return Duration::from_nanos(delay.nanos);
            }
            self.delay_out_of_range.get_or_insert(delay);
        }
        Duration::ZERO
    }
}

/// PCT's guarantee: a run finds a bug of depth `depth` among `actors` actors in `steps` steps
/// with probability at least `1 / (actors · steps^(depth−1))`.
pub fn pct_bound(actors: u64, steps: u64, depth: u32) -> f64 {
    1.0 / (actors.max(1) as f64 * (steps.max(1) as f64).powi(depth as i32 - 1))
}

/// The PCT scheduler (see the module docs).
#[derive(Clone, Debug)]
pub struct Pct {
    depth: u32,
    /// Each actor seen so far and its priority, sorted by actor (a handful: a linear scan).
    priorities: Vec<(Actor, u64)>,
    /// The change points, ascending: `(step, j)`.
    change_points: Vec<(u64, u32)>,
    step: u64,
    stream: Stream,
    log: ChoiceLog,
    /// Change points whose message postponement is still to come (no event with slack was
    /// due yet).
    armed: u32,
    /// The event (by push number) chosen to be postponed, and by how much.
    postpone: Option<(u64, Duration)>,
}

impl Pct {
    /// A PCT run of depth `depth` (at least 1) whose change points fall among the first
    /// `steps` steps, drawing everything from `stream`.
    pub fn new(depth: u32, steps: u64, mut stream: Stream) -> Pct {
        assert!(depth >= 1, "PCT depth is at least 1");
        let mut change_points: Vec<(u64, u32)> = (1..depth)
            .map(|j| (stream.between(1, steps.max(1)), j))
            .collect();
        change_points.sort_unstable();
        Pct {
            depth,
            priorities: Vec::new(),
            change_points,
            step: 0,
            stream,
            log: ChoiceLog::default(),
            armed: 0,
            postpone: None,
        }
    }

    /// The actors seen so far (PCT's `n` for this run).
    pub fn actors(&self) -> u64 {
        self.priorities.len() as u64
    }

    /// Steps taken (PCT's `k` for this run): every call of `choose`, an event handled or postponed.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The choices made, to replay this run with [`Replay`].
    pub fn log(&self) -> &ChoiceLog {
        &self.log
    }

    fn priority(&mut self, actor: Actor) -> u64 {
        match self.priorities.binary_search_by_key(&actor, |&(a, _)| a) {
            Ok(i) => self.priorities[i].1,
            Err(i) => {
                // Initial priorities lie above every change point's (`depth − j` < `depth`).
                let priority = self.stream.next_u64() | (1 << 63);
                self.priorities.insert(i, (actor, priority));
                priority
            }
        }
    }

    fn highest(&mut self, due: &[Due]) -> usize {
        let mut best = (0, 0u64);
        for (i, d) in due.iter().enumerate() {
            let priority = self.priority(d.actor);
            // Strictly greater: an actor's oldest event wins among its own.
            if i == 0 || priority > best.1 {
                best = (i, priority);
            }
        }
        best.0
    }
}

impl Chooser for Pct {
    fn choose(&mut self, _: Instant, due: &[Due]) -> usize {
        self.step += 1;
        let mut index = self.highest(due);
        while let Some(&(step, j)) = self.change_points.first() {
            // `<`: a change point left over from a step that postponed an event.
            if step > self.step {
                break;
            }
            self.change_points.remove(0);
            let actor = due[index].actor;
            let low = u64::from(self.depth - j);
            if let Ok(i) = self.priorities.binary_search_by_key(&actor, |&(a, _)| a) {
                self.priorities[i].1 = low;
            }
            self.armed += 1;
            index = self.highest(due);
        }
        // Each change point also moves a message later in time: the first due with slack, at
        // the change point or after it, by a draw within what its link allows. This step
        // postpones it; the next picks again.
        if self.armed > 0 {
            if let Some(i) = due.iter().position(|d| d.slack > Duration::ZERO) {
                self.armed -= 1;
                let delay = self.stream.between(1, due[i].slack.as_nanos());
                self.postpone = Some((due[i].seq, Duration::from_nanos(delay)));
                index = i;
            }
        }
        self.log.note(due, index);
        index
    }

    fn delay(&mut self, _: Instant, chosen: &Due) -> Duration {
        match self.postpone.take() {
            Some((seq, delay)) if seq == chosen.seq => {
                self.log.note_delay(delay);
                delay
            }
            _ => Duration::ZERO,
        }
    }
}

/// Where [`Search`] stands at one branch point of the current path.
#[derive(Clone, Debug)]
struct Node {
    due: Vec<Due>,
    /// Which of `due` slept when the path reached this point, or repeat an earlier one: never
    /// chosen here.
    asleep: Vec<bool>,
    /// Indices whose subtrees are explored; they sleep in their later siblings' subtrees.
    explored: Vec<usize>,
    chosen: usize,
}

/// How one run of a [`Search`] went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunShape {
    /// Every due event slept at some branch point: the run's class was already explored.
    pub redundant: bool,
    /// A branch point past the depth bound had an alternative left unexplored.
    pub cut_by_depth: bool,
}

/// A depth-first search over choice vectors with sleep sets (see the module docs). Call
/// [`Search::next_run`] for the chooser of each run and [`SearchRun::finish`] after it,
/// until `next_run` says the search is over.
#[derive(Clone, Debug)]
pub struct Search {
    path: Vec<Node>,
    max_depth: usize,
    started: bool,
}

impl Search {
    /// A search that branches at the first `max_depth` branch points of each run and takes the
    /// first event awake past them.
    pub fn new(max_depth: usize) -> Search {
        Search {
            path: Vec::new(),
            max_depth,
            started: false,
        }
    }

    /// The chooser of the next run, or `None` when every class within the depth bound has
    /// been explored.
    pub fn next_run(&mut self) -> Option<SearchRun<'_>> {
        if self.started && self.path.is_empty() {
            return None;
        }
        self.started = true;
        Some(SearchRun {
            search: self,
            point: 0,
            sleep: Vec::new(),
            shape: RunShape::default(),
            log: ChoiceLog::default(),
        })
    }

    /// Moves to the next unexplored choice: the deepest branch point with a sibling left.
    fn backtrack(&mut self) {
        while let Some(node) = self.path.last_mut() {
            node.explored.push(node.chosen);
            let next =
                (0..node.due.len()).find(|&i| !node.asleep[i] && !node.explored.contains(&i));
            match next {
                Some(i) => {
                    node.chosen = i;
                    return;
                }
                None => {
                    self.path.pop();
                }
            }
        }
    }
}

/// The chooser of one run of a [`Search`].
pub struct SearchRun<'a> {
    search: &'a mut Search,
    /// Branch points passed in this run.
    point: usize,
    /// The sleep set: due events not to be chosen, until a dependent event is handled.
    sleep: Vec<Due>,
    shape: RunShape,
    log: ChoiceLog,
}

impl SearchRun<'_> {
    /// Ends the run: what it was, and its choice vector; the search moves to the next path.
    pub fn finish(self) -> (RunShape, ChoiceLog) {
        let (shape, log) = (self.shape, self.log);
        self.search.backtrack();
        (shape, log)
    }

    fn asleep(&self, due: &Due) -> bool {
        self.sleep.iter().any(|s| s.seq == due.seq)
    }

    fn branch(&mut self, due: &[Due]) -> usize {
        let point = self.point;
        self.point += 1;
        if self.shape.redundant {
            return 0;
        }
        if let Some(node) = self.search.path.get(point) {
            debug_assert_eq!(node.due, due, "a re-execution diverged from its path");
            // The explored siblings sleep below this choice.
            for &e in &node.explored {
                self.sleep.push(node.due[e]);
            }
            return node.chosen;
        }
        let asleep: Vec<bool> = due.iter().map(|d| d.repeat || self.asleep(d)).collect();
        let Some(first) = asleep.iter().position(|&a| !a) else {
            self.shape.redundant = true;
            return 0;
        };
        if point < self.search.max_depth {
            self.search.path.push(Node {
                due: due.to_vec(),
                asleep,
                explored: Vec::new(),
                chosen: first,
            });
        } else if asleep.iter().filter(|&&a| !a).count() > 1 {
            self.shape.cut_by_depth = true;
        }
        first
    }
}

impl Chooser for SearchRun<'_> {
    fn choose(&mut self, _: Instant, due: &[Due]) -> usize {
        let index = if due.len() >= 2 { self.branch(due) } else { 0 };
        if due.len() == 1 && !self.shape.redundant && self.asleep(&due[0]) {
            self.shape.redundant = true;
        }
        let handled = due[index];
        self.sleep.retain(|s| s.actor.independent(handled.actor));
        self.log.note(due, index);
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due(actors: &[u32]) -> Vec<Due> {
        actors
            .iter()
            .enumerate()
            .map(|(i, &a)| Due {
                seq: i as u64,
                actor: Actor(a),
                repeat: false,
                slack: Duration::ZERO,
            })
            .collect()
    }

    #[test]
    fn independence_is_between_distinct_actors_only() {
        assert!(Actor(1).independent(Actor(2)));
        assert!(!Actor(1).independent(Actor(1)));
        assert!(!Actor(1).independent(Actor::EVERYONE));
        assert!(!Actor::EVERYONE.independent(Actor(1)));
    }

    #[test]
    fn a_choice_log_drops_trailing_zeros_and_skips_single_events() {
        let mut log = ChoiceLog::default();
        log.note(&due(&[1]), 0);
        log.note(&due(&[1, 2]), 1);
        log.note(&due(&[1, 2, 3]), 0);
        assert_eq!(log.choices, [1, 0], "two branch points");
        assert_eq!(log.vector(), [1]);
    }

    #[test]
    fn replay_follows_its_vector_then_takes_the_first() {
        let mut replay = Replay::new(vec![2, 5]);
        let at = Instant::ZERO;
        assert_eq!(replay.choose(at, &due(&[1])), 0, "no branch point");
        assert_eq!(replay.choose(at, &due(&[1, 2, 3])), 2);
        assert_eq!(replay.choose(at, &due(&[1, 2])), 0, "5 is out of range");
        assert_eq!(replay.out_of_range, Some(1));
        assert_eq!(replay.choose(at, &due(&[1, 2])), 0, "past the vector");
    }

    #[test]
    fn pct_runs_the_highest_priority_actor_and_is_seeded() {
        let order = |seed: u64, depth| {
            let mut pct = Pct::new(depth, 10, crate::RandomStreams::new(seed).stream("pct"));
            let mut picks = Vec::new();
            for _ in 0..6 {
                picks.push(pct.choose(Instant::ZERO, &due(&[1, 2, 3])));
            }
            picks
        };
        let first = order(1, 1);
        assert_eq!(first, order(1, 1));
        // Depth 1 has no change point: one actor's events win every time.
        assert!(first.iter().all(|&p| p == first[0]), "{first:?}");
        // Some seed and depth 3 changes the winner within 6 steps of 10.
        assert!((0..50).any(|seed| {
            let picks = order(seed, 3);
            picks.iter().any(|&p| p != picks[0])
        }));
    }

    /// A toy kernel: events `(at, seq, actor)`, each with `slack` ns of slack; handles them in
    /// time order, the chooser picking among those due and postponing as it says. Returns the
    /// handled events as `(at, seq)`.
    fn drive(chooser: &mut impl Chooser, events: &[(u64, u32)], slack: u64) -> Vec<(u64, u64)> {
        let mut pending: Vec<(u64, Due)> = events
            .iter()
            .enumerate()
            .map(|(i, &(at, actor))| {
                let due = Due {
                    seq: i as u64,
                    actor: Actor(actor),
                    repeat: false,
                    slack: Duration::from_nanos(slack),
                };
                (at, due)
            })
            .collect();
        let mut handled = Vec::new();
        while let Some(now) = pending.iter().map(|&(at, _)| at).min() {
            let mut due: Vec<Due> = pending
                .iter()
                .filter(|&&(at, _)| at == now)
                .map(|&(_, d)| d)
                .collect();
            due.sort_by_key(|d| d.seq);
            let chosen = due[chooser.choose(Instant::from_nanos(now), &due)];
            let delay = chooser.delay(Instant::from_nanos(now), &chosen).as_nanos();
            assert!(delay <= slack);
            let i = pending
                .iter()
                .position(|&(_, d)| d.seq == chosen.seq)
                .unwrap();
            if delay > 0 {
                pending[i].0 += delay;
            } else {
                pending.remove(i);
                handled.push((now, chosen.seq));
            }
        }
        handled
    }

    #[test]
    fn pct_postpones_the_message_a_change_point_falls_on_and_replay_repeats_it() {
        let events: Vec<(u64, u32)> = (0..12).map(|i| (i / 3 * 10, i as u32 % 4)).collect();
        let pct_run = |seed: u64| {
            let stream = crate::RandomStreams::new(seed).stream("pct");
            let mut pct = Pct::new(3, events.len() as u64, stream);
            let handled = drive(&mut pct, &events, 25);
            (handled, pct.log().clone())
        };
        let mut postponed = 0;
        for seed in 0..20 {
            let (handled, log) = pct_run(seed);
            assert_eq!((handled.clone(), log.clone()), pct_run(seed), "seeded");
            assert_eq!(handled.len(), events.len(), "every event is handled once");
            assert!(log.delays().len() <= 2, "at most depth - 1 postponements");
            for delay in log.delays() {
                assert!((1..=25).contains(&delay.nanos));
            }
            postponed += log.delays().len();
            // Replaying the choices and the postponements makes the same run.
            let mut replay = Replay::with_delays(log.vector(), log.delays().to_vec());
            assert_eq!(drive(&mut replay, &events, 25), handled, "seed {seed}");
            assert_eq!(
                (replay.out_of_range, replay.delay_out_of_range),
                (None, None)
            );
            // Without slack nothing moves in time: every event at its own instant.
            let stream = crate::RandomStreams::new(seed).stream("pct");
            let mut pct = Pct::new(3, events.len() as u64, stream);
            let still = drive(&mut pct, &events, 0);
            assert!(still.iter().all(|&(at, seq)| at == events[seq as usize].0));
            assert!(pct.log().delays().is_empty());
        }
        assert!(
            postponed > 10,
            "change points fall on messages: {postponed}"
        );
    }

    #[test]
    fn a_replay_says_when_a_postponement_does_not_fit() {
        let events = [(0, 1), (0, 2)];
        let delay = Delay { call: 1, nanos: 30 };
        let mut replay = Replay::with_delays(Vec::new(), vec![delay]);
        let handled = drive(&mut replay, &events, 25);
        assert_eq!(handled, [(0, 0), (0, 1)], "handled when due");
        assert_eq!(replay.delay_out_of_range, Some(delay));
    }

    #[test]
    fn pct_bound_is_one_over_n_k_to_the_d_minus_one() {
        assert_eq!(pct_bound(4, 100, 1), 0.25);
        assert_eq!(pct_bound(4, 100, 2), 1.0 / 400.0);
        assert_eq!(pct_bound(2, 10, 3), 1.0 / 200.0);
    }

    /// A toy run: at one instant, events of the given actors are due; each handled event leaves.
    fn explore(actors: &[u32], max_depth: usize) -> (Vec<Vec<u64>>, usize, bool) {
        let mut search = Search::new(max_depth);
        let mut classes = Vec::new();
        let mut redundant = 0;
        let mut cut = false;
        while let Some(mut run) = search.next_run() {
            let mut left = due(actors);
            let mut order = Vec::new();
            while !left.is_empty() {
                let i = run.choose(Instant::ZERO, &left);
                order.push(left.remove(i).seq);
            }
            let (shape, _) = run.finish();
            cut |= shape.cut_by_depth;
            if shape.redundant {
                redundant += 1;
            } else {
                classes.push(order);
            }
        }
        (classes, redundant, cut)
    }

    #[test]
    fn search_explores_every_order_of_dependent_events() {
        let (classes, redundant, cut) = explore(&[1, 1, 1], 10);
        assert_eq!(classes.len(), 6, "3! orders of one actor's events");
        assert_eq!((redundant, cut), (0, false));
    }

    #[test]
    fn search_explores_one_order_of_independent_events() {
        let (classes, _, _) = explore(&[1, 2, 3], 10);
        assert_eq!(classes, [vec![0, 1, 2]]);
    }

    #[test]
    fn search_explores_the_orders_that_matter_of_a_mix() {
        // Two events of actor 1 (order matters) and one of actor 2 (commutes with both).
        let (classes, _, _) = explore(&[1, 2, 1], 10);
        let mut of_actor_1: Vec<Vec<u64>> = classes
            .iter()
            .map(|o| o.iter().copied().filter(|&s| s != 1).collect())
            .collect();
        of_actor_1.sort();
        assert_eq!(of_actor_1, [vec![0, 2], vec![2, 0]]);
        // An EVERYONE event is dependent on all: every order of the three.
        let (classes, _, _) = explore(&[1, u32::MAX, 2], 10);
        assert_eq!(classes.len(), 4, "{classes:?}");
    }

    #[test]
    fn search_takes_only_the_first_of_interchangeable_events() {
        let mut search = Search::new(10);
        let mut runs = 0;
        while let Some(mut run) = search.next_run() {
            let mut left = due(&[1, 1, 1]);
            left[1].repeat = true; // the same as event 0
            while !left.is_empty() {
                let i = run.choose(Instant::ZERO, &left);
                assert!(!left[i].repeat, "a repeat was chosen");
                left.remove(i);
                if let Some(first) = left.first_mut() {
                    first.repeat = false;
                }
            }
            run.finish();
            runs += 1;
        }
        // Event 0 first, then both orders of 1 and 2; or 2 first, then 0 (1 is its repeat).
        assert_eq!(runs, 3);
    }

    #[test]
    fn search_reports_the_depth_bound() {
        let (classes, _, cut) = explore(&[1, 1, 1], 1);
        assert_eq!(classes.len(), 3, "only the first choice branches");
        assert!(cut);
    }
}
