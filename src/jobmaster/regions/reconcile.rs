//! Reconciliation of a streaming job (`docs/rules.md` P3, FLINK-5703): what the pipelined-region
//! scheduler takes from the TaskManagers' reports, the hooks ([`Reconciles`]) of the one flow
//! of both modes (`jobmaster::reconcile`: the window, P3.3's refusal, the end of the window).
//!
//! The window opens at election: the job and every execution are RECONCILING (P3.1), and every
//! TaskManager the placement uses is expected. Each report names an execution's attempt and
//! state; when the window closes, the JobMaster first rebuilds the attempts of every reported
//! execution, then applies their states (P3.2), and decides RUNNING, FINISHED or FAILING (P3.4).
//! FAILING restarts the job from the latest completed checkpoint, as the restart-based recovery
//! would have done at election; executions nobody reported stay RECONCILING until their
//! TaskManager's late report says where they are, so no old attempt can run beside its
//! replacement.

use super::{PendingRestart, PipelinedRegions, With};
use crate::bug::Bug;
use crate::checkpoint::stats::{FailoverRecord, ReconcileRecord};
use crate::graph::SubtaskId;
use crate::jobmaster::reconcile::window::{Judged, Window};
use crate::jobmaster::reconcile::{GivenUp, Reconciles};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::Address;
use crate::world::Ctx;
use sim::Duration;

/// Per subtask: the attempt and state its TaskManager reported in the open window.
pub(super) type Reports = Vec<Option<(u32, ExecutionState)>>;

impl Reconciles for PipelinedRegions {
    type Reports = Reports;

    const GIVEN_UP: GivenUp = GivenUp::Missed;

    fn reports(&mut self) -> &mut Option<Reports> {
        &mut self.reports
    }

    /// The reports of the executions placed on `tm`.
    fn void(&mut self, tm: u32) {
        let reports = self.reports.as_mut().expect("open with the window");
        for (report, &placed) in reports.iter_mut().zip(&self.placement) {
            if placed == tm {
                *report = None;
            }
        }
    }

    fn statistics<'c>(ctx: &'c mut Ctx<'_, '_>) -> &'c mut Vec<ReconcileRecord> {
        &mut ctx.io.stats.reconciliations
    }

    fn process(ctx: &Ctx<'_, '_>, tm: u32) -> u32 {
        ctx.incarnation(Address::TaskManager(tm))
    }

    fn timeout(jm: &With<'_, Self>, _: &Ctx<'_, '_>) -> Duration {
        jm.scheduler.config.reconcile_timeout
    }

    /// P3.1: the TaskManagers kept the job's tasks running; the JobMaster waits for every one
    /// the placement uses, as the process it runs now (alive or not: one that died before the
    /// election misses the window).
    fn enter(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>) -> (Vec<Option<u32>>, Reports) {
        jm.set_job_status(ctx, JobStatus::Created);
        jm.set_job_status(ctx, JobStatus::Reconciling);
        let mut expected = vec![None; jm.leader.task_managers.len()];
        for &tm in &jm.scheduler.placement {
            expected[tm as usize] = Some(ctx.incarnation(Address::TaskManager(tm)));
        }
        for i in 0..jm.scheduler.executions.len() {
            jm.scheduler.deployed_on[i] =
                jm.leader.task_managers[jm.scheduler.placement[i] as usize];
            jm.set_execution(ctx, SubtaskId(i as u32), ExecutionState::Reconciling);
        }
        (expected, vec![None; jm.scheduler.executions.len()])
    }

    /// Nothing: every TaskManager alive learns of the new leader from HA and reports unasked
    /// (the world has each `report` once the window is open).
    fn ask_reports(_: &mut With<'_, Self>, _: &mut Ctx<'_, '_>) {}

    fn take_execution(
        jm: &mut With<'_, Self>,
        _: &mut Ctx<'_, '_>,
        _: u32,
        (subtask, attempt): (SubtaskId, u32),
        (state, _): (ExecutionState, u32),
    ) {
        let reports = jm.scheduler.reports.as_mut().expect("open with the window");
        reports[subtask.index()] = Some((attempt, state));
    }

    /// The window closed without it, the job is restarting, and this execution may still be
    /// unknown (RECONCILING on this TaskManager). Settle it: a running one is cancelled before
    /// its replacement is deployed.
    fn late_execution(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        tm: u32,
        (subtask, attempt): (SubtaskId, u32),
        state: ExecutionState,
    ) {
        let s = subtask.index();
        if jm.scheduler.executions[s].state != ExecutionState::Reconciling
            || tm != jm.scheduler.placement[s]
        {
            return;
        }
        jm.scheduler.executions[s].attempt = attempt;
        if state.is_terminal() {
            jm.apply(ctx, subtask, state);
            jm.check_restart(ctx);
        } else {
            jm.cancel(ctx, subtask);
        }
    }

    /// Nothing beyond the window's count.
    fn report_complete(_: &mut With<'_, Self>, _: &mut Ctx<'_, '_>, _: u32, _: u32) {}

    /// Late: what it did not report, it does not host; that attempt is gone.
    fn late_report_done(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>, tm: u32) {
        for i in 0..jm.scheduler.executions.len() {
            if jm.scheduler.placement[i] == tm
                && jm.scheduler.executions[i].state == ExecutionState::Reconciling
            {
                jm.set_execution(ctx, SubtaskId(i as u32), ExecutionState::Failed);
            }
        }
        jm.check_restart(ctx);
    }

    /// P3.2: rebuild every reported attempt first, then apply the reported states as normal
    /// state updates would. Unknown, FAILED or CANCELED executions make the window FAILING.
    fn judge(
        jm: &mut With<'_, Self>,
        ctx: &mut Ctx<'_, '_>,
        window: &Window,
        reports: &Reports,
    ) -> Judged {
        let ignore_missing = jm.bug == Some(Bug::ReconcileIgnoresMissingTm);
        if jm.bug != Some(Bug::ApplyStateBeforeRebuild) {
            for (execution, report) in jm.scheduler.executions.iter_mut().zip(reports) {
                if let Some((attempt, _)) = *report {
                    execution.attempt = attempt;
                }
            }
        }
        let (mut unknown, mut failed, mut all_finished) = (false, false, true);
        let (mut running, mut finished) = (0, 0);
        for (i, report) in reports.iter().enumerate() {
            let subtask = SubtaskId(i as u32);
            if jm.scheduler.executions[i].state != ExecutionState::Reconciling {
                continue; // settled in the window (its TaskManager was lost)
            }
            match *report {
                Some((_, state)) => {
                    jm.apply(ctx, subtask, state);
                    match state {
                        ExecutionState::Finished => finished += 1,
                        ExecutionState::Failed | ExecutionState::Canceled => failed = true,
                        _ => running += 1,
                    }
                    all_finished &= state == ExecutionState::Finished;
                }
                None if ignore_missing && !window.reported_in_full(jm.scheduler.placement[i]) => {
                    // The bug: taken for running, though nobody said so.
                    jm.apply(ctx, subtask, ExecutionState::Running);
                    all_finished = false;
                }
                None => {
                    unknown = true;
                    all_finished = false;
                }
            }
        }
        Judged {
            failing: unknown || failed,
            all_finished,
            missing_counts: !ignore_missing,
            reported: reports.iter().flatten().count() as u32,
            running,
            finished,
        }
    }

    /// The new coordinator first settles what its predecessor left pending (P3.4), then
    /// triggers again.
    fn running(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>, _: Reports) {
        if let Some(cc) = &mut jm.scheduler.checkpoints {
            cc.settle_inherited(ctx, &jm.scheduler.executions, &jm.scheduler.placement);
            cc.start(ctx);
        }
    }

    fn finished(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>) {
        jm.set_job_status(ctx, JobStatus::Finished);
    }

    /// Normal failover: a full restart from the latest completed checkpoint.
    fn failing(jm: &mut With<'_, Self>, ctx: &mut Ctx<'_, '_>, window: &Window, _: Reports) {
        let missing = window.missing();
        if let Err(exhausted) = jm.leader.count_restart(jm.restarts_allowed()) {
            return jm.give_up(ctx, exhausted);
        }
        jm.set_job_status(ctx, JobStatus::Failing);
        jm.set_job_status(ctx, JobStatus::Restarting);
        let record = ctx.io.stats.failovers.len();
        ctx.io.stats.failovers.push(FailoverRecord::new(
            ctx.now,
            format!("reconciliation ended FAILING ({missing} TaskManager(s) missing the window)"),
            true,
        ));
        for i in 0..jm.scheduler.executions.len() {
            let subtask = SubtaskId(i as u32);
            let tm = jm.scheduler.placement[i];
            match jm.scheduler.executions[i].state {
                ExecutionState::Reconciling => {
                    // Nobody reported it. If its TaskManager reported in full, or the process
                    // the window expected is gone, so is the attempt; otherwise its late report
                    // settles it (`late_execution`, `late_report_done`).
                    let gone = window.reported_in_full(tm)
                        || jm.scheduler.deployed_on[i].is_none()
                        || jm.leader.task_managers[tm as usize] != jm.scheduler.deployed_on[i];
                    if gone {
                        jm.set_execution(ctx, subtask, ExecutionState::Failed);
                    }
                }
                _ => jm.cancel(ctx, subtask),
            }
        }
        let n = jm.scheduler.executions.len();
        jm.scheduler.restart = Some(PendingRestart::whole_job(n, true, record));
        if let Some(cc) = &mut jm.scheduler.checkpoints {
            cc.start(ctx);
        }
        jm.check_restart(ctx);
    }
}

impl With<'_, PipelinedRegions> {
    /// Sets the view of `subtask` to a reported state, counting a FINISHED one.
    fn apply(&mut self, ctx: &mut Ctx<'_, '_>, subtask: SubtaskId, state: ExecutionState) {
        self.set_execution(ctx, subtask, state);
        if state == ExecutionState::Finished {
            self.scheduler.finished += 1;
        }
    }
}
