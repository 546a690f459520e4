//! `restore-shape` (F1.6): a job submitted with a checkpoint (`restore_from`) starts from it
//! exactly when Flink's finished-state checks accept the checkpoint's shape in this job graph;
//! otherwise it fails before any task is deployed.
//!
//! The verdict is computed here from the scenario alone, with the oracle's own reading of the
//! rules (`docs/rules.md` F1.6), never with the JobMaster's `restorable` module: each operator
//! is all running, partially finished or fully finished by its uid's entry (running without
//! one); a vertex whose operators disagree is refused; a fully finished vertex needs fully
//! finished producers; a partially finished one needs fully finished producers over all-to-all
//! edges and producers not all running over pointwise ones.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::scenario::{Pattern, RestoreFrom};
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use sim::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    Running,
    Partly,
    Fully,
}

pub struct RestoreShape {
    checkpoint: u64,
    /// `Some(why)` when the job must not start.
    refused: Option<String>,
    /// The subtasks the restore must deploy finished, when it is accepted.
    finished: Vec<SubtaskId>,
    rejected: bool,
    started: bool,
}

impl RestoreShape {
    pub fn new(graph: &ExecutionGraph, restore: &RestoreFrom) -> RestoreShape {
        let shape_of = |uid: &str| match restore.operators.get(uid) {
            None => Shape::Running,
            Some(op) => {
                let n = op.finished.iter().filter(|&&f| f).count();
                if n == 0 {
                    Shape::Running
                } else if n == op.finished.len() {
                    Shape::Fully
                } else {
                    Shape::Partly
                }
            }
        };
        let mut shapes = Vec::with_capacity(graph.vertices.len());
        let mut refused = None;
        for vertex in &graph.vertices {
            let members = vertex.chain.members();
            let first = shape_of(&members[0].uid);
            if members.iter().any(|m| shape_of(&m.uid) != first) {
                refused.get_or_insert(format!(
                    "the operators chained in {} are not all in one finished state",
                    vertex.name
                ));
            }
            shapes.push(first);
        }
        for edge in &graph.edges {
            let (up, down) = (shapes[edge.from.index()], shapes[edge.to.index()]);
            let bad = match down {
                Shape::Running => false,
                Shape::Fully => up != Shape::Fully,
                Shape::Partly => match edge.pattern {
                    Pattern::AllToAll => up != Shape::Fully,
                    Pattern::Forward => up == Shape::Running,
                },
            };
            if bad {
                refused.get_or_insert(format!(
                    "{} is {:?} behind {}, which is {:?}",
                    graph.vertices[edge.to.index()].name,
                    down,
                    graph.vertices[edge.from.index()].name,
                    up
                ));
            }
        }
        let mut finished = Vec::new();
        for (v, vertex) in graph.vertices.iter().enumerate() {
            for s in graph.subtasks_of(VertexId(v as u32)) {
                let i = graph.subtasks[s.index()].index as usize;
                let done = match shapes[v] {
                    Shape::Running => false,
                    Shape::Fully => true,
                    Shape::Partly => vertex.chain.members().iter().all(|m| {
                        restore
                            .operators
                            .get(&m.uid)
                            .is_some_and(|op| op.finished.get(i).copied().unwrap_or(false))
                    }),
                };
                if done {
                    finished.push(s);
                }
            }
        }
        RestoreShape {
            checkpoint: restore.checkpoint,
            refused,
            finished,
            rejected: false,
            started: false,
        }
    }

    /// The restored checkpoint and the subtasks it must deploy finished, when it is accepted.
    pub fn accepted(&self) -> Option<(u64, &[SubtaskId])> {
        self.refused
            .is_none()
            .then_some((self.checkpoint, &self.finished[..]))
    }

    /// The job must fail at its start: a FAILED end is what F1.6 asks for.
    pub fn refused(&self) -> bool {
        self.refused.is_some()
    }

    pub fn observe(&mut self, index: u64, now: Instant, event: &TraceEvent) -> Option<Violation> {
        let violation = |message: String| Violation {
            invariant: Invariant::RestoreShape,
            time: now,
            actors: vec!["JobMaster".to_owned()],
            event_index: index,
            message,
        };
        match *event {
            TraceEvent::RestoreRejected { .. } if !self.started => {
                self.rejected = true;
                self.refused.is_none().then(|| {
                    violation(format!(
                        "the job refused to start from checkpoint {}, whose shape Flink restores (F1.6)",
                        self.checkpoint
                    ))
                })
            }
            TraceEvent::JobStatus {
                to: JobStatus::Running,
                ..
            } if !self.started => {
                self.started = true;
                self.refused.as_ref().map(|why| {
                    violation(format!(
                        "the job started from checkpoint {}, which Flink refuses: {why} (F1.6)",
                        self.checkpoint
                    ))
                })
            }
            _ => None,
        }
    }

    /// A refused restore must have been refused by the end.
    pub fn finish(&self, now: Instant, last_event: u64) -> Option<Violation> {
        let why = self.refused.as_ref()?;
        (!self.rejected && !self.started).then(|| Violation {
            invariant: Invariant::RestoreShape,
            time: now,
            actors: vec!["JobMaster".to_owned()],
            event_index: last_event,
            message: format!(
                "the job was never refused, although its checkpoint {} must be: {why} (F1.6)",
                self.checkpoint
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    /// `a` (2 subtasks) → `b` (a chain of two operators, uids `b1` and `b2`, 2 subtasks).
    fn graph(pattern: &str) -> ExecutionGraph {
        let json = format!(
            r#"{{"name": "t", "mode": "streaming", "job": {{
                "vertices": [
                    {{"id": "a", "operator": "source", "parallelism": 2}},
                    {{"id": "b", "chain": [{{"operator": "map", "uid": "b1"}},
                                           {{"operator": "sink", "uid": "b2"}}], "parallelism": 2}}],
                "edges": [{{"from": "a", "to": "b", "pattern": "{pattern}"}}]}}}}"#
        );
        ExecutionGraph::build(&scenario::parse(&json, "t").expect("valid").job)
    }

    fn restore(entries: &[(&str, Option<[bool; 2]>)]) -> RestoreFrom {
        let operators: Vec<String> = entries
            .iter()
            .filter_map(|(uid, f)| {
                f.map(|[x, y]| format!(r#""{uid}": {{"parallelism": 2, "finished": [{x}, {y}]}}"#))
            })
            .collect();
        let json = format!(
            r#"{{"name": "t", "mode": "streaming", "job": {{
                "vertices": [
                    {{"id": "a", "operator": "source", "parallelism": 2}},
                    {{"id": "b", "chain": [{{"operator": "map", "uid": "b1"}},
                                           {{"operator": "sink", "uid": "b2"}}], "parallelism": 2}}],
                "edges": [{{"from": "a", "to": "b", "pattern": "forward"}}]}},
                "restore_from": {{"checkpoint": 3, "operators": {{{}}}}}}}"#,
            operators.join(", ")
        );
        scenario::parse(&json, "t")
            .expect("valid")
            .restore_from
            .expect("restore_from")
    }

    /// Every combination of finished flags for the three operators, over both edge patterns:
    /// the oracle's own reading of F1.6 and the JobMaster's (`restorable`) agree on whether
    /// the job may start and on which subtasks start finished, and both refuse a mixed chain.
    #[test]
    fn the_oracle_and_the_jobmaster_agree_on_every_shape() {
        let flags = [
            None,
            Some([false, false]),
            Some([true, false]),
            Some([false, true]),
            Some([true, true]),
        ];
        let mut refused = 0;
        for pattern in ["forward", "all_to_all"] {
            let g = graph(pattern);
            for a in flags {
                for b1 in flags {
                    for b2 in flags {
                        let r = restore(&[("a", a), ("b1", b1), ("b2", b2)]);
                        let oracle = RestoreShape::new(&g, &r);
                        let model = crate::jobmaster::restorable::check_restore_from(&g, &r, false);
                        let case = format!("{pattern} a {a:?} b1 {b1:?} b2 {b2:?}");
                        match (&model, oracle.accepted()) {
                            (Ok(finished), Some((3, expected))) => {
                                let got: Vec<SubtaskId> = (0..4u32)
                                    .map(SubtaskId)
                                    .filter(|s| finished[s.index()])
                                    .collect();
                                assert_eq!(got, expected, "{case}");
                            }
                            (Err(_), None) => refused += 1,
                            (model, oracle) => {
                                panic!("{case}: model {model:?}, oracle {oracle:?}")
                            }
                        }
                        let mixed = b1.map(|f| f.iter().filter(|&&x| x).count())
                            != b2.map(|f| f.iter().filter(|&&x| x).count())
                            && [b1, b2]
                                .iter()
                                .any(|f| f.is_some_and(|f| f.contains(&true)));
                        if let (true, Err(why)) = (mixed, &model) {
                            assert!(
                                why.contains("mixed operator finished state")
                                    || why.contains("Illegal JobGraph modification"),
                                "{case}: {why}"
                            );
                        }
                    }
                }
            }
        }
        assert!(refused > 0, "some shapes are refused");
    }

    /// A refused restore must be refused before anything runs; an accepted one must start.
    #[test]
    fn the_verdict_is_held_against_the_trace() {
        let g = graph("forward");
        let refused = restore(&[("b1", Some([true, true]))]);
        let mut shape = RestoreShape::new(&g, &refused);
        let running = TraceEvent::JobStatus {
            from: JobStatus::Created,
            to: JobStatus::Running,
        };
        let v = shape
            .observe(1, Instant::ZERO, &running)
            .expect("started although refused");
        assert_eq!(v.invariant, Invariant::RestoreShape);
        let mut shape = RestoreShape::new(&g, &refused);
        assert!(shape.finish(Instant::ZERO, 0).is_some(), "never refused");
        assert!(shape
            .observe(
                0,
                Instant::ZERO,
                &TraceEvent::RestoreRejected { checkpoint: 3 }
            )
            .is_none());
        assert!(shape.finish(Instant::ZERO, 0).is_none());
        let accepted = restore(&[("a", Some([true, false]))]);
        let mut shape = RestoreShape::new(&g, &accepted);
        assert!(shape
            .observe(
                0,
                Instant::ZERO,
                &TraceEvent::RestoreRejected { checkpoint: 3 }
            )
            .is_some());
    }

    /// Only the job's start is judged: a later failover's restore that refuses one of the
    /// job's own checkpoints (`restore_rejected`) is not about the submitted one, and a job
    /// that started although refused is reported once, not on every later RUNNING.
    #[test]
    fn only_the_start_is_judged() {
        let g = graph("forward");
        let running = TraceEvent::JobStatus {
            from: JobStatus::Restarting,
            to: JobStatus::Running,
        };
        let accepted = restore(&[("a", Some([true, false]))]);
        let mut shape = RestoreShape::new(&g, &accepted);
        assert!(shape.observe(0, Instant::ZERO, &running).is_none());
        let later = TraceEvent::RestoreRejected { checkpoint: 5 };
        assert!(shape.observe(1, Instant::ZERO, &later).is_none());
        let refused = restore(&[("b1", Some([true, true]))]);
        let mut shape = RestoreShape::new(&g, &refused);
        assert!(shape.observe(0, Instant::ZERO, &running).is_some());
        assert!(shape.observe(1, Instant::ZERO, &running).is_none());
    }
}
