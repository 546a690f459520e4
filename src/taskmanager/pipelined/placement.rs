//! Where each subtask of a streaming job runs (P0): slot `i` of every vertex is on TaskManager
//! `i / slots_per_task_manager` (Flink's default slot sharing), whatever the attempt, so the
//! place of a subtask is fixed for the whole run. [`Placement`] is that rule as a table built
//! once from the graph: an element's arrival finds the TaskManager and slot of its consumer with
//! two loads instead of a search.

use crate::graph::{ExecutionGraph, SubtaskId};

/// The TaskManager that hosts subtask `index` of a vertex (P0). The JobMaster deploys there, and
/// the TaskManager keeps the task in one of its slots.
pub fn task_manager_of(index: u32, slots_per_task_manager: u32) -> u32 {
    index / slots_per_task_manager
}

/// A subtask's place: a TaskManager, and the slot there that holds its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub task_manager: u32,
    /// Its index among that TaskManager's slots, in subtask order.
    pub slot: u32,
}

/// Every subtask's place (module doc).
#[derive(Debug)]
pub struct Placement {
    /// By subtask.
    slots: Vec<Slot>,
    /// By TaskManager: the subtasks of its slots, in slot order, which is subtask order (so a
    /// walk over one TaskManager's tasks meets them in the order a walk over the job does).
    hosts: Vec<Vec<SubtaskId>>,
}

impl Placement {
    pub fn new(graph: &ExecutionGraph, task_managers: u32, slots_per_task_manager: u32) -> Self {
        let mut hosts = vec![Vec::new(); task_managers as usize];
        let slots = graph
            .subtasks
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let task_manager = task_manager_of(s.index, slots_per_task_manager);
                let host = &mut hosts[task_manager as usize];
                host.push(SubtaskId(i as u32));
                Slot {
                    task_manager,
                    slot: host.len() as u32 - 1,
                }
            })
            .collect();
        Placement { slots, hosts }
    }

    /// Where `subtask` runs.
    #[inline]
    pub fn of(&self, subtask: SubtaskId) -> Slot {
        self.slots[subtask.index()]
    }

    /// The subtasks TaskManager `task_manager` hosts, in slot order.
    pub fn on(&self, task_manager: u32) -> &[SubtaskId] {
        &self.hosts[task_manager as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two vertices of parallelism 3 on two TaskManagers of two slots: slots 0 and 1 of each
    /// vertex on TaskManager 0, slot 2 on TaskManager 1; each TaskManager numbers its tasks in
    /// subtask order, and the table and the per-TaskManager lists agree.
    #[test]
    fn a_subtask_is_found_on_its_slots_task_manager_in_subtask_order() {
        let scenario = crate::scenario::parse(
            r#"{"name": "p", "mode": "streaming", "job": {"vertices": [
                {"id": "src", "operator": "source", "parallelism": 3, "records": 1},
                {"id": "sink", "operator": "sink", "parallelism": 3}],
              "edges": [{"from": "src", "to": "sink", "pattern": "forward"}]},
              "cluster": {"task_managers": 2, "slots_per_task_manager": 2}}"#,
            "placement",
        )
        .expect("valid");
        let graph = ExecutionGraph::build(&scenario.job);
        let placement = Placement::new(&graph, 2, 2);
        let at = |task_manager, slot| Slot { task_manager, slot };
        let places: Vec<Slot> = (0..6).map(|s| placement.of(SubtaskId(s))).collect();
        assert_eq!(
            places,
            [at(0, 0), at(0, 1), at(1, 0), at(0, 2), at(0, 3), at(1, 1)]
        );
        assert_eq!(placement.on(0), [0, 1, 3, 4].map(SubtaskId));
        assert_eq!(placement.on(1), [2, 5].map(SubtaskId));
        for tm in 0..2 {
            for (slot, &subtask) in placement.on(tm).iter().enumerate() {
                assert_eq!(placement.of(subtask), at(tm, slot as u32));
            }
        }
    }
}
