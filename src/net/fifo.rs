//! A channel's queue of elements, kept inside the channel while it holds at most one.
//!
//! Why: a job with a million channels touches one at random on every arrival, take and push,
//! and none of them is in any cache. With the queue in a `VecDeque` each such touch missed
//! twice, once for the channel and once for its element on the heap (`perf` put about three
//! quarters of the run loop's time of the 10^6-channel job on those two loads). Most channels
//! hold nothing or one element at a time, so that element lives in the channel itself, and
//! the channel fits one cache line (`super::Channel`). Two or more elements move to a heap
//! queue that the channel keeps once it has one, with its capacity, so a channel that
//! alternates between one and two elements does not allocate again (no allocation per event
//! in steady state).

use crate::record::Element;
use std::collections::VecDeque;

/// FIFO of elements. Invariant: while `one` holds an element it is the only one (`more` is
/// empty); otherwise every element is in `more`, in order. An element goes inline when it is
/// pushed into an empty queue, so a queue that grew past one stays in `more` until it empties
/// (fewer moves than switching back at one element, and the same cache line at rest).
#[derive(Debug, Default)]
pub(super) struct Fifo {
    one: Option<Element>,
    /// Boxed on purpose: a pointer (8 bytes) rather than a `VecDeque` (32) is what lets the
    /// channel with its inline element fit one cache line.
    #[allow(clippy::box_collection)]
    more: Option<Box<VecDeque<Element>>>,
}

impl Fifo {
    #[inline]
    pub(super) fn len(&self) -> usize {
        match (&self.one, &self.more) {
            (Some(_), _) => 1,
            (None, Some(more)) => more.len(),
            (None, None) => 0,
        }
    }

    /// Element `index`, oldest first.
    #[inline]
    pub(super) fn get(&self, index: usize) -> Element {
        match (&self.one, &self.more) {
            (Some(e), _) => {
                debug_assert_eq!(index, 0, "index {index} of a queue of one");
                *e
            }
            (None, Some(more)) => more[index],
            (None, None) => panic!("index {index} of an empty queue"),
        }
    }

    /// The heap queue, with the inline element (if any) moved into it.
    #[cold]
    fn spill(&mut self) -> &mut VecDeque<Element> {
        let more = self.more.get_or_insert_with(Default::default);
        if let Some(e) = self.one.take() {
            debug_assert!(more.is_empty());
            more.push_back(e);
        }
        more
    }

    #[inline]
    pub(super) fn push_back(&mut self, element: Element) {
        match &mut self.more {
            Some(more) if !more.is_empty() => more.push_back(element),
            _ if self.one.is_none() => self.one = Some(element),
            _ => self.spill().push_back(element),
        }
    }

    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<Element> {
        match self.one.take() {
            Some(e) => Some(e),
            None => self.more.as_mut()?.pop_front(),
        }
    }

    /// Inserts `element` so that it becomes element `index` (`index <= len`).
    pub(super) fn insert(&mut self, index: usize, element: Element) {
        if self.len() == 0 {
            assert_eq!(index, 0, "inserted at {index} into an empty queue");
            self.one = Some(element);
        } else {
            self.spill().insert(index, element);
        }
    }

    /// Removes element `index`.
    pub(super) fn remove(&mut self, index: usize) -> Option<Element> {
        if self.one.is_some() {
            return (index == 0).then(|| self.one.take()).flatten();
        }
        self.more.as_mut()?.remove(index)
    }

    /// Empties the queue; a heap queue keeps its capacity.
    pub(super) fn clear(&mut self) {
        self.one = None;
        if let Some(more) = &mut self.more {
            more.clear();
        }
    }

    pub(super) fn back(&self) -> Option<Element> {
        match (&self.one, &self.more) {
            (Some(e), _) => Some(*e),
            (None, Some(more)) => more.back().copied(),
            (None, None) => None,
        }
    }

    /// Elements `start..start + len` as two slices, oldest first (the second is empty unless
    /// the range wraps around the heap queue's ring).
    #[inline]
    pub(super) fn slices(&self, start: usize, len: usize) -> (&[Element], &[Element]) {
        let end = start + len;
        match (&self.one, &self.more) {
            (Some(_), _) => (&self.one.as_slice()[start..end], &[]),
            (None, Some(more)) => {
                let (a, b) = more.as_slices();
                if end <= a.len() {
                    (&a[start..end], &[])
                } else if start >= a.len() {
                    (&b[start - a.len()..end - a.len()], &[])
                } else {
                    (&a[start..], &b[..end - a.len()])
                }
            }
            (None, None) => (&[][start..end], &[]),
        }
    }

    /// The elements, oldest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = Element> + '_ {
        self.one
            .iter()
            .copied()
            .chain(self.more.iter().flat_map(|m| m.iter().copied()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(n: u64) -> Element {
        Element::Barrier(n)
    }

    /// Every operation against a `VecDeque` reference, through the switches between one inline
    /// element and the heap queue, in a fixed pseudo-random sequence.
    #[test]
    fn behaves_like_a_vecdeque_through_every_switch() {
        let mut fifo = Fifo::default();
        let mut reference: VecDeque<Element> = VecDeque::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = reference.len();
            match x % 7 {
                0 | 1 => {
                    fifo.push_back(e(step));
                    reference.push_back(e(step));
                }
                2 | 3 => assert_eq!(fifo.pop_front(), reference.pop_front()),
                4 => {
                    let at = (x >> 8) as usize % (len + 1);
                    fifo.insert(at, e(step));
                    reference.insert(at, e(step));
                }
                5 if len > 0 => {
                    let at = (x >> 8) as usize % len;
                    assert_eq!(fifo.remove(at), reference.remove(at));
                }
                6 if x % 97 == 0 => {
                    fifo.clear();
                    reference.clear();
                }
                _ => {}
            }
            assert_eq!(fifo.len(), reference.len());
            assert_eq!(fifo.back(), reference.back().copied());
            assert!(fifo.iter().eq(reference.iter().copied()));
            for (i, r) in reference.iter().enumerate() {
                assert_eq!(fifo.get(i), *r);
            }
            // Every range, wrapping around the ring or not, as two slices.
            let n = reference.len();
            for (start, end) in [(0, n), (n / 3, n), (0, n / 2), (n / 4, n - n / 4), (n, n)] {
                let (a, b) = fifo.slices(start, end - start);
                assert!(a.iter().chain(b).eq(reference.range(start..end)));
            }
            if len == 0 && fifo.len() == 1 {
                assert!(
                    fifo.one.is_some(),
                    "an element pushed into an empty queue is inline"
                );
            }
        }
    }

    /// A queue that once held two elements keeps its heap queue: filling and emptying it again
    /// allocates nothing more.
    #[test]
    fn the_heap_queue_is_kept() {
        let mut fifo = Fifo::default();
        fifo.push_back(e(0));
        fifo.push_back(e(1));
        let at = fifo.more.as_deref().map(|m| m as *const VecDeque<Element>);
        for n in (2..100).step_by(2) {
            assert_eq!(fifo.pop_front(), Some(e(n - 2)));
            assert_eq!(fifo.pop_front(), Some(e(n - 1)));
            fifo.push_back(e(n));
            assert!(fifo.one.is_some(), "inline again once empty");
            fifo.push_back(e(n + 1));
        }
        assert_eq!(fifo.more.as_deref().map(|m| m as *const _), at);
    }
}
