//! The TaskManager: hosts tasks in its slots and relays their state reports to the JobMaster.

use crate::graph::SubtaskId;
use crate::task::Task;
use crate::trace::Restore;
use crate::world::Ctx;

pub struct TaskManager {
    index: u32,
    /// Subtasks deployed here, in deployment order.
    hosted: Vec<SubtaskId>,
}

impl TaskManager {
    pub fn new(index: u32) -> TaskManager {
        TaskManager {
            index,
            hosted: Vec::new(),
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
        Task::new(ctx, subtask, attempt, self.index, restore)
    }

    pub fn hosted(&self) -> &[SubtaskId] {
        &self.hosted
    }
}
