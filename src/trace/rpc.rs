//! What travels by RPC between the JobMaster and TaskManagers, for both kinds of job:
//! addresses, the calls and the small `Copy` payloads they carry.
//!
//! One vocabulary, as Flink has one set of RPC gateways: deploy, cancel, a task's state
//! update, split request and assignment, and the P3.2 report are one call whether the job is
//! streaming or batch. What only one kind of job has is a call of its own in the same enum:
//! the checkpoint calls (streaming), registration and partition calls (batch). Only the
//! streaming world records RPCs in the trace (`rpc` events); a batch world's RPCs travel
//! unrecorded, so the hash of a call (`trace::hash`) is a contract with streaming traces only.

use super::DeclineReason;
use crate::graph::SubtaskId;
use crate::status::ExecutionState;

/// Who sends and receives RPCs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Address {
    JobMaster,
    TaskManager(u32),
}

/// An RPC's payload. Data never travels by RPC, only through channels. Nearly every RPC
/// concerns one attempt of one subtask; the TaskManager routes it to that task (or answers for
/// it). A call about the TaskManager as a whole (registration, `AskPartitions`, `ReportDone`)
/// leaves `subtask` and `attempt` unused (see [`Rpc::of_task_manager`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Rpc {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub call: Call,
}

impl Rpc {
    pub const fn new(subtask: SubtaskId, attempt: u32, call: Call) -> Rpc {
        Rpc {
            subtask,
            attempt,
            call,
        }
    }

    /// A call about the TaskManager as a whole, not about one task: `subtask` and `attempt` unused.
    pub fn of_task_manager(call: Call) -> Rpc {
        Rpc {
            subtask: SubtaskId(0),
            attempt: 0,
            call,
        }
    }
}

/// What an RPC asks or tells.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Call {
    /// JobMaster → TaskManager: deploy this attempt into its slot (a batch task always
    /// starts fresh).
    SubmitTask(Restore),
    /// TaskManager → JobMaster: the task's state changed (Flink's `updateTaskExecutionState`).
    /// `cause`: a batch task failed for want of this producer's partition (P2.4); `None`
    /// otherwise, and always in streaming jobs.
    UpdateTaskExecutionState {
        state: ExecutionState,
        cause: Option<SubtaskId>,
    },
    /// CheckpointCoordinator → task: start checkpoint `n` (P1.1: sources, and tasks whose
    /// inputs all finished).
    TriggerCheckpoint(u64),
    /// CheckpointCoordinator → source task (F1.11 step 2): stop, then take the synchronous
    /// savepoint `checkpoint`; `drain` ends the input as a bounded source's end does.
    TriggerSavepoint { checkpoint: u64, drain: bool },
    /// CheckpointCoordinator → task: checkpoint `n` completed (commit, P1.7).
    NotifyCheckpointComplete(u64),
    /// CheckpointCoordinator → task: checkpoint `n` was aborted.
    NotifyCheckpointAborted(u64),
    /// Task → CheckpointCoordinator: the snapshot for checkpoint `n` is in durable storage.
    /// `finished` marks a snapshot taken after the task's end of input (F1.5 step 2).
    AcknowledgeCheckpoint { checkpoint: u64, finished: bool },
    /// Task → CheckpointCoordinator: the task will not take part in checkpoint `n`.
    DeclineCheckpoint {
        checkpoint: u64,
        reason: DeclineReason,
    },
    /// TaskManager → CheckpointCoordinator: a trigger for `n` reached a task that has already
    /// finished (P1.2: the race every finish protocol handles differently).
    TriggerMissed(u64),
    /// TaskManager → CheckpointCoordinator: a trigger for `n` reached a TaskManager that no
    /// longer hosts the attempt (F1.9: Flink's "checkpoint request for unknown task").
    TriggerFailed(u64),
    /// Task → CheckpointCoordinator (`option2`): about to emit EndOfPartition.
    Finishing,
    /// CheckpointCoordinator → task (`option2`): the pending checkpoints it has not yet taken
    /// part in, which it performs before EndOfPartition.
    FinishingAnswer(CheckpointSet),
    /// JobMaster → TaskManager: cancel this attempt (failover, P1.8).
    CancelTask,
    /// TaskManager → a new JobMaster (P3.2): it hosts this attempt, in this state, of a vertex
    /// of this parallelism (from the deployment descriptor).
    ReportExecution {
        state: ExecutionState,
        parallelism: u32,
    },
    /// TaskManager → a new JobMaster (P3.2): its report is complete (`subtask` unused).
    ReportDone,
    /// Source reader → its split enumerator in the JobMaster (F1.13 step 1): it holds no split.
    RequestSplit,
    /// Split enumerator → source reader (F1.13 step 1): a split to read, or `None`: no split
    /// is left, the reader ends its input after its splits.
    AssignSplit(Option<u32>),
    /// Batch, TaskManager → JobMaster: it registers with a JobMaster it newly follows.
    RegisterTaskManager,
    /// Batch, JobMaster → TaskManager: release the partition this attempt produced (P2.3).
    ReleasePartition,
    /// Batch, JobMaster → TaskManager (F2.4 step 1): `getAndRetainPartitionWithMetrics`.
    AskPartitions,
    /// Batch, TaskManager → JobMaster (F2.4): a partition this attempt produced, kept across
    /// the JobManager's absence, with its metrics.
    ReportPartition { bytes: u64 },
    /// Batch, TaskManager → a new JobMaster (P3.2): a split the reported source attempt was
    /// assigned (its reader's state).
    ReportSplit(u32),
    /// Batch, TaskManager → a new JobMaster (P3.2): a partition the reported attempt consumed
    /// (from its deployment descriptor).
    ReportInput {
        producer: SubtaskId,
        producer_attempt: u32,
    },
}

impl Call {
    /// A task's state update without a failure cause (every streaming one).
    pub const fn update(state: ExecutionState) -> Call {
        Call::UpdateTaskExecutionState { state, cause: None }
    }
}

/// How a new attempt starts (the part of Flink's deployment descriptor that matters here).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Restore {
    /// The checkpoint to restore state from; 0 for none (a fresh start).
    pub checkpoint: u64,
    /// Deploy finished on restore (F1.6).
    pub finished: bool,
}

impl Restore {
    pub const FRESH: Restore = Restore {
        checkpoint: 0,
        finished: false,
    };
}

/// A set of checkpoint ids within a window of 64 (`max_concurrent` is at most 64), small and
/// `Copy` so it can ride in an RPC.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CheckpointSet {
    pub(super) base: u64,
    pub(super) mask: u64,
}

impl CheckpointSet {
    pub fn insert(&mut self, id: u64) {
        if self.mask == 0 {
            self.base = id;
        }
        let shift = id.checked_sub(self.base).filter(|&d| d < 64);
        let shift = shift.expect("pending checkpoint ids span less than 64");
        self.mask |= 1 << shift;
    }

    pub fn iter(self) -> impl Iterator<Item = u64> {
        (0..64u64)
            .filter(move |i| self.mask & (1 << i) != 0)
            .map(move |i| self.base + i)
    }

    pub fn is_empty(self) -> bool {
        self.mask == 0
    }
}
