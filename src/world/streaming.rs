//! The streaming half of the world (pipelined regions, channels, checkpoints): its actors and
//! the dispatch of kernel events among them.

mod faults;

use super::faults::fire;
use super::{Config, Ctx, Event, Io, Membership, TaskCtx};
use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::storage::{CheckpointStorage, ExternalSystem};
use crate::faults::FaultPlan;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::regions::PipelinedRegions;
use crate::jobmaster::{JobMaster, With};
use crate::net::{DataPlane, Envelope, RpcLinks, RpcPolicy};
use crate::oracle::Oracles;
use crate::probes::Probes;
use crate::record::{Element, Record};
use crate::scenario::{
    CheckpointMode, Checkpointing, Cluster, Failover, FaultKind, JobMasterConfig, Scenario,
};
use crate::task::Task;
use crate::taskmanager::{outbox, TaskManagers};
use crate::trace::{Address, Retain, Trace, TraceEvent};
use faults::{release_channel, FaultCtx};
use sim::{Actor, Duration, Instant, RandomStreams, Scheduler};

/// Channels above which the run loop hints the next event (see [`Streaming::prefetch_ahead`]):
/// 256 lines of 64 bytes are 16 KiB, well within a first-level data cache.
const HINT_ABOVE_CHANNELS: usize = 1 << 8;

/// Channels above which it hints two events ahead: 65,536 lines are 4 MiB, beyond a core's
/// second-level cache.
const HINT_TWO_ABOVE_CHANNELS: usize = 1 << 16;

/// What a newly elected JobMaster is built from.
struct JobMasterSpec {
    cluster: Cluster,
    checkpointing: Option<Checkpointing>,
    config: JobMasterConfig,
}

/// The streaming half of the world: the JobMaster with its pipelined-region scheduling and
/// CheckpointCoordinator, the TaskManagers with the tasks in their slots, and `Io` (channels,
/// RPC links, storage, trace, oracles, fault plan).
pub struct Streaming {
    pub graph: ExecutionGraph,
    pub config: Config,
    /// `None` while the JobMaster is dead and no successor has been elected.
    pub jobmaster: Option<JobMaster>,
    spec: JobMasterSpec,
    /// The TaskManagers, each hosting the current attempts of the subtasks in its slots.
    pub task_managers: TaskManagers,
    pub io: Io,
}

impl Streaming {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> Streaming {
        let graph = ExecutionGraph::build(&scenario.job);
        let streams = RandomStreams::new(seed);
        let cluster = scenario.cluster;
        let checkpointing = scenario.checkpointing.as_ref();
        let config = Config {
            protocol: checkpointing.map(|c| c.finish_protocol),
            bug: scenario.bug,
            channel_latency: scenario.network.channel_latency,
            unaligned: checkpointing.is_some_and(|c| c.mode == CheckpointMode::Unaligned),
            at_least_once: checkpointing.is_some_and(|c| c.mode == CheckpointMode::AtLeastOnce),
            async_duration: checkpointing
                .map(|c| c.async_duration)
                .filter(|d| d.max > Duration::ZERO),
            alignment_timeout: checkpointing.and_then(|c| c.alignment_timeout),
            flush_before_finish: checkpointing.is_some_and(|c| c.flush_before_finish),
            retention: (scenario.jobmaster.failover == Failover::Reconcile)
                .then_some(scenario.jobmaster.terminal_state_retention),
            reconcile_timeout: scenario.jobmaster.reconcile_timeout,
            min_pause: checkpointing.map_or(Duration::ZERO, |c| c.min_pause),
            failover_scope: scenario.jobmaster.failover_scope,
            task_managers: cluster.task_managers,
            max_attempts: scenario.jobmaster.restart_strategy.max_attempts,
            tolerable_failures: checkpointing.and_then(|c| c.tolerable_failures),
            initialization: Some(cluster.task_initialization).filter(|d| d.max > Duration::ZERO),
            lazy_sources: true,
            cancel_markers: checkpointing.is_some_and(|c| c.cancel_markers),
            stop_with_savepoint: scenario
                .faults
                .iter()
                .any(|f| matches!(f.kind, FaultKind::StopWithSavepoint { .. })),
            checkpoint_failure_checks: checkpointing.is_some()
                && (checkpointing.is_some_and(|c| c.tolerable_failures.is_some())
                    || cluster.task_initialization.max > Duration::ZERO
                    || scenario
                        .faults
                        .iter()
                        .any(|f| matches!(f.kind, FaultKind::FailSnapshot { .. }))),
        };
        let mut io = Io {
            data: DataPlane::new(&graph, &scenario.network, &streams),
            rpc: RpcLinks::new(
                cluster.task_managers,
                scenario.network.rpc_latency,
                &streams,
                RpcPolicy::Streaming,
            ),
            workload: streams.stream("workload"),
            trace: Trace::new(retain),
            oracles: Oracles::new(&graph, config),
            probes: Probes::new(&graph, config),
            storage: CheckpointStorage::new(scenario.restore_from.clone()),
            external: ExternalSystem::default(),
            stats: CheckpointStats::default(),
            faults: FaultPlan::new(scenario, &graph, &streams),
            membership: Membership {
                jobmaster_alive: true,
                jobmaster: 0,
            },
            records: Vec::new(),
        };
        if let Some(restore) = &scenario.restore_from {
            io.oracles.restore_from(&graph, restore);
        }
        let spec = JobMasterSpec {
            cluster,
            checkpointing: scenario.checkpointing.clone(),
            config: scenario.jobmaster,
        };
        Streaming {
            jobmaster: Some(JobMaster::pipelined_regions(
                &graph,
                cluster,
                spec.checkpointing.clone(),
                spec.config,
                config.bug,
                0,
                vec![Some(0); cluster.task_managers as usize],
            )),
            spec,
            config,
            task_managers: TaskManagers::new(&graph, cluster),
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

    /// For a run that stopped early: what each unfinished task was doing, and which subtasks
    /// have no attempt.
    pub fn describe_unfinished(&self) -> Vec<String> {
        let mut out = Vec::new();
        let subtasks = || (0..self.graph.subtasks.len() as u32).map(SubtaskId);
        for task in subtasks().filter_map(|id| self.task_managers.task(id)) {
            if !task.state().is_terminal() {
                out.push(task.describe(&self.graph));
            }
        }
        for id in subtasks() {
            if self.task_managers.task(id).is_none() {
                out.push(format!(
                    "{} has no running attempt",
                    self.graph.subtask_name(id)
                ));
            }
        }
        out
    }

    /// Every source is bounded: only then can the job be required to terminate.
    pub fn bounded(&self) -> bool {
        self.graph.vertices.iter().all(|v| match v.chain.source() {
            Some((records, _)) => records
                .iter()
                .all(|r| matches!(r, crate::scenario::Records::Bounded(_))),
            None => true,
        })
    }
}

impl Streaming {
    /// Dispatches one kernel event to the actor it concerns.
    #[inline]
    pub(crate) fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        let Streaming {
            graph,
            config,
            jobmaster,
            spec,
            task_managers,
            io,
        } = self;
        let reconcile = spec.config.failover == Failover::Reconcile;
        let mut ctx = Ctx {
            now,
            graph,
            config,
            io,
            sched,
            task_managers,
        };
        match event {
            Event::Start => {
                for (at, index) in ctx.io.faults.timed() {
                    ctx.sched.at(at, Event::Fault { index });
                }
                if let Some(jm) = jobmaster {
                    jm.regions().start(&mut ctx);
                }
            }
            Event::Rpc { link } => {
                let Envelope {
                    sent_at,
                    message: rpc,
                    seq,
                    to_incarnation: incarnation,
                    from_incarnation: sender,
                } = ctx.io.rpc.deliver(link);
                let (from, to) = (link.from(), link.to());
                let dead = !ctx.alive(to) || ctx.incarnation(to) != incarnation;
                // Fencing (Flink's JobMasterId): a TaskManager refuses the RPCs of a
                // JobMaster that is no longer the leader.
                let fenced = from == Address::JobMaster && ctx.io.membership.jobmaster != sender;
                if let (Address::TaskManager(tm), true) = (from, reconcile) {
                    // P3.3: under reconciliation no RPC to the JobMaster is lost while its
                    // TaskManager lives: one that found no JobMaster, or one a reconciling
                    // JobMaster refuses (and any behind such), waits in the outbox. Reports
                    // belong to one election and are never kept.
                    let refused = jobmaster
                        .as_mut()
                        .is_some_and(|jm| jm.regions().refuses(rpc.call));
                    let sending = ctx.task_managers.get(tm);
                    let sender_alive = sending.runs(sender);
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
                        && (dead || refused || sending.outbox.is_holding())
                    {
                        let (tm, mut ctx) = ctx.task_manager(tm);
                        tm.keep(&mut ctx, seq, rpc);
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
                            jm.regions().on_rpc(&mut ctx, tm, rpc);
                        }
                    }
                    (Address::JobMaster, Address::JobMaster, _) => {
                        unreachable!("the JobMaster sends no RPC to itself")
                    }
                    (_, Address::TaskManager(tm), _) => {
                        let (tm, mut ctx) = ctx.task_manager(tm);
                        tm.receive(&mut ctx, rpc);
                    }
                }
            }
            Event::Arrive {
                channel,
                consumer,
                slot,
                epoch,
                elements,
            } => {
                let to = (consumer, slot);
                if ctx.io.data.epoch(channel) != epoch {
                    return; // sent into a partition that has since been released
                }
                if ctx.io.data.defer_if_held(channel, elements) {
                    return; // arrives when the hold ends
                }
                // F1.14 step 9: the consumer hears of a run of records once, after the last
                // of them arrived (its step takes a network buffer whole), and of an event at
                // once. An arrival is usually one element or one data buffer; under a
                // shuffled tie-break two arrivals due at one instant on one channel may swap,
                // so one may bring records and the event behind them.
                // F1.14 step 10: with buffers, a run of records arriving together is one
                // trace event, recorded before the event behind it (if any) arrives.
                let buffers = ctx.io.data.uses_buffers();
                let mut run = match buffers {
                    true => std::mem::take(&mut ctx.io.records),
                    false => Vec::new(), // stays empty: no allocation
                };
                run.clear();
                let mut records: Option<(Element, bool)> = None;
                for _ in 0..elements {
                    if ctx.io.data.epoch(channel) != epoch {
                        break; // a consumer's failure released the partition meanwhile
                    }
                    let (element, was_empty) = ctx.io.data.arrive(channel);
                    match element {
                        Element::Record(record) if buffers => run.push(record),
                        _ => {
                            if !run.is_empty() {
                                buffer_arrived(&mut ctx, channel, &mut run);
                            }
                            ctx.record(TraceEvent::Arrive { channel, element });
                        }
                    }
                    if element.needs_credit() {
                        records.get_or_insert((element, was_empty));
                        continue;
                    }
                    if let Some((first, was_empty)) = records.take() {
                        deliver(&mut ctx, channel, to, first, was_empty);
                    }
                    deliver(&mut ctx, channel, to, element, was_empty);
                }
                if buffers {
                    if !run.is_empty() {
                        buffer_arrived(&mut ctx, channel, &mut run);
                    }
                    ctx.io.records = run;
                }
                if let Some((first, was_empty)) = records {
                    if ctx.io.data.epoch(channel) == epoch {
                        deliver(&mut ctx, channel, to, first, was_empty);
                    }
                }
            }
            Event::OutputFlush { subtask, attempt } => {
                ctx.on_task(subtask, Some(attempt), Task::on_output_flush);
            }
            Event::Credit { channel } => {
                let producer = ctx.graph.channels[channel.index()].from;
                ctx.on_task(producer, None, |task, ctx| task.on_credit(ctx, channel));
            }
            Event::TaskStep { subtask, attempt } => {
                on_task_then_drop(&mut ctx, subtask, attempt, Task::on_step);
            }
            Event::SourceWake { subtask, attempt } => {
                on_task_then_drop(&mut ctx, subtask, attempt, Task::on_source_wake);
            }
            Event::AlignmentTimeout {
                subtask,
                attempt,
                checkpoint,
            } => {
                on_task_then_drop(&mut ctx, subtask, attempt, |task, ctx| {
                    task.on_alignment_timeout(ctx, checkpoint)
                });
            }
            Event::TaskInitialized { subtask, attempt } => {
                ctx.on_task(subtask, Some(attempt), Task::on_initialized);
            }
            Event::SnapshotUploaded {
                subtask,
                attempt,
                checkpoint,
            } => {
                ctx.on_task(subtask, Some(attempt), |task, ctx| {
                    task.on_snapshot_uploaded(ctx, checkpoint)
                });
            }
            Event::AllRecordsProcessed { channel, epoch } => {
                if ctx.io.data.epoch(channel) != epoch {
                    return;
                }
                ctx.record(TraceEvent::AllRecordsProcessed { channel });
                let producer = ctx.graph.channels[channel.index()].from;
                ctx.on_task(producer, None, Task::on_all_records_processed);
            }
            Event::CheckpointTick { incarnation } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_tick(&mut ctx);
                }
            }
            Event::CheckpointTriggerAt { incarnation } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_trigger_at(&mut ctx);
                }
            }
            Event::CheckpointExpired {
                checkpoint,
                incarnation,
            } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_checkpoint_expired(&mut ctx, checkpoint);
                }
            }
            Event::RestartDelay { incarnation } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_restart_delay(&mut ctx);
                }
            }
            Event::Fault { index } => {
                // A fault due after `heal_at` never fires: the healed phase has begun.
                if let Some(fault) = ctx.io.faults.fire(index, now) {
                    let kind = fault.kind.clone();
                    let ctx = &mut ctx;
                    fire(&mut FaultCtx { ctx, jobmaster }, index, kind);
                }
            }
            Event::ReleaseChannel { index } => release_channel(&mut ctx, index),
            Event::TaskManagerTimeout {
                task_manager,
                dead,
                incarnation,
            } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_task_manager_lost(&mut ctx, task_manager, dead);
                }
            }
            Event::TaskManagerRestart { task_manager } => {
                // The replacement process learns of the leader elected last (HA).
                let leader = ctx.io.membership.jobmaster;
                let (tm, mut tm_ctx) = ctx.task_manager(task_manager);
                tm.start(&mut tm_ctx);
                tm.leader = Some(leader);
                let process = tm.process;
                if let Some(jm) = jobmaster {
                    jm.regions()
                        .on_task_manager_registered(&mut ctx, task_manager, process);
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
                    cancel_all(&mut ctx);
                }
            }
            Event::JobMasterElected => {
                let membership = &mut ctx.io.membership;
                membership.jobmaster += 1;
                membership.jobmaster_alive = true;
                let incarnation = membership.jobmaster;
                // The live TaskManagers learn of the new leader (HA) and register with it.
                let alive: Vec<Option<u32>> = ctx
                    .task_managers
                    .iter_mut()
                    .map(|tm| {
                        tm.alive.then(|| {
                            tm.leader = Some(incarnation);
                            tm.process
                        })
                    })
                    .collect();
                ctx.record(TraceEvent::JobMasterElected { incarnation });
                // The leader change reaches the TaskManagers: without reconciliation whatever
                // the old JobMaster ran is cancelled before the new one deploys (P1.8).
                if !reconcile {
                    cancel_all(&mut ctx);
                }
                let mut jm = JobMaster::pipelined_regions(
                    ctx.graph,
                    spec.cluster,
                    spec.checkpointing.clone(),
                    spec.config,
                    ctx.config.bug,
                    incarnation,
                    alive,
                );
                if !reconcile {
                    jm.regions().recover(&mut ctx);
                    *jobmaster = Some(jm);
                    return;
                }
                jm.regions().open_window(&mut ctx);
                *jobmaster = Some(jm);
                // P3.2: every TaskManager alive reports to the new leader, then sends again
                // what it kept (P3.3).
                let retention = spec.config.terminal_state_retention;
                for tm in 0..ctx.task_managers.count() {
                    let (tm, mut ctx) = ctx.task_manager(tm);
                    if tm.alive {
                        tm.report(&mut ctx, retention);
                        tm.schedule_retry(&mut ctx);
                    }
                }
            }
            Event::ReconcileTimeout { incarnation } => {
                if let Some(mut jm) = live(jobmaster, incarnation) {
                    jm.on_reconcile_timeout(&mut ctx);
                }
            }
            Event::RetryParked {
                task_manager,
                process,
            } => {
                let (tm, mut ctx) = ctx.task_manager(task_manager);
                tm.retry_parked(&mut ctx, process);
            }
            Event::FlushTick { .. }
            | Event::LeaderTimeout { .. }
            | Event::RegistrationTimeout { .. }
            | Event::Reconnect { .. }
            | Event::WorkerTimeout { .. }
            | Event::JobResultWritten { .. }
            | Event::SpeculationCheck { .. } => {
                unreachable!("a streaming job schedules no batch event: {event:?}")
            }
        }
    }

    /// How many events ahead the run loop hints ([`Streaming::prefetch`]), by the channels'
    /// lines (64 bytes each): none for a job of a few hundred channels, whose state stays in
    /// the first-level cache (the hint's instructions buy nothing there: `.ci/perf-check`'s
    /// 48-channel job); one event ahead while they fit a core's second-level cache (the
    /// p = 100 job's 10^4 channels, 0.6 MiB: about 2% slower without the hint though 3% fewer
    /// instructions, and no faster with a second one, which costs 2.5% more); two beyond,
    /// where a line comes from memory after a page walk and takes longer than one event's
    /// handling (the 10^6-channel job).
    pub(crate) fn prefetch_ahead(&self) -> usize {
        match self.graph.channels.len() {
            n if n <= HINT_ABOVE_CHANNELS => 0,
            n if n <= HINT_TWO_ABOVE_CHANNELS => 1,
            _ => 2,
        }
    }

    /// Starts loading what `next` will touch first (see `sim::Model::prefetch`): with a
    /// million channels, a channel's line is a cache miss in almost every arrival and credit
    /// return, and so are an arrival's consumer task and a credit's place in the graph (an
    /// arrival carries its consumer and input slot instead); this overlaps them with the event
    /// before.
    #[inline]
    pub(crate) fn prefetch(&self, next: &Event) {
        match *next {
            Event::Arrive {
                channel, consumer, ..
            } => {
                self.io.data.prefetch(channel);
                if let Some(task) = self.task_managers.task(consumer) {
                    task.prefetch();
                }
            }
            Event::Credit { channel } | Event::AllRecordsProcessed { channel, .. } => {
                self.io.data.prefetch(channel);
                if let Some(info) = self.graph.channels.get(channel.index()) {
                    sim::prefetch::read(info);
                }
            }
            _ => {}
        }
    }

    /// The actor that handles `event` (`exhaustive` and `pct` explore orders by it): the
    /// JobMaster is actor 0 and subtask `s` actor `s + 1`; an RPC to a TaskManager belongs to
    /// the subtask it is for (the oldest on its link, the one the event delivers). A fault, a
    /// channel's release, a TaskManager's return and its retries touch more than one actor:
    /// dependent on every event. Tasks share nothing but their channels and their
    /// TaskManager's link to the JobMaster, so two tasks' RPCs sent in one instant on one link
    /// are explored in one order only (README, "Exploration strategies").
    pub(crate) fn actor(&self, event: &Event) -> Actor {
        const JOBMASTER: Actor = Actor(0);
        let task = |subtask: SubtaskId| Actor(1 + subtask.0);
        match *event {
            Event::Start
            | Event::CheckpointTick { .. }
            | Event::CheckpointTriggerAt { .. }
            | Event::CheckpointExpired { .. }
            | Event::RestartDelay { .. }
            | Event::TaskManagerTimeout { .. }
            | Event::JobMasterElected
            | Event::ReconcileTimeout { .. } => JOBMASTER,
            Event::Rpc { link } => match link.to() {
                Address::JobMaster => JOBMASTER,
                Address::TaskManager(_) => self
                    .io
                    .rpc
                    .in_flight(link)
                    .next()
                    .map_or(Actor::EVERYONE, |envelope| task(envelope.message.subtask)),
            },
            Event::TaskInitialized { subtask, .. }
            | Event::TaskStep { subtask, .. }
            | Event::SourceWake { subtask, .. }
            | Event::AlignmentTimeout { subtask, .. }
            | Event::SnapshotUploaded { subtask, .. }
            | Event::OutputFlush { subtask, .. } => task(subtask),
            Event::Arrive { consumer, .. } => task(consumer),
            Event::Credit { channel } | Event::AllRecordsProcessed { channel, .. } => {
                task(self.graph.channels[channel.index()].from)
            }
            Event::Fault { .. }
            | Event::RetryParked { .. }
            | Event::ReleaseChannel { .. }
            | Event::TaskManagerRestart { .. }
            | Event::JobMasterTimeout { .. } => Actor::EVERYONE,
            // A batch job's events never reach the streaming half.
            Event::FlushTick { .. }
            | Event::LeaderTimeout { .. }
            | Event::RegistrationTimeout { .. }
            | Event::Reconnect { .. }
            | Event::WorkerTimeout { .. }
            | Event::JobResultWritten { .. }
            | Event::SpeculationCheck { .. } => Actor::EVERYONE,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.jobmaster
            .as_ref()
            .is_some_and(|jm| jm.status().is_terminal())
    }
}

/// Hands an element that just arrived on `channel` to its consumer, if deployed.
#[inline]
fn deliver(
    ctx: &mut Ctx<'_, '_>,
    channel: ChannelId,
    (consumer, slot): (SubtaskId, u32),
    element: Element,
    was_empty: bool,
) {
    let on_input =
        |task: &mut Task, ctx: &mut TaskCtx| task.on_input(ctx, channel, slot, element, was_empty);
    if ctx.on_task(consumer, None, on_input) == Some(true) {
        drop_failed(ctx, consumer);
    }
}

/// F1.14 step 10: the records of a buffer that just arrived on `channel` (`run`, not empty,
/// emptied), as one trace event.
fn buffer_arrived(ctx: &mut Ctx<'_, '_>, channel: ChannelId, run: &mut Vec<Record>) {
    let event = TraceEvent::BufferArrived {
        channel,
        records: run.len() as u32,
    };
    ctx.record_buffer(event, run, |record| TraceEvent::Arrive {
        channel,
        element: Element::Record(record),
    });
    run.clear();
}

/// `Ctx::on_task` for attempt `attempt`; a task that failed itself then leaves its slot, as an
/// injected task failure does.
#[inline(always)]
fn on_task_then_drop(
    ctx: &mut Ctx<'_, '_>,
    subtask: SubtaskId,
    attempt: u32,
    handle: impl FnOnce(&mut Task, &mut TaskCtx<'_, '_>),
) {
    if ctx.on_task(subtask, Some(attempt), handle) == Some(true) {
        drop_failed(ctx, subtask);
    }
}

/// A task that failed itself (its snapshot's synchronous part threw, F1.9) leaves its slot, as
/// an injected task failure does; the rare part of the handlers that hand an event to a task,
/// kept out of their hot paths.
#[cold]
fn drop_failed(ctx: &mut Ctx<'_, '_>, subtask: SubtaskId) {
    ctx.task_managers.leave(subtask, ctx.now);
}

/// The JobMaster, if it is the incarnation a timer was set by.
fn live(jobmaster: &mut Option<JobMaster>, incarnation: u32) -> Option<With<'_, PipelinedRegions>> {
    jobmaster
        .as_mut()
        .filter(|jm| jm.incarnation() == incarnation)
        .map(JobMaster::regions)
}

/// Every TaskManager cancels the tasks it still runs (no JobMaster to report to,
/// `TaskManager::cancel_orphaned`), in subtask order.
fn cancel_all(ctx: &mut Ctx<'_, '_>) {
    for subtask in (0..ctx.graph.subtasks.len() as u32).map(SubtaskId) {
        let place = ctx.task_managers.place(subtask);
        let (tm, mut ctx) = ctx.task_manager(place.task_manager);
        tm.cancel_orphaned(&mut ctx, subtask);
    }
}
