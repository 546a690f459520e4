//! Records and the other elements a data channel carries (`docs/rules.md` P0).
//!
//! A record names where it came from, `(origin subtask, sequence number)`, so every oracle can say
//! which record was lost or duplicated and where. Records are small `Copy` values: moving one
//! along a channel copies 24 bytes and never allocates.

use crate::graph::SubtaskId;

/// One data record.
///
/// `origin` is the subtask that created it: a source subtask, or the `keyed_sum` subtask that
/// emitted an aggregate (whose `seq` is then the aggregated key, so the identity of an aggregate
/// does not depend on the order in which totals were emitted).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Record {
    pub origin: SubtaskId,
    pub key: u32,
    pub seq: u64,
    pub value: i64,
}

/// What travels through a channel, in FIFO order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Element {
    Record(Record),
    /// Checkpoint barrier `n`: everything before it belongs to checkpoint `n`'s cut.
    Barrier(u64),
    /// Unaligned checkpoint barrier `n` (P1.4): a priority event that overtakes the data
    /// buffered ahead of it; that data becomes channel state.
    PriorityBarrier(u64),
    /// `flink` variant (F1.5): the producer emits no more records; barriers and
    /// EndOfPartition may still follow. Its [`StopMode`] says whether the consumer finishes its
    /// operators (the end of a bounded input, or a stop with drain) or only stops (F1.11).
    EndOfData(StopMode),
    /// The producer's result partition ended: no element follows on this channel.
    EndOfPartition,
    /// Checkpoint `n` was abandoned upstream (Flink's `CancelCheckpointMarker`, F1.10): the
    /// consumer aborts `n`, unblocks its channels and passes the marker on.
    CancelMarker(u64),
}

/// What EndOfData asks of the consumer (Flink's `StopMode`, F1.11 step 2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StopMode {
    /// The input ended for good, or a stop-with-savepoint drains: operators finish (a keyed
    /// sum emits its totals).
    Drain,
    /// A stop-with-savepoint without drain: the input stops, operators do not finish, so the
    /// job can resume from the savepoint.
    NoDrain,
}

impl Element {
    /// Records occupy a network buffer and so count against a channel's capacity; events
    /// (barriers, EndOfData, EndOfPartition) are tiny and never wait for credit.
    pub fn needs_credit(&self) -> bool {
        matches!(self, Element::Record(_))
    }
}

/// The workload a source subtask produces: record `seq` of source subtask `origin`.
///
/// Keys and values are pure functions of `(origin, seq)`, not random draws, so the expected
/// output of a job is independent of the seed and a reference evaluation can compute it.
pub fn source_record(origin: SubtaskId, seq: u64) -> Record {
    Record {
        origin,
        key: (mix64((u64::from(origin.0) << 40) ^ seq) >> 32) as u32,
        seq,
        value: (seq % 100) as i64 + 1,
    }
}

/// The sequence number of record `offset` of split `split` of a source vertex that reads splits
/// (F1.13): the split above bit 32, the offset below. The record is `source_record` of that
/// sequence number and the vertex's subtask 0, so it is named by its vertex, not by the reader,
/// since which reader reads a split is the enumerator's choice.
pub fn split_seq(split: u32, offset: u64) -> u64 {
    (u64::from(split) << 32) | offset
}

/// What `map` does to a record's value: a cheap, visible change, so a sink can tell a mapped
/// record from an unmapped one.
pub fn map_value(value: i64) -> i64 {
    value.wrapping_add(1)
}

/// F1.14 step 10: what identifies a network buffer's records in the trace hash, in one word:
/// two FxHash steps per record (its origin and key, then its sequence number and value),
/// against about nine words per record for a record-level event with its time.
pub fn digest(records: &[Record]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    records.iter().fold(0, |d, r| {
        let d =
            (d.rotate_left(5) ^ (u64::from(r.origin.0) << 32 | u64::from(r.key))).wrapping_mul(K);
        (d.rotate_left(5) ^ r.seq ^ (r.value as u64).rotate_left(32)).wrapping_mul(K)
    })
}

/// SplitMix64's finalizer: a fixed, well-distributed mix used for keys and key groups.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_records_are_a_pure_function_of_origin_and_sequence() {
        let a = source_record(SubtaskId(3), 17);
        assert_eq!(a, source_record(SubtaskId(3), 17));
        assert_ne!(a.key, source_record(SubtaskId(4), 17).key);
        assert_eq!(a.value, 18);
        assert_eq!(std::mem::size_of::<Record>(), 24);
    }
}
