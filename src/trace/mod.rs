//! What happened in a run, as a sequence of typed events: the single source for the trace hash,
//! the oracles and every rendering (timeline, JSON Lines).
//!
//! Events are small `Copy` values with ids, not strings: recording one costs a few hash steps
//! and, when an output was asked for, one `Vec` push. Names (`map[0]`, `src[0]->map[0]`) are
//! only produced when something is rendered (`crate::report`).
//!
//! One vocabulary serves both kinds of job: streaming runs record the checkpoint and data
//! events, batch runs the job-event log, partition and recovery events (P2), and both the job,
//! execution, task, fault and reconciliation events.

mod budget;
mod hash;
mod reasons;
mod rpc;

pub use budget::{per_event_budget, EventWorkExceeded};
pub use reasons::{
    AbortReason, DeclineReason, FaultEvent, FlushReason, Logged, ReconcileOutcome, RerunReason,
    SavepointRefusal, TriggerFailure,
};
pub use rpc::{Address, Call, CheckpointSet, Restore, Rpc};

use crate::graph::{ChannelId, SubtaskId, VertexId};
use crate::record::{Element, Record};
use crate::status::{ExecutionState, JobStatus};
use sim::{Duration, Instant, TraceHasher};

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
    /// F1.14 step 10 (network buffers on): a producer put a data buffer of `records` records
    /// on `channel`'s wire. `digest` identifies them (`record::digest`). Their record-level
    /// `push` events are shown to the oracles and, when everything is kept, follow it in the
    /// rendered trace, but are not hashed.
    BufferSent {
        channel: ChannelId,
        records: u32,
        digest: u64,
    },
    /// F1.14 step 10: a data buffer of `records` records reached the consumer of `channel`
    /// (which ones follows from the FIFO order of the `buffer_sent` events).
    BufferArrived {
        channel: ChannelId,
        records: u32,
    },
    /// F1.14 step 10: in one step a consumer took `records` records of one data buffer from
    /// `channel` and processed them (`digest` as for `buffer_sent`).
    BufferTaken {
        subtask: SubtaskId,
        channel: ChannelId,
        records: u32,
        digest: u64,
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
    /// F1.8: the asynchronous part of the task's snapshot for `checkpoint` is over: the state
    /// is in durable storage and the task acknowledges the checkpoint.
    SnapshotUploaded {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
    },
    /// F1.7 (at least once): every channel open at the checkpoint's first barrier delivered
    /// it or ended, `waited` after the first one: the task snapshots. No channel was blocked
    /// meanwhile: `past_barrier` records came from channels after their barrier, so the
    /// snapshot holds them and a restore from it replays them.
    BarriersCounted {
        subtask: SubtaskId,
        checkpoint: u64,
        waited: Duration,
        past_barrier: u32,
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
    /// An at-least-once sink chained behind other operators (F1.12) wrote `record` out: the
    /// job's output, which no channel carried, so no `take` shows it.
    ChainedSink {
        subtask: SubtaskId,
        record: Record,
    },
    /// A two-phase-commit sink committed the transaction pre-committed at `checkpoint`.
    /// With network buffers (F1.14 step 12) this one event stands for the transaction's
    /// `commit` events, with `digest` the digest of its records (`record::digest`); without,
    /// `digest` is `None` and a `commit` event for each record comes before it.
    TransactionCommitted {
        subtask: SubtaskId,
        checkpoint: u64,
        records: u64,
        digest: Option<u64>,
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
    /// The last hold on `channel` ended: the `arrivals` elements whose arrival came while it
    /// was held arrive now, in order.
    ChannelReleased {
        channel: ChannelId,
        arrivals: u32,
    },
    /// F1.11 step 1: checkpoint `checkpoint` (recorded `checkpoint_triggered` right after) is a
    /// synchronous savepoint that stops the job, draining it (`drain`) or not.
    SavepointTriggered {
        checkpoint: u64,
        drain: bool,
    },
    /// F1.11 step 1: the JobMaster refused a stop-with-savepoint; nothing was triggered and
    /// the job runs on.
    SavepointRefused {
        reason: SavepointRefusal,
    },
    /// F1.11 step 2: a source took the trigger of savepoint `checkpoint` and stopped emitting
    /// records; with `drain` its input ended as a bounded one does.
    SourceStopped {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
        drain: bool,
    },
    /// F1.11 step 5: the stop-with-savepoint failed (its savepoint `checkpoint` was aborted, or,
    /// with 0, could not be triggered): periodic checkpoints resume.
    SavepointFailed {
        checkpoint: u64,
    },
    /// The JobMaster starts a failover because `cause` failed (P1.8): `restarting` subtasks
    /// are cancelled and redeployed, the whole job (`full`) or a pipelined region.
    Failover {
        /// `None`: a global failure (too many checkpoint failures in a row, F1.9).
        cause: Option<SubtaskId>,
        restarting: u32,
        full: bool,
    },
    /// F1.9: checkpoint `checkpoint` was the `failures`-th counted checkpoint failure in a row,
    /// one more than `tolerable_failures`: the coordinator fails the job over.
    CheckpointFailuresExceeded {
        checkpoint: u64,
        failures: u32,
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
    // ---- Recorded by batch runs only (P2, and P3 in batch jobs).
    /// The JobMaster initialized a vertex: its inputs finished (P2.1), with this parallelism,
    /// decided from `input_bytes` when `adaptive`, or replayed from the job events.
    VertexInitialized {
        vertex: VertexId,
        parallelism: u32,
        input_bytes: u64,
        adaptive: bool,
    },
    /// The split enumerator answered a split request (`None`: no split left).
    SplitAssigned {
        subtask: SubtaskId,
        attempt: u32,
        split: Option<u32>,
    },
    /// A producer wrote its whole result partition.
    PartitionWritten {
        subtask: SubtaskId,
        attempt: u32,
        bytes: u64,
        remote: bool,
    },
    /// The JobMaster appended an event to the job event store's write buffer.
    JobEventLogged {
        what: Logged,
        snapshot: bool,
    },
    /// The write buffer reached durable storage.
    JobEventsFlushed {
        events: u32,
        reason: FlushReason,
    },
    /// The JobMaster died with these events still unflushed.
    JobEventsLost {
        events: u32,
    },
    /// The job event store failed to write (F2.3): the `events` in the write buffer are lost
    /// and this JobMaster logs nothing more.
    JobEventsWriteFailed {
        events: u32,
    },
    /// A new JobMaster could not read the `events` durable job events back (F2.4 step 5): the
    /// log is deleted and the job restarts in full.
    JobEventsUnreadable {
        events: u32,
    },
    /// A new JobMaster replayed `replayed` durable events (`discarded` trailing finished ones
    /// without a snapshot); `full_restart`: recovery is off or there was nothing to replay.
    RecoveryStarted {
        replayed: u32,
        discarded: u32,
        full_restart: bool,
    },
    /// A TaskManager reported a partition it kept; `late`: after the wait (F2.4).
    PartitionReported {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
        late: bool,
    },
    /// P3.3: a reconciling JobMaster refused a task's RPC; its TaskManager keeps it (the
    /// batch JobMaster's record, `batch_rpc_refused` in JSON; streaming records `RpcRefused`).
    TaskRpcRefused {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
    },
    /// The JobMaster asks a TaskManager to release a partition.
    ReleaseRequested {
        task_manager: u32,
        subtask: SubtaskId,
        attempt: u32,
    },
    /// A partition was released (dropped by its holder).
    PartitionReleased {
        subtask: SubtaskId,
        attempt: u32,
        remote: bool,
    },
    /// A subtask that had already run is reset to run again.
    SubtaskReset {
        subtask: SubtaskId,
        reason: RerunReason,
    },
    /// Recovery is over (P2.4): `recovered` subtasks kept as finished; the wait for reports
    /// ended by `previous_worker_timeout` when `timed_out`.
    RecoveryEnded {
        recovered: u32,
        rerun: u32,
        timed_out: bool,
    },
    /// A consumer could not read `producer`'s partition.
    PartitionNotFound {
        subtask: SubtaskId,
        producer: SubtaskId,
    },
    /// A TaskManager lost / regained its connection to the JobManager.
    TaskManagerDisconnected {
        task_manager: u32,
    },
    TaskManagerReconnected {
        task_manager: u32,
    },
    /// F2.5: a TaskManager stopped trusting its JobManager (a heartbeat timeout, a lost
    /// connection or a newer leader); its partitions now wait for a new one only until the
    /// registration timeout.
    LeaderLost {
        task_manager: u32,
    },
    /// A TaskManager learned of the current JobManager (HA) and registers with it.
    LeaderFound {
        task_manager: u32,
    },
    /// The JobMaster deploys an attempt to a TaskManager, into one of its slots.
    Deployed {
        subtask: SubtaskId,
        attempt: u32,
        task_manager: u32,
        /// P2.8: a speculative attempt, beside the original one.
        speculative: bool,
    },
    /// P2.7: the finished job's result is durable in HA storage; the job is over.
    JobResultWritten,
    /// P2.8: the slow-task detector looks (every `check_interval` while the job runs): it
    /// blocks the TaskManagers of slow attempts, then places speculative attempts.
    SpeculationChecked,
    /// The job finished: a sink subtask's output is committed.
    OutputCommitted {
        subtask: SubtaskId,
        records: u64,
    },
}

// Every event is copied into the trace and the oracles: the largest variant is `Rpc` (two
// addresses, a send time and the RPC); the batch variants carry at most 24 bytes of fields and
// must stay below it.
const _: () = assert!(std::mem::size_of::<TraceEvent>() <= 64);

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
            TraceEvent::BufferSent { .. } => "buffer_sent",
            TraceEvent::BufferArrived { .. } => "buffer_arrived",
            TraceEvent::BufferTaken { .. } => "buffer_taken",
            TraceEvent::Blocked { .. } => "blocked",
            TraceEvent::EndOfInput { .. } => "end_of_input",
            TraceEvent::CheckpointTriggered { .. } => "checkpoint_triggered",
            TraceEvent::CheckpointNotTriggered { .. } => "checkpoint_not_triggered",
            TraceEvent::CheckpointSeen { .. } => "checkpoint_seen",
            TraceEvent::BarrierInserted { .. } => "barrier_inserted",
            TraceEvent::AlignmentDone { .. } => "alignment_done",
            TraceEvent::BarriersCounted { .. } => "barriers_counted",
            TraceEvent::SnapshotUploaded { .. } => "snapshot_uploaded",
            TraceEvent::Snapshot { .. } => "snapshot",
            TraceEvent::Retrigger { .. } => "retrigger",
            TraceEvent::CheckpointCompleted { .. } => "checkpoint_completed",
            TraceEvent::CheckpointAborted { .. } => "checkpoint_aborted",
            TraceEvent::CheckpointFailuresExceeded { .. } => "checkpoint_failures_exceeded",
            TraceEvent::Commit { .. } => "commit",
            TraceEvent::ChainedSink { .. } => "chained_sink",
            TraceEvent::TransactionCommitted { .. } => "transaction_committed",
            TraceEvent::AllRecordsProcessed { .. } => "all_records_processed",
            TraceEvent::FaultFired { .. } => "fault",
            TraceEvent::ChannelReleased { .. } => "channel_released",
            TraceEvent::SavepointTriggered { .. } => "savepoint_triggered",
            TraceEvent::SavepointRefused { .. } => "savepoint_refused",
            TraceEvent::SourceStopped { .. } => "source_stopped",
            TraceEvent::SavepointFailed { .. } => "savepoint_failed",
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
            TraceEvent::VertexInitialized { .. } => "vertex_initialized",
            TraceEvent::SplitAssigned { .. } => "split_assigned",
            TraceEvent::PartitionWritten { .. } => "partition_written",
            TraceEvent::JobEventLogged { .. } => "job_event_logged",
            TraceEvent::JobEventsFlushed { .. } => "job_events_flushed",
            TraceEvent::JobEventsLost { .. } => "job_events_lost",
            TraceEvent::JobEventsWriteFailed { .. } => "job_events_write_failed",
            TraceEvent::JobEventsUnreadable { .. } => "job_events_unreadable",
            TraceEvent::RecoveryStarted { .. } => "recovery_started",
            TraceEvent::PartitionReported { .. } => "partition_reported",
            TraceEvent::ReleaseRequested { .. } => "release_requested",
            TraceEvent::TaskRpcRefused { .. } => "batch_rpc_refused",
            TraceEvent::PartitionReleased { .. } => "partition_released",
            TraceEvent::SubtaskReset { .. } => "subtask_reset",
            TraceEvent::RecoveryEnded { .. } => "recovery_ended",
            TraceEvent::PartitionNotFound { .. } => "partition_not_found",
            TraceEvent::TaskManagerDisconnected { .. } => "taskmanager_disconnected",
            TraceEvent::TaskManagerReconnected { .. } => "taskmanager_reconnected",
            TraceEvent::LeaderLost { .. } => "leader_lost",
            TraceEvent::LeaderFound { .. } => "leader_found",
            TraceEvent::JobResultWritten => "job_result_written",
            TraceEvent::SpeculationChecked => "speculation_checked",
            TraceEvent::OutputCommitted { .. } => "output_committed",
            TraceEvent::Deployed { .. } => "deployed",
        }
    }

    /// Record-level events (one per record per hop) as opposed to protocol-level ones; the
    /// default timeline hides them.
    pub fn is_data(&self) -> bool {
        match self {
            TraceEvent::Push { element, .. }
            | TraceEvent::Arrive { element, .. }
            | TraceEvent::Take { element, .. } => matches!(element, Element::Record(_)),
            TraceEvent::BufferSent { .. }
            | TraceEvent::BufferArrived { .. }
            | TraceEvent::BufferTaken { .. }
            | TraceEvent::Blocked { .. }
            | TraceEvent::Commit { .. }
            | TraceEvent::ChainedSink { .. } => true,
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
            | TraceEvent::BarriersCounted { .. }
            | TraceEvent::SnapshotUploaded { .. }
            | TraceEvent::Snapshot { .. }
            | TraceEvent::Retrigger { .. }
            | TraceEvent::CheckpointCompleted { .. }
            | TraceEvent::CheckpointAborted { .. }
            | TraceEvent::CheckpointFailuresExceeded { .. }
            | TraceEvent::TransactionCommitted { .. }
            | TraceEvent::AllRecordsProcessed { .. }
            | TraceEvent::FaultFired { .. }
            | TraceEvent::ChannelReleased { .. }
            | TraceEvent::SavepointTriggered { .. }
            | TraceEvent::SavepointRefused { .. }
            | TraceEvent::SourceStopped { .. }
            | TraceEvent::SavepointFailed { .. }
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
            | TraceEvent::VertexInitialized { .. }
            | TraceEvent::SplitAssigned { .. }
            | TraceEvent::PartitionWritten { .. }
            | TraceEvent::JobEventLogged { .. }
            | TraceEvent::JobEventsFlushed { .. }
            | TraceEvent::JobEventsLost { .. }
            | TraceEvent::JobEventsWriteFailed { .. }
            | TraceEvent::JobEventsUnreadable { .. }
            | TraceEvent::RecoveryStarted { .. }
            | TraceEvent::PartitionReported { .. }
            | TraceEvent::ReleaseRequested { .. }
            | TraceEvent::TaskRpcRefused { .. }
            | TraceEvent::PartitionReleased { .. }
            | TraceEvent::SubtaskReset { .. }
            | TraceEvent::RecoveryEnded { .. }
            | TraceEvent::PartitionNotFound { .. }
            | TraceEvent::TaskManagerDisconnected { .. }
            | TraceEvent::TaskManagerReconnected { .. }
            | TraceEvent::LeaderLost { .. }
            | TraceEvent::LeaderFound { .. }
            | TraceEvent::JobResultWritten
            | TraceEvent::SpeculationChecked
            | TraceEvent::OutputCommitted { .. }
            | TraceEvent::Deployed { .. } => false,
        }
    }
}

/// Version of the trace format: the JSON Lines layout and the hash input. Bumped whenever either
/// changes, so an old trace is never compared against a new run as if they matched. 3 added the
/// violation lines (`{"type":"violation",…}` after the event where an oracle saw one); the
/// events and the hash input are those of 2, so `replay` still reads format 2 files.
pub const FORMAT_VERSION: u32 = 3;

/// The oldest trace format `replay` compares against a run of this version: format 2 differs
/// from 3 only in having no violation lines.
pub const OLDEST_REPLAYABLE_FORMAT: u32 = 2;

/// Which events a run keeps in memory for rendering after it ends. Hashing and the oracles see
/// every event regardless; only `Everything` also keeps the record-level details of network
/// buffer events (F1.14 step 10), which are never hashed.
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
    /// Of `kept`, the record-level events of network buffers (F1.14 step 10), kept for
    /// rendering under the buffer event they belong to but not hashed nor counted.
    details: u64,
    /// Trace events one kernel event may record (`trace::budget`); unbounded unless a world sets it.
    per_event: u64,
    /// The count past which the event being handled is abandoned.
    event_limit: u64,
}

impl Trace {
    pub fn new(retain: Retain) -> Trace {
        Trace {
            hasher: TraceHasher::new(),
            count: 0,
            retain,
            kept: Vec::new(),
            details: 0,
            per_event: u64::MAX,
            event_limit: u64::MAX,
        }
    }

    /// Bounds the trace events each kernel event may record (`trace::budget`).
    pub fn limit_work_per_event(&mut self, per_event: u64) {
        self.per_event = per_event;
    }

    /// A kernel event begins: it may record [`Trace::limit_work_per_event`]'s number of events.
    #[inline]
    pub fn begin_event(&mut self) {
        self.event_limit = self.count.saturating_add(self.per_event);
    }

    /// Appends an event and returns its index (the `event_index` violations refer to).
    // `always`: on the hot path of every recorded event; left to the inliner, one JobMaster
    // type's larger callers made it call this out of line (+5% instructions, `.ci/perf-check`).
    #[inline(always)]
    pub fn record(&mut self, now: Instant, event: TraceEvent) -> u64 {
        if self.count >= self.event_limit {
            budget::exceeded(self.per_event);
        }
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

    /// F1.14 step 10: the record-level event `event` of the buffer event `index` (recorded
    /// just before), kept for rendering only when everything is kept (`--timeline all`,
    /// `--trace`); never hashed nor counted, so what a user asks to see never changes the run.
    #[inline]
    pub fn detail(&mut self, index: u64, now: Instant, event: TraceEvent) {
        if self.retain == Retain::Everything && self.kept.len() < MAX_KEPT_EVENTS {
            self.kept.push((index, now, event));
            self.details += 1;
        }
    }

    /// Whether record-level events of buffers are kept ([`Trace::detail`]): only then are
    /// they worth making.
    #[inline]
    pub fn keeps_details(&self) -> bool {
        self.retain == Retain::Everything
    }

    /// Kept record-level details of buffer events ([`Trace::detail`]).
    pub fn details(&self) -> u64 {
        self.details
    }

    /// Kept events that are trace events (hashed and counted), not a buffer's details.
    pub fn kept_events(&self) -> u64 {
        self.kept.len() as u64 - self.details
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
