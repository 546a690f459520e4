//! F1.8: asynchronous snapshot parts, from the oracle's own ledger of `snapshot` and
//! `snapshot_uploaded` events (only when `checkpointing.async_duration` is above zero).
//!
//! A snapshot's state is durable only once its asynchronous part ends. So a checkpoint must not
//! complete while a snapshot taken for it is still uploading (`consistent-cut`: a restore from it
//! could find the state missing). And a task must not reach FINISHED while one of its snapshots
//! is still uploading (`checkpoint-progress`: Flink's task waits for them before it terminates,
//! or the checkpoint never gets its acknowledgement). An upload is moot once its attempt ended
//! (FAILED or CANCELED), the task declined its checkpoint, or the task was told that its
//! checkpoint was aborted.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::ExecutionState;
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::Instant;
use std::collections::BTreeSet;

#[derive(Default)]
pub struct Uploads {
    /// (subtask, attempt, checkpoint) snapshotted and not yet uploaded.
    running: BTreeSet<(u32, u32, u64)>,
}

impl Uploads {
    /// A task declines a checkpoint it had snapshotted (a newer one subsumed it before its
    /// channel state was complete): no upload follows.
    pub fn sent(&mut self, rpc: Rpc) {
        if let Call::DeclineCheckpoint { checkpoint, .. } = rpc.call {
            self.running
                .remove(&(rpc.subtask.0, rpc.attempt, checkpoint));
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
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                ..
            } => {
                self.running.insert((subtask.0, attempt, checkpoint));
            }
            TraceEvent::SnapshotUploaded {
                subtask,
                attempt,
                checkpoint,
            } => {
                self.running.remove(&(subtask.0, attempt, checkpoint));
            }
            // The task learns that the checkpoint was aborted (by this coordinator or, after a
            // reconciliation, by a new one that found it pending): it cancels the upload.
            TraceEvent::Rpc {
                to: Address::TaskManager(_),
                rpc:
                    Rpc {
                        subtask,
                        attempt,
                        call: Call::NotifyCheckpointAborted(checkpoint),
                    },
                ..
            } => {
                self.running.remove(&(subtask.0, attempt, checkpoint));
            }
            TraceEvent::CheckpointCompleted { checkpoint } => {
                let &(s, attempt, _) = self.running.iter().find(|e| e.2 == checkpoint)?;
                let name = graph.subtask_name(SubtaskId(s)).to_string();
                return Some(Violation {
                    invariant: Invariant::ConsistentCut,
                    time: now,
                    actors: vec![name.clone(), "CheckpointCoordinator".to_owned()],
                    event_index: index,
                    message: format!(
                        "checkpoint {checkpoint} completed while the asynchronous part of {name} attempt {attempt}'s snapshot for it was still running: its state was not durable yet, so a restore could find it missing (F1.8)"
                    ),
                });
            }
            TraceEvent::TaskState {
                subtask,
                attempt,
                to,
                ..
            } => match to {
                ExecutionState::Failed | ExecutionState::Canceled => {
                    self.running
                        .retain(|&(s, a, _)| (s, a) != (subtask.0, attempt));
                }
                ExecutionState::Finished => {
                    let &(_, _, checkpoint) = self
                        .running
                        .iter()
                        .find(|&&(s, a, _)| (s, a) == (subtask.0, attempt))?;
                    let name = graph.subtask_name(subtask).to_string();
                    return Some(Violation {
                        invariant: Invariant::CheckpointProgress,
                        time: now,
                        actors: vec![name.clone()],
                        event_index: index,
                        message: format!(
                            "{name} attempt {attempt} finished while the asynchronous part of its snapshot for checkpoint {checkpoint} was still running: a task waits for its uploads before it terminates (F1.8)"
                        ),
                    });
                }
                _ => {}
            },
            _ => {}
        }
        None
    }
}
