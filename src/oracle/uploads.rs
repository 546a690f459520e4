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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::DeclineReason;

    const SRC: SubtaskId = SubtaskId(0);
    const SINK: SubtaskId = SubtaskId(1);

    fn snapshot(subtask: SubtaskId) -> TraceEvent {
        TraceEvent::Snapshot {
            subtask,
            attempt: 0,
            checkpoint: 1,
            finished: false,
        }
    }

    fn state(subtask: SubtaskId, to: ExecutionState) -> TraceEvent {
        TraceEvent::TaskState {
            subtask,
            attempt: 0,
            from: ExecutionState::Running,
            to,
        }
    }

    const COMPLETED: TraceEvent = TraceEvent::CheckpointCompleted { checkpoint: 1 };

    /// Feeds `events` (`None`: `src[0]` declines checkpoint 1); returns which were violations.
    fn run(events: &[Option<TraceEvent>]) -> Vec<(u64, Invariant)> {
        let g = crate::oracle::tests::source_to_sink();
        let mut o = Uploads::default();
        let mut found = Vec::new();
        for (i, e) in (0..).zip(events) {
            match e {
                Some(e) => found.extend(o.observe(&g, i, Instant::ZERO, e)),
                None => o.sent(Rpc {
                    subtask: SRC,
                    attempt: 0,
                    call: Call::DeclineCheckpoint {
                        checkpoint: 1,
                        reason: DeclineReason::Subsumed,
                    },
                }),
            }
        }
        found.iter().map(|v| (v.event_index, v.invariant)).collect()
    }

    #[test]
    fn a_task_does_not_finish_and_a_checkpoint_does_not_complete_while_an_upload_runs() {
        let finished = Some(state(SRC, ExecutionState::Finished));
        assert_eq!(
            run(&[Some(snapshot(SRC)), finished]),
            [(1, Invariant::CheckpointProgress)]
        );
        assert_eq!(
            run(&[Some(snapshot(SRC)), Some(COMPLETED)]),
            [(1, Invariant::ConsistentCut)]
        );
        let uploaded = TraceEvent::SnapshotUploaded {
            subtask: SRC,
            attempt: 0,
            checkpoint: 1,
        };
        assert!(run(&[Some(snapshot(SRC)), Some(uploaded), finished]).is_empty());
        // Declined: no upload follows.
        assert!(run(&[Some(snapshot(SRC)), None, finished]).is_empty());
    }

    /// An attempt that failed or was canceled uploads nothing more; the other subtasks'
    /// uploads still run.
    #[test]
    fn an_ended_attempts_uploads_are_moot_and_only_its_own() {
        for end in [ExecutionState::Failed, ExecutionState::Canceled] {
            assert!(run(&[Some(snapshot(SRC)), Some(state(SRC, end)), Some(COMPLETED)]).is_empty());
            assert_eq!(
                run(&[
                    Some(snapshot(SRC)),
                    Some(snapshot(SINK)),
                    Some(state(SRC, end)),
                    Some(state(SINK, ExecutionState::Finished)),
                ]),
                [(3, Invariant::CheckpointProgress)]
            );
        }
    }
}
