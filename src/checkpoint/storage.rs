//! Durable checkpoint storage: what survives a JobManager crash (`architecture.md`, "Crash").
//!
//! Tasks write their snapshots here themselves (Flink's checkpoint storage: the state goes to a
//! file system, the acknowledgement carries only a handle), and the coordinator records a
//! checkpoint as completed here once every acknowledgement arrived. Only the latest completed
//! checkpoint and the snapshots of pending ones are kept (Flink's default retention of one).

use crate::graph::{ChannelId, SubtaskId};
use crate::record::Record;
use crate::scenario::RestoreFrom;
use sim::Instant;
use std::collections::BTreeMap;

/// One subtask's state in one checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubtaskSnapshot {
    pub attempt: u32,
    /// Taken after the task's end of input (F1.5 step 2: "task finished" flag).
    pub finished: bool,
    /// One state per operator of the subtask's chain, head first (F1.12).
    pub state: ChainState,
    /// Unaligned (P1.4): per input slot, the records that were in flight before its barrier
    /// and had not been processed at the snapshot; replayed before new input on restore.
    pub input_state: Vec<(u32, Vec<Record>)>,
    /// Unaligned (P1.4): per output channel, the records emitted before the snapshot that the
    /// barrier overtook (result-subpartition state); sent again first on restore.
    pub output_state: Vec<(ChannelId, Vec<Record>)>,
}

impl SubtaskSnapshot {
    /// The offset a source subtask restarts from, when the chain's head is a source.
    pub fn source_offset(&self) -> Option<u64> {
        match self.state.first() {
            Some(OperatorState::Source { offset }) => Some(*offset),
            _ => None,
        }
    }
}

/// The states of one subtask's operators, head first (F1.12).
pub type ChainState = Vec<OperatorState>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperatorState {
    /// The next sequence number to emit.
    Source {
        offset: u64,
    },
    /// F1.13 step 2: a split reader's assigned, unfinished splits with the offset of the next
    /// record of each, the one being read first.
    SplitReader {
        splits: Vec<(u32, u64)>,
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
    /// Subtasks recorded finished: the plan's, plus (`option1`) those whose trigger missed.
    pub finished: Vec<SubtaskId>,
}

/// A completed checkpoint with its subtasks' snapshots, as `--save-checkpoint` writes it.
pub struct SavedCheckpoint {
    pub checkpoint: CompletedCheckpoint,
    pub snapshots: Vec<(SubtaskId, SubtaskSnapshot)>,
}

/// Durable storage that survives the JobManager: checkpoints, and the counters Flink keeps in
/// its HA services so that a new JobManager never reuses a checkpoint id or an attempt.
#[derive(Default)]
pub struct CheckpointStorage {
    /// F1.6: the checkpoint the job was submitted with (`restore_from`), by operator uid, as
    /// Flink's savepoint path is: the first JobMaster assigns it to subtasks.
    initial: Option<RestoreFrom>,
    /// `flinksim run --save-checkpoint`: the id to keep a copy of when it completes, and the
    /// copy (outside what the model reads: only the report takes it).
    keep: Option<u64>,
    kept: Option<SavedCheckpoint>,
    snapshots: BTreeMap<(u64, SubtaskId), SubtaskSnapshot>,
    /// F1.13 step 2: per checkpoint and source vertex, the splits its enumerator had not
    /// assigned when the coordinator was checkpointed. Kept and dropped with the snapshots.
    coordinators: BTreeMap<(u64, u32), Vec<u32>>,
    latest: Option<CompletedCheckpoint>,
    /// The checkpoint id counter (Flink's `CheckpointIDCounter`).
    next_checkpoint_id: u64,
    /// Per subtask, the highest attempt number ever deployed.
    attempts: Vec<u32>,
}

impl CheckpointStorage {
    /// Storage holding the checkpoint the job is submitted with, if any.
    pub fn new(initial: Option<RestoreFrom>) -> CheckpointStorage {
        CheckpointStorage {
            initial,
            ..CheckpointStorage::default()
        }
    }

    pub fn initial(&self) -> Option<&RestoreFrom> {
        self.initial.as_ref()
    }

    /// F1.6: the checkpoint the job was submitted with, assigned to subtasks, becomes the
    /// latest completed one; the job's own checkpoints get the ids after it.
    pub fn install(
        &mut self,
        checkpoint: CompletedCheckpoint,
        snapshots: Vec<(SubtaskId, SubtaskSnapshot)>,
    ) {
        let id = checkpoint.id;
        for (s, snapshot) in snapshots {
            self.snapshots.insert((id, s), snapshot);
        }
        self.next_checkpoint_id = self.next_checkpoint_id.max(id + 1);
        self.latest = Some(checkpoint);
    }
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

    /// F1.13 step 2: the checkpoint of source vertex `vertex`'s split enumerator.
    pub fn write_coordinator(&mut self, checkpoint: u64, vertex: u32, unassigned: Vec<u32>) {
        self.coordinators.insert((checkpoint, vertex), unassigned);
    }

    /// F1.13 step 3: the unassigned splits of `vertex`'s enumerator in `checkpoint`.
    pub fn coordinator(&self, checkpoint: u64, vertex: u32) -> Option<&[u32]> {
        self.coordinators
            .get(&(checkpoint, vertex))
            .map(Vec::as_slice)
    }

    /// Keep a copy of checkpoint `id` once it completes (`--save-checkpoint`).
    pub fn keep(&mut self, id: u64) {
        self.keep = Some(id);
    }

    /// The copy of the checkpoint `keep` asked for, if it completed.
    pub fn take_kept(&mut self) -> Option<SavedCheckpoint> {
        self.kept.take()
    }

    /// Records `checkpoint` as the latest completed one and drops every older snapshot.
    pub fn complete(&mut self, checkpoint: CompletedCheckpoint) {
        let id = checkpoint.id;
        if self.keep == Some(id) {
            let snapshots = self
                .snapshots
                .range((id, SubtaskId(0))..=(id, SubtaskId(u32::MAX)))
                .map(|(&(_, s), snapshot)| (s, snapshot.clone()))
                .collect();
            self.kept = Some(SavedCheckpoint {
                checkpoint: checkpoint.clone(),
                snapshots,
            });
        }
        self.snapshots.retain(|&(c, _), _| c >= id);
        self.coordinators.retain(|&(c, _), _| c >= id);
        self.latest = Some(checkpoint);
    }

    /// Drops the snapshots of an aborted checkpoint.
    pub fn discard(&mut self, checkpoint: u64) {
        self.snapshots.retain(|&(c, _), _| c != checkpoint);
        self.coordinators.retain(|&(c, _), _| c != checkpoint);
    }

    pub fn latest(&self) -> Option<&CompletedCheckpoint> {
        self.latest.as_ref()
    }

    /// The newest checkpoint any snapshot was written for, completed or not (only an injected
    /// bug restores from it).
    pub fn newest_written(&self) -> Option<u64> {
        self.snapshots.keys().map(|&(c, _)| c).max()
    }

    /// The last checkpoint id handed out (0: none yet).
    pub fn last_checkpoint_id(&self) -> u64 {
        self.next_checkpoint_id.saturating_sub(1)
    }

    /// The next checkpoint id, counted durably.
    pub fn next_checkpoint_id(&mut self) -> u64 {
        self.next_checkpoint_id = self.next_checkpoint_id.max(1);
        let id = self.next_checkpoint_id;
        self.next_checkpoint_id += 1;
        id
    }

    /// The next attempt number of `subtask` (0 first), counted durably.
    pub fn next_attempt(&mut self, subtask: SubtaskId, subtasks: usize) -> u32 {
        if self.attempts.len() < subtasks {
            self.attempts.resize(subtasks, 0);
        }
        let attempt = self.attempts[subtask.index()];
        self.attempts[subtask.index()] += 1;
        attempt
    }
}

/// The external system two-phase-commit sinks write to (a Kafka cluster, say). It remembers
/// which transactions it committed, so committing one again is a no-op.
#[derive(Default)]
pub struct ExternalSystem {
    committed: std::collections::BTreeSet<(SubtaskId, u64)>,
}

impl ExternalSystem {
    /// Commits the transaction of `subtask` for `checkpoint`; false if it already was.
    pub fn commit(&mut self, subtask: SubtaskId, checkpoint: u64) -> bool {
        self.committed.insert((subtask, checkpoint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(attempt: u32) -> SubtaskSnapshot {
        SubtaskSnapshot {
            attempt,
            finished: false,
            state: Vec::new(),
            input_state: Vec::new(),
            output_state: Vec::new(),
        }
    }

    fn completed(id: u64) -> CompletedCheckpoint {
        CompletedCheckpoint {
            id,
            completed_at: Instant::ZERO,
            finished: Vec::new(),
        }
    }

    /// An aborted checkpoint leaves nothing behind, neither its subtasks' snapshots nor its
    /// enumerators' (so a later restore, or `newest_written`, never sees it); another
    /// checkpoint's stay.
    #[test]
    fn an_aborted_checkpoint_is_discarded_alone() {
        let mut storage = CheckpointStorage::default();
        for checkpoint in [1, 2] {
            storage.write_snapshot(checkpoint, SubtaskId(0), snapshot(0));
            storage.write_coordinator(checkpoint, 0, vec![checkpoint as u32]);
        }
        storage.discard(2);
        assert!(storage.snapshot(2, SubtaskId(0)).is_none());
        assert!(storage.coordinator(2, 0).is_none());
        assert_eq!(storage.newest_written(), Some(1));
        assert_eq!(storage.snapshot(1, SubtaskId(0)), Some(&snapshot(0)));
        assert_eq!(storage.coordinator(1, 0), Some(&[1][..]));
    }

    /// `--save-checkpoint`: only the checkpoint asked for is copied, with its own snapshots,
    /// once it completes; it is handed out once.
    #[test]
    fn only_the_checkpoint_asked_for_is_kept() {
        let mut storage = CheckpointStorage::default();
        storage.keep(2);
        storage.write_snapshot(1, SubtaskId(0), snapshot(1));
        storage.complete(completed(1));
        assert!(
            storage.take_kept().is_none(),
            "checkpoint 1 was not asked for"
        );
        storage.write_snapshot(2, SubtaskId(0), snapshot(2));
        storage.write_snapshot(3, SubtaskId(0), snapshot(3));
        storage.complete(completed(2));
        let kept = storage.take_kept().expect("checkpoint 2 completed");
        assert_eq!(kept.checkpoint, completed(2));
        assert_eq!(kept.snapshots, vec![(SubtaskId(0), snapshot(2))]);
        assert!(storage.take_kept().is_none(), "handed out once");
    }
}
