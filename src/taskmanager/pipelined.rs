//! A streaming job's part of a TaskManager ([`Pipelined`]): which subtasks its slots host, and
//! the tasks that ended and left their slot (P3.1). Its tasks' objects are the streaming
//! world's (one current attempt per subtask), and its pipelined result partitions are the
//! data plane's channels.

use super::{Mode, TaskManager};
use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::task::Task;
use sim::Instant;

/// A task that ended and left its slot (failed, or cancelled by a JobMaster), as the
/// TaskManager remembers it for reports (P3.1).
#[derive(Clone, Copy, Debug)]
pub struct Ended {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub state: ExecutionState,
    pub at: Instant,
}

/// What a streaming job's TaskManager holds besides what every TaskManager keeps.
#[derive(Default)]
pub struct Pipelined {
    /// Subtasks deployed here, in first-deployment order (slot `i` of a vertex is always on
    /// the same TaskManager, so this outlives processes; a report reads what runs now).
    hosted: Vec<SubtaskId>,
    /// P3.1: tasks that ended and left their slot.
    ended: Vec<Ended>,
}

impl Mode for Pipelined {
    /// What it remembers of ended tasks dies with the process.
    fn forget(&mut self) {
        self.ended.clear();
    }
}

impl TaskManager<Pipelined> {
    /// `submitTask`: an attempt of `subtask` takes one of its slots (the caller creates the
    /// task and starts it); an earlier end of the subtask here is no longer what it reports.
    pub fn submit(&mut self, subtask: SubtaskId) {
        let Pipelined { hosted, ended } = &mut self.mode;
        if !hosted.contains(&subtask) {
            hosted.push(subtask);
        }
        ended.retain(|e| e.subtask != subtask);
    }

    pub fn hosted(&self) -> &[SubtaskId] {
        &self.mode.hosted
    }

    /// A task ended and leaves its slot: remember it (P3.1).
    pub fn task_ended(&mut self, task: &Task, now: Instant) {
        self.mode.ended.push(Ended {
            subtask: task.subtask(),
            attempt: task.attempt(),
            state: task.state(),
            at: task.ended_at().unwrap_or(now),
        });
    }

    /// The remembered end of `subtask`'s last attempt here, if it left its slot.
    pub fn ended(&self, subtask: SubtaskId) -> Option<Ended> {
        self.mode
            .ended
            .iter()
            .rev()
            .find(|e| e.subtask == subtask)
            .copied()
    }
}
