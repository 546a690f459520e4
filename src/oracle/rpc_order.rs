//! `rpc-order`: on every RPC link, the receiver applies RPCs in the order they were first sent
//! (P0: a link never reorders; P3.3: an RPC a TaskManager keeps and resends keeps its place).
//!
//! The oracle keeps its own ledger of sends, fed by every RPC handed to a link
//! ([`RpcOrder::sent`], called where the sender hands it over, before any outbox decides what
//! to do with it), so a resend of a kept RPC keeps the rank of its first send. Each RPC the
//! receiver applies (`TraceEvent::Rpc`) must rank above the last one applied on that link;
//! a dropped RPC (its sender or receiver died, or it was fenced) leaves the ledger.
//!
//! Reconciliation reports (`ReportExecution`, `ReportDone`) are outside the order: they answer
//! one election and go straight onto the wire while older RPCs wait in the outbox (P3.2), so
//! they are meant to overtake those.

use super::invariant::Invariant;
use super::Violation;
use crate::graph::ExecutionGraph;
use crate::trace::{Address, Call, Rpc, TraceEvent};
use sim::Instant;

/// One RPC of the ledger: what, its rank in send order, and when it was first sent.
#[derive(Clone, Copy)]
struct Sent {
    rpc: Rpc,
    rank: u64,
    at: Instant,
}

#[derive(Default)]
struct Link {
    /// Sent and neither applied nor dropped yet, oldest first.
    outstanding: Vec<Sent>,
    /// The last RPC applied on this link.
    last_applied: Option<Sent>,
}

pub struct RpcOrder {
    /// `2·tm`: JobMaster → TaskManager `tm`; `2·tm + 1`: the way back (as `net::LinkId`).
    links: Vec<Link>,
    next_rank: u64,
}

fn link_index(from: Address, to: Address) -> Option<usize> {
    match (from, to) {
        (Address::JobMaster, Address::TaskManager(tm)) => Some(2 * tm as usize),
        (Address::TaskManager(tm), Address::JobMaster) => Some(2 * tm as usize + 1),
        _ => None,
    }
}

/// Reports of a reconciliation (P3.2), which are not ordered with the other RPCs.
fn is_report(rpc: &Rpc) -> bool {
    matches!(rpc.call, Call::ReportExecution { .. } | Call::ReportDone)
}

fn name(a: Address) -> String {
    match a {
        Address::JobMaster => "JobMaster".to_owned(),
        Address::TaskManager(tm) => format!("TaskManager{tm}"),
    }
}

impl RpcOrder {
    pub fn new() -> RpcOrder {
        RpcOrder {
            links: Vec::new(),
            next_rank: 0,
        }
    }

    /// `rpc` is handed to the link `from → to` now. An RPC already outstanding there is a
    /// resend: it keeps its first rank.
    pub fn sent(&mut self, from: Address, to: Address, rpc: Rpc, now: Instant) {
        let Some(i) = link_index(from, to).filter(|_| !is_report(&rpc)) else {
            return;
        };
        if self.links.len() <= i {
            self.links.resize_with(i + 1, Link::default);
        }
        let link = &mut self.links[i];
        if link.outstanding.iter().any(|s| s.rpc == rpc) {
            return;
        }
        link.outstanding.push(Sent {
            rpc,
            rank: self.next_rank,
            at: now,
        });
        self.next_rank += 1;
    }

    /// Removes `rpc` from the ledger of `link`, returning its entry.
    fn settle(&mut self, from: Address, to: Address, rpc: Rpc) -> Option<(usize, Sent)> {
        let i = link_index(from, to)?;
        let link = self.links.get_mut(i)?;
        let k = link.outstanding.iter().position(|s| s.rpc == rpc)?;
        Some((i, link.outstanding.remove(k)))
    }

    #[inline]
    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) -> Option<Violation> {
        match *event {
            TraceEvent::Rpc { from, to, rpc, .. } => {
                let (i, applied) = self.settle(from, to, rpc)?;
                let link = &mut self.links[i];
                let previous = link.last_applied.replace(applied);
                let earlier = previous.filter(|p| p.rank > applied.rank)?;
                Some(Violation {
                    invariant: Invariant::RpcOrder,
                    time: now,
                    actors: vec![name(from), name(to)],
                    event_index: index,
                    message: format!(
                        "{} applied {:?} of {} attempt {} (first sent at {}) after {:?} of {} \
                         attempt {} (first sent later, at {}): the link {} → {} delivered out of \
                         send order (P0, P3.3)",
                        name(to),
                        applied.rpc.call,
                        graph.subtask_name(applied.rpc.subtask),
                        applied.rpc.attempt,
                        applied.at,
                        earlier.rpc.call,
                        graph.subtask_name(earlier.rpc.subtask),
                        earlier.rpc.attempt,
                        earlier.at,
                        name(from),
                        name(to)
                    ),
                })
            }
            TraceEvent::RpcDropped { from, to, rpc, .. } => {
                self.settle(from, to, rpc);
                None
            }
            // What a TaskManager kept or had on the wire dies with it.
            TraceEvent::TaskManagerLost { task_manager } => {
                for i in [2 * task_manager as usize, 2 * task_manager as usize + 1] {
                    if let Some(link) = self.links.get_mut(i) {
                        link.outstanding.clear();
                    }
                }
                None
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;
    use crate::status::ExecutionState;

    fn graph() -> ExecutionGraph {
        crate::oracle::tests::source_to_sink()
    }

    fn rpc(subtask: u32, state: ExecutionState) -> Rpc {
        Rpc {
            subtask: SubtaskId(subtask),
            attempt: 0,
            call: Call::update(state),
        }
    }

    const TM: Address = Address::TaskManager(3);
    const JM: Address = Address::JobMaster;

    fn applied(from: Address, to: Address, rpc: Rpc) -> TraceEvent {
        TraceEvent::Rpc {
            from,
            to,
            sent_at: Instant::ZERO,
            rpc,
        }
    }

    #[test]
    fn an_rpc_applied_after_a_later_one_is_out_of_order_in_either_direction() {
        let g = graph();
        for (from, to) in [(TM, JM), (JM, TM)] {
            let mut o = RpcOrder::new();
            let (a, b) = (
                rpc(0, ExecutionState::Running),
                rpc(0, ExecutionState::Finished),
            );
            o.sent(from, to, a, Instant::ZERO);
            o.sent(from, to, b, Instant::from_nanos(5));
            // A resend of `a` keeps its first rank.
            o.sent(from, to, a, Instant::from_nanos(9));
            assert!(o
                .observe(&g, 1, Instant::ZERO, &applied(from, to, b))
                .is_none());
            let v = o
                .observe(&g, 2, Instant::ZERO, &applied(from, to, a))
                .expect("out of order");
            assert_eq!(v.invariant, Invariant::RpcOrder);
            assert_eq!(v.event_index, 2);
            let mut actors = vec![name(from), name(to)];
            assert_eq!(v.actors, actors);
            actors.sort();
            assert_eq!(actors, ["JobMaster", "TaskManager3"]);
        }
    }

    #[test]
    fn a_dropped_or_lost_rpc_leaves_the_ledger_so_a_new_send_ranks_anew() {
        let g = graph();
        let (a, b) = (
            rpc(1, ExecutionState::Running),
            rpc(0, ExecutionState::Running),
        );
        let gone: [TraceEvent; 2] = [
            TraceEvent::RpcDropped {
                from: TM,
                to: JM,
                rpc: a,
                fenced: false,
            },
            TraceEvent::TaskManagerLost { task_manager: 3 },
        ];
        // A drop settles one link; a lost TaskManager both of its links.
        let cases = [
            (gone[0], vec![(TM, JM)]),
            (gone[1], vec![(TM, JM), (JM, TM)]),
        ];
        for (event, links) in cases {
            for (from, to) in links {
                let mut o = RpcOrder::new();
                o.sent(from, to, a, Instant::ZERO);
                assert!(o.observe(&g, 1, Instant::ZERO, &event).is_none());
                o.sent(from, to, b, Instant::from_nanos(1));
                o.sent(from, to, a, Instant::from_nanos(2)); // a new send, not a resend
                assert!(o
                    .observe(&g, 2, Instant::ZERO, &applied(from, to, b))
                    .is_none());
                assert!(o
                    .observe(&g, 3, Instant::ZERO, &applied(from, to, a))
                    .is_none());
            }
        }
    }

    #[test]
    fn reports_are_outside_the_order() {
        let g = graph();
        let mut o = RpcOrder::new();
        let kept = rpc(0, ExecutionState::Finished);
        let report = Rpc {
            subtask: SubtaskId(0),
            attempt: 0,
            call: Call::ReportDone,
        };
        o.sent(TM, JM, kept, Instant::ZERO);
        o.sent(TM, JM, report, Instant::from_nanos(1));
        assert!(o
            .observe(&g, 1, Instant::ZERO, &applied(TM, JM, report))
            .is_none());
        assert!(o
            .observe(&g, 2, Instant::ZERO, &applied(TM, JM, kept))
            .is_none());
    }
}
