//! The world's batch half (P2): a batch job's JobMaster (adaptive batch scheduler),
//! TaskManagers that hold result partitions, an optional remote shuffle service and
//! the durable job event store, and the dispatch of kernel events among them.
//!
//! Like the streaming half, actors learn of each other only through messages with latency
//! (FIFO per link, dropped when the receiving process died or the link is cut), and crashes
//! drop volatile state: the JobMaster's execution graph, enumerators and write buffer, a
//! TaskManager's tasks and (internal shuffle) partitions. Data moves through partitions, read
//! whole when a consumer starts (blocking exchanges).
//!
//! The half is the JobMaster (`JobMaster`, `crate::jobmaster::batch`), which owns its state
//! and acts through a [`Ctx`], the TaskManagers (`crate::taskmanager::batch`, and
//! `crate::taskmanager::reconcile` for their P3 reports and kept RPCs), each owning its state
//! and acting through a [`TmCtx`], and the [`Cluster`] both act on: the task table (`tasks`),
//! the remote shuffle service, the links, the job event store and HA records, and the trace.
//! What belongs to no one actor is here: `rpc` (links, delivery, fencing, P3.3's refusal or keeping of a task's RPC),
//! `processes` (the first JobMaster and elections; what a new JobMaster then does is its own
//! `take_over`) and `faults` (each fault routed to the actor it hits, which acts on itself).

mod faults;
mod processes;
mod rpc;
#[cfg(test)]
mod tests;
mod tm_ctx;

pub use tm_ctx::{Peers, TmCtx};

use crate::batch::data::Fragment;
use crate::batch::events::JobEventStore;
use crate::batch::oracle::{BatchOracles, Received};
use crate::bug::Bug;
use crate::faults::FaultPlan;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::jobmaster::batch::{AdaptiveBatch, RecoveryRecord};
use crate::jobmaster::{JobMaster, With};
use crate::net::{RpcLinks, RpcPolicy};
use crate::scenario::{Batch as BatchConfig, Scenario};
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::batch::{Blocking, Descriptor, Partition};
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Call, FlushReason, Retain, Rpc, Trace, TraceEvent};
use crate::world::faults::fire;
use crate::world::{Act, Event};
use faults::FaultCtx;
use sim::{Duration, Instant, RandomStreams, Scheduler, Stream};

/// How the batch world reads an RPC (`trace::Rpc`, the one vocabulary of both kinds of job).
impl Rpc {
    /// A task's RPC to the JobMaster (its RUNNING, FINISHED or FAILED, or a source's split
    /// request): refused while the JobMaster reconciles, and retried (P3.3). The oracles tell
    /// task RPCs apart on their own (`TaskRpc::of`).
    pub(crate) fn is_task_rpc(self) -> bool {
        match self.call {
            Call::UpdateTaskExecutionState { state, .. } => matches!(
                state,
                ExecutionState::Running | ExecutionState::Finished | ExecutionState::Failed
            ),
            Call::RequestSplit => true,
            _ => false,
        }
    }

    /// What `reconcile-outcome` learns when the JobMaster takes this message (a registration
    /// is told separately, once the JobMaster dropped any older process of the sender).
    pub(crate) fn received(self) -> Option<Received> {
        let (subtask, attempt) = (self.subtask, self.attempt);
        Some(match self.call {
            Call::ReportExecution { state, parallelism } => Received::Execution {
                subtask,
                attempt,
                state,
                parallelism,
            },
            Call::ReportSplit(split) => Received::Split {
                subtask,
                attempt,
                split,
            },
            Call::ReportInput {
                producer,
                producer_attempt,
            } => Received::Input {
                subtask,
                attempt,
                producer,
                producer_attempt,
            },
            Call::ReportPartition { .. } => Received::Partition { subtask, attempt },
            Call::ReportDone => Received::Done,
            _ => return None,
        })
    }
}

/// A message as it travels on a link.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub msg: Rpc,
    /// The TaskManager's connection it went out on: a disconnection resets the connection,
    /// and what was on the wire is gone.
    pub epoch: u32,
}

/// The world's batch half: the JobMaster, the TaskManagers, and the cluster they act on.
/// Kernel events are dispatched here: to the JobMaster through its [`Ctx`], to a TaskManager
/// through its [`TmCtx`].
pub struct Batch {
    /// The elected JobMaster; `None` between a crash and the next election.
    pub(crate) jm: Option<JobMaster>,
    /// The TaskManagers, each acting through a [`TmCtx`] (`crate::taskmanager::batch`).
    pub(crate) tms: Vec<TaskManager<Blocking>>,
    pub cluster: Cluster,
}

/// Everything of a batch run but its actors: the task table (the tasks the TaskManagers run,
/// per subtask), the remote shuffle service, the links, the durable job event store and HA
/// records, and the trace with what watches it. The JobMaster reaches it only through a
/// [`Ctx`], a TaskManager only through a [`TmCtx`].
pub struct Cluster {
    pub graph: ExecutionGraph,
    pub batch: BatchConfig,
    pub(crate) bug: Option<Bug>,
    pub trace: Trace,
    pub faults: FaultPlan,
    pub oracles: BatchOracles,
    /// The links between the JobMaster and the TaskManagers, shared with streaming jobs.
    pub(crate) rpc: RpcLinks<Sent>,
    pub(crate) work_rng: Stream,
    pub(crate) heartbeat: Duration,
    pub(crate) restart_delay: Duration,
    /// `jobmaster.failover: reconcile` (P3): the window and the terminal-state retention.
    pub(crate) reconcile: Option<(Duration, Duration)>,
    /// P3.1 (HA storage): the TaskManager processes the job uses, as registered by any of
    /// its JobMasters and not declared lost since; it outlives JobMasters.
    pub(crate) expected_task_managers: Vec<Option<u32>>,
    pub reconciliations: Vec<crate::checkpoint::stats::ReconcileRecord>,
    /// P3.3: task RPCs kept for a retry, and sent again.
    pub rpcs_kept: u64,
    pub rpcs_resent: u64,
    pub(crate) max_restarts: u32,
    pub(crate) slots: u32,
    /// The incarnation of the JobMaster elected last (HA leader election): what the
    /// TaskManagers address.
    pub(crate) jm_incarnation: u32,
    pub(crate) crashed_at: Instant,
    pub(crate) remote: Vec<Partition>,
    pub store: JobEventStore,
    /// Per subtask: the descriptor of its latest deployment.
    pub(crate) descriptors: Vec<Descriptor>,
    /// P2.8: per subtask, the descriptor of its speculative attempt's deployment.
    pub(crate) spec_descriptors: Vec<Option<Descriptor>>,
    /// Sink outputs staged by finished attempts (a file sink's pending files), by
    /// (subtask, attempt); committed when the job finishes.
    pub(crate) staged: Vec<(SubtaskId, u32, Vec<Fragment>)>,
    /// One output per sink subtask: a later commit replaces it (P2.7).
    pub committed: Vec<(SubtaskId, Vec<Fragment>)>,
    /// P2.7 (durable, HA storage): the finished job's result was written; the job is over and
    /// no JobManager recovers it again.
    pub(crate) job_result_written: bool,
    /// Ground truth: the latest attempt of each subtask that finished on its TaskManager,
    /// and since when.
    pub(crate) done: Vec<Option<(u32, Instant)>>,
    /// Per subtask: the recovery whose re-run it is, until it finishes.
    pub(crate) rerun_of: Vec<Option<usize>>,
    pub recoveries: Vec<RecoveryRecord>,
    pub failovers: u32,
    /// P2.8: every speculative attempt launched, and whether it finished first.
    pub speculations: Vec<(SubtaskId, bool)>,
    pub is_source: Vec<bool>,
    /// Per vertex: `"parallelism": "auto"`.
    pub(crate) adaptive: Vec<bool>,
    /// Faults whose predicate held, to fire at the current instant.
    pub(crate) pending_faults: Vec<u32>,
    /// The coverage probes the run hit (`crate::probes`).
    pub probes: crate::probes::ProbeSet,
    /// Per subtask: the next attempt number. Attempt ids are unique across JobMasters, as
    /// Flink's `ExecutionAttemptID`s are, so a partition is never mistaken for another's.
    pub(crate) next_attempt: Vec<u32>,
}

impl Batch {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> Batch {
        Batch {
            jm: None,
            tms: (0..scenario.cluster.task_managers)
                .map(TaskManager::new)
                .collect(),
            cluster: Cluster::new(scenario, seed, retain),
        }
    }

    pub fn job_status(&self) -> JobStatus {
        self.jm
            .as_ref()
            .map_or(JobStatus::Restarting, |jm| jm.status())
    }
}

impl Cluster {
    fn new(scenario: &Scenario, seed: u64, retain: Retain) -> Cluster {
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
        Cluster {
            oracles: BatchOracles::new(
                &graph,
                &batch,
                (tms, scenario.cluster.slots_per_task_manager),
                scenario.job.vertices.iter().map(|v| v.adaptive).collect(),
                &scenario.jobmaster,
                &scenario.faults,
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
            jm_incarnation: 0,
            crashed_at: Instant::ZERO,
            remote: Vec::new(),
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

    pub(crate) fn record(&mut self, now: Instant, event: TraceEvent) {
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

/// A batch JobMaster's view of the world while it handles one event: the cluster it acts on
/// (its messages, the trace, durable storage), the TaskManagers (what it knows of their
/// processes and partitions; it tells them of itself through `Ctx::register`) and the
/// kernel's scheduler for its timers.
pub struct Ctx<'a, 's> {
    pub cluster: &'a mut Cluster,
    pub(crate) tms: &'a mut [TaskManager<Blocking>],
    pub sched: &'a mut Scheduler<'s, Event>,
}

impl Act for Ctx<'_, '_> {
    fn now(&self) -> Instant {
        self.sched.now()
    }

    fn record(&mut self, event: TraceEvent) {
        let now = self.sched.now();
        self.cluster.record(now, event);
    }

    fn after(&mut self, delay: Duration, event: Event) {
        self.sched.after(delay, event);
    }
}

impl Ctx<'_, '_> {
    /// Sends `msg` to process `process` of TaskManager `tm`.
    pub(crate) fn send_to_task_manager(&mut self, tm: u32, process: u32, msg: Rpc) {
        let to = (Address::JobMaster, Address::TaskManager(tm), process);
        self.cluster
            .send_to(self.sched, &self.tms[tm as usize], to, msg, 0);
    }

    /// TaskManager `tm` learns of the JobMaster `incarnation` (HA) and registers with it.
    pub(crate) fn register(&mut self, tm: u32, incarnation: u32) {
        let (t, mut ctx) = tm_ctx::split(self.tms, self.cluster, self.sched, tm);
        t.register(&mut ctx, incarnation);
    }
}

impl Batch {
    /// The JobMaster of `incarnation`, if it is the one alive, with its context.
    pub(crate) fn jobmaster<'a, 's>(
        &'a mut self,
        sched: &'a mut Scheduler<'s, Event>,
        incarnation: Option<u32>,
    ) -> Option<(With<'a, AdaptiveBatch>, Ctx<'a, 's>)> {
        let jm = self
            .jm
            .as_mut()
            .filter(|jm| incarnation.is_none_or(|i| jm.incarnation() == i))?
            .adaptive();
        let ctx = Ctx {
            cluster: &mut self.cluster,
            tms: &mut self.tms,
            sched,
        };
        Some((jm, ctx))
    }

    /// TaskManager `tm` with its context.
    pub(crate) fn task_manager<'a, 's>(
        &'a mut self,
        sched: &'a mut Scheduler<'s, Event>,
        tm: u32,
    ) -> (&'a mut TaskManager<Blocking>, TmCtx<'a, 's>) {
        tm_ctx::split(&mut self.tms, &mut self.cluster, sched, tm)
    }

    /// TaskManager `tm` learns of the current leader, if any (HA), and registers with it.
    fn register(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        if let Some(incarnation) = self.jm.as_ref().map(|jm| jm.incarnation()) {
            let (t, mut ctx) = self.task_manager(sched, tm);
            t.register(&mut ctx, incarnation);
        }
    }

    /// Dispatches one kernel event to the actor it concerns.
    pub(crate) fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        match event {
            Event::Start => self.start(sched),
            Event::Rpc { link } => {
                let envelope = self.cluster.rpc.deliver(link);
                self.deliver(sched, link, envelope);
            }
            Event::ReconcileTimeout { incarnation } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    jm.on_reconcile_timeout(&mut ctx);
                }
            }
            Event::RetryParked {
                task_manager,
                process,
            } => {
                let (t, mut ctx) = self.task_manager(sched, task_manager);
                t.retry_parked(&mut ctx, process);
            }
            Event::TaskStep { subtask, attempt } => {
                // The TaskManager that runs it, if one still does.
                let host = self
                    .tms
                    .iter()
                    .find(|t| t.mode.running(subtask, attempt))
                    .map(|t| t.index);
                if let Some(tm) = host {
                    let (t, mut ctx) = self.task_manager(sched, tm);
                    t.task_step(&mut ctx, subtask, attempt);
                }
            }
            Event::FlushTick { incarnation } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    jm.scheduler.flush_pending = false;
                    jm.flush(&mut ctx, FlushReason::Interval);
                }
            }
            Event::Fault { index } => {
                if let Some(fault) = self.cluster.faults.fire(index, now) {
                    let kind = fault.kind.clone();
                    fire(&mut FaultCtx { batch: self, sched }, index, kind);
                }
            }
            Event::JobMasterTimeout { incarnation } => {
                for tm in 0..self.tms.len() as u32 {
                    if self.tms[tm as usize].works_for(incarnation) {
                        let (t, mut ctx) = self.task_manager(sched, tm);
                        t.lose_leader(&mut ctx);
                    }
                }
            }
            Event::JobMasterElected => self.elect(sched),
            Event::TaskManagerTimeout {
                task_manager,
                dead,
                incarnation,
            } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    jm.lose_task_manager(&mut ctx, task_manager, dead);
                }
            }
            Event::LeaderTimeout {
                task_manager,
                process,
            } => {
                // F2.5: the TaskManager's heartbeat timeout to its JobMaster ran out.
                if self.cluster.bug != Some(Bug::KeepLeaderWhenCutOff)
                    && self.tms[task_manager as usize].misses_leader(process)
                {
                    let (t, mut ctx) = self.task_manager(sched, task_manager);
                    t.lose_leader(&mut ctx);
                }
            }
            Event::RegistrationTimeout {
                task_manager,
                process,
                losses,
            } => {
                let (t, mut ctx) = self.task_manager(sched, task_manager);
                t.registration_timed_out(&mut ctx, process, losses);
            }
            Event::TaskManagerRestart { task_manager } => {
                let (t, mut ctx) = self.task_manager(sched, task_manager);
                t.start(&mut ctx);
                self.register(sched, task_manager);
            }
            Event::Reconnect { task_manager } => self.reconnect(sched, task_manager),
            Event::WorkerTimeout { incarnation } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    if jm.scheduler.recovering.is_some() {
                        jm.end_recovery(&mut ctx, true);
                    }
                }
            }
            Event::RestartDelay { incarnation } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    jm.schedule(&mut ctx);
                }
            }
            Event::SpeculationCheck { incarnation } => {
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, Some(incarnation)) {
                    jm.speculation_check(&mut ctx);
                }
            }
            Event::JobResultWritten { incarnation } => {
                let finished = self.jm.as_ref().is_some_and(|jm| {
                    jm.incarnation() == incarnation && jm.status() == JobStatus::Finished
                });
                if finished {
                    self.cluster.job_result_written = true;
                    self.cluster.record(now, TraceEvent::JobResultWritten);
                }
            }
            Event::TaskInitialized { .. }
            | Event::Arrive { .. }
            | Event::Credit { .. }
            | Event::OutputFlush { .. }
            | Event::SourceWake { .. }
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
        for index in std::mem::take(&mut self.cluster.pending_faults) {
            sched.at(now, Event::Fault { index });
        }
    }

    /// A FINISHED job is over once its result is durable (P2.7); before, a JobManager crash
    /// brings it back.
    pub(crate) fn is_done(&self) -> bool {
        self.jm.as_ref().is_some_and(|jm| {
            jm.status().is_terminal()
                && (jm.status() != JobStatus::Finished || self.cluster.job_result_written)
        })
    }
}

impl Batch {
    /// Per subtask the JobMaster's current attempt and its state, per TaskManager its live
    /// process (for the `no-lost-rpc` oracle).
    pub fn who_is_current(&self) -> crate::batch::oracle::Current {
        let attempts = (0..self.cluster.graph.subtasks.len())
            .map(|s| {
                self.jm.as_ref().map(|jm| {
                    let e = jm.batch().exec[s];
                    (e.attempt, e.state)
                })
            })
            .collect();
        let processes = self
            .tms
            .iter()
            .map(|t| t.alive.then_some(t.process))
            .collect();
        crate::batch::oracle::Current {
            attempts,
            processes,
        }
    }

    /// Vertex `v`'s parallelism as the JobMaster decided it (or the fixed one), once it was
    /// initialized.
    pub fn decided_parallelism(&self, v: usize) -> Option<u32> {
        self.jm.as_ref().and_then(|jm| jm.batch().parallelism[v])
    }

    /// For a run that stopped early: what each unfinished subtask was doing.
    pub fn describe_unfinished(&self) -> Vec<String> {
        let Some(jm) = &self.jm else {
            return vec!["no JobManager is elected".to_owned()];
        };
        let jm = jm.batch();
        let mut out = Vec::new();
        if jm.recovering.is_some() {
            out.push("the JobManager is still RECONCILING (waiting for partition reports)".into());
        }
        for (v, vertex) in self.cluster.graph.vertices.iter().enumerate() {
            let Some(p) = jm.parallelism[v] else {
                out.push(format!("{} is not initialized", vertex.name));
                continue;
            };
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let e = jm.exec[s.index()];
                if e.state != ExecutionState::Finished {
                    out.push(format!(
                        "{} attempt {} is {} in the JobManager's view",
                        self.cluster.graph.subtask_name(s),
                        e.attempt,
                        e.state
                    ));
                }
            }
        }
        out
    }
}
