//! The TaskManager: hosts tasks in its slots and relays their state reports to the JobMaster.
//!
//! Under `jobmaster.failover: reconcile` (P3) it also outlives its JobMaster: it keeps the
//! RPCs no JobMaster accepted in an [`Outbox`] and sends them again until one does (P3.3), and
//! it remembers tasks that ended, for a while, so it can report them to the next JobMaster
//! (P3.1).

pub mod batch;
pub mod outbox;
pub(crate) mod reconcile;
pub use outbox::Outbox;

use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::task::Task;
use crate::trace::Restore;
use crate::world::Ctx;
use sim::{Duration, Instant};

/// P3.1: a task that ended at `ended` is remembered (and reported to a new leader, P3.2) for
/// `retention`; past it, the TaskManager has forgotten it. One rule for both kinds of job.
pub(crate) fn forgotten(ended: Instant, now: Instant, retention: Duration) -> bool {
    now.saturating_duration_since(ended) > retention
}

/// A task that ended and left its slot (failed, or cancelled by a JobMaster), as the
/// TaskManager remembers it for reports (P3.1).
#[derive(Clone, Copy, Debug)]
pub struct Ended {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub state: ExecutionState,
    pub at: Instant,
}

pub struct TaskManager {
    index: u32,
    /// Subtasks deployed here, in deployment order.
    hosted: Vec<SubtaskId>,
    /// P3.1: tasks that ended and left their slot.
    ended: Vec<Ended>,
}

impl TaskManager {
    pub fn new(index: u32) -> TaskManager {
        TaskManager {
            index,
            hosted: Vec::new(),
            ended: Vec::new(),
        }
    }

    /// `submitTask`: creates the attempt in one of this TaskManager's slots. The caller stores
    /// it and starts it.
    pub fn submit(
        &mut self,
        ctx: &Ctx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        restore: Restore,
    ) -> Task {
        if !self.hosted.contains(&subtask) {
            self.hosted.push(subtask);
        }
        self.ended.retain(|e| e.subtask != subtask);
        Task::new(ctx, subtask, attempt, self.index, restore)
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn hosted(&self) -> &[SubtaskId] {
        &self.hosted
    }

    /// A task ended and leaves its slot: remember it (P3.1).
    pub fn task_ended(&mut self, task: &Task, now: Instant) {
        self.ended.push(Ended {
            subtask: task.subtask(),
            attempt: task.attempt(),
            state: task.state(),
            at: task.ended_at().unwrap_or(now),
        });
    }

    /// The remembered end of `subtask`'s last attempt here, if it left its slot.
    pub fn ended(&self, subtask: SubtaskId) -> Option<Ended> {
        self.ended
            .iter()
            .rev()
            .find(|e| e.subtask == subtask)
            .copied()
    }

    /// The process died: its memory goes with it (its outbox is the caller's).
    pub fn died(&mut self) {
        self.ended.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P3.1: a task is remembered for the whole retention, the last instant included, and
    /// forgotten one nanosecond later; a retention of zero keeps it only at the instant it
    /// ended.
    #[test]
    fn an_ended_task_is_forgotten_only_past_the_retention() {
        let ended = Instant::ZERO + Duration::from_nanos(1_000);
        let retention = Duration::from_nanos(500);
        let at = |ns: u64| Instant::ZERO + Duration::from_nanos(ns);
        assert!(!forgotten(ended, at(1_000), retention));
        assert!(!forgotten(ended, at(1_500), retention));
        assert!(forgotten(ended, at(1_501), retention));
        assert!(!forgotten(ended, ended, Duration::ZERO));
        assert!(forgotten(ended, at(1_001), Duration::ZERO));
    }
}
