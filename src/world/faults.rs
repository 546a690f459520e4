//! The faults of a streaming run, as the fault plan fires them.

use super::{Ctx, Event};
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
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
            fail(ctx, subtask);
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
            let tm = ctx.task_managers.get_mut(task_manager);
            if !tm.alive {
                return;
            }
            // Its process dies with its tasks and what it kept (P3.1, P3.3).
            let (dead, tasks) = tm.lose();
            ctx.record(TraceEvent::TaskManagerLost { task_manager });
            // Finished producers whose result partitions die with the TaskManager.
            let mut lost_finished = Vec::new();
            for mut t in tasks {
                if t.state().is_terminal() {
                    lost_finished.push(t.subtask());
                } else {
                    t.die(&mut ctx.for_task_of(task_manager));
                }
            }
            // A consumer elsewhere still reading from such a partition loses its connection
            // and fails (the JobMaster would otherwise never restart the finished producer):
            // the region failover then runs both again (P1.8).
            for &producer in &lost_finished {
                for channel in ctx.graph.channels.iter().filter(|c| c.from == producer) {
                    let reading = ctx.task_managers.task(channel.to).is_some_and(|t| {
                        !t.state().is_terminal() && !t.input_ended(channel.input_slot)
                    });
                    if reading {
                        fail(ctx, channel.to);
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

/// `subtask`'s task, if deployed and still running, fails (P1.8) and leaves its slot; its
/// TaskManager remembers it (P3.1).
fn fail(ctx: &mut Ctx<'_, '_>, subtask: SubtaskId) {
    let failed = match ctx.lend(subtask) {
        Some((t, mut ctx)) if !t.state().is_terminal() => {
            t.fail(&mut ctx);
            true
        }
        _ => false,
    };
    if failed {
        ctx.task_managers.leave(subtask, ctx.now);
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
