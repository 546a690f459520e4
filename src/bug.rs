//! Injected bugs: each deliberately breaks one protocol rule, so a test can prove that the
//! oracle guarding that rule notices (`architecture.md`, "Variants and bugs are different
//! things"). A variant is a design choice and is correct; a bug is a mistake on purpose.

use crate::oracle::invariant::Invariant;
use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Bug {
    /// A channel's processed EndOfPartition does not count as aligned, and no barrier is
    /// inserted before it: alignment waits forever for a barrier that never comes.
    EopNotAligned,
    /// The handler counts a channel as aligned as soon as it *enqueues* EndOfPartition (the
    /// priority notice), instead of inserting a barrier before it: records still queued before
    /// EndOfPartition are processed after the snapshot.
    NoBarrierBeforeEop,
    /// A finishing task declines every pending checkpoint it takes part in (the pre-FLIP-147
    /// behaviour) although its variant says not to.
    CancelPendingOnFinish,
    /// A task that must wait for a checkpoint covering its final state (a two-phase-commit
    /// sink; every task in the `flink` variant) finishes without it.
    FinishBeforeFinalCheckpoint,
    /// Under `option1`, a trigger that missed a finished task is not re-sent to its
    /// descendants.
    SkipRetriggerDescendants,
    /// The trigger plan counts FAILED and CANCELED subtasks as finished (FLINK-40482).
    TerminalCountsAsFinished,
    /// A failover redeploys subtasks recorded finished in the restored checkpoint as if they
    /// had never run.
    RestartFinishedTasks,
    /// A failover restores from the newest checkpoint with any snapshot, completed or not.
    RestoreFromPending,
    /// A two-phase-commit sink commits its transaction when it pre-commits it, before any
    /// completed checkpoint covers it.
    CommitUncoveredTransaction,
    /// A restored task drops its channel state instead of replaying it.
    IgnoreChannelStateOnRestore,
    /// An unaligned snapshot leaves out the in-flight records it should persist.
    UnalignedDropChannelState,
    /// An unaligned snapshot also persists records that arrive after a channel's barrier.
    UnalignedSpillAfterBarrier,
    /// When an alignment times out, records already buffered on the channels still owing a
    /// barrier are not persisted.
    TimeoutSwitchLosesBuffers,
    /// A TaskManager forgets an RPC a reconciling JobMaster refused instead of retrying it.
    DropRefusedRpc,
    /// Reconciliation treats the executions of a TaskManager that never reported as running.
    ReconcileIgnoresMissingTm,
    /// TaskManagers keep no terminal task state, so a task that ended during the outage is
    /// unknown to the new JobMaster.
    NoTerminalRetention,
    /// Streaming: a TaskManager forgets a task that failed or was cancelled as soon as it
    /// leaves its slot, so its report to a new JobMaster leaves that execution out.
    ForgetEndedTasks,
    /// The new JobMaster applies the reported states to an execution graph it has not rebuilt:
    /// its executions keep the attempt numbers it made up at election.
    ApplyStateBeforeRebuild,
    /// Batch: the job event store's write buffer survives a JobManager crash, as if every
    /// event had been flushed (P2.2).
    TrustUnflushedEvents,
    /// Batch: recovery marks replayed subtasks finished without their partitions being
    /// reported (P2.4 step 2).
    IgnorePartitionReports,
    /// Batch: recovery neither returns the splits of unfinished source subtasks nor applies
    /// the rules for coordinators without batch snapshots (P2.4 step 3, P2.5).
    SkipCoordinatorReset,
    /// Batch: recovery re-runs every finished producer of an unfinished subtask, even when
    /// its partition survived and was reported (P2.4 step 4).
    RestartAllUpstream,
    /// Batch: a partition reported after the wait is kept instead of released (F2.4).
    KeepLatePartitions,
    /// Batch: a recovering JobMaster keeps tracking the partitions a TaskManager reported
    /// after that TaskManager is lost, so the recovery keeps their producers finished on a dead
    /// process (P2.3, P2.4 step 2).
    KeepLostPartitionsInRecovery,
    /// Batch: a reset reuses the execution that ended (FINISHED, FAILED or CANCELED →
    /// CREATED) instead of making a new one (F2.6: terminal states are never left).
    ReuseTerminalExecution,
    /// Batch: a reconcile window ends RUNNING although a TaskManager reported an execution
    /// FAILED or CANCELED (P3.4 says FAILING, then normal failover).
    ReconcileAdoptsFailed,
    /// Batch: an `"auto"` vertex's parallelism is the input bytes over `bytes_per_task`
    /// rounded down instead of up, so the last subtask's share is folded into the others.
    AdaptiveRoundsDown,
    /// Batch: an RPC that arrives from the wire while its TaskManager keeps older ones
    /// (refused while reconciling) is applied at once instead of joining them, ahead of them.
    OvertakeKeptRpcs,
    /// Batch: the JobMaster deploys into a TaskManager whose report is not in yet, although
    /// a task an earlier JobMaster left there may still hold a slot.
    DeployBeforeReport,
    /// Batch: an RPC lost in an `rpc_loss` window is never sent again (its sender forgets
    /// it), so whoever waits for it waits forever.
    ForgetLostRpc,
    /// Batch: a JobMaster whose job event store failed to write goes on logging, as if the
    /// store had recovered.
    LogAfterWriteFailure,
    /// Batch: a new JobMaster replays the job events although the store could not read them
    /// back (instead of deleting the log and restarting the job in full).
    ReplayUnreadableLog,
    /// Batch: a TaskManager reports (P3.2) an attempt the JobMaster replaced while it was cut
    /// off, and the JobMaster does not cancel it: it runs on beside its replacement, in a slot
    /// the JobMaster gives to another task.
    KeepReplacedAttempt,
    /// Batch: a TaskManager whose registration timeout ran out without a new JobManager keeps
    /// its partitions, so a JobManager that comes later trusts outputs the TaskManager should
    /// have released.
    KeepPartitionsPastRegistrationTimeout,
    /// Batch: a TaskManager cut off from its JobMaster ignores its heartbeat timeout and keeps
    /// its leader (and the job's tasks running) until the connection comes back.
    KeepLeaderWhenCutOff,
    /// Batch: the JobMaster does not flush the job event log when a sink vertex finishes (the
    /// job is about to end), so the job is FINISHED with its last finishes in the write buffer
    /// and a crash before its result is durable runs them again.
    SkipFinalFlush,
    /// Batch: when one attempt of a speculated subtask finishes, the JobMaster does not cancel
    /// the other, which keeps its slot and runs on.
    KeepSlowAttempt,
    /// Batch: the slow-task detector looks at a vertex before `baseline_ratio` of it
    /// finished, so with no baseline every attempt past the lower bound counts as slow.
    IgnoreBaselineRatio,
    /// A bounded source stops one record short of the count the scenario gives it (an
    /// off-by-one in its end-of-input test).
    SourceEndsEarly,
    /// Key groups are mapped to consumers rounding up instead of down, so some keys go to the
    /// neighbouring subtask (an off-by-one in Flink's `computeOperatorIndexForKeyGroup`).
    MisrouteKeyGroup,
    /// The restart strategy counts the failover it is about to run against `max_attempts`
    /// before deciding (`>=` for `>`): the job fails one failure early.
    RestartGivesUpEarly,
    /// A TaskManager resends its kept RPCs although older ones are still on the wire to the
    /// JobMaster, so those overtake the kept ones once they arrive (P3.3 order).
    ResendBeforeDrained,
    /// Under `flink`, a trigger RPC that reaches a task with open inputs is only bookkept until
    /// EndOfPartition arrives on every channel, instead of injecting barriers into the open
    /// channels and snapshotting at once (F1.4).
    TriggerWaitsForInput,
    /// The CheckpointCoordinator ignores `min_pause` and triggers as soon as the timer fires.
    IgnoreMinPause,
    /// At least once: a processed EndOfPartition does not count for pending checkpoints, so
    /// one that began while a channel's EndOfPartition was on its way waits for a barrier that
    /// never comes (F1.7).
    EopNotCounted,
    /// At least once: a task snapshots at a checkpoint's first barrier instead of waiting
    /// until every open channel delivered it, so its snapshot misses records sent before the
    /// other barriers (F1.7).
    SnapshotAtFirstBarrier,
    /// At least once: a task told that a checkpoint was aborted while it counted the
    /// checkpoint's barriers snapshots it anyway when the count completes (F1.7 step 6).
    SnapshotAbortedCheckpoint,
    /// A task acknowledges a checkpoint when the synchronous part of its snapshot is done,
    /// before the asynchronous part made the state durable (F1.8).
    AckBeforeUpload,
    /// A finishing task terminates without waiting for the asynchronous parts of its
    /// snapshots, which are cancelled with it (F1.8).
    FinishBeforeUpload,
    /// A lost TaskManager's heartbeat timeout fails every running execution of the job, not
    /// only those deployed to the dead process (P1.8).
    FailUnrelatedOnTmLoss,
    /// A trigger that reaches a task before it is RUNNING is acted on instead of declined as
    /// not ready (F1.9).
    SnapshotBeforeRunning,
    /// A snapshot whose asynchronous part failed is acknowledged anyway, as if its state had
    /// been written (F1.9).
    AckFailedSnapshot,
    /// The coordinator counts every aborted checkpoint against `tolerable_failures`, also
    /// the failures Flink ignores (a task closing, a subsumed alignment, a missed trigger),
    /// F1.9.
    CountEveryAbort,
    /// A completed checkpoint does not reset the count of checkpoint failures in a row
    /// (F1.9).
    KeepFailureCount,
    /// A task that aborts a checkpoint on a cancellation marker does not pass the marker on
    /// (F1.10).
    SwallowCancelMarker,
    /// A cancellation marker counts as its channel's barrier, so a cancelled checkpoint
    /// aligns and is snapshotted (F1.10).
    CancelMarkerAsBarrier,
    /// A chained task snapshots only its head operator: the operators chained behind it are
    /// written with the state they started with (F1.12).
    SnapshotHeadOnly,
    /// A job submitted with a checkpoint whose chain mixes finished and running operators
    /// starts anyway, each vertex taking its head operator's finished state (F1.6).
    AcceptMixedChain,
    /// A source stops only after its savepoint's barrier and one more record (F1.11).
    EmitAfterStop,
    /// A task that performed a synchronous savepoint finishes on any checkpoint at least as
    /// new as its final one, without waiting for the savepoint (F1.11).
    FinishBeforeSavepoint,
    /// A stop without drain ends the input as a drain does: operators finish (F1.11).
    DrainOnNoDrain,
    /// A regional failover does not give the restarted readers' splits assigned after the
    /// restored checkpoint back to their enumerator (F1.13 step 4).
    KeepSplitsOnRegionalReset,
    /// An EndOfPartition notice handled in the very instant an alignment began, after the
    /// barrier that began it, counts as that channel's barrier instead of getting one inserted
    /// before it (the handler assumes the alignment's start already saw the channel): an
    /// ordering bug, harmless in every other order and at every other instant.
    EopNoticeAtAlignmentStart,
    /// With network buffers, a draining task (closing, still running while its result
    /// partition drains: `flush_before_finish` with unaligned checkpoints) sends each
    /// channel's EndOfPartition as soon as that channel's data is out, instead of holding every
    /// EndOfPartition until its data is on the wire on every channel (F1.14 step 8).
    EopWhileDraining,
    /// Batch: a JobMaster that times out a TaskManager's heartbeat leaves a speculative
    /// attempt deployed there as it was, instead of failing it alone (P2.8).
    KeepSpeculativeOnLostTaskManager,
    /// Batch: an original attempt that fails (a task failure, or its TaskManager lost) while
    /// its speculative attempt may still finish fails the vertex over, cancelling the
    /// speculative attempt, instead of handing over to it (P2.8).
    NoSpeculativeHandover,
}

impl Bug {
    pub const ALL: [Bug; 66] = [
        Bug::EopNotAligned,
        Bug::NoBarrierBeforeEop,
        Bug::CancelPendingOnFinish,
        Bug::FinishBeforeFinalCheckpoint,
        Bug::SkipRetriggerDescendants,
        Bug::TerminalCountsAsFinished,
        Bug::RestartFinishedTasks,
        Bug::RestoreFromPending,
        Bug::CommitUncoveredTransaction,
        Bug::IgnoreChannelStateOnRestore,
        Bug::UnalignedDropChannelState,
        Bug::UnalignedSpillAfterBarrier,
        Bug::TimeoutSwitchLosesBuffers,
        Bug::DropRefusedRpc,
        Bug::ReconcileIgnoresMissingTm,
        Bug::NoTerminalRetention,
        Bug::ForgetEndedTasks,
        Bug::ApplyStateBeforeRebuild,
        Bug::TrustUnflushedEvents,
        Bug::IgnorePartitionReports,
        Bug::SkipCoordinatorReset,
        Bug::RestartAllUpstream,
        Bug::KeepLatePartitions,
        Bug::KeepLostPartitionsInRecovery,
        Bug::ReuseTerminalExecution,
        Bug::ReconcileAdoptsFailed,
        Bug::AdaptiveRoundsDown,
        Bug::OvertakeKeptRpcs,
        Bug::DeployBeforeReport,
        Bug::ForgetLostRpc,
        Bug::LogAfterWriteFailure,
        Bug::ReplayUnreadableLog,
        Bug::KeepPartitionsPastRegistrationTimeout,
        Bug::KeepLeaderWhenCutOff,
        Bug::KeepReplacedAttempt,
        Bug::SkipFinalFlush,
        Bug::KeepSlowAttempt,
        Bug::IgnoreBaselineRatio,
        Bug::SourceEndsEarly,
        Bug::MisrouteKeyGroup,
        Bug::RestartGivesUpEarly,
        Bug::ResendBeforeDrained,
        Bug::TriggerWaitsForInput,
        Bug::IgnoreMinPause,
        Bug::FailUnrelatedOnTmLoss,
        Bug::EopNotCounted,
        Bug::SnapshotAtFirstBarrier,
        Bug::SnapshotAbortedCheckpoint,
        Bug::AckBeforeUpload,
        Bug::FinishBeforeUpload,
        Bug::SnapshotBeforeRunning,
        Bug::AckFailedSnapshot,
        Bug::CountEveryAbort,
        Bug::KeepFailureCount,
        Bug::SwallowCancelMarker,
        Bug::CancelMarkerAsBarrier,
        Bug::SnapshotHeadOnly,
        Bug::AcceptMixedChain,
        Bug::EmitAfterStop,
        Bug::FinishBeforeSavepoint,
        Bug::DrainOnNoDrain,
        Bug::KeepSplitsOnRegionalReset,
        Bug::EopNoticeAtAlignmentStart,
        Bug::EopWhileDraining,
        Bug::KeepSpeculativeOnLostTaskManager,
        Bug::NoSpeculativeHandover,
    ];

    /// The name used on the command line (`--bug NAME`) and in scenarios (`"bug": NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Bug::EopNotAligned => "eop-not-aligned",
            Bug::NoBarrierBeforeEop => "no-barrier-before-eop",
            Bug::CancelPendingOnFinish => "cancel-pending-on-finish",
            Bug::FinishBeforeFinalCheckpoint => "finish-before-final-checkpoint",
            Bug::SkipRetriggerDescendants => "skip-retrigger-descendants",
            Bug::TerminalCountsAsFinished => "terminal-counts-as-finished",
            Bug::RestartFinishedTasks => "restart-finished-tasks",
            Bug::RestoreFromPending => "restore-from-pending",
            Bug::CommitUncoveredTransaction => "commit-uncovered-transaction",
            Bug::IgnoreChannelStateOnRestore => "ignore-channel-state-on-restore",
            Bug::UnalignedDropChannelState => "unaligned-drop-channel-state",
            Bug::UnalignedSpillAfterBarrier => "unaligned-spill-after-barrier",
            Bug::TimeoutSwitchLosesBuffers => "timeout-switch-loses-buffers",
            Bug::DropRefusedRpc => "drop-refused-rpc",
            Bug::ReconcileIgnoresMissingTm => "reconcile-ignores-missing-tm",
            Bug::NoTerminalRetention => "no-terminal-retention",
            Bug::ForgetEndedTasks => "forget-ended-tasks",
            Bug::ApplyStateBeforeRebuild => "apply-state-before-rebuild",
            Bug::TrustUnflushedEvents => "trust-unflushed-events",
            Bug::IgnorePartitionReports => "ignore-partition-reports",
            Bug::SkipCoordinatorReset => "skip-coordinator-reset",
            Bug::RestartAllUpstream => "restart-all-upstream",
            Bug::KeepLatePartitions => "keep-late-partitions",
            Bug::KeepLostPartitionsInRecovery => "keep-lost-partitions-in-recovery",
            Bug::ReuseTerminalExecution => "reuse-terminal-execution",
            Bug::ReconcileAdoptsFailed => "reconcile-adopts-failed",
            Bug::AdaptiveRoundsDown => "adaptive-rounds-down",
            Bug::OvertakeKeptRpcs => "overtake-kept-rpcs",
            Bug::DeployBeforeReport => "deploy-before-report",
            Bug::ForgetLostRpc => "forget-lost-rpc",
            Bug::LogAfterWriteFailure => "log-after-write-failure",
            Bug::ReplayUnreadableLog => "replay-unreadable-log",
            Bug::KeepPartitionsPastRegistrationTimeout => {
                "keep-partitions-past-registration-timeout"
            }
            Bug::KeepLeaderWhenCutOff => "keep-leader-when-cut-off",
            Bug::KeepReplacedAttempt => "keep-replaced-attempt",
            Bug::SkipFinalFlush => "skip-final-flush",
            Bug::KeepSlowAttempt => "keep-slow-attempt",
            Bug::IgnoreBaselineRatio => "ignore-baseline-ratio",
            Bug::SourceEndsEarly => "source-ends-early",
            Bug::MisrouteKeyGroup => "misroute-key-group",
            Bug::RestartGivesUpEarly => "restart-gives-up-early",
            Bug::ResendBeforeDrained => "resend-before-drained",
            Bug::TriggerWaitsForInput => "trigger-waits-for-input",
            Bug::IgnoreMinPause => "ignore-min-pause",
            Bug::EopNotCounted => "eop-not-counted",
            Bug::SnapshotAtFirstBarrier => "snapshot-at-first-barrier",
            Bug::SnapshotAbortedCheckpoint => "snapshot-aborted-checkpoint",
            Bug::AckBeforeUpload => "ack-before-upload",
            Bug::FinishBeforeUpload => "finish-before-upload",
            Bug::SnapshotBeforeRunning => "snapshot-before-running",
            Bug::AckFailedSnapshot => "ack-failed-snapshot",
            Bug::CountEveryAbort => "count-every-abort",
            Bug::KeepFailureCount => "keep-failure-count",
            Bug::SwallowCancelMarker => "swallow-cancel-marker",
            Bug::CancelMarkerAsBarrier => "cancel-marker-as-barrier",
            Bug::SnapshotHeadOnly => "snapshot-head-only",
            Bug::AcceptMixedChain => "accept-mixed-chain",
            Bug::EmitAfterStop => "emit-after-stop",
            Bug::FinishBeforeSavepoint => "finish-before-savepoint",
            Bug::DrainOnNoDrain => "drain-on-no-drain",
            Bug::KeepSplitsOnRegionalReset => "keep-splits-on-regional-reset",
            Bug::FailUnrelatedOnTmLoss => "fail-unrelated-on-tm-loss",
            Bug::EopNoticeAtAlignmentStart => "eop-notice-at-alignment-start",
            Bug::EopWhileDraining => "eop-while-draining",
            Bug::KeepSpeculativeOnLostTaskManager => "keep-speculative-on-lost-taskmanager",
            Bug::NoSpeculativeHandover => "no-speculative-handover",
        }
    }

    /// Breaks a batch rule (P2): its fuzz campaign draws batch jobs.
    pub fn is_batch(self) -> bool {
        matches!(
            self,
            Bug::TrustUnflushedEvents
                | Bug::IgnorePartitionReports
                | Bug::SkipCoordinatorReset
                | Bug::RestartAllUpstream
                | Bug::KeepLatePartitions
                | Bug::KeepLostPartitionsInRecovery
                | Bug::ReuseTerminalExecution
                | Bug::ReconcileAdoptsFailed
                | Bug::AdaptiveRoundsDown
                | Bug::OvertakeKeptRpcs
                | Bug::DeployBeforeReport
                | Bug::ForgetLostRpc
                | Bug::LogAfterWriteFailure
                | Bug::ReplayUnreadableLog
                | Bug::KeepPartitionsPastRegistrationTimeout
                | Bug::KeepLeaderWhenCutOff
                | Bug::KeepReplacedAttempt
                | Bug::SkipFinalFlush
                | Bug::KeepSlowAttempt
                | Bug::KeepSpeculativeOnLostTaskManager
                | Bug::NoSpeculativeHandover
                | Bug::IgnoreBaselineRatio
        )
    }

    /// An ordering bug: it shows only in one order of events due at one instant, which seeds
    /// drawing latencies to the nanosecond do not meet; `fuzz --strategy exhaustive` on
    /// `scenarios/exhaustive-eop-at-alignment-start.json` finds it (`tests/exhaustive.rs`),
    /// so the mutation score of seeds leaves it out.
    pub fn needs_exploration(self) -> bool {
        matches!(self, Bug::EopNoticeAtAlignmentStart)
    }

    /// A bug whose shape a campaign seldom draws, even biased: `keep-replaced-attempt` needs
    /// an attempt replaced on another TaskManager, remembered past a JobManager crash and
    /// reported into a window that ends FAILING (six batch seeds in 100,000 when it was
    /// added). `tests/bugs.rs` proves its oracle on its scenario; the campaign budget test
    /// leaves it out, and `flinksim mutants` leaves a miss of it to that scenario.
    pub fn shown_by_scenario_only(self) -> bool {
        matches!(self, Bug::KeepReplacedAttempt)
    }

    pub fn from_name(name: &str) -> Option<Bug> {
        Bug::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The rule it breaks, by section of `docs/rules.md`.
    pub fn rule(self) -> &'static str {
        match self {
            Bug::EopNotAligned => "P1.3 step 4, P1.4 (EndOfPartition counts as aligned)",
            Bug::NoBarrierBeforeEop => "P1.3 steps 1-3 (barriers go right before EndOfPartition)",
            Bug::CancelPendingOnFinish => "P1.6 (do not cancel pending checkpoints on finish)",
            Bug::FinishBeforeFinalCheckpoint => "P1.7, F1.5 step 3 (wait for the final checkpoint)",
            Bug::SkipRetriggerDescendants => {
                "P1.2 option1 (re-trigger descendants of a missed trigger)"
            }
            Bug::TerminalCountsAsFinished => "P1.1, F1.1 (only FINISHED subtasks are finished)",
            Bug::RestartFinishedTasks => "P1.8, F1.6 (finished subtasks are never restarted)",
            Bug::RestoreFromPending => "P1.8 (restore from the latest completed checkpoint)",
            Bug::CommitUncoveredTransaction => {
                "P1.7, P1.8 (commit only what a completed checkpoint covers)"
            }
            Bug::IgnoreChannelStateOnRestore => {
                "P1.8, P1.4 (restore replays channel state before new input)"
            }
            Bug::UnalignedDropChannelState => {
                "P1.4 unaligned (in-flight buffers are channel state)"
            }
            Bug::UnalignedSpillAfterBarrier => "P1.4 unaligned (only buffers before the barrier)",
            Bug::TimeoutSwitchLosesBuffers => {
                "P1.4, F1.3 (alignment timeout switches to unaligned)"
            }
            Bug::DropRefusedRpc => "P3.3 (a refused RPC is retried until accepted)",
            Bug::ReconcileIgnoresMissingTm => {
                "P3.4 (a TaskManager that missed the window means FAILING)"
            }
            Bug::NoTerminalRetention => "P3.1 (TaskManagers keep terminal task states a while)",
            Bug::ForgetEndedTasks => {
                "P3.1, P3.2 (a report names every task that ended within the retention)"
            }
            Bug::ApplyStateBeforeRebuild => "P3.2 (rebuild everything first, then apply states)",
            Bug::TrustUnflushedEvents => "P2.2 (a crash loses the unflushed events)",
            Bug::IgnorePartitionReports => {
                "P2.4 step 2 (finished only with every needed partition reported)"
            }
            Bug::SkipCoordinatorReset => "P2.4 step 3, P2.5 (reset subtasks return their splits)",
            Bug::RestartAllUpstream => "P2.4 step 4 (producers with reported partitions stay)",
            Bug::KeepLatePartitions => "F2.4 (a late report is answered by a release)",
            Bug::KeepLostPartitionsInRecovery => {
                "P2.3 (partitions survive on live TaskManagers only, so a lost one's reports stop counting)"
            }
            Bug::ReuseTerminalExecution => "F2.6 (a terminal execution state is never left)",
            Bug::ReconcileAdoptsFailed => {
                "P3.4 (a FAILED or CANCELED report makes the window FAILING)"
            }
            Bug::AdaptiveRoundsDown => "P2.1 (input bytes over bytes_per_task, rounded up)",
            Bug::OvertakeKeptRpcs => "P3.3 (newer RPCs wait behind kept ones)",
            Bug::DeployBeforeReport => {
                "P0, P3.2 (a slot is used once the JobMaster knows it is free)"
            }
            Bug::ForgetLostRpc => "P0 (a lost RPC is sent again after retry_after)",
            Bug::LogAfterWriteFailure => {
                "F2.3 (after a failed write a JobMaster logs nothing more)"
            }
            Bug::ReplayUnreadableLog => {
                "F2.4 step 5 (an unreadable log is deleted; the job restarts in full)"
            }
            Bug::KeepPartitionsPastRegistrationTimeout => {
                "F2.5 (a TaskManager with no JobManager releases its partitions at its registration timeout)"
            }
            Bug::KeepLeaderWhenCutOff => {
                "F2.5 (a TaskManager cut off past its heartbeat timeout loses its JobManager)"
            }
            Bug::KeepReplacedAttempt => {
                "F2.7 step 3 (the JobMaster cancels a reported attempt it replaced)"
            }
            Bug::SkipFinalFlush => {
                "P2.2, P2.7 (a finished vertex flushes the log, so a FINISHED job's log is durable)"
            }
            Bug::KeepSlowAttempt => "P2.8 (the first attempt to finish wins; the other is cancelled)",
            Bug::IgnoreBaselineRatio => {
                "P2.8 (a vertex is looked at once baseline_ratio of it finished)"
            }
            Bug::SourceEndsEarly => "P0 (a source emits exactly the records the scenario gives it)",
            Bug::MisrouteKeyGroup => "P0 (records are keyed to consumers by Flink's key groups)",
            Bug::RestartGivesUpEarly => {
                "P1.8 (the fixed-delay strategy allows max_attempts restarts)"
            }
            Bug::ResendBeforeDrained => "P3.3 (kept RPCs keep their order on the link)",
            Bug::TriggerWaitsForInput => {
                "F1.4 (a trigger at a task with open inputs snapshots at once)"
            }
            Bug::IgnoreMinPause => "P1.1 (triggers respect min_pause)",
            Bug::FailUnrelatedOnTmLoss => {
                "P1.8 (a lost TaskManager fails only the executions it hosted)"
            }
            Bug::EopNotCounted => {
                "F1.7 (at least once: EndOfPartition counts for every pending checkpoint)"
            }
            Bug::SnapshotAtFirstBarrier => {
                "F1.7 (at least once: a snapshot waits for every open channel's barrier)"
            }
            Bug::SnapshotAbortedCheckpoint => {
                "F1.7 step 6 (at least once: a checkpoint aborted while counted is not snapshotted)"
            }
            Bug::AckBeforeUpload => "F1.8 (a task acknowledges once its snapshot is durable)",
            Bug::FinishBeforeUpload => {
                "F1.8 (a finishing task waits for its snapshots' asynchronous parts)"
            }
            Bug::SnapshotBeforeRunning => "F1.9 (a task not yet RUNNING declines a trigger)",
            Bug::AckFailedSnapshot => {
                "F1.9 (a failed asynchronous part declines, never acknowledges)"
            }
            Bug::CountEveryAbort => {
                "F1.9 (only expired checkpoints and failed asynchronous parts count)"
            }
            Bug::KeepFailureCount => "F1.9 (a completed checkpoint resets the failure count)",
            Bug::SwallowCancelMarker => "F1.10 (a task aborting on a marker passes it on)",
            Bug::CancelMarkerAsBarrier => "F1.10 (a marker aborts its checkpoint; it is no barrier)",
            Bug::SnapshotHeadOnly => "F1.12 (every chained operator is snapshotted)",
            Bug::KeepSplitsOnRegionalReset => {
                "F1.13 step 4 (a restarted reader's splits assigned after the checkpoint go back)"
            }
            Bug::EopNoticeAtAlignmentStart => {
                "P1.3 step 3 (a barrier goes before EndOfPartition enqueued during an alignment)"
            }
            Bug::EopWhileDraining => {
                "F1.14 step 8 (a draining task holds every EndOfPartition until all its data is sent)"
            }
            Bug::KeepSpeculativeOnLostTaskManager => {
                "P2.8 (a speculative attempt on a lost TaskManager fails alone)"
            }
            Bug::NoSpeculativeHandover => {
                "P2.8 (a failed original hands over to its speculative attempt)"
            }
            Bug::AcceptMixedChain => "F1.6 (a vertex with mixed operator finished state is not restored)",
            Bug::EmitAfterStop => "F1.11 step 2 (a source stops before its savepoint's barrier)",
            Bug::FinishBeforeSavepoint => {
                "F1.11 step 4 (a task that performed the savepoint waits for it)"
            }
            Bug::DrainOnNoDrain => "F1.11 step 2 (without drain no operator finishes)",
        }
    }

    /// The oracle that catches it.
    pub fn caught_by(self) -> Invariant {
        match self {
            Bug::EopNotAligned => Invariant::CheckpointProgress,
            Bug::NoBarrierBeforeEop => Invariant::ConsistentCut,
            Bug::CancelPendingOnFinish => Invariant::CheckpointProgress,
            Bug::FinishBeforeFinalCheckpoint => Invariant::ExactlyOnceOutput,
            Bug::SkipRetriggerDescendants => Invariant::CheckpointProgress,
            Bug::TerminalCountsAsFinished => Invariant::ConsistentCut,
            Bug::RestartFinishedTasks => Invariant::FinishedNotRerun,
            Bug::RestoreFromPending => Invariant::ConsistentCut,
            Bug::CommitUncoveredTransaction => Invariant::ExactlyOnceOutput,
            Bug::IgnoreChannelStateOnRestore => Invariant::ExactlyOnceOutput,
            Bug::UnalignedDropChannelState => Invariant::ConsistentCut,
            Bug::UnalignedSpillAfterBarrier => Invariant::ConsistentCut,
            Bug::TimeoutSwitchLosesBuffers => Invariant::ConsistentCut,
            Bug::DropRefusedRpc => Invariant::NoLostRpc,
            Bug::ReconcileIgnoresMissingTm => Invariant::ReconcileOutcome,
            Bug::NoTerminalRetention => Invariant::FinishedNotRerun,
            Bug::ForgetEndedTasks => Invariant::ReconcileOutcome,
            Bug::ApplyStateBeforeRebuild => Invariant::ReconcileOutcome,
            Bug::TrustUnflushedEvents => Invariant::MinimalRerun,
            Bug::IgnorePartitionReports => Invariant::MinimalRerun,
            Bug::SkipCoordinatorReset => Invariant::ExactlyOnceOutput,
            Bug::RestartAllUpstream => Invariant::MinimalRerun,
            Bug::KeepLatePartitions => Invariant::MinimalRerun,
            Bug::KeepLostPartitionsInRecovery => Invariant::MinimalRerun,
            Bug::ReuseTerminalExecution => Invariant::LegalTransition,
            Bug::ReconcileAdoptsFailed => Invariant::ReconcileOutcome,
            Bug::AdaptiveRoundsDown => Invariant::AdaptiveParallelism,
            Bug::OvertakeKeptRpcs => Invariant::RpcOrder,
            Bug::DeployBeforeReport => Invariant::SlotCapacity,
            Bug::ForgetLostRpc => Invariant::JobTerminates,
            Bug::LogAfterWriteFailure => Invariant::MinimalRerun,
            Bug::ReplayUnreadableLog => Invariant::MinimalRerun,
            Bug::KeepPartitionsPastRegistrationTimeout => Invariant::MinimalRerun,
            Bug::KeepLeaderWhenCutOff => Invariant::FailoverScope,
            Bug::KeepReplacedAttempt => Invariant::SlotCapacity,
            Bug::SkipFinalFlush => Invariant::MinimalRerun,
            Bug::KeepSlowAttempt => Invariant::Speculation,
            Bug::IgnoreBaselineRatio => Invariant::Speculation,
            Bug::SourceEndsEarly => Invariant::ExactlyOnceOutput,
            Bug::MisrouteKeyGroup => Invariant::ExactlyOnceOutput,
            Bug::RestartGivesUpEarly => Invariant::JobStatus,
            Bug::ResendBeforeDrained => Invariant::RpcOrder,
            Bug::TriggerWaitsForInput => Invariant::TriggerAtOnce,
            Bug::IgnoreMinPause => Invariant::CheckpointProgress,
            Bug::FailUnrelatedOnTmLoss => Invariant::FailoverScope,
            Bug::EopNotCounted => Invariant::CheckpointProgress,
            Bug::SnapshotAtFirstBarrier => Invariant::ConsistentCut,
            Bug::SnapshotAbortedCheckpoint => Invariant::ConsistentCut,
            Bug::AckBeforeUpload => Invariant::ConsistentCut,
            Bug::FinishBeforeUpload => Invariant::CheckpointProgress,
            Bug::SnapshotBeforeRunning
            | Bug::AckFailedSnapshot
            | Bug::CountEveryAbort
            | Bug::KeepFailureCount => Invariant::CheckpointFailures,
            Bug::SwallowCancelMarker | Bug::CancelMarkerAsBarrier => Invariant::CancelMarkers,
            Bug::SnapshotHeadOnly => Invariant::ExactlyOnceOutput,
            Bug::KeepSplitsOnRegionalReset => Invariant::SplitOwnership,
            Bug::EopNoticeAtAlignmentStart => Invariant::ConsistentCut,
            Bug::EopWhileDraining => Invariant::CheckpointProgress,
            Bug::KeepSpeculativeOnLostTaskManager => Invariant::FailoverScope,
            Bug::NoSpeculativeHandover => Invariant::Speculation,
            Bug::AcceptMixedChain => Invariant::RestoreShape,
            Bug::EmitAfterStop | Bug::FinishBeforeSavepoint | Bug::DrainOnNoDrain => {
                Invariant::StopWithSavepoint
            }
        }
    }

    /// What goes wrong, in a sentence.
    pub fn description(self) -> &'static str {
        match self {
            Bug::EopNotAligned => {
                "EndOfPartition never counts as aligned: alignment stalls until the checkpoint expires"
            }
            Bug::NoBarrierBeforeEop => {
                "a channel counts as aligned when EndOfPartition is enqueued, so records before it land after the snapshot"
            }
            Bug::CancelPendingOnFinish => {
                "a finishing task declines its pending checkpoints, so checkpoints fail whenever a task finishes"
            }
            Bug::FinishBeforeFinalCheckpoint => {
                "a task finishes before a checkpoint covers its final state: the last transaction is never committed"
            }
            Bug::SkipRetriggerDescendants => {
                "descendants of a finished task never learn of the checkpoint, which stalls"
            }
            Bug::TerminalCountsAsFinished => {
                "FAILED and CANCELED subtasks count as finished, so a checkpoint claims output they never produced"
            }
            Bug::RestartFinishedTasks => {
                "a failover runs finished subtasks again from scratch: their records are processed twice"
            }
            Bug::RestoreFromPending => {
                "a failover restores a checkpoint that never completed, which need not be a consistent cut"
            }
            Bug::CommitUncoveredTransaction => {
                "records committed before their checkpoint completes are replayed and committed again after a failover"
            }
            Bug::IgnoreChannelStateOnRestore => {
                "records that were in flight at an unaligned checkpoint are lost on restore"
            }
            Bug::UnalignedDropChannelState => {
                "a completed unaligned checkpoint misses the records that were in flight"
            }
            Bug::UnalignedSpillAfterBarrier => {
                "a completed unaligned checkpoint counts records that belong after its cut"
            }
            Bug::TimeoutSwitchLosesBuffers => {
                "after an alignment timeout, buffered records before the barrier are missing from the checkpoint"
            }
            Bug::DropRefusedRpc => "a state update refused during reconciliation never reaches the JobMaster",
            Bug::ReconcileIgnoresMissingTm => {
                "tasks lost with a TaskManager are taken for running, and the job waits for them forever"
            }
            Bug::ForgetEndedTasks => {
                "a task that failed during the outage is missing from its TaskManager's report: the new JobMaster learns of it only because nobody reported it"
            }
            Bug::NoTerminalRetention => {
                "a task that finished during the outage is unknown, so its work is done again"
            }
            Bug::TrustUnflushedEvents => {
                "a new JobManager trusts events that were never flushed and skips work it cannot prove was done"
            }
            Bug::IgnorePartitionReports => {
                "subtasks are recovered as finished although their partitions are gone, so consumers hit PartitionNotFound"
            }
            Bug::SkipCoordinatorReset => {
                "splits assigned to subtasks that run again never return to the enumerator: their records are lost"
            }
            Bug::RestartAllUpstream => {
                "finished producers whose partitions survived run again: recovery saves less than it could"
            }
            Bug::KeepLatePartitions => {
                "partitions reported after the wait are never released and leak on their TaskManager"
            }
            Bug::KeepLostPartitionsInRecovery => {
                "a recovery keeps producers finished whose partitions died with a lost TaskManager, so their consumers fail over on PartitionNotFound"
            }
            Bug::ReuseTerminalExecution => {
                "a subtask run again reuses its ended execution, which leaves FINISHED or FAILED for CREATED"
            }
            Bug::ReconcileAdoptsFailed => {
                "a batch task that failed during the outage is adopted as it is: the job goes on RUNNING and nobody runs it again"
            }
            Bug::AdaptiveRoundsDown => {
                "an adaptive vertex gets one subtask fewer than its input bytes call for whenever they do not divide evenly"
            }
            Bug::OvertakeKeptRpcs => {
                "a batch task's split request or state update overtakes an older one its TaskManager kept while the JobManager reconciled"
            }
            Bug::DeployBeforeReport => {
                "after a failed reconciliation a TaskManager runs more tasks than it has slots: new attempts beside the old ones nobody has cancelled yet"
            }
            Bug::ForgetLostRpc => {
                "a batch RPC lost in the network is never sent again: a task's FINISHED update, a deployment or a partition report vanishes, and the job waits for it forever"
            }
            Bug::LogAfterWriteFailure => {
                "a JobMaster whose job event store failed to write keeps logging, so a later recovery trusts events the store never took"
            }
            Bug::ReplayUnreadableLog => {
                "a new JobMaster replays job events the store could not read back instead of restarting the job in full"
            }
            Bug::IgnoreBaselineRatio => {
                "tasks get speculative attempts before any baseline exists: every attempt that ran past the lower bound counts as slow"
            }
            Bug::KeepSlowAttempt => {
                "a speculated subtask finishes, but its other attempt is never cancelled: it keeps a slot and runs on for nothing"
            }
            Bug::KeepReplacedAttempt => {
                "a TaskManager cut off while its task was deployed again elsewhere reports the old attempt when it reconnects, and the JobMaster lets it run on beside the new one, in a slot it gives to another task"
            }
            Bug::SkipFinalFlush => {
                "the job is FINISHED while the finishes of its last vertex sit in the write buffer: a JobManager crash before the result is durable runs them again"
            }
            Bug::KeepLeaderWhenCutOff => {
                "a TaskManager cut off from its JobMaster keeps running the job's tasks past the heartbeat timeout, beside the attempts that replace them"
            }
            Bug::KeepPartitionsPastRegistrationTimeout => {
                "a TaskManager that waited longer than its registration timeout for a new JobManager still reports its partitions, and the late JobManager keeps outputs that should be gone"
            }
            Bug::ApplyStateBeforeRebuild => {
                "after a failover the tasks run attempt 1 but the JobMaster's view says 0: their updates are taken for stale ones and the job never ends"
            }
            Bug::SourceEndsEarly => {
                "every bounded source drops its last record, which no sink ever sees"
            }
            Bug::MisrouteKeyGroup => {
                "some keys are summed by the wrong keyed_sum subtask, so their totals come from a subtask that does not own them"
            }
            Bug::RestartGivesUpEarly => {
                "a job that exactly uses up its restart attempts fails instead of finishing"
            }
            Bug::ResendBeforeDrained => {
                "a state update kept during reconciliation is applied after a newer one of the same TaskManager"
            }
            Bug::TriggerWaitsForInput => {
                "a task triggered by RPC while inputs are open goes on consuming them before it snapshots"
            }
            Bug::IgnoreMinPause => {
                "checkpoints follow each other closer than min_pause allows, crowding out the job's work"
            }
            Bug::FailUnrelatedOnTmLoss => {
                "losing one TaskManager fails tasks on healthy ones too, and a region failover restarts regions that lost nothing"
            }
            Bug::EopNotCounted => {
                "at least once, EndOfPartition does not count as a barrier: a checkpoint begun while one was on its way stalls until it expires"
            }
            Bug::SnapshotAtFirstBarrier => {
                "at least once, a task snapshots at the first barrier, so a restore loses the records other channels sent before theirs"
            }
            Bug::SnapshotAbortedCheckpoint => {
                "at least once, a task snapshots a checkpoint it was told is aborted, and forwards its barrier instead of a cancellation marker"
            }
            Bug::AckBeforeUpload => {
                "a checkpoint completes before every snapshot in it is durable, so a restore from it may find state missing"
            }
            Bug::FinishBeforeUpload => {
                "a finishing task cancels its running uploads, so the checkpoints it took part in never get its acknowledgement"
            }
            Bug::SnapshotBeforeRunning => {
                "a task still deploying or initializing takes a snapshot on a trigger, before its state is restored"
            }
            Bug::AckFailedSnapshot => {
                "a task acknowledges a snapshot whose state could not be written, so a checkpoint completes without it"
            }
            Bug::CountEveryAbort => {
                "benign checkpoint aborts (a task closing, a subsumed alignment) count as failures, so a healthy job is failed over"
            }
            Bug::KeepFailureCount => {
                "failures separated by a completed checkpoint add up, so a job is failed over before it failed that often in a row"
            }
            Bug::SwallowCancelMarker => {
                "a task aborts a cancelled checkpoint but keeps the marker, so its consumers stay blocked in an alignment nobody completes"
            }
            Bug::CancelMarkerAsBarrier => {
                "a cancellation marker is taken for a barrier, so a checkpoint cancelled upstream is aligned and snapshotted anyway"
            }
            Bug::AcceptMixedChain => {
                "a job submitted with a checkpoint in which a chain holds finished and running operators starts anyway, so an operator added into a finished chain never runs"
            }
            Bug::SnapshotHeadOnly => {
                "a chained task writes only its head operator's state into a checkpoint, so after a restore a keyed sum or a two-phase-commit sink chained behind a map has lost what it held"
            }
            Bug::EmitAfterStop => {
                "a source stopping for a savepoint emits a record after the savepoint's barrier, which the savepoint does not cover and the stopped job never commits"
            }
            Bug::FinishBeforeSavepoint => {
                "a task that took the synchronous savepoint finishes when an older checkpoint completes, before the savepoint it belongs to"
            }
            Bug::DrainOnNoDrain => {
                "a stop without drain ends the input, so operators finish (keyed sums emit totals) and the savepoint cannot be resumed"
            }
            Bug::KeepSplitsOnRegionalReset => {
                "a reader restarted by a regional failover loses the splits it was assigned after the checkpoint: its enumerator still counts them assigned, so nobody reads them again"
            }
            Bug::EopNoticeAtAlignmentStart => {
                "EndOfPartition enqueued in the instant its task began aligning, after the barrier, counts as aligned, so records before it land after the snapshot"
            }
            Bug::KeepSpeculativeOnLostTaskManager => {
                "a speculative attempt on a TaskManager the JobMaster knows is lost stays deploying or running in its view, as if it could still finish"
            }
            Bug::NoSpeculativeHandover => {
                "an original attempt lost with its TaskManager fails its vertex over and cancels the speculative attempt that was about to finish elsewhere: the work is done again"
            }
            Bug::EopWhileDraining => {
                "a draining task's EndOfPartition leaves on one channel while another waits for credit; a barrier then sent behind it never reaches that consumer and the checkpoint expires"
            }
        }
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
