//! Reconciliation (`docs/rules.md` P3, FLINK-5703): a newly elected JobMaster rebuilds its
//! execution graph from what the TaskManagers report instead of restarting the tasks.
//!
//! The window opens at election: the job and every execution are RECONCILING (P3.1), and
//! every RPC but a report is refused (P3.3; the world parks it at its TaskManager). It closes
//! when every expected TaskManager has sent its whole report, or at `reconcile_timeout`: the
//! JobMaster first rebuilds the attempts of every reported execution, then applies their
//! states (P3.2), and decides RUNNING, FINISHED or FAILING (P3.4). FAILING restarts the job
//! from the latest completed checkpoint, as the restart-based recovery would have done at
//! election; executions nobody reported stay RECONCILING until their TaskManager's late report
//! says where they are, so no old attempt can run beside its replacement.

use super::{PendingRestart, PipelinedRegions, With};
use crate::bug::Bug;
use crate::checkpoint::stats::FailoverRecord;
use crate::graph::SubtaskId;
use crate::jobmaster::reconcile::window::{Judged, Window};
use crate::status::{ExecutionState, JobStatus};
use crate::taskmanager::outbox;
use crate::trace::{Address, Call, ReconcileOutcome, Rpc};
use crate::world::{Ctx, Event};

/// Per subtask: the attempt and state its TaskManager reported in the open window.
pub(super) type Reports = Vec<Option<(u32, ExecutionState)>>;

impl With<'_, PipelinedRegions> {
    /// P3.1: a newly elected JobMaster under `failover: reconcile` takes the job over from the
    /// TaskManagers, which kept its tasks running.
    pub fn reconcile(&mut self, ctx: &mut Ctx<'_, '_>) {
        self.set_job_status(ctx, JobStatus::Created);
        self.set_job_status(ctx, JobStatus::Reconciling);
        // P3.1: every TaskManager that hosts the job is expected, as the process it runs now
        // (alive or not: one that died before the election misses the window).
        let mut expected = vec![None; self.leader.task_managers.len()];
        for &tm in &self.scheduler.placement {
            expected[tm as usize] = Some(ctx.incarnation(Address::TaskManager(tm)));
        }
        for i in 0..self.scheduler.executions.len() {
            self.scheduler.deployed_on[i] =
                self.leader.task_managers[self.scheduler.placement[i] as usize];
            self.set_execution(ctx, SubtaskId(i as u32), ExecutionState::Reconciling);
        }
        let window = Window::open(ctx.now, expected, &mut ctx.io.stats.reconciliations);
        self.scheduler.reconcile_record = Some(window.record);
        *self.window = Some(window);
        self.scheduler.reports = Some(vec![None; self.scheduler.executions.len()]);
        let incarnation = self.leader.incarnation;
        ctx.sched.after(
            self.scheduler.config.reconcile_timeout,
            Event::ReconcileTimeout { incarnation },
        );
    }

    /// P3.3: while reconciling, every RPC but a report is refused (`Leader::refuses`).
    pub fn refuses(&self, call: Call) -> bool {
        self.leader.refuses(outbox::is_report(call))
    }

    /// P3.2: TaskManager `task_manager` hosts `rpc.attempt` of `rpc.subtask` in `state`.
    pub(super) fn on_report(
        &mut self,
        ctx: &mut Ctx<'_, '_>,
        task_manager: u32,
        rpc: Rpc,
        state: ExecutionState,
    ) {
        let s = rpc.subtask.index();
        if let Some(reports) = &mut self.scheduler.reports {
            reports[s] = Some((rpc.attempt, state));
            let record = self
                .scheduler
                .reconcile_record
                .expect("set with the window");
            ctx.io.stats.reconciliations[record].reports += 1;
            return;
        }
        if let Some(record) = self.scheduler.reconcile_record {
            ctx.io.stats.reconciliations[record].late_reports += 1;
        }
        // A late report (P3.4): the window closed without it, the job is restarting, and this
        // execution is still unknown. Settle it: a running one is cancelled before its
        // replacement is deployed.
        if self.scheduler.executions[s].state != ExecutionState::Reconciling
            || task_manager != self.scheduler.placement[s]
        {
            return;
        }
        self.scheduler.executions[s].attempt = rpc.attempt;
        if state.is_terminal() {
            self.apply(ctx, rpc.subtask, state);
            self.check_restart(ctx);
        } else {
            self.cancel(ctx, rpc.subtask);
        }
    }

    /// P3.2: TaskManager `task_manager` reported every execution it hosts.
    pub(super) fn on_report_done(&mut self, ctx: &mut Ctx<'_, '_>, task_manager: u32) {
        if let Some(window) = self.window.as_mut() {
            // The sender is the TaskManager's process now: a report of a process that died
            // since it sent it never arrives (the world drops it).
            let process = ctx.incarnation(Address::TaskManager(task_manager));
            if window.report_done(task_manager, process) {
                self.end_reconcile(ctx);
            }
            return;
        }
        // Late: what it did not report, it does not host; that attempt is gone.
        for i in 0..self.scheduler.executions.len() {
            if self.scheduler.placement[i] == task_manager
                && self.scheduler.executions[i].state == ExecutionState::Reconciling
            {
                self.set_execution(ctx, SubtaskId(i as u32), ExecutionState::Failed);
            }
        }
        self.check_restart(ctx);
    }

    /// The heartbeat of a TaskManager timed out while reconciling: whatever it reported is void,
    /// and it counts as missing (P3.4).
    pub(super) fn lost_while_reconciling(&mut self, task_manager: u32) -> bool {
        let open = self.window.as_mut().zip(self.scheduler.reports.as_mut());
        let Some((window, reports)) = open else {
            return false;
        };
        window.lose(task_manager);
        for (i, report) in reports.iter_mut().enumerate() {
            if self.scheduler.placement[i] == task_manager {
                *report = None;
            }
        }
        true
    }

    /// `reconcile_timeout` passed.
    pub fn on_reconcile_timeout(&mut self, ctx: &mut Ctx<'_, '_>) {
        if self.window.is_some() {
            self.end_reconcile(ctx);
        }
    }

    /// P3.4: the window closes.
    fn end_reconcile(&mut self, ctx: &mut Ctx<'_, '_>) {
        let window = self.window.take().expect("the window is open");
        let reports = self.scheduler.reports.take().expect("open with the window");
        let ignore_missing = self.bug == Some(Bug::ReconcileIgnoresMissingTm);
        // P3.2: rebuild everything but the states first ...
        if self.bug != Some(Bug::ApplyStateBeforeRebuild) {
            for (execution, report) in self.scheduler.executions.iter_mut().zip(&reports) {
                if let Some((attempt, _)) = *report {
                    execution.attempt = attempt;
                }
            }
        }
        // ... then apply the reported states, as normal state updates would.
        let (mut unknown, mut failed, mut all_finished) = (false, false, true);
        let (mut running, mut finished) = (0, 0);
        for (i, report) in reports.iter().enumerate() {
            let subtask = SubtaskId(i as u32);
            if self.scheduler.executions[i].state != ExecutionState::Reconciling {
                continue; // settled in the window (its TaskManager was lost)
            }
            match *report {
                Some((_, state)) => {
                    self.apply(ctx, subtask, state);
                    match state {
                        ExecutionState::Finished => finished += 1,
                        ExecutionState::Failed | ExecutionState::Canceled => failed = true,
                        _ => running += 1,
                    }
                    all_finished &= state == ExecutionState::Finished;
                }
                None if ignore_missing && !window.reported_in_full(self.scheduler.placement[i]) => {
                    // The bug: taken for running, though nobody said so.
                    self.apply(ctx, subtask, ExecutionState::Running);
                    all_finished = false;
                }
                None => {
                    unknown = true;
                    all_finished = false;
                }
            }
        }
        let judged = Judged {
            failing: unknown || failed,
            all_finished,
            missing_counts: !ignore_missing,
            reported: reports.iter().flatten().count() as u32,
            running,
            finished,
        };
        let (outcome, event) = window.end(ctx.now, &judged, &mut ctx.io.stats.reconciliations);
        ctx.record(event);
        match outcome {
            ReconcileOutcome::Running => {
                self.set_job_status(ctx, JobStatus::Running);
                if let Some(cc) = &mut self.scheduler.checkpoints {
                    cc.settle_inherited(ctx, &self.scheduler.executions, &self.scheduler.placement);
                    cc.start(ctx);
                }
            }
            ReconcileOutcome::Finished => self.set_job_status(ctx, JobStatus::Finished),
            ReconcileOutcome::Failing => self.restart_after_reconcile(ctx, &window),
        }
    }

    /// P3.4 FAILING: normal failover, a full restart from the latest completed checkpoint.
    fn restart_after_reconcile(&mut self, ctx: &mut Ctx<'_, '_>, window: &Window) {
        let missing = window.missing();
        if let Err(exhausted) = self.leader.count_restart(self.restarts_allowed()) {
            return self.give_up(ctx, exhausted);
        }
        self.set_job_status(ctx, JobStatus::Failing);
        self.set_job_status(ctx, JobStatus::Restarting);
        let record = ctx.io.stats.failovers.len();
        ctx.io.stats.failovers.push(FailoverRecord::new(
            ctx.now,
            format!("reconciliation ended FAILING ({missing} TaskManager(s) missing the window)"),
            true,
        ));
        for i in 0..self.scheduler.executions.len() {
            let subtask = SubtaskId(i as u32);
            let tm = self.scheduler.placement[i];
            match self.scheduler.executions[i].state {
                ExecutionState::Reconciling => {
                    // Nobody reported it. If its TaskManager reported in full, or the process
                    // the window expected is gone, so is the attempt; otherwise its late report
                    // settles it (`on_report`, `on_report_done`).
                    let gone = window.reported_in_full(tm)
                        || self.scheduler.deployed_on[i].is_none()
                        || self.leader.task_managers[tm as usize] != self.scheduler.deployed_on[i];
                    if gone {
                        self.set_execution(ctx, subtask, ExecutionState::Failed);
                    }
                }
                _ => self.cancel(ctx, subtask),
            }
        }
        let n = self.scheduler.executions.len();
        self.scheduler.restart = Some(PendingRestart::whole_job(n, true, record));
        if let Some(cc) = &mut self.scheduler.checkpoints {
            cc.start(ctx);
        }
        self.check_restart(ctx);
    }

    /// Sets the view of `subtask` to a reported state, counting a FINISHED one.
    fn apply(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, state: ExecutionState) {
        self.set_execution(ctx, subtask, state);
        if state == ExecutionState::Finished {
            self.scheduler.finished += 1;
        }
    }
}
