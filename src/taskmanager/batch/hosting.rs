//! The attempts a batch TaskManager hosts (Flink's `TaskSlotTable` of a `TaskExecutor`): per
//! attempt, its task state and timing, looked up by subtask and attempt, changed only by the
//! TaskManager that hosts it, and recorded in the trace as it changes.
//!
//! A deployment replaces the subtask's previous attempt in the same place (its original's, or
//! P2.8 its speculative one's) wherever it ran (`replace`).

use super::{Blocking, Task};
use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::taskmanager::TaskManager;
use crate::trace::TraceEvent;
use crate::world::batch::TmCtx;
use sim::Instant;

impl Task {
    /// It moves to `to` at `now`: the trace event that records it.
    pub(crate) fn set_state(&mut self, now: Instant, to: ExecutionState) -> TraceEvent {
        let from = self.state;
        self.state = to;
        if to.is_terminal() {
            self.ended = Some(now);
        }
        TraceEvent::TaskState {
            subtask: self.subtask,
            attempt: self.attempt,
            from,
            to,
        }
    }

    /// It ends in `to` at `now` unless it has ended already (a cancellation passes CANCELING):
    /// the trace events that record it.
    pub(crate) fn end(&mut self, now: Instant, to: ExecutionState) -> Vec<TraceEvent> {
        if self.state.is_terminal() {
            return Vec::new();
        }
        let mut events = Vec::with_capacity(2);
        if to == ExecutionState::Canceled {
            events.push(self.set_state(now, ExecutionState::Canceling));
        }
        events.push(self.set_state(now, to));
        events
    }

    fn is(&self, subtask: SubtaskId, attempt: u32) -> bool {
        self.subtask == subtask && self.attempt == attempt
    }
}

impl Blocking {
    /// Attempt `attempt` of `subtask`, if it is hosted here.
    pub(crate) fn task(&self, subtask: SubtaskId, attempt: u32) -> Option<&Task> {
        self.tasks.iter().find(|t| t.is(subtask, attempt))
    }

    pub(crate) fn task_mut(&mut self, subtask: SubtaskId, attempt: u32) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| t.is(subtask, attempt))
    }

    /// Attempt `attempt` of `subtask` runs here.
    pub(crate) fn running(&self, subtask: SubtaskId, attempt: u32) -> bool {
        self.task(subtask, attempt)
            .is_some_and(|t| t.state == ExecutionState::Running)
    }

    /// The original attempt of `subtask` it runs, if any.
    pub(crate) fn running_original(&self, subtask: SubtaskId) -> Option<u32> {
        self.tasks
            .iter()
            .find(|t| t.subtask == subtask && !t.speculative && t.state == ExecutionState::Running)
            .map(|t| t.attempt)
    }

    /// The attempts it runs (not ended), originals first, then speculative ones (P2.8), each by
    /// subtask.
    pub(crate) fn hosted(&self) -> Vec<(SubtaskId, u32)> {
        let mut hosted: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|t| !t.state.is_terminal())
            .collect();
        hosted.sort_by_key(|t| (t.speculative, t.subtask));
        hosted.iter().map(|t| (t.subtask, t.attempt)).collect()
    }

    /// The original attempts it hosts, running or ended, by subtask (what a P3.2 report goes
    /// through).
    pub(crate) fn originals(&self) -> Vec<&Task> {
        let mut originals: Vec<&Task> = self.tasks.iter().filter(|t| !t.speculative).collect();
        originals.sort_by_key(|t| t.subtask);
        originals
    }

    /// Takes out the attempt of `subtask` in the place a deployment of it fills (its original's,
    /// or P2.8 its speculative one's), if it is hosted here.
    pub(crate) fn take(&mut self, subtask: SubtaskId, speculative: bool) -> Option<Task> {
        let i = self
            .tasks
            .iter()
            .position(|t| t.subtask == subtask && t.speculative == speculative)?;
        Some(self.tasks.remove(i))
    }
}

impl TaskManager<Blocking> {
    /// Its attempt `attempt` of `subtask` moves to `to`.
    pub(crate) fn task_state(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        let now = ctx.now();
        let task = self
            .mode
            .task_mut(subtask, attempt)
            .expect("a task hosted here");
        let event = task.set_state(now, to);
        ctx.record(event);
    }

    /// Its attempt `attempt` of `subtask`, if hosted here and not ended yet, ends in `to`.
    pub(crate) fn end_task(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        let now = ctx.now();
        let Some(task) = self.mode.task_mut(subtask, attempt) else {
            return;
        };
        for event in task.end(now, to) {
            ctx.record(event);
        }
    }

    /// Every attempt it runs ends in `to`; how many did.
    pub(crate) fn end_hosted(&mut self, ctx: &mut TmCtx<'_, '_>, to: ExecutionState) -> u32 {
        let hosted = self.mode.hosted();
        for &(subtask, attempt) in &hosted {
            self.end_task(ctx, subtask, attempt, to);
        }
        hosted.len() as u32
    }

    /// A deployment of `subtask` here replaces its previous attempt in the same place: a
    /// running one is cancelled, and either is forgotten, wherever it ran.
    pub(crate) fn replace(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        subtask: SubtaskId,
        speculative: bool,
    ) {
        let now = ctx.now();
        let old = match self.mode.take(subtask, speculative) {
            Some(old) => Some(old),
            None => ctx.take_from_peers(subtask, speculative),
        };
        if let Some(mut old) = old {
            for event in old.end(now, ExecutionState::Canceled) {
                ctx.record(event);
            }
        }
    }
}
