//! The world: every actor, the network between them, the fault plan, and the dispatch of
//! kernel events, for streaming and batch jobs alike.
//!
//! [`World`] is the one `sim::Model` a run drives, whatever the job's mode: one kernel
//! [`Event`] vocabulary, and a half per mode that dispatches it to that mode's actors
//! ([`Streaming`], [`Batch`]). The actors' own code lives beside each other whatever the mode:
//! one JobMaster (`crate::jobmaster`) whose scheduler differs by mode (pipelined regions in
//! `crate::jobmaster::regions`; the adaptive batch scheduler, job event log and FLIP-383
//! recovery in `crate::jobmaster::batch`), one TaskManager (`crate::taskmanager`) whose part
//! differs by mode (the batch one's tasks and blocking partitions in
//! `crate::taskmanager::batch`).
//!
//! Actors (JobMaster, TaskManagers, tasks) own their state and change it only in their
//! handlers; they learn about each other only through RPCs and data channels, which the world
//! delivers with latency. The world is the only place that holds them all, and [`Ctx`] is the
//! narrow view a handler gets: the clock, the read-only graph, the network, durable storage,
//! the trace. Every context of both modes is an [`Act`] (clock, trace, timers), so a rule the
//! same in both modes is written once. A fault is routed to the actor it hits, which acts on
//! itself (a crash drops the actor's volatile state); what a lost process sets off beyond it
//! (heartbeat timeouts, the replacement, the election) is the cluster's, one path for both
//! modes (`processes`), and messages to a dead (or since restarted) process are lost.

mod act;
pub mod batch;
mod ctx;
mod event;
mod faults;
mod processes;
mod streaming;

pub use act::Act;
pub use batch::Batch;
pub use ctx::{Config, Ctx, Io, Membership, Reach, TaskCtx, TmCtx};
pub use event::Event;
pub use streaming::Streaming;

use crate::graph::ExecutionGraph;
use crate::scenario::{Mode, Scenario};
use crate::status::JobStatus;
use crate::trace::{per_event_budget, Retain};
use sim::{Actor, Duration, Instant, Model, Scheduler};

/// The one world a run drives: the kernel model for both kinds of job, each half dispatching
/// kernel events to its own actors.
// One world per run, built once and never moved in a loop: the size of the larger half is
// no cost, and boxing it would add an indirection to every event.
#[allow(clippy::large_enum_variant)]
pub enum World {
    Streaming(Streaming),
    Batch(Batch),
}

impl World {
    pub fn new(scenario: &Scenario, seed: u64, retain: Retain) -> World {
        let mut world = match scenario.mode {
            Mode::Streaming => World::Streaming(Streaming::new(scenario, seed, retain)),
            Mode::Batch => World::Batch(Batch::new(scenario, seed, retain)),
        };
        let graph = world.graph();
        let per_event = per_event_budget(graph.channels.len(), graph.subtasks.len());
        match &mut world {
            World::Streaming(world) => world.io.trace.limit_work_per_event(per_event),
            World::Batch(world) => world.cluster.trace.limit_work_per_event(per_event),
        }
        world
    }

    pub fn graph(&self) -> &ExecutionGraph {
        match self {
            World::Streaming(world) => &world.graph,
            World::Batch(world) => &world.cluster.graph,
        }
    }

    /// The job's status as far as anyone can tell.
    pub fn job_status(&self) -> JobStatus {
        match self {
            World::Streaming(world) => world.job_status(),
            World::Batch(world) => world.job_status(),
        }
    }
}

impl Model for World {
    type Event = Event;

    #[inline]
    fn handle(&mut self, now: Instant, event: Event, sched: &mut Scheduler<'_, Event>) {
        match self {
            World::Streaming(world) => {
                world.io.trace.begin_event();
                world.handle(now, event, sched);
            }
            World::Batch(world) => {
                world.cluster.trace.begin_event();
                world.handle(now, event, sched);
            }
        }
    }

    #[inline]
    fn prefetch(&self, next: &Event) {
        if let World::Streaming(world) = self {
            world.prefetch(next);
        }
    }

    /// Only a streaming job prefetches, as far ahead as its size calls for
    /// (`Streaming::prefetch_ahead`).
    fn prefetch_ahead(&self) -> usize {
        match self {
            World::Streaming(world) => world.prefetch_ahead(),
            World::Batch(_) => 0,
        }
    }

    fn is_done(&self) -> bool {
        match self {
            World::Streaming(world) => world.is_done(),
            World::Batch(world) => world.is_done(),
        }
    }

    /// The actor that handles `event` (`exhaustive` and `pct` explore orders by it): in a
    /// streaming job as its half says; in a batch job every event depends on every other (the
    /// batch half names no actors yet).
    fn actor(&self, event: &Event) -> Actor {
        match self {
            World::Streaming(world) => world.actor(event),
            World::Batch(_) => Actor::EVERYONE,
        }
    }

    /// An RPC's arrival may come later, within its link's latency range (`RpcLinks::slack`);
    /// every other event happens when it is due. Data-channel arrivals stay: a channel keeps
    /// no send time per element (it must stay small), and one arrival may carry a network
    /// buffer of several records, which a later arrival must not split.
    fn slack(&self, now: Instant, event: &Event) -> Duration {
        match (self, event) {
            (World::Streaming(world), Event::Rpc { link }) => world.io.rpc.slack(now, *link),
            (World::Batch(world), Event::Rpc { link }) => world.cluster.rpc.slack(now, *link),
            _ => Duration::ZERO,
        }
    }

    /// Equal events of a streaming job are interchangeable (see [`Event`]).
    fn interchangeable(&self, a: &Event, b: &Event) -> bool {
        matches!(self, World::Streaming(_)) && a == b
    }
}

/// For tests: drives `model` (a world wrapped to watch or stage it) from `Event::Start`, in
/// insertion order, for at most ten simulated seconds.
#[cfg(test)]
pub(crate) fn drive_for_test<M: Model<Event = Event>>(model: &mut M) {
    let mut sim = sim::Simulation::new(sim::TieBreak::Insertion);
    sim.schedule(Instant::ZERO, Event::Start);
    let budget = sim::Budget {
        max_events: 1_000_000,
        max_time: Instant::ZERO.saturating_add(Duration::from_secs(10)),
        max_pending: 1_000_000,
    };
    sim.run(model, budget);
}
