//! The operator coordinator of a source: a split enumerator that assigns splits on request
//! (P2.5 in batch jobs, with the batch snapshot FLIP-383 adds; F1.13 in streaming jobs, with
//! the checkpointed set of unassigned splits).
//!
//! Assignment is deterministic (lowest split first), so a re-run that reads other splits
//! than the first attempt did is a consequence of the protocol (a reset returning splits),
//! never of chance.

use std::collections::BTreeSet;

/// One source vertex's split enumerator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enumerator {
    unassigned: BTreeSet<u32>,
    /// Per subtask index: the splits assigned to it since it (last) started.
    assigned: Vec<Vec<u32>>,
    /// Per subtask index: it was told that no split is left, so it may finish any moment;
    /// a split handed to it now could arrive after it finished and be lost. It gets none
    /// until it is reset.
    exhausted: Vec<bool>,
}

impl Enumerator {
    /// A fresh enumerator: every split unassigned.
    pub fn new(splits: u32, subtasks: u32) -> Enumerator {
        Enumerator {
            unassigned: (0..splits).collect(),
            assigned: vec![Vec::new(); subtasks as usize],
            exhausted: vec![false; subtasks as usize],
        }
    }

    /// P3.2: an enumerator rebuilt from what the readers reported they were assigned; every
    /// other split is unassigned.
    pub fn rebuild(splits: u32, assigned: Vec<Vec<u32>>) -> Enumerator {
        let taken: BTreeSet<u32> = assigned.iter().flatten().copied().collect();
        Enumerator {
            unassigned: (0..splits).filter(|s| !taken.contains(s)).collect(),
            exhausted: vec![false; assigned.len()],
            assigned,
        }
    }

    /// The next split for `subtask`, or `None` when every split is handed out.
    pub fn next_split(&mut self, subtask: u32) -> Option<u32> {
        if self.exhausted[subtask as usize] {
            return None;
        }
        let Some(split) = self.unassigned.pop_first() else {
            self.exhausted[subtask as usize] = true;
            return None;
        };
        self.assigned[subtask as usize].push(split);
        Some(split)
    }

    /// Flink's `subtaskReset`: the splits of a subtask that runs again go back to the pool.
    pub fn subtask_reset(&mut self, subtask: u32) {
        let returned = std::mem::take(&mut self.assigned[subtask as usize]);
        self.unassigned.extend(returned);
        self.exhausted[subtask as usize] = false;
    }

    /// F1.13 step 3: an enumerator reset to a checkpoint (Flink's `resetToCheckpoint`): the
    /// splits unassigned when the coordinator was checkpointed; every reader may ask again.
    pub fn restore(unassigned: &[u32], subtasks: u32) -> Enumerator {
        Enumerator {
            unassigned: unassigned.iter().copied().collect(),
            assigned: vec![Vec::new(); subtasks as usize],
            exhausted: vec![false; subtasks as usize],
        }
    }

    /// F1.13 step 2: the coordinator's checkpoint, the splits nobody was assigned yet.
    pub fn unassigned(&self) -> Vec<u32> {
        self.unassigned.iter().copied().collect()
    }

    /// F1.13 step 4: Flink's `addSplitsBack` after `subtaskReset`: the splits a reader was
    /// assigned after the checkpoint it restarts from go back to the pool, and the reader may
    /// ask again (its new attempt has not been told that no split is left).
    pub fn add_splits_back(&mut self, subtask: u32, splits: &[u32]) {
        let assigned = &mut self.assigned[subtask as usize];
        assigned.retain(|s| !splits.contains(s));
        self.unassigned.extend(splits.iter().copied());
        self.exhausted[subtask as usize] = false;
    }

    /// Encoded size of a snapshot, for the job event store's write buffer.
    pub fn snapshot_bytes(&self) -> u64 {
        16 + 8 * (self.unassigned.len() + self.assigned.iter().map(Vec::len).sum::<usize>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_returns_exactly_the_subtasks_splits() {
        let mut e = Enumerator::new(4, 2);
        assert_eq!(e.next_split(0), Some(0));
        assert_eq!(e.next_split(1), Some(1));
        assert_eq!(e.next_split(0), Some(2));
        e.subtask_reset(0);
        assert_eq!(e.next_split(1), Some(0));
        assert_eq!(e.next_split(1), Some(2));
        assert_eq!(e.next_split(1), Some(3));
        assert_eq!(e.next_split(1), None);
    }

    /// The encoded size the job event store's write buffer counts (P2.2): 16 bytes and 8 per
    /// split, whether assigned or not.
    #[test]
    fn a_snapshot_is_16_bytes_and_8_per_split() {
        let mut e = Enumerator::new(4, 2);
        assert_eq!(e.snapshot_bytes(), 48);
        e.next_split(0);
        assert_eq!(
            e.snapshot_bytes(),
            48,
            "an assigned split is still in the snapshot"
        );
        let rebuilt = Enumerator::rebuild(5, vec![vec![1], vec![2, 3]]);
        assert_eq!(rebuilt.snapshot_bytes(), 56);
    }

    #[test]
    fn splits_added_back_are_assigned_again_and_the_reader_may_ask() {
        let mut e = Enumerator::new(2, 2);
        assert_eq!(e.next_split(0), Some(0));
        assert_eq!(e.next_split(0), Some(1));
        assert_eq!(e.next_split(0), None);
        e.add_splits_back(0, &[1]);
        assert_eq!(e.unassigned(), vec![1]);
        assert_eq!(e.next_split(0), Some(1));
        let restored = Enumerator::restore(&[0, 1], 2);
        assert_eq!(restored, Enumerator::new(2, 2));
    }

    #[test]
    fn a_reader_told_no_split_is_left_gets_none_until_reset() {
        let mut e = Enumerator::new(2, 2);
        assert_eq!(e.next_split(0), Some(0));
        assert_eq!(e.next_split(1), Some(1));
        assert_eq!(e.next_split(0), None);
        e.subtask_reset(1);
        assert_eq!(e.next_split(0), None, "subtask 0 may have finished already");
        assert_eq!(e.next_split(1), Some(1));
    }
}
