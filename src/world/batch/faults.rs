//! The batch world as a fault finds it ([`FaultCtx`], the `Targets` of `world::faults`'s one
//! `fire`), and the end of a fault only a batch job has: a cut-off TaskManager reconnecting.

use crate::graph::{ChannelId, ExecutionGraph, SubtaskId};
use crate::jobmaster::batch::{AdaptiveBatch, RecoveryRecord};
use crate::jobmaster::JobMaster;
use crate::taskmanager::Lost;
use crate::trace::TraceEvent;
use crate::world::batch::{Batch, Ctx};
use crate::world::faults::Targets;
use crate::world::{Act, Event};
use sim::{Duration, Instant, Scheduler};

/// What a fault may hit in a batch job: the batch world (its JobMaster, its TaskManagers, the
/// cluster they act on) at the instant the fault fires.
pub(in crate::world) struct FaultCtx<'a, 's> {
    pub batch: &'a mut Batch,
    pub sched: &'a mut Scheduler<'s, Event>,
}

impl Act for FaultCtx<'_, '_> {
    fn now(&self) -> Instant {
        self.sched.now()
    }

    fn record(&mut self, event: TraceEvent) {
        let now = self.sched.now();
        self.batch.cluster.record(now, event);
    }

    fn after(&mut self, delay: Duration, event: Event) {
        self.sched.after(delay, event);
    }
}

impl Targets for FaultCtx<'_, '_> {
    fn graph(&self) -> &ExecutionGraph {
        &self.batch.cluster.graph
    }

    fn heartbeat(&self) -> Duration {
        self.batch.cluster.heartbeat
    }

    fn jobmaster(&self) -> Option<u32> {
        self.batch.jm.as_ref().map(JobMaster::incarnation)
    }

    /// F2.7: the TaskManager running the subtask's latest attempt (a replaced one may still
    /// run elsewhere); none if no attempt runs.
    fn fail_task(&mut self, subtask: SubtaskId) {
        let running = self
            .batch
            .tms
            .iter()
            .filter_map(|t| t.mode.running_original(subtask).map(|a| (a, t.index)))
            .max();
        if let Some((attempt, tm)) = running {
            let (t, mut ctx) = self.batch.task_manager(self.sched, tm);
            t.fail_task(&mut ctx, subtask, attempt, None);
        }
    }

    fn lose_task_manager(&mut self, task_manager: u32) -> Option<Lost> {
        let (t, mut ctx) = self.batch.task_manager(self.sched, task_manager);
        t.lose(&mut ctx)
    }

    /// The JobMaster alive, unless its job is over (P2.7: a FINISHED job whose result is not
    /// durable yet is still HA storage's to recover), crashes; HA's next incarnation is the
    /// one TaskManagers address, and the recovery to come is counted from now.
    fn crash_jobmaster(&mut self) -> Option<u32> {
        let now = self.sched.now();
        let batch = &mut *self.batch;
        if batch.is_done() {
            return None;
        }
        let jm = batch.jm.take()?;
        let mut ctx = Ctx {
            cluster: &mut batch.cluster,
            tms: &mut batch.tms,
            sched: self.sched,
        };
        let incarnation = jm.crash::<AdaptiveBatch>(&mut ctx);
        batch.cluster.jm_incarnation += 1;
        batch.cluster.crashed_at = now;
        if batch.cluster.reconcile.is_none() {
            batch.cluster.recoveries.push(RecoveryRecord {
                crashed_at: now,
                ..RecoveryRecord::default()
            });
        }
        Some(incarnation)
    }

    fn trigger_task(&mut self, _: SubtaskId, _: Option<u64>) -> u64 {
        unreachable!("validation refuses checkpoint faults in a batch job")
    }

    fn stop_with_savepoint(&mut self, _: bool) {
        unreachable!("validation refuses checkpoint faults in a batch job")
    }

    fn hold_channel(&mut self, _: u32, _: ChannelId) {
        unreachable!("validation refuses hold_channel in a batch job: it has no channels")
    }

    /// The TaskManager keeps its partitions across the cut (P2.4's late TaskManager). Both
    /// sides miss heartbeats (F2.5); a disconnection no longer than the timeout is noticed
    /// when the connection is re-established (`Reconnect`). One exactly as long ends in the
    /// instant the timeout would run out: both sides notice the loss in that instant either
    /// way, and this model lets the reconnection tell them.
    fn disconnect_task_manager(&mut self, task_manager: u32, duration: Duration) {
        let now = self.sched.now();
        let cluster = &mut self.batch.cluster;
        let t = &mut self.batch.tms[task_manager as usize];
        if !t.disconnect() {
            return;
        }
        cluster.record(now, TraceEvent::TaskManagerDisconnected { task_manager });
        let process = t.process;
        if duration > cluster.heartbeat {
            let incarnation = cluster.jm_incarnation;
            self.sched.after(
                cluster.heartbeat,
                Event::TaskManagerTimeout {
                    task_manager,
                    dead: process,
                    incarnation,
                },
            );
            self.sched.after(
                cluster.heartbeat,
                Event::LeaderTimeout {
                    task_manager,
                    process,
                },
            );
        }
        self.sched
            .after(duration, Event::Reconnect { task_manager });
    }

    /// F2.3: the JobMaster alive loses its write buffer and logs nothing more
    /// (`write_failed`).
    fn job_events_write_failure(&mut self) {
        if let Some((mut jm, mut ctx)) = self.batch.jobmaster(self.sched, None) {
            jm.write_failed(&mut ctx);
        }
    }

    /// F2.4 step 5: the next JobMaster's replay will fail.
    fn job_events_read_failure(&mut self) {
        self.batch.cluster.store.make_unreadable();
    }
}

impl Batch {
    /// The end of a `disconnect_task_manager`: the connection is back, and whatever side has
    /// not noticed the disconnection yet notices it now; the TaskManager registers again.
    pub(crate) fn reconnect(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        let now = sched.now();
        let t = &self.tms[tm as usize];
        if !t.alive || t.connected {
            return;
        }
        let process = t.process;
        if self.tms[tm as usize].leader.is_some() {
            let (t, mut ctx) = self.task_manager(sched, tm);
            t.lose_leader(&mut ctx);
        }
        if let Some((mut jm, mut ctx)) = self.jobmaster(sched, None) {
            jm.lose_task_manager(&mut ctx, tm, process);
        }
        self.tms[tm as usize].connected = true;
        self.cluster
            .record(now, TraceEvent::TaskManagerReconnected { task_manager: tm });
        self.register(sched, tm);
    }
}
