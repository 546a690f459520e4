//! The rules that relate values to each other, applied to the deserialized [`RawScenario`] to
//! build a [`Scenario`] with every default filled in.
//!
//! The checks run in the order the format is documented (top-level fields, each vertex, each
//! edge, the graph, cluster, network, budget, expect), and the first failure is returned, each
//! with the JSON path of the value to fix.

use super::error::ScenarioError;
use super::raw::{
    self, OperatorKind, RawBudget, RawCluster, RawEdge, RawExpect, RawJob, RawNetwork, RawRecords,
    RawScenario, RawVertex,
};
use super::types::{
    Budget, Cluster, Delivery, Edge, Exchange, Expect, Job, Mode, Network, Operator, Partitioner,
    Pattern, Scenario, Vertex,
};
use indexmap::IndexMap;
use std::collections::{BTreeMap, VecDeque};

/// The largest parallelism a vertex may have. Every subtask is simulated as an actor, so this
/// keeps a typo (an extra zero or three) from turning into a run that never ends.
pub(super) const MAX_PARALLELISM: u32 = 100_000;

/// What validation found wrong: where, and what was expected. The caller adds the file name.
#[derive(Debug)]
pub(super) struct Problem {
    pub path: String,
    pub message: String,
}

impl Problem {
    pub fn in_file(self, file: &str) -> ScenarioError {
        ScenarioError::new(file, self.path, self.message)
    }
}

fn problem(path: impl Into<String>, message: impl Into<String>) -> Problem {
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
    let job = check_job(raw.job, raw.mode)?;
    let cluster = check_cluster(raw.cluster, &job)?;
    let network = check_network(raw.network)?;
    let budget = check_budget(raw.budget)?;
    let expect = check_expect(raw.expect, &job)?;
    Ok(Scenario {
        name: raw.name,
        description: raw.description,
        seed: raw.seed,
        mode: raw.mode,
        job,
        cluster,
        network,
        budget,
        tie_break: raw.tie_break,
        expect,
        document,
    })
}

/// Rejects what is valid but this version of the simulator cannot run yet. It runs after
/// [`validate`], so such a file is otherwise fully checked; delete a rule here when its
/// feature lands.
pub(super) fn reject_unsupported(scenario: &Scenario) -> Result<(), Problem> {
    if scenario.mode == Mode::Batch {
        return Err(problem(
            "mode",
            "batch execution (FLIP-383) is not implemented yet; use \"streaming\"",
        ));
    }
    for (i, vertex) in scenario.job.vertices.iter().enumerate() {
        if vertex.operator
            == (Operator::Sink {
                delivery: Delivery::TwoPhaseCommit,
            })
        {
            return Err(problem(
                format!("job.vertices[{i}].delivery"),
                "delivery \"two_phase_commit\" needs checkpointing, which is not implemented \
                 yet; use \"at_least_once\"",
            ));
        }
    }
    for (k, edge) in scenario.job.edges.iter().enumerate() {
        if edge.exchange == Exchange::Blocking {
            return Err(problem(
                format!("job.edges[{k}].exchange"),
                "blocking exchanges in streaming mode are not implemented yet; use \"pipelined\"",
            ));
        }
    }
    Ok(())
}

fn check_job(raw: RawJob, mode: Mode) -> Result<Job, Problem> {
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
        let vertex = check_vertex(i, raw_vertex, &ids)?;
        ids.insert(vertex.id.clone(), i);
        vertices.push(vertex);
    }
    let edges = check_edges(&raw.edges, &vertices, &ids, mode)?;
    for (i, vertex) in vertices.iter().enumerate() {
        let is_source = matches!(vertex.operator, Operator::Source { .. });
        if !is_source && !edges.iter().any(|e| e.to == i) {
            return Err(problem(
                format!("job.vertices[{i}]"),
                format!(
                    "{:?} is a {} vertex without an input edge; only a source has none, so \
                     add an edge to it in job.edges",
                    vertex.id,
                    operator_name(&vertex.operator)
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
    if !(1..=MAX_PARALLELISM).contains(&raw.parallelism) {
        return Err(problem(
            at("parallelism"),
            format!(
                "parallelism must be between 1 and {MAX_PARALLELISM} (the number of subtasks), \
                 not {}",
                raw.parallelism
            ),
        ));
    }
    let kind = raw.operator;
    let misplaced = [
        ("records", raw.records.is_some(), OperatorKind::Source),
        (
            "record_interval",
            raw.record_interval.is_some(),
            OperatorKind::Source,
        ),
        ("keys", raw.keys.is_some(), OperatorKind::KeyedSum),
        ("delivery", raw.delivery.is_some(), OperatorKind::Sink),
    ];
    for (field, present, owner) in misplaced {
        if present && kind != owner {
            return Err(problem(
                at(field),
                format!(
                    "`{field}` only applies to {} vertices, and {:?} is a {}",
                    owner.name(),
                    raw.id,
                    kind.name()
                ),
            ));
        }
    }
    let operator = match kind {
        OperatorKind::Source => Operator::Source {
            records: subtask_records(raw.records, raw.parallelism)
                .map_err(|message| problem(at("records"), message))?,
            record_interval: raw.record_interval.unwrap_or(raw::DEFAULT_RECORD_INTERVAL),
        },
        OperatorKind::Map => Operator::Map,
        OperatorKind::KeyedSum => {
            let keys = raw.keys.unwrap_or(raw::DEFAULT_KEYS);
            if keys == 0 {
                return Err(problem(
                    at("keys"),
                    "must be at least 1: records are summed per key",
                ));
            }
            Operator::KeyedSum { keys }
        }
        OperatorKind::Sink => Operator::Sink {
            delivery: raw.delivery.unwrap_or(Delivery::AtLeastOnce),
        },
    };
    Ok(Vertex {
        id: raw.id,
        parallelism: raw.parallelism,
        operator,
        process_time: raw.process_time,
    })
}

/// Expands a source's `records` into one entry per subtask.
fn subtask_records(
    raw: Option<RawRecords>,
    parallelism: u32,
) -> Result<Vec<super::Records>, String> {
    let subtasks = parallelism as usize;
    match raw.unwrap_or(RawRecords::Every(raw::DEFAULT_RECORDS)) {
        RawRecords::Every(records) => Ok(vec![records; subtasks]),
        RawRecords::PerSubtask(list) if list.len() == subtasks => Ok(list),
        RawRecords::PerSubtask(list) => Err(format!(
            "lists {} record counts but the vertex has parallelism {parallelism}; give exactly \
             one per subtask, or one number for every subtask",
            list.len()
        )),
    }
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
        if matches!(down.operator, Operator::Source { .. }) {
            return Err(problem(
                at("to"),
                format!("{:?} is a source, and a source has no input edges", down.id),
            ));
        }
        if matches!(up.operator, Operator::Sink { .. }) {
            return Err(problem(
                at("from"),
                format!("{:?} is a sink, and a sink has no output edges", up.id),
            ));
        }
        let into_keyed_sum = matches!(down.operator, Operator::KeyedSum { .. });
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

fn operator_name(operator: &Operator) -> &'static str {
    match operator {
        Operator::Source { .. } => OperatorKind::Source.name(),
        Operator::Map => OperatorKind::Map.name(),
        Operator::KeyedSum { .. } => OperatorKind::KeyedSum.name(),
        Operator::Sink { .. } => OperatorKind::Sink.name(),
    }
}

fn check_cluster(raw: RawCluster, job: &Job) -> Result<Cluster, Problem> {
    if raw.task_managers == 0 {
        return Err(problem("cluster.task_managers", "must be at least 1"));
    }
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
    })
}

fn check_network(raw: RawNetwork) -> Result<Network, Problem> {
    if raw.channel_capacity == 0 {
        return Err(problem(
            "network.channel_capacity",
            "must be at least 1: a channel without a buffer could never carry a record",
        ));
    }
    Ok(Network {
        channel_latency: raw.channel_latency,
        rpc_latency: raw.rpc_latency,
        channel_capacity: raw.channel_capacity,
    })
}

fn check_budget(raw: RawBudget) -> Result<Budget, Problem> {
    if raw.max_events == 0 {
        return Err(problem("budget.max_events", "must be at least 1"));
    }
    if raw.max_time == sim::Duration::ZERO {
        return Err(problem("budget.max_time", "must be longer than 0"));
    }
    Ok(Budget {
        max_events: raw.max_events,
        max_time: raw.max_time,
    })
}

fn check_expect(raw: RawExpect, job: &Job) -> Result<Expect, Problem> {
    let sink_ids: Vec<&str> = job
        .vertices
        .iter()
        .filter(|v| matches!(v.operator, Operator::Sink { .. }))
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
    Ok(Expect {
        status: raw.status.map(|s| s.0),
        violations: raw.violations.into_iter().map(|i| i.0).collect(),
        sink_records: raw.sink_records,
        sinks,
        trace_hash: raw.trace_hash.map(|h| h.0),
    })
}
