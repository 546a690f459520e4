//! `cancel-markers` (F1.10): what a task does with a cancellation marker, from the oracle's
//! own ledger of what each task took, pushed and snapshotted.
//!
//! A task takes a marker for checkpoint `n` while `n` is still open there when `n` is at
//! least the newest checkpoint the task has heard of (by a barrier, a marker or a trigger) and
//! the task has put nothing for `n` or a later checkpoint on its outputs yet. Then:
//! - it must never snapshot `n` (the marker aborts `n` there, it is no barrier);
//! - it must pass a marker for `n` on to every output channel, or its consumers wait in an
//!   alignment that nobody completes (unless the attempt ends first).
//!
//! Only with `checkpointing.cancel_markers` on.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Element;
use crate::status::ExecutionState;
use crate::trace::TraceEvent;
use sim::Instant;

/// A marker the task must pass on.
struct Owed {
    subtask: SubtaskId,
    attempt: u32,
    checkpoint: u64,
    /// Output channels that have not carried it yet.
    missing: usize,
    index: u64,
    at: Instant,
}

#[derive(Clone, Copy, Default)]
struct Ledger {
    attempt: u32,
    /// The newest checkpoint the task heard of.
    seen: u64,
    /// The newest checkpoint it put a barrier or marker for on an output.
    pushed: u64,
    /// A checkpoint cancelled here by a marker, which it must not snapshot.
    cancelled: Option<u64>,
}

pub struct CancelMarkers {
    tasks: Vec<Ledger>,
    outputs: Vec<usize>,
    owed: Vec<Owed>,
}

impl CancelMarkers {
    pub fn new(graph: &ExecutionGraph) -> CancelMarkers {
        CancelMarkers {
            tasks: vec![Ledger::default(); graph.subtasks.len()],
            outputs: graph
                .subtasks
                .iter()
                .map(|s| s.outputs.iter().map(|g| g.channels.len()).sum())
                .collect(),
            owed: Vec::new(),
        }
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        match *event {
            TraceEvent::TaskState {
                subtask, attempt, ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                if t.attempt != attempt {
                    *t = Ledger {
                        attempt,
                        ..Ledger::default()
                    };
                }
                // An attempt that failed or was cancelled owes nothing any more; one that
                // finished must have passed its markers on before its EndOfPartition.
                if event_is_lost(event) {
                    self.owed
                        .retain(|o| o.subtask != subtask || o.attempt != attempt);
                }
            }
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                t.seen = t.seen.max(checkpoint);
            }
            TraceEvent::Take {
                subtask,
                element: Element::Barrier(n) | Element::PriorityBarrier(n),
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                t.seen = t.seen.max(n);
            }
            TraceEvent::Take {
                subtask,
                element: Element::CancelMarker(n),
                ..
            } => {
                let t = &mut self.tasks[subtask.index()];
                let open = n >= t.seen && n > t.pushed;
                t.seen = t.seen.max(n);
                if open {
                    t.cancelled = Some(n);
                    let missing = self.outputs[subtask.index()];
                    if missing > 0 {
                        self.owed.push(Owed {
                            subtask,
                            attempt: t.attempt,
                            checkpoint: n,
                            missing,
                            index,
                            at: now,
                        });
                    }
                }
            }
            TraceEvent::Push { channel, element } => {
                let from = graph.channels[channel.index()].from;
                let n = match element {
                    Element::Barrier(n)
                    | Element::PriorityBarrier(n)
                    | Element::CancelMarker(n) => n,
                    _ => return None,
                };
                let t = &mut self.tasks[from.index()];
                t.pushed = t.pushed.max(n);
                if let Element::CancelMarker(n) = element {
                    if let Some(i) = self
                        .owed
                        .iter()
                        .position(|o| o.subtask == from && o.checkpoint == n)
                    {
                        self.owed[i].missing -= 1;
                        if self.owed[i].missing == 0 {
                            self.owed.swap_remove(i);
                        }
                    }
                }
            }
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                ..
            } => {
                let t = &self.tasks[subtask.index()];
                if t.attempt == attempt && t.cancelled == Some(checkpoint) {
                    let name = graph.subtask_name(subtask).to_string();
                    return Some(Violation {
                        invariant: Invariant::CancelMarkers,
                        time: now,
                        actors: vec![name.clone()],
                        event_index: index,
                        message: format!(
                            "{name} took a cancellation marker for checkpoint {checkpoint}, \
                             which aborts it there, and then snapshotted it (F1.10)"
                        ),
                    });
                }
            }
            _ => {}
        }
        None
    }

    /// The run ended: every marker owed was passed on, or its attempt ended.
    pub fn finish(&mut self, graph: &ExecutionGraph) -> Option<Violation> {
        let o = self.owed.first()?;
        let name = graph.subtask_name(o.subtask).to_string();
        Some(Violation {
            invariant: Invariant::CancelMarkers,
            time: o.at,
            actors: vec![name.clone()],
            event_index: o.index,
            message: format!(
                "{name} took a cancellation marker for checkpoint {} while that checkpoint was \
                 open there, but never passed it on ({} output channel(s) did not carry it): \
                 its consumers stay in an alignment nobody completes (F1.10)",
                o.checkpoint, o.missing
            ),
        })
    }
}

fn event_is_lost(event: &TraceEvent) -> bool {
    matches!(
        event,
        TraceEvent::TaskState {
            to: ExecutionState::Failed | ExecutionState::Canceled,
            ..
        }
    )
}
