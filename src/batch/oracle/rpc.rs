//! `rpc-order` and `no-lost-rpc` for batch jobs (P0, P3.3), from the oracle's own ledger of the
//! task RPCs (a task's RUNNING, FINISHED, FAILED, and a source's split request) each
//! TaskManager process handed to its link to the JobMaster.
//!
//! Each RPC is ranked when the task first sends it, before any outbox decides whether it goes
//! onto the wire or waits; a resend of a kept RPC is not a new send, so it keeps that rank.
//! The JobMaster must apply the RPCs of one TaskManager in rank order (a FINISHED never ahead
//! of the RUNNING before it), each at most once and only as sent by the process it names; and
//! every RPC a reconciling JobMaster refused must be applied later, unless it became moot.
//! The ledger matches RPCs by what they say, never by the model's sequence numbers.
//!
//! Reports (P3.2) are outside the order, as in the streaming oracle: they answer one election
//! and overtake what waits in the outbox.
//!
//! A TaskManager sends its kept RPCs again only while it can reach the JobMaster: alive,
//! connected, and knowing a leader (P3.3). The ledger follows each TaskManager's reach from
//! the trace (lost, started, disconnected, reconnected, leader lost and found), not from the
//! TaskManager's own flags.

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::status::ExecutionState;
use crate::trace::{self, Rpc, TraceEvent};
use sim::Instant;

/// Which task RPC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Running,
    Finished,
    Failed,
    RequestSplit,
}

/// A task RPC, as the ledger tells RPCs apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRpc {
    pub call: Call,
    pub subtask: SubtaskId,
    pub attempt: u32,
}

impl TaskRpc {
    /// The ledger's own reading of a message a TaskManager hands to its link: which task RPC
    /// it is, if any. Written here rather than asked of the model, so that a model that no
    /// longer counts, say, a FAILED update as a task's RPC (and so neither keeps nor orders
    /// it) still has it ranked and owed here.
    pub fn of(msg: Rpc) -> Option<TaskRpc> {
        let call = match msg.call {
            trace::Call::UpdateTaskExecutionState { state, .. } => match state {
                ExecutionState::Running => Call::Running,
                ExecutionState::Finished => Call::Finished,
                ExecutionState::Failed => Call::Failed,
                _ => return None,
            },
            trace::Call::RequestSplit => Call::RequestSplit,
            _ => return None,
        };
        Some(TaskRpc {
            call,
            subtask: msg.subtask,
            attempt: msg.attempt,
        })
    }

    fn describe(self, graph: &ExecutionGraph) -> String {
        let call = match self.call {
            Call::Running => "RUNNING",
            Call::Finished => "FINISHED",
            Call::Failed => "FAILED",
            Call::RequestSplit => "split request",
        };
        format!(
            "{call} of {} (attempt {})",
            graph.subtask_name(self.subtask),
            self.attempt
        )
    }
}

#[derive(Clone, Copy)]
struct Sent {
    process: u32,
    rpc: TaskRpc,
    rank: u64,
    /// When and at which event a reconciling JobMaster first refused it.
    refused: Option<(Instant, u64)>,
    /// The JobManager incarnation it went to: the leader's when sent, or the next one's while
    /// none leads; a resend readdresses every RPC its TaskManager still has outstanding.
    to: u32,
}

/// A refused RPC that was never applied: who sent it, what, when it was refused.
pub(super) struct Unapplied {
    pub tm: u32,
    pub process: u32,
    pub rpc: TaskRpc,
    pub at: Instant,
    pub index: u64,
}

pub(super) struct Ledger {
    /// Per TaskManager: RPCs sent and not applied, oldest first.
    outstanding: Vec<Vec<Sent>>,
    /// Per TaskManager: the last RPC applied and its rank.
    last_applied: Vec<Option<(u64, TaskRpc)>>,
    next_rank: u64,
    /// Per TaskManager, as the trace tells.
    reach: Vec<Reach>,
    /// The incarnation an RPC sent now goes to, and the one leading (none between a crash and
    /// the next election), as `jobmaster_lost` and `jobmaster_elected` tell.
    addressed: u32,
    leading: Option<u32>,
}

/// Whether a TaskManager can reach the JobMaster.
#[derive(Clone, Copy)]
struct Reach {
    alive: bool,
    connected: bool,
    /// It knows a leader (it registered with the current JobMaster's incarnation, F2.5).
    leader: bool,
}

impl Reach {
    /// Every TaskManager starts alive, connected, and registered with the first leader.
    const FIRST: Reach = Reach {
        alive: true,
        connected: true,
        leader: true,
    };
    const DEAD: Reach = Reach {
        alive: false,
        connected: false,
        leader: false,
    };
    /// A replacement process: connected, without a leader yet.
    const STARTED: Reach = Reach {
        alive: true,
        connected: true,
        leader: false,
    };
}

impl Ledger {
    pub(super) fn new(task_managers: usize) -> Ledger {
        Ledger {
            outstanding: (0..task_managers).map(|_| Vec::new()).collect(),
            last_applied: vec![None; task_managers],
            next_rank: 0,
            reach: vec![Reach::FIRST; task_managers],
            addressed: 0,
            leading: Some(0),
        }
    }

    /// What `event` says of a TaskManager's reach to the JobMaster; what is wrong with a
    /// reconnection or a cut, if anything. Only a live process that was cut off reconnects
    /// (P1.8): a JobMaster that takes anything else for a reconnection drops a healthy
    /// TaskManager's registration and fails its tasks. Only a live, connected process is cut
    /// off: a cut of a dead or already cut-off TaskManager changes nothing, and a model that
    /// took it for one would arm heartbeat timeouts and a reconnection the link never earned.
    pub(super) fn observe(&mut self, event: &TraceEvent) -> Option<String> {
        if let TraceEvent::TaskManagerReconnected { task_manager }
        | TraceEvent::TaskManagerDisconnected { task_manager } = *event
        {
            let reconnected = matches!(event, TraceEvent::TaskManagerReconnected { .. });
            let Reach {
                alive, connected, ..
            } = self.reach[task_manager as usize];
            let why = match (alive, connected, reconnected) {
                (false, ..) => Some("it is dead"),
                (true, true, true) => Some("its process was never cut off"),
                (true, false, false) => Some("it already was"),
                (true, false, true) | (true, true, false) => None,
            };
            if let Some(why) = why {
                self.reach[task_manager as usize].connected = alive && reconnected;
                let (what, rule) = if reconnected {
                    (
                        "reconnected to",
                        "only a live process that was cut off reconnects",
                    )
                } else {
                    ("cut off from", "only a live, connected process is cut off")
                };
                return Some(format!(
                    "TaskManager{task_manager} is {what} the JobMaster although {why}: {rule} \
                     (P1.8)"
                ));
            }
        }
        match *event {
            TraceEvent::JobMasterLost { incarnation } => {
                self.addressed = incarnation + 1;
                self.leading = None;
            }
            TraceEvent::JobMasterElected { incarnation } => {
                self.addressed = incarnation;
                self.leading = Some(incarnation);
            }
            TraceEvent::TaskManagerLost { task_manager } => {
                self.reach[task_manager as usize] = Reach::DEAD;
            }
            TraceEvent::TaskManagerStarted { task_manager } => {
                self.reach[task_manager as usize] = Reach::STARTED;
            }
            TraceEvent::TaskManagerDisconnected { task_manager }
            | TraceEvent::TaskManagerReconnected { task_manager } => {
                let up = matches!(event, TraceEvent::TaskManagerReconnected { .. });
                self.reach[task_manager as usize].connected = up;
            }
            TraceEvent::LeaderLost { task_manager } | TraceEvent::LeaderFound { task_manager } => {
                let found = matches!(event, TraceEvent::LeaderFound { .. });
                self.reach[task_manager as usize].leader = found;
            }
            _ => {}
        }
        None
    }

    /// TaskManager `tm` sends its kept RPCs again: only while it can reach the JobMaster.
    pub(super) fn resent(&mut self, tm: u32) -> Option<String> {
        for s in &mut self.outstanding[tm as usize] {
            s.to = self.addressed;
        }
        let Reach {
            alive,
            connected,
            leader,
        } = self.reach[tm as usize];
        let why = match (alive, connected, leader) {
            (false, _, _) => "is dead",
            (true, false, _) => "is disconnected from the JobManager",
            (true, true, false) => "knows no leader",
            (true, true, true) => return None,
        };
        Some(format!(
            "TaskManager{tm} sends its kept RPCs again while it {why}: they wait until it can \
             reach the JobMaster (P3.3)"
        ))
    }

    /// Process `process` of TaskManager `tm` sends `rpc` for the first time.
    pub(super) fn sent(&mut self, tm: u32, process: u32, rpc: TaskRpc) {
        self.outstanding[tm as usize].push(Sent {
            process,
            rpc,
            rank: self.next_rank,
            refused: None,
            to: self.addressed,
        });
        self.next_rank += 1;
    }

    /// The oldest outstanding send of `rpc` by `process`: with FIFO links, the one arriving.
    fn find(&self, tm: u32, process: u32, rpc: TaskRpc) -> Option<usize> {
        self.outstanding[tm as usize]
            .iter()
            .position(|s| s.process == process && s.rpc == rpc)
    }

    /// `rpc` was lost at its send (its link was cut): a first send leaves the ledger, and an
    /// identical RPC sent later is another one. A kept RPC sent again stays: it was refused, and
    /// P3.3 keeps it until it is applied, so its loss is for `no-lost-rpc` to judge.
    pub(super) fn lost(&mut self, tm: u32, process: u32, rpc: TaskRpc) {
        let outstanding = &mut self.outstanding[tm as usize];
        if let Some(i) = outstanding
            .iter()
            .rposition(|s| s.process == process && s.rpc == rpc)
        {
            if outstanding[i].refused.is_none() {
                outstanding.remove(i);
            }
        }
    }

    /// A reconciling JobMaster refused `rpc` (P3.3).
    pub(super) fn refused(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        rpc: TaskRpc,
        (now, index): (Instant, u64),
    ) -> Option<String> {
        let Some(i) = self.find(tm, process, rpc) else {
            return Some(never_sent(graph, tm, process, rpc));
        };
        let sent = &mut self.outstanding[tm as usize][i];
        sent.refused.get_or_insert((now, index));
        None
    }

    /// The JobMaster applies `rpc` as sent by TaskManager `tm`'s process `process`: it must
    /// have been sent by that process and not applied yet, and rank after the last applied.
    pub(super) fn applied(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        rpc: TaskRpc,
    ) -> Option<String> {
        let Some(i) = self.find(tm, process, rpc) else {
            return Some(never_sent(graph, tm, process, rpc));
        };
        let sent = self.outstanding[tm as usize].remove(i);
        if self.leading != Some(sent.to) {
            return Some(format!(
                "JobManager {} applied {} from TaskManager{tm}, which was sent to JobManager {}: \
                 an RPC on the wire dies with the JobManager it went to, and its TaskManager \
                 keeps it and sends it again once it reaches the next one (P3.3)",
                self.leading.map_or("none".to_owned(), |l| l.to_string()),
                rpc.describe(graph),
                sent.to
            ));
        }
        let last = self.last_applied[tm as usize].replace((sent.rank, rpc));
        let (rank, before) = last?;
        (rank > sent.rank).then(|| {
            format!(
                "TaskManager{tm} sent {} before {}, but the JobMaster applied them the other \
                 way round (P3.3: a kept RPC keeps its place; newer ones wait behind it)",
                rpc.describe(graph),
                before.describe(graph)
            )
        })
    }

    /// The RPCs a reconciling JobMaster refused that were never applied.
    pub(super) fn unapplied(&self) -> Vec<Unapplied> {
        let mut out = Vec::new();
        for (tm, sent) in self.outstanding.iter().enumerate() {
            for s in sent {
                if let Some((at, index)) = s.refused {
                    out.push(Unapplied {
                        tm: tm as u32,
                        process: s.process,
                        rpc: s.rpc,
                        at,
                        index,
                    });
                }
            }
        }
        out
    }
}

fn never_sent(graph: &ExecutionGraph, tm: u32, process: u32, rpc: TaskRpc) -> String {
    format!(
        "the JobMaster took {} from TaskManager{tm} (process {process}), which that process \
         never sent, or sent once and it was taken already (P0: an RPC is delivered at most \
         once, from the process that sent it)",
        rpc.describe(graph)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rpcs_are_sent_again_only_while_the_taskmanager_reaches_the_jobmaster() {
        let mut l = Ledger::new(2);
        assert_eq!(
            l.resent(0),
            None,
            "alive, connected, registered with the first leader"
        );
        l.observe(&TraceEvent::TaskManagerDisconnected { task_manager: 0 });
        assert!(l.resent(0).expect("cut off").contains("disconnected"));
        assert_eq!(l.resent(1), None, "another TaskManager's link is its own");
        l.observe(&TraceEvent::TaskManagerReconnected { task_manager: 0 });
        l.observe(&TraceEvent::LeaderLost { task_manager: 0 });
        assert!(l.resent(0).expect("no leader").contains("knows no leader"));
        l.observe(&TraceEvent::LeaderFound { task_manager: 0 });
        assert_eq!(l.resent(0), None);
        l.observe(&TraceEvent::TaskManagerLost { task_manager: 0 });
        assert!(l.resent(0).expect("dead").contains("is dead"));
        l.observe(&TraceEvent::TaskManagerStarted { task_manager: 0 });
        assert!(l
            .resent(0)
            .expect("a new process")
            .contains("knows no leader"));
        l.observe(&TraceEvent::LeaderFound { task_manager: 0 });
        assert_eq!(l.resent(0), None);
    }

    #[test]
    fn only_a_cut_off_live_process_reconnects() {
        let mut l = Ledger::new(2);
        let reconnect = TraceEvent::TaskManagerReconnected { task_manager: 0 };
        let found = l.observe(&reconnect).expect("never cut off");
        assert!(found.contains("never cut off"), "{found}");
        assert_eq!(
            l.observe(&TraceEvent::TaskManagerDisconnected { task_manager: 0 }),
            None
        );
        assert_eq!(l.observe(&reconnect), None, "cut off, then reconnected");
        l.observe(&TraceEvent::TaskManagerDisconnected { task_manager: 0 });
        l.observe(&TraceEvent::TaskManagerLost { task_manager: 0 });
        let found = l.observe(&reconnect).expect("dead");
        assert!(found.contains("is dead"), "{found}");
        l.observe(&TraceEvent::TaskManagerStarted { task_manager: 0 });
        assert!(
            l.observe(&reconnect).is_some(),
            "a new process is connected"
        );
    }

    #[test]
    fn only_a_connected_live_process_is_cut_off() {
        let mut l = Ledger::new(2);
        let cut = TraceEvent::TaskManagerDisconnected { task_manager: 0 };
        assert_eq!(l.observe(&cut), None, "alive and connected");
        let found = l.observe(&cut).expect("cut off twice");
        assert!(found.contains("already was"), "{found}");
        assert_eq!(
            l.observe(&TraceEvent::TaskManagerDisconnected { task_manager: 1 }),
            None,
            "another TaskManager's link is its own"
        );
        l.observe(&TraceEvent::TaskManagerReconnected { task_manager: 0 });
        assert_eq!(l.observe(&cut), None, "reconnected, then cut off again");
        l.observe(&TraceEvent::TaskManagerLost { task_manager: 0 });
        let found = l.observe(&cut).expect("dead");
        assert!(found.contains("is dead"), "{found}");
        l.observe(&TraceEvent::TaskManagerStarted { task_manager: 0 });
        assert_eq!(l.observe(&cut), None, "a new process is connected");
    }
}
