//! Reconciliation of a batch job with TaskManager reports (P3 in batch, FLINK-5703): what the
//! adaptive batch scheduler takes from the reports, the hooks ([`Reconciles`]) of the one flow
//! of both modes (`jobmaster::reconcile`: the window, P3.3's refusal, the end of the window).
//!
//! Under `jobmaster.failover: reconcile` the TaskManagers keep running a batch job's tasks
//! through the JobManager's absence (P3.1) and keep their RPCs (P3.3). The new JobManager puts
//! the job and every execution it knows of in RECONCILING, takes each TaskManager's report
//! (executions with state and parallelism, a source's splits, the inputs read, partitions),
//! rebuilds its view and applies the states (P3.2), and at the end of the window goes RUNNING,
//! FINISHED or FAILING (P3.4). FAILING is followed by normal failover, which for a batch job is
//! FLIP-383 job recovery (P2.4) from the job events and the partitions reported.
//!
//! Splits, inputs and partitions are reported by batch TaskManagers only (a streaming JobMaster
//! rebuilds its enumerators from its checkpoint and knows its channels from the graph), so
//! what they do to the view is this mode's own handlers (`on_report_split`, `on_report_input`,
//! `reconcile_partition`), which the shared flow never calls.

use super::*;
use crate::batch::recovery;
use crate::checkpoint::stats::ReconcileRecord;
use crate::jobmaster::reconcile::window::{Judged, Window};
use crate::jobmaster::reconcile::{GivenUp, Reconciles};
use crate::trace::{Call, Rpc};

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

impl Reconciles for AdaptiveBatch {
    type Reports = Reconciling;

    const GIVEN_UP: GivenUp = GivenUp::NotAwaited;

    fn reports(&mut self) -> &mut Option<Reconciling> {
        &mut self.reconciling
    }

    /// The executions `tm` reported, with their splits and inputs. Its reported partitions
    /// stay known, as in P2.4: a consumer that then misses one fails over
    /// (`PartitionNotFound`); those of a lost process are dropped at its loss
    /// (`lose_task_manager`).
    fn void(&mut self, tm: u32) {
        let rec = self.reconciling.as_mut().expect("open with the window");
        for ((report, splits), inputs) in rec
            .reports
            .iter_mut()
            .zip(&mut rec.splits)
            .zip(&mut rec.inputs)
        {
            if report.is_some_and(|(_, _, t)| t == tm) {
                *report = None;
                splits.clear();
                inputs.clear();
            }
        }
    }

    fn statistics<'c>(ctx: &'c mut Ctx<'_, '_>) -> &'c mut Vec<ReconcileRecord> {
        &mut ctx.cluster.reconciliations
    }

    fn process(ctx: &Ctx<'_, '_>, tm: u32) -> u32 {
        ctx.tms[tm as usize].process
    }

    fn timeout(_: &With<'_, Self>, ctx: &Ctx<'_, '_>) -> Duration {
        let (timeout, _) = ctx.cluster.reconcile.expect("reconciling");
        timeout
    }

    /// P3.1: the job and every execution the JobMaster knows of (the vertices the job events
    /// initialized) are RECONCILING; every process the job used that nobody declared lost is
    /// expected (HA's record).
    fn enter(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>) -> (Vec<Option<u32>>, Reconciling) {
        jm.set_job_status(ctx, JobStatus::Reconciling);
        let replayed = jm.replay_log(ctx);
        for v in 0..ctx.cluster.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                jm.reconcile_vertex(ctx, VertexId(v as u32), p);
            }
        }
        let n = ctx.cluster.graph.subtasks.len();
        let reports = Reconciling {
            reports: vec![None; n],
            splits: vec![Vec::new(); n],
            inputs: vec![Vec::new(); n],
            partitions: vec![Vec::new(); n],
            replayed,
            conflict: false,
        };
        (ctx.cluster.expected_task_managers.clone(), reports)
    }

    /// Every TaskManager learns of the new leader and registers with it; under reconciliation
    /// it reports what it hosts right after (`TaskManager::register`).
    fn ask_reports(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>) {
        for tm in 0..ctx.tms.len() as u32 {
            ctx.register(tm, jm.leader.incarnation);
        }
    }

    /// Two reports of one subtask that differ contradict each other; a vertex the job events
    /// did not show is known from its executions' deployment descriptors (P3.2: rebuilt
    /// first).
    fn take_execution(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        (state, parallelism): (ExecutionState, u32),
    ) {
        let rec = jm
            .scheduler
            .reconciling
            .as_mut()
            .expect("open with the window");
        if rec.reports[subtask.index()].is_some_and(|(a, _, t)| a != attempt || t != tm) {
            rec.conflict = true;
        }
        rec.reports[subtask.index()] = Some((attempt, state, tm));
        rec.splits[subtask.index()].clear();
        rec.inputs[subtask.index()].clear();
        let vertex = ctx.cluster.graph.subtasks[subtask.index()].vertex;
        jm.reconcile_vertex(ctx, vertex, parallelism);
    }

    /// The JobMaster went on without this execution. A running one is cancelled (it may be
    /// running again elsewhere); the partition, if any, is answered by a release
    /// (`on_report`, P2.4).
    fn late_execution(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        state: ExecutionState,
    ) {
        let current = jm.scheduler.exec[subtask.index()];
        let superseded = current.attempt != attempt || current.placed != Some(tm);
        if superseded && !state.is_terminal() {
            jm.send_to_task_manager(ctx, tm, Rpc::new(subtask, attempt, Call::CancelTask));
        }
    }

    /// What this TaskManager runs is known now (what an earlier JobMaster left there and this
    /// one does not keep, it cancelled on the report): its free slots can be used.
    fn report_complete(jm: &mut With<'_, Self>, _: &mut Ctx<'_, '_>, tm: u32, process: u32) {
        if jm.leader.task_managers[tm as usize] == Some(process) {
            jm.scheduler.accounted[tm as usize] = true;
        }
    }

    /// Its free slots may take what waits to be deployed.
    fn late_report_done(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>, _: u32) {
        jm.schedule(ctx);
    }

    fn judge(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        _: &Window,
        reports: &Reconciling,
    ) -> Judged {
        jm.judge_reports(ctx, reports)
    }

    fn running(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>, reports: Reconciling) {
        jm.resume_after_reconcile(ctx, reports);
    }

    fn finished(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>) {
        jm.finish_job(ctx);
    }

    fn failing(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        window: &Window,
        reports: Reconciling,
    ) {
        jm.fail_after_reconcile(ctx, window, reports);
    }
}

impl With<'_, AdaptiveBatch> {
    /// P3.3: the reconciling JobMaster refuses a task's RPC (`With::refuses`, the rule of both
    /// modes); its TaskManager keeps it for a retry. False: the bug `drop-refused-rpc` drops it
    /// instead. Batch only: the batch trace tells a refusal as the JobMaster's
    /// (`batch_rpc_refused`, which the batch oracles read), the streaming one as the
    /// TaskManager's keeping it (`TaskManager::keep`), and the pinned hashes fix both.
    pub(crate) fn refuse(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        (tm, process): (u32, u32),
        msg: Rpc,
    ) -> bool {
        let now = ctx.now();
        ctx.record(TraceEvent::TaskRpcRefused {
            task_manager: tm,
            subtask: msg.subtask,
            attempt: msg.attempt,
        });
        let index = ctx.cluster.trace.len().saturating_sub(1);
        ctx.cluster
            .oracles
            .rpc_refused(&ctx.cluster.graph, (tm, process), msg, (now, index));
        self.bug != Some(Bug::DropRefusedRpc)
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

    /// P3.2, P3.4: the window closes: rebuild each reported execution (attempt, placement)
    /// before applying its state, and judge what the reports say of the job: contradicting
    /// reports, inputs read from replaced attempts, unknown producers of known vertices,
    /// unreported executions others read from and finished producers without a partition all
    /// make it FAILING; an execution nobody reported or read from runs again.
    fn judge_reports(&mut self, ctx: &mut Ctx<'_, '_>, rec: &Reconciling) -> Judged {
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
        Judged {
            failing,
            all_finished,
            missing_counts: true,
            reported: rec.reports.iter().flatten().count() as u32,
            running,
            finished,
        }
    }

    /// P3.4 RUNNING: the job event log learns what the reports taught (P2.2), the enumerators
    /// and the partition tracker are rebuilt from them, and scheduling goes on.
    fn resume_after_reconcile(&mut self, ctx: &mut Ctx<'_, '_>, rec: Reconciling) {
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
