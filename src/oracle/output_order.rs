//! Sorting a job's output for the end-of-run comparison with the reference evaluation.
//!
//! `Oracles::finish` walks the sinks' output and the reference's expected output side by side,
//! both sorted by `(sink vertex, record)`; on a job at realistic rates each list holds hundreds
//! of thousands of records, and a comparison sort of either, comparing the fields one by one,
//! cost as much as a tenth of the whole run. [`sort_by_sink_record`] gives the same order for a
//! fraction of that: it radix-sorts packed 64-bit keys (the vertex and origin, then the record's
//! key) and compares whole entries only where two share vertex, origin and key,
//! which in practice means copies of one record.
//!
//! Most runs need no sort at all: a [`Fingerprint`] of each side tells in one pass whether
//! they hold the same entries, as many times each, and only when they do not does `finish`
//! build the reference's list and sort both to find and name what differs.

use crate::record::{mix64, Record};
use std::cmp::Ordering;

/// Sorts `items` into the order `cmp` gives, where `cmp` orders first by `head(item)`'s sink
/// vertex, then by its record's origin and key (as `(u32, Record)`'s derived order does), and
/// only then by anything else. The result is the one `items.sort_unstable_by(cmp)` gives
/// whenever no two items compare equal without being identical.
///
/// *Why not the plain sort:* it is the same order at a fraction of the cost (see the module
/// docs). It falls back to the plain sort when the packed key cannot hold vertex and origin
/// (more than 2³² vertex–subtask pairs) or the positions (2³² items or more).
pub fn sort_by_sink_record<T: Copy>(
    items: &mut Vec<T>,
    head: impl Fn(&T) -> (u32, Record),
    cmp: impl Fn(&T, &T) -> Ordering,
) {
    let origins = items
        .iter()
        .map(|item| u64::from(head(item).1.origin.0) + 1)
        .max()
        .unwrap_or(1);
    let vertices = items
        .iter()
        .map(|item| u64::from(head(item).0) + 1)
        .max()
        .unwrap_or(1);
    if vertices.saturating_mul(origins) > u64::from(u32::MAX) || items.len() > u32::MAX as usize {
        items.sort_unstable_by(cmp);
        return;
    }
    // Vertex and origin as one number keeps their order, since every origin is below `origins`.
    let mut keys: Vec<(u64, u32)> = items
        .iter()
        .enumerate()
        .map(|(position, item)| {
            let (vertex, record) = head(item);
            let group = u64::from(vertex) * origins + u64::from(record.origin.0);
            ((group << 32) | u64::from(record.key), position as u32)
        })
        .collect();
    radix_sort(&mut keys);
    let mut sorted: Vec<T> = keys.iter().map(|&(_, p)| items[p as usize]).collect();
    // Entries that share vertex, origin and key are in position order: sort them by `cmp`.
    let mut start = 0;
    while start < keys.len() {
        let mut end = start + 1;
        while end < keys.len() && keys[end].0 == keys[start].0 {
            end += 1;
        }
        if end - start > 1 {
            sorted[start..end].sort_unstable_by(&cmp);
        }
        start = end;
    }
    *items = sorted;
}

/// An order-free fingerprint of a list of `(sink vertex, record)` entries: two lists with the
/// same entries, each as many times, in any order, have the same fingerprint, and then the
/// sorted walk of `Oracles::finish` would match every entry one for one and find nothing.
///
/// *How:* the number of entries, and two sums over the entries of a 64-bit hash of each (a
/// multiply-and-rotate chain over its fields, then SplitMix64's finalizer), one sum of the
/// hash and one of its product with an odd constant, rotated. A sum does not depend on the
/// order, and a missing, extra, repeated or altered entry changes both unless two 64-bit sums
/// collide at once. Any mismatch sends `finish` to the sorted walk, so only a collision could
/// hide a difference, never invent one.
///
/// *Why:* sorting the two lists cost more than all else at the end of a run at realistic
/// rates (two sorts of 250,000 entries on `streaming-100-buffers`, 7% of its instructions),
/// and the reference's list is not even built when the fingerprints agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    entries: u64,
    sum: u64,
    mixed: u64,
}

impl Fingerprint {
    /// The fingerprint of `entries`.
    pub fn of(entries: impl Iterator<Item = (u32, Record)>) -> Fingerprint {
        let mut f = Fingerprint::default();
        for (vertex, record) in entries {
            f.add(vertex, record);
        }
        f
    }

    /// Adds one entry.
    #[inline]
    pub fn add(&mut self, vertex: u32, r: Record) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let h = (u64::from(vertex) << 32 | u64::from(r.origin.0)).wrapping_mul(K);
        let h = (h.rotate_left(23) ^ r.seq).wrapping_mul(K);
        let h = (h.rotate_left(23) ^ (u64::from(r.key) << 32 | u64::from(vertex))).wrapping_mul(K);
        let h = mix64(h ^ r.value as u64);
        self.entries += 1;
        self.sum = self.sum.wrapping_add(h);
        self.mixed = self
            .mixed
            .wrapping_add(h.wrapping_mul(0xbf58_476d_1ce4_e5b9).rotate_left(31));
    }
}

/// Bits of the key one pass of [`radix_sort`] sorts by: six passes cover 64 bits, and a
/// pass's counts (2,048 of them) stay in the first-level cache.
const DIGIT_BITS: u32 = 11;
const DIGITS: usize = 64_usize.div_ceil(DIGIT_BITS as usize);

/// A stable least-significant-digit radix sort on the 64-bit key, [`DIGIT_BITS`] at a time,
/// skipping the digits in which every key is the same (vertex and origin take a few bits of
/// the upper half, so a sort of one sink's output makes four passes).
fn radix_sort(keys: &mut Vec<(u64, u32)>) {
    let digit =
        |key: u64, d: usize| (key >> (d as u32 * DIGIT_BITS)) as usize & ((1 << DIGIT_BITS) - 1);
    let mut counts = vec![[0usize; 1 << DIGIT_BITS]; DIGITS];
    for &(key, _) in keys.iter() {
        for (d, count) in counts.iter_mut().enumerate() {
            count[digit(key, d)] += 1;
        }
    }
    let mut scratch = vec![(0u64, 0u32); keys.len()];
    for (d, count) in counts.iter().enumerate() {
        if count.contains(&keys.len()) {
            continue;
        }
        let mut next = vec![0usize; 1 << DIGIT_BITS];
        let mut sum = 0;
        for (bucket, &c) in next.iter_mut().zip(count) {
            *bucket = sum;
            sum += c;
        }
        for &entry in keys.iter() {
            let bucket = &mut next[digit(entry.0, d)];
            scratch[*bucket] = entry;
            *bucket += 1;
        }
        std::mem::swap(keys, &mut scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;

    /// The packed sort gives exactly the plain sort's order, with copies of a record, records
    /// that share a key, and several vertices and origins.
    #[test]
    fn gives_the_order_of_the_plain_sort() {
        let mut items: Vec<(u32, Record, u64)> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for index in 0..5_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let record = Record {
                // Origins and keys over their whole range, and often shared.
                origin: SubtaskId([0, 3, 70_000, 1_000_000][(x % 4) as usize]),
                key: if x % 3 == 0 {
                    (x >> 8) as u32
                } else {
                    ((x >> 8) % 50) as u32
                },
                seq: (x >> 20) % 40,
                value: ((x >> 32) % 3) as i64 - 1,
            };
            items.push(((x >> 40) as u32 % 3, record, index));
            if x % 5 == 0 {
                items.push(((x >> 40) as u32 % 3, record, index + 1_000_000));
            }
        }
        let mut plain = items.clone();
        plain.sort_unstable();
        sort_by_sink_record(&mut items, |&(v, r, _)| (v, r), |a, b| a.cmp(b));
        assert_eq!(items, plain);
        let mut pairs: Vec<(u32, Record)> = plain.iter().map(|&(v, r, _)| (v, r)).rev().collect();
        let mut plain_pairs = pairs.clone();
        plain_pairs.sort_unstable();
        sort_by_sink_record(&mut pairs, |&p| p, |a, b| a.cmp(b));
        assert_eq!(pairs, plain_pairs);
    }

    /// The same entries in another order have the same fingerprint; one missing, one more
    /// copy, one altered field or one record moved to another sink do not.
    #[test]
    fn a_fingerprint_ignores_order_only() {
        let record = |seq: u64| Record {
            origin: SubtaskId(seq as u32 % 3),
            key: (seq * 7) as u32,
            seq,
            value: seq as i64 % 5,
        };
        let want: Vec<(u32, Record)> = (0..1_000).map(|s| (s as u32 % 2, record(s))).collect();
        let of = |entries: &[(u32, Record)]| Fingerprint::of(entries.iter().copied());
        let mut got: Vec<(u32, Record)> = want.iter().rev().copied().collect();
        assert_eq!(of(&got), of(&want));
        let last = got.pop().unwrap();
        assert_ne!(of(&got), of(&want), "one missing");
        got.push(got[0]);
        assert_ne!(of(&got), of(&want), "one copy instead of another");
        got.pop();
        got.push(last);
        for altered in [
            (last.0 ^ 1, last.1),
            (
                last.0,
                Record {
                    value: last.1.value + 1,
                    ..last.1
                },
            ),
            (
                last.0,
                Record {
                    key: last.1.key + 1,
                    ..last.1
                },
            ),
            (
                last.0,
                Record {
                    seq: last.1.seq + 1,
                    ..last.1
                },
            ),
            (
                last.0,
                Record {
                    origin: SubtaskId(9),
                    ..last.1
                },
            ),
        ] {
            *got.last_mut().unwrap() = altered;
            assert_ne!(of(&got), of(&want), "{altered:?}");
        }
    }
}
