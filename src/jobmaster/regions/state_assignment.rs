//! F1.6: a job submitted with a checkpoint (`restore_from`), as Flink's JobMaster restores a
//! savepoint before it schedules anything (`CheckpointCoordinator.restoreSavepoint`,
//! `VertexFinishedStateChecker`, `StateAssignmentOperation`): the finished state of every
//! operator is checked first, and a shape Flink refuses fails the job before any task is
//! deployed; otherwise each operator's state is assigned to the subtasks of this job by uid
//! and the job is deployed as after a restore.

use super::{restorable, PipelinedRegions, With};
use crate::checkpoint::storage::{CompletedCheckpoint, OperatorState, SubtaskSnapshot};
use crate::graph::{key_group_owner, ExecutionGraph, SubtaskId, VertexId};
use crate::record::Record;
use crate::scenario::{Delivery, Operator, RestoreFrom, RestoredState};
use crate::status::JobStatus;
use crate::trace::{Restore, TraceEvent};
use crate::world::Ctx;

impl With<'_, PipelinedRegions> {
    /// Starts the job from the checkpoint it was submitted with, or fails it (F1.6).
    pub(super) fn start_from(&mut self, ctx: &mut Ctx<'_, '_>, restore: &RestoreFrom) {
        let ignore_mixed = self.bug == Some(crate::bug::Bug::AcceptMixedChain);
        let finished = match restorable::check_restore_from(ctx.graph, restore, ignore_mixed) {
            Ok(finished) => finished,
            Err(reason) => {
                // The JobMaster fails to initialize: no task is ever deployed.
                ctx.record(TraceEvent::RestoreRejected {
                    checkpoint: restore.checkpoint,
                });
                ctx.io.stats.restore_refused = Some(reason);
                return self.set_job_status(ctx, JobStatus::Failed);
            }
        };
        let snapshots = assign(ctx.graph, restore, &finished);
        let finished_ids: Vec<SubtaskId> = (0..finished.len() as u32)
            .map(SubtaskId)
            .filter(|s| finished[s.index()])
            .collect();
        let checkpoint = restore.checkpoint;
        ctx.io.storage.install(
            CompletedCheckpoint {
                id: checkpoint,
                completed_at: ctx.now,
                finished: finished_ids.clone(),
            },
            snapshots,
        );
        self.set_job_status(ctx, JobStatus::Created);
        self.set_job_status(ctx, JobStatus::Running);
        for (i, &finished) in finished.iter().enumerate() {
            let restore = Restore {
                checkpoint,
                finished,
            };
            self.deploy(ctx, SubtaskId(i as u32), restore);
        }
        ctx.record(TraceEvent::Restore {
            checkpoint,
            restarted: self.scheduler.executions.len() as u32,
            finished: finished_ids.len() as u32,
            region: None,
        });
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.start(ctx);
        }
    }
}

/// Flink's `StateAssignmentOperation`, in the simulator's terms: each operator of each
/// subtask gets its own state by uid (an operator the checkpoint does not know starts afresh).
/// A source's offset and a sink's transactions go to the subtask of the same index (validation
/// keeps their parallelism); a keyed sum's totals are gathered from every old subtask and
/// handed to the subtask that owns their key group now, so a keyed sum may change its
/// parallelism. A finished subtask's snapshot says so and carries no state.
fn assign(
    graph: &ExecutionGraph,
    restore: &RestoreFrom,
    finished: &[bool],
) -> Vec<(SubtaskId, SubtaskSnapshot)> {
    let mut out = Vec::with_capacity(graph.subtasks.len());
    for (v, vertex) in graph.vertices.iter().enumerate() {
        // Per chain member: the keyed totals of every old subtask, by the subtask owning them.
        let mut keyed: Vec<Vec<Vec<(u32, i64)>>> = Vec::new();
        for member in vertex.chain.members() {
            let mut by_owner = vec![Vec::new(); vertex.parallelism as usize];
            if let Some(op) = restore.operators.get(&member.uid) {
                for state in &op.state {
                    if let RestoredState::KeyedSum { sums } = state {
                        for &(key, total) in sums {
                            by_owner[key_group_owner(key, vertex.parallelism) as usize]
                                .push((key, total));
                        }
                    }
                }
            }
            for sums in &mut by_owner {
                sums.sort_unstable();
            }
            keyed.push(by_owner);
        }
        for s in graph.subtasks_of(VertexId(v as u32)) {
            let index = graph.subtasks[s.index()].index as usize;
            let state = vertex
                .chain
                .members()
                .iter()
                .enumerate()
                .map(|(k, member)| {
                    let restored = restore
                        .operators
                        .get(&member.uid)
                        .and_then(|op| op.state.get(index));
                    match (&member.operator, restored) {
                        (Operator::Source { .. }, Some(RestoredState::Source { offset })) => {
                            OperatorState::Source { offset: *offset }
                        }
                        (Operator::Source { .. }, _) => OperatorState::Source { offset: 0 },
                        (Operator::KeyedSum { .. }, _) => OperatorState::KeyedSum {
                            sums: std::mem::take(&mut keyed[k][index]),
                        },
                        (
                            Operator::Sink {
                                delivery: Delivery::TwoPhaseCommit,
                            },
                            Some(RestoredState::TwoPhaseCommitSink { pending }),
                        ) => OperatorState::TwoPhaseCommitSink {
                            pending: pending
                                .iter()
                                .map(|(c, records)| {
                                    (*c, records.iter().map(|r| record(graph, r)).collect())
                                })
                                .collect(),
                        },
                        (
                            Operator::Sink {
                                delivery: Delivery::TwoPhaseCommit,
                            },
                            _,
                        ) => OperatorState::TwoPhaseCommitSink {
                            pending: Vec::new(),
                        },
                        (Operator::Map | Operator::Sink { .. }, _) => OperatorState::Stateless,
                    }
                })
                .collect();
            out.push((
                s,
                SubtaskSnapshot {
                    attempt: 0,
                    finished: finished[s.index()],
                    state,
                    input_state: Vec::new(),
                    output_state: Vec::new(),
                },
            ));
        }
    }
    out
}

fn record(graph: &ExecutionGraph, r: &crate::scenario::RestoredRecord) -> Record {
    Record {
        origin: graph.subtask(r.origin),
        key: r.key,
        seq: r.seq,
        value: r.value,
    }
}
