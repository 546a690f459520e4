//! The task's barrier tracker for at-least-once checkpoints (`docs/rules.md` F1.7; Flink's
//! `CheckpointBarrierTracker`).
//!
//! Nothing is blocked: records keep flowing on a channel after its barrier. The tracker only
//! counts, per pending checkpoint, which channels have delivered its barrier, and says when
//! every channel that was open at the checkpoint's first barrier has: that is when the task
//! snapshots. A channel whose EndOfPartition is processed counts as delivered for every pending
//! checkpoint (it will send no barrier any more), and a channel that delivered both is counted
//! once. Several checkpoints may be pending at once; when one is complete, the older ones are
//! dropped (they cannot complete at this task any more, and the coordinator subsumes them once
//! a newer checkpoint completes). Like the aligned handler it does not touch channels or send
//! anything itself; the task acts on what it returns.

use crate::source_mutant::{on, SourceMutant};
use sim::Instant;
use std::collections::VecDeque;

/// Flink's `MAX_CHECKPOINTS_TO_TRACK`: beyond it the oldest pending checkpoint is forgotten.
const MAX_PENDING: usize = 50;

struct Pending {
    checkpoint: u64,
    /// Per input slot: counted for this checkpoint (barrier delivered, or EndOfPartition).
    counted: Vec<bool>,
    count: u32,
    /// Channels open at its first barrier: how many it needs.
    target: u32,
    /// When its first barrier arrived (the alignment time of Flink's metrics starts there).
    started: Instant,
    /// Records the task took from counted channels meanwhile: past their barrier, so in the
    /// snapshot although they belong after the cut.
    past_barrier: u32,
    /// F1.7 step 6: the JobMaster's abort notice came while it was counted. The count goes
    /// on; when it completes the task does not snapshot it.
    aborted: bool,
}

/// A pending checkpoint every channel has now delivered: the task snapshots it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complete {
    pub checkpoint: u64,
    pub started: Instant,
    pub past_barrier: u32,
    /// F1.7 step 6: it was aborted (notified) while it was counted: no snapshot.
    pub aborted: bool,
}

#[derive(Default)]
pub struct BarrierTracker {
    /// Oldest first.
    pending: VecDeque<Pending>,
}

impl BarrierTracker {
    pub fn is_pending(&self, checkpoint: u64) -> bool {
        self.pending.iter().any(|p| p.checkpoint == checkpoint)
    }

    /// Starts tracking `checkpoint`, newer than any the task knew, with `open` channels still
    /// open: its first barrier came on `slot`, or (`slot` of `None`) a trigger RPC announced it
    /// and it waits for EndOfPartition on every open channel.
    pub fn start(
        &mut self,
        checkpoint: u64,
        slot: Option<u32>,
        (inputs, open): (usize, u32),
        now: Instant,
    ) -> Option<Complete> {
        if self.pending.len() == MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(Pending {
            checkpoint,
            counted: vec![false; inputs],
            count: 0,
            target: open,
            started: now,
            past_barrier: 0,
            aborted: false,
        });
        match slot {
            Some(slot) => self.barrier(checkpoint, slot),
            None => self.complete_if_done(self.pending.len() - 1),
        }
    }

    /// `slot` delivered the barrier of pending `checkpoint`.
    pub fn barrier(&mut self, checkpoint: u64, slot: u32) -> Option<Complete> {
        let i = self
            .pending
            .iter()
            .position(|p| p.checkpoint == checkpoint)?;
        Self::count(&mut self.pending[i], slot);
        self.complete_if_done(i)
    }

    /// EndOfPartition was processed on `slot`: it counts for every pending checkpoint, newest
    /// first, until one is complete (Flink's `checkAlignmentOnEndOfPartition`).
    pub fn end_of_partition(&mut self, slot: u32) -> Option<Complete> {
        for i in (0..self.pending.len()).rev() {
            Self::count(&mut self.pending[i], slot);
            if let Some(done) = self.complete_if_done(i) {
                return Some(done);
            }
        }
        None
    }

    /// The task took a record from `slot`: past the barrier of every pending checkpoint that
    /// counted the channel already.
    pub fn record_taken(&mut self, slot: u32) {
        for p in &mut self.pending {
            if p.counted[slot as usize] {
                p.past_barrier += 1;
            }
        }
    }

    /// F1.7 step 6: the JobMaster told the task that pending `checkpoint` was aborted. Its
    /// count goes on (Flink's `CheckpointBarrierTracker` is not told of the notice), so that it
    /// still drops the older pending checkpoints when it completes; but it completes as
    /// aborted. Returns whether it was pending.
    pub fn abort_notified(&mut self, checkpoint: u64) -> bool {
        let Some(p) = self.pending.iter_mut().find(|p| p.checkpoint == checkpoint) else {
            return false;
        };
        p.aborted = true;
        true
    }

    /// Forgets every pending checkpoint, oldest first (legacy: EndOfPartition aborts them,
    /// F1.7).
    pub fn abort_all(&mut self) -> impl Iterator<Item = u64> + '_ {
        self.pending.drain(..).map(|p| p.checkpoint)
    }

    /// F1.10: a cancellation marker for `checkpoint`: every pending checkpoint up to it is
    /// aborted here; returns them, oldest first.
    pub fn cancel_up_to(&mut self, checkpoint: u64) -> Vec<u64> {
        let mut aborted = Vec::new();
        self.pending.retain(|p| {
            // source mutant cancel-marker-exclusive
            let cancel = p.checkpoint < checkpoint
                || (p.checkpoint == checkpoint && !on(SourceMutant::CancelMarkerExclusive));
            if cancel {
                aborted.push(p.checkpoint);
            }
            !cancel
        });
        aborted
    }

    fn count(p: &mut Pending, slot: u32) {
        if !std::mem::replace(&mut p.counted[slot as usize], true) {
            p.count += 1;
        }
    }

    /// A trigger RPC completed `checkpoint` at this task without counting barriers (F1.4, or
    /// P1.3 step 5 with every input ended): as any completion, it drops the older pending
    /// checkpoints, whose barriers may still come on channels that were slow (Flink's tracker
    /// ignores a barrier older than the newest checkpoint it knows).
    pub fn completed_at_once(&mut self, checkpoint: u64) {
        self.pending.retain(|p| p.checkpoint > checkpoint);
    }

    /// Pending entry `i` is complete if it counted its target: it and every older one leave.
    fn complete_if_done(&mut self, i: usize) -> Option<Complete> {
        let p = &self.pending[i];
        if p.count < p.target {
            return None;
        }
        let done = Complete {
            checkpoint: p.checkpoint,
            started: p.started,
            past_barrier: p.past_barrier,
            aborted: p.aborted,
        };
        self.pending.drain(..=i);
        Some(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Instant = Instant::ZERO;

    /// Fuzz seed 345591 (1,000,000-seed campaign): barriers of 2 and 3 counted on one channel,
    /// then a trigger RPC completes 5 at once; 2's barrier on the slow channel must not
    /// complete 2 after 5.
    #[test]
    fn a_checkpoint_completed_at_once_drops_the_older_pending_ones() {
        let mut t = BarrierTracker::default();
        assert_eq!(t.start(2, Some(0), (2, 2), T0), None);
        assert_eq!(t.start(3, Some(0), (2, 2), T0), None);
        t.completed_at_once(5);
        assert!(!t.is_pending(2) && !t.is_pending(3));
        assert_eq!(t.barrier(2, 1), None);
        assert_eq!(t.start(6, Some(0), (2, 2), T0), None);
        t.completed_at_once(5);
        assert!(t.is_pending(6), "a newer checkpoint stays");
    }

    #[test]
    fn a_checkpoint_completes_once_every_open_channel_delivered_its_barrier() {
        let mut t = BarrierTracker::default();
        assert_eq!(t.start(1, Some(0), (3, 3), T0), None);
        assert_eq!(t.barrier(1, 0), None, "a channel counts once");
        t.record_taken(0);
        t.record_taken(1); // before its barrier: inside the cut
        assert_eq!(t.barrier(1, 2), None);
        t.record_taken(2);
        let done = t.barrier(1, 1).expect("all three");
        assert_eq!(done.checkpoint, 1);
        assert_eq!(
            done.past_barrier, 2,
            "taken from channels 0 and 2 after their barrier"
        );
        assert!(!t.is_pending(1));
        assert_eq!(t.barrier(1, 1), None, "no longer pending");
    }

    #[test]
    fn end_of_partition_counts_for_pending_checkpoints_and_a_channel_with_both_counts_once() {
        let mut t = BarrierTracker::default();
        assert_eq!(t.start(4, Some(0), (2, 2), T0), None);
        // Channel 0 delivered the barrier, then ends: still one channel counted.
        assert_eq!(t.end_of_partition(0), None);
        assert!(t.is_pending(4));
        assert_eq!(t.end_of_partition(1).map(|c| c.checkpoint), Some(4));
    }

    #[test]
    fn a_newer_complete_checkpoint_drops_the_older_pending_ones() {
        let mut t = BarrierTracker::default();
        t.start(1, Some(0), (2, 2), T0);
        t.start(2, Some(0), (2, 2), T0);
        t.start(3, Some(1), (2, 2), T0);
        assert_eq!(t.barrier(2, 1).map(|c| c.checkpoint), Some(2));
        assert!(!t.is_pending(1), "older, dropped");
        assert!(t.is_pending(3), "newer, still pending");
        // EndOfPartition goes newest first: it completes 3, which needed only channel 0.
        assert_eq!(t.end_of_partition(0).map(|c| c.checkpoint), Some(3));
    }

    #[test]
    fn a_triggered_checkpoint_waits_for_end_of_partition_on_every_open_channel() {
        let mut t = BarrierTracker::default();
        assert_eq!(t.start(5, None, (3, 2), T0), None);
        assert_eq!(t.end_of_partition(2), None);
        assert_eq!(t.end_of_partition(0).map(|c| c.checkpoint), Some(5));
        assert_eq!(
            t.start(6, None, (3, 0), T0).map(|c| c.checkpoint),
            Some(6),
            "no open channel: at once"
        );
        let mut legacy = BarrierTracker::default();
        legacy.start(7, Some(0), (2, 2), T0);
        legacy.start(8, Some(1), (2, 2), T0);
        assert_eq!(legacy.abort_all().collect::<Vec<_>>(), [7, 8]);
        assert!(!legacy.is_pending(8));
    }

    /// F1.10: a marker for 3 aborts every pending checkpoint up to 3, oldest first, and
    /// leaves the newer ones pending.
    #[test]
    fn a_cancel_marker_aborts_the_pending_checkpoints_up_to_its_own() {
        let mut t = BarrierTracker::default();
        for n in [2, 3, 5] {
            t.start(n, Some(0), (2, 2), T0);
        }
        assert_eq!(t.cancel_up_to(1), Vec::<u64>::new(), "none that old");
        assert!(t.is_pending(2));
        assert_eq!(t.cancel_up_to(3), [2, 3]);
        assert!(!t.is_pending(2) && !t.is_pending(3));
        assert!(t.is_pending(5), "newer, still pending");
        assert_eq!(t.barrier(5, 1).map(|c| c.checkpoint), Some(5));
    }

    /// F1.7 step 6: a checkpoint whose abort was notified while it was counted still counts
    /// its barriers and, when complete, drops the older pending ones, but completes as aborted.
    #[test]
    fn a_checkpoint_aborted_while_counted_completes_as_aborted() {
        let mut t = BarrierTracker::default();
        t.start(2, Some(0), (2, 2), T0);
        t.start(3, Some(0), (2, 2), T0);
        assert!(!t.abort_notified(1), "not pending");
        assert!(t.abort_notified(3));
        assert!(t.is_pending(3), "still counted");
        let done = t.barrier(3, 1).expect("every channel delivered 3");
        assert!(done.checkpoint == 3 && done.aborted);
        assert!(!t.is_pending(2), "older, dropped");
        t.start(4, Some(0), (2, 2), T0);
        assert!(!t.barrier(4, 1).expect("complete").aborted);
    }

    #[test]
    fn at_most_fifty_checkpoints_are_tracked() {
        let mut t = BarrierTracker::default();
        for n in 1..=51 {
            t.start(n, Some(0), (2, 2), T0);
        }
        assert!(!t.is_pending(1), "the oldest is forgotten");
        assert!(t.is_pending(2) && t.is_pending(51));
    }
}
