//! The batch world (P2): a JobMaster with the adaptive batch scheduler, TaskManagers that
//! hold result partitions, an optional remote shuffle service, the durable job event store,
//! and the dispatch of kernel events among them.
//!
//! Like the streaming world, actors learn of each other only through messages with latency
//! (FIFO per link, dropped when the receiving process died or the link is cut), and crashes
//! drop volatile state: the JobMaster's execution graph, enumerators and write buffer, a
//! TaskManager's tasks and (internal shuffle) partitions. Data moves through partitions, read
//! whole when a consumer starts (blocking exchanges).
//!
//! One module per actor or protocol concern, all methods of the one `World` (its state is in
//! this file): `rpc` (links, the P3.3 outbox, delivery), `taskmanager` (tasks and partitions on
//! a TaskManager), `jobmaster` (what the JobMaster receives, its views), `scheduler` (the
//! adaptive batch scheduler, failover and resets), `job_events` (the event log), `processes`
//! (crashes, elections, lost TaskManagers), `job_recovery` (FLIP-383 on a new JobMaster),
//! `speculation` (P2.8, speculative attempts of slow tasks), `reconcile` (P3 for batch jobs)
//! and `faults`.

mod faults;
mod job_events;
mod job_recovery;
mod jobmaster;
mod processes;
mod reconcile;
mod rpc;
mod scheduler;
mod speculation;
mod taskmanager;
#[cfg(test)]
mod tests;

use super::data::{self, Fragment};
use super::events::{JobEvent, JobEventStore, Location, Replayed};
use super::oracle::{BatchOracles, Call, Received, TaskRpc};
use super::recovery;
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::faults::FaultPlan;
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::net::{RpcLinks, RpcPolicy};
use crate::scenario::{Batch, Scenario, ShuffleKind};
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::Outbox;
use crate::trace::{
    Address, FlushReason, ReconcileOutcome, RerunReason, Retain, Trace, TraceEvent,
};
use crate::world::Event;
use sim::{Duration, Instant, RandomStreams, Scheduler, Stream};
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

/// A message as it travels on a link.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub msg: Msg,
    /// The TaskManager's connection it went out on: a disconnection resets the connection,
    /// and what was on the wire is gone.
    pub epoch: u32,
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
    outbox: Outbox<Msg>,
    /// Its RPCs on the wire to the JobMaster: kept ones are resent only once it is empty,
    /// so a resent RPC never overtakes an older one.
    in_flight: u32,
    /// P3.3: its task RPCs on the wire by send order, until they arrive (applied, refused
    /// and kept, or lost with a connection, which it learns of on arrival).
    wire: std::collections::BTreeMap<u64, Msg>,
    /// Bumped by every disconnection.
    link_epoch: u32,
    /// Bumped whenever it loses its leader: a registration timeout armed then (F2.5) acts only
    /// if no later loss re-armed it.
    leader_losses: u32,
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
    /// When this JobMaster deployed the attempt (P2.8: its execution time counts from then).
    deployed_at: Option<Instant>,
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
    /// F2.3: its job event store failed to write; it logs nothing more for the rest of its life.
    events_failed: bool,
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
    /// P2.8: per subtask, its speculative attempt (beside `exec`, the original one).
    spec: Vec<Option<Execution>>,
    /// P2.8: per subtask, how long its FINISHED attempt ran (0 for one recovered as finished,
    /// which this JobMaster never deployed).
    ran: Vec<Option<Duration>>,
    /// P2.8: per TaskManager, until when it is blocked for speculative attempts (slow node).
    blocked_until: Vec<Instant>,
    /// P2.8: a `SpeculationCheck` is scheduled.
    check_pending: bool,
    /// P2.8: attempts it cancelled beside another one; a partition one of them still wrote
    /// belongs to nobody and is released.
    orphans: BTreeSet<(SubtaskId, u32)>,
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
    /// The links between the JobMaster and the TaskManagers, shared with streaming jobs.
    rpc: RpcLinks<Sent>,
    work_rng: Stream,
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
    pub(super) jm: Option<JobMaster>,
    jm_incarnation: u32,
    crashed_at: Instant,
    tms: Vec<TaskManager>,
    remote: Vec<Partition>,
    tasks: Vec<Option<Task>>,
    /// P2.8: per subtask, a speculative attempt on its TaskManager, beside `tasks`.
    spec_tasks: Vec<Option<Task>>,
    pub store: JobEventStore,
    /// Per subtask: the descriptor of its latest deployment.
    descriptors: Vec<Descriptor>,
    /// P2.8: per subtask, the descriptor of its speculative attempt's deployment.
    spec_descriptors: Vec<Option<Descriptor>>,
    /// Sink outputs staged by finished attempts (a file sink's pending files), by
    /// (subtask, attempt); committed when the job finishes.
    staged: Vec<(SubtaskId, u32, Vec<Fragment>)>,
    /// One output per sink subtask: a later commit replaces it (P2.7).
    pub committed: Vec<(SubtaskId, Vec<Fragment>)>,
    /// P2.7 (durable, HA storage): the finished job's result was written; the job is over and
    /// no JobManager recovers it again.
    job_result_written: bool,
    /// Ground truth: the latest attempt of each subtask that finished on its TaskManager,
    /// and since when.
    done: Vec<Option<(u32, Instant)>>,
    /// Per subtask: the recovery whose re-run it is, until it finishes.
    rerun_of: Vec<Option<usize>>,
    pub recoveries: Vec<RecoveryRecord>,
    pub failovers: u32,
    /// P2.8: every speculative attempt launched, and whether it finished first.
    pub speculations: Vec<(SubtaskId, bool)>,
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
            rpc: RpcLinks::new(
                tms as u32,
                scenario.network.rpc_latency,
                &streams,
                RpcPolicy::Batch,
            ),
            work_rng: streams.stream("work"),
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
                    outbox: Outbox::default(),
                    in_flight: 0,
                    wire: std::collections::BTreeMap::new(),
                    link_epoch: 0,
                    leader_losses: 0,
                })
                .collect(),
            remote: Vec::new(),
            tasks: (0..n).map(|_| None).collect(),
            spec_tasks: (0..n).map(|_| None).collect(),
            store: JobEventStore::default(),
            descriptors: vec![Descriptor::default(); n],
            spec_descriptors: vec![None; n],
            staged: Vec::new(),
            committed: Vec::new(),
            job_result_written: false,
            done: vec![None; n],
            rerun_of: vec![None; n],
            recoveries: Vec::new(),
            failovers: 0,
            speculations: Vec::new(),
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
        for due in self.faults.observe(&self.graph, index, &event) {
            match due {
                crate::faults::Due::Fire(fault) => self.pending_faults.push(fault),
                crate::faults::Due::Release(_) => {
                    unreachable!("validation refuses hold_channel in a batch job")
                }
            }
        }
    }
}

impl World {
    /// Dispatches one kernel event to the actor it concerns.
    pub(crate) fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        match event {
            Event::Start => self.start(sched),
            Event::Rpc { link } => {
                let envelope = self.rpc.deliver(link);
                self.deliver(sched, link, envelope);
            }
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
                        self.lose_leader(sched, tm);
                    }
                }
            }
            Event::JobMasterElected => self.elect(sched),
            Event::TaskManagerTimeout {
                task_manager,
                dead,
                incarnation,
            } => {
                if self
                    .jm
                    .as_ref()
                    .is_some_and(|jm| jm.incarnation == incarnation)
                {
                    self.lose_task_manager(sched, task_manager, dead);
                }
            }
            Event::LeaderTimeout {
                task_manager,
                process,
            } => {
                let t = &self.tms[task_manager as usize];
                if t.alive && t.process == process && !t.connected && t.leader.is_some() {
                    self.lose_leader(sched, task_manager);
                }
            }
            Event::RegistrationTimeout {
                task_manager,
                process,
                losses,
            } => self.registration_timed_out(now, task_manager, process, losses),
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
            Event::SpeculationCheck { incarnation } => self.speculation_check(sched, incarnation),
            Event::JobResultWritten { incarnation } => {
                let finished = self.jm.as_ref().is_some_and(|jm| {
                    jm.incarnation == incarnation && jm.status == JobStatus::Finished
                });
                if finished {
                    self.job_result_written = true;
                    self.record(now, TraceEvent::JobResultWritten);
                }
            }
            Event::TaskInitialized { .. }
            | Event::Arrive { .. }
            | Event::Credit { .. }
            | Event::AllRecordsProcessed { .. }
            | Event::CheckpointTick { .. }
            | Event::CheckpointTriggerAt { .. }
            | Event::CheckpointExpired { .. }
            | Event::ReleaseChannel { .. }
            | Event::AlignmentTimeout { .. }
            | Event::SnapshotUploaded { .. } => {
                unreachable!("a batch job schedules no streaming event: {event:?}")
            }
        }
        for index in std::mem::take(&mut self.pending_faults) {
            sched.at(now, Event::Fault { index });
        }
    }

    /// A FINISHED job is over once its result is durable (P2.7); before, a JobManager crash
    /// brings it back.
    pub(crate) fn is_done(&self) -> bool {
        self.jm.as_ref().is_some_and(|jm| {
            jm.status.is_terminal() && (jm.status != JobStatus::Finished || self.job_result_written)
        })
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

    /// Vertex `v`'s parallelism as the JobMaster decided it (or the fixed one), once it was
    /// initialized.
    pub fn decided_parallelism(&self, v: usize) -> Option<u32> {
        self.jm.as_ref().and_then(|jm| jm.parallelism[v])
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
