//! The task table: per subtask, the attempt deployed last on some TaskManager (and, P2.8, a
//! speculative one beside it), with its state as that TaskManager holds it.
//!
//! The tasks are held here per subtask rather than on the TaskManager that runs them, because
//! a deployment replaces the subtask's previous attempt wherever it ran: a TaskManager that
//! was cut off then no longer holds (nor reports, P3.2) the attempt it was running. Kept per
//! TaskManager, the replaced attempt would stay there and change what it reports; the
//! TaskManagers reach their tasks through their context (`TmCtx`) instead.

use crate::graph::SubtaskId;
use crate::status::ExecutionState;
use crate::taskmanager::batch::Task;
use crate::trace::TraceEvent;
use crate::world::batch::Cluster;
use sim::Instant;

impl Cluster {
    /// Attempt `attempt` of `subtask` on its TaskManager: the original's task, or (P2.8) a
    /// speculative one running beside it.
    pub(crate) fn task_ref(&self, subtask: SubtaskId, attempt: u32) -> Option<&Task> {
        let i = subtask.index();
        [&self.tasks[i], &self.spec_tasks[i]]
            .into_iter()
            .flatten()
            .find(|t| t.attempt == attempt)
    }

    pub(crate) fn task_mut(&mut self, subtask: SubtaskId, attempt: u32) -> Option<&mut Task> {
        let i = subtask.index();
        if self.tasks[i].as_ref().is_some_and(|t| t.attempt == attempt) {
            return self.tasks[i].as_mut();
        }
        self.spec_tasks[i].as_mut().filter(|t| t.attempt == attempt)
    }

    pub(crate) fn running(&self, subtask: SubtaskId, attempt: u32) -> bool {
        self.task_ref(subtask, attempt)
            .is_some_and(|t| t.state == ExecutionState::Running)
    }

    pub(crate) fn task_state(
        &mut self,
        now: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        let task = self.task_mut(subtask, attempt).expect("a task");
        let from = task.state;
        task.state = to;
        if to.is_terminal() {
            task.ended = Some(now);
        }
        let attempt = task.attempt;
        self.record(
            now,
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            },
        );
    }

    pub(crate) fn end_task(
        &mut self,
        now: Instant,
        subtask: SubtaskId,
        attempt: u32,
        to: ExecutionState,
    ) {
        if self
            .task_ref(subtask, attempt)
            .is_some_and(|t| !t.state.is_terminal())
        {
            if to == ExecutionState::Canceled {
                self.task_state(now, subtask, attempt, ExecutionState::Canceling);
            }
            self.task_state(now, subtask, attempt, to);
        }
    }

    /// The attempts TaskManager `tm` runs (originals first, then speculative ones, P2.8), by
    /// subtask.
    pub(crate) fn hosted(&self, tm: u32) -> Vec<(SubtaskId, u32)> {
        let live = |t: &Option<Task>| {
            t.as_ref()
                .filter(|t| t.task_manager == tm && !t.state.is_terminal())
                .map(|t| t.attempt)
        };
        let mut hosted = Vec::new();
        for table in [&self.tasks, &self.spec_tasks] {
            for (i, t) in table.iter().enumerate() {
                if let Some(attempt) = live(t) {
                    hosted.push((SubtaskId(i as u32), attempt));
                }
            }
        }
        hosted
    }
}
