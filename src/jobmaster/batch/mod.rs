//! The JobMaster of a batch job (P2): its view of every execution, the partition tracker, the
//! split enumerators, and what it does with each message it receives.
//!
//! One module per concern, all methods of the world's batch half ([`Batch`]), which holds the
//! JobMaster's state (`Batch::jm`) beside the TaskManagers': `scheduler` (the adaptive batch
//! scheduler, failover, resets and releases), `job_events` (the job event log's write buffer),
//! `job_recovery` (FLIP-383 recovery on a new JobMaster, P2.4), `speculation` (P2.8) and
//! `reconcile` (P3 for batch jobs, the JobMaster's side, with the window both modes share,
//! `super::reconcile::window`; the TaskManager's side is `crate::taskmanager::reconcile`). The
//! streaming JobMaster is [`super::JobMaster`].

mod job_events;
mod job_recovery;
pub(crate) mod reconcile;
mod scheduler;
pub(crate) mod speculation;

use crate::batch::data::{self, Fragment};
use crate::batch::events::{JobEvent, Location, Replayed, Snapshot};
use crate::batch::oracle::Received;
use crate::bug::Bug;
use crate::coordinator::Enumerator;
use crate::graph::{SubtaskId, VertexId};
use crate::scenario::ShuffleKind;
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{FlushReason, RerunReason, TraceEvent};
use crate::world::batch::{Batch, Msg};
use crate::world::Event;
use sim::{Duration, Instant, Scheduler};
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

/// The JobMaster: volatile, rebuilt by every elected leader.
pub(crate) struct JobMaster {
    pub incarnation: u32,
    pub status: JobStatus,
    pub(crate) exec: Vec<Execution>,
    /// Per vertex: the decided parallelism, once initialized.
    pub parallelism: Vec<Option<u32>>,
    /// Per producer subtask: its tracked partition (attempt, location, bytes).
    pub tracker: Vec<Option<(u32, Location, u64)>>,
    pub enumerators: Vec<Option<Enumerator>>,
    /// P2.5 rule 2: a coordinator without batch snapshots whose subtasks all finished.
    pub remembered: Vec<bool>,
    pub(crate) registered: Vec<Option<u32>>,
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
    pub(crate) restarts: u32,
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

impl Batch {
    pub(crate) fn jm_receives(&mut self, sched: &mut Scheduler<'_, Event>, tm: u32, msg: Msg) {
        let now = sched.now();
        let process = self.tms[tm as usize].process;
        let index = self.trace.len().saturating_sub(1);
        if let Some(what) = msg.received() {
            self.oracles
                .received(&self.graph, (tm, process), what, (now, index));
        }
        if let Some(rpc) = msg.task_rpc() {
            self.oracles
                .rpc_applied(&self.graph, (tm, process), rpc, (now, index));
        }
        match msg {
            Msg::Register => {
                // A new process under the same number: the old one is gone for good.
                let old = self.jm.as_ref().expect("alive").registered[tm as usize];
                if let Some(old) = old.filter(|&old| old != process) {
                    self.lose_task_manager(sched, tm, old);
                }
                self.expected_task_managers[tm as usize] = Some(process);
                let index = self.trace.len().saturating_sub(1);
                self.oracles
                    .received(&self.graph, (tm, process), Received::Register, (now, index));
                let jm = self.jm.as_mut().expect("alive");
                jm.registered[tm as usize] = Some(process);
                jm.accounted[tm as usize] = self.reconcile.is_none();
                jm.slots_used[tm as usize] = 0;
                // P3.2: a TaskManager that registers in the window reports next (same link):
                // the window waits for the whole report.
                if let Some(rec) = jm.reconciling.as_mut() {
                    rec.expect(tm, process);
                }
                // F2.4 step 1: every TaskManager that registers is asked for the partitions
                // it kept; outside recovery they are all answered by a release. Under
                // reconciliation it reports them unasked, with its executions (P3.2).
                if self.reconcile.is_none() {
                    self.send_to_task_manager(sched, tm, Msg::AskPartitions);
                }
                self.schedule(sched);
            }
            Msg::Report {
                subtask,
                attempt,
                bytes,
            } => {
                if self.jm.as_ref().expect("alive").reconciling.is_some() {
                    self.reconcile_partition(sched, tm, (subtask, attempt), bytes);
                } else {
                    self.on_report(sched, tm, (subtask, attempt), bytes);
                }
            }
            Msg::ReportExecution {
                subtask,
                attempt,
                state,
                parallelism,
            } => self.on_report_execution(sched, tm, (subtask, attempt), state, parallelism),
            Msg::ReportSplit {
                subtask,
                attempt,
                split,
            } => self.on_report_split(subtask, attempt, split),
            Msg::ReportInput {
                subtask,
                attempt,
                producer,
                producer_attempt,
            } => self.on_report_input((subtask, attempt), (producer, producer_attempt)),
            Msg::ReportDone => self.on_report_done(sched, tm),
            Msg::Running { subtask, attempt } => {
                if self.current(subtask, attempt, ExecutionState::Deploying) {
                    self.exec_state(now, subtask, ExecutionState::Initializing);
                    self.exec_state(now, subtask, ExecutionState::Running);
                } else if self.is_spec(subtask, attempt, ExecutionState::Deploying) {
                    self.spec_state(now, subtask, ExecutionState::Initializing);
                    self.spec_state(now, subtask, ExecutionState::Running);
                }
            }
            Msg::RequestSplit { subtask, attempt } => {
                let jm = self.jm.as_ref().expect("alive");
                let e = jm.exec[subtask.index()];
                if e.attempt != attempt || e.state.is_terminal() {
                    return;
                }
                let vertex = self.graph.subtasks[subtask.index()].vertex;
                let index = self.graph.subtasks[subtask.index()].index;
                let jm = self.jm.as_mut().expect("alive");
                let split = jm.enumerators[vertex.index()]
                    .as_mut()
                    .expect("a source has an enumerator")
                    .next_split(index);
                self.record(
                    now,
                    TraceEvent::SplitAssigned {
                        subtask,
                        attempt,
                        split,
                    },
                );
                self.send_to_task_manager(
                    sched,
                    tm,
                    Msg::AssignSplit {
                        subtask,
                        attempt,
                        split,
                    },
                );
            }
            Msg::Finished { subtask, attempt } => {
                // P2.8: a speculative attempt that finishes first becomes the current one.
                if self.is_spec(subtask, attempt, ExecutionState::Running) {
                    self.spec_won(subtask, attempt);
                }
                // P2.8: a cancelled attempt that finished before its cancel arrived wrote a
                // partition nobody reads: release it.
                let jm = self.jm.as_mut().expect("alive");
                if jm.orphans.remove(&(subtask, attempt)) {
                    let location = self.location_of(tm);
                    self.release(sched, subtask, attempt, location);
                    return;
                }
                self.on_finished(sched, tm, subtask, attempt);
            }
            Msg::Failed {
                subtask,
                attempt,
                missing,
            } => {
                let jm = self.jm.as_ref().expect("alive");
                let spec = jm.spec[subtask.index()].filter(|e| e.attempt == attempt);
                if let Some(e) = spec.filter(|e| !e.state.is_terminal()) {
                    // P2.8: a failed speculative attempt only makes room for another; the
                    // original goes on. A missing partition fails the vertex over as usual.
                    let _ = e;
                    self.spec_state(now, subtask, ExecutionState::Failed);
                    self.free_spec_slot(subtask);
                    self.jm.as_mut().expect("alive").spec[subtask.index()] = None;
                    if missing.is_none() {
                        return;
                    }
                } else {
                    let e = jm.exec[subtask.index()];
                    if e.attempt != attempt || e.state.is_terminal() {
                        return;
                    }
                    self.exec_state(now, subtask, ExecutionState::Failed);
                    self.free_slot(subtask);
                    if missing.is_none() && self.spec_live(subtask) {
                        // P2.8: the speculative attempt may still finish: it carries on alone.
                        self.promote_spec(subtask);
                        self.jm.as_mut().expect("alive").spec[subtask.index()] = None;
                        return;
                    }
                }
                let mut seeds = vec![(subtask, RerunReason::Failover)];
                if let Some(producer) = missing {
                    // The partition is gone: stop tracking it; its producer runs again.
                    let jm = self.jm.as_mut().expect("alive");
                    if jm.tracker[producer.index()].is_some() {
                        jm.tracker[producer.index()] = None;
                    }
                    seeds.push((producer, RerunReason::PartitionMissing));
                }
                self.failover(sched, seeds);
            }
            Msg::Deploy { .. }
            | Msg::Cancel { .. }
            | Msg::Release { .. }
            | Msg::AskPartitions
            | Msg::AssignSplit { .. } => unreachable!("a TaskManager message"),
        }
    }

    pub(crate) fn current(&self, subtask: SubtaskId, attempt: u32, state: ExecutionState) -> bool {
        let e = self.jm.as_ref().expect("alive").exec[subtask.index()];
        e.attempt == attempt && e.state == state
    }

    pub(crate) fn exec_state(&mut self, now: Instant, subtask: SubtaskId, to: ExecutionState) {
        let jm = self.jm.as_mut().expect("alive");
        let e = &mut jm.exec[subtask.index()];
        let from = e.state;
        e.state = to;
        let attempt = e.attempt;
        self.record(
            now,
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                from,
                to,
            },
        );
    }

    pub(crate) fn set_job_status(&mut self, now: Instant, to: JobStatus) {
        let jm = self.jm.as_mut().expect("alive");
        let from = jm.status;
        jm.status = to;
        self.record(now, TraceEvent::JobStatus { from, to });
    }

    pub(crate) fn free_slot(&mut self, subtask: SubtaskId) {
        let jm = self.jm.as_mut().expect("alive");
        if let Some(tm) = jm.exec[subtask.index()].placed.take() {
            jm.slots_used[tm as usize] = jm.slots_used[tm as usize].saturating_sub(1);
        }
    }

    pub(crate) fn location_of(&self, tm: u32) -> Location {
        match self.batch.shuffle {
            ShuffleKind::Remote => Location::Remote,
            ShuffleKind::Internal => Location::TaskManager {
                task_manager: tm,
                process: self.tms[tm as usize].process,
            },
        }
    }

    pub(crate) fn on_finished(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        subtask: SubtaskId,
        attempt: u32,
    ) {
        let now = sched.now();
        let e = self.jm.as_ref().expect("alive").exec[subtask.index()];
        if e.attempt != attempt || e.state != ExecutionState::Running {
            return;
        }
        self.exec_state(now, subtask, ExecutionState::Finished);
        self.free_slot(subtask);
        let jm = self.jm.as_mut().expect("alive");
        let ran = e
            .deployed_at
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        jm.ran[subtask.index()] = Some(ran);
        self.first_finish_wins(sched, subtask);
        let vertex = self.graph.subtasks[subtask.index()].vertex;
        let location = self.location_of(tm);
        let bytes = self.partition_bytes(subtask, attempt);
        let jm = self.jm.as_mut().expect("alive");
        jm.tracker[subtask.index()] = Some((attempt, location, bytes));
        let vertex_done = self.vertex_finished(vertex);
        // F2.3: snapshots ride on the event when the vertex just finished or min-pause passed.
        let jm = self.jm.as_ref().expect("alive");
        let with_snapshot = vertex_done
            || jm.last_snapshot.is_none_or(|last| {
                now.saturating_duration_since(last) >= self.batch.job_events.snapshot_min_pause
            });
        let snapshot = with_snapshot.then(|| {
            Box::new(Snapshot {
                enumerators: jm
                    .enumerators
                    .iter()
                    .zip(&self.batch.coordinators)
                    .map(|(e, c)| {
                        e.clone()
                            .filter(|_| c.is_some_and(|c| c.supports_batch_snapshot))
                    })
                    .collect(),
            })
        });
        if with_snapshot {
            self.jm.as_mut().expect("alive").last_snapshot = Some(now);
        }
        self.log(
            sched,
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
        let sink = self.graph.vertices[vertex.index()].outputs.is_empty();
        let skip = sink && self.bug == Some(Bug::SkipFinalFlush);
        if vertex_done && !skip {
            // P2.2: a finished vertex closes the file: flush. For the last one this is what
            // lets a crash before the job's result is durable (P2.7) recover the job finished.
            self.flush(now, FlushReason::VertexFinished);
        }
        self.schedule(sched);
    }

    pub(crate) fn partition_bytes(&self, subtask: SubtaskId, attempt: u32) -> u64 {
        let records = |f: &[Fragment]| data::total_records(f);
        let held = self
            .remote
            .iter()
            .chain(self.tms.iter().flat_map(|t| t.partitions.iter()))
            .find(|p| p.producer == subtask && p.attempt == attempt)
            .map(|p| records(&p.fragments));
        let staged = self
            .staged
            .iter()
            .find(|(s, a, _)| *s == subtask && *a == attempt)
            .map(|(_, _, f)| records(f));
        held.or(staged).unwrap_or(0) * self.batch.record_bytes
    }

    pub(crate) fn vertex_finished(&self, vertex: VertexId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        let Some(p) = jm.parallelism[vertex.index()] else {
            return false;
        };
        let first = self.graph.vertices[vertex.index()].first;
        (first..first + p).all(|s| jm.exec[s as usize].state == ExecutionState::Finished)
    }
}

impl Batch {
    /// A JobMaster as a newly elected leader starts: nothing known, nothing registered, its
    /// executions under the next attempt ids.
    pub(crate) fn new_jobmaster(&self, incarnation: u32, now: Instant) -> JobMaster {
        let n = self.graph.subtasks.len();
        let v = self.graph.vertices.len();
        let tms = self.tms.len();
        JobMaster {
            incarnation,
            status: JobStatus::Initializing,
            exec: (0..n)
                .map(|i| Execution {
                    state: ExecutionState::Created,
                    attempt: self.next_attempt[i],
                    placed: None,
                    hold_until: Instant::ZERO,
                    deployed_at: None,
                })
                .collect(),
            parallelism: vec![None; v],
            tracker: vec![None; n],
            enumerators: vec![None; v],
            remembered: vec![false; v],
            registered: vec![None; tms],
            accounted: vec![self.reconcile.is_none(); tms],
            slots_used: vec![0; tms],
            last_snapshot: None,
            events_failed: false,
            started: now,
            restarts: 0,
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

    /// The JobMaster noticed that TaskManager `tm` (process `process`) is gone or unreachable.
    pub(crate) fn lose_task_manager(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        tm: u32,
        process: u32,
    ) {
        let now = sched.now();
        let Some(jm) = self.jm.as_mut() else { return };
        if jm.registered[tm as usize] != Some(process) {
            return;
        }
        jm.registered[tm as usize] = None;
        jm.slots_used[tm as usize] = 0;
        if self.expected_task_managers[tm as usize] == Some(process) {
            self.expected_task_managers[tm as usize] = None;
        }
        self.record(now, TraceEvent::TaskManagerTimedOut { task_manager: tm });
        self.forget_task_manager(sched, tm, process);
        let jm = self.jm.as_ref().expect("alive");
        if jm.recovering.is_some() || jm.status.is_terminal() {
            return;
        }
        let lost = Location::TaskManager {
            task_manager: tm,
            process,
        };
        let mut seeds = Vec::new();
        for s in (0..self.graph.subtasks.len() as u32).map(SubtaskId) {
            let jm = self.jm.as_ref().expect("alive");
            // P2.8: a speculative attempt on the lost TaskManager fails alone; an original
            // there whose speculative attempt runs elsewhere hands over to it.
            if jm.spec[s.index()].is_some_and(|e| e.placed == Some(tm) && !e.state.is_terminal()) {
                self.spec_state(now, s, ExecutionState::Failed);
                self.free_spec_slot(s);
                self.jm.as_mut().expect("alive").spec[s.index()] = None;
            }
            let jm = self.jm.as_ref().expect("alive");
            let e = jm.exec[s.index()];
            if e.placed == Some(tm)
                && !e.state.is_terminal()
                && e.state != ExecutionState::Created
                && self.spec_live(s)
            {
                self.exec_state(now, s, ExecutionState::Failed);
                self.free_slot(s);
                self.promote_spec(s);
                self.jm.as_mut().expect("alive").spec[s.index()] = None;
                continue;
            }
            let jm = self.jm.as_ref().expect("alive");
            let e = jm.exec[s.index()];
            if e.placed == Some(tm)
                && matches!(
                    e.state,
                    ExecutionState::Deploying
                        | ExecutionState::Initializing
                        | ExecutionState::Running
                )
            {
                self.exec_state(now, s, ExecutionState::Failed);
                self.free_slot(s);
                seeds.push((s, RerunReason::Failover));
                continue;
            }
            if jm.tracker[s.index()].is_some_and(|(_, l, _)| l == lost) {
                let needed = self.partition_needed(s);
                self.jm.as_mut().expect("alive").tracker[s.index()] = None;
                if needed {
                    seeds.push((s, RerunReason::PartitionMissing));
                }
            }
        }
        if !seeds.is_empty() {
            self.failover(sched, seeds);
        }
    }

    /// Some consumer of `s` has yet to finish (or is not even initialized).
    pub(crate) fn partition_needed(&self, s: SubtaskId) -> bool {
        let jm = self.jm.as_ref().expect("alive");
        let v = self.graph.subtasks[s.index()].vertex;
        let uninitialized = self.graph.vertices[v.index()]
            .outputs
            .iter()
            .any(|&e| jm.parallelism[self.graph.edges[e].to.index()].is_none());
        uninitialized
            || data::consumers(&self.graph, &jm.parallelism, s)
                .iter()
                .any(|c| jm.exec[c.index()].state != ExecutionState::Finished)
    }
}
