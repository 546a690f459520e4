//! What happened in a run, as a sequence of typed events: the single source for the trace hash,
//! the oracles and every rendering (timeline, JSON Lines).
//!
//! Events are small `Copy` values with ids, not strings: recording one costs a few hash steps
//! and, when an output was asked for, one `Vec` push. Names (`map[0]`, `src[0]->map[0]`) are
//! only produced when something is rendered (`crate::report`).

use crate::graph::{ChannelId, SubtaskId};
use crate::record::{Element, Record};
use crate::status::{ExecutionState, JobStatus};
use sim::{Duration, Instant, TraceHasher};

/// Who sends and receives RPCs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Address {
    JobMaster,
    TaskManager(u32),
}

/// An RPC's payload. Data never travels by RPC, only through channels. Every RPC concerns one
/// attempt of one subtask; the TaskManager routes it to that task (or answers for it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Rpc {
    pub subtask: SubtaskId,
    pub attempt: u32,
    pub call: Call,
}

/// What an RPC asks or tells.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Call {
    /// JobMaster → TaskManager: deploy this attempt into its slot.
    SubmitTask(Restore),
    /// TaskManager → JobMaster: the task's state changed (Flink's `updateTaskExecutionState`).
    UpdateTaskExecutionState(ExecutionState),
    /// CheckpointCoordinator → task: start checkpoint `n` (P1.1: sources, and tasks whose
    /// inputs all finished).
    TriggerCheckpoint(u64),
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
    /// Task → CheckpointCoordinator (`option2`): about to emit EndOfPartition.
    Finishing,
    /// CheckpointCoordinator → task (`option2`): the pending checkpoints it has not yet taken
    /// part in, which it performs before EndOfPartition.
    FinishingAnswer(CheckpointSet),
    /// JobMaster → TaskManager: cancel this attempt (failover, P1.8).
    CancelTask,
    /// TaskManager → a new JobMaster (P3.2): it hosts this attempt, in this state.
    ReportExecution(ExecutionState),
    /// TaskManager → a new JobMaster (P3.2): its report is complete (`subtask` unused).
    ReportDone,
}

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
    base: u64,
    mask: u64,
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
}

impl DeclineReason {
    pub fn id(self) -> &'static str {
        match self {
            DeclineReason::Subsumed => "declined_subsumed",
            DeclineReason::TaskClosing => "declined_task_closing",
            DeclineReason::InputEndOfStream => "declined_input_end_of_stream",
            DeclineReason::TaskFinishing => "declined_task_finishing",
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

/// One thing that happened. Names are low-cardinality; ids are fields.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TraceEvent {
    /// The JobMaster changed the job's status.
    JobStatus {
        from: JobStatus,
        to: JobStatus,
    },
    /// The JobMaster's view of an execution changed (it lags the task by RPC latency).
    ExecutionState {
        subtask: SubtaskId,
        attempt: u32,
        from: ExecutionState,
        to: ExecutionState,
    },
    /// A task's own state changed, on its TaskManager.
    TaskState {
        subtask: SubtaskId,
        attempt: u32,
        from: ExecutionState,
        to: ExecutionState,
    },
    /// An RPC reached its destination.
    Rpc {
        from: Address,
        to: Address,
        sent_at: Instant,
        rpc: Rpc,
    },
    /// A producer put an element into a channel.
    Push {
        channel: ChannelId,
        element: Element,
    },
    /// The oldest in-flight element of a channel reached the consumer's input buffer.
    Arrive {
        channel: ChannelId,
        element: Element,
    },
    /// A consumer dequeued an element from an input channel and processed it.
    Take {
        subtask: SubtaskId,
        channel: ChannelId,
        element: Element,
    },
    /// A producer found an output channel full and waits for credit (back-pressure).
    Blocked {
        subtask: SubtaskId,
        channel: ChannelId,
    },
    /// A task reached the end of its input: a source ran out of records, or every input
    /// channel delivered EndOfPartition (EndOfData in the `flink` variant).
    EndOfInput {
        subtask: SubtaskId,
    },
    /// The CheckpointCoordinator triggered checkpoint `checkpoint` (its plan is in the
    /// summary).
    CheckpointTriggered {
        checkpoint: u64,
    },
    /// The CheckpointCoordinator's time to trigger came but it did not.
    CheckpointNotTriggered {
        reason: TriggerFailure,
    },
    /// A task learned of checkpoint `checkpoint`, by trigger RPC or by its first barrier.
    CheckpointSeen {
        subtask: SubtaskId,
        checkpoint: u64,
        by_trigger: bool,
    },
    /// P1.3 steps 2-3: a barrier was inserted right before a buffered EndOfPartition.
    BarrierInserted {
        subtask: SubtaskId,
        channel: ChannelId,
        checkpoint: u64,
    },
    /// Every input channel delivered the barrier (or EndOfPartition): the task snapshots.
    AlignmentDone {
        subtask: SubtaskId,
        checkpoint: u64,
        alignment: Duration,
    },
    /// The task captured its state for `checkpoint` and wrote it to durable storage.
    /// `finished` marks a snapshot taken after end of input.
    Snapshot {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
        finished: bool,
    },
    /// The CheckpointCoordinator re-triggered a descendant of a finished task (`option1`).
    Retrigger {
        checkpoint: u64,
        finished: SubtaskId,
        descendant: SubtaskId,
    },
    CheckpointCompleted {
        checkpoint: u64,
    },
    CheckpointAborted {
        checkpoint: u64,
        reason: AbortReason,
    },
    /// A two-phase-commit sink committed one record of the transaction of `checkpoint`.
    Commit {
        subtask: SubtaskId,
        checkpoint: u64,
        record: Record,
    },
    /// A two-phase-commit sink committed the transaction pre-committed at `checkpoint`.
    TransactionCommitted {
        subtask: SubtaskId,
        checkpoint: u64,
        records: u64,
    },
    /// `flink` (F1.5 step 1): the consumer of `channel` dequeued EndOfData and tells the
    /// producer that all its records were processed.
    AllRecordsProcessed {
        channel: ChannelId,
    },
    /// Fault `index` of the scenario fired.
    FaultFired {
        index: u32,
        fault: FaultEvent,
    },
    /// The JobMaster starts a failover because `cause` failed (P1.8): `restarting` subtasks
    /// are cancelled and redeployed, the whole job (`full`) or a pipelined region.
    Failover {
        cause: SubtaskId,
        restarting: u32,
        full: bool,
    },
    /// The restarted subtasks were deployed from checkpoint `checkpoint` (0: none completed,
    /// from scratch); `finished` of them as finished on restore (F1.6).
    Restore {
        checkpoint: u64,
        restarted: u32,
        finished: u32,
        /// The pipelined region restored (numbered by its smallest subtask), or `None` for the
        /// whole job.
        region: Option<u32>,
    },
    /// The JobManager process died (its volatile state with it).
    JobMasterLost {
        incarnation: u32,
    },
    /// A new JobManager was elected (HA) and takes over the job.
    JobMasterElected {
        incarnation: u32,
    },
    /// A TaskManager process died with its tasks and the data it held.
    TaskManagerLost {
        task_manager: u32,
    },
    /// A replacement TaskManager process started and registered.
    TaskManagerStarted {
        task_manager: u32,
    },
    /// The JobMaster noticed a lost TaskManager (heartbeat timeout).
    TaskManagerTimedOut {
        task_manager: u32,
    },
    /// Unaligned (P1.4): `records` in flight on `channel` became part of `checkpoint`: input
    /// channel state at the consumer, or (`output`) result-subpartition state at the producer.
    ChannelState {
        subtask: SubtaskId,
        checkpoint: u64,
        channel: ChannelId,
        records: u32,
        output: bool,
    },
    /// The restart strategy is exhausted: the job fails.
    RestartsExhausted {
        failovers: u32,
    },
    /// The checkpoint to restore from has an impossible shape of finished subtasks (F1.6):
    /// the job fails.
    RestoreRejected {
        checkpoint: u64,
    },
    /// An RPC reached a process that died since it was sent (or a TaskManager refused it: it
    /// came from a JobMaster that is no longer the leader, `fenced`): it is gone.
    RpcDropped {
        from: Address,
        to: Address,
        rpc: Rpc,
        fenced: bool,
    },
    /// A reconciling JobMaster refused an RPC (P3.3); its TaskManager retries it later.
    RpcRefused {
        from: Address,
        rpc: Rpc,
    },
    /// A batch event (P2), see `crate::batch::trace`.
    Batch(crate::batch::trace::BatchEvent),
    /// A new JobMaster ended its reconciliation (P3.4): `reported` executions were reported,
    /// `missing` TaskManagers did not report in time.
    ReconcileEnded {
        outcome: ReconcileOutcome,
        reported: u32,
        missing: u32,
    },
    /// An RPC was lost in the network; its sender retries it after `retry`.
    RpcLost {
        from: Address,
        to: Address,
        retry: Duration,
    },
}

impl TraceEvent {
    /// The event's `"type"` in JSON Lines and its tag in the hash.
    pub fn kind(&self) -> &'static str {
        match self {
            TraceEvent::JobStatus { .. } => "job_status",
            TraceEvent::ExecutionState { .. } => "execution_state",
            TraceEvent::TaskState { .. } => "task_state",
            TraceEvent::Rpc { .. } => "rpc",
            TraceEvent::Push { .. } => "push",
            TraceEvent::Arrive { .. } => "arrive",
            TraceEvent::Take { .. } => "take",
            TraceEvent::Blocked { .. } => "blocked",
            TraceEvent::EndOfInput { .. } => "end_of_input",
            TraceEvent::CheckpointTriggered { .. } => "checkpoint_triggered",
            TraceEvent::CheckpointNotTriggered { .. } => "checkpoint_not_triggered",
            TraceEvent::CheckpointSeen { .. } => "checkpoint_seen",
            TraceEvent::BarrierInserted { .. } => "barrier_inserted",
            TraceEvent::AlignmentDone { .. } => "alignment_done",
            TraceEvent::Snapshot { .. } => "snapshot",
            TraceEvent::Retrigger { .. } => "retrigger",
            TraceEvent::CheckpointCompleted { .. } => "checkpoint_completed",
            TraceEvent::CheckpointAborted { .. } => "checkpoint_aborted",
            TraceEvent::Commit { .. } => "commit",
            TraceEvent::TransactionCommitted { .. } => "transaction_committed",
            TraceEvent::AllRecordsProcessed { .. } => "all_records_processed",
            TraceEvent::FaultFired { .. } => "fault",
            TraceEvent::Failover { .. } => "failover",
            TraceEvent::Restore { .. } => "restore",
            TraceEvent::JobMasterLost { .. } => "jobmaster_lost",
            TraceEvent::JobMasterElected { .. } => "jobmaster_elected",
            TraceEvent::TaskManagerLost { .. } => "taskmanager_lost",
            TraceEvent::TaskManagerStarted { .. } => "taskmanager_started",
            TraceEvent::TaskManagerTimedOut { .. } => "taskmanager_timed_out",
            TraceEvent::RestartsExhausted { .. } => "restarts_exhausted",
            TraceEvent::ChannelState { .. } => "channel_state",
            TraceEvent::RestoreRejected { .. } => "restore_rejected",
            TraceEvent::RpcLost { .. } => "rpc_lost",
            TraceEvent::RpcDropped { .. } => "rpc_dropped",
            TraceEvent::RpcRefused { .. } => "rpc_refused",
            TraceEvent::ReconcileEnded { .. } => "reconcile_ended",
            TraceEvent::Batch(b) => b.kind(),
        }
    }

    /// Record-level events (one per record per hop) as opposed to protocol-level ones; the
    /// default timeline hides them.
    pub fn is_data(&self) -> bool {
        match self {
            TraceEvent::Push { element, .. }
            | TraceEvent::Arrive { element, .. }
            | TraceEvent::Take { element, .. } => matches!(element, Element::Record(_)),
            TraceEvent::Blocked { .. } | TraceEvent::Commit { .. } => true,
            TraceEvent::JobStatus { .. }
            | TraceEvent::ExecutionState { .. }
            | TraceEvent::TaskState { .. }
            | TraceEvent::Rpc { .. }
            | TraceEvent::EndOfInput { .. }
            | TraceEvent::CheckpointTriggered { .. }
            | TraceEvent::CheckpointNotTriggered { .. }
            | TraceEvent::CheckpointSeen { .. }
            | TraceEvent::BarrierInserted { .. }
            | TraceEvent::AlignmentDone { .. }
            | TraceEvent::Snapshot { .. }
            | TraceEvent::Retrigger { .. }
            | TraceEvent::CheckpointCompleted { .. }
            | TraceEvent::CheckpointAborted { .. }
            | TraceEvent::TransactionCommitted { .. }
            | TraceEvent::AllRecordsProcessed { .. }
            | TraceEvent::FaultFired { .. }
            | TraceEvent::Failover { .. }
            | TraceEvent::Restore { .. }
            | TraceEvent::JobMasterLost { .. }
            | TraceEvent::JobMasterElected { .. }
            | TraceEvent::TaskManagerLost { .. }
            | TraceEvent::TaskManagerStarted { .. }
            | TraceEvent::TaskManagerTimedOut { .. }
            | TraceEvent::RestartsExhausted { .. }
            | TraceEvent::RestoreRejected { .. }
            | TraceEvent::ChannelState { .. }
            | TraceEvent::RpcLost { .. }
            | TraceEvent::RpcDropped { .. }
            | TraceEvent::RpcRefused { .. }
            | TraceEvent::ReconcileEnded { .. }
            | TraceEvent::Batch(_) => false,
        }
    }

    /// Feeds the event into the trace hash as a fixed sequence of 64-bit words: a tag, then
    /// every field in declaration order. Changing this changes every recorded hash, so it is
    /// part of the trace format (`FORMAT_VERSION`).
    fn hash_into(&self, h: &mut TraceHasher) {
        let id = |s: SubtaskId| u64::from(s.0);
        let ch = |c: ChannelId| u64::from(c.0);
        match *self {
            TraceEvent::JobStatus { from, to } => words(h, 1, &[from as u64, to as u64]),
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            } => words(
                h,
                2,
                &[id(subtask), u64::from(attempt), from as u64, to as u64],
            ),
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } => words(
                h,
                3,
                &[id(subtask), u64::from(attempt), from as u64, to as u64],
            ),
            TraceEvent::Rpc {
                from,
                to,
                sent_at,
                rpc,
            } => {
                words(
                    h,
                    4,
                    &[
                        address_word(from),
                        address_word(to),
                        sent_at.as_nanos(),
                        id(rpc.subtask),
                        u64::from(rpc.attempt),
                    ],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::Push { channel, element } => {
                words(h, 5, &[ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Arrive { channel, element } => {
                words(h, 6, &[ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Take {
                subtask,
                channel,
                element,
            } => {
                words(h, 7, &[id(subtask), ch(channel)]);
                hash_element(h, element);
            }
            TraceEvent::Blocked { subtask, channel } => words(h, 8, &[id(subtask), ch(channel)]),
            TraceEvent::EndOfInput { subtask } => words(h, 9, &[id(subtask)]),
            TraceEvent::CheckpointTriggered { checkpoint } => words(h, 10, &[checkpoint]),
            TraceEvent::CheckpointNotTriggered { reason } => words(h, 11, &[reason as u64]),
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                by_trigger,
            } => words(h, 12, &[id(subtask), checkpoint, u64::from(by_trigger)]),
            TraceEvent::BarrierInserted {
                subtask,
                channel,
                checkpoint,
            } => words(h, 13, &[id(subtask), ch(channel), checkpoint]),
            TraceEvent::AlignmentDone {
                subtask,
                checkpoint,
                alignment,
            } => words(h, 14, &[id(subtask), checkpoint, alignment.as_nanos()]),
            TraceEvent::Snapshot {
                subtask,
                attempt,
                checkpoint,
                finished,
            } => words(
                h,
                15,
                &[
                    id(subtask),
                    u64::from(attempt),
                    checkpoint,
                    u64::from(finished),
                ],
            ),
            TraceEvent::Retrigger {
                checkpoint,
                finished,
                descendant,
            } => words(h, 16, &[checkpoint, id(finished), id(descendant)]),
            TraceEvent::CheckpointCompleted { checkpoint } => words(h, 17, &[checkpoint]),
            TraceEvent::CheckpointAborted { checkpoint, reason } => {
                let (a, b) = match reason {
                    AbortReason::Expired => (1, 0),
                    AbortReason::Subsumed => (2, 0),
                    AbortReason::Declined(d) => (3, d as u64),
                    AbortReason::TriggerMissed => (4, 0),
                    AbortReason::JobEnded => (5, 0),
                    AbortReason::Failover => (6, 0),
                };
                words(h, 18, &[checkpoint, a, b]);
            }
            TraceEvent::Commit {
                subtask,
                checkpoint,
                record,
            } => {
                words(h, 19, &[id(subtask), checkpoint]);
                hash_element(h, Element::Record(record));
            }
            TraceEvent::TransactionCommitted {
                subtask,
                checkpoint,
                records,
            } => words(h, 20, &[id(subtask), checkpoint, records]),
            TraceEvent::AllRecordsProcessed { channel } => words(h, 21, &[ch(channel)]),
            TraceEvent::FaultFired { index, fault } => {
                let (a, b) = match fault {
                    FaultEvent::FailTask(s) => (1, id(s)),
                    FaultEvent::LoseTaskManager(tm) => (2, u64::from(tm)),
                    FaultEvent::CrashJobMaster => (3, 0),
                    FaultEvent::DelaySpike => (4, 0),
                    FaultEvent::RpcLoss => (5, 0),
                    FaultEvent::DisconnectTaskManager(tm) => (6, u64::from(tm)),
                };
                words(h, 22, &[u64::from(index), a, b]);
            }
            TraceEvent::Failover {
                cause,
                restarting,
                full,
            } => words(h, 23, &[id(cause), u64::from(restarting), u64::from(full)]),
            TraceEvent::Restore {
                checkpoint,
                restarted,
                finished,
                region,
            } => words(
                h,
                24,
                &[
                    checkpoint,
                    u64::from(restarted),
                    u64::from(finished),
                    region.map_or(u64::MAX, u64::from),
                ],
            ),
            TraceEvent::JobMasterLost { incarnation } => words(h, 25, &[u64::from(incarnation)]),
            TraceEvent::JobMasterElected { incarnation } => words(h, 26, &[u64::from(incarnation)]),
            TraceEvent::TaskManagerLost { task_manager } => {
                words(h, 27, &[u64::from(task_manager)])
            }
            TraceEvent::TaskManagerStarted { task_manager } => {
                words(h, 28, &[u64::from(task_manager)])
            }
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                words(h, 29, &[u64::from(task_manager)])
            }
            TraceEvent::RestartsExhausted { failovers } => words(h, 30, &[u64::from(failovers)]),
            TraceEvent::RestoreRejected { checkpoint } => words(h, 32, &[checkpoint]),
            TraceEvent::ChannelState {
                subtask,
                checkpoint,
                channel,
                records,
                output,
            } => words(
                h,
                33,
                &[
                    id(subtask),
                    checkpoint,
                    ch(channel),
                    u64::from(records),
                    u64::from(output),
                ],
            ),
            TraceEvent::RpcDropped {
                from,
                to,
                rpc,
                fenced,
            } => {
                words(
                    h,
                    34,
                    &[
                        address_word(from),
                        address_word(to),
                        id(rpc.subtask),
                        u64::from(rpc.attempt),
                        u64::from(fenced),
                    ],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::RpcRefused { from, rpc } => {
                words(
                    h,
                    35,
                    &[address_word(from), id(rpc.subtask), u64::from(rpc.attempt)],
                );
                let (tag, a, b) = call_words(rpc.call);
                words(h, tag, &[a, b]);
            }
            TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            } => words(
                h,
                36,
                &[outcome as u64, u64::from(reported), u64::from(missing)],
            ),
            TraceEvent::Batch(b) => b.hash_into(h),
            TraceEvent::RpcLost { from, to, retry } => words(
                h,
                31,
                &[address_word(from), address_word(to), retry.as_nanos()],
            ),
        }
    }
}

fn words(h: &mut TraceHasher, tag: u64, fields: &[u64]) {
    h.write_u64(tag);
    for &w in fields {
        h.write_u64(w);
    }
}

/// An RPC call as `(tag, word, word)` for the hash.
fn call_words(call: Call) -> (u64, u64, u64) {
    match call {
        Call::SubmitTask(restore) => (1, restore.checkpoint, u64::from(restore.finished)),
        Call::UpdateTaskExecutionState(state) => (2, state as u64, 0),
        Call::TriggerCheckpoint(n) => (3, n, 0),
        Call::NotifyCheckpointComplete(n) => (4, n, 0),
        Call::NotifyCheckpointAborted(n) => (5, n, 0),
        Call::AcknowledgeCheckpoint {
            checkpoint,
            finished,
        } => (6, checkpoint, u64::from(finished)),
        Call::DeclineCheckpoint { checkpoint, reason } => (7, checkpoint, reason as u64),
        Call::TriggerMissed(n) => (8, n, 0),
        Call::Finishing => (9, 0, 0),
        Call::FinishingAnswer(set) => (10, set.base, set.mask),
        Call::CancelTask => (11, 0, 0),
        Call::ReportExecution(state) => (12, state as u64, 0),
        Call::ReportDone => (13, 0, 0),
    }
}

fn address_word(address: Address) -> u64 {
    match address {
        Address::JobMaster => u64::MAX,
        Address::TaskManager(i) => u64::from(i),
    }
}

fn hash_element(h: &mut TraceHasher, element: Element) {
    match element {
        Element::Record(r) => words(
            h,
            1,
            &[
                u64::from(r.origin.0),
                u64::from(r.key),
                r.seq,
                r.value as u64,
            ],
        ),
        Element::EndOfPartition => words(h, 2, &[]),
        Element::Barrier(n) => words(h, 3, &[n]),
        Element::EndOfData => words(h, 4, &[]),
        Element::PriorityBarrier(n) => words(h, 5, &[n]),
    }
}

/// Version of the trace format: the JSON Lines layout and the hash input. Bumped whenever either
/// changes, so an old trace is never compared against a new run as if they matched.
pub const FORMAT_VERSION: u32 = 2;

/// Which events a run keeps in memory for rendering after it ends. Hashing and the oracles see
/// every event regardless.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Retain {
    Nothing,
    /// Everything but record-level events (the default timeline).
    Protocol,
    Everything,
}

/// The most events a trace keeps in memory for rendering (about a gigabyte): a long run with
/// `--trace` must not exhaust memory; the trace file says when events were left out.
pub const MAX_KEPT_EVENTS: usize = 16_000_000;

/// The running trace: a count, a hash and, when asked, the events themselves.
pub struct Trace {
    hasher: TraceHasher,
    count: u64,
    retain: Retain,
    kept: Vec<(u64, Instant, TraceEvent)>,
}

impl Trace {
    pub fn new(retain: Retain) -> Trace {
        Trace {
            hasher: TraceHasher::new(),
            count: 0,
            retain,
            kept: Vec::new(),
        }
    }

    /// Appends an event and returns its index (the `event_index` violations refer to).
    #[inline]
    pub fn record(&mut self, now: Instant, event: TraceEvent) -> u64 {
        let index = self.count;
        self.count += 1;
        self.hasher.write_u64(now.as_nanos());
        event.hash_into(&mut self.hasher);
        let keep = match self.retain {
            Retain::Nothing => false,
            Retain::Protocol => !event.is_data(),
            Retain::Everything => true,
        };
        // Past the cap the trace goes on counting and hashing, but keeps no more events.
        if keep && self.kept.len() < MAX_KEPT_EVENTS {
            self.kept.push((index, now, event));
        }
        index
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn hash(&self) -> u64 {
        self.hasher.finish()
    }

    /// The retained events with their indices, in order.
    pub fn kept(&self) -> &[(u64, Instant, TraceEvent)] {
        &self.kept
    }
}
