//! The task's output side (Flink's `RecordWriter` and `ResultSubpartition`s): records routed
//! to their output channels, the queue of outputs not yet on the wire, back-pressure when a
//! channel has no credit, and with network buffers (`docs/rules.md` F1.14) the subpartitions'
//! current buffers and the output flusher that sends partly filled ones on the buffer timeout.
//!
//! Outputs leave in emission order: a full channel at the head of the queue blocks everything
//! behind it, as Flink's record writer waits for a buffer, until the consumer returns credit.

use super::chain::Flow;
use super::{Phase, Task};
use crate::bug::Bug;
use crate::graph::ChannelId;
use crate::record::{Element, Record};
use crate::trace::TraceEvent;
use crate::world::{Event, TaskCtx};

impl Task {
    /// Routes a record to one channel of every output gate.
    pub(super) fn emit(&mut self, ctx: &mut TaskCtx<'_, '_>, record: Record) {
        self.route(ctx, record, |task, _, channel| {
            task.pending_out
                .push_back((channel, Element::Record(record)));
        });
    }

    /// The channel of each output gate `record` goes to, gate by gate, given to `place`.
    #[inline]
    fn route(
        &mut self,
        ctx: &mut TaskCtx<'_, '_>,
        record: Record,
        mut place: impl FnMut(&mut Task, &mut TaskCtx<'_, '_>, ChannelId),
    ) {
        let graph = ctx.graph;
        let misroute = ctx.config.bug == Some(Bug::MisrouteKeyGroup);
        for (g, gate) in graph.subtasks[self.id.index()].outputs.iter().enumerate() {
            let channel = graph.route(gate, &record, &mut self.round_robin[g], misroute);
            place(self, ctx, channel);
        }
    }

    /// Queues an event (barrier, EndOfData, EndOfPartition) on every output channel, behind
    /// everything emitted before it.
    pub(super) fn broadcast(&mut self, ctx: &TaskCtx<'_, '_>, element: Element) {
        for gate in &ctx.graph.subtasks[self.id.index()].outputs {
            for &channel in &gate.channels {
                self.pending_out.push_back((channel, element));
            }
        }
    }

    /// Pushes pending outputs until one needs credit its channel does not have. Returns false
    /// when blocked.
    ///
    /// Inlined for its first check: a step flushes before it takes anything, and then almost
    /// always finds nothing queued (a call for that cost about 4% of `streaming-100-buffers`).
    #[inline(always)]
    pub(super) fn flush(&mut self, ctx: &mut TaskCtx<'_, '_>) -> bool {
        self.pending_out.is_empty() || self.flush_pending(ctx)
    }

    /// [`Task::flush`] with outputs queued (out of line, so that `flush` stays small).
    #[inline(never)]
    fn flush_pending(&mut self, ctx: &mut TaskCtx<'_, '_>) -> bool {
        if ctx.io.data.uses_buffers() {
            return self.flush_into_buffers(ctx);
        }
        while let Some(&(channel, element)) = self.pending_out.front() {
            if element.needs_credit() && ctx.io.data.is_full(channel) {
                self.block(ctx, channel);
                return false;
            }
            self.pending_out.pop_front();
            ctx.push(channel, element);
        }
        true
    }

    /// What `flow` then `flush` do with a record that came out of the chain, in one go: with
    /// network buffers and nothing queued before it, the record is routed and written straight
    /// into its channels' current buffers (`write_record`), without the queue of pending
    /// outputs; a copy that finds no credit waits at the head of that queue, the copies for
    /// later gates behind it, and the task blocks, as `flush` would have left them. Returns
    /// false when blocked.
    ///
    /// *Why:* every record of a job takes this path once per hop; through the queue it cost
    /// about a sixth of the instructions of `streaming-100-buffers`.
    #[inline]
    pub(super) fn flow_and_flush(&mut self, ctx: &mut TaskCtx<'_, '_>, flow: Flow) -> bool {
        let Flow::Emit(record) = flow else {
            self.flow(ctx, flow);
            return self.flush(ctx);
        };
        if !self.pending_out.is_empty() || !ctx.io.data.uses_buffers() {
            self.emit(ctx, record);
            return self.flush(ctx);
        }
        let element = Element::Record(record);
        self.route(ctx, record, |task, ctx, channel| {
            if !task.pending_out.is_empty() {
                task.pending_out.push_back((channel, element));
            } else if !task.write_record(ctx, channel, element) {
                task.pending_out.push_back((channel, element));
                task.block(ctx, channel);
            }
        });
        self.pending_out.is_empty()
    }

    /// F1.14 steps 1 and 2: serialises a record into `channel`'s current buffer, sending the
    /// buffer first when it is full, and after the record when that filled it (or at once,
    /// with a zero buffer timeout). False, with nothing written, when the full buffer has no
    /// credit: the caller blocks.
    #[inline]
    fn write_record(
        &mut self,
        ctx: &mut TaskCtx<'_, '_>,
        channel: ChannelId,
        element: Element,
    ) -> bool {
        // F1.14 step 2: a full buffer goes before the record can be written.
        if ctx.io.data.current_full(channel) && !ctx.send_buffer(channel) {
            return false;
        }
        ctx.io.data.write(channel, element);
        if ctx.io.data.current_full(channel) || ctx.io.data.sends_every_record() {
            ctx.send_buffer(channel); // without credit it waits (full: the next write blocks)
        }
        true
    }

    /// F1.14 step 1-3: serialises pending records into their channels' current buffers,
    /// sending a buffer when it is full (or at once, with a zero buffer timeout) and before an
    /// event. A buffer that must go and has no credit blocks the task. Returns false when
    /// blocked.
    fn flush_into_buffers(&mut self, ctx: &mut TaskCtx<'_, '_>) -> bool {
        while let Some(&(channel, element)) = self.pending_out.front() {
            if element.needs_credit() {
                if !self.write_record(ctx, channel, element) {
                    self.block(ctx, channel);
                    return false;
                }
                self.pending_out.pop_front();
            } else {
                // P1.5 with buffers (F1.14 step 8): a draining task sends EndOfPartition on no
                // channel before its data is on the wire on every channel.
                if element == Element::EndOfPartition
                    && self.draining(ctx)
                    && ctx.config.bug != Some(Bug::EopWhileDraining)
                {
                    if let Some(waiting) = self.send_every_buffer(ctx) {
                        self.block(ctx, waiting);
                        return false;
                    }
                }
                // F1.14 step 3: an event follows the data before it, in a buffer of its own.
                if ctx.io.data.unsent(channel) > 0 && !ctx.send_buffer(channel) {
                    self.block(ctx, channel);
                    return false;
                }
                self.pending_out.pop_front();
                ctx.push(channel, element);
            }
        }
        true
    }

    /// Whether the task is closing and still running while its result partition drains
    /// (P1.5, `flush_before_finish` with unaligned checkpoints): it takes part in checkpoints
    /// until everything is on the wire, and its unaligned barrier overtakes what is queued.
    pub(super) fn draining(&self, ctx: &TaskCtx<'_, '_>) -> bool {
        self.phase == Phase::Closing && ctx.config.unaligned && ctx.config.flush_before_finish
    }

    /// P1.5 with buffers (F1.14 step 8): sends every output channel's unsent buffer; returns
    /// the first channel whose buffer waits for credit, if any.
    ///
    /// *Why:* without buffers every EndOfPartition goes on the wire at once, after the last
    /// record, and the task finishes in the same step, so a draining task never has a channel
    /// that already carries EndOfPartition. With buffers each channel's EndOfPartition waits
    /// behind that channel's unsent data, so EndOfPartition could leave on one channel while
    /// another still waits for credit. A checkpoint triggered in that window would send the
    /// task's unaligned barrier behind EndOfPartition there; the consumer would finish
    /// without it while the coordinator's plan waits for its acknowledgement (the stall of
    /// fuzz seed 18880, `checkpoint-progress`). Holding every EndOfPartition until all data is
    /// sent keeps P1.5's premise: while the task runs, its barrier can overtake everything it
    /// has not yet sent, EndOfPartition included. Flink adds EndOfPartition to every
    /// subpartition at once and lets them drain apart; its own finish protocol (F1.5) sends it
    /// only after the final checkpoint, when no barrier can follow.
    fn send_every_buffer(&self, ctx: &mut TaskCtx<'_, '_>) -> Option<ChannelId> {
        let outputs = &ctx.graph.subtasks[self.id.index()].outputs;
        let mut waiting = None;
        for channel in outputs
            .iter()
            .flat_map(|gate| gate.channels.iter().copied())
        {
            if ctx.io.data.unsent(channel) > 0 && !ctx.send_buffer(channel) && waiting.is_none() {
                waiting = Some(channel);
            }
        }
        waiting
    }

    /// Waits for credit on `channel` (back-pressure).
    fn block(&mut self, ctx: &mut TaskCtx<'_, '_>, channel: ChannelId) {
        ctx.io.data.wait_for_credit(channel);
        self.blocked_on = Some(channel);
        ctx.record(TraceEvent::Blocked {
            subtask: self.id,
            channel,
        });
    }

    /// F1.14 step 4: the output flusher fired. Every partly filled buffer that has credit goes
    /// on the wire; one without stays current (it goes when full, before an event, or at the
    /// next flush). The flusher runs until the task has nothing left to send.
    pub fn on_output_flush(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        self.catch_up(ctx); // F1.14 step 11: what is due goes with this flush
        let mut left = false;
        for gate in &ctx.graph.subtasks[self.id.index()].outputs {
            for &channel in &gate.channels {
                if ctx.io.data.unsent(channel) > 0 && !ctx.send_buffer(channel) {
                    left = true;
                }
            }
        }
        self.flusher_armed = false;
        // A task blocked on a buffer it now sent is woken by that buffer's credit, as before:
        // waking it here would also wake an attempt whose partition a failover released.
        if self.phase != Phase::Finished || left {
            self.arm_output_flush(ctx);
        }
        self.rearm(ctx);
    }

    /// F1.14: the next firing of the output flusher, one buffer timeout from now, unless one
    /// is due already (none with a zero timeout, which sends after every record, or without
    /// outputs). It is armed when the task is RUNNING and again at every firing, so a task
    /// never writes a record while it is not armed: a finished task's flusher stops once
    /// nothing is left in a current buffer, and a finished task writes nothing.
    pub(super) fn arm_output_flush(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        let Some(settings) = ctx.io.data.buffer_settings() else {
            return;
        };
        if self.flusher_armed
            || settings.timeout == sim::Duration::ZERO
            || ctx.graph.subtasks[self.id.index()].outputs.is_empty()
        {
            return;
        }
        self.flusher_armed = true;
        ctx.sched.after(
            settings.timeout,
            Event::OutputFlush {
                subtask: self.id,
                attempt: self.attempt,
            },
        );
    }
}
