//! The task's side of cancellation markers (`docs/rules.md` F1.10; Flink's
//! `CancelCheckpointMarker`), with `checkpointing.cancel_markers` on.
//!
//! A task that abandons a checkpoint on its own (a newer barrier subsumed it, EndOfPartition
//! aborted it under `legacy`, or the JobMaster's abort notice came before the task had
//! snapshotted it) tells its consumers in band: a marker goes on every output channel, behind
//! what the task already sent. A consumer that takes a marker for a checkpoint it is aligning,
//! or for one newer than any it knew, aborts it there: it unblocks its channels, declines
//! (`declined_on_cancellation_barrier`) and passes the marker on. A marker for an older
//! checkpoint, or for one the task is done with, changes nothing. A marker never blocks its
//! channel.

use super::Task;
use crate::bug::Bug;
use crate::record::Element;
use crate::trace::DeclineReason;
use crate::world::TaskCtx;

impl Task {
    /// F1.10: the task abandoned checkpoint `n`: its consumers hear of it in band.
    pub(super) fn cancel_downstream(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        if ctx.config.cancel_markers {
            self.broadcast(ctx, Element::CancelMarker(n));
        }
    }

    /// F1.10: a barrier or trigger of `n` reaches a task the JobMaster already told that `n`
    /// was aborted. Flink's task then broadcasts a marker where it would have snapshotted;
    /// here it does so as soon as it learns of `n` (it does not align `n` first). Returns
    /// whether it did.
    #[inline]
    pub(super) fn cancel_aborted_ahead(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) -> bool {
        if !ctx.config.cancel_markers || !self.aborted_ahead.contains(&n) {
            return false;
        }
        self.cancel_before_seen(ctx, n);
        true
    }

    /// Kept out of line: it is off the path of every run without markers.
    #[inline(never)]
    fn cancel_before_seen(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        self.subsume(ctx);
        self.learn_of(ctx, n, false);
        self.cancel_downstream(ctx, n);
    }

    /// F1.10: a cancellation marker for `n` was taken from `slot`. Out of line: the step
    /// loop stays as small as it was for runs without markers.
    #[inline(never)]
    pub(super) fn on_cancel_marker(&mut self, ctx: &mut TaskCtx<'_, '_>, slot: u32, n: u64) {
        if ctx.config.bug == Some(Bug::CancelMarkerAsBarrier) {
            // The bug: the marker counts as the channel's barrier.
            return self.on_barrier(ctx, slot, self.input(ctx, slot), n);
        }
        if self.tracker.is_some() {
            return self.on_tracked_cancel(ctx, n);
        }
        let current = self
            .barriers
            .alignment()
            .map(|a| a.checkpoint)
            .or(self.unaligned.as_ref().map(|u| u.checkpoint));
        if n > self.latest_checkpoint {
            // Cancelled before it began here: an older checkpoint still in progress is
            // dropped without a decline (Flink's `abortInternal` with a newer id).
            self.drop_in_progress(ctx);
            self.learn_of(ctx, n, false);
        } else if current == Some(n) {
            self.drop_in_progress(ctx);
        } else {
            return; // older, or done with here
        }
        self.abort_on_marker(ctx, n);
    }

    /// At least once: a marker for `n` aborts every pending checkpoint up to `n`, and `n`
    /// itself when it is newer than any the task knew (Flink's `CheckpointBarrierTracker`).
    fn on_tracked_cancel(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        let tracker = self.tracker.as_mut().expect("at least once");
        let aborted = tracker.cancel_up_to(n);
        let newer = n > self.latest_checkpoint;
        for &m in &aborted {
            self.abort_on_marker(ctx, m);
        }
        if newer {
            self.learn_of(ctx, n, false);
            self.abort_on_marker(ctx, n);
        }
    }

    /// Ends the alignment or unaligned snapshot in progress, unblocking its channels.
    fn drop_in_progress(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        if self.barriers.alignment().is_some() {
            self.abandon_alignment(ctx);
        }
        self.unaligned = None;
    }

    /// Declines `n` on the marker and passes it on.
    fn abort_on_marker(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        self.decline(ctx, n, DeclineReason::OnCancellationBarrier);
        if ctx.config.bug != Some(Bug::SwallowCancelMarker) {
            self.cancel_downstream(ctx, n);
        }
    }
}
