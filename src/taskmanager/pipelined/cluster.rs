//! The streaming job's TaskManagers ([`TaskManagers`]), each hosting the tasks of its slots, and
//! where each subtask's slot is ([`Placement`]): the world finds a subtask's task through them.

use super::placement::{Placement, Slot};
use super::{Host, Pipelined};
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::Cluster;
use crate::task::Task;
use crate::taskmanager::TaskManager;

/// Every TaskManager of a streaming job, and the placement of its subtasks (module doc).
pub struct TaskManagers {
    list: Vec<TaskManager<Pipelined>>,
    placement: Placement,
}

impl TaskManagers {
    /// The cluster's TaskManagers, their first processes running, every slot empty.
    pub fn new(graph: &ExecutionGraph, cluster: Cluster) -> Self {
        let placement =
            Placement::new(graph, cluster.task_managers, cluster.slots_per_task_manager);
        let list = (0..cluster.task_managers)
            .map(|tm| TaskManager::with_slots(tm, placement.on(tm).len()))
            .collect();
        TaskManagers { list, placement }
    }

    #[inline]
    pub fn get(&self, task_manager: u32) -> &TaskManager<Pipelined> {
        &self.list[task_manager as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, task_manager: u32) -> &mut TaskManager<Pipelined> {
        &mut self.list[task_manager as usize]
    }

    /// How many TaskManagers the cluster has.
    pub fn count(&self) -> u32 {
        self.list.len() as u32
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut TaskManager<Pipelined>> {
        self.list.iter_mut()
    }

    /// Where `subtask` runs.
    #[inline]
    pub fn place(&self, subtask: SubtaskId) -> Slot {
        self.placement.of(subtask)
    }

    /// The subtasks TaskManager `task_manager` hosts, in slot order.
    pub fn on(&self, task_manager: u32) -> &[SubtaskId] {
        self.placement.on(task_manager)
    }

    /// `subtask`'s current attempt, if deployed.
    #[inline]
    pub fn task(&self, subtask: SubtaskId) -> Option<&Task> {
        let Slot { task_manager, slot } = self.placement.of(subtask);
        self.get(task_manager).task(slot)
    }

    /// `subtask`'s current attempt, if deployed, with what it may touch of its TaskManager.
    #[inline]
    pub fn lend(&mut self, subtask: SubtaskId) -> Option<(&mut Task, Host<'_>)> {
        let Slot { task_manager, slot } = self.placement.of(subtask);
        self.list[task_manager as usize].lend(slot)
    }

    /// TaskManager `task_manager`, to change, and the placement table, to read.
    #[inline]
    pub fn split(&mut self, task_manager: u32) -> (&mut TaskManager<Pipelined>, &Placement) {
        (&mut self.list[task_manager as usize], &self.placement)
    }

    /// `subtask`'s task ended and leaves its slot; its TaskManager remembers it (P3.1).
    pub fn leave(&mut self, subtask: SubtaskId, now: sim::Instant) {
        let Slot { task_manager, slot } = self.placement.of(subtask);
        self.list[task_manager as usize].leave(slot, now);
    }
}
