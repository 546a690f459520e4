//! `trigger-at-once` (`flink` only): a non-source task that learns of a checkpoint by the
//! trigger RPC snapshots before it takes any further input. With some input channels still
//! open that is F1.4: the task injects a barrier into every open channel, so the normal
//! alignment completes at once; with every input ended it is P1.3 step 5. (Under `option1` and
//! `option2` a task that gets the trigger while EndOfPartition is still on its way waits for
//! it, P1.4, so there is no such rule.)
//!
//! In Flink the window this covers is the one in which the JobMaster already sees the upstream
//! FINISHED while the downstream has not yet consumed its EndOfPartition (FLINK-21085).

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Element;
use crate::trace::TraceEvent;
use sim::Instant;

pub struct TriggerAtOnce {
    /// Per subtask: a trigger not snapshotted yet: checkpoint, trace index.
    awaiting: Vec<Option<(u64, u64)>>,
    /// How many entries of `awaiting` are set: the hot path (a record taken while no trigger
    /// is awaited) returns at once.
    awaited: u32,
}

impl TriggerAtOnce {
    pub fn new(graph: &ExecutionGraph) -> TriggerAtOnce {
        TriggerAtOnce {
            awaiting: vec![None; graph.subtasks.len()],
            awaited: 0,
        }
    }

    fn set(&mut self, s: SubtaskId, value: Option<(u64, u64)>) -> Option<(u64, u64)> {
        let old = std::mem::replace(&mut self.awaiting[s.index()], value);
        self.awaited = self.awaited + u32::from(value.is_some()) - u32::from(old.is_some());
        old
    }

    /// No trigger is awaited: a record taken now cannot break the rule (the hot path).
    #[inline]
    pub fn awaits_nothing(&self) -> bool {
        self.awaited == 0
    }

    #[inline]
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        match *event {
            TraceEvent::Take {
                element: Element::Record(_),
                ..
            } if self.awaited == 0 => None,
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                by_trigger: true,
            } if !graph.subtasks[subtask.index()].inputs.is_empty() => {
                self.set(subtask, Some((checkpoint, index)));
                None
            }
            TraceEvent::Snapshot {
                subtask,
                checkpoint,
                ..
            } => {
                if self.awaiting[subtask.index()].is_some_and(|(n, _)| n == checkpoint) {
                    self.set(subtask, None);
                }
                None
            }
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } => self.set(subtask, None).map(|(n, at)| Violation {
                invariant: Invariant::TriggerAtOnce,
                time: now,
                actors: vec![graph.subtask_name(subtask).to_string()],
                event_index: index,
                message: format!(
                    "{} was triggered for checkpoint {n} by RPC (event {at}) and took {element:?} \
                     from {} before its snapshot: F1.4 injects barriers into the open channels \
                     and snapshots at once",
                    graph.subtask_name(subtask),
                    graph.channel_name(channel)
                ),
            }),
            // An attempt that ended owes nothing.
            TraceEvent::TaskState { subtask, to, .. } if to.is_terminal() => {
                self.set(subtask, None);
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::ChannelId;
    use crate::record::StopMode;
    use crate::status::ExecutionState;

    fn graph() -> ExecutionGraph {
        crate::oracle::tests::source_to_sink()
    }

    const SINK: SubtaskId = SubtaskId(1);

    fn seen(subtask: SubtaskId, by_trigger: bool) -> TraceEvent {
        TraceEvent::CheckpointSeen {
            subtask,
            checkpoint: 4,
            by_trigger,
        }
    }

    fn take(element: Element) -> TraceEvent {
        TraceEvent::Take {
            subtask: SINK,
            channel: ChannelId(0),
            element,
        }
    }

    #[test]
    fn input_taken_between_a_trigger_and_its_snapshot_is_a_violation() {
        let g = graph();
        let mut o = TriggerAtOnce::new(&g);
        assert!(o.observe(&g, 1, Instant::ZERO, &seen(SINK, true)).is_none());
        let v = o
            .observe(&g, 2, Instant::ZERO, &take(Element::EndOfPartition))
            .expect("a violation");
        assert_eq!((v.invariant, v.event_index), (Invariant::TriggerAtOnce, 2));
        assert_eq!(v.actors, ["sink[0]"]);
        assert!(
            v.message.contains("checkpoint 4 by RPC (event 1)"),
            "{}",
            v.message
        );
        // Reported once.
        assert!(o
            .observe(
                &g,
                3,
                Instant::ZERO,
                &take(Element::EndOfData(StopMode::Drain))
            )
            .is_none());
    }

    /// A record is input too, and a state change that does not end the attempt settles
    /// nothing.
    #[test]
    fn a_record_taken_after_a_trigger_is_a_violation_whatever_state_change_came_between() {
        let g = graph();
        let mut o = TriggerAtOnce::new(&g);
        o.observe(&g, 1, Instant::ZERO, &seen(SINK, true));
        let running = TraceEvent::TaskState {
            subtask: SINK,
            attempt: 0,
            from: ExecutionState::Initializing,
            to: ExecutionState::Running,
        };
        assert!(o.observe(&g, 2, Instant::ZERO, &running).is_none());
        let record = Element::Record(crate::record::Record {
            origin: SubtaskId(0),
            key: 1,
            seq: 0,
            value: 1,
        });
        let v = o.observe(&g, 3, Instant::ZERO, &take(record));
        assert_eq!(v.map(|v| v.event_index), Some(3));
    }

    #[test]
    fn a_snapshot_a_barrier_a_source_or_an_ended_attempt_owes_nothing() {
        let g = graph();
        let snapshot = TraceEvent::Snapshot {
            subtask: SINK,
            attempt: 0,
            checkpoint: 4,
            finished: false,
        };
        let ended = TraceEvent::TaskState {
            subtask: SINK,
            attempt: 0,
            from: ExecutionState::Running,
            to: ExecutionState::Canceled,
        };
        for settle in [Some(snapshot), Some(ended), None] {
            let mut o = TriggerAtOnce::new(&g);
            let learn = if settle.is_some() {
                seen(SINK, true)
            } else {
                seen(SINK, false) // learned by barrier: no rule
            };
            o.observe(&g, 1, Instant::ZERO, &learn);
            if let Some(e) = settle {
                o.observe(&g, 2, Instant::ZERO, &e);
            }
            assert!(o
                .observe(&g, 3, Instant::ZERO, &take(Element::EndOfPartition))
                .is_none());
            assert_eq!(o.awaited, 0);
        }
        // A source has no input to take.
        let mut o = TriggerAtOnce::new(&g);
        o.observe(&g, 1, Instant::ZERO, &seen(SubtaskId(0), true));
        assert_eq!(o.awaited, 0);
    }
}
