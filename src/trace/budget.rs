//! The work budget of one event: how many trace events a single kernel event may record.
//!
//! The kernel's budgets (events, simulated time, pending events) are checked between events,
//! so they cannot end a handler that never returns: a model bug that loops inside one event
//! (a barrier taken again and again for a new checkpoint, each time acknowledged) would spin
//! or grow until the process runs out of memory, and a campaign would die with it. Every
//! action of the model records a trace event, so the trace is where such a loop shows: past
//! the budget, [`Trace::record`](super::Trace::record) abandons the event by unwinding with
//! [`EventWorkExceeded`], and `run::drive` catches exactly that payload and ends the run with
//! `StopReason::WorkBudget` and a diagnosis. `resume_unwind` runs no panic hook, so nothing is
//! printed: this is a budget, not a crash.

/// The payload a run unwinds with when one event recorded more than its budget of trace
/// events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventWorkExceeded {
    /// The budget that was exceeded: trace events per kernel event.
    pub per_event: u64,
}

/// The fewest trace events one kernel event may record, whatever the job's size. The busiest
/// legitimate events (a failover resetting every channel of a region, a restore replaying
/// channel state) record a few per channel and subtask; see [`per_event_budget`].
const BASE: u64 = 1_000_000;

/// Trace events one kernel event of a job with `channels` channels and `subtasks` subtasks may
/// record before the run is abandoned: a million, plus eight per channel and per subtask, far
/// above what any handler of a correct model records and low enough that memory (a few
/// hundred bytes per traced action) stays within a few gigabytes.
pub fn per_event_budget(channels: usize, subtasks: usize) -> u64 {
    BASE.saturating_add(8u64.saturating_mul((channels as u64).saturating_add(subtasks as u64)))
}

/// Abandons the event being handled (see the module documentation).
#[cold]
#[inline(never)]
pub(super) fn exceeded(per_event: u64) -> ! {
    std::panic::resume_unwind(Box::new(EventWorkExceeded { per_event }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Retain, Trace, TraceEvent};
    use sim::Instant;

    fn record(trace: &mut Trace) {
        trace.record(Instant::ZERO, TraceEvent::JobResultWritten);
    }

    #[test]
    fn an_event_that_records_past_its_budget_is_abandoned_by_unwinding() {
        let mut trace = Trace::new(Retain::Nothing);
        trace.limit_work_per_event(3);
        trace.begin_event();
        for _ in 0..3 {
            record(&mut trace);
        }
        // The next event starts a fresh budget.
        trace.begin_event();
        for _ in 0..3 {
            record(&mut trace);
        }
        let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            record(&mut trace);
        }))
        .expect_err("the fourth record of one event exceeds the budget");
        assert_eq!(
            payload.downcast_ref::<EventWorkExceeded>(),
            Some(&EventWorkExceeded { per_event: 3 })
        );
        assert_eq!(trace.len(), 6, "the abandoned record was not counted");
    }

    #[test]
    fn a_trace_no_world_bounded_records_without_limit() {
        let mut trace = Trace::new(Retain::Nothing);
        for _ in 0..10_000 {
            record(&mut trace);
        }
        assert_eq!(trace.len(), 10_000);
    }

    #[test]
    fn the_budget_grows_with_the_job() {
        assert_eq!(per_event_budget(0, 0), BASE);
        assert_eq!(per_event_budget(1_000_000, 2_000), BASE + 8 * 1_002_000);
        assert_eq!(per_event_budget(usize::MAX, usize::MAX), u64::MAX);
    }
}
