//! The faults of a batch run, as the fault plan fires them (every kind of the scenario format),
//! and a cut-off TaskManager reconnecting.

use crate::graph::SubtaskId;
use crate::scenario::FaultKind;
use crate::status::ExecutionState;
use crate::trace::{FaultEvent, TraceEvent};
use crate::world::batch::Batch;
use crate::world::Event;
use sim::Scheduler;

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
                if !self.tms[task_manager as usize].alive {
                    return;
                }
                let (t, mut ctx) = self.task_manager(sched, task_manager);
                t.end_hosted(&mut ctx, ExecutionState::Failed);
                let process = t.crash();
                self.cluster
                    .record(now, TraceEvent::TaskManagerLost { task_manager });
                if let Some(jm) = &self.jm {
                    sched.after(
                        self.cluster.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            dead: process,
                            incarnation: jm.incarnation(),
                        },
                    );
                }
                sched.after(restart_after, Event::TaskManagerRestart { task_manager });
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
                // F2.3: the write that fails loses what the buffer held, and the store stays
                // closed for this JobMaster.
                let failing = self.jm.as_ref().is_some_and(|jm| !jm.batch().events_failed);
                if failing {
                    let events = self.cluster.store.lose_buffer() as u32;
                    self.jm
                        .as_mut()
                        .expect("alive")
                        .adaptive()
                        .scheduler
                        .events_failed = true;
                    self.cluster
                        .record(now, TraceEvent::JobEventsWriteFailed { events });
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
}
