//! A source reader that reads splits its enumerator assigns (F1.13, Flink's `SourceReaderBase`
//! inside the `SourceOperator`): it asks for a split when it holds none, reads its splits one
//! after the other, and ends its input once it was told that no split is left and has read
//! every split it holds.

use crate::checkpoint::storage::OperatorState;
use crate::record::split_seq;
use crate::source_mutant::{on, SourceMutant};
use std::collections::VecDeque;

pub struct SplitReader {
    /// Records in each split.
    records: u64,
    /// Assigned, unfinished splits with the offset of the next record, the one being read
    /// first (the reader's state, F1.13 step 2).
    splits: VecDeque<(u32, u64)>,
    /// A request is on its way to the enumerator.
    requested: bool,
    /// The enumerator said no split is left.
    no_more: bool,
}

/// What a source does when it has no record to emit.
pub enum Idle {
    /// It holds no split: ask the enumerator (F1.13 step 1).
    Request,
    /// It holds no split and has asked already.
    Wait,
    /// Its input ended: a bounded source emitted all, or a reader was told no split is left
    /// and read every split it held.
    End,
}

impl SplitReader {
    pub fn new(records: u64) -> SplitReader {
        SplitReader {
            records,
            splits: VecDeque::new(),
            requested: false,
            no_more: false,
        }
    }

    /// The sequence number of the next record (`split_seq`), if it holds a split.
    pub fn next_seq(&mut self) -> Option<u64> {
        while let Some((split, offset)) = self.splits.front_mut() {
            // source mutant split-ends-early
            if *offset + u64::from(on(SourceMutant::SplitEndsEarly)) < self.records {
                let seq = split_seq(*split, *offset);
                *offset += 1;
                if *offset == self.records {
                    self.splits.pop_front(); // read: not in any later snapshot
                }
                return Some(seq);
            }
            self.splits.pop_front(); // an empty split
        }
        None
    }

    /// It holds no split ([`SplitReader::next_seq`] said so): what now.
    pub fn idle(&mut self) -> Idle {
        if self.no_more {
            Idle::End
        } else if std::mem::replace(&mut self.requested, true) {
            Idle::Wait
        } else {
            Idle::Request
        }
    }

    /// The enumerator's answer (F1.13 step 1).
    pub fn assign(&mut self, split: Option<u32>) {
        self.requested = false;
        match split {
            Some(split) => self.splits.push_back((split, 0)),
            None => self.no_more = true,
        }
    }

    /// F1.13 step 2: the assigned, unfinished splits and their offsets.
    pub fn snapshot(&self) -> OperatorState {
        OperatorState::SplitReader {
            splits: self.splits.iter().copied().collect(),
        }
    }

    /// F1.13 steps 3 and 4: a restored reader reads its checkpointed splits from where it was,
    /// then asks again.
    pub fn restore(&mut self, splits: &[(u32, u64)]) {
        self.splits = splits.iter().copied().collect();
        self.requested = false;
        self.no_more = false;
    }

    /// F1.6: restored finished, the reader has nothing left to read.
    pub fn finish_on_restore(&mut self) {
        self.splits.clear();
        self.no_more = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_asks_once_reads_its_splits_in_order_and_ends_when_none_is_left() {
        let mut r = SplitReader::new(2);
        assert_eq!(r.next_seq(), None);
        assert!(matches!(r.idle(), Idle::Request));
        assert!(matches!(r.idle(), Idle::Wait), "asked already");
        r.assign(Some(3));
        assert_eq!(r.next_seq(), Some(split_seq(3, 0)));
        assert_eq!(
            r.snapshot(),
            OperatorState::SplitReader {
                splits: vec![(3, 1)]
            }
        );
        assert_eq!(r.next_seq(), Some(split_seq(3, 1)));
        assert_eq!(r.snapshot(), OperatorState::SplitReader { splits: vec![] });
        assert_eq!(r.next_seq(), None);
        assert!(matches!(r.idle(), Idle::Request));
        r.assign(None);
        assert!(matches!(r.idle(), Idle::End));
        r.restore(&[(3, 1)]);
        assert_eq!(r.next_seq(), Some(split_seq(3, 1)));
    }
}
