//! FLIP-383 job recovery on a new JobMaster (P2.4, P2.6): replay the durable job events, wait for
//! the TaskManagers' partition reports until `previous_worker_timeout`, then keep what is proved
//! finished and reset the rest.

use crate::batch::events::{replay, JobEvent, Location, Replayed};
use crate::batch::recovery::{self, Plan};
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};
use crate::jobmaster::batch::AdaptiveBatch;
use crate::jobmaster::batch::Recovering;
use crate::jobmaster::With;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Call, RerunReason, Rpc, TraceEvent};
use crate::world::batch::Ctx;
use crate::world::{Act, Event};

use std::collections::BTreeSet;

impl With<'_, AdaptiveBatch> {
    /// P2.3: a newly elected JobMaster takes the job over: under `failover: reconcile` from
    /// the TaskManagers' reports (P3); otherwise by FLIP-383 recovery from the durable job
    /// events (P2.4), or from scratch when there is nothing to recover from or recovery is off
    /// (P2.6), or by a global failover when the log cannot be read.
    pub(crate) fn take_over(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        let incarnation = self.leader.incarnation;
        self.set_job_status(ctx, JobStatus::Created);
        if ctx.cluster.reconcile.is_some() {
            self.open_window(ctx);
            return;
        }
        let r = ctx.cluster.recoveries.len() - 1;
        ctx.cluster.recoveries[r].elected_at = now;
        if !ctx.cluster.batch.recovery_enabled() || ctx.cluster.store.durable().is_empty() {
            self.restart_from_scratch(ctx, r);
            for tm in 0..ctx.tms.len() as u32 {
                ctx.register(tm, self.leader.incarnation);
            }
            self.schedule(ctx);
            return;
        }
        // P2.4: RECONCILING while replaying and waiting for the previous TaskManagers.
        self.set_job_status(ctx, JobStatus::Reconciling);
        if !ctx.cluster.store.readable() && self.bug != Some(Bug::ReplayUnreadableLog) {
            self.replay_failed(ctx, r);
            for tm in 0..ctx.tms.len() as u32 {
                ctx.register(tm, self.leader.incarnation);
            }
            self.schedule(ctx);
            return;
        }
        let replayed = self.replay_log(ctx);
        ctx.cluster.recoveries[r].discarded = replayed.discarded.len() as u32;
        ctx.record(TraceEvent::RecoveryStarted {
            replayed: replayed.applied as u32,
            discarded: replayed.discarded.len() as u32,
            full_restart: false,
        });
        // Step 1: vertices with a logged parallelism are initialized again.
        for v in 0..ctx.cluster.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                self.scheduler.parallelism[v] = Some(p);
            }
        }
        // The shuffle master's snapshot knows the remote partitions (P2.3).
        let mut awaited = BTreeSet::new();
        let reserve = recovery::reserved(&ctx.cluster.graph, &replayed);
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, location, bytes)) = *finished else {
                continue;
            };
            match location {
                Location::Remote => {
                    let held = ctx
                        .cluster
                        .remote
                        .iter()
                        .any(|p| p.producer.index() == s && p.attempt == attempt);
                    if held {
                        self.scheduler.tracker[s] = Some((attempt, location, bytes));
                    }
                }
                Location::TaskManager { .. } => {
                    if reserve[s] {
                        awaited.insert(SubtaskId(s as u32));
                    }
                }
            }
        }
        self.scheduler.recovering = Some(Recovering { replayed, awaited });
        ctx.sched.after(
            ctx.cluster.batch.previous_worker_timeout,
            Event::WorkerTimeout { incarnation },
        );
        for tm in 0..ctx.tms.len() as u32 {
            ctx.register(tm, self.leader.incarnation);
        }
        self.maybe_end_recovery(ctx);
    }

    /// The durable job events, replayed (F2.3).
    pub(crate) fn replay_log(&self, ctx: &Ctx<'_, '_>) -> Replayed {
        let vertex_of: Vec<VertexId> = ctx
            .cluster
            .graph
            .subtasks
            .iter()
            .map(|s| s.vertex)
            .collect();
        replay(
            ctx.cluster.store.durable(),
            ctx.cluster.graph.vertices.len(),
            &vertex_of,
        )
    }

    /// P2.6 / F2.4 step 5: nothing to recover from, or recovery is off: the job runs again
    /// from scratch, and the log starts over.
    pub(crate) fn restart_from_scratch(&mut self, ctx: &mut Ctx<'_, '_>, r: usize) {
        let now = ctx.now();
        let finished_before: Vec<SubtaskId> = (0..ctx.cluster.done.len() as u32)
            .map(SubtaskId)
            .filter(|s| ctx.cluster.done[s.index()].is_some())
            .collect();
        ctx.cluster.store.clear();
        ctx.record(TraceEvent::RecoveryStarted {
            replayed: 0,
            discarded: 0,
            full_restart: true,
        });
        let record = &mut ctx.cluster.recoveries[r];
        record.full_restart = true;
        record.running_at = Some(now);
        record.rerun = finished_before
            .iter()
            .map(|&s| (s, RerunReason::FullRestart))
            .collect();
        for &s in &finished_before {
            ctx.cluster.rerun_of[s.index()] = Some(r);
        }
        let rerun = finished_before.len() as u32;
        self.scheduler.recovered_once = true;
        self.set_job_status(ctx, JobStatus::Running);
        ctx.record(TraceEvent::RecoveryEnded {
            recovered: 0,
            rerun,
            timed_out: false,
        });
        self.schedule(ctx);
    }

    /// F2.4 step 5 (Flink's `recoverFailed`): the durable job events could not be read back.
    /// The log is deleted and the job restarts in full as a global failover does, so every
    /// execution takes a new attempt.
    pub(crate) fn replay_failed(&mut self, ctx: &mut Ctx<'_, '_>, r: usize) {
        let events = ctx.cluster.store.durable().len() as u32;
        ctx.record(TraceEvent::JobEventsUnreadable { events });
        for (e, next) in self
            .scheduler
            .exec
            .iter_mut()
            .zip(&mut ctx.cluster.next_attempt)
        {
            e.attempt = *next;
            *next += 1;
        }
        self.restart_from_scratch(ctx, r);
    }

    pub(crate) fn maybe_end_recovery(&mut self, ctx: &mut Ctx<'_, '_>) {
        let done = self
            .scheduler
            .recovering
            .as_ref()
            .is_some_and(|r| r.awaited.is_empty());
        if done {
            self.end_recovery(ctx, false);
        }
    }

    /// A partition report reached the JobMaster: the oracles note it (the ledger of what was
    /// reported in time). Returns the reporting process.
    pub(crate) fn report_seen(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
    ) -> u32 {
        let now = ctx.now();
        let process = ctx.tms[tm as usize].process;
        let index = ctx.cluster.trace.len();
        ctx.cluster
            .oracles
            .report_arrived(subtask, attempt, (tm, process), now, index);
        process
    }

    pub(crate) fn on_report(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        bytes: u64,
    ) {
        let process = self.report_seen(ctx, tm, (subtask, attempt));
        if let Some(rec) = self.scheduler.recovering.as_mut() {
            let expected = Location::TaskManager {
                task_manager: tm,
                process,
            };
            if let Some((a, location, _)) = rec.replayed.finished[subtask.index()] {
                if a == attempt && location == expected {
                    self.scheduler.tracker[subtask.index()] = Some((attempt, location, bytes));
                    rec.awaited.remove(&subtask);
                    ctx.record(TraceEvent::PartitionReported {
                        task_manager: tm,
                        subtask,
                        attempt,
                        late: false,
                    });
                    self.maybe_end_recovery(ctx);
                    return;
                }
            }
            ctx.record(TraceEvent::PartitionReported {
                task_manager: tm,
                subtask,
                attempt,
                late: false,
            });
            self.send_to_task_manager(ctx, tm, Rpc::new(subtask, attempt, Call::ReleasePartition));
            return;
        }
        // The JobMaster tracks this very partition already (a report that crossed a
        // registration): nothing to do.
        if self.scheduler.tracker[subtask.index()].is_some_and(|(a, l, _)| {
            a == attempt
                && l == Location::TaskManager {
                    task_manager: tm,
                    process,
                }
        }) {
            return;
        }
        // F2.4: after the wait, a report is answered by releasing those partitions.
        let late = self.scheduler.recovered_once;
        ctx.record(TraceEvent::PartitionReported {
            task_manager: tm,
            subtask,
            attempt,
            late,
        });
        if late {
            if let Some(r) = ctx.cluster.recoveries.last_mut() {
                r.late_reports += 1;
            }
            if self.bug == Some(Bug::KeepLatePartitions) {
                return;
            }
        }
        self.send_to_task_manager(ctx, tm, Rpc::new(subtask, attempt, Call::ReleasePartition));
    }

    /// P2.4 steps 1-4, then RUNNING.
    pub(crate) fn end_recovery(&mut self, ctx: &mut Ctx<'_, '_>, timed_out: bool) {
        let now = ctx.now();
        let r = ctx.cluster.recoveries.len() - 1;
        let Some(Recovering { replayed, .. }) = self.scheduler.recovering.take() else {
            return;
        };
        self.scheduler.recovered_once = true;
        let tracked: Vec<bool> = self.scheduler.tracker.iter().map(Option::is_some).collect();
        let outcome = recovery::recover(
            &ctx.cluster.graph,
            &ctx.cluster.batch,
            &replayed,
            &tracked,
            self.bug,
        );
        // Coordinators: restored from the snapshot when they support batch snapshots (P2.5),
        // fresh otherwise.
        for v in 0..ctx.cluster.graph.vertices.len() {
            let (Some(c), Some(p)) = (ctx.cluster.batch.coordinators[v], replayed.parallelism[v])
            else {
                continue;
            };
            let restored = replayed
                .snapshot
                .as_ref()
                .and_then(|s| s.enumerators[v].clone())
                .filter(|_| c.supports_batch_snapshot);
            self.scheduler.enumerators[v] =
                Some(restored.unwrap_or_else(|| Enumerator::new(c.splits, p)));
            self.scheduler.remembered[v] = outcome.remembered[v];
        }
        // Step 2: recovered subtasks go CREATED → FINISHED with their old attempt.
        let mut recovered = Vec::new();
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, _, _)) = *finished else {
                continue;
            };
            let id = SubtaskId(s as u32);
            self.scheduler.exec[s].attempt = attempt;
            if outcome.finished[s] {
                // Kept with its partition if one was reported; an OPTIONAL one need not be.
                self.exec_state(ctx, id, ExecutionState::Finished);
                recovered.push(id);
            } else {
                // Not recovered: the partition (if reported) is released below by the reset.
                self.scheduler.exec[s].state = ExecutionState::Finished;
            }
        }
        // Step 3: unfinished subtasks of a vertex with a restored coordinator return their
        // splits (`subtaskReset`).
        if self.bug != Some(Bug::SkipCoordinatorReset) {
            for v in 0..ctx.cluster.graph.vertices.len() {
                let Some(p) = replayed.parallelism[v] else {
                    continue;
                };
                let first = ctx.cluster.graph.vertices[v].first;
                if let Some(e) = self.scheduler.enumerators[v].as_mut() {
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
        let log_resets = ctx.cluster.batch.job_events.log_recovery_resets;
        if log_resets {
            self.set_job_status(ctx, JobStatus::Running);
        }
        let plan = Plan {
            reset: outcome.reset.clone(),
            fresh_enumerators: outcome.fresh.clone(),
            recovery: true,
            recovery_index: Some(r),
        };
        self.reset(ctx, &plan, false);
        // The log must not keep claiming what this recovery undid (discarded or unreported
        // finishes): a later crash would otherwise trust them.
        let stale: Vec<SubtaskId> = recovery::logged_finished(
            ctx.cluster.store.durable(),
            ctx.cluster.graph.subtasks.len(),
        )
        .into_iter()
        .filter(|s| !outcome.finished[s.index()] && !plan.reset.iter().any(|(r, _)| r == s))
        .collect();
        if log_resets && !stale.is_empty() {
            self.log(ctx, JobEvent::Reset { subtasks: stale });
        }
        if !log_resets {
            self.set_job_status(ctx, JobStatus::Running);
        }
        // The figures: which subtasks that had finished before the crash run again, and why.
        let mut rerun = Vec::new();
        for s in (0..ctx.cluster.done.len() as u32).map(SubtaskId) {
            if ctx.cluster.done[s.index()].is_none() || outcome.finished[s.index()] {
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
            ctx.cluster.rerun_of[s.index()] = Some(r);
            rerun.push((s, reason));
        }
        let record = &mut ctx.cluster.recoveries[r];
        record.recovered = recovered.clone();
        record.rerun = rerun;
        record.running_at = Some(now);
        record.timed_out = timed_out;
        let rerun = record.rerun.len() as u32;
        ctx.record(TraceEvent::RecoveryEnded {
            recovered: recovered.len() as u32,
            rerun,
            timed_out,
        });
        self.schedule(ctx);
    }
}
