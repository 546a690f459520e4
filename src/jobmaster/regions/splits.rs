//! The split enumerators of a streaming job's FLIP-27 sources (F1.13), held by the JobMaster
//! as Flink's scheduler holds its `OperatorCoordinatorHolder`s: one per source vertex that
//! reads splits, each with its assignment tracker. They answer readers' requests by RPC, are
//! checkpointed with every checkpoint, and are reset on failover: to the restored checkpoint
//! on a global one, per restarted reader on a regional one.

use super::Execution;
use crate::bug::Bug;
use crate::coordinator::{Enumerator, SplitAssignmentTracker};
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::ExecutionState;
use crate::trace::{Call, TraceEvent};
use crate::world::Ctx;

/// One source vertex's coordinator (Flink's `SourceCoordinator`).
struct SourceCoordinator {
    vertex: u32,
    splits: u32,
    parallelism: u32,
    enumerator: Enumerator,
    tracker: SplitAssignmentTracker,
}

/// Every split enumerator of the job, by source vertex.
pub struct SplitCoordinators {
    sources: Vec<SourceCoordinator>,
    /// Per vertex: its position in `sources`, if it reads splits.
    of_vertex: Vec<Option<usize>>,
}

impl SplitCoordinators {
    /// Fresh enumerators, every split unassigned; `None` for a job without splits, which then
    /// pays nothing for them.
    pub fn new(graph: &ExecutionGraph) -> Option<SplitCoordinators> {
        let mut of_vertex = vec![None; graph.vertices.len()];
        let mut sources = Vec::new();
        for (v, vertex) in graph.vertices.iter().enumerate() {
            if let Some(splits) = vertex.splits {
                of_vertex[v] = Some(sources.len());
                sources.push(SourceCoordinator {
                    vertex: v as u32,
                    splits,
                    parallelism: vertex.parallelism,
                    enumerator: Enumerator::new(splits, vertex.parallelism),
                    tracker: SplitAssignmentTracker::default(),
                });
            }
        }
        (!sources.is_empty()).then_some(SplitCoordinators { sources, of_vertex })
    }

    /// F1.13 step 1: a reader's split request. Only the current attempt, neither cancelled
    /// nor ended, is answered: an older one's request, or one the JobMaster is cancelling,
    /// would take a split nobody reads. Returns the RPC that answers it.
    pub fn on_request(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        subtask: SubtaskId,
        attempt: u32,
    ) -> Option<Call> {
        let e = view[subtask.index()];
        if e.attempt != attempt || e.state.is_terminal() || e.state == ExecutionState::Canceling {
            return None;
        }
        let info = &ctx.graph.subtasks[subtask.index()];
        let source = self.of_vertex[info.vertex.index()].expect("a split reader's vertex");
        let coordinator = &mut self.sources[source];
        let split = coordinator.enumerator.next_split(info.index);
        if let Some(split) = split {
            coordinator.tracker.record(info.index, split);
        }
        ctx.record(TraceEvent::SplitAssigned {
            subtask,
            attempt,
            split,
        });
        Some(Call::AssignSplit(split))
    }

    /// F1.13 step 2: checkpoint `checkpoint` was triggered (its trigger RPCs are on their way,
    /// ahead of any later assignment): each enumerator's unassigned splits go into it, and the
    /// trackers file what was assigned since the previous one under it.
    pub fn checkpoint(&mut self, ctx: &mut Ctx<'_, '_>, checkpoint: u64) {
        for c in &mut self.sources {
            let unassigned = c.enumerator.unassigned();
            ctx.io
                .storage
                .write_coordinator(checkpoint, c.vertex, unassigned);
            c.tracker.snapshot(checkpoint);
        }
    }

    /// F1.13 step 5: checkpoint `checkpoint` completed (or an older one: a no-op).
    pub fn on_checkpoint_complete(&mut self, checkpoint: u64) {
        for c in &mut self.sources {
            c.tracker.on_checkpoint_complete(checkpoint);
        }
    }

    /// F1.13 step 3: a global failover, or a new JobMaster, resets every enumerator to
    /// `checkpoint` (0: none, every split unassigned again), with an empty tracker.
    pub fn reset_to_checkpoint(&mut self, ctx: &Ctx<'_, '_>, checkpoint: u64) {
        for c in &mut self.sources {
            c.enumerator = match ctx.io.storage.coordinator(checkpoint, c.vertex) {
                Some(unassigned) => Enumerator::restore(unassigned, c.parallelism),
                None if checkpoint == 0 => Enumerator::new(c.splits, c.parallelism),
                None => {
                    unreachable!("checkpoint {checkpoint} was written without its coordinators")
                }
            };
            c.tracker = SplitAssignmentTracker::default();
        }
    }

    /// F1.13 step 4: a regional failover restarts `scope` from `checkpoint`: each restarted
    /// reader's splits assigned after it go back to its enumerator (`subtaskReset`).
    pub fn subtask_reset(&mut self, ctx: &Ctx<'_, '_>, scope: &[SubtaskId], checkpoint: u64) {
        for &s in scope {
            let info = &ctx.graph.subtasks[s.index()];
            let Some(source) = self.of_vertex[info.vertex.index()] else {
                continue;
            };
            let c = &mut self.sources[source];
            let back = c.tracker.take_after(info.index, checkpoint);
            if ctx.config.bug != Some(Bug::KeepSplitsOnRegionalReset) {
                c.enumerator.add_splits_back(info.index, &back);
            }
        }
    }
}
