//! The batch world (P2): a JobMaster with the adaptive batch scheduler, TaskManagers that
//! hold result partitions, an optional remote shuffle service, the durable job event store,
//! and the dispatch of kernel events among them.
//!
//! Like the streaming world, actors learn of each other only through messages with latency
//! (FIFO per link, dropped when the receiving process died or the link is cut), and crashes
//! drop volatile state: the JobMaster's execution graph, enumerators and write buffer, a
//! TaskManager's tasks and (internal shuffle) partitions. Data moves through partitions, read
//! whole when a consumer starts (blocking exchanges).

mod reconcile;
#[cfg(test)]
mod tests;

use super::coordinator::Enumerator;
use super::data::{self, Fragment};
use super::events::{replay, JobEvent, JobEventStore, Location, Replayed, Snapshot};
use super::oracle::{BatchOracles, Call, Received, TaskRpc};
use super::recovery::{self, Plan};
use crate::bug::Bug;
use crate::faults::FaultPlan;
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::scenario::{Batch, FaultKind, Scenario, ShuffleKind};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{
    Address, FaultEvent, FlushReason, Logged, ReconcileOutcome, RerunReason, Retain, Trace,
    TraceEvent,
};
use sim::{Duration, Instant, Model, RandomStreams, Scheduler, Stream};
use std::collections::BTreeSet;

/// A message between the JobMaster and a TaskManager.
#[derive(Clone, Copy, Debug)]
pub enum Msg {
    // JobMaster → TaskManager.
    Deploy {
        subtask: SubtaskId,
        attempt: u32,
    },
    Cancel {
        subtask: SubtaskId,
        attempt: u32,
    },
    Release {
        subtask: SubtaskId,
        attempt: u32,
    },
    /// F2.4 step 1: `getAndRetainPartitionWithMetrics`.
    AskPartitions,
    AssignSplit {
        subtask: SubtaskId,
        attempt: u32,
        split: Option<u32>,
    },
    // TaskManager → JobMaster.
    Register,
    Running {
        subtask: SubtaskId,
        attempt: u32,
    },
    Finished {
        subtask: SubtaskId,
        attempt: u32,
    },
    Failed {
        subtask: SubtaskId,
        attempt: u32,
        missing: Option<SubtaskId>,
    },
    RequestSplit {
        subtask: SubtaskId,
        attempt: u32,
    },
    /// F2.4: a partition kept across the JobManager's absence, with its metrics (bytes).
    Report {
        subtask: SubtaskId,
        attempt: u32,
        bytes: u64,
    },
    /// P3.2 (`failover: reconcile`): an execution this TaskManager hosts, its state and its
    /// vertex's parallelism (from the deployment descriptor).
    ReportExecution {
        subtask: SubtaskId,
        attempt: u32,
        state: ExecutionState,
        parallelism: u32,
    },
    /// P3.2: a split a reported source execution was assigned (its reader's state).
    ReportSplit {
        subtask: SubtaskId,
        attempt: u32,
        split: u32,
    },
    /// P3.2: a partition a reported execution consumed (from its deployment descriptor).
    ReportInput {
        subtask: SubtaskId,
        attempt: u32,
        producer: SubtaskId,
        producer_attempt: u32,
    },
    /// P3.2: the TaskManager's report is complete.
    ReportDone,
}

impl Msg {
    /// A task's RPC to the JobMaster: refused while it reconciles and retried (P3.3).
    fn task_rpc(self) -> Option<TaskRpc> {
        let (call, subtask, attempt) = match self {
            Msg::Running { subtask, attempt } => (Call::Running, subtask, attempt),
            Msg::Finished { subtask, attempt } => (Call::Finished, subtask, attempt),
            Msg::Failed {
                subtask, attempt, ..
            } => (Call::Failed, subtask, attempt),
            Msg::RequestSplit { subtask, attempt } => (Call::RequestSplit, subtask, attempt),
            _ => return None,
        };
        Some(TaskRpc {
            call,
            subtask,
            attempt,
        })
    }

    fn is_task_rpc(self) -> bool {
        self.task_rpc().is_some()
    }

    /// What `reconcile-outcome` learns when the JobMaster takes this message (a registration
    /// is told separately, once the JobMaster dropped any older process of the sender).
    fn received(self) -> Option<Received> {
        Some(match self {
            Msg::ReportExecution {
                subtask,
                attempt,
                state,
                parallelism,
            } => Received::Execution {
                subtask,
                attempt,
                state,
                parallelism,
            },
            Msg::ReportSplit {
                subtask,
                attempt,
                split,
            } => Received::Split {
                subtask,
                attempt,
                split,
            },
            Msg::ReportInput {
                subtask,
                attempt,
                producer,
                producer_attempt,
            } => Received::Input {
                subtask,
                attempt,
                producer,
                producer_attempt,
            },
            Msg::Report {
                subtask, attempt, ..
            } => Received::Partition { subtask, attempt },
            Msg::ReportDone => Received::Done,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Event {
    Start,
    Deliver {
        msg: Msg,
        from: Address,
        to: Address,
        /// A TaskManager's send order (P3.3 keeps refused RPCs in it), and the sender's
        /// process: a TaskManager's, or the JobMaster's incarnation.
        seq: u64,
        from_process: u32,
        /// The TaskManager's connection it went out on: a disconnection resets the
        /// connection, and what was on the wire is gone.
        epoch: u32,
        /// The receiving process's incarnation when sent: a message to a process that died
        /// since is lost.
        to_incarnation: u32,
    },
    /// A task's current work (reading one split, or processing its input) is done.
    TaskStep {
        subtask: SubtaskId,
        attempt: u32,
    },
    FlushTick {
        incarnation: u32,
    },
    Fault {
        index: u32,
    },
    /// The TaskManagers notice that JobMaster `incarnation` is gone.
    JobMasterTimeout {
        incarnation: u32,
    },
    JobMasterElected,
    /// JobMaster `incarnation` notices that TaskManager process `process` is gone.
    TaskManagerTimeout {
        task_manager: u32,
        process: u32,
        incarnation: u32,
    },
    /// TaskManager process `process`, cut off, notices that its JobMaster is gone.
    LeaderTimeout {
        task_manager: u32,
        process: u32,
    },
    TaskManagerRestart {
        task_manager: u32,
    },
    Reconnect {
        task_manager: u32,
    },
    /// P2.4: `previous_worker_timeout` of JobMaster `incarnation` passed.
    WorkerTimeout {
        incarnation: u32,
    },
    RestartDelay {
        incarnation: u32,
    },
    /// P3.4: the reconcile window of JobMaster `incarnation` closes.
    ReconcileTimeout {
        incarnation: u32,
    },
    /// P3.3: TaskManager process `process` sends its kept RPCs again.
    RetryParked {
        task_manager: u32,
        process: u32,
    },
}

/// What a deployment carries besides the attempt (Flink's `TaskDeploymentDescriptor`): its
/// vertex's decided parallelism and, per input, the producer attempt and where its partition is.
#[derive(Clone, Debug, Default)]
struct Descriptor {
    attempt: u32,
    parallelism: u32,
    inputs: Vec<(usize, SubtaskId, u32, Location)>,
}

/// A result partition as its holder keeps it.
struct Partition {
    producer: SubtaskId,
    attempt: u32,
    fragments: Vec<Fragment>,
}

struct TaskManager {
    process: u32,
    alive: bool,
    connected: bool,
    /// The JobMaster incarnation it works for.
    leader: Option<u32>,
    partitions: Vec<Partition>,
    /// P3.3: RPCs no JobMaster accepted yet, by send order.
    outbox: std::collections::BTreeMap<u64, Msg>,
    next_seq: u64,
    /// Its RPCs on the wire to the JobMaster: kept ones are resent only once it is empty,
    /// so a resent RPC never overtakes an older one.
    in_flight: u32,
    /// P3.3: its task RPCs on the wire by send order, until they arrive (applied, refused
    /// and kept, or lost with a connection, which it learns of on arrival).
    wire: std::collections::BTreeMap<u64, Msg>,
    retry_scheduled: bool,
    /// Bumped by every disconnection.
    link_epoch: u32,
}

/// A running attempt, on its TaskManager.
struct Task {
    attempt: u32,
    task_manager: u32,
    /// The TaskManager process it runs in: a replacement process knows nothing of it.
    process: u32,
    state: ExecutionState,
    output: Vec<Fragment>,
    started: Instant,
    /// When it reached a terminal state (P3.1: kept for `terminal_state_retention`).
    ended: Option<Instant>,
    /// A source's splits so far (its reader's state, reported under P3.2).
    splits: Vec<u32>,
    /// Its vertex's parallelism, from the deployment descriptor.
    parallelism: u32,
    /// A source asked for a split and has no answer yet.
    awaiting_split: bool,
    /// The producer attempts whose partitions it read.
    inputs: Vec<(SubtaskId, u32)>,
}

/// The JobMaster's view of one execution vertex.
#[derive(Clone, Copy)]
struct Execution {
    state: ExecutionState,
    attempt: u32,
    /// The TaskManager the attempt was deployed to.
    placed: Option<u32>,
    /// A reset subtask waits for the restart delay.
    hold_until: Instant,
}

/// The JobMaster: volatile, rebuilt by every elected leader.
pub(super) struct JobMaster {
    pub incarnation: u32,
    pub status: JobStatus,
    exec: Vec<Execution>,
    /// Per vertex: the decided parallelism, once initialized.
    pub parallelism: Vec<Option<u32>>,
    /// Per producer subtask: its tracked partition (attempt, location, bytes).
    pub tracker: Vec<Option<(u32, Location, u64)>>,
    pub enumerators: Vec<Option<Enumerator>>,
    /// P2.5 rule 2: a coordinator without batch snapshots whose subtasks all finished.
    pub remembered: Vec<bool>,
    registered: Vec<Option<u32>>,
    /// P0, P3.2: per TaskManager, whether this JobMaster knows what occupies its slots. One
    /// that keeps tasks across a leader change (reconciliation) is deployed to only once its
    /// report is in; until then a task an earlier JobMaster left there may hold a slot.
    accounted: Vec<bool>,
    slots_used: Vec<u32>,
    /// When this JobMaster last attached a snapshot to a finished event; `None` before its
    /// first. F2.3: Flink measures `snapshot.min-pause` from its last snapshot, and a JobMaster
    /// that has taken none snapshots at once (every recorded Flink 2.3 run shows the first
    /// finished event with a snapshot, see README "Conformance with Flink 2.3").
    last_snapshot: Option<Instant>,
    /// When this JobMaster took over: the phase of its flush timer.
    started: Instant,
    restarts: u32,
    /// While RECONCILING (P2.4): the replay, and partitions still awaited.
    recovering: Option<Recovering>,
    /// P3: the reconcile window, while open.
    reconciling: Option<reconcile::Reconciling>,
    recovered_once: bool,
    /// A `FlushTick` is scheduled.
    flush_pending: bool,
}

struct Recovering {
    replayed: Replayed,
    awaited: BTreeSet<SubtaskId>,
}

/// One JobManager recovery, for the summary (P2.4 figures).
#[derive(Clone, Debug, Default)]
pub struct RecoveryRecord {
    pub crashed_at: Instant,
    pub elected_at: Instant,
    pub running_at: Option<Instant>,
    pub full_restart: bool,
    pub events_lost: u32,
    pub discarded: u32,
    pub recovered: Vec<SubtaskId>,
    /// Subtasks that had finished before the crash and run again, with why.
    pub rerun: Vec<(SubtaskId, RerunReason)>,
    /// Task time spent re-running them.
    pub redone: Duration,
    pub late_reports: u32,
    pub timed_out: bool,
    /// Tasks that were running when their TaskManagers lost the JobManager and failed
    /// (F2.5): their work so far is lost too.
    pub interrupted: u32,
}

pub struct World {
    pub graph: ExecutionGraph,
    pub batch: Batch,
    bug: Option<Bug>,
    pub trace: Trace,
    pub faults: FaultPlan,
    pub oracles: BatchOracles,
    rpc_rng: Stream,
    work_rng: Stream,
    rpc_latency: crate::scenario::DurationRange,
    heartbeat: Duration,
    restart_delay: Duration,
    /// `jobmaster.failover: reconcile` (P3): the window and the terminal-state retention.
    reconcile: Option<(Duration, Duration)>,
    /// P3.1 (HA storage): the TaskManager processes the job uses, as registered by any of
    /// its JobMasters and not declared lost since; it outlives JobMasters.
    expected_task_managers: Vec<Option<u32>>,
    pub reconciliations: Vec<crate::checkpoint::stats::ReconcileRecord>,
    /// P3.3: task RPCs kept for a retry, and sent again.
    pub rpcs_kept: u64,
    pub rpcs_resent: u64,
    max_restarts: u32,
    slots: u32,
    /// FIFO per link: the last delivery time of each JM→TM (even) and TM→JM (odd) link.
    link_clock: Vec<Instant>,
    pub(super) jm: Option<JobMaster>,
    jm_incarnation: u32,
    crashed_at: Instant,
    tms: Vec<TaskManager>,
    remote: Vec<Partition>,
    tasks: Vec<Option<Task>>,
    pub store: JobEventStore,
    /// Per subtask: the descriptor of its latest deployment.
    descriptors: Vec<Descriptor>,
    /// Sink outputs staged by finished attempts (a file sink's pending files), by
    /// (subtask, attempt); committed when the job finishes.
    staged: Vec<(SubtaskId, u32, Vec<Fragment>)>,
    pub committed: Vec<(SubtaskId, Vec<Fragment>)>,
    /// Ground truth: the latest attempt of each subtask that finished on its TaskManager,
    /// and since when.
    done: Vec<Option<(u32, Instant)>>,
    /// Per subtask: the recovery whose re-run it is, until it finishes.
    rerun_of: Vec<Option<usize>>,
    pub recoveries: Vec<RecoveryRecord>,
    pub failovers: u32,
    pub is_source: Vec<bool>,
    /// Per vertex: `"parallelism": "auto"`.
    adaptive: Vec<bool>,
    /// Faults whose predicate held, to fire at the current instant.
    pending_faults: Vec<u32>,
    /// The coverage probes the run hit (`crate::probes`).
    pub probes: crate::probes::ProbeSet,
    /// Per subtask: the next attempt number. Attempt ids are unique across JobMasters, as
    /// Flink's `ExecutionAttemptID`s are, so a partition is never mistaken for another's.
    next_attempt: Vec<u32>,
}

impl World {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> World {
        let graph = ExecutionGraph::build(&scenario.job);
        let batch = scenario
            .batch
            .clone()
            .expect("validation gives every batch scenario a batch block");
        let streams = RandomStreams::new(seed);
        let faults = FaultPlan::new(scenario, &graph, &streams);
        let n = graph.subtasks.len();
        let tms = scenario.cluster.task_managers as usize;
        let is_source = graph
            .subtasks
            .iter()
            .map(|s| graph.vertices[s.vertex.index()].inputs.is_empty())
            .collect();
        World {
            oracles: BatchOracles::new(
                &graph,
                &batch,
                (tms, scenario.cluster.slots_per_task_manager),
                scenario.job.vertices.iter().map(|v| v.adaptive).collect(),
                &scenario.jobmaster,
            ),
            bug: scenario.bug,
            trace: Trace::new(retain),
            faults,
            rpc_rng: streams.stream("rpc"),
            work_rng: streams.stream("work"),
            rpc_latency: scenario.network.rpc_latency,
            heartbeat: scenario.jobmaster.heartbeat_timeout,
            restart_delay: scenario.jobmaster.restart_strategy.delay,
            reconcile: (scenario.jobmaster.failover == crate::scenario::Failover::Reconcile).then(
                || {
                    let retention = if scenario.bug == Some(Bug::NoTerminalRetention) {
                        Duration::ZERO
                    } else {
                        scenario.jobmaster.terminal_state_retention
                    };
                    (scenario.jobmaster.reconcile_timeout, retention)
                },
            ),
            expected_task_managers: vec![Some(0); tms],
            reconciliations: Vec::new(),
            rpcs_kept: 0,
            rpcs_resent: 0,
            max_restarts: scenario.jobmaster.restart_strategy.max_attempts,
            slots: scenario.cluster.slots_per_task_manager,
            link_clock: vec![Instant::ZERO; 2 * tms],
            jm: None,
            jm_incarnation: 0,
            crashed_at: Instant::ZERO,
            tms: (0..tms)
                .map(|_| TaskManager {
                    process: 0,
                    alive: true,
                    connected: true,
                    leader: Some(0),
                    partitions: Vec::new(),
                    outbox: std::collections::BTreeMap::new(),
                    next_seq: 0,
                    in_flight: 0,
                    wire: std::collections::BTreeMap::new(),
                    retry_scheduled: false,
                    link_epoch: 0,
                })
                .collect(),
            remote: Vec::new(),
            tasks: (0..n).map(|_| None).collect(),
            store: JobEventStore::default(),
            descriptors: vec![Descriptor::default(); n],
            staged: Vec::new(),
            committed: Vec::new(),
            done: vec![None; n],
            rerun_of: vec![None; n],
            recoveries: Vec::new(),
            failovers: 0,
            is_source,
            adaptive: scenario.job.vertices.iter().map(|v| v.adaptive).collect(),
            pending_faults: Vec::new(),
            probes: crate::probes::ProbeSet::default(),
            next_attempt: vec![1; n],
            batch,
            graph,
        }
    }

    pub fn job_status(&self) -> JobStatus {
        self.jm
            .as_ref()
            .map_or(JobStatus::Restarting, |jm| jm.status)
    }

    fn record(&mut self, now: Instant, event: TraceEvent) {
        self.probes.observe_batch(&event);
        let index = self.trace.record(now, event);
        self.oracles.observe(&self.graph, index, now, &event);
        for fault in self.faults.observe(&self.graph, index, &event) {
            self.pending_faults.push(fault);
        }
    }

    // ---- Messages ------------------------------------------------------------------------

    fn send(&mut self, sched: &mut Scheduler<'_, Event>, from: Address, to: Address, msg: Msg) {
        self.send_numbered(sched, from, to, msg, 0);
    }

    fn send_numbered(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        from: Address,
        to: Address,
        msg: Msg,
        seq: u64,
    ) {
        let (tm, link) = match (from, to) {
            (Address::JobMaster, Address::TaskManager(t)) => (t, 2 * t as usize),
            (Address::TaskManager(t), Address::JobMaster) => (t, 2 * t as usize + 1),
            _ => unreachable!("messages go between the JobMaster and a TaskManager"),
        };
        // A cut link loses everything sent over it.
        if !self.tms[tm as usize].connected {
            if let (Address::TaskManager(_), Some(rpc)) = (from, msg.task_rpc()) {
                let process = self.tms[tm as usize].process;
                self.oracles.rpc_lost(tm, process, rpc);
            }
            return;
        }
        let latency = self
            .rpc_rng
            .duration_between(self.rpc_latency.min, self.rpc_latency.max);
        let now = sched.now();
        // A delay spike on RPCs adds its latency; a lost RPC is sent again by its sender after
        // `retry_after` (Flink's RPCs are retried or answered by a timeout), so it arrives that
        // much later, still in order on its link. The fault plan draws only inside a loss
        // window, so a run without network faults draws nothing here.
        let (extra, lost) = self.faults.rpc_delay(now);
        if let Some(retry) = lost {
            self.record(now, TraceEvent::RpcLost { from, to, retry });
            if self.bug == Some(Bug::ForgetLostRpc) {
                return;
            }
        }
        let latency = latency + extra;
        // FIFO per link, strictly ordered so no tie-break can swap two messages.
        let earliest = self.link_clock[link] + Duration::from_nanos(1);
        let at = (now + latency).max(earliest);
        self.link_clock[link] = at;
        let to_incarnation = match to {
            Address::JobMaster => self.jm_incarnation,
            Address::TaskManager(t) => self.tms[t as usize].process,
        };
        sched.at(
            at,
            Event::Deliver {
                msg,
                from,
                to,
                to_incarnation,
                seq,
                from_process: match from {
                    Address::JobMaster => self.jm_incarnation,
                    Address::TaskManager(_) => self.tms[tm as usize].process,
                },
                epoch: self.tms[tm as usize].link_epoch,
            },
        );
        if to == Address::JobMaster {
            let t = &mut self.tms[tm as usize];
            t.in_flight += 1;
            if self.reconcile.is_some() && msg.is_task_rpc() {
                t.wire.insert(seq, msg);
            }
        }
    }

    fn send_to_jobmaster(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        if let Some(rpc) = msg.task_rpc() {
            let process = self.tms[tm as usize].process;
            self.oracles.rpc_sent(tm, process, rpc);
        }
        if self.reconcile.is_some() && msg.is_task_rpc() {
            // P3.3: a task's RPC waits behind those no JobMaster took yet.
            let t = &mut self.tms[tm as usize];
            let seq = t.next_seq;
            t.next_seq += 1;
            if t.leader.is_none() || !t.outbox.is_empty() {
                t.outbox.insert(seq, msg);
                self.rpcs_kept += 1;
                return;
            }
            self.send_numbered(
                sched,
                Address::TaskManager(tm),
                Address::JobMaster,
                msg,
                seq,
            );
            return;
        }
        if self.tms[tm as usize].leader.is_some() {
            self.send(sched, Address::TaskManager(tm), Address::JobMaster, msg);
        }
    }

    fn send_to_task_manager(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        if let Msg::Release { subtask, attempt } = msg {
            self.record(
                sched.now(),
                TraceEvent::ReleaseRequested {
                    task_manager: tm,
                    subtask,
                    attempt,
                },
            );
        }
        self.send(sched, Address::JobMaster, Address::TaskManager(tm), msg);
    }

    fn deliver(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        msg: Msg,
        (from, to): (Address, Address),
        to_incarnation: u32,
        (seq, from_process, epoch): (u64, u32, u32),
    ) {
        let tm = match (from, to) {
            (Address::TaskManager(t), _) | (_, Address::TaskManager(t)) => t,
            _ => unreachable!("messages go between the JobMaster and a TaskManager"),
        };
        if let Address::TaskManager(t) = from {
            let sender = &mut self.tms[t as usize];
            if sender.process == from_process {
                sender.wire.remove(&seq);
            }
        }
        if self.tms[tm as usize].link_epoch != epoch {
            // P3.3: the sender learns that the connection reset under its RPC and keeps it.
            let t = &self.tms[tm as usize];
            let keep = self.reconcile.is_some()
                && matches!(from, Address::TaskManager(_))
                && msg.is_task_rpc()
                && t.alive
                && t.process == from_process;
            if keep {
                self.tms[tm as usize].outbox.insert(seq, msg);
                self.rpcs_kept += 1;
                self.schedule_retry(sched, tm);
            }
            return;
        }
        match to {
            Address::JobMaster => {
                let Address::TaskManager(tm) = from else {
                    unreachable!("only TaskManagers write to the JobMaster")
                };
                let sender = &mut self.tms[tm as usize];
                let sender_alive = sender.alive && sender.process == from_process;
                if !sender_alive {
                    // Its connection died with it: what it still had on the wire is gone.
                    return;
                }
                sender.in_flight = sender.in_flight.saturating_sub(1);
                let alive = self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == to_incarnation);
                let connected = self.tms[tm as usize].connected;
                if self.reconcile.is_some() && msg.is_task_rpc() {
                    self.deliver_task_rpc(sched, tm, msg, (seq, from_process), alive && connected);
                } else if alive && connected {
                    self.jm_receives(sched, tm, msg);
                }
            }
            Address::TaskManager(tm) => {
                let t = &self.tms[tm as usize];
                // Fencing (Flink's JobMasterId): once a TaskManager follows a new leader it
                // ignores what an older JobMaster sent.
                let fenced = t.leader.is_some_and(|leader| leader != from_process);
                if t.alive && t.connected && t.process == to_incarnation && !fenced {
                    self.tm_receives(sched, tm, msg);
                }
            }
        }
    }

    // ---- TaskManager side ----------------------------------------------------------------

    fn tm_receives(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        let now = sched.now();
        match msg {
            Msg::Deploy { subtask, attempt } => self.deploy(sched, tm, subtask, attempt),
            Msg::Cancel { subtask, attempt } => {
                if self.running(subtask, attempt) {
                    self.end_task(now, subtask, ExecutionState::Canceled);
                }
            }
            Msg::Release { subtask, attempt } => {
                let held = &mut self.tms[tm as usize].partitions;
                if let Some(i) = held
                    .iter()
                    .position(|p| p.producer == subtask && p.attempt == attempt)
                {
                    held.remove(i);
                    self.record(
                        now,
                        TraceEvent::PartitionReleased {
                            subtask,
                            attempt,
                            remote: false,
                        },
                    );
                }
            }
            Msg::AskPartitions => {
                let record_bytes = self.batch.record_bytes;
                let held: Vec<(SubtaskId, u32, u64)> = self.tms[tm as usize]
                    .partitions
                    .iter()
                    .map(|p| {
                        let bytes = data::total_records(&p.fragments) * record_bytes;
                        (p.producer, p.attempt, bytes)
                    })
                    .collect();
                for (subtask, attempt, bytes) in held {
                    let report = Msg::Report {
                        subtask,
                        attempt,
                        bytes,
                    };
                    self.send_to_jobmaster(sched, tm, report);
                }
            }
            Msg::AssignSplit {
                subtask,
                attempt,
                split,
            } => {
                if !self.running(subtask, attempt) {
                    return;
                }
                self.tasks[subtask.index()]
                    .as_mut()
                    .expect("running")
                    .awaiting_split = false;
                match split {
                    Some(split) => {
                        let vertex = self.graph.subtasks[subtask.index()].vertex;
                        let records = data::records_per_split(&self.graph, vertex);
                        let task = self.tasks[subtask.index()].as_mut().expect("running");
                        task.splits.push(split);
                        task.output
                            .extend(data::split_fragments(vertex, split, records));
                        let cost = self.work_time(vertex, records);
                        sched.after(cost, Event::TaskStep { subtask, attempt });
                    }
                    None => self.finish_task(sched, subtask),
                }
            }
            Msg::Register
            | Msg::Running { .. }
            | Msg::Finished { .. }
            | Msg::Failed { .. }
            | Msg::RequestSplit { .. }
            | Msg::Report { .. }
            | Msg::ReportExecution { .. }
            | Msg::ReportSplit { .. }
            | Msg::ReportInput { .. }
            | Msg::ReportDone => unreachable!("a JobMaster message"),
        }
    }

    fn request_split(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        self.tasks[subtask.index()]
            .as_mut()
            .expect("running")
            .awaiting_split = true;
        self.send_to_jobmaster(sched, tm, Msg::RequestSplit { subtask, attempt });
    }

    fn running(&self, subtask: SubtaskId, attempt: u32) -> bool {
        self.tasks[subtask.index()]
            .as_ref()
            .is_some_and(|t| t.attempt == attempt && t.state == ExecutionState::Running)
    }

    fn work_time(&mut self, vertex: VertexId, records: u64) -> Duration {
        let range = self.graph.vertices[vertex.index()].process_time;
        let per_record = self.work_rng.duration_between(range.min, range.max);
        per_record
            .checked_mul(records.max(1))
            .unwrap_or(Duration::MAX)
    }

    fn task_state(&mut self, now: Instant, subtask: SubtaskId, to: ExecutionState) {
        let task = self.tasks[subtask.index()].as_mut().expect("a task");
        let from = task.state;
        task.state = to;
        if to.is_terminal() {
            task.ended = Some(now);
        }
        let attempt = task.attempt;
        self.record(
            now,
            TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            },
        );
    }

    fn deploy(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = sched.now();
        // A deployment the JobMaster has since replaced by a newer attempt is stale.
        let descriptor = self.descriptors[subtask.index()].clone();
        if descriptor.attempt != attempt {
            return;
        }
        if let Some(old) = &self.tasks[subtask.index()] {
            if !old.state.is_terminal() {
                self.end_task(now, subtask, ExecutionState::Canceled);
            }
        }
        self.done[subtask.index()] = None;
        self.tasks[subtask.index()] = Some(Task {
            attempt,
            task_manager: tm,
            process: self.tms[tm as usize].process,
            state: ExecutionState::Created,
            output: Vec::new(),
            started: now,
            ended: None,
            splits: Vec::new(),
            parallelism: descriptor.parallelism,
            awaiting_split: false,
            inputs: descriptor
                .inputs
                .iter()
                .map(|&(_, p, a, _)| (p, a))
                .collect(),
        });
        for to in [
            ExecutionState::Deploying,
            ExecutionState::Initializing,
            ExecutionState::Running,
        ] {
            self.task_state(now, subtask, to);
        }
        self.send_to_jobmaster(sched, tm, Msg::Running { subtask, attempt });
        if self.is_source[subtask.index()] {
            self.request_split(sched, tm, subtask, attempt);
            return;
        }
        // Blocking inputs are complete: read them whole (P2.1).
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let decided = descriptor.parallelism;
        let mut input = Vec::new();
        for (edge, producer, p_attempt, location) in descriptor.inputs {
            let found = match location {
                Location::Remote => self
                    .remote
                    .iter()
                    .find(|p| p.producer == producer && p.attempt == p_attempt),
                Location::TaskManager {
                    task_manager,
                    process,
                } => {
                    let holder = &self.tms[task_manager as usize];
                    (holder.alive && holder.process == process)
                        .then(|| {
                            holder
                                .partitions
                                .iter()
                                .find(|p| p.producer == producer && p.attempt == p_attempt)
                        })
                        .flatten()
                }
            };
            let Some(partition) = found else {
                self.record(now, TraceEvent::PartitionNotFound { subtask, producer });
                self.end_task(now, subtask, ExecutionState::Failed);
                self.send_to_jobmaster(
                    sched,
                    tm,
                    Msg::Failed {
                        subtask,
                        attempt,
                        missing: Some(producer),
                    },
                );
                return;
            };
            input.extend(data::share(
                &self.graph,
                edge,
                producer,
                subtask,
                decided,
                &partition.fragments,
            ));
        }
        data::normalize(&mut input);
        let records = data::total_records(&input);
        self.tasks[subtask.index()]
            .as_mut()
            .expect("deployed")
            .output = input;
        let cost = self.work_time(vertex, records);
        sched.after(cost, Event::TaskStep { subtask, attempt });
    }

    fn task_step(&mut self, sched: &mut Scheduler<'_, Event>, subtask: SubtaskId, attempt: u32) {
        if !self.running(subtask, attempt) {
            return;
        }
        let tm = self.tasks[subtask.index()]
            .as_ref()
            .expect("running")
            .task_manager;
        if self.is_source[subtask.index()] {
            self.request_split(sched, tm, subtask, attempt);
        } else {
            self.finish_task(sched, subtask);
        }
    }

    /// The task wrote its whole result partition (or, a sink, staged its output) and ends.
    fn finish_task(&mut self, sched: &mut Scheduler<'_, Event>, subtask: SubtaskId) {
        let now = sched.now();
        let task = self.tasks[subtask.index()].as_mut().expect("running");
        let (attempt, tm) = (task.attempt, task.task_manager);
        let mut fragments = std::mem::take(&mut task.output);
        data::normalize(&mut fragments);
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let records = data::total_records(&fragments);
        let bytes = records * self.batch.record_bytes;
        if self.graph.vertices[vertex.index()].outputs.is_empty() {
            self.staged.push((subtask, attempt, fragments));
        } else {
            let remote = self.batch.shuffle == ShuffleKind::Remote;
            let partition = Partition {
                producer: subtask,
                attempt,
                fragments,
            };
            if remote {
                self.remote.push(partition);
            } else {
                self.tms[tm as usize].partitions.push(partition);
            }
            self.record(
                now,
                TraceEvent::PartitionWritten {
                    subtask,
                    attempt,
                    bytes,
                    remote,
                },
            );
        }
        self.task_state(now, subtask, ExecutionState::Finished);
        self.done[subtask.index()] = Some((attempt, now));
        if let Some(r) = self.rerun_of[subtask.index()].take() {
            let started = self.tasks[subtask.index()].as_ref().expect("task").started;
            let took = now.saturating_duration_since(started);
            self.recoveries[r].redone = self.recoveries[r].redone + took;
        }
        self.send_to_jobmaster(sched, tm, Msg::Finished { subtask, attempt });
    }

    fn end_task(&mut self, now: Instant, subtask: SubtaskId, to: ExecutionState) {
        if self.tasks[subtask.index()]
            .as_ref()
            .is_some_and(|t| !t.state.is_terminal())
        {
            if to == ExecutionState::Canceled {
                self.task_state(now, subtask, ExecutionState::Canceling);
            }
            self.task_state(now, subtask, to);
        }
    }

    /// The TaskManager lost its JobMaster (F2.5): it fails the job's running tasks and keeps
    /// its partitions, or releases them when configured to (F2.1).
    fn lose_leader(&mut self, now: Instant, tm: u32) {
        self.tms[tm as usize].leader = None;
        if self.reconcile.is_some() {
            // P3.1: under reconciliation the tasks keep running; their RPCs wait.
            return;
        }
        let hosted: Vec<SubtaskId> = (0..self.tasks.len())
            .map(|i| SubtaskId(i as u32))
            .filter(|s| {
                self.tasks[s.index()]
                    .as_ref()
                    .is_some_and(|t| t.task_manager == tm && !t.state.is_terminal())
            })
            .collect();
        if let Some(r) = self.recoveries.last_mut() {
            r.interrupted += hosted.len() as u32;
        }
        for s in hosted {
            self.end_task(now, s, ExecutionState::Failed);
        }
        if !self.batch.keep_partitions {
            for p in std::mem::take(&mut self.tms[tm as usize].partitions) {
                self.record(
                    now,
                    TraceEvent::PartitionReleased {
                        subtask: p.producer,
                        attempt: p.attempt,
                        remote: false,
                    },
                );
            }
        }
    }

    /// The TaskManager learns of the current leader (HA) and registers with it.
    fn register(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        let Some(incarnation) = self.jm.as_ref().map(|jm| jm.incarnation) else {
            return;
        };
        let t = &self.tms[tm as usize];
        if !t.alive || !t.connected || t.leader == Some(incarnation) {
            return;
        }
        if t.leader.is_some() {
            self.lose_leader(sched.now(), tm);
        }
        self.tms[tm as usize].leader = Some(incarnation);
        self.send_to_jobmaster(sched, tm, Msg::Register);
        if self.reconcile.is_some() {
            self.send_reports(sched, tm);
        }
    }

    // ---- JobMaster side ------------------------------------------------------------------

    fn jm_receives(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        let now = sched.now();
        let process = self.tms[tm as usize].process;
        if let Some(what) = msg.received() {
            self.oracles.received(&self.graph, (tm, process), what);
        }
        if let Some(rpc) = msg.task_rpc() {
            let index = self.trace.len().saturating_sub(1);
            self.oracles
                .rpc_applied(&self.graph, (tm, process), rpc, (now, index));
        }
        match msg {
            Msg::Register => {
                // A new process under the same number: the old one is gone for good.
                let old = self.jm.as_ref().expect("alive").registered[tm as usize];
                if let Some(old) = old.filter(|&old| old != process) {
                    self.lose_task_manager(sched, tm, old);
                }
                self.expected_task_managers[tm as usize] = Some(process);
                self.oracles
                    .received(&self.graph, (tm, process), Received::Register);
                let jm = self.jm.as_mut().expect("alive");
                jm.registered[tm as usize] = Some(process);
                jm.accounted[tm as usize] = self.reconcile.is_none();
                jm.slots_used[tm as usize] = 0;
                // P3.2: a TaskManager that registers in the window reports next (same link):
                // the window waits for the whole report.
                if let Some(rec) = jm.reconciling.as_mut() {
                    rec.expect(tm, process);
                }
                // F2.4 step 1: every TaskManager that registers is asked for the partitions
                // it kept; outside recovery they are all answered by a release. Under
                // reconciliation it reports them unasked, with its executions (P3.2).
                if self.reconcile.is_none() {
                    self.send_to_task_manager(sched, tm, Msg::AskPartitions);
                }
                self.schedule(sched);
            }
            Msg::Report {
                subtask,
                attempt,
                bytes,
            } => {
                if self.jm.as_ref().expect("alive").reconciling.is_some() {
                    self.reconcile_partition(sched, tm, (subtask, attempt), bytes);
                } else {
                    self.on_report(sched, tm, (subtask, attempt), bytes);
                }
            }
            Msg::ReportExecution {
                subtask,
                attempt,
                state,
                parallelism,
            } => self.on_report_execution(sched, tm, (subtask, attempt), state, parallelism),
            Msg::ReportSplit {
                subtask,
                attempt,
                split,
            } => self.on_report_split(subtask, attempt, split),
            Msg::ReportInput {
                subtask,
                attempt,
                producer,
                producer_attempt,
            } => self.on_report_input((subtask, attempt), (producer, producer_attempt)),
            Msg::ReportDone => self.on_report_done(sched, tm),
            Msg::Running { subtask, attempt } => {
                if self.current(subtask, attempt, ExecutionState::Deploying) {
                    self.exec_state(now, subtask, ExecutionState::Initializing);
                    self.exec_state(now, subtask, ExecutionState::Running);
                }
            }
            Msg::RequestSplit { subtask, attempt } => {
                let jm = self.jm.as_ref().expect("alive");
                let e = jm.exec[subtask.index()];
                if e.attempt != attempt || e.state.is_terminal() {
                    return;
                }
                let vertex = self.graph.subtasks[subtask.index()].vertex;
                let index = self.graph.subtasks[subtask.index()].index;
                let jm = self.jm.as_mut().expect("alive");
                let split = jm.enumerators[vertex.index()]
                    .as_mut()
                    .expect("a source has an enumerator")
                    .next_split(index);
                self.record(
                    now,
                    TraceEvent::SplitAssigned {
                        subtask,
                        attempt,
                        split,
                    },
                );
                self.send_to_task_manager(
                    sched,
                    tm,
                    Msg::AssignSplit {
                        subtask,
                        attempt,
                        split,
                    },
                );
            }
            Msg::Finished { subtask, attempt } => self.on_finished(sched, tm, subtask, attempt),
            Msg::Failed {
                subtask,
                attempt,
                missing,
            } => {
                let e = self.jm.as_ref().expect("alive").exec[subtask.index()];
                if e.attempt != attempt || e.state.is_terminal() {
                    return;
                }
                self.exec_state(now, subtask, ExecutionState::Failed);
                self.free_slot(subtask);
                let mut seeds = vec![(subtask, RerunReason::Failover)];
                if let Some(producer) = missing {
                    // The partition is gone: stop tracking it; its producer runs again.
                    let jm = self.jm.as_mut().expect("alive");
                    if jm.tracker[producer.index()].is_some() {
                        jm.tracker[producer.index()] = None;
                    }
                    seeds.push((producer, RerunReason::PartitionMissing));
                }
                self.failover(sched, seeds);
            }
            Msg::Deploy { .. }
            | Msg::Cancel { .. }
            | Msg::Release { .. }
            | Msg::AskPartitions
            | Msg::AssignSplit { .. } => unreachable!("a TaskManager message"),
        }
    }

    fn current(&self, subtask: SubtaskId, attempt: u32, state: ExecutionState) -> bool {
        let e = self.jm.as_ref().expect("alive").exec[subtask.index()];
        e.attempt == attempt && e.state == state
    }

    fn exec_state(&mut self, now: Instant, subtask: SubtaskId, to: ExecutionState) {
        let jm = self.jm.as_mut().expect("alive");
        let e = &mut jm.exec[subtask.index()];
        let from = e.state;
        e.state = to;
        let attempt = e.attempt;
        self.record(
            now,
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            },
        );
    }

    fn set_job_status(&mut self, now: Instant, to: JobStatus) {
        let jm = self.jm.as_mut().expect("alive");
        let from = jm.status;
        jm.status = to;
        self.record(now, TraceEvent::JobStatus { from, to });
    }

    fn free_slot(&mut self, subtask: SubtaskId) {
        let jm = self.jm.as_mut().expect("alive");
        if let Some(tm) = jm.exec[subtask.index()].placed.take() {
            jm.slots_used[tm as usize] = jm.slots_used[tm as usize].saturating_sub(1);
        }
    }

    fn location_of(&self, tm: u32) -> Location {
        match self.batch.shuffle {
            ShuffleKind::Remote => Location::Remote,
            ShuffleKind::Internal => Location::TaskManager {
                task_manager: tm,
                process: self.tms[tm as usize].process,
            },
        }
    }

    fn on_finished(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = sched.now();
        let e = self.jm.as_ref().expect("alive").exec[subtask.index()];
        if e.attempt != attempt || e.state != ExecutionState::Running {
            return;
        }
        self.exec_state(now, subtask, ExecutionState::Finished);
        self.free_slot(subtask);
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let location = self.location_of(tm);
        let bytes = self.partition_bytes(subtask, attempt);
        let jm = self.jm.as_mut().expect("alive");
        jm.tracker[subtask.index()] = Some((attempt, location, bytes));
        let vertex_done = self.vertex_finished(vertex);
        // F2.3: snapshots ride on the event when the vertex just finished or min-pause passed.
        let jm = self.jm.as_ref().expect("alive");
        let with_snapshot = vertex_done
            || jm.last_snapshot.is_none_or(|last| {
                now.saturating_duration_since(last) >= self.batch.job_events.snapshot_min_pause
            });
        let snapshot = with_snapshot.then(|| {
            Box::new(Snapshot {
                enumerators: jm
                    .enumerators
                    .iter()
                    .zip(&self.batch.coordinators)
                    .map(|(e, c)| {
                        e.clone()
                            .filter(|_| c.is_some_and(|c| c.supports_batch_snapshot))
                    })
                    .collect(),
            })
        });
        if with_snapshot {
            self.jm.as_mut().expect("alive").last_snapshot = Some(now);
        }
        self.log(
            sched,
            JobEvent::Finished {
                subtask,
                attempt,
                location,
                bytes,
                snapshot,
            },
        );
        if vertex_done {
            // P2.2: a finished vertex closes the file: flush.
            self.flush(now, FlushReason::VertexFinished);
        }
        self.schedule(sched);
    }

    fn partition_bytes(&self, subtask: SubtaskId, attempt: u32) -> u64 {
        let records = |f: &[Fragment]| data::total_records(f);
        let held = self
            .remote
            .iter()
            .chain(self.tms.iter().flat_map(|t| t.partitions.iter()))
            .find(|p| p.producer == subtask && p.attempt == attempt)
            .map(|p| records(&p.fragments));
        let staged = self
            .staged
            .iter()
            .find(|(s, a, _)| *s == subtask && *a == attempt)
            .map(|(_, _, f)| records(f));
        held.or(staged).unwrap_or(0) * self.batch.record_bytes
    }

    fn vertex_finished(&self, vertex: VertexId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        let Some(p) = jm.parallelism[vertex.index()] else {
            return false;
        };
        let first = self.graph.vertices[vertex.index()].first;
        (first..first + p).all(|s| jm.exec[s as usize].state == ExecutionState::Finished)
    }

    /// Appends to the job event store, unless RECONCILING (F2.3); flushes a full buffer.
    fn log(&mut self, sched: &mut Scheduler<'_, Event>, event: JobEvent) {
        let now = sched.now();
        if self.job_status() == JobStatus::Reconciling {
            return;
        }
        let what = match &event {
            JobEvent::VertexInitialized { vertex, .. } => Logged::VertexInitialized(*vertex),
            JobEvent::Finished { subtask, .. } => Logged::Finished(*subtask),
            JobEvent::Reset { subtasks } => Logged::Reset(subtasks.len() as u32),
        };
        let snapshot = matches!(
            &event,
            JobEvent::Finished {
                snapshot: Some(_),
                ..
            }
        );
        self.oracles.logged(&event);
        let full = self.store.append(event, self.batch.job_events.buffer_size);
        // The flush timer runs while something is buffered (so an idle run can quiesce).
        let jm = self.jm.as_mut().expect("alive");
        if !jm.flush_pending {
            // The next tick of a timer with period `flush_interval` started with the
            // JobMaster; ticks that would find the buffer empty are never scheduled.
            jm.flush_pending = true;
            let period = self.batch.job_events.flush_interval.as_nanos();
            let elapsed = now.saturating_duration_since(jm.started).as_nanos();
            let next = jm.started + Duration::from_nanos((elapsed / period + 1) * period);
            let incarnation = jm.incarnation;
            sched.at(next, Event::FlushTick { incarnation });
        }
        self.record(now, TraceEvent::JobEventLogged { what, snapshot });
        if full {
            self.flush(now, FlushReason::BufferFull);
        }
    }

    fn flush(&mut self, now: Instant, reason: FlushReason) {
        let events = self.store.flush() as u32;
        if events > 0 {
            self.record(now, TraceEvent::JobEventsFlushed { events, reason });
        }
    }

    /// Initializes the vertices whose inputs finished, deploys what can run, and ends the job
    /// when every subtask finished.
    fn schedule(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        let Some(jm) = self.jm.as_ref() else { return };
        if jm.status != JobStatus::Running {
            return;
        }
        for &v in &self.graph.topological_order.clone() {
            let jm = self.jm.as_ref().expect("alive");
            if jm.parallelism[v.index()].is_some() {
                continue;
            }
            let inputs = &self.graph.vertices[v.index()].inputs;
            let ready = inputs.iter().all(|&e| {
                let up = self.graph.edges[e].from;
                jm.parallelism[up.index()].is_some() && self.vertex_finished(up)
            });
            if ready {
                self.initialize(sched, v);
            }
        }
        let order = self.graph.topological_order.clone();
        for v in order {
            let Some(p) = self.jm.as_ref().expect("alive").parallelism[v.index()] else {
                continue;
            };
            let first = self.graph.vertices[v.index()].first;
            for s in (first..first + p).map(SubtaskId) {
                let e = self.jm.as_ref().expect("alive").exec[s.index()];
                if e.state == ExecutionState::Created
                    && e.hold_until <= now
                    && self.inputs_available(s)
                    && !self.try_deploy(sched, s)
                {
                    break;
                }
            }
        }
        let jm = self.jm.as_ref().expect("alive");
        let all_done = (0..self.graph.vertices.len())
            .all(|v| jm.parallelism[v].is_some() && self.vertex_finished(VertexId(v as u32)));
        if all_done {
            self.set_job_status(now, JobStatus::Finished);
            self.commit(now);
        }
    }

    /// The producers of `s`'s inputs, within their decided parallelism, with the edge.
    pub(super) fn producers(
        graph: &ExecutionGraph,
        parallelism: &[Option<u32>],
        s: SubtaskId,
    ) -> Vec<(usize, SubtaskId)> {
        graph.subtasks[s.index()]
            .inputs
            .iter()
            .map(|c| graph.channels[c.index()])
            .filter(|c| {
                let up = graph.subtasks[c.from.index()].vertex;
                parallelism[up.index()].is_some_and(|p| graph.subtasks[c.from.index()].index < p)
            })
            .map(|c| (c.edge as usize, c.from))
            .collect()
    }

    /// The consumers of `s`'s partition, within their decided parallelism.
    pub(super) fn consumers(
        graph: &ExecutionGraph,
        parallelism: &[Option<u32>],
        s: SubtaskId,
    ) -> Vec<SubtaskId> {
        let mut out: Vec<SubtaskId> = graph.subtasks[s.index()]
            .outputs
            .iter()
            .flat_map(|g| g.channels.iter())
            .map(|c| graph.channels[c.index()].to)
            .filter(|to| {
                let v = graph.subtasks[to.index()].vertex;
                parallelism[v.index()].is_some_and(|p| graph.subtasks[to.index()].index < p)
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn inputs_available(&self, s: SubtaskId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        Self::producers(&self.graph, &jm.parallelism, s)
            .iter()
            .all(|(_, p)| {
                jm.exec[p.index()].state == ExecutionState::Finished
                    && jm.tracker[p.index()].is_some()
            })
    }

    fn try_deploy(&mut self, sched: &mut Scheduler<'_, Event>, s: SubtaskId) -> bool {
        let now = sched.now();
        let slots = self.slots;
        let bug = self.bug == Some(Bug::DeployBeforeReport);
        let jm = self.jm.as_ref().expect("alive");
        let choice = (0..self.tms.len())
            .filter(|&t| {
                jm.registered[t].is_some() && (jm.accounted[t] || bug) && jm.slots_used[t] < slots
            })
            .max_by_key(|&t| (slots - jm.slots_used[t], std::cmp::Reverse(t)));
        let Some(tm) = choice else { return false };
        let inputs: Vec<(usize, SubtaskId, u32, Location)> =
            Self::producers(&self.graph, &jm.parallelism, s)
                .into_iter()
                .map(|(edge, p)| {
                    let (attempt, location, _) = jm.tracker[p.index()].expect("available");
                    (edge, p, attempt, location)
                })
                .collect();
        let vertex = self.graph.subtasks[s.index()].vertex;
        let parallelism = jm.parallelism[vertex.index()].expect("an initialized vertex");
        let jm = self.jm.as_mut().expect("alive");
        jm.slots_used[tm] += 1;
        jm.exec[s.index()].placed = Some(tm as u32);
        let attempt = jm.exec[s.index()].attempt;
        self.descriptors[s.index()] = Descriptor {
            attempt,
            parallelism,
            inputs,
        };
        self.exec_state(now, s, ExecutionState::Deploying);
        self.record(
            now,
            TraceEvent::Deployed {
                subtask: s,
                attempt,
                task_manager: tm as u32,
            },
        );
        self.send_to_task_manager(
            sched,
            tm as u32,
            Msg::Deploy {
                subtask: s,
                attempt,
            },
        );
        true
    }

    /// P2.1: a vertex is initialized once its inputs finished; an `"auto"` vertex gets its
    /// parallelism from the bytes they produced.
    fn initialize(&mut self, sched: &mut Scheduler<'_, Event>, v: VertexId) {
        let now = sched.now();
        let vertex = &self.graph.vertices[v.index()];
        let jm = self.jm.as_ref().expect("alive");
        let input_bytes: u64 = vertex
            .inputs
            .iter()
            .flat_map(|&e| {
                let up = self.graph.edges[e].from;
                let first = self.graph.vertices[up.index()].first;
                let p = jm.parallelism[up.index()].unwrap_or(0);
                (first..first + p).map(|s| jm.tracker[s as usize].map_or(0, |t| t.2))
            })
            .sum();
        let adaptive = self.adaptive[v.index()];
        let parallelism = if adaptive {
            let a = self.batch.adaptive;
            let tasks = if self.bug == Some(Bug::AdaptiveRoundsDown) {
                input_bytes / a.bytes_per_task
            } else {
                input_bytes.div_ceil(a.bytes_per_task)
            };
            (tasks as u32).clamp(a.min, a.max)
        } else {
            vertex.parallelism
        };
        self.set_parallelism(v, parallelism);
        self.record(
            now,
            TraceEvent::VertexInitialized {
                vertex: v,
                parallelism,
                input_bytes,
                adaptive,
            },
        );
        self.log(
            sched,
            JobEvent::VertexInitialized {
                vertex: v,
                parallelism,
            },
        );
    }

    fn set_parallelism(&mut self, v: VertexId, p: u32) {
        let splits = self.batch.coordinators[v.index()].map(|c| c.splits);
        let jm = self.jm.as_mut().expect("alive");
        jm.parallelism[v.index()] = Some(p);
        if let Some(splits) = splits {
            if jm.enumerators[v.index()].is_none() {
                jm.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            }
        }
    }

    fn commit(&mut self, now: Instant) {
        let jm = self.jm.as_ref().expect("alive");
        let mut outputs = Vec::new();
        for (v, vertex) in self.graph.vertices.iter().enumerate() {
            if !vertex.outputs.is_empty() {
                continue;
            }
            let p = jm.parallelism[v].expect("finished");
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let attempt = jm.exec[s.index()].attempt;
                let fragments = self
                    .staged
                    .iter()
                    .find(|(t, a, _)| *t == s && *a == attempt)
                    .map(|(_, _, f)| f.clone())
                    .unwrap_or_default();
                outputs.push((s, fragments));
            }
        }
        for (s, fragments) in outputs {
            let records = data::total_records(&fragments);
            self.record(
                now,
                TraceEvent::OutputCommitted {
                    subtask: s,
                    records,
                },
            );
            self.committed.push((s, fragments));
        }
    }

    /// Resets `seeds` and everything P2.4 step 4's region expansion adds, then schedules after
    /// the restart delay (a task failure, a lost partition, a lost TaskManager).
    fn failover(&mut self, sched: &mut Scheduler<'_, Event>, seeds: Vec<(SubtaskId, RerunReason)>) {
        let now = sched.now();
        let jm = self.jm.as_mut().expect("alive");
        jm.restarts += 1;
        self.failovers += 1;
        if jm.restarts > self.max_restarts {
            // P1.8: the strategy gave up after `max_restarts` restarts.
            let failovers = jm.restarts - 1;
            self.record(now, TraceEvent::RestartsExhausted { failovers });
            let running: Vec<SubtaskId> = (0..self.graph.subtasks.len() as u32)
                .map(SubtaskId)
                .filter(|s| {
                    matches!(
                        self.jm.as_ref().expect("alive").exec[s.index()].state,
                        ExecutionState::Deploying
                            | ExecutionState::Initializing
                            | ExecutionState::Running
                    )
                })
                .collect();
            self.set_job_status(now, JobStatus::Failing);
            for s in running {
                self.cancel(sched, s);
            }
            self.set_job_status(now, JobStatus::Failed);
            return;
        }
        let plan = {
            let jm = self.jm.as_ref().expect("alive");
            recovery::expand(
                &self.graph,
                &recovery::View {
                    parallelism: &jm.parallelism,
                    finished: &jm
                        .exec
                        .iter()
                        .map(|e| e.state != ExecutionState::Created)
                        .collect::<Vec<_>>(),
                    tracked: &jm.tracker.iter().map(Option::is_some).collect::<Vec<_>>(),
                    remembered: &jm.remembered,
                },
                seeds,
                self.bug,
            )
        };
        self.reset(sched, &plan, true);
        let incarnation = self.jm.as_ref().expect("alive").incarnation;
        sched.after(self.restart_delay, Event::RestartDelay { incarnation });
    }

    fn cancel(&mut self, sched: &mut Scheduler<'_, Event>, s: SubtaskId) {
        let now = sched.now();
        let e = self.jm.as_ref().expect("alive").exec[s.index()];
        if matches!(
            e.state,
            ExecutionState::Deploying | ExecutionState::Initializing | ExecutionState::Running
        ) {
            self.exec_state(now, s, ExecutionState::Canceling);
            self.exec_state(now, s, ExecutionState::Canceled);
            if let Some(tm) = e.placed {
                self.send_to_task_manager(
                    sched,
                    tm,
                    Msg::Cancel {
                        subtask: s,
                        attempt: e.attempt,
                    },
                );
            }
            self.free_slot(s);
        }
    }

    /// Resets every subtask of `plan` to a fresh attempt: cancels it if it runs, releases its
    /// partition, returns its splits (`subtaskReset`), and logs the reset (F2.3).
    fn reset(&mut self, sched: &mut Scheduler<'_, Event>, plan: &Plan, hold: bool) {
        let now = sched.now();
        for &(s, reason) in &plan.reset {
            self.cancel(sched, s);
            let jm = self.jm.as_mut().expect("alive");
            if let Some((attempt, location, _)) = jm.tracker[s.index()].take() {
                self.release(sched, s, attempt, location);
            }
            let jm = self.jm.as_mut().expect("alive");
            let e = &mut jm.exec[s.index()];
            let was = e.state;
            let was_created = was == ExecutionState::Created;
            e.attempt = self.next_attempt[s.index()];
            self.next_attempt[s.index()] += 1;
            e.state = ExecutionState::Created;
            e.placed = None;
            if hold {
                e.hold_until = now + self.restart_delay;
            }
            // F2.6: a reset makes a new execution (a new attempt, CREATED); the bug reuses the
            // old one, which leaves a terminal state.
            if self.bug == Some(Bug::ReuseTerminalExecution) && was.is_terminal() {
                let attempt = e.attempt;
                self.record(
                    now,
                    TraceEvent::ExecutionState {
                        subtask: s,
                        attempt,
                        from: was,
                        to: ExecutionState::Created,
                    },
                );
            }
            let jm = self.jm.as_mut().expect("alive");
            let v = self.graph.subtasks[s.index()].vertex;
            let index = self.graph.subtasks[s.index()].index;
            if self.bug != Some(Bug::SkipCoordinatorReset) || !plan.recovery {
                if let Some(e) = jm.enumerators[v.index()].as_mut() {
                    e.subtask_reset(index);
                }
            }
            if !was_created {
                self.record(now, TraceEvent::SubtaskReset { subtask: s, reason });
            }
            if let (Some(_), Some(r)) = (self.done[s.index()], plan.recovery_index) {
                self.rerun_of[s.index()] = Some(r);
            }
        }
        for &v in &plan.fresh_enumerators {
            let splits = self.batch.coordinators[v.index()].expect("a source").splits;
            let jm = self.jm.as_mut().expect("alive");
            let p = jm.parallelism[v.index()].expect("initialized");
            jm.enumerators[v.index()] = Some(Enumerator::new(splits, p));
            jm.remembered[v.index()] = false;
        }
        let subtasks: Vec<SubtaskId> = plan.reset.iter().map(|&(s, _)| s).collect();
        if !subtasks.is_empty() {
            self.log(sched, JobEvent::Reset { subtasks });
        }
    }

    fn release(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        s: SubtaskId,
        attempt: u32,
        location: Location,
    ) {
        match location {
            Location::Remote => {
                if let Some(i) = self
                    .remote
                    .iter()
                    .position(|p| p.producer == s && p.attempt == attempt)
                {
                    self.remote.remove(i);
                    self.record(
                        sched.now(),
                        TraceEvent::PartitionReleased {
                            subtask: s,
                            attempt,
                            remote: true,
                        },
                    );
                }
            }
            Location::TaskManager { task_manager, .. } => self.send_to_task_manager(
                sched,
                task_manager,
                Msg::Release {
                    subtask: s,
                    attempt,
                },
            ),
        }
    }
}

// ---- Crashes, elections, recovery (P2.3, P2.4) -------------------------------------------

impl World {
    fn new_jobmaster(&self, incarnation: u32, now: Instant) -> JobMaster {
        let n = self.graph.subtasks.len();
        let v = self.graph.vertices.len();
        let tms = self.tms.len();
        JobMaster {
            incarnation,
            status: JobStatus::Initializing,
            exec: (0..n)
                .map(|i| Execution {
                    state: ExecutionState::Created,
                    attempt: self.next_attempt[i],
                    placed: None,
                    hold_until: Instant::ZERO,
                })
                .collect(),
            parallelism: vec![None; v],
            tracker: vec![None; n],
            enumerators: vec![None; v],
            remembered: vec![false; v],
            registered: vec![None; tms],
            accounted: vec![self.reconcile.is_none(); tms],
            slots_used: vec![0; tms],
            last_snapshot: None,
            started: now,
            restarts: 0,
            recovering: None,
            reconciling: None,
            recovered_once: false,
            flush_pending: false,
        }
    }

    fn start(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        for (at, index) in self.faults.timed() {
            sched.at(at, Event::Fault { index });
        }
        let mut jm = self.new_jobmaster(0, now);
        for (t, tm) in self.tms.iter().enumerate() {
            jm.registered[t] = Some(tm.process);
        }
        // Nothing runs anywhere yet.
        jm.accounted.fill(true);
        // Attempt numbers of this first JobMaster's executions.
        for n in &mut self.next_attempt {
            *n = 1;
        }
        for e in &mut jm.exec {
            e.attempt = 0;
        }
        self.jm = Some(jm);
        self.set_job_status(now, JobStatus::Created);
        self.set_job_status(now, JobStatus::Running);
        self.schedule(sched);
    }

    fn crash_jobmaster(&mut self, sched: &mut Scheduler<'_, Event>, restart_after: Duration) {
        let now = sched.now();
        let Some(jm) = self.jm.take() else { return };
        let incarnation = jm.incarnation;
        if jm.status.is_terminal() {
            self.jm = Some(jm);
            return;
        }
        self.record(now, TraceEvent::JobMasterLost { incarnation });
        // P2.2: what was not flushed is lost, unless the bug pretends it was written.
        if self.bug == Some(Bug::TrustUnflushedEvents) {
            self.store.flush();
        } else {
            let events = self.store.lose_buffer() as u32;
            if events > 0 {
                self.record(now, TraceEvent::JobEventsLost { events });
            }
        }
        self.jm_incarnation += 1;
        self.crashed_at = now;
        if self.reconcile.is_none() {
            self.recoveries.push(RecoveryRecord {
                crashed_at: now,
                ..RecoveryRecord::default()
            });
        }
        sched.after(self.heartbeat, Event::JobMasterTimeout { incarnation });
        sched.after(restart_after, Event::JobMasterElected);
    }

    fn elect(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        if self.jm.is_some() {
            return;
        }
        let incarnation = self.jm_incarnation;
        self.jm = Some(self.new_jobmaster(incarnation, now));
        // Its executions took the next attempt ids.
        for n in &mut self.next_attempt {
            *n += 1;
        }
        self.record(now, TraceEvent::JobMasterElected { incarnation });
        self.set_job_status(now, JobStatus::Created);
        if self.reconcile.is_some() {
            self.start_reconcile(sched);
            return;
        }
        let r = self.recoveries.len() - 1;
        self.recoveries[r].elected_at = now;
        if !self.batch.recovery_enabled() || self.store.durable().is_empty() {
            self.restart_from_scratch(sched, r);
            for tm in 0..self.tms.len() as u32 {
                self.register(sched, tm);
            }
            self.schedule(sched);
            return;
        }
        // P2.4: RECONCILING while replaying and waiting for the previous TaskManagers.
        self.set_job_status(now, JobStatus::Reconciling);
        let replayed = self.replay_log();
        self.recoveries[r].discarded = replayed.discarded.len() as u32;
        self.record(
            now,
            TraceEvent::RecoveryStarted {
                replayed: replayed.applied as u32,
                discarded: replayed.discarded.len() as u32,
                full_restart: false,
            },
        );
        // Step 1: vertices with a logged parallelism are initialized again.
        for v in 0..self.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                self.jm.as_mut().expect("elected").parallelism[v] = Some(p);
            }
        }
        // The shuffle master's snapshot knows the remote partitions (P2.3).
        let mut awaited = BTreeSet::new();
        let reserve = recovery::reserved(&self.graph, &replayed);
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, location, bytes)) = *finished else {
                continue;
            };
            match location {
                Location::Remote => {
                    let held = self
                        .remote
                        .iter()
                        .any(|p| p.producer.index() == s && p.attempt == attempt);
                    if held {
                        self.jm.as_mut().expect("elected").tracker[s] =
                            Some((attempt, location, bytes));
                    }
                }
                Location::TaskManager { .. } => {
                    if reserve[s] {
                        awaited.insert(SubtaskId(s as u32));
                    }
                }
            }
        }
        self.jm.as_mut().expect("elected").recovering = Some(Recovering { replayed, awaited });
        sched.after(
            self.batch.previous_worker_timeout,
            Event::WorkerTimeout { incarnation },
        );
        for tm in 0..self.tms.len() as u32 {
            self.register(sched, tm);
        }
        self.maybe_end_recovery(sched);
    }

    /// The durable job events, replayed (F2.3).
    fn replay_log(&self) -> Replayed {
        let vertex_of: Vec<VertexId> = self.graph.subtasks.iter().map(|s| s.vertex).collect();
        replay(self.store.durable(), self.graph.vertices.len(), &vertex_of)
    }

    /// P2.6 / F2.4 step 5: nothing to recover from, or recovery is off: the job runs again
    /// from scratch, and the log starts over.
    fn restart_from_scratch(&mut self, sched: &mut Scheduler<'_, Event>, r: usize) {
        let now = sched.now();
        let finished_before: Vec<SubtaskId> = (0..self.done.len() as u32)
            .map(SubtaskId)
            .filter(|s| self.done[s.index()].is_some())
            .collect();
        self.store.clear();
        self.record(
            now,
            TraceEvent::RecoveryStarted {
                replayed: 0,
                discarded: 0,
                full_restart: true,
            },
        );
        let record = &mut self.recoveries[r];
        record.full_restart = true;
        record.running_at = Some(now);
        record.rerun = finished_before
            .iter()
            .map(|&s| (s, RerunReason::FullRestart))
            .collect();
        for &s in &finished_before {
            self.rerun_of[s.index()] = Some(r);
        }
        let rerun = finished_before.len() as u32;
        self.jm.as_mut().expect("elected").recovered_once = true;
        self.set_job_status(now, JobStatus::Running);
        self.record(
            now,
            TraceEvent::RecoveryEnded {
                recovered: 0,
                rerun,
                timed_out: false,
            },
        );
        self.schedule(sched);
    }

    fn maybe_end_recovery(&mut self, sched: &mut Scheduler<'_, Event>) {
        let done = self
            .jm
            .as_ref()
            .and_then(|jm| jm.recovering.as_ref())
            .is_some_and(|r| r.awaited.is_empty());
        if done {
            self.end_recovery(sched, false);
        }
    }

    /// A partition report reached the JobMaster: the oracles note it (the ledger of what was
    /// reported in time). Returns the reporting process.
    fn report_seen(&mut self, now: Instant, tm: u32, (subtask, attempt): (SubtaskId, u32)) -> u32 {
        let process = self.tms[tm as usize].process;
        let index = self.trace.len();
        self.oracles
            .report_arrived(subtask, attempt, (tm, process), now, index);
        process
    }

    fn on_report(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        bytes: u64,
    ) {
        let now = sched.now();
        let process = self.report_seen(now, tm, (subtask, attempt));
        let jm = self.jm.as_mut().expect("alive");
        if let Some(rec) = jm.recovering.as_mut() {
            let expected = Location::TaskManager {
                task_manager: tm,
                process,
            };
            if let Some((a, location, _)) = rec.replayed.finished[subtask.index()] {
                if a == attempt && location == expected {
                    jm.tracker[subtask.index()] = Some((attempt, location, bytes));
                    rec.awaited.remove(&subtask);
                    self.record(
                        now,
                        TraceEvent::PartitionReported {
                            task_manager: tm,
                            subtask,
                            attempt,
                            late: false,
                        },
                    );
                    self.maybe_end_recovery(sched);
                    return;
                }
            }
            self.record(
                now,
                TraceEvent::PartitionReported {
                    task_manager: tm,
                    subtask,
                    attempt,
                    late: false,
                },
            );
            self.send_to_task_manager(sched, tm, Msg::Release { subtask, attempt });
            return;
        }
        // The JobMaster tracks this very partition already (a report that crossed a
        // registration): nothing to do.
        if jm.tracker[subtask.index()].is_some_and(|(a, l, _)| {
            a == attempt
                && l == Location::TaskManager {
                    task_manager: tm,
                    process,
                }
        }) {
            return;
        }
        // F2.4: after the wait, a report is answered by releasing those partitions.
        let late = jm.recovered_once;
        self.record(
            now,
            TraceEvent::PartitionReported {
                task_manager: tm,
                subtask,
                attempt,
                late,
            },
        );
        if late {
            if let Some(r) = self.recoveries.last_mut() {
                r.late_reports += 1;
            }
            if self.bug == Some(Bug::KeepLatePartitions) {
                return;
            }
        }
        self.send_to_task_manager(sched, tm, Msg::Release { subtask, attempt });
    }

    /// P2.4 steps 1-4, then RUNNING.
    fn end_recovery(&mut self, sched: &mut Scheduler<'_, Event>, timed_out: bool) {
        let now = sched.now();
        let r = self.recoveries.len() - 1;
        let jm = self.jm.as_mut().expect("alive");
        let Some(Recovering { replayed, .. }) = jm.recovering.take() else {
            return;
        };
        jm.recovered_once = true;
        let tracked: Vec<bool> = jm.tracker.iter().map(Option::is_some).collect();
        let outcome = recovery::recover(&self.graph, &self.batch, &replayed, &tracked, self.bug);
        // Coordinators: restored from the snapshot when they support batch snapshots (P2.5),
        // fresh otherwise.
        for v in 0..self.graph.vertices.len() {
            let (Some(c), Some(p)) = (self.batch.coordinators[v], replayed.parallelism[v]) else {
                continue;
            };
            let restored = replayed
                .snapshot
                .as_ref()
                .and_then(|s| s.enumerators[v].clone())
                .filter(|_| c.supports_batch_snapshot);
            let jm = self.jm.as_mut().expect("alive");
            jm.enumerators[v] = Some(restored.unwrap_or_else(|| Enumerator::new(c.splits, p)));
            jm.remembered[v] = outcome.remembered[v];
        }
        // Step 2: recovered subtasks go CREATED → FINISHED with their old attempt.
        let mut recovered = Vec::new();
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, _, _)) = *finished else {
                continue;
            };
            let id = SubtaskId(s as u32);
            let jm = self.jm.as_mut().expect("alive");
            jm.exec[s].attempt = attempt;
            if outcome.finished[s] {
                // Kept with its partition if one was reported; an OPTIONAL one need not be.
                self.exec_state(now, id, ExecutionState::Finished);
                recovered.push(id);
            } else {
                // Not recovered: the partition (if reported) is released below by the reset.
                jm.exec[s].state = ExecutionState::Finished;
            }
        }
        // Step 3: unfinished subtasks of a vertex with a restored coordinator return their
        // splits (`subtaskReset`).
        if self.bug != Some(Bug::SkipCoordinatorReset) {
            for v in 0..self.graph.vertices.len() {
                let Some(p) = replayed.parallelism[v] else {
                    continue;
                };
                let first = self.graph.vertices[v].first;
                let jm = self.jm.as_mut().expect("alive");
                if let Some(e) = jm.enumerators[v].as_mut() {
                    for i in 0..p {
                        if replayed.finished[(first + i) as usize].is_none() {
                            e.subtask_reset(i);
                        }
                    }
                }
            }
        }
        // Step 4: reset what must run again; the job runs.
        self.set_job_status(now, JobStatus::Running);
        let plan = Plan {
            reset: outcome.reset.clone(),
            fresh_enumerators: outcome.fresh.clone(),
            recovery: true,
            recovery_index: Some(r),
        };
        self.reset(sched, &plan, false);
        // The log must not keep claiming what this recovery undid (discarded or unreported
        // finishes): a later crash would otherwise trust them.
        let stale: Vec<SubtaskId> =
            recovery::logged_finished(self.store.durable(), self.graph.subtasks.len())
                .into_iter()
                .filter(|s| !outcome.finished[s.index()] && !plan.reset.iter().any(|(r, _)| r == s))
                .collect();
        if !stale.is_empty() {
            self.log(sched, JobEvent::Reset { subtasks: stale });
        }
        // The figures: which subtasks that had finished before the crash run again, and why.
        let mut rerun = Vec::new();
        for s in (0..self.done.len() as u32).map(SubtaskId) {
            if self.done[s.index()].is_none() || outcome.finished[s.index()] {
                continue;
            }
            let reason = outcome
                .reset
                .iter()
                .find(|(t, _)| *t == s)
                .map(|&(_, why)| why)
                .unwrap_or(if replayed.discarded.contains(&s) {
                    RerunReason::NoSnapshot
                } else {
                    RerunReason::EventLost
                });
            self.rerun_of[s.index()] = Some(r);
            rerun.push((s, reason));
        }
        let record = &mut self.recoveries[r];
        record.recovered = recovered.clone();
        record.rerun = rerun;
        record.running_at = Some(now);
        record.timed_out = timed_out;
        let rerun = record.rerun.len() as u32;
        self.record(
            now,
            TraceEvent::RecoveryEnded {
                recovered: recovered.len() as u32,
                rerun,
                timed_out,
            },
        );
        self.schedule(sched);
    }

    /// The JobMaster noticed that TaskManager `tm` (process `process`) is gone or unreachable.
    fn lose_task_manager(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, process: u32) {
        let now = sched.now();
        let Some(jm) = self.jm.as_mut() else { return };
        if jm.registered[tm as usize] != Some(process) {
            return;
        }
        jm.registered[tm as usize] = None;
        jm.slots_used[tm as usize] = 0;
        if self.expected_task_managers[tm as usize] == Some(process) {
            self.expected_task_managers[tm as usize] = None;
        }
        self.record(now, TraceEvent::TaskManagerTimedOut { task_manager: tm });
        self.forget_task_manager(sched, tm, process);
        let jm = self.jm.as_ref().expect("alive");
        if jm.recovering.is_some() || jm.status.is_terminal() {
            return;
        }
        let lost = Location::TaskManager {
            task_manager: tm,
            process,
        };
        let mut seeds = Vec::new();
        for s in (0..self.graph.subtasks.len() as u32).map(SubtaskId) {
            let jm = self.jm.as_ref().expect("alive");
            let e = jm.exec[s.index()];
            if e.placed == Some(tm)
                && matches!(
                    e.state,
                    ExecutionState::Deploying
                        | ExecutionState::Initializing
                        | ExecutionState::Running
                )
            {
                self.exec_state(now, s, ExecutionState::Failed);
                self.free_slot(s);
                seeds.push((s, RerunReason::Failover));
                continue;
            }
            if jm.tracker[s.index()].is_some_and(|(_, l, _)| l == lost) {
                let needed = self.partition_needed(s);
                self.jm.as_mut().expect("alive").tracker[s.index()] = None;
                if needed {
                    seeds.push((s, RerunReason::PartitionMissing));
                }
            }
        }
        if !seeds.is_empty() {
            self.failover(sched, seeds);
        }
    }

    /// Some consumer of `s` has yet to finish (or is not even initialized).
    fn partition_needed(&self, s: SubtaskId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        let v = self.graph.subtasks[s.index()].vertex;
        let uninitialized = self.graph.vertices[v.index()]
            .outputs
            .iter()
            .any(|&e| jm.parallelism[self.graph.edges[e].to.index()].is_none());
        uninitialized
            || Self::consumers(&self.graph, &jm.parallelism, s)
                .iter()
                .any(|c| jm.exec[c.index()].state != ExecutionState::Finished)
    }

    fn fire(&mut self, sched: &mut Scheduler<'_, Event>, index: u32, kind: FaultKind) {
        let now = sched.now();
        match kind {
            FaultKind::FailTask { task } => {
                let s = SubtaskId(self.graph.vertices[task.vertex].first + task.index);
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::FailTask(s),
                    },
                );
                let running = self.tasks[s.index()]
                    .as_ref()
                    .filter(|t| t.state == ExecutionState::Running)
                    .map(|t| (t.attempt, t.task_manager));
                if let Some((attempt, tm)) = running {
                    self.end_task(now, s, ExecutionState::Failed);
                    self.send_to_jobmaster(
                        sched,
                        tm,
                        Msg::Failed {
                            subtask: s,
                            attempt,
                            missing: None,
                        },
                    );
                }
            }
            FaultKind::LoseTaskManager {
                task_manager,
                restart_after,
            } => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::LoseTaskManager(task_manager),
                    },
                );
                let t = task_manager as usize;
                if !self.tms[t].alive {
                    return;
                }
                let hosted: Vec<SubtaskId> = (0..self.tasks.len() as u32)
                    .map(SubtaskId)
                    .filter(|s| {
                        self.tasks[s.index()].as_ref().is_some_and(|x| {
                            x.task_manager == task_manager && !x.state.is_terminal()
                        })
                    })
                    .collect();
                for s in hosted {
                    self.end_task(now, s, ExecutionState::Failed);
                }
                let process = self.tms[t].process;
                self.tms[t].alive = false;
                self.tms[t].leader = None;
                self.tms[t].partitions.clear();
                self.tms[t].outbox.clear();
                self.tms[t].in_flight = 0;
                self.tms[t].wire.clear();
                self.record(now, TraceEvent::TaskManagerLost { task_manager });
                if let Some(jm) = &self.jm {
                    sched.after(
                        self.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            process,
                            incarnation: jm.incarnation,
                        },
                    );
                }
                sched.after(restart_after, Event::TaskManagerRestart { task_manager });
            }
            FaultKind::DisconnectTaskManager {
                task_manager,
                duration,
            } => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::DisconnectTaskManager(task_manager),
                    },
                );
                let t = task_manager as usize;
                if !self.tms[t].alive || !self.tms[t].connected {
                    return;
                }
                self.tms[t].connected = false;
                // The connection is reset: whatever was on the wire either way is lost.
                self.tms[t].link_epoch += 1;
                self.tms[t].in_flight = 0;
                self.record(now, TraceEvent::TaskManagerDisconnected { task_manager });
                let process = self.tms[t].process;
                // Both sides miss heartbeats; a disconnection shorter than the timeout is
                // noticed when the connection is re-established (`Reconnect`).
                if duration > self.heartbeat {
                    let incarnation = self.jm_incarnation;
                    sched.after(
                        self.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            process,
                            incarnation,
                        },
                    );
                    sched.after(
                        self.heartbeat,
                        Event::LeaderTimeout {
                            task_manager,
                            process,
                        },
                    );
                }
                sched.after(duration, Event::Reconnect { task_manager });
            }
            FaultKind::CrashJobMaster { restart_after } => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::CrashJobMaster,
                    },
                );
                self.crash_jobmaster(sched, restart_after);
            }
            // The fault plan opened the window; `send_numbered` asks it about every RPC sent
            // while it is open, as a streaming world does.
            FaultKind::DelaySpike { .. } => self.record(
                now,
                TraceEvent::FaultFired {
                    index,
                    fault: FaultEvent::DelaySpike,
                },
            ),
            FaultKind::RpcLoss { .. } => self.record(
                now,
                TraceEvent::FaultFired {
                    index,
                    fault: FaultEvent::RpcLoss,
                },
            ),
        }
    }

    fn reconnect(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        let now = sched.now();
        let t = &self.tms[tm as usize];
        if !t.alive || t.connected {
            return;
        }
        let process = t.process;
        // Whatever side has not noticed the disconnection yet notices it now.
        if self.tms[tm as usize].leader.is_some() {
            self.lose_leader(now, tm);
        }
        self.lose_task_manager(sched, tm, process);
        self.tms[tm as usize].connected = true;
        self.record(now, TraceEvent::TaskManagerReconnected { task_manager: tm });
        self.register(sched, tm);
    }
}

impl Model for World {
    type Event = Event;

    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        match event {
            Event::Start => self.start(sched),
            Event::Deliver {
                msg,
                from,
                to,
                to_incarnation,
                seq,
                from_process,
                epoch,
            } => self.deliver(
                sched,
                msg,
                (from, to),
                to_incarnation,
                (seq, from_process, epoch),
            ),
            Event::ReconcileTimeout { incarnation } => {
                let open = self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == incarnation && jm.reconciling.is_some());
                if open {
                    self.end_reconcile(sched);
                }
            }
            Event::RetryParked {
                task_manager,
                process,
            } => self.retry_parked(sched, task_manager, process),
            Event::TaskStep { subtask, attempt } => self.task_step(sched, subtask, attempt),
            Event::FlushTick { incarnation } => {
                if let Some(jm) = self.jm.as_mut().filter(|jm| jm.incarnation == incarnation) {
                    jm.flush_pending = false;
                    self.flush(now, FlushReason::Interval);
                }
            }
            Event::Fault { index } => {
                if let Some(fault) = self.faults.fire(index, now) {
                    let kind = fault.kind.clone();
                    self.fire(sched, index, kind);
                }
            }
            Event::JobMasterTimeout { incarnation } => {
                for tm in 0..self.tms.len() as u32 {
                    let t = &self.tms[tm as usize];
                    if t.alive && t.leader == Some(incarnation) {
                        self.lose_leader(now, tm);
                    }
                }
            }
            Event::JobMasterElected => self.elect(sched),
            Event::TaskManagerTimeout {
                task_manager,
                process,
                incarnation,
            } => {
                if self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == incarnation)
                {
                    self.lose_task_manager(sched, task_manager, process);
                }
            }
            Event::LeaderTimeout {
                task_manager,
                process,
            } => {
                let t = &self.tms[task_manager as usize];
                if t.alive && t.process == process && !t.connected && t.leader.is_some() {
                    self.lose_leader(now, task_manager);
                }
            }
            Event::TaskManagerRestart { task_manager } => {
                let t = &mut self.tms[task_manager as usize];
                t.process += 1;
                t.alive = true;
                t.connected = true;
                t.leader = None;
                t.partitions.clear();
                t.outbox.clear();
                t.in_flight = 0;
                t.wire.clear();
                t.retry_scheduled = false;
                self.record(now, TraceEvent::TaskManagerStarted { task_manager });
                self.register(sched, task_manager);
            }
            Event::Reconnect { task_manager } => self.reconnect(sched, task_manager),
            Event::WorkerTimeout { incarnation } => {
                let recovering = self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == incarnation && jm.recovering.is_some());
                if recovering {
                    self.end_recovery(sched, true);
                }
            }
            Event::RestartDelay { incarnation } => {
                if self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == incarnation)
                {
                    self.schedule(sched);
                }
            }
        }
        for index in std::mem::take(&mut self.pending_faults) {
            sched.at(now, Event::Fault { index });
        }
    }

    fn is_done(&self) -> bool {
        self.jm.as_ref().is_some_and(|jm| jm.status.is_terminal())
    }
}

impl World {
    /// Per subtask the JobMaster's current attempt and its state, per TaskManager its live
    /// process (for the `no-lost-rpc` oracle).
    pub fn who_is_current(&self) -> super::oracle::Current {
        let attempts = (0..self.graph.subtasks.len())
            .map(|s| {
                self.jm
                    .as_ref()
                    .map(|jm| (jm.exec[s].attempt, jm.exec[s].state))
            })
            .collect();
        let processes = self
            .tms
            .iter()
            .map(|t| t.alive.then_some(t.process))
            .collect();
        super::oracle::Current {
            attempts,
            processes,
        }
    }

    /// For a run that stopped early: what each unfinished subtask was doing.
    pub fn describe_unfinished(&self) -> Vec<String> {
        let Some(jm) = &self.jm else {
            return vec!["no JobManager is elected".to_owned()];
        };
        let mut out = Vec::new();
        if jm.recovering.is_some() {
            out.push("the JobManager is still RECONCILING (waiting for partition reports)".into());
        }
        for (v, vertex) in self.graph.vertices.iter().enumerate() {
            let Some(p) = jm.parallelism[v] else {
                out.push(format!("{} is not initialized", vertex.name));
                continue;
            };
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let e = jm.exec[s.index()];
                if e.state != ExecutionState::Finished {
                    out.push(format!(
                        "{} attempt {} is {} in the JobManager's view",
                        self.graph.subtask_name(s),
                        e.attempt,
                        e.state
                    ));
                }
            }
        }
        out
    }
}
