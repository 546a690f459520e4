//! The rules that relate values to each other, applied to the deserialized [`RawScenario`] to
//! build a [`Scenario`] with every default filled in.
//!
//! The checks run in the order the format is documented (top-level fields, each vertex, each
//! edge, the graph, cluster, network, checkpointing, budget, faults, heal_at, jobmaster,
//! expect), and the first failure is returned, each with the JSON path of the value to fix.

use super::bounds;
use super::error::ScenarioError;
use super::raw::{
    self, OperatorKind, RawBudget, RawCheckpointing, RawCluster, RawEdge, RawExpect,
    RawExpectedCheckpoint, RawJob, RawJobMaster, RawNetwork, RawScenario, RawVertex,
    DEFAULT_BUFFER_TIMEOUT, DEFAULT_CHANNEL_CAPACITY, DEFAULT_EXCLUSIVE_BUFFERS,
    DEFAULT_FLOATING_BUFFERS, DEFAULT_RECORD_BYTES,
};
use super::types::{
    Budget, ChannelLatency, CheckpointMode, CheckpointOutcome, Checkpointing, Cluster, Delivery,
    Edge, Exchange, Expect, ExpectedCheckpoint, Failover, Job, JobMasterConfig, Mode, Network,
    NetworkBuffers, Partitioner, Pattern, RestartStrategy, Scenario, SubtaskRef, Vertex,
};
use indexmap::IndexMap;
use std::collections::{BTreeMap, VecDeque};

mod chain;
mod faults;
use faults::{check_fault, check_heal_at, FaultContext};

/// The largest parallelism a vertex may have. Every subtask is simulated as an actor, so this
/// keeps a typo (an extra zero or three) from turning into a run that never ends.
pub(super) const MAX_PARALLELISM: u32 = 100_000;

/// The largest `budget.max_events`: 10^9 events, a few minutes at a few million a second.
pub(super) const MAX_EVENTS_BUDGET: u64 = 1_000_000_000;

/// The largest `budget.max_pending`: 10^8 pending events, a few gigabytes.
pub(super) const MAX_PENDING_BUDGET: u64 = 100_000_000;

/// The most checkpoints that may be pending at once: the coordinator tracks pending checkpoints
/// in a 64-wide window (one bit each).
pub(super) const MAX_CONCURRENT_CHECKPOINTS: u32 = 64;

/// What validation found wrong: where, and what was expected. The caller adds the file name.
#[derive(Debug)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn in_file(self, file: &str) -> ScenarioError {
        ScenarioError::new(file, self.path, self.message)
    }
}

pub(super) fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        message: message.into(),
    }
}

/// Checks `raw` and fills in its defaults. `document` is the same text parsed as plain JSON,
/// kept in the scenario for trace headers.
pub(super) fn validate(raw: RawScenario, document: serde_json::Value) -> Result<Scenario, Problem> {
    if raw.name.trim().is_empty() {
        return Err(problem(
            "name",
            "must not be empty: traces, summaries and failure reports name a scenario by it",
        ));
    }
    let checkpointing_enabled = raw.checkpointing.is_some();
    let raw_batch =
        match (raw.mode, raw.batch) {
            (Mode::Streaming, Some(_)) => return Err(problem(
                "batch",
                "the `batch` block only applies to mode \"batch\" (P2); remove it or set `mode`",
            )),
            (Mode::Streaming, None) => None,
            (Mode::Batch, block) => Some(block.map(|b| b.0).unwrap_or_default()),
        };
    if raw.mode == Mode::Batch && checkpointing_enabled {
        return Err(problem(
            "checkpointing",
            "a batch job does not checkpoint: it recovers from job events and partitions \
             (P2); remove the block",
        ));
    }
    let adaptive_max = match &raw_batch {
        Some(b) => Some(super::batch::adaptive_bounds(Some(b))?.max),
        None => None,
    };
    let mut job = check_job(raw.job, raw.mode, checkpointing_enabled, adaptive_max)?;
    super::splits::check_coordinators(raw.coordinators, &mut job, raw.mode)?;
    bounds::check_world_size(&job)?;
    let batch = raw_batch
        .map(|b| super::batch::check_batch(b, &job))
        .transpose()?;
    if let Some(batch) = &batch {
        bounds::check_batch_reading(batch, &job)?;
    }
    if raw.mode == Mode::Batch && raw.cluster.task_initialization.max > sim::Duration::ZERO {
        return Err(problem(
            "cluster.task_initialization",
            "only applies to streaming jobs: a batch task's start is part of its run time",
        ));
    }
    let cluster = check_cluster(raw.cluster, &job)?;
    let network = check_network(raw.network, &job, raw.mode)?;
    let checkpointing = raw
        .checkpointing
        .map(|block| check_checkpointing(block.0))
        .transpose()?;
    let budget = check_budget(raw.budget)?;
    let world = FaultContext {
        job: &job,
        cluster: &cluster,
        checkpointing: checkpointing.is_some(),
        batch: raw.mode == Mode::Batch,
        finish_protocol: checkpointing.as_ref().map(|c| c.finish_protocol),
        barriers: checkpointing
            .as_ref()
            .map(|c| (c.mode, c.alignment_timeout.is_some())),
        budget: &budget,
        joined: std::cell::OnceCell::new(),
    };
    bounds::check_list_len("faults", raw.faults.len())?;
    let faults = raw
        .faults
        .into_iter()
        .enumerate()
        .map(|(i, fault)| check_fault(i, fault, &world))
        .collect::<Result<Vec<_>, _>>()?;
    check_heal_at(raw.heal_at, &faults, &budget)?;
    let jobmaster = check_jobmaster(raw.jobmaster)?;
    let expect = check_expect(raw.expect, &job, checkpointing.is_some(), raw.mode)?;
    if let Some(batch) = &batch {
        if batch.slowdown.len() > cluster.task_managers as usize {
            let tm = batch.slowdown.len() - 1;
            return Err(problem(
                format!("batch.slow_task_managers.{tm}"),
                format!(
                    "there is no TaskManager {tm}: cluster.task_managers is {}",
                    cluster.task_managers
                ),
            ));
        }
        if batch.speculative.is_some() && jobmaster.failover == Failover::Reconcile {
            return Err(problem(
                "batch.speculative",
                "speculative execution under `jobmaster.failover: \"reconcile\"` is not \
                 modelled (a reconciling JobMaster would see two attempts of one subtask \
                 reported); use \"restart\" or drop the block",
            ));
        }
    }
    let restore_from = match raw.restore_from {
        None => None,
        Some(super::restore_from::RawRestoreSource::Inline(r)) => Some(
            super::restore_from::check_restore_from(r, &job, raw.mode == Mode::Streaming)?,
        ),
        // `parse` reads the file before validation.
        Some(super::restore_from::RawRestoreSource::File(_)) => {
            return Err(problem(
                "restore_from",
                "a checkpoint file is read only when the scenario is loaded from a file",
            ))
        }
    };
    super::splits::check_split_features(&job, &jobmaster, &faults, restore_from.is_some())?;
    let needs_reconcile = [
        ("reconciliations", expect.reconciliations.is_some()),
        ("rpcs_kept", expect.rpcs_kept.is_some()),
        ("rpcs_resent", expect.rpcs_resent.is_some()),
    ];
    for (field, present) in needs_reconcile {
        if present && jobmaster.failover != Failover::Reconcile {
            return Err(problem(
                format!("expect.{field}"),
                "the JobMaster never reconciles: set `jobmaster.failover` to \"reconcile\" \
                 (P3), or drop this expectation",
            ));
        }
    }
    Ok(Scenario {
        name: raw.name,
        description: raw.description,
        seed: raw.seed,
        mode: raw.mode,
        job,
        cluster,
        network,
        checkpointing,
        budget,
        faults,
        heal_at: raw.heal_at,
        jobmaster,
        tie_break: raw.tie_break,
        batch,
        restore_from,
        bug: raw.bug.map(|b| b.0),
        expect,
        document,
    })
}

/// Rejects what is valid but this version of the simulator cannot run yet. It runs after
/// [`validate`], so such a file is otherwise fully checked; delete a rule here when its
/// feature lands.
pub(super) fn reject_unsupported(scenario: &Scenario) -> Result<(), Problem> {
    for (k, edge) in scenario.job.edges.iter().enumerate() {
        if edge.exchange == Exchange::Blocking && scenario.mode == Mode::Streaming {
            return Err(problem(
                format!("job.edges[{k}].exchange"),
                "blocking exchanges in streaming mode are not implemented yet; use \"pipelined\"",
            ));
        }
    }
    Ok(())
}

fn check_job(
    raw: RawJob,
    mode: Mode,
    checkpointing: bool,
    adaptive_max: Option<u32>,
) -> Result<Job, Problem> {
    if raw.vertices.is_empty() {
        return Err(problem(
            "job.vertices",
            "a job needs at least one vertex, and at least one of them a source",
        ));
    }
    // Vertex id -> index; an IndexMap so the ids can be listed in file order in messages.
    let mut ids: IndexMap<String, usize> = IndexMap::new();
    let mut vertices = Vec::with_capacity(raw.vertices.len());
    for (i, raw_vertex) in raw.vertices.into_iter().enumerate() {
        let vertex = check_vertex(i, raw_vertex, &ids, checkpointing, adaptive_max, mode)?;
        ids.insert(vertex.id.clone(), i);
        vertices.push(vertex);
    }
    chain::check_uids(&vertices)?;
    let edges = check_edges(&raw.edges, &vertices, &ids, mode)?;
    for (i, vertex) in vertices.iter().enumerate() {
        if !vertex.chain.is_source() && !edges.iter().any(|e| e.to == i) {
            return Err(problem(
                format!("job.vertices[{i}]"),
                format!(
                    "{:?} is a {} vertex without an input edge; only a source has none, so \
                     add an edge to it in job.edges",
                    vertex.id,
                    vertex.chain.describe()
                ),
            ));
        }
    }
    Ok(Job { vertices, edges })
}

fn check_vertex(
    i: usize,
    raw: RawVertex,
    ids: &IndexMap<String, usize>,
    checkpointing: bool,
    adaptive_max: Option<u32>,
    mode: Mode,
) -> Result<Vertex, Problem> {
    let at = |field: &str| format!("job.vertices[{i}].{field}");
    if raw.id.trim().is_empty() {
        return Err(problem(
            at("id"),
            "must not be empty: edges, expectations and traces name a vertex by its id",
        ));
    }
    if let Some(first) = ids.get(&raw.id) {
        return Err(problem(
            at("id"),
            format!(
                "vertex id {:?} is already used by job.vertices[{first}]; ids must be unique \
                 because edges name vertices by id",
                raw.id
            ),
        ));
    }
    let head = chain::head_kind(raw.operator, raw.chain.as_deref());
    let (parallelism, adaptive) = match (raw.parallelism, adaptive_max) {
        (raw::RawParallelism::Fixed(p), _) => {
            if !(1..=u64::from(MAX_PARALLELISM)).contains(&p) {
                return Err(problem(
                    at("parallelism"),
                    format!(
                        "parallelism must be between 1 and {MAX_PARALLELISM} (the number of \
                         subtasks), not {p}"
                    ),
                ));
            }
            (p as u32, false)
        }
        (raw::RawParallelism::Auto, None) => {
            return Err(problem(
                at("parallelism"),
                "\"auto\" (adaptive parallelism, P2.1) only applies in mode \"batch\"; give a \
                 number",
            ))
        }
        (raw::RawParallelism::Auto, Some(_)) if head == Some(OperatorKind::Source) => {
            return Err(problem(
                at("parallelism"),
                "a source's parallelism cannot be \"auto\": adaptive parallelism is decided \
                 from input bytes, and a source has no input; give a number",
            ))
        }
        (raw::RawParallelism::Auto, Some(max)) => (max, true),
    };
    let fields = chain::Fields {
        records: raw.records,
        record_interval: raw.record_interval,
        keys: raw.keys,
        delivery: raw.delivery,
    };
    let chain = chain::check_chain(
        i,
        &raw.id,
        raw.operator,
        raw.chain,
        fields,
        parallelism,
        checkpointing,
        mode,
    )?;
    Ok(Vertex {
        id: raw.id,
        parallelism,
        adaptive,
        chain,
        process_time: raw.process_time,
        splits: None,
    })
}

fn check_edges(
    raw: &[RawEdge],
    vertices: &[Vertex],
    ids: &IndexMap<String, usize>,
    mode: Mode,
) -> Result<Vec<Edge>, Problem> {
    let mut edges: Vec<Edge> = Vec::with_capacity(raw.len());
    // (from, to) -> index of the edge, to name the first of two duplicates.
    let mut seen: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for (k, raw_edge) in raw.iter().enumerate() {
        let at = |field: &str| format!("job.edges[{k}].{field}");
        let lookup = |field: &str, id: &str| {
            ids.get(id).copied().ok_or_else(|| {
                let known: Vec<String> = ids.keys().map(|id| format!("{id:?}")).collect();
                problem(
                    at(field),
                    format!(
                        "unknown vertex {id:?}; the vertices are {}",
                        known.join(", ")
                    ),
                )
            })
        };
        let from = lookup("from", &raw_edge.from)?;
        let to = lookup("to", &raw_edge.to)?;
        let (up, down) = (&vertices[from], &vertices[to]);
        if from == to {
            return Err(problem(
                at("to"),
                format!(
                    "an edge from {:?} to itself is a cycle; the job graph must be acyclic",
                    up.id
                ),
            ));
        }
        if let Some(first) = seen.insert((from, to), k) {
            return Err(problem(
                format!("job.edges[{k}]"),
                format!(
                    "duplicate edge {:?} -> {:?}: job.edges[{first}] already connects them",
                    up.id, down.id
                ),
            ));
        }
        if down.chain.is_source() {
            return Err(problem(
                at("to"),
                format!("{:?} is a source, and a source has no input edges", down.id),
            ));
        }
        if up.chain.sink().is_some() {
            return Err(problem(
                at("from"),
                format!("{:?} is a sink, and a sink has no output edges", up.id),
            ));
        }
        let into_keyed_sum = down.chain.keys().is_some();
        let partitioner = match raw_edge.pattern {
            Pattern::Forward => {
                if into_keyed_sum {
                    return Err(problem(at("pattern"), KEYED_SUM_INPUT));
                }
                if raw_edge.partitioner.is_some() {
                    return Err(problem(
                        at("partitioner"),
                        "`partitioner` only applies to all_to_all edges: a forward edge is \
                         pointwise, so each subtask sends to its own fixed downstream subtasks",
                    ));
                }
                // Never consulted on a forward edge; the field's default keeps `Edge` flat.
                Partitioner::KeyHash
            }
            Pattern::AllToAll => {
                let partitioner = raw_edge.partitioner.unwrap_or(Partitioner::KeyHash);
                if into_keyed_sum && partitioner != Partitioner::KeyHash {
                    return Err(problem(at("partitioner"), KEYED_SUM_INPUT));
                }
                partitioner
            }
        };
        if let Some(cycle) = path_between(&edges, to, from) {
            let names: Vec<&str> = cycle
                .iter()
                .chain([&to])
                .map(|&v| vertices[v].id.as_str())
                .collect();
            return Err(problem(
                format!("job.edges[{k}]"),
                format!("the edges form a cycle: {}", names.join(" -> ")),
            ));
        }
        if mode == Mode::Batch {
            if raw_edge.exchange == Some(Exchange::Pipelined) {
                return Err(problem(
                    at("exchange"),
                    "batch jobs here use blocking exchanges only (P2.1); remove `exchange` or \
                     write \"blocking\"",
                ));
            }
            if (up.adaptive || down.adaptive) && raw_edge.pattern != Pattern::AllToAll {
                let auto = if down.adaptive { &down.id } else { &up.id };
                return Err(problem(
                    at("pattern"),
                    format!(
                        "{auto:?} has parallelism \"auto\", so its edges must be all_to_all: a \
                         forward edge needs both parallelisms known up front"
                    ),
                ));
            }
            if raw_edge.partitioner == Some(Partitioner::RoundRobin) {
                return Err(problem(
                    at("partitioner"),
                    "batch exchanges here are partitioned by key hash (consumers read key \
                     ranges, P2.1); remove `partitioner` or write \"key_hash\"",
                ));
            }
        }
        edges.push(Edge {
            from,
            to,
            pattern: raw_edge.pattern,
            exchange: raw_edge.exchange.unwrap_or(match mode {
                Mode::Streaming => Exchange::Pipelined,
                Mode::Batch => Exchange::Blocking,
            }),
            partitioner,
        });
    }
    Ok(edges)
}

const KEYED_SUM_INPUT: &str = "keyed_sum keys its state by record key, so every input edge must \
    be all_to_all with partitioner key_hash, like Flink's keyBy";

/// The vertices on a shortest path `start -> ... -> goal` along `edges`, both ends included, or
/// `None` when `goal` cannot be reached. Breadth-first in edge order, so the path (and the cycle
/// message built from it) is deterministic. Each vertex is visited at most once.
fn path_between(edges: &[Edge], start: usize, goal: usize) -> Option<Vec<usize>> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        if v == goal {
            let mut path = vec![goal];
            let mut at = goal;
            while let Some(&prev) = came_from.get(&at) {
                path.push(prev);
                at = prev;
            }
            path.reverse();
            return Some(path);
        }
        for edge in edges.iter().filter(|e| e.from == v) {
            if edge.to != start && !came_from.contains_key(&edge.to) {
                came_from.insert(edge.to, v);
                queue.push_back(edge.to);
            }
        }
    }
    None
}

fn check_cluster(raw: RawCluster, job: &Job) -> Result<Cluster, Problem> {
    if raw.task_managers == 0 {
        return Err(problem("cluster.task_managers", "must be at least 1"));
    }
    bounds::check_cluster_size(raw.task_managers, raw.slots_per_task_manager)?;
    // Flink's default slot sharing puts one subtask of every vertex in a slot, so the job needs
    // as many slots as its widest vertex. `check_job` guarantees there is one.
    let widest = job
        .vertices
        .iter()
        .max_by_key(|v| v.parallelism)
        .expect("check_job rejects a job without vertices");
    let needed = widest.parallelism;
    let slots_per_task_manager = match raw.slots_per_task_manager {
        None => needed.div_ceil(raw.task_managers),
        Some(0) => {
            return Err(problem(
                "cluster.slots_per_task_manager",
                "must be at least 1",
            ))
        }
        Some(slots) => {
            let total = u64::from(raw.task_managers) * u64::from(slots);
            if total < u64::from(needed) {
                return Err(problem(
                    "cluster.slots_per_task_manager",
                    format!(
                        "too few slots: the job needs {needed} (with Flink's default slot \
                         sharing, as many as its largest parallelism, {:?}'s), but the cluster \
                         has {} task managers x {slots} slots = {total}",
                        widest.id, raw.task_managers
                    ),
                ));
            }
            slots
        }
    };
    Ok(Cluster {
        task_managers: raw.task_managers,
        slots_per_task_manager,
        task_initialization: raw.task_initialization,
    })
}

fn check_network(raw: RawNetwork, job: &Job, mode: Mode) -> Result<Network, Problem> {
    let buffers = check_buffers(&raw, mode)?;
    let channel_capacity = raw.channel_capacity.unwrap_or(DEFAULT_CHANNEL_CAPACITY);
    if channel_capacity == 0 {
        return Err(problem(
            "network.channel_capacity",
            "must be at least 1: a channel without a buffer could never carry a record",
        ));
    }
    bounds::check_channel_capacity(channel_capacity)?;
    Ok(Network {
        channel_latency: raw.channel_latency,
        rpc_latency: raw.rpc_latency,
        channel_capacity,
        channels: check_channel_latencies(raw.channels, job, mode)?,
        buffers,
    })
}

/// F1.14: the network buffer settings, all or nothing: each needs `buffer_size`.
fn check_buffers(raw: &RawNetwork, mode: Mode) -> Result<Option<NetworkBuffers>, Problem> {
    let Some(size) = raw.buffer_size else {
        let given = [
            ("record_bytes", raw.record_bytes.is_some()),
            ("buffer_timeout", raw.buffer_timeout.is_some()),
            (
                "exclusive_buffers_per_channel",
                raw.exclusive_buffers_per_channel.is_some(),
            ),
            (
                "floating_buffers_per_gate",
                raw.floating_buffers_per_gate.is_some(),
            ),
        ];
        if let Some((field, _)) = given.iter().find(|(_, set)| *set) {
            return Err(problem(
                format!("network.{field}"),
                "needs network.buffer_size: without it records are not sent in buffers",
            ));
        }
        return Ok(None);
    };
    if mode == Mode::Batch {
        return Err(problem(
            "network.buffer_size",
            "network buffers are modelled for streaming jobs only (a batch job's exchanges are \
             partitions read whole, P2)",
        ));
    }
    if raw.channel_capacity.is_some() {
        return Err(problem(
            "network.channel_capacity",
            "counts records of a channel without buffers; with network.buffer_size, credit is \
             per buffer: set exclusive_buffers_per_channel and floating_buffers_per_gate",
        ));
    }
    if size == 0 || size > bounds::MAX_BUFFER_SIZE {
        return Err(problem(
            "network.buffer_size",
            format!(
                "bytes of one buffer, 1 to {} (Flink's default is 32768), not {size}",
                bounds::MAX_BUFFER_SIZE
            ),
        ));
    }
    let record_bytes = raw.record_bytes.unwrap_or(DEFAULT_RECORD_BYTES);
    if record_bytes == 0 || record_bytes > size {
        return Err(problem(
            "network.record_bytes",
            format!(
                "bytes of one serialised record, 1 to network.buffer_size ({size}), not \
                 {record_bytes}: a record fits in one buffer here"
            ),
        ));
    }
    let exclusive = raw
        .exclusive_buffers_per_channel
        .unwrap_or(DEFAULT_EXCLUSIVE_BUFFERS);
    if exclusive == 0 || exclusive > bounds::MAX_EXCLUSIVE_BUFFERS {
        return Err(problem(
            "network.exclusive_buffers_per_channel",
            format!(
                "1 to {}, not {exclusive}: a channel without a buffer of its own could wait for \
                 floating buffers that aligned channels hold",
                bounds::MAX_EXCLUSIVE_BUFFERS
            ),
        ));
    }
    let floating = raw
        .floating_buffers_per_gate
        .unwrap_or(DEFAULT_FLOATING_BUFFERS);
    if floating > bounds::MAX_FLOATING_BUFFERS {
        return Err(problem(
            "network.floating_buffers_per_gate",
            format!("at most {}, not {floating}", bounds::MAX_FLOATING_BUFFERS),
        ));
    }
    Ok(Some(NetworkBuffers {
        size_bytes: size as u32,
        record_bytes: record_bytes as u32,
        timeout: raw
            .buffer_timeout
            .as_ref()
            .map_or(DEFAULT_BUFFER_TIMEOUT, |t| t.0),
        exclusive_per_channel: exclusive,
        floating_per_gate: floating,
    }))
}

/// The channels of a job as a scenario names them: which (producer, consumer) subtask pairs
/// the edges join (pointwise and all-to-all edges: the graph decides).
pub(super) struct Joined {
    graph: crate::graph::ExecutionGraph,
    pairs: std::collections::BTreeSet<(u32, u32)>,
}

impl Joined {
    pub(super) fn of(job: &Job) -> Joined {
        let graph = crate::graph::ExecutionGraph::build(job);
        let pairs = graph.channels.iter().map(|c| (c.from.0, c.to.0)).collect();
        Joined { graph, pairs }
    }

    /// The pair of subtask ids, if a channel joins them.
    pub(super) fn pair(&self, from: SubtaskRef, to: SubtaskRef) -> Option<(u32, u32)> {
        let pair = (self.graph.subtask(from).0, self.graph.subtask(to).0);
        self.pairs.contains(&pair).then_some(pair)
    }
}

/// Why two subtasks named in a scenario have no channel between them.
fn no_channel(from: &str, to: &str) -> String {
    format!(
        "no channel runs from {from} to {to}: only an edge of the job makes one (a forward edge \
         joins the subtasks Flink's pointwise mapping pairs, an all-to-all edge every pair)"
    )
}

/// `network.channels`: each names two subtasks with a channel between them, once.
fn check_channel_latencies(
    raw: Vec<super::raw::RawChannelLatency>,
    job: &Job,
    mode: Mode,
) -> Result<Vec<ChannelLatency>, Problem> {
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    if mode == Mode::Batch {
        return Err(problem(
            "network.channels",
            "must be empty in a batch job: its exchanges are blocking partitions read whole, \
             not channels with a latency",
        ));
    }
    bounds::check_list_len("network.channels", raw.len())?;
    let joined = Joined::of(job);
    let mut seen: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(raw.len());
    for (i, c) in raw.into_iter().enumerate() {
        let at = |field: &str| format!("network.channels[{i}].{field}");
        let from = subtask_ref(&c.from, job).map_err(|m| problem(at("from"), m))?;
        let to = subtask_ref(&c.to, job).map_err(|m| problem(at("to"), m))?;
        let Some(pair) = joined.pair(from, to) else {
            return Err(problem(
                format!("network.channels[{i}]"),
                no_channel(&c.from, &c.to),
            ));
        };
        if let Some(first) = seen.insert(pair, i) {
            return Err(problem(
                format!("network.channels[{i}]"),
                format!(
                    "the channel from {} to {} is listed twice: network.channels[{first}] gives \
                     it a latency already",
                    c.from, c.to
                ),
            ));
        }
        out.push(ChannelLatency {
            from,
            to,
            latency: c.latency,
        });
    }
    Ok(out)
}

fn check_checkpointing(raw: RawCheckpointing) -> Result<Checkpointing, Problem> {
    if raw.interval == Some(sim::Duration::ZERO) {
        return Err(problem(
            "checkpointing.interval",
            "must be longer than 0; use null for no periodic trigger (only `trigger_at`)",
        ));
    }
    // Instant -> index in the file, to name the first of two equal instants.
    bounds::check_list_len("checkpointing.trigger_at", raw.trigger_at.len())?;
    let mut trigger_at: BTreeMap<sim::Duration, usize> = BTreeMap::new();
    for (k, at) in raw.trigger_at.iter().enumerate() {
        if let Some(first) = trigger_at.insert(at.0, k) {
            return Err(problem(
                format!("checkpointing.trigger_at[{k}]"),
                format!(
                    "{} is listed twice: checkpointing.trigger_at[{first}] is the same instant; \
                     list each trigger once",
                    at.0
                ),
            ));
        }
    }
    if raw.interval.is_none() && trigger_at.is_empty() {
        return Err(problem(
            "checkpointing",
            "no checkpoint would ever be triggered: `interval` is null and `trigger_at` is \
             empty; give an interval, instants in `trigger_at`, or remove the block to disable \
             checkpointing",
        ));
    }
    if raw.timeout == sim::Duration::ZERO {
        return Err(problem(
            "checkpointing.timeout",
            "must be longer than 0: a checkpoint with no time to complete would always expire",
        ));
    }
    if !(1..=MAX_CONCURRENT_CHECKPOINTS).contains(&raw.max_concurrent) {
        return Err(problem(
            "checkpointing.max_concurrent",
            format!(
                "must be between 1 and {MAX_CONCURRENT_CHECKPOINTS}, not {}: pending checkpoints \
                 are tracked in a {MAX_CONCURRENT_CHECKPOINTS}-wide window",
                raw.max_concurrent
            ),
        ));
    }
    if raw.mode == CheckpointMode::AtLeastOnce && raw.alignment_timeout.is_some() {
        return Err(problem(
            "checkpointing.alignment_timeout",
            "must be null with mode \"at_least_once\": at-least-once barriers never block a \
             channel, so there is no alignment to time out (F1.7)",
        ));
    }
    Ok(Checkpointing {
        interval: raw.interval,
        trigger_at: trigger_at.into_keys().collect(),
        timeout: raw.timeout,
        max_concurrent: raw.max_concurrent,
        min_pause: raw.min_pause,
        mode: raw.mode,
        alignment_timeout: raw.alignment_timeout,
        finish_protocol: raw.finish_protocol,
        flush_before_finish: raw.flush_before_finish,
        async_duration: raw.async_duration,
        tolerable_failures: raw.tolerable_failures,
        cancel_markers: raw.cancel_markers,
    })
}

fn check_budget(raw: RawBudget) -> Result<Budget, Problem> {
    if !(1..=MAX_EVENTS_BUDGET).contains(&raw.max_events) {
        return Err(problem(
            "budget.max_events",
            format!(
                "must be between 1 and {MAX_EVENTS_BUDGET} (a few minutes of simulation at a \
                 few million events a second), not {}",
                raw.max_events
            ),
        ));
    }
    if raw.max_time == sim::Duration::ZERO {
        return Err(problem("budget.max_time", "must be longer than 0"));
    }
    if !(1..=MAX_PENDING_BUDGET).contains(&raw.max_pending) {
        return Err(problem(
            "budget.max_pending",
            format!(
                "must be between 1 and {MAX_PENDING_BUDGET} (pending events take memory: a few \
                 gigabytes at the most), not {}",
                raw.max_pending
            ),
        ));
    }
    Ok(Budget {
        max_events: raw.max_events,
        max_time: raw.max_time,
        max_pending: raw.max_pending,
    })
}

fn check_jobmaster(raw: RawJobMaster) -> Result<JobMasterConfig, Problem> {
    if raw.heartbeat_timeout == sim::Duration::ZERO {
        return Err(problem(
            "jobmaster.heartbeat_timeout",
            "must be longer than 0: a TaskManager or JobMaster counts as lost once no \
             heartbeat arrived for this long",
        ));
    }
    if raw.reconcile_timeout == sim::Duration::ZERO {
        return Err(problem(
            "jobmaster.reconcile_timeout",
            "must be longer than 0: a new JobMaster waits this long for the TaskManagers' \
             reports (P3.4)",
        ));
    }
    Ok(JobMasterConfig {
        reconcile_timeout: raw.reconcile_timeout,
        terminal_state_retention: raw.terminal_state_retention,
        failover: raw.failover,
        restart_strategy: RestartStrategy {
            delay: raw.restart_strategy.delay,
            max_attempts: raw.restart_strategy.max_attempts,
        },
        failover_scope: raw.failover_scope,
        heartbeat_timeout: raw.heartbeat_timeout,
    })
}

fn check_expect(
    raw: RawExpect,
    job: &Job,
    checkpointing: bool,
    mode: Mode,
) -> Result<Expect, Problem> {
    if mode == Mode::Streaming {
        for (field, present) in [
            ("recoveries", raw.recoveries.is_some()),
            ("parallelism", raw.parallelism.is_some()),
            ("speculative_attempts", raw.speculative_attempts.is_some()),
            ("speculative_wins", raw.speculative_wins.is_some()),
        ] {
            if present {
                return Err(problem(
                    format!("expect.{field}"),
                    "only applies to batch jobs (P2); remove it or set `mode` to \"batch\"",
                ));
            }
        }
    }
    if mode == Mode::Batch && raw.restores.is_some() {
        return Err(problem(
            "expect.restores",
            "only applies to streaming jobs (P1.8); a batch job's recoveries are `expect.recoveries`",
        ));
    }
    let restores = raw
        .restores
        .map(|list| super::restores::check_expected_restores(list, job))
        .transpose()?;
    let recoveries = raw
        .recoveries
        .map(|r| super::batch::check_expected_recoveries(r, job))
        .transpose()?;
    if let Some(parallelism) = &raw.parallelism {
        for id in parallelism.keys() {
            if !job.vertices.iter().any(|v| &v.id == id) {
                return Err(problem(
                    format!("expect.parallelism.{id}"),
                    format!(
                        "unknown vertex {id:?}; the vertices are {}",
                        quoted_ids(job)
                    ),
                ));
            }
        }
    }
    let sink_ids: Vec<&str> = job
        .vertices
        .iter()
        .filter(|v| v.chain.sink().is_some())
        .map(|v| v.id.as_str())
        .collect();
    let mut sinks = IndexMap::new();
    for (id, count) in raw.sinks.0 {
        let at = format!("expect.sinks.{id}");
        if !sink_ids.contains(&id.as_str()) {
            let known = if sink_ids.is_empty() {
                "the job has no sink vertex".to_owned()
            } else {
                let quoted: Vec<String> = sink_ids.iter().map(|id| format!("{id:?}")).collect();
                format!("the sink vertices are {}", quoted.join(", "))
            };
            return Err(problem(at, format!("{id:?} is not a sink vertex; {known}")));
        }
        if sinks.insert(id, count).is_some() {
            return Err(problem(at, "this sink is listed twice"));
        }
    }
    let needs_checkpointing = [
        ("checkpoints", !raw.checkpoints.is_empty()),
        ("completed_checkpoints", raw.completed_checkpoints.is_some()),
        ("retrigger_rpcs", raw.retrigger_rpcs.is_some()),
    ];
    for (field, present) in needs_checkpointing {
        if present && !checkpointing {
            return Err(problem(
                format!("expect.{field}"),
                "checkpointing is disabled (the scenario has no `checkpointing` block), so no \
                 checkpoint is ever triggered; add the block or remove this expectation",
            ));
        }
    }
    // Checkpoint id -> index in the list, to name the first of two entries for one id.
    let mut ids: BTreeMap<u64, usize> = BTreeMap::new();
    let mut checkpoints = Vec::with_capacity(raw.checkpoints.len());
    for (i, raw_checkpoint) in raw.checkpoints.into_iter().enumerate() {
        // Before the entry's other fields, so problems are reported in field order.
        if let Some(first) = ids.insert(raw_checkpoint.id, i) {
            return Err(problem(
                format!("expect.checkpoints[{i}].id"),
                format!(
                    "checkpoint {} is already described by expect.checkpoints[{first}]; \
                     describe each checkpoint once",
                    raw_checkpoint.id
                ),
            ));
        }
        checkpoints.push(check_expected_checkpoint(i, raw_checkpoint, job)?);
    }
    let two_phase_commit = job
        .vertices
        .iter()
        .any(|v| v.chain.sink() == Some(Delivery::TwoPhaseCommit));
    if raw.committed_records.is_some() && !two_phase_commit {
        return Err(problem(
            "expect.committed_records",
            "no sink has delivery \"two_phase_commit\", so no record is ever committed; \
             expect sink_records instead",
        ));
    }
    Ok(Expect {
        status: raw.status.map(|s| s.0),
        violations: raw.violations.into_iter().map(|i| i.0).collect(),
        sink_records: raw.sink_records,
        sinks,
        trace_hash: raw.trace_hash.map(|h| h.0),
        checkpoints,
        completed_checkpoints: raw.completed_checkpoints,
        retrigger_rpcs: raw.retrigger_rpcs,
        committed_records: raw.committed_records,
        failovers: raw.failovers,
        reconciliations: raw.reconciliations,
        rpcs_kept: raw.rpcs_kept,
        rpcs_resent: raw.rpcs_resent,
        restores,
        recoveries,
        parallelism: raw.parallelism,
        speculative_attempts: sorted_names("speculative_attempts", raw.speculative_attempts, job)?,
        speculative_wins: sorted_names("speculative_wins", raw.speculative_wins, job)?,
    })
}

/// `expect.FIELD`: subtask names (each must exist), compared sorted.
fn sorted_names(
    field: &str,
    names: Option<Vec<String>>,
    job: &Job,
) -> Result<Option<Vec<String>>, Problem> {
    let Some(mut names) = names else {
        return Ok(None);
    };
    bounds::check_list_len(&format!("expect.{field}"), names.len())?;
    for (i, name) in names.iter().enumerate() {
        subtask_ref(name, job).map_err(|m| problem(format!("expect.{field}[{i}]"), m))?;
    }
    names.sort();
    Ok(Some(names))
}

/// Checks `expect.checkpoints[i]` on its own; that its id is unique is the caller's check.
fn check_expected_checkpoint(
    i: usize,
    raw: RawExpectedCheckpoint,
    job: &Job,
) -> Result<ExpectedCheckpoint, Problem> {
    let at = |field: &str| format!("expect.checkpoints[{i}].{field}");
    if raw.id == 0 {
        return Err(problem(
            at("id"),
            "must be at least 1: checkpoint ids start at 1",
        ));
    }
    if let Some(reason) = &raw.abort_reason {
        if reason.is_empty() {
            return Err(problem(
                at("abort_reason"),
                "must not be empty: it is compared exactly with the reason the checkpoint was \
                 aborted for",
            ));
        }
        if let Some(outcome @ (CheckpointOutcome::Completed | CheckpointOutcome::NeverTriggered)) =
            raw.outcome
        {
            return Err(problem(
                at("abort_reason"),
                format!(
                    "only an aborted checkpoint has an abort reason, and this one is expected \
                     to be {}",
                    outcome_name(outcome)
                ),
            ));
        }
    }
    if raw.outcome == Some(CheckpointOutcome::NeverTriggered) {
        let plan = [
            ("triggered", raw.triggered.is_some()),
            ("finished", raw.finished.is_some()),
            ("fully_finished", raw.fully_finished.is_some()),
        ];
        if let Some((field, _)) = plan.into_iter().find(|(_, present)| *present) {
            return Err(problem(
                at(field),
                "a checkpoint that is never triggered has no trigger plan to compare with; \
                 remove this field or the outcome \"never_triggered\"",
            ));
        }
    }
    if raw.duration_at_least.is_some() || raw.duration_at_most.is_some() {
        if let Some(outcome @ (CheckpointOutcome::Aborted | CheckpointOutcome::NeverTriggered)) =
            raw.outcome
        {
            let field = if raw.duration_at_least.is_some() {
                "duration_at_least"
            } else {
                "duration_at_most"
            };
            return Err(problem(
                at(field),
                format!(
                    "a duration bound needs a completed checkpoint, and this one is expected to be {}",
                    outcome_name(outcome)
                ),
            ));
        }
    }
    if let (Some(min), Some(max)) = (raw.duration_at_least, raw.duration_at_most) {
        if min > max {
            return Err(problem(
                at("duration_at_most"),
                format!("{max} is below duration_at_least ({min}): no duration meets both"),
            ));
        }
    }
    if let (Some(min), Some(max)) = (raw.channel_state_at_least, raw.channel_state_at_most) {
        if min > max {
            return Err(problem(
                at("channel_state_at_most"),
                format!("{max} is below channel_state_at_least ({min}): no count meets both"),
            ));
        }
    }
    for (field, list) in [("triggered", &raw.triggered), ("finished", &raw.finished)] {
        let list = list.as_deref().unwrap_or_default();
        check_set(list, &at(field), |name| check_subtask(name, job))?;
    }
    let fully_finished = raw.fully_finished.as_deref().unwrap_or_default();
    check_set(fully_finished, &at("fully_finished"), |id| {
        if job.vertices.iter().any(|v| v.id == id) {
            Ok(())
        } else {
            Err(format!(
                "unknown vertex {id:?}; fully_finished lists vertex ids, and the vertices are {}",
                quoted_ids(job)
            ))
        }
    })?;
    Ok(ExpectedCheckpoint {
        id: raw.id,
        outcome: raw.outcome,
        abort_reason: raw.abort_reason,
        triggered: raw.triggered,
        finished: raw.finished,
        fully_finished: raw.fully_finished,
        duration_at_least: raw.duration_at_least,
        duration_at_most: raw.duration_at_most,
        channel_state_at_least: raw.channel_state_at_least,
        channel_state_at_most: raw.channel_state_at_most,
    })
}

/// Checks every entry of a list that is compared as a set (`path` is the list's): `entry` on
/// its own, and that no entry is listed twice.
fn check_set(
    list: &[String],
    path: &str,
    entry: impl Fn(&str) -> Result<(), String>,
) -> Result<(), Problem> {
    // Entry -> index of its first occurrence.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, name) in list.iter().enumerate() {
        let at = || format!("{path}[{k}]");
        entry(name).map_err(|message| problem(at(), message))?;
        if let Some(first) = seen.insert(name, k) {
            return Err(problem(
                at(),
                format!(
                    "{name:?} is listed twice: {path}[{first}] is the same; the list is \
                     compared as a set"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `name` is a subtask of the job, written `vertex[i]` as traces and summaries
/// write it: the vertex id, and the 0-based index in decimal without leading zeros.
pub(super) fn check_subtask(name: &str, job: &Job) -> Result<(), String> {
    subtask_ref(name, job).map(|_| ())
}

/// Resolves the subtask `name` (as [`check_subtask`] reads it) to its vertex index and subtask
/// index.
pub(super) fn subtask_ref(name: &str, job: &Job) -> Result<SubtaskRef, String> {
    let parsed = name
        .strip_suffix(']')
        .and_then(|rest| rest.rsplit_once('['))
        .filter(|(id, index)| {
            !id.is_empty()
                && !index.is_empty()
                && index.bytes().all(|b| b.is_ascii_digit())
                && (index.len() == 1 || !index.starts_with('0'))
        });
    let Some((id, index)) = parsed else {
        return Err(format!(
            "{name:?} is not a subtask; expected a vertex id and a 0-based index, like \"{}[0]\"",
            job.vertices[0].id
        ));
    };
    let Some((vertex_index, vertex)) = job.vertices.iter().enumerate().find(|(_, v)| v.id == id)
    else {
        return Err(format!(
            "unknown vertex {id:?} in {name:?}; the vertices are {}",
            quoted_ids(job)
        ));
    };
    // Too many digits for a u64 is out of range too.
    let index: u64 = index.parse().unwrap_or(u64::MAX);
    let parallelism = vertex.parallelism;
    if index >= u64::from(parallelism) {
        let subtasks = if parallelism == 1 {
            format!("its only subtask is {id}[0]")
        } else {
            format!("its subtasks are {id}[0] to {id}[{}]", parallelism - 1)
        };
        return Err(format!(
            "{name:?} is not a subtask: {id:?} has parallelism {parallelism}, so {subtasks}"
        ));
    }
    Ok(SubtaskRef {
        vertex: vertex_index,
        index: u32::try_from(index).expect("below a u32 parallelism"),
    })
}

/// The vertex ids in file order, quoted, for messages.
fn quoted_ids(job: &Job) -> String {
    let quoted: Vec<String> = job.vertices.iter().map(|v| format!("{:?}", v.id)).collect();
    quoted.join(", ")
}

fn outcome_name(outcome: CheckpointOutcome) -> &'static str {
    match outcome {
        CheckpointOutcome::Completed => "completed",
        CheckpointOutcome::Aborted => "aborted",
        CheckpointOutcome::NeverTriggered => "never_triggered",
    }
}
