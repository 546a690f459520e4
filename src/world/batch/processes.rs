//! Processes: the first JobMaster, a JobManager crash (the write buffer is lost, P2.2), the
//! election of a new one (P2.3: recovery, reconciliation or a restart), and a TaskManager lost.

use crate::batch::data;
use crate::batch::events::Location;
use crate::batch::recovery;
use crate::bug::Bug;
use crate::graph::SubtaskId;
use crate::jobmaster::batch::{Execution, JobMaster, Recovering, RecoveryRecord};
use crate::status::{ExecutionState, JobStatus};
use crate::trace::{RerunReason, TraceEvent};
use crate::world::batch::Batch;
use crate::world::Event;
use sim::{Duration, Instant, Scheduler};
use std::collections::BTreeSet;

impl Batch {
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

    pub(crate) fn start(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        for (at, index) in self.faults.timed() {
            sched.at(at, Event::Fault { index });
        }
        let mut jm = self.new_jobmaster(0, now);
        for (t, tm) in self.tms.iter().enumerate() {
            jm.registered[t] = Some(tm.process);
        }
        // Nothing runs anywhere yet.
        jm.accounted.fill(true);
        // Attempt numbers of this first JobMaster's executions.
        for n in &mut self.next_attempt {
            *n = 1;
        }
        for e in &mut jm.exec {
            e.attempt = 0;
        }
        self.jm = Some(jm);
        self.set_job_status(now, JobStatus::Created);
        self.set_job_status(now, JobStatus::Running);
        self.schedule(sched);
    }

    pub(crate) fn crash_jobmaster(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        restart_after: Duration,
    ) {
        let now = sched.now();
        let Some(jm) = self.jm.take() else { return };
        let incarnation = jm.incarnation;
        // A FINISHED job whose result is not durable yet is still HA storage's to recover
        // (P2.7); any other ended job is over.
        let over = jm.status != JobStatus::Finished || self.job_result_written;
        if jm.status.is_terminal() && over {
            self.jm = Some(jm);
            return;
        }
        self.record(now, TraceEvent::JobMasterLost { incarnation });
        // P2.2: what was not flushed is lost, unless the bug pretends it was written.
        if self.bug == Some(Bug::TrustUnflushedEvents) {
            self.store.flush();
        } else {
            let events = self.store.lose_buffer() as u32;
            if events > 0 {
                self.record(now, TraceEvent::JobEventsLost { events });
            }
        }
        self.jm_incarnation += 1;
        self.crashed_at = now;
        if self.reconcile.is_none() {
            self.recoveries.push(RecoveryRecord {
                crashed_at: now,
                ..RecoveryRecord::default()
            });
        }
        sched.after(self.heartbeat, Event::JobMasterTimeout { incarnation });
        sched.after(restart_after, Event::JobMasterElected);
    }

    pub(crate) fn elect(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        if self.jm.is_some() {
            return;
        }
        let incarnation = self.jm_incarnation;
        self.jm = Some(self.new_jobmaster(incarnation, now));
        // Its executions took the next attempt ids.
        for n in &mut self.next_attempt {
            *n += 1;
        }
        self.record(now, TraceEvent::JobMasterElected { incarnation });
        self.set_job_status(now, JobStatus::Created);
        if self.reconcile.is_some() {
            self.start_reconcile(sched);
            return;
        }
        let r = self.recoveries.len() - 1;
        self.recoveries[r].elected_at = now;
        if !self.batch.recovery_enabled() || self.store.durable().is_empty() {
            self.restart_from_scratch(sched, r);
            for tm in 0..self.tms.len() as u32 {
                self.register(sched, tm);
            }
            self.schedule(sched);
            return;
        }
        // P2.4: RECONCILING while replaying and waiting for the previous TaskManagers.
        self.set_job_status(now, JobStatus::Reconciling);
        if !self.store.readable() && self.bug != Some(Bug::ReplayUnreadableLog) {
            self.replay_failed(sched, r);
            for tm in 0..self.tms.len() as u32 {
                self.register(sched, tm);
            }
            self.schedule(sched);
            return;
        }
        let replayed = self.replay_log();
        self.recoveries[r].discarded = replayed.discarded.len() as u32;
        self.record(
            now,
            TraceEvent::RecoveryStarted {
                replayed: replayed.applied as u32,
                discarded: replayed.discarded.len() as u32,
                full_restart: false,
            },
        );
        // Step 1: vertices with a logged parallelism are initialized again.
        for v in 0..self.graph.vertices.len() {
            if let Some(p) = replayed.parallelism[v] {
                self.jm.as_mut().expect("elected").parallelism[v] = Some(p);
            }
        }
        // The shuffle master's snapshot knows the remote partitions (P2.3).
        let mut awaited = BTreeSet::new();
        let reserve = recovery::reserved(&self.graph, &replayed);
        for (s, finished) in replayed.finished.iter().enumerate() {
            let Some((attempt, location, bytes)) = *finished else {
                continue;
            };
            match location {
                Location::Remote => {
                    let held = self
                        .remote
                        .iter()
                        .any(|p| p.producer.index() == s && p.attempt == attempt);
                    if held {
                        self.jm.as_mut().expect("elected").tracker[s] =
                            Some((attempt, location, bytes));
                    }
                }
                Location::TaskManager { .. } => {
                    if reserve[s] {
                        awaited.insert(SubtaskId(s as u32));
                    }
                }
            }
        }
        self.jm.as_mut().expect("elected").recovering = Some(Recovering { replayed, awaited });
        sched.after(
            self.batch.previous_worker_timeout,
            Event::WorkerTimeout { incarnation },
        );
        for tm in 0..self.tms.len() as u32 {
            self.register(sched, tm);
        }
        self.maybe_end_recovery(sched);
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
