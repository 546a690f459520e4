//! P3.3: the RPCs a TaskManager keeps for its JobMaster while none accepts them.
//!
//! Under `failover: reconcile` an RPC from a TaskManager that finds no JobMaster, or one that is
//! reconciling, is not lost: the TaskManager keeps it and sends it again later. Order matters
//! (a FINISHED must not overtake the RUNNING before it), so while anything is kept the
//! TaskManager *holds*: every newer RPC joins the outbox instead of the wire, and one already
//! on the wire joins it on arrival. A retry resends the whole outbox, oldest first, once the
//! wire to the JobMaster is empty; holding guarantees it empties.
//!
//! Oldest first means first *sent* first, so every RPC a TaskManager sends to the JobMaster
//! gets a send number, carried on the wire, and the outbox is ordered by it. While the
//! TaskManager holds, nothing but reports goes onto the wire, so every RPC still on the wire
//! was sent before every RPC held back at its send, and one refused on arrival goes behind the
//! other refused ones but ahead of every held one. (Appending it behind the held ones let a
//! `CANCELED` overtake an acknowledgement sent before it: found by `rpc-order`, fuzz seed 931.)
//!
//! Streaming and batch TaskManagers keep the same message, an [`Rpc`]: one vocabulary for
//! both kinds of job (`crate::trace::rpc`).

use crate::trace::{Call, Rpc};
use crate::world::Event;
use sim::{Duration, Scheduler};
use std::collections::BTreeMap;

/// How long a TaskManager waits before it sends kept RPCs again. Fixed, not exponential: a
/// reconcile window is short, and a fixed pace keeps runs easy to read.
pub const RETRY: Duration = Duration::from_millis(5);

#[derive(Default)]
pub struct Outbox {
    /// The kept RPCs by send number: refused on arrival, or held back at their send.
    kept: BTreeMap<u64, Rpc>,
    /// The number the next RPC to the JobMaster gets. It goes on counting across a restart:
    /// only the order within one process matters.
    next_seq: u64,
    /// A retry is scheduled.
    retry_scheduled: bool,
}

/// Reports belong to one election: a TaskManager never keeps them (a new JobMaster asks again).
pub fn is_report(call: Call) -> bool {
    matches!(call, Call::ReportExecution { .. } | Call::ReportDone)
}

impl Outbox {
    /// The send number of a new RPC to the JobMaster.
    #[inline]
    pub fn number(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Whether RPCs to the JobMaster must wait behind kept ones.
    #[inline]
    pub fn is_holding(&self) -> bool {
        !self.kept.is_empty()
    }

    /// The kept RPCs, oldest first.
    pub fn kept(&self) -> impl Iterator<Item = Rpc> + '_ {
        self.kept.values().copied()
    }

    /// Keeps RPC number `seq`: it came back from the wire refused (or found no JobMaster), or
    /// it is held back at its send behind the kept ones.
    pub fn keep(&mut self, seq: u64, rpc: Rpc) {
        self.kept.insert(seq, rpc);
    }

    /// True when RPCs are kept and no retry is scheduled yet; the caller schedules one.
    pub fn claim_retry(&mut self) -> bool {
        self.is_holding() && !std::mem::replace(&mut self.retry_scheduled, true)
    }

    /// Schedules the retry of TaskManager `task_manager`'s outbox (its process `process`: the
    /// retry dies with it), unless nothing is kept or a retry is scheduled already.
    pub fn schedule_retry(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        task_manager: u32,
        process: u32,
    ) {
        if self.claim_retry() {
            sched.after(
                RETRY,
                Event::RetryParked {
                    task_manager,
                    process,
                },
            );
        }
    }

    /// The retry is due: hands over every kept RPC with its send number, oldest first, to be
    /// sent again.
    pub fn take(&mut self) -> BTreeMap<u64, Rpc> {
        self.retry_scheduled = false;
        std::mem::take(&mut self.kept)
    }

    /// The retry is due but cannot go now (older RPCs are still on the wire, or there is no
    /// leader to send to): a later one may be scheduled.
    pub fn retry_later(&mut self) {
        self.retry_scheduled = false;
    }

    /// The process died: what it kept is gone.
    pub fn clear(&mut self) {
        self.kept.clear();
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
            call: Call::update(ExecutionState::Finished),
        }
    }

    /// Refused RPCs were sent before every held one, so they go first, whatever the order in
    /// which they were kept: the outbox goes by send number.
    #[test]
    fn kept_rpcs_go_in_send_order_whatever_order_they_were_kept_in() {
        let mut outbox = Outbox::default();
        assert!(!outbox.is_holding());
        let seqs: Vec<u64> = (0..4).map(|_| outbox.number()).collect();
        assert_eq!(seqs, [0, 1, 2, 3]);
        outbox.keep(0, rpc(1)); // refused on arrival
        outbox.keep(2, rpc(3)); // held at its send
        outbox.keep(1, rpc(2)); // refused later, but sent before the held one
        outbox.keep(3, rpc(4));
        assert!(outbox.is_holding());
        let order: Vec<u32> = outbox.kept().map(|r| r.subtask.0).collect();
        assert_eq!(order, [1, 2, 3, 4]);
        let taken: Vec<(u64, u32)> = outbox
            .take()
            .into_iter()
            .map(|(n, r)| (n, r.subtask.0))
            .collect();
        assert_eq!(taken, [(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert!(!outbox.is_holding());
        let seq = outbox.number();
        assert_eq!(seq, 4, "numbers are never reused");
        outbox.keep(seq, rpc(5));
        assert!(outbox.is_holding(), "a held RPC alone holds too");
    }

    /// One retry at a time, and none for an empty outbox.
    #[test]
    fn a_retry_is_claimed_once_and_only_with_something_kept() {
        let mut outbox = Outbox::default();
        assert!(!outbox.claim_retry(), "nothing kept");
        outbox.keep(0, rpc(1));
        assert!(outbox.claim_retry());
        assert!(!outbox.claim_retry(), "already scheduled");
        outbox.retry_later();
        assert!(outbox.claim_retry(), "the retry moved on");
        outbox.clear();
        assert!(!outbox.is_holding());
        assert!(!outbox.claim_retry(), "the process died: nothing kept");
    }
}
