//! The trigger plan (`docs/rules.md` P1.1, F1.1): which subtasks a
//! checkpoint triggers by RPC, which it waits for, and which it records as finished, computed
//! from the CheckpointCoordinator's *own view* of task status, which lags the tasks by RPC
//! latency. That lag is what lets a trigger reach a task that has already finished (P1.2).

use crate::bug::Bug;
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::scenario::FinishProtocol;
use crate::status::ExecutionState;
use crate::trace::TriggerFailure;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Running subtasks none of whose producers is running: sources, and subtasks whose
    /// inputs all finished. They get the trigger RPC; the rest learn of the checkpoint from
    /// barriers.
    pub to_trigger: Vec<SubtaskId>,
    /// Every subtask not finished: the checkpoint completes when all of them acknowledged.
    /// (Flink's commit-to set is the same.)
    pub to_wait_for: Vec<SubtaskId>,
    /// Subtasks the coordinator knows finished: each contributes a finished marker, not state.
    pub finished: Vec<SubtaskId>,
    /// Vertices whose subtasks all finished.
    pub fully_finished: Vec<VertexId>,
}

/// Computes the plan. `view(s)` is the coordinator's view of subtask `s`; `reported_finishing`
/// is the `option2` set of subtasks that announced they are finishing (empty otherwise).
pub fn compute(
    graph: &ExecutionGraph,
    view: impl Fn(SubtaskId) -> ExecutionState,
    reported_finishing: &[bool],
    protocol: FinishProtocol,
    bug: Option<Bug>,
) -> Result<Plan, TriggerFailure> {
    let finished: Vec<bool> = (0..graph.subtasks.len())
        .map(|i| {
            let s = SubtaskId(i as u32);
            match view(s) {
                ExecutionState::Finished => true,
                // FLINK-40482, as an injected bug: any terminal state counted as finished.
                ExecutionState::Failed | ExecutionState::Canceled => {
                    bug == Some(Bug::TerminalCountsAsFinished)
                }
                _ => reported_finishing.get(i).copied().unwrap_or(false),
            }
        })
        .collect();

    // P1.2 legacy: once any subtask finished, checkpoints are not triggered at all.
    if protocol == FinishProtocol::Legacy && finished.iter().any(|&f| f) {
        return Err(TriggerFailure::NotAllRequiredTasksRunning);
    }

    let mut plan = Plan::default();
    for (i, subtask) in graph.subtasks.iter().enumerate() {
        let s = SubtaskId(i as u32);
        if finished[i] {
            plan.finished.push(s);
            continue;
        }
        // F1.1: every subtask in the plan must be RUNNING.
        if view(s) != ExecutionState::Running {
            return Err(TriggerFailure::NotAllRequiredTasksRunning);
        }
        plan.to_wait_for.push(s);
        // P1.1 / F1.1: triggered by RPC iff none of the producers it consumes from, over any
        // input channel, is still running.
        let producers_finished = subtask
            .inputs
            .iter()
            .all(|c| finished[graph.channels[c.index()].from.index()]);
        if producers_finished {
            plan.to_trigger.push(s);
        }
    }
    if plan.to_wait_for.is_empty() {
        return Err(TriggerFailure::NothingRunning);
    }
    for (v, vertex) in graph.vertices.iter().enumerate() {
        let all = (vertex.first..vertex.first + vertex.parallelism).all(|s| finished[s as usize]);
        if all {
            plan.fully_finished.push(VertexId(v as u32));
        }
    }
    Ok(plan)
}
