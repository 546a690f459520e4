//! What every handler's context offers, whatever the job's mode ([`Act`]): the clock, the
//! trace and timers. A rule that is the same in both modes (a process's death and what it is
//! told by) is written once against it, and each mode's context implements it: the streaming
//! `Ctx` (for the JobMaster, a TaskManager or a task, whatever it reaches) and the batch
//! `batch::Ctx` (the JobMaster's) and `batch::TmCtx` (a TaskManager's). What else a handler may
//! touch is its mode's: the streaming contexts lend `Io` (channels, checkpoint storage, the
//! streaming oracles), the batch ones the `batch::Cluster` (deployment descriptors, the remote
//! shuffle, the job event store, the batch oracles).

use super::Event;
use crate::trace::TraceEvent;
use sim::{Duration, Instant};

/// What every handler may do through its context, whatever the mode (module doc).
pub trait Act {
    /// The current simulated instant.
    fn now(&self) -> Instant;
    /// Records `event` in the trace and shows it to what watches the trace (the oracles, the
    /// probes and the fault plan's triggers).
    fn record(&mut self, event: TraceEvent);
    /// Schedules `event` `delay` from now.
    fn after(&mut self, delay: Duration, event: Event);
}
