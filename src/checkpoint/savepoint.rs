//! The CheckpointCoordinator's side of a stop-with-savepoint (`docs/rules.md` F1.11): the
//! synchronous savepoint is a checkpoint with the next id, triggered at once (a savepoint is
//! forced: `max_concurrent` and `min_pause` do not hold it back), sent to the sources as
//! `triggerSavepoint`; while it is pending, or once it completed, nothing else is triggered
//! (Flink stops its checkpoint scheduler); if it fails, the scheduler starts again.

use super::CheckpointCoordinator;
use crate::jobmaster::regions::Execution;
use crate::trace::{Call, SavepointRefusal, TraceEvent};
use crate::world::Ctx;

/// A stop-with-savepoint under way in this coordinator (volatile, F1.11 step 6: a new
/// JobMaster knows of none, records no `savepoint_failed` for it, and its scheduler runs).
/// It stays once its savepoint completed: the tasks finish and the job with them, and the
/// scheduler stays stopped (the savepoint's id is never pending again, so nothing else
/// tells a completed stop from a pending one).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Stop {
    /// The savepoint's checkpoint id.
    checkpoint: u64,
    drain: bool,
}

impl CheckpointCoordinator {
    /// F1.11 step 1: triggers the synchronous savepoint of a stop-with-savepoint, or refuses
    /// (another one is under way). A trigger plan that fails (F1.1: a planned subtask is not
    /// RUNNING) fails the stop at once: `checkpoint_not_triggered`, then `savepoint_failed`.
    pub fn trigger_savepoint(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        drain: bool,
    ) -> Result<(), SavepointRefusal> {
        if self.stop.is_some() {
            return Err(SavepointRefusal::SavepointInProgress);
        }
        match self.plan(ctx, view) {
            Ok(plan) => {
                let checkpoint = self.start_checkpoint(ctx, view, placement, plan, Some(drain));
                self.stop = Some(Stop { checkpoint, drain });
            }
            Err(reason) => {
                ctx.record(TraceEvent::CheckpointNotTriggered { reason });
                ctx.record(TraceEvent::SavepointFailed { checkpoint: 0 });
            }
        }
        Ok(())
    }

    /// F1.11 step 1: Flink's checkpoint scheduler is stopped while a stop-with-savepoint is
    /// under way or done.
    pub(super) fn scheduler_stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// Checkpoint `id` is the savepoint of the stop under way (or done).
    pub(super) fn is_savepoint(&self, id: u64) -> bool {
        self.stop.is_some_and(|s| s.checkpoint == id)
    }

    /// The trigger RPC of pending checkpoint `id` (for a trigger by hand, F1.4): a savepoint's
    /// is `triggerSavepoint`, so that a source triggered by hand stops too.
    pub fn trigger_call(&self, id: u64) -> Call {
        match self.stop {
            Some(Stop { checkpoint, drain }) if checkpoint == id => Call::TriggerSavepoint {
                checkpoint: id,
                drain,
            },
            Some(_) | None => Call::TriggerCheckpoint(id),
        }
    }

    /// Checkpoint `id` was aborted or dropped: if it is the savepoint, the stop failed and the
    /// scheduler starts again (F1.11 step 5, Flink's `terminateExceptionally`).
    pub(super) fn savepoint_dropped(&mut self, ctx: &mut Ctx<'_, '_>, id: u64) {
        if self.is_savepoint(id) {
            self.stop = None;
            ctx.record(TraceEvent::SavepointFailed { checkpoint: id });
        }
    }

    /// A failover restarts tasks (P1.8): the job runs again and so does the scheduler (Flink's
    /// `CheckpointCoordinatorDeActivator` starts it when the job is RUNNING again).
    pub(super) fn savepoint_forgotten(&mut self) {
        self.stop = None;
    }
}
