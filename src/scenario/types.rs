//! The validated scenario: what the rest of the simulator reads.
//!
//! Every value here has passed validation and has its default filled in, so the model never
//! re-checks a scenario nor knows what the file left out. The JSON spelling of each enum lives
//! in its serde attributes; the format as a whole is documented in the module doc of
//! [`crate::scenario`].

use crate::oracle::invariant::Invariant;
use crate::status::JobStatus;
use indexmap::IndexMap;
use serde::Deserialize;
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
    pub budget: Budget,
    pub tie_break: TieBreak,
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
    pub parallelism: u32,
    pub operator: Operator,
    /// The simulated cost of processing one record, so a slow operator builds back-pressure.
    pub process_time: DurationRange,
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
}

/// Delays and buffering of the simulated network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    /// Delay of one buffer on a data channel between two subtasks.
    pub channel_latency: DurationRange,
    /// Delay of one RPC between JobMaster and TaskManagers.
    pub rpc_latency: DurationRange,
    /// Buffers a channel holds before its producer is back-pressured.
    pub channel_capacity: u32,
}

/// The caps that make every run end; reaching one is a reported outcome, never a hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub max_events: u64,
    pub max_time: Duration,
}

/// How events scheduled for the same instant are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// In the order they were scheduled.
    Insertion,
    /// In a permutation drawn from the seed, to explore orderings.
    Shuffled,
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
}
