//! The CheckpointCoordinator's notifications at a task: a completed checkpoint commits the
//! transactions pre-committed up to it (P1.7) and may end the wait for the final checkpoint
//! (F1.5 step 3) or the synchronous savepoint (F1.11 step 4); an aborted one cancels its
//! alignment, its asynchronous part (F1.8) and, for the savepoint the task performed, the task
//! itself (F1.11 step 5).

use super::{Phase, Task};
use crate::record::{digest, Record};
use crate::trace::TraceEvent;
use crate::world::TaskCtx;

impl Task {
    pub(super) fn on_checkpoint_complete(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        if self.phase == Phase::Finished {
            return;
        }
        // A completed checkpoint settles every older one the task performed.
        self.unnotified.retain(|&c| c > n);
        let transactions = self.chain.commit(n);
        self.commit(ctx, transactions);
        if self.completes_wait(ctx, n) {
            self.final_complete = true;
        }
        self.check_close(ctx);
    }

    /// Commits transactions in the external system. Committing is idempotent there (a
    /// transaction id is committed at most once, as Kafka's `commitTransaction` after
    /// `recoverAndCommit`), so a transaction committed before a failure and again on restore
    /// counts once.
    pub(super) fn commit(
        &mut self,
        ctx: &mut TaskCtx<'_, '_>,
        transactions: Vec<(u64, Vec<Record>)>,
    ) {
        for (checkpoint, records) in transactions {
            if records.is_empty() || !ctx.io.external.commit(self.id, checkpoint) {
                continue;
            }
            if ctx.io.data.uses_buffers() {
                // F1.14 step 12: the transaction is one trace event; the oracles see each of
                // its records as its `commit`.
                let subtask = self.id;
                let event = TraceEvent::TransactionCommitted {
                    subtask,
                    checkpoint,
                    records: records.len() as u64,
                    digest: Some(digest(&records)),
                };
                ctx.record_buffer(event, &records, |record| TraceEvent::Commit {
                    subtask,
                    checkpoint,
                    record,
                });
                continue;
            }
            for &record in &records {
                ctx.record(TraceEvent::Commit {
                    subtask: self.id,
                    checkpoint,
                    record,
                });
            }
            ctx.record(TraceEvent::TransactionCommitted {
                subtask: self.id,
                checkpoint,
                records: records.len() as u64,
                digest: None,
            });
        }
    }

    pub(super) fn on_checkpoint_aborted(&mut self, ctx: &mut TaskCtx<'_, '_>, n: u64) {
        if self.phase == Phase::Finished || self.savepoint_aborted(ctx, n) {
            return;
        }
        self.unnotified.remove(&n);
        // F1.8: an abort cancels the checkpoint's asynchronous part. When that was the last
        // upload a closing task waited for, it goes on without `after_upload`: one waiting to
        // close (still at end of input, every input ended) is closed by `check_close` below;
        // one waiting to finish (Closing, its output flushed, no step scheduled) is finished
        // by the step `on_rpc`'s `wake` runs, at this instant. (Fuzz 0..20000: identical
        // trace hashes without the call.)
        self.uploading.retain(|(c, _)| *c != n);
        if self.barriers.alignment().is_some_and(|a| a.checkpoint == n) {
            self.abandon_alignment(ctx);
            self.cancel_downstream(ctx, n);
        }
        if self.unaligned.as_ref().is_some_and(|u| u.checkpoint == n) {
            self.unaligned = None;
            self.cancel_downstream(ctx, n);
        }
        // F1.7 step 6: at least once, a checkpoint whose barriers are still being counted is
        // not snapshotted when the count completes (the marker goes out then, F1.10 step 2).
        if let Some(tracker) = self.tracker.as_mut() {
            tracker.abort_notified(n);
        }
        // The abort can overtake the checkpoint's barriers (RPC against data path). Remember
        // it, as Flink's SubtaskCheckpointCoordinatorImpl remembers aborted ids, so that
        // barrier n, when it comes, is stale and blocks no channel: nobody upstream will
        // complete its alignment any more. Older checkpoints stay live.
        if n > self.latest_checkpoint {
            self.aborted_ahead.insert(n);
        }
        self.check_close(ctx);
    }
}
