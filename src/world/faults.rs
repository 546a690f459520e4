//! The faults of a streaming run, as the fault plan fires them: each is routed to the actor it
//! hits, which acts on itself (a task's TaskManager fails it, a lost TaskManager's process dies
//! with its tasks, a crashed JobMaster goes), and what a lost process sets off beyond it is the
//! cluster's, the same in both modes (`super::processes`).

use super::{processes, Ctx, Event};
use crate::graph::{ChannelId, ExecutionGraph};
use crate::jobmaster::regions::PipelinedRegions;
use crate::jobmaster::JobMaster;
use crate::scenario::FaultKind;
use crate::scenario::SubtaskRef;
use crate::trace::{FaultEvent, SavepointRefusal, TraceEvent};

/// Carries out fault `index`.
pub(super) fn fire(
    ctx: &mut Ctx<'_, '_>,
    jobmaster: &mut Option<JobMaster>,
    index: u32,
    kind: FaultKind,
) {
    let heartbeat = ctx.io.faults.heartbeat_timeout();
    match kind {
        FaultKind::FailTask { task } => {
            let subtask = ctx.graph.subtask(task);
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::FailTask(subtask),
            });
            let place = ctx.task_managers.place(subtask);
            let (tm, mut ctx) = ctx.task_manager(place.task_manager);
            tm.fail_task(&mut ctx, subtask);
        }
        FaultKind::TriggerTask { task, checkpoint } => {
            let subtask = ctx.graph.subtask(task);
            let checkpoint = jobmaster
                .as_mut()
                .and_then(|jm| jm.regions().trigger_task(ctx, subtask, checkpoint))
                .unwrap_or(0);
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::TriggerTask {
                    subtask,
                    checkpoint,
                },
            });
        }
        FaultKind::StopWithSavepoint { drain } => {
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::StopWithSavepoint { drain },
            });
            match jobmaster {
                Some(jm) => jm.regions().stop_with_savepoint(ctx, drain),
                // F1.11 step 1: no leader to ask.
                None => ctx.record(TraceEvent::SavepointRefused {
                    reason: SavepointRefusal::JobNotRunning,
                }),
            }
        }
        // Armed by the fault plan: it fires when the task takes that snapshot (F1.9).
        FaultKind::FailSnapshot { .. } => {}
        FaultKind::LoseTaskManager {
            task_manager,
            restart_after,
        } => {
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::LoseTaskManager(task_manager),
            });
            let (tm, mut tm_ctx) = ctx.task_manager(task_manager);
            let Some((lost, partitions)) = tm.lose(&mut tm_ctx) else {
                return;
            };
            // Each consumer elsewhere still reading a partition that died learns of it from
            // its TaskManager.
            for producer in partitions {
                for channel in ctx.graph.channels.iter().filter(|c| c.from == producer) {
                    let place = ctx.task_managers.place(channel.to);
                    let (tm, mut ctx) = ctx.task_manager(place.task_manager);
                    tm.partition_lost(&mut ctx, channel);
                }
            }
            let jobmaster = jobmaster.as_ref().map(JobMaster::incarnation);
            processes::task_manager_lost(ctx.sched, lost, jobmaster, heartbeat, restart_after);
        }
        FaultKind::CrashJobMaster { restart_after } => {
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::CrashJobMaster,
            });
            let Some(jm) = jobmaster.take() else {
                return;
            };
            ctx.io.membership.jobmaster_alive = false;
            let incarnation = jm.crash::<PipelinedRegions>(ctx);
            processes::jobmaster_lost(ctx.sched, incarnation, heartbeat, restart_after);
        }
        FaultKind::DelaySpike { .. } => ctx.record(TraceEvent::FaultFired {
            index,
            fault: FaultEvent::DelaySpike,
        }),
        FaultKind::RpcLoss { .. } => ctx.record(TraceEvent::FaultFired {
            index,
            fault: FaultEvent::RpcLoss,
        }),
        FaultKind::HoldChannel { from, to, .. } => {
            let channel = channel_between(ctx.graph, from, to);
            ctx.io.data.hold(channel);
            ctx.record(TraceEvent::FaultFired {
                index,
                fault: FaultEvent::HoldChannel(channel),
            });
            if let Some(at) = ctx.io.faults.release_time(index, ctx.now) {
                ctx.sched.at(at, Event::ReleaseChannel { index });
            }
        }
        FaultKind::DisconnectTaskManager { .. }
        | FaultKind::JobEventsWriteFailure
        | FaultKind::JobEventsReadFailure => {
            unreachable!("validation allows this fault only in batch mode")
        }
    }
}

/// Hold `index` lets its channel go (at its `release_at`, when its `release_when` held, or at
/// `heal_at`, whichever comes first; the others find it released). When no other hold remains
/// on the channel, every element whose arrival came meanwhile arrives now, in order.
pub(super) fn release_channel(ctx: &mut Ctx<'_, '_>, index: u32) {
    if !ctx.io.faults.release(index, ctx.now) {
        return;
    }
    let FaultKind::HoldChannel { from, to, .. } = ctx.io.faults.faults()[index as usize].kind
    else {
        unreachable!("only a hold is released")
    };
    let channel = channel_between(ctx.graph, from, to);
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

/// The channel a hold names; validation made sure an edge makes it.
fn channel_between(graph: &ExecutionGraph, from: SubtaskRef, to: SubtaskRef) -> ChannelId {
    graph
        .channel_between(graph.subtask(from), graph.subtask(to))
        .expect("validation checks that an edge makes the channel")
}
