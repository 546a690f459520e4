//! Flink's `SplitAssignmentTracker` (F1.13): which splits the enumerator assigned to which
//! reader since the last completed checkpoint, grouped by the checkpoint that first covers
//! them, so that a reader restarted from a checkpoint gets back, through the enumerator,
//! exactly the splits its restored state does not hold.
//!
//! A split assigned before checkpoint `c`'s coordinator snapshot is in the reader's state of
//! `c`: the assignment RPC is on the reader's TaskManager link ahead of `c`'s trigger, and links
//! deliver in order. One assigned after it is not, and the coordinator's snapshot of `c` still
//! lists it unassigned.

use std::collections::BTreeMap;

/// The assignments since the last completed checkpoint, per reader subtask index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitAssignmentTracker {
    /// Checkpoint id → subtask index → splits assigned after the checkpoint before it and
    /// before this one's coordinator snapshot (Flink's `assignmentsByCheckpointId`).
    by_checkpoint: BTreeMap<u64, BTreeMap<u32, Vec<u32>>>,
    /// Assigned since the latest coordinator snapshot (`uncheckpointedAssignments`).
    uncheckpointed: BTreeMap<u32, Vec<u32>>,
}

impl SplitAssignmentTracker {
    /// `recordSplitAssignment`.
    pub fn record(&mut self, subtask: u32, split: u32) {
        self.uncheckpointed.entry(subtask).or_default().push(split);
    }

    /// F1.13 step 2 (`snapshotState`): the coordinator is checkpointed for `checkpoint`; what was
    /// assigned so far is covered by it.
    pub fn snapshot(&mut self, checkpoint: u64) {
        let covered = std::mem::take(&mut self.uncheckpointed);
        self.by_checkpoint.insert(checkpoint, covered);
    }

    /// F1.13 step 5 (`onCheckpointComplete`): assignments covered by a completed checkpoint are
    /// in its readers' state for good.
    pub fn on_checkpoint_complete(&mut self, checkpoint: u64) {
        self.by_checkpoint.retain(|&c, _| c > checkpoint);
    }

    /// F1.13 step 4 (`getAndRemoveUncheckpointedAssignment`): the splits `subtask` was assigned
    /// after checkpoint `restored` (0: none), which its restored state does not hold.
    pub fn take_after(&mut self, subtask: u32, restored: u64) -> Vec<u32> {
        let mut splits = Vec::new();
        for (_, assignments) in self.by_checkpoint.range_mut(restored + 1..) {
            splits.extend(assignments.remove(&subtask).unwrap_or_default());
        }
        splits.extend(self.uncheckpointed.remove(&subtask).unwrap_or_default());
        splits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_takes_back_only_what_the_restored_checkpoint_does_not_cover() {
        let mut t = SplitAssignmentTracker::default();
        t.record(0, 4);
        t.snapshot(1);
        t.record(0, 5);
        t.record(1, 6);
        t.snapshot(2);
        t.record(0, 7);
        assert_eq!(t.take_after(0, 1), vec![5, 7], "split 4 is in checkpoint 1");
        assert_eq!(t.take_after(0, 1), Vec::<u32>::new(), "taken once");
        t.on_checkpoint_complete(2);
        assert_eq!(
            t.take_after(1, 2),
            Vec::<u32>::new(),
            "split 6 is in checkpoint 2"
        );
    }
}
