//! The transition tables: which job-status and execution-state changes are legal.
//!
//! Flink itself only forbids leaving a terminal state (`docs/rules.md` F2.6). Ours
//! are tighter on purpose: each table admits exactly the edges the modelled protocols use, and
//! every row says which rule uses it, so an edge that no protocol should take is a
//! `legal-transition` violation. Extend a table only together with the protocol that needs it.

use crate::status::{ExecutionState, JobStatus};

/// Is `from → to` a legal job status change?
pub fn job(from: JobStatus, to: JobStatus) -> bool {
    use JobStatus::*;
    matches!(
        (from, to),
        // Submission: the JobMaster (or, after a crash, the newly elected one) initializes
        // the job, then schedules it (P0, P1.8).
        (Initializing, Created)
            // The job cannot start from the checkpoint it was submitted with (F1.6).
            | (Initializing, Failed)
            | (Created, Running)
            // Every execution finished (P0).
            | (Running, Finished)
            // A full restart (P1.8; Flink's global failover).
            | (Running, Restarting)
            | (Restarting, Running)
            // The restart strategy is exhausted (P1.8).
            | (Running | Restarting, Failing)
            | (Failing, Failed)
            // A JobMaster elected under `reconcile` (P3.1) ends its window RUNNING, FINISHED,
            // or FAILING and then restarts like a failover (P3.4).
            | (Created, Reconciling)
            | (Reconciling, Running | Finished | Failing)
            | (Failing, Restarting)
    )
}

/// Is `from → to` a legal execution state change? The same table serves the JobMaster's view
/// and the task's own state: the task starts at CREATED → DEPLOYING (Flink's `Task`), the
/// JobMaster at CREATED → SCHEDULED → DEPLOYING (Flink's `Execution`).
pub fn execution(from: ExecutionState, to: ExecutionState) -> bool {
    use ExecutionState::*;
    matches!(
        (from, to),
        // Scheduling and deployment (P0).
        (Created, Scheduled)
            | (Scheduled, Deploying)
            | (Created, Deploying)
            | (Deploying, Initializing)
            | (Initializing, Running)
            // End of input, outputs drained (P0).
            | (Running, Finished)
            // A task fails, or its TaskManager is lost (P1.8); the JobMaster notices a lost
            // TaskManager's executions in whatever state it last knew them.
            | (Deploying | Initializing | Running | Canceling, Failed)
            // Failover cancels the executions of the restarted region (P1.8).
            | (Deploying | Initializing | Running, Canceling)
            | (Canceling, Canceled)
            // An execution never deployed is cancelled at once: there is no task to stop.
            | (Created | Scheduled, Canceled)
            // Batch recovery (P2.4 step 2, F2.4): a recovered subtask is marked finished
            // directly, keeping the attempt that finished before the crash.
            | (Created, Finished)
            // P3.1: a JobMaster elected under `reconcile` knows nothing of any execution yet;
            // P3.2: the reported state replaces RECONCILING, or its absence fails it (P3.4),
            // or a late report of a running task has it cancelled.
            | (Created, Reconciling)
            | (
                Reconciling,
                Deploying | Initializing | Running | Finished | Failed | Canceled | Canceling
            )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_states_are_never_left() {
        for to in JobStatus::ALL {
            assert!(!job(JobStatus::Finished, to));
        }
        use ExecutionState::*;
        for from in [Finished, Canceled, Failed] {
            for to in [
                Created,
                Scheduled,
                Deploying,
                Initializing,
                Running,
                Reconciling,
            ] {
                assert!(!execution(from, to), "{from} → {to}");
            }
        }
    }

    #[test]
    fn the_happy_path_is_legal() {
        use ExecutionState::*;
        let path = [
            Created,
            Scheduled,
            Deploying,
            Initializing,
            Running,
            Finished,
        ];
        assert!(path.windows(2).all(|w| execution(w[0], w[1])));
        assert!(!execution(Running, Scheduled));
        assert!(!execution(Created, Running));
    }
}
