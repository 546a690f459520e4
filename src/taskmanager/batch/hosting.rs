//! The attempts a batch TaskManager hosts (Flink's `TaskSlotTable` of a `TaskExecutor`): per
//! attempt, its task state and timing, looked up by subtask and attempt, changed only by the
//! TaskManager that hosts it, and recorded in the trace as it changes.
//!
//! A deployment replaces the subtask's previous attempt in the same place (its original's, or
//! P2.8 its speculative one's) on the TaskManager it goes to (`replace`). An attempt of the
//! subtask on another TaskManager stays there until that TaskManager learns of the
//! replacement (F2.7): it fails it when it loses its leader (F2.5, unless P3.1 keeps it
//! running), and when it registers with a JobMaster again, which refuses the slot of an
//! attempt it replaced, it fails it (if still running) and forgets it (`drop_replaced`).

use super::{Blocking, Task};
use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::taskmanager::TaskManager;
use crate::trace::TraceEvent;
use crate::world::batch::TmCtx;
use crate::world::Act;
use sim::Instant;

impl Task {
    /// It moves to `to` at `now`: the trace event that records it.
    fn set_state(&mut self, now: Instant, to: ExecutionState) -> TraceEvent {
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

    /// It moves to `to` at `now` unless it has ended already (a cancellation passes
    /// CANCELING): the trace events that record it.
    pub(crate) fn move_to(
        &mut self,
        now: Instant,
        to: ExecutionState,
    ) -> impl Iterator<Item = TraceEvent> {
        let mut events = [None, None];
        if !self.state.is_terminal() {
            if to == ExecutionState::Canceled {
                events[0] = Some(self.set_state(now, ExecutionState::Canceling));
            }
            events[1] = Some(self.set_state(now, to));
        }
        events.into_iter().flatten()
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
    /// Its attempt `attempt` of `subtask`, if hosted here and not ended yet, moves to `to` (a
    /// cancellation passes CANCELING).
    pub(crate) fn task_state(
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
        for event in task.move_to(now, to) {
            ctx.record(event);
        }
    }

    /// Every attempt it runs ends in `to`; how many did.
    pub(crate) fn end_hosted(&mut self, ctx: &mut TmCtx<'_, '_>, to: ExecutionState) -> u32 {
        let hosted = self.mode.hosted();
        for &(subtask, attempt) in &hosted {
            self.task_state(ctx, subtask, attempt, to);
        }
        hosted.len() as u32
    }

    /// F2.7 step 1: a deployment of `subtask` here replaces its previous attempt in the same
    /// place on this TaskManager (Flink reuses the slot): a running one is cancelled, and
    /// either is forgotten. One on another TaskManager is that one's to learn of (steps 2–3).
    pub(crate) fn replace(
        &mut self,
        ctx: &mut TmCtx<'_, '_>,
        subtask: SubtaskId,
        speculative: bool,
    ) {
        let now = ctx.now();
        if let Some(mut old) = self.mode.take(subtask, speculative) {
            for event in old.move_to(now, ExecutionState::Canceled) {
                ctx.record(event);
            }
        }
    }

    /// F2.7 step 3: registering with a JobMaster, it offers its slots (Flink's `offerSlots`);
    /// the JobMaster refuses each slot whose attempt it has since replaced by a newer
    /// deployment (the deployment descriptors), and the TaskManager frees it, failing an
    /// attempt still running in it (`freeSlot`), and forgets the attempt. So a replaced
    /// attempt never runs in a slot the JobMaster gives to another task, nor is reported
    /// (P3.2). The attempt's final state goes to no JobMaster: none knows it.
    pub(crate) fn drop_replaced(&mut self, ctx: &mut TmCtx<'_, '_>) {
        let now = ctx.now();
        let mut i = 0;
        while i < self.mode.tasks.len() {
            let t = &self.mode.tasks[i];
            if ctx.descriptor(t.subtask, t.attempt).is_some() {
                i += 1;
                continue;
            }
            let mut old = self.mode.tasks.remove(i);
            for event in old.move_to(now, ExecutionState::Failed) {
                ctx.record(event);
            }
        }
    }
}
