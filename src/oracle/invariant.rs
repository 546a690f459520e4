//! The stable ids of everything the oracles check (`docs/rules.md` P4).

use std::fmt;

/// One checked property. The id (`Invariant::id`) is stable: scenarios name it in
/// `expect.violations`, the fuzzer groups failures by it, and users grep for it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Invariant {
    /// Sinks hold exactly the records a failure-free run produces, each exactly once.
    ExactlyOnceOutput,
    /// Every completed checkpoint is a consistent cut on every channel.
    ConsistentCut,
    /// A subtask recorded finished in a restored checkpoint never processes a record again.
    FinishedNotRerun,
    /// Every job and execution status change is in its transition table.
    LegalTransition,
    /// After a batch JobManager failover exactly the required subtasks run again.
    MinimalRerun,
    /// A batch vertex gets the parallelism P2.1 computes from its inputs' bytes.
    AdaptiveParallelism,
    /// Every RPC refused while reconciling is eventually applied exactly once.
    NoLostRpc,
    /// A reconcile window ends with the outcome, counts and execution states the reports that
    /// reached the new JobMaster call for (P3.2, P3.4).
    ReconcileOutcome,
    /// On each RPC link, the receiver applies RPCs in the order they were first sent.
    RpcOrder,
    /// Under `flink`, a task triggered by RPC while inputs are open snapshots before it takes
    /// any further input (F1.4).
    TriggerAtOnce,
    /// A failover fails only executions a fault explains and restarts exactly the failed
    /// pipelined region, or the whole job while RESTARTING (P1.8).
    FailoverScope,
    /// The job fails only when the faults that fired could have used up the restart strategy.
    JobStatus,
    /// A TaskManager runs at most as many tasks at once as it has slots.
    SlotCapacity,
    /// A batch subtask gets a speculative attempt only once its attempt is slow by P2.8's
    /// baseline, never on a blocked TaskManager, and the first attempt to finish wins.
    Speculation,
    /// A task snapshots only while RUNNING; a failed snapshot is never acknowledged; the
    /// coordinator fails the job over exactly when the checkpoint failures in a row that
    /// Flink counts exceed `tolerable_failures` (F1.9).
    CheckpointFailures,
    /// A task that takes a cancellation marker for a checkpoint still open there passes it
    /// on and never snapshots that checkpoint (F1.10).
    CancelMarkers,
    /// A job submitted with a checkpoint starts from it exactly when Flink's finished-state
    /// checks accept its shape, and otherwise fails before deploying anything (F1.6).
    RestoreShape,
    /// After a synchronous savepoint's barrier no task emits a record; a task that performed
    /// the savepoint does not finish before it completes; without drain no input ends (F1.11).
    StopWithSavepoint,
    /// A source's split is assigned again only after a restore gave it back to its
    /// enumerator, and a FINISHED job assigned every split (F1.13).
    SplitOwnership,
    /// A triggered checkpoint completes or is aborted within its timeout.
    CheckpointProgress,
    /// Once faults stop, the job reaches a terminal status within its budget.
    JobTerminates,
    /// The same run twice gives the same trace hash.
    Determinism,
}

impl Invariant {
    pub const ALL: [Invariant; 22] = [
        Invariant::ExactlyOnceOutput,
        Invariant::ConsistentCut,
        Invariant::FinishedNotRerun,
        Invariant::LegalTransition,
        Invariant::MinimalRerun,
        Invariant::AdaptiveParallelism,
        Invariant::NoLostRpc,
        Invariant::ReconcileOutcome,
        Invariant::RpcOrder,
        Invariant::TriggerAtOnce,
        Invariant::FailoverScope,
        Invariant::JobStatus,
        Invariant::SlotCapacity,
        Invariant::Speculation,
        Invariant::CheckpointFailures,
        Invariant::CancelMarkers,
        Invariant::RestoreShape,
        Invariant::StopWithSavepoint,
        Invariant::SplitOwnership,
        Invariant::CheckpointProgress,
        Invariant::JobTerminates,
        Invariant::Determinism,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Invariant::ExactlyOnceOutput => "exactly-once-output",
            Invariant::ConsistentCut => "consistent-cut",
            Invariant::FinishedNotRerun => "finished-not-rerun",
            Invariant::LegalTransition => "legal-transition",
            Invariant::MinimalRerun => "minimal-rerun",
            Invariant::AdaptiveParallelism => "adaptive-parallelism",
            Invariant::NoLostRpc => "no-lost-rpc",
            Invariant::ReconcileOutcome => "reconcile-outcome",
            Invariant::RpcOrder => "rpc-order",
            Invariant::TriggerAtOnce => "trigger-at-once",
            Invariant::FailoverScope => "failover-scope",
            Invariant::JobStatus => "job-status",
            Invariant::SlotCapacity => "slot-capacity",
            Invariant::Speculation => "speculation",
            Invariant::CheckpointFailures => "checkpoint-failures",
            Invariant::CancelMarkers => "cancel-markers",
            Invariant::RestoreShape => "restore-shape",
            Invariant::StopWithSavepoint => "stop-with-savepoint",
            Invariant::SplitOwnership => "split-ownership",
            Invariant::CheckpointProgress => "checkpoint-progress",
            Invariant::JobTerminates => "job-terminates",
            Invariant::Determinism => "determinism",
        }
    }

    pub fn from_id(id: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.id() == id)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}
