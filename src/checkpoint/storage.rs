//! Durable checkpoint storage: what survives a JobManager crash (`architecture.md`, "Crash").
//!
//! Tasks write their snapshots here themselves (Flink's checkpoint storage: the state goes to a
//! file system, the acknowledgement carries only a handle), and the coordinator records a
//! checkpoint as completed here once every acknowledgement arrived. Only the latest completed
//! checkpoint and the snapshots of pending ones are kept (Flink's default retention of one).

use super::plan::Plan;
use crate::graph::SubtaskId;
use crate::record::Record;
use sim::Instant;
use std::collections::BTreeMap;

/// One subtask's state in one checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtaskSnapshot {
    pub attempt: u32,
    /// Taken after the task's end of input (F1.5 step 2: "task finished" flag).
    pub finished: bool,
    pub state: OperatorState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperatorState {
    /// The next sequence number to emit.
    Source {
        offset: u64,
    },
    Stateless,
    KeyedSum {
        sums: Vec<(u32, i64)>,
    },
    /// Pre-committed transactions not yet committed, by checkpoint id.
    TwoPhaseCommitSink {
        pending: Vec<(u64, Vec<Record>)>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedCheckpoint {
    pub id: u64,
    pub completed_at: Instant,
    pub plan: Plan,
    /// Subtasks recorded finished: the plan's, plus (`option1`) those whose trigger missed.
    pub finished: Vec<SubtaskId>,
}

#[derive(Default)]
pub struct CheckpointStorage {
    snapshots: BTreeMap<(u64, SubtaskId), SubtaskSnapshot>,
    latest: Option<CompletedCheckpoint>,
}

impl CheckpointStorage {
    pub fn write_snapshot(
        &mut self,
        checkpoint: u64,
        subtask: SubtaskId,
        snapshot: SubtaskSnapshot,
    ) {
        self.snapshots.insert((checkpoint, subtask), snapshot);
    }

    pub fn snapshot(&self, checkpoint: u64, subtask: SubtaskId) -> Option<&SubtaskSnapshot> {
        self.snapshots.get(&(checkpoint, subtask))
    }

    /// Records `checkpoint` as the latest completed one and drops every older snapshot.
    pub fn complete(&mut self, checkpoint: CompletedCheckpoint) {
        let id = checkpoint.id;
        self.snapshots.retain(|&(c, _), _| c >= id);
        self.latest = Some(checkpoint);
    }

    /// Drops the snapshots of an aborted checkpoint.
    pub fn discard(&mut self, checkpoint: u64) {
        self.snapshots.retain(|&(c, _), _| c != checkpoint);
    }

    pub fn latest(&self) -> Option<&CompletedCheckpoint> {
        self.latest.as_ref()
    }
}
