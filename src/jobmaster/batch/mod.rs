//! The adaptive batch scheduler, the JobMaster's mode for a batch job (P2): its view of every
//! execution, the partition tracker, the split enumerators, and what it does with each
//! message it receives.
//!
//! Its state is [`AdaptiveBatch`], one variant of the JobMaster's [`Scheduler`] (volatile: a
//! crash drops the JobMaster, the next leader starts anew); its handlers are methods of
//! [`With<AdaptiveBatch>`], so they reach the JobMaster's shared part (the `Leader`, the
//! reconcile window) beside this state, and act on the rest of the world only through its
//! [`Ctx`]: the cluster's links, trace and durable storage, and the kernel's scheduler for its
//! timers. The world's batch half reaches them through `JobMaster::adaptive`. One module per
//! concern, each a part of `impl With<'_, AdaptiveBatch>`: `scheduler` (the adaptive batch
//! scheduler, failover, resets and releases), `job_events` (the job event log's write
//! buffer), `job_recovery` (FLIP-383 recovery on a new JobMaster, P2.4), `speculation` (P2.8)
//! and `reconcile` (P3 for batch jobs, the JobMaster's side: this mode's hooks of the flow
//! both modes share, `super::reconcile`; the TaskManager's side is
//! `crate::taskmanager::reconcile`). The streaming mode is `super::regions`.

mod job_events;
mod job_recovery;
pub(crate) mod reconcile;
mod scheduler;
pub(crate) mod speculation;

use super::leader::Leader;
use super::{JobMaster, Scheduler, With};
use crate::batch::data;
use crate::batch::events::{JobEvent, Location, Replayed, Snapshot};
use crate::batch::oracle::{Received, TaskRpc};
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};
use crate::scenario::ShuffleKind;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Call, FlushReason, RerunReason, Rpc, TraceEvent};
use crate::world::batch::{Cluster, Ctx};
use crate::world::{Act, Event};
use sim::{Duration, Instant};
use std::collections::BTreeSet;

/// The JobMaster's view of one execution vertex.
#[derive(Clone, Copy)]
pub(crate) struct Execution {
    pub(crate) state: ExecutionState,
    pub(crate) attempt: u32,
    /// The TaskManager the attempt was deployed to.
    pub(crate) placed: Option<u32>,
    /// A reset subtask waits for the restart delay.
    pub(crate) hold_until: Instant,
    /// When this JobMaster deployed the attempt (P2.8: its execution time counts from then).
    pub(crate) deployed_at: Option<Instant>,
}

/// The JobMaster's state in a batch job, beside the shared part ([`JobMaster`]): volatile,
/// rebuilt by every elected leader.
pub struct AdaptiveBatch {
    pub(crate) exec: Vec<Execution>,
    /// Per vertex: the decided parallelism, once initialized.
    pub parallelism: Vec<Option<u32>>,
    /// Per producer subtask: its tracked partition (attempt, location, bytes).
    pub tracker: Vec<Option<(u32, Location, u64)>>,
    pub enumerators: Vec<Option<Enumerator>>,
    /// P2.5 rule 2: a coordinator without batch snapshots whose subtasks all finished.
    pub remembered: Vec<bool>,
    /// P0, P3.2: per TaskManager, whether this JobMaster knows what occupies its slots. One
    /// that keeps tasks across a leader change (reconciliation) is deployed to only once its
    /// report is in; until then a task an earlier JobMaster left there may hold a slot.
    pub(crate) accounted: Vec<bool>,
    pub(crate) slots_used: Vec<u32>,
    /// When this JobMaster last attached a snapshot to a finished event; `None` before its
    /// first. F2.3: Flink measures `snapshot.min-pause` from its last snapshot, and a JobMaster
    /// that has taken none snapshots at once (every recorded Flink 2.3 run shows the first
    /// finished event with a snapshot, see README "Conformance with Flink 2.3").
    pub(crate) last_snapshot: Option<Instant>,
    /// F2.3: its job event store failed to write; it logs nothing more for the rest of its life.
    pub(crate) events_failed: bool,
    /// When this JobMaster took over: the phase of its flush timer.
    pub(crate) started: Instant,
    /// While RECONCILING (P2.4): the replay, and partitions still awaited.
    pub(crate) recovering: Option<Recovering>,
    /// P3: the reconcile window, while open.
    pub(crate) reconciling: Option<reconcile::Reconciling>,
    pub(crate) recovered_once: bool,
    /// A `FlushTick` is scheduled.
    pub(crate) flush_pending: bool,
    /// P2.8: per subtask, its speculative attempt (beside `exec`, the original one).
    pub(crate) spec: Vec<Option<Execution>>,
    /// P2.8: per subtask, how long its FINISHED attempt ran (0 for one recovered as finished,
    /// which this JobMaster never deployed).
    pub(crate) ran: Vec<Option<Duration>>,
    /// P2.8: per TaskManager, until when it is blocked for speculative attempts (slow node).
    pub(crate) blocked_until: Vec<Instant>,
    /// P2.8: a `SpeculationCheck` is scheduled.
    pub(crate) check_pending: bool,
    /// P2.8: attempts it cancelled beside another one; a partition one of them still wrote
    /// belongs to nobody and is released.
    pub(crate) orphans: BTreeSet<(SubtaskId, u32)>,
}

pub(crate) struct Recovering {
    pub(crate) replayed: Replayed,
    pub(crate) awaited: BTreeSet<SubtaskId>,
}

/// One JobManager recovery, for the summary (P2.4 figures).
#[derive(Clone, Debug, Default)]
pub struct RecoveryRecord {
    pub crashed_at: Instant,
    pub elected_at: Instant,
    pub running_at: Option<Instant>,
    pub full_restart: bool,
    pub events_lost: u32,
    pub discarded: u32,
    pub recovered: Vec<SubtaskId>,
    /// Subtasks that had finished before the crash and run again, with why.
    pub rerun: Vec<(SubtaskId, RerunReason)>,
    /// Task time spent re-running them.
    pub redone: Duration,
    pub late_reports: u32,
    pub timed_out: bool,
    /// Tasks that were running when their TaskManagers lost the JobManager and failed
    /// (F2.5): their work so far is lost too.
    pub interrupted: u32,
}

impl With<'_, AdaptiveBatch> {
    pub(crate) fn receive(&mut self, ctx: &mut Ctx<'_, '_>, tm: u32, msg: Rpc) {
        let now = ctx.now();
        let process = ctx.tms[tm as usize].process;
        let index = ctx.cluster.trace.len().saturating_sub(1);
        if let Some(what) = msg.received() {
            ctx.cluster
                .oracles
                .received(&ctx.cluster.graph, (tm, process), what, (now, index));
        }
        if let Some(rpc) = TaskRpc::of(msg) {
            ctx.cluster
                .oracles
                .rpc_applied(&ctx.cluster.graph, (tm, process), rpc, (now, index));
        }
        let Rpc {
            subtask,
            attempt,
            call,
        } = msg;
        match call {
            Call::RegisterTaskManager => {
                // A new process under the same number: the old one is gone for good.
                let old = self.leader.task_managers[tm as usize];
                if let Some(old) = old.filter(|&old| old != process) {
                    self.lose_task_manager(ctx, tm, old);
                }
                ctx.cluster.expected_task_managers[tm as usize] = Some(process);
                let index = ctx.cluster.trace.len().saturating_sub(1);
                ctx.cluster.oracles.received(
                    &ctx.cluster.graph,
                    (tm, process),
                    Received::Register,
                    (now, index),
                );
                self.leader.register(tm, process);
                self.scheduler.accounted[tm as usize] = ctx.cluster.reconcile.is_none();
                self.scheduler.slots_used[tm as usize] = 0;
                // P3.2: a TaskManager that registers in the window reports next (same link):
                // the window waits for the whole report.
                self.expect_report(tm, process);
                // F2.4 step 1: every TaskManager that registers is asked for the partitions
                // it kept; outside recovery they are all answered by a release. Under
                // reconciliation it reports them unasked, with its executions (P3.2).
                if ctx.cluster.reconcile.is_none() {
                    self.send_to_task_manager(ctx, tm, Rpc::of_task_manager(Call::AskPartitions));
                }
                self.schedule(ctx);
            }
            Call::ReportPartition { bytes } => {
                if self.window.is_some() {
                    self.reconcile_partition(ctx, tm, (subtask, attempt), bytes);
                } else {
                    self.on_report(ctx, tm, (subtask, attempt), bytes);
                }
            }
            Call::ReportExecution { state, parallelism } => {
                self.on_report_execution(ctx, tm, (subtask, attempt), (state, parallelism))
            }
            Call::ReportSplit(split) => self.on_report_split(ctx, subtask, attempt, split),
            Call::ReportInput {
                producer,
                producer_attempt,
            } => self.on_report_input((subtask, attempt), (producer, producer_attempt)),
            Call::ReportDone => self.on_report_done(ctx, tm),
            Call::UpdateTaskExecutionState {
                state: ExecutionState::Running,
                ..
            } => {
                if self.current(subtask, attempt, ExecutionState::Deploying) {
                    self.exec_state(ctx, subtask, ExecutionState::Initializing);
                    self.exec_state(ctx, subtask, ExecutionState::Running);
                } else if self.is_spec(subtask, attempt, ExecutionState::Deploying) {
                    self.spec_state(ctx, subtask, ExecutionState::Initializing);
                    self.spec_state(ctx, subtask, ExecutionState::Running);
                }
            }
            Call::RequestSplit => {
                let e = self.scheduler.exec[subtask.index()];
                if e.attempt != attempt || e.state.is_terminal() {
                    return;
                }
                let vertex = ctx.cluster.graph.subtasks[subtask.index()].vertex;
                let index = ctx.cluster.graph.subtasks[subtask.index()].index;
                let split = self.scheduler.enumerators[vertex.index()]
                    .as_mut()
                    .expect("a source has an enumerator")
                    .next_split(index);
                ctx.record(TraceEvent::SplitAssigned {
                    subtask,
                    attempt,
                    split,
                });
                let assign = Rpc {
                    subtask,
                    attempt,
                    call: Call::AssignSplit(split),
                };
                self.send_to_task_manager(ctx, tm, assign);
            }
            Call::UpdateTaskExecutionState {
                state: ExecutionState::Finished,
                ..
            } => {
                // P2.8: a speculative attempt that finishes first becomes the current one.
                if self.is_spec(subtask, attempt, ExecutionState::Running) {
                    self.spec_won(ctx, subtask, attempt);
                }
                // P2.8: a cancelled attempt that finished before its cancel arrived wrote a
                // partition nobody reads: release it.
                if self.scheduler.orphans.remove(&(subtask, attempt)) {
                    let location = self.location_of(ctx, tm);
                    self.release(ctx, subtask, attempt, location);
                    return;
                }
                self.on_finished(ctx, tm, subtask, attempt);
            }
            // P2.4: a task that failed for want of a partition names its producer as the cause.
            Call::UpdateTaskExecutionState {
                state: ExecutionState::Failed,
                cause: missing,
            } => {
                let spec = self.scheduler.spec[subtask.index()].filter(|e| e.attempt == attempt);
                if spec.is_some_and(|e| !e.state.is_terminal()) {
                    // P2.8: a failed speculative attempt only makes room for another; the
                    // original goes on. A missing partition fails the vertex over as usual.
                    self.spec_state(ctx, subtask, ExecutionState::Failed);
                    self.free_spec_slot(subtask);
                    self.scheduler.spec[subtask.index()] = None;
                    if missing.is_none() {
                        return;
                    }
                } else {
                    let e = self.scheduler.exec[subtask.index()];
                    if e.attempt != attempt || e.state.is_terminal() {
                        return;
                    }
                    self.exec_state(ctx, subtask, ExecutionState::Failed);
                    self.free_slot(subtask);
                    if missing.is_none()
                        && self.spec_live(subtask)
                        && self.bug != Some(Bug::NoSpeculativeHandover)
                    {
                        // P2.8: the speculative attempt may still finish: it carries on alone.
                        self.promote_spec(ctx, subtask);
                        self.scheduler.spec[subtask.index()] = None;
                        return;
                    }
                }
                let mut seeds = vec![(subtask, RerunReason::Failover)];
                if let Some(producer) = missing {
                    // The partition is gone: stop tracking it; its producer runs again.
                    if self.scheduler.tracker[producer.index()].is_some() {
                        self.scheduler.tracker[producer.index()] = None;
                    }
                    seeds.push((producer, RerunReason::PartitionMissing));
                }
                self.failover(ctx, seeds);
            }
            // Only the calls above go to a batch JobMaster: other task states, messages to a
            // TaskManager, the checkpoint calls of streaming jobs.
            call => unreachable!("{call:?} is never sent to a batch JobMaster"),
        }
    }

    /// Sends `msg` to TaskManager `tm`: to the process registered with this JobMaster (P0:
    /// Flink's gateway of one TaskExecutor, by its resource id), so a replacement that has
    /// started but whose registration has not arrived yet never gets what was meant for the
    /// dead one.
    pub(crate) fn send_to_task_manager(&self, ctx: &mut Ctx<'_, '_>, tm: u32, msg: Rpc) {
        if let Rpc {
            subtask,
            attempt,
            call: Call::ReleasePartition,
        } = msg
        {
            ctx.record(TraceEvent::ReleaseRequested {
                task_manager: tm,
                subtask,
                attempt,
            });
        }
        let process =
            self.leader.task_managers[tm as usize].unwrap_or(ctx.tms[tm as usize].process);
        ctx.send_to_task_manager(tm, process, msg);
    }

    pub(crate) fn current(&self, subtask: SubtaskId, attempt: u32, state: ExecutionState) -> bool {
        let e = self.scheduler.exec[subtask.index()];
        e.attempt == attempt && e.state == state
    }

    pub(crate) fn exec_state(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        subtask: SubtaskId,
        to: ExecutionState,
    ) {
        let e = &mut self.scheduler.exec[subtask.index()];
        let from = e.state;
        e.state = to;
        let attempt = e.attempt;
        ctx.record(TraceEvent::ExecutionState {
            subtask,
            attempt,
            from,
            to,
        });
    }

    pub(crate) fn free_slot(&mut self, subtask: SubtaskId) {
        if let Some(tm) = self.scheduler.exec[subtask.index()].placed.take() {
            self.scheduler.slots_used[tm as usize] =
                self.scheduler.slots_used[tm as usize].saturating_sub(1);
        }
    }

    pub(crate) fn location_of(&self, ctx: &Ctx<'_, '_>, tm: u32) -> Location {
        match ctx.cluster.batch.shuffle {
            ShuffleKind::Remote => Location::Remote,
            ShuffleKind::Internal => Location::TaskManager {
                task_manager: tm,
                process: ctx.tms[tm as usize].process,
            },
        }
    }

    pub(crate) fn on_finished(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = ctx.now();
        let e = self.scheduler.exec[subtask.index()];
        if e.attempt != attempt || e.state != ExecutionState::Running {
            return;
        }
        self.exec_state(ctx, subtask, ExecutionState::Finished);
        self.free_slot(subtask);
        let ran = e
            .deployed_at
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        self.scheduler.ran[subtask.index()] = Some(ran);
        self.first_finish_wins(ctx, subtask);
        let vertex = ctx.cluster.graph.subtasks[subtask.index()].vertex;
        let location = self.location_of(ctx, tm);
        let bytes = self.partition_bytes(ctx, subtask, attempt);
        self.scheduler.tracker[subtask.index()] = Some((attempt, location, bytes));
        let vertex_done = self.vertex_finished(ctx, vertex);
        // F2.3: snapshots ride on the event when the vertex just finished or min-pause passed.
        let with_snapshot = vertex_done
            || self.scheduler.last_snapshot.is_none_or(|last| {
                now.saturating_duration_since(last)
                    >= ctx.cluster.batch.job_events.snapshot_min_pause
            });
        let snapshot = with_snapshot.then(|| {
            Box::new(Snapshot {
                enumerators: self
                    .scheduler
                    .enumerators
                    .iter()
                    .zip(&ctx.cluster.batch.coordinators)
                    .map(|(e, c)| {
                        e.clone()
                            .filter(|_| c.is_some_and(|c| c.supports_batch_snapshot))
                    })
                    .collect(),
            })
        });
        if with_snapshot {
            self.scheduler.last_snapshot = Some(now);
        }
        self.log(
            ctx,
            JobEvent::Finished {
                subtask,
                attempt,
                location,
                bytes,
                snapshot,
            },
        );
        // The bug reasons that a finished sink vertex ends the job, so nothing after it needs
        // the log.
        let sink = ctx.cluster.graph.vertices[vertex.index()]
            .outputs
            .is_empty();
        let skip = sink && self.bug == Some(Bug::SkipFinalFlush);
        if vertex_done && !skip {
            // P2.2: a finished vertex closes the file: flush. For the last one this is what
            // lets a crash before the job's result is durable (P2.7) recover the job finished.
            self.flush(ctx, FlushReason::VertexFinished);
        }
        self.schedule(ctx);
    }

    /// The bytes in the partition `attempt` of `subtask` wrote, which a consumer vertex of
    /// `"auto"` parallelism is sized by (P2.1); a sink writes no partition, so its are 0 (its
    /// staged output is no input of anything).
    pub(crate) fn partition_bytes(
        &self,
        ctx: &Ctx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
    ) -> u64 {
        let records = ctx
            .cluster
            .remote
            .iter()
            .chain(ctx.tms.iter().flat_map(|t| t.mode.partitions.iter()))
            .find(|p| p.producer == subtask && p.attempt == attempt)
            .map_or(0, |p| data::total_records(&p.fragments));
        records * ctx.cluster.batch.record_bytes
    }

    pub(crate) fn vertex_finished(&self, ctx: &Ctx<'_, '_>, vertex: VertexId) -> bool {
        let Some(p) = self.scheduler.parallelism[vertex.index()] else {
            return false;
        };
        let first = ctx.cluster.graph.vertices[vertex.index()].first;
        (first..first + p)
            .all(|s| self.scheduler.exec[s as usize].state == ExecutionState::Finished)
    }
}

impl JobMaster {
    /// A batch job's JobMaster as a newly elected leader starts: nothing known, nothing
    /// registered, its executions under the next attempt ids.
    pub(crate) fn adaptive_batch(
        cluster: &Cluster,
        tms: usize,
        incarnation: u32,
        now: Instant,
    ) -> JobMaster {
        JobMaster {
            leader: Leader::new(incarnation, vec![None; tms]),
            window: None,
            reconciled: None,
            bug: cluster.bug,
            scheduler: Scheduler::AdaptiveBatch(AdaptiveBatch::new(cluster, tms, now)),
        }
    }

    /// The JobMaster with its adaptive batch scheduler: what the world's batch half acts on.
    pub(crate) fn adaptive(&mut self) -> With<'_, AdaptiveBatch> {
        self.with()
    }

    /// The adaptive batch scheduler's state, for what the world's batch half reads of it.
    pub(crate) fn batch(&self) -> &AdaptiveBatch {
        self.scheduler()
    }
}

impl AdaptiveBatch {
    /// The state of a newly elected leader's scheduler: nothing known, its executions under
    /// the next attempt ids.
    pub(crate) fn new(cluster: &Cluster, tms: usize, now: Instant) -> AdaptiveBatch {
        let n = cluster.graph.subtasks.len();
        let v = cluster.graph.vertices.len();
        AdaptiveBatch {
            exec: (0..n)
                .map(|i| Execution {
                    state: ExecutionState::Created,
                    attempt: cluster.next_attempt[i],
                    placed: None,
                    hold_until: Instant::ZERO,
                    deployed_at: None,
                })
                .collect(),
            parallelism: vec![None; v],
            tracker: vec![None; n],
            enumerators: vec![None; v],
            remembered: vec![false; v],
            accounted: vec![cluster.reconcile.is_none(); tms],
            slots_used: vec![0; tms],
            last_snapshot: None,
            events_failed: false,
            started: now,
            recovering: None,
            reconciling: None,
            recovered_once: false,
            flush_pending: false,
            spec: vec![None; n],
            ran: vec![None; n],
            blocked_until: vec![Instant::ZERO; tms],
            check_pending: false,
            orphans: BTreeSet::new(),
        }
    }
}

impl With<'_, AdaptiveBatch> {
    /// The JobMaster noticed that TaskManager `tm` (process `process`) is gone or unreachable.
    pub(crate) fn lose_task_manager(&mut self, ctx: &mut Ctx<'_, '_>, tm: u32, process: u32) {
        if !self.leader.lose(tm, process) {
            return;
        }
        self.scheduler.slots_used[tm as usize] = 0;
        if ctx.cluster.expected_task_managers[tm as usize] == Some(process) {
            ctx.cluster.expected_task_managers[tm as usize] = None;
        }
        ctx.record(TraceEvent::TaskManagerTimedOut { task_manager: tm });
        let lost = Location::TaskManager {
            task_manager: tm,
            process,
        };
        // P2.3, P3.2: inside a reconcile window, what the lost process reported is gone: a
        // window that ends FAILING goes on to P2.4 with what live TaskManagers reported, and
        // one that would adopt a finish whose partition was on the lost process cannot (it ends
        // FAILING). Dropped before the loss can close the window (`give_up_on`), or
        // the recovery that follows keeps finishes whose partitions died here.
        if let Some(rec) = self.scheduler.reconciling.as_mut() {
            if self.bug != Some(Bug::KeepLostPartitionsInRecovery) {
                for reported in &mut rec.partitions {
                    reported.retain(|&(_, l, _)| l != lost);
                }
            }
        }
        self.give_up_on(ctx, tm);
        if self.scheduler.recovering.is_some() {
            // P2.3, P2.4 step 2: what survives is what live TaskManagers hold, so a recovering
            // JobMaster stops tracking the partitions the lost one reported (Flink's
            // `disconnectTaskManager` stops tracking them at once); the end of the wait then
            // runs their producers again instead of keeping them finished on a dead process.
            if self.bug != Some(Bug::KeepLostPartitionsInRecovery) {
                for tracked in &mut self.scheduler.tracker {
                    if tracked.is_some_and(|(_, l, _)| l == lost) {
                        *tracked = None;
                    }
                }
            }
            return;
        }
        if self.leader.status.is_terminal() {
            return;
        }
        let mut seeds = Vec::new();
        for s in (0..ctx.cluster.graph.subtasks.len() as u32).map(SubtaskId) {
            // P2.8: a speculative attempt on the lost TaskManager fails alone; an original
            // there whose speculative attempt runs elsewhere hands over to it.
            if self.scheduler.spec[s.index()]
                .is_some_and(|e| e.placed == Some(tm) && !e.state.is_terminal())
                && self.bug != Some(Bug::KeepSpeculativeOnLostTaskManager)
            {
                self.spec_state(ctx, s, ExecutionState::Failed);
                self.free_spec_slot(s);
                self.scheduler.spec[s.index()] = None;
            }
            let e = self.scheduler.exec[s.index()];
            if e.placed == Some(tm)
                && !e.state.is_terminal()
                && e.state != ExecutionState::Created
                && self.spec_live(s)
                && self.bug != Some(Bug::NoSpeculativeHandover)
            {
                self.exec_state(ctx, s, ExecutionState::Failed);
                self.free_slot(s);
                self.promote_spec(ctx, s);
                self.scheduler.spec[s.index()] = None;
                continue;
            }
            let e = self.scheduler.exec[s.index()];
            if e.placed == Some(tm)
                && matches!(
                    e.state,
                    ExecutionState::Deploying
                        | ExecutionState::Initializing
                        | ExecutionState::Running
                )
            {
                self.exec_state(ctx, s, ExecutionState::Failed);
                self.free_slot(s);
                seeds.push((s, RerunReason::Failover));
                continue;
            }
            if self.scheduler.tracker[s.index()].is_some_and(|(_, l, _)| l == lost) {
                let needed = self.partition_needed(ctx, s);
                self.scheduler.tracker[s.index()] = None;
                if needed {
                    seeds.push((s, RerunReason::PartitionMissing));
                }
            }
        }
        if !seeds.is_empty() {
            self.failover(ctx, seeds);
        }
    }

    /// Some consumer of `s` has yet to finish (or is not even initialized).
    pub(crate) fn partition_needed(&self, ctx: &Ctx<'_, '_>, s: SubtaskId) -> bool {
        let v = ctx.cluster.graph.subtasks[s.index()].vertex;
        let uninitialized = ctx.cluster.graph.vertices[v.index()]
            .outputs
            .iter()
            .any(|&e| self.scheduler.parallelism[ctx.cluster.graph.edges[e].to.index()].is_none());
        uninitialized
            || data::consumers(&ctx.cluster.graph, &self.scheduler.parallelism, s)
                .iter()
                .any(|c| self.scheduler.exec[c.index()].state != ExecutionState::Finished)
    }
}
