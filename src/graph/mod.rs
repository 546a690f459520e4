//! Job graph → execution graph (`docs/rules.md` P0): subtasks, channels, and how a record picks
//! its channel.
//!
//! Everything here is fixed for the life of a run and indexed by small integers: a subtask is a
//! [`SubtaskId`] (vertex-major: all subtasks of vertex 0, then vertex 1, …) and a channel a
//! [`ChannelId`] (edge-major, then producer-major). Actors keep their own state in vectors
//! indexed by these ids, so the graph is shared read-only and the hot path never hashes.
//! It knows nothing of time or faults.

use crate::record::{mix64, Record};
use crate::scenario::{Chain, DurationRange, Job, Partitioner, Pattern, SubtaskRef};
use std::fmt;

/// One parallel instance of a vertex, numbered across the whole job.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct SubtaskId(pub u32);

/// One upstream subtask's subpartition feeding one downstream subtask's input channel.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ChannelId(pub u32);

/// A vertex of the job graph, by position in the scenario file.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct VertexId(pub u32);

impl SubtaskId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl ChannelId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl VertexId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Debug)]
pub struct JobVertex {
    pub name: String,
    pub parallelism: u32,
    /// The id of subtask 0; subtask `i` is `first + i`.
    pub first: u32,
    /// The operators each subtask runs, head first (F1.12).
    pub chain: Chain,
    /// Simulated cost of processing one record.
    pub process_time: DurationRange,
    /// F1.13: a streaming source's splits, read as its enumerator assigns them.
    pub splits: Option<u32>,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
}

#[derive(Clone, Debug)]
pub struct JobEdge {
    pub from: VertexId,
    pub to: VertexId,
    pub pattern: Pattern,
    pub partitioner: Partitioner,
    /// `Some(k)` when the consumer's chain has a `keyed_sum` with `k` keys: records are keyed by
    /// `key % k` (its key selector) before hashing to a key group.
    pub key_modulus: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Subtask {
    pub vertex: VertexId,
    /// Position within its vertex: the `i` of `vertex[i]`.
    pub index: u32,
    /// Every input channel, grouped by input edge in edge order.
    pub inputs: Vec<ChannelId>,
    /// One gate per output edge.
    pub outputs: Vec<OutputGate>,
}

/// The channels one subtask writes for one output edge.
#[derive(Clone, Debug)]
pub struct OutputGate {
    pub edge: usize,
    /// For `all_to_all`, `channels[j]` leads to downstream subtask `j`. For `forward`, the
    /// contiguous range of downstream subtasks of Flink's pointwise mapping.
    pub channels: Vec<ChannelId>,
}

#[derive(Clone, Copy, Debug)]
pub struct ChannelInfo {
    pub edge: u32,
    pub from: SubtaskId,
    pub to: SubtaskId,
    /// This channel's position in the consumer's `inputs`.
    pub input_slot: u32,
}

/// The execution graph: immutable after [`ExecutionGraph::build`].
#[derive(Clone, Debug)]
pub struct ExecutionGraph {
    pub vertices: Vec<JobVertex>,
    pub edges: Vec<JobEdge>,
    pub subtasks: Vec<Subtask>,
    pub channels: Vec<ChannelInfo>,
    /// Vertices in an order where every edge points forward.
    pub topological_order: Vec<VertexId>,
    /// Per subtask, its pipelined region: subtasks connected by pipelined channels restart
    /// together in a region failover (Flink's `SchedulingPipelinedRegion`). Numbered by the
    /// region's smallest subtask.
    pub regions: Vec<u32>,
}

impl ExecutionGraph {
    /// Expands a validated job graph. Validation (in `crate::scenario`) has already rejected
    /// cycles, unknown vertices and zero parallelism, so this cannot fail.
    pub fn build(job: &Job) -> ExecutionGraph {
        let mut vertices = Vec::with_capacity(job.vertices.len());
        let mut subtasks = Vec::new();
        for (v, vertex) in job.vertices.iter().enumerate() {
            let first = u32::try_from(subtasks.len()).expect("more than 2^32 subtasks");
            for index in 0..vertex.parallelism {
                subtasks.push(Subtask {
                    vertex: VertexId(v as u32),
                    index,
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                });
            }
            vertices.push(JobVertex {
                name: vertex.id.clone(),
                parallelism: vertex.parallelism,
                first,
                chain: vertex.chain.clone(),
                process_time: vertex.process_time,
                splits: vertex.splits,
                inputs: Vec::new(),
                outputs: Vec::new(),
            });
        }

        let mut edges = Vec::with_capacity(job.edges.len());
        let pairs: Vec<Vec<(u32, u32)>> = job
            .edges
            .iter()
            .map(|edge| {
                let (up, down) = (&vertices[edge.from], &vertices[edge.to]);
                connect(edge.pattern, up.parallelism, down.parallelism)
            })
            .collect();
        // A million channels' places, read at random by nearly every event: on huge pages
        // where the system allows.
        let mut channels = sim::hugepages::vec(pairs.iter().map(Vec::len).sum());
        for ((e, edge), pairs) in job.edges.iter().enumerate().zip(pairs) {
            vertices[edge.from].outputs.push(e);
            vertices[edge.to].inputs.push(e);
            let key_modulus = job.vertices[edge.to].chain.keys();
            edges.push(JobEdge {
                from: VertexId(edge.from as u32),
                to: VertexId(edge.to as u32),
                pattern: edge.pattern,
                partitioner: edge.partitioner,
                key_modulus,
            });
            let up = &vertices[edge.from];
            let down = &vertices[edge.to];
            let mut gates: Vec<OutputGate> = (0..up.parallelism)
                .map(|_| OutputGate {
                    edge: e,
                    channels: Vec::new(),
                })
                .collect();
            for (i, j) in pairs {
                let id = ChannelId(u32::try_from(channels.len()).expect("more than 2^32 channels"));
                let from = SubtaskId(up.first + i);
                let to = SubtaskId(down.first + j);
                let input_slot = subtasks[to.index()].inputs.len() as u32;
                channels.push(ChannelInfo {
                    edge: e as u32,
                    from,
                    to,
                    input_slot,
                });
                gates[i as usize].channels.push(id);
                subtasks[to.index()].inputs.push(id);
            }
            for (i, gate) in gates.into_iter().enumerate() {
                subtasks[(up.first as usize) + i].outputs.push(gate);
            }
        }

        let topological_order = topological_order(&vertices, &edges);
        let regions = pipelined_regions(subtasks.len(), &channels);
        ExecutionGraph {
            vertices,
            edges,
            subtasks,
            channels,
            topological_order,
            regions,
        }
    }

    /// The subtasks of `subtask`'s pipelined region, in id order.
    pub fn region_of(&self, subtask: SubtaskId) -> Vec<SubtaskId> {
        let region = self.regions[subtask.index()];
        (0..self.subtasks.len() as u32)
            .filter(|&s| self.regions[s as usize] == region)
            .map(SubtaskId)
            .collect()
    }

    pub fn vertex_of(&self, subtask: SubtaskId) -> &JobVertex {
        &self.vertices[self.subtasks[subtask.index()].vertex.index()]
    }

    pub fn subtasks_of(&self, vertex: VertexId) -> impl Iterator<Item = SubtaskId> {
        let v = &self.vertices[vertex.index()];
        (v.first..v.first + v.parallelism).map(SubtaskId)
    }

    /// `vertex[i]`, the way scenarios and traces write a subtask.
    pub fn subtask_name(&self, subtask: SubtaskId) -> SubtaskName<'_> {
        SubtaskName(self, subtask)
    }

    /// `up[i]->down[j]`, the way scenarios and traces write a channel.
    pub fn channel_name(&self, channel: ChannelId) -> ChannelName<'_> {
        ChannelName(self, channel)
    }

    /// The subtask a validated scenario names (`vertex[i]`, resolved).
    pub fn subtask(&self, r: SubtaskRef) -> SubtaskId {
        SubtaskId(self.vertices[r.vertex].first + r.index)
    }

    /// The channel from `from` to `to`, if an edge makes one (a scan: for the rare lookups a
    /// fault makes, not for a per-event path).
    pub fn channel_between(&self, from: SubtaskId, to: SubtaskId) -> Option<ChannelId> {
        let c = self
            .channels
            .iter()
            .position(|c| c.from == from && c.to == to)?;
        Some(ChannelId(c as u32))
    }

    /// Looks a subtask up by its written name `vertex[i]`.
    pub fn find_subtask(&self, name: &str) -> Option<SubtaskId> {
        let (vertex, rest) = name.split_once('[')?;
        let index: u32 = rest.strip_suffix(']')?.parse().ok()?;
        let v = self.vertices.iter().find(|v| v.name == vertex)?;
        (index < v.parallelism).then_some(SubtaskId(v.first + index))
    }

    /// The channel of `gate` that `record` goes to. `round_robin` is the producer's own
    /// counter for this gate (Flink's `RebalancePartitioner` / `RescalePartitioner`).
    /// `misroute` injects `misroute-key-group`: key groups are mapped rounding up.
    pub fn route(
        &self,
        gate: &OutputGate,
        record: &Record,
        round_robin: &mut u32,
        misroute: bool,
    ) -> ChannelId {
        let edge = &self.edges[gate.edge];
        let n = gate.channels.len() as u32;
        let index = match (edge.pattern, edge.partitioner) {
            (Pattern::AllToAll, Partitioner::KeyHash) => {
                let key = match edge.key_modulus {
                    Some(k) => record.key % k,
                    None => record.key,
                };
                if misroute {
                    misrouted_key_group_owner(key, n)
                } else {
                    key_group_owner(key, n)
                }
            }
            // A forward gate with one channel is the common case and needs no counter; with
            // several (upstream parallelism below downstream) Flink rescales round robin.
            (Pattern::Forward, _) if n == 1 => 0,
            (Pattern::Forward, _) | (Pattern::AllToAll, Partitioner::RoundRobin) => {
                let i = *round_robin % n;
                *round_robin = round_robin.wrapping_add(1);
                i
            }
        };
        gate.channels[index as usize]
    }
}

/// Flink's pointwise and all-to-all connection patterns, as `(upstream i, downstream j)` pairs in
/// channel order (upstream-major). Pointwise follows
/// `flink-runtime/.../executiongraph/EdgeManagerBuildUtil.java#connectPointwise`: with equal
/// parallelism `i → i`; with more upstream subtasks, downstream `j` reads the contiguous range
/// `[j·up/down, (j+1)·up/down)`; with fewer, upstream `i` feeds
/// `[⌈i·down/up⌉, ⌈(i+1)·down/up⌉)`.
fn connect(pattern: Pattern, up: u32, down: u32) -> Vec<(u32, u32)> {
    let (up64, down64) = (u64::from(up), u64::from(down));
    match pattern {
        Pattern::AllToAll => (0..up)
            .flat_map(|i| (0..down).map(move |j| (i, j)))
            .collect(),
        Pattern::Forward if up == down => (0..up).map(|i| (i, i)).collect(),
        Pattern::Forward if up > down => {
            let mut pairs: Vec<(u32, u32)> = (0..down)
                .flat_map(|j| {
                    let start = u64::from(j) * up64 / down64;
                    let end = (u64::from(j) + 1) * up64 / down64;
                    (start..end).map(move |i| (i as u32, j))
                })
                .collect();
            pairs.sort_unstable();
            pairs
        }
        Pattern::Forward => (0..up)
            .flat_map(|i| {
                let start = (u64::from(i) * down64).div_ceil(up64);
                let end = ((u64::from(i) + 1) * down64).div_ceil(up64);
                (start..end).map(move |j| (i, j as u32))
            })
            .collect(),
    }
}

/// Which of `parallelism` consumers owns `key`, the way Flink's `KeyGroupRangeAssignment`
/// does it: hash the key into one of `max_parallelism` key groups, then map key groups to
/// consumers in contiguous ranges. (Flink hashes with Murmur3 of `hashCode()`; we use a fixed
/// 64-bit mix, which is just as stable and spreads as well.)
pub fn key_group_owner(key: u32, parallelism: u32) -> u32 {
    let max_parallelism = default_max_parallelism(parallelism);
    let key_group = mix64(u64::from(key)) % u64::from(max_parallelism);
    (key_group * u64::from(parallelism) / u64::from(max_parallelism)) as u32
}

/// `misroute-key-group` (an injected bug): [`key_group_owner`] with the division rounded up,
/// wrapping past the last consumer.
fn misrouted_key_group_owner(key: u32, parallelism: u32) -> u32 {
    let max_parallelism = u64::from(default_max_parallelism(parallelism));
    let key_group = mix64(u64::from(key)) % max_parallelism;
    ((key_group * u64::from(parallelism)).div_ceil(max_parallelism) % u64::from(parallelism)) as u32
}

/// Flink's `KeyGroupRangeAssignment.computeDefaultMaxParallelism`:
/// `min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768)`, and never below `p`.
fn default_max_parallelism(parallelism: u32) -> u32 {
    let p = parallelism.max(1);
    (p + p / 2).next_power_of_two().clamp(128, 32_768).max(p)
}

/// Connected components of subtasks over channels (every exchange is pipelined in streaming),
/// by union-find with path halving.
fn pipelined_regions(subtasks: usize, channels: &[ChannelInfo]) -> Vec<u32> {
    let mut parent: Vec<u32> = (0..subtasks as u32).collect();
    fn root(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for c in channels {
        let (a, b) = (root(&mut parent, c.from.0), root(&mut parent, c.to.0));
        let (low, high) = (a.min(b), a.max(b));
        parent[high as usize] = low;
    }
    (0..subtasks as u32).map(|s| root(&mut parent, s)).collect()
}

fn topological_order(vertices: &[JobVertex], edges: &[JobEdge]) -> Vec<VertexId> {
    let mut indegree: Vec<usize> = vertices.iter().map(|v| v.inputs.len()).collect();
    let mut ready: Vec<usize> = (0..vertices.len()).filter(|&v| indegree[v] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(vertices.len());
    while let Some(v) = ready.pop() {
        order.push(VertexId(v as u32));
        for &e in &vertices[v].outputs {
            let to = edges[e].to.index();
            indegree[to] -= 1;
            if indegree[to] == 0 {
                ready.push(to);
            }
        }
    }
    assert_eq!(
        order.len(),
        vertices.len(),
        "validation lets no cycle through"
    );
    order
}

pub struct SubtaskName<'a>(&'a ExecutionGraph, SubtaskId);

impl fmt::Display for SubtaskName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subtask = &self.0.subtasks[self.1.index()];
        write!(
            f,
            "{}[{}]",
            self.0.vertices[subtask.vertex.index()].name,
            subtask.index
        )
    }
}

pub struct ChannelName<'a>(&'a ExecutionGraph, ChannelId);

impl fmt::Display for ChannelName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let channel = self.0.channels[self.1.index()];
        write!(
            f,
            "{}->{}",
            self.0.subtask_name(channel.from),
            self.0.subtask_name(channel.to)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn downstream_of(pairs: &[(u32, u32)], i: u32) -> Vec<u32> {
        pairs.iter().filter(|p| p.0 == i).map(|p| p.1).collect()
    }

    #[test]
    fn pointwise_with_equal_parallelism_is_one_to_one() {
        assert_eq!(
            connect(Pattern::Forward, 3, 3),
            vec![(0, 0), (1, 1), (2, 2)]
        );
    }

    #[test]
    fn pointwise_fan_in_gives_each_consumer_a_contiguous_range() {
        // Flink: downstream j reads [j*up/down, (j+1)*up/down).
        let pairs = connect(Pattern::Forward, 5, 2);
        assert_eq!(pairs, vec![(0, 0), (1, 0), (2, 1), (3, 1), (4, 1)]);
    }

    #[test]
    fn pointwise_fan_out_gives_each_producer_a_contiguous_range() {
        let pairs = connect(Pattern::Forward, 2, 5);
        assert_eq!(downstream_of(&pairs, 0), vec![0, 1, 2]);
        assert_eq!(downstream_of(&pairs, 1), vec![3, 4]);
        // Every consumer has exactly one producer.
        for j in 0..5 {
            assert_eq!(pairs.iter().filter(|p| p.1 == j).count(), 1);
        }
    }

    #[test]
    fn pointwise_pipelines_form_separate_regions_and_all_to_all_joins_them() {
        let channels = |pairs: &[(u32, u32)]| -> Vec<ChannelInfo> {
            pairs
                .iter()
                .map(|&(f, t)| ChannelInfo {
                    edge: 0,
                    from: SubtaskId(f),
                    to: SubtaskId(t),
                    input_slot: 0,
                })
                .collect()
        };
        // src[0..2] → map[2..4] forward: two regions.
        assert_eq!(
            pipelined_regions(4, &channels(&[(0, 2), (1, 3)])),
            vec![0, 1, 0, 1]
        );
        // All-to-all: one region.
        let all = channels(&[(0, 2), (0, 3), (1, 2), (1, 3)]);
        assert_eq!(pipelined_regions(4, &all), vec![0, 0, 0, 0]);
    }

    #[test]
    fn all_to_all_connects_every_pair() {
        assert_eq!(connect(Pattern::AllToAll, 3, 4).len(), 12);
    }

    #[test]
    fn key_groups_cover_every_consumer_and_stay_in_range() {
        for p in [1, 2, 3, 7, 128, 1000] {
            let mut seen = vec![false; p as usize];
            for key in 0..20_000 {
                let owner = key_group_owner(key, p);
                assert!(owner < p);
                seen[owner as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "parallelism {p}");
        }
        assert_eq!(default_max_parallelism(1), 128);
        assert_eq!(default_max_parallelism(100), 256);
        assert_eq!(default_max_parallelism(100_000), 100_000);
    }
}
