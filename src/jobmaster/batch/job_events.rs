//! The job event log (P2.2, F2.3): events go to a write buffer that reaches durable storage at the
//! flush interval, when the buffer is full, or when a vertex finishes.

use crate::batch::events::JobEvent;
use crate::bug::Bug;
use crate::status::JobStatus;
use crate::trace::{FlushReason, Logged, TraceEvent};
use crate::world::batch::Batch;
use crate::world::Event;
use sim::{Duration, Instant, Scheduler};

impl Batch {
    /// Appends to the job event store, unless RECONCILING (F2.3); flushes a full buffer.
    pub(crate) fn log(&mut self, sched: &mut Scheduler<'_, Event>, event: JobEvent) {
        let now = sched.now();
        if self.job_status() == JobStatus::Reconciling {
            return;
        }
        // F2.3: after a failed write this JobMaster logs nothing more.
        let failed = self.jm.as_ref().is_some_and(|jm| jm.events_failed);
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
        self.oracles.logged(&event);
        let full = self.store.append(event, self.batch.job_events.buffer_size);
        // The flush timer runs while something is buffered (so an idle run can quiesce).
        let jm = self.jm.as_mut().expect("alive");
        if !jm.flush_pending {
            // The next tick of a timer with period `flush_interval` started with the
            // JobMaster; ticks that would find the buffer empty are never scheduled.
            jm.flush_pending = true;
            let period = self.batch.job_events.flush_interval.as_nanos();
            let elapsed = now.saturating_duration_since(jm.started).as_nanos();
            let next = jm.started + Duration::from_nanos((elapsed / period + 1) * period);
            let incarnation = jm.incarnation;
            sched.at(next, Event::FlushTick { incarnation });
        }
        self.record(now, TraceEvent::JobEventLogged { what, snapshot });
        if full {
            self.flush(now, FlushReason::BufferFull);
        }
    }

    pub(crate) fn flush(&mut self, now: Instant, reason: FlushReason) {
        let events = self.store.flush() as u32;
        if events > 0 {
            self.record(now, TraceEvent::JobEventsFlushed { events, reason });
        }
    }
}
