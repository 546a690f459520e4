//! Job and execution statuses, named as in Flink (`docs/rules.md` F2.6).
//!
//! These are only the *names*; the transition tables that say which changes are legal live with
//! the state machines that use them (`crate::jobmaster::transitions`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Flink's `JobStatus`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    Initializing,
    Created,
    Running,
    Failing,
    Failed,
    Cancelling,
    Canceled,
    Finished,
    Restarting,
    Suspended,
    Reconciling,
}

/// Flink's `ExecutionState`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExecutionState {
    Created,
    Scheduled,
    Deploying,
    Initializing,
    Running,
    Finished,
    Canceling,
    Canceled,
    Failed,
    Reconciling,
}

impl JobStatus {
    pub const ALL: [JobStatus; 11] = [
        JobStatus::Initializing,
        JobStatus::Created,
        JobStatus::Running,
        JobStatus::Failing,
        JobStatus::Failed,
        JobStatus::Cancelling,
        JobStatus::Canceled,
        JobStatus::Finished,
        JobStatus::Restarting,
        JobStatus::Suspended,
        JobStatus::Reconciling,
    ];

    /// Globally terminal: the job never leaves these (SUSPENDED is only locally terminal in
    /// Flink, but a suspended job is handed to another JobManager, never resumed in place).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Failed | JobStatus::Canceled | JobStatus::Finished | JobStatus::Suspended
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            JobStatus::Initializing => "INITIALIZING",
            JobStatus::Created => "CREATED",
            JobStatus::Running => "RUNNING",
            JobStatus::Failing => "FAILING",
            JobStatus::Failed => "FAILED",
            JobStatus::Cancelling => "CANCELLING",
            JobStatus::Canceled => "CANCELED",
            JobStatus::Finished => "FINISHED",
            JobStatus::Restarting => "RESTARTING",
            JobStatus::Suspended => "SUSPENDED",
            JobStatus::Reconciling => "RECONCILING",
        }
    }

    pub fn from_name(name: &str) -> Option<JobStatus> {
        JobStatus::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl ExecutionState {
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ExecutionState::Finished | ExecutionState::Canceled | ExecutionState::Failed
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ExecutionState::Created => "CREATED",
            ExecutionState::Scheduled => "SCHEDULED",
            ExecutionState::Deploying => "DEPLOYING",
            ExecutionState::Initializing => "INITIALIZING",
            ExecutionState::Running => "RUNNING",
            ExecutionState::Finished => "FINISHED",
            ExecutionState::Canceling => "CANCELING",
            ExecutionState::Canceled => "CANCELED",
            ExecutionState::Failed => "FAILED",
            ExecutionState::Reconciling => "RECONCILING",
        }
    }

    pub const ALL: [ExecutionState; 10] = [
        ExecutionState::Created,
        ExecutionState::Scheduled,
        ExecutionState::Deploying,
        ExecutionState::Initializing,
        ExecutionState::Running,
        ExecutionState::Finished,
        ExecutionState::Canceling,
        ExecutionState::Canceled,
        ExecutionState::Failed,
        ExecutionState::Reconciling,
    ];

    pub fn from_name(name: &str) -> Option<ExecutionState> {
        ExecutionState::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for ExecutionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
