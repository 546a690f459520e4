//! `job-status`: a job fails only when the faults that fired could have used up its restart
//! strategy (P1.8: the fixed-delay strategy allows `max_attempts` restarts; the failure after
//! the last one fails the job). Faults are not failovers one for one, so the oracle bounds from
//! above how many failovers the fired faults can cause, from the fault kinds alone: a failed
//! task at most one; a lost or cut-off TaskManager at most one per subtask of the job, since
//! each failover starts from one failed execution; a JobManager crash, a delay spike or RPC
//! loss no bound at all (heartbeats may time out again and again while they last). A FAILED
//! job whose faults stay within `max_attempts` by that bound failed although the strategy
//! still allowed a restart.

use super::invariant::Invariant;
use super::Violation;
use crate::status::JobStatus;
use crate::trace::{FaultEvent, ReconcileOutcome, TraceEvent};
use sim::Instant;

/// The most failovers fault `fault` can start in a job of `subtasks` subtasks.
fn failovers_at_most(fault: FaultEvent, subtasks: u64) -> u64 {
    match fault {
        FaultEvent::FailTask(_) => 1,
        // A hold delays elements and fails nothing (a checkpoint it makes expire is judged
        // with the checkpoint failures).
        FaultEvent::TriggerTask { .. } | FaultEvent::HoldChannel(_) => 0,
        // A failed synchronous part fails its task; an asynchronous one fails nothing by
        // itself (a failover it leads to is judged with the checkpoint failures, F1.9).
        FaultEvent::FailSnapshot { sync, .. } => u64::from(sync),
        FaultEvent::LoseTaskManager(_) | FaultEvent::DisconnectTaskManager(_) => subtasks,
        // F1.11 step 5: a failed savepoint fails every task that took it, each region once.
        FaultEvent::StopWithSavepoint { .. } => subtasks,
        FaultEvent::CrashJobMaster
        | FaultEvent::DelaySpike
        | FaultEvent::RpcLoss
        | FaultEvent::JobEventsWriteFailure
        | FaultEvent::JobEventsReadFailure => u64::MAX,
    }
}

/// Judges the final `status` against the faults that `fired` and the `global` failovers that
/// too many checkpoint failures called for (F1.9, counted by `checkpoint-failures`).
pub fn judge(
    status: JobStatus,
    fired: &[FaultEvent],
    global: u64,
    subtasks: u64,
    max_attempts: u32,
    now: Instant,
    last_event: u64,
) -> Option<Violation> {
    if status != JobStatus::Failed {
        return None;
    }
    let bound: u64 = fired.iter().fold(global, |sum, &f| {
        sum.saturating_add(failovers_at_most(f, subtasks))
    });
    (bound <= u64::from(max_attempts)).then(|| Violation {
        invariant: Invariant::JobStatus,
        time: now,
        actors: vec!["JobMaster".to_owned()],
        event_index: last_event,
        message: format!(
            "the job FAILED, but the {} fault(s) that fired can cause at most {bound} \
             failover(s) and the restart strategy allows {max_attempts} restart(s) (P1.8)",
            fired.len()
        ),
    })
}

/// The JobMaster gave up after `failovers` restarts: the fixed-delay strategy gives up only
/// once it ran exactly `max_attempts` of them (P1.8).
pub fn gave_up(failovers: u32, max_attempts: u32, now: Instant, index: u64) -> Option<Violation> {
    (failovers != max_attempts).then(|| Violation {
        invariant: Invariant::JobStatus,
        time: now,
        actors: vec!["JobMaster".to_owned()],
        event_index: index,
        message: format!(
            "the restart strategy gave up after {failovers} restart(s), but it allows \
             {max_attempts} (P1.8)"
        ),
    })
}

/// P1.8 from the other side: a JobMaster restarts the job at most `max_attempts` times, and
/// the failure after the last one fails the job. The oracle counts the restarts itself, per
/// JobMaster (a new one starts with a fresh strategy): every `failover` of the pipelined-region
/// scheduler, and every full restart a reconcile window ending FAILING calls for (P3.4: the job
/// going to RESTARTING after it; a strategy already used up fails the job instead).
#[derive(Default)]
pub struct Restarts {
    counted: u32,
    /// A reconcile window ended FAILING: its restart is the next RESTARTING.
    window_failed: bool,
}

impl Restarts {
    pub fn observe(
        &mut self,
        event: &TraceEvent,
        max_attempts: u32,
        (now, index): (Instant, u64),
    ) -> Option<Violation> {
        match *event {
            TraceEvent::JobMasterElected { .. } => {
                *self = Restarts::default();
                return None;
            }
            TraceEvent::ReconcileEnded { outcome, .. } => {
                self.window_failed = outcome == ReconcileOutcome::Failing;
                return None;
            }
            TraceEvent::JobStatus {
                to: JobStatus::Restarting,
                ..
            } if std::mem::take(&mut self.window_failed) => {}
            TraceEvent::Failover { .. } => {}
            _ => return None,
        }
        self.counted += 1;
        (self.counted > max_attempts).then(|| Violation {
            invariant: Invariant::JobStatus,
            time: now,
            actors: vec!["JobMaster".to_owned()],
            event_index: index,
            message: format!(
                "the JobMaster restarts the job for the {} time, but the restart strategy \
                 allows {max_attempts} restart(s): the failure after the last one fails the job \
                 (P1.8)",
                ordinal(self.counted)
            ),
        })
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::SubtaskId;

    #[test]
    fn a_failed_job_is_judged_by_the_bound_of_its_faults() {
        let fail = FaultEvent::FailTask(SubtaskId(0));
        let at = Instant::ZERO;
        // Two failed tasks, two restarts allowed: failing is wrong.
        let v = judge(JobStatus::Failed, &[fail, fail], 0, 4, 2, at, 9).expect("a violation");
        assert_eq!((v.invariant, v.event_index), (Invariant::JobStatus, 9));
        // One more failure than allowed: failing is right.
        assert!(judge(JobStatus::Failed, &[fail, fail, fail], 0, 4, 2, at, 9).is_none());
        // A lost TaskManager may fail every subtask: up to 4 failovers.
        let lost = FaultEvent::LoseTaskManager(0);
        assert!(judge(JobStatus::Failed, &[lost], 0, 4, 3, at, 9).is_none());
        assert!(judge(JobStatus::Failed, &[lost], 0, 4, 4, at, 9).is_some());
        assert!(judge(JobStatus::Finished, &[], 0, 4, 0, at, 9).is_none());
        // A JobManager crash has no bound: no judgement.
        let crash = FaultEvent::CrashJobMaster;
        assert!(judge(JobStatus::Failed, &[crash], 0, 4, 1000, at, 9).is_none());
    }

    #[test]
    fn a_jobmaster_restarts_at_most_max_attempts_times() {
        let failover = TraceEvent::Failover {
            cause: Some(SubtaskId(0)),
            restarting: 1,
            full: false,
        };
        let at = (Instant::ZERO, 7);
        let mut restarts = Restarts::default();
        assert!(restarts.observe(&failover, 2, at).is_none());
        assert!(restarts.observe(&failover, 2, at).is_none());
        let v = restarts.observe(&failover, 2, at).expect("a third restart");
        assert_eq!((v.invariant, v.event_index), (Invariant::JobStatus, 7));
        assert!(v.message.contains("3rd time"), "{}", v.message);
        // A new JobMaster counts from zero.
        restarts.observe(&TraceEvent::JobMasterElected { incarnation: 1 }, 2, at);
        assert!(restarts.observe(&failover, 2, at).is_none());
    }

    #[test]
    fn a_failing_reconcile_window_counts_its_restart() {
        let ended = |outcome| TraceEvent::ReconcileEnded {
            outcome,
            reported: 0,
            missing: 1,
        };
        let restarting = TraceEvent::JobStatus {
            from: JobStatus::Failing,
            to: JobStatus::Restarting,
        };
        let at = (Instant::ZERO, 3);
        // max_attempts 0: a restart after a FAILING window is one too many.
        let mut restarts = Restarts::default();
        restarts.observe(&ended(ReconcileOutcome::Failing), 0, at);
        assert!(restarts.observe(&restarting, 0, at).is_some());
        // A window that ends RUNNING restarts nothing, and RESTARTING is counted only once.
        let mut restarts = Restarts::default();
        restarts.observe(&ended(ReconcileOutcome::Running), 0, at);
        assert!(restarts.observe(&restarting, 0, at).is_none());
        let mut restarts = Restarts::default();
        restarts.observe(&ended(ReconcileOutcome::Failing), 1, at);
        assert!(restarts.observe(&restarting, 1, at).is_none());
        assert!(restarts.observe(&restarting, 1, at).is_none());
    }

    #[test]
    fn ordinals_read_as_english() {
        let words: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111]
            .map(ordinal)
            .into();
        assert_eq!(
            words,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
                "111th"
            ]
        );
    }

    #[test]
    fn the_strategy_gives_up_after_exactly_max_attempts_restarts() {
        let t = Instant::ZERO;
        assert!(gave_up(3, 3, t, 0).is_none());
        for failovers in [2, 4] {
            let v = gave_up(failovers, 3, t, 9).expect("off by one");
            assert_eq!((v.invariant, v.event_index), (Invariant::JobStatus, 9));
        }
    }
}
