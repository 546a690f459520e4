//! The world: every actor, the network between them, and the dispatch of kernel events.
//!
//! Actors (JobMaster, TaskManagers, tasks) own their state and change it only in their
//! handlers; they learn about each other only through RPCs and data channels, which the world
//! delivers with latency. The world is the only place that holds them all, and [`Ctx`] is the
//! narrow view a handler gets: the clock, the read-only graph, the network, the trace.

use crate::bug::Bug;
use crate::checkpoint::stats::CheckpointStats;
use crate::checkpoint::storage::CheckpointStorage;
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::JobMaster;
use crate::net::{DataPlane, LinkId, RpcLinks};
use crate::oracle::Oracles;
use crate::record::Element;
use crate::scenario::{DurationRange, FinishProtocol, Scenario};
use crate::task::Task;
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Call, Retain, Rpc, Trace, TraceEvent};
use sim::{Duration, Instant, Model, RandomStreams, Scheduler, Stream};

/// A kernel event. Small and `Copy`: the queue moves these around millions of times.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The JobMaster starts: the job is submitted at time zero.
    Start,
    /// The oldest RPC in flight on `link` reaches its destination.
    Rpc { link: LinkId },
    /// The oldest in-flight element of `channel` reaches its consumer's input buffer.
    Arrive { channel: ChannelId },
    /// The consumer of `channel` dequeued a record: the producer may push again.
    Credit { channel: ChannelId },
    /// A task's current step (processing one record, or a source's pause between records) is
    /// over. Carries the attempt so a step scheduled for a previous attempt is ignored.
    TaskStep { subtask: SubtaskId, attempt: u32 },
    /// `flink` (F1.5): the consumer of `channel` tells its producer that every record was
    /// processed (it dequeued EndOfData).
    AllRecordsProcessed { channel: ChannelId },
    /// The CheckpointCoordinator's periodic trigger.
    CheckpointTick,
    /// One of the scenario's explicit `trigger_at` times.
    CheckpointTriggerAt,
    /// A checkpoint's timeout passed.
    CheckpointExpired { checkpoint: u64 },
}

/// The run's fixed settings that actors consult: which finish protocol, which injected bug.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// `None` when checkpointing is off.
    pub protocol: Option<FinishProtocol>,
    pub bug: Option<Bug>,
    pub channel_latency: DurationRange,
}

/// What handlers share and may touch besides their own actor.
pub struct Io {
    pub data: DataPlane,
    pub rpc: RpcLinks,
    /// Processing times and source pacing.
    pub workload: Stream,
    pub trace: Trace,
    pub oracles: Oracles,
    /// Durable checkpoint storage: survives the JobManager.
    pub storage: CheckpointStorage,
    /// What happened to each checkpoint, for the summary. Written, never read, by actors.
    pub stats: CheckpointStats,
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
    /// Records `event` in the trace and shows it to the oracles.
    #[inline]
    pub fn record(&mut self, event: TraceEvent) {
        let index = self.io.trace.record(self.now, event);
        self.io
            .oracles
            .observe(self.graph, &self.io.storage, index, self.now, &event);
    }

    /// Sends an RPC; it arrives after the link's latency, in order with earlier RPCs on the
    /// same link.
    pub fn send(&mut self, from: Address, to: Address, rpc: Rpc) {
        let link = LinkId::between(from, to);
        let at = self.io.rpc.send(self.now, link, rpc);
        self.sched.at(at, Event::Rpc { link });
    }

    /// Puts an element on a channel's wire (the caller has checked credit for records).
    #[inline]
    pub fn push(&mut self, channel: ChannelId, element: Element) {
        let at = self.io.data.push(self.now, channel, element);
        self.sched.at(at, Event::Arrive { channel });
        self.record(TraceEvent::Push { channel, element });
    }

    /// Schedules the task's next step after `delay`.
    pub fn step_after(&mut self, delay: Duration, subtask: SubtaskId, attempt: u32) {
        self.sched
            .after(delay, Event::TaskStep { subtask, attempt });
    }
}

pub struct World {
    pub graph: ExecutionGraph,
    pub config: Config,
    pub jobmaster: JobMaster,
    pub task_managers: Vec<TaskManager>,
    /// The current attempt of every subtask, once deployed.
    pub tasks: Vec<Option<Task>>,
    pub io: Io,
}

impl World {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> World {
        let graph = ExecutionGraph::build(&scenario.job);
        let streams = RandomStreams::new(seed);
        let cluster = scenario.cluster;
        let config = Config {
            protocol: scenario.checkpointing.as_ref().map(|c| c.finish_protocol),
            bug: scenario.bug,
            channel_latency: scenario.network.channel_latency,
        };
        let io = Io {
            data: DataPlane::new(&graph, &scenario.network, &streams),
            rpc: RpcLinks::new(cluster.task_managers, &scenario.network, &streams),
            workload: streams.stream("workload"),
            trace: Trace::new(retain),
            oracles: Oracles::new(&graph, config),
            storage: CheckpointStorage::default(),
            stats: CheckpointStats::default(),
        };
        World {
            jobmaster: JobMaster::new(
                &graph,
                cluster,
                scenario.checkpointing.clone(),
                scenario.bug,
            ),
            config,
            task_managers: (0..cluster.task_managers).map(TaskManager::new).collect(),
            tasks: (0..graph.subtasks.len()).map(|_| None).collect(),
            graph,
            io,
        }
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
            task_managers,
            tasks,
            io,
        } = self;
        let mut ctx = Ctx {
            now,
            graph,
            config,
            io,
            sched,
        };
        match event {
            Event::Start => jobmaster.start(&mut ctx),
            Event::Rpc { link } => {
                let (sent_at, rpc) = ctx.io.rpc.deliver(link);
                let (from, to) = (link.from(), link.to());
                ctx.record(TraceEvent::Rpc {
                    from,
                    to,
                    sent_at,
                    rpc,
                });
                match (to, rpc.call) {
                    (Address::JobMaster, _) => jobmaster.on_rpc(&mut ctx, rpc),
                    (Address::TaskManager(tm), Call::SubmitTask) => {
                        let task =
                            task_managers[tm as usize].submit(&ctx, rpc.subtask, rpc.attempt);
                        tasks[rpc.subtask.index()].insert(task).start(&mut ctx);
                    }
                    (Address::TaskManager(_), call) => match &mut tasks[rpc.subtask.index()] {
                        Some(task) if task.attempt() == rpc.attempt => task.on_rpc(&mut ctx, call),
                        // The attempt is gone: nothing to deliver to.
                        _ => {}
                    },
                }
            }
            Event::Arrive { channel } => {
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
            Event::AllRecordsProcessed { channel } => {
                ctx.record(TraceEvent::AllRecordsProcessed { channel });
                let producer = ctx.graph.channels[channel.index()].from;
                if let Some(task) = &mut tasks[producer.index()] {
                    task.on_all_records_processed(&mut ctx);
                }
            }
            Event::CheckpointTick => jobmaster.on_checkpoint_tick(&mut ctx),
            Event::CheckpointTriggerAt => jobmaster.on_checkpoint_trigger_at(&mut ctx),
            Event::CheckpointExpired { checkpoint } => {
                jobmaster.on_checkpoint_expired(&mut ctx, checkpoint)
            }
        }
    }

    fn is_done(&self) -> bool {
        self.jobmaster.status().is_terminal()
    }
}
