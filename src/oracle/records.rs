//! The record-level feed of the streaming oracles: a record pushed on a channel or taken from
//! it, one at a time or, with network buffers, a buffer's records in one call (F1.14 step 10),
//! judged exactly as one record event each.

use super::{Oracles, Sunk};
use crate::checkpoint::storage::CheckpointStorage;
use crate::faults::FaultPlan;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::record::Record;
use crate::scenario::Delivery;
use crate::trace::TraceEvent;
use sim::Instant;

impl Oracles {
    /// A record was pushed on `channel`: counted there, and as emitted if a source made it.
    #[inline]
    pub(super) fn pushed_record(
        &mut self,
        graph: &ExecutionGraph,
        channel: ChannelId,
        record: Record,
    ) {
        self.sent[channel.index()] += 1;
        let from = graph.channels[channel.index()].from;
        if self.is_source[from.index()] && record.origin == from {
            let emitted = &mut self.emitted[from.index()];
            *emitted = (*emitted).max(record.seq + 1);
        }
    }

    /// `subtask` took a record from `channel` (trace event `index`): counted there, and as
    /// output if the subtask is an at-least-once sink.
    #[inline]
    pub(super) fn took_record(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        channel: ChannelId,
        record: Record,
        index: u64,
    ) {
        self.processed[channel.index()] += 1;
        // A record taken by an at-least-once sink is output; one taken by a chain's head that
        // merely ends in a sink is not yet (F1.12: `chained_sink` says).
        if self.sink[subtask.index()] == Some(Delivery::AtLeastOnce)
            && self.sink_heads[subtask.index()]
        {
            self.sunk.push(Sunk {
                vertex: graph.subtasks[subtask.index()].vertex.0,
                record,
                event_index: index,
            });
        }
    }

    #[inline]
    pub(super) fn observe_trigger_at_once(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) {
        if let Some(v) = self
            .trigger_at_once
            .as_mut()
            .and_then(|t| t.observe(graph, index, now, event))
        {
            self.violate(v);
        }
    }

    /// F1.14 step 10: sees a network buffer's `records` (its send, arrival or take, `event`),
    /// judging each as its own record-level event (`as_event`) at the buffer event's `index`:
    /// exactly what one `observe` per record event would find, in one call. On the records'
    /// short path (see `observe`) a buffer is counted whole.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn observe_buffer(
        &mut self,
        graph: &ExecutionGraph,
        storage: &CheckpointStorage,
        faults: &FaultPlan,
        index: u64,
        now: Instant,
        event: &TraceEvent,
        records: &[Record],
        as_event: &impl Fn(Record) -> TraceEvent,
    ) {
        if self.plain_records && self.counts_buffer(graph, index, event, records) {
            return;
        }
        self.observe_each(graph, storage, faults, index, now, records, as_event);
    }

    /// [`Oracles::observe_buffer`] off the short path: one `observe` per record. Kept out of
    /// line, so that `observe` stays inlined in `Ctx::record` alone (left to the inliner, a
    /// second caller made it call `observe` out of line on every event, +8% instructions on
    /// `.ci/perf-check`).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn observe_each(
        &mut self,
        graph: &ExecutionGraph,
        storage: &CheckpointStorage,
        faults: &FaultPlan,
        index: u64,
        now: Instant,
        records: &[Record],
        as_event: &impl Fn(Record) -> TraceEvent,
    ) {
        for &record in records {
            self.observe(graph, storage, faults, index, now, &as_event(record));
        }
    }

    /// The short path of [`Oracles::observe_buffer`]: what `observe`'s short path does with
    /// each record of the buffer, for the buffer at once; false where it would not take that
    /// path (a subtask that must stay finished, a trigger awaited by `trigger-at-once`).
    #[inline]
    fn counts_buffer(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        event: &TraceEvent,
        records: &[Record],
    ) -> bool {
        match *event {
            TraceEvent::BufferArrived { .. } => true,
            TraceEvent::BufferSent { channel, .. } => {
                let from = graph.channels[channel.index()].from;
                if self.must_stay_finished[from.index()] {
                    return false;
                }
                // `pushed_record` for the buffer at once (one lookup of the source, not one a
                // record: folding it onto `pushed_record` cost 3% on the buffered bench).
                self.sent[channel.index()] += records.len() as u64;
                if self.is_source[from.index()] {
                    let emitted = &mut self.emitted[from.index()];
                    for r in records.iter().filter(|r| r.origin == from) {
                        *emitted = (*emitted).max(r.seq + 1);
                    }
                }
                true
            }
            TraceEvent::BufferTaken {
                subtask, channel, ..
            } => {
                if self.must_stay_finished[subtask.index()]
                    || !self
                        .trigger_at_once
                        .as_ref()
                        .is_none_or(|t| t.awaits_nothing())
                {
                    return false;
                }
                // `took_record` for the buffer at once.
                self.processed[channel.index()] += records.len() as u64;
                if self.sink[subtask.index()] == Some(Delivery::AtLeastOnce)
                    && self.sink_heads[subtask.index()]
                {
                    self.sunk_all(graph, subtask, records, index);
                }
                true
            }
            // F1.14 step 12: what `observe` does with each `commit` of the transaction (no
            // oracle but the output's looks at a commit, nor at `transaction_committed`).
            TraceEvent::TransactionCommitted { subtask, .. } => {
                self.sunk_all(graph, subtask, records, index);
                true
            }
            _ => false,
        }
    }

    /// `records` are output of `subtask`'s sink, seen at trace event `index`.
    fn sunk_all(
        &mut self,
        graph: &ExecutionGraph,
        subtask: SubtaskId,
        records: &[Record],
        index: u64,
    ) {
        let vertex = graph.subtasks[subtask.index()].vertex.0;
        self.sunk.extend(records.iter().map(|&record| Sunk {
            vertex,
            record,
            event_index: index,
        }));
    }
}
