//! Processes: the first JobMaster, a JobManager crash (its volatile state and the event log's
//! write buffer are lost, P2.2) and the election of a new one. What the new JobMaster then
//! does (P2.3: reconciliation, recovery or a restart) is its own decision
//! (`crate::jobmaster::batch`, `take_over`), and so is what it does about a lost TaskManager
//! (`lose_task_manager`).

use crate::bug::Bug;
use crate::jobmaster::batch::RecoveryRecord;
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use crate::world::batch::Batch;
use crate::world::Event;
use sim::{Duration, Scheduler};

impl Batch {
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
        self.take_over(sched);
    }
}
