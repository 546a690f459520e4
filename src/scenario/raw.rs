//! The serde schema of the scenario file: the shape of the JSON, its defaults, and the parsing of
//! single values (durations, record counts, status, invariant and bug names, hashes).
//!
//! Everything that can be judged from one value alone is judged here, so serde reports it with
//! the JSON path of that value. Rules that relate values to each other (ids that must exist,
//! a graph that must be acyclic, enough slots) live in `validate.rs`. Fields whose meaning depends
//! on other fields (operator-specific settings, an edge's exchange, the slot count) stay `Option`
//! here so validation can tell "absent" from "written".

use super::types::{
    CheckpointMode, CheckpointOutcome, Delivery, DurationRange, Exchange, Failover, FailoverScope,
    FinishProtocol, Mode, Partitioner, Pattern, Records, SnapshotPhase, SpikeTarget, TieBreak,
};
use crate::bug::Bug;
use crate::oracle::invariant::Invariant;
use crate::status::JobStatus;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use sim::Duration;
use std::fmt;
use std::marker::PhantomData;

// The defaults, in one place so serde and validation cannot disagree. The format table in the
// module doc lists them too: change both together.
pub(super) const DEFAULT_PROCESS_TIME: DurationRange =
    DurationRange::fixed(Duration::from_micros(10));
pub(super) const DEFAULT_RECORDS: Records = Records::Bounded(100);
pub(super) const DEFAULT_RECORD_INTERVAL: DurationRange =
    DurationRange::fixed(Duration::from_micros(100));
pub(super) const DEFAULT_KEYS: u32 = 16;
pub(super) const DEFAULT_TASK_MANAGERS: u32 = 2;
pub(super) const DEFAULT_CHANNEL_LATENCY: DurationRange = DurationRange {
    min: Duration::from_micros(50),
    max: Duration::from_micros(500),
};
pub(super) const DEFAULT_RPC_LATENCY: DurationRange = DurationRange {
    min: Duration::from_micros(200),
    max: Duration::from_millis(2),
};
pub(super) const DEFAULT_CHANNEL_CAPACITY: u32 = 8;
/// F1.14: Flink's defaults (`execution.buffer-timeout`, `buffers-per-channel`,
/// `floating-buffers-per-gate`), and the record size batch jobs assume too.
pub(super) const DEFAULT_BUFFER_TIMEOUT: Duration = Duration::from_millis(100);
pub(super) const DEFAULT_EXCLUSIVE_BUFFERS: u32 = 2;
pub(super) const DEFAULT_FLOATING_BUFFERS: u32 = 8;
pub(super) const DEFAULT_RECORD_BYTES: u64 = 100;
pub(super) const DEFAULT_MAX_EVENTS: u64 = 10_000_000;
/// Ten million pending events, well under a gigabyte: far above what any shipped scenario
/// needs (the million-channel bench peaks at about two million), low enough that a world
/// that grows without bound ends with a diagnosis long before it exhausts memory.
pub(super) const DEFAULT_MAX_PENDING: u64 = 10_000_000;
/// One hour. `Duration::parse` has no `h` unit, so a file writes this as `"3600s"`.
pub(super) const DEFAULT_MAX_TIME: Duration = Duration::from_secs(3600);
pub(super) const DEFAULT_CHECKPOINT_INTERVAL: Duration = Duration::from_millis(20);
pub(super) const DEFAULT_CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(1);
pub(super) const DEFAULT_MAX_CONCURRENT: u32 = 1;
pub(super) const DEFAULT_MIN_PAUSE: Duration = Duration::ZERO;
/// `lose_task_manager`: time from the loss to the registration of a fresh TaskManager.
pub(super) const DEFAULT_TASK_MANAGER_RESTART_AFTER: Duration = Duration::from_millis(10);
/// `crash_jobmaster`: time from the crash to the election of a new leader (HA election delay).
pub(super) const DEFAULT_JOBMASTER_RESTART_AFTER: Duration = Duration::from_millis(40);
pub(super) const DEFAULT_SPIKE_TARGET: SpikeTarget = SpikeTarget::All;
pub(super) const DEFAULT_RPC_RETRY_AFTER: Duration = Duration::from_millis(5);
pub(super) const DEFAULT_FAILOVER: Failover = Failover::Restart;
pub(super) const DEFAULT_RESTART_DELAY: Duration = Duration::from_millis(10);
pub(super) const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// Flink's default, as in `jobmanager.execution.failover-strategy: region`.
pub(super) const DEFAULT_FAILOVER_SCOPE: FailoverScope = FailoverScope::Region;
pub(super) const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_millis(50);
pub(super) const DEFAULT_RECONCILE_TIMEOUT: Duration = Duration::from_millis(50);
pub(super) const DEFAULT_TERMINAL_STATE_RETENTION: Duration = Duration::from_millis(200);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub seed: u64,
    pub mode: Mode,
    #[serde(deserialize_with = "object")]
    pub job: RawJob,
    #[serde(default, deserialize_with = "object")]
    pub cluster: RawCluster,
    #[serde(default, deserialize_with = "object")]
    pub network: RawNetwork,
    /// `null` reads as absent: checkpointing disabled.
    #[serde(default)]
    pub checkpointing: Option<Object<RawCheckpointing>>,
    #[serde(default, deserialize_with = "object")]
    pub budget: RawBudget,
    #[serde(default, deserialize_with = "objects")]
    pub faults: Vec<RawFault>,
    #[serde(default, deserialize_with = "nullable_duration")]
    pub heal_at: Option<Duration>,
    #[serde(default, deserialize_with = "object")]
    pub jobmaster: RawJobMaster,
    #[serde(default = "default_tie_break")]
    pub tie_break: TieBreak,
    #[serde(default)]
    pub bug: Option<BugName>,
    #[serde(default, deserialize_with = "object")]
    pub expect: RawExpect,
    /// `mode: "batch"` only (P2); `null` reads as absent: every default.
    #[serde(default)]
    pub batch: Option<Object<super::batch::RawBatch>>,
    /// F1.6: start from this checkpoint; `null` reads as absent.
    #[serde(default)]
    pub restore_from: Option<super::restore_from::RawRestoreSource>,
    /// F1.13: streaming sources that read splits, by vertex id.
    #[serde(default, deserialize_with = "object")]
    pub coordinators: std::collections::BTreeMap<String, Object<super::splits::RawCoordinator>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJob {
    #[serde(deserialize_with = "objects")]
    pub vertices: Vec<RawVertex>,
    #[serde(default, deserialize_with = "objects")]
    pub edges: Vec<RawEdge>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVertex {
    pub id: String,
    /// Exactly one of `operator` (one operator) and `chain` (several, F1.12).
    pub operator: Option<OperatorKind>,
    pub chain: Option<Vec<RawChainMember>>,
    pub parallelism: RawParallelism,
    #[serde(default = "default_process_time")]
    pub process_time: DurationRange,
    // Operator-specific: absent means "the default", present on the wrong operator is an error.
    pub records: Option<RawRecords>,
    pub record_interval: Option<DurationRange>,
    pub keys: Option<u32>,
    pub delivery: Option<Delivery>,
}

/// One member of a vertex's `chain` (F1.12): an operator's name, like `"map"`, or an object
/// with `operator`, an optional `uid`, and that operator's own fields.
pub(super) struct RawChainMember {
    pub operator: OperatorKind,
    pub uid: Option<String>,
    pub records: Option<RawRecords>,
    pub record_interval: Option<DurationRange>,
    pub keys: Option<u32>,
    pub delivery: Option<Delivery>,
}

/// The object form of a chain member.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChainMemberObject {
    operator: OperatorKind,
    uid: Option<String>,
    records: Option<RawRecords>,
    record_interval: Option<DurationRange>,
    keys: Option<u32>,
    delivery: Option<Delivery>,
}

impl<'de> Deserialize<'de> for RawChainMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl<'de> Visitor<'de> for MemberVisitor {
            type Value = RawChainMember;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    r#"a chained operator: "source", "map", "keyed_sum" or "sink", or an object like {"operator": "keyed_sum", "keys": 8, "uid": "totals"}"#,
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawChainMember, E> {
                let operator = OperatorKind::deserialize(de::value::StrDeserializer::new(v))?;
                Ok(RawChainMember {
                    operator,
                    uid: None,
                    records: None,
                    record_interval: None,
                    keys: None,
                    delivery: None,
                })
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawChainMember, A::Error> {
                let o =
                    RawChainMemberObject::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(RawChainMember {
                    operator: o.operator,
                    uid: o.uid,
                    records: o.records,
                    record_interval: o.record_interval,
                    keys: o.keys,
                    delivery: o.delivery,
                })
            }
        }
        d.deserialize_any(MemberVisitor)
    }
}

/// A vertex's `parallelism`: a number, or `"auto"` (batch only: decided from its input bytes
/// when its inputs finish, P2.1).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum RawParallelism {
    Fixed(u64),
    Auto,
}

impl<'de> Deserialize<'de> for RawParallelism {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ParallelismVisitor;
        impl Visitor<'_> for ParallelismVisitor {
            type Value = RawParallelism;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"a parallelism: a whole number like 4, or "auto" (batch mode)"#)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawParallelism, E> {
                Ok(RawParallelism::Fixed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawParallelism, E> {
                if v == "auto" {
                    Ok(RawParallelism::Auto)
                } else {
                    Err(E::custom(format!(
                        r#"{v:?} is not a parallelism; expected a whole number like 4, or "auto" (batch mode)"#
                    )))
                }
            }
        }
        d.deserialize_any(ParallelismVisitor)
    }
}

/// The `operator` field: which [`super::Operator`] variant to build.
#[derive(Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum OperatorKind {
    Source,
    Map,
    KeyedSum,
    Sink,
}

impl OperatorKind {
    /// The name as written in the file, for messages.
    pub fn name(self) -> &'static str {
        match self {
            OperatorKind::Source => "source",
            OperatorKind::Map => "map",
            OperatorKind::KeyedSum => "keyed_sum",
            OperatorKind::Sink => "sink",
        }
    }
}

/// A source's `records`: one value for every subtask, or a list with one per subtask (its length
/// is checked against the parallelism in validation).
pub(super) enum RawRecords {
    Every(Records),
    PerSubtask(Vec<Records>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEdge {
    pub from: String,
    pub to: String,
    pub pattern: Pattern,
    pub exchange: Option<Exchange>,
    pub partitioner: Option<Partitioner>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    #[serde(default = "default_task_managers")]
    pub task_managers: u32,
    pub slots_per_task_manager: Option<u32>,
    #[serde(default = "default_task_initialization")]
    pub task_initialization: DurationRange,
}

impl Default for RawCluster {
    fn default() -> Self {
        RawCluster {
            task_managers: DEFAULT_TASK_MANAGERS,
            slots_per_task_manager: None,
            task_initialization: default_task_initialization(),
        }
    }
}

fn default_task_initialization() -> DurationRange {
    DurationRange::fixed(Duration::ZERO)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNetwork {
    #[serde(default = "default_channel_latency")]
    pub channel_latency: DurationRange,
    #[serde(default = "default_rpc_latency")]
    pub rpc_latency: DurationRange,
    /// Absent: the default; with `buffer_size` it must be absent (credit counts buffers).
    #[serde(default)]
    pub channel_capacity: Option<u32>,
    #[serde(default)]
    pub channels: Vec<RawChannelLatency>,
    /// F1.14: network buffers; absent, the model moves one record per element.
    #[serde(default)]
    pub buffer_size: Option<u64>,
    #[serde(default)]
    pub buffer_timeout: Option<SingleDuration>,
    #[serde(default)]
    pub record_bytes: Option<u64>,
    #[serde(default)]
    pub exclusive_buffers_per_channel: Option<u32>,
    #[serde(default)]
    pub floating_buffers_per_gate: Option<u32>,
}

/// One entry of `network.channels`: the latency of the channel from one subtask to another.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawChannelLatency {
    pub from: String,
    pub to: String,
    pub latency: DurationRange,
}

impl Default for RawNetwork {
    fn default() -> Self {
        RawNetwork {
            channel_latency: DEFAULT_CHANNEL_LATENCY,
            rpc_latency: DEFAULT_RPC_LATENCY,
            channel_capacity: None,
            channels: Vec::new(),
            buffer_size: None,
            buffer_timeout: None,
            record_bytes: None,
            exclusive_buffers_per_channel: None,
            floating_buffers_per_gate: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheckpointing {
    /// Absent: the default interval; `null`: no periodic trigger.
    #[serde(
        default = "default_checkpoint_interval",
        deserialize_with = "nullable_duration"
    )]
    pub interval: Option<Duration>,
    /// In file order, so a duplicate can name both entries; sorted in validation.
    #[serde(default)]
    pub trigger_at: Vec<SingleDuration>,
    #[serde(
        default = "default_checkpoint_timeout",
        deserialize_with = "single_duration"
    )]
    pub timeout: Duration,
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: u32,
    #[serde(default = "default_min_pause", deserialize_with = "single_duration")]
    pub min_pause: Duration,
    #[serde(default = "default_checkpoint_mode")]
    pub mode: CheckpointMode,
    #[serde(default, deserialize_with = "nullable_duration")]
    pub alignment_timeout: Option<Duration>,
    #[serde(default = "default_finish_protocol")]
    pub finish_protocol: FinishProtocol,
    #[serde(default)]
    pub flush_before_finish: bool,
    #[serde(default = "default_async_duration")]
    pub async_duration: DurationRange,
    /// Absent or `null`: no limit.
    #[serde(default)]
    pub tolerable_failures: Option<u32>,
    #[serde(default)]
    pub cancel_markers: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBudget {
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    #[serde(default = "default_max_time", deserialize_with = "single_duration")]
    pub max_time: Duration,
    #[serde(default = "default_max_pending")]
    pub max_pending: u64,
}

impl Default for RawBudget {
    fn default() -> Self {
        RawBudget {
            max_events: DEFAULT_MAX_EVENTS,
            max_time: DEFAULT_MAX_TIME,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

/// One entry of `faults`. The trigger and every kind-specific field stay `Option`: which of them
/// must, may or must not be written depends on `fault`, which validation judges.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFault {
    pub at: Option<SingleDuration>,
    pub when: Option<Object<RawPredicate>>,
    pub fault: FaultName,
    pub task: Option<String>,
    pub task_manager: Option<u32>,
    pub restart_after: Option<SingleDuration>,
    pub extra: Option<SingleDuration>,
    pub duration: Option<SingleDuration>,
    pub target: Option<SpikeTarget>,
    pub probability: Option<f64>,
    pub retry_after: Option<SingleDuration>,
    pub checkpoint: Option<u64>,
    pub phase: Option<SnapshotPhase>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub release_at: Option<SingleDuration>,
    pub release_when: Option<Object<RawPredicate>>,
    pub drain: Option<bool>,
}

/// The `fault` field: which [`super::FaultKind`] variant to build.
#[derive(Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum FaultName {
    FailTask,
    LoseTaskManager,
    DisconnectTaskManager,
    CrashJobmaster,
    DelaySpike,
    RpcLoss,
    JobEventsWriteFailure,
    JobEventsReadFailure,
    TriggerTask,
    FailSnapshot,
    HoldChannel,
    StopWithSavepoint,
}

impl FaultName {
    /// The name as written in the file, for messages.
    pub fn name(self) -> &'static str {
        match self {
            FaultName::FailTask => "fail_task",
            FaultName::LoseTaskManager => "lose_task_manager",
            FaultName::DisconnectTaskManager => "disconnect_task_manager",
            FaultName::CrashJobmaster => "crash_jobmaster",
            FaultName::DelaySpike => "delay_spike",
            FaultName::RpcLoss => "rpc_loss",
            FaultName::JobEventsWriteFailure => "job_events_write_failure",
            FaultName::JobEventsReadFailure => "job_events_read_failure",
            FaultName::TriggerTask => "trigger_task",
            FaultName::FailSnapshot => "fail_snapshot",
            FaultName::HoldChannel => "hold_channel",
            FaultName::StopWithSavepoint => "stop_with_savepoint",
        }
    }
}

/// A fault's `when`: an object with exactly one of these keys, which validation checks. As
/// a struct, an unknown key is refused by serde with the list of the known ones, and each value
/// is read as its key's type, with its JSON path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPredicate {
    pub checkpoint_pending: Option<u64>,
    pub checkpoint_completed: Option<u64>,
    pub finished: Option<String>,
    pub end_of_input: Option<String>,
    pub waiting_for_final_checkpoint: Option<String>,
    pub all_sources_finished: Option<bool>,
    pub event_count: Option<u64>,
    pub job_status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJobMaster {
    #[serde(default = "default_failover")]
    pub failover: Failover,
    #[serde(default, deserialize_with = "object")]
    pub restart_strategy: RawRestartStrategy,
    #[serde(default = "default_failover_scope")]
    pub failover_scope: FailoverScope,
    #[serde(
        default = "default_heartbeat_timeout",
        deserialize_with = "single_duration"
    )]
    pub heartbeat_timeout: Duration,
    #[serde(
        default = "default_reconcile_timeout",
        deserialize_with = "single_duration"
    )]
    pub reconcile_timeout: Duration,
    #[serde(
        default = "default_terminal_state_retention",
        deserialize_with = "single_duration"
    )]
    pub terminal_state_retention: Duration,
}

impl Default for RawJobMaster {
    fn default() -> Self {
        RawJobMaster {
            failover: DEFAULT_FAILOVER,
            restart_strategy: RawRestartStrategy::default(),
            failover_scope: DEFAULT_FAILOVER_SCOPE,
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
            reconcile_timeout: DEFAULT_RECONCILE_TIMEOUT,
            terminal_state_retention: DEFAULT_TERMINAL_STATE_RETENTION,
        }
    }
}

fn default_reconcile_timeout() -> Duration {
    DEFAULT_RECONCILE_TIMEOUT
}

fn default_terminal_state_retention() -> Duration {
    DEFAULT_TERMINAL_STATE_RETENTION
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRestartStrategy {
    #[serde(
        default = "default_restart_delay",
        deserialize_with = "single_duration"
    )]
    pub delay: Duration,
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
}

impl Default for RawRestartStrategy {
    fn default() -> Self {
        RawRestartStrategy {
            delay: DEFAULT_RESTART_DELAY,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpect {
    pub status: Option<StatusName>,
    #[serde(default)]
    pub violations: Vec<InvariantId>,
    pub sink_records: Option<u64>,
    #[serde(default)]
    pub sinks: RawSinks,
    pub trace_hash: Option<TraceHash>,
    #[serde(default, deserialize_with = "objects")]
    pub checkpoints: Vec<RawExpectedCheckpoint>,
    pub completed_checkpoints: Option<u64>,
    pub retrigger_rpcs: Option<u64>,
    pub committed_records: Option<u64>,
    pub failovers: Option<u64>,
    pub reconciliations: Option<Vec<crate::trace::ReconcileOutcome>>,
    pub rpcs_kept: Option<u64>,
    pub rpcs_resent: Option<u64>,
    /// Streaming (P1.8): one entry per failover that restored, in order.
    #[serde(default, deserialize_with = "nullable_objects")]
    pub restores: Option<Vec<RawExpectedRestore>>,
    /// Batch (P2.4): one entry per JobManager recovery, in order.
    #[serde(default, deserialize_with = "nullable_objects")]
    pub recoveries: Option<Vec<super::batch::RawExpectedRecovery>>,
    /// Batch (P2.1): vertex id -> the parallelism the run decided or used.
    #[serde(default)]
    pub parallelism: Option<std::collections::BTreeMap<String, u32>>,
    /// Batch (P2.8): one subtask name per speculative attempt.
    pub speculative_attempts: Option<Vec<String>>,
    /// Batch (P2.8): the subtasks whose speculative attempt won.
    pub speculative_wins: Option<Vec<String>>,
}

/// One entry of `expect.restores`; subtask names are checked in validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpectedRestore {
    pub checkpoint: Option<u64>,
    pub scope: Option<super::types::RestoreScope>,
    pub restarted: Option<Vec<String>>,
    pub finished: Option<Vec<String>>,
    pub records_replayed: Option<u64>,
}

/// One entry of `expect.checkpoints`; subtask and vertex names are checked in validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpectedCheckpoint {
    pub id: u64,
    pub outcome: Option<CheckpointOutcome>,
    pub abort_reason: Option<String>,
    pub triggered: Option<Vec<String>>,
    pub finished: Option<Vec<String>>,
    pub fully_finished: Option<Vec<String>>,
    #[serde(default, deserialize_with = "nullable_duration")]
    pub duration_at_least: Option<Duration>,
    #[serde(default, deserialize_with = "nullable_duration")]
    pub duration_at_most: Option<Duration>,
    pub channel_state_at_least: Option<u64>,
    pub channel_state_at_most: Option<u64>,
}

/// `expect.status`, read with [`JobStatus::from_name`] so the file uses Flink's own names.
pub(super) struct StatusName(pub JobStatus);

/// One entry of `expect.violations`, read with [`Invariant::from_id`].
pub(super) struct InvariantId(pub Invariant);

/// `bug`, read with [`Bug::from_name`] so the file uses the names of `--bug`.
pub(super) struct BugName(pub Bug);

/// One duration (not a range) where serde needs a type rather than a function, such as the
/// elements of `trigger_at`, so an error names the element's index.
pub(super) struct SingleDuration(pub Duration);

/// `expect.trace_hash`: `"0x"` and 16 hex digits, the form summaries print.
pub(super) struct TraceHash(pub u64);

/// `expect.sinks` in file order. Kept as a list, not a map, so that a sink named twice is
/// reported instead of silently keeping the last count.
#[derive(Default)]
pub(super) struct RawSinks(pub Vec<(String, u64)>);

fn default_tie_break() -> TieBreak {
    TieBreak::Insertion
}
fn default_process_time() -> DurationRange {
    DEFAULT_PROCESS_TIME
}
fn default_task_managers() -> u32 {
    DEFAULT_TASK_MANAGERS
}
fn default_async_duration() -> DurationRange {
    DurationRange::fixed(Duration::ZERO)
}

fn default_channel_latency() -> DurationRange {
    DEFAULT_CHANNEL_LATENCY
}
fn default_rpc_latency() -> DurationRange {
    DEFAULT_RPC_LATENCY
}
fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

fn default_max_pending() -> u64 {
    DEFAULT_MAX_PENDING
}
fn default_max_time() -> Duration {
    DEFAULT_MAX_TIME
}
fn default_checkpoint_interval() -> Option<Duration> {
    Some(DEFAULT_CHECKPOINT_INTERVAL)
}
fn default_checkpoint_timeout() -> Duration {
    DEFAULT_CHECKPOINT_TIMEOUT
}
fn default_max_concurrent() -> u32 {
    DEFAULT_MAX_CONCURRENT
}
fn default_min_pause() -> Duration {
    DEFAULT_MIN_PAUSE
}
fn default_checkpoint_mode() -> CheckpointMode {
    CheckpointMode::Aligned
}
fn default_finish_protocol() -> FinishProtocol {
    FinishProtocol::Flink
}
fn default_failover() -> Failover {
    DEFAULT_FAILOVER
}
fn default_restart_delay() -> Duration {
    DEFAULT_RESTART_DELAY
}
fn default_max_attempts() -> u32 {
    DEFAULT_MAX_ATTEMPTS
}
fn default_failover_scope() -> FailoverScope {
    DEFAULT_FAILOVER_SCOPE
}
fn default_heartbeat_timeout() -> Duration {
    DEFAULT_HEARTBEAT_TIMEOUT
}

const DURATION_EXPECTED: &str = r#"a duration like "250us", "10ms" or "2s""#;

/// The longest duration a scenario may write: 30 days. Simulated time is a count of
/// nanoseconds in 64 bits (about 584 years), so with every delay, interval and budget at most
/// this long, `now + delay` stays far from overflow however the run goes.
pub(super) const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// `d`, unless it is longer than [`MAX_DURATION`].
fn within_max(text: &str, d: Duration) -> Result<Duration, String> {
    if d > MAX_DURATION {
        return Err(format!(
            "{text:?} is longer than the longest duration a scenario may give, {MAX_DURATION} \
             (30 days): simulated time is counted in 64-bit nanoseconds and every run must end \
             within its budget"
        ));
    }
    Ok(d)
}
const RANGE_EXPECTED: &str =
    r#"a duration like "250us", "10ms" or "2s", or a range like "1ms..5ms""#;
const RECORDS_EXPECTED: &str =
    r#"a record count, "unbounded", or a list with one of those per subtask"#;
const RECORD_EXPECTED: &str = r#"a record count or "unbounded""#;

/// Reads a single duration such as `"10ms"`; a range is refused by name, because `Duration::parse`
/// would only complain about a strange unit.
fn parse_duration(text: &str) -> Result<Duration, String> {
    if text.contains("..") {
        return Err(format!(
            "{text:?} is a range, but this field takes one duration; expected {DURATION_EXPECTED}"
        ));
    }
    let d = Duration::parse(text).map_err(|e| format!("{e}; expected {DURATION_EXPECTED}"))?;
    within_max(text, d)
}

/// Reads `"1ms"` (a fixed delay) or `"1ms..5ms"` (a range with `min <= max`).
fn parse_range(text: &str) -> Result<DurationRange, String> {
    let Some((min, max)) = text.split_once("..") else {
        let d = Duration::parse(text).map_err(|e| format!("{e}; expected {RANGE_EXPECTED}"))?;
        return within_max(text, d).map(DurationRange::fixed);
    };
    // "1us...2ms" would otherwise read as 1us..0.2ms.
    if max.starts_with('.') {
        return Err(format!(
            "{text:?} is not a range: write it with two dots, like \"1ms..5ms\""
        ));
    }
    let bound = |part: &str| {
        Duration::parse(part)
            .map_err(|e| format!("{text:?} is not a range: {e}; expected {RANGE_EXPECTED}"))
            .and_then(|d| within_max(text, d))
    };
    let (min, max) = (bound(min)?, bound(max)?);
    if min > max {
        return Err(format!(
            "{text:?} is not a range: its minimum {min} is above its maximum {max}; \
             write the smaller duration first"
        ));
    }
    Ok(DurationRange { min, max })
}

fn parse_status(text: &str) -> Result<StatusName, String> {
    JobStatus::from_name(text).map(StatusName).ok_or_else(|| {
        let names: Vec<&str> = JobStatus::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown job status {text:?}; expected one of Flink's job statuses: {}",
            names.join(", ")
        )
    })
}

fn parse_invariant(text: &str) -> Result<InvariantId, String> {
    Invariant::from_id(text).map(InvariantId).ok_or_else(|| {
        let ids: Vec<&str> = Invariant::ALL.iter().map(|i| i.id()).collect();
        format!(
            "unknown invariant {text:?}; expected one of: {}",
            ids.join(", ")
        )
    })
}

fn parse_bug(text: &str) -> Result<BugName, String> {
    Bug::from_name(text).map(BugName).ok_or_else(|| {
        let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
        format!(
            "unknown bug {text:?}; expected null or one of: {}",
            names.join(", ")
        )
    })
}

fn parse_trace_hash(text: &str) -> Result<TraceHash, String> {
    text.strip_prefix("0x")
        .filter(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .map(TraceHash)
        .ok_or_else(|| {
            format!(
                "{text:?} is not a trace hash; expected \"0x\" and 16 hex digits, \
                 as a summary prints it, like \"0x00c0ffee00c0ffee\""
            )
        })
}

/// A visitor for the string-valued fields: one place that turns "wrong JSON type" and
/// "unreadable text" into messages that say what was expected.
struct StrVisitor<T> {
    expected: &'static str,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for StrVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expected)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
}

fn from_str_with<'de, D: Deserializer<'de>, T>(
    d: D,
    expected: &'static str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<T, D::Error> {
    d.deserialize_str(StrVisitor { expected, parse })
}

pub(super) fn single_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    from_str_with(d, DURATION_EXPECTED, parse_duration)
}

/// One duration, or `null` for `None`.
pub(super) fn nullable_duration<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    Option::<SingleDuration>::deserialize(d).map(|d| d.map(|d| d.0))
}

impl<'de> Deserialize<'de> for SingleDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        single_duration(d).map(SingleDuration)
    }
}

impl<'de> Deserialize<'de> for BugName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str_with(d, r#"null or a bug name like "eop-not-aligned""#, parse_bug)
    }
}

impl<'de> Deserialize<'de> for DurationRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str_with(d, RANGE_EXPECTED, parse_range)
    }
}

impl<'de> Deserialize<'de> for StatusName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str_with(d, r#"a Flink job status like "FINISHED""#, parse_status)
    }
}

impl<'de> Deserialize<'de> for InvariantId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str_with(
            d,
            r#"an invariant id like "exactly-once-output""#,
            parse_invariant,
        )
    }
}

impl<'de> Deserialize<'de> for TraceHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_str_with(d, r#"a hash like "0x00c0ffee00c0ffee""#, parse_trace_hash)
    }
}

/// Reads a struct only from a JSON object. serde's derived structs also accept an array of the
/// fields in declaration order, which would let `"cluster": [2, 4]` through unchecked by name.
pub(super) fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectVisitor(PhantomData))
}

/// [`object`] for every element of a list, so each element's errors still name its index.
fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    let list = Vec::<Object<T>>::deserialize(d)?;
    Ok(list.into_iter().map(|element| element.0).collect())
}

/// [`objects`], or `null` / absent for `None`.
fn nullable_objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    let list = Option::<Vec<Object<T>>>::deserialize(d)?;
    Ok(list.map(|l| l.into_iter().map(|element| element.0).collect()))
}

/// A `T` read with [`object`]; also how the document itself is read.
pub(super) struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(Object)
    }
}

/// Hands the map to `T`'s own (derived) visitor, and refuses everything else.
struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

/// The word that stands for [`Records::Unbounded`].
const UNBOUNDED: &str = "unbounded";

/// Reads the only string a record count may be, `"unbounded"`; `expected` is what the field
/// takes as a whole, for the message.
fn parse_unbounded(text: &str, expected: &str) -> Result<Records, String> {
    if text == UNBOUNDED {
        Ok(Records::Unbounded)
    } else {
        Err(format!(
            "{text:?} is not a record count; expected {expected}"
        ))
    }
}

/// One record count: a number or `"unbounded"`.
struct RecordsVisitor;

impl Visitor<'_> for RecordsVisitor {
    type Value = Records;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(RECORD_EXPECTED)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Records, E> {
        Ok(Records::Bounded(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Records, E> {
        parse_unbounded(v, RECORD_EXPECTED).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Records {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RecordsVisitor)
    }
}

/// `records`: a number or `"unbounded"` for every subtask, or a list of them. The list elements
/// go through `next_element`, so an error names its index (`records[1]`).
struct RawRecordsVisitor;

impl<'de> Visitor<'de> for RawRecordsVisitor {
    type Value = RawRecords;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(RECORDS_EXPECTED)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawRecords, E> {
        Ok(RawRecords::Every(Records::Bounded(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawRecords, E> {
        parse_unbounded(v, RECORDS_EXPECTED)
            .map(RawRecords::Every)
            .map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawRecords, A::Error> {
        let mut list = Vec::new();
        while let Some(records) = seq.next_element::<Records>()? {
            list.push(records);
        }
        Ok(RawRecords::PerSubtask(list))
    }
}

impl<'de> Deserialize<'de> for RawRecords {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawRecordsVisitor)
    }
}

/// `expect.sinks`: an object read entry by entry, so a bad count names its key.
struct SinksVisitor;

impl<'de> Visitor<'de> for SinksVisitor {
    type Value = RawSinks;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"an object from sink vertex id to record count, like {"sink": 500}"#)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawSinks, A::Error> {
        let mut sinks = Vec::new();
        while let Some((id, count)) = map.next_entry::<String, u64>()? {
            sinks.push((id, count));
        }
        Ok(RawSinks(sinks))
    }
}

impl<'de> Deserialize<'de> for RawSinks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(SinksVisitor)
    }
}
