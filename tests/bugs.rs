//! Every injected bug is caught by the oracle guarding the rule it breaks, and the scenario it
//! is caught on passes without it: the oracles can fail, and fail for the right reason.

use flinksim::bug::Bug;
use flinksim::oracle::invariant::Invariant;
use flinksim::run::{run, RunOptions};
use flinksim::scenario::{self, Scenario};
use flinksim::trace::Retain;

/// The scenario (in `scenarios/`) each bug is shown on.
fn scenario_for(bug: Bug) -> &'static str {
    match bug {
        Bug::EopNotAligned => "case-barriers-and-eop",
        Bug::NoBarrierBeforeEop => "case-trigger-all-eop",
        Bug::CancelPendingOnFinish => "final-transaction-option1",
        Bug::FinishBeforeFinalCheckpoint => "final-transaction-flink",
        Bug::SkipRetriggerDescendants => "cascade-option1",
        Bug::TerminalCountsAsFinished => "failover-region-during-checkpoints",
        Bug::RestartFinishedTasks => "failover-between-finishes",
        Bug::RestoreFromPending => "failover-jobmanager-crash-precommitted",
        Bug::CommitUncoveredTransaction => "failover-jobmanager-crash-precommitted",
        Bug::IgnoreChannelStateOnRestore => "failover-unaligned-channel-state",
        Bug::UnalignedDropChannelState => "unaligned-two-running-inputs",
        Bug::UnalignedSpillAfterBarrier => "unaligned-two-running-inputs",
        Bug::TimeoutSwitchLosesBuffers => "alignment-timeout",
        Bug::DropRefusedRpc => "reconcile-refused-burst",
        Bug::ReconcileIgnoresMissingTm => "reconcile-taskmanager-late",
        Bug::NoTerminalRetention => "reconcile-finished-during-outage",
        Bug::ForgetEndedTasks => "reconcile-task-failed-during-outage",
        Bug::ApplyStateBeforeRebuild => "reconcile-after-failover",
        Bug::TrustUnflushedEvents => "batch-crash-in-flush-window",
        Bug::IgnorePartitionReports => "batch-taskmanager-never-returns",
        Bug::SkipCoordinatorReset => "batch-crash-during-sources",
        Bug::RestartAllUpstream => "batch-crash-mid-stage",
        Bug::KeepLatePartitions => "batch-taskmanager-returns-late",
        Bug::KeepLostPartitionsInRecovery => "batch-taskmanager-lost-during-recovery",
        Bug::ReuseTerminalExecution => "batch-taskmanager-never-returns",
        Bug::ReconcileAdoptsFailed => "batch-reconcile-task-failed-during-outage",
        Bug::AdaptiveRoundsDown => "batch-adaptive-parallelism-rounds-up",
        Bug::OvertakeKeptRpcs => "batch-reconcile-kept-rpcs-keep-order",
        Bug::DeployBeforeReport => "batch-reconcile-window-shorter-than-reports",
        Bug::ForgetLostRpc => "batch-rpc-loss-during-recovery",
        Bug::LogAfterWriteFailure => "batch-event-store-write-failure",
        Bug::ReplayUnreadableLog => "batch-event-store-unreadable",
        Bug::KeepPartitionsPastRegistrationTimeout => {
            "batch-taskmanagers-clean-up-before-new-jobmanager"
        }
        Bug::KeepReplacedAttempt => "batch-replaced-attempt-slot-refused-on-registration",
        Bug::KeepLeaderWhenCutOff => "batch-reconnected-taskmanager-fails-replaced-attempt",
        Bug::SkipFinalFlush => "batch-crash-after-job-finished",
        Bug::KeepSlowAttempt => "batch-speculative-slow-taskmanager",
        Bug::IgnoreBaselineRatio => "batch-speculative-spare-taskmanager",
        Bug::SourceEndsEarly => "two-source-pipeline",
        Bug::MisrouteKeyGroup => "keyed-sum-all-to-all",
        Bug::RestartGivesUpEarly => "restart-attempts-used-up",
        Bug::ResendBeforeDrained => "reconcile-slow-rpcs-keep-order",
        Bug::TriggerWaitsForInput => "trigger-rpc-open-inputs-flink",
        Bug::IgnoreMinPause => "min-pause-paces-triggers",
        Bug::EopNotCounted => "at-least-once-end-of-partition-counts",
        Bug::SnapshotAtFirstBarrier => "at-least-once-join-keeps-processing",
        Bug::SnapshotAbortedCheckpoint => "at-least-once-abort-notice-before-last-barrier",
        Bug::AckBeforeUpload => "async-snapshot-acknowledged-after-upload",
        Bug::FinishBeforeUpload => "async-snapshot-finishing-task-waits",
        Bug::FailUnrelatedOnTmLoss => "failover-taskmanager-lost-during-alignment",
        Bug::SnapshotBeforeRunning => "trigger-task-before-running",
        Bug::SnapshotHeadOnly => "chain-keyed-sum-restored-after-failover",
        Bug::AcceptMixedChain => "restore-from-refused-mixed-chain",
        Bug::AckFailedSnapshot => "fail-snapshot-async-declines",
        Bug::CountEveryAbort => "trigger-to-restarted-taskmanager-fails",
        Bug::KeepFailureCount => "tolerable-failures-reset-by-completion",
        Bug::SwallowCancelMarker => "cancel-marker-after-end-of-partition-legacy",
        Bug::CancelMarkerAsBarrier => "cancel-marker-after-end-of-partition-legacy",
        Bug::EmitAfterStop => "stop-with-savepoint-drain",
        Bug::FinishBeforeSavepoint => "stop-with-savepoint-races-final-checkpoint",
        Bug::DrainOnNoDrain => "stop-with-savepoint-no-drain",
        Bug::KeepSplitsOnRegionalReset => "splits-regional-failover-after-assignment",
        Bug::EopNoticeAtAlignmentStart => "ordering-eop-notice-at-alignment-start",
        Bug::EopWhileDraining => "buffers-draining-task-holds-end-of-partition",
        Bug::KeepSpeculativeOnLostTaskManager => "batch-speculative-attempt-taskmanager-lost",
        Bug::NoSpeculativeHandover => "batch-speculative-original-taskmanager-lost",
    }
}

fn load(name: &str) -> Scenario {
    let path = format!("{}/scenarios/{name}.json", env!("CARGO_MANIFEST_DIR"));
    scenario::load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"))
}

fn violated(scenario: &Scenario) -> Vec<Invariant> {
    let report = run(
        scenario,
        &RunOptions {
            seed: None,
            retain: Retain::Nothing,
            eager_sources: false,
        },
    );
    report.violations.iter().map(|v| v.invariant).collect()
}

#[test]
fn every_bug_is_caught_by_its_oracle_and_its_scenario_passes_without_it() {
    for bug in Bug::ALL {
        let mut scenario = load(scenario_for(bug));
        assert_eq!(
            scenario.bug, None,
            "{bug}: the shipped scenario must be bug-free"
        );
        assert!(
            violated(&scenario).is_empty(),
            "{bug}: {} must pass without the bug",
            scenario.name
        );
        scenario.bug = Some(bug);
        let found = violated(&scenario);
        assert!(
            found.contains(&bug.caught_by()),
            "{bug} on {}: expected a `{}` violation, found {found:?}",
            scenario.name,
            bug.caught_by()
        );
    }
}

/// P2.5's two rules hold for a coordinator on any vertex: skipping the coordinator's reset is
/// caught on a map vertex with one, for rule 1 (not fully finished) and rule 2 (fully finished,
/// then a subtask must run again).
#[test]
fn skipping_the_coordinator_reset_is_caught_on_a_vertex_that_is_no_source() {
    for name in [
        "batch-coordinator-on-map-unfinished",
        "batch-coordinator-on-map-finished-partition-missing",
    ] {
        assert_caught_on(name, Bug::SkipCoordinatorReset, Invariant::MinimalRerun);
    }
}

/// `name` passes as shipped and `invariant` catches `bug` on it.
fn assert_caught_on(name: &str, bug: Bug, invariant: Invariant) {
    let mut scenario = load(name);
    assert!(
        violated(&scenario).is_empty(),
        "{name} must pass as shipped"
    );
    scenario.bug = Some(bug);
    let found = violated(&scenario);
    assert!(
        found.contains(&invariant),
        "{name}: expected {invariant:?}, found {found:?}"
    );
}

/// A TaskManager lost inside a reconcile window that then ends FAILING takes its reported
/// partitions with it into batch recovery (P2.3), as one lost during P2.4's own wait does.
#[test]
fn keeping_lost_partitions_is_caught_inside_a_reconcile_window_too() {
    assert_caught_on(
        "batch-reconcile-window-loses-taskmanager-partitions",
        Bug::KeepLostPartitionsInRecovery,
        Invariant::MinimalRerun,
    );
}

/// Under each injected bug, `flinksim explain` on its shipped scenario tells the violation
/// inline, as a key moment naming the oracle, right after the event where it was first visible
/// (issue 16): the narration says where the run departed from the rule, not only the summary.
#[test]
fn explain_shows_each_bugs_violation_inline_at_its_event_and_names_the_departure() {
    for bug in Bug::ALL {
        let path = format!("scenarios/{}.json", scenario_for(bug));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_flinksim"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["explain", &path, "--bug", bug.name(), "--numbers"])
            .output()
            .expect("flinksim runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines()
                .next()
                .is_some_and(|l| l.ends_with(&format!(", injected bug {bug}"))),
            "{bug}: the header names the bug"
        );
        let marker = text
            .find("\n==> VIOLATION\n")
            .unwrap_or_else(|| panic!("{bug} on {path}: no violation told inline\n{text}"));
        let line = text[marker..].lines().nth(2).unwrap_or_default();
        let oracle = format!(" {}: ", bug.caught_by());
        assert!(
            text[marker..].contains(&oracle),
            "{bug}: no `{}` violation after the marker: {line}",
            bug.caught_by()
        );
        // The violation's line carries the number of the event it follows.
        let number: u64 = line
            .trim_start()
            .strip_prefix('#')
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{bug}: no event number on {line:?}"));
        // And names the departure: the rule the bug breaks and how.
        let departure = format!(
            "(violation first visible at event {number}); the injected bug {bug} departs from {}: {}",
            bug.rule(),
            bug.description()
        );
        assert!(line.ends_with(&departure), "{bug}: {line}");
    }
}
