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
    matches!(rpc.call, Call::ReportExecution(_) | Call::ReportDone)
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
