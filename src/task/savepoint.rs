//! A task's side of a stop-with-savepoint (`docs/rules.md` F1.11): a source stops on the
//! savepoint's trigger, EndOfData carries the stop mode downstream, and a task that performed
//! the synchronous savepoint waits for that savepoint's completion, not for any checkpoint
//! after its final one, and fails if it is aborted.
//!
//! Only the `flink` finish protocol runs a stop-with-savepoint (validation refuses the others).

use super::{Phase, Task};
use crate::bug::Bug;
use crate::record::{Element, StopMode};
use crate::status::ExecutionState;
use crate::trace::TraceEvent;
use crate::world::TaskCtx;

/// What a task knows of a stop-with-savepoint. Empty in every run without one.
#[derive(Clone, Copy, Default, Debug)]
pub(super) struct Stop {
    /// The synchronous savepoint this task performed (Flink's `syncSavepoint`): from then on
    /// only its completion lets the task finish (F1.11 step 4).
    sync_savepoint: Option<u64>,
    /// Its input stopped without drain (F1.11 step 2): its operators did not finish, so its
    /// snapshots are not final.
    no_drain: bool,
    /// Input channels that delivered EndOfData without drain.
    no_drain_inputs: u32,
}

impl Task {
    /// `triggerSavepoint`: a source stops, then takes savepoint `n` like a checkpoint (F1.11
    /// step 2). A non-source gets it only when its inputs all ended (F1.4); it snapshots at
    /// once. Either way, a task that performed the savepoint then waits for it.
    pub(super) fn on_trigger_savepoint(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, drain: bool) {
        let stops = self.chain.is_source()
            && self.phase == Phase::Processing
            && self.state == ExecutionState::Running
            && !self.close_after_upload
            && !self.finish_after_upload
            && !self.is_stale(n);
        let late_stop = ctx.config.bug == Some(Bug::EmitAfterStop);
        if stops && !late_stop {
            self.stop_source(ctx, n, drain);
        }
        self.on_trigger(ctx, n);
        if stops && late_stop {
            // The bug: the source snapshots, its barrier goes out, and only after one more
            // record does it stop: that record is behind the savepoint's barrier.
            if let Some(seq) = self.chain.next_source_seq() {
                let record = crate::record::source_record(self.origin, seq);
                let flow = self.chain.emitted_by_head(record);
                self.flow(ctx, flow);
            }
            self.stop_source(ctx, n, drain);
        }
        if self.latest_checkpoint == n && self.phase != Phase::Finished {
            // F1.11 step 4 (Flink's `setSynchronousSavepoint` in `performCheckpoint`). Only a
            // task that performed it: one that declined it (closing, F1.8) does not fail on its
            // abort (F1.11 step 5, `stop-with-savepoint-declined-by-closing-source`).
            self.stop.sync_savepoint = Some(n);
        }
    }

    /// F1.11 step 2: the source emits no more records; with drain its input ends as a bounded
    /// source's does, without drain EndOfData(no drain) goes out and no operator finishes.
    fn stop_source(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64, drain: bool) {
        ctx.record(TraceEvent::SourceStopped {
            subtask: self.id,
            attempt: self.attempt,
            checkpoint: n,
            drain,
        });
        if drain || ctx.config.bug == Some(Bug::DrainOnNoDrain) {
            self.end_of_input(ctx);
        } else {
            self.stop_input(ctx);
        }
    }

    /// F1.11 step 2 (Flink's `endData(NO_DRAIN)`): the input stopped; operators do not
    /// finish (a keyed sum keeps its totals in its state), EndOfData without drain goes on,
    /// and the task waits like one at end of input (F1.5 step 3).
    fn stop_input(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.stop.no_drain = true;
        self.phase = Phase::EndOfInput;
        self.broadcast(ctx, Element::EndOfData(StopMode::NoDrain));
        self.check_close(ctx);
    }

    /// EndOfData of `mode` was taken and every input has now delivered one (F1.5 step 1):
    /// the input ended, or, if any channel stopped without drain, it stopped (Flink drains
    /// only when every channel asks it to, F1.11 step 2).
    pub(super) fn on_end_of_data(&mut self, ctx: &mut TaskCtx<'_, '_>, mode: StopMode) {
        if mode == StopMode::NoDrain {
            self.stop.no_drain_inputs += 1;
        }
        if self.data_inputs > 0 {
            return;
        }
        if self.stop.no_drain_inputs > 0 && ctx.config.bug != Some(Bug::DrainOnNoDrain) {
            self.stop_input(ctx);
        } else {
            self.end_of_input(ctx);
        }
    }

    /// The task snapshots checkpoint `n` after its input ended or stopped: the first such one
    /// is its final checkpoint (F1.5 step 2). Returns whether the snapshot is final (its
    /// operators finished): not after a stop without drain (F1.11 step 3). Without drain, the
    /// first checkpoint after the stop is the savepoint, since no other is triggered while it
    /// is pending: the task waits for it (F1.11 step 4).
    pub(super) fn after_input_snapshot(&mut self, n: u64) -> bool {
        if self.final_checkpoint.is_none() {
            self.final_checkpoint = Some(n);
            if self.stop.no_drain && self.stop.sync_savepoint.is_none() {
                self.stop.sync_savepoint = Some(n);
            }
        }
        !self.stop.no_drain
    }

    /// Whether the completion of checkpoint `n` is the one the task waits for before it
    /// finishes: its synchronous savepoint if it performed one (F1.11 step 4, Flink's
    /// `notifyCheckpointComplete`), else any checkpoint at least as new as its final one
    /// (F1.5 step 3).
    pub(super) fn completes_wait(&self, ctx: &TaskCtx<'_, '_>, n: u64) -> bool {
        match self.stop.sync_savepoint {
            Some(s) if ctx.config.bug != Some(Bug::FinishBeforeSavepoint) => n >= s,
            _ => self.final_checkpoint.is_some_and(|f| n >= f),
        }
    }

    /// F1.11 step 5: the abort of the synchronous savepoint the task performed fails the task
    /// (Flink's "Stop-with-savepoint failed."), and the failover restores the job. Returns
    /// whether it failed.
    pub(super) fn savepoint_aborted(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) -> bool {
        if self.stop.sync_savepoint != Some(n) {
            return false;
        }
        self.pending_out.clear();
        self.fail(ctx);
        true
    }
}
