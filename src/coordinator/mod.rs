//! Operator coordinators shared by both kinds of job: a source's split enumerator, which hands
//! out splits on request (P2.5 in batch jobs, F1.13 in streaming jobs), and, for streaming
//! jobs, the tracker of what it assigned since the last completed checkpoint (F1.13), which a
//! regional failover needs to give splits back.
//!
//! The project runs one world per mode today; the coordinator lives here, not under either
//! world, so both modes assign splits by the same rules and the same code.

mod enumerator;
mod tracker;

pub use enumerator::Enumerator;
pub use tracker::SplitAssignmentTracker;
