//! The faults of a batch run, as the fault plan fires them (every kind of the scenario format),
//! and a cut-off TaskManager reconnecting.

use crate::graph::SubtaskId;
use crate::scenario::FaultKind;
use crate::status::ExecutionState;
use crate::trace::{FaultEvent, TraceEvent};
use crate::world::batch::{Batch, Msg};
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
                let s = SubtaskId(self.graph.vertices[task.vertex].first + task.index);
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::FailTask(s),
                    },
                );
                let running = self.tasks[s.index()]
                    .as_ref()
                    .filter(|t| t.state == ExecutionState::Running)
                    .map(|t| (t.attempt, t.task_manager));
                if let Some((attempt, tm)) = running {
                    self.end_task(now, s, attempt, ExecutionState::Failed);
                    self.send_to_jobmaster(
                        sched,
                        tm,
                        Msg::Failed {
                            subtask: s,
                            attempt,
                            missing: None,
                        },
                    );
                }
            }
            FaultKind::LoseTaskManager {
                task_manager,
                restart_after,
            } => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::LoseTaskManager(task_manager),
                    },
                );
                let t = task_manager as usize;
                if !self.tms[t].alive {
                    return;
                }
                for (s, attempt) in self.hosted(task_manager) {
                    self.end_task(now, s, attempt, ExecutionState::Failed);
                }
                let process = self.tms[t].process;
                self.tms[t].alive = false;
                self.tms[t].leader = None;
                self.tms[t].partitions.clear();
                self.tms[t].outbox.clear();
                self.tms[t].in_flight = 0;
                self.tms[t].wire.clear();
                self.record(now, TraceEvent::TaskManagerLost { task_manager });
                if let Some(jm) = &self.jm {
                    sched.after(
                        self.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            dead: process,
                            incarnation: jm.incarnation,
                        },
                    );
                }
                sched.after(restart_after, Event::TaskManagerRestart { task_manager });
            }
            FaultKind::DisconnectTaskManager {
                task_manager,
                duration,
            } => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::DisconnectTaskManager(task_manager),
                    },
                );
                let t = task_manager as usize;
                if !self.tms[t].alive || !self.tms[t].connected {
                    return;
                }
                self.tms[t].connected = false;
                // The connection is reset: whatever was on the wire either way is lost.
                self.tms[t].link_epoch += 1;
                self.tms[t].in_flight = 0;
                self.record(now, TraceEvent::TaskManagerDisconnected { task_manager });
                let process = self.tms[t].process;
                // Both sides miss heartbeats; a disconnection shorter than the timeout is
                // noticed when the connection is re-established (`Reconnect`).
                if duration > self.heartbeat {
                    let incarnation = self.jm_incarnation;
                    sched.after(
                        self.heartbeat,
                        Event::TaskManagerTimeout {
                            task_manager,
                            dead: process,
                            incarnation,
                        },
                    );
                    sched.after(
                        self.heartbeat,
                        Event::LeaderTimeout {
                            task_manager,
                            process,
                        },
                    );
                }
                sched.after(duration, Event::Reconnect { task_manager });
            }
            FaultKind::CrashJobMaster { restart_after } => {
                self.record(
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
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::JobEventsWriteFailure,
                    },
                );
                // F2.3: the write that fails loses what the buffer held, and the store stays
                // closed for this JobMaster.
                let failing = self.jm.as_ref().is_some_and(|jm| !jm.events_failed);
                if failing {
                    let events = self.store.lose_buffer() as u32;
                    self.jm.as_mut().expect("alive").events_failed = true;
                    self.record(now, TraceEvent::JobEventsWriteFailed { events });
                }
            }
            FaultKind::JobEventsReadFailure => {
                self.record(
                    now,
                    TraceEvent::FaultFired {
                        index,
                        fault: FaultEvent::JobEventsReadFailure,
                    },
                );
                self.store.make_unreadable();
            }
            FaultKind::DelaySpike { .. } => self.record(
                now,
                TraceEvent::FaultFired {
                    index,
                    fault: FaultEvent::DelaySpike,
                },
            ),
            FaultKind::RpcLoss { .. } => self.record(
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
            self.lose_leader(sched, tm);
        }
        self.lose_task_manager(sched, tm, process);
        self.tms[tm as usize].connected = true;
        self.record(now, TraceEvent::TaskManagerReconnected { task_manager: tm });
        self.register(sched, tm);
    }
}
