//! The task's side of at-least-once checkpoints (`docs/rules.md` F1.7): what it does with a
//! barrier, an EndOfPartition and a trigger RPC when its
//! [`BarrierTracker`](super::tracker::BarrierTracker) counts barriers instead of aligning them.

use super::tracker::Complete;
use super::Task;
use crate::bug::Bug;
use crate::scenario::FinishProtocol;
use crate::trace::{DeclineReason, TraceEvent};
use crate::world::TaskCtx;

impl Task {
    /// F1.7: barrier `n` was dequeued from `slot`. It blocks nothing; it counts for `n` if `n`
    /// is pending, or starts `n` if `n` is newer than any checkpoint the task knew.
    pub(super) fn on_tracked_barrier(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32, n: u64) {
        let tracker = self.tracker.as_mut().expect("at least once");
        let complete = if tracker.is_pending(n) {
            tracker.barrier(n, slot)
        } else if self.cancel_aborted_ahead(ctx, n) || self.is_stale(n) {
            None // snapshotted, dropped behind a newer one, or aborted: it cannot complete here
        } else if ctx.config.bug == Some(Bug::SnapshotAtFirstBarrier) {
            self.learn_of(ctx, n, false);
            Some(Complete {
                checkpoint: n,
                started: ctx.now,
                past_barrier: 0,
                aborted: false,
            }) // the bug: as if the other channels had delivered their barriers too
        } else {
            self.learn_of(ctx, n, false);
            self.start_tracking(ctx, n, Some(slot))
        };
        if let Some(complete) = complete {
            self.tracked(ctx, complete);
        }
        self.requeue(ctx, slot);
    }

    /// F1.7: EndOfPartition on `slot` counts for every pending checkpoint (the channel sends
    /// no barrier any more). Under `legacy` it aborts them, as it aborts an alignment (F1.3).
    pub(super) fn track_end_of_partition(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32) {
        let legacy = self.protocol(ctx) == Some(FinishProtocol::Legacy);
        let tracker = self.tracker.as_mut().expect("at least once");
        if legacy {
            let aborted: Vec<u64> = tracker.abort_all().collect();
            for n in aborted {
                self.decline(ctx, n, DeclineReason::InputEndOfStream);
                self.cancel_downstream(ctx, n);
            }
        } else if ctx.config.bug == Some(Bug::EopNotCounted) {
            // The bug: the channel is closed, but pending checkpoints still wait for it.
        } else if let Some(complete) = tracker.end_of_partition(slot) {
            self.tracked(ctx, complete);
        }
    }

    /// F1.7 with a trigger RPC: a task whose inputs all ended snapshots at once (P1.3 step 5),
    /// and so does a `flink` task with open inputs (F1.4). Otherwise (the JobMaster sees the
    /// producers finished, but their EndOfPartition is still on its way) the checkpoint waits
    /// until every open channel's EndOfPartition is processed (P1.3 step 4).
    pub(super) fn on_tracked_trigger(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        self.learn_of(ctx, n, true);
        let at_once = self.open_inputs == 0
            || (self.protocol(ctx) == Some(FinishProtocol::Flink)
                && ctx.config.bug != Some(Bug::TriggerWaitsForInput));
        let complete = if at_once {
            let tracker = self.tracker.as_mut().expect("at least once");
            tracker.completed_at_once(n);
            Some(Complete {
                checkpoint: n,
                started: ctx.now,
                past_barrier: 0,
                aborted: false,
            })
        } else {
            self.start_tracking(ctx, n, None)
        };
        if let Some(complete) = complete {
            self.tracked(ctx, complete);
        }
    }

    fn start_tracking(
        &mut self,
        ctx: &TaskCtx<'_, '_>,
        n: u64,
        slot: Option<u32>,
    ) -> Option<Complete> {
        let inputs = ctx.graph.subtasks[self.id.index()].inputs.len();
        let open = self.open_inputs;
        let tracker = self.tracker.as_mut().expect("at least once");
        tracker.start(n, slot, (inputs, open), ctx.now)
    }

    /// F1.7: every channel open at checkpoint `complete`'s first barrier delivered it or
    /// ended: snapshot, forward, acknowledge.
    fn tracked(&mut self, ctx: &mut TaskCtx<'_, '_>, complete: Complete) {
        if complete.aborted && ctx.config.bug != Some(Bug::SnapshotAbortedCheckpoint) {
            // F1.7 step 6, F1.10 step 2: the JobMaster told the task that this checkpoint was
            // aborted while it counted its barriers. Where it would snapshot it sends a
            // cancellation marker instead, and neither snapshots nor declines (Flink's
            // `SubtaskCheckpointCoordinatorImpl.checkpointState` finds the id in
            // `abortedCheckpointIds`).
            return self.cancel_downstream(ctx, complete.checkpoint);
        }
        let waited = ctx.now - complete.started;
        ctx.record(TraceEvent::BarriersCounted {
            subtask: self.id,
            checkpoint: complete.checkpoint,
            waited,
            past_barrier: complete.past_barrier,
        });
        if let Some(record) = ctx.io.stats.get_mut(complete.checkpoint) {
            record.alignments.push((self.id, waited));
        }
        self.perform_checkpoint(ctx, complete.checkpoint);
    }
}
