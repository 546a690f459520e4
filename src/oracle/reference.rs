//! A reference evaluation of the job: what the sinks must hold, computed without channels,
//! time or tasks, from the scenario's job graph and record counts.
//!
//! It is independent of the model on purpose, so that a bug in the model's own functions is
//! visible: it generates source records, applies `map`, and assigns keys to key groups and key
//! groups to subtasks with its own implementations of the rules the README states ("The
//! workload"), calling nothing in `crate::record` or `crate::graph`'s routing. It works on whole
//! vertices, not subtasks, so it cannot share a routing bug with the model either: a map
//! vertex outputs the multiset of its inputs with values mapped; a keyed sum groups the
//! multiset of its inputs by key and emits one total per key, owned by the subtask Flink's key
//! groups assign it; a sink outputs its inputs. A chained vertex (F1.12) applies its operators
//! one after the other to the same multiset. What each source emits comes from the scenario:
//! all of its records when the job finished, else (a run that stopped early, an unbounded
//! source) the prefix it did emit, never more than the scenario gives it.

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Record;
use crate::scenario::{Operator, Records, RestoredState};
use std::collections::BTreeMap;

/// SplitMix64's finalizer, the documented mix behind keys and key groups.
fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Record `seq` of source subtask `origin`: key from the mix of `(origin << 40) ^ seq` (its
/// upper 32 bits), value `seq mod 100 + 1`.
fn source_record(origin: SubtaskId, seq: u64) -> Record {
    Record {
        origin,
        key: (mix((u64::from(origin.0) << 40) ^ seq) >> 32) as u32,
        seq,
        value: (seq % 100) as i64 + 1,
    }
}

/// Flink's default maximum parallelism (`KeyGroupRangeAssignment`): 1.5 × p rounded up to a
/// power of two, at least 128, at most 32,768, never below p.
fn max_parallelism(p: u32) -> u64 {
    let p = u64::from(p.max(1));
    let mut power = 1u64;
    while power < p + p / 2 {
        power *= 2;
    }
    power.clamp(128, 32_768).max(p)
}

/// The subtask (0-based, of `p`) that owns `key`: key group `mix(key) mod maxP`, and key group
/// `g` belongs to subtask `⌊g · p / maxP⌋`.
fn owner(key: u32, p: u32) -> u32 {
    let max = max_parallelism(p);
    let group = mix(u64::from(key)) % max;
    (group * u64::from(p) / max) as u32
}

/// A source subtask that emitted more records than the scenario gives it.
pub struct Overrun {
    pub source: SubtaskId,
    pub emitted: u64,
    pub limit: u64,
}

/// What a job submitted with a checkpoint starts from (F1.6), read from the scenario's
/// `restore_from` and the finished subtasks `restore-shape` worked out, never from the
/// JobMaster's assignment: where each source resumes, which subtasks emit nothing more, the
/// keyed totals gathered by key, and the pre-committed records a sink commits on restore.
pub struct Restored {
    finished: Vec<bool>,
    offsets: Vec<u64>,
    /// Per vertex, per chain member: restored totals by key, over every old subtask.
    sums: Vec<Vec<BTreeMap<u32, i64>>>,
    /// `(sink vertex, record)` committed at restore.
    pending: Vec<(u32, Record)>,
}

impl Restored {
    pub fn new(
        graph: &ExecutionGraph,
        restore: &crate::scenario::RestoreFrom,
        finished: &[SubtaskId],
    ) -> Restored {
        let n = graph.subtasks.len();
        let mut restored = Restored {
            finished: vec![false; n],
            offsets: vec![0; n],
            sums: Vec::with_capacity(graph.vertices.len()),
            pending: Vec::new(),
        };
        for s in finished {
            restored.finished[s.index()] = true;
        }
        for (v, vertex) in graph.vertices.iter().enumerate() {
            let mut per_member = Vec::new();
            for member in vertex.chain.members() {
                let mut sums = BTreeMap::new();
                let Some(op) = restore.operators.get(&member.uid) else {
                    per_member.push(sums);
                    continue;
                };
                for (i, state) in op.state.iter().enumerate() {
                    let s = vertex.first as usize + i;
                    match state {
                        RestoredState::Initial => {}
                        RestoredState::Source { offset } => {
                            if s < n {
                                restored.offsets[s] = *offset;
                            }
                        }
                        RestoredState::KeyedSum { sums: saved } => {
                            for &(key, total) in saved {
                                let entry: &mut i64 = sums.entry(key).or_insert(0);
                                *entry = entry.wrapping_add(total);
                            }
                        }
                        RestoredState::TwoPhaseCommitSink { pending } => {
                            for (_, records) in pending {
                                restored.pending.extend(records.iter().map(|r| {
                                    let origin = &graph.vertices[r.origin.vertex];
                                    let record = Record {
                                        origin: SubtaskId(origin.first + r.origin.index),
                                        key: r.key,
                                        seq: r.seq,
                                        value: r.value,
                                    };
                                    (v as u32, record)
                                }));
                            }
                        }
                    }
                }
                per_member.push(sums);
            }
            restored.sums.push(per_member);
        }
        restored
    }
}

/// Gives `output` every expected `(sink vertex index, record)` pair, one call per expected
/// copy, in no particular order (the caller folds them into a fingerprint, or collects and
/// sorts them only when they differ from the output, `output_order`); and returns every
/// source subtask that emitted more records than the scenario gives it. `restored`: what a
/// job submitted with a checkpoint starts from (F1.6).
///
/// `stopped`: a savepoint stopped the job (F1.11), and which source subtasks ended their input
/// (the others stopped without drain): a source then counts for what it emitted, and a keyed
/// sum emits totals only if every source before it ended.
///
/// `split_read`: per source vertex that reads splits (F1.13), how far each split's records
/// went; such a source emits, per split, all of its records once the job finished, else the
/// prefix it did emit. Its record `o` of split `k` is record `(k << 32) | o` of the vertex's
/// subtask 0, whichever reader read it.
pub fn each_expected(
    graph: &ExecutionGraph,
    emitted: &[u64],
    split_read: &BTreeMap<u32, Vec<u64>>,
    finished: bool,
    restored: Option<&Restored>,
    stopped: Option<&[bool]>,
    output: &mut (impl FnMut(u32, Record) + ?Sized),
) -> Vec<Overrun> {
    let mut outputs: Vec<Vec<Record>> = vec![Vec::new(); graph.vertices.len()];
    // Per vertex: every source before it (or itself) ended its input.
    let mut drained = vec![true; graph.vertices.len()];
    let mut overrun = Vec::new();
    for &v in &graph.topological_order {
        let vertex = &graph.vertices[v.index()];
        // What enters the chain's head: the records its input edges carry, or, for a source,
        // the records the scenario gives it. The one input of a vertex that is its producer's
        // only consumer is moved, not copied (a job at realistic rates has hundreds of
        // thousands, and fresh memory for each copy is most of this function's time).
        let mut stream: Vec<Record> = match vertex.inputs[..] {
            [e] if graph.vertices[graph.edges[e].from.index()].outputs.len() == 1 => {
                std::mem::take(&mut outputs[graph.edges[e].from.index()])
            }
            _ => vertex
                .inputs
                .iter()
                .flat_map(|&e| outputs[graph.edges[e].from.index()].iter().copied())
                .collect(),
        };
        for &e in &vertex.inputs {
            let from = graph.edges[e].from.index();
            drained[v.index()] &= drained[from];
        }
        // F1.12: each chained operator works on what the one before it output.
        for (k, operator) in vertex.chain.operators().enumerate() {
            stream = match operator {
                Operator::Source { records, .. } if vertex.splits.is_some() => {
                    let per_split = match records.first() {
                        Some(&Records::Bounded(n)) => n,
                        Some(Records::Unbounded) | None => 0,
                    };
                    let origin = SubtaskId(vertex.first);
                    let read = split_read.get(&v.0).map_or(&[][..], Vec::as_slice);
                    let mut out = Vec::new();
                    for split in 0..u64::from(vertex.splits.unwrap_or(0)) {
                        let did = read.get(split as usize).copied().unwrap_or(0);
                        if did > per_split {
                            overrun.push(Overrun {
                                source: origin,
                                emitted: did,
                                limit: per_split,
                            });
                        }
                        let count = if finished {
                            per_split
                        } else {
                            did.min(per_split)
                        };
                        out.extend((0..count).map(|o| source_record(origin, (split << 32) | o)));
                    }
                    out
                }
                Operator::Source { records, .. } => {
                    let mut out = Vec::new();
                    for (i, s) in graph.subtasks_of(v).enumerate() {
                        // F1.6: a source restored finished emits nothing more; one restored
                        // at an offset resumes there.
                        if restored.is_some_and(|r| r.finished[s.index()]) {
                            continue;
                        }
                        let from = restored.map_or(0, |r| r.offsets[s.index()]);
                        let did = emitted[s.index()];
                        let count = match records[i] {
                            Records::Bounded(n) => {
                                if did > n {
                                    overrun.push(Overrun {
                                        source: s,
                                        emitted: did,
                                        limit: n,
                                    });
                                }
                                if finished && stopped.is_none() {
                                    n
                                } else {
                                    did.min(n)
                                }
                            }
                            Records::Unbounded => did,
                        };
                        out.extend((from..count).map(|seq| source_record(s, seq)));
                        if let Some(ended) = stopped {
                            drained[v.index()] &= ended[s.index()];
                        }
                    }
                    out
                }
                Operator::Map => stream
                    .into_iter()
                    .map(|r| Record {
                        value: r.value.wrapping_add(1),
                        ..r
                    })
                    .collect(),
                // F1.11: stopped without drain, a keyed sum emits no totals.
                Operator::KeyedSum { .. } if !drained[v.index()] => Vec::new(),
                Operator::KeyedSum { keys } => {
                    let mut sums: BTreeMap<u32, i64> = restored
                        .map(|r| r.sums[v.index()][k].clone())
                        .unwrap_or_default();
                    for r in stream {
                        let total = sums.entry(r.key % keys).or_insert(0);
                        *total = total.wrapping_add(r.value);
                    }
                    sums.into_iter()
                        .map(|(key, value)| Record {
                            origin: SubtaskId(vertex.first + owner(key, vertex.parallelism)),
                            key,
                            seq: u64::from(key),
                            value,
                        })
                        // A subtask restored finished emitted its totals before (F1.6).
                        .filter(|r| !restored.is_some_and(|x| x.finished[r.origin.index()]))
                        .collect()
                }
                Operator::Sink { .. } => {
                    for r in stream {
                        output(v.0, r);
                    }
                    Vec::new()
                }
            };
        }
        outputs[v.index()] = stream;
    }
    if let Some(r) = restored {
        for &(vertex, record) in &r.pending {
            output(vertex, record);
        }
    }
    overrun
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's own functions agree with the model's on a healthy range: the two
    /// implementations of one documented rule, checked against each other.
    #[test]
    fn the_independent_rules_agree_with_the_model() {
        // Sequence numbers and keys spread over their whole range (small ones alone would not
        // tell apart functions that differ only in high bits).
        let spread = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for origin in [0, 1, 4, 77, 99_999] {
            for i in 0..200 {
                let (s, seq) = (SubtaskId(origin), spread(i) >> 24);
                assert_eq!(source_record(s, seq), crate::record::source_record(s, seq));
            }
        }
        // 171 and 683 are parallelisms at which 1.5 × p is exactly a power of two.
        for p in [1, 2, 3, 7, 100, 171, 683, 1000, 100_000] {
            for i in 0..500 {
                let key = (spread(i) >> 32) as u32;
                assert_eq!(
                    owner(key, p),
                    crate::graph::key_group_owner(key, p),
                    "p {p}"
                );
            }
        }
        assert_eq!(max_parallelism(100), 256);
        assert_eq!(max_parallelism(171), 256);
        assert_eq!(max_parallelism(100_000), 100_000);
    }
}
