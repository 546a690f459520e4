//! The CheckpointCoordinator (`docs/rules.md` P1.1, P1.2; F1.1, F1.2).
//!
//! It lives in the JobMaster and sees tasks only through the JobMaster's view of execution
//! states and through RPCs: trigger plans are computed from that lagging view, so a trigger can
//! reach a task that has already finished. What happens then is the finish protocol's business
//! (`checkpointing.finish_protocol`):
//! - `option1`: the miss is recorded as a finished marker and the task's descendants are
//!   triggered through the JobMaster (which may miss again, one level down: the cascade);
//! - `option2`: cannot happen, since a task reports "finishing" before EndOfPartition and the
//!   coordinator counts it finished at once (its set of such tasks is volatile);
//! - `flink` and `legacy`: the whole checkpoint is aborted; the next one plans again.

pub mod plan;
mod savepoint;
pub mod stats;
pub mod storage;

use crate::bug::Bug;
use crate::graph::SubtaskId;
use crate::jobmaster::regions::Execution;
use crate::scenario::{Checkpointing, FinishProtocol};
use crate::source_mutant::{on, SourceMutant};
use crate::trace::{
    AbortReason, Address, Call, CheckpointSet, DeclineReason, Rpc, TraceEvent, TriggerFailure,
};
use crate::world::{Ctx, Event};
use plan::Plan;
use sim::Instant;
use stats::{CheckpointRecord, Outcome};
use storage::CompletedCheckpoint;

/// A triggered checkpoint waiting for acknowledgements.
struct Pending {
    id: u64,
    plan: Plan,
    /// Indexed by subtask: still owes an acknowledgement.
    waiting: Vec<bool>,
    remaining: usize,
    /// Indexed by subtask: received a trigger RPC for this checkpoint (so `option1` re-triggers
    /// each descendant once).
    triggered: Vec<bool>,
    /// Subtasks recorded finished: the plan's, plus those whose trigger missed.
    finished: Vec<SubtaskId>,
}

pub struct CheckpointCoordinator {
    config: Checkpointing,
    protocol: FinishProtocol,
    bug: Option<Bug>,
    /// The JobMaster incarnation this coordinator belongs to: its timers die with it.
    incarnation: u32,
    pending: Vec<Pending>,
    last_completed_at: Option<Instant>,
    /// `option2`: subtasks that reported "finishing". Volatile: rebuilt, never restored.
    reported_finishing: Vec<bool>,
    /// F1.9 (Flink's `CheckpointFailureManager`): counted checkpoint failures since the last
    /// completed checkpoint, which is `last_succeeded`. Both belong to this coordinator's
    /// life: a new JobMaster starts counting from zero.
    failures: u32,
    last_succeeded: u64,
    /// Set when a failure made `failures` exceed `tolerable_failures`: the JobMaster takes it
    /// and fails the job over.
    exceeded: Option<Exceeded>,
    /// F1.11: a stop-with-savepoint under way, which stops the scheduler.
    stop: Option<savepoint::Stop>,
}

/// F1.9: the counted checkpoint failures in a row exceeded `tolerable_failures`.
#[derive(Clone, Copy, Debug)]
pub struct Exceeded {
    pub checkpoint: u64,
    pub failures: u32,
    /// The attempt whose decline was the last failure; `None` for an expired checkpoint.
    /// Flink fails the job for a task's failure only while that attempt still runs
    /// (`failJobDueToTaskFailure`), and for a job-level one always (`failJob`).
    pub declined_by: Option<(SubtaskId, u32)>,
}

impl CheckpointCoordinator {
    pub fn new(
        config: Checkpointing,
        bug: Option<Bug>,
        subtasks: usize,
        incarnation: u32,
    ) -> CheckpointCoordinator {
        CheckpointCoordinator {
            protocol: config.finish_protocol,
            config,
            bug,
            incarnation,
            pending: Vec::new(),
            last_completed_at: None,
            reported_finishing: vec![false; subtasks],
            failures: 0,
            last_succeeded: 0,
            exceeded: None,
            stop: None,
        }
    }

    /// The job is running again after a reconciliation that kept its tasks (P3.4): tell them
    /// the outcome of every checkpoint their predecessor coordinator started, since the
    /// notifications it sent may have died with it (the TaskManagers drop RPCs from a JobManager
    /// that is no longer the leader).
    /// - Every checkpoint it left pending is aborted: they will never complete, and under
    ///   `option1` a task at its end of input waits for their outcome (P1.6; fuzz seed 92608).
    /// - The latest completed checkpoint is notified complete again: it may have completed
    ///   just before the crash, its `notifyCheckpointComplete` lost on the way. A task at end
    ///   of input that took part in it waits for that outcome (P1.6), a two-phase-commit
    ///   sink for it to commit (P1.7), and under `flink` every task for its final checkpoint
    ///   (F1.5 step 3); with no later checkpoint to settle it (explicit `trigger_at` times
    ///   only), the task would wait forever (fuzz seed 458548). A task
    ///   that did get the first notification ignores the second: a completion settles every
    ///   older checkpoint and commits are idempotent.
    pub fn settle_inherited(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
    ) {
        let completed = ctx.io.storage.latest().map_or(0, |c| c.id);
        if completed > 0 {
            for (i, e) in view.iter().enumerate() {
                if !e.state.is_terminal() {
                    let call = Call::NotifyCheckpointComplete(completed);
                    send(ctx, view, placement, SubtaskId(i as u32), call);
                }
            }
        }
        for id in completed + 1..=ctx.io.storage.last_checkpoint_id() {
            for (i, e) in view.iter().enumerate() {
                if !e.state.is_terminal() {
                    let call = Call::NotifyCheckpointAborted(id);
                    send(ctx, view, placement, SubtaskId(i as u32), call);
                }
            }
        }
    }

    /// The job is running: start the periodic trigger and the explicit `trigger_at` times.
    pub fn start(&mut self, ctx: &mut Ctx<'_, '_>) {
        let incarnation = self.incarnation;
        if let Some(interval) = self.config.interval {
            ctx.sched
                .after(interval, Event::CheckpointTick { incarnation });
        }
        for &at in &self.config.trigger_at {
            let at = Instant::ZERO + at;
            if at >= ctx.now {
                ctx.sched.at(at, Event::CheckpointTriggerAt { incarnation });
            }
        }
    }

    /// The periodic trigger fired: try a checkpoint and schedule the next tick. Returns the
    /// checkpoint it triggered, if any.
    pub fn on_tick(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
    ) -> Option<u64> {
        let triggered = self.try_trigger(ctx, view, placement);
        self.schedule_tick(ctx);
        triggered
    }

    /// Schedules the next periodic tick (also when this one could not trigger anything).
    pub fn schedule_tick(&mut self, ctx: &mut Ctx<'_, '_>) {
        if let Some(interval) = self.config.interval {
            let incarnation = self.incarnation;
            ctx.sched
                .after(interval, Event::CheckpointTick { incarnation });
        }
    }

    /// An explicit `trigger_at` time came. Returns the checkpoint it triggered, if any.
    pub fn on_trigger_at(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
    ) -> Option<u64> {
        self.try_trigger(ctx, view, placement)
    }

    fn try_trigger(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
    ) -> Option<u64> {
        if self.scheduler_stopped() {
            return None; // F1.11 step 1: no periodic or `trigger_at` checkpoint during a stop
        }
        let failure = if self.pending.len() >= self.config.max_concurrent as usize {
            Some(TriggerFailure::TooManyConcurrent)
        } else if ctx.config.bug != Some(Bug::IgnoreMinPause)
            && self
                .last_completed_at
                .is_some_and(|t| ctx.now.saturating_duration_since(t) < self.config.min_pause)
        {
            Some(TriggerFailure::MinPause)
        } else {
            None
        };
        let plan = match failure {
            Some(f) => Err(f),
            None => self.plan(ctx, view),
        };
        match plan {
            Ok(plan) => Some(self.start_checkpoint(ctx, view, placement, plan, None)),
            Err(reason) => {
                ctx.record(TraceEvent::CheckpointNotTriggered { reason });
                None
            }
        }
    }

    /// The trigger plan from the coordinator's view (P1.1, F1.1), for a checkpoint or a
    /// savepoint alike.
    fn plan(&self, ctx: &Ctx<'_, '_>, view: &[Execution]) -> Result<Plan, TriggerFailure> {
        plan::compute(
            ctx.graph,
            |s| view[s.index()].state,
            &self.reported_finishing,
            self.protocol,
            self.bug,
        )
    }

    /// Starts checkpoint number next with `plan`: its trigger RPC to the subtasks the plan
    /// triggers (`triggerSavepoint` with `savepoint`'s drain, F1.11), and its timeout.
    fn start_checkpoint(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        plan: Plan,
        savepoint: Option<bool>,
    ) -> u64 {
        let id = ctx.io.storage.next_checkpoint_id();
        let n = ctx.graph.subtasks.len();
        let mut waiting = vec![false; n];
        for s in &plan.to_wait_for {
            waiting[s.index()] = true;
        }
        let mut triggered = vec![false; n];
        for s in &plan.to_trigger {
            triggered[s.index()] = true;
        }
        if let Some(drain) = savepoint {
            ctx.record(TraceEvent::SavepointTriggered {
                checkpoint: id,
                drain,
            });
        }
        ctx.record(TraceEvent::CheckpointTriggered { checkpoint: id });
        ctx.io.stats.checkpoints.push(CheckpointRecord {
            id,
            triggered_at: ctx.now,
            plan: plan.clone(),
            outcome: Outcome::Pending,
            alignments: Vec::new(),
            retriggers: 0,
            missed: Vec::new(),
            input_state_records: 0,
            output_state_records: 0,
            input_state_buffers: 0,
            output_state_buffers: 0,
            record_bytes: ctx
                .io
                .data
                .buffer_settings()
                .map_or(crate::checkpoint::stats::RECORD_BYTES, |b| {
                    u64::from(b.record_bytes)
                }),
        });
        let call = match savepoint {
            None => Call::TriggerCheckpoint(id),
            Some(drain) => Call::TriggerSavepoint {
                checkpoint: id,
                drain,
            },
        };
        for &s in &plan.to_trigger {
            send(ctx, view, placement, s, call);
        }
        ctx.sched.after(
            self.config.timeout,
            Event::CheckpointExpired {
                checkpoint: id,
                incarnation: self.incarnation,
            },
        );
        self.pending.push(Pending {
            id,
            remaining: plan.to_wait_for.len(),
            finished: plan.finished.clone(),
            plan,
            waiting,
            triggered,
        });
        id
    }

    fn find(&self, id: u64) -> Option<usize> {
        self.pending.iter().position(|p| p.id == id)
    }

    /// `acknowledgeCheckpoint`: the subtask's snapshot is in durable storage.
    pub fn on_acknowledge(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        rpc: Rpc,
        checkpoint: u64,
    ) {
        let Some(i) = self.find(checkpoint) else {
            return; // late: already completed or aborted
        };
        if view[rpc.subtask.index()].attempt != rpc.attempt {
            return;
        }
        let p = &mut self.pending[i];
        if std::mem::take(&mut p.waiting[rpc.subtask.index()]) {
            p.remaining -= 1;
        }
        // source mutant ack-count-off-by-one
        if p.remaining == 0 || (on(SourceMutant::AckCountOffByOne) && p.remaining == 1) {
            self.complete(ctx, view, placement, i);
        }
    }

    /// `declineCheckpoint`: the whole checkpoint fails.
    pub fn on_decline(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        rpc: Rpc,
        checkpoint: u64,
        reason: DeclineReason,
    ) {
        if let Some(i) = self.find(checkpoint) {
            self.abort(ctx, view, placement, i, AbortReason::Declined(reason));
            if let Some(e) = &mut self.exceeded {
                e.declined_by = Some((rpc.subtask, rpc.attempt));
            }
        }
    }

    /// F1.9: the failure count went past `tolerable_failures` since the JobMaster last asked.
    pub fn take_exceeded(&mut self) -> Option<Exceeded> {
        self.exceeded.take()
    }

    /// F1.9: Flink's `CheckpointFailureManager` counts a failure of a checkpoint newer than
    /// the last completed one, if its reason is one it counts; one more than
    /// `tolerable_failures` clears the count and fails the job.
    fn count_failure(&mut self, checkpoint: u64, reason: AbortReason) {
        let Some(limit) = self.config.tolerable_failures else {
            return;
        };
        let counts = reason.counts_as_failure() || self.bug == Some(Bug::CountEveryAbort);
        if !counts || checkpoint <= self.last_succeeded {
            return;
        }
        self.failures += 1;
        if self.failures > limit {
            self.exceeded = Some(Exceeded {
                checkpoint,
                failures: self.failures,
                declined_by: None,
            });
            self.failures = 0;
        }
    }

    /// Checkpoint `checkpoint`, if still pending, fails for `reason`: its timeout passed
    /// (`Expired`), or a trigger reached a TaskManager that no longer hosts its attempt
    /// (`TriggerFailed`, F1.9).
    pub fn abort_pending(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        checkpoint: u64,
        reason: AbortReason,
    ) {
        if let Some(i) = self.find(checkpoint) {
            self.abort(ctx, view, placement, i, reason);
        }
    }

    /// A trigger reached a subtask that had already finished (P1.2).
    pub fn on_trigger_missed(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        subtask: SubtaskId,
        checkpoint: u64,
    ) {
        let Some(i) = self.find(checkpoint) else {
            return;
        };
        match self.protocol {
            FinishProtocol::Flink | FinishProtocol::Legacy => {
                // F1.2: the trigger fails, and with it the whole checkpoint.
                self.abort(ctx, view, placement, i, AbortReason::TriggerMissed);
            }
            FinishProtocol::Option2 => {
                // The finishing reply covered it; a late trigger is ignored (P1.2 option2).
            }
            FinishProtocol::Option1 => {
                // P1.2 option1: record the finished subtask's empty state, then trigger its
                // descendants through the JobMaster, since its channels already carried
                // EndOfPartition and no barrier will come from it.
                //
                // P1.3: only a descendant all of whose producers are finished for this
                // checkpoint (in the plan or missed) gets the trigger; one with a producer
                // still running learns of the checkpoint from that producer's barrier, and the
                // finished channel's EndOfPartition gets its barrier inserted (steps 2-3). A
                // trigger there could overtake an older checkpoint's barriers still queued in
                // its input: the task would skip that checkpoint without a word, its consumers
                // would wait for the skipped barrier while back-pressuring the running
                // producer whose newer barrier the task waits for, and nothing would move
                // until the older checkpoint expired (fuzz seed 201810).
                let p = &mut self.pending[i];
                if std::mem::take(&mut p.waiting[subtask.index()]) {
                    p.remaining -= 1;
                    p.finished.push(subtask);
                }
                if let Some(record) = ctx.io.stats.get_mut(checkpoint) {
                    record.missed.push(subtask);
                }
                if self.bug != Some(Bug::SkipRetriggerDescendants) {
                    let graph = ctx.graph;
                    for gate in &graph.subtasks[subtask.index()].outputs {
                        for &channel in &gate.channels {
                            let descendant = graph.channels[channel.index()].to;
                            let p = &mut self.pending[i];
                            let inputs_finished = graph.subtasks[descendant.index()]
                                .inputs
                                .iter()
                                .all(|c| p.finished.contains(&graph.channels[c.index()].from));
                            if p.waiting[descendant.index()]
                                && inputs_finished
                                && !std::mem::replace(&mut p.triggered[descendant.index()], true)
                            {
                                ctx.record(TraceEvent::Retrigger {
                                    checkpoint,
                                    finished: subtask,
                                    descendant,
                                });
                                if let Some(record) = ctx.io.stats.get_mut(checkpoint) {
                                    record.retriggers += 1;
                                }
                                send(
                                    ctx,
                                    view,
                                    placement,
                                    descendant,
                                    Call::TriggerCheckpoint(checkpoint),
                                );
                            }
                        }
                    }
                }
                if self.pending[i].remaining == 0 {
                    self.complete(ctx, view, placement, i);
                }
            }
        }
    }

    /// `option2`: a subtask is about to emit EndOfPartition. Count it finished at once and answer
    /// with the pending checkpoints it still owes.
    pub fn on_finishing(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        subtask: SubtaskId,
    ) {
        self.reported_finishing[subtask.index()] = true;
        let mut owed = CheckpointSet::default();
        for p in &self.pending {
            if p.waiting[subtask.index()] {
                owed.insert(p.id);
            }
        }
        send(ctx, view, placement, subtask, Call::FinishingAnswer(owed));
    }

    /// The job reached a terminal status: nothing pending can complete any more.
    /// The newest checkpoint triggered and neither completed nor aborted.
    pub fn newest_pending(&self) -> Option<u64> {
        self.pending.iter().map(|p| p.id).max()
    }

    pub fn on_job_ended(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.drop_pending(ctx, AbortReason::JobEnded);
    }

    /// A failover resets `restarting` subtasks (P1.8): every pending checkpoint waits for some
    /// of them, so all are aborted; and `option2`'s finished set forgets the restarted ones
    /// ("an entry is removed when its subtask restarts").
    ///
    /// The tasks that keep running are told of each abort, as Flink's coordinator does
    /// (`notifyCheckpointAborted`): under `option1` a task at its end of input waits for the
    /// outcome of every checkpoint it took part in (P1.6), and would wait forever (fuzz seed
    /// 436733).
    pub fn on_failover(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        restarting: &[SubtaskId],
    ) {
        let mut in_scope = vec![false; view.len()];
        for s in restarting {
            in_scope[s.index()] = true;
            self.reported_finishing[s.index()] = false;
        }
        for p in std::mem::take(&mut self.pending) {
            self.drop_one(ctx, &p, AbortReason::Failover);
            for &s in p.plan.to_wait_for.iter().filter(|s| !in_scope[s.index()]) {
                send(ctx, view, placement, s, Call::NotifyCheckpointAborted(p.id));
            }
        }
        self.savepoint_forgotten();
    }

    /// Aborts every pending checkpoint without notifying tasks (they are gone or going).
    fn drop_pending(&mut self, ctx: &mut Ctx<'_, '_>, reason: AbortReason) {
        for p in std::mem::take(&mut self.pending) {
            self.drop_one(ctx, &p, reason);
        }
    }

    /// Discards pending checkpoint `p` and records why.
    fn drop_one(&mut self, ctx: &mut Ctx<'_, '_>, p: &Pending, reason: AbortReason) {
        ctx.io.storage.discard(p.id);
        ctx.record(TraceEvent::CheckpointAborted {
            checkpoint: p.id,
            reason,
        });
        if let Some(record) = ctx.io.stats.get_mut(p.id) {
            record.outcome = Outcome::Aborted(ctx.now, reason);
        }
        self.savepoint_dropped(ctx, p.id);
    }

    fn complete(&mut self, ctx: &mut Ctx<'_, '_>, view: &[Execution], placement: &[u32], i: usize) {
        let p = self.pending.remove(i);
        ctx.io.storage.complete(CompletedCheckpoint {
            id: p.id,
            completed_at: ctx.now,
            finished: p.finished,
        });
        ctx.record(TraceEvent::CheckpointCompleted { checkpoint: p.id });
        if let Some(record) = ctx.io.stats.get_mut(p.id) {
            record.outcome = Outcome::Completed(ctx.now);
        }
        self.last_completed_at = Some(ctx.now);
        // F1.9: a completed checkpoint newer than the last one resets the failure count.
        if p.id > self.last_succeeded {
            self.last_succeeded = p.id;
            if self.bug != Some(Bug::KeepFailureCount) {
                self.failures = 0;
            }
        }
        // A completed checkpoint subsumes every older pending one.
        while let Some(older) = self.pending.iter().position(|o| o.id < p.id) {
            self.abort(ctx, view, placement, older, AbortReason::Subsumed);
        }
        // Commit-to is the wait-for set (F1.1): two-phase-commit sinks commit on this.
        for &s in &p.plan.to_wait_for {
            send(
                ctx,
                view,
                placement,
                s,
                Call::NotifyCheckpointComplete(p.id),
            );
        }
    }

    fn abort(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        view: &[Execution],
        placement: &[u32],
        i: usize,
        reason: AbortReason,
    ) {
        let p = self.pending.remove(i);
        // F1.11: Flink's `CheckpointFailureManager` does not count a failed savepoint.
        let savepoint = self.is_savepoint(p.id);
        self.drop_one(ctx, &p, reason);
        if !savepoint {
            self.count_failure(p.id, reason);
        }
        for &s in &p.plan.to_wait_for {
            send(ctx, view, placement, s, Call::NotifyCheckpointAborted(p.id));
        }
    }
}

/// Sends `call` to the current attempt of `subtask`, on its TaskManager.
fn send(
    ctx: &mut Ctx<'_, '_>,
    view: &[Execution],
    placement: &[u32],
    subtask: SubtaskId,
    call: Call,
) {
    ctx.send(
        Address::JobMaster,
        Address::TaskManager(placement[subtask.index()]),
        Rpc {
            subtask,
            attempt: view[subtask.index()].attempt,
            call,
        },
    );
}

impl FinishProtocol {
    /// The name scenarios use (`checkpointing.finish_protocol`).
    pub fn name(self) -> &'static str {
        match self {
            FinishProtocol::Option1 => "option1",
            FinishProtocol::Option2 => "option2",
            FinishProtocol::Flink => "flink",
            FinishProtocol::Legacy => "legacy",
        }
    }
}
