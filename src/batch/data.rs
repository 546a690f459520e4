//! What flows through a batch job (P2.1): a source split's records, grouped into
//! [`Fragment`]s by key, and how a blocking result partition is divided among consumers.
//!
//! A partition holds fragments, not records: "the records of split 3 of `src` with key 7,
//! 12 of them". That keeps a partition's size bounded by splits × keys however many records
//! a split has, while every record stays accounted for: the output oracle compares the
//! fragments a sink committed with what each split holds, so a split read twice or never is
//! caught exactly.

use crate::graph::{key_group_owner, ExecutionGraph, SubtaskId, VertexId};
use crate::record::mix64;
use crate::scenario::{Pattern, Records};

/// Keys of batch records: every record's key is below this.
pub const KEYS: u32 = 32;

/// Some records of one split that share a key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Fragment {
    /// The source vertex the split belongs to.
    pub source: VertexId,
    pub split: u32,
    pub key: u32,
    pub records: u64,
}

/// The records of one source split: a pure function of (source vertex, split, count).
pub fn split_fragments(source: VertexId, split: u32, records: u64) -> Vec<Fragment> {
    let mut per_key = [0u64; KEYS as usize];
    for r in 0..records {
        let h = mix64((u64::from(source.0) << 48) ^ (u64::from(split) << 24) ^ r);
        per_key[(h % u64::from(KEYS)) as usize] += 1;
    }
    per_key
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(key, &n)| Fragment {
            source,
            split,
            key: key as u32,
            records: n,
        })
        .collect()
}

/// Records in one split of source vertex `v` (batch sources read equal splits).
pub fn records_per_split(graph: &ExecutionGraph, v: VertexId) -> u64 {
    match graph.vertices[v.index()].chain.source() {
        Some((records, _)) => match records.first() {
            Some(Records::Bounded(n)) => *n,
            Some(Records::Unbounded) | None => 0,
        },
        None => 0,
    }
}

/// Sorts fragments and merges those of the same (source, split, key).
pub fn normalize(fragments: &mut Vec<Fragment>) {
    fragments.sort_unstable();
    fragments.dedup_by(|later, kept| {
        let same =
            later.source == kept.source && later.split == kept.split && later.key == kept.key;
        if same {
            kept.records += later.records;
        }
        same
    });
}

pub fn total_records(fragments: &[Fragment]) -> u64 {
    fragments.iter().map(|f| f.records).sum()
}

/// The share of producer `from`'s partition that consumer `to` reads over `edge`, given the
/// decided parallelism of both vertices. `all_to_all`: the consumer's key range (Flink's key
/// groups, so the consumers split the keys whatever their number); `forward`: Flink's
/// pointwise mapping, a producer with several consumers splitting its keys among them.
pub fn share(
    graph: &ExecutionGraph,
    edge: usize,
    from: SubtaskId,
    to: SubtaskId,
    consumers: u32,
    partition: &[Fragment],
) -> Vec<Fragment> {
    let to_index = graph.subtasks[to.index()].index;
    match graph.edges[edge].pattern {
        Pattern::AllToAll => partition
            .iter()
            .filter(|f| key_group_owner(f.key, consumers) == to_index)
            .copied()
            .collect(),
        Pattern::Forward => {
            let gate = graph.subtasks[from.index()]
                .outputs
                .iter()
                .find(|g| g.edge == edge)
                .expect("a forward edge has a gate at its producer");
            let n = gate.channels.len() as u32;
            let position = gate
                .channels
                .iter()
                .position(|c| graph.channels[c.index()].to == to)
                .expect("the consumer reads this producer") as u32;
            partition
                .iter()
                .filter(|f| f.key % n == position)
                .copied()
                .collect()
        }
    }
}

/// The producers of `s`'s inputs, within their decided parallelism, with the edge.
pub fn producers(
    graph: &ExecutionGraph,
    parallelism: &[Option<u32>],
    s: SubtaskId,
) -> Vec<(usize, SubtaskId)> {
    graph.subtasks[s.index()]
        .inputs
        .iter()
        .map(|c| graph.channels[c.index()])
        .filter(|c| {
            let up = graph.subtasks[c.from.index()].vertex;
            parallelism[up.index()].is_some_and(|p| graph.subtasks[c.from.index()].index < p)
        })
        .map(|c| (c.edge as usize, c.from))
        .collect()
}

/// The consumers of `s`'s partition, within their decided parallelism.
pub fn consumers(
    graph: &ExecutionGraph,
    parallelism: &[Option<u32>],
    s: SubtaskId,
) -> Vec<SubtaskId> {
    let mut out: Vec<SubtaskId> = graph.subtasks[s.index()]
        .outputs
        .iter()
        .flat_map(|g| g.channels.iter())
        .map(|c| graph.channels[c.index()].to)
        .filter(|to| {
            let v = graph.subtasks[to.index()].vertex;
            parallelism[v.index()].is_some_and(|p| graph.subtasks[to.index()].index < p)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_is_a_pure_function_and_keeps_every_record() {
        let a = split_fragments(VertexId(0), 3, 1000);
        assert_eq!(a, split_fragments(VertexId(0), 3, 1000));
        assert_eq!(total_records(&a), 1000);
        assert_ne!(a, split_fragments(VertexId(0), 4, 1000));
    }

    #[test]
    fn normalize_merges_equal_keys() {
        let mut f = split_fragments(VertexId(1), 0, 50);
        f.extend(split_fragments(VertexId(1), 0, 50));
        normalize(&mut f);
        assert_eq!(total_records(&f), 100);
        assert!(f.windows(2).all(|w| w[0] < w[1]));
    }
}
