//! The world: every actor, the network between them, the fault plan, and the dispatch of
//! kernel events.
//!
//! Actors (JobMaster, TaskManagers, tasks) own their state and change it only in their
//! handlers; they learn about each other only through RPCs and data channels, which the world
//! delivers with latency. The world is the only place that holds them all, and [`Ctx`] is the
//! narrow view a handler gets: the clock, the read-only graph, the network, durable storage,
//! the trace. The world also plays the cluster's processes dying and coming back: a crash drops
//! an actor's volatile state, and messages to a dead (or since restarted) process are lost.

use crate::bug::Bug;
use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::storage::{CheckpointStorage, ExternalSystem};
use crate::faults::FaultPlan;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::JobMaster;
use crate::net::{DataPlane, LinkId, RpcLinks};
use crate::oracle::Oracles;
use crate::probes::Probes;
use crate::record::Element;
use crate::scenario::{
    CheckpointMode, Checkpointing, Cluster, DurationRange, Failover, FailoverScope, FaultKind,
    FinishProtocol, JobMasterConfig, Scenario,
};
use crate::task::Task;
use crate::taskmanager::{outbox, Outbox, TaskManager};
use crate::trace::{Address, Call, FaultEvent, Retain, Rpc, Trace, TraceEvent};
use sim::{Duration, Instant, Model, RandomStreams, Scheduler, Stream};

/// A kernel event. Small and `Copy`: the queue moves these around millions of times.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The JobMaster starts: the job is submitted at time zero.
    Start,
    /// The oldest RPC in flight on `link` reaches its destination.
    Rpc { link: LinkId },
    /// The oldest in-flight element of `channel` reaches its consumer's input buffer, unless
    /// the channel was reset since (`epoch`).
    Arrive { channel: ChannelId, epoch: u32 },
    /// The consumer of `channel` dequeued a record: the producer may push again.
    Credit { channel: ChannelId },
    /// A task's current step (processing one record, or a source's pause between records) is
    /// over. Carries the attempt so a step scheduled for a previous attempt is ignored.
    TaskStep { subtask: SubtaskId, attempt: u32 },
    /// `flink` (F1.5): the consumer of `channel` tells its producer that every record was
    /// processed (it dequeued EndOfData).
    AllRecordsProcessed { channel: ChannelId, epoch: u32 },
    /// The CheckpointCoordinator's periodic trigger. Timers carry the JobMaster incarnation:
    /// they die with it.
    CheckpointTick { incarnation: u32 },
    /// One of the scenario's explicit `trigger_at` times.
    CheckpointTriggerAt { incarnation: u32 },
    /// A checkpoint's timeout passed.
    CheckpointExpired { checkpoint: u64, incarnation: u32 },
    /// A failover's restart delay passed.
    RestartDelay { incarnation: u32 },
    /// Fault `index` of the scenario fires.
    Fault { index: u32 },
    /// The JobMaster's heartbeat to lost TaskManager process `dead` timed out.
    TaskManagerTimeout {
        task_manager: u32,
        dead: u32,
        incarnation: u32,
    },
    /// A replacement TaskManager process starts.
    TaskManagerRestart { task_manager: u32 },
    /// The TaskManagers' heartbeat to the dead JobMaster `incarnation` timed out.
    JobMasterTimeout { incarnation: u32 },
    /// A new JobMaster has been elected.
    JobMasterElected,
    /// The reconcile window of JobMaster `incarnation` closes (P3.4).
    ReconcileTimeout { incarnation: u32 },
    /// TaskManager process `process` sends its refused RPCs again (P3.3).
    RetryParked { task_manager: u32, process: u32 },
    /// An aligned checkpoint has been aligning at `subtask` for `alignment_timeout` (F1.3).
    AlignmentTimeout {
        subtask: SubtaskId,
        attempt: u32,
        checkpoint: u64,
    },
}

/// The run's fixed settings that actors consult: which finish protocol, which injected bug.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// `None` when checkpointing is off.
    pub protocol: Option<FinishProtocol>,
    pub bug: Option<Bug>,
    pub channel_latency: DurationRange,
    /// Checkpoints are unaligned (P1.4).
    pub unaligned: bool,
    /// Aligned checkpoints switch to unaligned after aligning this long (F1.3).
    pub alignment_timeout: Option<Duration>,
    /// P1.5: a finishing task waits until its result partition is fully sent (unaligned only;
    /// otherwise the partition outlives the task).
    pub flush_before_finish: bool,
    /// Under `jobmaster.failover: reconcile` (P3), how long TaskManagers keep terminal task
    /// states (P3.1); `None` under `restart`.
    pub retention: Option<Duration>,
    /// `jobmaster.reconcile_timeout` (P3.4), for `reconcile-outcome`.
    pub reconcile_timeout: Duration,
    /// `checkpointing.min_pause` (P1.1), for the oracles' check of the trigger pace.
    pub min_pause: Duration,
    /// `jobmaster.failover_scope` (P1.8) and the number of TaskManagers, for `failover-scope`.
    pub failover_scope: FailoverScope,
    pub task_managers: u32,
    /// `jobmaster.restart_strategy.max_attempts` (P1.8), for `job-status`.
    pub max_attempts: u32,
}

/// Which processes are alive, and which incarnation of each: a message sent to one
/// incarnation is lost if that process dies, even if another one takes its place.
pub struct Membership {
    pub jobmaster_alive: bool,
    pub jobmaster: u32,
    pub task_manager_alive: Vec<bool>,
    pub task_manager: Vec<u32>,
}

impl Membership {
    fn incarnation(&self, address: Address) -> u32 {
        match address {
            Address::JobMaster => self.jobmaster,
            Address::TaskManager(i) => self.task_manager[i as usize],
        }
    }

    fn alive(&self, address: Address) -> bool {
        match address {
            Address::JobMaster => self.jobmaster_alive,
            Address::TaskManager(i) => self.task_manager_alive[i as usize],
        }
    }
}

/// What handlers share and may touch besides their own actor.
pub struct Io {
    pub data: DataPlane,
    pub rpc: RpcLinks,
    /// Processing times and source pacing.
    pub workload: Stream,
    pub trace: Trace,
    pub oracles: Oracles,
    /// Coverage probes (`crate::probes`): like the oracles, they watch every event; unlike
    /// them, they judge nothing, they only name the situations the run went through.
    pub probes: Probes,
    /// Durable checkpoint storage: survives the JobManager.
    pub storage: CheckpointStorage,
    /// Where two-phase-commit sinks commit.
    pub external: ExternalSystem,
    /// What happened to each checkpoint and failover, for the summary. Written, never read,
    /// by actors.
    pub stats: CheckpointStats,
    pub faults: FaultPlan,
    pub membership: Membership,
    /// Per TaskManager, the RPCs it keeps for the JobMaster (P3.3; only under reconcile).
    pub outboxes: Vec<Outbox>,
}

/// A handler's view of the world.
pub struct Ctx<'a, 's> {
    pub now: Instant,
    pub graph: &'a ExecutionGraph,
    pub config: &'a Config,
    pub io: &'a mut Io,
    pub sched: &'a mut Scheduler<'s, Event>,
}

impl Ctx<'_, '_> {
    /// Records `event` in the trace and shows it to the oracles, the probes and the fault plan.
    #[inline]
    pub fn record(&mut self, event: TraceEvent) {
        let index = self.io.trace.record(self.now, event);
        self.io.oracles.observe(
            self.graph,
            &self.io.storage,
            &self.io.faults,
            index,
            self.now,
            &event,
        );
        self.io.probes.observe(&event);
        for fault in self.io.faults.observe(self.graph, index, &event) {
            self.sched
                .after(Duration::ZERO, Event::Fault { index: fault });
        }
    }

    /// Sends an RPC; it arrives after the link's latency, in order with earlier RPCs on the
    /// same link, unless its destination dies first.
    pub fn send(&mut self, from: Address, to: Address, rpc: Rpc) {
        let incarnation = self.io.membership.incarnation(to);
        self.send_to(from, to, incarnation, rpc);
    }

    /// Sends an RPC to one incarnation of the destination process: the one the sender knows
    /// (a JobMaster addresses the TaskManager process that registered with it). If that
    /// process has died, the RPC is lost, even if a replacement runs by now.
    pub fn send_to(&mut self, from: Address, to: Address, incarnation: u32, rpc: Rpc) {
        self.io
            .oracles
            .observe_send(from, to, incarnation, rpc, self.now);
        if let (Address::TaskManager(tm), Address::JobMaster) = (from, to) {
            let outbox = &mut self.io.outboxes[tm as usize];
            if outbox.is_holding() && !outbox::is_report(rpc.call) {
                outbox.hold(rpc); // P3.3: behind the RPCs it keeps, in order
                self.io.stats.rpcs_kept += 1;
                return;
            }
        }
        let link = LinkId::between(from, to);
        let (extra, lost) = self.io.faults.rpc_delay(self.now);
        if let Some(retry) = lost {
            self.record(TraceEvent::RpcLost { from, to, retry });
        }
        let incarnations = (self.io.membership.incarnation(from), incarnation);
        let at = self.io.rpc.send(self.now, link, rpc, incarnations, extra);
        self.sched.at(at, Event::Rpc { link });
    }

    /// Puts an element on a channel's wire (the caller has checked credit for records).
    #[inline]
    pub fn push(&mut self, channel: ChannelId, element: Element) {
        let extra = self.io.faults.channel_delay(self.now);
        let (at, epoch) = self.io.data.push(self.now, channel, element, extra);
        self.sched.at(at, Event::Arrive { channel, epoch });
        self.record(TraceEvent::Push { channel, element });
    }

    /// Schedules the task's next step after `delay`.
    pub fn step_after(&mut self, delay: Duration, subtask: SubtaskId, attempt: u32) {
        self.sched
            .after(delay, Event::TaskStep { subtask, attempt });
    }
}

/// What a newly elected JobMaster is built from.
struct JobMasterSpec {
    cluster: Cluster,
    checkpointing: Option<Checkpointing>,
    config: JobMasterConfig,
}

pub struct World {
    pub graph: ExecutionGraph,
    pub config: Config,
    /// `None` while the JobMaster is dead and no successor has been elected.
    pub jobmaster: Option<JobMaster>,
    spec: JobMasterSpec,
    pub task_managers: Vec<TaskManager>,
    /// The current attempt of every subtask, while deployed.
    pub tasks: Vec<Option<Task>>,
    pub io: Io,
}

impl World {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> World {
        let graph = ExecutionGraph::build(&scenario.job);
        let streams = RandomStreams::new(seed);
        let cluster = scenario.cluster;
        let checkpointing = scenario.checkpointing.as_ref();
        let config = Config {
            protocol: checkpointing.map(|c| c.finish_protocol),
            bug: scenario.bug,
            channel_latency: scenario.network.channel_latency,
            unaligned: checkpointing.is_some_and(|c| c.mode == CheckpointMode::Unaligned),
            alignment_timeout: checkpointing.and_then(|c| c.alignment_timeout),
            flush_before_finish: checkpointing.is_some_and(|c| c.flush_before_finish),
            retention: (scenario.jobmaster.failover == Failover::Reconcile)
                .then_some(scenario.jobmaster.terminal_state_retention),
            reconcile_timeout: scenario.jobmaster.reconcile_timeout,
            min_pause: checkpointing.map_or(Duration::ZERO, |c| c.min_pause),
            failover_scope: scenario.jobmaster.failover_scope,
            task_managers: cluster.task_managers,
            max_attempts: scenario.jobmaster.restart_strategy.max_attempts,
        };
        let tms = cluster.task_managers as usize;
        let io = Io {
            data: DataPlane::new(&graph, &scenario.network, &streams),
            rpc: RpcLinks::new(cluster.task_managers, &scenario.network, &streams),
            workload: streams.stream("workload"),
            trace: Trace::new(retain),
            oracles: Oracles::new(&graph, config),
            probes: Probes::new(&graph, config),
            storage: CheckpointStorage::default(),
            external: ExternalSystem::default(),
            stats: CheckpointStats::default(),
            faults: FaultPlan::new(scenario, &graph, &streams),
            membership: Membership {
                jobmaster_alive: true,
                jobmaster: 0,
                task_manager_alive: vec![true; tms],
                task_manager: vec![0; tms],
            },
            outboxes: (0..tms).map(|_| Outbox::default()).collect(),
        };
        let spec = JobMasterSpec {
            cluster,
            checkpointing: scenario.checkpointing.clone(),
            config: scenario.jobmaster,
        };
        World {
            jobmaster: Some(JobMaster::new(
                &graph,
                cluster,
                spec.checkpointing.clone(),
                spec.config,
                config.bug,
                0,
                vec![Some(0); tms],
            )),
            spec,
            config,
            task_managers: (0..cluster.task_managers).map(TaskManager::new).collect(),
            tasks: (0..graph.subtasks.len()).map(|_| None).collect(),
            graph,
            io,
        }
    }

    /// The job's status as far as anyone can tell: the live JobMaster's, or RUNNING while a
    /// successor is being elected (the job has not ended).
    pub fn job_status(&self) -> crate::status::JobStatus {
        self.jobmaster
            .as_ref()
            .map_or(crate::status::JobStatus::Running, |jm| jm.status())
    }

    /// Every source is bounded: only then can the job be required to terminate.
    pub fn bounded(&self) -> bool {
        self.graph.vertices.iter().all(|v| match &v.operator {
            crate::scenario::Operator::Source { records, .. } => records
                .iter()
                .all(|r| matches!(r, crate::scenario::Records::Bounded(_))),
            _ => true,
        })
    }
}

impl Model for World {
    type Event = Event;

    #[inline]
    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        let World {
            graph,
            config,
            jobmaster,
            spec,
            task_managers,
            tasks,
            io,
        } = self;
        let reconcile = spec.config.failover == Failover::Reconcile;
        let mut ctx = Ctx {
            now,
            graph,
            config,
            io,
            sched,
        };
        match event {
            Event::Start => {
                for (at, index) in ctx.io.faults.timed() {
                    ctx.sched.at(at, Event::Fault { index });
                }
                if let Some(jm) = jobmaster {
                    jm.start(&mut ctx);
                }
            }
            Event::Rpc { link } => {
                let (sent_at, rpc, incarnation, sender) = ctx.io.rpc.deliver(link);
                let (from, to) = (link.from(), link.to());
                let membership = &ctx.io.membership;
                let dead = !membership.alive(to) || membership.incarnation(to) != incarnation;
                // Fencing (Flink's JobMasterId): a TaskManager refuses the RPCs of a
                // JobMaster that is no longer the leader.
                let fenced = from == Address::JobMaster && membership.jobmaster != sender;
                if let (Address::TaskManager(tm), true) = (from, reconcile) {
                    // P3.3: under reconciliation no RPC to the JobMaster is lost while its
                    // TaskManager lives: one that found no JobMaster, or one a reconciling
                    // JobMaster refuses (and any behind such), waits in the outbox. Reports
                    // belong to one election and are never kept.
                    let refused = jobmaster.as_ref().is_some_and(|jm| jm.refuses(rpc.call));
                    let sender_alive = membership.task_manager_alive[tm as usize]
                        && membership.task_manager[tm as usize] == sender;
                    if !sender_alive && (outbox::is_report(rpc.call) || refused || dead) {
                        // The sender died since: nobody is left to keep what the JobMaster
                        // would refuse, and a report of a dead process is void (its heartbeat
                        // timeout tells the JobMaster so, maybe already).
                        ctx.record(TraceEvent::RpcDropped {
                            from,
                            to,
                            rpc,
                            fenced: false,
                        });
                        return;
                    }
                    if !outbox::is_report(rpc.call)
                        && sender_alive
                        && (dead || refused || ctx.io.outboxes[tm as usize].is_holding())
                    {
                        keep(&mut ctx, tm, rpc);
                        return;
                    }
                }
                if dead || fenced {
                    ctx.record(TraceEvent::RpcDropped {
                        from,
                        to,
                        rpc,
                        fenced,
                    });
                    return;
                }
                ctx.record(TraceEvent::Rpc {
                    from,
                    to,
                    sent_at,
                    rpc,
                });
                match (from, to, rpc.call) {
                    (Address::TaskManager(tm), Address::JobMaster, _) => {
                        if let Some(jm) = jobmaster {
                            jm.on_rpc(&mut ctx, tm, rpc);
                        }
                    }
                    (Address::JobMaster, Address::JobMaster, _) => {
                        unreachable!("the JobMaster sends no RPC to itself")
                    }
                    (_, Address::TaskManager(tm), Call::SubmitTask(restore)) => {
                        let slot = &mut tasks[rpc.subtask.index()];
                        if let Some(old) = slot.as_mut().filter(|t| !t.state().is_terminal()) {
                            // The slot still runs a previous attempt: it is cancelled first.
                            old.cancel(&mut ctx, false);
                        }
                        let task = task_managers[tm as usize].submit(
                            &ctx,
                            rpc.subtask,
                            rpc.attempt,
                            restore,
                        );
                        slot.insert(task).start(&mut ctx);
                    }
                    (_, Address::TaskManager(tm), Call::CancelTask) => {
                        let slot = &mut tasks[rpc.subtask.index()];
                        if let Some(task) = slot.as_mut().filter(|t| t.attempt() == rpc.attempt) {
                            if !task.state().is_terminal() {
                                task.cancel(&mut ctx, true);
                                task_managers[tm as usize].task_ended(task, now);
                                *slot = None;
                            }
                        }
                    }
                    (_, Address::TaskManager(_), call) => match &mut tasks[rpc.subtask.index()] {
                        Some(task) if task.attempt() == rpc.attempt => task.on_rpc(&mut ctx, call),
                        // The attempt is gone: nothing to deliver to.
                        _ => {}
                    },
                }
            }
            Event::Arrive { channel, epoch } => {
                if ctx.io.data.epoch(channel) != epoch {
                    return; // sent into a partition that has since been released
                }
                let (element, was_empty) = ctx.io.data.arrive(channel);
                ctx.record(TraceEvent::Arrive { channel, element });
                let consumer = ctx.graph.channels[channel.index()].to;
                if let Some(task) = &mut tasks[consumer.index()] {
                    task.on_input(&mut ctx, channel, element, was_empty);
                }
            }
            Event::Credit { channel } => {
                let producer = ctx.graph.channels[channel.index()].from;
                if let Some(task) = &mut tasks[producer.index()] {
                    task.on_credit(&mut ctx, channel);
                }
            }
            Event::TaskStep { subtask, attempt } => {
                if let Some(task) = &mut tasks[subtask.index()] {
                    if task.attempt() == attempt {
                        task.on_step(&mut ctx);
                    }
                }
            }
            Event::AlignmentTimeout {
                subtask,
                attempt,
                checkpoint,
            } => {
                if let Some(task) = tasks[subtask.index()]
                    .as_mut()
                    .filter(|t| t.attempt() == attempt)
                {
                    task.on_alignment_timeout(&mut ctx, checkpoint);
                }
            }
            Event::AllRecordsProcessed { channel, epoch } => {
                if ctx.io.data.epoch(channel) != epoch {
                    return;
                }
                ctx.record(TraceEvent::AllRecordsProcessed { channel });
                let producer = ctx.graph.channels[channel.index()].from;
                if let Some(task) = &mut tasks[producer.index()] {
                    task.on_all_records_processed(&mut ctx);
                }
            }
            Event::CheckpointTick { incarnation } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_tick(&mut ctx);
                }
            }
            Event::CheckpointTriggerAt { incarnation } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_trigger_at(&mut ctx);
                }
            }
            Event::CheckpointExpired {
                checkpoint,
                incarnation,
            } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_expired(&mut ctx, checkpoint);
                }
            }
            Event::RestartDelay { incarnation } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_restart_delay(&mut ctx);
                }
            }
            Event::Fault { index } => {
                // A fault due after `heal_at` never fires: the healed phase has begun.
                if let Some(fault) = ctx.io.faults.fire(index, now) {
                    let kind = fault.kind.clone();
                    fire(&mut ctx, jobmaster, task_managers, tasks, index, kind);
                }
            }
            Event::TaskManagerTimeout {
                task_manager,
                dead,
                incarnation,
            } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_task_manager_lost(&mut ctx, task_manager, dead);
                }
            }
            Event::TaskManagerRestart { task_manager } => {
                ctx.io.membership.task_manager_alive[task_manager as usize] = true;
                let process = ctx.io.membership.task_manager[task_manager as usize];
                ctx.record(TraceEvent::TaskManagerStarted { task_manager });
                if let Some(jm) = jobmaster {
                    jm.on_task_manager_registered(&mut ctx, task_manager, process);
                }
            }
            Event::JobMasterTimeout { incarnation } => {
                // Without reconciliation, TaskManagers that lose their JobMaster cancel its
                // tasks (P1.8); with it, they keep them running (P3.1). If a successor was
                // elected meanwhile, it did so already.
                if !reconcile
                    && ctx.io.membership.jobmaster == incarnation
                    && !ctx.io.membership.jobmaster_alive
                {
                    cancel_all(&mut ctx, tasks);
                }
            }
            Event::JobMasterElected => {
                let membership = &mut ctx.io.membership;
                membership.jobmaster += 1;
                membership.jobmaster_alive = true;
                let incarnation = membership.jobmaster;
                let alive: Vec<Option<u32>> = membership
                    .task_manager_alive
                    .iter()
                    .zip(&membership.task_manager)
                    .map(|(&alive, &process)| alive.then_some(process))
                    .collect();
                ctx.record(TraceEvent::JobMasterElected { incarnation });
                // The leader change reaches the TaskManagers: without reconciliation whatever
                // the old JobMaster ran is cancelled before the new one deploys (P1.8).
                if !reconcile {
                    cancel_all(&mut ctx, tasks);
                }
                let mut jm = JobMaster::new(
                    ctx.graph,
                    spec.cluster,
                    spec.checkpointing.clone(),
                    spec.config,
                    ctx.config.bug,
                    incarnation,
                    alive,
                );
                if !reconcile {
                    jm.recover(&mut ctx);
                    *jobmaster = Some(jm);
                    return;
                }
                jm.reconcile(&mut ctx);
                *jobmaster = Some(jm);
                // P3.2: every TaskManager alive reports to the new leader, then sends again
                // what it kept (P3.3).
                let retention = spec.config.terminal_state_retention;
                for tm in task_managers.iter() {
                    if ctx.io.membership.task_manager_alive[tm.index() as usize] {
                        report(&mut ctx, tm, tasks, retention);
                        schedule_retry(&mut ctx, tm.index());
                    }
                }
            }
            Event::ReconcileTimeout { incarnation } => {
                if let Some(jm) = live(jobmaster, incarnation) {
                    jm.on_reconcile_timeout(&mut ctx);
                }
            }
            Event::RetryParked {
                task_manager,
                process,
            } => {
                let membership = &ctx.io.membership;
                if !membership.task_manager_alive[task_manager as usize]
                    || membership.task_manager[task_manager as usize] != process
                {
                    return; // the process died, and its outbox with it
                }
                let outbox = &mut ctx.io.outboxes[task_manager as usize];
                let resend_now = ctx.config.bug == Some(Bug::ResendBeforeDrained);
                if !resend_now && ctx.io.rpc.in_flight_from(task_manager).next().is_some() {
                    // Older RPCs are still on the wire: resent now, the kept ones would land
                    // behind them. Holding lets the wire drain.
                    outbox.retry_later();
                    schedule_retry(&mut ctx, task_manager);
                    return;
                }
                for rpc in outbox.take() {
                    ctx.io.stats.rpcs_resent += 1;
                    ctx.send(Address::TaskManager(task_manager), Address::JobMaster, rpc);
                }
            }
        }
    }

    fn is_done(&self) -> bool {
        self.jobmaster
            .as_ref()
            .is_some_and(|jm| jm.status().is_terminal())
    }
}

/// The JobMaster, if it is the incarnation a timer was set by.
fn live(jobmaster: &mut Option<JobMaster>, incarnation: u32) -> Option<&mut JobMaster> {
    jobmaster
        .as_mut()
        .filter(|jm| jm.incarnation() == incarnation)
}

/// P3.3: TaskManager `tm` keeps an RPC no JobMaster accepted, and retries it soon if a
/// JobMaster is there to take it (or else once one is elected).
fn keep(ctx: &mut Ctx<'_, '_>, tm: u32, rpc: Rpc) {
    let from = Address::TaskManager(tm);
    ctx.record(TraceEvent::RpcRefused { from, rpc });
    ctx.io.stats.rpcs_kept += 1;
    if ctx.config.bug == Some(Bug::DropRefusedRpc) {
        return; // the bug: the TaskManager forgets it
    }
    ctx.io.outboxes[tm as usize].keep_refused(rpc);
    if ctx.io.membership.jobmaster_alive {
        schedule_retry(ctx, tm);
    }
}

/// P3.3: schedules the retry of TaskManager `task_manager`'s outbox, unless it is empty or
/// one is scheduled.
fn schedule_retry(ctx: &mut Ctx<'_, '_>, task_manager: u32) {
    if ctx.io.outboxes[task_manager as usize].claim_retry() {
        let process = ctx.io.membership.task_manager[task_manager as usize];
        ctx.sched.after(
            outbox::RETRY,
            Event::RetryParked {
                task_manager,
                process,
            },
        );
    }
}

/// P3.2: TaskManager `tm` reports to a newly elected JobMaster every execution it hosts, and
/// every one that ended within `retention` (P3.1), then says its report is complete.
fn report(ctx: &mut Ctx<'_, '_>, tm: &TaskManager, tasks: &[Option<Task>], retention: Duration) {
    let from = Address::TaskManager(tm.index());
    for &subtask in tm.hosted() {
        let (attempt, state, ended_at) = match &tasks[subtask.index()] {
            Some(t) if t.task_manager() == tm.index() => (t.attempt(), t.state(), t.ended_at()),
            _ => match tm.ended(subtask) {
                Some(e) => (e.attempt, e.state, Some(e.at)),
                None => continue,
            },
        };
        if let Some(at) = ended_at {
            if ctx.config.bug == Some(Bug::NoTerminalRetention) || at + retention < ctx.now {
                continue; // forgotten
            }
        }
        let call = Call::ReportExecution(state);
        ctx.send(
            from,
            Address::JobMaster,
            Rpc {
                subtask,
                attempt,
                call,
            },
        );
    }
    let done = Rpc {
        subtask: SubtaskId(0),
        attempt: 0,
        call: Call::ReportDone,
    };
    ctx.send(from, Address::JobMaster, done);
    // A question the previous JobMaster took but never answered is asked again of its
    // successor: an `option2` "finishing" report (P1.2) whose answer died with the old leader
    // would leave its task waiting forever.
    for &subtask in tm.hosted() {
        if let Some(t) = tasks[subtask.index()]
            .as_ref()
            .filter(|t| t.task_manager() == tm.index() && t.awaits_finishing_answer())
        {
            let rpc = Rpc {
                subtask,
                attempt: t.attempt(),
                call: Call::Finishing,
            };
            // Unless the question itself is still kept or on its way: then it is not lost.
            let pending = ctx.io.outboxes[tm.index() as usize]
                .kept()
                .chain(ctx.io.rpc.in_flight_from(tm.index()))
                .any(|r| r == rpc);
            if !pending {
                ctx.send(from, Address::JobMaster, rpc);
            }
        }
    }
}

/// Cancels every task still deployed (no JobMaster to report to).
fn cancel_all(ctx: &mut Ctx<'_, '_>, tasks: &mut [Option<Task>]) {
    for slot in tasks.iter_mut() {
        if let Some(task) = slot {
            if !task.state().is_terminal() {
                task.cancel(ctx, false);
            }
        }
        *slot = None;
    }
}

/// Carries out fault `index`.
fn fire(
    ctx: &mut Ctx<'_, '_>,
    jobmaster: &mut Option<JobMaster>,
    task_managers: &mut [TaskManager],
    tasks: &mut [Option<Task>],
    index: u32,
    kind: FaultKind,
) {
    let heartbeat = ctx.io.faults.heartbeat_timeout();
    match kind {
        FaultKind::FailTask { task } => {
            let subtask = SubtaskId(ctx.graph.vertices[task.vertex].first + task.index);
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::FailTask(subtask),
            });
            let slot = &mut tasks[subtask.index()];
            if let Some(t) = slot {
                if !t.state().is_terminal() {
                    t.fail(ctx);
                    task_managers[t.task_manager() as usize].task_ended(t, ctx.now);
                    *slot = None;
                }
            }
        }
        FaultKind::LoseTaskManager {
            task_manager,
            restart_after,
        } => {
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::LoseTaskManager(task_manager),
            });
            let membership = &mut ctx.io.membership;
            if !membership.task_manager_alive[task_manager as usize] {
                return;
            }
            membership.task_manager_alive[task_manager as usize] = false;
            let dead = membership.task_manager[task_manager as usize];
            membership.task_manager[task_manager as usize] += 1;
            ctx.record(TraceEvent::TaskManagerLost { task_manager });
            task_managers[task_manager as usize].died();
            ctx.io.outboxes[task_manager as usize].clear();
            // Finished producers whose result partitions die with the TaskManager.
            let mut lost_finished = Vec::new();
            for slot in tasks.iter_mut() {
                if let Some(t) = slot.as_mut().filter(|t| t.task_manager() == task_manager) {
                    if t.state().is_terminal() {
                        lost_finished.push(t.subtask());
                    } else {
                        t.die(ctx);
                    }
                    *slot = None;
                }
            }
            // A consumer elsewhere still reading from such a partition loses its connection
            // and fails (the JobMaster would otherwise never restart the finished producer):
            // the region failover then runs both again (P1.8).
            for &producer in &lost_finished {
                for channel in ctx.graph.channels.iter().filter(|c| c.from == producer) {
                    let slot = &mut tasks[channel.to.index()];
                    let reading = slot.as_ref().is_some_and(|t| {
                        !t.state().is_terminal() && !t.input_ended(channel.input_slot)
                    });
                    if reading {
                        let t = slot.as_mut().expect("reading");
                        t.fail(ctx);
                        task_managers[t.task_manager() as usize].task_ended(t, ctx.now);
                        *slot = None;
                    }
                }
            }
            if let Some(jm) = jobmaster {
                let incarnation = jm.incarnation();
                ctx.sched.after(
                    heartbeat,
                    Event::TaskManagerTimeout {
                        task_manager,
                        dead,
                        incarnation,
                    },
                );
            }
            ctx.sched
                .after(restart_after, Event::TaskManagerRestart { task_manager });
        }
        FaultKind::CrashJobMaster { restart_after } => {
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::CrashJobMaster,
            });
            if jobmaster.take().is_none() {
                return;
            }
            let membership = &mut ctx.io.membership;
            membership.jobmaster_alive = false;
            let incarnation = membership.jobmaster;
            ctx.record(TraceEvent::JobMasterLost { incarnation });
            ctx.sched
                .after(heartbeat, Event::JobMasterTimeout { incarnation });
            ctx.sched.after(restart_after, Event::JobMasterElected);
        }
        FaultKind::DelaySpike { .. } => ctx.record(TraceEvent::FaultFired {
            index,
            fault: FaultEvent::DelaySpike,
        }),
        FaultKind::RpcLoss { .. } => ctx.record(TraceEvent::FaultFired {
            index,
            fault: FaultEvent::RpcLoss,
        }),
        FaultKind::DisconnectTaskManager { .. }
        | FaultKind::JobEventsWriteFailure
        | FaultKind::JobEventsReadFailure => {
            unreachable!("validation allows this fault only in batch mode")
        }
    }
}
