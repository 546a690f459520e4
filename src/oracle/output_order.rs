//! Sorting a job's output for the end-of-run comparison with the reference evaluation.
//!
//! `Oracles::finish` walks the sinks' output and the reference's expected output side by side,
//! both sorted by `(sink vertex, record)`; on a job at realistic rates each list holds hundreds
//! of thousands of records, and a comparison sort of either, comparing the fields one by one,
//! cost as much as a tenth of the whole run. [`sort_by_sink_record`] gives the same order for a
//! fraction of that: it radix-sorts packed 64-bit keys (the vertex and origin, then the record's
//! key) and compares whole entries only where two share vertex, origin and key,
//! which in practice means copies of one record.

use crate::record::Record;
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
}
