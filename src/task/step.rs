//! The task's step (`docs/rules.md` F1.14 step 9 for network buffers): what a task does when
//! it is free, one unit of work at a time as Flink's mailbox thread: flush its outputs, then take
//! one element from an input channel (with buffers, a record and the rest of its buffer) or, for
//! a source, emit the next record, and be busy for the processing time; or go idle.

use super::*;
use crate::record::digest;

impl Task {
    /// Steps when idle: not in a step, not waiting for credit.
    pub(super) fn wake(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        let work = (self.phase != Phase::Finished || !self.pending_out.is_empty())
            && self.state != ExecutionState::Initializing;
        if !self.step_scheduled && self.blocked_on.is_none() && work {
            self.step(ctx);
        }
    }

    /// Does as much as the task can do now: flush outputs, then take one unit of work and
    /// schedule the end of its processing time, or go idle.
    pub(super) fn step(&mut self, ctx: &mut TaskCtx<'_, '_>) {
        loop {
            if !self.flush(ctx) {
                return;
            }
            match self.phase {
                Phase::Processing | Phase::EndOfInput => {}
                Phase::Closing => return self.finish(ctx),
                Phase::Finished => return,
            }
            if self.chain.is_source() {
                if self.phase == Phase::Processing {
                    match self.chain.next_source_seq() {
                        Some(seq) => {
                            let record = source_record(self.origin, seq);
                            let flow = self.chain.emitted_by_head(record);
                            self.flow_and_flush(ctx, flow);
                            let pause = draw(&mut ctx.io.workload, self.chain.source_interval());
                            self.pace(ctx, pause); // F1.14 step 11
                        }
                        None => match self.chain.idle() {
                            Idle::End => {
                                self.end_of_input(ctx);
                                continue;
                            }
                            // F1.13 step 1: a reader holding no split asks for one and waits.
                            Idle::Request => self.send(ctx, Call::RequestSplit),
                            Idle::Wait => {}
                        },
                    }
                }
                return;
            }
            if self.phase == Phase::Processing {
                if let Some((channel, record)) = self.replay.pop_front() {
                    // Restored channel state, in the order it was in flight (P1.8).
                    ctx.record(TraceEvent::Take {
                        subtask: self.id,
                        channel,
                        element: Element::Record(record),
                    });
                    self.process(ctx, record);
                    return;
                }
            }
            let Some((slot, channel)) = self.available.pop_front() else {
                return; // idle until input arrives
            };
            if self.barriers.is_blocked(slot) || ctx.io.data.buffered(channel) == 0 {
                // Blocked by alignment since it was queued (it comes back when unblocked), or
                // a second entry for a channel already drained.
                continue;
            }
            // F1.14 step 9: with buffers, a record is taken with the rest of its buffer, and
            // the channel goes back in the queue after them (`process_buffer`).
            if ctx.io.data.uses_buffers()
                && matches!(ctx.io.data.element(channel, 0), Element::Record(_))
            {
                return self.process_buffer(ctx, slot, channel);
            }
            let element = self.take(ctx, channel);
            let blocks = matches!(element, Element::Barrier(_));
            if ctx.io.data.buffered(channel) > 0 && !blocks {
                self.available.push_back((slot, channel));
            }
            match element {
                Element::Record(record) => {
                    self.note_taken(slot, record);
                    self.process(ctx, record);
                    return;
                }
                Element::Barrier(n) => self.on_barrier(ctx, slot, channel, n),
                // Buffered before this task was running: act on it now.
                Element::PriorityBarrier(n) => self.on_priority_barrier(ctx, slot, n),
                Element::EndOfData(mode) => {
                    // F1.5 step 1: tell the producer at once that all its records were
                    // processed (over the network, with a channel's latency).
                    let latency = draw(&mut ctx.io.workload, ctx.config.channel_latency);
                    ctx.sched.after(
                        latency,
                        Event::AllRecordsProcessed {
                            channel,
                            epoch: ctx.io.data.epoch(channel),
                        },
                    );
                    self.data_inputs -= 1;
                    self.on_end_of_data(ctx, mode);
                }
                Element::EndOfPartition => self.on_eop_processed(ctx, slot),
                Element::CancelMarker(n) => self.on_cancel_marker(ctx, slot, n),
            }
        }
    }

    /// A record was taken from input `slot`: what spills or counts it learns of it.
    #[inline]
    pub(super) fn note_taken(&mut self, slot: u32, record: Record) {
        debug_assert_eq!(self.phase, Phase::Processing, "a record after end of input");
        if let Some(u) = &mut self.unaligned {
            u.taken(slot, record);
        }
        if let Some(t) = &mut self.tracker {
            t.record_taken(slot);
        }
    }

    /// Runs the chain on one record and charges its processing time.
    pub(super) fn process(&mut self, ctx: &mut TaskCtx<'_, '_>, record: Record) {
        let flow = self.chain.process(record);
        self.flow(ctx, flow);
        self.flush(ctx);
        let cost = draw(&mut ctx.io.workload, self.process_time);
        self.schedule_step(ctx, cost);
    }

    /// F1.14 step 9: `count` records of the oldest data buffer of `channel` were popped: a
    /// producer waiting for the credit a recycled buffer frees is woken.
    #[inline]
    fn wake_producer(&self, ctx: &mut TaskCtx<'_, '_>, channel: ChannelId, count: u32) {
        if let Some(channel) = ctx.io.data.took_records(channel, count) {
            ctx.sched
                .after(sim::Duration::ZERO, Event::Credit { channel });
        }
    }

    /// Takes the oldest element of input `channel`: a producer waiting for the credit this
    /// frees is woken, and the take is in the trace.
    pub(super) fn take(&self, ctx: &mut TaskCtx<'_, '_>, channel: ChannelId) -> Element {
        let (element, wake_producer) = ctx.io.data.take(channel);
        if let Some(channel) = wake_producer {
            ctx.sched
                .after(sim::Duration::ZERO, Event::Credit { channel });
        }
        ctx.record(TraceEvent::Take {
            subtask: self.id,
            channel,
            element,
        });
        element
    }

    /// F1.14 step 9: takes the oldest record of `channel` and the records after it in the same
    /// network buffer, runs the chain on each in one step, and charges the sum of their
    /// processing times. A record whose outputs find no credit ends the step there, the rest
    /// of the buffer staying queued, as a single record's step would. The records taken are
    /// one trace event at the step's end, after what their outputs sent (step 10).
    ///
    /// *Why:* Flink's input reads a buffer's records one after the other before it polls the
    /// next buffer (`StreamTaskNetworkInput` drains its record deserializer first), so nothing
    /// from another channel comes between them; and one kernel event per buffer instead of
    /// one per record is what lets a job at realistic rates run faster than real time. What
    /// the task does is the same as record by record, but earlier: the records' outputs are
    /// written at the step's start and the task is then busy for the whole buffer.
    pub(super) fn process_buffer(
        &mut self,
        ctx: &mut TaskCtx<'_, '_>,
        slot: u32,
        channel: ChannelId,
    ) {
        let mut taken = std::mem::take(&mut self.taken);
        taken.clear();
        let mut busy = sim::Duration::ZERO;
        // The records are popped one by one and the buffer's bookkeeping done once: after the
        // last one's pop, which recycles the buffer and may wake its producer (before that
        // record's outputs, as a take of it alone would), or where an output blocks.
        let left = ctx.io.data.left_of_buffer(channel);
        for k in 1..=left {
            let record = ctx.io.data.pop_record(channel);
            if k == left {
                self.wake_producer(ctx, channel, left);
            }
            self.note_taken(slot, record);
            taken.push(record);
            let flow = self.chain.process(record);
            let unblocked = self.flow_and_flush(ctx, flow);
            busy = busy + draw(&mut ctx.io.workload, self.process_time);
            if !unblocked {
                if k < left {
                    self.wake_producer(ctx, channel, k);
                }
                break;
            }
        }
        let event = TraceEvent::BufferTaken {
            subtask: self.id,
            channel,
            records: taken.len() as u32,
            digest: digest(&taken),
        };
        let subtask = self.id;
        ctx.record_buffer(event, &taken, |record| TraceEvent::Take {
            subtask,
            channel,
            element: Element::Record(record),
        });
        self.taken = taken;
        if ctx.io.data.buffered(channel) > 0 {
            self.available.push_back((slot, channel));
        }
        self.schedule_step(ctx, busy);
    }

    pub(super) fn schedule_step(&mut self, ctx: &mut TaskCtx<'_, '_>, delay: sim::Duration) {
        self.step_scheduled = true;
        ctx.step_after(delay, self.id, self.attempt);
    }
}
