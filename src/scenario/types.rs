//! The validated scenario: what the rest of the simulator reads.
//!
//! Every value here has passed validation and has its default filled in, so the model never
//! re-checks a scenario nor knows what the file left out. The JSON spelling of each enum lives
//! in its serde attributes; the format as a whole is documented in the module doc of
//! [`crate::scenario`].

use crate::bug::Bug;
use crate::oracle::invariant::Invariant;
use crate::status::JobStatus;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sim::Duration;
use std::fmt;

/// One situation to simulate, with what its run is expected to show.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The master seed every random stream of the run is forked from.
    pub seed: u64,
    pub mode: Mode,
    pub job: Job,
    pub cluster: Cluster,
    pub network: Network,
    /// `None`: checkpointing is disabled, no checkpoint is ever triggered.
    pub checkpointing: Option<Checkpointing>,
    pub budget: Budget,
    /// The faults to inject, in file order; each fires at most once.
    pub faults: Vec<Fault>,
    /// From this instant on no fault fires: the healed phase, in which the job must recover.
    /// `None`: the healed phase begins once the last fault fired. Never before the `at` of a
    /// fault, never after `budget.max_time`.
    pub heal_at: Option<Duration>,
    pub jobmaster: JobMasterConfig,
    pub tie_break: TieBreak,
    /// `Some` exactly in `mode: "batch"` (P2).
    pub batch: Option<super::batch::Batch>,
    /// F1.6: the checkpoint the job starts from, instead of from nothing.
    pub restore_from: Option<super::restore_from::RestoreFrom>,
    /// The injected bug of the run, if any; `None` runs the protocols as designed.
    pub bug: Option<Bug>,
    pub expect: Expect,
    /// The document as written (parsed JSON), embedded in trace headers so a trace can be replayed.
    pub document: serde_json::Value,
}

/// Flink's runtime execution mode (`execution.runtime-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Streaming,
    Batch,
}

/// The job graph as the user wrote it, before it is expanded into subtasks and channels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// In file order, so that a vertex index is stable and names the same vertex everywhere.
    pub vertices: Vec<Vertex>,
    pub edges: Vec<Edge>,
}

/// One operator of the job graph and how many parallel subtasks run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vertex {
    pub id: String,
    /// For an `"auto"` vertex (batch, P2.1): the upper bound; the run decides the rest.
    pub parallelism: u32,
    /// `"parallelism": "auto"`: decided from input bytes when the inputs finish (P2.1).
    pub adaptive: bool,
    /// The operators one task of this vertex runs, head first (F1.12): one for a vertex
    /// written with `operator`, several for one written with `chain`.
    pub chain: Chain,
    /// The simulated cost of processing one record, so a slow operator builds back-pressure.
    pub process_time: DurationRange,
    /// F1.13: a streaming source that reads this many splits its enumerator assigns
    /// (`coordinators.<vertex>.splits`); its `records` then counts each split's records.
    pub splits: Option<u32>,
}

/// The operators of one vertex, head first: an operator chain (F1.12). Never empty. A record
/// a task takes goes through them in order inside the task, with no channel between them, as
/// in Flink's `OperatorChain`; the head alone reads the vertex's input channels and the tail
/// alone writes its output channels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain(Vec<ChainedOperator>);

/// One operator of a chain and the id its state is stored under (Flink's operator uid), which
/// is how a checkpoint's state finds its operator again in a changed job graph (F1.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainedOperator {
    pub uid: String,
    pub operator: Operator,
}

impl Chain {
    /// A chain of the given operators, head first; validation guarantees at least one.
    pub fn new(operators: Vec<ChainedOperator>) -> Chain {
        assert!(!operators.is_empty(), "a vertex runs at least one operator");
        Chain(operators)
    }

    /// A vertex of one operator, stored under `uid`.
    pub fn single(uid: &str, operator: Operator) -> Chain {
        Chain(vec![ChainedOperator {
            uid: uid.to_owned(),
            operator,
        }])
    }

    /// The first operator: the one that reads the vertex's input (or, a source, emits).
    pub fn head(&self) -> &Operator {
        &self.0[0].operator
    }

    /// The last operator: the one whose output leaves the vertex (or, a sink, leaves the job).
    pub fn tail(&self) -> &Operator {
        &self.0[self.0.len() - 1].operator
    }

    pub fn members(&self) -> &[ChainedOperator] {
        &self.0
    }

    pub fn operators(&self) -> impl Iterator<Item = &Operator> {
        self.0.iter().map(|m| &m.operator)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// A chain is never empty; for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The vertex emits records of its own: its head is a source.
    pub fn is_source(&self) -> bool {
        matches!(self.head(), Operator::Source { .. })
    }

    /// The sink's delivery, when the chain ends in a sink.
    pub fn sink(&self) -> Option<Delivery> {
        match self.tail() {
            Operator::Sink { delivery } => Some(*delivery),
            Operator::Source { .. } | Operator::Map | Operator::KeyedSum { .. } => None,
        }
    }

    /// The number of keys of the chain's keyed sum (a chain holds at most one): its input
    /// edges partition records by key modulo this number.
    pub fn keys(&self) -> Option<u32> {
        self.operators().find_map(|o| match o {
            Operator::KeyedSum { keys } => Some(*keys),
            Operator::Source { .. } | Operator::Map | Operator::Sink { .. } => None,
        })
    }

    /// The source's settings, when the head is a source.
    pub fn source(&self) -> Option<(&[Records], DurationRange)> {
        match self.head() {
            Operator::Source {
                records,
                record_interval,
            } => Some((records, *record_interval)),
            Operator::Map | Operator::KeyedSum { .. } | Operator::Sink { .. } => None,
        }
    }

    /// The operators' names joined by arrows, `source`, or `map -> keyed_sum`, for messages.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.operators().map(Operator::name).collect();
        names.join(" -> ")
    }
}

/// What a vertex does, with the settings that only make sense for that kind of operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operator {
    /// Emits records on its own; `records` has exactly one entry per subtask.
    Source {
        records: Vec<Records>,
        record_interval: DurationRange,
    },
    /// Forwards every record unchanged (stateless).
    Map,
    /// Keeps a running sum per key, the keyed state that checkpoints must capture.
    KeyedSum { keys: u32 },
    /// Delivers records to the outside world, where exactly-once is judged.
    Sink { delivery: Delivery },
}

impl Operator {
    /// The name as written in the file.
    pub fn name(&self) -> &'static str {
        match self {
            Operator::Source { .. } => "source",
            Operator::Map => "map",
            Operator::KeyedSum { .. } => "keyed_sum",
            Operator::Sink { .. } => "sink",
        }
    }
}

/// How many records one source subtask emits before its input ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Records {
    Bounded(u64),
    /// The subtask never finishes on its own.
    Unbounded,
}

/// The guarantee a sink gives for what it writes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Writes each record as it arrives; a replay after failover writes it again.
    AtLeastOnce,
    /// Pre-commits per checkpoint and commits when the checkpoint completes (exactly-once).
    TwoPhaseCommit,
}

/// A connection between two vertices; `from` and `to` are indices into [`Job::vertices`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub pattern: Pattern,
    pub exchange: Exchange,
    pub partitioner: Partitioner,
}

/// Which upstream subtasks feed which downstream subtasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Pointwise, as Flink's `POINTWISE` distribution: with equal parallelism subtask `i` feeds
    /// only subtask `i`; otherwise each subtask is connected to a contiguous range of the other
    /// side's subtasks.
    Forward,
    /// Every upstream subtask has a channel to every downstream subtask.
    AllToAll,
}

/// When a consumer may read what a producer wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exchange {
    /// Records flow while the producer runs (streaming).
    Pipelined,
    /// The producer's whole output is stored first and read after it finished (batch).
    Blocking,
}

/// How an all-to-all edge picks the downstream subtask of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Partitioner {
    /// By the record's key, as Flink's `keyBy` does.
    KeyHash,
    RoundRobin,
}

/// A simulated delay drawn uniformly from `min..=max`; `min == max` for a fixed delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationRange {
    pub min: Duration,
    pub max: Duration,
}

impl DurationRange {
    /// A range that always yields `d`.
    pub const fn fixed(d: Duration) -> DurationRange {
        DurationRange { min: d, max: d }
    }
}

/// Prints the form the scenario files use, `"1ms"` or `"1ms..2ms"`, so a printed range can be
/// pasted back into a file.
impl fmt::Display for DurationRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}..{}", self.min, self.max)
        }
    }
}

/// The TaskManagers the job is scheduled on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub task_managers: u32,
    pub slots_per_task_manager: u32,
    /// Streaming: how long a deployed task stays INITIALIZING (restoring its state) before it
    /// is RUNNING; zero: at once.
    pub task_initialization: DurationRange,
}

/// Delays and buffering of the simulated network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    /// Delay of one buffer on a data channel between two subtasks.
    pub channel_latency: DurationRange,
    /// Delay of one RPC between JobMaster and TaskManagers.
    pub rpc_latency: DurationRange,
    /// Buffers a channel holds before its producer is back-pressured.
    pub channel_capacity: u32,
    /// Channels with a latency of their own instead of `channel_latency`.
    pub channels: Vec<ChannelLatency>,
    /// F1.14: records travel in network buffers, with credit per buffer; `None`: one record
    /// per element, credit per record (`channel_capacity`).
    pub buffers: Option<NetworkBuffers>,
}

/// Flink's network buffers (F1.14), as a scenario sets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkBuffers {
    /// `network.buffer_size`: bytes of one buffer (Flink's memory segment, 32 KB by default).
    pub size_bytes: u32,
    /// `network.record_bytes`: bytes one serialised record takes.
    pub record_bytes: u32,
    /// `network.buffer_timeout`: how often the output flusher sends partly filled buffers
    /// (Flink's `execution.buffer-timeout`); zero: after every record.
    pub timeout: Duration,
    /// Buffers each input channel owns (Flink's `buffers-per-channel`), at least 1.
    pub exclusive_per_channel: u32,
    /// Buffers an input gate shares among its channels (Flink's `floating-buffers-per-gate`).
    pub floating_per_gate: u32,
}

impl NetworkBuffers {
    /// Records that fill one buffer, at least 1.
    pub fn records_per_buffer(&self) -> u32 {
        self.size_bytes / self.record_bytes
    }
}

/// The latency of the channel (or channels, one per edge) from one subtask to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelLatency {
    pub from: SubtaskRef,
    pub to: SubtaskRef,
    pub latency: DurationRange,
}

/// How the CheckpointCoordinator triggers checkpoints and how tasks take part (P1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpointing {
    /// Time between two periodic triggers, above 0; `None`: no periodic trigger, only
    /// `trigger_at`.
    pub interval: Option<Duration>,
    /// Instants (since the start of the run) of extra triggers; sorted ascending, no duplicates.
    pub trigger_at: Vec<Duration>,
    /// A pending checkpoint not completed this long after its trigger is aborted; above 0.
    pub timeout: Duration,
    /// Checkpoints pending at once, 1 to 64 (pending checkpoints are tracked in a 64-wide window).
    pub max_concurrent: u32,
    /// Least time between the end of one checkpoint and the trigger of the next.
    pub min_pause: Duration,
    pub mode: CheckpointMode,
    /// An aligned checkpoint whose alignment lasts longer switches to unaligned (P1.4).
    pub alignment_timeout: Option<Duration>,
    pub finish_protocol: FinishProtocol,
    /// A finishing subtask waits until its result partition is fully sent (P1.5).
    pub flush_before_finish: bool,
    /// How long a snapshot's asynchronous part takes (F1.8): the acknowledgement goes when it
    /// ends. Zero: snapshots are synchronous.
    pub async_duration: DurationRange,
    /// Checkpoint failures in a row the coordinator tolerates before it fails the job over
    /// (F1.9, Flink's `execution.checkpointing.tolerable-failed-checkpoints`); `None`: no limit.
    pub tolerable_failures: Option<u32>,
    /// A task that abandons a checkpoint sends a cancellation marker downstream in band, and a
    /// consumer aborts on it (F1.10, Flink's `CancelCheckpointMarker`).
    pub cancel_markers: bool,
}

/// Which part of a snapshot a `fail_snapshot` fault breaks (F1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotPhase {
    /// The operator's `snapshotState`: an exception in user code, which fails the task.
    Sync,
    /// Writing the state to durable storage: the task declines the checkpoint and runs on.
    Async,
}

/// How a subtask with several inputs lines up barriers (P1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointMode {
    /// Blocks each channel after its barrier until all barriers arrived.
    Aligned,
    /// Snapshots at the first barrier and stores the overtaken buffers as channel state.
    Unaligned,
    /// Counts barriers without blocking any channel and snapshots once every open channel
    /// delivered its barrier or ended (Flink's at-least-once `CheckpointBarrierTracker`, F1.7):
    /// a restore may replay records the snapshot already holds.
    AtLeastOnce,
}

/// How checkpoints keep working once some subtasks finished (P1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishProtocol {
    /// The design's Option 1: the finished set is the FINISHED status; a trigger that missed a
    /// finished subtask is re-sent to its descendants through the JobMaster.
    Option1,
    /// The design's Option 2: a subtask reports "finishing" before EndOfPartition and takes
    /// part in the pending checkpoints first.
    Option2,
    /// What Flink 1.15+ ships (`docs/rules.md` F1).
    Flink,
    /// Before FLIP-147: no checkpoint once any subtask finished.
    Legacy,
}

/// The caps that make every run end; reaching one is a reported outcome, never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub max_events: u64,
    pub max_time: Duration,
    /// The most kernel events that may be pending at once (the size of the run's future).
    pub max_pending: u64,
}

/// One fault to inject: when it fires, and what it does.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub trigger: FaultTrigger,
    pub kind: FaultKind,
}

/// When a fault fires; either way it fires at most once.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultTrigger {
    /// At this instant since the start of the run, at most `budget.max_time`.
    At(Duration),
    /// The first time the predicate holds.
    When(Predicate),
}

/// A condition over the state of the run, for [`FaultTrigger::When`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// The checkpoint with this id (at least 1) was triggered and is pending.
    CheckpointPending(u64),
    /// The checkpoint with this id (at least 1) completed.
    CheckpointCompleted(u64),
    /// The subtask reached the FINISHED status.
    Finished(SubtaskRef),
    /// The subtask reached the end of its input (all its inputs ended, or a source emitted its
    /// last record).
    EndOfInput(SubtaskRef),
    /// The subtask reached the end of its input and waits for a checkpoint that covers its final
    /// state before it may finish (P1.7).
    WaitingForFinalCheckpoint(SubtaskRef),
    /// Every source subtask reached the FINISHED status.
    AllSourcesFinished,
    /// The run recorded this many trace events (at least 1).
    EventCount(u64),
    /// The JobMaster moved the job to this status (e.g. FINISHED, before its result is
    /// durable, P2.7).
    JobStatus(crate::status::JobStatus),
}

/// A subtask named `vertex[i]` in the file, resolved: `vertex` is an index into
/// [`Job::vertices`] and `index` is below that vertex's parallelism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubtaskRef {
    pub vertex: usize,
    pub index: u32,
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// The subtask fails, as an exception in user code would make it: the JobMaster fails over.
    FailTask { task: SubtaskRef },
    /// Not a failure: the JobMaster sends the trigger RPC of its newest pending checkpoint
    /// straight to the subtask, as Flink's task-level tests trigger a task by hand (F1.4).
    /// With `checkpoint`, the trigger of that checkpoint, pending or not (a task-level test
    /// picks any id).
    TriggerTask {
        task: SubtaskRef,
        checkpoint: Option<u64>,
    },
    /// The operator's snapshot of `checkpoint` in the subtask fails, in its synchronous part
    /// (the task fails) or in its asynchronous part (the task declines), F1.9.
    FailSnapshot {
        task: SubtaskRef,
        checkpoint: u64,
        phase: SnapshotPhase,
    },
    /// The TaskManager (0-based, below `cluster.task_managers`) is lost with every subtask it
    /// runs; the JobMaster notices after `jobmaster.heartbeat_timeout`. A fresh TaskManager
    /// with the same number and slots registers `restart_after` after the loss (0: at once).
    LoseTaskManager {
        task_manager: u32,
        restart_after: Duration,
    },
    /// Batch: the TaskManager cannot reach any JobManager for `duration` (above 0); it keeps
    /// its partitions and registers with the leader afterwards (P2.4's late TaskManager).
    DisconnectTaskManager {
        task_manager: u32,
        duration: Duration,
    },
    /// The JobMaster crashes; a new leader is elected `restart_after` after the crash (the HA
    /// election delay; 0: at once).
    CrashJobMaster { restart_after: Duration },
    /// For `duration` (above 0) every message on the `target` links is delayed by `extra`
    /// (above 0) on top of its usual latency.
    DelaySpike {
        extra: Duration,
        duration: Duration,
        target: SpikeTarget,
    },
    /// For `duration` (above 0) each RPC is lost with `probability` (0 to 1); its sender
    /// notices and sends it again `retry_after` (above 0) later.
    RpcLoss {
        probability: f64,
        retry_after: Duration,
        duration: Duration,
    },
    /// The channel from `from` to `to` (one an edge of the job makes) delivers nothing while
    /// held: what is on its wire, and what the producer sends meanwhile (within its credit),
    /// reaches the consumer's input buffer only at `release`, in order. A stalled connection,
    /// so a scenario can put one channel's elements after another's.
    HoldChannel {
        from: SubtaskRef,
        to: SubtaskRef,
        release: Release,
    },
    /// F1.11: the JobMaster is asked to stop the job with a synchronous savepoint, draining it
    /// (`drain`: the input ends, operators finish) or not (the job can resume from it).
    StopWithSavepoint { drain: bool },
    /// Batch (F2.3): the JobMaster's job event store fails to write: the events still in its
    /// write buffer are lost, and that JobMaster logs nothing more for the rest of its life.
    JobEventsWriteFailure,
    /// Batch (F2.4 step 5): the durable job events cannot be read back: the next JobMaster's
    /// replay fails, the log is deleted and the job restarts in full, every attempt new.
    JobEventsReadFailure,
}

/// When a [`FaultKind::HoldChannel`] lets its channel go; `heal_at` releases it at the latest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Release {
    /// At this instant since the start of the run (after the hold's `at`, if it has one).
    At(Duration),
    /// The first time the predicate holds; at once if it held before the hold began.
    When(Predicate),
}

/// Which links a [`FaultKind::DelaySpike`] slows down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpikeTarget {
    /// The data channels between subtasks.
    Channels,
    /// The RPCs between JobMaster and TaskManagers.
    Rpcs,
    /// Both.
    All,
}

/// How the JobMaster reacts to failures (P1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobMasterConfig {
    pub failover: Failover,
    pub restart_strategy: RestartStrategy,
    pub failover_scope: FailoverScope,
    /// How long until a lost TaskManager or JobMaster is noticed (no heartbeat for this long);
    /// above 0.
    pub heartbeat_timeout: Duration,
    /// `failover: "reconcile"` (P3.4): how long a new JobMaster waits for the TaskManagers'
    /// reports before it decides; above 0.
    pub reconcile_timeout: Duration,
    /// `failover: "reconcile"` (P3.1): how long a TaskManager keeps the state of a task that
    /// ended, so it can still report it to a new JobMaster.
    pub terminal_state_retention: Duration,
}

/// What a new JobMaster does with the tasks of the job after a JobMaster crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failover {
    /// Cancels every task and restarts the job from the latest completed checkpoint.
    Restart,
    /// Keeps the tasks running and rebuilds the execution graph from TaskManager reports
    /// (P3, FLINK-5703).
    Reconcile,
}

/// Flink's fixed-delay restart strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartStrategy {
    /// Time between a failure and the restart of the tasks it affects.
    pub delay: Duration,
    /// Restarts allowed in all; the failure after the last one fails the job (0: the first
    /// failure fails the job).
    pub max_attempts: u32,
}

/// Which tasks a failover restarts (P1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailoverScope {
    /// Every task of the job.
    Full,
    /// The pipelined region of the failed tasks, Flink's default.
    Region,
}

/// How events scheduled for the same instant are ordered.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TieBreak {
    /// In the order they were scheduled.
    Insertion,
    /// In a permutation drawn from the seed, to explore orderings.
    Shuffled,
    /// A choice vector (`{"choices": [1, 0, 2]}`): at each instant where two or more events are
    /// due, the index, in scheduling order, of the one handled next; past the list, the first.
    /// It is how `fuzz --strategy exhaustive` and `pct` write the order a run took, so that
    /// `flinksim run` replays it (`sim::explore`).
    Choices(Vec<u32>),
    /// A choice vector and postponed RPC arrivals (`{"schedule": {"choices": [1, 0], "delays":
    /// [[812, 1500]]}}`): each delay `[step, ns]` says that at the `step`-th step of the run
    /// (from 1; every event handled, and every postponement, is a step) the event chosen
    /// happens `ns` nanoseconds later instead. It is how `fuzz --strategy pct` writes a run in
    /// which a change point moved an RPC in time (`sim::explore`).
    Schedule {
        choices: Vec<u32>,
        delays: Vec<(u64, u64)>,
    },
}

/// What the run must show; only what the author listed is checked (`None` means "not checked"),
/// except `violations`, which always must match exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    pub status: Option<JobStatus>,
    /// Default empty: "no violation expected".
    pub violations: Vec<Invariant>,
    /// Total over all sink subtasks.
    pub sink_records: Option<u64>,
    /// Sink vertex id -> record count, in file order.
    pub sinks: IndexMap<String, u64>,
    /// Written in JSON as a string `"0x"` + 16 hex digits.
    pub trace_hash: Option<u64>,
    /// Only the listed checkpoints are checked, each only in what it lists; ids are unique.
    pub checkpoints: Vec<ExpectedCheckpoint>,
    /// Checkpoints completed during the whole run.
    pub completed_checkpoints: Option<u64>,
    /// Re-trigger RPCs `option1` sent during the whole run.
    pub retrigger_rpcs: Option<u64>,
    /// Records committed by all two-phase-commit sinks together.
    pub committed_records: Option<u64>,
    /// Failovers the JobMaster performed during the whole run.
    pub failovers: Option<u64>,
    /// The outcome of every reconciliation (P3.4), in order.
    pub reconciliations: Option<Vec<crate::trace::ReconcileOutcome>>,
    /// P3.3: RPCs TaskManagers kept while they could not reach a JobMaster, during the whole run.
    pub rpcs_kept: Option<u64>,
    /// P3.3: kept RPCs TaskManagers sent again once they registered, during the whole run.
    pub rpcs_resent: Option<u64>,
    /// Streaming (P1.8): what each failover's restore did, in order.
    pub restores: Option<Vec<ExpectedRestore>>,
    /// Batch (P2.4): what each JobManager recovery showed, in order.
    pub recoveries: Option<Vec<super::batch::ExpectedRecovery>>,
    /// Batch (P2.1): vertex id -> decided (or fixed) parallelism.
    pub parallelism: Option<std::collections::BTreeMap<String, u32>>,
    /// Batch (P2.8): the subtasks that got a speculative attempt, one name per attempt, sorted.
    pub speculative_attempts: Option<Vec<String>>,
    /// Batch (P2.8): the subtasks whose speculative attempt finished first, sorted.
    pub speculative_wins: Option<Vec<String>>,
}

/// What one failover's restore must show (`expect.restores`); `None` means "not checked".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpectedRestore {
    /// The checkpoint restored from; 0 for none (a fresh start).
    pub checkpoint: Option<u64>,
    pub scope: Option<RestoreScope>,
    /// Subtask names such as `"src[0]"`, compared as sets.
    pub restarted: Option<Vec<String>>,
    /// Redeployed finished on restore (F1.6).
    pub finished: Option<Vec<String>>,
    /// Records the restarted sources emit again.
    pub records_replayed: Option<u64>,
}

/// What a failover restarted (P1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreScope {
    /// One pipelined region.
    Region,
    /// The whole job.
    Full,
}

/// What one checkpoint must show; `None` means "not checked".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedCheckpoint {
    /// At least 1.
    pub id: u64,
    pub outcome: Option<CheckpointOutcome>,
    /// The simulator's reason id, compared exactly.
    pub abort_reason: Option<String>,
    /// Subtask names such as `"src[0]"`, compared as a set.
    pub triggered: Option<Vec<String>>,
    /// Subtasks the trigger plan recorded as finished, compared as a set.
    pub finished: Option<Vec<String>>,
    /// Vertex ids the trigger plan recorded as fully finished, compared as a set.
    pub fully_finished: Option<Vec<String>>,
    /// Bounds on the time from trigger to completion (the checkpoint must complete).
    pub duration_at_least: Option<Duration>,
    pub duration_at_most: Option<Duration>,
    /// Bounds on the records persisted as channel state, input and output side together
    /// (unaligned checkpoints, P1.4).
    pub channel_state_at_least: Option<u64>,
    pub channel_state_at_most: Option<u64>,
}

/// How a checkpoint ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointOutcome {
    Completed,
    Aborted,
    /// The id was never used: the run ended before a checkpoint got it.
    NeverTriggered,
}
