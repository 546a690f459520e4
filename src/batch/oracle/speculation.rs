//! `speculation` (P2.8), from the oracle's own ledger of the JobMaster's view (`execution_state`
//! events: when each attempt was deployed, when it finished), the vertices' parallelism
//! (`vertex_initialized`) and where each attempt went (`deployed`).
//!
//! - A speculative attempt is deployed only for a subtask of a vertex that is no source,
//!   beside exactly one original attempt that may still finish, once the vertex's finished
//!   share reached `baseline_ratio` and some attempt of the subtask ran at least the baseline
//!   (the median time of the first `round(p × ratio)` finished subtasks, times
//!   `baseline_multiplier`) and at least `baseline_lower_bound`.
//! - It never goes to the TaskManager of an attempt that is slow then, nor to one an earlier
//!   check blocked (`block_slow_node_duration`; every check is in the trace,
//!   `speculation_checked`), nor to one whose slots are all taken in the JobMaster's view.
//! - Nor is one launched late or never: once a check has looked, every slow subtask with a
//!   single attempt has a speculative one by the end of that instant, unless no TaskManager it
//!   could go to had a free slot (counted here from the deployments and the view, on the
//!   TaskManagers this JobMaster is known to have registered: it deployed there).
//! - The first attempt to finish wins: by the next instant every other attempt of the subtask
//!   has ended in the JobMaster's view.
//! - A failed attempt hands over to another attempt of its subtask that may still finish: the
//!   subtask is not failed over on that failure's account (no `subtask_reset` with reason
//!   `failover` in that instant), unless the failure was a missing partition (the attempt read
//!   one that was gone, `partition_not_found`), which fails the vertex over as usual.

use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::scenario::Speculative;
use crate::status::ExecutionState;
use crate::trace::{RerunReason, TraceEvent};
use sim::{Duration, Instant};
use std::collections::BTreeMap;

pub(super) struct Ledger {
    config: Option<Speculative>,
    parallelism: Vec<Option<u32>>,
    /// Per attempt in the current JobMaster's view: its state and when it was deployed.
    attempts: BTreeMap<(SubtaskId, u32), (ExecutionState, Option<Instant>)>,
    /// Per subtask FINISHED in the view: how long its finished attempt ran (0 if this
    /// JobMaster never deployed it: recovered as finished).
    finished: Vec<Option<Duration>>,
    /// Where each attempt went, and whether as a speculative one.
    placed: BTreeMap<(SubtaskId, u32), (u32, bool)>,
    /// Per TaskManager: until when a check this ledger saw blocked it.
    blocked_until: Vec<Instant>,
    /// Finishes, with the other attempts that ran beside them then: those must have ended by
    /// the next instant.
    won: Vec<(SubtaskId, u32, Instant, Vec<u32>)>,
    /// Per subtask: the last failure of one of its attempts while another may still finish
    /// (when, the failed attempt's deployment, the other attempt): a hand-over, no failover.
    handed_over: Vec<Option<HandOver>>,
    /// Per subtask: when one of its attempts last found an input partition gone.
    not_found: Vec<Option<Instant>>,
    slots: u32,
    /// Per TaskManager: registered with the current JobMaster for sure (it deployed there since
    /// its election, and has not timed the TaskManager out since).
    known: Vec<bool>,
    /// The last check, until its instant is over: what it owes.
    owed: Option<Owed>,
}

/// What a check of the detector owes by the end of its instant.
struct Owed {
    at: Instant,
    /// Slow subtasks with a single attempt then.
    needing: Vec<SubtaskId>,
    /// Per TaskManager it could place on: its free slots then.
    free: BTreeMap<u32, u32>,
    /// Speculative attempts placed since, with their TaskManagers.
    launched: Vec<(SubtaskId, u32)>,
}

/// A failure that P2.8 turns into a hand-over to the subtask's other attempt.
#[derive(Clone, Copy)]
struct HandOver {
    at: Instant,
    failed: u32,
    deployed: Option<Instant>,
    other: u32,
}

fn may_finish(state: ExecutionState) -> bool {
    matches!(
        state,
        ExecutionState::Deploying | ExecutionState::Initializing | ExecutionState::Running
    )
}

impl Ledger {
    pub(super) fn new(
        graph: &ExecutionGraph,
        task_managers: usize,
        slots: u32,
        config: Option<Speculative>,
    ) -> Ledger {
        Ledger {
            config,
            parallelism: vec![None; graph.vertices.len()],
            attempts: BTreeMap::new(),
            finished: vec![None; graph.subtasks.len()],
            placed: BTreeMap::new(),
            blocked_until: vec![Instant::ZERO; task_managers],
            won: Vec::new(),
            handed_over: vec![None; graph.subtasks.len()],
            not_found: vec![None; graph.subtasks.len()],
            slots,
            known: vec![false; task_managers],
            owed: None,
        }
    }

    /// What the event says, and what it breaks (at most one message).
    pub(super) fn observe(
        &mut self,
        graph: &ExecutionGraph,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<String> {
        let late = self.overdue(graph, now).or_else(|| self.unpaid(graph, now));
        let found = match *event {
            TraceEvent::VertexInitialized {
                vertex,
                parallelism,
                ..
            } => {
                self.parallelism[vertex.index()] = Some(parallelism);
                None
            }
            TraceEvent::JobMasterElected { .. } | TraceEvent::JobMasterLost { .. } => {
                self.attempts.clear();
                self.finished.fill(None);
                self.won.clear();
                self.blocked_until.fill(Instant::ZERO);
                self.handed_over.fill(None);
                self.known.fill(false);
                None
            }
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                self.known[task_manager as usize] = false;
                None
            }
            TraceEvent::SpeculationChecked => {
                self.check(graph, now);
                None
            }
            TraceEvent::PartitionNotFound { subtask, .. } => {
                self.not_found[subtask.index()] = Some(now);
                None
            }
            TraceEvent::SubtaskReset { subtask, reason } => {
                self.finished[subtask.index()] = None;
                (reason == RerunReason::Failover)
                    .then(|| self.check_hand_over(graph, subtask, now))
                    .flatten()
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                to,
                ..
            } => {
                self.execution_state(subtask, attempt, to, now);
                None
            }
            TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                speculative,
            } => {
                let full = self.used(task_manager) >= self.slots;
                self.placed
                    .insert((subtask, attempt), (task_manager, speculative));
                self.known[task_manager as usize] = true;
                if let Some(owed) = self.owed.as_mut().filter(|o| o.at == now && speculative) {
                    owed.launched.push((subtask, task_manager));
                }
                speculative
                    .then(|| self.check_launch(graph, subtask, task_manager, full, now))
                    .flatten()
            }
            _ => None,
        };
        late.or(found)
    }

    fn execution_state(&mut self, s: SubtaskId, attempt: u32, to: ExecutionState, now: Instant) {
        let entry = self.attempts.entry((s, attempt)).or_insert((to, None));
        entry.0 = to;
        if to == ExecutionState::Deploying {
            entry.1 = Some(now);
        }
        let deployed = entry.1;
        match to {
            ExecutionState::Failed => {
                if let Some(&other) = self.others(s, attempt).first() {
                    self.handed_over[s.index()] = Some(HandOver {
                        at: now,
                        failed: attempt,
                        deployed,
                        other,
                    });
                }
            }
            ExecutionState::Finished => {
                let ran = deployed.map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
                self.finished[s.index()] = Some(ran);
                let others = self.others(s, attempt);
                if !others.is_empty() {
                    self.won.push((s, attempt, now, others));
                }
            }
            _ => {}
        }
    }

    /// The attempts of `s` other than `attempt` that may still finish in the view.
    fn others(&self, s: SubtaskId, attempt: u32) -> Vec<u32> {
        self.attempts
            .iter()
            .filter(|(&(t, a), &(state, _))| t == s && a != attempt && may_finish(state))
            .map(|(&(_, a), _)| a)
            .collect()
    }

    /// A finish at an earlier instant whose other attempt is still running in the view.
    fn overdue(&mut self, graph: &ExecutionGraph, now: Instant) -> Option<String> {
        let (due, later): (Vec<_>, Vec<_>) = self.won.drain(..).partition(|&(_, _, t, _)| t < now);
        self.won = later;
        due.into_iter().find_map(|(s, winner, at, others)| {
            let (other, state) = others.into_iter().find_map(|a| {
                let &(state, _) = self.attempts.get(&(s, a))?;
                may_finish(state).then_some((a, state))
            })?;
            Some(format!(
                "attempt {winner} of {} finished at {at}, but attempt {other} is still {state}: \
                 the first attempt to finish wins and the JobMaster cancels the other at once \
                 (P2.8)",
                graph.subtask_name(s)
            ))
        })
    }

    /// A failover of `s` for its own failure (`subtask_reset` with reason `failover`) in the
    /// instant an attempt of it failed beside another that could still finish: P2.8 hands over
    /// instead, unless the failed attempt found an input partition gone.
    fn check_hand_over(
        &self,
        graph: &ExecutionGraph,
        s: SubtaskId,
        now: Instant,
    ) -> Option<String> {
        let h = self.handed_over[s.index()].filter(|h| h.at == now)?;
        // The other attempt failed in the same instant too (both on a lost TaskManager):
        // nothing was left to hand over to.
        let (other, _) = self.attempts.get(&(s, h.other))?;
        if *other == ExecutionState::Failed {
            return None;
        }
        let missing = self.not_found[s.index()]
            .is_some_and(|at| h.deployed.is_none_or(|deployed| at >= deployed));
        (!missing).then(|| {
            format!(
                "{} is failed over at {now} because its attempt {} failed, although its attempt \
                 {} could still finish: a failed attempt hands over to the other one (P2.8)",
                graph.subtask_name(s),
                h.failed,
                h.other
            )
        })
    }

    /// The end of the run: a finish or a check in its last instant is judged too.
    pub(super) fn finish(&mut self, graph: &ExecutionGraph) -> Option<String> {
        let end = Instant::from_nanos(u64::MAX);
        self.overdue(graph, end).or_else(|| self.unpaid(graph, end))
    }

    /// The attempts in the view that hold a slot of TaskManager `tm`.
    fn used(&self, tm: u32) -> u32 {
        self.attempts
            .iter()
            .filter(|(key, &(state, _))| {
                may_finish(state) && self.placed.get(key).is_some_and(|p| p.0 == tm)
            })
            .count() as u32
    }

    /// The detector looks: it blocks the TaskManagers of slow attempts, and owes each slow
    /// subtask with a single attempt a speculative one while a TaskManager has room.
    fn check(&mut self, graph: &ExecutionGraph, now: Instant) {
        let Some(config) = self.config else {
            return;
        };
        let slow: Vec<(SubtaskId, u32)> = (0..graph.vertices.len() as u32)
            .filter_map(|v| self.slow(graph, VertexId(v), now))
            .flatten()
            .collect();
        if config.block_slow_node_duration > Duration::ZERO {
            let until = now + config.block_slow_node_duration;
            for key in &slow {
                if let Some(&(tm, _)) = self.placed.get(key) {
                    let blocked = &mut self.blocked_until[tm as usize];
                    *blocked = (*blocked).max(until);
                }
            }
        }
        let mut needing: Vec<SubtaskId> = slow.iter().map(|&(s, _)| s).collect();
        needing.dedup();
        needing.retain(|&s| self.others(s, u32::MAX).len() == 1);
        let free = (0..self.known.len() as u32)
            .filter(|&tm| self.known[tm as usize] && self.blocked_until[tm as usize] <= now)
            .map(|tm| (tm, self.slots.saturating_sub(self.used(tm))))
            .filter(|&(_, free)| free > 0)
            .collect();
        self.owed = Some(Owed {
            at: now,
            needing,
            free,
            launched: Vec::new(),
        });
    }

    /// A check at an earlier instant that left a slow subtask without a speculative attempt
    /// while a TaskManager it could go to had a free slot.
    fn unpaid(&mut self, graph: &ExecutionGraph, now: Instant) -> Option<String> {
        let owed = self.owed.take_if(|o| o.at < now)?;
        let mut free = owed.free;
        for (_, tm) in &owed.launched {
            if let Some(n) = free.get_mut(tm) {
                *n = n.saturating_sub(1);
            }
        }
        let left = owed
            .needing
            .iter()
            .find(|s| !owed.launched.iter().any(|(t, _)| t == *s))?;
        let (&tm, &n) = free.iter().find(|&(_, &n)| n > 0)?;
        Some(format!(
            "the check at {} found {} slow with a single attempt, but placed no speculative \
             attempt although TaskManager{tm} had {n} free slot(s) and was not blocked (P2.8)",
            owed.at,
            graph.subtask_name(*left)
        ))
    }

    /// The attempts of `v`'s subtasks that are slow at `now`, with their TaskManagers; `None`
    /// when the vertex is not looked at (too few finished, all finished, or a source).
    fn slow(
        &self,
        graph: &ExecutionGraph,
        v: VertexId,
        now: Instant,
    ) -> Option<Vec<(SubtaskId, u32)>> {
        let config = self.config?;
        let vertex = &graph.vertices[v.index()];
        let p = self.parallelism[v.index()]?;
        if vertex.inputs.is_empty() || p == 0 {
            return None;
        }
        let subtasks: Vec<SubtaskId> = (vertex.first..vertex.first + p).map(SubtaskId).collect();
        let mut times: Vec<Duration> = subtasks
            .iter()
            .filter_map(|s| self.finished[s.index()])
            .collect();
        let share = times.len() as f64 / f64::from(p);
        if times.len() == subtasks.len() || share < config.baseline_ratio {
            return None;
        }
        let count = (f64::from(p) * config.baseline_ratio).round() as usize;
        times.sort();
        let baseline = match count.min(times.len()) {
            0 => Duration::ZERO,
            n => {
                let median = times[n / 2].as_nanos() as f64;
                Duration::from_nanos((median * config.baseline_multiplier) as u64)
            }
        };
        let threshold = baseline.max(config.baseline_lower_bound);
        Some(
            self.attempts
                .iter()
                .filter(|(&key, &(state, at))| {
                    // The check that launches speculative attempts judged the attempts it saw,
                    // not the ones it launched itself.
                    let launched_now =
                        at == Some(now) && self.placed.get(&key).is_some_and(|p| p.1);
                    subtasks.contains(&key.0)
                        && self.finished[key.0.index()].is_none()
                        && may_finish(state)
                        && !launched_now
                        && at.is_some_and(|at| now.saturating_duration_since(at) >= threshold)
                })
                .map(|(&key, _)| key)
                .collect(),
        )
    }

    fn check_launch(
        &mut self,
        graph: &ExecutionGraph,
        s: SubtaskId,
        tm: u32,
        full: bool,
        now: Instant,
    ) -> Option<String> {
        let name = graph.subtask_name(s);
        let Some(config) = self.config else {
            return Some(format!(
                "a speculative attempt of {name}, but `batch.speculative` is off (P2.8)"
            ));
        };
        let v = graph.subtasks[s.index()].vertex;
        let live: Vec<u32> = self
            .attempts
            .iter()
            .filter(|(&(t, _), &(state, _))| t == s && may_finish(state))
            .map(|(&(_, a), _)| a)
            .collect();
        if live.len() != 1 {
            return Some(format!(
                "a speculative attempt of {name} beside {} running attempts: it goes beside \
                 exactly one original attempt (P2.8, two at most)",
                live.len()
            ));
        }
        let Some(slow) = self.slow(graph, v, now) else {
            return Some(format!(
                "a speculative attempt of {name}, but its vertex is not looked at now: too \
                 few of its subtasks finished for the baseline (baseline_ratio {}), or it is a \
                 source (P2.8)",
                config.baseline_ratio
            ));
        };
        if !slow.iter().any(|&(t, _)| t == s) {
            return Some(format!(
                "a speculative attempt of {name}, but none of its attempts has run as long as \
                 the baseline yet (P2.8)"
            ));
        }
        // Every node slow now was blocked before the attempt was placed, and so is any node an
        // earlier check this ledger saw blocked.
        let slow_now: Vec<(SubtaskId, u32)> = (0..graph.vertices.len() as u32)
            .filter_map(|v| self.slow(graph, VertexId(v), now))
            .flatten()
            .collect();
        let slow_nodes: Vec<u32> = slow_now
            .iter()
            .filter_map(|key| self.placed.get(key).map(|p| p.0))
            .collect();
        if slow_nodes.contains(&tm) || self.blocked_until[tm as usize] > now {
            return Some(format!(
                "the speculative attempt of {name} goes to TaskManager{tm}, which is blocked as \
                 a slow node (P2.8: block_slow_node_duration)"
            ));
        }
        full.then(|| {
            format!(
                "the speculative attempt of {name} goes to TaskManager{tm}, whose {} slots all \
                 hold attempts in the JobMaster's view (P2.8: it waits for a free slot)",
                self.slots
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `src` (1) → `map` (2), speculation on with ratio 0.5, multiplier 2, lower bound 1 ms,
    /// on three TaskManagers.
    fn ledger() -> (ExecutionGraph, Ledger) {
        ledger_with(1, 2)
    }

    /// `src` (`sources`) → `map` (`maps`), both initialized.
    fn ledger_with(sources: u32, maps: u32) -> (ExecutionGraph, Ledger) {
        ledger_of(
            sources,
            maps,
            r#""baseline_ratio": 0.5, "baseline_multiplier": 2"#,
        )
    }

    /// The same with the `speculative` block's fields `speculative`, on five TaskManagers.
    fn ledger_of(sources: u32, maps: u32, speculative: &str) -> (ExecutionGraph, Ledger) {
        let text = format!(
            r#"{{"name": "t", "mode": "batch",
            "job": {{"vertices": [
                {{"id": "src", "operator": "source", "parallelism": {sources}, "records": 4}},
                {{"id": "map", "operator": "map", "parallelism": {maps}}}],
              "edges": [{{"from": "src", "to": "map", "pattern": "all_to_all"}}]}},
            "cluster": {{"task_managers": 3, "slots_per_task_manager": 2}},
            "batch": {{"speculative": {{{speculative}}}}}}}"#
        );
        let scenario = crate::scenario::parse(&text, "t").expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        let config = scenario.batch.expect("batch").speculative;
        let mut ledger = Ledger::new(&graph, 5, 2, config);
        for (vertex, parallelism) in [(0, sources), (1, maps)] {
            let event = TraceEvent::VertexInitialized {
                vertex: VertexId(vertex),
                parallelism,
                input_bytes: 0,
                adaptive: false,
            };
            ledger.observe(&graph, Instant::ZERO, &event);
        }
        (graph, ledger)
    }

    const MS: u64 = 1_000_000;
    const MAP0: SubtaskId = SubtaskId(1);
    const MAP1: SubtaskId = SubtaskId(2);

    fn state(
        l: &mut Ledger,
        g: &ExecutionGraph,
        ms: u64,
        s: SubtaskId,
        a: u32,
        to: ExecutionState,
    ) -> Option<String> {
        let event = TraceEvent::ExecutionState {
            subtask: s,
            attempt: a,
            from: ExecutionState::Created,
            to,
        };
        l.observe(g, Instant::from_nanos(ms * MS), &event)
    }

    fn deploy(
        l: &mut Ledger,
        g: &ExecutionGraph,
        ms: u64,
        s: SubtaskId,
        a: u32,
        tm: u32,
        speculative: bool,
    ) -> Option<String> {
        let event = TraceEvent::Deployed {
            subtask: s,
            attempt: a,
            task_manager: tm,
            speculative,
        };
        let found = l.observe(g, Instant::from_nanos(ms * MS), &event);
        found.or_else(|| state(l, g, ms, s, a, ExecutionState::Deploying))
    }

    /// map[0] ran 2 ms; map[1], deployed at 0 on TaskManager1, is slow from 4 ms on
    /// (twice the median).
    fn one_finished() -> (ExecutionGraph, Ledger) {
        let (g, mut l) = ledger();
        assert_eq!(deploy(&mut l, &g, 0, MAP0, 0, 0, false), None);
        assert_eq!(deploy(&mut l, &g, 0, MAP1, 0, 1, false), None);
        assert_eq!(
            state(&mut l, &g, 2, MAP0, 0, ExecutionState::Finished),
            None
        );
        (g, l)
    }

    #[test]
    fn a_speculative_attempt_waits_for_the_baseline_and_avoids_slow_nodes() {
        let (g, mut l) = one_finished();
        let early = deploy(&mut l, &g, 3, MAP1, 1, 2, true).expect("too early");
        assert!(
            early.contains("none of its attempts has run as long"),
            "{early}"
        );
        let (g, mut l) = one_finished();
        let slow_node = deploy(&mut l, &g, 4, MAP1, 1, 1, true).expect("on the slow node");
        assert!(slow_node.contains("blocked as a slow node"), "{slow_node}");
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        let third = deploy(&mut l, &g, 5, MAP1, 2, 0, true).expect("a third attempt");
        assert!(third.contains("beside 2 running attempts"), "{third}");
    }

    #[test]
    fn before_the_ratio_no_vertex_is_looked_at() {
        let (g, mut l) = ledger();
        assert_eq!(deploy(&mut l, &g, 0, MAP0, 0, 0, false), None);
        let found = deploy(&mut l, &g, 10, MAP0, 1, 2, true).expect("no baseline yet");
        assert!(found.contains("not looked at"), "{found}");
    }

    #[test]
    fn the_first_finish_wins_and_a_later_attempt_is_no_loser() {
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 1, ExecutionState::Finished),
            None
        );
        let late = state(&mut l, &g, 7, MAP0, 5, ExecutionState::Deploying).expect("a loser");
        assert!(late.contains("attempt 0 is still DEPLOYING"), "{late}");
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 1, ExecutionState::Finished),
            None
        );
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 0, ExecutionState::Canceled),
            None
        );
        assert_eq!(
            deploy(&mut l, &g, 6, MAP1, 2, 0, false),
            None,
            "a new attempt after"
        );
        assert_eq!(l.finish(&g), None);
    }

    #[test]
    fn a_reset_takes_a_finish_out_of_the_baseline() {
        let (g, mut l) = one_finished();
        let reset = TraceEvent::SubtaskReset {
            subtask: MAP0,
            reason: crate::trace::RerunReason::Failover,
        };
        assert_eq!(l.observe(&g, Instant::from_nanos(3 * MS), &reset), None);
        let found = deploy(&mut l, &g, 4, MAP1, 1, 2, true).expect("no finished sibling left");
        assert!(found.contains("not looked at"), "{found}");
    }

    #[test]
    fn only_the_subtasks_own_attempts_lose_to_its_finish() {
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        // map[0]'s new attempt 2 runs on while map[1]'s speculative attempt wins; map[1]'s
        // own new attempt 2, deployed after the finish, is no loser either.
        assert_eq!(deploy(&mut l, &g, 5, MAP0, 2, 0, false), None);
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 1, ExecutionState::Finished),
            None
        );
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 0, ExecutionState::Canceled),
            None
        );
        assert_eq!(deploy(&mut l, &g, 6, MAP1, 2, 1, false), None);
        assert_eq!(state(&mut l, &g, 7, MAP0, 2, ExecutionState::Running), None);
        assert_eq!(l.finish(&g), None);
    }

    #[test]
    fn a_source_is_never_speculated_and_the_share_is_a_fraction() {
        // Two sources, one finished after 2 ms: a source is not looked at however slow.
        let (g, mut l) = ledger_with(2, 2);
        let (src0, src1) = (SubtaskId(0), SubtaskId(1));
        assert_eq!(deploy(&mut l, &g, 0, src0, 0, 0, false), None);
        assert_eq!(deploy(&mut l, &g, 0, src1, 0, 1, false), None);
        assert_eq!(
            state(&mut l, &g, 2, src0, 0, ExecutionState::Finished),
            None
        );
        let found = deploy(&mut l, &g, 9, src1, 1, 2, true).expect("a source");
        assert!(found.contains("not looked at"), "{found}");
        // One of three maps finished is a third, below the ratio of a half.
        let (g, mut l) = ledger_with(1, 3);
        let maps = [SubtaskId(1), SubtaskId(2), SubtaskId(3)];
        for (tm, &m) in maps.iter().enumerate() {
            assert_eq!(deploy(&mut l, &g, 0, m, 0, tm as u32, false), None);
        }
        assert_eq!(
            state(&mut l, &g, 2, maps[0], 0, ExecutionState::Finished),
            None
        );
        let found = deploy(&mut l, &g, 9, maps[1], 1, 0, true).expect("below the ratio");
        assert!(found.contains("not looked at"), "{found}");
    }

    #[test]
    fn a_finish_in_the_last_instant_is_judged_at_the_end() {
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 1, ExecutionState::Finished),
            None
        );
        let found = l.finish(&g).expect("the loser still runs");
        assert!(found.contains("attempt 0 is still DEPLOYING"), "{found}");
    }

    fn reset(l: &mut Ledger, g: &ExecutionGraph, ms: u64, s: SubtaskId) -> Option<String> {
        let event = TraceEvent::SubtaskReset {
            subtask: s,
            reason: RerunReason::Failover,
        };
        l.observe(g, Instant::from_nanos(ms * MS), &event)
    }

    #[test]
    fn a_failed_attempt_hands_over_to_the_other_unless_a_partition_was_missing() {
        // map[1]'s original (attempt 0) fails at 6 ms while its speculative attempt 1 runs:
        // failing the subtask over (cancelling attempt 1) is the violation.
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        assert_eq!(
            state(&mut l, &g, 6, MAP1, 1, ExecutionState::Canceled),
            None
        );
        let found = reset(&mut l, &g, 6, MAP1).expect("no hand-over");
        assert!(
            found.contains("attempt 0 failed, although its attempt 1 could still finish"),
            "{found}"
        );
        // The same failover one instant later is another failure's, not this one's.
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        assert_eq!(state(&mut l, &g, 7, MAP1, 1, ExecutionState::Failed), None);
        assert_eq!(reset(&mut l, &g, 7, MAP1), None);
        // Both attempts failed in the instant (their TaskManager lost): nothing to hand to.
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 1, ExecutionState::Failed), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        assert_eq!(reset(&mut l, &g, 6, MAP1), None);
        // The original found an input partition gone after its deployment: a failover as usual.
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        let missing = TraceEvent::PartitionNotFound {
            subtask: MAP1,
            producer: SubtaskId(0),
        };
        assert_eq!(l.observe(&g, Instant::from_nanos(5 * MS), &missing), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        assert_eq!(reset(&mut l, &g, 6, MAP1), None);
        // One found before the failed attempt's deployment excuses nothing.
        let (g, mut l) = ledger();
        assert_eq!(l.observe(&g, Instant::ZERO, &missing), None);
        assert_eq!(deploy(&mut l, &g, 1, MAP0, 0, 0, false), None);
        assert_eq!(
            state(&mut l, &g, 3, MAP0, 0, ExecutionState::Finished),
            None
        );
        assert_eq!(deploy(&mut l, &g, 1, MAP1, 0, 1, false), None);
        assert_eq!(deploy(&mut l, &g, 5, MAP1, 1, 2, true), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        assert!(reset(&mut l, &g, 6, MAP1).is_some());
        // A new JobMaster forgets the old one's failures.
        let (g, mut l) = one_finished();
        assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, 2, true), None);
        assert_eq!(state(&mut l, &g, 6, MAP1, 0, ExecutionState::Failed), None);
        let elected = TraceEvent::JobMasterElected { incarnation: 1 };
        assert_eq!(l.observe(&g, Instant::from_nanos(6 * MS), &elected), None);
        assert_eq!(reset(&mut l, &g, 6, MAP1), None);
    }

    fn checked(l: &mut Ledger, g: &ExecutionGraph, ms: u64) -> Option<String> {
        l.observe(
            g,
            Instant::from_nanos(ms * MS),
            &TraceEvent::SpeculationChecked,
        )
    }

    #[test]
    fn a_check_places_a_speculative_attempt_while_a_taskmanager_has_room() {
        // At 4 ms map[1] is slow with a single attempt; TaskManager0, where map[0] ran, has both
        // slots free.
        let (g, mut l) = one_finished();
        assert_eq!(checked(&mut l, &g, 4), None);
        let late = checked(&mut l, &g, 5).expect("nothing placed");
        assert!(
            late.contains("found map[1] slow with a single attempt, but placed no speculative")
                && late.contains("TaskManager0 had 2 free slot(s)"),
            "{late}"
        );
        // Placed in that instant: paid, whether on a TaskManager counted as room or not.
        for tm in [0, 2] {
            let (g, mut l) = one_finished();
            assert_eq!(checked(&mut l, &g, 4), None);
            assert_eq!(deploy(&mut l, &g, 4, MAP1, 1, tm, true), None);
            assert_eq!(checked(&mut l, &g, 5), None);
            assert_eq!(l.finish(&g), None);
        }
        // A check in the run's last instant is judged at its end.
        let (g, mut l) = one_finished();
        assert_eq!(checked(&mut l, &g, 4), None);
        assert!(l.finish(&g).is_some());
        // Before the baseline nothing is owed.
        let (g, mut l) = one_finished();
        assert_eq!(checked(&mut l, &g, 3), None);
        assert_eq!(l.finish(&g), None);
        // No room on a TaskManager this JobMaster is known to use: TaskManager0 timed out.
        let (g, mut l) = one_finished();
        let lost = TraceEvent::TaskManagerTimedOut { task_manager: 0 };
        assert_eq!(l.observe(&g, Instant::from_nanos(3 * MS), &lost), None);
        assert_eq!(checked(&mut l, &g, 4), None);
        assert_eq!(l.finish(&g), None);
    }

    #[test]
    fn a_speculative_attempt_needs_a_free_slot_and_blocks_come_from_every_check() {
        // map[0] and map[1] ran 2 ms on TaskManager2 (baseline 4 ms); map[2] runs on
        // TaskManager0 from 0 and is slow at 4 ms; src[0] and map[3] fill TaskManager3 from 3 ms.
        let [src, map0, map1, map2, map3] = [0, 1, 2, 3, 4].map(SubtaskId);
        let checked_at_4 = || {
            let (g, mut l) = ledger_with(1, 4);
            for (s, tm, at) in [
                (map0, 2, 0),
                (map1, 2, 0),
                (map2, 0, 0),
                (src, 3, 3),
                (map3, 3, 3),
            ] {
                assert_eq!(deploy(&mut l, &g, at, s, 0, tm, false), None);
            }
            for s in [map0, map1] {
                assert_eq!(state(&mut l, &g, 2, s, 0, ExecutionState::Finished), None);
            }
            assert_eq!(checked(&mut l, &g, 4), None);
            (g, l)
        };
        let (g, mut l) = checked_at_4();
        let full = deploy(&mut l, &g, 4, map2, 1, 3, true).expect("a full TaskManager");
        assert!(full.contains("whose 2 slots all hold attempts"), "{full}");
        // Nor on TaskManager0, the slow node; TaskManager2 has room.
        let (g, mut l) = checked_at_4();
        let blocked = deploy(&mut l, &g, 4, map2, 1, 0, true).expect("a blocked node");
        assert!(blocked.contains("blocked as a slow node"), "{blocked}");
        let (g, mut l) = checked_at_4();
        assert_eq!(deploy(&mut l, &g, 4, map2, 1, 2, true), None);
        assert_eq!(l.finish(&g), None);
    }

    #[test]
    fn the_baseline_is_the_median_of_the_first_round_p_times_ratio_finishes() {
        // Five maps, ratio 0.5: the first three finishes (1, 2, 3 ms) set the median, 2 ms,
        // and the baseline, 4 ms; the fourth (4 ms) does not count.
        let (g, mut l) = ledger_with(1, 5);
        let map = |i: u32| SubtaskId(1 + i);
        for i in 0..5 {
            assert_eq!(deploy(&mut l, &g, 0, map(i), 0, i, false), None);
        }
        for i in 0..4 {
            let at = u64::from(i) + 1;
            assert_eq!(
                state(&mut l, &g, at, map(i), 0, ExecutionState::Finished),
                None
            );
        }
        assert_eq!(
            deploy(&mut l, &g, 5, map(4), 1, 0, true),
            None,
            "5 ms is past 4 ms"
        );
    }

    #[test]
    fn with_a_zero_threshold_only_the_attempts_launched_by_the_check_itself_are_not_slow() {
        let zero = r#""baseline_ratio": 0, "baseline_lower_bound": "0ms""#;
        // Both maps run from 0: at 1 ms both are slow. map[0]'s speculative attempt on
        // TaskManager2 is not slow in the same instant, so map[1]'s may go there too.
        let (g, mut l) = ledger_of(1, 2, zero);
        assert_eq!(deploy(&mut l, &g, 0, MAP0, 0, 0, false), None);
        assert_eq!(deploy(&mut l, &g, 0, MAP1, 0, 1, false), None);
        assert_eq!(deploy(&mut l, &g, 1, MAP0, 1, 2, true), None);
        assert_eq!(deploy(&mut l, &g, 1, MAP1, 1, 2, true), None);
        // An original deployed in that instant is slow, though: its TaskManager is a slow node.
        let (g, mut l) = ledger_of(1, 2, zero);
        assert_eq!(deploy(&mut l, &g, 0, MAP0, 0, 0, false), None);
        assert_eq!(deploy(&mut l, &g, 1, MAP1, 0, 1, false), None);
        let found = deploy(&mut l, &g, 1, MAP0, 1, 1, true).expect("onto a slow node");
        assert!(found.contains("blocked as a slow node"), "{found}");
    }

    #[test]
    fn a_blocked_node_is_free_again_exactly_when_its_block_ends() {
        let spec =
            r#""baseline_ratio": 0.5, "baseline_multiplier": 2, "block_slow_node_duration": "5ms""#;
        let run = |at: u64| {
            let (g, mut l) = ledger_of(1, 3, spec);
            let map = |i: u32| SubtaskId(1 + i);
            for i in 0..3 {
                assert_eq!(deploy(&mut l, &g, 0, map(i), 0, i, false), None);
            }
            for i in 0..2 {
                assert_eq!(
                    state(&mut l, &g, 2, map(i), 0, ExecutionState::Finished),
                    None
                );
            }
            // map[2] is slow on TaskManager2 at 4 ms, which the check blocks until 9 ms.
            assert_eq!(checked(&mut l, &g, 4), None);
            assert_eq!(deploy(&mut l, &g, 4, map(2), 1, 0, true), None);
            assert_eq!(
                state(&mut l, &g, 5, map(2), 0, ExecutionState::Failed),
                None
            );
            // The speculative attempt is slow in turn by 8 ms; a third goes to TaskManager2.
            assert_eq!(checked(&mut l, &g, at), None);
            deploy(&mut l, &g, at, map(2), 2, 2, true)
        };
        assert!(run(8)
            .expect("still blocked")
            .contains("blocked as a slow node"));
        assert_eq!(run(9), None, "the block ended at 9 ms");
    }
}
