//! Processes: the first JobMaster, a JobManager crash (its volatile state and the event log's
//! write buffer are lost, P2.2) and the election of a new one. What the new JobMaster then
//! does (P2.3: reconciliation, recovery or a restart) is its own decision
//! (`crate::jobmaster::batch`, `take_over`), and so is what it does about a lost TaskManager
//! (`lose_task_manager`).

use crate::bug::Bug;
use crate::jobmaster::batch::RecoveryRecord;
use crate::jobmaster::JobMaster;
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use crate::world::batch::{Batch, Ctx};
use crate::world::Event;
use sim::{Duration, Scheduler};

impl Batch {
    pub(crate) fn start(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        for (at, index) in self.cluster.faults.timed() {
            sched.at(at, Event::Fault { index });
        }
        let jm = self.jm.insert(JobMaster::adaptive_batch(
            &self.cluster,
            self.tms.len(),
            0,
            now,
        ));
        let mut jm = jm.adaptive();
        for (t, tm) in self.tms.iter().enumerate() {
            jm.leader.register(t as u32, tm.process);
        }
        // Nothing runs anywhere yet.
        jm.scheduler.accounted.fill(true);
        // Attempt numbers of this first JobMaster's executions.
        for n in &mut self.cluster.next_attempt {
            *n = 1;
        }
        for e in &mut jm.scheduler.exec {
            e.attempt = 0;
        }
        let mut ctx = Ctx {
            cluster: &mut self.cluster,
            tms: &mut self.tms,
            sched,
        };
        jm.set_job_status(&mut ctx, JobStatus::Created);
        jm.set_job_status(&mut ctx, JobStatus::Running);
        jm.schedule(&mut ctx);
    }

    pub(crate) fn crash_jobmaster(
        &mut self,
        sched: &mut Scheduler<'_, Event>,
        restart_after: Duration,
    ) {
        let now = sched.now();
        let Some(jm) = self.jm.take() else { return };
        let incarnation = jm.incarnation();
        // A FINISHED job whose result is not durable yet is still HA storage's to recover
        // (P2.7); any other ended job is over.
        let over = jm.status() != JobStatus::Finished || self.cluster.job_result_written;
        if jm.status().is_terminal() && over {
            self.jm = Some(jm);
            return;
        }
        self.cluster
            .record(now, TraceEvent::JobMasterLost { incarnation });
        // P2.2: what was not flushed is lost, unless the bug pretends it was written.
        if self.cluster.bug == Some(Bug::TrustUnflushedEvents) {
            self.cluster.store.flush();
        } else {
            let events = self.cluster.store.lose_buffer() as u32;
            if events > 0 {
                self.cluster
                    .record(now, TraceEvent::JobEventsLost { events });
            }
        }
        self.cluster.jm_incarnation += 1;
        self.cluster.crashed_at = now;
        if self.cluster.reconcile.is_none() {
            self.cluster.recoveries.push(RecoveryRecord {
                crashed_at: now,
                ..RecoveryRecord::default()
            });
        }
        sched.after(
            self.cluster.heartbeat,
            Event::JobMasterTimeout { incarnation },
        );
        sched.after(restart_after, Event::JobMasterElected);
    }

    pub(crate) fn elect(&mut self, sched: &mut Scheduler<'_, Event>) {
        let now = sched.now();
        if self.jm.is_some() {
            return;
        }
        let incarnation = self.cluster.jm_incarnation;
        let jm = self.jm.insert(JobMaster::adaptive_batch(
            &self.cluster,
            self.tms.len(),
            incarnation,
            now,
        ));
        // Its executions took the next attempt ids.
        for n in &mut self.cluster.next_attempt {
            *n += 1;
        }
        self.cluster
            .record(now, TraceEvent::JobMasterElected { incarnation });
        jm.adaptive().take_over(&mut Ctx {
            cluster: &mut self.cluster,
            tms: &mut self.tms,
            sched,
        });
    }
}
