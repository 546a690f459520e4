//! What every JobMaster keeps, whatever its scheduler: which election it won, the job's status,
//! the TaskManager processes registered with it, and the restarts counted against the restart
//! strategy. The streaming JobMaster (pipelined regions) and the batch one (the adaptive batch
//! scheduler) each hold one [`Leader`], so these rules are written once for both modes; what
//! the trace records of them the caller records through its own mode's context.

use crate::status::JobStatus;
use crate::trace::TraceEvent;

#[derive(Clone, Debug)]
pub struct Leader {
    /// Which election this JobMaster won (P0): its timers and RPCs die with it.
    pub incarnation: u32,
    pub status: JobStatus,
    /// Per TaskManager, the process registered with this JobMaster, if any: it learns of a
    /// loss by heartbeat timeout and of a replacement by its registration, and addresses only
    /// the process it knows.
    pub task_managers: Vec<Option<u32>>,
    /// Failovers counted against the restart strategy (P1.8).
    pub restarts: u32,
}

impl Leader {
    /// A newly elected JobMaster: INITIALIZING, no restart counted yet.
    pub fn new(incarnation: u32, task_managers: Vec<Option<u32>>) -> Leader {
        Leader {
            incarnation,
            status: JobStatus::Initializing,
            task_managers,
            restarts: 0,
        }
    }

    /// The job's status goes to `to`; returns what the trace records of it.
    pub fn set_status(&mut self, to: JobStatus) -> TraceEvent {
        let from = std::mem::replace(&mut self.status, to);
        TraceEvent::JobStatus { from, to }
    }

    /// P1.8: one more failover counts against a strategy that allows `allowed` restarts.
    /// `Err` once it allows no more, with what the trace records of it.
    pub fn count_restart(&mut self, allowed: u32) -> Result<(), TraceEvent> {
        self.restarts += 1;
        if self.restarts > allowed {
            return Err(TraceEvent::RestartsExhausted {
                failovers: self.restarts - 1,
            });
        }
        Ok(())
    }

    /// P3.3: while the job is RECONCILING, the JobMaster refuses every RPC of a task but a
    /// report (`report`); its TaskManager keeps the RPC and sends it again. The one rule for
    /// both modes.
    pub fn refuses(&self, report: bool) -> bool {
        self.status == JobStatus::Reconciling && !report
    }

    /// Process `process` of TaskManager `tm` registered; returns the process registered
    /// before, if any.
    pub fn register(&mut self, tm: u32, process: u32) -> Option<u32> {
        self.task_managers[tm as usize].replace(process)
    }

    /// TaskManager `tm`'s process `process` is lost. False if it was not the one registered
    /// (a replacement registered already, or it was lost before).
    pub fn lose(&mut self, tm: u32, process: u32) -> bool {
        let registered = &mut self.task_managers[tm as usize];
        let lost = *registered == Some(process);
        if lost {
            *registered = None;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strategy_gives_up_after_the_restarts_it_allows() {
        let mut leader = Leader::new(0, vec![Some(0)]);
        assert_eq!(leader.count_restart(2), Ok(()));
        assert_eq!(leader.count_restart(2), Ok(()));
        assert_eq!(
            leader.count_restart(2),
            Err(TraceEvent::RestartsExhausted { failovers: 2 })
        );
    }

    #[test]
    fn only_the_registered_process_is_lost() {
        let mut leader = Leader::new(0, vec![Some(0), None]);
        assert_eq!(leader.register(0, 1), Some(0));
        assert!(!leader.lose(0, 0), "a replacement registered already");
        assert_eq!(leader.task_managers, [Some(1), None]);
        assert!(leader.lose(0, 1));
        assert!(!leader.lose(0, 1), "lost once");
        assert_eq!(leader.task_managers, [None, None]);
    }

    #[test]
    fn only_a_reconciling_job_refuses_and_never_a_report() {
        let mut leader = Leader::new(1, Vec::new());
        for status in [
            JobStatus::Created,
            JobStatus::Reconciling,
            JobStatus::Running,
        ] {
            leader.set_status(status);
            assert!(!leader.refuses(true), "{status:?}: a report is taken");
            let refused = status == JobStatus::Reconciling;
            assert_eq!(leader.refuses(false), refused, "{status:?}");
        }
    }

    #[test]
    fn a_status_change_records_where_it_came_from() {
        let mut leader = Leader::new(3, Vec::new());
        assert_eq!(
            leader.set_status(JobStatus::Created),
            TraceEvent::JobStatus {
                from: JobStatus::Initializing,
                to: JobStatus::Created
            }
        );
        assert_eq!(leader.status, JobStatus::Created);
    }
}
