//! The batch world's RPC layer: messages with latency, FIFO per link, lost on a cut link, asked
//! about network faults; delivery with its checks (connection epoch, sender alive, leader,
//! fencing). What a TaskManager keeps for a retry (P3.3) it decides itself
//! (`crate::taskmanager::batch`, `crate::taskmanager::reconcile`).

use crate::batch::oracle::TaskRpc;
use crate::bug::Bug;
use crate::net::{Envelope, LinkId};
use crate::taskmanager::batch::Blocking;
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Rpc, TraceEvent};
use crate::world::batch::{Batch, Cluster, Sent};
use crate::world::Event;
use sim::Scheduler;

impl Cluster {
    /// Sends message number `seq` to incarnation `to_incarnation` of `to`, on the link of
    /// TaskManager `tm` (its connection: whether it is up, its epoch); whether it went on the
    /// wire. The sender counts what it has in flight.
    pub(crate) fn send_to(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: &TaskManager<Blocking>,
        (from, to, to_incarnation): (Address, Address, u32),
        msg: Rpc,
        seq: u64,
    ) -> bool {
        let link = LinkId::between(from, to);
        // A cut link loses everything sent over it.
        if !tm.connected {
            if let (Address::TaskManager(_), Some(rpc)) = (from, TaskRpc::of(msg)) {
                self.oracles.rpc_lost(tm.index, tm.process, rpc);
            }
            return false;
        }
        let now = sched.now();
        // A delay spike on RPCs adds its latency; a lost RPC is sent again by its sender after
        // `retry_after` (Flink's RPCs are retried or answered by a timeout), so it arrives that
        // much later, still in order on its link. The fault plan draws only inside a loss
        // window, so a run without network faults draws nothing here.
        let (extra, lost) = self.faults.rpc_delay(now);
        if let Some(retry) = lost {
            self.record(now, TraceEvent::RpcLost { from, to, retry });
            if self.bug == Some(Bug::ForgetLostRpc) {
                return false;
            }
        }
        let from_process = match from {
            Address::JobMaster => self.jm_incarnation,
            Address::TaskManager(_) => tm.process,
        };
        let sent = Sent {
            msg,
            epoch: tm.mode.link_epoch,
        };
        let at = self
            .rpc
            .send(now, link, seq, sent, (from_process, to_incarnation), extra);
        sched.at(at, Event::Rpc { link });
        true
    }
}

impl Batch {
    pub(crate) fn deliver(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        link: LinkId,
        envelope: Envelope<Sent>,
    ) {
        let Envelope {
            message: Sent { msg, epoch },
            seq,
            to_incarnation,
            from_incarnation: from_process,
            ..
        } = envelope;
        let (from, to, tm) = (link.from(), link.to(), link.task_manager());
        if let Address::TaskManager(t) = from {
            let sender = &mut self.tms[t as usize];
            if sender.process == from_process {
                sender.mode.wire.remove(&seq);
            }
        }
        if self.tms[tm as usize].mode.link_epoch != epoch {
            // The connection reset under it: what was on the wire is gone (P3.3: a sender
            // that keeps it learns so).
            let (t, mut ctx) = self.task_manager(sched, tm);
            t.keep_after_reset(&mut ctx, link, (seq, from_process), msg);
            return;
        }
        match to {
            Address::JobMaster => {
                let Address::TaskManager(tm) = from else {
                    unreachable!("only TaskManagers write to the JobMaster")
                };
                let sender = &mut self.tms[tm as usize];
                let sender_alive = sender.runs(from_process);
                if !sender_alive {
                    // Its connection died with it: what it still had on the wire is gone.
                    return;
                }
                sender.mode.in_flight = sender.mode.in_flight.saturating_sub(1);
                let alive = self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation() == to_incarnation);
                let connected = self.tms[tm as usize].connected;
                if self.cluster.reconcile.is_some() && msg.is_task_rpc() {
                    self.deliver_task_rpc(sched, tm, msg, (seq, from_process), alive && connected);
                } else if alive && connected {
                    if let Some((mut jm, mut ctx)) = self.jobmaster(sched, None) {
                        jm.receive(&mut ctx, tm, msg);
                    }
                }
            }
            Address::TaskManager(tm) => {
                let t = &self.tms[tm as usize];
                // Fencing (Flink's JobMasterId): a TaskManager takes what the JobMaster it
                // follows sent, and ignores an older JobMaster's once it follows a new leader or
                // none (F2.5: it stopped trusting it, as a TaskExecutor closes the JobManager
                // connection, after which it accepts no task from it).
                let fenced = t.leader != Some(from_process);
                if t.runs(to_incarnation) && t.connected && !fenced {
                    let (t, mut ctx) = self.task_manager(sched, tm);
                    t.receive(&mut ctx, msg);
                }
            }
        }
    }

    /// A task RPC reaches the JobMaster side: applied, refused while reconciling (P3.3), or
    /// kept because no JobMaster took it.
    fn deliver_task_rpc(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        msg: Rpc,
        (seq, from_process): (u64, u32),
        reachable: bool,
    ) {
        let sender_alive = self.tms[tm as usize].runs(from_process);
        // P3.3: while the sender keeps older RPCs, one that arrives from the wire joins them
        // (in send order) instead of overtaking them.
        let holding = self.tms[tm as usize].outbox.is_holding()
            && self.cluster.bug != Some(Bug::OvertakeKeptRpcs);
        if let Some((mut jm, mut ctx)) = self.jobmaster(sched, None).filter(|_| reachable) {
            let refused = jm.refuses(msg.call);
            if !refused && !holding {
                return jm.receive(&mut ctx, tm, msg);
            }
            if refused && !jm.refuse(&mut ctx, (tm, from_process), msg) {
                return;
            }
        }
        if sender_alive {
            let (t, mut ctx) = self.task_manager(sched, tm);
            t.keep_task_rpc(&mut ctx, seq, msg);
        }
    }
}
