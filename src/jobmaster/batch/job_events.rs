//! The job event log (P2.2, F2.3): events go to a write buffer that reaches durable storage at the
//! flush interval, when the buffer is full, or when a vertex finishes.

use crate::batch::events::JobEvent;
use crate::bug::Bug;
use crate::jobmaster::batch::AdaptiveBatch;
use crate::jobmaster::With;
use crate::status::JobStatus;
use crate::trace::{FlushReason, Logged, TraceEvent};
use crate::world::batch::Ctx;
use crate::world::{Act, Event};
use sim::Duration;

impl With<'_, AdaptiveBatch> {
    /// Appends to the job event store, unless RECONCILING (F2.3); flushes a full buffer.
    pub(crate) fn log(&mut self, ctx: &mut Ctx<'_, '_>, event: JobEvent) {
        let now = ctx.now();
        if self.leader.status == JobStatus::Reconciling {
            return;
        }
        // F2.3: after a failed write this JobMaster logs nothing more.
        let failed = self.scheduler.events_failed;
        if failed && self.bug != Some(Bug::LogAfterWriteFailure) {
            return;
        }
        let what = match &event {
            JobEvent::VertexInitialized { vertex, .. } => Logged::VertexInitialized(*vertex),
            JobEvent::Finished { subtask, .. } => Logged::Finished(*subtask),
            JobEvent::Reset { subtasks } => Logged::Reset(subtasks.len() as u32),
        };
        let snapshot = matches!(
            &event,
            JobEvent::Finished {
                snapshot: Some(_),
                ..
            }
        );
        ctx.cluster.oracles.logged(&ctx.cluster.graph, &event);
        let full = ctx
            .cluster
            .store
            .append(event, ctx.cluster.batch.job_events.buffer_size);
        // The flush timer runs while something is buffered (so an idle run can quiesce).
        if !self.scheduler.flush_pending {
            // The next tick of a timer with period `flush_interval` started with the
            // JobMaster; ticks that would find the buffer empty are never scheduled.
            self.scheduler.flush_pending = true;
            let period = ctx.cluster.batch.job_events.flush_interval.as_nanos();
            let elapsed = now
                .saturating_duration_since(self.scheduler.started)
                .as_nanos();
            let next =
                self.scheduler.started + Duration::from_nanos((elapsed / period + 1) * period);
            let incarnation = self.leader.incarnation;
            ctx.sched.at(next, Event::FlushTick { incarnation });
        }
        ctx.record(TraceEvent::JobEventLogged { what, snapshot });
        if full {
            self.flush(ctx, FlushReason::BufferFull);
        }
    }

    pub(crate) fn flush(&mut self, ctx: &mut Ctx<'_, '_>, reason: FlushReason) {
        let events = ctx.cluster.store.flush() as u32;
        if events > 0 {
            ctx.record(TraceEvent::JobEventsFlushed { events, reason });
        }
    }

    /// F2.3, fault `job_events_write_failure`: the write that fails loses what the buffer
    /// held, and the store stays closed for the rest of this JobMaster's life (`log`).
    pub(crate) fn write_failed(&mut self, ctx: &mut Ctx<'_, '_>) {
        if self.scheduler.events_failed {
            return; // closed already: nothing more was written to fail
        }
        let events = ctx.cluster.store.lose_buffer() as u32;
        self.scheduler.events_failed = true;
        ctx.record(TraceEvent::JobEventsWriteFailed { events });
    }

    /// P2.2: its JobManager process crashed, and the write buffer with it: what no flush made
    /// durable is lost, unless the injected bug pretends it was written.
    pub(crate) fn lose_write_buffer(&mut self, ctx: &mut Ctx<'_, '_>) {
        if self.bug == Some(Bug::TrustUnflushedEvents) {
            ctx.cluster.store.flush();
            return;
        }
        let events = ctx.cluster.store.lose_buffer() as u32;
        if events > 0 {
            ctx.record(TraceEvent::JobEventsLost { events });
        }
    }
}
