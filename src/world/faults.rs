//! Firing a fault, one path for both modes: when the fault plan says fault `index` is due
//! (`Event::Fault`), [`fire`] records that it fired and routes it to the actor it hits, which
//! acts on itself: a task's TaskManager fails it, a lost TaskManager's process dies with what it
//! hosted (`TaskManager::lose`), a crashed JobMaster goes (`JobMaster::crash`). What a lost
//! process sets off beyond it is the cluster's, the same in both modes (`super::processes`).
//!
//! Each half reaches its actors its own way, so each gives `fire` its world as [`Targets`]
//! (`streaming/faults.rs`, `batch/faults.rs`): where a task runs (a fixed slot, P0; or the
//! TaskManager running its latest attempt, F2.7), what else a lost process's death ends
//! (a streaming one's finished partitions), what HA keeps of a crash. A kind only one mode
//! has hits what only that mode has (a checkpoint, a channel, a connection kept across a cut,
//! the job event store); the other mode never meets it, because validation refuses it there
//! with the reason README's `fault` row gives, and its half says so (`unreachable!`).

use super::{processes, Act};
use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::scenario::{FaultKind, SubtaskRef};
use crate::taskmanager::Lost;
use crate::trace::{FaultEvent, TraceEvent};
use sim::Duration;

/// One mode's world as a fault finds it: the actors it may hit, each reached as that mode
/// reaches it, and what HA and the deployment know of them.
pub(super) trait Targets: Act {
    /// The job's graph, to name a fault's subtask or channel.
    fn graph(&self) -> &ExecutionGraph;
    /// How long the others take to notice a lost process (`jobmaster.heartbeat_timeout`).
    fn heartbeat(&self) -> Duration;
    /// The incarnation of the JobMaster alive, if one is: the one to notice a lost TaskManager.
    fn jobmaster(&self) -> Option<u32>;
    /// The TaskManager running `subtask` fails it, as an exception in user code would.
    fn fail_task(&mut self, subtask: SubtaskId);
    /// TaskManager `task_manager`'s process dies with what it hosted; `None` if none ran.
    fn lose_task_manager(&mut self, task_manager: u32) -> Option<Lost>;
    /// The JobMaster alive crashes, and HA keeps what it keeps of the crash; the crashed
    /// incarnation, or `None` if there was nothing to crash.
    fn crash_jobmaster(&mut self) -> Option<u32>;
    /// Streaming (F1.4): the JobMaster sends `subtask` a checkpoint's trigger by hand; the
    /// checkpoint it sent (0: none).
    fn trigger_task(&mut self, subtask: SubtaskId, checkpoint: Option<u64>) -> u64;
    /// Streaming (F1.11): the JobMaster is asked to stop the job with a savepoint.
    fn stop_with_savepoint(&mut self, drain: bool);
    /// Streaming: `channel` delivers nothing until hold `index` lets it go.
    fn hold_channel(&mut self, index: u32, channel: ChannelId);
    /// Batch (P2.4): TaskManager `task_manager` reaches no JobManager for `duration`.
    fn disconnect_task_manager(&mut self, task_manager: u32, duration: Duration);
    /// Batch (F2.3): the JobMaster's job event store fails to write.
    fn job_events_write_failure(&mut self);
    /// Batch (F2.4 step 5): the durable job events can no longer be read back.
    fn job_events_read_failure(&mut self);
}

/// Carries out fault `index` of kind `kind` in `world`: records that it fired (after the act
/// only where the record names what the act found, a trigger's checkpoint), then routes it.
pub(super) fn fire(world: &mut impl Targets, index: u32, kind: FaultKind) {
    let fired = |fault| TraceEvent::FaultFired { index, fault };
    match kind {
        FaultKind::FailTask { task } => {
            let subtask = world.graph().subtask(task);
            world.record(fired(FaultEvent::FailTask(subtask)));
            world.fail_task(subtask);
        }
        FaultKind::LoseTaskManager {
            task_manager,
            restart_after,
        } => {
            world.record(fired(FaultEvent::LoseTaskManager(task_manager)));
            let Some(lost) = world.lose_task_manager(task_manager) else {
                return;
            };
            let (jobmaster, heartbeat) = (world.jobmaster(), world.heartbeat());
            processes::task_manager_lost(world, lost, jobmaster, heartbeat, restart_after);
        }
        FaultKind::CrashJobMaster { restart_after } => {
            world.record(fired(FaultEvent::CrashJobMaster));
            let Some(incarnation) = world.crash_jobmaster() else {
                return;
            };
            let heartbeat = world.heartbeat();
            processes::jobmaster_lost(world, incarnation, heartbeat, restart_after);
        }
        // Windows the network consults while they are open (`FaultPlan::rpc_delay`,
        // `channel_delay`): firing only records them.
        FaultKind::DelaySpike { .. } => world.record(fired(FaultEvent::DelaySpike)),
        FaultKind::RpcLoss { .. } => world.record(fired(FaultEvent::RpcLoss)),
        FaultKind::TriggerTask { task, checkpoint } => {
            let subtask = world.graph().subtask(task);
            let checkpoint = world.trigger_task(subtask, checkpoint);
            world.record(fired(FaultEvent::TriggerTask {
                subtask,
                checkpoint,
            }));
        }
        FaultKind::StopWithSavepoint { drain } => {
            world.record(fired(FaultEvent::StopWithSavepoint { drain }));
            world.stop_with_savepoint(drain);
        }
        // Armed by the fault plan: it fires when the task takes that snapshot (F1.9), which
        // only a streaming task does.
        FaultKind::FailSnapshot { .. } => {}
        FaultKind::HoldChannel { from, to, .. } => {
            let channel = held(world.graph(), from, to);
            world.record(fired(FaultEvent::HoldChannel(channel)));
            world.hold_channel(index, channel);
        }
        FaultKind::DisconnectTaskManager {
            task_manager,
            duration,
        } => {
            world.record(fired(FaultEvent::DisconnectTaskManager(task_manager)));
            world.disconnect_task_manager(task_manager, duration);
        }
        FaultKind::JobEventsWriteFailure => {
            world.record(fired(FaultEvent::JobEventsWriteFailure));
            world.job_events_write_failure();
        }
        FaultKind::JobEventsReadFailure => {
            world.record(fired(FaultEvent::JobEventsReadFailure));
            world.job_events_read_failure();
        }
    }
}

/// The channel a hold names; validation made sure an edge makes it.
pub(super) fn held(graph: &ExecutionGraph, from: SubtaskRef, to: SubtaskRef) -> ChannelId {
    graph
        .channel_between(graph.subtask(from), graph.subtask(to))
        .expect("validation checks that an edge makes the channel")
}
