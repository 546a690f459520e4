//! The oracles: omniscient, read-only checkers of a run (`protocols.md` P4).
//!
//! They watch every trace event as it is recorded ([`Oracles::observe`], incremental and cheap)
//! and judge what can only be judged at the end in [`Oracles::finish`]. They never change the
//! run: the world hands them events, never the other way round. A violation names its
//! invariant, the time, the actors and the index of the trace event where it first failed.

pub mod invariant;
mod reference;

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::jobmaster::transitions;
use crate::record::{Element, Record};
use crate::scenario::Operator;
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use invariant::Invariant;
use sim::Instant;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: Invariant,
    pub time: Instant,
    /// The actors involved, written as in traces (`map[0]`, `JobMaster`).
    pub actors: Vec<String>,
    /// Index of the trace event where the violation was first visible.
    pub event_index: u64,
    pub message: String,
}

/// A record that reached a sink: which sink vertex, the record, and the trace event.
#[derive(Clone, Copy, Debug)]
struct Sunk {
    vertex: u32,
    record: Record,
    event_index: u64,
}

pub struct Oracles {
    /// `true` for subtasks of sink vertices.
    is_sink: Vec<bool>,
    is_source: Vec<bool>,
    /// Records each source subtask emitted (sources emit sequence numbers in order).
    emitted: Vec<u64>,
    sunk: Vec<Sunk>,
    violations: Vec<Violation>,
}

impl Oracles {
    pub fn new(graph: &ExecutionGraph) -> Oracles {
        let kind = |s: &crate::graph::Subtask| &graph.vertices[s.vertex.index()].operator;
        Oracles {
            is_sink: graph
                .subtasks
                .iter()
                .map(|s| matches!(kind(s), Operator::Sink { .. }))
                .collect(),
            is_source: graph
                .subtasks
                .iter()
                .map(|s| matches!(kind(s), Operator::Source { .. }))
                .collect(),
            emitted: vec![0; graph.subtasks.len()],
            sunk: Vec::new(),
            violations: Vec::new(),
        }
    }

    /// Sees one trace event as it is recorded.
    #[inline]
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) {
        match *event {
            TraceEvent::Push {
                channel,
                element: Element::Record(record),
            } => {
                let from = graph.channels[channel.index()].from;
                if self.is_source[from.index()] && record.origin == from {
                    let emitted = &mut self.emitted[from.index()];
                    *emitted = (*emitted).max(record.seq + 1);
                }
            }
            TraceEvent::Take {
                subtask,
                element: Element::Record(record),
                ..
            } if self.is_sink[subtask.index()] => self.sunk.push(Sunk {
                vertex: graph.subtasks[subtask.index()].vertex.0,
                record,
                event_index: index,
            }),
            TraceEvent::JobStatus { from, to } if !transitions::job(from, to) => {
                self.violate(Violation {
                    invariant: Invariant::LegalTransition,
                    time: now,
                    actors: vec!["JobMaster".to_owned()],
                    event_index: index,
                    message: format!("job status {from} → {to} is not in the job transition table"),
                })
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            }
            | TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } if !transitions::execution(from, to) => {
                let whose = match event {
                    TraceEvent::ExecutionState { .. } => "the JobMaster's view of",
                    _ => "the task",
                };
                self.violate(Violation {
                    invariant: Invariant::LegalTransition,
                    time: now,
                    actors: vec![graph.subtask_name(subtask).to_string()],
                    event_index: index,
                    message: format!(
                        "{whose} {} attempt {attempt} went {from} → {to}, which is not in the execution transition table",
                        graph.subtask_name(subtask)
                    ),
                })
            }
            _ => {}
        }
    }

    fn violate(&mut self, violation: Violation) {
        self.violations.push(violation);
    }

    /// Records sunk per sink vertex, in vertex order.
    pub fn sink_counts(&self, graph: &ExecutionGraph) -> Vec<(String, u64)> {
        let mut counts = vec![0u64; graph.vertices.len()];
        for s in &self.sunk {
            counts[s.vertex as usize] += 1;
        }
        graph
            .vertices
            .iter()
            .zip(counts)
            .filter(|(v, _)| matches!(v.operator, Operator::Sink { .. }))
            .map(|(v, n)| (v.name.clone(), n))
            .collect()
    }

    /// End-of-run checks; returns every violation, incremental ones first.
    ///
    /// `exactly-once-output`: the sinks' records are compared with a reference evaluation of the
    /// job over the records the sources actually emitted. No record may be sunk twice or be
    /// unknown to the reference; when the job FINISHED, none may be missing either.
    pub fn finish(
        mut self,
        graph: &ExecutionGraph,
        status: JobStatus,
        now: Instant,
        last_event: u64,
    ) -> Vec<Violation> {
        let expected = reference::expected_sink_output(graph, &self.emitted);
        let mut sunk = std::mem::take(&mut self.sunk);
        sunk.sort_by_key(|s| (s.vertex, s.record, s.event_index));
        let name = |v: u32| graph.vertices[v as usize].name.clone();
        let describe = |r: &Record| describe_record(graph, r);

        // Walk both sorted lists, matching copies one for one.
        let (mut i, mut j) = (0, 0);
        let mut problems: Vec<Violation> = Vec::new();
        while i < sunk.len() || j < expected.len() {
            let got = sunk.get(i).map(|s| (s.vertex, s.record));
            let want = expected.get(j).copied();
            if got.is_some() && got == want {
                i += 1;
                j += 1;
            } else if let Some((vertex, record)) = got.filter(|g| want.is_none_or(|w| *g < w)) {
                let duplicate =
                    i > 0 && (sunk[i - 1].vertex, sunk[i - 1].record) == (vertex, record);
                let what = if duplicate {
                    "more than once"
                } else {
                    "although a failure-free run does not produce it"
                };
                problems.push(Violation {
                    invariant: Invariant::ExactlyOnceOutput,
                    time: now,
                    actors: vec![name(vertex)],
                    event_index: sunk[i].event_index,
                    message: format!(
                        "sink {} received {} {what}",
                        name(vertex),
                        describe(&record)
                    ),
                });
                i += 1;
            } else {
                let (vertex, record) = want.expect("one side is left");
                if status == JobStatus::Finished {
                    problems.push(Violation {
                        invariant: Invariant::ExactlyOnceOutput,
                        time: now,
                        actors: vec![name(vertex)],
                        event_index: last_event,
                        message: format!(
                            "sink {} never received {} although the job finished",
                            name(vertex),
                            describe(&record)
                        ),
                    });
                }
                j += 1;
            }
        }
        problems.sort_by_key(|v| v.event_index);
        // One violation per sink vertex and kind is enough to act on; say how many in all.
        let total = problems.len();
        if let Some(first) = problems.into_iter().next() {
            let mut first = first;
            if total > 1 {
                first
                    .message
                    .push_str(&format!(" ({} output problems in all)", total));
            }
            self.violations.push(first);
        }
        self.violations.sort_by_key(|v| v.event_index);
        self.violations
    }
}

/// `src[0]#17 (key 3, value 18)`: which record, the way a person can find it in a trace.
pub fn describe_record(graph: &ExecutionGraph, record: &Record) -> String {
    format!(
        "record {}#{} (key {}, value {})",
        graph.subtask_name(record.origin),
        record.seq,
        record.key,
        record.value
    )
}

/// A subtask's display name for messages.
pub fn subtask(graph: &ExecutionGraph, id: SubtaskId) -> String {
    graph.subtask_name(id).to_string()
}
