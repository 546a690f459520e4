//! Reconciliation of a batch job with TaskManager reports (P3 in batch, FLINK-5703).
//!
//! Under `jobmaster.failover: reconcile` the TaskManagers keep running a batch job's tasks
//! through the JobManager's absence (P3.1) and keep their RPCs (P3.3). The new JobManager puts
//! the job and every execution it knows of in RECONCILING, takes each TaskManager's report
//! (executions with state and parallelism, a source's splits, partitions), rebuilds its view
//! and applies the states (P3.2), and at the end of the window goes RUNNING, FINISHED or
//! FAILING (P3.4). FAILING is followed by normal failover, which for a batch job is FLIP-383
//! job recovery (P2.4) from the job events and the partitions reported.

use super::*;
use crate::batch::recovery;
use crate::jobmaster::reconcile::window::{Judged, Window};
use crate::trace::{Call, ReconcileOutcome, Rpc};

#[cfg(test)]
mod tests;

/// What the reports in the JobMaster's reconcile window (P3) said: `Some` exactly while the
/// window, which the JobMaster holds whatever its mode (`JobMaster::window`: which TaskManager
/// processes it waits for; a replacement process is another TaskManager, the one the job used
/// missed the window), is open.
pub(crate) struct Reconciling {
    /// Per subtask: the reported execution (attempt, state, TaskManager).
    pub(crate) reports: Vec<Option<(u32, ExecutionState, u32)>>,
    /// Per subtask: the splits its reported attempt was assigned.
    pub(crate) splits: Vec<Vec<u32>>,
    /// Per subtask: the producer attempts its reported attempt read.
    pub(crate) inputs: Vec<Vec<(SubtaskId, u32)>>,
    /// Per subtask: reported partitions (attempt, location, bytes).
    pub(crate) partitions: Vec<Vec<(u32, Location, u64)>>,
    /// The job events, for the parallelism and, if this ends FAILING, for P2.4.
    pub(crate) replayed: Replayed,
    /// Two reports contradict each other (two attempts of one subtask, or one split held
    /// by two readers): executions an earlier JobMaster had superseded still run, and no
    /// rebuilt view can be consistent, so the window ends FAILING.
    pub(crate) conflict: bool,
}

impl Reconciling {
    /// TaskManager `tm` registered as `process`: the window waits for its report. What an
    /// earlier process of it reported is void: that process is gone, with its tasks.
    pub(crate) fn expect(&mut self, window: &mut Window, tm: u32, process: u32) {
        if window.expected(tm) != Some(process) {
            self.forget(window, tm);
        }
        // A registration (again, after a reconnection) is followed by a whole new report.
        window.expect(tm, process);
    }

    /// TaskManager `tm` is gone: the executions it reported are void, and the window no
    /// longer waits for it (P3.4). Its reported partitions stay known, as in P2.4: a consumer
    /// that then misses one fails over (`PartitionNotFound`).
    pub(crate) fn forget(&mut self, window: &mut Window, tm: u32) {
        window.forget(tm);
        {
            for ((report, splits), inputs) in self
                .reports
                .iter_mut()
                .zip(&mut self.splits)
                .zip(&mut self.inputs)
            {
                if report.is_some_and(|(_, _, t)| t == tm) {
                    *report = None;
                    splits.clear();
                    inputs.clear();
                }
            }
        }
    }
}

impl With<'_, AdaptiveBatch> {
    /// P3.3: the reconciling JobMaster refuses a task's RPC (`Leader::refuses`; reports and
    /// registrations are taken).
    pub(crate) fn refuses(&self, msg: Rpc) -> bool {
        self.leader.refuses(!msg.is_task_rpc())
    }

    /// P3.3: the reconciling JobMaster refuses a task's RPC; its TaskManager keeps it for a
    /// retry. False: the bug `drop-refused-rpc` drops it instead.
    pub(crate) fn refuse(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        (tm, process): (u32, u32),
        msg: Rpc,
    ) -> bool {
        let now = ctx.now();
        let rpc = msg.task_rpc().expect("only task RPCs are kept");
        let (subtask, attempt) = (rpc.subtask, rpc.attempt);
        ctx.record(TraceEvent::TaskRpcRefused {
            task_manager: tm,
            subtask,
            attempt,
        });
        let index = ctx.cluster.trace.len().saturating_sub(1);
        ctx.cluster
            .oracles
            .rpc_refused(&ctx.cluster.graph, (tm, process), rpc, (now, index));
        self.bug != Some(Bug::DropRefusedRpc)
    }

    // ---- JobMaster side ------------------------------------------------------------------

    /// P3.1: the new JobMaster opens the window: the job and every execution it knows of
    /// (the vertices the job events initialized) are RECONCILING.
    pub(crate) fn start_reconcile(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        let (timeout, _) = ctx.cluster.reconcile.expect("reconciling");
        self.set_job_status(ctx, JobStatus::Reconciling);
        let replayed = self.replay_log(ctx);
        for v in 0..ctx.cluster.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                self.reconcile_vertex(ctx, VertexId(v as u32), p);
            }
        }
        let n = ctx.cluster.graph.subtasks.len();
        let tms = ctx.tms.len();
        *self.window = Some(Window::open(
            now,
            ctx.cluster.expected_task_managers.clone(),
            &mut ctx.cluster.reconciliations,
        ));
        self.scheduler.reconciling = Some(Reconciling {
            reports: vec![None; n],
            splits: vec![Vec::new(); n],
            inputs: vec![Vec::new(); n],
            partitions: vec![Vec::new(); n],
            replayed,
            conflict: false,
        });
        let incarnation = self.leader.incarnation;
        ctx.sched
            .after(timeout, Event::ReconcileTimeout { incarnation });
        for tm in 0..tms as u32 {
            ctx.register(tm, self.leader.incarnation);
        }
        self.maybe_end_reconcile(ctx);
    }

    /// A vertex becomes known to the reconciling JobMaster: its executions are RECONCILING.
    fn reconcile_vertex(&mut self, ctx: &mut Ctx<'_, '_>, v: VertexId, parallelism: u32) {
        if self.scheduler.parallelism[v.index()].is_some() {
            return;
        }
        self.scheduler.parallelism[v.index()] = Some(parallelism);
        let first = ctx.cluster.graph.vertices[v.index()].first;
        for s in (first..first + parallelism).map(SubtaskId) {
            self.exec_state(ctx, s, ExecutionState::Reconciling);
        }
    }

    pub(crate) fn on_report_execution(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        state: ExecutionState,
        parallelism: u32,
    ) {
        let open = self
            .window
            .as_ref()
            .zip(self.scheduler.reconciling.as_mut());
        let Some((window, rec)) = open else {
            // After the window: the JobMaster went on without this execution. A running one
            // is cancelled (it may be running again elsewhere); the partition, if any, is
            // answered by a release (`on_report`).
            if let Some(r) = ctx.cluster.reconciliations.last_mut() {
                r.late_reports += 1;
            }
            let current = self.scheduler.exec[subtask.index()];
            let superseded = current.attempt != attempt || current.placed != Some(tm);
            if superseded && !state.is_terminal() {
                self.send_to_task_manager(ctx, tm, Rpc::new(subtask, attempt, Call::CancelTask));
            }
            return;
        };
        if rec.reports[subtask.index()].is_some_and(|(a, _, t)| a != attempt || t != tm) {
            rec.conflict = true;
        }
        rec.reports[subtask.index()] = Some((attempt, state, tm));
        rec.splits[subtask.index()].clear();
        rec.inputs[subtask.index()].clear();
        let record = window.record;
        ctx.cluster.reconciliations[record].reports += 1;
        // P3.2: rebuild first: a vertex the job events did not show is known from its
        // executions' deployment descriptors.
        let vertex = ctx.cluster.graph.subtasks[subtask.index()].vertex;
        self.reconcile_vertex(ctx, vertex, parallelism);
    }

    pub(crate) fn on_report_split(
        &mut self,
        ctx: &Ctx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        split: u32,
    ) {
        let vertex = ctx.cluster.graph.subtasks[subtask.index()].vertex;
        let first = ctx.cluster.graph.vertices[vertex.index()].first as usize;
        let p = ctx.cluster.graph.vertices[vertex.index()].parallelism as usize;
        if let Some(rec) = self.scheduler.reconciling.as_mut() {
            if rec.reports[subtask.index()].is_some_and(|(a, _, _)| a == attempt) {
                if rec.splits[first..first + p]
                    .iter()
                    .any(|held| held.contains(&split))
                {
                    rec.conflict = true;
                }
                rec.splits[subtask.index()].push(split);
            }
        }
    }

    pub(crate) fn on_report_input(
        &mut self,
        (subtask, attempt): (SubtaskId, u32),
        input: (SubtaskId, u32),
    ) {
        if let Some(rec) = self.scheduler.reconciling.as_mut() {
            if rec.reports[subtask.index()].is_some_and(|(a, _, _)| a == attempt) {
                rec.inputs[subtask.index()].push(input);
            }
        }
    }

    pub(crate) fn reconcile_partition(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        bytes: u64,
    ) {
        let process = self.report_seen(ctx, tm, (subtask, attempt));
        let location = Location::TaskManager {
            task_manager: tm,
            process,
        };
        let rec = self.scheduler.reconciling.as_mut().expect("reconciling");
        rec.partitions[subtask.index()].push((attempt, location, bytes));
    }

    /// The reconciling JobMaster noticed that TaskManager process `process` is gone.
    pub(crate) fn forget_task_manager(&mut self, ctx: &mut Ctx<'_, '_>, tm: u32, process: u32) {
        let open = self
            .window
            .as_mut()
            .zip(self.scheduler.reconciling.as_mut());
        let Some((window, rec)) = open else {
            return;
        };
        if window.expected(tm) == Some(process) {
            rec.forget(window, tm);
        }
        self.maybe_end_reconcile(ctx);
    }

    pub(crate) fn on_report_done(&mut self, ctx: &mut Ctx<'_, '_>, tm: u32) {
        let process = ctx.tms[tm as usize].process;
        // What this TaskManager runs is known now (what an earlier JobMaster left there and
        // this one does not keep, it cancelled on the report): its free slots can be used.
        if self.leader.task_managers[tm as usize] == Some(process) {
            self.scheduler.accounted[tm as usize] = true;
        }
        match self.window.as_mut() {
            Some(window) => {
                if window.report_done(tm, process) {
                    self.end_reconcile(ctx);
                }
            }
            None => self.schedule(ctx),
        }
    }

    fn maybe_end_reconcile(&mut self, ctx: &mut Ctx<'_, '_>) {
        let complete = self.window.as_ref().is_some_and(Window::complete);
        if complete {
            self.end_reconcile(ctx);
        }
    }

    /// P3.4: the window closes. Apply the reported states (P3.2), then RUNNING, FINISHED, or
    /// FAILING followed by batch recovery (P2.4).
    pub(crate) fn end_reconcile(&mut self, ctx: &mut Ctx<'_, '_>) {
        let now = ctx.now();
        let window = self.window.take().expect("the window is open");
        let rec = self
            .scheduler
            .reconciling
            .take()
            .expect("open with the window");
        // A reported execution that read another attempt of a producer than the one reported
        // belongs to a graph an earlier JobMaster replaced: no consistent view exists.
        let stale_inputs =
            rec.inputs.iter().flatten().any(|&(p, a)| {
                rec.reports[p.index()].is_some_and(|(reported, _, _)| reported != a)
            });
        let mut failing = rec.conflict || stale_inputs;
        // A known vertex whose input vertex nobody reported ran on outputs the JobMaster
        // cannot account for (P3.4: as unknown as a missing TaskManager's).
        for v in 0..ctx.cluster.graph.vertices.len() {
            if self.scheduler.parallelism[v].is_some()
                && ctx.cluster.graph.vertices[v].inputs.iter().any(|&e| {
                    self.scheduler.parallelism[ctx.cluster.graph.edges[e].from.index()].is_none()
                })
            {
                failing = true;
            }
        }
        let (mut running, mut finished) = (0u32, 0u32);
        let mut all_finished = true;
        for v in 0..ctx.cluster.graph.vertices.len() {
            let Some(p) = self.scheduler.parallelism[v] else {
                all_finished = false;
                continue;
            };
            let vertex = &ctx.cluster.graph.vertices[v];
            let consumed = vertex.outputs.iter().any(|&e| {
                let to = ctx.cluster.graph.edges[e].to;
                self.scheduler.parallelism[to.index()].is_some()
            });
            let has_outputs = !vertex.outputs.is_empty();
            for s in (vertex.first..vertex.first + p).map(SubtaskId) {
                let Some((attempt, state, tm)) = rec.reports[s.index()] else {
                    all_finished = false;
                    if consumed {
                        // Its consumers ran on an output nobody can account for (P3.4:
                        // unknown, like a TaskManager that missed the window).
                        failing = true;
                    } else {
                        // Never deployed, or ended and forgotten before anyone read its
                        // output: it runs (again) under a new attempt.
                        self.exec_state(ctx, s, ExecutionState::Canceled);
                        let fresh = ctx.cluster.next_attempt[s.index()];
                        ctx.cluster.next_attempt[s.index()] += 1;
                        let e = &mut self.scheduler.exec[s.index()];
                        e.attempt = fresh;
                        e.state = ExecutionState::Created;
                    }
                    continue;
                };
                // P3.2: rebuild (attempt, placement) before applying the state.
                self.scheduler.exec[s.index()].attempt = attempt;
                self.scheduler.exec[s.index()].placed = Some(tm);
                self.exec_state(ctx, s, state);
                match state {
                    ExecutionState::Finished => {
                        finished += 1;
                        let partition = match ctx.cluster.batch.shuffle {
                            ShuffleKind::Remote => ctx
                                .cluster
                                .remote
                                .iter()
                                .find(|p| p.producer == s && p.attempt == attempt)
                                .map(|p| {
                                    let bytes = data::total_records(&p.fragments)
                                        * ctx.cluster.batch.record_bytes;
                                    (attempt, Location::Remote, bytes)
                                }),
                            ShuffleKind::Internal => rec.partitions[s.index()]
                                .iter()
                                .find(|(a, _, _)| *a == attempt)
                                .copied(),
                        };
                        self.scheduler.exec[s.index()].placed = None;
                        match partition {
                            Some(tracked) => self.scheduler.tracker[s.index()] = Some(tracked),
                            None if has_outputs => failing = true,
                            None => {}
                        }
                    }
                    ExecutionState::Failed | ExecutionState::Canceled => {
                        // P3.4: a FAILED or CANCELED execution makes the window FAILING.
                        failing |= self.bug != Some(Bug::ReconcileAdoptsFailed);
                        all_finished = false;
                    }
                    _ => {
                        running += 1;
                        all_finished = false;
                        self.scheduler.slots_used[tm as usize] += 1;
                    }
                }
            }
        }
        let judged = Judged {
            failing,
            all_finished,
            missing_counts: true,
            reported: rec.reports.iter().flatten().count() as u32,
            running,
            finished,
        };
        let (outcome, event) = window.end(now, &judged, &mut ctx.cluster.reconciliations);
        ctx.record(event);
        match outcome {
            ReconcileOutcome::Running => {
                self.set_job_status(ctx, JobStatus::Running);
                // P2.2: vertices known only from the reports are logged as initialized, so
                // a later recovery knows their parallelism.
                // In topological order, as a JobMaster initializes them.
                for vertex in ctx.cluster.graph.topological_order.clone() {
                    let v = vertex.index();
                    let decided = self.scheduler.parallelism[v];
                    if let (Some(parallelism), None) = (decided, rec.replayed.parallelism[v]) {
                        self.log(
                            ctx,
                            JobEvent::VertexInitialized {
                                vertex,
                                parallelism,
                            },
                        );
                    }
                }
                // The log must not keep claiming finishes this reconciliation did not keep
                // (an execution forgotten and run again, or another attempt adopted): a later
                // recovery would trust them.
                let stale: Vec<SubtaskId> = recovery::logged_finished(
                    ctx.cluster.store.durable(),
                    ctx.cluster.graph.subtasks.len(),
                )
                .into_iter()
                .filter(|s| {
                    let e = self.scheduler.exec[s.index()];
                    let logged = rec.replayed.finished[s.index()].map(|(a, _, _)| a);
                    e.state != ExecutionState::Finished || logged != Some(e.attempt)
                })
                .collect();
                if !stale.is_empty() {
                    self.log(ctx, JobEvent::Reset { subtasks: stale });
                }
                self.rebuild_enumerators(ctx, &rec);
                self.release_unknown_partitions(ctx, &rec);
                self.schedule(ctx);
            }
            ReconcileOutcome::Finished => self.finish_job(ctx),
            ReconcileOutcome::Failing => self.fail_after_reconcile(ctx, &window, rec),
        }
    }

    /// The enumerators are rebuilt from the splits the readers reported (P3.2): what no
    /// reported execution holds is unassigned. Only a window that ends RUNNING rebuilds, and it
    /// has adopted every reported attempt, so the splits kept per subtask (those of its
    /// reported attempt, void if its TaskManager was lost) are its current attempt's.
    fn rebuild_enumerators(&mut self, ctx: &Ctx<'_, '_>, rec: &Reconciling) {
        for v in 0..ctx.cluster.graph.vertices.len() {
            let Some(c) = ctx.cluster.batch.coordinators[v] else {
                continue;
            };
            let Some(p) = self.scheduler.parallelism[v] else {
                continue;
            };
            let first = ctx.cluster.graph.vertices[v].first as usize;
            let assigned = rec.splits[first..first + p as usize].to_vec();
            self.scheduler.enumerators[v] = Some(Enumerator::rebuild(c.splits, assigned));
        }
    }

    /// Reported partitions of attempts the JobMaster does not track are released.
    fn release_unknown_partitions(&mut self, ctx: &mut Ctx<'_, '_>, rec: &Reconciling) {
        for (s, reported) in rec.partitions.iter().enumerate() {
            for &(attempt, location, _) in reported {
                let tracked = self.scheduler.tracker[s]
                    .is_some_and(|(a, l, _)| a == attempt && l == location);
                if !tracked {
                    self.release(ctx, SubtaskId(s as u32), attempt, location);
                }
            }
        }
    }

    /// P3.4 FAILING, then normal failover: every execution is cancelled and the job recovers
    /// as a batch job does after a JobManager crash (P2.4), from the job events and the
    /// partitions the TaskManagers reported; a TaskManager that missed the window may still
    /// report until `previous_worker_timeout` (counted from the election).
    fn fail_after_reconcile(&mut self, ctx: &mut Ctx<'_, '_>, window: &Window, rec: Reconciling) {
        let now = ctx.now();
        self.set_job_status(ctx, JobStatus::Failing);
        for s in (0..ctx.cluster.graph.subtasks.len() as u32).map(SubtaskId) {
            self.cancel(ctx, s);
        }
        self.set_job_status(ctx, JobStatus::Restarting);
        // A fresh execution graph: new attempts, nothing tracked, nothing initialized.
        let mut fresh = AdaptiveBatch::new(ctx.cluster, ctx.tms.len(), now);
        for n in &mut ctx.cluster.next_attempt {
            *n += 1;
        }
        fresh.accounted = self.scheduler.accounted.clone();
        fresh.started = self.scheduler.started;
        fresh.flush_pending = self.scheduler.flush_pending;
        fresh.last_snapshot = self.scheduler.last_snapshot;
        fresh.events_failed = self.scheduler.events_failed;
        *self.scheduler = fresh;
        // The leader stays, its status and registered TaskManagers with it, but the fresh
        // graph has counted no restart yet.
        self.leader.restarts = 0;
        ctx.cluster.recoveries.push(RecoveryRecord {
            crashed_at: ctx.cluster.crashed_at,
            elected_at: window.started,
            ..RecoveryRecord::default()
        });
        let r = ctx.cluster.recoveries.len() - 1;
        if !ctx.cluster.store.readable() && self.bug != Some(Bug::ReplayUnreadableLog) {
            self.replay_failed(ctx, r);
            for (s, reported) in rec.partitions.iter().enumerate() {
                for &(attempt, location, _) in reported {
                    self.release(ctx, SubtaskId(s as u32), attempt, location);
                }
            }
            return;
        }
        if !ctx.cluster.batch.recovery_enabled() || ctx.cluster.store.durable().is_empty() {
            self.restart_from_scratch(ctx, r);
            for (s, reported) in rec.partitions.iter().enumerate() {
                for &(attempt, location, _) in reported {
                    self.release(ctx, SubtaskId(s as u32), attempt, location);
                }
            }
            return;
        }
        ctx.cluster.recoveries[r].discarded = rec.replayed.discarded.len() as u32;
        ctx.record(TraceEvent::RecoveryStarted {
            replayed: rec.replayed.applied as u32,
            discarded: rec.replayed.discarded.len() as u32,
            full_restart: false,
        });
        for v in 0..ctx.cluster.graph.vertices.len() {
            self.scheduler.parallelism[v] = rec.replayed.parallelism[v];
        }
        let reserve = recovery::reserved(&ctx.cluster.graph, &rec.replayed);
        let mut awaited = BTreeSet::new();
        for (s, finished) in rec.replayed.finished.iter().enumerate() {
            let Some((attempt, location, bytes)) = *finished else {
                continue;
            };
            let available = match location {
                Location::Remote => ctx
                    .cluster
                    .remote
                    .iter()
                    .any(|p| p.producer.index() == s && p.attempt == attempt),
                Location::TaskManager { .. } => rec.partitions[s]
                    .iter()
                    .any(|&(a, l, _)| a == attempt && l == location),
            };
            if available {
                self.scheduler.tracker[s] = Some((attempt, location, bytes));
            } else if reserve[s] && matches!(location, Location::TaskManager { .. }) {
                awaited.insert(SubtaskId(s as u32));
            }
        }
        // Partitions reported that recovery will not use are released.
        for (s, reported) in rec.partitions.iter().enumerate() {
            for &(attempt, location, _) in reported {
                let used =
                    rec.replayed.finished[s].is_some_and(|(a, l, _)| a == attempt && l == location);
                if !used {
                    self.release(ctx, SubtaskId(s as u32), attempt, location);
                }
            }
        }
        self.scheduler.recovering = Some(Recovering {
            replayed: rec.replayed,
            awaited,
        });
        let deadline = window.started + ctx.cluster.batch.previous_worker_timeout;
        let incarnation = self.leader.incarnation;
        ctx.sched
            .at(deadline.max(now), Event::WorkerTimeout { incarnation });
        self.maybe_end_recovery(ctx);
    }
}
