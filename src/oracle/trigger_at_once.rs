//! `trigger-at-once` (F1.4, `flink` only): a trigger RPC that reaches a non-source task while
//! some of its input channels are still open makes it inject a barrier into every open channel,
//! so the normal alignment completes at once: the task snapshots before it takes any further
//! input. (Under `option1`/`option2` a trigger is only sent once every input finished, and a
//! task that still sees open channels waits for their EndOfPartition, P1.4: no such rule.)
//!
//! The oracle's own ledger: which input channels of each subtask's current attempt delivered
//! EndOfPartition (from `Take` events), reset when a new attempt deploys.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Element;
use crate::status::ExecutionState;
use crate::trace::TraceEvent;
use sim::Instant;

pub struct TriggerAtOnce {
    /// Per channel: its EndOfPartition was taken by the current attempt of its consumer.
    ended: Vec<bool>,
    /// Per subtask: a trigger with open inputs, not snapshotted yet: checkpoint, trace index.
    awaiting: Vec<Option<(u64, u64)>>,
    /// How many entries of `awaiting` are set: the hot path (a record taken while no trigger
    /// is awaited) returns at once.
    awaited: u32,
}

impl TriggerAtOnce {
    pub fn new(graph: &ExecutionGraph) -> TriggerAtOnce {
        TriggerAtOnce {
            ended: vec![false; graph.channels.len()],
            awaiting: vec![None; graph.subtasks.len()],
            awaited: 0,
        }
    }

    fn set(&mut self, s: SubtaskId, value: Option<(u64, u64)>) -> Option<(u64, u64)> {
        let old = std::mem::replace(&mut self.awaiting[s.index()], value);
        self.awaited = self.awaited + u32::from(value.is_some()) - u32::from(old.is_some());
        old
    }

    fn open_inputs(&self, graph: &ExecutionGraph, s: SubtaskId) -> bool {
        graph.subtasks[s.index()]
            .inputs
            .iter()
            .any(|c| !self.ended[c.index()])
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
            } if !graph.subtasks[subtask.index()].inputs.is_empty()
                && self.open_inputs(graph, subtask) =>
            {
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
            } => {
                let violation = self.set(subtask, None).map(|(n, at)| Violation {
                    invariant: Invariant::TriggerAtOnce,
                    time: now,
                    actors: vec![graph.subtask_name(subtask).to_string()],
                    event_index: index,
                    message: format!(
                        "{} was triggered for checkpoint {n} by RPC (event {at}) while inputs \
                         were open, and took {element:?} from {} before its snapshot: F1.4 \
                         injects barriers into the open channels and snapshots at once",
                        graph.subtask_name(subtask),
                        graph.channel_name(channel)
                    ),
                });
                if element == Element::EndOfPartition {
                    self.ended[channel.index()] = true;
                }
                violation
            }
            // A new attempt starts with every input open again; an ended one owes nothing.
            TraceEvent::TaskState { subtask, to, .. } => {
                if to == ExecutionState::Deploying {
                    for c in &graph.subtasks[subtask.index()].inputs {
                        self.ended[c.index()] = false;
                    }
                }
                if to.is_terminal() || to == ExecutionState::Deploying {
                    self.set(subtask, None);
                }
                None
            }
            _ => None,
        }
    }
}
