//! An unaligned checkpoint in progress at one task (`docs/rules.md` P1.4 unaligned column,
//! `docs/rules.md` F1.3).
//!
//! The snapshot is taken at the first barrier (or when an aligned checkpoint's alignment times
//! out); from then on, every input channel that has not yet delivered its barrier (or
//! EndOfPartition) is *spilling*: the records it delivers before that barrier are channel
//! state. The checkpoint is acknowledged once no channel is spilling any more.

use crate::checkpoint::storage::ChainState;
use crate::graph::ChannelId;
use crate::record::Record;
use crate::source_mutant::{on, SourceMutant};

pub struct UnalignedCheckpoint {
    pub checkpoint: u64,
    /// The operator state captured at the first barrier.
    pub state: ChainState,
    /// Captured after the task's end of input.
    pub finished: bool,
    pub output_state: Vec<(ChannelId, Vec<Record>)>,
    /// Per input slot: `Some(records taken since the snapshot)` while spilling.
    spill: Vec<Option<Vec<Record>>>,
    /// Per input slot: records to leave out of the spill (only the injected bug
    /// `timeout-switch-loses-buffers` sets these).
    skip: Vec<u32>,
    /// Per input slot: its barrier came but it goes on spilling (only the injected bug
    /// `unaligned-spill-after-barrier` sets these).
    late: Vec<bool>,
    pub input_state: Vec<(u32, Vec<Record>)>,
    /// Per input slot, with network buffers (F1.14): the data buffers its consumer had
    /// finished when it began spilling, to count the state in buffers.
    consumed_at_spill: Vec<u64>,
}

impl UnalignedCheckpoint {
    pub fn new(
        checkpoint: u64,
        state: ChainState,
        finished: bool,
        output_state: Vec<(ChannelId, Vec<Record>)>,
        inputs: usize,
    ) -> UnalignedCheckpoint {
        UnalignedCheckpoint {
            checkpoint,
            state,
            finished,
            output_state,
            spill: vec![None; inputs],
            skip: vec![0; inputs],
            late: vec![false; inputs],
            input_state: Vec::new(),
            consumed_at_spill: vec![0; inputs],
        }
    }

    /// `slot` starts spilling, with `replaying`: restored channel state of the channel not yet
    /// processed again, which precedes everything still to come on it. The first `skip`
    /// records it delivers are (wrongly) left out.
    pub fn spill(&mut self, slot: u32, replaying: Vec<Record>, skip: u32) {
        self.spill[slot as usize] = Some(replaying);
        // source mutant spill-skips-one-more
        self.skip[slot as usize] = skip + u32::from(on(SourceMutant::SpillSkipsOneMore));
    }

    /// F1.14: `slot` began spilling when `consumed` of its channel's buffers were finished.
    pub fn note_consumed(&mut self, slot: u32, consumed: u64) {
        self.consumed_at_spill[slot as usize] = consumed;
    }

    /// Whether `slot` still spills: its barrier (or EndOfPartition) has not come yet.
    pub fn is_spilling(&self, slot: u32) -> bool {
        self.spill[slot as usize].is_some()
    }

    /// F1.14: the buffers `slot`'s channel finished since it began spilling.
    pub fn consumed_since_spill(&self, slot: u32, consumed: u64) -> u64 {
        consumed - self.consumed_at_spill[slot as usize]
    }

    /// A record was taken from `slot` after the snapshot: if the channel is still spilling,
    /// the record is in flight across the cut.
    pub fn taken(&mut self, slot: u32, record: Record) {
        if let Some(spill) = &mut self.spill[slot as usize] {
            let skip = &mut self.skip[slot as usize];
            if *skip > 0 {
                *skip -= 1;
            } else {
                spill.push(record);
            }
        }
    }

    /// `slot` delivered its barrier (or EndOfPartition): its channel state is what it spilled
    /// plus `buffered`, the records still queued ahead of the barrier. Returns the channel
    /// state's size, or `None` if the slot was not spilling. `drop` (an injected bug) loses
    /// the state.
    pub fn finalize(&mut self, slot: u32, buffered: Vec<Record>, drop: bool) -> Option<usize> {
        let mut records = self.spill[slot as usize].take()?;
        let skip = std::mem::take(&mut self.skip[slot as usize]) as usize;
        let ahead = buffered.len();
        records.extend(buffered.into_iter().skip(skip));
        if drop {
            records.clear();
        }
        if self.late[slot as usize] {
            // The injected bug goes on spilling: everything taken from now on beyond the
            // records queued ahead of the barrier (already in the state).
            self.spill(slot, Vec::new(), ahead as u32);
        }
        let n = records.len();
        if n > 0 {
            self.input_state.push((slot, records));
        }
        Some(n)
    }

    /// The injected bug `unaligned-spill-after-barrier`: `slot`'s barrier came, but the slot
    /// keeps spilling until the others are done.
    pub fn late(&mut self, slot: u32) {
        self.late[slot as usize] = true;
    }

    /// No channel spills any more (late ones aside): the checkpoint can be acknowledged.
    pub fn complete(&self) -> bool {
        self.spill
            .iter()
            .zip(&self.late)
            .all(|(spill, &late)| spill.is_none() || late)
    }

    /// Ends the late slots' spilling; returns how many records each added after its barrier.
    pub fn finish_late(&mut self) -> Vec<(u32, usize)> {
        let mut done = Vec::new();
        for slot in 0..self.spill.len() as u32 {
            if std::mem::take(&mut self.late[slot as usize]) {
                if let Some(n) = self.finalize(slot, Vec::new(), false).filter(|&n| n > 0) {
                    done.push((slot, n));
                }
            }
        }
        done
    }
}

/// F1.14 step 6: the buffers that hold an output channel's state of `records` records, of
/// which `unsent` are in the partly filled current buffer: that buffer, and the rest in full
/// buffers (the last one possibly partly filled).
pub fn output_state_buffers(records: u64, unsent: u64, per_buffer: u32) -> u64 {
    u64::from(unsent > 0) + (records - unsent).div_ceil(u64::from(per_buffer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// F1.14 step 6: the current buffer counts once if it holds a record, the others by
    /// how many full buffers they take.
    #[test]
    fn output_state_counts_the_current_buffer_and_full_ones() {
        assert_eq!(output_state_buffers(0, 0, 4), 0);
        assert_eq!(output_state_buffers(3, 3, 4), 1, "the current buffer alone");
        assert_eq!(
            output_state_buffers(4, 0, 4),
            1,
            "one full buffer, none current"
        );
        assert_eq!(output_state_buffers(7, 3, 4), 2);
        assert_eq!(
            output_state_buffers(8, 3, 4),
            3,
            "a partly filled last buffer"
        );
    }

    fn two_inputs() -> UnalignedCheckpoint {
        UnalignedCheckpoint::new(1, Vec::new(), false, Vec::new(), 2)
    }

    /// F1.14 step 6: the buffers of a channel's state are those its consumer finished since
    /// the slot began spilling, not since the channel opened.
    #[test]
    fn buffers_count_from_the_start_of_the_spill() {
        let mut u = two_inputs();
        u.spill(1, Vec::new(), 0);
        u.note_consumed(1, 5);
        assert_eq!(u.consumed_since_spill(1, 5), 0);
        assert_eq!(u.consumed_since_spill(1, 8), 3);
        assert_eq!(u.consumed_since_spill(0, 4), 4, "slot 0 never spilled");
    }

    /// A slot that spilled nothing leaves no channel state: a snapshot without channel state
    /// is one `--save-checkpoint` may write (F1.6).
    #[test]
    fn a_slot_that_spilled_nothing_leaves_no_channel_state() {
        let mut u = two_inputs();
        u.spill(0, Vec::new(), 0);
        assert!(!u.complete());
        assert_eq!(u.finalize(0, Vec::new(), false), Some(0));
        assert!(u.input_state.is_empty());
        assert!(u.complete());
        assert_eq!(u.finalize(0, Vec::new(), false), None, "no longer spilling");
    }
}
