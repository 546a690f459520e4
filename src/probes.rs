//! Coverage probes: named protocol situations a run went through, so a fuzz campaign can say
//! which of the situations the protocols exist for its generated scenarios actually reach
//! (issue 8, item 7), and which they never do.
//!
//! A probe is a *situation*, not a verdict: "a trigger reached a finished task" says nothing
//! about whether the coordinator handled it well (that is the oracles' job). Each probe is
//! defined by trace events alone, so it means the same in every run and can be checked against
//! a rendered trace by hand.
//!
//! [`Probes`] watches every event as it is recorded, like the oracles, because campaigns run
//! with `Retain::Nothing`: nothing is left to look at after the run. Its state is a few flags
//! per subtask; data events (the bulk of a trace) only cost a failed `match` arm.

use crate::graph::{ExecutionGraph, SubtaskId};
use crate::record::Element;
use crate::scenario::{Delivery, FinishProtocol};
use crate::status::ExecutionState;
use crate::trace::{
    AbortReason, Address, Call, DeclineReason, FaultEvent, TraceEvent, TriggerFailure,
};
use crate::world::Config;
use std::collections::{BTreeMap, BTreeSet};

/// One named situation. The order is the order of reports.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Probe {
    TriggerMissedFinishedTask,
    RetriggerCascade,
    FinishingOwesCheckpoints,
    EopDuringAlignment,
    BarrierInsertedBeforeEop,
    RpcTriggeredNonSource,
    FinalCheckpointCompleted,
    LegacyNoTrigger,
    UnalignedChannelState,
    AlignmentTimeoutSwitch,
    AtLeastOncePastBarrier,
    UploadAfterEndOfInput,
    PendingProblemSlowEop,
    FailoverRestoreFromCheckpoint,
    FailoverFromScratch,
    RegionFailover,
    FinishedOnRestore,
    RestoreReplaysChannelState,
    TwoPhaseCommitRestoreCommit,
    FaultDuringFinalCheckpoint,
    CrashInFlushWindow,
    JobmanagerCrashRecovery,
    TaskmanagerLost,
    TaskmanagerReplacedBeforeTimeout,
    LateTaskmanagerReport,
    RpcLostRetried,
    StaleRpcFenced,
    DelaySpike,
    HeldChannelReleased,
    TriggerBeforeRunning,
    TriggerToUnknownTask,
    AsyncPartFailed,
    CheckpointFailuresExceeded,
    CancelMarkerEndedAlignment,
    SavepointCompleted,
    SavepointRacedFinalCheckpoint,
    SplitReassigned,
    BatchRecoveredFinished,
    BatchEventsLost,
    BatchNoSnapshotDiscard,
    BatchPartitionMissing,
    BatchCoordinatorRule,
    BatchLateReportReleased,
    BatchPartitionNotFound,
    BatchFullRestart,
    BatchAdaptiveParallelism,
    BatchReconcileRunning,
    BatchReconcileFailing,
    BatchRpcRefused,
    BatchSpeculation,
}

impl Probe {
    pub const ALL: [Probe; 50] = [
        Probe::TriggerMissedFinishedTask,
        Probe::RetriggerCascade,
        Probe::FinishingOwesCheckpoints,
        Probe::EopDuringAlignment,
        Probe::BarrierInsertedBeforeEop,
        Probe::RpcTriggeredNonSource,
        Probe::FinalCheckpointCompleted,
        Probe::LegacyNoTrigger,
        Probe::UnalignedChannelState,
        Probe::AlignmentTimeoutSwitch,
        Probe::AtLeastOncePastBarrier,
        Probe::UploadAfterEndOfInput,
        Probe::PendingProblemSlowEop,
        Probe::FailoverRestoreFromCheckpoint,
        Probe::FailoverFromScratch,
        Probe::RegionFailover,
        Probe::FinishedOnRestore,
        Probe::RestoreReplaysChannelState,
        Probe::TwoPhaseCommitRestoreCommit,
        Probe::FaultDuringFinalCheckpoint,
        Probe::CrashInFlushWindow,
        Probe::JobmanagerCrashRecovery,
        Probe::TaskmanagerLost,
        Probe::TaskmanagerReplacedBeforeTimeout,
        Probe::LateTaskmanagerReport,
        Probe::RpcLostRetried,
        Probe::StaleRpcFenced,
        Probe::DelaySpike,
        Probe::HeldChannelReleased,
        Probe::TriggerBeforeRunning,
        Probe::TriggerToUnknownTask,
        Probe::AsyncPartFailed,
        Probe::CheckpointFailuresExceeded,
        Probe::CancelMarkerEndedAlignment,
        Probe::SavepointCompleted,
        Probe::SavepointRacedFinalCheckpoint,
        Probe::SplitReassigned,
        Probe::BatchRecoveredFinished,
        Probe::BatchEventsLost,
        Probe::BatchNoSnapshotDiscard,
        Probe::BatchPartitionMissing,
        Probe::BatchCoordinatorRule,
        Probe::BatchLateReportReleased,
        Probe::BatchPartitionNotFound,
        Probe::BatchFullRestart,
        Probe::BatchAdaptiveParallelism,
        Probe::BatchReconcileRunning,
        Probe::BatchReconcileFailing,
        Probe::BatchRpcRefused,
        Probe::BatchSpeculation,
    ];

    /// The stable id used in campaign tables and `results.jsonl`.
    pub fn id(self) -> &'static str {
        match self {
            Probe::TriggerMissedFinishedTask => "trigger_missed_finished_task",
            Probe::RetriggerCascade => "retrigger_cascade",
            Probe::FinishingOwesCheckpoints => "finishing_owes_checkpoints",
            Probe::EopDuringAlignment => "eop_during_alignment",
            Probe::BarrierInsertedBeforeEop => "barrier_inserted_before_eop",
            Probe::RpcTriggeredNonSource => "rpc_triggered_non_source",
            Probe::FinalCheckpointCompleted => "final_checkpoint_completed",
            Probe::LegacyNoTrigger => "legacy_no_trigger",
            Probe::UnalignedChannelState => "unaligned_channel_state",
            Probe::AlignmentTimeoutSwitch => "alignment_timeout_switch",
            Probe::AtLeastOncePastBarrier => "at_least_once_past_barrier",
            Probe::UploadAfterEndOfInput => "upload_after_end_of_input",
            Probe::PendingProblemSlowEop => "pending_problem_slow_eop",
            Probe::FailoverRestoreFromCheckpoint => "failover_restore_from_checkpoint",
            Probe::FailoverFromScratch => "failover_from_scratch",
            Probe::RegionFailover => "region_failover",
            Probe::FinishedOnRestore => "finished_on_restore",
            Probe::RestoreReplaysChannelState => "restore_replays_channel_state",
            Probe::TwoPhaseCommitRestoreCommit => "two_phase_commit_restore_commit",
            Probe::FaultDuringFinalCheckpoint => "fault_during_final_checkpoint",
            Probe::CrashInFlushWindow => "crash_in_flush_window",
            Probe::JobmanagerCrashRecovery => "jobmanager_crash_recovery",
            Probe::TaskmanagerLost => "taskmanager_lost",
            Probe::TaskmanagerReplacedBeforeTimeout => "taskmanager_replaced_before_timeout",
            Probe::LateTaskmanagerReport => "late_taskmanager_report",
            Probe::RpcLostRetried => "rpc_lost_retried",
            Probe::StaleRpcFenced => "stale_rpc_fenced",
            Probe::DelaySpike => "delay_spike",
            Probe::HeldChannelReleased => "held_channel_released",
            Probe::TriggerBeforeRunning => "trigger_before_running",
            Probe::TriggerToUnknownTask => "trigger_to_unknown_task",
            Probe::AsyncPartFailed => "async_part_failed",
            Probe::CheckpointFailuresExceeded => "checkpoint_failures_exceeded",
            Probe::CancelMarkerEndedAlignment => "cancel_marker_ended_alignment",
            Probe::SavepointCompleted => "savepoint_completed",
            Probe::SavepointRacedFinalCheckpoint => "savepoint_raced_final_checkpoint",
            Probe::SplitReassigned => "split_reassigned",
            Probe::BatchRecoveredFinished => "batch_recovered_finished",
            Probe::BatchEventsLost => "batch_events_lost",
            Probe::BatchNoSnapshotDiscard => "batch_no_snapshot_discard",
            Probe::BatchPartitionMissing => "batch_partition_missing",
            Probe::BatchCoordinatorRule => "batch_coordinator_rule",
            Probe::BatchLateReportReleased => "batch_late_report_released",
            Probe::BatchPartitionNotFound => "batch_partition_not_found",
            Probe::BatchFullRestart => "batch_full_restart",
            Probe::BatchAdaptiveParallelism => "batch_adaptive_parallelism",
            Probe::BatchReconcileRunning => "batch_reconcile_running",
            Probe::BatchReconcileFailing => "batch_reconcile_failing",
            Probe::BatchRpcRefused => "batch_rpc_refused",
            Probe::BatchSpeculation => "batch_speculation",
        }
    }

    /// The situation, with the rule it exercises, in one line.
    pub fn description(self) -> &'static str {
        match self {
            Probe::TriggerMissedFinishedTask => {
                "P1.2/F1.2: a trigger RPC reached a task that had already finished"
            }
            Probe::RetriggerCascade => {
                "P1.2 option1: two or more re-trigger RPCs for one checkpoint"
            }
            Probe::FinishingOwesCheckpoints => {
                "P1.2 option2: the answer to a finishing report listed pending checkpoints"
            }
            Probe::EopDuringAlignment => {
                "P1.3 step 4/F1.3: EndOfPartition processed on a channel while aligning"
            }
            Probe::BarrierInsertedBeforeEop => {
                "P1.3 steps 2-3: a barrier inserted before a buffered EndOfPartition"
            }
            Probe::RpcTriggeredNonSource => {
                "P1.1/F1.4: a non-source task learned of a checkpoint by trigger RPC"
            }
            Probe::FinalCheckpointCompleted => {
                "F1.5: a checkpoint holding a snapshot taken after end of input completed"
            }
            Probe::LegacyNoTrigger => {
                "legacy: NOT_ALL_REQUIRED_TASKS_RUNNING while a subtask is FINISHED"
            }
            Probe::UnalignedChannelState => "P1.4: in-flight records persisted as channel state",
            Probe::AlignmentTimeoutSwitch => {
                "F1.3: an aligned checkpoint switched to unaligned (alignment timeout)"
            }
            Probe::AtLeastOncePastBarrier => {
                "F1.7: an at-least-once snapshot holds records taken past a barrier"
            }
            Probe::UploadAfterEndOfInput => {
                "F1.8: a snapshot's asynchronous part ends while its task, past end of input, waits to finish"
            }
            Probe::PendingProblemSlowEop => {
                "P1.5: unaligned, an RPC-triggered task's barrier waits behind a finished input's data"
            }
            Probe::FailoverRestoreFromCheckpoint => {
                "P1.8: restarted subtasks restored from a completed checkpoint"
            }
            Probe::FailoverFromScratch => {
                "P1.8: restarted subtasks started fresh (no checkpoint completed)"
            }
            Probe::RegionFailover => "P1.8: only a pipelined region was restarted",
            Probe::FinishedOnRestore => "F1.6: a subtask was deployed finished on restore",
            Probe::RestoreReplaysChannelState => {
                "P1.4/P1.8: a subtask restored from a checkpoint holding its channel state"
            }
            Probe::TwoPhaseCommitRestoreCommit => {
                "P1.7/P1.8: a restored sink committed a transaction its previous attempt pre-committed"
            }
            Probe::FaultDuringFinalCheckpoint => {
                "F1.5/P1.7: a crash while a task waited for its final checkpoint"
            }
            Probe::CrashInFlushWindow => {
                "P1.5: a crash while a flushing task, past end of input, was back-pressured"
            }
            Probe::JobmanagerCrashRecovery => "P1.8: a new JobManager took over after a crash",
            Probe::TaskmanagerLost => "P1.8: a TaskManager process died with its tasks",
            Probe::TaskmanagerReplacedBeforeTimeout => {
                "P1.8: a lost TaskManager's heartbeat timed out after its replacement registered"
            }
            Probe::LateTaskmanagerReport => {
                "P1.8: a state report of a replaced attempt reached the JobMaster"
            }
            Probe::RpcLostRetried => "an RPC was lost in the network and retried",
            Probe::StaleRpcFenced => "a TaskManager refused an RPC from a deposed JobMaster",
            Probe::DelaySpike => "a delay spike slowed channels or RPCs",
            Probe::HeldChannelReleased => {
                "a held channel delivered, at its release, elements that had waited on its wire"
            }
            Probe::TriggerBeforeRunning => {
                "F1.9: a trigger reached a task not RUNNING yet, which declined it as not ready"
            }
            Probe::TriggerToUnknownTask => {
                "F1.9: a trigger reached a TaskManager that no longer hosts the attempt"
            }
            Probe::AsyncPartFailed => {
                "F1.9: a snapshot's asynchronous part failed and its task declined"
            }
            Probe::CheckpointFailuresExceeded => {
                "F1.9: more checkpoint failures in a row than tolerable_failures: a global failover"
            }
            Probe::CancelMarkerEndedAlignment => {
                "F1.10: a cancellation marker ended an alignment in band"
            }
            Probe::SavepointCompleted => {
                "F1.11: the synchronous savepoint of a stop-with-savepoint completed"
            }
            Probe::SavepointRacedFinalCheckpoint => {
                "F1.11 step 4: a task snapshotted a savepoint while its final checkpoint was pending"
            }
            Probe::SplitReassigned => {
                "F1.13 step 3: a split handed back to its enumerator by a failover was assigned again"
            }
            Probe::BatchRecoveredFinished => "P2.4 step 2: a new JobManager recovered subtasks as finished (CREATED -> FINISHED)",
            Probe::BatchEventsLost => "P2.2: a JobManager died with unflushed job events",
            Probe::BatchNoSnapshotDiscard => "F2.3: replay discarded trailing finished events without a snapshot",
            Probe::BatchPartitionMissing => "P2.4 step 4: a producer ran again for a partition not reported in time",
            Probe::BatchCoordinatorRule => "P2.5: a coordinator without a usable snapshot made finished subtasks run again",
            Probe::BatchLateReportReleased => "F2.4: a partition reported after the wait was released",
            Probe::BatchPartitionNotFound => "P2.5: a consumer missed a partition (PartitionNotFound) and failed over",
            Probe::BatchFullRestart => "P2.6: a JobManager crash restarted the batch job from scratch",
            Probe::BatchAdaptiveParallelism => "P2.1: a vertex's parallelism was decided from its input bytes",
            Probe::BatchReconcileRunning => "P3.4: a batch job's reconciliation ended RUNNING or FINISHED",
            Probe::BatchReconcileFailing => "P3.4: a batch job's reconciliation ended FAILING, then FLIP-383 recovery",
            Probe::BatchRpcRefused => "P3.3: a reconciling JobMaster refused a batch task's RPC",
            Probe::BatchSpeculation => "P2.8: a slow batch task got a speculative attempt",
        }
    }
}

/// A set of probes, small and `Copy` so every seed's result can carry one.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ProbeSet(u64);

impl ProbeSet {
    pub fn insert(&mut self, probe: Probe) {
        self.0 |= 1 << probe as u64;
    }

    pub fn contains(self, probe: Probe) -> bool {
        self.0 & (1 << probe as u64) != 0
    }

    /// The batch probes a batch trace event shows (P2, P3 in batch), and the network faults
    /// both kinds of job share.
    pub fn observe_batch(&mut self, event: &TraceEvent) {
        use crate::trace::{FaultEvent, ReconcileOutcome, RerunReason};
        let probe = match *event {
            TraceEvent::RpcLost { .. } => Probe::RpcLostRetried,
            TraceEvent::FaultFired {
                fault: FaultEvent::DelaySpike,
                ..
            } => Probe::DelaySpike,
            TraceEvent::ReconcileEnded { outcome, .. } => match outcome {
                ReconcileOutcome::Running | ReconcileOutcome::Finished => {
                    Probe::BatchReconcileRunning
                }
                ReconcileOutcome::Failing => Probe::BatchReconcileFailing,
            },
            TraceEvent::RecoveryEnded { recovered, .. } if recovered > 0 => {
                Probe::BatchRecoveredFinished
            }
            TraceEvent::JobEventsLost { .. } => Probe::BatchEventsLost,
            TraceEvent::RecoveryStarted { discarded, .. } if discarded > 0 => {
                Probe::BatchNoSnapshotDiscard
            }
            TraceEvent::RecoveryStarted {
                full_restart: true, ..
            } => Probe::BatchFullRestart,
            TraceEvent::SubtaskReset {
                reason: RerunReason::PartitionMissing,
                ..
            } => Probe::BatchPartitionMissing,
            TraceEvent::SubtaskReset {
                reason: RerunReason::CoordinatorRule,
                ..
            } => Probe::BatchCoordinatorRule,
            TraceEvent::PartitionReported { late: true, .. } => Probe::BatchLateReportReleased,
            TraceEvent::PartitionNotFound { .. } => Probe::BatchPartitionNotFound,
            TraceEvent::VertexInitialized { adaptive: true, .. } => Probe::BatchAdaptiveParallelism,
            TraceEvent::TaskRpcRefused { .. } => Probe::BatchRpcRefused,
            TraceEvent::Deployed {
                speculative: true, ..
            } => Probe::BatchSpeculation,
            _ => return,
        };
        self.insert(probe);
    }

    /// The probes in the set, in [`Probe::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Probe> {
        Probe::ALL.into_iter().filter(move |&p| self.contains(p))
    }
}

/// Which abstract protocol states a run went through, and which transitions between them: the
/// coverage `fuzz --strategy guided` steers by besides the probes (`src/fuzz/guided.rs`).
///
/// An abstract state is (checkpoint phase × finished set × fault phase), four values each
/// ([`AbstractState`]): coarse on purpose, so that a new one means a new kind of situation, not a
/// new subtask count. 64 states fit in one word and their 4,096 ordered pairs in 64 words; a run
/// sets a bit per state it entered and per change of state it made.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct StateCoverage {
    states: u64,
    transitions: [u64; 64],
}

impl Default for StateCoverage {
    fn default() -> StateCoverage {
        StateCoverage {
            states: 0,
            transitions: [0; 64],
        }
    }
}

impl StateCoverage {
    /// Records that the run is in `to`, having been in `from`.
    fn enter(&mut self, from: AbstractState, to: AbstractState) {
        self.states |= 1 << to.index();
        if from != to {
            self.transitions[from.index()] |= 1 << to.index();
        }
    }

    /// The states entered, as indices 0..64 ([`AbstractState::index`]).
    pub fn states(&self) -> impl Iterator<Item = u32> + '_ {
        (0..64).filter(move |i| self.states & (1 << i) != 0)
    }

    /// The transitions made, as `from * 64 + to`.
    pub fn transitions(&self) -> impl Iterator<Item = u32> + '_ {
        (0..64u32).flat_map(move |from| {
            (0..64u32)
                .filter(move |to| self.transitions[from as usize] & (1 << to) != 0)
                .map(move |to| from * 64 + to)
        })
    }
}

/// One abstract protocol state of a streaming run, each part in 0..4:
/// - `checkpoint`: 0 none pending, 1 one pending, 2 one pending that holds a snapshot taken
///   after end of input (a final checkpoint, P1.5), 3 two or more pending;
/// - `finished`: 0 no subtask FINISHED (as the JobMaster sees it), 1 only sources, 2 some
///   non-source too but not all, 3 all;
/// - `fault`: 0 no fault fired yet, 1 a fault fired and no restore since, 2 restored (or a new
///   JobMaster elected) after a fault, 3 a second fault fired.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AbstractState {
    pub checkpoint: u8,
    pub finished: u8,
    pub fault: u8,
}

impl AbstractState {
    pub fn index(self) -> usize {
        usize::from(self.checkpoint) * 16 + usize::from(self.finished) * 4 + usize::from(self.fault)
    }
}

/// Per subtask, what the probes need to know about its current attempt.
#[derive(Clone, Copy, Default)]
struct Attempt {
    /// The checkpoint it is aligning (from its first barrier or trigger to its snapshot).
    aligning: Option<u64>,
    /// The latest checkpoint it learned of by trigger RPC.
    rpc_triggered: Option<u64>,
    /// The checkpoint it was restored from (0: none).
    restored_from: u64,
    /// It reached end of input and is not terminal yet.
    past_end: bool,
    /// The first checkpoint it snapshotted after end of input (its final one).
    final_taken: Option<u64>,
    /// Past end of input, it found an output full (it is draining).
    draining: bool,
}

/// Watches a run's trace events and collects the probes they hit.
pub struct Probes {
    hit: ProbeSet,
    is_source: Vec<bool>,
    /// Per subtask: it waits for a checkpoint covering its final state before it finishes
    /// (every task in `flink`, two-phase-commit sinks in `option1`/`option2`).
    needs_final: Vec<bool>,
    legacy: bool,
    unaligned: bool,
    /// `flush_before_finish` in effect (it only applies to unaligned checkpoints).
    flushing: bool,
    attempts: Vec<Attempt>,
    /// Per subtask, the JobMaster's latest attempt and whether it counts it FINISHED.
    latest_attempt: Vec<u32>,
    finished_view: Vec<bool>,
    /// Pending checkpoints: re-trigger RPCs so far, and whether a final snapshot is in.
    retriggers: BTreeMap<u64, u32>,
    final_snapshots: BTreeSet<u64>,
    /// (checkpoint, subtask) pairs whose snapshot holds channel state.
    channel_state: BTreeSet<(u64, SubtaskId)>,
    /// TaskManagers whose replacement process started since they were last lost.
    replaced: BTreeSet<u32>,
    /// F1.11: the synchronous savepoints triggered.
    savepoints: Vec<u64>,
    /// Per subtask, its vertex; and the (vertex, split) pairs assigned so far (F1.13).
    vertex: Vec<u32>,
    splits_assigned: BTreeSet<(u32, u32)>,
    /// The abstract state's inputs ([`AbstractState`]): checkpoints pending, FINISHED
    /// subtasks (sources, others), faults fired and whether a restore followed the last.
    pending: BTreeSet<u64>,
    finished_sources: u32,
    finished_others: u32,
    faults_fired: u32,
    restored_since_fault: bool,
    state: AbstractState,
    states: StateCoverage,
}

impl Probes {
    pub fn new(graph: &ExecutionGraph, config: Config) -> Probes {
        let operators = graph
            .subtasks
            .iter()
            .map(|s| &graph.vertices[s.vertex.index()].chain);
        let is_source = operators.clone().map(|c| c.is_source()).collect();
        let needs_final = operators
            .map(|c| match config.protocol {
                Some(FinishProtocol::Flink) => true,
                Some(FinishProtocol::Option1 | FinishProtocol::Option2) => {
                    c.sink() == Some(Delivery::TwoPhaseCommit)
                }
                Some(FinishProtocol::Legacy) | None => false,
            })
            .collect();
        let n = graph.subtasks.len();
        Probes {
            hit: ProbeSet::default(),
            is_source,
            needs_final,
            legacy: config.protocol == Some(FinishProtocol::Legacy),
            unaligned: config.unaligned,
            flushing: config.unaligned && config.flush_before_finish,
            attempts: vec![Attempt::default(); n],
            latest_attempt: vec![0; n],
            finished_view: vec![false; n],
            retriggers: BTreeMap::new(),
            final_snapshots: BTreeSet::new(),
            channel_state: BTreeSet::new(),
            replaced: BTreeSet::new(),
            savepoints: Vec::new(),
            vertex: graph.subtasks.iter().map(|s| s.vertex.0).collect(),
            splits_assigned: BTreeSet::new(),
            pending: BTreeSet::new(),
            finished_sources: 0,
            finished_others: 0,
            faults_fired: 0,
            restored_since_fault: false,
            state: AbstractState::default(),
            states: StateCoverage {
                states: 1,
                ..StateCoverage::default()
            },
        }
    }

    /// The abstract states entered so far, and the transitions between them.
    pub fn states(&self) -> StateCoverage {
        self.states
    }

    /// The abstract state now, from the counters `observe_protocol` keeps.
    fn abstract_state(&self) -> AbstractState {
        let total = self.is_source.len() as u32;
        AbstractState {
            checkpoint: match self.pending.len() {
                0 => 0,
                1 if self.final_snapshots.is_empty() => 1,
                1 => 2,
                _ => 3,
            },
            finished: match (self.finished_sources, self.finished_others) {
                (0, 0) => 0,
                (s, o) if s + o == total => 3,
                (_, 0) => 1,
                _ => 2,
            },
            fault: match (self.faults_fired, self.restored_since_fault) {
                (0, _) => 0,
                (1, false) => 1,
                (1, true) => 2,
                _ => 3,
            },
        }
    }

    /// The probes hit so far.
    pub fn hits(&self) -> ProbeSet {
        self.hit
    }

    /// Sees one trace event as it is recorded.
    // `always`: on the hot path of every recorded event, from two callers in `Ctx`.
    #[inline(always)]
    pub fn observe(&mut self, event: &TraceEvent) {
        match *event {
            TraceEvent::Push {
                element: Element::PriorityBarrier(_),
                ..
            } if !self.unaligned => self.hit.insert(Probe::AlignmentTimeoutSwitch),
            TraceEvent::Take {
                subtask,
                element: Element::EndOfPartition,
                ..
            } if self.attempts[subtask.index()].aligning.is_some() => {
                self.hit.insert(Probe::EopDuringAlignment)
            }
            TraceEvent::Take {
                subtask,
                element: Element::CancelMarker(_),
                ..
            } if self.attempts[subtask.index()].aligning.is_some() => {
                self.hit.insert(Probe::CancelMarkerEndedAlignment)
            }
            TraceEvent::Blocked { subtask, .. } if self.attempts[subtask.index()].past_end => {
                self.attempts[subtask.index()].draining = true
            }
            TraceEvent::Push { .. }
            | TraceEvent::Arrive { .. }
            | TraceEvent::Take { .. }
            | TraceEvent::BufferSent { .. }
            | TraceEvent::BufferArrived { .. }
            | TraceEvent::BufferTaken { .. }
            | TraceEvent::Blocked { .. } => {}
            _ => self.observe_protocol(event),
        }
    }

    /// Everything but the data plane: rare enough to branch freely.
    fn observe_protocol(&mut self, event: &TraceEvent) {
        self.count_for_state(event);
        self.observe_situation(event);
        let now = self.abstract_state();
        if now != self.state {
            self.states.enter(self.state, now);
            self.state = now;
        }
    }

    /// Keeps the counters [`AbstractState`] is made of. Runs before `observe_situation`, which
    /// overwrites the JobMaster's view of a subtask this compares with.
    fn count_for_state(&mut self, event: &TraceEvent) {
        match *event {
            TraceEvent::CheckpointTriggered { checkpoint } => {
                self.pending.insert(checkpoint);
            }
            TraceEvent::CheckpointCompleted { checkpoint }
            | TraceEvent::CheckpointAborted { checkpoint, .. } => {
                self.pending.remove(&checkpoint);
            }
            TraceEvent::ExecutionState { subtask, to, .. } => {
                let i = subtask.index();
                let now = to == ExecutionState::Finished;
                if now != self.finished_view[i] {
                    let count = if self.is_source[i] {
                        &mut self.finished_sources
                    } else {
                        &mut self.finished_others
                    };
                    *count = if now { *count + 1 } else { *count - 1 };
                }
            }
            TraceEvent::FaultFired { .. } => {
                self.faults_fired += 1;
                self.restored_since_fault = false;
            }
            TraceEvent::Restore { .. } | TraceEvent::JobMasterElected { .. } => {
                self.restored_since_fault = self.faults_fired > 0;
            }
            _ => {}
        }
    }

    /// The probes' own situations.
    fn observe_situation(&mut self, event: &TraceEvent) {
        match *event {
            // A new attempt starts afresh, and a terminal one waits for nothing. Where it was
            // restored from stays: `SubmitTask` sets it before the slot's previous attempt is
            // cancelled and before the new one is deploying.
            TraceEvent::TaskState { subtask, to, .. }
                if to == ExecutionState::Deploying || to.is_terminal() =>
            {
                let a = &mut self.attempts[subtask.index()];
                *a = Attempt {
                    restored_from: a.restored_from,
                    ..Attempt::default()
                };
            }
            TraceEvent::ExecutionState {
                subtask,
                attempt,
                to,
                ..
            } => {
                let latest = &mut self.latest_attempt[subtask.index()];
                *latest = (*latest).max(attempt);
                self.finished_view[subtask.index()] = to == ExecutionState::Finished;
            }
            TraceEvent::ChannelReleased { arrivals, .. } if arrivals > 0 => {
                self.hit.insert(Probe::HeldChannelReleased)
            }
            // F1.13 step 3: a split is assigned once unless a failover handed it back (the
            // guard records the assignment; a first one falls through to no probe).
            TraceEvent::SplitAssigned {
                subtask,
                split: Some(split),
                ..
            } if !self
                .splits_assigned
                .insert((self.vertex[subtask.index()], split)) =>
            {
                self.hit.insert(Probe::SplitReassigned)
            }
            TraceEvent::Rpc { to, rpc, .. } => match (to, rpc.call) {
                // Seen at the JobMaster, not as an abort: a trigger by hand may name a
                // checkpoint the coordinator never had pending.
                (
                    Address::JobMaster,
                    Call::DeclineCheckpoint {
                        reason: DeclineReason::TaskNotReady,
                        ..
                    },
                ) => self.hit.insert(Probe::TriggerBeforeRunning),
                (Address::JobMaster, Call::TriggerMissed(_)) => {
                    self.hit.insert(Probe::TriggerMissedFinishedTask)
                }
                (Address::JobMaster, Call::UpdateTaskExecutionState { .. })
                    if rpc.attempt < self.latest_attempt[rpc.subtask.index()] =>
                {
                    self.hit.insert(Probe::LateTaskmanagerReport)
                }
                (Address::TaskManager(_), Call::FinishingAnswer(owed)) if !owed.is_empty() => {
                    self.hit.insert(Probe::FinishingOwesCheckpoints)
                }
                (Address::TaskManager(_), Call::SubmitTask(restore)) => {
                    // Set before the task starts: it commits restored transactions then.
                    self.attempts[rpc.subtask.index()].restored_from = restore.checkpoint;
                    if self
                        .channel_state
                        .contains(&(restore.checkpoint, rpc.subtask))
                    {
                        self.hit.insert(Probe::RestoreReplaysChannelState);
                    }
                }
                (Address::TaskManager(_), Call::NotifyCheckpointAborted(n)) => {
                    let a = &mut self.attempts[rpc.subtask.index()];
                    if a.aligning == Some(n) {
                        a.aligning = None;
                    }
                }
                _ => {}
            },
            TraceEvent::EndOfInput { subtask } => {
                let a = &mut self.attempts[subtask.index()];
                a.past_end = true;
                // Legacy P1.6: finishing abandons the alignment.
                if self.legacy {
                    a.aligning = None;
                }
            }
            TraceEvent::CheckpointNotTriggered {
                reason: TriggerFailure::NotAllRequiredTasksRunning,
            } if self.legacy && self.finished_view.contains(&true) => {
                self.hit.insert(Probe::LegacyNoTrigger)
            }
            TraceEvent::CheckpointSeen {
                subtask,
                checkpoint,
                by_trigger,
            } => {
                let a = &mut self.attempts[subtask.index()];
                a.aligning = Some(checkpoint);
                if by_trigger {
                    a.rpc_triggered = Some(checkpoint);
                    if !self.is_source[subtask.index()] {
                        self.hit.insert(Probe::RpcTriggeredNonSource);
                    }
                }
            }
            TraceEvent::BarrierInserted {
                subtask,
                checkpoint,
                ..
            } => {
                self.hit.insert(Probe::BarrierInsertedBeforeEop);
                if self.unaligned
                    && self.attempts[subtask.index()].rpc_triggered == Some(checkpoint)
                {
                    self.hit.insert(Probe::PendingProblemSlowEop);
                }
            }
            TraceEvent::AlignmentDone { subtask, .. } => {
                self.attempts[subtask.index()].aligning = None
            }
            TraceEvent::SnapshotUploaded { subtask, .. }
                if self.attempts[subtask.index()].past_end =>
            {
                self.hit.insert(Probe::UploadAfterEndOfInput);
            }
            TraceEvent::BarriersCounted {
                subtask,
                past_barrier,
                ..
            } => {
                self.attempts[subtask.index()].aligning = None;
                if past_barrier > 0 {
                    self.hit.insert(Probe::AtLeastOncePastBarrier);
                }
            }
            TraceEvent::Snapshot {
                subtask,
                checkpoint,
                finished,
                ..
            } => {
                let a = &mut self.attempts[subtask.index()];
                a.aligning = None;
                let raced = a
                    .final_taken
                    .is_some_and(|k| k < checkpoint && self.final_snapshots.contains(&k));
                if raced && self.savepoints.contains(&checkpoint) {
                    self.hit.insert(Probe::SavepointRacedFinalCheckpoint);
                }
                if finished {
                    a.final_taken.get_or_insert(checkpoint);
                    self.final_snapshots.insert(checkpoint);
                }
            }
            TraceEvent::SavepointTriggered { checkpoint, .. } => self.savepoints.push(checkpoint),
            TraceEvent::ChannelState {
                subtask,
                checkpoint,
                records,
                ..
            } if records > 0 => {
                self.hit.insert(Probe::UnalignedChannelState);
                self.channel_state.insert((checkpoint, subtask));
            }
            TraceEvent::Retrigger { checkpoint, .. } => {
                let n = self.retriggers.entry(checkpoint).or_default();
                *n += 1;
                if *n >= 2 {
                    self.hit.insert(Probe::RetriggerCascade);
                }
            }
            TraceEvent::CheckpointCompleted { checkpoint } => {
                if self.savepoints.contains(&checkpoint) {
                    self.hit.insert(Probe::SavepointCompleted);
                }
                if self.final_snapshots.remove(&checkpoint) {
                    self.hit.insert(Probe::FinalCheckpointCompleted);
                }
                self.retriggers.remove(&checkpoint);
            }
            TraceEvent::CheckpointAborted { checkpoint, reason } => {
                self.final_snapshots.remove(&checkpoint);
                self.retriggers.remove(&checkpoint);
                match reason {
                    AbortReason::Declined(DeclineReason::AsyncException) => {
                        self.hit.insert(Probe::AsyncPartFailed)
                    }
                    AbortReason::TriggerFailed => self.hit.insert(Probe::TriggerToUnknownTask),
                    _ => {}
                }
            }
            TraceEvent::CheckpointFailuresExceeded { .. } => {
                self.hit.insert(Probe::CheckpointFailuresExceeded)
            }
            TraceEvent::TransactionCommitted {
                subtask,
                checkpoint,
                ..
            } if checkpoint <= self.attempts[subtask.index()].restored_from => {
                self.hit.insert(Probe::TwoPhaseCommitRestoreCommit)
            }
            TraceEvent::FaultFired { fault, .. } => match fault {
                FaultEvent::DelaySpike => self.hit.insert(Probe::DelaySpike),
                FaultEvent::RpcLoss
                | FaultEvent::JobEventsWriteFailure
                | FaultEvent::JobEventsReadFailure
                | FaultEvent::TriggerTask { .. }
                | FaultEvent::HoldChannel(_)
                | FaultEvent::StopWithSavepoint { .. } => {}
                FaultEvent::FailTask(_)
                | FaultEvent::FailSnapshot { .. }
                | FaultEvent::LoseTaskManager(_)
                | FaultEvent::DisconnectTaskManager(_)
                | FaultEvent::CrashJobMaster => {
                    let waiting = |(a, needs): (&Attempt, &bool)| a.past_end && *needs;
                    if self.attempts.iter().zip(&self.needs_final).any(waiting) {
                        self.hit.insert(Probe::FaultDuringFinalCheckpoint);
                    }
                    if self.flushing && self.attempts.iter().any(|a| a.draining) {
                        self.hit.insert(Probe::CrashInFlushWindow);
                    }
                }
            },
            TraceEvent::Restore {
                checkpoint,
                finished,
                region,
                ..
            } => {
                self.hit.insert(if checkpoint > 0 {
                    Probe::FailoverRestoreFromCheckpoint
                } else {
                    Probe::FailoverFromScratch
                });
                if finished > 0 {
                    self.hit.insert(Probe::FinishedOnRestore);
                }
                if region.is_some() {
                    self.hit.insert(Probe::RegionFailover);
                }
            }
            TraceEvent::JobMasterElected { .. } => self.hit.insert(Probe::JobmanagerCrashRecovery),
            TraceEvent::TaskManagerLost { task_manager } => {
                self.hit.insert(Probe::TaskmanagerLost);
                self.replaced.remove(&task_manager);
            }
            TraceEvent::TaskManagerStarted { task_manager } => {
                self.replaced.insert(task_manager);
            }
            TraceEvent::TaskManagerTimedOut { task_manager }
                if self.replaced.contains(&task_manager) =>
            {
                self.hit.insert(Probe::TaskmanagerReplacedBeforeTimeout)
            }
            TraceEvent::RpcLost { .. } => self.hit.insert(Probe::RpcLostRetried),
            TraceEvent::RpcDropped { fenced: true, .. } => self.hit.insert(Probe::StaleRpcFenced),
            _ => {}
        }
    }
}
