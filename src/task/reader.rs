//! A source reader that reads splits its enumerator assigns (F1.13, Flink's `SourceReaderBase`
//! inside the `SourceOperator`): it asks for a split when it holds none, reads its splits one
//! after the other, and ends its input once it was told that no split is left and has read
//! every split it holds.

use crate::checkpoint::storage::OperatorState;
use crate::graph::SubtaskId;
use crate::record::{split_record, Record};
use std::collections::VecDeque;

pub struct SplitReader {
    /// Subtask 0 of the vertex: split records are named by their vertex, not their reader.
    first: SubtaskId,
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

/// What the reader does next.
pub enum Next {
    Record(Record),
    /// It holds no split: ask the enumerator (F1.13 step 1).
    Request,
    /// It holds no split and has asked already.
    Wait,
    /// No split is left and every split it held is read: its input ended.
    End,
}

impl SplitReader {
    pub fn new(first: SubtaskId, records: u64) -> SplitReader {
        SplitReader {
            first,
            records,
            splits: VecDeque::new(),
            requested: false,
            no_more: false,
        }
    }

    pub fn next(&mut self) -> Next {
        while let Some((split, offset)) = self.splits.front_mut() {
            if *offset < self.records {
                let record = split_record(self.first, *split, *offset);
                *offset += 1;
                if *offset == self.records {
                    self.splits.pop_front(); // read: not in any later snapshot
                }
                return Next::Record(record);
            }
            self.splits.pop_front(); // an empty split
        }
        if self.no_more {
            Next::End
        } else if std::mem::replace(&mut self.requested, true) {
            Next::Wait
        } else {
            Next::Request
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
        let mut r = SplitReader::new(SubtaskId(0), 2);
        assert!(matches!(r.next(), Next::Request));
        assert!(matches!(r.next(), Next::Wait), "asked already");
        r.assign(Some(3));
        let Next::Record(a) = r.next() else { panic!() };
        assert_eq!(a, split_record(SubtaskId(0), 3, 0));
        assert_eq!(
            r.snapshot(),
            OperatorState::SplitReader {
                splits: vec![(3, 1)]
            }
        );
        assert!(matches!(r.next(), Next::Record(_)));
        assert_eq!(r.snapshot(), OperatorState::SplitReader { splits: vec![] });
        assert!(matches!(r.next(), Next::Request));
        r.assign(None);
        assert!(matches!(r.next(), Next::End));
        r.restore(&[(3, 1)]);
        let Next::Record(b) = r.next() else { panic!() };
        assert_eq!(b, split_record(SubtaskId(0), 3, 1));
    }
}
