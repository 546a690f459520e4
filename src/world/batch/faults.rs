//! The faults of a batch run, as the fault plan fires them (every kind of the scenario format),
//! and a cut-off TaskManager reconnecting. Each fault is routed to the actor it hits, which
//! acts on itself (a TaskManager fails its task, or its process dies with what it hosted; a
//! JobMaster's write fails, or it crashes); what a lost process sets off beyond it is the
//! cluster's, the same in both modes (`crate::world::processes`).

use crate::graph::SubtaskId;
use crate::jobmaster::batch::{AdaptiveBatch, RecoveryRecord};
use crate::jobmaster::JobMaster;
use crate::scenario::FaultKind;
use crate::trace::{FaultEvent, TraceEvent};
use crate::world::batch::{Batch, Ctx};
use crate::world::{processes, Event};
use sim::{Duration, Scheduler};

impl Batch {
    pub(crate) fn fire(&mut self, sched: &mut Scheduler<'_, Event>, index: u32, kind: FaultKind) {
        let now = sched.now();
        match kind {
            FaultKind::TriggerTask { .. }
            | FaultKind::FailSnapshot { .. }
            | FaultKind::StopWithSavepoint { .. } => {
                unreachable!("validation refuses checkpoint faults in a batch job")
            }
            FaultKind::HoldChannel { .. } => {
                unreachable!("validation refuses hold_channel in a batch job: it has no channels")
            }
            FaultKind::FailTask { task } => {
                let s = SubtaskId(self.cluster.graph.vertices[task.vertex].first + task.index);
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::FailTask(s),
                    },
                );
                // The latest attempt (F2.7: a replaced one may still run elsewhere).
                let running = self
                    .tms
                    .iter()
                    .filter_map(|t| t.mode.running_original(s).map(|a| (a, t.index)))
                    .max();
                if let Some((attempt, tm)) = running {
                    let (t, mut ctx) = self.task_manager(sched, tm);
                    t.fail_task(&mut ctx, s, attempt, None);
                }
            }
            FaultKind::LoseTaskManager {
                task_manager,
                restart_after,
            } => {
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::LoseTaskManager(task_manager),
                    },
                );
                let (t, mut ctx) = self.task_manager(sched, task_manager);
                let Some(lost) = t.lose(&mut ctx) else {
                    return;
                };
                let jobmaster = self.jm.as_ref().map(JobMaster::incarnation);
                let heartbeat = self.cluster.heartbeat;
                processes::task_manager_lost(sched, lost, jobmaster, heartbeat, restart_after);
            }
            FaultKind::DisconnectTaskManager {
                task_manager,
                duration,
            } => {
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::DisconnectTaskManager(task_manager),
                    },
                );
                let t = task_manager as usize;
                if !self.tms[t].disconnect() {
                    return;
                }
                self.cluster
                    .record(now, TraceEvent::TaskManagerDisconnected { task_manager });
                let process = self.tms[t].process;
                // Both sides miss heartbeats; a disconnection shorter than the timeout is
                // noticed when the connection is re-established (`Reconnect`).
                if duration > self.cluster.heartbeat {
                    let incarnation = self.cluster.jm_incarnation;
                    sched.after(
                        self.cluster.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            dead: process,
                            incarnation,
                        },
                    );
                    sched.after(
                        self.cluster.heartbeat,
                        Event::LeaderTimeout {
                            task_manager,
                            process,
                        },
                    );
                }
                sched.after(duration, Event::Reconnect { task_manager });
            }
            FaultKind::CrashJobMaster { restart_after } => {
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::CrashJobMaster,
                    },
                );
                self.crash_jobmaster(sched, restart_after);
            }
            // The fault plan opened the window; `send_numbered` asks it about every RPC sent
            // while it is open, as a streaming world does.
            FaultKind::JobEventsWriteFailure => {
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::JobEventsWriteFailure,
                    },
                );
                if let Some((mut jm, mut ctx)) = self.jobmaster(sched, None) {
                    jm.write_failed(&mut ctx);
                }
            }
            FaultKind::JobEventsReadFailure => {
                self.cluster.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::JobEventsReadFailure,
                    },
                );
                self.cluster.store.make_unreadable();
            }
            FaultKind::DelaySpike { .. } => self.cluster.record(
                now,
                TraceEvent::FaultFired {
                    index,
                    fault: FaultEvent::DelaySpike,
                },
            ),
            FaultKind::RpcLoss { .. } => self.cluster.record(
                now,
                TraceEvent::FaultFired {
                    index,
                    fault: FaultEvent::RpcLoss,
                },
            ),
        }
    }

    pub(crate) fn reconnect(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32) {
        let now = sched.now();
        let t = &self.tms[tm as usize];
        if !t.alive || t.connected {
            return;
        }
        let process = t.process;
        // Whatever side has not noticed the disconnection yet notices it now.
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

    /// Fault `crash_jobmaster`: the JobMaster alive, unless its job is over (P2.7: a FINISHED
    /// job whose result is not durable yet is still HA storage's to recover), crashes
    /// (`JobMaster::crash`); HA's next incarnation is the one TaskManagers address, and the
    /// recovery to come is counted from now.
    fn crash_jobmaster(&mut self, sched: &mut Scheduler<'_, Event>, restart_after: Duration) {
        let now = sched.now();
        if self.is_done() {
            return;
        }
        let Some(jm) = self.jm.take() else { return };
        let mut ctx = Ctx {
            cluster: &mut self.cluster,
            tms: &mut self.tms,
            sched,
        };
        let incarnation = jm.crash::<AdaptiveBatch>(&mut ctx);
        self.cluster.jm_incarnation += 1;
        self.cluster.crashed_at = now;
        if self.cluster.reconcile.is_none() {
            self.cluster.recoveries.push(RecoveryRecord {
                crashed_at: now,
                ..RecoveryRecord::default()
            });
        }
        let heartbeat = self.cluster.heartbeat;
        processes::jobmaster_lost(sched, incarnation, heartbeat, restart_after);
    }
}
