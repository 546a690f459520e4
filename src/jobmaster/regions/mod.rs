//! The pipelined-region scheduler of a streaming job: the JobMaster's state and handlers in
//! streaming mode. It schedules the job, tracks its *view* of every execution (which lags the
//! tasks by RPC latency), hosts the CheckpointCoordinator, decides the job's status, and runs
//! failover (`docs/rules.md` P1.8, `docs/rules.md` F1.6).
//!
//! Failover: a failed execution (reported, or on a TaskManager that stopped answering) makes
//! the JobMaster cancel the affected scope (its pipelined region, or the whole job), wait until
//! every execution there is terminal and the restart delay has passed, release the scope's
//! partitions, and redeploy it from the latest completed checkpoint in durable storage. Subtasks
//! recorded finished there are deployed *finished on restore*: they run no operator and
//! process no records. A JobMaster that crashes loses all of this; the one elected after it
//! starts from durable storage alone ([`With::recover`]).
//!
//! The state is [`PipelinedRegions`], one variant of the JobMaster's [`Scheduler`]; the
//! handlers are methods of [`With<PipelinedRegions>`], the JobMaster seen with this scheduler,
//! so they reach the shared part (the `Leader`) beside this mode's state. The world's
//! streaming half reaches them through [`JobMaster::regions`].

pub(crate) mod reconcile;
mod splits;
mod state_assignment;
#[cfg(test)]
mod tests;

use super::leader::Leader;
use super::{restorable, JobMaster, Scheduler, With};
use crate::bug::Bug;
use crate::checkpoint::stats::FailoverRecord;
use crate::checkpoint::CheckpointCoordinator;
use crate::graph::{ExecutionGraph, SubtaskId};
use crate::scenario::{Checkpointing, Cluster, FailoverScope, JobMasterConfig};
use crate::source_mutant::{on, SourceMutant};
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::placement;
use crate::trace::{AbortReason, Address, Call, Restore, Rpc, SavepointRefusal, TraceEvent};
use crate::world::{Ctx, Event};

/// The JobMaster's record of one subtask's current attempt: its *view*, which lags the task.
#[derive(Clone, Copy, Debug)]
pub struct Execution {
    pub attempt: u32,
    pub state: ExecutionState,
}

/// A failover between cancelling its scope and redeploying it.
struct PendingRestart {
    scope: Vec<SubtaskId>,
    in_scope: Vec<bool>,
    full: bool,
    delay_elapsed: bool,
    /// Its entry in the failover statistics.
    record: usize,
}

impl PendingRestart {
    /// A restart of all `n` subtasks of the job whose delay has passed (a JobMaster that takes
    /// the job over waits for none), its statistics in `record`.
    fn whole_job(n: usize, full: bool, record: usize) -> PendingRestart {
        PendingRestart {
            scope: (0..n as u32).map(SubtaskId).collect(),
            in_scope: vec![true; n],
            full,
            delay_elapsed: true,
            record,
        }
    }
}

/// The JobMaster's state in a streaming job, beside the shared part ([`JobMaster`]).
pub struct PipelinedRegions {
    executions: Vec<Execution>,
    /// Which TaskManager hosts each subtask: subtask `i` of every vertex shares slot `i`
    /// (Flink's default slot sharing), and slots fill TaskManager after TaskManager.
    placement: Vec<u32>,
    /// Executions whose view is FINISHED.
    finished: usize,
    checkpoints: Option<CheckpointCoordinator>,
    config: JobMasterConfig,
    restart: Option<PendingRestart>,
    /// Per subtask: the TaskManager process its current attempt was deployed to.
    deployed_on: Vec<Option<u32>>,
    /// P3: what the TaskManagers reported; `Some` exactly while the JobMaster's reconcile
    /// window (`JobMaster::window`) is open.
    reports: Option<reconcile::Reports>,
    /// F1.13: the split enumerators of sources that read splits; `None` without any.
    splits: Option<splits::SplitCoordinators>,
}

impl JobMaster {
    /// A streaming job's JobMaster, elected as `incarnation`, with `task_managers`
    /// registered.
    pub fn pipelined_regions(
        graph: &ExecutionGraph,
        cluster: Cluster,
        checkpointing: Option<Checkpointing>,
        config: JobMasterConfig,
        bug: Option<Bug>,
        incarnation: u32,
        task_managers: Vec<Option<u32>>,
    ) -> JobMaster {
        let placement = graph
            .subtasks
            .iter()
            .map(|s| placement::task_manager_of(s.index, cluster.slots_per_task_manager))
            .collect();
        let scheduler = PipelinedRegions {
            executions: vec![
                Execution {
                    attempt: 0,
                    state: ExecutionState::Created,
                };
                graph.subtasks.len()
            ],
            placement,
            finished: 0,
            checkpoints: checkpointing
                .map(|c| CheckpointCoordinator::new(c, bug, graph.subtasks.len(), incarnation)),
            config,
            restart: None,
            deployed_on: vec![None; graph.subtasks.len()],
            reports: None,
            splits: splits::SplitCoordinators::new(graph),
        };
        JobMaster {
            leader: Leader::new(incarnation, task_managers),
            window: None,
            reconciled: None,
            bug,
            scheduler: Scheduler::PipelinedRegions(scheduler),
        }
    }

    /// The JobMaster with its pipelined-region scheduler: what the world's streaming half
    /// acts on.
    pub fn regions(&mut self) -> With<'_, PipelinedRegions> {
        self.with()
    }
}

impl With<'_, PipelinedRegions> {
    /// Submission: initialize the job and deploy every subtask (streaming schedules all at
    /// once, Flink's `PipelinedRegionSchedulingStrategy` with all regions ready).
    pub fn start(&mut self, ctx: &mut Ctx<'_, '_>) {
        // F1.6: a job submitted with a checkpoint starts from it (cloned once per run).
        if let Some(restore) = ctx.io.storage.initial().cloned() {
            return self.start_from(ctx, &restore);
        }
        self.set_job_status(ctx, JobStatus::Created);
        self.set_job_status(ctx, JobStatus::Running);
        for i in 0..self.scheduler.executions.len() {
            self.deploy(ctx, SubtaskId(i as u32), Restore::FRESH);
        }
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.start(ctx);
        }
    }

    /// A newly elected JobMaster takes the job over from durable storage alone (P1.8): it
    /// restores every subtask from the latest completed checkpoint, deploying those recorded
    /// finished there as finished on restore. The TaskManagers have cancelled the previous
    /// attempts and every partition is released.
    pub fn recover(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_job_status(ctx, JobStatus::Created);
        self.set_job_status(ctx, JobStatus::Running);
        let record = ctx.io.stats.failovers.len();
        ctx.io.stats.failovers.push(FailoverRecord::new(
            ctx.now,
            "JobManager crash".to_owned(),
            true,
        ));
        // A TaskManager lost while no JobMaster was alive has not registered with this one:
        // deploy only once it has (Flink's scheduler waits for slots), through the same
        // readiness check as any restart. Not `full`: the job is RUNNING already.
        let n = self.scheduler.executions.len();
        self.scheduler.restart = Some(PendingRestart::whole_job(n, false, record));
        self.check_restart(ctx);
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.start(ctx);
        }
    }

    /// An RPC from TaskManager `task_manager` (never one it `refuses`).
    pub fn on_rpc(&mut self, ctx: &mut Ctx<'_, '_>, task_manager: u32, rpc: Rpc) {
        let (view, placement) = (
            &self.scheduler.executions[..],
            &self.scheduler.placement[..],
        );
        match (rpc.call, &mut self.scheduler.checkpoints) {
            (Call::ReportExecution { state, parallelism }, _) => self.on_report_execution(
                ctx,
                task_manager,
                (rpc.subtask, rpc.attempt),
                (state, parallelism),
            ),
            (Call::ReportDone, _) => self.on_report_done(ctx, task_manager),
            (Call::RequestSplit, _) => {
                let coordinators = self
                    .scheduler
                    .splits
                    .as_mut()
                    .expect("a split reader's job has them");
                let view = &self.scheduler.executions[..];
                if let Some(answer) = coordinators.on_request(ctx, view, rpc.subtask, rpc.attempt) {
                    self.call_current(ctx, rpc.subtask, answer);
                }
            }
            (Call::UpdateTaskExecutionState { state, .. }, _) => {
                self.on_task_state(ctx, rpc.subtask, rpc.attempt, state)
            }
            (Call::AcknowledgeCheckpoint { checkpoint, .. }, Some(cc)) => {
                cc.on_acknowledge(ctx, view, placement, rpc, checkpoint)
            }
            (Call::DeclineCheckpoint { checkpoint, reason }, Some(cc)) => {
                cc.on_decline(ctx, view, placement, rpc, checkpoint, reason)
            }
            (Call::TriggerFailed(checkpoint), Some(cc)) => {
                cc.abort_pending(ctx, view, placement, checkpoint, AbortReason::TriggerFailed)
            }
            (Call::TriggerMissed(checkpoint), Some(cc)) => {
                cc.on_trigger_missed(ctx, view, placement, rpc.subtask, checkpoint)
            }
            // P1.2 option2: a "finishing" report from an attempt a failover is cancelling or
            // has replaced must not mark the subtask finished: its next attempt would never
            // be triggered again.
            (Call::Finishing, Some(cc)) => {
                let e = view[rpc.subtask.index()];
                if e.attempt == rpc.attempt
                    && !e.state.is_terminal()
                    && e.state != ExecutionState::Canceling
                {
                    cc.on_finishing(ctx, view, placement, rpc.subtask)
                }
            }
            (call, _) => unreachable!("{call:?} is never sent to the JobMaster here"),
        }
        // Whatever aborted a checkpoint (a decline, a failed trigger, a completion that
        // subsumed older ones) may have used up the tolerable failures.
        self.check_checkpoint_failures(ctx);
        // F1.13 step 5: an acknowledgement may have completed a checkpoint.
        if let Some(coordinators) = &mut self.scheduler.splits {
            coordinators.on_checkpoint_complete(ctx.io.storage.latest().map_or(0, |c| c.id));
        }
    }

    pub fn on_checkpoint_tick(&mut self, ctx: &mut Ctx<'_, '_>) {
        let triggered = match (&mut self.scheduler.checkpoints, self.leader.status) {
            (Some(cc), JobStatus::Running) => {
                cc.on_tick(ctx, &self.scheduler.executions, &self.scheduler.placement)
            }
            // P1.8: a tick while the whole job restarts triggers nothing, but the periodic
            // trigger must survive it (Flink restarts its checkpoint scheduler once the job is
            // RUNNING again), or no final checkpoint ever comes after the restart (P1.7).
            (Some(cc), status) if !status.is_terminal() => {
                cc.schedule_tick(ctx);
                None
            }
            _ => None,
        };
        self.checkpoint_coordinators(ctx, triggered);
    }

    pub fn on_checkpoint_trigger_at(&mut self, ctx: &mut Ctx<'_, '_>) {
        if let (Some(cc), JobStatus::Running) =
            (&mut self.scheduler.checkpoints, self.leader.status)
        {
            let triggered =
                cc.on_trigger_at(ctx, &self.scheduler.executions, &self.scheduler.placement);
            self.checkpoint_coordinators(ctx, triggered);
        }
    }

    /// F1.13 step 2: the split enumerators go into the checkpoint just triggered, in the same
    /// step as its trigger RPCs.
    fn checkpoint_coordinators(&mut self, ctx: &mut Ctx<'_, '_>, triggered: Option<u64>) {
        if let (Some(coordinators), Some(checkpoint)) = (&mut self.scheduler.splits, triggered) {
            coordinators.checkpoint(ctx, checkpoint);
        }
    }

    pub fn on_checkpoint_expired(&mut self, ctx: &mut Ctx<'_, '_>, checkpoint: u64) {
        if let Some(cc) = &mut self.scheduler.checkpoints {
            let (view, placement) = (
                &self.scheduler.executions[..],
                &self.scheduler.placement[..],
            );
            cc.abort_pending(ctx, view, placement, checkpoint, AbortReason::Expired);
        }
        self.check_checkpoint_failures(ctx);
    }

    /// F1.9: too many checkpoint failures in a row fail the job over as a whole, through the
    /// restart strategy (Flink's `failGlobal`). A task's failure (a decline) does so only
    /// while the declining attempt still runs (`failGlobalIfExecutionIsStillRunning`).
    fn check_checkpoint_failures(&mut self, ctx: &mut Ctx<'_, '_>) {
        let Some(e) = self
            .scheduler
            .checkpoints
            .as_mut()
            .and_then(|cc| cc.take_exceeded())
        else {
            return;
        };
        ctx.record(TraceEvent::CheckpointFailuresExceeded {
            checkpoint: e.checkpoint,
            failures: e.failures,
        });
        if let Some((subtask, attempt)) = e.declined_by {
            let execution = self.scheduler.executions[subtask.index()];
            let running = matches!(
                execution.state,
                ExecutionState::Running | ExecutionState::Initializing
            );
            if execution.attempt != attempt || !running {
                return;
            }
        }
        let cause = format!(
            "{} checkpoint failures in a row, the last checkpoint {}: more than tolerable_failures",
            e.failures, e.checkpoint
        );
        self.fail_over(ctx, None, cause);
    }

    /// A TaskManager reported a task's new state (`updateTaskExecutionState`).
    fn on_task_state(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        subtask: SubtaskId,
        attempt: u32,
        state: ExecutionState,
    ) {
        let execution = self.scheduler.executions[subtask.index()];
        // source mutant state-report-ignores-attempt
        let replaced = execution.attempt != attempt && !on(SourceMutant::StateReportIgnoresAttempt);
        if replaced || execution.state.is_terminal() {
            return; // about an attempt that has been replaced, or already settled
        }
        // P3.3: a retried update older than what a reconciliation report already told.
        if !state.is_terminal()
            && execution.state <= ExecutionState::Running
            && state <= execution.state
        {
            return;
        }
        let state = match (execution.state, state) {
            // Cancelling wins over what the task did meanwhile (Flink's Execution does the
            // same): a task that finished or failed while being cancelled counts as cancelled.
            (ExecutionState::Canceling, ExecutionState::Finished | ExecutionState::Failed) => {
                ExecutionState::Canceled
            }
            // Progress reports sent before the cancel arrived.
            (ExecutionState::Canceling, s) if !s.is_terminal() => return,
            (_, s) => s,
        };
        self.set_execution(ctx, subtask, state);
        match state {
            ExecutionState::Finished => {
                self.scheduler.finished += 1;
                if self.scheduler.finished == self.scheduler.executions.len()
                    && self.leader.status == JobStatus::Running
                {
                    self.set_job_status(ctx, JobStatus::Finished);
                    if let Some(cc) = &mut self.scheduler.checkpoints {
                        cc.on_job_ended(ctx);
                    }
                }
            }
            ExecutionState::Failed => {
                let cause = format!("{} failed", ctx.graph.subtask_name(subtask));
                self.on_execution_failed(ctx, subtask, cause);
            }
            ExecutionState::Canceled => self.check_restart(ctx),
            _ => {}
        }
    }

    /// The heartbeat of TaskManager process `dead` timed out: every execution it hosted has
    /// failed. (A replacement may have registered already.)
    pub fn on_task_manager_lost(&mut self, ctx: &mut Ctx<'_, '_>, task_manager: u32, dead: u32) {
        self.leader.lose(task_manager, dead);
        ctx.record(TraceEvent::TaskManagerTimedOut { task_manager });
        if self.give_up_on(ctx, task_manager) {
            return; // P3.4: it missed the window; the end of the window acts on it
        }
        let lost: Vec<SubtaskId> = (0..self.scheduler.executions.len())
            .filter(|&i| {
                // Only executions deployed to the dead process: a replacement may already
                // run newer attempts, which did not fail.
                let hosted = self.scheduler.placement[i] == task_manager
                    && self.scheduler.deployed_on[i] == Some(dead);
                (hosted || self.bug == Some(Bug::FailUnrelatedOnTmLoss))
                    && !self.scheduler.executions[i].state.is_terminal()
            })
            .map(|i| SubtaskId(i as u32))
            .collect();
        for &s in &lost {
            self.set_execution(ctx, s, ExecutionState::Failed);
        }
        // Every lost execution failed, not only the first: its region (or the whole job, once
        // a restart is pending) must restart too (P1.8). But handling one failure may complete
        // a pending restart that already redeployed another: that one's failure is about a
        // replaced attempt and starts nothing.
        let attempts: Vec<u32> = lost
            .iter()
            .map(|s| self.scheduler.executions[s.index()].attempt)
            .collect();
        for (&s, attempt) in lost.iter().zip(attempts) {
            if self.scheduler.executions[s.index()].attempt == attempt {
                let cause = format!("TaskManager{task_manager} lost");
                self.on_execution_failed(ctx, s, cause);
            }
        }
        self.check_restart(ctx);
    }

    /// A TaskManager process registered: it can host tasks again.
    pub fn on_task_manager_registered(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        task_manager: u32,
        incarnation: u32,
    ) {
        self.leader.register(task_manager, incarnation);
        self.check_restart(ctx);
    }

    /// The restart delay of the pending failover passed.
    pub fn on_restart_delay(&mut self, ctx: &mut Ctx<'_, '_>) {
        if let Some(restart) = &mut self.scheduler.restart {
            restart.delay_elapsed = true;
        }
        self.check_restart(ctx);
    }

    /// P1.8: the fixed-delay restart strategy allows `max_attempts` restarts (the injected
    /// `restart-gives-up-early` one fewer).
    fn restarts_allowed(&self) -> u32 {
        let max = self.scheduler.config.restart_strategy.max_attempts;
        match self.bug {
            Some(Bug::RestartGivesUpEarly) => max.saturating_sub(1),
            _ => max,
        }
    }

    /// P1.8: an execution failed. Cancel its scope (pipelined region, or the whole job) and
    /// restart it once everything there stopped, unless the restart strategy is exhausted.
    fn on_execution_failed(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, cause: String) {
        self.fail_over(ctx, Some(subtask), cause);
    }

    /// P1.8: a failover for the failure of `failed`, or, with `None`, a global failure (F1.9)
    /// that restarts the whole job.
    fn fail_over(&mut self, ctx: &mut Ctx<'_, '_>, failed: Option<SubtaskId>, cause: String) {
        if self.leader.status.is_terminal() || self.leader.status == JobStatus::Failing {
            return;
        }
        if let Some(restart) = &self.scheduler.restart {
            let covered = match failed {
                Some(subtask) => restart.in_scope[subtask.index()],
                None => restart.full,
            };
            if covered {
                return self.check_restart(ctx); // one more casualty of the same failover
            }
        }
        if let Err(exhausted) = self.leader.count_restart(self.restarts_allowed()) {
            return self.give_up(ctx, exhausted);
        }
        // A failure during a pending restart widens it to the whole job.
        let widened = self.scheduler.restart.take();
        if let Some(previous) = &widened {
            ctx.io.stats.failovers[previous.record]
                .cause
                .push_str("; widened into the next failover before it restored");
        }
        let widen = widened.is_some();
        let full = widen
            || self.scheduler.config.failover_scope == FailoverScope::Full
            || failed.is_none();
        let scope: Vec<SubtaskId> = match failed {
            Some(subtask) if !full => ctx.graph.region_of(subtask),
            _ => (0..self.scheduler.executions.len() as u32)
                .map(SubtaskId)
                .collect(),
        };
        ctx.record(TraceEvent::Failover {
            cause: failed,
            restarting: scope.len() as u32,
            full,
        });
        let record = ctx.io.stats.failovers.len();
        ctx.io
            .stats
            .failovers
            .push(FailoverRecord::new(ctx.now, cause, full));
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.on_failover(
                ctx,
                &self.scheduler.executions,
                &self.scheduler.placement,
                &scope,
            );
        }
        if full && self.leader.status == JobStatus::Running {
            self.set_job_status(ctx, JobStatus::Restarting);
        }
        let mut in_scope = vec![false; self.scheduler.executions.len()];
        for &s in &scope {
            in_scope[s.index()] = true;
            self.cancel(ctx, s);
        }
        self.scheduler.restart = Some(PendingRestart {
            scope,
            in_scope,
            full,
            delay_elapsed: false,
            record,
        });
        let incarnation = self.leader.incarnation;
        ctx.sched.after(
            self.scheduler.config.restart_strategy.delay,
            Event::RestartDelay { incarnation },
        );
        self.check_restart(ctx);
    }

    /// Cancels an execution (P1.8): a deployed one through CANCELING and `cancelTask`, one
    /// never deployed at once.
    fn cancel(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId) {
        match self.scheduler.executions[subtask.index()].state {
            ExecutionState::Canceling => return,
            s if s.is_terminal() => return,
            ExecutionState::Created | ExecutionState::Scheduled => {
                // P1.8: no TaskManager hosts it, so there is no task to cancel and nothing to
                // wait for (Flink's `Execution.cancel`).
                return self.set_execution(ctx, subtask, ExecutionState::Canceled);
            }
            _ => {}
        }
        self.set_execution(ctx, subtask, ExecutionState::Canceling);
        self.call_current(ctx, subtask, Call::CancelTask);
    }

    /// The restart strategy is exhausted (P1.8): the job fails.
    fn give_up(&mut self, ctx: &mut Ctx<'_, '_>, exhausted: TraceEvent) {
        ctx.record(exhausted);
        self.fail_job(ctx);
    }

    /// FAILING, every execution cancelled, FAILED.
    fn fail_job(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_job_status(ctx, JobStatus::Failing);
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.on_job_ended(ctx);
        }
        for i in 0..self.scheduler.executions.len() {
            self.cancel(ctx, SubtaskId(i as u32));
        }
        self.scheduler.restart = None;
        self.set_job_status(ctx, JobStatus::Failed);
    }

    /// Restarts once every execution of the scope is terminal, the delay passed, and the
    /// TaskManagers to deploy to are back.
    fn check_restart(&mut self, ctx: &mut Ctx<'_, '_>) {
        let Some(restart) = &self.scheduler.restart else {
            return;
        };
        let ready = restart.delay_elapsed
            && restart.scope.iter().all(|s| {
                let state = self.scheduler.executions[s.index()].state;
                // CREATED: never deployed by this JobMaster (it was just elected).
                (state.is_terminal() || state == ExecutionState::Created)
                    && self.leader.task_managers[self.scheduler.placement[s.index()] as usize]
                        .is_some()
            });
        if !ready {
            return;
        }
        let restart = self.scheduler.restart.take().expect("checked above");
        for &s in &restart.scope {
            if self.scheduler.executions[s.index()].state == ExecutionState::Finished {
                self.scheduler.finished -= 1;
            }
        }
        if self.restore(ctx, &restart.scope, restart.record) && restart.full {
            self.set_job_status(ctx, JobStatus::Running);
        }
    }

    /// Redeploys `scope` from the latest completed checkpoint (P1.8, F1.6). False when the
    /// checkpoint cannot be restored and the job failed instead.
    fn restore(&mut self, ctx: &mut Ctx<'_, '_>, scope: &[SubtaskId], record: usize) -> bool {
        let latest = ctx.io.storage.latest();
        let checkpoint = if self.bug == Some(Bug::RestoreFromPending) {
            ctx.io
                .storage
                .newest_written()
                .max(latest.map(|c| c.id))
                .unwrap_or(0)
        } else {
            latest.map_or(0, |c| c.id)
        };
        let mut finished = vec![false; self.scheduler.executions.len()];
        if let Some(c) = latest.filter(|c| c.id == checkpoint) {
            for s in &c.finished {
                finished[s.index()] = true;
            }
        }
        // F1.6: refuse a checkpoint whose finished subtasks no protocol could produce.
        if let Err(reason) = restorable::check(ctx.graph, &finished) {
            ctx.record(TraceEvent::RestoreRejected { checkpoint });
            ctx.io.stats.failovers[record]
                .cause
                .push_str(&format!("; restore refused: {reason}"));
            self.fail_job(ctx);
            return false;
        }
        // F1.13 steps 3 and 4: the split enumerators follow the restored readers. When the
        // scope is the whole job (a global failover, a new JobMaster, or a region that spans
        // the job) they are reset to the checkpoint; otherwise each restarted reader's splits
        // assigned after it go back. For a scope that spans the job both give the same pool.
        if let Some(coordinators) = &mut self.scheduler.splits {
            if scope.len() == self.scheduler.executions.len() {
                coordinators.reset_to_checkpoint(ctx, checkpoint);
            } else {
                coordinators.subtask_reset(ctx, scope, checkpoint);
            }
        }
        // The JobMaster's partition tracker releases the scope's partitions: nothing an old
        // attempt sent survives.
        let mut in_scope = vec![false; self.scheduler.executions.len()];
        for s in scope {
            in_scope[s.index()] = true;
        }
        for (c, info) in ctx.graph.channels.iter().enumerate() {
            if in_scope[info.from.index()] || in_scope[info.to.index()] {
                ctx.io
                    .data
                    .reset(crate::graph::ChannelId(c as u32), ctx.now);
            }
        }
        let mut kept_finished = Vec::new();
        let mut replayed = 0;
        for &s in scope {
            let keep = finished[s.index()];
            let restore = if keep && self.bug == Some(Bug::RestartFinishedTasks) {
                Restore::FRESH // the bug: run it again as if it never had
            } else {
                Restore {
                    checkpoint,
                    finished: keep,
                }
            };
            if keep {
                kept_finished.push(s);
            }
            // Statistics only: how far back a restarted source rewinds.
            let snapshot = ctx.io.storage.snapshot(restore.checkpoint, s);
            let offset = match snapshot.and_then(|x| x.source_offset()) {
                Some(offset) => Some(offset),
                None if restore.finished => None,
                None => Some(0),
            };
            if let Some(offset) = offset {
                replayed += ctx.io.oracles.emitted(s).saturating_sub(offset);
            }
            self.deploy(ctx, s, restore);
        }
        let region = ctx.graph.regions[scope[0].index()];
        let whole_region = scope.len() == ctx.graph.region_of(scope[0]).len()
            && scope.iter().all(|s| ctx.graph.regions[s.index()] == region);
        let all = scope.len() == self.scheduler.executions.len();
        ctx.record(TraceEvent::Restore {
            checkpoint,
            restarted: scope.len() as u32,
            finished: kept_finished.len() as u32,
            region: (!all && whole_region).then_some(region),
        });
        let stats = &mut ctx.io.stats.failovers[record];
        stats.restored_at = Some(ctx.now);
        stats.restored_checkpoint = (checkpoint > 0).then_some(checkpoint);
        stats.restarted = scope.to_vec();
        stats.kept_finished = kept_finished;
        stats.records_replayed = replayed;
        true
    }

    /// Deploys a new attempt of `subtask`.
    fn deploy(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, restore: Restore) {
        let attempt = ctx
            .io
            .storage
            .next_attempt(subtask, self.scheduler.executions.len());
        self.scheduler.executions[subtask.index()] = Execution {
            attempt,
            state: ExecutionState::Created,
        };
        self.scheduler.deployed_on[subtask.index()] =
            self.leader.task_managers[self.scheduler.placement[subtask.index()] as usize];
        self.set_execution(ctx, subtask, ExecutionState::Scheduled);
        self.set_execution(ctx, subtask, ExecutionState::Deploying);
        self.call_current(ctx, subtask, Call::SubmitTask(restore));
    }

    /// `trigger_task`: the trigger RPC of `checkpoint` (default: the newest pending one) goes
    /// straight to `subtask`'s current attempt. Returns the checkpoint, if there was one.
    pub fn trigger_task(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        subtask: SubtaskId,
        checkpoint: Option<u64>,
    ) -> Option<u64> {
        let cc = self.scheduler.checkpoints.as_ref();
        let checkpoint = checkpoint.or_else(|| cc?.newest_pending())?;
        // F1.11: the trigger of a pending savepoint is a savepoint's.
        let call = cc.map_or(Call::TriggerCheckpoint(checkpoint), |cc| {
            cc.trigger_call(checkpoint)
        });
        self.call_current(ctx, subtask, call);
        Some(checkpoint)
    }

    /// `stop_with_savepoint` (F1.11 step 1): only a RUNNING job with checkpointing is stopped;
    /// otherwise, or with a stop already under way, the request is refused and the job runs
    /// on.
    pub fn stop_with_savepoint(&mut self, ctx: &mut Ctx<'_, '_>, drain: bool) {
        let refusal = match (&mut self.scheduler.checkpoints, self.leader.status) {
            (Some(cc), JobStatus::Running) => cc
                .trigger_savepoint(
                    ctx,
                    &self.scheduler.executions,
                    &self.scheduler.placement,
                    drain,
                )
                .err(),
            _ => Some(SavepointRefusal::JobNotRunning),
        };
        if let Some(reason) = refusal {
            ctx.record(TraceEvent::SavepointRefused { reason });
        }
    }

    /// `call` to `subtask`'s current attempt, on its host.
    fn call_current(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, call: Call) {
        let attempt = self.scheduler.executions[subtask.index()].attempt;
        self.send_to_host(
            ctx,
            subtask,
            Rpc {
                subtask,
                attempt,
                call,
            },
        );
    }

    /// Sends to the TaskManager process this JobMaster deployed `subtask` to (or would): the
    /// one registered with it. If that process died meanwhile the RPC is lost, as with
    /// Flink's gateway to a TaskManager that is gone; the heartbeat timeout then fails the
    /// execution.
    fn send_to_host(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, rpc: Rpc) {
        let task_manager = self.scheduler.placement[subtask.index()];
        let Some(process) = self.scheduler.deployed_on[subtask.index()] else {
            return; // no registered process to send to: the restart waits for one
        };
        ctx.send_to(
            Address::JobMaster,
            Address::TaskManager(task_manager),
            process,
            rpc,
        );
    }

    fn set_execution(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, to: ExecutionState) {
        let execution = &mut self.scheduler.executions[subtask.index()];
        let from = std::mem::replace(&mut execution.state, to);
        ctx.record(TraceEvent::ExecutionState {
            subtask,
            attempt: execution.attempt,
            from,
            to,
        });
    }
}
