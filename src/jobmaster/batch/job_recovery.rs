//! FLIP-383 job recovery on a new JobMaster (P2.4, P2.6): replay the durable job events, wait for
//! the TaskManagers' partition reports until `previous_worker_timeout`, then keep what is proved
//! finished and reset the rest.

use crate::batch::events::{replay, JobEvent, Location, Replayed};
use crate::batch::recovery::{self, Plan};
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};
use crate::jobmaster::batch::Recovering;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{RerunReason, TraceEvent};
use crate::world::batch::{Batch, Msg};
use crate::world::Event;
use sim::{Instant, Scheduler};
use std::collections::BTreeSet;

impl Batch {
    /// P2.3: a newly elected JobMaster takes the job over: under `failover: reconcile` from
    /// the TaskManagers' reports (P3); otherwise by FLIP-383 recovery from the durable job
    /// events (P2.4), or from scratch when there is nothing to recover from or recovery is off
    /// (P2.6), or by a global failover when the log cannot be read.
    pub(crate) fn take_over(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        let incarnation = self.jm.as_ref().expect("elected").incarnation;
        self.set_job_status(now, JobStatus::Created);
        if self.reconcile.is_some() {
            self.start_reconcile(sched);
            return;
        }
        let r = self.recoveries.len() - 1;
        self.recoveries[r].elected_at = now;
        if !self.batch.recovery_enabled() || self.store.durable().is_empty() {
            self.restart_from_scratch(sched, r);
            for tm in 0..self.tms.len() as u32 {
                self.register(sched, tm);
            }
            self.schedule(sched);
            return;
        }
        // P2.4: RECONCILING while replaying and waiting for the previous TaskManagers.
        self.set_job_status(now, JobStatus::Reconciling);
        if !self.store.readable() && self.bug != Some(Bug::ReplayUnreadableLog) {
            self.replay_failed(sched, r);
            for tm in 0..self.tms.len() as u32 {
                self.register(sched, tm);
            }
            self.schedule(sched);
            return;
        }
        let replayed = self.replay_log();
        self.recoveries[r].discarded = replayed.discarded.len() as u32;
        self.record(
            now,
            TraceEvent::RecoveryStarted {
                replayed: replayed.applied as u32,
                discarded: replayed.discarded.len() as u32,
                full_restart: false,
            },
        );
        // Step 1: vertices with a logged parallelism are initialized again.
        for v in 0..self.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                self.jm.as_mut().expect("elected").parallelism[v] = Some(p);
            }
        }
        // The shuffle master's snapshot knows the remote partitions (P2.3).
        let mut awaited = BTreeSet::new();
        let reserve = recovery::reserved(&self.graph, &replayed);
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, location, bytes)) = *finished else {
                continue;
            };
            match location {
                Location::Remote => {
                    let held = self
                        .remote
                        .iter()
                        .any(|p| p.producer.index() == s && p.attempt == attempt);
                    if held {
                        self.jm.as_mut().expect("elected").tracker[s] =
                            Some((attempt, location, bytes));
                    }
                }
                Location::TaskManager { .. } => {
                    if reserve[s] {
                        awaited.insert(SubtaskId(s as u32));
                    }
                }
            }
        }
        self.jm.as_mut().expect("elected").recovering = Some(Recovering { replayed, awaited });
        sched.after(
            self.batch.previous_worker_timeout,
            Event::WorkerTimeout { incarnation },
        );
        for tm in 0..self.tms.len() as u32 {
            self.register(sched, tm);
        }
        self.maybe_end_recovery(sched);
    }

    /// The durable job events, replayed (F2.3).
    pub(crate) fn replay_log(&self) -> Replayed {
        let vertex_of: Vec<VertexId> = self.graph.subtasks.iter().map(|s| s.vertex).collect();
        replay(self.store.durable(), self.graph.vertices.len(), &vertex_of)
    }

    /// P2.6 / F2.4 step 5: nothing to recover from, or recovery is off: the job runs again
    /// from scratch, and the log starts over.
    pub(crate) fn restart_from_scratch(&mut self, sched: &mut Scheduler<'_, Event>, r: usize) {
        let now = sched.now();
        let finished_before: Vec<SubtaskId> = (0..self.done.len() as u32)
            .map(SubtaskId)
            .filter(|s| self.done[s.index()].is_some())
            .collect();
        self.store.clear();
        self.record(
            now,
            TraceEvent::RecoveryStarted {
                replayed: 0,
                discarded: 0,
                full_restart: true,
            },
        );
        let record = &mut self.recoveries[r];
        record.full_restart = true;
        record.running_at = Some(now);
        record.rerun = finished_before
            .iter()
            .map(|&s| (s, RerunReason::FullRestart))
            .collect();
        for &s in &finished_before {
            self.rerun_of[s.index()] = Some(r);
        }
        let rerun = finished_before.len() as u32;
        self.jm.as_mut().expect("elected").recovered_once = true;
        self.set_job_status(now, JobStatus::Running);
        self.record(
            now,
            TraceEvent::RecoveryEnded {
                recovered: 0,
                rerun,
                timed_out: false,
            },
        );
        self.schedule(sched);
    }

    /// F2.4 step 5 (Flink's `recoverFailed`): the durable job events could not be read back.
    /// The log is deleted and the job restarts in full as a global failover does, so every
    /// execution takes a new attempt.
    pub(crate) fn replay_failed(&mut self, sched: &mut Scheduler<'_, Event>, r: usize) {
        let events = self.store.durable().len() as u32;
        self.record(sched.now(), TraceEvent::JobEventsUnreadable { events });
        let jm = self.jm.as_mut().expect("elected");
        for (e, next) in jm.exec.iter_mut().zip(&mut self.next_attempt) {
            e.attempt = *next;
            *next += 1;
        }
        self.restart_from_scratch(sched, r);
    }

    pub(crate) fn maybe_end_recovery(&mut self, sched: &mut Scheduler<'_, Event>) {
        let done = self
            .jm
            .as_ref()
            .and_then(|jm| jm.recovering.as_ref())
            .is_some_and(|r| r.awaited.is_empty());
        if done {
            self.end_recovery(sched, false);
        }
    }

    /// A partition report reached the JobMaster: the oracles note it (the ledger of what was
    /// reported in time). Returns the reporting process.
    pub(crate) fn report_seen(
        &mut self,
        now: Instant,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
    ) -> u32 {
        let process = self.tms[tm as usize].process;
        let index = self.trace.len();
        self.oracles
            .report_arrived(subtask, attempt, (tm, process), now, index);
        process
    }

    pub(crate) fn on_report(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        bytes: u64,
    ) {
        let now = sched.now();
        let process = self.report_seen(now, tm, (subtask, attempt));
        let jm = self.jm.as_mut().expect("alive");
        if let Some(rec) = jm.recovering.as_mut() {
            let expected = Location::TaskManager {
                task_manager: tm,
                process,
            };
            if let Some((a, location, _)) = rec.replayed.finished[subtask.index()] {
                if a == attempt && location == expected {
                    jm.tracker[subtask.index()] = Some((attempt, location, bytes));
                    rec.awaited.remove(&subtask);
                    self.record(
                        now,
                        TraceEvent::PartitionReported {
                            task_manager: tm,
                            subtask,
                            attempt,
                            late: false,
                        },
                    );
                    self.maybe_end_recovery(sched);
                    return;
                }
            }
            self.record(
                now,
                TraceEvent::PartitionReported {
                    task_manager: tm,
                    subtask,
                    attempt,
                    late: false,
                },
            );
            self.send_to_task_manager(sched, tm, Msg::Release { subtask, attempt });
            return;
        }
        // The JobMaster tracks this very partition already (a report that crossed a
        // registration): nothing to do.
        if jm.tracker[subtask.index()].is_some_and(|(a, l, _)| {
            a == attempt
                && l == Location::TaskManager {
                    task_manager: tm,
                    process,
                }
        }) {
            return;
        }
        // F2.4: after the wait, a report is answered by releasing those partitions.
        let late = jm.recovered_once;
        self.record(
            now,
            TraceEvent::PartitionReported {
                task_manager: tm,
                subtask,
                attempt,
                late,
            },
        );
        if late {
            if let Some(r) = self.recoveries.last_mut() {
                r.late_reports += 1;
            }
            if self.bug == Some(Bug::KeepLatePartitions) {
                return;
            }
        }
        self.send_to_task_manager(sched, tm, Msg::Release { subtask, attempt });
    }

    /// P2.4 steps 1-4, then RUNNING.
    pub(crate) fn end_recovery(&mut self, sched: &mut Scheduler<'_, Event>, timed_out: bool) {
        let now = sched.now();
        let r = self.recoveries.len() - 1;
        let jm = self.jm.as_mut().expect("alive");
        let Some(Recovering { replayed, .. }) = jm.recovering.take() else {
            return;
        };
        jm.recovered_once = true;
        let tracked: Vec<bool> = jm.tracker.iter().map(Option::is_some).collect();
        let outcome = recovery::recover(&self.graph, &self.batch, &replayed, &tracked, self.bug);
        // Coordinators: restored from the snapshot when they support batch snapshots (P2.5),
        // fresh otherwise.
        for v in 0..self.graph.vertices.len() {
            let (Some(c), Some(p)) = (self.batch.coordinators[v], replayed.parallelism[v]) else {
                continue;
            };
            let restored = replayed
                .snapshot
                .as_ref()
                .and_then(|s| s.enumerators[v].clone())
                .filter(|_| c.supports_batch_snapshot);
            let jm = self.jm.as_mut().expect("alive");
            jm.enumerators[v] = Some(restored.unwrap_or_else(|| Enumerator::new(c.splits, p)));
            jm.remembered[v] = outcome.remembered[v];
        }
        // Step 2: recovered subtasks go CREATED → FINISHED with their old attempt.
        let mut recovered = Vec::new();
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, _, _)) = *finished else {
                continue;
            };
            let id = SubtaskId(s as u32);
            let jm = self.jm.as_mut().expect("alive");
            jm.exec[s].attempt = attempt;
            if outcome.finished[s] {
                // Kept with its partition if one was reported; an OPTIONAL one need not be.
                self.exec_state(now, id, ExecutionState::Finished);
                recovered.push(id);
            } else {
                // Not recovered: the partition (if reported) is released below by the reset.
                jm.exec[s].state = ExecutionState::Finished;
            }
        }
        // Step 3: unfinished subtasks of a vertex with a restored coordinator return their
        // splits (`subtaskReset`).
        if self.bug != Some(Bug::SkipCoordinatorReset) {
            for v in 0..self.graph.vertices.len() {
                let Some(p) = replayed.parallelism[v] else {
                    continue;
                };
                let first = self.graph.vertices[v].first;
                let jm = self.jm.as_mut().expect("alive");
                if let Some(e) = jm.enumerators[v].as_mut() {
                    for i in 0..p {
                        if replayed.finished[(first + i) as usize].is_none() {
                            e.subtask_reset(i);
                        }
                    }
                }
            }
        }
        // Step 4: reset what must run again; the job runs. By default (P2.2) the job is RUNNING
        // first, so the resets are logged; Flink resets while still RECONCILING, when nothing is
        // logged (F2.3), and only then runs.
        let log_resets = self.batch.job_events.log_recovery_resets;
        if log_resets {
            self.set_job_status(now, JobStatus::Running);
        }
        let plan = Plan {
            reset: outcome.reset.clone(),
            fresh_enumerators: outcome.fresh.clone(),
            recovery: true,
            recovery_index: Some(r),
        };
        self.reset(sched, &plan, false);
        // The log must not keep claiming what this recovery undid (discarded or unreported
        // finishes): a later crash would otherwise trust them.
        let stale: Vec<SubtaskId> =
            recovery::logged_finished(self.store.durable(), self.graph.subtasks.len())
                .into_iter()
                .filter(|s| !outcome.finished[s.index()] && !plan.reset.iter().any(|(r, _)| r == s))
                .collect();
        if log_resets && !stale.is_empty() {
            self.log(sched, JobEvent::Reset { subtasks: stale });
        }
        if !log_resets {
            self.set_job_status(now, JobStatus::Running);
        }
        // The figures: which subtasks that had finished before the crash run again, and why.
        let mut rerun = Vec::new();
        for s in (0..self.done.len() as u32).map(SubtaskId) {
            if self.done[s.index()].is_none() || outcome.finished[s.index()] {
                continue;
            }
            let reason = outcome
                .reset
                .iter()
                .find(|(t, _)| *t == s)
                .map(|&(_, why)| why)
                .unwrap_or(if replayed.discarded.contains(&s) {
                    RerunReason::NoSnapshot
                } else {
                    RerunReason::EventLost
                });
            self.rerun_of[s.index()] = Some(r);
            rerun.push((s, reason));
        }
        let record = &mut self.recoveries[r];
        record.recovered = recovered.clone();
        record.rerun = rerun;
        record.running_at = Some(now);
        record.timed_out = timed_out;
        let rerun = record.rerun.len() as u32;
        self.record(
            now,
            TraceEvent::RecoveryEnded {
                recovered: recovered.len() as u32,
                rerun,
                timed_out,
            },
        );
        self.schedule(sched);
    }
}
