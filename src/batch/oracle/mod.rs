//! The batch oracles (P4): `exactly-once-output` (the committed output is exactly what a
//! failure-free run commits: every record of every split, once per path to the sink),
//! `minimal-rerun` (after a JobManager crash, exactly the subtasks P2.4/P2.5 require run
//! again, computed from the ledger, not from the JobMaster's state), `reconcile-outcome`
//! (`reconcile`: the end of a reconcile window is what the reports call for), `rpc-order` and
//! `no-lost-rpc` (`rpc`: task RPCs taken in send order, each once, none refused and lost),
//! `adaptive-parallelism` and `legal-transition`.
//!
//! The ledger is what the oracle saw happen: every job event appended and which of them were
//! flushed before the JobManager died, which partitions the remote shuffle service holds,
//! and which partition reports reached the new JobManager before it stopped waiting. From that
//! it recomputes the recovered set as a greatest fixpoint (a subtask stays finished unless a
//! rule removes it), a different formulation from the JobMaster's breadth-first expansion
//! (`recovery`).

mod executions;
mod leadership;
mod reconcile;
mod recovery;
mod retention;
mod rpc;
mod speculation;
#[cfg(test)]
mod tests;
mod tracked;

pub use reconcile::Received;
pub use rpc::{Call, TaskRpc};

use super::data::{self, Fragment};
use super::events::{JobEvent, Location};
use crate::graph::{ExecutionGraph, SubtaskId, VertexId};
use crate::jobmaster::transitions;
use crate::oracle::invariant::Invariant;
use crate::oracle::job_status;
use crate::oracle::Violation;
use crate::scenario::JobMasterConfig;
use crate::scenario::{Batch, Fault};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{FaultEvent, Rpc, TraceEvent};
use sim::Instant;
use std::collections::{BTreeMap, BTreeSet};

pub struct BatchOracles {
    batch: Batch,
    violations: Vec<Violation>,
    log: Vec<JobEvent>,
    /// How many of `log` are durable.
    durable: usize,
    remote: BTreeSet<(SubtaskId, u32)>,
    window: Option<Window>,
    /// A JobManager finished a recovery: reports after it are late.
    after_window: bool,
    /// Partitions reported after the window: (subtask, attempt, task manager, when, event
    /// index, answered by a release request since).
    late: Vec<(SubtaskId, u32, u32, Instant, u64, bool)>,
    /// Partitions reported in a reconcile window that ended RUNNING that the JobMaster does
    /// not keep, in the same form: each must be released (P3.2).
    unadopted: Vec<(SubtaskId, u32, u32, Instant, u64, bool)>,
    lost_task_managers: BTreeSet<u32>,
    kept: BTreeSet<(SubtaskId, u32)>,
    /// `rpc-order` and `no-lost-rpc` (P3.3): every task RPC sent, until applied.
    rpcs: rpc::Ledger,
    /// `legal-transition`'s one current execution per vertex, and `slot-capacity`.
    executions: executions::Executions,
    /// P2.2: subtasks reset (or, after a reconciliation, kept otherwise than the durable log
    /// says they finished) whose reset is not in the job event log yet; it must be before any
    /// subtask is deployed again.
    unlogged_resets: BTreeSet<SubtaskId>,
    /// P2.2 with P3.2: the durable finishes a reconcile window that ended RUNNING did not keep,
    /// or kept although a recovery would not (when, the event's index, the subtasks). The
    /// JobMaster logs exactly these as one reset as it ends the window, before it acts on
    /// anything else: a finish kept as a recovery would keep it must not be reset in the log
    /// (a later recovery would run it again); any other claim must be.
    stale_claims: Option<(Instant, u64, BTreeSet<SubtaskId>)>,
    /// The job's status is RECONCILING (what the last `job_status` event said).
    job_reconciling: bool,
    /// The job's status is terminal (what the last `job_status` event said).
    job_terminal: bool,
    /// `failover: reconcile`: a new JobMaster first runs a reconcile window (P3), and P2.4
    /// only after it ends FAILING.
    reconcile_mode: bool,
    /// A `job_events_write_failure` fault hit the JobMaster now leading (F2.3): it may log
    /// nothing more.
    writes_failed: bool,
    /// What the trace must say the last JobManager crash (P2.2) and the last failed write
    /// (F2.3) lost: the events this ledger counted in the write buffer at that moment.
    buffer_lost_at_crash: Option<usize>,
    buffer_lost_at_write: Option<usize>,
    /// A `job_events_read_failure` fault made the durable log unreadable (F2.4 step 5): the
    /// next recovery must restart the job in full.
    unreadable: bool,
    /// `job-status`: every fault that fired, and the restart strategy's `max_attempts`.
    fired: Vec<FaultEvent>,
    max_attempts: u32,
    /// `reconcile-outcome`'s ledger.
    reconcile: reconcile::Ledger,
    /// `adaptive-parallelism`: per vertex, `"parallelism": "auto"` in the scenario; per vertex
    /// the parallelism its latest initialization decided; per subtask the bytes its latest
    /// partition holds, and per attempt the bytes each partition written holds.
    adaptive: Vec<bool>,
    decided: Vec<Option<u32>>,
    written: Vec<u64>,
    written_by: BTreeMap<(SubtaskId, u32), u64>,
    /// Per subtask: the attempt the JobMaster last saw FINISHED (run, recovered or adopted),
    /// whose partition its consumers read.
    finished_attempt: BTreeMap<SubtaskId, u32>,
    /// `minimal-rerun`: which partitions a TaskManager released at its registration timeout.
    retention: retention::Retention,
    /// P2.7: when the job's result is due in HA storage: `batch.job_result_delay` after the
    /// FINISHED of the JobMaster leading now (none once it crashed).
    result_due: Option<Instant>,
    /// `failover-scope`: when a cut-off TaskManager must lose its leader (F2.5).
    leadership: leadership::Leadership,
    /// `speculation`'s ledger (P2.8).
    speculation: speculation::Ledger,
    /// `minimal-rerun`: the partitions each JobMaster tracks, which it must not release.
    tracked: tracked::Tracked,
}

/// What the end of a run says about who is current, for `no-lost-rpc`.
pub struct Current {
    /// Per subtask: the JobMaster's attempt and its state (`None`: no JobMaster).
    pub attempts: Vec<Option<(u32, ExecutionState)>>,
    /// Per TaskManager: its live process.
    pub processes: Vec<Option<u32>>,
}

struct Window {
    started: Instant,
    reports: BTreeSet<(SubtaskId, u32, u32, u32)>,
    /// Reports whose TaskManager the JobMaster then lost, inside the wait: reported, so
    /// nothing is left to wait for, but gone (P2.3: partitions survive on live TaskManagers).
    gone: BTreeSet<(SubtaskId, u32, u32, u32)>,
    recovered: BTreeSet<SubtaskId>,
}

impl BatchOracles {
    /// `adaptive`: per vertex, `"parallelism": "auto"` in the scenario; `cluster`: the
    /// TaskManagers and their slots.
    pub fn new(
        graph: &ExecutionGraph,
        batch: &Batch,
        (task_managers, slots): (usize, u32),
        adaptive: Vec<bool>,
        jobmaster: &JobMasterConfig,
        faults: &[Fault],
    ) -> BatchOracles {
        BatchOracles {
            batch: batch.clone(),
            violations: Vec::new(),
            log: Vec::new(),
            durable: 0,
            remote: BTreeSet::new(),
            window: None,
            after_window: false,
            result_due: None,
            late: Vec::new(),
            unadopted: Vec::new(),
            lost_task_managers: BTreeSet::new(),
            kept: BTreeSet::new(),
            rpcs: rpc::Ledger::new(task_managers),
            executions: executions::Executions::new(graph, task_managers, slots),
            unlogged_resets: BTreeSet::new(),
            stale_claims: None,
            job_reconciling: false,
            job_terminal: false,
            reconcile_mode: jobmaster.failover == crate::scenario::Failover::Reconcile,
            writes_failed: false,
            buffer_lost_at_crash: None,
            buffer_lost_at_write: None,
            unreadable: false,
            fired: Vec::new(),
            max_attempts: jobmaster.restart_strategy.max_attempts,
            reconcile: reconcile::Ledger::new(graph, task_managers, jobmaster.reconcile_timeout),
            adaptive,
            decided: vec![None; graph.vertices.len()],
            written: vec![0; graph.subtasks.len()],
            written_by: BTreeMap::new(),
            finished_attempt: BTreeMap::new(),
            retention: retention::Retention::new(task_managers, batch.registration_timeout),
            leadership: leadership::Leadership::new(
                task_managers,
                jobmaster.heartbeat_timeout,
                faults,
            ),
            speculation: speculation::Ledger::new(graph, task_managers, slots, batch.speculative),
            tracked: tracked::Tracked::default(),
        }
    }

    /// The JobMaster appended `event` to its write buffer.
    pub fn logged(&mut self, graph: &ExecutionGraph, event: &JobEvent) {
        if let JobEvent::Reset { subtasks } = event {
            for s in subtasks {
                self.unlogged_resets.remove(s);
            }
            if let Some((now, index, stale)) = self.stale_claims.take() {
                let logged: BTreeSet<SubtaskId> = subtasks.iter().copied().collect();
                self.check_stale_claims(graph, (now, index), &stale, &logged);
            }
        }
        self.log.push(event.clone());
    }

    /// How many events this ledger counts in the JobMaster's write buffer.
    fn buffered(&self) -> usize {
        self.log.len() - self.durable.min(self.log.len())
    }

    /// P2.2, F2.3: a figure the trace gives of the job event log (`what` happened to `told`
    /// events) agrees with this ledger's own count, `expected`; `None` where the trace should
    /// have said nothing. A wrong count misleads whoever reads the trace about what a later
    /// recovery can find.
    fn check_log_figure(
        &mut self,
        (now, index): (Instant, u64),
        what: &str,
        told: u32,
        expected: Option<usize>,
    ) {
        if expected == Some(told as usize) {
            return;
        }
        let counted = match expected {
            Some(n) => format!("{n}"),
            None => "none".to_owned(),
        };
        self.violate(
            Invariant::MinimalRerun,
            now,
            index,
            vec!["JobMaster".into()],
            format!(
                "the trace says {told} job event(s) were {what}, where the oracle's own ledger \
                 of the write buffer counts {counted} (P2.2, F2.3)"
            ),
        );
    }

    /// P2.2: must the JobMaster log the resets it makes now? Not when its store failed to
    /// write (F2.3: it logs nothing more), nor, in Flink's order, the resets a recovery makes
    /// while the job is RECONCILING (`in_recovery`; nothing is logged then either).
    fn must_log_resets(&self, in_recovery: bool) -> bool {
        !self.writes_failed && (self.batch.job_events.log_recovery_resets || !in_recovery)
    }

    /// The reset the JobMaster logged as a RUNNING window ended (`logged`; none if it logged
    /// none) against the durable finishes the window did not keep (`stale`).
    fn check_stale_claims(
        &mut self,
        graph: &ExecutionGraph,
        (now, index): (Instant, u64),
        stale: &BTreeSet<SubtaskId>,
        logged: &BTreeSet<SubtaskId>,
    ) {
        let name = |s: &SubtaskId| graph.subtask_name(*s).to_string();
        let message = if let Some(s) = logged.difference(stale).next() {
            format!(
                "the reconciliation kept {} FINISHED with the attempt a recovery would keep \
                 from the job event log, yet the JobMaster logs its reset (P2.2: a later \
                 recovery would run it again)",
                name(s)
            )
        } else if let Some(s) = stale.difference(logged).next() {
            format!(
                "the job event log claims {} finished, which the reconciliation did not keep \
                 or a recovery would not keep (F2.3), and the JobMaster ends the window without \
                 logging its reset (P2.2, P3.2)",
                name(s)
            )
        } else {
            return;
        };
        self.violate(
            Invariant::MinimalRerun,
            now,
            index,
            vec!["JobMaster".into()],
            message,
        );
    }

    fn durably_finished(&self) -> BTreeMap<SubtaskId, u32> {
        Self::claimed_finished(&self.log[..self.durable.min(self.log.len())])
    }

    /// The subtasks `log` says finished, with the attempt of the latest finish not reset since.
    fn claimed_finished(log: &[JobEvent]) -> BTreeMap<SubtaskId, u32> {
        let mut finished = BTreeMap::new();
        for e in log {
            match e {
                JobEvent::Finished {
                    subtask, attempt, ..
                } => {
                    finished.insert(*subtask, *attempt);
                }
                JobEvent::Reset { subtasks } => {
                    for s in subtasks {
                        finished.remove(s);
                    }
                }
                JobEvent::VertexInitialized { .. } => {}
            }
        }
        finished
    }

    /// TaskManager `tm`'s process `process` sends task RPC `rpc` (its first send, before any
    /// outbox decides whether it waits).
    pub fn rpc_sent(&mut self, tm: u32, process: u32, rpc: TaskRpc) {
        self.rpcs.sent(tm, process, rpc);
    }

    /// P3.3: TaskManager `tm` sends the RPCs it kept again.
    pub fn rpcs_resent(&mut self, tm: u32, (now, index): (Instant, u64)) {
        let found = self.rpcs.resent(tm);
        self.rpc_order(tm, (now, index), found);
    }

    /// TaskManager `tm`'s process `process` lost `rpc` at its send: its link was cut.
    pub fn rpc_lost(&mut self, tm: u32, process: u32, rpc: TaskRpc) {
        self.rpcs.lost(tm, process, rpc);
    }

    /// P3.3: a reconciling JobMaster refused `msg`, which must be a task's RPC (the ledger's
    /// own reading, `TaskRpc::of`): anything else it must take or drop.
    pub fn rpc_refused(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        msg: Rpc,
        (now, index): (Instant, u64),
    ) {
        let found = match TaskRpc::of(msg) {
            Some(rpc) => self.rpcs.refused(graph, (tm, process), rpc, (now, index)),
            None => Some(format!(
                "the reconciling JobMaster refused {:?} from TaskManager{tm}, which is no \
                 task's RPC: only a task's RPCs wait while it reconciles (P3.3)",
                msg.call
            )),
        };
        self.rpc_order(tm, (now, index), found);
    }

    /// The JobMaster takes task RPC `rpc` from TaskManager `tm`, whose process is `process`.
    pub fn rpc_applied(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        rpc: TaskRpc,
        (now, index): (Instant, u64),
    ) {
        let found = self.rpcs.applied(graph, (tm, process), rpc);
        self.rpc_order(tm, (now, index), found);
        if rpc.call == rpc::Call::Failed {
            self.executions.failed_reported(rpc.subtask, rpc.attempt);
        }
    }

    /// What the RPC ledger found wrong on TaskManager `tm`'s link, as an `rpc-order` violation.
    fn rpc_order(&mut self, tm: u32, (now, index): (Instant, u64), found: Option<String>) {
        if let Some(message) = found {
            let actors = vec![format!("TaskManager{tm}"), "JobMaster".into()];
            self.violate(Invariant::RpcOrder, now, index, actors, message);
        }
    }

    /// `what` from TaskManager `tm`'s process `process` reached the current JobMaster and was
    /// taken (not refused).
    pub fn received(
        &mut self,
        graph: &ExecutionGraph,
        (tm, process): (u32, u32),
        what: Received,
        (now, index): (Instant, u64),
    ) {
        if let Received::Partition { subtask, attempt } = what {
            self.tracked
                .reported((tm, process), (subtask, attempt), (now, index));
            if let Some(cleaned) = self.retention.reported(tm, (subtask, attempt)) {
                let name = graph.subtask_name(subtask).to_string();
                self.violate(
                    Invariant::MinimalRerun,
                    now,
                    index,
                    vec![format!("TaskManager{tm}"), name.clone()],
                    format!(
                        "TaskManager{tm} reported the partition of {name} (attempt {attempt}), \
                         but it found no JobManager within registration_timeout and had to \
                         release it at {cleaned} (F2.5); the partition is missing and {name} \
                         must run again (P2.4 step 4)"
                    ),
                );
            }
        }
        self.reconcile.received(graph, (tm, process), what);
        self.reconcile.note_complete(now);
    }

    /// A partition report reached the current JobMaster.
    pub fn report_arrived(
        &mut self,
        subtask: SubtaskId,
        attempt: u32,
        (tm, process): (u32, u32),
        now: Instant,
        index: u64,
    ) {
        if let Some(w) = self.window.as_mut() {
            w.reports.insert((subtask, attempt, tm, process));
        } else if self.after_window && !self.kept.contains(&(subtask, attempt)) {
            self.late.push((subtask, attempt, tm, now, index, false));
        }
    }

    pub fn observe(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: &TraceEvent,
    ) {
        if let Some(message) = self.rpcs.observe(event) {
            let actors = vec!["JobMaster".into()];
            self.violate(Invariant::FailoverScope, now, index, actors, message);
        }
        // The window's end logs its resets before the JobMaster does anything but set the
        // job's status and log the vertices it initialized.
        if !matches!(
            event,
            TraceEvent::ReconcileEnded { .. }
                | TraceEvent::JobStatus { .. }
                | TraceEvent::JobEventLogged { .. }
                | TraceEvent::JobEventsFlushed { .. }
                | TraceEvent::VertexInitialized { .. }
        ) {
            if let Some((at, at_index, stale)) = self.stale_claims.take() {
                self.check_stale_claims(graph, (at, at_index), &stale, &BTreeSet::new());
            }
        }
        // P3.4's window: only under `failover: reconcile` (FLIP-383's restart waits for no
        // "report done", so its RECONCILING never completes a window early).
        let between = self
            .reconcile_mode
            .then(|| self.reconcile.between(event, now))
            .flatten();
        if let Some(message) = between {
            self.violate(
                Invariant::ReconcileOutcome,
                now,
                index,
                vec!["JobMaster".into()],
                message,
            );
        }
        if !matches!(event, TraceEvent::ExecutionState { .. }) {
            if let Some(message) = self.executions.settle_failures(graph) {
                let actors = vec!["JobMaster".into()];
                self.violate(Invariant::FailoverScope, now, index, actors, message);
            }
        }
        if let Some(r) = self.retention.observe(now, event) {
            let deadline = match r.deadline {
                Some(d) => format!("its registration timeout runs out at {d}"),
                None => "no registration timeout is configured".into(),
            };
            let message = format!(
                "TaskManager {} releases the partition of {} (attempt {}) while it has had no \
                 leader since {}, at neither instant that releases one: the loss itself (F2.1) \
                 or the registration timeout counted from it (F2.5; {deadline}). A leaderless \
                 TaskManager takes no JobMaster's RPC",
                r.tm,
                graph.subtask_name(r.subtask),
                r.attempt,
                r.since
            );
            let actors = vec![format!("TaskManager{}", r.tm)];
            self.violate(Invariant::MinimalRerun, now, index, actors, message);
        }
        if let Some(message) = self.leadership.observe(now, event) {
            let actors = vec!["TaskManager".into()];
            self.violate(Invariant::FailoverScope, now, index, actors, message);
        }
        if let Some((at, at_index, message)) = self.tracked.observe(graph, (now, index), event) {
            let actors = vec!["JobMaster".into()];
            self.violate(Invariant::MinimalRerun, at, at_index, actors, message);
        }
        if let Some(message) = self.speculation.observe(graph, now, event) {
            self.violate(
                Invariant::Speculation,
                now,
                index,
                vec!["JobMaster".into()],
                message,
            );
        }
        match *event {
            TraceEvent::JobStatus { from, to } => {
                self.job_reconciling = to == JobStatus::Reconciling;
                self.job_terminal = to.is_terminal();
                // P2.2, P2.7: the last vertex's finish flushed the log, so a crash before the
                // job's result is durable finds the job finished.
                let buffered = self.buffered();
                if to == JobStatus::Finished && buffered > 0 {
                    self.violate(
                        Invariant::MinimalRerun,
                        now,
                        index,
                        vec!["JobMaster".into()],
                        format!(
                            "the job is FINISHED with {buffered} job event{} still in the write \
                             buffer: a finished vertex flushes the log (P2.2), or a JobManager \
                             crash before the job's result is durable (P2.7) runs them again",
                            if buffered == 1 { "" } else { "s" }
                        ),
                    );
                }
                if to == JobStatus::Finished {
                    self.result_due = Some(now + self.batch.job_result_delay);
                }
                if !transitions::job(from, to) {
                    self.violate(
                        Invariant::LegalTransition,
                        now,
                        index,
                        vec!["JobMaster".into()],
                        format!("job status {from} → {to} is not in the transition table"),
                    );
                }
                if to == JobStatus::Reconciling {
                    let durable = &self.log[..self.durable.min(self.log.len())];
                    self.reconcile.open(graph, durable, now);
                    self.window = Some(Window {
                        started: now,
                        reports: BTreeSet::new(),
                        gone: BTreeSet::new(),
                        recovered: BTreeSet::new(),
                    });
                }
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            }
            | TraceEvent::TaskState {
                subtask,
                attempt,
                from,
                to,
            } => {
                let executions = &mut self.executions;
                let (invariant, found) = match event {
                    TraceEvent::ExecutionState { .. } => {
                        self.reconcile.execution_state(subtask, attempt, to);
                        if to == ExecutionState::Finished {
                            self.finished_attempt.insert(subtask, attempt);
                        }
                        let found = executions.jm_state(graph, subtask, attempt, (from, to));
                        (Invariant::LegalTransition, found)
                    }
                    _ => {
                        let found = executions.task_state(graph, subtask, attempt, (from, to));
                        (Invariant::SlotCapacity, found)
                    }
                };
                if let Some(message) = found {
                    let actors = vec![graph.subtask_name(subtask).to_string()];
                    self.violate(invariant, now, index, actors, message);
                }
                if !transitions::execution(from, to) {
                    self.violate(
                        Invariant::LegalTransition,
                        now,
                        index,
                        vec![graph.subtask_name(subtask).to_string()],
                        format!("execution state {from} → {to} is not in the transition table"),
                    );
                }
                if let (
                    TraceEvent::ExecutionState { .. },
                    ExecutionState::Created,
                    ExecutionState::Finished,
                ) = (event, from, to)
                {
                    if let Some(w) = self.window.as_mut() {
                        w.recovered.insert(subtask);
                    }
                }
            }
            TraceEvent::JobMasterLost { .. } => {
                // P2.2: the write buffer dies with the JobManager, whatever it believes.
                self.buffer_lost_at_crash = Some(self.buffered());
                self.log.truncate(self.durable);
                self.window = None;
                self.after_window = false;
                self.result_due = None;
                self.reconcile.leader_changed();
                self.executions.leader_changed();
                self.unlogged_resets.clear();
            }
            TraceEvent::JobResultWritten => {
                // P2.7: the write of the JobMaster that finished the job, and of no other.
                if self.result_due != Some(now) {
                    let why = match self.result_due {
                        Some(due) => format!("the job's FINISHED makes it due at {due}"),
                        None => "no JobMaster leading now finished the job".to_owned(),
                    };
                    self.violate(
                        Invariant::MinimalRerun,
                        now,
                        index,
                        vec!["JobMaster".into()],
                        format!(
                            "the job's result is written to HA storage at {now}, but {why} \
                             (P2.7: it is written batch.job_result_delay after the FINISHED of \
                             the JobMaster still leading; a crash in between leaves the job \
                             running for the next one)"
                        ),
                    );
                }
            }
            TraceEvent::JobMasterElected { .. } => {
                self.reconcile.leader_changed();
                self.executions.leader_changed();
                self.writes_failed = false;
            }
            TraceEvent::FaultFired { fault, .. } => {
                self.fired.push(fault);
                match fault {
                    // F2.3: the failed write loses the buffer; nothing more is logged.
                    FaultEvent::JobEventsWriteFailure => {
                        if !self.writes_failed {
                            self.buffer_lost_at_write = Some(self.buffered());
                        }
                        self.log.truncate(self.durable);
                        self.writes_failed = true;
                    }
                    FaultEvent::JobEventsReadFailure => self.unreadable = true,
                    FaultEvent::FailTask(_)
                    | FaultEvent::LoseTaskManager(_)
                    | FaultEvent::DisconnectTaskManager(_)
                    | FaultEvent::CrashJobMaster
                    | FaultEvent::DelaySpike
                    | FaultEvent::RpcLoss
                    | FaultEvent::TriggerTask { .. }
                    | FaultEvent::FailSnapshot { .. }
                    | FaultEvent::HoldChannel(_)
                    | FaultEvent::StopWithSavepoint { .. } => {}
                }
            }
            TraceEvent::RestartsExhausted { failovers } => {
                if let Some(v) = job_status::gave_up(failovers, self.max_attempts, now, index) {
                    self.violations.push(v);
                }
            }
            TraceEvent::TaskManagerLost { task_manager } => {
                self.lost_task_managers.insert(task_manager);
            }
            TraceEvent::TaskManagerTimedOut { task_manager } => {
                // P1.8, P2.8: a running JobMaster fails what it deployed there (a recovering
                // one has deployed nothing yet; a reconcile window settles as a whole).
                if !self.job_reconciling && !self.job_terminal {
                    self.executions.timed_out(task_manager);
                }
                // P2.3: what survives is what live TaskManagers the JobMaster still knows hold,
                // inside P2.4's wait and inside a reconcile window (P3) alike: a window that
                // ends RUNNING or FINISHED adopts the reports as a whole (and this P2.4 ledger
                // is dropped), one that ends FAILING goes on to P2.4 without what the timed-out
                // TaskManager reported.
                self.reconcile.timed_out(task_manager);
                self.reconcile.note_complete(now);
                if let Some(w) = self.window.as_mut() {
                    let lost: Vec<_> = w
                        .reports
                        .iter()
                        .filter(|r| r.2 == task_manager)
                        .copied()
                        .collect();
                    for report in lost {
                        w.reports.remove(&report);
                        w.gone.insert(report);
                    }
                }
            }
            // P3.4: a reconciliation that ends RUNNING or FINISHED recovers nothing by P2.4;
            // one that ends FAILING goes on to P2.4 in the same window.
            // F2.4's "late reports are released" belongs to P2.4: after a reconciliation
            // that adopted the reported partitions there is nothing it must release.
            TraceEvent::ReconcileEnded {
                outcome,
                reported,
                missing,
            } => {
                let ended = (outcome, reported, missing);
                let known = self.reconcile.known();
                // Taken before `ended` closes the ledger's window.
                let reported_partitions = (outcome == crate::trace::ReconcileOutcome::Failing)
                    .then(|| self.reconcile.reported_partitions());
                if let Some(message) =
                    self.reconcile
                        .ended(graph, &self.batch, &self.remote, ended, now)
                {
                    self.violate(
                        Invariant::ReconcileOutcome,
                        now,
                        index,
                        vec!["JobMaster".into()],
                        message,
                    );
                }
                // P2.2: a finish the durable log claims that the window did not keep (forgotten
                // and run again, or another attempt adopted) is reset in the log.
                if outcome == crate::trace::ReconcileOutcome::Running && self.must_log_resets(false)
                {
                    let durable = &self.log[..self.durable.min(self.log.len())];
                    let replayed = Self::replay(graph, durable).finished;
                    let mut stale = BTreeSet::new();
                    for (s, attempt) in self.durably_finished() {
                        let held = self.reconcile.holds(s);
                        if held != Some((attempt, ExecutionState::Finished)) {
                            self.unlogged_resets.insert(s);
                        }
                        // A claim the window kept stands only if a recovery would keep it too.
                        let kept = replayed
                            .get(&s)
                            .map(|&(a, _)| (a, ExecutionState::Finished));
                        if kept.is_none() || held != kept {
                            stale.insert(s);
                        }
                    }
                    self.stale_claims = Some((now, index, stale));
                }
                // P3.2 (as P2.4 step 1 does from the replayed events): a window that ends
                // RUNNING or FINISHED re-initializes every vertex it knows, with the
                // parallelism of the durable job events or, failing those, of a reported
                // execution. That parallelism may have been decided before a full restart
                // cleared `decided` (the reported execution outlived it), so it is taken from
                // this oracle's own ledger of the window, and the vertex's consumers may be
                // initialized next. A FAILING window goes on to P2.4 from the durable events.
                if outcome != crate::trace::ReconcileOutcome::Failing {
                    for (v, p) in known.into_iter().flatten().enumerate() {
                        if p.is_some() {
                            self.decided[v] = p;
                        }
                    }
                }
                for (s, attempt, tm) in std::mem::take(&mut self.reconcile.unadopted) {
                    self.unadopted.push((s, attempt, tm, now, index, false));
                }
                // P3.2 with P2.4: a window that ends FAILING recovers from the durable job
                // events on a fresh graph, which uses a reported partition only if the log
                // names exactly that attempt in exactly that place; every other one is
                // released (and all of them if the log cannot be replayed).
                if let Some(reported_partitions) = reported_partitions {
                    let durable = &self.log[..self.durable.min(self.log.len())];
                    let replayed = Self::replay(graph, durable).finished;
                    for (s, attempt, location) in reported_partitions {
                        if let Location::TaskManager { task_manager, .. } = location {
                            if replayed.get(&s) != Some(&(attempt, location)) {
                                self.unadopted
                                    .push((s, attempt, task_manager, now, index, false));
                            }
                        }
                    }
                }
                if outcome != crate::trace::ReconcileOutcome::Failing && self.window.is_some() {
                    self.window = None;
                    self.after_window = false;
                }
            }
            other => self.observe_batch(graph, index, now, other),
        }
    }

    fn observe_batch(
        &mut self,
        graph: &ExecutionGraph,
        index: u64,
        now: Instant,
        event: TraceEvent,
    ) {
        match event {
            TraceEvent::JobEventsFlushed { events, .. } => {
                // P2.2: a flush writes the whole buffer, so it says how much that was.
                let buffered = self.buffered();
                self.check_log_figure(
                    (now, index),
                    "flushed",
                    events,
                    (buffered > 0).then_some(buffered),
                );
                self.durable = (self.durable + events as usize).min(self.log.len());
            }
            TraceEvent::JobEventsLost { events } => {
                // P2.2: recorded only when a crash lost something, and then exactly that.
                let lost = self.buffer_lost_at_crash.take().filter(|&n| n > 0);
                self.check_log_figure((now, index), "lost at the crash", events, lost);
            }
            TraceEvent::JobEventsWriteFailed { events } => {
                // F2.3: the failed write loses the whole buffer.
                let lost = self.buffer_lost_at_write.take();
                self.check_log_figure((now, index), "lost to the failed write", events, lost);
            }
            TraceEvent::Deployed {
                subtask,
                attempt,
                task_manager,
                speculative,
            } => {
                self.executions
                    .deployed(subtask, attempt, task_manager, speculative);
                if let Some(&s) = self.unlogged_resets.first() {
                    self.unlogged_resets.clear();
                    self.violate(
                        Invariant::MinimalRerun,
                        now,
                        index,
                        vec!["JobMaster".into(), graph.subtask_name(s).to_string()],
                        format!(
                            "the JobMaster deploys again, but the reset of {} is not in the \
                             job event log (P2.2: a reset is logged, or a later recovery trusts \
                             the finish it undid)",
                            graph.subtask_name(s)
                        ),
                    );
                }
            }
            // P2.2: a reset is logged before the JobMaster deploys again (unless it need not
            // be: the ledger of durable events then keeps the finish, as Flink's log does).
            TraceEvent::SubtaskReset { subtask, .. }
                if self.must_log_resets(self.job_reconciling) =>
            {
                self.unlogged_resets.insert(subtask);
            }
            TraceEvent::JobEventLogged { .. } if self.writes_failed => {
                self.writes_failed = false; // once per JobMaster
                self.violate(
                    Invariant::MinimalRerun,
                    now,
                    index,
                    vec!["JobMaster".into()],
                    "the JobMaster logs a job event after its job event store failed to write \
                     (F2.3: it logs nothing more for the rest of its life), so a later recovery \
                     would trust an event the store never took"
                        .into(),
                );
            }
            TraceEvent::RecoveryStarted {
                full_restart: false,
                ..
            } if self.unreadable => {
                self.unreadable = false;
                self.violate(
                    Invariant::MinimalRerun,
                    now,
                    index,
                    vec!["JobMaster".into()],
                    "the new JobMaster replays job events that could not be read back (F2.4 \
                     step 5: the log is deleted and the job restarts in full)"
                        .into(),
                );
            }
            TraceEvent::RecoveryStarted {
                full_restart: false,
                ..
            } => {
                let durable = &self.log[..self.durable.min(self.log.len())];
                self.tracked
                    .recovery_started(&Self::replay(graph, durable).finished);
            }
            TraceEvent::RecoveryStarted {
                full_restart: true, ..
            } => {
                self.unreadable = false;
                self.log.clear();
                self.durable = 0;
                self.after_window = true;
                self.decided.fill(None);
            }
            TraceEvent::PartitionWritten {
                subtask,
                attempt,
                bytes,
                remote,
            } => {
                self.written[subtask.index()] = bytes;
                self.written_by.insert((subtask, attempt), bytes);
                // P2.1: the partition lives where the scenario's shuffle puts it, and what
                // survives a TaskManager (P2.4) depends on it.
                let want_remote = self.batch.shuffle == crate::scenario::ShuffleKind::Remote;
                if remote != want_remote {
                    let place = |r: bool| {
                        if r {
                            "the remote shuffle service"
                        } else {
                            "its TaskManager"
                        }
                    };
                    self.violate(
                        Invariant::MinimalRerun,
                        now,
                        index,
                        vec![graph.subtask_name(subtask).to_string()],
                        format!(
                            "{} wrote its partition on {}, but the scenario's shuffle keeps \
                             partitions on {} (P2.1)",
                            graph.subtask_name(subtask),
                            place(remote),
                            place(want_remote)
                        ),
                    );
                }
                if remote {
                    self.remote.insert((subtask, attempt));
                }
            }
            TraceEvent::VertexInitialized {
                vertex,
                parallelism,
                input_bytes,
                adaptive,
            } => {
                let claimed = (parallelism, input_bytes, adaptive);
                if let Some(message) = self.check_parallelism(graph, vertex, claimed) {
                    let name = graph.vertices[vertex.index()].name.clone();
                    self.violate(
                        Invariant::AdaptiveParallelism,
                        now,
                        index,
                        vec!["JobMaster".into(), name],
                        message,
                    );
                }
                self.decided[vertex.index()] = Some(parallelism);
            }
            TraceEvent::PartitionReleased {
                subtask,
                attempt,
                remote: true,
            } => {
                self.remote.remove(&(subtask, attempt));
            }
            TraceEvent::ReleaseRequested {
                subtask, attempt, ..
            } => {
                for late in self.late.iter_mut().chain(&mut self.unadopted) {
                    if (late.0, late.1) == (subtask, attempt) {
                        late.5 = true;
                    }
                }
            }
            TraceEvent::RecoveryEnded { .. } => {
                if let Some(w) = self.window.take() {
                    let before = self.violations.len();
                    self.check_recovery(graph, index, now, &w);
                    self.after_window = true;
                    // Where the recovery's resets need not be logged, the claims stay in the
                    // log on purpose: a later recovery checks them against the partitions
                    // reported.
                    if self.violations.len() == before && self.must_log_resets(true) {
                        self.check_claims_after_recovery(graph, index, now);
                    }
                }
            }
            _ => {}
        }
    }

    fn violate(
        &mut self,
        invariant: Invariant,
        time: Instant,
        event_index: u64,
        actors: Vec<String>,
        message: String,
    ) {
        // One violation per invariant is enough to fail a run; the first is the useful one.
        if self.violations.iter().any(|v| v.invariant == invariant) {
            return;
        }
        self.violations.push(Violation {
            invariant,
            time,
            actors,
            event_index,
            message,
        });
    }

    /// The end-of-run checks: the committed output, late partitions released, and every
    /// refused RPC applied or made moot: `current` says, per subtask, the JobMaster's attempt
    /// and its state, and per TaskManager its live process.
    pub fn finish(
        mut self,
        graph: &ExecutionGraph,
        status: JobStatus,
        committed: &[(SubtaskId, Vec<Fragment>)],
        (now, last_index): (Instant, u64),
        current: &Current,
    ) -> Vec<Violation> {
        let (attempts, processes) = (&current.attempts, &current.processes);
        if let Some((at, at_index, stale)) = self.stale_claims.take() {
            self.check_stale_claims(graph, (at, at_index), &stale, &BTreeSet::new());
        }
        if let Some(message) = self.executions.settle_failures(graph) {
            let actors = vec!["JobMaster".into()];
            self.violate(Invariant::FailoverScope, now, last_index, actors, message);
        }
        if let Some(message) = self.leadership.finish(now) {
            let actors = vec!["TaskManager".into()];
            self.violate(Invariant::FailoverScope, now, last_index, actors, message);
        }
        if let Some((at, at_index, message)) = self.tracked.finish(graph) {
            let actors = vec!["JobMaster".into()];
            self.violate(Invariant::MinimalRerun, at, at_index, actors, message);
        }
        if let Some(message) = self.speculation.finish(graph) {
            let actors = vec!["JobMaster".into()];
            self.violate(Invariant::Speculation, now, last_index, actors, message);
        }
        for r in self.rpcs.unapplied() {
            let (s, attempt, tm) = (r.rpc.subtask, r.rpc.attempt, r.tm);
            // Moot: the attempt was superseded, its TaskManager is gone, or the JobMaster
            // already holds the execution terminal (a report carried what the RPC said).
            let moot = match attempts[s.index()] {
                Some((current, state)) => current != attempt || state.is_terminal(),
                None => true,
            };
            let sender_gone = processes[tm as usize] != Some(r.process);
            if !moot && !sender_gone {
                self.violate(
                    Invariant::NoLostRpc,
                    r.at,
                    r.index,
                    vec![
                        format!("TaskManager{tm}"),
                        graph.subtask_name(s).to_string(),
                    ],
                    format!(
                        "an RPC of {} (attempt {attempt}) refused while reconciling was never \
                         applied (P3.3: kept and retried until accepted)",
                        graph.subtask_name(s)
                    ),
                );
            }
        }
        // F2.4: a late report is answered by a release; P3.2: so is a reported partition the
        // rebuilt view does not keep. Either may go unanswered only if its TaskManager died.
        let late = std::mem::take(&mut self.late);
        self.unreleased(graph, &late, Invariant::MinimalRerun, |name, attempt, _| {
            format!(
                "the partition of {name} (attempt {attempt}) was reported after recovery ended \
                 and never released (F2.4: a late report is answered by a release)"
            )
        });
        let unadopted = std::mem::take(&mut self.unadopted);
        self.unreleased(
            graph,
            &unadopted,
            Invariant::ReconcileOutcome,
            |name, attempt, tm| {
                format!(
                    "TaskManager{tm} reported the partition of {name} (attempt {attempt}), which \
                 the JobMaster did not keep, and it was never released (P3.2: what the rebuilt \
                 view does not track is released)"
                )
            },
        );
        if status == JobStatus::Finished {
            self.check_output(graph, committed, now, last_index);
        }
        let subtasks = graph.subtasks.len() as u64;
        let judged = job_status::judge(
            status,
            &self.fired,
            0, // a batch job takes no checkpoints
            subtasks,
            self.max_attempts,
            now,
            last_index,
        );
        self.violations.extend(judged);
        self.violations
    }

    /// Each partition of `reported` (subtask, attempt, TaskManager, when, event, answered by
    /// a release) that no release answered, while its TaskManager lived, is a violation.
    fn unreleased(
        &mut self,
        graph: &ExecutionGraph,
        reported: &[(SubtaskId, u32, u32, Instant, u64, bool)],
        invariant: Invariant,
        message: impl Fn(&str, u32, u32) -> String,
    ) {
        for &(s, attempt, tm, at, index, answered) in reported {
            if !answered && !self.lost_task_managers.contains(&tm) {
                let name = graph.subtask_name(s).to_string();
                let text = message(&name, attempt, tm);
                self.violate(
                    invariant,
                    at,
                    index,
                    vec![format!("TaskManager{tm}"), name],
                    text,
                );
            }
        }
    }

    /// `exactly-once-output`: per sink vertex, every split of every upstream source exactly
    /// once per path from that source.
    fn check_output(
        &mut self,
        graph: &ExecutionGraph,
        committed: &[(SubtaskId, Vec<Fragment>)],
        now: Instant,
        index: u64,
    ) {
        let vertices = graph.vertices.len();
        // paths[a][b]: the number of paths from vertex a to vertex b.
        let mut paths = vec![vec![0u64; vertices]; vertices];
        for &v in graph.topological_order.iter().rev() {
            paths[v.index()][v.index()] = 1;
            for &e in &graph.vertices[v.index()].outputs {
                let to = graph.edges[e].to.index();
                let downstream = paths[to].clone();
                for (total, n) in paths[v.index()].iter_mut().zip(downstream) {
                    *total += n;
                }
            }
        }
        for (sink, vertex) in graph.vertices.iter().enumerate() {
            if !vertex.outputs.is_empty() {
                continue;
            }
            let mut got: BTreeMap<(VertexId, u32), u64> = BTreeMap::new();
            for (s, fragments) in committed {
                if graph.subtasks[s.index()].vertex.index() != sink {
                    continue;
                }
                for f in fragments {
                    *got.entry((f.source, f.split)).or_default() += f.records;
                }
            }
            for (source, c) in self.batch.coordinators.iter().enumerate() {
                let Some(c) = c else { continue };
                let k = paths[source][sink];
                let per_split = data::records_per_split(graph, VertexId(source as u32));
                for split in 0..c.splits {
                    let want = k * per_split;
                    let have = got.remove(&(VertexId(source as u32), split)).unwrap_or(0);
                    if have != want {
                        let src = &graph.vertices[source].name;
                        self.violate(
                            Invariant::ExactlyOnceOutput,
                            now,
                            index,
                            vec![vertex.name.clone()],
                            format!(
                                "{} committed {have} records of split {split} of {src}, \
                                 expected {want} ({}): the split was {}",
                                vertex.name,
                                if k == 1 {
                                    "once".to_owned()
                                } else {
                                    format!("once per each of {k} paths")
                                },
                                if have < want {
                                    "lost"
                                } else {
                                    "read more than once"
                                }
                            ),
                        );
                        return;
                    }
                }
            }
        }
    }
}
