//! Reconciliation (`docs/rules.md` P3, FLINK-5703), one flow for both kinds of job: a newly
//! elected JobMaster opens the reconcile window (P3.1), refuses every RPC but a registration or
//! a report while the job is RECONCILING (P3.3), takes the reports and each TaskManager's word that its report
//! is complete (P3.2), gives up on a TaskManager it loses, and closes the window when the last
//! expected TaskManager is in or at `reconcile_timeout`, RUNNING, FINISHED or FAILING (P3.4).
//!
//! The flow is written once, as methods of `With<'_, S>` for any scheduler `S` that
//! [`Reconciles`], acting through the mode's context (`Mode::Ctx`), as `JobMaster::crash` is.
//! The window (`window::Window`: who is expected, who reported in full, the statistics entry,
//! P3.4's outcome table) is the JobMaster's shared part. What differs by mode is what the
//! reports say and what the JobMaster does with them, which each scheduler supplies as the
//! hooks of [`Reconciles`]: `regions::reconcile` (streaming: each execution's attempt and
//! state; FAILING is a full restart from the latest completed checkpoint) and
//! `batch::reconcile` (batch: executions, partitions, splits, inputs, checked against each
//! other and the job events; FAILING is FLIP-383 recovery, P2.4).

pub(crate) mod window;

use super::{Mode, With};
use crate::checkpoint::stats::ReconcileRecord;
use crate::graph::SubtaskId;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{Call, ReconcileOutcome};
use crate::world::{Act, Event};
use sim::Duration;
use window::{Judged, Window};

/// What a JobMaster does about a TaskManager it gives up on inside the window (P3.4): the one
/// place where the two modes' rules differ about the window itself.
pub(crate) enum GivenUp {
    /// Streaming: the TaskManager missed the window. The window still counts it, and since a
    /// streaming TaskManager reports only at the election, no later process of it can: only
    /// `reconcile_timeout` closes the window, and the TaskManager counts as missing (FAILING,
    /// a full restart).
    Missed,
    /// Batch: the window no longer waits for the TaskManager, and its executions count as
    /// unreported: P3.4's batch rules (run again, or FAILING if consumers read them) decide,
    /// and the window may close at once. The process given up is always the one the window
    /// waits for: a JobMaster gives up only on a process registered with it (`Leader::lose`),
    /// and a registration inside the window is what the window expects (`expect_report`,
    /// after giving up on the process it replaces).
    NotAwaited,
}

/// A scheduler that reconciles (P3): what its mode takes from the reports and does at the end
/// of the window, the hooks of the one flow (module doc).
pub(crate) trait Reconciles: Mode {
    /// What the reports in the open window said, as this mode keeps them.
    type Reports;

    /// P3.4: what the window does about a TaskManager given up on.
    const GIVEN_UP: GivenUp;

    /// The mode's reports: `Some` exactly while the window is open.
    fn reports(&mut self) -> &mut Option<Self::Reports>;

    /// What TaskManager `tm` reported in the open window is void: its process is gone, with
    /// what it hosted.
    fn void(&mut self, tm: u32);

    /// The run's reconciliation statistics, where the window has its entry.
    fn statistics<'c>(ctx: &'c mut Self::Ctx<'_, '_>) -> &'c mut Vec<ReconcileRecord>;

    /// The process TaskManager `tm` runs now: the sender of a report that arrives (one of a
    /// process that died since is never delivered).
    fn process(ctx: &Self::Ctx<'_, '_>, tm: u32) -> u32;

    /// How long the window waits for the reports at most (`reconcile_timeout`).
    fn timeout(jm: &With<'_, Self>, ctx: &Self::Ctx<'_, '_>) -> Duration;

    /// P3.1: the job and every execution the JobMaster knows of go RECONCILING. Returns, per
    /// TaskManager, the process whose whole report the window waits for, and the mode's
    /// reports, none yet.
    fn enter(
        jm: &mut With<'_, Self>,
        ctx: &mut Self::Ctx<'_, '_>,
    ) -> (Vec<Option<u32>>, Self::Reports);

    /// P3.2: what the JobMaster does, once the window is open, to have the TaskManagers report.
    fn ask_reports(jm: &mut With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>);

    /// P3.2: TaskManager `tm` reports an `execution` (subtask, attempt) in a state (of a vertex
    /// of a parallelism, the `report`) inside the window: the mode's reports take it.
    fn take_execution(
        jm: &mut With<'_, Self>,
        ctx: &mut Self::Ctx<'_, '_>,
        tm: u32,
        execution: (SubtaskId, u32),
        report: (ExecutionState, u32),
    );

    /// P3.4: the same report after the window closed without it.
    fn late_execution(
        jm: &mut With<'_, Self>,
        ctx: &mut Self::Ctx<'_, '_>,
        tm: u32,
        execution: (SubtaskId, u32),
        state: ExecutionState,
    );

    /// P3.2: TaskManager `tm`'s process `process` says its report is complete, before the
    /// window takes it: what the mode learns from that whether or not the window is open.
    fn report_complete(jm: &mut With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>, tm: u32, process: u32);

    /// P3.4: TaskManager `tm`'s report is complete after the window closed without it.
    fn late_report_done(jm: &mut With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>, tm: u32);

    /// P3.2, P3.4: the window closes: the JobMaster rebuilds its view from the reports, then
    /// applies the reported states, and judges what it saw for P3.4's table.
    fn judge(
        jm: &mut With<'_, Self>,
        ctx: &mut Self::Ctx<'_, '_>,
        window: &Window,
        reports: &Self::Reports,
    ) -> Judged;

    /// P3.4 RUNNING, once the job's status is: what the JobMaster takes up again.
    fn running(jm: &mut With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>, reports: Self::Reports);

    /// P3.4 FINISHED: the job is over.
    fn finished(jm: &mut With<'_, Self>, ctx: &mut Self::Ctx<'_, '_>);

    /// P3.4 FAILING: the mode's failover.
    fn failing(
        jm: &mut With<'_, Self>,
        ctx: &mut Self::Ctx<'_, '_>,
        window: &Window,
        reports: Self::Reports,
    );
}

/// The flow, for any mode that reconciles: each method but P3.3's refusal (the `Leader`'s rule,
/// whatever the mode) is bound to `Reconciles`, which is the crate's, rather than the block.
impl<S> With<'_, S> {
    /// P3.1: a newly elected JobMaster under `failover: reconcile` opens the window: the job and
    /// every execution it knows of are RECONCILING, and it waits for the reports of the
    /// TaskManager processes the mode expects, at most until `reconcile_timeout`.
    pub(crate) fn open_window(&mut self, ctx: &mut S::Ctx<'_, '_>)
    where
        S: Reconciles,
    {
        let (expected, reports) = S::enter(self, ctx);
        let timeout = S::timeout(self, ctx);
        let window = Window::open(ctx.now(), expected, S::statistics(ctx));
        *self.reconciled = Some(window.record);
        *self.window = Some(window);
        *self.scheduler.reports() = Some(reports);
        let incarnation = self.leader.incarnation;
        ctx.after(timeout, Event::ReconcileTimeout { incarnation });
        S::ask_reports(self, ctx);
        self.end_if_complete(ctx);
    }

    /// P3.3: while the job is RECONCILING, every RPC but a TaskManager's registration and its
    /// reports is refused (`Leader::refuses`). A streaming TaskManager sends neither a
    /// registration nor partition, split or input reports, so the rule is one for both modes.
    pub(crate) fn refuses(&self, call: Call) -> bool {
        let taken = matches!(
            call,
            Call::RegisterTaskManager
                | Call::ReportExecution { .. }
                | Call::ReportPartition { .. }
                | Call::ReportSplit(_)
                | Call::ReportInput { .. }
                | Call::ReportDone
        );
        self.leader.refuses(taken)
    }

    /// P3.2: TaskManager `tm` registered as `process` inside the window: the window waits for
    /// its whole report (again, after a reconnection). What an earlier process of it reported
    /// is void already: a JobMaster gives up on the old process (`give_up_on`) before it takes
    /// a new one's registration, and a process it expected from HA but never heard from
    /// reported nothing. Asked by a batch JobMaster, whose TaskManagers register by RPC and
    /// report on each registration; a streaming TaskManager reports once, at the election, so
    /// its window expects the processes of that instant and a replacement that registers later
    /// is another TaskManager to it (P3.1).
    pub(crate) fn expect_report(&mut self, tm: u32, process: u32) {
        if let Some(window) = self.window.as_mut() {
            window.expect(tm, process);
        }
    }

    /// P3.2: TaskManager `tm` reports `attempt` of `subtask` in `state`: inside the window the
    /// mode's reports take it; after it, it is counted late and settled (P3.4).
    pub(crate) fn on_report_execution(
        &mut self,
        ctx: &mut S::Ctx<'_, '_>,
        tm: u32,
        execution: (SubtaskId, u32),
        (state, parallelism): (ExecutionState, u32),
    ) where
        S: Reconciles,
    {
        if let Some(window) = self.window.as_ref() {
            S::statistics(ctx)[window.record].reports += 1;
            return S::take_execution(self, ctx, tm, execution, (state, parallelism));
        }
        if let Some(record) = *self.reconciled {
            S::statistics(ctx)[record].late_reports += 1;
        }
        S::late_execution(self, ctx, tm, execution, state);
    }

    /// P3.2: TaskManager `tm` reported everything it hosts. The window closes once every
    /// TaskManager it waits for has (P3.4).
    pub(crate) fn on_report_done(&mut self, ctx: &mut S::Ctx<'_, '_>, tm: u32)
    where
        S: Reconciles,
    {
        let process = S::process(ctx, tm);
        S::report_complete(self, ctx, tm, process);
        match self.window.as_mut() {
            Some(window) => {
                if window.report_done(tm, process) {
                    self.end_window(ctx);
                }
            }
            None => S::late_report_done(self, ctx, tm),
        }
    }

    /// P3.4: the JobMaster gives up on TaskManager `tm`'s process (its heartbeat timed out, or
    /// a new process registered): what it reported is void, and the window treats it as the
    /// mode says (`Reconciles::GIVEN_UP`). False if no window is open.
    pub(crate) fn give_up_on(&mut self, ctx: &mut S::Ctx<'_, '_>, tm: u32) -> bool
    where
        S: Reconciles,
    {
        let Some(window) = self.window.as_mut() else {
            return false;
        };
        match S::GIVEN_UP {
            GivenUp::Missed => window.lose(tm),
            GivenUp::NotAwaited => window.forget(tm),
        }
        self.scheduler.void(tm);
        self.end_if_complete(ctx);
        true
    }

    /// `reconcile_timeout` passed: the window closes if it is still open (P3.4).
    pub(crate) fn on_reconcile_timeout(&mut self, ctx: &mut S::Ctx<'_, '_>)
    where
        S: Reconciles,
    {
        if self.window.is_some() {
            self.end_window(ctx);
        }
    }

    /// The window closes if it waits for nobody any more.
    fn end_if_complete(&mut self, ctx: &mut S::Ctx<'_, '_>)
    where
        S: Reconciles,
    {
        if self.window.as_ref().is_some_and(Window::complete) {
            self.end_window(ctx);
        }
    }

    /// P3.4: the window closes. The mode rebuilds, applies and judges its reports (P3.2), the
    /// window turns that into the outcome of P3.4's table, and the job goes RUNNING, FINISHED,
    /// or FAILING into the mode's failover.
    fn end_window(&mut self, ctx: &mut S::Ctx<'_, '_>)
    where
        S: Reconciles,
    {
        let window = self.window.take().expect("the window is open");
        let reports = self
            .scheduler
            .reports()
            .take()
            .expect("open with the window");
        let judged = S::judge(self, ctx, &window, &reports);
        let now = ctx.now();
        let (outcome, event) = window.end(now, &judged, S::statistics(ctx));
        ctx.record(event);
        match outcome {
            ReconcileOutcome::Running => {
                self.set_job_status(ctx, JobStatus::Running);
                S::running(self, ctx, reports);
            }
            ReconcileOutcome::Finished => S::finished(self, ctx),
            ReconcileOutcome::Failing => S::failing(self, ctx, &window, reports),
        }
    }
}
