//! A radix heap on `(time, tie)`: the queue's representation once many events are pending.
//!
//! A binary heap's pop walks from the root to a leaf, one cache line per level; with a million
//! pending events most of those lines are misses, and the cost of an event grows with the
//! number pending (issue 18 measured half of all cycles of a 10⁶-channel run in that walk). A
//! discrete-event simulation never schedules into the past, so the keys it pops only grow, and
//! a *radix heap* can exploit that: every pending entry sits in the bucket named by the highest
//! digit (of four bits) in which its time differs from `last`, the time of the latest pop, and
//! that digit's value. A push is an append to a vector, and a pop that empties the near bucket
//! moves the entries of the lowest non-empty bucket, a sequential scan, down to buckets of
//! lower digits. Each entry moves at most 16 times in all, in practice a handful (the digits
//! of a typical delay: five for a millisecond), and every move reads and writes memory
//! in order, so the cost per event stays nearly flat as the pending set grows.
//!
//! Exact order is kept, not approximated: entries due exactly at `last` wait in `near`, a
//! binary heap ordered by the full key, so same-instant events come out in tie order just as
//! from the plain heap, and a run's trace is the same whichever representation the queue used.
//! Pushing a time before `last` (the kernel never does: it refuses events in the past) is still
//! correct: the heap rebuilds itself around the new minimum.

use std::collections::BinaryHeap;

use super::Entry;

/// Bits of a time per radix digit: a bucket per (digit position, digit value), sixteen digits
/// of sixteen values. With one bit a digit (64 buckets) an entry moved about once per bit of
/// its delay, a dozen or twenty times for the millisecond delays of a job; with four it moves
/// at most once per digit, about a quarter as often, and each refill reads and writes a
/// quarter as much memory (`perf`: the refills were 14% of a 10⁶-channel run).
const DIGIT_BITS: u32 = 4;
/// Values a digit takes, and so buckets per digit position.
const RADIX: usize = 1 << DIGIT_BITS;
/// Digit positions in a 64-bit time.
const LEVELS: usize = 64 / DIGIT_BITS as usize;
/// Bucket `level * RADIX + digit` holds the entries whose time differs from `last` first in
/// digit `level` (counted from the least significant), where its value is `digit`; a higher
/// bucket holds only later times.
const BUCKETS: usize = LEVELS * RADIX;
/// Entries per block. A bucket is a list of blocks, not one growing vector: a vector that
/// grows copies itself into fresh memory, and each bucket's vector kept the capacity of its
/// own peak, so a million pending events cost several times their size in pages faulted and
/// copied (`perf`: half of a 10⁶-channel run's page faults). Blocks a refill empties go to
/// [`RadixHeap::spare`] and fill again at once, still in cache; the heap holds about as much
/// memory as the events pending at its peak, plus a block for each bucket it has used.
const BLOCK: usize = 512;

#[derive(Clone, Debug)]
pub(super) struct RadixHeap<E> {
    /// The time of the latest pop (or the smallest time when the heap was built); no entry is
    /// earlier.
    last: u64,
    /// The entries due exactly at `last`, in `(time, tie)` order.
    near: BinaryHeap<Entry<E>>,
    /// Each bucket's blocks, all full but the last (an emptied bucket keeps one, empty).
    buckets: [Vec<Vec<Entry<E>>>; BUCKETS],
    /// Empty blocks (each with room for [`BLOCK`] entries), for any bucket to take.
    spare: Vec<Vec<Entry<E>>>,
    /// The smallest time in each bucket (`u64::MAX` when empty), so the next time is known
    /// without scanning.
    min_time: [u64; BUCKETS],
    /// Where in each bucket (block × [`BLOCK`] + offset) an entry of `min_time` sits: the
    /// next event for
    /// [`RadixHeap::peek_hints`], found without scanning (a hint only: with several entries at
    /// that time it may not be the one popped first).
    min_index: [u32; BUCKETS],
    /// Bit `l` set: some bucket of digit position `l` is not empty.
    levels: u16,
    /// Per digit position, bit `d` set: bucket `(l, d)` is not empty.
    digits: [u16; LEVELS],
    len: usize,
}

impl<E> RadixHeap<E> {
    /// A heap holding `entries`, whose pushes will not go before `floor` (the time of the
    /// latest pop) unless they rebuild it.
    pub(super) fn new(floor: u64, entries: impl IntoIterator<Item = Entry<E>>) -> RadixHeap<E> {
        let mut heap = RadixHeap {
            last: floor,
            near: BinaryHeap::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
            spare: Vec::new(),
            min_time: [u64::MAX; BUCKETS],
            min_index: [0; BUCKETS],
            levels: 0,
            digits: [0; LEVELS],
            len: 0,
        };
        for entry in entries {
            heap.push(entry);
        }
        heap
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn push(&mut self, entry: Entry<E>) {
        if entry.time < self.last {
            self.rebuild(entry.time);
        }
        self.len += 1;
        self.place(entry);
    }

    /// Files `entry` (not earlier than `last`) in its bucket.
    #[inline(always)]
    fn place(&mut self, entry: Entry<E>) {
        let diff = entry.time ^ self.last;
        if diff == 0 {
            self.near.push(entry);
            return;
        }
        let level = (u64::BITS - 1 - diff.leading_zeros()) / DIGIT_BITS;
        let digit = (entry.time >> (level * DIGIT_BITS)) as usize & (RADIX - 1);
        let k = level as usize * RADIX + digit;
        let blocks = &mut self.buckets[k];
        if entry.time < self.min_time[k] {
            self.min_time[k] = entry.time;
            self.min_index[k] = blocks
                .last()
                .map_or(0, |block| (blocks.len() - 1) * BLOCK + block.len())
                as u32;
        }
        self.levels |= 1 << level;
        self.digits[level as usize] |= 1 << digit;
        match blocks.last_mut() {
            Some(block) if block.len() < BLOCK => block.push(entry),
            _ => Self::new_block(blocks, &mut self.spare, entry),
        }
    }

    /// Starts a block in a bucket whose last block is full (or which has none), with `entry`.
    /// Once every [`BLOCK`] entries: out of line, so that [`RadixHeap::place`] stays small.
    #[cold]
    #[inline(never)]
    fn new_block(blocks: &mut Vec<Vec<Entry<E>>>, spare: &mut Vec<Vec<Entry<E>>>, entry: Entry<E>) {
        let mut block = spare.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK));
        block.push(entry);
        blocks.push(block);
    }

    #[inline]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        if self.near.is_empty() {
            self.refill();
        }
        let entry = self.near.pop()?;
        self.len -= 1;
        Some(entry)
    }

    /// The lowest non-empty bucket, if any.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        if self.levels == 0 {
            return None;
        }
        let level = self.levels.trailing_zeros() as usize;
        Some(level * RADIX + self.digits[level].trailing_zeros() as usize)
    }

    /// The lowest non-empty bucket above bucket `k`, if any.
    #[inline]
    fn above(&self, k: usize) -> Option<usize> {
        let (level, digit) = (k / RADIX, k % RADIX);
        // The masks keep the bits above `digit` and above `level` (in `u32`: `2 << 15` would
        // not fit a `u16`).
        let digits = u32::from(self.digits[level]) & !((2u32 << digit) - 1);
        if digits != 0 {
            return Some(level * RADIX + digits.trailing_zeros() as usize);
        }
        let levels = u32::from(self.levels) & !((2u32 << level) - 1);
        (levels != 0).then(|| {
            let level = levels.trailing_zeros() as usize;
            level * RADIX + self.digits[level].trailing_zeros() as usize
        })
    }

    #[inline]
    pub(super) fn peek_time(&self) -> Option<u64> {
        if !self.near.is_empty() {
            return Some(self.last);
        }
        self.lowest().map(|k| self.min_time[k])
    }

    /// An event due next, or nearly: the head of `near`, else an entry of the earliest time in
    /// the lowest bucket. Cheap enough to ask before every pop, for a prefetch one event ahead.
    #[inline]
    pub(super) fn peek_hint(&self) -> Option<&Entry<E>> {
        // The event after the hinted one is likely the earliest entry of the next bucket up,
        // a line written long ago: start loading it now, one event before it is hinted
        // (buckets below the hinted one are filled when it is popped, and stay in cache).
        let first = self.lowest();
        if let Some(head) = self.near.peek() {
            if let Some(after) = first.and_then(|k| self.bucket_min(k)) {
                crate::prefetch::read(after);
            }
            return Some(head);
        }
        let hint = self.bucket_min(first?)?;
        if let Some(after) = self.above(first?).and_then(|k| self.bucket_min(k)) {
            crate::prefetch::read(after);
        }
        Some(hint)
    }

    /// The events due next and after it, or nearly: the first two of `near` (its head, and
    /// the earlier of the head's children) and the earliest entries of the lowest buckets.
    /// Cheap enough to ask before every pop, for a prefetch two events ahead. Either may name
    /// the wrong event when several share an instant or a bucket holds several times.
    #[inline]
    pub(super) fn peek_hints(&self) -> [Option<&Entry<E>>; 2] {
        // The event after the second hint is likely the earliest entry of a bucket further up,
        // a line written long ago: start loading it now, one event before it is hinted
        // (buckets below a hinted one are filled when it is popped, and stay in cache).
        let min = |k: Option<usize>| k.and_then(|k| self.bucket_min(k));
        let first = self.lowest();
        let Some(head) = self.near.peek() else {
            let second = first.and_then(|k| self.above(k));
            if let Some(entry) = min(second.and_then(|k| self.above(k))) {
                crate::prefetch::read(entry);
            }
            return [min(first), min(second)];
        };
        // `BinaryHeap` keeps its entries as an implicit tree: the head's two children are at
        // 1 and 2, and the earlier of them (the greater, `Entry`'s order being reversed) is
        // the second to come out.
        let after = match self.near.as_slice().iter().skip(1).take(2).max() {
            Some(child) => {
                if let Some(entry) = min(first) {
                    crate::prefetch::read(entry);
                }
                Some(child)
            }
            None => {
                if let Some(entry) = min(first.and_then(|k| self.above(k))) {
                    crate::prefetch::read(entry);
                }
                min(first)
            }
        };
        [Some(head), after]
    }

    /// An entry of the earliest time in bucket `k`.
    #[inline]
    fn bucket_min(&self, k: usize) -> Option<&Entry<E>> {
        let at = self.min_index[k] as usize;
        self.buckets[k].get(at / BLOCK)?.get(at % BLOCK)
    }

    /// Moves `last` to the earliest pending time and redistributes the lowest non-empty
    /// bucket, which holds it: its entries share every digit from the bucket's up with the
    /// new `last`, so each lands in a bucket of a lower digit position or in `near`.
    fn refill(&mut self) {
        let Some(k) = self.lowest() else {
            return;
        };
        let (level, digit) = (k / RADIX, k % RADIX);
        self.last = self.min_time[k];
        self.min_time[k] = u64::MAX;
        self.digits[level] &= !(1 << digit);
        if self.digits[level] == 0 {
            self.levels &= !(1 << level);
        }
        let mut blocks = std::mem::take(&mut self.buckets[k]);
        let mut first = None;
        for mut block in blocks.drain(..) {
            for entry in block.drain(..) {
                self.place(entry);
            }
            match first {
                None => first = Some(block),
                Some(_) => self.spare.push(block),
            }
        }
        // The bucket keeps its list and one empty block: it fills again as time moves on, and
        // most refills empty buckets of a few entries, which would otherwise hand a block to
        // the pool and take one back at their next push.
        blocks.extend(first);
        self.buckets[k] = blocks;
    }

    /// Files every entry again around a new, earlier `last`.
    fn rebuild(&mut self, last: u64) {
        let entries: Vec<Entry<E>> = self.drain().collect();
        self.len = entries.len();
        self.last = last;
        for entry in entries {
            self.place(entry);
        }
    }

    /// Every entry, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Entry<E>> {
        self.near
            .iter()
            .chain(self.buckets.iter().flatten().flatten())
    }

    /// Takes every entry out, in no particular order, leaving the heap empty.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Entry<E>> + '_ {
        self.len = 0;
        self.levels = 0;
        self.digits = [0; LEVELS];
        self.min_time = [u64::MAX; BUCKETS];
        self.near.drain().chain(
            self.buckets
                .iter_mut()
                .flat_map(|blocks| blocks.drain(..).flatten()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(time: u64, tie: u64) -> Entry<u64> {
        Entry {
            time,
            tie,
            event: tie,
        }
    }

    fn drain(heap: &mut RadixHeap<u64>) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| {
            // The first hint is an entry due at the next time, the second another pending
            // one (each test's event is its tie).
            let [hinted, after] = heap.peek_hints().map(|e| e.map(|e| e.event));
            assert_eq!(heap.peek_hint().map(|e| e.event), hinted);
            if let Some(after) = after {
                assert_ne!(Some(after), hinted);
                assert!(heap.iter().any(|e| e.tie == after));
            }
            // None when the rest wait in one bucket: a hint may be missing, never invented.
            assert!(after.is_none() || heap.len() >= 2);
            let peeked = heap.peek_time();
            if let Some(time) = peeked {
                let ties: Vec<u64> = heap
                    .iter()
                    .filter(|e| e.time == time)
                    .map(|e| e.tie)
                    .collect();
                assert!(ties.contains(&hinted.expect("a hint while entries are pending")));
            } else {
                assert_eq!(hinted, None);
            }
            let popped = heap.pop().map(|e| (e.time, e.tie));
            assert_eq!(peeked, popped.map(|(time, _)| time));
            popped
        })
        .collect()
    }

    #[test]
    fn pops_in_key_order_across_every_bucket() {
        let times = [0, 1, 2, 3, 1 << 20, (1 << 20) + 1, u64::MAX, 5, 5, 1 << 63];
        let mut heap = RadixHeap::new(0, []);
        for (tie, &time) in times.iter().enumerate() {
            heap.push(entry(time, 100 - tie as u64));
        }
        assert_eq!(heap.len(), times.len());
        let mut expected: Vec<_> = times
            .iter()
            .enumerate()
            .map(|(tie, &time)| (time, 100 - tie as u64))
            .collect();
        expected.sort_unstable();
        assert_eq!(drain(&mut heap), expected);
        assert_eq!(heap.len(), 0);
        assert_eq!(heap.peek_time(), None);
    }

    #[test]
    fn lowest_and_above_walk_the_non_empty_buckets_in_order() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut heap = RadixHeap::new(0, []);
        for step in 0..5_000u64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let time = heap.last + (state >> 11) % (1 << (state % 40));
            heap.push(entry(time, step));
            if step % 4 == 0 {
                heap.pop();
            }
            // The reference: every bucket holding an entry, by a scan.
            let in_use: Vec<usize> = (0..BUCKETS)
                .filter(|&k| heap.buckets[k].iter().any(|block| !block.is_empty()))
                .collect();
            assert_eq!(heap.lowest(), in_use.first().copied());
            for pair in in_use.windows(2) {
                assert_eq!(heap.above(pair[0]), Some(pair[1]));
            }
            if let Some(&k) = in_use.last() {
                assert_eq!(heap.above(k), None);
            }
        }
    }

    #[test]
    fn a_push_before_the_last_pop_rebuilds_and_stays_ordered() {
        let mut heap = RadixHeap::new(50, [entry(60, 1), entry(70, 2)]);
        assert_eq!(heap.pop().map(|e| e.time), Some(60));
        heap.push(entry(10, 3));
        heap.push(entry(60, 0));
        assert_eq!(drain(&mut heap), [(10, 3), (60, 0), (70, 2)]);
    }

    #[test]
    fn interleaved_pushes_and_pops_match_a_sorted_reference() {
        // A hold model with clustered ties, checked against a sorted vector at every step.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut heap = RadixHeap::new(0, []);
        let mut reference = std::collections::BTreeSet::new();
        let mut now = 0;
        for step in 0..20_000u64 {
            let time = now + next() % 64 * (1 << (next() % 24));
            let tie = next();
            heap.push(entry(time, tie));
            reference.insert((time, tie));
            if step % 3 != 0 {
                let popped = heap.pop().map(|e| (e.time, e.tie));
                assert_eq!(popped, reference.pop_first());
                now = popped.map_or(now, |(time, _)| time);
            }
        }
        assert_eq!(heap.len(), reference.len());
        let reference: Vec<_> = reference.into_iter().collect();
        assert_eq!(drain(&mut heap), reference);
    }
}
