//! The streaming world as a fault finds it ([`FaultCtx`], the `Targets` of `world::faults`'s
//! one `fire`), and the end of a fault only a streaming job has: a held channel's release.

use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::regions::PipelinedRegions;
use crate::jobmaster::JobMaster;
use crate::scenario::FaultKind;
use crate::taskmanager::Lost;
use crate::trace::{SavepointRefusal, TraceEvent};
use crate::world::faults::{held, Targets};
use crate::world::{Act, Ctx, Event};
use sim::{Duration, Instant};

/// What a fault may hit in a streaming job: the world's view (the TaskManagers with their
/// tasks, `Io`) and the JobMaster, `None` while a crashed one has no successor.
pub(in crate::world) struct FaultCtx<'a, 'b, 's> {
    pub ctx: &'a mut Ctx<'b, 's>,
    pub jobmaster: &'a mut Option<JobMaster>,
}

impl Act for FaultCtx<'_, '_, '_> {
    fn now(&self) -> Instant {
        self.ctx.now
    }

    fn record(&mut self, event: TraceEvent) {
        self.ctx.record(event);
    }

    fn after(&mut self, delay: Duration, event: Event) {
        self.ctx.sched.after(delay, event);
    }
}

impl Targets for FaultCtx<'_, '_, '_> {
    fn graph(&self) -> &ExecutionGraph {
        self.ctx.graph
    }

    fn heartbeat(&self) -> Duration {
        self.ctx.io.faults.heartbeat_timeout()
    }

    fn jobmaster(&self) -> Option<u32> {
        self.jobmaster.as_ref().map(JobMaster::incarnation)
    }

    /// P0: a subtask's slot is fixed, so the TaskManager that runs it is the placement's.
    fn fail_task(&mut self, subtask: SubtaskId) {
        let place = self.ctx.task_managers.place(subtask);
        let (tm, mut ctx) = self.ctx.task_manager(place.task_manager);
        tm.fail_task(&mut ctx, subtask);
    }

    /// P1.8: the process dies with its tasks; each consumer elsewhere still reading a
    /// partition of a finished producer that died with it learns of it from its TaskManager.
    fn lose_task_manager(&mut self, task_manager: u32) -> Option<Lost> {
        let ctx = &mut *self.ctx;
        let (tm, mut tm_ctx) = ctx.task_manager(task_manager);
        let (lost, partitions) = tm.lose(&mut tm_ctx)?;
        for producer in partitions {
            for channel in ctx.graph.channels.iter().filter(|c| c.from == producer) {
                let place = ctx.task_managers.place(channel.to);
                let (tm, mut ctx) = ctx.task_manager(place.task_manager);
                tm.partition_lost(&mut ctx, channel);
            }
        }
        Some(lost)
    }

    /// HA knows no JobMaster alive until the next election (`Membership`).
    fn crash_jobmaster(&mut self) -> Option<u32> {
        let jm = self.jobmaster.take()?;
        self.ctx.io.membership.jobmaster_alive = false;
        Some(jm.crash::<PipelinedRegions>(self.ctx))
    }

    fn trigger_task(&mut self, subtask: SubtaskId, checkpoint: Option<u64>) -> u64 {
        self.jobmaster
            .as_mut()
            .and_then(|jm| jm.regions().trigger_task(self.ctx, subtask, checkpoint))
            .unwrap_or(0)
    }

    fn stop_with_savepoint(&mut self, drain: bool) {
        match self.jobmaster {
            Some(jm) => jm.regions().stop_with_savepoint(self.ctx, drain),
            // F1.11 step 1: no leader to ask.
            None => self.ctx.record(TraceEvent::SavepointRefused {
                reason: SavepointRefusal::JobNotRunning,
            }),
        }
    }

    fn hold_channel(&mut self, index: u32, channel: ChannelId) {
        self.ctx.io.data.hold(channel);
        if let Some(at) = self.ctx.io.faults.release_time(index, self.ctx.now) {
            self.ctx.sched.at(at, Event::ReleaseChannel { index });
        }
    }

    fn disconnect_task_manager(&mut self, _: u32, _: Duration) {
        unreachable!("validation refuses disconnect_task_manager in a streaming job")
    }

    fn job_events_write_failure(&mut self) {
        unreachable!("validation refuses job event store faults in a streaming job")
    }

    fn job_events_read_failure(&mut self) {
        unreachable!("validation refuses job event store faults in a streaming job")
    }
}

/// Hold `index` lets its channel go (at its `release_at`, when its `release_when` held, or at
/// `heal_at`, whichever comes first; the others find it released). When no other hold remains
/// on the channel, every element whose arrival came meanwhile arrives now, in order.
pub(in crate::world) fn release_channel(ctx: &mut Ctx<'_, '_>, index: u32) {
    if !ctx.io.faults.release(index, ctx.now) {
        return;
    }
    let FaultKind::HoldChannel { from, to, .. } = ctx.io.faults.faults()[index as usize].kind
    else {
        unreachable!("only a hold is released")
    };
    let channel = held(ctx.graph, from, to);
    if let Some(arrivals) = ctx.io.data.release(channel) {
        let epoch = ctx.io.data.epoch(channel);
        let info = &ctx.graph.channels[channel.index()];
        let (consumer, slot) = (info.to, info.input_slot);
        for _ in 0..arrivals {
            ctx.sched.at(
                ctx.now,
                Event::Arrive {
                    channel,
                    consumer,
                    slot,
                    epoch,
                    elements: 1,
                },
            );
        }
        ctx.record(TraceEvent::ChannelReleased { channel, arrivals });
    }
}
