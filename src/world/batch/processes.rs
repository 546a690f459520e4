//! Processes: the first JobMaster and the election of a new one. What the new JobMaster then
//! does (P2.3: reconciliation, recovery or a restart) is its own decision
//! (`crate::jobmaster::batch`, `take_over`), and so is what it does about a lost TaskManager
//! (`lose_task_manager`); a JobManager's crash is routed by the one `fire` of both modes
//! (`crate::world::faults`), through this half's `faults.rs`, to the JobMaster
//! (`JobMaster::crash`).

use crate::jobmaster::JobMaster;
use crate::status::JobStatus;
use crate::trace::TraceEvent;
use crate::world::batch::{Batch, Ctx};
use crate::world::Event;
use sim::Scheduler;

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
