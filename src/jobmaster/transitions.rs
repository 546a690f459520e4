//! The transition tables: which job-status and execution-state changes are legal.
//!
//! Flink itself only forbids leaving a terminal state (`flink-reference-batch.md` F2.6). Ours
//! are tighter on purpose: each table admits exactly the edges the modelled protocols use, and
//! every row says which rule uses it, so an edge that no protocol should take is a
//! `legal-transition` violation. Extend a table only together with the protocol that needs it.

use crate::status::{ExecutionState, JobStatus};

/// Is `from → to` a legal job status change?
pub fn job(from: JobStatus, to: JobStatus) -> bool {
    use JobStatus::*;
    matches!(
        (from, to),
        // Submission: the JobMaster initializes the job, then schedules it (P0).
        (Initializing, Created)
            | (Created, Running)
            // Every execution finished (P0).
            | (Running, Finished)
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
