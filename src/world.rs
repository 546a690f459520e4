//! The world: every actor, the network between them, and the dispatch of kernel events.
//!
//! Actors (JobMaster, TaskManagers, tasks) own their state and change it only in their
//! handlers; they learn about each other only through RPCs and data channels, which the world
//! delivers with latency. The world is the only place that holds them all, and [`Ctx`] is the
//! narrow view a handler gets: the clock, the read-only graph, the network, the trace.

use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::JobMaster;
use crate::net::{DataPlane, LinkId, RpcLinks};
use crate::oracle::Oracles;
use crate::record::Element;
use crate::scenario::Scenario;
use crate::task::Task;
use crate::taskmanager::TaskManager;
use crate::trace::{Address, Retain, Rpc, Trace, TraceEvent};
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
}

/// What handlers share and may touch besides their own actor.
pub struct Io {
    pub data: DataPlane,
    pub rpc: RpcLinks,
    /// Processing times and source pacing.
    pub workload: Stream,
    pub trace: Trace,
    pub oracles: Oracles,
}

/// A handler's view of the world.
pub struct Ctx<'a, 's> {
    pub now: Instant,
    pub graph: &'a ExecutionGraph,
    pub io: &'a mut Io,
    pub sched: &'a mut Scheduler<'s, Event>,
}

impl Ctx<'_, '_> {
    /// Records `event` in the trace and shows it to the oracles.
    #[inline]
    pub fn record(&mut self, event: TraceEvent) {
        let index = self.io.trace.record(self.now, event);
        self.io.oracles.observe(self.graph, index, self.now, &event);
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
        let io = Io {
            data: DataPlane::new(&graph, &scenario.network, &streams),
            rpc: RpcLinks::new(cluster.task_managers, &scenario.network, &streams),
            workload: streams.stream("workload"),
            trace: Trace::new(retain),
            oracles: Oracles::new(&graph),
        };
        World {
            jobmaster: JobMaster::new(&graph, cluster),
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
            jobmaster,
            task_managers,
            tasks,
            io,
        } = self;
        let mut ctx = Ctx {
            now,
            graph,
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
                match (to, rpc) {
                    (
                        Address::JobMaster,
                        Rpc::UpdateTaskExecutionState {
                            subtask,
                            attempt,
                            state,
                        },
                    ) => jobmaster.on_task_state(&mut ctx, subtask, attempt, state),
                    (Address::TaskManager(tm), Rpc::SubmitTask { subtask, attempt }) => {
                        let task = task_managers[tm as usize].submit(&ctx, subtask, attempt);
                        tasks[subtask.index()].insert(task).start(&mut ctx);
                    }
                    (to, rpc) => unreachable!("{rpc:?} is never sent from {from:?} to {to:?}"),
                }
            }
            Event::Arrive { channel } => {
                let (element, was_empty) = ctx.io.data.arrive(channel);
                ctx.record(TraceEvent::Arrive { channel, element });
                let consumer = ctx.graph.channels[channel.index()].to;
                if let Some(task) = &mut tasks[consumer.index()] {
                    task.on_input(&mut ctx, channel, was_empty);
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
        }
    }

    fn is_done(&self) -> bool {
        self.jobmaster.status().is_terminal()
    }
}
