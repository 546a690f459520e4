//! A reference evaluation of the job: what the sinks must hold, computed without channels,
//! time or tasks, from the job graph and the records the sources emitted.
//!
//! It works on whole vertices, not subtasks, so it cannot share a routing bug with the model:
//! a map vertex outputs the multiset of its inputs with values mapped; a keyed sum groups the
//! multiset of its inputs by key and emits one total per key, owned by the subtask Flink's key
//! groups assign it; a sink outputs its inputs.

use crate::graph::{key_group_owner, ExecutionGraph, SubtaskId};
use crate::record::{map_value, source_record, Record};
use crate::scenario::Operator;
use std::collections::BTreeMap;

/// `(sink vertex index, record)` pairs, sorted, with one entry per expected copy.
pub fn expected_sink_output(graph: &ExecutionGraph, emitted: &[u64]) -> Vec<(u32, Record)> {
    let mut outputs: Vec<Vec<Record>> = vec![Vec::new(); graph.vertices.len()];
    let mut expected = Vec::new();
    for &v in &graph.topological_order {
        let vertex = &graph.vertices[v.index()];
        let inputs = || {
            vertex
                .inputs
                .iter()
                .flat_map(|&e| outputs[graph.edges[e].from.index()].iter().copied())
        };
        let out: Vec<Record> = match &vertex.operator {
            Operator::Source { .. } => graph
                .subtasks_of(v)
                .flat_map(|s| (0..emitted[s.index()]).map(move |seq| source_record(s, seq)))
                .collect(),
            Operator::Map => inputs()
                .map(|r| Record {
                    value: map_value(r.value),
                    ..r
                })
                .collect(),
            Operator::KeyedSum { keys } => {
                let mut sums: BTreeMap<u32, i64> = BTreeMap::new();
                for r in inputs() {
                    let total = sums.entry(r.key % keys).or_insert(0);
                    *total = total.wrapping_add(r.value);
                }
                sums.into_iter()
                    .map(|(key, value)| Record {
                        origin: SubtaskId(vertex.first + key_group_owner(key, vertex.parallelism)),
                        key,
                        seq: u64::from(key),
                        value,
                    })
                    .collect()
            }
            Operator::Sink { .. } => {
                expected.extend(inputs().map(|r| (v.0, r)));
                Vec::new()
            }
        };
        outputs[v.index()] = out;
    }
    expected.sort_unstable();
    expected
}
