//! The task's barrier handler for aligned checkpoints (`docs/rules.md` P1.3, P1.4 aligned column;
//! `docs/rules.md` F1.3).
//!
//! It tracks, per input channel, whether EndOfPartition was enqueued (the priority notice of
//! P1.3 step 1) or processed (step 4), and for the one checkpoint being aligned which channels
//! delivered their barrier. Aligned means: a channel that delivered barrier *n* is blocked until
//! every channel delivered barrier *n* or EndOfPartition. It does not touch channels or send
//! anything itself; the task acts on what it returns.

use crate::source_mutant::{on, SourceMutant};
use bit_set::BitSet;
use sim::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Alignment {
    pub checkpoint: u64,
    pub started: Instant,
    /// Channels still owing a barrier or EndOfPartition.
    remaining: u32,
}

/// Per input channel (its slot), three flags, each a bit set: an arrival reads one bit of a
/// task's set, and with a thousand inputs a set is 2 cache lines where a struct per slot was 48,
/// so the sets of every task of a large job stay in cache (issue 18).
pub struct BarrierHandler {
    inputs: usize,
    /// EndOfPartition is buffered on this channel (P1.3 step 1).
    eop_enqueued: BitSet,
    /// EndOfPartition was processed: the channel is no longer watched (P1.3 step 4).
    ended: BitSet,
    /// Delivered the barrier (or, by the rules of the variant, counts as aligned) for the
    /// checkpoint being aligned.
    delivered: BitSet,
    /// Slots of the alignment that may hold elements, as the task notes them
    /// ([`BarrierHandler::note_holding`]): with the ended ones, every blocked slot that holds
    /// elements when the alignment ends is among them, so that its end reads a few channels
    /// and not every input (a thousand per task in a job with a million channels, each a
    /// cache miss). Empty outside an alignment.
    holding: Vec<u32>,
    alignment: Option<Alignment>,
}

impl BarrierHandler {
    pub fn new(inputs: usize) -> BarrierHandler {
        BarrierHandler {
            inputs,
            eop_enqueued: BitSet::with_capacity(inputs),
            ended: BitSet::with_capacity(inputs),
            delivered: BitSet::with_capacity(inputs),
            holding: Vec::new(),
            alignment: None,
        }
    }

    pub fn alignment(&self) -> Option<Alignment> {
        self.alignment
    }

    /// A channel that delivered the barrier being aligned is blocked until alignment ends.
    #[inline]
    pub fn is_blocked(&self, slot: u32) -> bool {
        self.alignment.is_some() && self.delivered.contains(slot as usize)
    }

    /// EndOfPartition was processed on `slot`.
    pub fn is_ended(&self, slot: u32) -> bool {
        self.ended.contains(slot as usize)
    }

    /// EndOfPartition is buffered on `slot` (possibly already processed).
    pub fn is_eop_enqueued(&self, slot: u32) -> bool {
        self.eop_enqueued.contains(slot as usize)
    }

    pub fn all_ended(&self) -> bool {
        self.ended.count() == self.inputs
    }

    /// P1.3 step 1: EndOfPartition was enqueued on `slot`.
    pub fn note_eop_enqueued(&mut self, slot: u32) {
        self.eop_enqueued.insert(slot as usize);
    }

    /// Slots with EndOfPartition buffered but not processed and no barrier yet for the
    /// checkpoint being aligned: where P1.3 steps 2 and 3 insert a barrier.
    pub fn slots_awaiting_insertion(&self) -> impl Iterator<Item = u32> + '_ {
        let aligning = self.alignment.is_some();
        self.eop_enqueued
            .iter()
            .filter(move |&i| aligning && !self.ended.contains(i) && !self.delivered.contains(i))
            .map(|i| i as u32)
    }

    /// Starts aligning `checkpoint`: every channel not yet ended owes a barrier.
    pub fn start(&mut self, checkpoint: u64, now: Instant) {
        debug_assert!(self.alignment.is_none());
        // A channel that ended before is done already: delivering it again counts nothing.
        self.delivered.clone_from(&self.ended);
        let ended = self.ended.count();
        // Blocked from the start, without a delivery the task would note.
        self.holding.extend(self.ended.iter().map(|i| i as u32));
        self.alignment = Some(Alignment {
            checkpoint,
            started: now,
            remaining: (self.inputs - ended) as u32,
        });
    }

    /// `slot` delivered the barrier being aligned, or counts as if it had (its EndOfPartition
    /// was processed: P1.3 step 4, F1.3). Returns true when that completes the alignment.
    pub fn deliver(&mut self, slot: u32) -> bool {
        let a = self
            .alignment
            .as_mut()
            .expect("delivering into an alignment");
        if self.delivered.insert(slot as usize) {
            a.remaining -= 1;
        }
        // source mutant barrier-count-off-by-one
        if on(SourceMutant::BarrierCountOffByOne) {
            return a.remaining <= 1;
        }
        a.remaining == 0
    }

    /// P1.3 step 4: EndOfPartition was processed on `slot`; the channel is no longer watched.
    /// Returns whether it had not yet delivered the barrier of the checkpoint being aligned.
    pub fn note_eop_processed(&mut self, slot: u32) -> bool {
        self.ended.insert(slot as usize);
        self.alignment.is_some() && !self.delivered.contains(slot as usize)
    }

    /// `slot` may hold elements while blocked: it delivered with elements buffered behind its
    /// barrier, or one arrived into its empty input while it was blocked. A blocked slot holds
    /// elements when the alignment ends only if one of these happened (nothing is taken from
    /// a blocked slot) or if it ended before the alignment began and so was blocked from the
    /// start ([`BarrierHandler::start`] notes those). Called during an alignment only.
    // Out of line: most arrivals and deliveries never call it, and an inlined vector push
    // made their callers larger.
    #[inline(never)]
    pub fn note_holding(&mut self, slot: u32) {
        // Outside an alignment no slot is blocked: a note then would outlive it and unblock a
        // slot at the end of a later alignment that never blocked it.
        debug_assert!(
            self.alignment.is_some(),
            "slot {slot} noted outside an alignment"
        );
        self.holding.push(slot);
    }

    /// Ends the alignment (snapshot taken, or checkpoint abandoned) and returns the slots to
    /// unblock that may hold elements, in slot order, each once: those noted
    /// ([`BarrierHandler::note_holding`], all blocked). The caller unblocks those that do; the
    /// other blocked slots hold nothing, so visiting each would find no more. `delivered`
    /// keeps its bits: nothing reads them outside an alignment, and the next
    /// [`BarrierHandler::start`] overwrites them.
    pub fn finish(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.alignment = None;
        debug_assert!(self
            .holding
            .iter()
            .all(|&slot| self.delivered.contains(slot as usize)));
        let holding = &mut self.holding;
        holding.sort_unstable();
        holding.dedup();
        holding.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::BarrierHandler;
    use sim::Instant;

    /// The end of an alignment names the slots noted as holding and the ones that ended
    /// before it began, in slot order and each once.
    #[test]
    fn finish_names_the_noted_slots_and_the_ended_ones_in_slot_order() {
        let mut barriers = BarrierHandler::new(8);
        barriers.note_eop_processed(6);
        barriers.start(1, Instant::ZERO);
        for slot in [5, 2, 0] {
            barriers.note_holding(slot);
            assert!(!barriers.deliver(slot));
        }
        barriers.note_holding(5);
        assert_eq!(barriers.finish().collect::<Vec<_>>(), [0, 2, 5, 6]);
        barriers.start(2, Instant::ZERO);
        assert_eq!(barriers.finish().collect::<Vec<_>>(), [6]);
    }
}
