//! The small enums trace events carry to say why something happened: outcomes, faults,
//! declines, aborts, trigger failures, and the batch reasons (re-runs, flushes, logged events).

use crate::graph::{ChannelId, SubtaskId, VertexId};

/// How a reconciliation ended (P3.4).
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReconcileOutcome {
    Running,
    Finished,
    /// A TaskManager missed the window, or a task had failed or been cancelled: normal
    /// failover follows.
    Failing,
}

impl ReconcileOutcome {
    /// The job status it leads to, as Flink names it.
    pub fn name(self) -> &'static str {
        match self {
            ReconcileOutcome::Running => "RUNNING",
            ReconcileOutcome::Finished => "FINISHED",
            ReconcileOutcome::Failing => "FAILING",
        }
    }
}

/// Which fault fired, for the trace.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FaultEvent {
    FailTask(SubtaskId),
    LoseTaskManager(u32),
    DisconnectTaskManager(u32),
    CrashJobMaster,
    DelaySpike,
    RpcLoss,
    JobEventsWriteFailure,
    JobEventsReadFailure,
    /// `trigger_task`: the trigger of `checkpoint` (0: none was pending, nothing sent).
    TriggerTask {
        subtask: SubtaskId,
        checkpoint: u64,
    },
    /// `fail_snapshot`: the subtask's snapshot of `checkpoint` failed in its synchronous
    /// part (`sync`) or its asynchronous part.
    FailSnapshot {
        subtask: SubtaskId,
        checkpoint: u64,
        sync: bool,
    },
    /// `hold_channel`: the channel delivers nothing until the hold ends.
    HoldChannel(ChannelId),
    /// `stop_with_savepoint` (F1.11): the JobMaster is asked to stop the job with a
    /// synchronous savepoint, draining (`drain`) or not.
    StopWithSavepoint {
        drain: bool,
    },
}

/// Why the JobMaster refuses a stop-with-savepoint before triggering anything (F1.11 step 1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SavepointRefusal {
    /// The job is not RUNNING (restarting, reconciling, ended), or no JobMaster leads it.
    JobNotRunning,
    /// A stop-with-savepoint is already under way.
    SavepointInProgress,
}

impl SavepointRefusal {
    pub fn id(self) -> &'static str {
        match self {
            SavepointRefusal::JobNotRunning => "job_not_running",
            SavepointRefusal::SavepointInProgress => "savepoint_in_progress",
        }
    }
}

/// Why a task declines a checkpoint (Flink's `CheckpointFailureReason` names, where it has one).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum DeclineReason {
    /// A newer checkpoint's barrier arrived during alignment (`CHECKPOINT_DECLINED_SUBSUMED`).
    Subsumed,
    /// The task has begun closing (`CHECKPOINT_DECLINED_TASK_CLOSING`, F1.5 step 4).
    TaskClosing,
    /// EndOfPartition during alignment (`CHECKPOINT_DECLINED_INPUT_END_OF_STREAM`, legacy).
    InputEndOfStream,
    /// A finishing task cancels its pending checkpoints (legacy P1.6).
    TaskFinishing,
    /// The trigger reached a task that is not RUNNING (`CHECKPOINT_DECLINED_TASK_NOT_READY`,
    /// F1.9).
    TaskNotReady,
    /// The synchronous part of a snapshot taken on a trigger failed, and with it the task
    /// (`TASK_FAILURE`, F1.9).
    TaskFailure,
    /// The asynchronous part of a snapshot failed (`CHECKPOINT_ASYNC_EXCEPTION`, F1.9): the
    /// only decline the tolerable-failure count counts.
    AsyncException,
    /// A cancellation marker arrived (`CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER`, F1.10).
    OnCancellationBarrier,
}

impl DeclineReason {
    pub fn id(self) -> &'static str {
        match self {
            DeclineReason::Subsumed => "declined_subsumed",
            DeclineReason::TaskClosing => "declined_task_closing",
            DeclineReason::InputEndOfStream => "declined_input_end_of_stream",
            DeclineReason::TaskFinishing => "declined_task_finishing",
            DeclineReason::TaskNotReady => "declined_task_not_ready",
            DeclineReason::TaskFailure => "declined_task_failure",
            DeclineReason::AsyncException => "declined_async_exception",
            DeclineReason::OnCancellationBarrier => "declined_on_cancellation_barrier",
        }
    }
}

/// Why the CheckpointCoordinator aborted a pending checkpoint.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum AbortReason {
    /// Not completed within `timeout`.
    Expired,
    /// A failover reset tasks it waited for (P1.8).
    Failover,
    /// A newer checkpoint completed first.
    Subsumed,
    /// A task declined.
    Declined(DeclineReason),
    /// A trigger reached a finished task (`flink`, `legacy`: F1.2).
    TriggerMissed,
    /// The job reached a terminal status with the checkpoint still pending.
    JobEnded,
    /// A trigger reached a TaskManager that no longer hosts the attempt
    /// (`TASK_CHECKPOINT_FAILURE`: "received a checkpoint request for unknown task", F1.9).
    TriggerFailed,
}

impl AbortReason {
    /// F1.9: whether Flink's `CheckpointFailureManager` counts this failure against
    /// `tolerable_failures`: an expired checkpoint and a failed asynchronous part do; a
    /// failover, a subsumed checkpoint, a task not ready or closing, a failed trigger and a
    /// coordinator that stops do not.
    pub fn counts_as_failure(self) -> bool {
        match self {
            AbortReason::Expired | AbortReason::Declined(DeclineReason::AsyncException) => true,
            AbortReason::Failover
            | AbortReason::Subsumed
            | AbortReason::Declined(_)
            | AbortReason::TriggerMissed
            | AbortReason::JobEnded
            | AbortReason::TriggerFailed => false,
        }
    }
}

impl AbortReason {
    /// The stable id used in summaries and in `expect.checkpoints[].abort_reason`.
    pub fn id(self) -> &'static str {
        match self {
            AbortReason::Expired => "expired",
            AbortReason::Failover => "failover",
            AbortReason::Subsumed => "subsumed",
            AbortReason::Declined(d) => d.id(),
            AbortReason::TriggerMissed => "trigger_missed_finished_task",
            AbortReason::JobEnded => "job_ended",
            AbortReason::TriggerFailed => "task_checkpoint_failure",
        }
    }
}

/// Why the CheckpointCoordinator did not trigger a checkpoint when its time came.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TriggerFailure {
    /// Some subtask of the plan is not RUNNING, or (legacy) some subtask finished:
    /// `NOT_ALL_REQUIRED_TASKS_RUNNING`.
    NotAllRequiredTasksRunning,
    /// `max_concurrent` checkpoints are already pending.
    TooManyConcurrent,
    /// Less than `min_pause` since the last completion.
    MinPause,
    /// Nothing is left running (P1.1).
    NothingRunning,
}

impl TriggerFailure {
    pub fn id(self) -> &'static str {
        match self {
            TriggerFailure::NotAllRequiredTasksRunning => "not_all_required_tasks_running",
            TriggerFailure::TooManyConcurrent => "too_many_concurrent_checkpoints",
            TriggerFailure::MinPause => "min_pause",
            TriggerFailure::NothingRunning => "nothing_running",
        }
    }
}

/// Why a subtask that already ran must run again (the summary's "re-run and why", P2.4/P2.5).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum RerunReason {
    /// Its finished event never reached durable storage (or it finished as the JobManager
    /// died, so no event was written).
    EventLost,
    /// Its finished event was durable but no snapshot followed it (F2.3).
    NoSnapshot,
    /// A partition it produced is still needed and was not reported in time (P2.4 step 4).
    PartitionMissing,
    /// Its coordinator has no batch snapshot (P2.5), or returned its splits (P2.4 step 3).
    CoordinatorRule,
    /// It consumed a partition whose producer runs again (P2.4 step 4, region failover).
    DownstreamOfReset,
    /// A task failure or a lost TaskManager, outside recovery.
    Failover,
    /// Recovery is off or found nothing to replay: everything runs again (P2.6).
    FullRestart,
}

impl RerunReason {
    pub const ALL: [RerunReason; 7] = [
        RerunReason::EventLost,
        RerunReason::NoSnapshot,
        RerunReason::PartitionMissing,
        RerunReason::CoordinatorRule,
        RerunReason::DownstreamOfReset,
        RerunReason::Failover,
        RerunReason::FullRestart,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RerunReason::EventLost => "event_lost",
            RerunReason::NoSnapshot => "no_snapshot",
            RerunReason::PartitionMissing => "partition_missing",
            RerunReason::CoordinatorRule => "coordinator_rule",
            RerunReason::DownstreamOfReset => "downstream_of_reset",
            RerunReason::Failover => "failover",
            RerunReason::FullRestart => "full_restart",
        }
    }

    pub fn rule(self) -> &'static str {
        match self {
            RerunReason::EventLost => "P2.2",
            RerunReason::NoSnapshot => "F2.3",
            RerunReason::PartitionMissing => "P2.4 step 4",
            RerunReason::CoordinatorRule => "P2.5",
            RerunReason::DownstreamOfReset => "P2.4 step 4",
            RerunReason::Failover => "P2.1",
            RerunReason::FullRestart => "P2.6",
        }
    }
}

/// Why the write buffer was flushed (P2.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlushReason {
    Interval,
    BufferFull,
    VertexFinished,
}

impl FlushReason {
    pub fn name(self) -> &'static str {
        match self {
            FlushReason::Interval => "flush_interval",
            FlushReason::BufferFull => "buffer_full",
            FlushReason::VertexFinished => "vertex_finished",
        }
    }
}

/// Which job event was appended to the write buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Logged {
    VertexInitialized(VertexId),
    Finished(SubtaskId),
    /// A reset of this many execution vertices.
    Reset(u32),
}
