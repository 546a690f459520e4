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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ChannelId;
    use crate::status::ExecutionState;

    const SRC: SubtaskId = SubtaskId(0);
    const SINK: SubtaskId = SubtaskId(1);
    const CHANNEL: ChannelId = ChannelId(0);

    /// Feeds `events` (all at 1 ms); returns the messages of what was violated, the end
    /// included.
    fn feed(events: &[TraceEvent]) -> Vec<String> {
        let g = crate::oracle::tests::source_to_sink();
        let mut o = CancelMarkers::new(&g);
        let now = Instant::ZERO + sim::Duration::from_millis(1);
        let mut found: Vec<String> = events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| o.observe(&g, i as u64, now, e).map(|v| v.message))
            .collect();
        found.extend(o.finish(&g).map(|v| v.message));
        found
    }

    fn take(subtask: SubtaskId, element: Element) -> TraceEvent {
        TraceEvent::Take {
            subtask,
            channel: CHANNEL,
            element,
        }
    }

    fn state(subtask: SubtaskId, attempt: u32, to: ExecutionState) -> TraceEvent {
        TraceEvent::TaskState {
            subtask,
            attempt,
            from: ExecutionState::Running,
            to,
        }
    }

    fn snapshot(subtask: SubtaskId, attempt: u32, checkpoint: u64) -> TraceEvent {
        TraceEvent::Snapshot {
            subtask,
            attempt,
            checkpoint,
            finished: false,
        }
    }

    /// `src[0]` has one output and so owes the marker; it is given a take here to exercise the
    /// ledger (in a real job only a task with inputs takes elements).
    #[test]
    fn a_marker_for_an_open_checkpoint_is_owed_and_cancels_its_snapshot() {
        let owed = feed(&[take(SRC, Element::CancelMarker(2))]);
        assert!(owed[0].contains("never passed it on"), "{owed:?}");
        let passed = feed(&[
            take(SRC, Element::CancelMarker(2)),
            TraceEvent::Push {
                channel: CHANNEL,
                element: Element::CancelMarker(2),
            },
        ]);
        assert!(passed.is_empty(), "{passed:?}");
        let another = feed(&[
            take(SRC, Element::CancelMarker(2)),
            TraceEvent::Push {
                channel: CHANNEL,
                element: Element::CancelMarker(3),
            },
        ]);
        assert!(another[0].contains("never passed it on"), "{another:?}");
        let snapshotted = feed(&[take(SINK, Element::CancelMarker(2)), snapshot(SINK, 0, 2)]);
        assert!(
            snapshotted[0].contains("then snapshotted it"),
            "{snapshotted:?}"
        );
    }

    #[test]
    fn a_marker_for_a_checkpoint_the_task_is_past_is_owed_nothing() {
        // Heard of a newer one by trigger, or by its barrier: the marker is stale.
        let seen = TraceEvent::CheckpointSeen {
            subtask: SRC,
            checkpoint: 3,
            by_trigger: true,
        };
        assert!(feed(&[seen, take(SRC, Element::CancelMarker(2))]).is_empty());
        let barrier = take(SRC, Element::Barrier(3));
        assert!(feed(&[barrier, take(SRC, Element::CancelMarker(2))]).is_empty());
        // Already put a barrier for it on the output.
        let pushed = TraceEvent::Push {
            channel: CHANNEL,
            element: Element::Barrier(2),
        };
        assert!(feed(&[pushed, take(SRC, Element::CancelMarker(2))]).is_empty());
    }

    #[test]
    fn a_new_attempt_starts_a_new_ledger_and_a_lost_one_owes_nothing() {
        let cancelled = take(SINK, Element::CancelMarker(2));
        // A new attempt of the sink starts afresh: it may snapshot checkpoint 2 ...
        let next = feed(&[
            cancelled,
            state(SINK, 1, ExecutionState::Initializing),
            snapshot(SINK, 1, 2),
        ]);
        assert!(next.is_empty(), "{next:?}");
        // ... and the new attempt's own marker binds the new attempt.
        let own = feed(&[
            state(SINK, 1, ExecutionState::Initializing),
            take(SINK, Element::CancelMarker(2)),
            snapshot(SINK, 1, 2),
        ]);
        assert!(own[0].contains("then snapshotted it"), "{own:?}");
        // ... and a source attempt that failed owes no marker, while one that finished does.
        let failed = feed(&[
            take(SRC, Element::CancelMarker(2)),
            state(SRC, 0, ExecutionState::Failed),
        ]);
        assert!(failed.is_empty(), "{failed:?}");
        // Another task's lost attempt voids nothing of this one's.
        let other = feed(&[
            take(SRC, Element::CancelMarker(2)),
            state(SINK, 0, ExecutionState::Failed),
        ]);
        assert!(other[0].contains("never passed it on"), "{other:?}");
        let finished = feed(&[
            take(SRC, Element::CancelMarker(2)),
            state(SRC, 0, ExecutionState::Finished),
        ]);
        assert!(finished[0].contains("never passed it on"), "{finished:?}");
    }
}
