//! P3.3: the RPCs a TaskManager keeps for its JobMaster while none accepts them.
//!
//! Under `failover: reconcile` an RPC from a TaskManager that finds no JobMaster, or one that is
//! reconciling, is not lost: the TaskManager keeps it and sends it again later. Order matters
//! (a FINISHED must not overtake the RUNNING before it), so while anything is kept the
//! TaskManager *holds*: every newer RPC joins the outbox instead of the wire, and one already
//! on the wire joins it on arrival. A retry resends the whole outbox, oldest first, once the
//! wire to the JobMaster is empty; holding guarantees it empties.
//!
//! Oldest first means first *sent* first. While the TaskManager holds, nothing but reports goes
//! onto the wire, so every RPC still on the wire was sent before every RPC held back at its
//! send: an RPC refused on arrival therefore goes behind the other refused ones but ahead of
//! every held one (two queues, resent in that order). Appending it behind the held ones let a
//! `CANCELED` overtake an acknowledgement sent before it (found by `rpc-order`, fuzz seed 931).

use crate::trace::{Call, Rpc};
use sim::Duration;
use std::collections::VecDeque;

/// How long a TaskManager waits before it sends kept RPCs again. Fixed, not exponential: a
/// reconcile window is short, and a fixed pace keeps runs easy to read.
pub const RETRY: Duration = Duration::from_millis(5);

#[derive(Default)]
pub struct Outbox {
    /// RPCs that reached a JobMaster which refused them (or none), in arrival order.
    refused: VecDeque<Rpc>,
    /// RPCs held back at their send because older ones are kept, in send order.
    held: VecDeque<Rpc>,
    /// A retry is scheduled.
    retry_scheduled: bool,
}

/// Reports belong to one election: a TaskManager never keeps them (a new JobMaster asks again).
pub fn is_report(call: Call) -> bool {
    matches!(call, Call::ReportExecution(_) | Call::ReportDone)
}

impl Outbox {
    /// Whether RPCs to the JobMaster must wait behind kept ones.
    #[inline]
    pub fn is_holding(&self) -> bool {
        !self.refused.is_empty() || !self.held.is_empty()
    }

    /// The kept RPCs, oldest first.
    pub fn kept(&self) -> impl Iterator<Item = Rpc> + '_ {
        self.refused.iter().chain(&self.held).copied()
    }

    /// Keeps an RPC that came back from the wire refused (or found no JobMaster).
    pub fn keep_refused(&mut self, rpc: Rpc) {
        self.refused.push_back(rpc);
    }

    /// Holds a new RPC back behind the kept ones.
    pub fn hold(&mut self, rpc: Rpc) {
        self.held.push_back(rpc);
    }

    /// True when RPCs are kept and no retry is scheduled yet; the caller schedules one.
    pub fn claim_retry(&mut self) -> bool {
        self.is_holding() && !std::mem::replace(&mut self.retry_scheduled, true)
    }

    /// The retry is due: hands over every kept RPC, oldest first, to be sent again.
    pub fn take(&mut self) -> VecDeque<Rpc> {
        self.retry_scheduled = false;
        let mut rpcs = std::mem::take(&mut self.refused);
        rpcs.append(&mut self.held);
        rpcs
    }

    /// The retry is due but older RPCs are still on the wire: try again later.
    pub fn retry_later(&mut self) {
        self.retry_scheduled = false;
    }

    /// The process died: what it kept is gone.
    pub fn clear(&mut self) {
        self.refused.clear();
        self.held.clear();
        self.retry_scheduled = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;
    use crate::status::ExecutionState;

    fn rpc(n: u32) -> Rpc {
        Rpc {
            subtask: SubtaskId(n),
            attempt: 0,
            call: Call::UpdateTaskExecutionState(ExecutionState::Finished),
        }
    }

    /// Refused RPCs were sent before every held one, so they go first, whatever the order in
    /// which they were kept.
    #[test]
    fn refused_rpcs_go_ahead_of_held_ones_each_in_order() {
        let mut outbox = Outbox::default();
        assert!(!outbox.is_holding());
        outbox.keep_refused(rpc(1));
        outbox.hold(rpc(3));
        outbox.keep_refused(rpc(2));
        outbox.hold(rpc(4));
        assert!(outbox.is_holding());
        let order: Vec<u32> = outbox.kept().map(|r| r.subtask.0).collect();
        assert_eq!(order, [1, 2, 3, 4]);
        let taken: Vec<u32> = outbox.take().iter().map(|r| r.subtask.0).collect();
        assert_eq!(taken, [1, 2, 3, 4]);
        assert!(!outbox.is_holding());
        outbox.hold(rpc(5));
        assert!(outbox.is_holding(), "a held RPC alone holds too");
    }

    /// One retry at a time, and none for an empty outbox.
    #[test]
    fn a_retry_is_claimed_once_and_only_with_something_kept() {
        let mut outbox = Outbox::default();
        assert!(!outbox.claim_retry(), "nothing kept");
        outbox.hold(rpc(1));
        assert!(outbox.claim_retry());
        assert!(!outbox.claim_retry(), "already scheduled");
        outbox.retry_later();
        assert!(outbox.claim_retry(), "the retry moved on");
        outbox.clear();
        assert!(!outbox.is_holding());
        assert!(!outbox.claim_retry(), "the process died: nothing kept");
    }
}
